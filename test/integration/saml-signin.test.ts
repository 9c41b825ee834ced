/**
 * SAML sign-in end to end: GET /login (the AuthnRequest), an IdP answer signed by xmldsigjs (not the
 * verifying library), POST /callback, the session it starts. Every refusal is a 302 to the login page with
 * BloodHound's message, never a session and never a user that should not exist. The verifier's own
 * refusals are unit-tested in test/unit/saml-response.test.ts; here each one is driven through HTTP once
 * and the sign-in rules (InResponseTo, replay, user ownership, provisioning) are covered.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { env } from 'cloudflare:workers'
import { createApp } from '../../src/app'
import { EdgeHoundClient, EdgeHoundError } from '../../src/client'
import {
  createSamlProvider,
  deleteSsoProvider,
  postSamlResponse,
  startSamlLogin,
  updateSsoProvider,
  type ProviderFormInput,
  type SamlCallbackResult,
  type SamlProviderJson,
} from '../../src/client/saml'
import { adminToken, BASE, client, expectEnvelope, workerFetch } from '../helpers'
import { b64, buildResponse, idpMetadata, KEY_A, KEY_B, ROLE_CLAIM, sign, type ResponseOptions, type SignWhat, type TestKey } from '../fixtures/saml/idp-signer'

const noFollow = (req: Request) => workerFetch(new Request(req, { redirect: 'manual' }))
const anon = new EdgeHoundClient({ baseUrl: BASE, fetch: noFollow })
const UNAUTHENTICATED = 'Your SSO was unable to authenticate your user, please contact your Administrator'
const NOT_ALLOWED = 'Your user is not allowed, please contact your Administrator'
const loginUrl = (message: string) => `${BASE}/ui/login?error=${encodeURIComponent(message)}`

let admin: EdgeHoundClient
let usersBefore: Set<string>
/** The sign-in log lines (console.warn is silenced here: every refusal below is on purpose). */
let signInLog: { reason?: string; outcome: string; request_id: string; provider: string }[] = []
beforeAll(async () => {
  vi.spyOn(console, 'warn').mockImplementation((line: unknown) => {
    if (typeof line === 'string' && line.includes('"saml_sign_in"')) signInLog.push(JSON.parse(line))
  })
  admin = await adminToken()
  usersBefore = new Set((await admin.listUsers()).data.users.map((u) => u.id))
})

interface Provider extends SamlProviderJson {
  slug: string
  idp: string
  key: TestKey
}
let seq = 0
async function provider(o: Omit<ProviderFormInput, 'name' | 'metadata'> & { key?: TestKey } = {}): Promise<Provider> {
  const n = ++seq
  const idp = `https://idp-${n}.test.example/saml/metadata`
  const key = o.key ?? KEY_A
  const { data } = await createSamlProvider(admin, { ...o, name: `Sign In ${n}`, metadata: idpMetadata(idp, key) })
  return { ...data, slug: data.sp_issuer_uri.split('/').pop()!, idp, key }
}

/**
 * The browser that started each sign-in: AuthnRequest ID -> the binding cookie GET /login gave it. `post`
 * sends the cookie of the request a response answers, as that browser would; the cross-browser tests
 * send none or another's.
 */
const browsers = new Map<string, string>()

/** The ID of a fresh AuthnRequest of this provider (GET /login, Redirect binding); its browser's cookie goes to `browsers`. */
async function authnRequestId(p: Provider): Promise<string> {
  const start = await startSamlLogin(anon, p.slug)
  if (start.binding !== 'HTTP-Redirect') throw new Error('expected the Redirect binding')
  const bytes = Uint8Array.from(atob(new URL(start.location).searchParams.get('SAMLRequest')!), (c) => c.charCodeAt(0))
  const xml = await new Response(new Blob([bytes]).stream().pipeThrough(new DecompressionStream('deflate-raw'))).text()
  const id = /\bID="([^"]+)"/.exec(xml)![1]
  expect(start.bindingCookie).toBe(`edgehound_saml_request=${id}`)
  browsers.set(id, start.bindingCookie!)
  return id
}

