/**
 * BloodHound's legacy SAML URLs (`/api/{version}/login/saml/{slug}`, `/acs`, `/metadata`): the same handlers as
 * /api/v2/sso/…, with the legacy URL set (src/saml/sp.ts, legacySpUrls). A sign-in started at the legacy login
 * URL names the legacy ACS and entity id, binds the browser at the legacy ACS path, and finishes there; a
 * response addressed to the other URL family is refused.
 */
import { beforeAll, describe, expect, it, vi } from 'vitest'
import { env } from 'cloudflare:workers'
import { EdgeHoundClient } from '../../src/client'
import { createSamlProvider } from '../../src/client/saml'
import { adminToken, BASE, client, expectEnvelope, workerFetch } from '../helpers'
import { b64, buildResponse, idpMetadata, KEY_A, sign } from '../fixtures/saml/idp-signer'

const noFollow = (req: Request) => workerFetch(new Request(req, { redirect: 'manual' }))
const anon = new EdgeHoundClient({ baseUrl: BASE, fetch: noFollow })
const UNAUTHENTICATED = 'Your SSO was unable to authenticate your user, please contact your Administrator'

let admin: EdgeHoundClient
let slug = ''
const idp = 'https://idp-legacy.test.example/saml/metadata'
beforeAll(async () => {
  vi.spyOn(console, 'warn').mockImplementation(() => {})
  admin = await adminToken()
  const { data } = await createSamlProvider(admin, { name: 'Legacy Urls', metadata: idpMetadata(idp, KEY_A), autoProvision: { enabled: true, default_role_id: 3 } })
  slug = data.sp_issuer_uri.split('/').pop()!
})

async function inflate(b64text: string): Promise<string> {
  const bytes = Uint8Array.from(atob(b64text), (c) => c.charCodeAt(0))
  return new Response(new Blob([bytes]).stream().pipeThrough(new DecompressionStream('deflate-raw'))).text()
}

/** GET the legacy login URL; returns the AuthnRequest XML, its ID and the binding cookie. */
async function legacyLogin(version = 'v2') {
  const res = await anon.raw('GET', `/api/${version}/login/saml/${slug}`)
  expect(res.status).toBe(302)
  const xml = await inflate(new URL(res.headers.get('location')!).searchParams.get('SAMLRequest')!)
  const id = /\bID="([^"]+)"/.exec(xml)![1]
  const setCookie = res.headers.get('set-cookie')!
  return { xml, id, setCookie, cookie: setCookie.split(';')[0] }
}

const postAcs = (path: string, xml: string, cookie: string) =>
  anon.raw('POST', path, new URLSearchParams({ SAMLResponse: b64(xml) }).toString(), {
    contentType: 'application/x-www-form-urlencoded',
    headers: { Cookie: cookie },
  })

describe('legacy SAML URLs', () => {
  it('login at /api/{version}/login/saml/{slug} names the legacy ACS and entity id and binds the browser at the legacy ACS path', async () => {
    for (const version of ['v1', 'v2']) {
      const root = `${BASE}/api/${version}/login/saml/${slug}`
      const { xml, setCookie } = await legacyLogin(version)
      expect(xml).toContain(`AssertionConsumerServiceURL="${root}/acs"`)
      expect(xml).toContain(`>${root}</saml:Issuer>`)
      expect(setCookie).toContain(`Path=/api/${version}/login/saml/${slug}/acs;`)
    }
  })

  it('the full sign-in at the legacy ACS: 302 to the UI with a session; the user is provisioned', async () => {
    const root = `${BASE}/api/v2/login/saml/${slug}`
    const { id, cookie } = await legacyLogin()
    const xml = await sign(buildResponse({ idpEntityId: idp, acsUrl: `${root}/acs`, spEntityId: root, inResponseTo: id, email: 'legacy@corp.example' }), 'assertion', KEY_A)
    const res = await postAcs(`/api/v2/login/saml/${slug}/acs`, xml, cookie)
    expect(res.status).toBe(302)
    expect(res.headers.get('location')).toBe(`${BASE}/ui`)
    const token = /^token=([^;]+)/.exec(res.headers.getSetCookie().find((v) => v.startsWith('token='))!)![1]
    const me = await client({ kind: 'bearer', jwt: token }).self()
    expect(me.data.principal_name).toBe('legacy@corp.example')
    // the binding is used up at the legacy path
    expect(res.headers.getSetCookie()).toContain(`edgehound_saml_request=; Path=/api/v2/login/saml/${slug}/acs; Max-Age=0; HttpOnly; Secure; SameSite=None`)
  })

  it('a response addressed to /api/v2/sso/{slug}/callback is refused at the legacy ACS (Destination), and nothing is written', async () => {
    const { id, cookie } = await legacyLogin()
    const v2 = `${BASE}/api/v2/sso/${slug}`
    const xml = await sign(buildResponse({ idpEntityId: idp, acsUrl: `${v2}/callback`, spEntityId: v2, inResponseTo: id, email: 'nobody-legacy@corp.example' }), 'assertion', KEY_A)
    const res = await postAcs(`/api/v2/login/saml/${slug}/acs`, xml, cookie)
    expect(res.status).toBe(302)
    expect(res.headers.get('location')).toBe(`${BASE}/ui/login?error=${encodeURIComponent(UNAUTHENTICATED)}`)
    expect(res.headers.getSetCookie().some((v) => v.startsWith('token='))).toBe(false)
    expect(await env.DB.prepare('SELECT COUNT(*) AS n FROM users WHERE principal_name = ?').bind('nobody-legacy@corp.example').first('n')).toBe(0)
  })

  it('metadata at /api/{version}/login/saml/{slug}/metadata advertises the legacy entity id and ACS', async () => {
    const res = await anon.raw('GET', `/api/v1/login/saml/${slug}/metadata`)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('application/samlmetadata+xml')
    const xml = await res.text()
    expect(xml).toContain(`entityID="${BASE}/api/v1/login/saml/${slug}"`)
    expect(xml).toContain(`Location="${BASE}/api/v1/login/saml/${slug}/acs"`)
  })

  it('an unknown version or slug is the envelope 404', async () => {
    await expectEnvelope(await anon.raw('GET', `/api/v3/login/saml/${slug}`), 404)
    await expectEnvelope(await anon.raw('GET', `/api/v2/login/saml/no-such-provider/metadata`), 404)
    await expectEnvelope(await anon.raw('GET', `/api/x/login/saml/${slug}/metadata`), 404)
  })
})

describe('GET /api/v2/sso-providers/{id}/signing-certificate', () => {
  it('answers 404 for every provider (no SP key pair), as BloodHound does for a provider without a certificate', async () => {
    const { data } = await createSamlProvider(admin, { name: 'Cert Less', metadata: idpMetadata('https://idp-cert.test.example/md', KEY_A) })
    await expectEnvelope(
      await admin.raw('GET', `/api/v2/sso-providers/${data.sso_provider_id.int32}/signing-certificate`),
      404,
      'resource not found: this service has no SP signing certificate (AuthnRequests are not signed)',
    )
    await expectEnvelope(await admin.raw('GET', `/api/v2/sso-providers/999999/signing-certificate`), 404, 'resource not found')
    // auth/ManageProviders: no session, no answer
    await expectEnvelope(await anon.raw('GET', `/api/v2/sso-providers/${data.sso_provider_id.int32}/signing-certificate`), 401)
  })
})
