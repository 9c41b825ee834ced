/**
 * Who may set a user's password, and when a password must be changed (BloodHound's AuthSecret.expires_at,
 * `PUT /api/v2/bloodhound-users/{id}/secret` and `DELETE …/secret`; the console's forced change form).
 *
 * Reasoning, rule by rule:
 * - A user changing their own password proves they know the current one (`current_secret`), whatever their
 *   role: a session left open on someone else's screen must not be enough to take the account over. This
 *   holds for administrators too (BloodHound asks the same on its profile and expired-password pages).
 * - Setting another user's password needs `auth/ManageUsers`. For a caller without it the other user is
 *   answered as absent (404), as every read of a user is: whether an id exists is not revealed to them.
 * - A user who signs in through an SSO provider has no password here; setting one is refused (400), exactly
 *   as creating a user with both a secret and a provider is.
 * - "Must change at next sign-in" (`needs_password_reset`) is for administrators setting someone else's
 *   password: the password expires at once, login answers `auth_expired: true`, and the console shows only
 *   the change form until the user has chosen their own. A user cannot set it on themselves (400): their
 *   own change always ends the requirement.
 * - A forced change must produce a new password: the user's own new password may not equal the current one
 *   (checked against the stored hash; 400), otherwise "must change" would be satisfied by re-entering it.
 */
export interface SecretChangeInput {
  callerId: string
  targetId: string
  callerManagesUsers: boolean
  /** the target signs in through an SSO provider (it has no password) */
  targetUsesSso: boolean
  /** `current_secret` was sent */
  currentGiven: boolean
  needsPasswordReset: boolean
}

export type SecretChangeDecision =
  | { ok: true; self: boolean; mustVerifyCurrent: boolean; expiresNow: boolean }
  | { ok: false; status: 400 | 404; context: string; message: string }

export function decideSecretChange(i: SecretChangeInput): SecretChangeDecision {
  const self = i.callerId === i.targetId
  if (!self && !i.callerManagesUsers) return { ok: false, status: 404, context: 'user_id', message: 'resource not found' }
  if (i.targetUsesSso)
    return { ok: false, status: 400, context: 'user_id', message: 'this user signs in through an SSO provider and has no password' }
  if (self) {
    if (!i.currentGiven) return { ok: false, status: 400, context: 'current_secret', message: 'current_secret is required to change your own password' }
    if (i.needsPasswordReset)
      return { ok: false, status: 400, context: 'needs_password_reset', message: 'your own new password cannot require another change' }
    return { ok: true, self, mustVerifyCurrent: true, expiresNow: false }
  }
  return { ok: true, self, mustVerifyCurrent: false, expiresNow: i.needsPasswordReset }
}

/** True when the user's password has expired at `nowIso` and must be changed (BloodHound's auth_expired). */
export function secretExpired(secretExpiresAt: string | null, nowIso: string): boolean {
  return secretExpiresAt !== null && Date.parse(secretExpiresAt) <= Date.parse(nowIso)
}