type Answer = Partial<ResponseOptions> & { signWhat?: SignWhat; key?: TestKey; alg?: 'SHA-256' | 'SHA-1'; idpInitiated?: boolean }
/** The signed response XML an IdP would send for `p` (answering a fresh AuthnRequest unless idpInitiated). */
async function answer(p: Provider, o: Answer = {}): Promise<string> {
  const inResponseTo = o.idpInitiated ? undefined : (o.inResponseTo ?? (await authnRequestId(p)))
  const xml = buildResponse({ idpEntityId: p.idp, acsUrl: p.sp_acs_uri, spEntityId: p.sp_issuer_uri, ...o, inResponseTo })
  return sign(xml, o.signWhat ?? 'assertion', o.key ?? p.key, o.alg)
}
/** Posts `xml` from the browser that started the sign-in it answers (`cookie` overrides: '' sends none). */
const post = (p: Provider, xml: string, relay?: string, cookie?: string) =>
  postSamlResponse(anon, p.slug, b64(xml), relay, cookie ?? browsers.get(/\bInResponseTo="([^"]+)"/.exec(xml)?.[1] ?? '') ?? '')
async function signIn(p: Provider, o: Answer = {}, relay?: string): Promise<SamlCallbackResult> {
  return post(p, await answer(p, o), relay)
}

/** Refused with BloodHound's message; `reason`: the precise reason the log line of this request gives. */
function expectRefused(r: SamlCallbackResult, message = UNAUTHENTICATED, reason?: string) {
  expect(r.location).toBe(loginUrl(message))
  expect(r.setCookie).toBeNull()
  const line = signInLog.at(-1)!
  expect(line.request_id).toBe(r.response.headers.get('requestid'))
  if (reason) expect(line.reason).toBe(reason)
}
async function expectSignedIn(r: SamlCallbackResult, email: string) {
  expect(r.setCookie, r.location).not.toBeNull()
  const me = await client({ kind: 'bearer', jwt: r.sessionToken! }).self()
  expect(me.data.principal_name).toBe(email)
  return me.data
}

