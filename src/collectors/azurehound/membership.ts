/**
 * Who belongs to, owns or holds what in Entra ID: group members and owners, application, service
 * principal and device owners, directory role assignments and eligibilities, role approval policies, and
 * Microsoft Graph app role grants. Relationship kinds and directions are BloodHound's (ein/azure.go,
 * cmd/api/src/services/graphify/azure_convertors.go).
 */
import { directoryObject, rel, up, type AzureConverter, type AzureEmitter, type Reader } from './common'

/** `members` / `owners` lists of {<member|owner>: directory object}: each typed principal → target. */
function principals(d: Reader, listKey: string, itemKey: string, target: string, targetKind: string, kind: string, out: AzureEmitter) {
  for (const entry of d.list(listKey)) {
    const p = directoryObject(entry.obj_(itemKey))
    // other object types (e.g. an orgContact) are skipped, as BloodHound does (it only logs a warning)
    if (p) rel(out, p[0], p[1], target, targetKind, kind)
  }
}

export const convertGroupMembers: AzureConverter = (d, out) => principals(d, 'members', 'member', d.id('groupId'), 'AZGroup', 'AZMemberOf', out)
export const convertGroupOwners: AzureConverter = (d, out) => principals(d, 'owners', 'owner', d.id('groupId'), 'AZGroup', 'AZOwns', out)
export const convertAppOwners: AzureConverter = (d, out) => principals(d, 'owners', 'owner', d.id('appId'), 'AZApp', 'AZOwns', out)
export const convertServicePrincipalOwners: AzureConverter = (d, out) =>
  principals(d, 'owners', 'owner', d.id('servicePrincipalId'), 'AZServicePrincipal', 'AZOwns', out)
export const convertDeviceOwners: AzureConverter = (d, out) => principals(d, 'owners', 'owner', d.id('deviceId'), 'AZDevice', 'AZOwns', out)

/** Entra ID role template ids BloodHound treats specially (graphschema azure). */
export const APPLICATION_ADMINISTRATOR = '9b895d92-2cd3-44c7-9d02-a6ac2d5ea5c3'
export const CLOUD_APPLICATION_ADMINISTRATOR = '158c047a-c907-4556-b7ef-446551a6b5f7'
export const PRIVILEGED_ROLE_ADMINISTRATOR = 'e8611ab8-c189-46e8-94e1-60213ab1f814'

/**
 * Directory role assignments of one role. Scope "/" is the tenant; an application (or cloud application)
 * administrator scoped to one object gets `AZAppAdmin` / `AZCloudAppAdmin` to that object, every other
 * assignment `AZHasRole` to the role with its `scope` (BloodHound compares the role ids case-sensitively).
 */
export const convertRoleAssignments: AzureConverter = (d, out) => {
  const tenant = d.str('tenantId')
  for (const a of d.list('roleAssignments')) {
    const roleDef = a.str('roleDefinitionId')
    const principal = a.str('principalId')
    const dir = a.str('directoryScopeId')
    const scope = dir === '/' ? up(tenant) : up(dir.slice(1))
    if ((roleDef === APPLICATION_ADMINISTRATOR || roleDef === CLOUD_APPLICATION_ADMINISTRATOR) && dir !== '/')
      rel(out, principal, 'AZBase', scope, 'AZBase', roleDef === APPLICATION_ADMINISTRATOR ? 'AZAppAdmin' : 'AZCloudAppAdmin')
    else rel(out, principal, 'AZBase', `${up(roleDef)}@${up(tenant)}`, 'AZRole', 'AZHasRole', { scope })
  }
}

/** A PIM eligibility: the principal may activate the role (`AZRoleEligible`, not traversable). */
export const convertRoleEligibility: AzureConverter = (d, out) => {
  const role = up(`${d.str('roleDefinitionId')}@${d.str('tenantId')}`)
  rel(out, d.str('principalId'), 'AZBase', role, 'AZRole', 'AZRoleEligible')
}

/**
 * A role's PIM policy: its approval settings become properties of the role node, and when approval is
 * required each approver (user or group; none listed: the tenant's Privileged Role Administrator role)
 * gets `AZRoleApprover` to the role.
 */
