/**
 * Azure post-processing (SQL): the relationships BloodHound derives from Entra ID role assignments after
 * ingest (packages/go/analysis/azure/post.go), added to the one batch that replaces every derived edge
 * (src/collectors/postprocess.store.ts, `derived = 1`, migrations/0013) at the start of each analysis run.
 *
 *   AZGlobalAdmin, AZPrivilegedRoleAdmin, AZPrivilegedAuthAdmin
 *                     every direct holder (`AZHasRole`) of Global / Privileged Role / Privileged
 *                     Authentication Administrator → the role's tenant
 *   AZAddSecret       the Application and Cloud Application Administrator ROLES → every application and
 *                     service principal the tenant contains (from the role, as BloodHound: its holders
 *                     reach the targets through AZHasRole)
 *   AZResetPassword   from the role: Global and Privileged Authentication Administrator → every user of
 *                     the tenant; Helpdesk, Authentication, User and Password Administrator → every user
 *                     that holds no role and is not a member of a role-assignable group
 *   AZAddMembers      users and service principals holding Global or Privileged Role Administrator →
 *                     every group of the tenant; holding Groups, User or Intune Administrator or Directory
 *                     Writers → every group that is not role-assignable (`isassignabletorole` false)
 *   AZExecuteCommand  holders of Intune Administrator → every Windows device of the tenant
 *
 * Not done (docs/collectors.md): BloodHound's password-reset targets that hold only "lesser" roles
 * (UsersWithRolesExclusive), the Partner Tier 1/2 Support, Identity Governance and Knowledge roles, holders
 * through role-assignable group membership, AZAddOwner, and the AZMG* abuse relationships of Microsoft
 * Graph app role grants.
 *
 * A role's template is its `templateid`, or the part of its object id before `@` (`<template>@<tenant>`,
 * a placeholder role has no properties); its tenant is the tenant node named by the role's environment.
 */
import { APPLICATION_ADMINISTRATOR, CLOUD_APPLICATION_ADMINISTRATOR, PRIVILEGED_ROLE_ADMINISTRATOR } from './membership'

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
} as const
const R = ROLE_TEMPLATE
const list = (...ids: string[]) => ids.map((id) => `'${id}'`).join(', ')

const INSERT = `INSERT OR IGNORE INTO edges (start_id, end_id, kind, properties, created_at, updated_at, derived)`

/** Tenant roles: role node id, its template (lower case), its tenant node id. */
const ROLES = `
  SELECT r.id AS role, t.id AS tenant,
         lower(coalesce(json_extract(r.properties, '$.templateid'),
                        CASE WHEN instr(r.objectid, '@') > 0 THEN substr(r.objectid, 1, instr(r.objectid, '@') - 1) END)) AS tpl
  FROM nodes r JOIN nodes t ON t.objectid = r.environment_id AND t.kind = 'AZTenant'
  WHERE r.kind = 'AZRole'`

/** Nodes of a kind that the tenant contains. */
const CONTAINED = (kinds: string) => `
  JOIN edges c ON c.start_id = r.tenant AND c.kind = 'AZContains'
  JOIN nodes n ON n.id = c.end_id AND n.kind IN (${kinds})`

const TENANT_ADMINS = `
${INSERT}
SELECT h.start_id, r.tenant,
       CASE r.tpl WHEN '${R.globalAdministrator}' THEN 'AZGlobalAdmin' WHEN '${R.privilegedRoleAdministrator}' THEN 'AZPrivilegedRoleAdmin'
                  ELSE 'AZPrivilegedAuthAdmin' END, '{}', ?1, ?1, 1
FROM (${ROLES}) r JOIN edges h ON h.end_id = r.role AND h.kind = 'AZHasRole'
WHERE r.tpl IN (${list(R.globalAdministrator, R.privilegedRoleAdministrator, R.privilegedAuthenticationAdministrator)})`

const ADD_SECRET = `
${INSERT}
SELECT r.role, n.id, 'AZAddSecret', '{}', ?1, ?1, 1
FROM (${ROLES}) r ${CONTAINED(`'AZApp', 'AZServicePrincipal'`)}
WHERE r.tpl IN (${list(R.applicationAdministrator, R.cloudApplicationAdministrator)})`

/** Users of the tenant that hold no role and are in no role-assignable group. */
const UNPRIVILEGED_USER = `NOT EXISTS (SELECT 1 FROM edges x WHERE x.start_id = n.id AND x.kind = 'AZHasRole')
  AND NOT EXISTS (SELECT 1 FROM edges m JOIN nodes g ON g.id = m.end_id
                  WHERE m.start_id = n.id AND m.kind = 'AZMemberOf' AND json_extract(g.properties, '$.isassignabletorole') IS 1)`

const RESET_PASSWORD = `
${INSERT}
SELECT r.role, n.id, 'AZResetPassword', '{}', ?1, ?1, 1
FROM (${ROLES}) r ${CONTAINED(`'AZUser'`)}
WHERE r.tpl IN (${list(R.globalAdministrator, R.privilegedAuthenticationAdministrator)})
   OR (r.tpl IN (${list(R.helpdeskAdministrator, R.authenticationAdministrator, R.userAdministrator, R.passwordAdministrator)}) AND ${UNPRIVILEGED_USER})`

const ADD_MEMBERS = `
${INSERT}
SELECT h.start_id, n.id, 'AZAddMembers', '{}', ?1, ?1, 1
FROM (${ROLES}) r JOIN edges h ON h.end_id = r.role AND h.kind = 'AZHasRole'
JOIN nodes p ON p.id = h.start_id AND p.kind IN ('AZUser', 'AZServicePrincipal')
${CONTAINED(`'AZGroup'`)}
WHERE r.tpl IN (${list(R.globalAdministrator, R.privilegedRoleAdministrator)})
   OR (r.tpl IN (${list(R.groupsAdministrator, R.userAdministrator, R.intuneAdministrator, R.directoryWriters)})
       AND json_extract(n.properties, '$.isassignabletorole') IS 0)`

const EXECUTE_COMMAND = `
${INSERT}
SELECT h.start_id, n.id, 'AZExecuteCommand', '{}', ?1, ?1, 1
FROM (${ROLES}) r JOIN edges h ON h.end_id = r.role AND h.kind = 'AZHasRole'
${CONTAINED(`'AZDevice'`)}
WHERE r.tpl = '${R.intuneAdministrator}' AND lower(json_extract(n.properties, '$.operatingsystem')) LIKE '%windows%'`

/** The Azure statements of the derived-edge batch; ?1 = now. */
export function azureDerivedStatements(db: D1Database, now: string): D1PreparedStatement[] {
  return [TENANT_ADMINS, ADD_SECRET, RESET_PASSWORD, ADD_MEMBERS, EXECUTE_COMMAND].map((sql) => db.prepare(sql).bind(now))
}
