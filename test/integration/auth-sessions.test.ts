import { env } from 'cloudflare:workers'
import { createExecutionContext, waitOnExecutionContext } from 'cloudflare:test'
import { describe, expect, it } from 'vitest'
import { sign } from 'hono/jwt'
import { createApp, ROUTES } from '../../src/app'
import { ADMIN, adminSession, BASE, client, expectEnvelope, userWithRole } from '../helpers'

const JWT_KEY = 'test-jwt-signing-key-0123456789abcdef0123456789'

describe('login', () => {
  it('returns a session token with user id; the JWT carries jti/sub/iat/exp', async () => {
    const r = await client().login(ADMIN.username, ADMIN.password)
    expect(r.data).toMatchObject({ auth_expired: false })
    expect(r.data.user_id).toMatch(/^[0-9a-f-]{36}$/)
    const [, payload] = r.data.session_token.split('.')
    const claims = JSON.parse(atob(payload.replace(/-/g, '+').replace(/_/g, '/')))
    expect(claims.sub).toBe(r.data.user_id)
    expect(claims.exp - claims.iat).toBe(8 * 3600)
    const row = await env.DB.prepare('SELECT user_id, ended_at FROM sessions WHERE id = ?').bind(claims.jti).first()
    expect(row).toEqual({ user_id: r.data.user_id, ended_at: null })
  })

  it('an unknown user and a wrong password give the same 401', async () => {
    await adminSession() // bootstrap exists
    const a = await client().raw('POST', '/api/v2/login', { login_method: 'secret', username: 'nobody', secret: 'whatever-secret' })
    const b = await client().raw('POST', '/api/v2/login', { login_method: 'secret', username: ADMIN.username, secret: 'wrong-password' })
    const ea = await expectEnvelope(a, 401)
    const eb = await expectEnvelope(b, 401)
    expect(ea.errors).toEqual(eb.errors)
  })

  it('username matches case-insensitively and is trimmed', async () => {
    const r = await client().login(`  ${ADMIN.username.toUpperCase()} `, ADMIN.password)
    expect(r.data.session_token).toBeTruthy()
  })

  it('an unsupported login method is a 400; a malformed body is a 400; wrong content type 415', async () => {
    await expectEnvelope(await client().raw('POST', '/api/v2/login', { login_method: 'otp', username: 'a', secret: 'b' }), 400, 'not supported')
    await expectEnvelope(await client().raw('POST', '/api/v2/login', { username: 'a' }), 400)
    await expectEnvelope(await client().raw('POST', '/api/v2/login', '{"login_method":'), 400, 'not valid JSON')
    await expectEnvelope(await client().raw('POST', '/api/v2/login', 'a=b', { contentType: 'application/x-www-form-urlencoded' }), 415)
  })

  it('login attempts are rate limited per client IP', async () => {
    // The worker runs on the test's clock (createApp's `now`), so the IP's login bucket (burst 5, 1 per second)
    // refills only when the test moves the clock, never while a slow attempt runs on a loaded machine (the wall
    // clock made this test fail twice at a load of 18: a second passed between attempts and refilled one).
    let nowMs = Date.now()
    const app = createApp(ROUTES, { now: () => new Date(nowMs) })
    const ip = `198.18.${1 + Math.floor(Math.random() * 254)}.${1 + Math.floor(Math.random() * 254)}`
    const attempt = async () => {
      const ctx = createExecutionContext()
      const req = new Request(`${BASE}/api/v2/login`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'CF-Connecting-IP': ip },
        body: JSON.stringify({ login_method: 'secret', username: 'x', secret: 'y' }),
      })
      const res = await app.fetch(req, env, ctx)
      await waitOnExecutionContext(ctx)
      return res
    }
    const statuses: number[] = []
    for (let i = 0; i < 7; i++) {
      const res = await attempt()
      statuses.push(res.status)
      if (res.status === 429) {
        const body = await expectEnvelope(res, 429)
        expect(body.errors[0].context).toBe('middleware')
        expect(res.headers.get('retry-after')).toBe('1')
      }
    }
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429, 429])
    // a second later the bucket holds one attempt again, and only one
    nowMs += 1000
    expect((await attempt()).status).toBe(401)
    expect((await attempt()).status).toBe(429)
  })

  it('a disabled user cannot log in (403 after a correct password)', async () => {
    const u = await userWithRole('User')
    const me = await u.admin.listUsers()
    const user = me.data.users.find((x) => x.id === u.userId)!
    await u.admin.updateUser(u.userId, { is_disabled: true })
    await expectEnvelope(
      await client().raw('POST', '/api/v2/login', { login_method: 'secret', username: user.principal_name, secret: 'correct-horse-battery' }),
      403,
      'user disabled',
    )
  })
})

