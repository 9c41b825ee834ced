/**
 * Entity endpoints: which node kind each entity type is, which counts its detail shows, and how each
 * related-entity list is computed — as data. A list is a short pipeline of set operations over the
 * graph, compiled to one SQL statement with recursive CTEs by src/graph/graph.store.ts
 * (`relatedQuery`). Names (paths, count keys, related types) are BloodHound's; the semantics are
 * BloodHound's list delegates as documented in docs/graph.md, simplified where noted.
 *
 * Pure data plus small lookups.
 */

export type Step =
  /** one hop along any of `edges` */
  | { op: 'out' | 'in'; edges: readonly string[] }
  /** transitive hops (1 or more; 0 or more when `self`) — group membership, containment */
  | { op: 'out*' | 'in*'; edges: readonly string[]; self?: boolean }
  /**
   * two transitive walks (1 or more hops) from the same nodes, one outbound along `out`, one inbound along `in`, and
   * the union of what they reach: not a mixed walk (a node reached outbound is not walked inbound). BloodHound's
   * PKI hierarchy of a CA.
   */
  | { op: 'both*'; out: readonly string[]; in: readonly string[] }
  /** the nodes of the entity's environment (entity = the environment node), by primary kind */
  | { op: 'environment'; kinds: readonly string[] }
  /** keep nodes having one of `kinds` (any of their kinds) */
  | { op: 'kinds'; kinds: readonly string[] }
  /** keep nodes from another environment than the entity's */
  | { op: 'foreign' }
  /** keep tier-zero nodes */
  | { op: 'tierZero' }

export type Plan = readonly Step[]

/**
 * Whether a plan's nodes are reached along relationships, so that `type=graph` can show the walks.
 * Plans made only of an `environment` step and filters (a domain's users, groups, ...) are not: as in
 * BloodHound (no path delegate), their graph is refused.
 */
export function traverses(plan: Plan): boolean {
  return plan.some((s) => s.op === 'out' || s.op === 'in' || s.op === 'out*' || s.op === 'in*' || s.op === 'both*')
}

// ---- Active Directory ---------------------------------------------------------------------------------

/** ACL relationships that give control over an object (BloodHound's ACL kinds). */
export const AD_CONTROL = [
  'GenericAll', 'GenericWrite', 'Owns', 'OwnsLimitedRights', 'WriteOwner', 'WriteOwnerLimitedRights', 'WriteDacl',
  'AllExtendedRights', 'ForceChangePassword', 'AddMember', 'AddSelf', 'ReadLAPSPassword', 'ReadGMSAPassword',
  'AddKeyCredentialLink', 'WriteSPN', 'AddAllowedToAct', 'WriteAccountRestrictions', 'SyncLAPSPassword', 'DCSync',
  'WriteGPLink', 'ManageCA', 'ManageCertificates', 'WritePKIEnrollmentFlag', 'WritePKINameFlag',
] as const
export const AD_TRUSTS = ['TrustedBy', 'SameForestTrust', 'CrossForestTrust'] as const

/** The PKI relationships a CA's hierarchy follows (BloodHound's CA PKI-hierarchy delegates): inbound and outbound. */
const PKI_INBOUND = ['HostsCAService', 'IssuedSignedBy', 'EnterpriseCAFor'] as const
const PKI_OUTBOUND = ['EnterpriseCAFor', 'TrustedForNTAuth', 'IssuedSignedBy', 'RootCAFor', 'NTAuthStoreFor'] as const
/**
 * The escalation relationships into a domain that a domain's `adcs-escalations` follows (BloodHound's
 * CreateADCSEscalationsListDelegate), plus the ESC relationships EdgeHound's post-processing also derives (ESC13, ESC16:
 * src/collectors/adcs.ts), which BloodHound's newer versions list too.
 */
