/**
 * The node panel's counted sections per kind, and the entity route behind each (src/graph/entities.ts serves
 * them): for Active Directory kinds `GET /api/v2/{segment}/{object id}` (its counts) and
 * `…/{list}?skip&limit` / `?type=graph`; for Azure kinds `GET /api/v2/azure/{entity type}?object_id=` with
 * `related_entity_type`. Labels are the console's own (BloodHound's panels are the model: members, member of,
 * sessions, local admin rights, inbound/outbound object control, …). Pure data and lookups; the table is
 * checked against the route table in test/unit/console-explore.test.ts.
 */

export interface Section {
  label: string
  /** AD: the list path segment after the object id; Azure: the related_entity_type */
  list: string
  /** where the entity's detail (with counts) holds this section's count; absent: counted from the list's `count` */
  count?: string[]
  /** the list is reached along relationships, so `type=graph` can draw it (else its nodes are added alone) */
  graph: boolean
}

export interface EntityKindSections {
  platform: 'ad' | 'azure'
  /** AD: /api/v2/{segment}; Azure: /api/v2/azure/{segment} */
  segment: string
  sections: Section[]
}

const s = (label: string, list: string, count?: string, graph = true): Section => ({ label, list, count: count ? [count] : undefined, graph })
const az = (label: string, list: string, count?: string[]): Section => ({ label, list, count, graph: true })

const INBOUND = s('Inbound object control', 'controllers', 'controllers')
const OUTBOUND = s('Outbound object control', 'controllables', 'controllables')
const AZ_IN = az('Inbound object control', 'inbound-control', ['inbound_object_control'])
const AZ_OUT = az('Outbound object control', 'outbound-control', ['outbound_object_control'])

const AD: Record<string, EntityKindSections> = {
  User: {
    platform: 'ad',
    segment: 'users',
    sections: [
      s('Sessions', 'sessions', 'sessions'),
      s('Member of', 'memberships', 'groupMembership'),
      s('Local admin rights', 'admin-rights', 'adminRights'),
      s('RDP rights', 'rdp-rights', 'rdpRights'),
      s('PSRemote rights', 'ps-remote-rights', 'psRemoteRights'),
      s('DCOM rights', 'dcom-rights', 'dcomRights'),
      s('SQL admin rights', 'sql-admin-rights', 'sqlAdmin'),
      s('Constrained delegation rights', 'constrained-delegation-rights', 'constrainedDelegation'),
      OUTBOUND,
      INBOUND,
    ],
  },
  Group: {
    platform: 'ad',
    segment: 'groups',
    sections: [
      s('Sessions', 'sessions', 'sessions'),
      s('Members', 'members', 'members'),
      s('Member of', 'memberships', 'membership'),
      s('Local admin rights', 'admin-rights', 'adminRights'),
      s('RDP rights', 'rdp-rights', 'rdpRights'),
      s('PSRemote rights', 'ps-remote-rights', 'psRemoteRights'),
      s('DCOM rights', 'dcom-rights', 'dcomRights'),
      OUTBOUND,
      INBOUND,
    ],
  },
  Computer: {
    platform: 'ad',
    segment: 'computers',
    sections: [
      s('Sessions', 'sessions', 'sessions'),
      s('Local admins', 'admin-users', 'adminUsers'),
      s('RDP users', 'rdp-users', 'rdpUsers'),
      s('PSRemote users', 'ps-remote-users', 'psRemoteUsers'),
      s('DCOM users', 'dcom-users', 'dcomUsers'),
      s('SQL admins', 'sql-admins', 'sqlAdminUsers'),
      s('Constrained delegation users', 'constrained-users', 'constrainedUsers'),
      s('Member of', 'group-membership', 'groupMembership'),
      s('Local admin rights', 'admin-rights', 'adminRights'),
      s('RDP rights', 'rdp-rights', 'rdpRights'),
      s('PSRemote rights', 'ps-remote-rights', 'psRemoteRights'),
      s('DCOM rights', 'dcom-rights', 'dcomRights'),
      s('Constrained delegation rights', 'constrained-delegation-rights', 'constrainedPrivs'),
      OUTBOUND,
      INBOUND,
    ],
  },
  Domain: {
    platform: 'ad',
    segment: 'domains',
    sections: [
      s('Users', 'users', 'users', false),
      s('Groups', 'groups', 'groups', false),
      s('Computers', 'computers', 'computers', false),
      s('OUs', 'ous', 'ous', false),
      s('GPOs', 'gpos', 'gpos', false),
      s('Foreign users', 'foreign-users', 'foreignUsers', true),
      s('Foreign groups', 'foreign-groups', 'foreignGroups', true),
      s('Foreign admins', 'foreign-admins', 'foreignAdmins', true),
      s('Foreign GPO controllers', 'foreign-gpo-controllers', 'foreignGPOControllers', true),
      s('Inbound trusts', 'inbound-trusts', 'inboundTrusts'),
      s('Outbound trusts', 'outbound-trusts', 'outboundTrusts'),
      s('DCSync rights', 'dc-syncers', 'dcsyncers'),
      s('Linked GPOs', 'linked-gpos', 'linkedgpos'),
      INBOUND,
    ],
  },
  GPO: {
    platform: 'ad',
    segment: 'gpos',
    sections: [
      s('Affected OUs', 'ous', 'ous'),
      s('Affected computers', 'computers', 'computers'),
      s('Affected users', 'users', 'users'),
      s('Affected Tier Zero objects', 'tier-zero', 'tierzero'),
      INBOUND,
    ],
  },
  OU: {
    platform: 'ad',
    segment: 'ous',
    sections: [s('Linked GPOs', 'gpos', 'gpos'), s('Users', 'users', 'users'), s('Groups', 'groups', 'groups'), s('Computers', 'computers', 'computers')],
  },
  Container: { platform: 'ad', segment: 'containers', sections: [INBOUND] },
  AIACA: { platform: 'ad', segment: 'aiacas', sections: [INBOUND] },
  RootCA: { platform: 'ad', segment: 'rootcas', sections: [INBOUND] },
  EnterpriseCA: { platform: 'ad', segment: 'enterprisecas', sections: [INBOUND] },
  NTAuthStore: { platform: 'ad', segment: 'ntauthstores', sections: [INBOUND] },
  CertTemplate: { platform: 'ad', segment: 'certtemplates', sections: [INBOUND] },
  Base: { platform: 'ad', segment: 'base', sections: [OUTBOUND, s('Inbound object control', 'controllers')] },
}