describe('sign-in succeeds', () => {
  it('signed assertion, signed response, both: 302 to the UI with the token cookie; the session works like a password session', async () => {
    const p = await provider({ autoProvision: { enabled: true, default_role_id: 3 } })
    for (const signWhat of ['assertion', 'response', 'both'] as const) {
      const r = await signIn(p, { signWhat, email: 'carol@corp.example' })
      expect(r.response.status).toBe(302)
      expect(r.location).toBe(`${BASE}/ui`)
      // the console's browser session (auth/csrf.ts): HttpOnly session cookie and its readable CSRF proof
      expect(r.setCookie).toMatch(/^token=[\w-]+\.[\w-]+\.[\w-]+; Path=\/; Max-Age=28800; SameSite=Lax; HttpOnly$/) // http test origin: no Secure
      expect(r.response.headers.getSetCookie().find((v) => v.startsWith('csrf_token='))).toMatch(/^csrf_token=[\w-]{43}; Path=\/; Max-Age=28800; SameSite=Lax$/)
      expect(r.response.headers.get('cache-control')).toBe('no-store')
      const me = await expectSignedIn(r, 'carol@corp.example')
      expect(me.sso_provider_id).toBe(p.sso_provider_id.int32)
      // same session rules as password login: a sessions row, ended by logout
      const claims = JSON.parse(atob(r.sessionToken!.split('.')[1].replace(/-/g, '+').replace(/_/g, '/')))
      expect(await env.DB.prepare('SELECT user_id FROM sessions WHERE id = ?').bind(claims.jti).first('user_id')).toBe(me.id)
      const session = client({ kind: 'bearer', jwt: r.sessionToken! })
      await session.logout()
      await expect(session.self()).rejects.toMatchObject({ status: 401 })
    }
  })

  it('just-in-time: the first sign-in creates the user (linked, default role); the second reuses it', async () => {
    const p = await provider({ autoProvision: { enabled: true, default_role_id: 3 } })
    const first = await expectSignedIn(await signIn(p, { email: 'erin@corp.example' }), 'erin@corp.example')
    expect(first).toMatchObject({ email_address: 'erin@corp.example', roles: ['Read-Only'], sso_provider_id: p.sso_provider_id.int32, is_disabled: false })
    const count = (await admin.listUsers()).data.users.length
    const second = await expectSignedIn(await signIn(p, { email: 'ERIN@corp.example' }), 'erin@corp.example')
    expect(second.id).toBe(first.id)
    expect((await admin.listUsers()).data.users.length).toBe(count)
  })

  it('role mapping: one bh-<role> claim picks the role, several or none give the default; updated on each sign-in', async () => {
    const p = await provider({ autoProvision: { enabled: true, default_role_id: 3, role_provision: true } })
    const u = await expectSignedIn(await signIn(p, { email: 'finn@corp.example', attributes: { [ROLE_CLAIM]: ['Staff', 'bh-administrator'] } }), 'finn@corp.example')
    expect(u.roles).toEqual(['Administrator'])
    const two = await expectSignedIn(await signIn(p, { email: 'gus@corp.example', attributes: { [ROLE_CLAIM]: ['bh-user', 'bh-upload-only'] } }), 'gus@corp.example')
    expect(two.roles).toEqual(['Read-Only'])
    const again = await expectSignedIn(await signIn(p, { email: 'finn@corp.example', attributes: { [ROLE_CLAIM]: ['bh-upload-only'] } }), 'finn@corp.example')
    expect(again.roles).toEqual(['Upload-Only'])
    // without role_provision the claim is ignored
    const q = await provider({ autoProvision: { enabled: true, default_role_id: 2, role_provision: false } })
    expect((await expectSignedIn(await signIn(q, { email: 'hal@corp.example', attributes: { [ROLE_CLAIM]: ['bh-administrator'] } }), 'hal@corp.example')).roles).toEqual(['User'])
  })

  it('an administrator-created user linked to the provider signs in without provisioning', async () => {
    const p = await provider()
    const created = await admin.createUser({ principal_name: 'ivy', email_address: 'ivy@corp.example', roles: ['User'], sso_provider_id: p.sso_provider_id.int32 })
    const me = await expectSignedIn(await signIn(p, { email: 'ivy@corp.example' }), 'ivy')
    expect(me.id).toBe(created.data.id)
  })

  it('RelayState: a path on this site is where the browser goes; anything else goes to the UI', async () => {
    const p = await provider({ autoProvision: { enabled: true, default_role_id: 2 } })
    expect((await signIn(p, { email: 'jo@corp.example' }, '/api/v2/self?x=1')).location).toBe(`${BASE}/api/v2/self?x=1`)
    for (const evil of ['//evil.example/x', 'https://evil.example/', '/\\evil.example', 'javascript:alert(1)', '/a\tb'])
      expect((await signIn(p, { email: 'jo@corp.example' }, evil)).location).toBe(`${BASE}/ui`)
  })

  it('UI_BASE_URL decides where the UI is; https gives a Secure cookie', async () => {
    const p = await provider({ autoProvision: { enabled: true, default_role_id: 2 } })
    const base = 'https://bh.example.com'
    const acs = `${base}/api/v2/sso/${p.slug}/callback`
    const xml = await sign(buildResponse({ idpEntityId: p.idp, acsUrl: acs, spEntityId: `${base}/api/v2/sso/${p.slug}`, inResponseTo: undefined, email: 'kim@corp.example' }), 'assertion')
    await updateSsoProvider(admin, p.sso_provider_id.int32, { allowIdpInitiated: true })
    const res = await createApp().fetch(
      new Request(`${BASE}/api/v2/sso/${p.slug}/callback`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'CF-Connecting-IP': '10.9.9.9' },
        body: new URLSearchParams({ SAMLResponse: b64(xml) }).toString(),
      }),
      { ...env, PUBLIC_BASE_URL: base, UI_BASE_URL: 'https://ui.example.com/ui/' },
    )
    expect(res.status).toBe(302)
    expect(res.headers.get('location')).toBe('https://ui.example.com/ui')
    expect(res.headers.get('set-cookie')).toMatch(/; SameSite=Lax; Secure$/)
  })
})