export const ADCS_ESCALATIONS = [
  'GoldenCert', 'ADCSESC1', 'ADCSESC3', 'ADCSESC4', 'ADCSESC6a', 'ADCSESC6b', 'ADCSESC9a', 'ADCSESC9b', 'ADCSESC10a', 'ADCSESC10b',
  'ADCSESC13', 'ADCSESC16',
] as const

const memberOfSelf: Step = { op: 'out*', edges: ['MemberOf'], self: true }
/** the entity and every group it belongs to, then one hop along `kind` */
const outboundViaGroups = (...kinds: string[]): Plan => [memberOfSelf, { op: 'out', edges: kinds }]
/** sources of `kind` edges into the entity, plus every (transitive) member of those that are groups */
const inboundWithMembers = (...kinds: string[]): Plan => [{ op: 'in', edges: kinds }, { op: 'in*', edges: ['MemberOf'], self: true }]
const linkedGpos: Plan = [{ op: 'in*', edges: ['Contains'], self: true }, { op: 'in', edges: ['GPLink'] }]
const contained = (...kinds: string[]): Plan => [{ op: 'out*', edges: ['Contains'] }, { op: 'kinds', kinds }]
const gpoAffected = (...kinds: string[]): Plan => [{ op: 'out', edges: ['GPLink'] }, { op: 'out*', edges: ['Contains'], self: true }, { op: 'kinds', kinds }]

const AD_LISTS = {
  sessionsOfUser: [{ op: 'in', edges: ['HasSession'] }],
  sessionsOfComputer: [{ op: 'out', edges: ['HasSession'] }],
  sessionsOfGroup: [{ op: 'in*', edges: ['MemberOf'] }, { op: 'in', edges: ['HasSession'] }],
  memberships: [{ op: 'out*', edges: ['MemberOf'] }],
  members: [{ op: 'in*', edges: ['MemberOf'] }],
  adminRights: outboundViaGroups('AdminTo'),
  rdpRights: outboundViaGroups('CanRDP'),
  dcomRights: outboundViaGroups('ExecuteDCOM'),
  psRemoteRights: outboundViaGroups('CanPSRemote'),
  backupRights: outboundViaGroups('CanBackup'),
  sqlAdminRights: [{ op: 'out', edges: ['SQLAdmin'] }],
  constrainedDelegationRights: [{ op: 'out', edges: ['AllowedToDelegate'] }],
  adminUsers: inboundWithMembers('AdminTo'),
  rdpUsers: inboundWithMembers('CanRDP'),
  dcomUsers: inboundWithMembers('ExecuteDCOM'),
  psRemoteUsers: inboundWithMembers('CanPSRemote'),
  backupOperators: inboundWithMembers('CanBackup'),
  sqlAdmins: [{ op: 'in', edges: ['SQLAdmin'] }],
  constrainedUsers: [{ op: 'in', edges: ['AllowedToDelegate'] }],
  controllables: outboundViaGroups(...AD_CONTROL),
  controllers: inboundWithMembers(...AD_CONTROL),
  linkedGpos,
  domainUsers: [{ op: 'environment', kinds: ['User'] }],
  domainGroups: [{ op: 'environment', kinds: ['Group'] }],
  domainComputers: [{ op: 'environment', kinds: ['Computer'] }],
  domainOUs: [{ op: 'environment', kinds: ['OU'] }],
  domainGPOs: [{ op: 'environment', kinds: ['GPO'] }],
  foreignUsers: [{ op: 'environment', kinds: ['Group'] }, { op: 'in', edges: ['MemberOf'] }, { op: 'kinds', kinds: ['User'] }, { op: 'foreign' }],
  foreignGroups: [{ op: 'environment', kinds: ['Group'] }, { op: 'in', edges: ['MemberOf'] }, { op: 'kinds', kinds: ['Group'] }, { op: 'foreign' }],
  foreignAdmins: [{ op: 'environment', kinds: ['Computer'] }, ...inboundWithMembers('AdminTo'), { op: 'foreign' }],
  foreignGpoControllers: [{ op: 'environment', kinds: ['GPO'] }, ...inboundWithMembers(...AD_CONTROL), { op: 'foreign' }],
  inboundTrusts: [{ op: 'in', edges: AD_TRUSTS }],
  outboundTrusts: [{ op: 'out', edges: AD_TRUSTS }],
  dcSyncers: inboundWithMembers('DCSync'),
  domainLinkedGpos: [{ op: 'in', edges: ['GPLink'] }],
  gpoOUs: gpoAffected('OU', 'Container', 'Domain'),
  gpoComputers: gpoAffected('Computer'),
  gpoUsers: gpoAffected('User'),
  gpoTierZero: [{ op: 'out', edges: ['GPLink'] }, { op: 'out*', edges: ['Contains'], self: true }, { op: 'tierZero' }],
  ouUsers: contained('User'),
  ouGroups: contained('Group'),
  ouComputers: contained('Computer'),
  publishedTemplates: [{ op: 'in*', edges: ['PublishedTo'] }],
  publishedToCAs: [{ op: 'out*', edges: ['PublishedTo'] }],
  /** BloodHound's CreateTrustedCAsListDelegate: the CAs trusted for NT authentication by the store */
  trustedCAs: [{ op: 'in*', edges: ['TrustedForNTAuth'] }],
  /** BloodHound's CreateCAPKIHierarchyListDelegate (enterprise and AIA CAs): up to the hosts, down to the roots and domains */
  caPkiHierarchy: [{ op: 'both*', in: PKI_INBOUND, out: PKI_OUTBOUND }],
  /** BloodHound's CreateRootCAPKIHierarchyListDelegate: what chains to the root CA (CAs and their hosts) */
  rootCaPkiHierarchy: [{ op: 'in*', edges: PKI_INBOUND }],
  /** BloodHound's FetchPolicyLinkedCertTemplates: the templates extended by the issuance policy */
  linkedTemplates: [{ op: 'in*', edges: ['ExtendedByPolicy'] }, { op: 'kinds', kinds: ['CertTemplate'] }],
  /** BloodHound's CreateADCSEscalationsListDelegate: principals with an ADCS escalation to the domain */
  adcsEscalations: [{ op: 'in*', edges: ADCS_ESCALATIONS }],
} satisfies Record<string, Plan>

