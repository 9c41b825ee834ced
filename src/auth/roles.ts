/**
 * BloodHound's view of the role table (`GET /api/v2/roles`, `/permissions`): numeric ids, a description per
 * role and permissions as `{authority, name}` pairs, built from ROLE_PERMISSIONS (src/auth/permissions.ts),
 * which stays the one table that decides who may do what.
 *
 * Reasoning:
 * - The ids are fixed here, written out, never derived from list order: clients and scripts store them
 *   (`roles: [2]` in a user create, an SSO provider's default role), so an id must keep naming the same role
 *   and permission for the life of the service. A new role or permission takes the next unused number; a
 *   removed one leaves its number unused. test/unit/roles.test.ts pins every id.
 * - The four roles BloodHound also has keep BloodHound's names and its numbering of them (1 Administrator,
 *   2 User, 3 Read-Only, 4 Upload-Only), which SSO providers' `default_role_id` already used
 *   (src/saml/provisioning.ts); Auditor is 5. A client should still look ids up by name (`GET /api/v2/roles`),
 *   as BloodHound's own UI does.
 * - The collector clients' role (CLIENT_ROLE) is not listed: it cannot be given to a person.
 */
import { PERMISSIONS, ROLE_PERMISSIONS, ROLES, type Permission, type Role } from './permissions'

export const ROLE_IDS: Readonly<Record<Role, number>> = {
  Administrator: 1,
  User: 2,
  'Read-Only': 3,
  'Upload-Only': 4,
  Auditor: 5,
}

export const ROLE_DESCRIPTIONS: Readonly<Record<Role, string>> = {
  Administrator: 'Can manage users, clients, SSO providers and application configuration',
  User: 'Can read data, upload data and manage their own API tokens',
  'Read-Only': 'Can read data and manage their own API tokens',
  'Upload-Only': 'Can upload data (file ingest) and manage their own API tokens',
  Auditor: 'Can read data and the audit log',
}

export const PERMISSION_IDS: Readonly<Record<Permission, number>> = {
  'auth/ManageSelf': 1,
  'auth/CreateToken': 2,
  'auth/ManageUsers': 3,
  'auth/ManageProviders': 4,
  'graph/Read': 5,
  'graph/Ingest': 6,
  'graph/ManageExtensions': 7,
  'analysis/Run': 8,
  'risks/ManageRisks': 9,
  'audit/Read': 10,
  'graph/ManageAssetGroups': 11,
  'clients/Manage': 12,
  'clients/Collect': 13,
  'auth/ReadUsers': 14,
  'db/Wipe': 15,
  'app/ReadAppConfig': 16,
  'app/WriteAppConfig': 17,
}

export interface PermissionJson {
  id: number
  authority: string
  name: string
}

export interface RoleJson {
  id: number
  name: Role
  description: string
  permissions: PermissionJson[]
}

export function permissionJson(p: Permission): PermissionJson {
  const slash = p.indexOf('/')
  return { id: PERMISSION_IDS[p], authority: p.slice(0, slash), name: p.slice(slash + 1) }
}

export function roleJson(r: Role): RoleJson {
  return {
    id: ROLE_IDS[r],
    name: r,
    description: ROLE_DESCRIPTIONS[r],
    permissions: [...ROLE_PERMISSIONS[r]].sort((a, b) => PERMISSION_IDS[a] - PERMISSION_IDS[b]).map(permissionJson),
  }
}

/** Every role, by id. */
export function allRoles(): RoleJson[] {
  return [...ROLES].sort((a, b) => ROLE_IDS[a] - ROLE_IDS[b]).map(roleJson)
}

/** Every permission, by id. */
export function allPermissions(): PermissionJson[] {
  return [...PERMISSIONS].sort((a, b) => PERMISSION_IDS[a] - PERMISSION_IDS[b]).map(permissionJson)
}

export function roleById(id: number): Role | undefined {
  return ROLES.find((r) => ROLE_IDS[r] === id)
}

export function permissionById(id: number): Permission | undefined {
  return PERMISSIONS.find((p) => PERMISSION_IDS[p] === id)
}

/**
 * A user create/update's `roles`: BloodHound's numeric role ids or EdgeHound's role names, mixed freely.
 * Returns the role names (de-duplicated) or the first unknown entry.
 */
export function resolveRoles(given: readonly (string | number)[]): { ok: true; roles: Role[] } | { ok: false; unknown: string | number } {
  const out: Role[] = []
  for (const g of given) {
    const r = typeof g === 'number' ? roleById(g) : (ROLES as readonly string[]).includes(g) ? (g as Role) : undefined
    if (!r) return { ok: false, unknown: g }
    if (!out.includes(r)) out.push(r)
  }
  return { ok: true, roles: out }
}
