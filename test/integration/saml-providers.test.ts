import { beforeAll, describe, expect, it } from 'vitest'
import { DOMParser } from '@xmldom/xmldom'
import { createApp } from '../../src/app'
import type { EdgeHoundClient } from '../../src/client'
import {
  createSamlProvider,
  deleteSamlProvider,
  deleteSsoProvider,
  getSamlProvider,
  getSpMetadata,
  listSamlProviders,
  listSsoProviders,
  samlProviderForm,
  updateSsoProvider,
  type SamlProviderJson,
} from '../../src/client/saml'
import { SamlProviderSchema, SsoProviderSchema } from '../../src/saml/saml.routes'
import { adminToken, BASE, client, env, expectEnvelope, workerFetch } from '../helpers'
import { EXPECTED, HOSTILE_FIXTURES, IDP_FIXTURES } from '../fixtures/saml/corpus'
import { certificateRows, samlRow, samlTables, ssoRow } from '../fixtures/saml/db'

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/
const MD = 'urn:oasis:names:tc:SAML:2.0:metadata'
/** Every field of the spec's SAML provider table. */
const SPEC_FIELDS = [
  'id', 'created_at', 'updated_at', 'deleted_at', 'name', 'display_name', 'idp_issuer_uri', 'idp_sso_uri',
  'principal_attribute_mappings', 'sp_issuer_uri', 'sp_sso_uri', 'sp_metadata_uri', 'sp_acs_uri', 'sso_provider_id',
]

let admin: EdgeHoundClient
beforeAll(async () => {
  admin = await adminToken()
})

let seq = 0
const uniqueName = (base: string) => `${base} ${++seq}`
const slugOf = (name: string) => name.toLowerCase().replace(/ /g, '-')

function expectSpUrls(p: SamlProviderJson, slug: string, base = BASE) {
  expect(p.sp_issuer_uri).toBe(`${base}/api/v2/sso/${slug}`)
  expect(p.sp_sso_uri).toBe(`${base}/api/v2/sso/${slug}/login`)
  expect(p.sp_metadata_uri).toBe(`${base}/api/v2/sso/${slug}/metadata`)
  expect(p.sp_acs_uri).toBe(`${base}/api/v2/sso/${slug}/callback`)
}

describe('create: every IdP of the corpus gives a provider whose fields are right', () => {
  for (const [file, xml] of Object.entries(IDP_FIXTURES)) {
    it(file, async () => {
      const want = EXPECTED[file]
      const name = `IdP ${file.replace('.xml', '')}`
      const { data: p } = await createSamlProvider(admin, { name, metadata: xml, fileName: file })

      // the response: every field of the spec, in the spec's shapes, plus the extras
      for (const f of SPEC_FIELDS) expect(p, f).toHaveProperty(f)
      expect(SamlProviderSchema.strict().parse(p)).toEqual(p)
      expect(p).toMatchObject({
        name,
        display_name: name,
        idp_issuer_uri: want.entity_id,
        idp_sso_uri: want.sso_url,
        idp_sso_binding: want.binding,
        principal_attribute_mappings: [],
        deleted_at: { time: '0001-01-01T00:00:00.000Z', valid: false },
        sso_provider_id: { int32: expect.any(Number), valid: true },
        root_uri_version: 2,
        metadata_valid_until: want.valid_until,
        signing_certificates: want.certs,
      })
      expect(p.created_at).toMatch(RFC3339)
      expect(p.updated_at).toBe(p.created_at)
      expectSpUrls(p, slugOf(name))

      // what was stored: both rows, the raw XML verbatim, one row per certificate
      const saml = await samlRow(p.id)
      expect(saml).toMatchObject({ name, issuer_uri: want.entity_id, single_sign_on_uri: want.sso_url, sso_binding: want.binding, metadata_xml: xml })
      const sso = await ssoRow(p.sso_provider_id.int32)
      expect(sso).toMatchObject({ name, slug: slugOf(name), type: 1 })
      expect(JSON.parse(sso!.config)).toEqual({ auto_provision: { enabled: false, default_role_id: 0, role_provision: false }, allow_idp_initiated: false, allow_sha1: false })
      const certs = await certificateRows(p.id)
      expect(certs.map(({ der_base64: _, position: __, ...c }) => c)).toEqual(want.certs.map((c) => ({ saml_provider_id: p.id, ...c })))
      expect(certs.map((c) => c.position)).toEqual(want.certs.map((_, i) => i))
    })
  }
})