export interface AdEntityType {
  /** path segment: /api/v2/{segment}/{object_id} */
  segment: string
  /** node kind the object must have; null = any node (base) */
  kind: string | null
  /** count key (BloodHound's) → plan */
  counts: Record<string, Plan>
  /** related list path segment (BloodHound's) → plan */
  lists: Record<string, Plan>
}

const L = AD_LISTS
export const AD_ENTITY_TYPES: AdEntityType[] = [
  {
    segment: 'users',
    kind: 'User',
    counts: {
      sessions: L.sessionsOfUser, groupMembership: L.memberships, adminRights: L.adminRights, rdpRights: L.rdpRights,
      backupRights: L.backupRights, dcomRights: L.dcomRights, psRemoteRights: L.psRemoteRights, sqlAdmin: L.sqlAdminRights,
      constrainedDelegation: L.constrainedDelegationRights, controllables: L.controllables, controllers: L.controllers, gpos: L.linkedGpos,
    },
    lists: {
      sessions: L.sessionsOfUser, memberships: L.memberships, 'admin-rights': L.adminRights, 'rdp-rights': L.rdpRights,
      'dcom-rights': L.dcomRights, 'ps-remote-rights': L.psRemoteRights, 'sql-admin-rights': L.sqlAdminRights,
      'constrained-delegation-rights': L.constrainedDelegationRights, controllers: L.controllers, controllables: L.controllables,
    },
  },
  {
    segment: 'groups',
    kind: 'Group',
    counts: {
      sessions: L.sessionsOfGroup, members: L.members, membership: L.memberships, adminRights: L.adminRights, rdpRights: L.rdpRights,
      backupRights: L.backupRights, dcomRights: L.dcomRights, psRemoteRights: L.psRemoteRights, controllables: L.controllables,
      controllers: L.controllers,
    },
    lists: {
      sessions: L.sessionsOfGroup, members: L.members, memberships: L.memberships, 'admin-rights': L.adminRights,
      'rdp-rights': L.rdpRights, 'dcom-rights': L.dcomRights, 'ps-remote-rights': L.psRemoteRights,
      controllables: L.controllables, controllers: L.controllers,
    },
  },
  {
    segment: 'computers',
    kind: 'Computer',
    counts: {
      sessions: L.sessionsOfComputer, adminUsers: L.adminUsers, rdpUsers: L.rdpUsers, dcomUsers: L.dcomUsers,
      psRemoteUsers: L.psRemoteUsers, backupOperators: L.backupOperators, sqlAdminUsers: L.sqlAdmins, constrainedUsers: L.constrainedUsers,
      groupMembership: L.memberships, adminRights: L.adminRights, rdpRights: L.rdpRights, backupRights: L.backupRights,
      dcomRights: L.dcomRights, psRemoteRights: L.psRemoteRights, constrainedPrivs: L.constrainedDelegationRights,
      controllables: L.controllables, controllers: L.controllers, gpos: L.linkedGpos,
    },
    lists: {
      sessions: L.sessionsOfComputer, 'admin-users': L.adminUsers, 'rdp-users': L.rdpUsers, 'dcom-users': L.dcomUsers,
      'ps-remote-users': L.psRemoteUsers, 'sql-admins': L.sqlAdmins, 'group-membership': L.memberships,
      'admin-rights': L.adminRights, 'rdp-rights': L.rdpRights, 'dcom-rights': L.dcomRights, 'ps-remote-rights': L.psRemoteRights,
      'constrained-users': L.constrainedUsers, 'constrained-delegation-rights': L.constrainedDelegationRights,
      controllers: L.controllers, controllables: L.controllables,
    },
  },
  {
    segment: 'domains',
    kind: 'Domain',
    counts: {
      users: L.domainUsers, groups: L.domainGroups, computers: L.domainComputers, ous: L.domainOUs, gpos: L.domainGPOs,
      foreignUsers: L.foreignUsers, foreignGroups: L.foreignGroups, foreignGPOControllers: L.foreignGpoControllers,
      foreignAdmins: L.foreignAdmins, inboundTrusts: L.inboundTrusts, outboundTrusts: L.outboundTrusts,
      controllers: L.controllers, linkedgpos: L.domainLinkedGpos, dcsyncers: L.dcSyncers, 'adcs-escalations': L.adcsEscalations,
    },
    lists: {
      users: L.domainUsers, groups: L.domainGroups, computers: L.domainComputers, ous: L.domainOUs, gpos: L.domainGPOs,
      'foreign-users': L.foreignUsers, 'foreign-groups': L.foreignGroups, 'foreign-admins': L.foreignAdmins,
      'foreign-gpo-controllers': L.foreignGpoControllers, 'inbound-trusts': L.inboundTrusts, 'outbound-trusts': L.outboundTrusts,
      controllers: L.controllers, 'dc-syncers': L.dcSyncers, 'linked-gpos': L.domainLinkedGpos, 'adcs-escalations': L.adcsEscalations,
    },
  },
  {
    segment: 'gpos',
    kind: 'GPO',
    counts: { ous: L.gpoOUs, computers: L.gpoComputers, users: L.gpoUsers, controllers: L.controllers, tierzero: L.gpoTierZero },
    lists: { ous: L.gpoOUs, computers: L.gpoComputers, users: L.gpoUsers, controllers: L.controllers, 'tier-zero': L.gpoTierZero },
  },
  {
    segment: 'ous',
    kind: 'OU',
    counts: { gpos: L.linkedGpos, users: L.ouUsers, groups: L.ouGroups, computers: L.ouComputers },
    lists: { gpos: L.linkedGpos, users: L.ouUsers, groups: L.ouGroups, computers: L.ouComputers },
  },
  {
    segment: 'containers',
    kind: 'Container',
    counts: { controllers: L.controllers },
    lists: { controllers: L.controllers },
  },
  // AD CS objects (the Google SecOps connector routes these types here too): BloodHound's counts and lists.
  {
    segment: 'aiacas',
    kind: 'AIACA',
    counts: { controllers: L.controllers, 'pki-hierarchy': L.caPkiHierarchy },
    lists: { controllers: L.controllers, 'pki-hierarchy': L.caPkiHierarchy },
  },
  {
    segment: 'rootcas',
    kind: 'RootCA',
    counts: { controllers: L.controllers, 'pki-hierarchy': L.rootCaPkiHierarchy },
    lists: { controllers: L.controllers, 'pki-hierarchy': L.rootCaPkiHierarchy },
  },
  {
    segment: 'enterprisecas',
    kind: 'EnterpriseCA',
    counts: { controllers: L.controllers, 'pki-hierarchy': L.caPkiHierarchy, 'published-templates': L.publishedTemplates },
    lists: { controllers: L.controllers, 'pki-hierarchy': L.caPkiHierarchy, 'published-templates': L.publishedTemplates },
  },
  {
    segment: 'ntauthstores',
    kind: 'NTAuthStore',
    counts: { controllers: L.controllers, 'trusted-cas': L.trustedCAs },
    lists: { controllers: L.controllers, 'trusted-cas': L.trustedCAs },
  },
  {
    segment: 'certtemplates',
    kind: 'CertTemplate',
    counts: { controllers: L.controllers, 'published-to-cas': L.publishedToCAs },
    lists: { controllers: L.controllers, 'published-to-cas': L.publishedToCAs },
  },
  {
    segment: 'issuancepolicies',
    kind: 'IssuancePolicy',
    counts: { controllers: L.controllers, linkedTemplates: L.linkedTemplates },
    lists: { controllers: L.controllers, linkedtemplates: L.linkedTemplates },
  },
  {
    segment: 'base',
    kind: null,
    counts: { controllables: L.controllables },
    lists: { controllers: L.controllers, controllables: L.controllables },
  },
]

