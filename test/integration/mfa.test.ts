/**
 * TOTP multi-factor authentication (BloodHound's /mfa and /mfa-activation, login with `otp`): enrolment,
 * activation, status, sign-in, one use per code, rate limit, disenrolment and an administrator's reset, the
 * secret sealed at rest, the audit rows. Rules: src/auth/mfa.ts; codes: src/auth/totp.ts (test/unit/totp.test.ts).
 */
import { describe, expect, it } from 'vitest'
import { adminSession, client, env, expectEnvelope } from '../helpers'
import { base32Decode, hotp, totpStep } from '../../src/auth/totp'

let n = 0
const PASSWORD = 'mfa-test-password-1'
async function newUser(roles: string[] = ['User']) {
  const admin = await adminSession()
  const name = `mfa-${Date.now()}-${++n}`
  const u = await admin.createUser({ principal_name: name, roles, secret: PASSWORD })
  const s = await client().login(name, PASSWORD)
  return { admin, name, id: u.data.id, c: client({ kind: 'bearer', jwt: s.data.session_token }) }
}

/** The code of the current step + `offset` (the server accepts ±1 step). */
async function code(secretB32: string, offset = 0): Promise<string> {
  return hotp(base32Decode(secretB32)!, totpStep(Date.now()) + offset)
}

const loginRaw = (username: string, secret: string, otp?: string) =>
  client().raw('POST', '/api/v2/login', { login_method: 'secret', username, secret, ...(otp === undefined ? {} : { otp }) })

async function enrolled() {
  const u = await newUser()
  const e = await u.c.enrollMfa(u.id, PASSWORD)
  return { ...u, secret: e.data.totp_secret, enrol: e.data }
}

async function activated() {
  const u = await enrolled()
  await u.c.activateMfa(u.id, await code(u.secret, -1))
  return u
}

describe('enrolment and activation', () => {
  it('enrol with the password answers the secret and its otpauth URI; status pending, then activated with a code', async () => {
    const u = await newUser()
    expect((await u.c.mfaStatus(u.id)).data.status).toBe('deactivated')
    const e = await u.c.enrollMfa(u.id, PASSWORD)
    expect(e.data.totp_secret).toMatch(/^[A-Z2-7]{32}$/)
    const uri = new URL(e.data.qr_code)
    expect(uri.protocol).toBe('otpauth:')
    expect(uri.searchParams.get('secret')).toBe(e.data.totp_secret)
    expect(e.data.qr_code).toContain(encodeURIComponent(u.name))
    expect((await u.c.mfaStatus(u.id)).data.status).toBe('pending')
    // pending: login does not ask for a code yet
    expect((await loginRaw(u.name, PASSWORD)).status).toBe(200)
    await expectEnvelope(await u.c.raw('POST', `/api/v2/bloodhound-users/${u.id}/mfa-activation`, { otp: '000000' === (await code(e.data.totp_secret)) ? '111111' : '000000' }), 400, 'one time password is invalid')
    expect((await u.c.activateMfa(u.id, await code(e.data.totp_secret))).data.status).toBe('activated')
    expect((await u.c.mfaStatus(u.id)).data.status).toBe('activated')
    // enrolling again while active is refused
    await expectEnvelope(await u.c.raw('POST', `/api/v2/bloodhound-users/${u.id}/mfa`, { secret: PASSWORD }), 400, 'multi-factor authentication already active')
  })

  it('enrolment needs the right password; activation needs an enrolment', async () => {
    const u = await newUser()
    await expectEnvelope(await u.c.raw('POST', `/api/v2/bloodhound-users/${u.id}/mfa`, { secret: 'not-the-password' }), 400, 'unable to verify current password')
    await expectEnvelope(
      await u.c.raw('POST', `/api/v2/bloodhound-users/${u.id}/mfa-activation`, { otp: '123456' }),
      400,
      'multi-factor authentication enrollment is required before activation',
    )
    expect((await u.c.mfaStatus(u.id)).data.status).toBe('deactivated')
  })

  it('the secret is sealed at rest (not in D1 in any plain encoding) and a new enrolment replaces a pending one', async () => {
    const u = await enrolled()
    const row = await env.DB.prepare('SELECT totp_secret FROM users WHERE id = ?').bind(u.id).first<{ totp_secret: string }>()
    expect(row!.totp_secret).toBeTruthy()
    expect(row!.totp_secret).not.toContain(u.secret)
    expect(row!.totp_secret).not.toContain(u.secret.toLowerCase())
    const again = await u.c.enrollMfa(u.id, PASSWORD)
    expect(again.data.totp_secret).not.toBe(u.secret)
    // a code of the replaced secret does not activate
    await expectEnvelope(await u.c.raw('POST', `/api/v2/bloodhound-users/${u.id}/mfa-activation`, { otp: await code(u.secret) }), 400)
    // a sealed secret copied onto another user's row does not open there (additional data binds it to the user)
    const other = await enrolled()
    await env.DB.prepare('UPDATE users SET totp_secret = ? WHERE id = ?').bind(row!.totp_secret, other.id).run()
    const r = await other.c.raw('POST', `/api/v2/bloodhound-users/${other.id}/mfa-activation`, { otp: await code(u.secret) })
    expect(r.status).toBeGreaterThanOrEqual(400)
    expect((await other.c.mfaStatus(other.id)).data.status).toBe('pending')
  })
})