describe('the deprecated endpoint and its replacement', () => {
  it('behave the same; only the deprecated one sends Deprecation and Link', async () => {
    const formFor = (name: string) => samlProviderForm({ name, metadata: IDP_FIXTURES['okta.xml'] })
    const old = await admin.raw('POST', '/api/v2/saml/providers', formFor('Deprecated Route'))
    const neu = await admin.raw('POST', '/api/v2/sso-providers/saml', formFor('Successor Route'))
    expect(old.status).toBe(200)
    expect(neu.status).toBe(200)
    expect(old.headers.get('deprecation')).toMatch(/^@\d+$/)
    expect(old.headers.get('link')).toBe('</api/v2/sso-providers/saml>; rel="successor-version"')
    expect(neu.headers.get('deprecation')).toBeNull()
    expect(neu.headers.get('link')).toBeNull()
    const a = ((await old.json()) as { data: SamlProviderJson }).data
    const b = ((await neu.json()) as { data: SamlProviderJson }).data
    const strip = (p: SamlProviderJson) => ({ ...p, id: 0, name: '', display_name: '', created_at: '', updated_at: '', sso_provider_id: null, sp_issuer_uri: '', sp_sso_uri: '', sp_metadata_uri: '', sp_acs_uri: '' })
    expect(strip(a)).toEqual(strip(b))
  })

  it('the deprecated endpoint sends its headers on errors too', async () => {
    const res = await admin.raw('POST', '/api/v2/saml/providers', samlProviderForm({ name: 'x' }))
    expect(res.headers.get('link')).toBe('</api/v2/sso-providers/saml>; rel="successor-version"')
    await expectEnvelope(res, 400, 'form is missing "metadata" parameter')
  })

  it('the OpenAPI document marks only the old one deprecated and documents the form', async () => {
    const res = await workerFetch(new Request(`${BASE}/api/v2/spec`))
    const doc = (await res.json()) as { paths: Record<string, Record<string, Record<string, unknown>>> }
    const old = doc.paths['/api/v2/saml/providers'].post
    const neu = doc.paths['/api/v2/sso-providers/saml'].post
    expect(old.deprecated).toBe(true)
    expect(neu.deprecated).toBeUndefined()
    expect(old.operationId).toBe('CreateSamlProvider')
    expect(old['x-permission']).toBe('auth/ManageProviders')
    const form = (neu.requestBody as { content: Record<string, { schema: { properties: Record<string, unknown>; required: string[] } }> }).content[
      'multipart/form-data'
    ].schema
    expect(form.required).toEqual(['name', 'metadata'])
    expect(form.properties.metadata).toMatchObject({ type: 'string', format: 'binary' })
    expect(Object.keys(form.properties)).toEqual(['name', 'metadata', 'config.auto_provision.enabled', 'config.auto_provision.default_role_id', 'config.auto_provision.role_provision', 'config.allow_idp_initiated', 'config.allow_sha1'])
    expect(doc.paths['/api/v2/sso/{slug}/metadata'].get.security).toEqual([])
  })
})

