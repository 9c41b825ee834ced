/**
 * Kind knowledge the graph code needs, merged from the kind catalogue (src/extensions/catalog.ts, the
 * source of truth once the built-in Active Directory and Azure extensions are installed there) and a
 * built-in fallback table below (so that ingest, paths and entities behave correctly even while the
 * catalogue is empty or lacks the built-ins). Where both know a kind, the catalogue wins.
 *
 * Pure: takes the catalogue as a value, no I/O.
 */
import type { KindCatalog } from '../extensions/catalog'

/** Kind names (node and relationship) as accepted in payloads and query parameters. */
export const KIND_PATTERN = /^[A-Za-z0-9_]+$/

/** The source kinds of BloodHound's own collectors (ids 1 and 2 in BloodHound's source_kinds table). */
export const BUILTIN_SOURCE_KINDS = ['Base', 'AZBase'] as const

/**
 * The source kinds with their ids, as GET /api/v2/graphs/source-kinds lists them and POST
 * /api/v2/clear-database takes them (`deleteSourceKinds`): Base 1, AZBase 2, then the source kinds the installed
 * extensions declare for their environments, by name (ids are positions; id 0, "Sourceless", is not in it).
 */
export function sourceKindList(catalog: Pick<KindCatalog, 'environments'>): { id: number; name: string }[] {
  const builtin = BUILTIN_SOURCE_KINDS as readonly string[]
  const declared = [...new Set(catalog.environments.map((e) => e.sourceKind))].filter((k) => !builtin.includes(k)).sort()
  return [...builtin, ...declared].map((name, i) => ({ id: i + 1, name }))
}

export const AD_ENVIRONMENT_KIND = 'Domain'
export const AZURE_ENVIRONMENT_KIND = 'AZTenant'

export const AD_NODE_KINDS = [
  'Base', 'User', 'Computer', 'Group', 'Domain', 'GPO', 'OU', 'Container', 'AIACA', 'RootCA', 'EnterpriseCA',
  'NTAuthStore', 'CertTemplate', 'IssuancePolicy', 'LocalGroup', 'LocalUser', 'ADLocalGroup', 'ADLocalUser', 'SiteServer',
] as const

export const AZURE_NODE_KINDS = [
  'AZBase', 'AZApp', 'AZVMScaleSet', 'AZRole', 'AZDevice', 'AZFunctionApp', 'AZGroup', 'AZKeyVault', 'AZManagementGroup',
  'AZResourceGroup', 'AZServicePrincipal', 'AZSubscription', 'AZTenant', 'AZUser', 'AZVM', 'AZManagedCluster',
  'AZContainerRegistry', 'AZWebApp', 'AZLogicApp', 'AZAutomationAccount', 'AZGroup365', 'AZFederatedIdentityCredential',
] as const

