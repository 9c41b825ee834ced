/**
 * Password changes and the first-login signal (BloodHound's AuthSecret.expires_at / auth_expired):
 * PUT /api/v2/bloodhound-users/{id}/secret and DELETE …/secret, login's auth_expired, the user's
 * needs_password_reset, and the audit rows. Rules: src/auth/secret-change.ts.
 */
import { describe, expect, it } from 'vitest'
import { adminSession, client, env, expectEnvelope } from '../helpers'

let n = 0
async function newUser(opts: { needs_password_reset?: boolean; roles?: string[] } = {}) {
  const admin = await adminSession()
  const name = `secret-${Date.now()}-${++n}`
  const u = await admin.createUser({ principal_name: name, roles: opts.roles ?? ['User'], secret: 'first-password-1', ...opts })
  return { admin, name, id: u.data.id, created: u.data }
}

async function session(name: string, secret: string) {
  const r = await client().login(name, secret)
  return { login: r.data, c: client({ kind: 'bearer', jwt: r.data.session_token }) }
}

describe('first-login password change', () => {
  it('a user created with needs_password_reset signs in with auth_expired: true until they choose their own password', async () => {
    const { name, id, created } = await newUser({ needs_password_reset: true })
    expect(created.needs_password_reset).toBe(true)
    const first = await session(name, 'first-password-1')
    expect(first.login.auth_expired).toBe(true)
    expect((await first.c.self()).data.needs_password_reset).toBe(true)
    // the same password again does not satisfy the change
    await expectEnvelope(await first.c.raw('PUT', `/api/v2/bloodhound-users/${id}/secret`, { current_secret: 'first-password-1', secret: 'first-password-1' }), 400, /differ/)
    const r = await first.c.setUserSecret(id, { current_secret: 'first-password-1', secret: 'my-own-password-2' })
    expect(r.data.needs_password_reset).toBe(false)
    // the session that made the change goes on; the new password signs in without the flag; the old one is refused
    expect((await first.c.self()).data.needs_password_reset).toBe(false)
    expect((await session(name, 'my-own-password-2')).login.auth_expired).toBe(false)
    await expectEnvelope(await client().raw('POST', '/api/v2/login', { login_method: 'secret', username: name, secret: 'first-password-1' }), 401)
  })

  it('a user without the flag signs in with auth_expired: false', async () => {
    const { name, created } = await newUser()
    expect(created.needs_password_reset).toBe(false)
    expect((await session(name, 'first-password-1')).login.auth_expired).toBe(false)
  })

  it('needs_password_reset without a secret is a 400', async () => {
    const admin = await adminSession()
    await expectEnvelope(
      await admin.raw('POST', '/api/v2/bloodhound-users', { principal_name: `nosecret-${Date.now()}`, roles: ['User'], needs_password_reset: true }),
      400,
      /needs a secret/,
    )
  })
})

describe('PUT /api/v2/bloodhound-users/{id}/secret', () => {
  it('your own change needs the current password (missing: 400, wrong: 400) and ends your other sessions', async () => {
    const { name, id } = await newUser()
    const a = await session(name, 'first-password-1')
    const b = await session(name, 'first-password-1')
    await expectEnvelope(await a.c.raw('PUT', `/api/v2/bloodhound-users/${id}/secret`, { secret: 'second-password-2' }), 400, /current_secret is required/)
    await expectEnvelope(await a.c.raw('PUT', `/api/v2/bloodhound-users/${id}/secret`, { current_secret: 'not-it-at-all', secret: 'second-password-2' }), 400, /not correct/)
    // a user may not force a change on themselves
    await expectEnvelope(
      await a.c.raw('PUT', `/api/v2/bloodhound-users/${id}/secret`, { current_secret: 'first-password-1', secret: 'second-password-2', needs_password_reset: true }),
      400,
    )
    await a.c.setUserSecret(id, { current_secret: 'first-password-1', secret: 'second-password-2' })
    expect((await a.c.raw('GET', '/api/v2/self')).status).toBe(200)
    expect((await b.c.raw('GET', '/api/v2/self')).status).toBe(401)
  })

  it("another user's password: 404 for a caller without auth/ManageUsers (the user is not revealed); an administrator sets it and may force a change", async () => {
    const victim = await newUser()
    const other = await newUser()
    const o = await session(other.name, 'first-password-1')
    const refused = await o.c.raw('PUT', `/api/v2/bloodhound-users/${victim.id}/secret`, { current_secret: 'first-password-1', secret: 'taken-over-pass' })
    const absent = await o.c.raw('PUT', `/api/v2/bloodhound-users/${crypto.randomUUID()}/secret`, { secret: 'taken-over-pass' })
    const e1 = await expectEnvelope(refused, 404)
    const e2 = await expectEnvelope(absent, 404)
    expect(e1.errors).toEqual(e2.errors)
    expect((await session(victim.name, 'first-password-1')).login.auth_expired).toBe(false)

    const set = await victim.admin.setUserSecret(victim.id, { secret: 'admin-chosen-pass', needs_password_reset: true })
    expect(set.data.needs_password_reset).toBe(true)
    expect((await session(victim.name, 'admin-chosen-pass')).login.auth_expired).toBe(true)
  })

  it('a weak password or an unknown field is a 400', async () => {
    const { admin, id } = await newUser()
    await expectEnvelope(await admin.raw('PUT', `/api/v2/bloodhound-users/${id}/secret`, { secret: 'short' }), 400)
    await expectEnvelope(await admin.raw('PUT', `/api/v2/bloodhound-users/${id}/secret`, { secret: 'long-enough-pass', extra: 1 }), 400)
  })

  it('writes UpdateUserSecret in the change (never the password itself)', async () => {
    const { admin, id } = await newUser()
    await admin.setUserSecret(id, { secret: 'audited-password', needs_password_reset: true })
    const row = await env.DB.prepare("SELECT fields, status FROM audit_logs WHERE action = 'UpdateUserSecret' AND status = 'intent' AND fields LIKE ? ORDER BY id DESC LIMIT 1")
      .bind(`%${id}%`)
      .first<{ fields: string; status: string }>()
    expect(row).not.toBeNull()
    expect(row!.fields).toContain('"forced_change":true')
    expect(row!.fields).not.toContain('audited-password')
    const success = await env.DB.prepare("SELECT count(*) AS n FROM audit_logs WHERE action = 'UpdateUserSecret' AND status = 'success' AND fields LIKE ?").bind(`%${id}%`).first<{ n: number }>()
    expect(success!.n).toBe(1)
  })
})

describe('DELETE /api/v2/bloodhound-users/{id}/secret', () => {
  it('expires the password: the next sign-in answers auth_expired; only administrators may', async () => {
    const { admin, name, id } = await newUser()
    const u = await session(name, 'first-password-1')
    await expectEnvelope(await u.c.raw('DELETE', `/api/v2/bloodhound-users/${id}/secret`), 403)
    const r = await admin.expireUserSecret(id)
    expect(r.data.needs_password_reset).toBe(true)
    expect((await session(name, 'first-password-1')).login.auth_expired).toBe(true)
    await expectEnvelope(await admin.raw('DELETE', `/api/v2/bloodhound-users/${crypto.randomUUID()}/secret`), 404)
  })
})