// ---- Azure --------------------------------------------------------------------------------------------

export const AZ_CONTROL = [
  'AZAvereContributor', 'AZContributor', 'AZOwner', 'AZVMContributor', 'AZAutomationContributor', 'AZKeyVaultContributor',
  'AZAddMembers', 'AZAddSecret', 'AZExecuteCommand', 'AZGlobalAdmin', 'AZGrant', 'AZGrantSelf', 'AZPrivilegedRoleAdmin',
  'AZPrivilegedAuthAdmin', 'AZResetPassword', 'AZUserAccessAdministrator', 'AZOwns', 'AZCloudAppAdmin', 'AZAppAdmin',
  'AZAddOwner', 'AZManagedIdentity', 'AZAKSContributor', 'AZWebsiteContributor', 'AZLogicAppContributor',
  'AZMGAddMember', 'AZMGAddOwner', 'AZMGAddSecret', 'AZMGGrantAppRoles', 'AZMGGrantRole',
] as const
export const AZ_EXECUTION = ['AZVMAdminLogin', 'AZVMContributor', 'AZAvereContributor', 'AZWebsiteContributor', 'AZContributor', 'AZExecuteCommand'] as const
export const AZ_APP_ROLE_ABUSE = ['AZMGAddMember', 'AZMGAddOwner', 'AZMGAddSecret', 'AZMGGrantAppRoles', 'AZMGGrantRole'] as const