describe('SP URLs resolve', () => {
  it('GET /api/v2/sso/{slug}/metadata serves SP metadata without authentication', async () => {
    const { data: p } = await createSamlProvider(admin, { name: 'Corp Okta Prod', metadata: IDP_FIXTURES['okta.xml'] })
    const anonymous = client()
    const { contentType, xml } = await getSpMetadata(anonymous, 'corp-okta-prod')
    expect(contentType).toBe('application/samlmetadata+xml')
    // the advertised URL is the one served
    const res = await workerFetch(new Request(p.sp_metadata_uri))
    expect(res.status).toBe(200)
    const noValidUntil = (x: string) => x.replace(/ validUntil="[^"]*"/, '')
    expect(noValidUntil(await res.text())).toBe(noValidUntil(xml))

    const doc = new DOMParser().parseFromString(xml, 'application/xml')
    const root = doc.documentElement!
    expect(root.namespaceURI).toBe(MD)
    expect(root.getAttribute('entityID')).toBe(p.sp_issuer_uri)
    const acs = root.getElementsByTagNameNS(MD, 'AssertionConsumerService')
    expect(acs.length).toBe(1)
    expect(acs[0].getAttribute('Binding')).toBe('urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST')
    expect(acs[0].getAttribute('Location')).toBe(p.sp_acs_uri)
    expect(root.getElementsByTagNameNS(MD, 'NameIDFormat').length).toBeGreaterThan(0)
  })

  it('an unknown slug is a 404 envelope', async () => {
    await expectEnvelope(await client().raw('GET', '/api/v2/sso/no-such-provider/metadata'), 404, 'no SSO provider has this slug')
    await expectEnvelope(await client().raw('GET', '/api/v2/sso/Corp%20Okta/metadata'), 404)
  })

  it('uses PUBLIC_BASE_URL when it is set', async () => {
    const app = createApp()
    const env2 = { ...env, PUBLIC_BASE_URL: 'https://bloodhound.example.com/' }
    const req = await admin.buildRequest('POST', '/api/v2/sso-providers/saml', samlProviderForm({ name: 'Base URL Test', metadata: IDP_FIXTURES['keycloak.xml'] }))
    req.headers.set('CF-Connecting-IP', '10.9.9.9')
    const res = await app.fetch(req, env2)
    expect(res.status).toBe(200)
    const p = ((await res.json()) as { data: SamlProviderJson }).data
    expectSpUrls(p, 'base-url-test', 'https://bloodhound.example.com')
    const meta = await app.fetch(new Request(`${BASE}/api/v2/sso/base-url-test/metadata`, { headers: { 'CF-Connecting-IP': '10.9.9.10' } }), env2)
    expect(await meta.text()).toContain('entityID="https://bloodhound.example.com/api/v2/sso/base-url-test"')
  })
})

describe('management', () => {
  it('GET /api/v2/saml lists providers; GET /api/v2/saml/providers/{id} returns one', async () => {
    const { data: p } = await createSamlProvider(admin, { name: uniqueName('Listed'), metadata: IDP_FIXTURES['google-workspace.xml'] })
    const list = await listSamlProviders(admin)
    const found = list.data.saml_providers.find((x) => x.id === p.id)
    expect(found).toEqual(p)
    for (const x of list.data.saml_providers) SamlProviderSchema.strict().parse(x)
    expect((await getSamlProvider(admin, p.id)).data).toEqual(p)
  })

  it('GET /api/v2/sso-providers shows id, name, slug, type, details, config, login_uri, callback_uri', async () => {
    const name = uniqueName('SSO Listed')
    const { data: p } = await createSamlProvider(admin, { name, metadata: IDP_FIXTURES['pingfederate.xml'], autoProvision: { enabled: true, default_role_id: 2, role_provision: true } })
    const { data } = await listSsoProviders(admin)
    const s = data.find((x) => x.id === p.sso_provider_id.int32)!
    expect(SsoProviderSchema.strict().parse(s)).toEqual(s)
    expect(s).toEqual({
      id: p.sso_provider_id.int32,
      name,
      slug: slugOf(name),
      type: 'SAML',
      details: p,
      config: { auto_provision: { enabled: true, default_role_id: 2, role_provision: true }, allow_idp_initiated: false, allow_sha1: false },
      login_uri: p.sp_sso_uri,
      callback_uri: p.sp_acs_uri,
    })
  })

  it('malformed ids are 400, unknown ids 404', async () => {
    await expectEnvelope(await admin.raw('GET', '/api/v2/saml/providers/abc'), 400, 'saml_provider_id is malformed: expected a positive integer')
    await expectEnvelope(await admin.raw('GET', '/api/v2/saml/providers/99999999999'), 400, 'saml_provider_id is malformed')
    await expectEnvelope(await admin.raw('GET', '/api/v2/saml/providers/0'), 400, 'expected a positive 32-bit integer')
    await expectEnvelope(await admin.raw('GET', '/api/v2/saml/providers/999999'), 404, 'resource not found')
    await expectEnvelope(await admin.raw('DELETE', '/api/v2/saml/providers/999999'), 404, 'resource not found')
    await expectEnvelope(await admin.raw('DELETE', '/api/v2/sso-providers/-1'), 400, 'sso_provider_id is malformed')
    await expectEnvelope(await admin.raw('DELETE', '/api/v2/sso-providers/999999'), 404, 'resource not found')
    await expectEnvelope(await admin.raw('PATCH', '/api/v2/sso-providers/999999', samlProviderForm({ name: 'x' })), 404, 'resource not found')
  })

  it('DELETE /api/v2/saml/providers/{id} removes the provider, its SSO provider and certificates', async () => {
    const { data: p } = await createSamlProvider(admin, { name: uniqueName('Doomed'), metadata: IDP_FIXTURES['shibboleth.xml'] })
    expect(await certificateRows(p.id)).toHaveLength(2)
    expect(await deleteSamlProvider(admin, p.id)).toEqual({ data: { affected_users: [] } })
    expect(await samlRow(p.id)).toBeNull()
    expect(await ssoRow(p.sso_provider_id.int32)).toBeNull()
    expect(await certificateRows(p.id)).toHaveLength(0)
    await expectEnvelope(await admin.raw('GET', `/api/v2/saml/providers/${p.id}`), 404)
    await expectEnvelope(await admin.raw('DELETE', `/api/v2/saml/providers/${p.id}`), 404)
    // audit: the create and the delete each wrote intent + success; the second delete intent + failure; no certificate in fields
    const rows = await env.DB.prepare(
      `SELECT action, status, fields FROM audit_logs WHERE action IN ('CreateSAMLIdentityProvider', 'DeleteSAMLIdentityProvider') ORDER BY id DESC LIMIT 6`,
    ).all<{ action: string; status: string; fields: string }>()
    expect(rows.results.reverse().map((r) => [r.action, r.status])).toEqual([
      ['CreateSAMLIdentityProvider', 'intent'],
      ['CreateSAMLIdentityProvider', 'success'],
      ['DeleteSAMLIdentityProvider', 'intent'],
      ['DeleteSAMLIdentityProvider', 'success'],
      ['DeleteSAMLIdentityProvider', 'intent'],
      ['DeleteSAMLIdentityProvider', 'failure'],
    ])
    expect(rows.results.map((r) => r.fields).join('')).not.toMatch(/BEGIN CERTIFICATE|X509Certificate|EntityDescriptor/)
  })

  it('DELETE /api/v2/sso-providers/{id} removes everything too, and the name can be used again', async () => {
    const name = uniqueName('Reused')
    const { data: p } = await createSamlProvider(admin, { name, metadata: IDP_FIXTURES['jumpcloud.xml'] })
    expect(await deleteSsoProvider(admin, p.sso_provider_id.int32)).toEqual({ data: { affected_users: [] } })
    expect(await samlRow(p.id)).toBeNull()
    expect(await ssoRow(p.sso_provider_id.int32)).toBeNull()
    expect(await certificateRows(p.id)).toHaveLength(0)
    await expectEnvelope(await client().raw('GET', `/api/v2/sso/${slugOf(name)}/metadata`), 404)
    const again = await createSamlProvider(admin, { name, metadata: IDP_FIXTURES['jumpcloud.xml'] })
    expect(again.data.id).toBeGreaterThan(p.id) // ids are not reused
  })
})

