/**
 * TOTP multi-factor authentication, as BloodHound has it: enrol with the password (POST …/mfa), activate with
 * a code (POST …/mfa-activation), read the state (GET …/mfa-activation), remove it (DELETE …/mfa); login then
 * needs `otp`. Rules and reasoning: src/auth/mfa.ts; the code check: src/auth/totp.ts.
 */
import type { Context } from 'hono'
import { z } from 'zod'
import type { AppEnv } from '../env'
import { defineRoute, type RouteEntry } from '../http/route'
import { ApiError, rfc3339 } from '../http/errors'
import { auditOf } from '../audit/audit'
import { hasPermission } from './principal'
import { ROLES } from './permissions'
import { verifyPassword } from './password'
import { findUserById } from './users.store'
import { requireUserWithin } from './user-scope'
import { activateMfa, claimMfaStep, clearMfa, enrolMfa, getMfa, mfaStatus } from './mfa.store'
import { MFA_MESSAGES, mfaAccess, openMfaSecret, sealMfaSecret } from './mfa'
import { newTotpSecret, otpauthUri, verifyTotp } from './totp'
import { consumeIp, LimiterUnavailable } from '../ratelimit/limiter.client'

const UserIdParams = z.object({ user_id: z.string().uuid('user id is malformed: expected a UUID') })
const ISSUER = 'EdgeHound'

const StatusSchema = z.object({ data: z.object({ status: z.enum(['activated', 'pending', 'deactivated']) }) })

/**
 * One code check for this user: the password login's budget (1/s, burst 5) on a bucket of the user's own, so
 * codes cannot be guessed faster by spreading sign-ins over many addresses. Over it: 429 with Retry-After.
 */
async function mfaAttempt(c: Context<AppEnv>, userId: string): Promise<void> {
  let o
  try {
    o = await consumeIp(c.env, c.var.config, `mfa-${userId}`, 'login', c.var.now().getTime())
  } catch (e) {
    if (e instanceof LimiterUnavailable) {
      const err = new ApiError(503, 'the rate limiter is unavailable; retry shortly', 'middleware', { 'Retry-After': '1' })
      err.cause = e
      throw err
    }
    throw e
  }
  if (!o.allowed)
    throw new ApiError(429, 'too many one time password attempts for this user; retry later', 'otp', { 'Retry-After': String(Math.max(1, o.retryAfterSeconds)) })
}

/**
 * Login's second factor (POST /api/v2/login, after the password has been verified): nothing to do unless the
 * user's MFA is activated; then the code must be given, right, and of a step not used before (400
 * `one time password is invalid` otherwise, BloodHound's answer). The accepted step is claimed at once.
 */
export async function checkLoginOtp(c: Context<AppEnv>, userId: string, otp: string | undefined): Promise<void> {
  const m = await getMfa(c.env.DB, userId)
  if (!m || !m.activated || m.sealed === null) return
  if (otp === undefined || otp === '') throw new ApiError(400, MFA_MESSAGES.otpInvalid, 'otp')
  await mfaAttempt(c, userId)
  const secret = await openMfaSecret(c.var.config.TOKEN_ENCRYPTION_KEY, userId, m.sealed)
  const check = await verifyTotp(secret, otp, c.var.now().getTime(), m.lastStep)
  if (!check.ok || !(await claimMfaStep(c.env.DB, userId, m.sealed, check.step))) throw new ApiError(400, MFA_MESSAGES.otpInvalid, 'otp')
}

/** The target user for an MFA route, or 404 (absent, or another user and no auth/ManageUsers). */
async function target(c: Context<AppEnv>, userId: string) {
  const p = c.var.principal
  const access = mfaAccess({ callerId: p.userId, targetId: userId, callerManagesUsers: hasPermission(p, 'auth/ManageUsers') })
  const user = access === 'absent' ? null : await findUserById(c.env.DB, userId)
  // collector clients' service users are not people: absent here as on every user route
  if (!user || user.roles.some((r) => !(ROLES as readonly string[]).includes(r)))
    throw new ApiError(404, 'resource not found', 'user_id')
  // another user's second factor: only a user within the caller's environments (src/auth/user-scope.ts)
  if (access !== 'self') requireUserWithin(p.environmentAccess, user.environment_access)
  return { user, self: access === 'self' }
}

const PasswordBody = z.object({ secret: z.string().max(1024).describe("the account's password (enrolment), or yours (disenrolment)") }).strict()