export const convertRoleManagementPolicy: AzureConverter = (d, out) => {
  const tenant = d.str('tenantId')
  const roleDef = d.id('roleDefinitionId')
  const role = up(`${roleDef}@${tenant}`)
  const users = d.strings('endUserAssignmentUserApprovers').map(up)
  const groups = d.strings('endUserAssignmentGroupApprovers').map(up)
  const requiresApproval = d.bool('endUserAssignmentRequiresApproval')
  if (!roleDef) return
  out.node({
    o: role,
    k: 'AZRole',
    ks: ['AZRole', 'AZBase'],
    p: {
      roledefinitionid: up(roleDef),
      tenantid: up(tenant),
      enduserassignmentrequiresapproval: requiresApproval,
      enduserassignmentrequirescapauthenticationcontext: d.bool('endUserAssignmentRequiresCAPAuthenticationContext'),
      enduserassignmentuserapprovers: users,
      enduserassignmentgroupapprovers: groups,
      enduserassignmentrequiresmfa: d.bool('endUserAssignmentRequiresMFA'),
      enduserassignmentrequiresjustification: d.bool('endUserAssignmentRequiresJustification'),
      enduserassignmentrequiresticketinformation: d.bool('endUserAssignmentRequiresTicketInformation'),
    },
    ek: null,
  })
  if (!requiresApproval) return
  for (const u of users) rel(out, u, 'AZUser', role, 'AZRole', 'AZRoleApprover')
  for (const g of groups) rel(out, g, 'AZGroup', role, 'AZRole', 'AZRoleApprover')
  if (users.length === 0 && groups.length === 0) rel(out, `${PRIVILEGED_ROLE_ADMINISTRATOR}@${tenant}`, 'AZRole', role, 'AZRole', 'AZRoleApprover')
}

/** Microsoft Graph's application id (the same in every tenant). */
export const MS_GRAPH_APP_ID = '00000003-0000-0000-c000-000000000000'

/** Microsoft Graph app roles BloodHound turns into relationships (graphschema azure RelationshipKindByAppRoleID). */
export const GRAPH_APP_ROLE_KINDS: Record<string, string> = {
  '1bfefb4e-e0b5-418b-a88f-73c46d2cc8e9': 'AZMGApplication_ReadWrite_All',
  '06b708a9-e830-4db3-a914-8e69da51d44f': 'AZMGAppRoleAssignment_ReadWrite_All',
  '19dbc75e-c2e2-444c-a770-ec69d8559fc7': 'AZMGDirectory_ReadWrite_All',
  '62a82d76-70ea-41e2-9197-370581804d09': 'AZMGGroup_ReadWrite_All',
  'dbaae8cf-10b5-4b86-a4a1-f871c94c6695': 'AZMGGroupMember_ReadWrite_All',
  '9e3f62cf-ca93-4989-b6ce-bf83c28f9fe8': 'AZMGRoleManagement_ReadWrite_Directory',
  '89c8469c-83ad-45f7-8ff2-6e3d4285709e': 'AZMGServicePrincipalEndpoint_ReadWrite_All',
}

/**
 * An app role granted to a service principal on Microsoft Graph: both service principals as nodes
 * (display names upper-cased) and, for the roles above, the grant as a relationship. Grants on other
 * resources, or to users and groups, are not converted (BloodHound keeps only these).
 */
export const convertAppRoleAssignment: AzureConverter = (d, out) => {
  const appId = d.str('appId')
  const principalType = d.str('principalType')
  const principal = d.str('principalId')
  const resource = d.str('resourceId')
  const appRole = d.str('appRoleId')
  const tenant = up(d.str('tenantId'))
  if (appId !== MS_GRAPH_APP_ID || principalType !== 'ServicePrincipal') return
  if (principal) out.node({ o: up(principal), k: 'AZServicePrincipal', ks: ['AZServicePrincipal', 'AZBase'], p: { displayname: up(d.str('principalDisplayName')), tenantid: tenant }, ek: null })
  if (resource) out.node({ o: up(resource), k: 'AZServicePrincipal', ks: ['AZServicePrincipal', 'AZBase'], p: { displayname: up(d.str('resourceDisplayName')), tenantid: tenant }, ek: null })
  const kind = GRAPH_APP_ROLE_KINDS[appRole.toLowerCase()]
  if (kind) rel(out, principal, 'AZServicePrincipal', resource, 'AZServicePrincipal', kind)
}
