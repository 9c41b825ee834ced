/**
 * OIDC sign-in end to end against a test OpenID provider that lives in this file: its discovery document, JWKS
 * and token endpoint answer through the OIDC module's injectable fetch (inside workerd a test cannot open a
 * port), and it signs ID tokens with a key generated here (SubtleCrypto). Every refusal is a 302 to the login
 * page with no session and no user written.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { env } from 'cloudflare:workers'
import { EdgeHoundClient } from '../../src/client'
import { TestOp } from '../fixtures/oidc/test-op'
import { ADMIN, adminToken, BASE, client, expectEnvelope, userWithRole, workerFetch } from '../helpers'
import { createSamlProvider } from '../../src/client/saml'
import { IDP_FIXTURES } from '../fixtures/saml/corpus'

const noFollow = (req: Request) => workerFetch(new Request(req, { redirect: 'manual' }))
const anon = new EdgeHoundClient({ baseUrl: BASE, fetch: noFollow })
const UNAUTHENTICATED = 'Your SSO was unable to authenticate your user, please contact your Administrator'
const CONNECTION = 'Your SSO Connection failed, please contact your Administrator'
const loginUrl = (m: string) => `${BASE}/ui/login?error=${encodeURIComponent(m)}`
const ISSUER = 'https://op.test.example'
const CLIENT = 'edgehound-test-client'

/** The sign-in log lines (console.warn): the precise reason of each refusal. */
const signInLog: { reason?: string; request_id: string }[] = []
let op: TestOp
beforeAll(async () => {
  vi.spyOn(console, 'warn').mockImplementation((line: unknown) => {
    if (typeof line === 'string' && line.includes('"oidc_sign_in"')) signInLog.push(JSON.parse(line))
  })
  op = await TestOp.start(ISSUER, CLIENT)
})
afterAll(() => op.stop())

let admin: EdgeHoundClient
let seq = 0
async function provider(extra: Record<string, unknown> = {}) {
  admin ??= await adminToken()
  const res = await admin.raw('POST', '/api/v2/sso-providers/oidc', JSON.stringify({ name: `Op ${++seq}`, client_id: CLIENT, issuer: ISSUER, ...extra }), { contentType: 'application/json' })
  expect(res.status).toBe(201)
  return ((await res.json()) as { data: { slug: string; sso_provider_id: number; has_client_secret: boolean } }).data
}

/** GET /login as a browser: the authorization request's parameters and the binding cookie. */
async function login(slug: string) {
  const res = await anon.raw('GET', `/api/v2/sso/${slug}/login`)
  expect(res.status).toBe(302)
  const loc = new URL(res.headers.get('location')!)
  const setCookie = res.headers.get('set-cookie')!
  return { params: loc.searchParams, loc, setCookie, cookie: setCookie.split(';')[0] }
}

type Claims = Record<string, unknown>

const callback = (slug: string, q: Record<string, string>, cookie: string | null) =>
  anon.raw('GET', `/api/v2/sso/${slug}/callback?${new URLSearchParams(q)}`, undefined, cookie ? { headers: { Cookie: cookie } } : {})

const userCount = async (email: string) => env.DB.prepare('SELECT COUNT(*) AS n FROM users WHERE principal_name = ?').bind(email).first<number>('n')
const sessionCount = async () => (await env.DB.prepare('SELECT COUNT(*) AS n FROM sessions').first<number>('n')) ?? 0

/** A refused callback: 302 to the login page with `message`, no session cookie, and no user/session written. */
async function expectRefused(res: Response, email: string, sessionsBefore: number, message = UNAUTHENTICATED, reason?: string) {
  expect(res.status).toBe(302)
  if (reason) {
    const line = signInLog.at(-1)!
    expect(line.request_id).toBe(res.headers.get('requestid'))
    expect(line.reason).toBe(reason)
  }
  expect(res.headers.get('location')).toBe(loginUrl(message))
  expect(res.headers.getSetCookie().some((v) => v.startsWith('token='))).toBe(false)
  expect(await userCount(email)).toBe(0)
  expect(await sessionCount()).toBe(sessionsBefore)
}