const azGroupsSelf: Step = { op: 'out*', edges: ['AZMemberOf'], self: true }
const azInbound = (...kinds: string[]): Plan => [{ op: 'in', edges: kinds }, { op: 'in*', edges: ['AZMemberOf'], self: true }]
const descendents = (kind: string): Plan => [{ op: 'out*', edges: ['AZContains'] }, { op: 'kinds', kinds: [kind] }]

/** Descendent kinds by related type (BloodHound's `descendent-*` names). */
export const AZ_DESCENDENT_KINDS: Record<string, string> = {
  'descendent-users': 'AZUser',
  'descendent-groups': 'AZGroup',
  'descendent-management-groups': 'AZManagementGroup',
  'descendent-subscriptions': 'AZSubscription',
  'descendent-resource-groups': 'AZResourceGroup',
  'descendent-virtual-machines': 'AZVM',
  'descendent-managed-clusters': 'AZManagedCluster',
  'descendent-vm-scale-sets': 'AZVMScaleSet',
  'descendent-container-registries': 'AZContainerRegistry',
  'descendent-web-apps': 'AZWebApp',
  'descendent-automation-accounts': 'AZAutomationAccount',
  'descendent-key-vaults': 'AZKeyVault',
  'descendent-function-apps': 'AZFunctionApp',
  'descendent-logic-apps': 'AZLogicApp',
  'descendent-applications': 'AZApp',
  'descendent-service-principals': 'AZServicePrincipal',
  'descendent-devices': 'AZDevice',
}

