/**
 * Azure RBAC on resources: who is Owner, User Access Administrator, Contributor (or a resource-specific
 * contributor), or may log in to a VM. Two input shapes, both BloodHound's (ein/azure.go):
 *
 *  - per-role lists (`AZKeyVaultOwner`, `AZVMContributor`, ...): `{<target>Id, <list>: [{<item>: role
 *    assignment}]}`; an assignment counts when its `properties.scope` is the target itself (compared
 *    exactly), or, for VMs, when `ResourceWithinScope` holds;
 *  - `…RoleAssignment` kinds of resources: `{objectId, assignees: [{assignee, objectId, roleDefinitionId}]}`;
 *    an assignment counts when its scope equals the resource (case-insensitively) and its role is one the
 *    resource type cares about; the role decides the relationship kind (KindFromRoleId).
 */
import { rel, type AzureConverter, type Reader } from './common'

export const ROLE = {
  owner: '8e3af657-a8ff-443c-a75c-2fe8c4bcb635',
  userAccessAdmin: '18d7d88d-d35e-4fb5-a5c3-7773c20a72d9',
  contributor: 'b24988ac-6180-42a0-ab88-20f7382dd24c',
  websiteContributor: 'de139f84-1756-47ae-9be6-808fbbe84772',
  automationContributor: 'f353d9bd-d4a6-484e-a77a-8050b599b867',
  logicAppContributor: '87a39d53-fc1b-424a-814c-f7e04687dc9e',
  vmContributor: '9980e02c-c2be-4d73-94e8-173b1dc7cf3c',
  aksContributor: 'ed7f3fbd-7b88-4dd4-9017-9adb7ce333f8',
} as const

/** Azure role definition id → relationship kind (KindFromRoleId). */
const KIND_BY_ROLE: Record<string, string> = {
  [ROLE.owner]: 'AZOwner',
  [ROLE.userAccessAdmin]: 'AZUserAccessAdministrator',
  [ROLE.contributor]: 'AZContributor',
  [ROLE.websiteContributor]: 'AZWebsiteContributor',
  [ROLE.automationContributor]: 'AZAutomationContributor',
  [ROLE.logicAppContributor]: 'AZLogicAppContributor',
  [ROLE.vmContributor]: 'AZVMContributor',
  [ROLE.aksContributor]: 'AZAKSContributor',
}

/**
 * BloodHound's ResourceWithinScope, as written: equal (case-insensitively), or the scope is a resource
 * group AND the resource lies under it. Its resource-group pattern is a Go raw string whose character
 * class, `[\\w\\d\\-\\/]`, holds only a backslash, `w`, `d` and `/` (doubled backslashes are literal
 * in a raw string, and `\\-\\` is the range from backslash to backslash), so no real scope
 * (`/subscriptions/...`) matches it and only equality counts in practice. We reproduce the pattern, not
 * an intention, so that the graph is the one BloodHound builds.
 */
const RESOURCE_GROUP_SCOPE = /^[\\wd/]*\/resourceGroups\/[0-9a-zA-Z]+$/
export function resourceWithinScope(resource: string, scope: string): boolean {
  if (resource.toLowerCase() === scope.toLowerCase()) return true
  return RESOURCE_GROUP_SCOPE.test(scope) && resource.toLowerCase().startsWith(scope.toLowerCase())
}

function principalOf(a: Reader): string {
  return a.obj_('properties').str('principalId')
}

/** A per-role list: `<listKey>[].<itemKey>` role assignments on `<targetKey>` → `kind`. */
function perRole(targetKey: string, targetKind: string, listKey: string, itemKey: string, kind: string, within: 'exact' | 'scope'): AzureConverter {
  return (d, out) => {
    const target = d.id(targetKey)
    for (const entry of d.list(listKey)) {
      const a = entry.obj_(itemKey)
      const scope = a.obj_('properties').str('scope')
      const ok = within === 'exact' ? scope === target : resourceWithinScope(target, scope)
      if (ok) rel(out, principalOf(a), 'AZBase', target, targetKind, kind)
    }
  }
}