describe('sessions', () => {
  it('logout ends the session: the same JWT is a 401 on the next request', async () => {
    const s = await adminSession()
    expect((await s.self()).data.principal_name).toBe('admin')
    expect((await s.logout()).data.sessions_ended).toBe(1)
    await expectEnvelope(await s.raw('GET', '/api/v2/self'), 401, 'logged out')
  })

  it('an expired JWT is a 401', async () => {
    const s = await adminSession()
    const me = await s.self()
    const past = Math.floor(Date.now() / 1000) - 60
    const jwt = await sign({ jti: crypto.randomUUID(), sub: me.data.id, iat: past - 3600, exp: past }, JWT_KEY, 'HS256')
    await expectEnvelope(await client({ kind: 'bearer', jwt }).raw('GET', '/api/v2/self'), 401, 'expired')
  })

  it('a JWT whose session row has expired is a 401 even if the JWT says otherwise', async () => {
    const s = await adminSession()
    const me = await s.self()
    const id = crypto.randomUUID()
    const now = Date.now()
    await env.DB.prepare('INSERT INTO sessions (id, user_id, created_at, expires_at) VALUES (?, ?, ?, ?)')
      .bind(id, me.data.id, new Date(now - 7200_000).toISOString(), new Date(now - 1000).toISOString())
      .run()
    const jwt = await sign({ jti: id, sub: me.data.id, iat: Math.floor(now / 1000) - 7200, exp: Math.floor(now / 1000) + 3600 }, JWT_KEY, 'HS256')
    await expectEnvelope(await client({ kind: 'bearer', jwt }).raw('GET', '/api/v2/self'), 401, 'session expired')
  })

  it('a JWT signed with another key, or with alg none, is a 401', async () => {
    const s = await adminSession()
    const me = await s.self()
    const now = Math.floor(Date.now() / 1000)
    const claims = { jti: crypto.randomUUID(), sub: me.data.id, iat: now, exp: now + 600 }
    const forged = await sign(claims, 'some-other-key-some-other-key-some-other', 'HS256')
    await expectEnvelope(await client({ kind: 'bearer', jwt: forged }).raw('GET', '/api/v2/self'), 401, 'invalid')
    const none = `${btoa(JSON.stringify({ alg: 'none', typ: 'JWT' }))}.${btoa(JSON.stringify(claims))}.`.replace(/=/g, '')
    await expectEnvelope(await client({ kind: 'bearer', jwt: none }).raw('GET', '/api/v2/self'), 401)
  })
})