const DESCENDANTS: [string, string, string][] = [
  ['Users', 'descendent-users', 'AZUser'],
  ['Groups', 'descendent-groups', 'AZGroup'],
  ['Management groups', 'descendent-management-groups', 'AZManagementGroup'],
  ['Subscriptions', 'descendent-subscriptions', 'AZSubscription'],
  ['Resource groups', 'descendent-resource-groups', 'AZResourceGroup'],
  ['Virtual machines', 'descendent-virtual-machines', 'AZVM'],
  ['Managed clusters', 'descendent-managed-clusters', 'AZManagedCluster'],
  ['VM scale sets', 'descendent-vm-scale-sets', 'AZVMScaleSet'],
  ['Container registries', 'descendent-container-registries', 'AZContainerRegistry'],
  ['Web apps', 'descendent-web-apps', 'AZWebApp'],
  ['Automation accounts', 'descendent-automation-accounts', 'AZAutomationAccount'],
  ['Key vaults', 'descendent-key-vaults', 'AZKeyVault'],
  ['Function apps', 'descendent-function-apps', 'AZFunctionApp'],
  ['Logic apps', 'descendent-logic-apps', 'AZLogicApp'],
  ['App registrations', 'descendent-applications', 'AZApp'],
  ['Service principals', 'descendent-service-principals', 'AZServicePrincipal'],
  ['Devices', 'descendent-devices', 'AZDevice'],
]
const descendants = (...kinds: string[]): Section[] =>
  DESCENDANTS.filter(([, , k]) => kinds.includes(k)).map(([label, list, k]) => az(`Descendant ${label.toLowerCase()}`, list, ['descendents', 'descendent_counts', k]))
const CONTAINED = ['AZResourceGroup', 'AZVM', 'AZManagedCluster', 'AZVMScaleSet', 'AZContainerRegistry', 'AZWebApp', 'AZAutomationAccount', 'AZKeyVault', 'AZFunctionApp', 'AZLogicApp']

const azure = (segment: string, sections: Section[]): EntityKindSections => ({ platform: 'azure', segment, sections })