describe('sign-in is refused', () => {
  it('unsigned, wrong key (its own certificate in KeyInfo), tampered: login page, no session', async () => {
    const p = await provider({ autoProvision: { enabled: true, default_role_id: 1 } })
    const unsigned = buildResponse({ idpEntityId: p.idp, acsUrl: p.sp_acs_uri, spEntityId: p.sp_issuer_uri, inResponseTo: await authnRequestId(p), email: 'mallory@corp.example' })
    expectRefused(await post(p, unsigned), UNAUTHENTICATED, 'unsigned')
    expectRefused(await signIn(p, { key: KEY_B, email: 'mallory@corp.example' }), UNAUTHENTICATED, 'signature')
    const good = await answer(p, { email: 'lee@corp.example' })
    expectRefused(await post(p, good.replaceAll('lee@corp.example', 'mallory@corp.example')), UNAUTHENTICATED, 'signature')
  })

  it("another provider's certificate: a response signed for provider B is refused at provider A", async () => {
    const a = await provider({ autoProvision: { enabled: true, default_role_id: 1 } })
    const b = await provider({ key: KEY_B, autoProvision: { enabled: true, default_role_id: 1 } })
    // B's IdP signs a response addressed to A in every other respect
    const xml = await answer(a, { key: b.key, email: 'mallory@corp.example' })
    expectRefused(await post(a, xml), UNAUTHENTICATED, 'signature')
    // and a response for B posted to A's ACS (cross-provider post): wrong destination, audience, issuer, key
    expectRefused(await post(a, await answer(b, { email: 'mallory@corp.example' })), UNAUTHENTICATED, 'signature')
  })

  it('signature wrapping and comment injection through HTTP', async () => {
    const p = await provider({ autoProvision: { enabled: true, default_role_id: 1 } })
    const xml = await answer(p, { email: 'nia@corp.example' })
    const assertion = /<saml:Assertion[\s\S]*<\/saml:Assertion>/.exec(xml)![0]
    const forged = assertion.replace(/<ds:Signature[\s\S]*<\/ds:Signature>/, '').replace(/ID="[^"]+"/, 'ID="_evil"').replaceAll('nia@corp.example', 'mallory@corp.example')
    expectRefused(await post(p, xml.replace(assertion, forged + assertion)), UNAUTHENTICATED, 'assertion_count')
    expectRefused(
      await post(p, xml.replace(assertion, forged).replace('<samlp:Status>', `<samlp:Extensions>${assertion}</samlp:Extensions><samlp:Status>`)),
      UNAUTHENTICATED,
      'assertion_count',
    )
    // comment injection: the IdP signed "nia@corp.example.evil.example"; a comment cut after signing does not shorten it
    const cut = (await answer(p, { email: 'nia@corp.example.evil.example' })).replaceAll('nia@corp.example.evil.example', 'nia@corp.example<!---->.evil.example')
    await expectSignedIn(await post(p, cut), 'nia@corp.example.evil.example')
  })

  it('expired, not yet valid, wrong audience / destination / recipient / issuer, non-success status, SHA-1', async () => {
    const p = await provider({ autoProvision: { enabled: true, default_role_id: 1 } })
    const cases: [Answer, string][] = [
      [{ now: Date.now() - 3600_000 }, 'expired'],
      [{ now: Date.now() + 3600_000, notBeforeOffset: 0 }, 'not_yet_valid'],
      [{ audience: 'https://other.example/sp' }, 'audience'],
      [{ destination: 'https://other.example/acs' }, 'destination'],
      [{ recipient: 'https://other.example/acs' }, 'recipient'],
      [{ assertionIssuer: 'https://evil-idp.example' }, 'issuer'],
      [{ status: 'urn:oasis:names:tc:SAML:2.0:status:Responder' }, 'status'],
      [{ alg: 'SHA-1' }, 'sha1'],
    ]
    for (const [o, reason] of cases) expectRefused(await signIn(p, { email: 'mallory@corp.example', ...o }), UNAUTHENTICATED, reason)
    // SHA-1 once the provider opts in
    await updateSsoProvider(admin, p.sso_provider_id.int32, { allowSha1: true })
    await expectSignedIn(await signIn(p, { email: 'olga@corp.example', alg: 'SHA-1' }), 'olga@corp.example')
  })

  it('InResponseTo: unknown, issued for another provider, or answered already', async () => {
    const p = await provider({ autoProvision: { enabled: true, default_role_id: 1 } })
    const other = await provider()
    // an id this service never issued, even with a (forged) sign-in cookie naming it
    const forged = '_0123456789abcdef0123456789abcdef01234567'
    expectRefused(await post(p, await answer(p, { inResponseTo: forged, email: 'mallory@corp.example' }), undefined, `edgehound_saml_request=${forged}`), UNAUTHENTICATED, 'unknown_in_response_to')
    expectRefused(await signIn(p, { inResponseTo: await authnRequestId(other), email: 'mallory@corp.example' }), UNAUTHENTICATED, 'unknown_in_response_to')
    const id = await authnRequestId(p)
    await expectSignedIn(await signIn(p, { inResponseTo: id, email: 'pat@corp.example' }), 'pat@corp.example')
    // a second, different assertion answering the same request
    expectRefused(await signIn(p, { inResponseTo: id, email: 'pat@corp.example' }), UNAUTHENTICATED, 'unknown_in_response_to')
  })

  it('replay: the same response a second time', async () => {
    const p = await provider({ autoProvision: { enabled: true, default_role_id: 2 } })
    const xml = await answer(p, { email: 'quinn@corp.example' })
    await expectSignedIn(await post(p, xml), 'quinn@corp.example')
    expectRefused(await post(p, xml), UNAUTHENTICATED, 'replay')
    // also when IdP-initiated sign-in is allowed (no AuthnRequest to consume)
    await updateSsoProvider(admin, p.sso_provider_id.int32, { allowIdpInitiated: true })
    const idp = await answer(p, { idpInitiated: true, email: 'quinn@corp.example' })
    await expectSignedIn(await post(p, idp), 'quinn@corp.example')
    expectRefused(await post(p, idp), UNAUTHENTICATED, 'replay')
  })

  it('IdP-initiated sign-in: off by default, a per-provider switch', async () => {
    const p = await provider({ autoProvision: { enabled: true, default_role_id: 2 } })
    expect(p.config).toEqual({ auto_provision: { enabled: true, default_role_id: 2, role_provision: false }, allow_idp_initiated: false, allow_sha1: false })
    // from a browser without a sign-in cookie it is refused before its signature is looked at; with one, for what it is
    expectRefused(await signIn(p, { idpInitiated: true, email: 'rae@corp.example' }), UNAUTHENTICATED, 'browser_binding')
    expectRefused(await post(p, await answer(p, { idpInitiated: true, email: 'rae@corp.example' }), undefined, browsers.get(await authnRequestId(p))), UNAUTHENTICATED, 'idp_initiated')
    const { data } = await updateSsoProvider(admin, p.sso_provider_id.int32, { allowIdpInitiated: true })
    expect(data.config.allow_idp_initiated).toBe(true)
    await expectSignedIn(await signIn(p, { idpInitiated: true, email: 'rae@corp.example' }), 'rae@corp.example')
  })

  it('local-account takeover: a password user, the bootstrap admin, or another provider’s user is never signed in', async () => {
    const p = await provider({ autoProvision: { enabled: true, default_role_id: 1 } })
    const other = await provider()
    await admin.createUser({ principal_name: 'sam', email_address: 'sam@corp.example', roles: ['User'], secret: 'correct-horse-battery' })
    await admin.createUser({ principal_name: 'tess', email_address: 'tess@corp.example', roles: ['User'], sso_provider_id: other.sso_provider_id.int32 })
    const before = (await admin.listUsers()).data.users
    for (const email of ['sam@corp.example', 'SAM', 'admin', 'tess@corp.example']) expectRefused(await signIn(p, { email }), NOT_ALLOWED, 'user_not_of_provider')
    const after = (await admin.listUsers()).data.users
    expect(after).toEqual(before) // nothing created, nothing relinked, no role changed
  })

  it('provisioning off: an unknown user is refused and not created', async () => {
    const p = await provider()
    const count = (await admin.listUsers()).data.users.length
    expectRefused(await signIn(p, { email: 'uma@corp.example' }), NOT_ALLOWED, 'not_provisioned')
    expect((await admin.listUsers()).data.users.length).toBe(count)
  })

  it('a disabled user is sent to the user-disabled page, without a session', async () => {
    const p = await provider({ autoProvision: { enabled: true, default_role_id: 2 } })
    const u = await expectSignedIn(await signIn(p, { email: 'vic@corp.example' }), 'vic@corp.example')
    await admin.updateUser(u.id, { is_disabled: true })
    const r = await signIn(p, { email: 'vic@corp.example' })
    expect(r.location).toBe(`${BASE}/ui/user-disabled`)
    expect(r.setCookie).toBeNull()
  })

  it('deleted provider: its ACS is 404, its users are unlinked and listed as affected', async () => {
    const p = await provider({ autoProvision: { enabled: true, default_role_id: 2 } })
    const u = await expectSignedIn(await signIn(p, { email: 'wes@corp.example' }), 'wes@corp.example')
    const xml = await answer(p, { email: 'wes@corp.example' })
    const session = client({ kind: 'bearer', jwt: (await signIn(p, { email: 'wes@corp.example' })).sessionToken! })
    expect((await session.self()).data.id).toBe(u.id)
    const { data } = await deleteSsoProvider(admin, p.sso_provider_id.int32)
    expect(data.affected_users.map((x) => (x as { id: string }).id)).toEqual([u.id])
    // the sessions opened through the provider end with it
    await expect(session.self()).rejects.toMatchObject({ status: 401 })
    const e = await post(p, xml).catch((x: unknown) => x)
    expect(e).toBeInstanceOf(EdgeHoundError)
    expect((e as EdgeHoundError).status).toBe(404)
    expect((await admin.listUsers()).data.users.find((x) => x.id === u.id)?.sso_provider_id).toBeNull()
  })

  it('hostile bodies: DOCTYPE / XXE, not XML, malformed base64, 5 MB; the precise reason is logged with the request id', async () => {
    const p = await provider({ autoProvision: { enabled: true, default_role_id: 1 } })
    const xxe = `<!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]><samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol">&x;</samlp:Response>`
    const bodies: [string, string][] = [[b64(xxe), 'doctype'], [b64('{"a": 1}'), 'not_xml'], ['PHNhbWw+*%%%', 'bad_base64'], [b64('<samlp:Response'), 'not_xml']]
    for (const [body, reason] of bodies) {
      expectRefused(await postSamlResponse(anon, p.slug, body, undefined, browsers.get(await authnRequestId(p))), UNAUTHENTICATED, reason)
      expect(signInLog.at(-1)).toMatchObject({ type: 'saml_sign_in', outcome: 'refused', provider: p.slug })
    }
    const big = await anon.raw('POST', `/api/v2/sso/${p.slug}/callback`, `SAMLResponse=${'A'.repeat(5 * 1024 * 1024)}`, { contentType: 'application/x-www-form-urlencoded' })
    await expectEnvelope(big, 413)
  })
})