describe('users and roles', () => {
  it('administrators manage users; other roles get 403 envelopes', async () => {
    for (const role of ['User', 'Read-Only', 'Upload-Only']) {
      const u = await userWithRole(role)
      await expectEnvelope(await u.client.raw('GET', '/api/v2/bloodhound-users'), 403, 'auth/ManageUsers')
      await expectEnvelope(await u.client.raw('POST', '/api/v2/bloodhound-users', { principal_name: 'x', roles: ['User'] }), 403)
      // everyone may read themselves and manage their own tokens
      expect((await u.client.self()).data.roles).toEqual([role])
      expect((await u.client.listTokens()).data.tokens.map((t) => t.user_id)).toEqual([u.userId])
    }
  })

  it('create validates, rejects duplicates (409), never returns the password hash', async () => {
    const admin = await adminSession()
    const res = await admin.raw('POST', '/api/v2/bloodhound-users', { principal_name: 'alice', roles: ['Reader'] })
    const e = await expectEnvelope(res, 400)
    expect(e.errors[0].context).toBe('roles[0]')
    await expectEnvelope(await admin.raw('POST', '/api/v2/bloodhound-users', { principal_name: 'alice', roles: ['User'], secret: 'short' }), 400, 'at least 12')
    const ok = await admin.raw('POST', '/api/v2/bloodhound-users', { principal_name: 'alice', roles: ['User'], secret: 'a-long-enough-secret' })
    expect(ok.status).toBe(200)
    expect(JSON.stringify(await ok.json())).not.toMatch(/pbkdf2|password_hash|a-long-enough-secret/)
    await expectEnvelope(await admin.raw('POST', '/api/v2/bloodhound-users', { principal_name: 'ALICE', roles: ['User'] }), 409)
  })

  it('role changes take effect on the next request of the user’s existing token', async () => {
    const u = await userWithRole('Read-Only')
    await expectEnvelope(await u.client.raw('GET', '/api/v2/bloodhound-users'), 403)
    await u.admin.updateUser(u.userId, { roles: ['Administrator'] })
    expect((await u.client.raw('GET', '/api/v2/bloodhound-users')).status).toBe(200)
  })

  it('disabling a user fails their token and session on the very next request', async () => {
    const u = await userWithRole('User')
    expect((await u.client.raw('GET', '/api/version')).status).toBe(200)
    await u.admin.updateUser(u.userId, { is_disabled: true })
    await expectEnvelope(await u.client.raw('GET', '/api/version'), 401, 'user disabled')
    await u.admin.updateUser(u.userId, { is_disabled: false })
    expect((await u.client.raw('GET', '/api/version')).status).toBe(200)
  })

  it('a password change ends the user’s open sessions, except the caller’s own session that made it', async () => {
    const admin = await adminSession()
    const name = `pw-${crypto.randomUUID().slice(0, 8)}`
    const u = await admin.createUser({ principal_name: name, roles: ['Administrator'], secret: 'first-password-123' })
    const login = async (secret: string) => client({ kind: 'bearer', jwt: (await client().login(name, secret)).data.session_token })
    const [a, b] = [await login('first-password-123'), await login('first-password-123')]
    expect((await a.raw('GET', '/api/v2/self')).status).toBe(200)
    // changed by an administrator: every session of the user ends; the administrator's own does not
    await admin.updateUser(u.data.id, { secret: 'second-password-123' })
    await expectEnvelope(await a.raw('GET', '/api/v2/self'), 401, 'session has ended')
    await expectEnvelope(await b.raw('GET', '/api/v2/self'), 401, 'session has ended')
    expect((await admin.raw('GET', '/api/v2/self')).status).toBe(200)
    // changed by the user in one of their sessions: that one stays, the others end
    const [own, other] = [await login('second-password-123'), await login('second-password-123')]
    await own.updateUser(u.data.id, { secret: 'third-password-1234' })
    expect((await own.raw('GET', '/api/v2/self')).status).toBe(200)
    await expectEnvelope(await other.raw('GET', '/api/v2/self'), 401, 'session has ended')
    const rows = await env.DB.prepare('SELECT COUNT(*) AS open FROM sessions WHERE user_id = ? AND ended_at IS NULL').bind(u.data.id).first('open')
    expect(rows).toBe(1)
    // other changes (not the password) leave sessions open
    await admin.updateUser(u.data.id, { email_address: `${name}@example.test` })
    expect((await own.raw('GET', '/api/v2/self')).status).toBe(200)
  })

  it('deleting a user removes their tokens', async () => {
    const u = await userWithRole('User')
    await u.admin.deleteUser(u.userId)
    await expectEnvelope(await u.client.raw('GET', '/api/version'), 401, 'unknown or revoked token')
    expect(await env.DB.prepare('SELECT count(*) AS n FROM api_tokens WHERE user_id = ?').bind(u.userId).first('n')).toBe(0)
  })

  it('environment access is stored and returned', async () => {
    const admin = await adminSession()
    const r = await admin.createUser({ principal_name: 'scoped', roles: ['Read-Only'], all_environments: false, environment_access: ['S-1-5-21-1'] })
    expect(r.data).toMatchObject({ all_environments: false, environment_access: ['S-1-5-21-1'] })
  })

  it('an administrator cannot disable or delete themselves', async () => {
    const admin = await adminSession()
    const me = await admin.self()
    await expectEnvelope(await admin.raw('PATCH', `/api/v2/bloodhound-users/${me.data.id}`, { is_disabled: true }), 400)
    await expectEnvelope(await admin.raw('DELETE', `/api/v2/bloodhound-users/${me.data.id}`), 400)
    await expectEnvelope(await admin.raw('GET', '/api/v2/bloodhound-users/not-a-uuid'), 400, 'malformed')
    await expectEnvelope(await admin.raw('GET', `/api/v2/bloodhound-users/${crypto.randomUUID()}`), 404)
  })

  it("an administrator cannot change their own roles or environment access (BloodHound's 400), nor lift a restriction", async () => {
    const u = await userWithRole('Administrator', { all_environments: false, environment_access: ['S-1-5-21-31'] })
    const stored = () => env.DB.prepare('SELECT roles, all_environments, environment_ids FROM users WHERE id = ?1').bind(u.userId).first()
    const before = await stored()
    const self = (body: Record<string, unknown>) => u.client.raw('PATCH', `/api/v2/bloodhound-users/${u.userId}`, body)
    await expectEnvelope(await self({ roles: ['Administrator', 'Auditor'] }), 400, 'user attempted to change own role')
    await expectEnvelope(await self({ roles: ['Read-Only'] }), 400, 'user attempted to change own role')
    await expectEnvelope(await self({ all_environments: true }), 400, 'user attempted to change own environment access')
    await expectEnvelope(await self({ environment_access: ['S-1-5-21-31', 'S-1-5-21-32'] }), 400, 'user attempted to change own environment access')
    expect(await stored()).toEqual(before)
    // what they already have is no change: accepted, as are other fields
    const ok = await self({ roles: [1], all_environments: false, environment_access: ['S-1-5-21-31'], email_address: `self-${crypto.randomUUID().slice(0, 8)}@example.test` })
    expect(ok.status).toBe(200)
    expect(await stored()).toEqual(before)
    // another administrator changes them
    await u.admin.updateUser(u.userId, { all_environments: true })
    expect(await stored()).toMatchObject({ all_environments: 1 })
  })
})

