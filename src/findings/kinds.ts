/**
 * Which relationship kinds paths may traverse and which node kinds are principals of an environment.
 *
 * The kind catalogue (`loadKindCatalog`, src/extensions/catalog.ts) is the authority for traversability:
 * built-in Active Directory and Azure kinds and every installed extension's kinds, with `is_traversable`.
 * The built-in lists below are only a fallback for kinds the catalogue does not know (for example while it
 * is empty, or for data ingested before its extension was installed); they are BloodHound's own
 * pathfinding kinds (graphschema `ad.PathfindingRelationships()` and `azure.PathfindingRelationships()`).
 *
 * Principals follow the issue exactly: `User`, `Computer`, `Group` for a `Domain`; `AZUser`, `AZGroup`,
 * `AZServicePrincipal`, `AZDevice` for an `AZTenant`; an extension environment's `principal_kinds`.
 */
import type { KindCatalog } from '../extensions/catalog'

export const BUILTIN_TRAVERSABLE: ReadonlySet<string> = new Set([
  // Active Directory
  'Owns', 'GenericAll', 'GenericWrite', 'WriteOwner', 'WriteDacl', 'MemberOf', 'ForceChangePassword',
  'AllExtendedRights', 'AddMember', 'HasSession', 'Contains', 'GPLink', 'AllowedToDelegate', 'TrustedBy',
  'AllowedToAct', 'AdminTo', 'CanPSRemote', 'CanRDP', 'ExecuteDCOM', 'HasSIDHistory', 'AddSelf', 'DCSync',
  'ReadLAPSPassword', 'ReadGMSAPassword', 'DumpSMSAPassword', 'SQLAdmin', 'AddAllowedToAct', 'WriteSPN',
  'AddKeyCredentialLink', 'SyncLAPSPassword', 'WriteAccountRestrictions', 'WriteGPLink', 'GoldenCert',
  'ADCSESC1', 'ADCSESC3', 'ADCSESC4', 'ADCSESC5', 'ADCSESC6a', 'ADCSESC6b', 'ADCSESC7', 'ADCSESC9a',
  'ADCSESC9b', 'ADCSESC10a', 'ADCSESC10b', 'ADCSESC13', 'DCFor', 'SyncedToEntraUser',
  // Azure
  'AZAvereContributor', 'AZContributor', 'AZGetCertificates', 'AZGetKeys', 'AZGetSecrets', 'AZHasRole',
  'AZMemberOf', 'AZOwner', 'AZRunsAs', 'AZVMContributor', 'AZAutomationContributor', 'AZKeyVaultContributor',
  'AZVMAdminLogin', 'AZAddMembers', 'AZAddSecret', 'AZExecuteCommand', 'AZGlobalAdmin', 'AZPrivilegedAuthAdmin',
  'AZGrant', 'AZGrantSelf', 'AZPrivilegedRoleAdmin', 'AZResetPassword', 'AZUserAccessAdministrator', 'AZOwns',
  'AZCloudAppAdmin', 'AZAppAdmin', 'AZAddOwner', 'AZManagedIdentity', 'AZAKSContributor', 'AZNodeResourceGroup',
  'AZWebsiteContributor', 'AZLogicAppContributor', 'AZMGAddMember', 'AZMGAddOwner', 'AZMGAddSecret',
  'AZMGGrantAppRoles', 'AZMGGrantRole', 'SyncedToADUser', 'AZContains',
])

export const AD_PRINCIPAL_KINDS = ['User', 'Computer', 'Group'] as const
export const AZURE_PRINCIPAL_KINDS = ['AZUser', 'AZGroup', 'AZServicePrincipal', 'AZDevice'] as const

export const BUILTIN_ENVIRONMENT_PRINCIPALS: ReadonlyMap<string, readonly string[]> = new Map<string, readonly string[]>([
  ['Domain', AD_PRINCIPAL_KINDS],
  ['AZTenant', AZURE_PRINCIPAL_KINDS],
])

/** Principal kinds of an environment whose own node is missing from the graph: AD and Azure together. */
export const UNKNOWN_ENVIRONMENT_PRINCIPALS: readonly string[] = [...AD_PRINCIPAL_KINDS, ...AZURE_PRINCIPAL_KINDS]

export interface KindRules {
  isTraversable(kind: string): boolean
  /** principal kinds for an environment kind (undefined environment kind: its node is not in the graph) */
  principalKinds(environmentKind: string | undefined): readonly string[]
  /** every node kind that makes a node an environment */
  environmentKinds: ReadonlySet<string>
}

export function kindRules(catalog: Pick<KindCatalog, 'relationshipKinds' | 'environments'>): KindRules {
  const cache = new Map<string, boolean>()
  const envPrincipals = new Map<string, readonly string[]>(BUILTIN_ENVIRONMENT_PRINCIPALS)
  for (const e of catalog.environments) {
    // The issue fixes the built-in environments' principals; extensions bring their own.
    if (!BUILTIN_ENVIRONMENT_PRINCIPALS.has(e.environmentKind)) envPrincipals.set(e.environmentKind, e.principalKinds)
  }
  return {
    isTraversable(kind) {
      let t = cache.get(kind)
      if (t === undefined) {
        t = catalog.relationshipKinds.get(kind)?.traversable ?? BUILTIN_TRAVERSABLE.has(kind)
        cache.set(kind, t)
      }
      return t
    },
    principalKinds(environmentKind) {
      if (environmentKind === undefined) return UNKNOWN_ENVIRONMENT_PRINCIPALS
      return envPrincipals.get(environmentKind) ?? []
    },
    environmentKinds: new Set(envPrincipals.keys()),
  }
}
