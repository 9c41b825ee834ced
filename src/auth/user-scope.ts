/**
 * Which users an administrator restricted to some environments may manage (docs/permissions.md "Environment
 * access", "Administrators restricted to some environments"). `auth/ManageUsers` is checked first, by the route
 * table; this is the second check.
 *
 * The one rule: a caller whose environment access is a list may act only on users whose access is a subset of
 * its own, and may grant only such access. A user with `all_environments`, or with any environment outside the
 * caller's list, is *beyond* the caller.
 *
 * Reasoning:
 * - Whoever can change a user's password, expire it, remove their second factor or mint them an API token can
 *   sign in as that user. Doing it to a user who sees more than the caller (an unrestricted administrator, say)
 *   hands the caller that user's environments: the restriction another administrator placed would be undone in
 *   two requests. Changing such a user's roles or access, disabling or deleting them is no escape, but it lets a
 *   restricted administrator lock out the administrators who restricted it; refused the same way.
 * - Granting access works the same way: a user the caller creates, or whose access it sets, with
 *   `all_environments` or another environment, is a key to more than the caller's own access (create it with a
 *   password, sign in as it). So a restricted caller grants only `all_environments: false` and environments of
 *   its own list. A create that sends no access means `all_environments: true` (the default), and is refused
 *   like one that sends it: the caller states the access it grants, nothing is narrowed behind its back.
 * - 403, not 404: the user list (`GET /api/v2/bloodhound-users`) is not scoped by environment, so the caller
 *   already sees that the user exists and which environments it has; saying "beyond your environments" reveals
 *   nothing more. (Hidden graph objects, findings and collector clients are 404 because they are left out of
 *   every list.) A refused grant names only what the caller sent and its own access.
 * - Users within the caller's access (a subset, the empty list included) are managed as before, and the caller
 *   itself is always within (its own changes are governed by src/auth/self-change.ts). Reading users, and listing
 *   tokens, are not concerned: this rule is about what may be changed.
 * - Unrestricted callers (every environment) are unaffected: everything is within them.
 */
import type { EnvironmentAccess } from './permissions'
import { ApiError } from '../http/errors'

export const USER_BEYOND_CALLER =
  'this user has access to environments beyond yours: only an administrator with access to all of them may change this user'
export const GRANT_ALL_ENVIRONMENTS = 'all_environments: you may not grant access to every environment, as your own access is limited to some'

/** True when `target` gives access to nothing outside `caller`. */
export function accessWithin(target: EnvironmentAccess, caller: EnvironmentAccess): boolean {
  if (caller.all) return true
  if (target.all) return false
  const own = new Set(caller.ids)
  return target.ids.every((id) => own.has(id))
}

/** Throws the 403 envelope when the caller may not act on a user whose access is `target`. */
export function requireUserWithin(caller: EnvironmentAccess, target: EnvironmentAccess, context = 'user_id'): void {
  if (!accessWithin(target, caller)) throw new ApiError(403, USER_BEYOND_CALLER, context)
}

/** Throws the 403 envelope when the caller may not grant `granted` (create, or a change of a user's access). */
export function requireGrantWithin(caller: EnvironmentAccess, granted: EnvironmentAccess): void {
  if (caller.all) return
  if (granted.all) throw new ApiError(403, GRANT_ALL_ENVIRONMENTS, 'all_environments')
  const own = new Set(caller.ids)
  const outside = granted.ids.find((id) => !own.has(id))
  if (outside !== undefined)
    throw new ApiError(403, `environment_access "${outside}" is outside the environments you may access`, 'environment_access')
}
