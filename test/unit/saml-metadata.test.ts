import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { MAX_METADATA_BYTES, MAX_TAGS, MetadataError, parseIdpMetadata } from '../../src/saml/metadata'
import { IDP_FIXTURES, HOSTILE_FIXTURES, EXPECTED } from '../fixtures/saml/corpus'

const NOW = new Date('2026-11-25T12:00:00Z')
const MD = 'urn:oasis:names:tc:SAML:2.0:metadata'
const POST = 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST'
const REDIRECT = 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect'
const CERT = /<ds:X509Certificate>([^<]+)</.exec(IDP_FIXTURES['okta.xml'])![1]

async function refusal(input: string | Uint8Array, now = NOW): Promise<MetadataError> {
  try {
    await parseIdpMetadata(input, now)
  } catch (e) {
    if (e instanceof MetadataError) return e
    throw e
  }
  throw new Error('metadata was accepted')
}

/** A minimal IdP document; pieces can be replaced. */
function doc(o: { rootAttrs?: string; idpAttrs?: string; keys?: string; sso?: string; prefix?: string; body?: string } = {}) {
  const p = o.prefix ?? 'md'
  const q = p ? `${p}:` : ''
  const keys = o.keys ?? `<${q}KeyDescriptor use="signing"><ds:KeyInfo xmlns:ds="http://www.w3.org/2000/09/xmldsig#"><ds:X509Data><ds:X509Certificate>${CERT}</ds:X509Certificate></ds:X509Data></ds:KeyInfo></${q}KeyDescriptor>`
  const sso = o.sso ?? `<${q}SingleSignOnService Binding="${POST}" Location="https://idp.example.com/post"/>`
  return (
    `<${q}EntityDescriptor xmlns${p ? `:${p}` : ''}="${MD}" entityID="https://idp.example.com"${o.rootAttrs ?? ''}>` +
    `<${q}IDPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol"${o.idpAttrs ?? ''}>${keys}${sso}${o.body ?? ''}</${q}IDPSSODescriptor>` +
    `</${q}EntityDescriptor>`
  )
}

describe('the IdP corpus: every mainstream IdP parses to the right fields', () => {
  for (const [file, xml] of Object.entries(IDP_FIXTURES)) {
    it(file, async () => {
      const want = EXPECTED[file]
      const m = await parseIdpMetadata(xml, NOW)
      expect(m.entityId).toBe(want.entity_id)
      expect(m.ssoUrl).toBe(want.sso_url)
      expect(m.ssoBinding).toBe(want.binding)
      expect(m.validUntil).toBe(want.valid_until)
      expect(m.certificates.map(({ der_base64: _, ...c }) => c)).toEqual(want.certs)
      for (const c of m.certificates) expect(c.der_base64).toMatch(/^MII[A-Za-z0-9+/]+=*$/)
    })
  }

  it('keeps the decoded document as the text to store', async () => {
    const m = await parseIdpMetadata(new TextEncoder().encode(`\ufeff${IDP_FIXTURES['okta.xml']}`), NOW)
    expect(m.xml).toBe(IDP_FIXTURES['okta.xml'])
  })

  it('reads the NameID formats the IdP declares', async () => {
    expect((await parseIdpMetadata(IDP_FIXTURES['keycloak.xml'], NOW)).nameIdFormats).toHaveLength(4)
  })
})

describe('namespaces, not prefixes', () => {
  it('gives the same result for md:, any other prefix and the default namespace', async () => {
    const results = await Promise.all(['md', 'saml2md', 'x', ''].map((p) => parseIdpMetadata(doc({ prefix: p }), NOW)))
    for (const r of results) expect({ ...r, xml: '' }).toEqual({ ...results[0], xml: '' })
  })

  it('refuses md: bound to another namespace, and elements in no namespace', async () => {
    const spoof = doc().replace(`xmlns:md="${MD}"`, 'xmlns:md="urn:example:not-saml"')
    expect((await refusal(spoof)).message).toBe(
      'root element must be EntityDescriptor or EntitiesDescriptor in namespace urn:oasis:names:tc:SAML:2.0:metadata, found {urn:example:not-saml}EntityDescriptor',
    )
    expect((await refusal(HOSTILE_FIXTURES['no-namespace.xml'])).message).toMatch(/found EntityDescriptor in no namespace/)
  })

  it('ignores an IDPSSODescriptor-named element from another namespace', async () => {
    const xml = `<md:EntityDescriptor xmlns:md="${MD}" xmlns:o="urn:other" entityID="e"><o:IDPSSODescriptor/></md:EntityDescriptor>`
    expect((await refusal(xml)).message).toBe('metadata is not IdP metadata: the EntityDescriptor has no IDPSSODescriptor')
  })

  it('ignores certificates outside the IDPSSODescriptor (metadata signature, other roles)', async () => {
    // entra-id.xml has a different certificate in its enveloped ds:Signature; adfs.xml has an encryption key
    const entra = await parseIdpMetadata(IDP_FIXTURES['entra-id.xml'], NOW)
    expect(entra.certificates.map((c) => c.sha256_fingerprint)).toEqual(EXPECTED['entra-id.xml'].certs.map((c) => c.sha256_fingerprint))
  })
})