describe('OIDC sign-in', () => {
  it('create: 201, the secret is sealed at rest and never returned; bad issuer is a 400 envelope', async () => {
    const p = await provider({ client_secret: 's3cret-value' })
    expect(p.has_client_secret).toBe(true)
    const row = await env.DB.prepare('SELECT client_secret_sealed FROM oidc_providers WHERE sso_provider_id = ?').bind(p.sso_provider_id).first<string>('client_secret_sealed')
    expect(row).not.toContain('s3cret')
    expect(JSON.stringify(p)).not.toContain('s3cret')
    const bad = await admin.raw('POST', '/api/v2/sso-providers/oidc', JSON.stringify({ name: 'Bad', client_id: 'x', issuer: 'http://plain.example' }), { contentType: 'application/json' })
    await expectEnvelope(bad, 400)
  })

  it('full code flow: PKCE S256 and a bound cookie; the session is issued and the user provisioned with the mapped role', async () => {
    const p = await provider({ client_secret: 'top-secret', config: { auto_provision: { enabled: true, default_role_id: 3, role_provision: true } } })
    const l = await login(p.slug)
    expect(l.loc.origin + l.loc.pathname).toBe(`${ISSUER}/authorize`)
    expect(l.params.get('code_challenge_method')).toBe('S256')
    expect(l.params.get('redirect_uri')).toBe(`${BASE}/api/v2/sso/${p.slug}/callback`)
    expect(l.setCookie).toMatch(new RegExp(`^edgehound_oidc=[\\w-]{43}\\.[\\w-]{43}; Path=/api/v2/sso/${p.slug}/callback; Max-Age=600; HttpOnly; Secure; SameSite=Lax$`))
    const nonce = l.params.get('nonce')!
    op.answerWithIdToken(nonce, { roles: ['bh-user'] })
    const res = await callback(p.slug, { code: 'the-code', state: l.params.get('state')! }, l.cookie)
    expect(res.status).toBe(302)
    expect(res.headers.get('location')).toBe(`${BASE}/ui`)
    // the token request carried the PKCE verifier matching the challenge, and the sealed secret (client_secret_basic)
    const tr = op.tokenRequests.at(-1)!
    const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(tr.form.get('code_verifier')!)))
    expect(btoa(String.fromCharCode(...digest)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')).toBe(l.params.get('code_challenge'))
    expect(tr.auth).toBe(`Basic ${btoa(`${CLIENT}:top-secret`)}`)
    const token = /^token=([^;]+)/.exec(res.headers.getSetCookie().find((v) => v.startsWith('token='))!)![1]
    const me = await client({ kind: 'bearer', jwt: token }).self()
    expect(me.data).toMatchObject({ principal_name: 'olivia@corp.example', roles: ['User'], sso_provider_id: p.sso_provider_id })
  })

  async function refusedCase(reason: string, o: { claims?: Claims; kid?: string; key?: CryptoKey; state?: string; cookie?: string | null; token?: () => Promise<Response>; message?: string }) {
    const p = await provider({ config: { auto_provision: { enabled: true, default_role_id: 3 } } })
    const email = `refused-${p.slug}@corp.example`
    const l = await login(p.slug)
    const nonce = l.params.get('nonce')!
    if (o.token) op.answer = o.token
    else op.answerWithIdToken(nonce, { email, ...o.claims }, o)
    const before = await sessionCount()
    const res = await callback(p.slug, { code: 'c', state: o.state ?? l.params.get('state')! }, o.cookie === undefined ? l.cookie : o.cookie)
    await expectRefused(res, email, before, o.message, reason)
    return { p, l, email }
  }

  it('wrong state (the cookie is right, the query state is not)', async () => {
    await refusedCase('state', { state: 'x'.repeat(43) })
  })
  it('no cookie, or a forged one: refused before any token request', async () => {
    const n = op.tokenRequests.length
    await refusedCase('browser_binding', { cookie: null })
    await refusedCase('browser_binding', { cookie: `edgehound_oidc=${'a'.repeat(43)}.${'b'.repeat(43)}` })
    expect(op.tokenRequests.length).toBe(n)
  })
  it('replayed state: the same callback a second time is refused', async () => {
    const p = await provider({ config: { auto_provision: { enabled: true, default_role_id: 3 } } })
    const l = await login(p.slug)
    const nonce = l.params.get('nonce')!
    op.answerWithIdToken(nonce, { email: 'replay@corp.example' })
    const q = { code: 'c', state: l.params.get('state')! }
    expect((await callback(p.slug, q, l.cookie)).headers.get('location')).toBe(`${BASE}/ui`)
    const before = await sessionCount()
    const again = await callback(p.slug, q, l.cookie)
    expect(again.headers.get('location')).toBe(loginUrl(UNAUTHENTICATED))
    expect(signInLog.at(-1)!.reason).toBe('state')
    expect(await sessionCount()).toBe(before)
  })
  it('wrong nonce', async () => {
    await refusedCase('id_token_nonce', { claims: { nonce: 'another-nonce' } })
  })
  it('wrong audience', async () => {
    await refusedCase('id_token_aud', { claims: { aud: 'another-client' } })
  })
  it('expired token', async () => {
    const now = Math.floor(Date.now() / 1000)
    await refusedCase('id_token_expired', { claims: { iat: now - 400, exp: now - 120 } })
  })
  it('bad signature', async () => {
    await refusedCase('id_token_bad_signature', { key: op.otherKey.privateKey })
  })
  it('unknown kid (after one JWKS refetch)', async () => {
    await refusedCase('id_token_unknown_kid', { kid: 'not-in-jwks' })
  })
  it('token endpoint error', async () => {
    await refusedCase('token_endpoint', { token: async () => Response.json({ error: 'invalid_grant' }, { status: 400 }), message: CONNECTION })
  })
  it("BloodHound's OIDCProvider fields; duplicate name 409, missing client_id 400, a non-JSON body 400, each the envelope", async () => {
    const name = `Shape ${++seq}`
    const res = await admin.raw('POST', '/api/v2/sso-providers/oidc', JSON.stringify({ name, client_id: CLIENT, issuer: ISSUER }), { contentType: 'application/json' })
    expect(res.status).toBe(201)
    const { data } = (await res.json()) as { data: Record<string, unknown> }
    expect(data).toMatchObject({ client_id: CLIENT, issuer: ISSUER, name, has_client_secret: false, config: { auto_provision: { enabled: false, default_role_id: 0, role_provision: false } } })
    for (const k of ['id', 'sso_provider_id']) expect(typeof data[k]).toBe('number')
    for (const k of ['created_at', 'updated_at']) expect(data[k]).toMatch(/^\d{4}-\d\d-\d\dT/)
    expect(data.callback_uri).toBe(`${BASE}/api/v2/sso/${data.slug}/callback`)
    const again = await admin.raw('POST', '/api/v2/sso-providers/oidc', JSON.stringify({ name, client_id: CLIENT, issuer: ISSUER }), { contentType: 'application/json' })
    await expectEnvelope(again, 409, 'must be unique')
    await expectEnvelope(await admin.raw('POST', '/api/v2/sso-providers/oidc', JSON.stringify({ name: `No client ${seq}`, issuer: ISSUER }), { contentType: 'application/json' }), 400)
    await expectEnvelope(await admin.raw('POST', '/api/v2/sso-providers/oidc', '{"name":', { contentType: 'application/json' }), 400)
    const rows = await env.DB.prepare('SELECT COUNT(*) AS n FROM sso_providers WHERE name = ?').bind(name).first<number>('n')
    expect(rows).toBe(1)
  })

  it('PATCH /api/v2/sso-providers/{id} updates an OIDC provider from JSON: rename, provisioning, client id (the secret sealed again), secret removed', async () => {
    const p = await provider({ client_secret: 'kept-secret' })
    const patch = (body: unknown, contentType = 'application/json') =>
      admin.raw('PATCH', `/api/v2/sso-providers/${p.sso_provider_id}`, typeof body === 'string' || body instanceof FormData ? body : JSON.stringify(body), { contentType })
    const renamed = await patch({ name: `Renamed ${p.slug}`, config: { auto_provision: { enabled: true, default_role_id: 3 } } })
    expect(renamed.status).toBe(200)
    const r = ((await renamed.json()) as { data: Record<string, unknown> }).data
    expect(r).toMatchObject({ name: `Renamed ${p.slug}`, slug: `renamed-${p.slug}`, client_id: CLIENT, issuer: ISSUER, has_client_secret: true })
    expect(r.config).toEqual({ auto_provision: { enabled: true, default_role_id: 3, role_provision: false } })
    // another client id and back: the secret is bound to (issuer, client id), so it is opened and sealed again each time
    const sealed0 = await env.DB.prepare('SELECT client_secret_sealed FROM oidc_providers WHERE sso_provider_id = ?').bind(p.sso_provider_id).first<string>('client_secret_sealed')
    expect((await patch({ client_id: 'another-client' })).status).toBe(200)
    expect((await patch({ client_id: CLIENT })).status).toBe(200)
    const sealed2 = await env.DB.prepare('SELECT client_secret_sealed FROM oidc_providers WHERE sso_provider_id = ?').bind(p.sso_provider_id).first<string>('client_secret_sealed')
    expect(sealed2).not.toBe(sealed0)
    // ... and the token request still carries it: a sign-in through the renamed provider
    const slug = r.slug as string
    const l = await login(slug)
    op.answerWithIdToken(l.params.get('nonce')!, { email: `patched-${slug}@corp.example` })
    expect((await callback(slug, { code: 'c', state: l.params.get('state')! }, l.cookie)).headers.get('location')).toBe(`${BASE}/ui`)
    expect(op.tokenRequests.at(-1)!.auth).toBe(`Basic ${btoa(`${CLIENT}:kept-secret`)}`)
    // null removes the secret: a public client
    const removed = await patch({ client_secret: null })
    expect(((await removed.json()) as { data: { has_client_secret: boolean } }).data.has_client_secret).toBe(false)
    expect(await env.DB.prepare('SELECT client_secret_sealed FROM oidc_providers WHERE sso_provider_id = ?').bind(p.sso_provider_id).first<string | null>('client_secret_sealed')).toBeNull()
    // refusals, each the envelope, nothing changed: plain-http issuer, unknown field, a form body, a taken name
    await expectEnvelope(await patch({ issuer: 'http://plain.example' }), 400, 'issuer url is invalid')
    await expectEnvelope(await patch({ client_id: CLIENT, colour: 'red' }), 400)
    const form = new FormData()
    form.set('name', 'Form name')
    await expectEnvelope(await admin.raw('PATCH', `/api/v2/sso-providers/${p.sso_provider_id}`, form), 415, 'an OIDC provider is updated with a JSON body')
    const other = await provider()
    await expectEnvelope(await admin.raw('PATCH', `/api/v2/sso-providers/${other.sso_provider_id}`, JSON.stringify({ name: `Renamed ${p.slug}` }), { contentType: 'application/json' }), 409, 'must be unique')
    const row = await env.DB.prepare('SELECT s.name, o.issuer FROM sso_providers s JOIN oidc_providers o ON o.sso_provider_id = s.id WHERE s.id = ?').bind(p.sso_provider_id).first()
    expect(row).toEqual({ name: `Renamed ${p.slug}`, issuer: ISSUER })
    await expectEnvelope(await admin.raw('PATCH', '/api/v2/sso-providers/999999', JSON.stringify({ name: 'x' }), { contentType: 'application/json' }), 404)
    // each successful change is audited once
    const audited = await env.DB.prepare(`SELECT COUNT(*) AS n FROM audit_logs WHERE action = 'UpdateSSOIdentityProvider' AND status = 'success' AND CAST(fields ->> 'sso_provider_id' AS TEXT) = ?`)
      .bind(String(p.sso_provider_id))
      .first<number>('n')
    expect(audited).toBe(4)
  })

  it('listed by GET /api/v2/sso-providers as type OIDC; DELETE /api/v2/sso-providers/{id} removes it and unlinks its users', async () => {
    const p = await provider({ config: { auto_provision: { enabled: true, default_role_id: 3 } } })
    const listed = ((await (await admin.raw('GET', '/api/v2/sso-providers')).json()) as { data: { id: number; type: string; details: Record<string, unknown>; login_uri: string }[] }).data
    const mine = listed.find((x) => x.id === p.sso_provider_id)!
    expect(mine).toMatchObject({ type: 'OIDC', slug: p.slug, login_uri: `${BASE}/api/v2/sso/${p.slug}/login`, details: { client_id: CLIENT, issuer: ISSUER, sso_provider_id: p.sso_provider_id } })
    // a user signs in through it, then the provider is deleted
    const l = await login(p.slug)
    op.answerWithIdToken(l.params.get('nonce')!, { email: `gone-${p.slug}@corp.example` })
    expect((await callback(p.slug, { code: 'c', state: l.params.get('state')! }, l.cookie)).headers.get('location')).toBe(`${BASE}/ui`)
    const del = await admin.raw('DELETE', `/api/v2/sso-providers/${p.sso_provider_id}`)
    expect(del.status).toBe(200)
    expect(await env.DB.prepare('SELECT COUNT(*) AS n FROM oidc_providers WHERE sso_provider_id = ?').bind(p.sso_provider_id).first<number>('n')).toBe(0)
    const u = await env.DB.prepare('SELECT sso_provider_id FROM users WHERE principal_name = ?').bind(`gone-${p.slug}@corp.example`).first<{ sso_provider_id: number | null }>()
    expect(u).toEqual({ sso_provider_id: null })
    await expectEnvelope(await anon.raw('GET', `/api/v2/sso/${p.slug}/login`), 404)
  })

  it("an IdP asserting a local account's email does not sign in as it (nor any other provider's user)", async () => {
    const local = `local-${++seq}@corp.example`
    await admin.createUser({ principal_name: local, email_address: local, roles: ['Administrator'], secret: 'correct-horse-battery-staple-1' })
    const p = await provider({ config: { auto_provision: { enabled: true, default_role_id: 3 } } })
    const l = await login(p.slug)
    op.answerWithIdToken(l.params.get('nonce')!, { email: local })
    const before = await sessionCount()
    const res = await callback(p.slug, { code: 'c', state: l.params.get('state')! }, l.cookie)
    expect(res.status).toBe(302)
    expect(res.headers.get('location')).toBe(loginUrl('Your user is not allowed, please contact your Administrator'))
    expect(signInLog.at(-1)!.reason).toBe('user_not_of_provider')
    expect(res.headers.getSetCookie().some((v) => v.startsWith('token='))).toBe(false)
    expect(await sessionCount()).toBe(before)
  })

  it('email_verified false, an IdP error answer and a callback without code are refused, nothing written', async () => {
    await refusedCase('email_unverified', { claims: { email_verified: false }, message: 'Your user is not allowed, please contact your Administrator' })
    const p = await provider({ config: { auto_provision: { enabled: true, default_role_id: 3 } } })
    for (const [q, reason] of [[{ error: 'access_denied' }, 'idp_error'], [{}, 'no_code']] as const) {
      const l = await login(p.slug)
      const before = await sessionCount()
      const res = await callback(p.slug, { state: l.params.get('state')!, ...q }, l.cookie)
      await expectRefused(res, `nobody-${p.slug}@corp.example`, before, UNAUTHENTICATED, reason)
    }
  })

  it('unknown slug at the callback is the envelope 404', async () => {
    await expectEnvelope(await callback('no-such-op', { code: 'c', state: 's' }, null), 404, 'no SSO provider has this slug')
    // an OIDC provider's callback is GET (the IdP's redirect); a SAML provider's is POST (docs/saml.md)
    const p = await provider()
    const post = await anon.raw('POST', `/api/v2/sso/${p.slug}/callback`, 'SAMLResponse=x', { contentType: 'application/x-www-form-urlencoded' })
    await expectEnvelope(post, 405, 'method POST is not allowed on this path; allowed: GET')
    expect(post.headers.get('allow')).toBe('GET')
  })
})

