/**
 * What a user may not change about themselves through `PATCH /api/v2/bloodhound-users/{id}` (auth/ManageUsers),
 * even an Administrator (issue 26 follow-up; docs/permissions.md).
 *
 * Reasoning, rule by rule:
 * - Roles: BloodHound refuses any change of one's own roles (UpdateUser, "Prevent a user from modifying their
 *   own roles/permissions": 400 `user attempted to change own role`). Sending the roles one already has is not a
 *   change (the console sends the whole form) and is accepted; the comparison is of the sets, in any order.
 * - Environment access is the other half of a user's permissions here: an Administrator restricted to some
 *   environments (docs/permissions.md "Environment access") who could set `all_environments: true` or add
 *   environments on itself would undo the restriction another administrator placed. Refused in the same way
 *   (BloodHound lets no Administrator be restricted, so it has no message of its own for it); sending the access
 *   one already has is accepted.
 * - Disabling oneself: refused as before (BloodHound refuses it too), so an installation cannot lose its last
 *   enabled administrator by a click.
 * Other users are not concerned: their roles and access are what auth/ManageUsers manages.
 */
import type { Role } from './permissions'
import type { EnvironmentAccess } from './permissions'

/** BloodHound's message (api.ErrorResponseUserSelfRoleChange). */
export const SELF_ROLE_CHANGE = 'user attempted to change own role'
export const SELF_ENVIRONMENT_CHANGE = 'user attempted to change own environment access'
export const SELF_DISABLE = 'you cannot disable yourself'

export interface SelfChangeInput {
  current: { roles: readonly Role[]; environment_access: EnvironmentAccess }
  /** what the request would set (undefined: not sent) */
  roles?: readonly Role[]
  environment_access?: EnvironmentAccess
  is_disabled?: boolean
}

function sameSet(a: readonly string[], b: readonly string[]): boolean {
  const x = new Set(a)
  const y = new Set(b)
  return x.size === y.size && [...x].every((v) => y.has(v))
}

export function sameAccess(a: EnvironmentAccess, b: EnvironmentAccess): boolean {
  if (a.all || b.all) return a.all === b.all
  return sameSet(a.ids, b.ids)
}

/** The refusal of a change a user makes to themselves, or null when it is allowed. */
export function selfChangeRefusal(i: SelfChangeInput): { context: string; message: string } | null {
  if (i.is_disabled) return { context: 'is_disabled', message: SELF_DISABLE }
  if (i.roles !== undefined && !sameSet(i.roles, i.current.roles)) return { context: 'roles', message: SELF_ROLE_CHANGE }
  if (i.environment_access !== undefined && !sameAccess(i.environment_access, i.current.environment_access))
    return { context: 'environment_access', message: SELF_ENVIRONMENT_CHANGE }
  return null
}
