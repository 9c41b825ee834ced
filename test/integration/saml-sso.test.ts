/**
 * The SSO flow URLs every SAML provider hands out: sp_issuer_uri, sp_sso_uri (login), sp_metadata_uri,
 * sp_acs_uri (callback), and GET /api/v2/saml/sso. See docs/saml.md, "SSO endpoints".
 */
import { beforeAll, describe, expect, it } from 'vitest'
import { DOMParser, type Element } from '@xmldom/xmldom'
import { createApp } from '../../src/app'
import { EdgeHoundClient, EdgeHoundError } from '../../src/client'
import {
  createSamlProvider,
  deleteSsoProvider,
  listSamlSignOnEndpoints,
  listSsoProviders,
  postSamlResponse,
  startSamlLogin,
  updateSsoProvider,
  type SamlProviderJson,
} from '../../src/client/saml'
import { adminToken, BASE, env, expectEnvelope, workerFetch } from '../helpers'
import { EXPECTED, IDP_FIXTURES } from '../fixtures/saml/corpus'
import { samlTables } from '../fixtures/saml/db'

const PROTOCOL = 'urn:oasis:names:tc:SAML:2.0:protocol'
const ASSERTION = 'urn:oasis:names:tc:SAML:2.0:assertion'
const MD = 'urn:oasis:names:tc:SAML:2.0:metadata'
const POST = 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST'
const SHIB_REDIRECT = 'https://idp.university.example.edu/idp/profile/SAML2/Redirect/SSO'
const SHIB_POST = 'https://idp.university.example.edu/idp/profile/SAML2/POST/SSO'

/**
 * The worker, without following redirects: a fetch with the default `redirect: 'follow'` would follow the
 * login's 302 to the IdP URL, which the test runtime routes back into this worker (404).
 */
const noFollow = (req: Request) => workerFetch(new Request(req, { redirect: 'manual' }))
const get = (url: string) => noFollow(new Request(url))
const anon = new EdgeHoundClient({ baseUrl: BASE, fetch: noFollow })
let admin: EdgeHoundClient
let adminNoFollow: EdgeHoundClient
beforeAll(async () => {
  const a = await adminToken()
  admin = a
  adminNoFollow = new EdgeHoundClient({ baseUrl: BASE, fetch: noFollow, credentials: { kind: 'token', tokenId: a.tokenId, tokenKey: a.tokenKey } })
})

let seq = 0
async function provider(fixture: string, name = `SSO ${fixture.replace('.xml', '')} ${++seq}`): Promise<SamlProviderJson & { slug: string }> {
  const { data } = await createSamlProvider(admin, { name, metadata: IDP_FIXTURES[fixture] })
  return { ...data, slug: data.sp_issuer_uri.split('/').pop()! }
}

function parseXml(xml: string): Element {
  const doc = new DOMParser({
    onError: (_l: string, m: string) => {
      throw new Error(m)
    },
  }).parseFromString(xml, 'application/xml')
  return doc.documentElement as Element
}

/** SAMLRequest of the Redirect binding → the AuthnRequest, inflated with workerd's own DEFLATE. */
async function inflate(b64: string): Promise<string> {
  const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0))
  return new Response(new Blob([bytes]).stream().pipeThrough(new DecompressionStream('deflate-raw'))).text()
}

/** The login's 302, with its Location picked apart and the AuthnRequest parsed. */
async function redirectLogin(slug: string, relayState?: string) {
  const start = await startSamlLogin(anon, slug, { relayState })
  expect(start.binding).toBe('HTTP-Redirect')
  if (start.binding !== 'HTTP-Redirect') throw new Error('not a redirect')
  expect(start.response.status).toBe(302)
  const location = start.location
  const url = new URL(location)
  const xml = await inflate(url.searchParams.get('SAMLRequest')!)
  return { response: start.response, location, url, xml, request: parseXml(xml) }
}