describe('an administrator restricted to some environments manages only users within them (src/auth/user-scope.ts)', () => {
  const BEYOND = 'this user has access to environments beyond yours'
  const A = 'S-1-5-21-71'
  const B = 'S-1-5-21-72'
  const C = 'S-1-5-21-73'
  const row = (id: string) => env.DB.prepare('SELECT * FROM users WHERE id = ?1').bind(id).first()
  const tokens = (id: string) => env.DB.prepare('SELECT count(*) AS n FROM api_tokens WHERE user_id = ?1').bind(id).first('n')
  const users = () => env.DB.prepare('SELECT count(*) AS n FROM users').first('n')
  /** the refusal: 403 envelope naming `context`, and the request's audit failure row */
  async function refused(res: Response, context: string, message: string | RegExp, action: string) {
    const e = await expectEnvelope(res, 403, message)
    expect(e.errors[0].context).toBe(context)
    const audit = await env.DB.prepare("SELECT action, status FROM audit_logs WHERE request_id = ?1 AND status != 'intent'").bind(e.request_id).all()
    expect(audit.results).toEqual([{ action, status: 'failure' }])
  }

  it('every mutating user route refuses a user beyond the caller (403), nothing is written; an unrestricted administrator is not refused', async () => {
    const r = await userWithRole('Administrator', { all_environments: false, environment_access: [A, B] })
    const admin = r.admin
    const name = () => `scope-${crypto.randomUUID().slice(0, 8)}`
    const unrestricted = (await admin.createUser({ principal_name: name(), roles: ['Administrator'], secret: 'first-password-123' })).data.id
    const other = (await admin.createUser({ principal_name: name(), roles: ['User'], secret: 'first-password-123', all_environments: false, environment_access: [A, C] })).data.id
    for (const target of [unrestricted, other]) {
      const token = (await admin.createToken('kept', target)).data.id
      const before = await row(target)
      await refused(await r.client.raw('PATCH', `/api/v2/bloodhound-users/${target}`, { email_address: `${name()}@example.test` }), 'user_id', BEYOND, 'UpdateUser')
      await refused(await r.client.raw('PATCH', `/api/v2/bloodhound-users/${target}`, { is_disabled: true }), 'user_id', BEYOND, 'UpdateUser')
      await refused(await r.client.raw('PUT', `/api/v2/bloodhound-users/${target}/secret`, { secret: 'taken-over-password-1', needs_password_reset: false }), 'user_id', BEYOND, 'UpdateUserSecret')
      await refused(await r.client.raw('DELETE', `/api/v2/bloodhound-users/${target}/secret`), 'user_id', BEYOND, 'ExpireUserSecret')
      await refused(await r.client.raw('DELETE', `/api/v2/bloodhound-users/${target}/mfa`, { secret: 'correct-horse-battery' }), 'user_id', BEYOND, 'DisenrollMFA')
      await refused(await r.client.raw('POST', '/api/v2/tokens', { token_name: 'takeover', user_id: target }), 'user_id', BEYOND, 'CreateAuthToken')
      await refused(await r.client.raw('DELETE', `/api/v2/tokens/${token}`), 'user_id', BEYOND, 'DeleteAuthToken')
      await refused(await r.client.raw('DELETE', `/api/v2/bloodhound-users/${target}`), 'user_id', BEYOND, 'DeleteUser')
      expect(await row(target)).toEqual(before) // password hash, expiry, access, flags unchanged
      expect(await tokens(target)).toBe(1)
      // reading is not concerned
      expect((await r.client.raw('GET', `/api/v2/bloodhound-users/${target}`)).status).toBe(200)
    }
    // the unrestricted administrator acts on both
    expect((await admin.raw('PUT', `/api/v2/bloodhound-users/${other}/secret`, { secret: 'second-password-123' })).status).toBe(200)
    expect((await admin.raw('POST', '/api/v2/tokens', { token_name: 'ok', user_id: unrestricted })).status).toBe(200)
    expect((await admin.raw('DELETE', `/api/v2/bloodhound-users/${other}`)).status).toBe(200)
  })

  it('grants only all_environments false and environments of its own; users within are managed as before', async () => {
    const r = await userWithRole('Administrator', { all_environments: false, environment_access: [A, B] })
    const name = () => `grant-${crypto.randomUUID().slice(0, 8)}`
    const count = await users()
    const create = (body: Record<string, unknown>) => r.client.raw('POST', '/api/v2/bloodhound-users', { principal_name: name(), roles: ['User'], secret: 'first-password-123', ...body })
    await refused(await create({}), 'all_environments', 'all_environments: you may not grant access to every environment', 'CreateUser') // the default is every environment
    await refused(await create({ all_environments: true }), 'all_environments', 'all_environments', 'CreateUser')
    await refused(await create({ all_environments: false, environment_access: [A, C] }), 'environment_access', `environment_access "${C}" is outside the environments you may access`, 'CreateUser')
    expect(await users()).toBe(count)
    const made = await create({ all_environments: false, environment_access: [B] })
    expect(made.status).toBe(200)
    const id = ((await made.json()) as { data: { id: string } }).data.id
    const before = await row(id)
    const patch = (body: Record<string, unknown>) => r.client.raw('PATCH', `/api/v2/bloodhound-users/${id}`, body)
    await refused(await patch({ all_environments: true }), 'all_environments', 'all_environments', 'UpdateUser')
    await refused(await patch({ environment_access: [C] }), 'environment_access', `"${C}"`, 'UpdateUser')
    expect(await row(id)).toEqual(before)
    // within: access, password, token, revocation, deletion as before
    expect((await patch({ environment_access: [A, B] })).status).toBe(200)
    expect(await row(id)).toMatchObject({ all_environments: 0, environment_ids: JSON.stringify([A, B]) })
    expect((await r.client.raw('PUT', `/api/v2/bloodhound-users/${id}/secret`, { secret: 'second-password-123' })).status).toBe(200)
    const t = await r.client.raw('POST', '/api/v2/tokens', { token_name: 'within', user_id: id })
    expect(t.status).toBe(200)
    expect((await r.client.raw('DELETE', `/api/v2/tokens/${((await t.json()) as { data: { id: string } }).data.id}`)).status).toBe(200)
    expect((await r.client.raw('DELETE', `/api/v2/bloodhound-users/${id}`)).status).toBe(200)
  })
})
