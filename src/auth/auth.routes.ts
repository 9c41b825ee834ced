import { z } from 'zod'
import { clearedCookies, COOKIE_LOGIN_HEADER, csrfToken, originProblem, sessionCookies } from './csrf'
import { defineRoute, type RouteEntry } from '../http/route'
import { ApiError, rfc3339 } from '../http/errors'
import { ROLES, type EnvironmentAccess, type Role } from './permissions'
import { resolveRoles } from './roles'
import { hasPermission } from './principal'
import { hashPassword, verifyPassword } from './password'
import { startSession } from './session-start'
import { endSessions, openSessionIds } from './sessions.store'
import { auditOf } from '../audit/audit'
import {
  countUsers,
  deleteUser,
  findUserById,
  findUserForLogin,
  getUser,
  insertFirstUser,
  insertUser,
  listUsers,
  updateUser,
  type User,
} from './users.store'
import { tokenIdsOfUser } from './tokens.store'
import { invalidateSubject } from '../ratelimit/limiter.client'
import { forgetTokenKey } from './authenticate'
import { tokenRoutes } from './tokens.routes'
import { ssoProviderExists } from '../saml/saml.store'
import { decideSecretChange, secretExpired } from './secret-change'
import { checkLoginOtp, mfaRoutes } from './mfa.routes'
import { storedPasswordExpiration } from '../appcfg/appcfg.store'
import { passwordExpiresAt } from '../appcfg/parameters'
import { selfChangeRefusal } from './self-change'
import { requireGrantWithin, requireUserWithin } from './user-scope'

/** Public shape of a user. Never includes the password hash. */
export const UserSchema = z
  .object({
    id: z.string().uuid(),
    principal_name: z.string(),
    email_address: z.string().nullable(),
    roles: z.array(z.enum(ROLES)),
    is_disabled: z.boolean(),
    all_environments: z.boolean(),
    environment_access: z.array(z.string()).describe('environment ids the user may see when all_environments is false'),
    sso_provider_id: z.number().int().nullable().describe('the SSO provider this user signs in through (SAML), or null'),
    needs_password_reset: z
      .boolean()
      .describe('the password has expired: it must be changed (PUT /api/v2/bloodhound-users/{id}/secret) before the console lets the user go on; login answers auth_expired'),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: 'User' })

export function userJson(u: User, nowIso: string): z.infer<typeof UserSchema> {
  return {
    id: u.id,
    principal_name: u.principal_name,
    email_address: u.email,
    roles: u.roles,
    is_disabled: u.is_disabled,
    all_environments: u.environment_access.all,
    environment_access: u.environment_access.all ? [] : u.environment_access.ids,
    sso_provider_id: u.sso_provider_id,
    needs_password_reset: secretExpired(u.secret_expires_at, nowIso),
    created_at: u.created_at,
    updated_at: u.updated_at,
  }
}

/** After a user changed in D1: every limiter object that caches that user re-reads it. */
export async function invalidateUser(env: Env, userId: string, nowIso: string, tokenIds?: string[], sessionIds?: string[]) {
  const tokens = tokenIds ?? (await tokenIdsOfUser(env.DB, userId))
  const sessions = sessionIds ?? (await openSessionIds(env.DB, userId, nowIso))
  tokens.forEach(forgetTokenKey)
  await Promise.all([
    ...tokens.map((id) => invalidateSubject(env, 'token', id)),
    ...sessions.map((id) => invalidateSubject(env, 'session', id)),
  ])
}

const Password = z.string().min(12, 'must be at least 12 characters').max(1024)
const EnvIds = z.array(z.string().min(1).max(200)).max(1000)

const LoginBody = z.object({
  login_method: z.string(),
  username: z.string().max(320),
  secret: z.string().max(1024),
  otp: z.string().max(64).optional().describe('the current TOTP code, when the user has activated multi-factor authentication'),
})

const LoginResponse = z.object({
  data: z.object({ user_id: z.string().uuid(), auth_expired: z.boolean(), session_token: z.string() }),
})