function expectAuthnRequest(req: Element, want: { destination: string; p: SamlProviderJson }, started: number) {
  expect(req.namespaceURI).toBe(PROTOCOL)
  expect(req.localName).toBe('AuthnRequest')
  expect(req.getAttribute('Version')).toBe('2.0')
  expect(req.getAttribute('ID')).toMatch(/^_[0-9a-f]{40}$/)
  expect(req.getAttribute('Destination')).toBe(want.destination)
  expect(req.getAttribute('AssertionConsumerServiceURL')).toBe(want.p.sp_acs_uri)
  expect(req.getAttribute('ProtocolBinding')).toBe(POST)
  const instant = Date.parse(req.getAttribute('IssueInstant')!)
  expect(req.getAttribute('IssueInstant')).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)
  expect(instant).toBeGreaterThanOrEqual(started - 1000)
  expect(instant).toBeLessThanOrEqual(Date.now() + 1000)
  const issuer = req.getElementsByTagNameNS(ASSERTION, 'Issuer')
  expect(issuer.length).toBe(1)
  expect(issuer[0].textContent).toBe(want.p.sp_issuer_uri)
  expect(req.getElementsByTagNameNS(PROTOCOL, 'NameIDPolicy').length).toBe(1)
}

async function bindingColumns(id: number) {
  return env.DB.prepare('SELECT sso_post_uri, sso_redirect_uri, sso_services_derived FROM saml_providers WHERE id = ?')
    .bind(id)
    .first<{ sso_post_uri: string | null; sso_redirect_uri: string | null; sso_services_derived: number }>()
}

describe('every advertised URL resolves', () => {
  for (const fixture of Object.keys(IDP_FIXTURES)) {
    it(`${fixture}: issuer, login, metadata and callback URLs, fetched exactly as the provider gives them`, async () => {
      const p = await provider(fixture)

      const issuer = await get(p.sp_issuer_uri)
      expect(issuer.status).toBe(200)
      expect(issuer.headers.get('content-type')).toBe('application/samlmetadata+xml')
      const md = await get(p.sp_metadata_uri)
      expect(md.status).toBe(200)
      // the issuer URL serves the same SP metadata as /metadata (validUntil aside: it is "now + 48 h")
      const strip = (s: string) => s.replace(/validUntil="[^"]*"/, '')
      const issuerXml = await issuer.text()
      expect(strip(issuerXml)).toBe(strip(await md.text()))
      const root = parseXml(issuerXml)
      expect(root.namespaceURI).toBe(MD)
      expect(root.getAttribute('entityID')).toBe(p.sp_issuer_uri)

      const login = await get(p.sp_sso_uri)
      if (fixture === 'jumpcloud.xml') {
        // the one POST-only IdP of the corpus: the form page
        expect(login.status).toBe(200)
        expect(await login.text()).toContain(`<form method="post" action="${p.idp_sso_uri}">`)
      } else {
        expect(login.status).toBe(302)
        const endpoint = fixture === 'shibboleth.xml' ? SHIB_REDIRECT : EXPECTED[fixture].sso_url
        expect(login.headers.get('location')!.startsWith(`${endpoint}${endpoint.includes('?') ? '&' : '?'}SAMLRequest=`)).toBe(true)
      }

      const acs = await noFollow(
        new Request(p.sp_acs_uri, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: 'SAMLResponse=PHNhbWw%2B' }),
      )
      // resolves: a response that does not verify is sent back to the login page
      expect(acs.status).toBe(302)
      expect(acs.headers.get('location')).toMatch(new RegExp(`^${BASE}/ui/login\\?error=`))

    })
  }
})