describe('login with MFA activated', () => {
  it('missing or wrong otp: 400 "one time password is invalid"; wrong password still 401; the right code signs in', async () => {
    const u = await activated()
    await expectEnvelope(await loginRaw(u.name, PASSWORD), 400, 'one time password is invalid')
    await expectEnvelope(await loginRaw(u.name, PASSWORD, 'abcdef'), 400, 'one time password is invalid')
    await expectEnvelope(await loginRaw(u.name, 'wrong-password-here', await code(u.secret, 1)), 401, 'authentication is invalid')
    const ok = await client().login(u.name, PASSWORD, await code(u.secret, 1))
    const s = client({ kind: 'bearer', jwt: ok.data.session_token })
    expect((await s.self()).data.id).toBe(u.id)
  })

  it('a code signs in once: the same code again, or one of an earlier step, is refused', async () => {
    const u = await activated() // activation used the step before the current one
    const c0 = await code(u.secret, 0)
    expect((await loginRaw(u.name, PASSWORD, c0)).status).toBe(200)
    await expectEnvelope(await loginRaw(u.name, PASSWORD, c0), 400, 'one time password is invalid')
    await expectEnvelope(await loginRaw(u.name, PASSWORD, await code(u.secret, -1)), 400, 'one time password is invalid')
  })

  it('code attempts are rate-limited per user (the password login budget): 429 with Retry-After', async () => {
    const u = await activated()
    const wrong = (await code(u.secret, 1)) === '000000' ? '000001' : '000000'
    const statuses: number[] = []
    let last: Response | undefined
    for (let i = 0; i < 8; i++) {
      last = await loginRaw(u.name, PASSWORD, wrong)
      statuses.push(last.status)
      if (last.status === 429) break
    }
    expect(statuses).toContain(429)
    expect(Number(last!.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
    await expectEnvelope(last!, 429, 'too many one time password attempts for this user')
  })
})

describe('disenrolment and reset', () => {
  it('your own with your password; then login needs no code', async () => {
    const u = await activated()
    await expectEnvelope(await u.c.raw('DELETE', `/api/v2/bloodhound-users/${u.id}/mfa`, { secret: 'not-the-password' }), 400, 'unable to verify current password')
    expect((await u.c.mfaStatus(u.id)).data.status).toBe('activated')
    expect((await u.c.disenrollMfa(u.id, PASSWORD)).data.status).toBe('deactivated')
    expect((await u.c.mfaStatus(u.id)).data.status).toBe('deactivated')
    expect((await env.DB.prepare('SELECT totp_secret FROM users WHERE id = ?').bind(u.id).first<{ totp_secret: string | null }>())!.totp_secret).toBeNull()
    expect((await loginRaw(u.name, PASSWORD)).status).toBe(200)
  })

  it("an administrator resets another user's MFA with the administrator's own password; other users see the user as absent", async () => {
    const u = await activated()
    const other = await newUser()
    for (const [m, p, b] of [
      ['GET', 'mfa-activation', undefined],
      ['POST', 'mfa', { secret: PASSWORD }],
      ['POST', 'mfa-activation', { otp: '123456' }],
      ['DELETE', 'mfa', { secret: PASSWORD }],
    ] as const) {
      const refused = await other.c.raw(m, `/api/v2/bloodhound-users/${u.id}/${p}`, b)
      const absent = await other.c.raw(m, `/api/v2/bloodhound-users/${crypto.randomUUID()}/${p}`, b)
      expect((await expectEnvelope(refused, 404)).errors).toEqual((await expectEnvelope(absent, 404)).errors)
    }
    expect((await u.c.mfaStatus(u.id)).data.status).toBe('activated')
    const admin = u.admin
    expect((await admin.mfaStatus(u.id)).data.status).toBe('activated')
    await expectEnvelope(await admin.raw('DELETE', `/api/v2/bloodhound-users/${u.id}/mfa`, { secret: PASSWORD }), 400, 'unable to verify current password')
    expect((await admin.disenrollMfa(u.id, 'test-admin-password')).data.status).toBe('deactivated')
    expect((await loginRaw(u.name, PASSWORD)).status).toBe(200)
  })
})

describe('audit', () => {
  it('enrolment, activation and disenrolment each write their entry; the secret and codes never appear', async () => {
    const u = await newUser()
    const e = await u.c.enrollMfa(u.id, PASSWORD)
    const otp = await code(e.data.totp_secret)
    await u.c.activateMfa(u.id, otp)
    await u.c.disenrollMfa(u.id, PASSWORD)
    const rows = (
      await env.DB.prepare(`SELECT action, status, fields FROM audit_logs WHERE action IN ('EnrollMFA','ActivateMFA','DisenrollMFA') AND fields LIKE ? ORDER BY id`)
        .bind(`%${u.id}%`)
        .all<{ action: string; status: string; fields: string }>()
    ).results
    expect(rows.filter((r) => r.status === 'success').map((r) => r.action)).toEqual(['EnrollMFA', 'ActivateMFA', 'DisenrollMFA'])
    const all = JSON.stringify(rows)
    expect(all).not.toContain(e.data.totp_secret)
    expect(all).not.toContain(PASSWORD)
  })
})