describe('EntitiesDescriptor', () => {
  const entity = (id: string, role: 'IDP' | 'SP', inner = '') =>
    role === 'IDP'
      ? doc({ prefix: '' }).replace(`xmlns="${MD}" entityID="https://idp.example.com"`, `entityID="${id}"${inner}`)
      : `<EntityDescriptor entityID="${id}"><SPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol"/></EntityDescriptor>`

  it('takes the entity with an IDPSSODescriptor, nested groups included; a second IdP is refused (hardening, issue 8)', async () => {
    const xml = (later: string) =>
      `<EntitiesDescriptor xmlns="${MD}">${entity('sp-1', 'SP')}` +
      `<EntitiesDescriptor Name="inner">${entity('sp-2', 'SP')}${entity('idp-nested', 'IDP')}</EntitiesDescriptor>` +
      `${later}</EntitiesDescriptor>`
    expect((await parseIdpMetadata(xml(''), NOW)).entityId).toBe('idp-nested')
    expect((await refusal(xml(entity('idp-later', 'IDP')))).message).toMatch(/^metadata contains 2 IDPSSODescriptor elements/)
  })

  it('checks validUntil on every enclosing group', async () => {
    const xml = `<EntitiesDescriptor xmlns="${MD}"><EntitiesDescriptor validUntil="2020-05-01T00:00:00Z">${entity('idp', 'IDP')}</EntitiesDescriptor></EntitiesDescriptor>`
    expect((await refusal(xml)).message).toBe('metadata has expired: EntitiesDescriptor validUntil is 2020-05-01T00:00:00.000Z, which is in the past')
  })

  it('says so when there is no entity at all, or only service providers', async () => {
    expect((await refusal(`<EntitiesDescriptor xmlns="${MD}"/>`)).message).toBe('EntitiesDescriptor contains no EntityDescriptor')
    expect((await refusal(HOSTILE_FIXTURES['entities-without-idp.xml'])).message).toBe(
      'metadata is not IdP metadata: no EntityDescriptor in the EntitiesDescriptor has an IDPSSODescriptor',
    )
  })

  it('walks nested groups without recursion; nesting beyond MAX_DEPTH is refused (hardening, issue 8)', async () => {
    const xml = (depth: number) => `<EntitiesDescriptor xmlns="${MD}">`.repeat(depth) + entity('deep', 'IDP') + '</EntitiesDescriptor>'.repeat(depth)
    expect((await parseIdpMetadata(xml(100), NOW)).entityId).toBe('deep')
    expect((await refusal(xml(5000))).message).toMatch(/nests elements more than \d+ levels deep/)
  })
})

describe('SingleSignOnService', () => {
  it('prefers HTTP-POST wherever it is listed, falls back to HTTP-Redirect', async () => {
    const both = `<md:SingleSignOnService Binding="${REDIRECT}" Location="https://idp.example.com/redirect"/><md:SingleSignOnService Binding="${POST}" Location="https://idp.example.com/post"/>`
    expect(await parseIdpMetadata(doc({ sso: both }), NOW)).toMatchObject({ ssoUrl: 'https://idp.example.com/post', ssoBinding: 'HTTP-POST' })
    const redirect = `<md:SingleSignOnService Binding="${REDIRECT}" Location="https://idp.example.com/redirect"/>`
    expect(await parseIdpMetadata(doc({ sso: redirect }), NOW)).toMatchObject({ ssoUrl: 'https://idp.example.com/redirect', ssoBinding: 'HTTP-Redirect' })
  })

  it('says which bindings it found when neither is there', async () => {
    expect((await refusal(HOSTILE_FIXTURES['no-sso-binding.xml'])).message).toBe(
      'IDPSSODescriptor has no SingleSignOnService with the HTTP-POST or HTTP-Redirect binding (found: urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Artifact, urn:oasis:names:tc:SAML:2.0:bindings:SOAP)',
    )
    expect((await refusal(doc({ sso: '' }))).message).toBe(
      'IDPSSODescriptor has no SingleSignOnService with the HTTP-POST or HTTP-Redirect binding (it has no SingleSignOnService at all)',
    )
  })

  it.each([
    ['/saml/sso', 'SingleSignOnService (HTTP-POST) attribute Location "/saml/sso" is not an absolute URL'],
    ['javascript:alert(1)', 'SingleSignOnService (HTTP-POST) attribute Location "javascript:alert(1)" must be an http(s) URL'],
    ['', 'SingleSignOnService (HTTP-POST) attribute Location is missing'],
  ])('refuses the Location %j', async (loc, message) => {
    expect((await refusal(doc({ sso: `<md:SingleSignOnService Binding="${POST}" Location="${loc}"/>` }))).message).toBe(message)
  })

  it('needs SAML 2.0 in protocolSupportEnumeration', async () => {
    expect((await refusal(HOSTILE_FIXTURES['saml1-only.xml'])).message).toBe(
      'IDPSSODescriptor attribute protocolSupportEnumeration does not include urn:oasis:names:tc:SAML:2.0:protocol',
    )
  })
})