describe('GET /api/v2/sso/{slug}/login: SP-initiated login', () => {
  it('HTTP-Redirect (Okta): 302 to the IdP SSO URL with a SAMLRequest that inflates to the right AuthnRequest', async () => {
    const p = await provider('okta.xml')
    const before = await samlTables()
    const started = Date.now()
    const r = await redirectLogin(p.slug)
    expect(r.location.startsWith(`${p.idp_sso_uri}?SAMLRequest=`)).toBe(true)
    expect([...r.url.searchParams.keys()]).toEqual(['SAMLRequest'])
    expect(r.response.headers.get('cache-control')).toBe('no-store')
    expect(await r.response.text()).toBe('')
    expectAuthnRequest(r.request, { destination: p.idp_sso_uri, p }, started)

    // a new request id each time
    const again = await redirectLogin(p.slug)
    expect(again.request.getAttribute('ID')).not.toBe(r.request.getAttribute('ID'))

    // the only write: the endpoints per binding, derived once from the stored metadata
    const after = await samlTables()
    expect(after.sso_providers).toEqual(before.sso_providers)
    expect(after.saml_provider_certificates).toEqual(before.saml_provider_certificates)
    expect(await bindingColumns(p.id)).toEqual({ sso_post_uri: p.idp_sso_uri, sso_redirect_uri: p.idp_sso_uri, sso_services_derived: 1 })
  })

  it('RelayState: passed to the IdP URL-encoded', async () => {
    const p = await provider('entra-id.xml')
    const relay = '/ui/explore?searchType=node&x=a%20b'
    const r = await redirectLogin(p.slug, relay)
    expect([...r.url.searchParams.keys()]).toEqual(['SAMLRequest', 'RelayState'])
    expect(r.url.searchParams.get('RelayState')).toBe(relay)
    expect(r.location.endsWith(`&RelayState=${encodeURIComponent(relay)}`)).toBe(true)
  })

  it('RelayState that is not a relative path on this site, or too long, is a 400 envelope (nothing written)', async () => {
    const p = await provider('okta.xml')
    const before = await samlTables()
    const cases: [string, RegExp][] = [
      ['https://evil.example/', /starting with "\/"/],
      ['//evil.example/x', /another site/],
      ['/\\evil.example', /another site/],
      ['/\t/evil.example', /printable ASCII/],
      ['ui/explore', /starting with "\/"/],
      ['', /starting with "\/"/],
      [`/${'a'.repeat(512)}`, /at most 512 characters/],
    ]
    for (const [value, message] of cases) {
      const res = await anon.raw('GET', `/api/v2/sso/${p.slug}/login?RelayState=${encodeURIComponent(value)}`)
      const body = await expectEnvelope(res, 400, message)
      expect(body.errors[0].context, value).toBe('query.RelayState')
      expect(res.headers.get('location')).toBeNull()
    }
    // two RelayState values: which one would go? Neither.
    await expectEnvelope(await anon.raw('GET', `/api/v2/sso/${p.slug}/login?RelayState=/a&RelayState=/b`), 400)
    // exactly 512 characters is fine
    const ok = await anon.raw('GET', `/api/v2/sso/${p.slug}/login?RelayState=/${'a'.repeat(511)}`)
    expect(ok.status).toBe(302)
    const after = await samlTables()
    expect(after.sso_providers).toEqual(before.sso_providers)
    expect(after.saml_provider_certificates).toEqual(before.saml_provider_certificates)
  })

  it('Shibboleth: the Redirect binding goes to its own endpoint, which differs from the POST one (idp_sso_uri)', async () => {
    const p = await provider('shibboleth.xml')
    expect(p.idp_sso_uri).toBe(SHIB_POST)
    const started = Date.now()
    const r = await redirectLogin(p.slug)
    expect(r.location.startsWith(`${SHIB_REDIRECT}?SAMLRequest=`)).toBe(true)
    expectAuthnRequest(r.request, { destination: SHIB_REDIRECT, p }, started)
    expect(await bindingColumns(p.id)).toEqual({ sso_post_uri: SHIB_POST, sso_redirect_uri: SHIB_REDIRECT, sso_services_derived: 1 })
  })

  it('Redirect-only IdP with a query in its SSO URL: SAMLRequest is appended with "&"; Destination keeps the "&"', async () => {
    const p = await provider('redirect-only.xml')
    const sso = 'https://idp.redirect-only.example.net/saml/sso?tenant=acme&flow=sp'
    expect(p.idp_sso_uri).toBe(sso)
    const started = Date.now()
    const r = await redirectLogin(p.slug, '/ui')
    expect(r.location.startsWith(`${sso}&SAMLRequest=`)).toBe(true)
    expect(r.url.searchParams.get('tenant')).toBe('acme')
    expect(r.url.searchParams.get('flow')).toBe('sp')
    expect(r.url.searchParams.get('RelayState')).toBe('/ui')
    expectAuthnRequest(r.request, { destination: sso, p }, started)
    expect(r.xml).toContain('Destination="https://idp.redirect-only.example.net/saml/sso?tenant=acme&amp;flow=sp"')
  })

  it('HTTP-POST only (JumpCloud): 200 HTML form posting SAMLRequest and RelayState to the IdP, strict CSP with a nonce', async () => {
    const p = await provider('jumpcloud.xml', 'Jump <Cloud> & "Co"')
    const started = Date.now()
    const start = await startSamlLogin(anon, p.slug, { relayState: '/ui/x?a=1&b="2"' })
    if (start.binding !== 'HTTP-POST') throw new Error(`expected the POST page, got ${start.binding}`)
    const res = start.response
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8')
    expect(res.headers.get('cache-control')).toBe('no-store')
    expect(res.headers.get('x-frame-options')).toBe('DENY')
    const nonce = /'nonce-([A-Za-z0-9+/=]+)'/.exec(start.csp ?? '')?.[1]
    expect(nonce).toBeTruthy()
    expect(start.csp).toBe(`default-src 'none'; script-src 'nonce-${nonce}'; form-action https://sso.jumpcloud.com; base-uri 'none'; frame-ancestors 'none'`)
    const html = start.html
    expect(html).toContain(`<form method="post" action="${p.idp_sso_uri}">`)
    expect(html).toContain('name="RelayState" value="/ui/x?a=1&amp;b=&quot;2&quot;"')
    expect(html).toContain('Jump &lt;Cloud&gt; &amp; &quot;Co&quot;')
    expect(html).not.toContain('<Cloud>')
    expect(html.match(/<script/g)).toHaveLength(1)
    expect(html).toContain(`<script nonce="${nonce}">`)
    const b64 = /name="SAMLRequest" value="([^"]+)"/.exec(html)![1]
    const xml = new TextDecoder().decode(Uint8Array.from(atob(b64), (c) => c.charCodeAt(0)))
    expectAuthnRequest(parseXml(xml), { destination: p.idp_sso_uri, p }, started)
    expect(await bindingColumns(p.id)).toEqual({ sso_post_uri: p.idp_sso_uri, sso_redirect_uri: null, sso_services_derived: 1 })

    // a fresh nonce per page
    const again = await startSamlLogin(anon, p.slug)
    if (again.binding !== 'HTTP-POST') throw new Error('expected the POST page')
    expect(again.csp).not.toContain(nonce!)
    expect(again.html).not.toContain('RelayState')
  })

  it('the derived endpoints are cached, and new metadata (PATCH) makes them stale at once', async () => {
    const p = await provider('shibboleth.xml')
    await redirectLogin(p.slug)
    // the cache is what login uses: change it behind the service's back
    await env.DB.prepare('UPDATE saml_providers SET sso_redirect_uri = ? WHERE id = ?').bind('https://cached.example/sso', p.id).run()
    expect((await redirectLogin(p.slug)).location.startsWith('https://cached.example/sso?SAMLRequest=')).toBe(true)

    // a rename keeps the metadata, and the (still valid) cache
    await updateSsoProvider(admin, p.sso_provider_id.int32, { name: `Renamed Shib ${++seq}` })
    expect(await bindingColumns(p.id)).toMatchObject({ sso_redirect_uri: 'https://cached.example/sso', sso_services_derived: 1 })

    // new metadata resets it in the same write (0006 trigger), so the next login uses the new IdP
    const { data: updated } = await updateSsoProvider(admin, p.sso_provider_id.int32, { metadata: IDP_FIXTURES['okta.xml'] })
    expect(await bindingColumns(p.id)).toEqual({ sso_post_uri: null, sso_redirect_uri: null, sso_services_derived: 0 })
    const slug = updated.sp_issuer_uri.split('/').pop()!
    const started = Date.now()
    const r = await redirectLogin(slug)
    expect(r.location.startsWith(`${EXPECTED['okta.xml'].sso_url}?SAMLRequest=`)).toBe(true)
    expectAuthnRequest(r.request, { destination: EXPECTED['okta.xml'].sso_url, p: updated }, started)
    expect(await bindingColumns(p.id)).toMatchObject({ sso_redirect_uri: EXPECTED['okta.xml'].sso_url, sso_services_derived: 1 })
    // the old slug no longer resolves
    await expectEnvelope(await anon.raw('GET', `/api/v2/sso/${p.slug}/login`), 404)
  })

  it('expired IdP metadata (validUntil passed since upload): 409 envelope, no redirect', async () => {
    const p = await provider('google-workspace.xml')
    expect(p.metadata_valid_until).toBe('2099-06-30T17:25:41.000Z')
    // time cannot be moved inside the worker: move the stored date instead
    await env.DB.prepare('UPDATE saml_providers SET metadata_valid_until = ? WHERE id = ?').bind('2020-01-01T00:00:00.000Z', p.id).run()
    const res = await anon.raw('GET', `/api/v2/sso/${p.slug}/login`)
    const body = await expectEnvelope(res, 409, 'the IdP metadata of this SSO provider expired at 2020-01-01T00:00:00.000Z')
    expect(body.errors[0].context).toBe('saml')
    expect(res.headers.get('location')).toBeNull()
    await env.DB.prepare('UPDATE saml_providers SET metadata_valid_until = ? WHERE id = ?').bind(p.metadata_valid_until, p.id).run()
    expect((await anon.raw('GET', `/api/v2/sso/${p.slug}/login`)).status).toBe(302)
  })

  it('uses PUBLIC_BASE_URL for the ACS URL and the issuer when it is set', async () => {
    const p = await provider('okta.xml')
    const app = createApp()
    const env2 = { ...env, PUBLIC_BASE_URL: 'https://bloodhound.example.com' }
    const res = await app.fetch(new Request(`${BASE}/api/v2/sso/${p.slug}/login`, { headers: { 'CF-Connecting-IP': '10.7.7.7' }, redirect: 'manual' }), env2)
    expect(res.status).toBe(302)
    const req = parseXml(await inflate(new URL(res.headers.get('location')!).searchParams.get('SAMLRequest')!))
    expect(req.getAttribute('AssertionConsumerServiceURL')).toBe(`https://bloodhound.example.com/api/v2/sso/${p.slug}/callback`)
    expect(req.getElementsByTagNameNS(ASSERTION, 'Issuer')[0].textContent).toBe(`https://bloodhound.example.com/api/v2/sso/${p.slug}`)
  })

  it('credentials are not needed and not looked at (an administrator gets the same)', async () => {
    const p = await provider('okta.xml')
    const res = await adminNoFollow.raw('GET', `/api/v2/sso/${p.slug}/login`)
    expect(res.status).toBe(302)
    expect(res.headers.get('location')!.startsWith(`${p.idp_sso_uri}?SAMLRequest=`)).toBe(true)
  })
})

