/**
 * Who may enrol, activate, read and remove a user's TOTP multi-factor authentication, and how its secret is
 * kept (BloodHound's `/api/v2/bloodhound-users/{id}/mfa` and `/mfa-activation`, and login's `otp`).
 * The code itself is checked in src/auth/totp.ts.
 *
 * Reasoning, rule by rule:
 * - The secret is sealed at rest exactly as API token keys are (src/auth/token-crypto.ts: AES-256-GCM under
 *   TOKEN_ENCRYPTION_KEY, a Worker secret never in D1, a fresh IV each time), with `mfa:<user id>` as the
 *   additional data: a D1 backup or export alone reveals no secret, and a sealed secret copied onto another
 *   user's row does not open. The secret is answered once, at enrolment, and never again.
 * - Enrolment and activation act on your own account: the enrolment proves the account's password (a
 *   session left open on another screen must not be enough to bind the account to someone else's phone).
 *   As for passwords (src/auth/secret-change.ts), another user's MFA is handled only with auth/ManageUsers;
 *   for other callers that user is absent (404). Enrolling another user still needs that user's password
 *   (BloodHound's rule), so in practice only the user enrols.
 * - Disenrolment of your own MFA needs your password. An administrator (auth/ManageUsers) may reset another
 *   user's MFA (a lost phone) with the administrator's own password, or without one when the administrator
 *   has none (signs in through SSO), as BloodHound does.
 * - An SSO user has no password here and signs in at the provider, which does its own second factor:
 *   enrolment is refused (400, BloodHound's message).
 * - A code is checked at most at the login rate per user (mfaAttempt in the routes: 1/s, burst 5, the
 *   password login's budget), on top of the per-IP login budget, so guessing across many addresses is bounded
 *   by the account: about 3 valid codes in 10^6 per guess, 86,400 guesses a day.
 */
import { openTokenKey, sealTokenKey } from './token-crypto'

const aad = (userId: string) => `mfa:${userId}`

export function sealMfaSecret(encryptionKey: string, userId: string, secretB32: string): Promise<string> {
  return sealTokenKey(encryptionKey, aad(userId), secretB32)
}

export function openMfaSecret(encryptionKey: string, userId: string, sealed: string): Promise<string> {
  return openTokenKey(encryptionKey, aad(userId), sealed)
}

export interface MfaAccessInput {
  callerId: string
  targetId: string
  callerManagesUsers: boolean
}

/** Whose MFA the caller acts on: their own, another user's (administrators), or none (404). */
export function mfaAccess(i: MfaAccessInput): 'self' | 'other' | 'absent' {
  if (i.callerId === i.targetId) return 'self'
  return i.callerManagesUsers ? 'other' : 'absent'
}

/** BloodHound's messages. */
export const MFA_MESSAGES = {
  otpInvalid: 'one time password is invalid',
  alreadyActive: 'multi-factor authentication already active',
  enrolmentRequired: 'multi-factor authentication enrollment is required before activation',
  badPassword: 'unable to verify current password',
  sso: 'Invalid operation, user is SSO',
} as const