describe('login CSRF: a sign-in is bound to the browser that started it', () => {
  it('GET /login sets the binding cookie with the attributes a cross-site POST to the callback needs', async () => {
    const p = await provider()
    const start = await startSamlLogin(anon, p.slug)
    const set = start.response.headers.getSetCookie()
    expect(set).toHaveLength(1)
    expect(set[0]).toMatch(new RegExp(`^edgehound_saml_request=_[0-9a-f]{40}; Path=/api/v2/sso/${p.slug}/callback; Max-Age=600; HttpOnly; Secure; SameSite=None$`))
  })

  it("the attacker's response posted from the victim's browser (no cookie, or the victim's own sign-in cookie) is refused; nothing is created", async () => {
    const p = await provider({ autoProvision: { enabled: true, default_role_id: 1 } })
    const attackers = await answer(p, { email: 'mallory@corp.example' }) // the attacker's own sign-in
    const victimsCookie = browsers.get(await authnRequestId(p))! // the victim started a sign-in of their own
    for (const cookie of ['', victimsCookie, `other=1; ${victimsCookie}`]) {
      const r = await post(p, attackers, undefined, cookie)
      expectRefused(r, UNAUTHENTICATED, 'browser_binding')
      // the refusal also ends whatever binding the browser held
      expect(r.response.headers.getSetCookie()).toEqual([`edgehound_saml_request=; Path=/api/v2/sso/${p.slug}/callback; Max-Age=0; HttpOnly; Secure; SameSite=None`])
    }
    expect((await admin.listUsers()).data.users.some((u) => u.principal_name === 'mallory@corp.example')).toBe(false)
    // the same kind of response from the browser that started it signs in, and clears the binding
    const r = await signIn(p, { email: 'yara@corp.example' })
    await expectSignedIn(r, 'yara@corp.example')
    expect(r.response.headers.getSetCookie()[0]).toMatch(/^edgehound_saml_request=; .*Max-Age=0/)
  })

  it('IdP-initiated (allowed for the provider): accepted without a binding cookie, refused when not allowed', async () => {
    const p = await provider({ autoProvision: { enabled: true, default_role_id: 2 } })
    expectRefused(await post(p, await answer(p, { idpInitiated: true, email: 'cy@corp.example' })), UNAUTHENTICATED, 'browser_binding')
    await updateSsoProvider(admin, p.sso_provider_id.int32, { allowIdpInitiated: true })
    await expectSignedIn(await post(p, await answer(p, { idpInitiated: true, email: 'cy@corp.example' })), 'cy@corp.example')
  })
})