describe('POST /api/v2/sso/{slug}/callback: assertion consumer service', () => {
  it('a response that does not verify: 302 to the login page with BloodHound\'s message, no cookie; nothing stored', async () => {
    const p = await provider('keycloak.xml')
    const before = await samlTables()
    const r = await postSamlResponse(anon, p.slug, btoa('<samlp:Response/>'), '/ui')
    expect(r.location).toBe(`${BASE}/ui/login?error=${encodeURIComponent('Your SSO was unable to authenticate your user, please contact your Administrator')}`)
    expect(r.setCookie).toBeNull()
    // an empty form is refused the same way
    const empty = await anon.raw('POST', `/api/v2/sso/${p.slug}/callback`, '', { contentType: 'application/x-www-form-urlencoded' })
    expect(empty.status).toBe(302)
    expect(empty.headers.get('location')).toMatch(/\/ui\/login\?error=/)
    expect(await samlTables()).toEqual(before)
    // the refusal is a LoginAttempt failure in the audit log, although the answer is a redirect
    const audit = await env.DB.prepare(`SELECT action, status FROM audit_logs WHERE request_id = ?`).bind(empty.headers.get('requestid')).all()
    expect(audit.results).toEqual([{ action: 'LoginAttempt', status: 'failure' }])
  })

  it('other content types (JSON, multipart) are 415; bodies over 1 MiB 413; GET is 405 with Allow: POST', async () => {
    const p = await provider('keycloak.xml')
    await expectEnvelope(await anon.raw('POST', `/api/v2/sso/${p.slug}/callback`, '{"SAMLResponse":"x"}'), 415, 'expected one of application/x-www-form-urlencoded')
    const form = new FormData()
    form.set('SAMLResponse', btoa('<samlp:Response/>'))
    await expectEnvelope(await anon.raw('POST', `/api/v2/sso/${p.slug}/callback`, form), 415, 'unsupported content type "multipart/form-data"')
    const big = `SAMLResponse=${'A'.repeat(1024 * 1024)}`
    await expectEnvelope(await anon.raw('POST', `/api/v2/sso/${p.slug}/callback`, big, { contentType: 'application/x-www-form-urlencoded' }), 413)
    const get = await anon.raw('GET', `/api/v2/sso/${p.slug}/callback`)
    await expectEnvelope(get, 405, 'method GET is not allowed on this path; allowed: POST')
    expect(get.headers.get('allow')).toBe('POST')
  })
})

