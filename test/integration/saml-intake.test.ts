/**
 * Hostile and broken input to the create endpoints: every refusal is the spec's envelope with a message that
 * says what is wrong, and the database is exactly as it was before the request.
 */
import { beforeAll, describe, expect, it } from 'vitest'
import type { EdgeHoundClient } from '../../src/client'
import { createSamlProvider, samlProviderForm } from '../../src/client/saml'
import { adminSession, adminToken, client, expectEnvelope, userWithRole } from '../helpers'
import { HOSTILE_FIXTURES, IDP_FIXTURES } from '../fixtures/saml/corpus'
import { samlTables } from '../fixtures/saml/db'

const CREATE = '/api/v2/sso-providers/saml'
const DEPRECATED = '/api/v2/saml/providers'
const OKTA = IDP_FIXTURES['okta.xml']

let admin: EdgeHoundClient
beforeAll(async () => {
  admin = await adminToken()
})

/** Sends a request, asserts the envelope (status, message, context) and that no SAML table changed. */
async function refused(send: () => Promise<Response>, status: number, message?: string | RegExp, context?: string) {
  const before = await samlTables()
  const body = await expectEnvelope(await send(), status, message)
  if (context !== undefined) expect(body.errors.map((e) => e.context)).toContain(context)
  expect(await samlTables()).toEqual(before)
  return body
}

function form(parts: [string, string | Blob, string?][]): FormData {
  const f = new FormData()
  for (const [k, v, file] of parts) {
    if (typeof v === 'string') f.append(k, v)
    else f.append(k, v, file ?? 'metadata.xml')
  }
  return f
}
const xmlFile = (s: string | Uint8Array) => new Blob([s], { type: 'application/xml' })

describe('hostile metadata corpus: 400 naming the problem, nothing stored', () => {
  const messages: Record<string, string | RegExp> = {
    'xxe.xml': 'metadata must not contain a document type declaration (found "<!DOCTYPE")',
    'xxe-parameter-entity.xml': 'metadata must not contain a document type declaration',
    'billion-laughs.xml': 'DTDs, entity declarations and external references are refused',
    'doctype.xml': 'metadata must not contain a document type declaration',
    'two-roots.xml': 'metadata is not well-formed XML: the document has more than one root element',
    'not-xml.json': 'metadata is not well-formed XML: there is no root element (is this an XML file?)',
    'truncated.xml': 'metadata is not well-formed XML: unclosed xml tag(s)',
    'sp-only.xml': 'metadata is not IdP metadata: the EntityDescriptor has an SPSSODescriptor but no IDPSSODescriptor',
    'expired.xml': 'metadata has expired: EntityDescriptor validUntil is 2001-01-01T00:00:00.000Z, which is in the past',
    'bad-valid-until.xml': 'EntityDescriptor attribute validUntil "next tuesday" is not a valid xs:dateTime',
    'no-sso-binding.xml': 'IDPSSODescriptor has no SingleSignOnService with the HTTP-POST or HTTP-Redirect binding',
    'relative-sso-location.xml': 'SingleSignOnService (HTTP-POST) attribute Location "/saml/sso" is not an absolute URL',
    'cert-not-base64.xml': 'IDPSSODescriptor KeyDescriptor[0] X509Certificate is not valid base64',
    'cert-not-der.xml': 'IDPSSODescriptor KeyDescriptor[0] X509Certificate is not a DER X.509 certificate',
    'cert-truncated.xml': 'IDPSSODescriptor KeyDescriptor[0] X509Certificate is not a DER X.509 certificate: truncated DER',
    'no-signing-cert.xml': 'IDPSSODescriptor has no signing certificate',
    'no-namespace.xml': 'root element must be EntityDescriptor or EntitiesDescriptor in namespace urn:oasis:names:tc:SAML:2.0:metadata',
    'wrong-namespace.xml': 'found {urn:oasis:names:tc:SAML:1.0:metadata}EntityDescriptor',
    'entities-without-idp.xml': 'no EntityDescriptor in the EntitiesDescriptor has an IDPSSODescriptor',
    'saml1-only.xml': 'protocolSupportEnumeration does not include urn:oasis:names:tc:SAML:2.0:protocol',
    'html-entity.xml': 'metadata is not well-formed XML: entity not found:&nbsp;',
    'missing-entity-id.xml': 'EntityDescriptor is missing the entityID attribute',
    'undeclared-prefix.xml': 'a namespace prefix is used without being declared',
  }

  it('has a message for every file of the corpus', () => {
    expect(Object.keys(messages).sort()).toEqual(Object.keys(HOSTILE_FIXTURES).sort())
  })

  for (const [file, message] of Object.entries(messages)) {
    it(file, async () => {
      const body = samlProviderForm({ name: `hostile ${file}`, metadata: HOSTILE_FIXTURES[file], fileName: file })
      await refused(() => admin.raw('POST', CREATE, body), 400, message, 'form.metadata')
    })
  }

  it('the deprecated endpoint refuses the same way', async () => {
    const body = samlProviderForm({ name: 'hostile via deprecated', metadata: HOSTILE_FIXTURES['billion-laughs.xml'] })
    await refused(() => admin.raw('POST', DEPRECATED, body), 400, 'metadata must not contain a document type declaration', 'form.metadata')
  })

  it('UTF-16 and non-UTF-8 files', async () => {
    const utf16 = new Uint8Array([0xff, 0xfe, ...Array.from(OKTA, (c) => [c.charCodeAt(0), 0]).flat()])
    await refused(() => admin.raw('POST', CREATE, form([['name', 'utf16'], ['metadata', xmlFile(utf16)]])), 400, 'metadata must be UTF-8 encoded XML')
    const latin1 = new Uint8Array([...new TextEncoder().encode(OKTA.slice(0, 200)), 0xe9, 0xff])
    await refused(() => admin.raw('POST', CREATE, form([['name', 'latin1'], ['metadata', xmlFile(latin1)]])), 400, 'metadata is not valid UTF-8 text')
  })

  it('an empty metadata file', async () => {
    await refused(() => admin.raw('POST', CREATE, form([['name', 'empty'], ['metadata', xmlFile('')]])), 400, 'metadata file is empty', 'form.metadata')
  })
})