export const mfaRoutes: RouteEntry[] = [
  defineRoute(
    {
      method: 'post',
      path: '/api/v2/bloodhound-users/:user_id/mfa',
      operationId: 'EnrollMFA',
      summary: "Enrol in TOTP multi-factor authentication with the account's password: answers the secret (once) and its otpauth URI; pending until activated",
      description:
        '`qr_code` is the `otpauth://totp/…` URI an authenticator app reads (render it as a QR code); `totp_secret` the same secret in base32 for typing in. ' +
        'BloodHound answers `qr_code` as a PNG data URL of that URI. Refused when MFA is already active or the user signs in through SSO. Rules: src/auth/mfa.ts.',
      tags: ['Users'],
      auth: 'auth/ManageSelf',
      replay: { once: 'answers a new second-factor secret and replaces a pending one: identity' },
      params: UserIdParams,
      body: { kind: 'json', schema: PasswordBody, maxBytes: 16 * 1024 },
      audit: { action: 'EnrollMFA', fields: ({ params }) => ({ id: (params as { user_id: string }).user_id }) },
      responses: {
        200: {
          description: 'enrolled, pending activation',
          schema: z.object({ data: z.object({ qr_code: z.string().describe('otpauth URI'), totp_secret: z.string().describe('base32') }) }),
        },
      },
    },
    async (c, { params, body }) => {
      const { user } = await target(c, params.user_id)
      if (user.sso_provider_id !== null) throw new ApiError(400, MFA_MESSAGES.sso, 'user_id')
      const m = await getMfa(c.env.DB, user.id)
      if (m?.activated) throw new ApiError(400, MFA_MESSAGES.alreadyActive, 'user_id')
      if (!user.password_hash || !(await verifyPassword(body.secret, user.password_hash))) throw new ApiError(400, MFA_MESSAGES.badPassword, 'secret')
      const secret = newTotpSecret()
      const sealed = await sealMfaSecret(c.var.config.TOKEN_ENCRYPTION_KEY, user.id, secret)
      // refused by the store when MFA became active meanwhile
      if (!(await enrolMfa(c.env.DB, user.id, sealed, rfc3339(c.var.now()), auditOf(c).write())))
        throw new ApiError(400, MFA_MESSAGES.alreadyActive, 'user_id')
      c.header('Cache-Control', 'no-store')
      return c.json({ data: { qr_code: otpauthUri(ISSUER, user.principal_name, secret), totp_secret: secret } })
    },
  ),
  defineRoute(
    {
      method: 'post',
      path: '/api/v2/bloodhound-users/:user_id/mfa-activation',
      operationId: 'ActivateMFA',
      summary: 'Activate a pending TOTP enrolment with a current code; from then on login needs `otp`',
      tags: ['Users'],
      auth: 'auth/ManageSelf',
      replay: { once: 'turns on a second factor: identity' },
      params: UserIdParams,
      body: { kind: 'json', schema: z.object({ otp: z.string().max(64) }).strict(), maxBytes: 16 * 1024 },
      audit: { action: 'ActivateMFA', fields: ({ params }) => ({ id: (params as { user_id: string }).user_id }) },
      responses: { 200: { description: 'activated', schema: StatusSchema } },
    },
    async (c, { params, body }) => {
      const { user } = await target(c, params.user_id)
      const m = await getMfa(c.env.DB, user.id)
      if (!m || m.sealed === null) throw new ApiError(400, MFA_MESSAGES.enrolmentRequired, 'user_id')
      await mfaAttempt(c, user.id)
      const secret = await openMfaSecret(c.var.config.TOKEN_ENCRYPTION_KEY, user.id, m.sealed)
      const check = await verifyTotp(secret, body.otp, c.var.now().getTime(), m.lastStep)
      if (!check.ok) throw new ApiError(400, MFA_MESSAGES.otpInvalid, 'otp')
      if (!(await activateMfa(c.env.DB, user.id, m.sealed, check.step, rfc3339(c.var.now()), auditOf(c).write())))
        throw new ApiError(400, MFA_MESSAGES.otpInvalid, 'otp')
      return c.json({ data: { status: 'activated' as const } })
    },
  ),
  defineRoute(
    {
      method: 'get',
      path: '/api/v2/bloodhound-users/:user_id/mfa-activation',
      operationId: 'GetMFAActivationStatus',
      summary: "A user's TOTP state: activated, pending (enrolled, not yet activated) or deactivated",
      tags: ['Users'],
      auth: 'auth/ManageSelf',
      params: UserIdParams,
      responses: { 200: { description: 'the state', schema: StatusSchema } },
    },
    async (c, { params }) => {
      const { user } = await target(c, params.user_id)
      return c.json({ data: { status: mfaStatus(await getMfa(c.env.DB, user.id)) } })
    },
  ),
  defineRoute(
    {
      method: 'delete',
      path: '/api/v2/bloodhound-users/:user_id/mfa',
      operationId: 'DisenrollMFA',
      summary: "Remove TOTP multi-factor authentication: your own with your password; another user's (auth/ManageUsers) with the administrator's own password",
      tags: ['Users'],
      auth: 'auth/ManageSelf',
      replay: { once: 'removes a second factor: identity' },
      params: UserIdParams,
      body: { kind: 'json', schema: PasswordBody, maxBytes: 16 * 1024 },
      audit: {
        action: 'DisenrollMFA',
        fields: ({ params }) => ({ id: (params as { user_id: string }).user_id }),
      },
      responses: { 200: { description: 'removed', schema: StatusSchema } },
    },
    async (c, { params, body }) => {
      const { user, self } = await target(c, params.user_id)
      // your own password for your own; the administrator's own for another user's (none when they use SSO)
      const checker = self ? user : await findUserById(c.env.DB, c.var.principal.userId)
      if (!checker) throw new ApiError(404, 'resource not found', 'user_id')
      const needsPassword = self || checker.sso_provider_id === null
      if (needsPassword && (!checker.password_hash || !(await verifyPassword(body.secret, checker.password_hash))))
        throw new ApiError(400, MFA_MESSAGES.badPassword, 'secret')
      if (!(await clearMfa(c.env.DB, user.id, rfc3339(c.var.now()), auditOf(c).write()))) throw new ApiError(404, 'resource not found', 'user_id')
      return c.json({ data: { status: 'deactivated' as const } })
    },
  ),
]