describe('unknown slugs', () => {
  it('are 404 envelopes on every SSO URL, including slugs no provider could have', async () => {
    await provider('okta.xml') // a provider exists; it is not these
    for (const slug of ['no-such-provider', 'Corp%20Okta', 'UPPER', 'a.b', '-x-%00', '..%2Fadmin']) {
      await expectEnvelope(await anon.raw('GET', `/api/v2/sso/${slug}`), 404, 'no SSO provider has this slug')
      await expectEnvelope(await anon.raw('GET', `/api/v2/sso/${slug}/login`), 404, 'no SSO provider has this slug')
      await expectEnvelope(await anon.raw('GET', `/api/v2/sso/${slug}/login?RelayState=/ui`), 404, 'no SSO provider has this slug')
      await expectEnvelope(await anon.raw('GET', `/api/v2/sso/${slug}/metadata`), 404, 'no SSO provider has this slug')
      await expectEnvelope(
        await anon.raw('POST', `/api/v2/sso/${slug}/callback`, 'SAMLResponse=x', { contentType: 'application/x-www-form-urlencoded' }),
        404,
        'no SSO provider has this slug',
      )
    }
  })

  it('a deleted provider stops resolving', async () => {
    const p = await provider('pingfederate.xml')
    expect((await anon.raw('GET', `/api/v2/sso/${p.slug}/login`)).status).toBe(302)
    await deleteSsoProvider(admin, p.sso_provider_id.int32)
    await expectEnvelope(await anon.raw('GET', `/api/v2/sso/${p.slug}/login`), 404)
    await expectEnvelope(await anon.raw('GET', `/api/v2/sso/${p.slug}`), 404)
    await expectEnvelope(await anon.raw('POST', `/api/v2/sso/${p.slug}/callback`, 'a=b', { contentType: 'application/x-www-form-urlencoded' }), 404)
  })
})