export const convertKeyVaultOwners = perRole('keyVaultId', 'AZKeyVault', 'owners', 'owner', 'AZOwner', 'exact')
export const convertKeyVaultUserAccessAdmins = perRole('keyVaultId', 'AZKeyVault', 'userAccessAdmins', 'userAccessAdmin', 'AZUserAccessAdministrator', 'exact')
export const convertKeyVaultContributors = perRole('keyVaultId', 'AZKeyVault', 'contributors', 'contributor', 'AZContributor', 'exact')
export const convertKeyVaultKVContributors = perRole('keyVaultId', 'AZKeyVault', 'kvContributors', 'kvContributor', 'AZKeyVaultContributor', 'exact')
export const convertManagementGroupOwners = perRole('managementGroupId', 'AZManagementGroup', 'owners', 'owner', 'AZOwner', 'exact')
export const convertManagementGroupUserAccessAdmins = perRole('managementGroupId', 'AZManagementGroup', 'userAccessAdmins', 'userAccessAdmin', 'AZUserAccessAdministrator', 'exact')
export const convertResourceGroupOwners = perRole('resourceGroupId', 'AZResourceGroup', 'owners', 'owner', 'AZOwner', 'exact')
export const convertResourceGroupUserAccessAdmins = perRole('resourceGroupId', 'AZResourceGroup', 'userAccessAdmins', 'userAccessAdmin', 'AZUserAccessAdministrator', 'exact')
export const convertSubscriptionOwners = perRole('subscriptionId', 'AZSubscription', 'owners', 'owner', 'AZOwner', 'exact')
export const convertSubscriptionUserAccessAdmins = perRole('subscriptionId', 'AZSubscription', 'userAccessAdmins', 'userAccessAdmin', 'AZUserAccessAdministrator', 'exact')
export const convertVMAdminLogins = perRole('virtualMachineId', 'AZVM', 'adminLogins', 'adminLogin', 'AZVMAdminLogin', 'scope')
export const convertVMAvereContributors = perRole('virtualMachineId', 'AZVM', 'avereContributors', 'avereContributor', 'AZAvereContributor', 'exact')
export const convertVMContributors = perRole('virtualMachineId', 'AZVM', 'contributors', 'contributor', 'AZContributor', 'scope')
export const convertVMVMContributors = perRole('virtualMachineId', 'AZVM', 'vmContributors', 'vmContributor', 'AZVMContributor', 'scope')
export const convertVMOwners = perRole('virtualMachineId', 'AZVM', 'owners', 'owner', 'AZOwner', 'scope')
export const convertVMUserAccessAdmins = perRole('virtualMachineId', 'AZVM', 'userAccessAdmins', 'userAccessAdmin', 'AZUserAccessAdministrator', 'scope')

/** A resource's role assignments: the roles that give control of that resource type. */
function resourceRoles(targetKind: string, roles: readonly string[]): AzureConverter {
  return (d, out) => {
    const target = d.id('objectId')
    for (const entry of d.list('assignees')) {
      const role = entry.str('roleDefinitionId').toLowerCase()
      const scope = entry.obj_('assignee').obj_('properties').str('scope')
      // BloodHound looks the kind up with the id as written; we use it lower-cased, the form its
      // role check accepts (an upper-cased id would otherwise give a relationship without a kind)
      if (scope.toLowerCase() === entry.str('objectId').toLowerCase() && roles.includes(role))
        rel(out, principalOf(entry.obj_('assignee')), 'AZBase', target, targetKind, KIND_BY_ROLE[role])
    }
  }
}

const GENERAL = [ROLE.owner, ROLE.userAccessAdmin, ROLE.contributor] as const
export const convertVMScaleSetRoleAssignments = resourceRoles('AZVMScaleSet', [...GENERAL, ROLE.vmContributor])
export const convertFunctionAppRoleAssignments = resourceRoles('AZFunctionApp', [...GENERAL, ROLE.websiteContributor])
export const convertWebAppRoleAssignments = resourceRoles('AZWebApp', [...GENERAL, ROLE.websiteContributor])
export const convertLogicAppRoleAssignments = resourceRoles('AZLogicApp', [...GENERAL, ROLE.logicAppContributor])
export const convertAutomationAccountRoleAssignments = resourceRoles('AZAutomationAccount', [...GENERAL, ROLE.automationContributor])
export const convertContainerRegistryRoleAssignments = resourceRoles('AZContainerRegistry', [...GENERAL])
export const convertManagedClusterRoleAssignments = resourceRoles('AZManagedCluster', [...GENERAL, ROLE.aksContributor])