describe('PATCH /api/v2/sso-providers/{id}', () => {
  it('renames: name, display name, slug and SP URLs follow; the old slug stops resolving', async () => {
    const { data: p } = await createSamlProvider(admin, { name: uniqueName('Before Rename'), metadata: IDP_FIXTURES['okta.xml'] })
    const oldSlug = slugOf(p.name)
    const { data: u } = await updateSsoProvider(admin, p.sso_provider_id.int32, { name: '  After Rename  ' })
    expect(u).toMatchObject({ id: p.id, name: 'After Rename', display_name: 'After Rename', idp_issuer_uri: p.idp_issuer_uri, created_at: p.created_at })
    expect(u.updated_at >= p.updated_at).toBe(true)
    expectSpUrls(u, 'after-rename')
    expect((await ssoRow(p.sso_provider_id.int32))!.slug).toBe('after-rename')
    expect((await samlRow(p.id))!.display_name).toBe('After Rename')
    await expectEnvelope(await client().raw('GET', `/api/v2/sso/${oldSlug}/metadata`), 404)
    expect((await getSpMetadata(client(), 'after-rename')).xml).toContain('entityID="http://edgehound.test/api/v2/sso/after-rename"')
  })

  it('replaces the metadata: issuer, SSO URL and the whole certificate set', async () => {
    const { data: p } = await createSamlProvider(admin, { name: uniqueName('Metadata Swap'), metadata: IDP_FIXTURES['okta.xml'] })
    const { data: u } = await updateSsoProvider(admin, p.sso_provider_id.int32, { metadata: IDP_FIXTURES['shibboleth.xml'] })
    const want = EXPECTED['shibboleth.xml']
    expect(u).toMatchObject({ name: p.name, idp_issuer_uri: want.entity_id, idp_sso_uri: want.sso_url, signing_certificates: want.certs, metadata_valid_until: want.valid_until })
    expect((await samlRow(p.id))!.metadata_xml).toBe(IDP_FIXTURES['shibboleth.xml'])
    expect((await certificateRows(p.id)).map((c) => c.sha256_fingerprint)).toEqual(want.certs.map((c) => c.sha256_fingerprint))
  })

  it('merges config fields into the current config', async () => {
    const { data: p } = await createSamlProvider(admin, { name: uniqueName('Config'), metadata: IDP_FIXTURES['okta.xml'] })
    const id = p.sso_provider_id.int32
    await updateSsoProvider(admin, id, { autoProvision: { enabled: true, default_role_id: 3 } })
    expect(JSON.parse((await ssoRow(id))!.config)).toEqual({ auto_provision: { enabled: true, default_role_id: 3, role_provision: false }, allow_idp_initiated: false, allow_sha1: false })
    await updateSsoProvider(admin, id, { autoProvision: { role_provision: true } })
    expect(JSON.parse((await ssoRow(id))!.config)).toEqual({ auto_provision: { enabled: true, default_role_id: 3, role_provision: true }, allow_idp_initiated: false, allow_sha1: false })
    await updateSsoProvider(admin, id, { autoProvision: { enabled: false } })
    expect(JSON.parse((await ssoRow(id))!.config)).toEqual({ auto_provision: { enabled: false, default_role_id: 0, role_provision: false }, allow_idp_initiated: false, allow_sha1: false })
  })

  it('a rejected update changes nothing: bad metadata, bad name, bad config, taken name', async () => {
    const { data: p } = await createSamlProvider(admin, { name: uniqueName('Untouched'), metadata: IDP_FIXTURES['okta.xml'] })
    const { data: other } = await createSamlProvider(admin, { name: uniqueName('Other'), metadata: IDP_FIXTURES['okta.xml'] })
    const id = p.sso_provider_id.int32
    const before = await samlTables()
    const patch = (input: Parameters<typeof samlProviderForm>[0]) => admin.raw('PATCH', `/api/v2/sso-providers/${id}`, samlProviderForm(input))
    // a valid rename together with invalid metadata: neither is applied
    await expectEnvelope(await patch({ name: 'Renamed Anyway', metadata: HOSTILE_FIXTURES['xxe.xml'] }), 400, 'must not contain a document type declaration')
    await expectEnvelope(await patch({ name: '   ' }), 400, '"name" must not be blank')
    await expectEnvelope(await patch({ autoProvision: { enabled: true } }), 400, 'is required when auto provisioning is enabled')
    const conflict = await expectEnvelope(await patch({ name: other.name, metadata: IDP_FIXTURES['keycloak.xml'] }), 409, 'sso provider name must be unique')
    expect(conflict.errors[0].context).toBe('form.name')
    await expectEnvelope(await patch({ name: other.name.toUpperCase() }), 409, `another provider already has the slug "${slugOf(other.name)}"`)
    // a JSON body is how an OIDC provider is updated; for a SAML provider it is a 415, nothing applied
    const json = await admin.raw('PATCH', `/api/v2/sso-providers/${id}`, JSON.stringify({ name: 'Renamed By JSON' }), { contentType: 'application/json' })
    await expectEnvelope(json, 415, 'a SAML provider is updated with a multipart/form-data body')
    const plain = await admin.raw('PATCH', `/api/v2/sso-providers/${id}`, 'name=x', { contentType: 'text/plain' })
    await expectEnvelope(plain, 415, 'expected multipart/form-data or application/json')
    expect(await samlTables()).toEqual(before)
  })

  it('an empty update returns the provider unchanged', async () => {
    const { data: p } = await createSamlProvider(admin, { name: uniqueName('Empty Patch'), metadata: IDP_FIXTURES['okta.xml'] })
    const before = await samlTables()
    const form = new FormData()
    const res = await admin.raw('PATCH', `/api/v2/sso-providers/${p.sso_provider_id.int32}`, form)
    expect(res.status).toBe(200)
    expect(((await res.json()) as { data: SamlProviderJson }).data).toEqual(p)
    expect(await samlTables()).toEqual(before)
  })
})