export const AZ_RELATED: Record<string, Plan> = {
  'group-membership': [{ op: 'out*', edges: ['AZMemberOf'] }],
  'group-members': [{ op: 'in*', edges: ['AZMemberOf'] }],
  roles: [azGroupsSelf, { op: 'out', edges: ['AZHasRole'] }],
  'outbound-control': [azGroupsSelf, { op: 'out', edges: AZ_CONTROL }],
  'inbound-control': azInbound(...AZ_CONTROL),
  'outbound-execution-privileges': [azGroupsSelf, { op: 'out', edges: AZ_EXECUTION }],
  'inbound-execution-privileges': azInbound(...AZ_EXECUTION),
  'outbound-abusable-app-role-assignments': [{ op: 'out', edges: AZ_APP_ROLE_ABUSE }],
  'inbound-abusable-app-role-assignments': [{ op: 'in', edges: AZ_APP_ROLE_ABUSE }],
  'active-assignments': azInbound('AZHasRole'),
  'pim-assignments': azInbound('AZRoleEligible'),
  'role-approvers': azInbound('AZRoleApprover'),
  'key-readers': azInbound('AZGetKeys', 'AZContributor', 'AZOwner', 'AZKeyVaultContributor'),
  'secret-readers': azInbound('AZGetSecrets', 'AZContributor', 'AZOwner', 'AZKeyVaultContributor'),
  'certificate-readers': azInbound('AZGetCertificates', 'AZContributor', 'AZOwner', 'AZKeyVaultContributor'),
  'all-readers': azInbound('AZGetKeys', 'AZGetSecrets', 'AZGetCertificates', 'AZContributor', 'AZOwner', 'AZKeyVaultContributor'),
  ...Object.fromEntries(Object.entries(AZ_DESCENDENT_KINDS).map(([k, kind]) => [k, descendents(kind)])),
}

/** A count in an Azure detail: a plan, or the per-kind descendent counts. */
export type AzCount = { key: string[]; plan: Plan } | { key: string[]; descendents: true }

const R = AZ_RELATED
const inboundControl: AzCount = { key: ['inbound_object_control'], plan: R['inbound-control'] }
const descendentCounts: AzCount = { key: ['descendents', 'descendent_counts'], descendents: true }

export interface AzEntityType {
  segment: string
  /** node kind the object must have; null = any node (az-base) */
  kind: string | null
  counts: AzCount[]
}

const simple = (segment: string, kind: string): AzEntityType => ({ segment, kind, counts: [inboundControl] })