const AZURE: Record<string, EntityKindSections> = {
  AZUser: azure('users', [
    az('Member of', 'group-membership', ['group_membership']),
    az('Roles', 'roles', ['roles']),
    az('Execution privileges', 'outbound-execution-privileges', ['execution_privileges']),
    AZ_OUT,
    AZ_IN,
  ]),
  AZGroup: azure('groups', [az('Members', 'group-members', ['group_members']), az('Member of', 'group-membership', ['group_membership']), az('Roles', 'roles', ['roles']), AZ_OUT, AZ_IN]),
  AZServicePrincipal: azure('service-principals', [
    az('Roles', 'roles', ['roles']),
    AZ_OUT,
    AZ_IN,
    az('Inbound abusable app role assignments', 'inbound-abusable-app-role-assignments', ['inbound-abusable-app-role-assignments']),
    az('Outbound abusable app role assignments', 'outbound-abusable-app-role-assignments', ['outbound-abusable-app-role-assignments']),
  ]),
  AZRole: azure('roles', [
    az('Active assignments', 'active-assignments', ['active_assignments']),
    az('Eligible (PIM) assignments', 'pim-assignments', ['pim_assignments']),
    az('Approvers', 'role-approvers', ['approvers']),
  ]),
  AZKeyVault: azure('key-vaults', [
    az('Key readers', 'key-readers', ['Readers', 'KeyReaders']),
    az('Certificate readers', 'certificate-readers', ['Readers', 'CertificateReaders']),
    az('Secret readers', 'secret-readers', ['Readers', 'SecretReaders']),
    az('All readers', 'all-readers', ['Readers', 'AllReaders']),
    AZ_IN,
  ]),
  AZVM: azure('vms', [az('Local admins', 'inbound-execution-privileges', ['inboundExecutionPrivileges']), AZ_IN]),
  AZDevice: azure('devices', [az('Local admins', 'inbound-execution-privileges', ['inboundExecutionPrivileges']), AZ_IN]),
  AZTenant: azure('tenants', [...descendants(...DESCENDANTS.map(([, , k]) => k)), AZ_IN]),
  AZManagementGroup: azure('management-groups', [...descendants('AZManagementGroup', 'AZSubscription', ...CONTAINED), AZ_IN]),
  AZSubscription: azure('subscriptions', [...descendants(...CONTAINED), AZ_IN]),
  AZResourceGroup: azure('resource-groups', [...descendants(...CONTAINED.filter((k) => k !== 'AZResourceGroup')), AZ_IN]),
  AZManagedCluster: azure('managed-clusters', [AZ_IN]),
  AZContainerRegistry: azure('container-registries', [AZ_IN]),
  AZWebApp: azure('web-apps', [AZ_IN]),
  AZLogicApp: azure('logic-apps', [AZ_IN]),
  AZAutomationAccount: azure('automation-accounts', [AZ_IN]),
  AZApp: azure('applications', [AZ_IN]),
  AZVMScaleSet: azure('vm-scale-sets', [AZ_IN]),
  AZFunctionApp: azure('function-apps', [AZ_IN]),
}

/** Kinds of on-premises objects without sections of their own: the base entity's object control. */
const AD_BASE_KINDS = new Set(['Base', 'LocalGroup', 'LocalUser', 'IssuancePolicy'])

/**
 * The sections for a node of these kinds (its primary kind first): the first kind with an entry wins; other
 * on-premises kinds get the base entity's; extension (OpenGraph) kinds have properties only (null).
 */
export function sectionsFor(kinds: readonly string[]): EntityKindSections | null {
  for (const k of kinds) if (AD[k] && k !== 'Base') return AD[k]
  for (const k of kinds) if (AZURE[k]) return AZURE[k]
  if (kinds.some((k) => AD_BASE_KINDS.has(k))) return AD.Base
  return null
}

/** A section's count from the entity's detail (`data`), or undefined when the detail does not hold it. */
export function countOf(section: Section, detail: Record<string, unknown> | null | undefined): number | undefined {
  if (!section.count || !detail) return undefined
  let v: unknown = detail
  for (const k of section.count) {
    if (v === null || typeof v !== 'object') return undefined
    v = (v as Record<string, unknown>)[k]
  }
  if (typeof v === 'number') return v
  // descendant counts list only the kinds present: a kind absent there has none
  if (v === undefined && section.count[0] === 'descendents' && detail.descendents !== undefined) return 0
  return undefined
}

/** Every entry (for the tests): kind → sections. */
export const SECTION_TABLE: Readonly<Record<string, EntityKindSections>> = { ...AD, ...AZURE }

/** Sections whose lists are drawn on the graph only under this many objects (bigger ones stay a list). */
export const SECTION_GRAPH_LIMIT = 1000
