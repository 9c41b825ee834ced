/**
 * Azure post-processing (SQL): the relationships BloodHound derives from Entra ID role assignments and
 * Microsoft Graph app role grants after ingest (packages/go/analysis/azure/post.go, role.go), added to the
 * one batch that replaces every derived edge (src/collectors/postprocess.store.ts, `derived = 1`,
 * migrations/0013) at the start of each analysis run. docs/collectors.md ("Azure post-processing") lists
 * the rules; here is how each is computed.
 *
 * Role members (BloodHound's RoleMembers, used by every role rule): the users, groups and service
 * principals holding the role directly (`AZHasRole`), plus the users and service principals that are direct
 * members (`AZMemberOf`) of a role-assignable group (`isassignabletorole` true) holding it. Members of a
 * group that is not role-assignable, and members of nested groups, do not inherit the role (its
 * roleDescentFilter). A role's template is its `templateid`, or the part of its object id before `@`
 * (`<template>@<tenant>`: a placeholder role has no properties); its tenant is the tenant node named by the
 * role's environment.
 *
 *   AZGlobalAdmin, AZPrivilegedRoleAdmin, AZPrivilegedAuthAdmin
 *                     every member of Global / Privileged Role / Privileged Authentication Administrator →
 *                     the tenant
 *   AZAddSecret       the Application and Cloud Application Administrator ROLES → every application and
 *                     service principal the tenant contains (holders reach the targets through AZHasRole)
 *   AZAddOwner        the Hybrid Identity Administrator, Partner Tier1 / Tier2 Support and Directory
 *                     Synchronization Accounts roles → the same targets
 *   AZResetPassword   from the role to users of its tenant: Global Administrator, Privileged Authentication
 *                     Administrator and Partner Tier2 Support → every user; Helpdesk, Authentication, User
 *                     and Password Administrator → users that are in no role-assignable group and hold either
 *                     no role or only roles of that role's lesser tier (RESET_TIERS); Partner Tier1 Support →
 *                     users that hold no role and are in no role-assignable group
 *   AZAddMembers      tenant users and service principals that are members of Global or Privileged Role
 *                     Administrator → every group of the tenant; of Groups, User, Intune, Identity
 *                     Governance or Knowledge Administrator, Knowledge Manager or Directory Writers → every
 *                     group whose `isassignabletorole` is false (a group without the property gets none)
 *   AZExecuteCommand  members of Intune Administrator → every device of the tenant whose `operatingsystem`
 *                     contains "windows"
 *   AZMG*             service principals holding a Microsoft Graph app role (the AZMG…_ReadWrite… kinds the
 *                     conversion writes) on a service principal of a tenant → that tenant's objects (MG_RULES)
 *   SyncedToEntraUser, SyncedToADUser   (BloodHound's hybrid PostHybrid) a tenant's user with
 *                     `onpremsyncenabled` true and an `onpremid` ↔ the AD `User` with that object id, both ways
 *
 * Each rule is one set-based statement per run; nothing proportional to the graph passes through the isolate.
 */
import { APPLICATION_ADMINISTRATOR, CLOUD_APPLICATION_ADMINISTRATOR, PRIVILEGED_ROLE_ADMINISTRATOR } from './membership'
import { DERIVED_INSERT_HEAD, DERIVED_INSERT_TAIL } from '../../graph/ids'