describe('sizes: 413', () => {
  it('a 5 MiB file exceeds the 2 MiB form limit', async () => {
    const big = OKTA.replace('</md:EntityDescriptor>', `<!-- ${'x'.repeat(5 * 1024 * 1024)} --></md:EntityDescriptor>`)
    await refused(() => admin.raw('POST', CREATE, samlProviderForm({ name: 'five mib', metadata: big })), 413, 'request body exceeds the limit of 2097152 bytes for this route')
  })

  it('a 1.5 MiB metadata file in a form under 2 MiB exceeds the 1 MiB file limit', async () => {
    const big = OKTA.replace('</md:EntityDescriptor>', `<!-- ${'x'.repeat(1.5 * 1024 * 1024)} --></md:EntityDescriptor>`)
    const size = new TextEncoder().encode(big).length
    await refused(
      () => admin.raw('POST', CREATE, samlProviderForm({ name: 'one and a half mib', metadata: big })),
      413,
      `metadata file is ${size} bytes; the limit is 1048576 bytes (1 MiB)`,
      'form.metadata',
    )
  })

  it('a file of just under 1 MiB is accepted', async () => {
    const padded = OKTA.replace('</md:EntityDescriptor>', `<!-- ${'x'.repeat(1024 * 1024 - OKTA.length - 100)} --></md:EntityDescriptor>`)
    expect(new TextEncoder().encode(padded).length).toBeLessThanOrEqual(1024 * 1024)
    const { data } = await createSamlProvider(admin, { name: 'Almost One MiB', metadata: padded })
    expect(data.idp_issuer_uri).toBe('http://www.okta.com/exk1a2b3c4d5E6F7g8h9')
  })
})