describe('GET /api/v2/sso-providers before signing in (the sign-in page reads it)', () => {
  const VISITOR_KEYS = ['id', 'login_uri', 'name', 'slug', 'type']
  type Listed = Record<string, unknown> & { id: number; type: string }
  const list = async (res: Response) => {
    expect(res.status).toBe(200)
    return ((await res.json()) as { data: Listed[] }).data
  }

  it('visitors and users without auth/ManageProviders see {id, name, slug, type, login_uri} only; managers the full records', async () => {
    const oidc = await provider({ client_secret: 'visitor-must-not-see-this' })
    const { data: saml } = await createSamlProvider(admin, { name: `Saml ${++seq}`, metadata: IDP_FIXTURES['okta.xml'] })
    const ids = [oidc.sso_provider_id, saml.sso_provider_id.int32]

    const full = (await list(await admin.raw('GET', '/api/v2/sso-providers'))).filter((x) => ids.includes(x.id))
    expect(full.map((x) => x.type)).toEqual(['OIDC', 'SAML'])
    for (const x of full) expect(Object.keys(x)).toEqual(expect.arrayContaining(['details', 'config', 'callback_uri']))

    const { client: user } = await userWithRole('User')
    // an anonymous browser, a signed-in user of a role without the permission, and a browser whose session cookie is stale
    const stale = await client().login(ADMIN.username, ADMIN.password)
    await client({ kind: 'bearer', jwt: stale.data.session_token }).logout()
    for (const [who, res] of [
      ['anonymous', await anon.raw('GET', '/api/v2/sso-providers')],
      ['User role', await user.raw('GET', '/api/v2/sso-providers')],
      ['stale session cookie', await anon.raw('GET', '/api/v2/sso-providers', undefined, { headers: { Cookie: `token=${stale.data.session_token}` } })],
    ] as const) {
      const text = JSON.stringify(await list(res))
      const mine = (JSON.parse(text) as Listed[]).filter((x) => ids.includes(x.id))
      expect(mine, who).toEqual([
        { id: oidc.sso_provider_id, name: expect.any(String), slug: oidc.slug, type: 'OIDC', login_uri: `${BASE}/api/v2/sso/${oidc.slug}/login` },
        { id: saml.sso_provider_id.int32, name: saml.name, slug: expect.any(String), type: 'SAML', login_uri: saml.sp_sso_uri },
      ])
      for (const x of JSON.parse(text) as Listed[]) expect(Object.keys(x).sort(), who).toEqual(VISITOR_KEYS)
      // nothing that says how the service trusts an IdP, whatever the key
      for (const secret of [CLIENT, ISSUER, 'visitor-must-not-see-this', saml.idp_issuer_uri, saml.idp_sso_uri, saml.signing_certificates[0].sha256_fingerprint])
        expect(text, `${who}: ${secret}`).not.toContain(secret)
      // never kept by a shared cache: the answer depends on the caller
      expect(res.headers.get('cache-control'), who).toBe('no-store')
    }
    // the visitor spends the IP's public budget, as GET /api/v2/saml/sso does
    const policy = (r: Response) => r.headers.get('ratelimit-policy')
    expect(policy(await anon.raw('GET', '/api/v2/sso-providers'))).toBe(policy(await anon.raw('GET', '/api/v2/saml/sso')))
    // a credential that is sent must verify: a script with a revoked or garbled token hears so
    await expectEnvelope(await anon.raw('GET', '/api/v2/sso-providers', undefined, { headers: { Authorization: `Bearer ${stale.data.session_token}` } }), 401)
  })
})