/** Entra ID built-in role template ids (Microsoft's, as in BloodHound's graph schema). */
export const ROLE_TEMPLATE = {
  globalAdministrator: '62e90394-69f5-4237-9190-012177145e10',
  privilegedRoleAdministrator: PRIVILEGED_ROLE_ADMINISTRATOR,
  privilegedAuthenticationAdministrator: '7be44c8a-adaf-4e2a-84d6-ab2649e08a13',
  applicationAdministrator: APPLICATION_ADMINISTRATOR,
  cloudApplicationAdministrator: CLOUD_APPLICATION_ADMINISTRATOR,
  helpdeskAdministrator: '729827e3-9c14-49f7-bb1b-9608f156bbb8',
  authenticationAdministrator: 'c4e39bd9-1100-46d3-8c65-fb160da0071f',
  userAdministrator: 'fe930be7-5e62-47db-91af-98c3a49a38b1',
  passwordAdministrator: '966707d0-3269-4727-9be2-8c3a10f19b9d',
  groupsAdministrator: 'fdd7a751-b60b-444a-984c-02652fe8fa1c',
  directoryWriters: '9360feb5-f418-4baa-8175-e2a00bac4301',
  intuneAdministrator: '3a2c62db-5318-420d-8d74-23affee5d9d5',
  identityGovernanceAdministrator: '45d8d3c5-c802-45c6-b32a-1d70b5e1e86e',
  knowledgeAdministrator: 'b5a8dcf3-09d5-43a9-a639-8e29ef291470',
  knowledgeManager: '744ec460-397e-42ad-a462-8b3f9747a02c',
  partnerTier1Support: '4ba39ca4-527c-499a-b93d-d9b492c50246',
  partnerTier2Support: 'e00e864a-17c5-4a4b-9c06-f5b95a8d5bd8',
  hybridIdentityAdministrator: '8ac3fc64-6eca-42ea-9e69-59f4c7b60eb2',
  directorySynchronizationAccounts: 'd29b2b05-8046-44ba-8758-1e26182fcf32',
  reportsReader: '4a5d8f65-41da-4de4-8968-e035b65339cf',
  messageCenterReader: '790c1fb9-7f7d-4f88-86a1-ef1f95c05c1b',
  guestInviter: '95e79109-95c0-4d8e-aee3-d01accf2d47b',
  directoryReaders: '88d8e3e3-8f55-4a1e-953a-9b9898b8876b',
  usageSummaryReportsReader: '75934031-6c7e-415a-99d7-48dbd49e875e',
} as const
const R = ROLE_TEMPLATE
const list = (...ids: string[]) => ids.map((id) => `'${id}'`).join(', ')

/**
 * Password reset by the "lesser" administrator roles (BloodHound's <Role>PasswordResetTargetRoles): a user
 * holding roles is a target only when every role it holds is in the resetting role's list.
 */
export const RESET_TIERS: Record<string, readonly string[]> = {
  [R.helpdeskAdministrator]: [R.reportsReader, R.messageCenterReader, R.helpdeskAdministrator, R.guestInviter, R.directoryReaders, R.passwordAdministrator, R.usageSummaryReportsReader],
  [R.authenticationAdministrator]: [R.authenticationAdministrator, R.reportsReader, R.messageCenterReader, R.guestInviter, R.directoryReaders, R.passwordAdministrator, R.usageSummaryReportsReader],
  [R.userAdministrator]: [
    R.userAdministrator, R.reportsReader, R.messageCenterReader, R.helpdeskAdministrator, R.guestInviter, R.directoryReaders, R.passwordAdministrator,
    R.usageSummaryReportsReader, R.groupsAdministrator,
  ],
  [R.passwordAdministrator]: [R.passwordAdministrator, R.guestInviter, R.directoryReaders],
  [R.partnerTier1Support]: [], // only users holding no role
}
const RESET_ALL = [R.globalAdministrator, R.privilegedAuthenticationAdministrator, R.partnerTier2Support]

/** Each statement below is `${INSERT} <candidates>`; azureDerivedStatements closes it with DERIVED_INSERT_TAIL (src/graph/ids.ts). */
const INSERT = DERIVED_INSERT_HEAD

/**
 * Common table expressions every role rule starts from:
 *   roles(role, tenant, tpl)   the tenants' roles with their (lower-case) template
 *   rm(role, tenant, tpl, member)   the role members (see the header)
 *   tc(tenant, id, kind)       what each tenant contains (AZContains), with the primary kind
 */