describe('the form: exactly one name, exactly one metadata file', () => {
  it('wrong field names: says what is missing and what is unexpected', async () => {
    const body = await refused(
      () => admin.raw('POST', CREATE, form([['provider_name', 'x'], ['file', xmlFile(OKTA)]])),
      400,
      'form is missing "name" parameter',
    )
    const all = body.errors.map((e) => e.message)
    expect(all).toContain('form is missing "metadata" parameter')
    expect(all.some((m) => m.startsWith('unexpected form fields "provider_name", "file"; the form takes "name", "metadata"'))).toBe(true)
  })

  it('two metadata files', async () => {
    await refused(
      () => admin.raw('POST', CREATE, form([['name', 'two files'], ['metadata', xmlFile(OKTA), 'a.xml'], ['metadata', xmlFile(OKTA), 'b.xml']])),
      400,
      'expected only one "metadata" file',
      'form.metadata',
    )
  })

  it('two names', async () => {
    await refused(() => admin.raw('POST', CREATE, form([['name', 'a'], ['name', 'b'], ['metadata', xmlFile(OKTA)]])), 400, 'expected only one "name" parameter', 'form.name')
  })

  it('name missing, blank, too long, without a letter or digit', async () => {
    await refused(() => admin.raw('POST', CREATE, form([['metadata', xmlFile(OKTA)]])), 400, 'form is missing "name" parameter', 'form.name')
    await refused(() => admin.raw('POST', CREATE, form([['name', '   '], ['metadata', xmlFile(OKTA)]])), 400, '"name" must not be blank', 'form.name')
    await refused(() => admin.raw('POST', CREATE, form([['name', ''], ['metadata', xmlFile(OKTA)]])), 400, '"name" must not be blank', 'form.name')
    await refused(() => admin.raw('POST', CREATE, form([['name', 'n'.repeat(101)], ['metadata', xmlFile(OKTA)]])), 400, '"name" must be at most 100 characters (it has 101)')
    await refused(() => admin.raw('POST', CREATE, form([['name', '???'], ['metadata', xmlFile(OKTA)]])), 400, '"name" must contain at least one letter or digit')
  })

  it('metadata sent as a text field, name sent as a file', async () => {
    await refused(() => admin.raw('POST', CREATE, form([['name', 'text metadata'], ['metadata', OKTA]])), 400, '"metadata" must be a file (the IdP metadata XML), not a text field')
    await refused(() => admin.raw('POST', CREATE, form([['name', new Blob(['x']), 'name.txt'], ['metadata', xmlFile(OKTA)]])), 400, '"name" must be a text field, not a file')
  })

  it('wrong content types: 415', async () => {
    await refused(() => admin.raw('POST', CREATE, { name: 'json', metadata: OKTA }), 415, 'unsupported content type "application/json": expected multipart/form-data')
    await refused(
      () => admin.raw('POST', CREATE, 'name=x&metadata=y', { contentType: 'application/x-www-form-urlencoded' }),
      415,
      'unsupported content type "application/x-www-form-urlencoded": expected multipart/form-data',
    )
    await refused(() => admin.raw('POST', CREATE, OKTA, { contentType: 'application/xml' }), 415, 'expected multipart/form-data')
    await refused(() => admin.raw('POST', CREATE), 415, 'unsupported content type "(none)"')
  })

  it('a multipart body that is not a valid form', async () => {
    await refused(
      () => admin.raw('POST', CREATE, '--xyz\r\nContent-Disposition: form-data; name="name"\r\n\r\nbroken', { contentType: 'multipart/form-data; boundary=xyz' }),
      400,
      'the multipart form could not be parsed',
    )
  })
})

describe('auto-provisioning fields', () => {
  it('are validated with messages naming the field', async () => {
    const send = (ap: [string, string][]) => () => admin.raw('POST', CREATE, form([['name', 'ap'], ['metadata', xmlFile(OKTA)], ...ap]))
    await refused(send([['config.auto_provision.enabled', 'yes']]), 400, '"config.auto_provision.enabled" parameter could not be converted to bool', 'form.config.auto_provision.enabled')
    await refused(send([['config.auto_provision.role_provision', 'maybe']]), 400, '"config.auto_provision.role_provision" parameter could not be converted to bool')
    await refused(send([['config.auto_provision.default_role_id', 'two']]), 400, '"config.auto_provision.default_role_id" parameter could not be converted to int')
    await refused(send([['config.auto_provision.enabled', 'true']]), 400, '"config.auto_provision.default_role_id" is required when auto provisioning is enabled')
    await refused(send([['config.auto_provision.enabled', 'true'], ['config.auto_provision.default_role_id', '7']]), 400, 'no role has id 7 (roles: 1 Administrator, 2 User, 3 Read-Only, 4 Upload-Only, 5 Auditor)')
    await refused(send([['config.auto_provision.enabled', 'true'], ['config.auto_provision.enabled', 'false']]), 400, 'expected only one "config.auto_provision.enabled" parameter')
  })

  it('are stored when valid (BloodHound UI style: all three fields)', async () => {
    const res = await admin.raw(
      'POST',
      CREATE,
      form([['name', 'Provisioned'], ['metadata', xmlFile(OKTA)], ['config.auto_provision.enabled', 'True'], ['config.auto_provision.default_role_id', '3'], ['config.auto_provision.role_provision', '1']]),
    )
    expect(res.status).toBe(200)
    const rows = (await samlTables()).sso_providers as { name: string; config: string }[]
    expect(JSON.parse(rows.find((r) => r.name === 'Provisioned')!.config)).toEqual({ auto_provision: { enabled: true, default_role_id: 3, role_provision: true }, allow_idp_initiated: false, allow_sha1: false })
  })
})