export const AZ_ENTITY_TYPES: AzEntityType[] = [
  { segment: 'az-base', kind: null, counts: [{ key: ['outbound_object_control'], plan: R['outbound-control'] }] },
  {
    segment: 'users',
    kind: 'AZUser',
    counts: [
      { key: ['group_membership'], plan: R['group-membership'] },
      { key: ['roles'], plan: R.roles },
      { key: ['execution_privileges'], plan: R['outbound-execution-privileges'] },
      { key: ['outbound_object_control'], plan: R['outbound-control'] },
      inboundControl,
    ],
  },
  {
    segment: 'groups',
    kind: 'AZGroup',
    counts: [
      { key: ['roles'], plan: R.roles },
      { key: ['group_members'], plan: R['group-members'] },
      { key: ['group_membership'], plan: R['group-membership'] },
      { key: ['outbound_object_control'], plan: R['outbound-control'] },
      inboundControl,
    ],
  },
  { segment: 'tenants', kind: 'AZTenant', counts: [descendentCounts, inboundControl] },
  { segment: 'management-groups', kind: 'AZManagementGroup', counts: [descendentCounts, inboundControl] },
  { segment: 'subscriptions', kind: 'AZSubscription', counts: [descendentCounts, inboundControl] },
  { segment: 'resource-groups', kind: 'AZResourceGroup', counts: [descendentCounts, inboundControl] },
  { segment: 'vms', kind: 'AZVM', counts: [{ key: ['inboundExecutionPrivileges'], plan: R['inbound-execution-privileges'] }, inboundControl] },
  simple('managed-clusters', 'AZManagedCluster'),
  simple('container-registries', 'AZContainerRegistry'),
  simple('web-apps', 'AZWebApp'),
  simple('logic-apps', 'AZLogicApp'),
  simple('automation-accounts', 'AZAutomationAccount'),
  {
    segment: 'key-vaults',
    kind: 'AZKeyVault',
    counts: [
      { key: ['Readers', 'KeyReaders'], plan: R['key-readers'] },
      { key: ['Readers', 'CertificateReaders'], plan: R['certificate-readers'] },
      { key: ['Readers', 'SecretReaders'], plan: R['secret-readers'] },
      { key: ['Readers', 'AllReaders'], plan: R['all-readers'] },
      inboundControl,
    ],
  },
  { segment: 'devices', kind: 'AZDevice', counts: [{ key: ['inboundExecutionPrivileges'], plan: R['inbound-execution-privileges'] }, inboundControl] },
  simple('applications', 'AZApp'),
  simple('vm-scale-sets', 'AZVMScaleSet'),
  {
    segment: 'service-principals',
    kind: 'AZServicePrincipal',
    counts: [
      { key: ['roles'], plan: R.roles },
      inboundControl,
      { key: ['outbound_object_control'], plan: R['outbound-control'] },
      { key: ['inbound-abusable-app-role-assignments'], plan: R['inbound-abusable-app-role-assignments'] },
      { key: ['outbound-abusable-app-role-assignments'], plan: R['outbound-abusable-app-role-assignments'] },
    ],
  },
  {
    segment: 'roles',
    kind: 'AZRole',
    counts: [
      { key: ['active_assignments'], plan: R['active-assignments'] },
      { key: ['pim_assignments'], plan: R['pim-assignments'] },
      { key: ['approvers'], plan: R['role-approvers'] },
    ],
  },
  simple('function-apps', 'AZFunctionApp'),
]

/**
 * The Azure entity type for a path segment: BloodHound's names (`users`, `service-principals`, ...),
 * or a kind name (`AZUser`), which the Google SecOps connector sends for related-entity calls.
 */
export function azEntityType(segment: string): AzEntityType | null {
  return AZ_ENTITY_TYPES.find((t) => t.segment === segment) ?? AZ_ENTITY_TYPES.find((t) => (t.kind ?? 'AZBase').toLowerCase() === segment.toLowerCase()) ?? null
}