/** [kind, traversable] — BloodHound's AD relationship kinds and whether path finding crosses them. */
const AD_RELATIONSHIPS: [string, boolean][] = [
  ['Owns', true], ['GenericAll', true], ['GenericWrite', true], ['WriteOwner', true], ['WriteDacl', true],
  ['MemberOf', true], ['ForceChangePassword', true], ['AllExtendedRights', true], ['AddMember', true],
  ['HasSession', true], ['Contains', true], ['GPLink', true], ['AllowedToDelegate', true], ['CoerceToTGT', true],
  ['GetChanges', false], ['GetChangesAll', false], ['GetChangesInFilteredSet', false], ['TrustedBy', false],
  ['AllowedToAct', true], ['AdminTo', true], ['CanPSRemote', true], ['CanRDP', true], ['ExecuteDCOM', true],
  ['HasSIDHistory', true], ['AddSelf', true], ['DCSync', true], ['ReadLAPSPassword', true], ['ReadGMSAPassword', true],
  ['DumpSMSAPassword', true], ['SQLAdmin', true], ['AddAllowedToAct', true], ['WriteSPN', true],
  ['AddKeyCredentialLink', true], ['LocalToComputer', false], ['MemberOfLocalGroup', false],
  ['RemoteInteractiveLogonRight', false], ['SyncLAPSPassword', true], ['WriteAccountRestrictions', true],
  ['WriteGPLink', true], ['RootCAFor', false], ['DCFor', true], ['PublishedTo', false], ['ManageCertificates', false],
  ['ManageCA', false], ['DelegatedEnrollmentAgent', false], ['Enroll', false], ['HostsCAService', false],
  ['WritePKIEnrollmentFlag', false], ['WritePKINameFlag', false], ['NTAuthStoreFor', false], ['TrustedForNTAuth', false],
  ['EnterpriseCAFor', false], ['IssuedSignedBy', false], ['GoldenCert', true], ['EnrollOnBehalfOf', false],
  ['OIDGroupLink', false], ['ExtendedByPolicy', false], ['ADCSESC1', true], ['ADCSESC3', true], ['ADCSESC4', true],
  ['ADCSESC6a', true], ['ADCSESC6b', true], ['ADCSESC9a', true], ['ADCSESC9b', true], ['ADCSESC10a', true],
  ['ADCSESC10b', true], ['ADCSESC13', true], ['ADCSESC16', true], ['SyncedToEntraUser', true], ['CoerceAndRelayNTLMToSMB', true],
  ['CoerceAndRelayNTLMToADCS', true], ['CoerceAndRelayNTLMToLDAP', true], ['CoerceAndRelayNTLMToLDAPS', true],
  ['WriteOwnerLimitedRights', true], ['WriteOwnerRaw', false], ['OwnsLimitedRights', true], ['OwnsRaw', false],
  ['ClaimSpecialIdentity', true], ['ContainsIdentity', true], ['PropagatesACEsTo', true], ['GPOAppliesTo', false],
  ['CanApplyGPO', false], ['HasTrustKeys', true], ['SameForestTrust', true], ['CrossForestTrust', false],
  ['SpoofSIDHistory', true], ['AbuseTGTDelegation', true], ['ProtectAdminGroups', false], ['CanBackup', true],
  ['BackupPrivilege', false], ['RestorePrivilege', false],
]

/** [kind, traversable] — BloodHound's Azure relationship kinds. */
const AZURE_RELATIONSHIPS: [string, boolean][] = [
  ['AZAvereContributor', true], ['AZContains', true], ['AZContributor', true], ['AZGetCertificates', true],
  ['AZGetKeys', true], ['AZGetSecrets', true], ['AZHasRole', true], ['AZMemberOf', true], ['AZOwner', true],
  ['AZRunsAs', true], ['AZVMContributor', true], ['AZAutomationContributor', true], ['AZKeyVaultContributor', true],
  ['AZVMAdminLogin', true], ['AZAddMembers', true], ['AZAddSecret', true], ['AZExecuteCommand', true],
  ['AZGlobalAdmin', true], ['AZPrivilegedAuthAdmin', true], ['AZGrant', true], ['AZGrantSelf', true],
  ['AZPrivilegedRoleAdmin', true], ['AZResetPassword', true], ['AZUserAccessAdministrator', true], ['AZOwns', true],
  ['AZScopedTo', false], ['AZCloudAppAdmin', true], ['AZAppAdmin', true], ['AZAddOwner', true],
  // Microsoft Graph app role grants, named as BloodHound names them (graphschema azure representation)
  ['AZManagedIdentity', true], ['AZMGApplication_ReadWrite_All', false], ['AZMGAppRoleAssignment_ReadWrite_All', false],
  ['AZMGDirectory_ReadWrite_All', false], ['AZMGGroup_ReadWrite_All', false], ['AZMGGroupMember_ReadWrite_All', false],
  ['AZMGRoleManagement_ReadWrite_Directory', false], ['AZMGServicePrincipalEndpoint_ReadWrite_All', false],
  ['AZAKSContributor', true], ['AZNodeResourceGroup', true], ['AZWebsiteContributor', true],
  ['AZLogicAppContributor', true], ['AZMGAddMember', true], ['AZMGAddOwner', true], ['AZMGAddSecret', true],
  ['AZMGGrantAppRoles', true], ['AZMGGrantRole', true], ['SyncedToADUser', true], ['AZRoleEligible', false],
  ['AZRoleApprover', false], ['AZAuthenticatesTo', true], ['AZCreateAppRoleAssignment', false],
]