const SsoProviderId = z
  .number()
  .int()
  .min(1)
  .max(2147483647)
  .describe('SSO provider id: the user signs in through this provider only (no secret); null unlinks')

/** A user signs in with a secret or through one SSO provider, never both (as in BloodHound). */
async function checkSsoLink(db: D1Database, ssoProviderId: number | null | undefined, secret: string | undefined) {
  if (ssoProviderId === undefined || ssoProviderId === null) return
  if (secret !== undefined)
    throw new ApiError(400, 'a user signs in either with a secret or through an SSO provider, not both', 'sso_provider_id')
  if (!(await ssoProviderExists(db, ssoProviderId))) throw new ApiError(400, `no SSO provider has id ${ssoProviderId}`, 'sso_provider_id')
}

/**
 * A user's roles as given: EdgeHound's role names or BloodHound's numeric role ids (`GET /api/v2/roles`),
 * mixed freely; resolved to names by the handler (resolveRoles, src/auth/roles.ts). An unknown id is a 400.
 */
const RolesInput = z
  .array(z.union([z.enum(ROLES), z.number().int().min(1).max(2147483647)]))
  .min(1)
  .max(4)
  .describe('role names, or numeric role ids as listed by GET /api/v2/roles (BloodHound sends ids)')

function rolesOf(given: readonly (string | number)[]): Role[] {
  const r = resolveRoles(given)
  if (!r.ok) throw new ApiError(400, `no role has id ${r.unknown}`, 'roles')
  return r.roles
}

const UserIdParams = z.object({ user_id: z.string().uuid('user id is malformed: expected a UUID') })

const CreateUserBody = z
  .object({
    principal_name: z.string().trim().min(1).max(200),
    email_address: z.string().trim().email().max(320).nullable().optional(),
    secret: Password.optional(),
    roles: RolesInput,
    all_environments: z.boolean().optional().default(true),
    environment_access: EnvIds.optional().default([]),
    sso_provider_id: SsoProviderId.nullable().optional(),
    needs_password_reset: z.boolean().optional().describe('with secret: the user must choose a new password at first sign-in'),
  })
  .strict()

const UpdateUserBody = z
  .object({
    principal_name: z.string().trim().min(1).max(200).optional(),
    email_address: z.string().trim().email().max(320).nullable().optional(),
    secret: Password.optional(),
    roles: RolesInput.optional(),
    is_disabled: z.boolean().optional(),
    all_environments: z.boolean().optional(),
    environment_access: EnvIds.optional(),
    sso_provider_id: SsoProviderId.nullable().optional(),
  })
  .strict()

const one = z.object({ data: UserSchema })

const SecretBody = z
  .object({
    current_secret: z.string().max(1024).optional().describe('your current password (required to change your own)'),
    secret: Password,
    needs_password_reset: z.boolean().optional().describe("another user's only: they must change it at their next sign-in"),
  })
  .strict()

/** What a user create/update changed, for its audit entry: never the secret itself, only that it changed. */
function userAuditFields(body: unknown): Record<string, unknown> {
  const b = body as Record<string, unknown>
  const out: Record<string, unknown> = {}
  for (const k of ['principal_name', 'email_address', 'roles', 'is_disabled', 'all_environments', 'environment_access'])
    if (b[k] !== undefined) out[k] = b[k]
  // roles by name, however they were given (ids or names)
  if (Array.isArray(b.roles)) {
    const r = resolveRoles(b.roles as (string | number)[])
    if (r.ok) out.roles = r.roles
  }
  // not under its own name: the secret scrubber (audit.ts SECRET_KEY) drops keys naming a password
  if (b.needs_password_reset !== undefined) out.forced_change = b.needs_password_reset
  // the secret itself never; only that it changed
  if (b.secret !== undefined) out.changed = ['secret']
  return out
}