describe('GET /api/v2/saml/sso', () => {
  it('lists every provider with its login URL, without credentials, in the order of the SSO provider list', async () => {
    const p = await provider('adfs.xml', 'Sign On Listed')
    const { data } = await listSamlSignOnEndpoints(anon)
    const { data: sso } = await listSsoProviders(admin)
    expect(data.endpoints).toEqual(sso.map((s) => ({ name: s.name, initiation_url: s.login_uri })))
    expect(data.endpoints).toContainEqual({ name: 'Sign On Listed', initiation_url: p.sp_sso_uri })
    for (const e of data.endpoints) expect(Object.keys(e).sort()).toEqual(['initiation_url', 'name'])
    // every listed URL is a working login
    for (const e of data.endpoints) expect([200, 302]).toContain((await get(e.initiation_url)).status)

    await deleteSsoProvider(admin, p.sso_provider_id.int32)
    const after = await listSamlSignOnEndpoints(anon)
    expect(after.data.endpoints.map((e) => e.name)).not.toContain('Sign On Listed')
    expect(after.data.endpoints).toHaveLength(data.endpoints.length - 1)
  })

  it('uses PUBLIC_BASE_URL when set', async () => {
    const p = await provider('okta.xml')
    const res = await createApp().fetch(new Request(`${BASE}/api/v2/saml/sso`, { headers: { 'CF-Connecting-IP': '10.7.7.8' } }), {
      ...env,
      PUBLIC_BASE_URL: 'https://bloodhound.example.com/',
    })
    const { data } = (await res.json()) as { data: { endpoints: { name: string; initiation_url: string }[] } }
    expect(data.endpoints).toContainEqual({ name: p.name, initiation_url: `https://bloodhound.example.com/api/v2/sso/${p.slug}/login` })
  })
})