describe('names are unique, slugs too: 409', () => {
  it('a duplicate name, or a name with the same slug, is a 409 and stores nothing', async () => {
    await createSamlProvider(admin, { name: 'Corp Okta', metadata: OKTA })
    await refused(() => admin.raw('POST', CREATE, samlProviderForm({ name: 'Corp Okta', metadata: OKTA })), 409, 'sso provider name must be unique', 'form.name')
    await refused(() => admin.raw('POST', CREATE, samlProviderForm({ name: '  Corp Okta ', metadata: OKTA })), 409, 'a provider named "Corp Okta" already exists')
    await refused(() => admin.raw('POST', DEPRECATED, samlProviderForm({ name: 'CORP OKTA', metadata: OKTA })), 409, 'another provider already has the slug "corp-okta"')
    await refused(() => admin.raw('POST', CREATE, samlProviderForm({ name: 'corp-okta', metadata: OKTA })), 409, 'the slug "corp-okta"')
  })

  it('concurrent creates with one name: exactly one 200, the others 409, one row', async () => {
    for (let round = 0; round < 3; round++) {
      const name = `Race ${round}`
      const responses = await Promise.all(
        Array.from({ length: 4 }, (_, i) => admin.raw('POST', i % 2 ? DEPRECATED : CREATE, samlProviderForm({ name, metadata: IDP_FIXTURES['keycloak.xml'] }))),
      )
      const statuses = responses.map((r) => r.status).sort()
      expect(statuses).toEqual([200, 409, 409, 409])
      for (const r of responses.filter((x) => x.status === 409)) await expectEnvelope(r, 409, 'sso provider name must be unique')
      const t = await samlTables()
      expect((t.sso_providers as { name: string }[]).filter((r) => r.name === name)).toHaveLength(1)
      expect((t.saml_providers as { name: string }[]).filter((r) => r.name === name)).toHaveLength(1)
    }
  })
})

describe('who may manage providers', () => {
  const routes: [string, string, () => FormData | undefined][] = [
    ['POST', CREATE, () => samlProviderForm({ name: 'forbidden', metadata: OKTA })],
    ['POST', DEPRECATED, () => samlProviderForm({ name: 'forbidden', metadata: OKTA })],
    ['GET', '/api/v2/saml', () => undefined],
    ['GET', '/api/v2/saml/providers/1', () => undefined],
    ['DELETE', '/api/v2/saml/providers/1', () => undefined],
    // GET /api/v2/sso-providers is public (sign-in fields only without the permission): oidc-signin.test.ts
    ['PATCH', '/api/v2/sso-providers/1', () => samlProviderForm({ name: 'forbidden' })],
    ['DELETE', '/api/v2/sso-providers/1', () => undefined],
  ]

  for (const role of ['User', 'Read-Only', 'Upload-Only']) {
    it(`${role}: 403 on every management route, nothing changed`, async () => {
      const { client: c } = await userWithRole(role)
      for (const [method, path, body] of routes) await refused(() => c.raw(method, path, body()), 403, /not authorized|permission/i)
    })
  }

  it('no credentials: 401; an administrator session (JWT) may', async () => {
    for (const [method, path, body] of routes) await refused(() => client().raw(method, path, body()), 401, 'no Authorization header')
    const session = await adminSession()
    const { data } = await createSamlProvider(session, { name: 'Made With A Session', metadata: OKTA })
    expect(data.name).toBe('Made With A Session')
  })
})