/**
 * The environments a user change's entry concerns (src/audit/visibility.ts): those its fields name, i.e. the
 * environment ids it sends in `environment_access` (recorded whole, even beside `all_environments: true`). A
 * change that names none concerns none: `all_environments: true` alone names no environment, so a restricted
 * auditor may read it.
 */
function userAuditEnvironments(body: unknown): string[] {
  return (body as { environment_access?: string[] }).environment_access ?? []
}

export const authRoutes: RouteEntry[] = [
  defineRoute(
    {
      method: 'post',
      path: '/api/v2/login',
      operationId: 'Login',
      summary: 'Log in with a user name and secret; returns a session JWT (with `X-EdgeHound-Session: cookie`: sets the console\'s HttpOnly session cookie instead)',
      tags: ['Auth'],
      auth: 'public',
      publicLimit: 'login',
      body: { kind: 'json', schema: LoginBody, maxBytes: 16 * 1024 },
      // no intent row: nobody is known before the secret is checked; success or failure names the user
      audit: {
        action: 'LoginAttempt',
        intent: false,
        // a sign-in names no environment, nor does the bootstrap administrator's CreateUser row (every environment)
        environments: () => [],
        fields: ({ body }) => {
          const b = body as { username: string; login_method: string }
          return { username: b.username.trim().slice(0, 200), login_method: b.login_method.slice(0, 40) }
        },
      },
      responses: { 200: { description: 'session created', schema: LoginResponse } },
    },
    async (c, { body }) => {
      if (body.login_method.toLowerCase() !== 'secret')
        throw new ApiError(400, `login method ${body.login_method.slice(0, 40)} is not supported`, 'login_method')
      const db = c.env.DB
      const cfg = c.var.config
      // `X-EdgeHound-Session: cookie`: a browser login (the console). Refused from another site (login CSRF).
      const cookieMode = (c.req.header(COOKIE_LOGIN_HEADER) ?? '').toLowerCase() === 'cookie'
      if (cookieMode) {
        const bad = originProblem({ url: c.req.url, origin: c.req.header('origin') ?? null, secFetchSite: c.req.header('sec-fetch-site') ?? null, publicBaseUrl: cfg.PUBLIC_BASE_URL })
        if (bad) throw new ApiError(403, bad, 'csrf')
      }
      const username = body.username.trim()
      let user = await findUserForLogin(db, username)
      if (!user && cfg.BOOTSTRAP_ADMIN_PASSWORD && (await countUsers(db)) === 0) {
        // Bootstrap: the first administrator exists only while the database has no user at all.
        const now = rfc3339(c.var.now())
        const id = crypto.randomUUID()
        // a change of its own, with its own entry (CreateUser, same commit id as the LoginAttempt)
        await insertFirstUser(db, {
          id,
          principal_name: cfg.BOOTSTRAP_ADMIN_USERNAME,
          email: null,
          password_hash: await hashPassword(cfg.BOOTSTRAP_ADMIN_PASSWORD),
          roles: ['Administrator'],
          environment_access: { all: true },
          now,
        }, auditOf(c).write({ id, principal_name: cfg.BOOTSTRAP_ADMIN_USERNAME, roles: ['Administrator'], bootstrap: true }, 'CreateUser'))
        user = await findUserForLogin(db, username)
      }
      if (user) auditOf(c).setActor({ id: user.id, name: user.principal_name })
      const ok = await verifyPassword(body.secret, user?.password_hash)
      if (!user || !ok) throw new ApiError(401, 'authentication is invalid', 'auth')
      // the second factor, once activated (src/auth/mfa.ts, totp.ts): missing, wrong or already used is a 400
      await checkLoginOtp(c, user.id, body.otp)
      if (user.is_disabled) throw new ApiError(403, 'user disabled', 'auth')
      // BloodHound's auth_expired: the session starts, and the client must have the password changed first
      const authExpired = secretExpired(user.secret_expires_at, rfc3339(c.var.now()))
      const { token, sessionId, ttlSeconds } = await startSession(db, cfg, user.id, c.var.now(), auditOf(c).write())
      if (cookieMode) {
        // the console: the session goes into the HttpOnly cookie only, never into script-readable JSON (auth/csrf.ts)
        const secure = (cfg.PUBLIC_BASE_URL ?? new URL(c.req.url).origin).startsWith('https:')
        for (const v of sessionCookies(token, await csrfToken(cfg.JWT_SIGNING_KEY, sessionId), ttlSeconds, secure)) c.header('Set-Cookie', v, { append: true })
        c.header('Cache-Control', 'no-store')
        return c.json({ data: { user_id: user.id, auth_expired: authExpired, session_token: '' } })
      }
      return c.json({ data: { user_id: user.id, auth_expired: authExpired, session_token: token } })
    },
  ),
  defineRoute(
    {
      method: 'post',
      path: '/api/v2/logout',
      operationId: 'Logout',
      summary: 'End the calling session (with a signed request: end every session of the token’s user)',
      tags: ['Auth'],
      auth: 'auth/ManageSelf',
      replay: { once: 'ends a session: identity (a copy cannot gain more, but sign-out is an access change)' },
      audit: { action: 'Logout' },
      responses: { 200: { description: 'logged out', schema: z.object({ data: z.object({ sessions_ended: z.number().int() }) }) } },
    },
    async (c) => {
      const p = c.var.principal
      const now = rfc3339(c.var.now())
      const ids = p.sessionId ? [p.sessionId] : await openSessionIds(c.env.DB, p.userId, now)
      const ended = await endSessions(c.env.DB, ids, now, auditOf(c).write({ sessions: ids.length }))
      await Promise.all(ids.map((id) => invalidateSubject(c.env, 'session', id)))
      // a browser session's cookies go too (harmless for bearer and signed callers, who have none)
      const secure = (c.var.config.PUBLIC_BASE_URL ?? new URL(c.req.url).origin).startsWith('https:')
      for (const v of clearedCookies(secure)) c.header('Set-Cookie', v, { append: true })
      return c.json({ data: { sessions_ended: ended } })
    },
  ),
  defineRoute(
    {
      method: 'get',
      path: '/api/v2/self',
      operationId: 'GetSelf',
      summary: 'The calling user',
      tags: ['Auth'],
      auth: 'auth/ManageSelf',
      responses: { 200: { description: 'the caller', schema: one } },
    },
    async (c) => {
      const u = await getUser(c.env.DB, c.var.principal.userId)
      if (!u) throw new ApiError(404, 'resource not found')
      return c.json({ data: userJson(u, rfc3339(c.var.now())) })
    },
  ),
  defineRoute(
    {
      method: 'get',
      path: '/api/v2/bloodhound-users',
      operationId: 'ListUsers',
      summary: 'List users',
      tags: ['Users'],
      auth: 'auth/ManageUsers',
      responses: { 200: { description: 'users', schema: z.object({ data: z.object({ users: z.array(UserSchema) }) }) } },
    },
    async (c) => {
      const now = rfc3339(c.var.now())
      return c.json({ data: { users: (await listUsers(c.env.DB)).map((u) => userJson(u, now)) } })
    },
  ),
  defineRoute(
    {
      method: 'post',
      path: '/api/v2/bloodhound-users',
      operationId: 'CreateUser',
      summary: 'Create a user',
      tags: ['Users'],
      auth: 'auth/ManageUsers',
      replay: { once: 'creates a user with a role: a copy could recreate a user an administrator has just deleted' },
      body: { kind: 'json', schema: CreateUserBody, maxBytes: 64 * 1024 },
      audit: { action: 'CreateUser', fields: ({ body }) => userAuditFields(body), environments: ({ body }) => userAuditEnvironments(body) },
      responses: { 200: { description: 'created', schema: one }, 409: { description: 'principal name or email taken' } },
    },
    async (c, { body }) => {
      const now = rfc3339(c.var.now())
      const id = crypto.randomUUID()
      const access: EnvironmentAccess = body.all_environments ? { all: true } : { all: false, ids: [...new Set(body.environment_access)] }
      // a caller restricted to some environments grants only its own (src/auth/user-scope.ts)
      requireGrantWithin(c.var.principal.environmentAccess, access)
      await checkSsoLink(c.env.DB, body.sso_provider_id, body.secret)
      if (body.needs_password_reset && !body.secret)
        throw new ApiError(400, 'needs_password_reset needs a secret: the user must have a password to change', 'needs_password_reset')
      const ok = await insertUser(c.env.DB, {
        id,
        principal_name: body.principal_name,
        email: body.email_address ?? null,
        password_hash: body.secret ? await hashPassword(body.secret) : null,
        roles: rolesOf(body.roles),
        environment_access: access,
        sso_provider_id: body.sso_provider_id ?? null,
        // a password expires at once when a change is forced, else after the configured window (src/appcfg/)
        secret_expires_at: body.needs_password_reset ? now : body.secret ? passwordExpiresAt(Date.parse(now), await storedPasswordExpiration(c.env.DB)) : null,
        now,
      }, auditOf(c).write({ id }))
      if (!ok) throw new ApiError(409, 'a user with this principal name or email address already exists', 'principal_name')
      return c.json({ data: userJson((await getUser(c.env.DB, id))!, now) })
    },
  ),
  defineRoute(
    {
      method: 'get',
      path: '/api/v2/bloodhound-users/:user_id',
      operationId: 'GetUser',
      summary: 'Get a user',
      tags: ['Users'],
      auth: 'auth/ManageUsers',
      params: UserIdParams,
      responses: { 200: { description: 'the user', schema: one } },
    },
    async (c, { params }) => {
      const u = await getUser(c.env.DB, params.user_id)
      if (!u) throw new ApiError(404, 'resource not found', 'user_id')
      return c.json({ data: userJson(u, rfc3339(c.var.now())) })
    },
  ),
  defineRoute(
    {
      method: 'patch',
      path: '/api/v2/bloodhound-users/:user_id',
      operationId: 'UpdateUser',
      summary: 'Update a user: roles, disabled flag, environment access, name, email, secret',
      tags: ['Users'],
      auth: 'auth/ManageUsers',
      replay: { once: 'changes roles, password, environment access: a copy could re-promote a user an administrator has just demoted' },
      params: UserIdParams,
      body: { kind: 'json', schema: UpdateUserBody, maxBytes: 64 * 1024 },
      audit: {
        action: 'UpdateUser',
        fields: ({ params, body }) => ({ id: (params as { user_id: string }).user_id, ...userAuditFields(body) }),
        environments: ({ body }) => userAuditEnvironments(body),
      },
      responses: { 200: { description: 'updated', schema: one }, 409: { description: 'principal name or email taken' } },
    },
    async (c, { params, body }) => {
      const db = c.env.DB
      const current = await getUser(db, params.user_id)
      if (!current) throw new ApiError(404, 'resource not found', 'user_id')
      const roles = body.roles ? rolesOf(body.roles) : undefined
      let access = undefined as undefined | { all: true } | { all: false; ids: string[] }
      if (body.all_environments !== undefined || body.environment_access !== undefined) {
        const all = body.all_environments ?? (body.environment_access ? false : current.environment_access.all)
        access = all ? { all: true } : { all: false, ids: [...new Set(body.environment_access ?? [])] }
      }
      // your own roles, environment access and enabled flag are not yours to change (src/auth/self-change.ts)
      if (params.user_id === c.var.principal.userId) {
        const refused = selfChangeRefusal({ current, roles, environment_access: access, is_disabled: body.is_disabled })
        if (refused) throw new ApiError(400, refused.message, refused.context)
      }
      // a restricted caller manages only users within its environments, and grants only those (src/auth/user-scope.ts)
      requireUserWithin(c.var.principal.environmentAccess, current.environment_access)
      if (access) requireGrantWithin(c.var.principal.environmentAccess, access)
      const nowIso = rfc3339(c.var.now())
      await checkSsoLink(db, body.sso_provider_id, body.secret)
      const sessions = await openSessionIds(db, params.user_id, nowIso)
      const r = await updateUser(
        db,
        params.user_id,
        {
          roles,
          is_disabled: body.is_disabled,
          environment_access: access,
          email: body.email_address,
          principal_name: body.principal_name,
          password_hash: body.secret ? await hashPassword(body.secret) : undefined,
          // a password set here expires after the configured window (src/appcfg/), as through PUT …/secret
          secret_expires_at: body.secret ? passwordExpiresAt(Date.parse(nowIso), await storedPasswordExpiration(db)) : undefined,
          // a password change ends the user's sessions, but not the caller's own session making it
          keep_session_id: params.user_id === c.var.principal.userId ? c.var.principal.sessionId : undefined,
          sso_provider_id: body.sso_provider_id,
          // Linked to a provider (from a password or another provider): sessions opened the old way end.
          end_sessions: body.sso_provider_id !== undefined && body.sso_provider_id !== null && body.sso_provider_id !== current.sso_provider_id,
        },
        nowIso,
        auditOf(c).write(),
      )
      if (r === 'conflict') throw new ApiError(409, 'a user with this principal name or email address already exists', 'principal_name')
      if (!r) throw new ApiError(404, 'resource not found', 'user_id')
      // After the write: the sessions open now (one started while the write was under way included) and
      // those open before it (a password change has just ended some, so they are no longer listed).
      const after = await openSessionIds(db, params.user_id, nowIso)
      await invalidateUser(c.env, params.user_id, nowIso, undefined, [...new Set([...sessions, ...after])])
      return c.json({ data: userJson(r, nowIso) })
    },
  ),
  defineRoute(
    {
      method: 'delete',
      path: '/api/v2/bloodhound-users/:user_id',
      operationId: 'DeleteUser',
      summary: 'Delete a user (their tokens and sessions go with them)',
      tags: ['Users'],
      auth: 'auth/ManageUsers',
      replay: { once: 'identity change: deleting a user is done once' },
      params: UserIdParams,
      audit: { action: 'DeleteUser', fields: ({ params }) => ({ id: (params as { user_id: string }).user_id }) },
      responses: { 200: { description: 'deleted', schema: z.object({ data: z.object({ id: z.string(), deleted: z.literal(true) }) }) } },
    },
    async (c, { params }) => {
      if (params.user_id === c.var.principal.userId) throw new ApiError(400, 'you cannot delete yourself', 'user_id')
      const db = c.env.DB
      const target = await findUserById(db, params.user_id)
      if (!target) throw new ApiError(404, 'resource not found', 'user_id')
      requireUserWithin(c.var.principal.environmentAccess, target.environment_access)
      const nowIso = rfc3339(c.var.now())
      const tokens = await tokenIdsOfUser(db, params.user_id)
      const sessions = await openSessionIds(db, params.user_id, nowIso)
      if (!(await deleteUser(db, params.user_id, auditOf(c).write()))) throw new ApiError(404, 'resource not found', 'user_id')
      await invalidateUser(c.env, params.user_id, nowIso, tokens, sessions)
      return c.json({ data: { id: params.user_id, deleted: true as const } })
    },
  ),
  defineRoute(
    {
      method: 'put',
      path: '/api/v2/bloodhound-users/:user_id/secret',
      operationId: 'UpdateUserSecret',
      summary: "Set a user's password: your own (with current_secret), or another user's (auth/ManageUsers; needs_password_reset makes them change it at next sign-in)",
      description:
        'Rules in src/auth/secret-change.ts. Your own change needs `current_secret`, must differ from it, and ends the requirement to change the password; ' +
        "another user's needs auth/ManageUsers (for other callers that user is absent: 404). The user's other sessions end in the change's batch.",
      tags: ['Users'],
      auth: 'auth/ManageSelf',
      replay: { once: 'changes a password: a copy could undo a later change' },
      params: UserIdParams,
      body: { kind: 'json', schema: SecretBody, maxBytes: 16 * 1024 },
      audit: {
        action: 'UpdateUserSecret',
        // `forced_change`, not needs_password_reset: the secret scrubber (audit.ts SECRET_KEY) drops keys naming a password
        fields: ({ params, body }) => ({
          id: (params as { user_id: string }).user_id,
          forced_change: (body as { needs_password_reset?: boolean }).needs_password_reset ?? false,
        }),
      },
      responses: { 200: { description: 'the password is set', schema: one } },
    },
    async (c, { params, body }) => {
      const db = c.env.DB
      const p = c.var.principal
      const target = await findUserById(db, params.user_id)
      const decision = decideSecretChange({
        callerId: p.userId,
        targetId: params.user_id,
        callerManagesUsers: hasPermission(p, 'auth/ManageUsers'),
        targetUsesSso: target?.sso_provider_id != null,
        currentGiven: body.current_secret !== undefined,
        needsPasswordReset: body.needs_password_reset ?? false,
      })
      if (!target) throw new ApiError(404, 'resource not found', 'user_id')
      if (!decision.ok) throw new ApiError(decision.status, decision.message, decision.context)
      if (!decision.self) requireUserWithin(p.environmentAccess, target.environment_access)
      if (decision.mustVerifyCurrent) {
        if (!(await verifyPassword(body.current_secret ?? '', target.password_hash))) throw new ApiError(400, 'the current password is not correct', 'current_secret')
        if (await verifyPassword(body.secret, target.password_hash)) throw new ApiError(400, 'the new password must differ from the current one', 'secret')
      }
      const nowIso = rfc3339(c.var.now())
      const sessions = await openSessionIds(db, params.user_id, nowIso)
      const r = await updateUser(
        db,
        params.user_id,
        {
          password_hash: await hashPassword(body.secret),
          // expired at once when an administrator forces a change, else after the configured window (src/appcfg/)
          secret_expires_at: decision.expiresNow ? nowIso : passwordExpiresAt(Date.parse(nowIso), await storedPasswordExpiration(db)),
          // the caller's own session survives its own change; every other session of the user ends
          keep_session_id: decision.self ? p.sessionId : undefined,
        },
        nowIso,
        auditOf(c).write(),
      )
      if (!r || r === 'conflict') throw new ApiError(404, 'resource not found', 'user_id')
      await invalidateUser(c.env, params.user_id, nowIso, undefined, sessions)
      return c.json({ data: userJson(r, nowIso) })
    },
  ),
  defineRoute(
    {
      method: 'delete',
      path: '/api/v2/bloodhound-users/:user_id/secret',
      operationId: 'ExpireUserSecret',
      summary: "Expire a user's password: their next sign-in must choose a new one (login answers auth_expired: true)",
      tags: ['Users'],
      auth: 'auth/ManageUsers',
      replay: { once: 'forces a password change: an access change' },
      params: UserIdParams,
      audit: { action: 'ExpireUserSecret', fields: ({ params }) => ({ id: (params as { user_id: string }).user_id }) },
      responses: { 200: { description: 'the password has expired', schema: one } },
    },
    async (c, { params }) => {
      const db = c.env.DB
      const target = await findUserById(db, params.user_id)
      if (!target) throw new ApiError(404, 'resource not found', 'user_id')
      requireUserWithin(c.var.principal.environmentAccess, target.environment_access)
      if (target.sso_provider_id !== null || target.password_hash === null)
        throw new ApiError(400, 'this user has no password to expire', 'user_id')
      const nowIso = rfc3339(c.var.now())
      const r = await updateUser(db, params.user_id, { secret_expires_at: nowIso }, nowIso, auditOf(c).write())
      if (!r || r === 'conflict') throw new ApiError(404, 'resource not found', 'user_id')
      await invalidateUser(c.env, params.user_id, nowIso)
      return c.json({ data: userJson(r, nowIso) })
    },
  ),
  ...mfaRoutes,
  ...tokenRoutes,
]
