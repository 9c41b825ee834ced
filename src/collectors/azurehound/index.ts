/**
 * AzureHound output: `{"meta": {"type": "azure", "version", "count"}, "data": [{"kind", "data"}, ...]}`.
 * Each item's `kind` picks its converter (BloodHound's getKindConverter in
 * cmd/api/src/services/graphify/azure_convertors.go, plus the kinds its newer ein/azure.go converts:
 * role eligibility schedules and federated identity credentials).
 *
 * Unknown kinds: BloodHound silently ignores them. We ignore only the kinds AzureHound really writes and
 * BloodHound does not convert (IGNORED_KINDS: storage accounts and containers, generic role assignment
 * lists, contributor lists of scopes, app members), and refuse any other `kind` with its JSON path, since
 * a misspelt kind would otherwise drop its data without a word (issue 13).
 *
 * Pure: an item in, rows and violations out.
 */
import type { CollectorFormat } from '../detect'
import { isObject, Reader, type AzureConverter, type AzureEmitter } from './common'
import * as id from './identity'
import * as m from './membership'
import * as rbac from './rbac'
import * as res from './resources'

export type { AzureEmitter } from './common'

/** AzureHound kind → converter. */
export const AZURE_CONVERTERS: Readonly<Record<string, AzureConverter>> = {
  AZTenant: id.convertTenant,
  AZUser: id.convertUser,
  AZGroup: id.convertGroup,
  AZServicePrincipal: id.convertServicePrincipal,
  AZApp: id.convertApp,
  AZDevice: id.convertDevice,
  AZRole: id.convertRole,
  AZFederatedIdentityCredential: id.convertFederatedIdentityCredential,

  AZGroupMember: m.convertGroupMembers,
  AZGroupOwner: m.convertGroupOwners,
  AZAppOwner: m.convertAppOwners,
  AZServicePrincipalOwner: m.convertServicePrincipalOwners,
  AZDeviceOwner: m.convertDeviceOwners,
  AZRoleAssignment: m.convertRoleAssignments,
  AZRoleEligibilityScheduleInstance: m.convertRoleEligibility,
  AZRoleManagementPolicyAssignment: m.convertRoleManagementPolicy,
  AZAppRoleAssignment: m.convertAppRoleAssignment,

  AZSubscription: res.convertSubscription,
  AZManagementGroup: res.convertManagementGroup,
  AZManagementGroupDescendant: res.convertManagementGroupDescendant,
  AZResourceGroup: res.convertResourceGroup,
  AZKeyVault: res.convertKeyVault,
  AZKeyVaultAccessPolicy: res.convertKeyVaultAccessPolicy,
  AZVM: res.convertVirtualMachine,
  AZVMScaleSet: res.convertVMScaleSet,
  AZFunctionApp: res.convertFunctionApp,
  AZLogicApp: res.convertLogicApp,
  AZWebApp: res.convertWebApp,
  AZAutomationAccount: res.convertAutomationAccount,
  AZContainerRegistry: res.convertContainerRegistry,
  AZManagedCluster: res.convertManagedCluster,

  AZKeyVaultOwner: rbac.convertKeyVaultOwners,
  AZKeyVaultUserAccessAdmin: rbac.convertKeyVaultUserAccessAdmins,
  AZKeyVaultContributor: rbac.convertKeyVaultContributors,
  AZKeyVaultKVContributor: rbac.convertKeyVaultKVContributors,
  AZManagementGroupOwner: rbac.convertManagementGroupOwners,
  AZManagementGroupUserAccessAdmin: rbac.convertManagementGroupUserAccessAdmins,
  AZResourceGroupOwner: rbac.convertResourceGroupOwners,
  AZResourceGroupUserAccessAdmin: rbac.convertResourceGroupUserAccessAdmins,
  AZSubscriptionOwner: rbac.convertSubscriptionOwners,
  AZSubscriptionUserAccessAdmin: rbac.convertSubscriptionUserAccessAdmins,
  AZVMAdminLogin: rbac.convertVMAdminLogins,
  AZVMAvereContributor: rbac.convertVMAvereContributors,
  AZVMContributor: rbac.convertVMContributors,
  AZVMVMContributor: rbac.convertVMVMContributors,
  AZVMOwner: rbac.convertVMOwners,
  AZVMUserAccessAdmin: rbac.convertVMUserAccessAdmins,
  AZVMScaleSetRoleAssignment: rbac.convertVMScaleSetRoleAssignments,
  AZFunctionAppRoleAssignment: rbac.convertFunctionAppRoleAssignments,
  AZWebAppRoleAssignment: rbac.convertWebAppRoleAssignments,
  AZLogicAppRoleAssignment: rbac.convertLogicAppRoleAssignments,
  AZAutomationAccountRoleAssignment: rbac.convertAutomationAccountRoleAssignments,
  AZContainerRegistryRoleAssignment: rbac.convertContainerRegistryRoleAssignments,
  AZManagedClusterRoleAssignment: rbac.convertManagedClusterRoleAssignments,
}

/** Kinds AzureHound writes that BloodHound does not convert: accepted, nothing written. */
export const IGNORED_KINDS: ReadonlySet<string> = new Set([
  'AZAppMember',
  'AZKeyVaultRoleAssignment',
  'AZManagementGroupRoleAssignment',
  'AZManagementGroupContributor',
  'AZResourceGroupRoleAssignment',
  'AZResourceGroupContributor',
  'AZStorageAccount',
  'AZStorageAccountRoleAssignment',
  'AZStorageContainer',
  'AZSubscriptionRoleAssignment',
  'AZSubscriptionContributor',
  'AZVMRoleAssignment',
])

/** The meta.type AzureHound writes. */
export const AZUREHOUND_TYPE = 'azure'

/** Converts one element of `data` found at `path` (`data[3]`): `{"kind": K, "data": {...}}`. */
export function convertAzureItem(item: unknown, path: string, out: AzureEmitter): void {
  if (!isObject(item)) {
    out.violation(path, 'an AzureHound item must be an object {"kind", "data"}')
    return
  }
  const r = new Reader(item, path, out)
  const kind = r.raw('kind')
  if (typeof kind !== 'string' || kind === '') {
    out.violation(`${path}.kind`, 'kind is required and must be a string (an AzureHound kind such as AZUser)')
    return
  }
  if (IGNORED_KINDS.has(kind)) return
  const convert = AZURE_CONVERTERS[kind]
  if (!convert) {
    out.violation(`${path}.kind`, `unknown AzureHound kind "${kind}"`)
    return
  }
  const data = r.raw('data')
  if (!isObject(data)) {
    out.violation(`${path}.data`, `data must be an object (the ${kind} record)`)
    return
  }
  convert(new Reader(data, `${path}.data`, out), out)
}

/**
 * The AzureHound collector format for the registry (src/collectors/detect.ts). Every AzureHound
 * `meta.version` is accepted: BloodHound reads Azure files without looking at it.
 */
export const azureHound: CollectorFormat = {
  name: 'AzureHound',
  types: [AZUREHOUND_TYPE],
  converter: () => convertAzureItem,
}