describe('signing certificates', () => {
  const kd = (use: string | null, b64 = CERT) =>
    `<md:KeyDescriptor${use === null ? '' : ` use="${use}"`}><ds:KeyInfo xmlns:ds="http://www.w3.org/2000/09/xmldsig#"><ds:X509Data><ds:X509Certificate>${b64}</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>`

  it('takes use="signing" and KeyDescriptors without use; skips encryption keys; lists a certificate once', async () => {
    const other = /<ds:X509Certificate>([^<]+)</.exec(IDP_FIXTURES['pingfederate.xml'])![1]
    const m = await parseIdpMetadata(doc({ keys: kd('encryption', other) + kd('signing') + kd(null, other) + kd(null) }), NOW)
    expect(m.certificates.map((c) => c.sha256_fingerprint)).toEqual([EXPECTED['okta.xml'].certs[0].sha256_fingerprint, EXPECTED['pingfederate.xml'].certs[0].sha256_fingerprint])
  })

  it('refuses metadata without a signing certificate', async () => {
    expect((await refusal(doc({ keys: kd('encryption') }))).message).toBe(
      'IDPSSODescriptor has no signing certificate: expected a KeyDescriptor (use="signing" or no use) with a ds:X509Certificate',
    )
    expect((await refusal(doc({ keys: '' }))).message).toMatch(/no signing certificate/)
  })

  it.each([
    [kd('signing', ''), 'IDPSSODescriptor KeyDescriptor[0] X509Certificate is empty'],
    [kd('signing', 'not base64!'), 'IDPSSODescriptor KeyDescriptor[0] X509Certificate is not valid base64'],
    [kd('signing', 'BAIBAg=='), 'IDPSSODescriptor KeyDescriptor[0] X509Certificate is not a DER X.509 certificate: Certificate: expected DER tag 0x30, found 0x04'],
    [kd('signing', 'SGVsbG8='), 'IDPSSODescriptor KeyDescriptor[0] X509Certificate is not a DER X.509 certificate: truncated DER'],
    [kd('signing') + kd('signing', CERT.slice(0, 800)), 'IDPSSODescriptor KeyDescriptor[1] X509Certificate is not a DER X.509 certificate: truncated DER'],
    [kd('sign'), 'IDPSSODescriptor KeyDescriptor[0] attribute use "sign" must be "signing" or "encryption"'],
  ])('refuses bad certificate %#', async (keys, message) => {
    expect((await refusal(doc({ keys }))).message).toContain(message)
  })
})

describe('validUntil', () => {
  it('refuses a date in the past, naming it; accepts a future one and returns the earliest', async () => {
    expect((await refusal(doc({ rootAttrs: ' validUntil="2026-11-25T11:59:59Z"' }))).message).toBe(
      'metadata has expired: EntityDescriptor validUntil is 2026-11-25T11:59:59.000Z, which is in the past',
    )
    expect((await refusal(doc({ idpAttrs: ' validUntil="2026-11-25T12:00:00Z"' }))).message).toMatch(/IDPSSODescriptor validUntil is 2026-11-25T12:00:00.000Z/)
    const m = await parseIdpMetadata(doc({ rootAttrs: ' validUntil="2030-01-01T00:00:00+02:00"', idpAttrs: ' validUntil="2031-01-01T00:00:00Z"' }), NOW)
    expect(m.validUntil).toBe('2029-12-31T22:00:00.000Z')
  })

  it('reads a date without zone as UTC and refuses what is not an xs:dateTime', async () => {
    expect((await parseIdpMetadata(doc({ rootAttrs: ' validUntil="2030-06-01T08:00:00"' }), NOW)).validUntil).toBe('2030-06-01T08:00:00.000Z')
    expect((await refusal(HOSTILE_FIXTURES['bad-valid-until.xml'])).message).toBe('EntityDescriptor attribute validUntil "next tuesday" is not a valid xs:dateTime')
    expect((await refusal(doc({ rootAttrs: ' validUntil="2030-02-30T00:00:00Z"' }))).message).toMatch(/is not a valid xs:dateTime/)
  })
})