const WITH_ROLES = `
WITH
  roles(role, tenant, tpl) AS (
    SELECT r.id, t.id,
           lower(coalesce(json_extract(r.properties, '$.templateid'),
                          CASE WHEN instr(r.objectid, '@') > 0 THEN substr(r.objectid, 1, instr(r.objectid, '@') - 1) END))
    FROM nodes r JOIN nodes t ON t.objectid = r.environment_id AND t.kind = 'AZTenant'
    WHERE r.kind = 'AZRole'),
  rm(role, tenant, tpl, member) AS (
    SELECT r.role, r.tenant, r.tpl, h.start_id
    FROM roles r JOIN edges h ON h.end_id = r.role AND h.kind = 'AZHasRole'
    JOIN nodes p ON p.id = h.start_id AND p.kind IN ('AZUser', 'AZGroup', 'AZServicePrincipal')
    UNION
    SELECT r.role, r.tenant, r.tpl, m.start_id
    FROM roles r JOIN edges h ON h.end_id = r.role AND h.kind = 'AZHasRole'
    JOIN nodes g ON g.id = h.start_id AND g.kind = 'AZGroup' AND json_extract(g.properties, '$.isassignabletorole') IS 1
    JOIN edges m ON m.end_id = g.id AND m.kind = 'AZMemberOf'
    JOIN nodes u ON u.id = m.start_id AND u.kind IN ('AZUser', 'AZServicePrincipal')),
  tc(tenant, id, kind, props) AS (
    SELECT t.id, n.id, n.kind, n.properties
    FROM nodes t JOIN edges c ON c.start_id = t.id AND c.kind = 'AZContains' JOIN nodes n ON n.id = c.end_id
    WHERE t.kind = 'AZTenant')`

const TENANT_ADMINS = `${WITH_ROLES}
${INSERT}
SELECT DISTINCT member, tenant,
       CASE tpl WHEN '${R.globalAdministrator}' THEN 'AZGlobalAdmin' WHEN '${R.privilegedRoleAdministrator}' THEN 'AZPrivilegedRoleAdmin'
                ELSE 'AZPrivilegedAuthAdmin' END, '{}', ?1, ?1, 1
FROM rm WHERE tpl IN (${list(R.globalAdministrator, R.privilegedRoleAdministrator, R.privilegedAuthenticationAdministrator)})`

/** From a role to every application and service principal of its tenant (AZAddSecret, AZAddOwner). */
const roleToAppsAndSps = (kind: string, templates: string[]) => `${WITH_ROLES}
${INSERT}
SELECT r.role, c.id, '${kind}', '{}', ?1, ?1, 1
FROM roles r JOIN tc c ON c.tenant = r.tenant AND c.kind IN ('AZApp', 'AZServicePrincipal')
WHERE r.tpl IN (${list(...templates)})`

const ADD_SECRET = roleToAppsAndSps('AZAddSecret', [R.applicationAdministrator, R.cloudApplicationAdministrator])
const ADD_OWNER = roleToAppsAndSps('AZAddOwner', [R.hybridIdentityAdministrator, R.partnerTier1Support, R.partnerTier2Support, R.directorySynchronizationAccounts])

/** (resetting role template, role template its targets may hold) pairs, as a VALUES table. */
const TIER_VALUES = Object.entries(RESET_TIERS)
  .flatMap(([role, targets]) => targets.map((t) => `('${role}', '${t}')`))
  .join(', ')

/**
 * AZResetPassword. The lesser roles' targets are computed as a set difference (EXCEPT): the tenant's users,
 * minus members of the tenant's role-assignable groups, minus users holding a role outside the tier. A user
 * holding no role is never subtracted.
 */
const RESET_PASSWORD = `${WITH_ROLES},
  tier(role_tpl, target_tpl) AS (VALUES ${TIER_VALUES}),
  lesser(role, tenant, tpl) AS (SELECT role, tenant, tpl FROM roles WHERE tpl IN (${list(...Object.keys(RESET_TIERS))})),
  tu(tenant, id) AS (SELECT tenant, id FROM tc WHERE kind = 'AZUser'),
  rag(tenant, id) AS (
    SELECT c.tenant, m.start_id FROM tc c JOIN edges m ON m.end_id = c.id AND m.kind = 'AZMemberOf'
    WHERE c.kind = 'AZGroup' AND json_extract(c.props, '$.isassignabletorole') IS 1)
${INSERT}
SELECT role, target, 'AZResetPassword', '{}', ?1, ?1, 1 FROM (
  SELECT r.role AS role, u.id AS target FROM roles r JOIN tu u ON u.tenant = r.tenant WHERE r.tpl IN (${list(...RESET_ALL)})
  UNION
  SELECT role, target FROM (
    SELECT l.role AS role, u.id AS target FROM lesser l JOIN tu u ON u.tenant = l.tenant
    EXCEPT
    SELECT l.role, g.id FROM lesser l JOIN rag g ON g.tenant = l.tenant
    EXCEPT
    SELECT l.role, x.member FROM lesser l JOIN rm x ON x.tenant = l.tenant AND x.tpl IS NOT NULL
    LEFT JOIN tier ti ON ti.role_tpl = l.tpl AND ti.target_tpl = x.tpl
    WHERE ti.role_tpl IS NULL))`