export const BUILTIN_RELATIONSHIPS: ReadonlyMap<string, boolean> = new Map([...AD_RELATIONSHIPS, ...AZURE_RELATIONSHIPS])
/** The built-in relationship kinds by schema (BloodHound's schema names `ad` and `az`), in table order. */
export const BUILTIN_RELATIONSHIP_SCHEMAS: readonly { schema: 'ad' | 'az'; kinds: readonly [string, boolean][] }[] = [
  { schema: 'ad', kinds: AD_RELATIONSHIPS },
  { schema: 'az', kinds: AZURE_RELATIONSHIPS },
]
export const BUILTIN_NODE_KINDS: ReadonlySet<string> = new Set<string>([...AD_NODE_KINDS, ...AZURE_NODE_KINDS])

/** Everything the graph code derives from the catalogue, computed once per catalogue version. */
export interface GraphKinds {
  /** relationship kind → traversable (catalogue over built-ins) */
  relationships: Map<string, boolean>
  /** traversable relationship kinds, sorted */
  traversable: string[]
  nodeKinds: Set<string>
  /** environment node kind → `type` shown by available-domains */
  environmentTypes: Map<string, string>
}

const cache = new Map<string, GraphKinds>()

export function graphKinds(catalog: KindCatalog): GraphKinds {
  const hit = cache.get(catalog.version)
  if (hit && catalog.version !== '0') return hit
  const relationships = new Map<string, boolean>(BUILTIN_RELATIONSHIPS)
  for (const [k, info] of catalog.relationshipKinds) relationships.set(k, info.traversable)
  const traversable = [...relationships].filter(([, t]) => t).map(([k]) => k).sort()
  const nodeKinds = new Set<string>([...BUILTIN_NODE_KINDS, ...catalog.nodeKinds])
  const environmentTypes = new Map<string, string>([
    [AD_ENVIRONMENT_KIND, 'active-directory'],
    [AZURE_ENVIRONMENT_KIND, 'azure'],
  ])
  for (const e of catalog.environments) {
    if (e.environmentKind === AD_ENVIRONMENT_KIND || e.environmentKind === AZURE_ENVIRONMENT_KIND) continue
    environmentTypes.set(e.environmentKind, e.extensionDisplayName || e.extensionName || e.environmentKind)
  }
  const out = { relationships, traversable, nodeKinds, environmentTypes }
  if (cache.size > 16) cache.clear()
  cache.set(catalog.version, out)
  return out
}

/** The first of a node's kinds that is an environment kind, or null. */
export function environmentKindOf(kinds: readonly string[], environmentTypes: ReadonlyMap<string, string>): string | null {
  for (const k of kinds) if (environmentTypes.has(k)) return k
  return null
}

/**
 * `relationship_kinds=in:A,B` / `nin:A,B` (BloodHound's syntax) → the set of kinds a path may cross.
 * `in` takes the listed kinds as given (traversable or not); `nin` removes them from the traversable set.
 * Returns an error message (for a 400) instead of throwing, to stay pure.
 */
export function parseRelationshipKinds(
  raw: string | undefined,
  kinds: GraphKinds,
): { ok: true; kinds: string[] } | { ok: false; message: string } {
  if (raw === undefined || raw === '') return { ok: true, kinds: kinds.traversable }
  const m = /^(in|nin):(\w+(?:,\s*\w+)*)$/.exec(raw)
  if (!m)
    return { ok: false, message: "invalid query parameter 'relationship_kinds': acceptable values should match the format: in|nin:Kind1,Kind2" }
  const listed = m[2].split(',').map((s) => s.trim())
  const unknown = listed.filter((k) => !kinds.relationships.has(k))
  if (unknown.length > 0) {
    const acceptable = [...kinds.relationships.keys()].sort()
    return {
      ok: false,
      message: `invalid query parameter 'relationship_kinds': unknown kind(s) ${unknown.join(', ')}; acceptable relationship kinds are: [${acceptable.join(' ')}]`,
    }
  }
  const result = m[1] === 'in' ? [...new Set(listed)].sort() : kinds.traversable.filter((k) => !listed.includes(k))
  if (result.length === 0) return { ok: false, message: "invalid query parameter 'relationship_kinds': the resulting set of relationship kinds is empty" }
  return { ok: true, kinds: result }
}