describe('what a sign-in may and may not change', () => {
  it("expired metadata is trusted nowhere: a response to a sign-in started before validUntil, and an IdP-initiated one, are refused after it", async () => {
    const p = await provider({ autoProvision: { enabled: true, default_role_id: 2 } })
    await updateSsoProvider(admin, p.sso_provider_id.int32, { allowIdpInitiated: true })
    const started = await answer(p, { email: 'mallory@corp.example' }) // sign-in started while the metadata was current
    const unsolicited = await answer(p, { idpInitiated: true, email: 'mallory@corp.example' })
    // validUntil passes (stored as the metadata upload stores it)
    await env.DB.prepare('UPDATE saml_providers SET metadata_valid_until = ? WHERE sso_provider_id = ?')
      .bind(new Date(Date.now() - 1000).toISOString().replace(/\.\d+Z$/, 'Z'), p.sso_provider_id.int32)
      .run()
    await expect(startSamlLogin(anon, p.slug)).rejects.toMatchObject({ status: 409 })
    expectRefused(await post(p, started), 'Your SSO Connection failed, please contact your Administrator', 'metadata_expired')
    expectRefused(await post(p, unsolicited), 'Your SSO Connection failed, please contact your Administrator', 'metadata_expired')
  })

  it("a disabled user's refused sign-in changes nothing: the IdP's role claim is not applied", async () => {
    const p = await provider({ autoProvision: { enabled: true, default_role_id: 2, role_provision: true } })
    const u = await expectSignedIn(await signIn(p, { email: 'zed@corp.example', attributes: { [ROLE_CLAIM]: ['bh-read-only'] } }), 'zed@corp.example')
    await admin.updateUser(u.id, { is_disabled: true })
    const before = (await admin.listUsers()).data.users.find((x) => x.id === u.id)!
    expect(before.roles).toEqual(['Read-Only'])
    const r = await signIn(p, { email: 'zed@corp.example', attributes: { [ROLE_CLAIM]: ['bh-administrator'] } })
    expect(r.location).toBe(`${BASE}/ui/user-disabled`)
    expect(r.setCookie).toBeNull()
    const after = (await admin.listUsers()).data.users.find((x) => x.id === u.id)!
    expect(after).toEqual(before)
  })

  it("the IdP's SessionNotOnOrAfter bounds the session and its cookie; one already past refuses the sign-in", async () => {
    const p = await provider({ autoProvision: { enabled: true, default_role_id: 2 } })
    const end = Date.now() + 600_000
    const r = await signIn(p, { email: 'abe@corp.example', sessionNotOnOrAfter: end })
    await expectSignedIn(r, 'abe@corp.example')
    const maxAge = Number(/Max-Age=(\d+)/.exec(r.setCookie!)![1])
    expect(maxAge).toBeGreaterThan(590)
    expect(maxAge).toBeLessThanOrEqual(600)
    const claims = JSON.parse(atob(r.sessionToken!.split('.')[1].replace(/-/g, '+').replace(/_/g, '/')))
    expect(claims.exp).toBe(Math.floor(end / 1000))
    const stored = await env.DB.prepare('SELECT expires_at FROM sessions WHERE id = ?').bind(claims.jti).first<string>('expires_at')
    expect(Date.parse(stored!)).toBe(Math.floor(end / 1000) * 1000)
    expectRefused(await signIn(p, { email: 'abe@corp.example', sessionNotOnOrAfter: Date.now() - 1000 }), UNAUTHENTICATED, 'session_not_on_or_after')
  })

  it("linking a password user to a provider ends the sessions they opened with the password", async () => {
    const p = await provider()
    const bea = await admin.createUser({ principal_name: 'bea', email_address: 'bea@corp.example', roles: ['User'], secret: 'correct-horse-battery-bea' })
    const anonymous = new EdgeHoundClient({ baseUrl: BASE, fetch: noFollow })
    const { data } = await anonymous.login('bea', 'correct-horse-battery-bea')
    const session = client({ kind: 'bearer', jwt: data.session_token })
    expect((await session.self()).data.principal_name).toBe('bea')
    await admin.updateUser(bea.data.id, { sso_provider_id: p.sso_provider_id.int32 })
    await expect(session.self()).rejects.toMatchObject({ status: 401 })
  })
})

afterAll(async () => {
  // Only the users the happy paths meant to exist were created, and the service still answers.
  const created = (await admin.listUsers()).data.users.filter((u) => !usersBefore.has(u.id)).map((u) => u.principal_name).sort()
  expect(created).toEqual(
    [
      'carol@corp.example', 'erin@corp.example', 'finn@corp.example', 'gus@corp.example', 'hal@corp.example', 'ivy',
      'jo@corp.example', 'kim@corp.example', 'nia@corp.example.evil.example', 'olga@corp.example', 'pat@corp.example', 'quinn@corp.example',
      'rae@corp.example', 'sam', 'tess', 'vic@corp.example', 'wes@corp.example', 'yara@corp.example', 'zed@corp.example', 'abe@corp.example',
      'bea', 'cy@corp.example',
    ].sort(),
  )
  expect((await workerFetch(new Request(`${BASE}/api/v2/saml/sso`))).status).toBe(200)
  vi.restoreAllMocks()
})