describe('entityID', () => {
  it('is required and at most 1024 characters', async () => {
    expect((await refusal(HOSTILE_FIXTURES['missing-entity-id.xml'])).message).toBe('EntityDescriptor is missing the entityID attribute')
    expect((await refusal(doc().replace('entityID="https://idp.example.com"', 'entityID="   "'))).message).toBe('EntityDescriptor is missing the entityID attribute')
    expect((await refusal(doc().replace('https://idp.example.com"', `https://idp.example.com/${'a'.repeat(1024)}"`))).message).toBe(
      'EntityDescriptor entityID is longer than 1024 characters',
    )
  })

  it('may be a plain string, not only a URL (JumpCloud)', async () => {
    expect((await parseIdpMetadata(IDP_FIXTURES['jumpcloud.xml'], NOW)).entityId).toBe('JumpCloud-EdgeHound')
  })
})

describe('the hostile corpus: each file is refused with a message naming the problem', () => {
  const DTD = /^metadata must not contain a document type declaration \(found "<!DOCTYPE"\): DTDs, entity declarations and external references are refused$/
  const table: Record<string, string | RegExp> = {
    'xxe.xml': DTD,
    'xxe-parameter-entity.xml': DTD,
    'billion-laughs.xml': DTD,
    'doctype.xml': DTD,
    'two-roots.xml': /^metadata is not well-formed XML: the document has more than one root element/,
    'not-xml.json': 'metadata is not well-formed XML: there is no root element (is this an XML file?)',
    'truncated.xml': /^metadata is not well-formed XML: unclosed xml tag\(s\): md:EntityDescriptor/,
    'sp-only.xml':
      'metadata is not IdP metadata: the EntityDescriptor has an SPSSODescriptor but no IDPSSODescriptor (this is service provider metadata)',
    'expired.xml': 'metadata has expired: EntityDescriptor validUntil is 2001-01-01T00:00:00.000Z, which is in the past',
    'bad-valid-until.xml': 'EntityDescriptor attribute validUntil "next tuesday" is not a valid xs:dateTime',
    'no-sso-binding.xml': /^IDPSSODescriptor has no SingleSignOnService with the HTTP-POST or HTTP-Redirect binding/,
    'relative-sso-location.xml': 'SingleSignOnService (HTTP-POST) attribute Location "/saml/sso" is not an absolute URL',
    'cert-not-base64.xml': 'IDPSSODescriptor KeyDescriptor[0] X509Certificate is not valid base64',
    'cert-not-der.xml': /^IDPSSODescriptor KeyDescriptor\[0\] X509Certificate is not a DER X\.509 certificate: /,
    'cert-truncated.xml': /^IDPSSODescriptor KeyDescriptor\[0\] X509Certificate is not a DER X\.509 certificate: truncated DER/,
    'no-signing-cert.xml': /^IDPSSODescriptor has no signing certificate/,
    'no-namespace.xml': /^root element must be EntityDescriptor or EntitiesDescriptor in namespace urn:oasis:names:tc:SAML:2\.0:metadata/,
    'wrong-namespace.xml': /found \{urn:oasis:names:tc:SAML:1\.0:metadata\}EntityDescriptor$/,
    'entities-without-idp.xml': 'metadata is not IdP metadata: no EntityDescriptor in the EntitiesDescriptor has an IDPSSODescriptor',
    'saml1-only.xml': /protocolSupportEnumeration does not include urn:oasis:names:tc:SAML:2\.0:protocol/,
    'html-entity.xml': 'metadata is not well-formed XML: entity not found:&nbsp;',
    'missing-entity-id.xml': 'EntityDescriptor is missing the entityID attribute',
    'undeclared-prefix.xml': /^metadata is not well-formed XML: a namespace prefix is used without being declared/,
  }

  it('covers every file of the corpus', () => {
    expect(Object.keys(table).sort()).toEqual(Object.keys(HOSTILE_FIXTURES).sort())
  })

  for (const [file, message] of Object.entries(table)) {
    it(file, async () => {
      const e = await refusal(HOSTILE_FIXTURES[file])
      expect(e.status).toBe(400)
      if (typeof message === 'string') expect(e.message).toBe(message)
      else expect(e.message).toMatch(message)
    })
  }
})