const ADD_MEMBERS_ALL = [R.globalAdministrator, R.privilegedRoleAdministrator]
const ADD_MEMBERS_NOT_ROLE_ASSIGNABLE = [
  R.groupsAdministrator, R.directoryWriters, R.identityGovernanceAdministrator, R.userAdministrator, R.intuneAdministrator, R.knowledgeAdministrator,
  R.knowledgeManager,
]

const ADD_MEMBERS = `${WITH_ROLES}
${INSERT}
SELECT DISTINCT x.member, g.id, 'AZAddMembers', '{}', ?1, ?1, 1
FROM rm x
JOIN tc p ON p.tenant = x.tenant AND p.id = x.member AND p.kind IN ('AZUser', 'AZServicePrincipal')
JOIN tc g ON g.tenant = x.tenant AND g.kind = 'AZGroup'
WHERE x.tpl IN (${list(...ADD_MEMBERS_ALL)})
   OR (x.tpl IN (${list(...ADD_MEMBERS_NOT_ROLE_ASSIGNABLE)}) AND json_extract(g.props, '$.isassignabletorole') IS 0)`

const EXECUTE_COMMAND = `${WITH_ROLES}
${INSERT}
SELECT DISTINCT x.member, d.id, 'AZExecuteCommand', '{}', ?1, ?1, 1
FROM rm x JOIN tc d ON d.tenant = x.tenant AND d.kind = 'AZDevice'
WHERE x.tpl = '${R.intuneAdministrator}' AND lower(json_extract(d.props, '$.operatingsystem')) LIKE '%windows%'`

/**
 * Microsoft Graph app role abuse (BloodHound's AppRoleAssignments): a service principal holding the grant
 * (`grant`, a relationship the conversion writes from AzureHound's AZAppRoleAssignment) on any service
 * principal a tenant contains gets `kind` to every target of that tenant of the class `target`:
 *   sp / app / role     every service principal / application / role the tenant contains
 *   group               every group the tenant contains
 *   group-ra-false      every group with `isassignabletorole` false
 *   tenant              the tenant itself (for RoleManagement: only when it contains a role)
 * The source is itself one of the tenant's service principals: BloodHound writes that relationship to
 * itself too, and so do we.
 */
export const MG_RULES: readonly [grant: string, target: string, kind: string][] = [
  ['AZMGApplication_ReadWrite_All', 'sp', 'AZMGAddSecret'],
  ['AZMGApplication_ReadWrite_All', 'sp', 'AZMGAddOwner'],
  ['AZMGApplication_ReadWrite_All', 'app', 'AZMGAddSecret'],
  ['AZMGApplication_ReadWrite_All', 'app', 'AZMGAddOwner'],
  ['AZMGAppRoleAssignment_ReadWrite_All', 'tenant', 'AZMGGrantAppRoles'],
  ['AZMGDirectory_ReadWrite_All', 'group-ra-false', 'AZMGAddMember'],
  ['AZMGDirectory_ReadWrite_All', 'group-ra-false', 'AZMGAddOwner'],
  ['AZMGGroup_ReadWrite_All', 'group-ra-false', 'AZMGAddMember'],
  ['AZMGGroup_ReadWrite_All', 'group-ra-false', 'AZMGAddOwner'],
  ['AZMGGroupMember_ReadWrite_All', 'group-ra-false', 'AZMGAddMember'],
  ['AZMGRoleManagement_ReadWrite_Directory', 'tenant-with-roles', 'AZMGGrantAppRoles'],
  ['AZMGRoleManagement_ReadWrite_Directory', 'role', 'AZMGGrantRole'],
  ['AZMGRoleManagement_ReadWrite_Directory', 'sp', 'AZMGAddSecret'],
  ['AZMGRoleManagement_ReadWrite_Directory', 'sp', 'AZMGAddOwner'],
  ['AZMGRoleManagement_ReadWrite_Directory', 'app', 'AZMGAddSecret'],
  ['AZMGRoleManagement_ReadWrite_Directory', 'app', 'AZMGAddOwner'],
  ['AZMGRoleManagement_ReadWrite_Directory', 'group', 'AZMGAddMember'],
  ['AZMGRoleManagement_ReadWrite_Directory', 'group', 'AZMGAddOwner'],
  ['AZMGServicePrincipalEndpoint_ReadWrite_All', 'sp', 'AZMGAddOwner'],
]
const MG_GRANTS = [...new Set(MG_RULES.map((r) => r[0]))]