describe('text and size', () => {
  it('refuses DTDs however they are spelled or hidden', async () => {
    for (const s of ['<!doctype x>', '<!-- <!ENTITY x "y"> -->', '<![CDATA[<!DOCTYPE]]>'])
      expect((await refusal(doc({ body: s.includes('CDATA') ? `<md:Extensions>${s}</md:Extensions>` : s }))).message).toMatch(/document type declaration/)
  })

  it('refuses UTF-16, other declared encodings, invalid UTF-8, and empty files', async () => {
    const utf16 = new Uint8Array([0xff, 0xfe, ...Array.from(doc(), (c) => [c.charCodeAt(0), 0]).flat()])
    expect((await refusal(utf16)).message).toBe('metadata must be UTF-8 encoded XML; this file starts with a UTF-16 byte order mark')
    expect((await refusal(`<?xml version="1.0" encoding="ISO-8859-1"?>${doc()}`)).message).toBe(
      'metadata must be UTF-8 encoded XML; the XML declaration says encoding="ISO-8859-1"',
    )
    expect((await refusal(new Uint8Array([0x3c, 0x61, 0xc3, 0x28, 0x3e]))).message).toBe('metadata is not valid UTF-8 text (is it an XML file?)')
    expect((await refusal('')).message).toBe('metadata file is empty')
    expect((await refusal(' \n\t ')).message).toBe('metadata file is empty')
  })

  it('accepts an explicit UTF-8 declaration in any case', async () => {
    await expect(parseIdpMetadata(`<?xml version="1.0" encoding="utf-8"?>${doc()}`, NOW)).resolves.toBeTruthy()
  })

  it('refuses more than 1 MiB with status 413, before parsing anything', async () => {
    const big = new Uint8Array(MAX_METADATA_BYTES + 1).fill(0x20)
    const e = await refusal(big)
    expect(e.status).toBe(413)
    expect(e.message).toBe(`metadata file is ${MAX_METADATA_BYTES + 1} bytes; the limit is 1048576 bytes (1 MiB)`)
  })

  it('accepts exactly 1 MiB (padded with whitespace)', async () => {
    const xml = doc()
    await expect(parseIdpMetadata(xml + ' '.repeat(MAX_METADATA_BYTES - xml.length), NOW)).resolves.toMatchObject({ entityId: 'https://idp.example.com' })
  })

  it(`refuses more than ${MAX_TAGS} tags`, async () => {
    const xml = doc({ body: '<md:Extensions>' + '<a/>'.repeat(MAX_TAGS) + '</md:Extensions>' })
    expect((await refusal(xml)).message).toBe(`metadata has more than ${MAX_TAGS} tags; IdP metadata is far smaller`)
  })
})

describe('bounded time on adversarial input (each well under a second on a laptop; 5 s allowed here)', () => {
  const cases: [string, () => string][] = [
    ['deep nesting (just under the tag cap)', () => '<a>'.repeat(49_000) + '</a>'.repeat(49_000)],
    ['deep nesting, unclosed', () => '<a>'.repeat(99_000)],
    ['many attributes', () => `<a ${Array.from({ length: 60_000 }, (_, i) => `a${i}="1"`).join(' ')}/>`],
    ['many namespace declarations', () => `<a ${Array.from({ length: 30_000 }, (_, i) => `xmlns:p${i}="u${i}"`).join(' ')}/>`],
    ['many character references', () => `<a>${'&#x41;&amp;'.repeat(90_000)}</a>`],
    ['an unterminated attribute', () => `<a b="${'x'.repeat(1_000_000)}`],
    ['a long comment', () => `<a><!--${'-x'.repeat(500_000)}--></a>`],
    ['many open tags', () => '<a'.repeat(99_000)],
  ]
  for (const [what, make] of cases) {
    it(what, async () => {
      const input = make()
      expect(new TextEncoder().encode(input).length).toBeLessThanOrEqual(MAX_METADATA_BYTES)
      const t0 = Date.now()
      const e = await refusal(input)
      expect(Date.now() - t0).toBeLessThan(5000)
      expect(e.status).toBe(400)
    })
  }

  it('arbitrary text is refused with a MetadataError, never another exception', async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.string(), fc.string().map((s) => `<md:EntityDescriptor xmlns:md="${MD}" entityID="x">${s}</md:EntityDescriptor>`)), async (s) => {
        try {
          await parseIdpMetadata(s, NOW)
        } catch (e) {
          if (!(e instanceof MetadataError)) throw e
        }
      }),
      { numRuns: 500 },
    )
  })
})