const MG_ABUSE = `
WITH
  tc(tenant, id, kind, props) AS (
    SELECT t.id, n.id, n.kind, n.properties
    FROM nodes t JOIN edges c ON c.start_id = t.id AND c.kind = 'AZContains' JOIN nodes n ON n.id = c.end_id
    WHERE t.kind = 'AZTenant'),
  src(tenant, sp, grant_kind) AS (
    SELECT DISTINCT c.tenant, g.start_id, g.kind
    FROM tc c JOIN edges g ON g.end_id = c.id AND g.kind IN (${list(...MG_GRANTS)})
    JOIN nodes s ON s.id = g.start_id AND s.kind = 'AZServicePrincipal'
    WHERE c.kind = 'AZServicePrincipal'),
  tgt(tenant, id, class) AS (
    SELECT tenant, id, CASE kind WHEN 'AZServicePrincipal' THEN 'sp' WHEN 'AZApp' THEN 'app' WHEN 'AZRole' THEN 'role' ELSE 'group' END
    FROM tc WHERE kind IN ('AZServicePrincipal', 'AZApp', 'AZRole', 'AZGroup')
    UNION ALL
    SELECT tenant, id, 'group-ra-false' FROM tc WHERE kind = 'AZGroup' AND json_extract(props, '$.isassignabletorole') IS 0
    UNION ALL
    SELECT DISTINCT tenant, tenant, 'tenant' FROM tc WHERE kind = 'AZServicePrincipal'
    UNION ALL
    SELECT DISTINCT tenant, tenant, 'tenant-with-roles' FROM tc WHERE kind = 'AZRole'),
  rules(grant_kind, class, kind) AS (VALUES ${MG_RULES.map(([g, c, k]) => `('${g}', '${c}', '${k}')`).join(', ')})
${INSERT}
SELECT DISTINCT sg.sp, tg.id, ru.kind, '{}', ?1, ?1, 1
FROM src sg JOIN rules ru ON ru.grant_kind = sg.grant_kind JOIN tgt tg ON tg.tenant = sg.tenant AND tg.class = ru.class`

/**
 * Hybrid users (BloodHound's PostHybrid): an Entra user the tenant contains, synchronised from AD
 * (`onpremsyncenabled` true, non-empty `onpremid`), and the AD `User` whose object id is that SID (compared
 * upper-cased: AD object ids are stored upper-case) get SyncedToEntraUser (AD → Entra) and SyncedToADUser
 * (Entra → AD). BloodHound creates a bare AD user when none exists; the conversion already writes that node
 * (a placeholder `User`) for every user with an on-premises SID, so a missing one means it was deleted since.
 */
const HYBRID = `
WITH su(az, ad) AS (
  SELECT u.id, a.id
  FROM nodes t JOIN edges c ON c.start_id = t.id AND c.kind = 'AZContains'
  JOIN nodes u ON u.id = c.end_id AND u.kind = 'AZUser'
  JOIN nodes a ON a.objectid = upper(json_extract(u.properties, '$.onpremid')) AND a.kind = 'User'
  WHERE t.kind = 'AZTenant' AND json_extract(u.properties, '$.onpremsyncenabled') IS 1 AND json_extract(u.properties, '$.onpremid') <> '')
${INSERT}
SELECT ad, az, 'SyncedToEntraUser', '{}', ?1, ?1, 1 FROM su
UNION ALL
SELECT az, ad, 'SyncedToADUser', '{}', ?1, ?1, 1 FROM su`

/** The Azure statements of the derived-edge batch; ?1 = now. */
export function azureDerivedStatements(db: D1Database, now: string): D1PreparedStatement[] {
  return [TENANT_ADMINS, ADD_SECRET, ADD_OWNER, RESET_PASSWORD, ADD_MEMBERS, EXECUTE_COMMAND, MG_ABUSE, HYBRID].map((sql) => db.prepare(`${sql}\n${DERIVED_INSERT_TAIL}`).bind(now))
}
