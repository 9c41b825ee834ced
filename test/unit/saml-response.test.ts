/**
 * src/saml/response.ts: the SAML Response verifier. Every response here is signed by xmldsigjs (WebCrypto),
 * not by the xml-crypto code that verifies (test/fixtures/saml/idp-signer.ts); the xmlsec1-signed set is
 * in saml-response-xmlsec.test.ts. Each refusal asserts its reason code, so a test cannot pass because an
 * earlier, unrelated check happened to fire.
 */
import { describe, expect, it } from 'vitest'
import {
  CLOCK_SKEW_MS,
  decodeSamlResponse,
  MAX_RESPONSE_DEPTH,
  SamlResponseError,
  verifySamlResponse,
  type ResponseExpectations,
} from '../../src/saml/response'
import XMLSEC_ASSERTION from '../fixtures/saml/xmlsec/assertion-signed.xml?raw'
import XMLSEC_RESPONSE from '../fixtures/saml/xmlsec/response-signed.xml?raw'
import XMLSEC_BOTH from '../fixtures/saml/xmlsec/both-signed.xml?raw'
import XMLSEC_BY_B from '../fixtures/saml/xmlsec/signed-by-b.xml?raw'
import { b64, buildResponse, KEY_A, KEY_B, sign, type ResponseOptions } from '../fixtures/saml/idp-signer'

const IDP = 'https://idp.test.example/entity'
const ACS = 'https://sp.test.example/api/v2/sso/corp/callback'
const SP = 'https://sp.test.example/api/v2/sso/corp'
const NOW = Date.now()
const exp = (o: Partial<ResponseExpectations> = {}): ResponseExpectations => ({
  idpEntityId: IDP,
  certificates: [KEY_A.certBase64],
  acsUrl: ACS,
  spEntityId: SP,
  allowSha1: false,
  now: new Date(NOW),
  ...o,
})
const opts = (o: Partial<ResponseOptions> = {}): ResponseOptions => ({ idpEntityId: IDP, acsUrl: ACS, spEntityId: SP, inResponseTo: '_req1', now: NOW, ...o })
const EMAIL = 'urn:oid:0.9.2342.19200300.100.1.3'

function refused(xml: string, reason: string, e: Partial<ResponseExpectations> = {}): SamlResponseError {
  try {
    verifySamlResponse(xml, exp(e))
  } catch (err) {
    expect(err).toBeInstanceOf(SamlResponseError)
    expect({ reason: (err as SamlResponseError).reason, message: (err as Error).message }).toMatchObject({ reason })
    return err as SamlResponseError
  }
  throw new Error(`accepted, expected refusal "${reason}"`)
}

/** The signed Assertion element's text (as serialised) and a forged copy with another email and ID. */
function assertionOf(xml: string): string {
  const m = /<saml:Assertion[\s\S]*<\/saml:Assertion>/.exec(xml)
  return m![0]
}
function forged(assertion: string): string {
  return assertion
    .replace(/<ds:Signature[\s\S]*<\/ds:Signature>/, '')
    .replace(/ID="[^"]+"/, 'ID="_evil"')
    .replaceAll('alice@corp.example', 'mallory@corp.example')
}

describe('accepted', () => {
  for (const what of ['assertion', 'response', 'both'] as const)
    it(`a response whose ${what === 'both' ? 'Response and Assertion are' : what === 'response' ? 'Response is' : 'Assertion is'} signed`, async () => {
      const xml = await sign(buildResponse(opts({ attributes: { role: ['a', 'b'] } })), what)
      const v = verifySamlResponse(xml, exp())
      expect(v.inResponseTo).toBe('_req1')
      expect(v.nameId).toBe('alice@corp.example')
      expect(v.attributes.get(EMAIL)).toEqual(['alice@corp.example'])
      expect(v.attributes.get('role')).toEqual(['a', 'b'])
      expect(v.signed).toEqual({ response: what !== 'assertion', assertion: what !== 'response' })
      expect(v.acceptableUntil.getTime()).toBe(NOW + 300_000 + CLOCK_SKEW_MS)
    })

  it('IdP-initiated (no InResponseTo anywhere) gives inResponseTo null', async () => {
    const v = verifySamlResponse(await sign(buildResponse(opts({ inResponseTo: undefined })), 'assertion'), exp())
    expect(v.inResponseTo).toBeNull()
  })

  it('the key is any of the metadata certificates', async () => {
    const xml = await sign(buildResponse(opts()), 'assertion', KEY_B)
    expect(verifySamlResponse(xml, exp({ certificates: [KEY_A.certBase64, KEY_B.certBase64] })).nameId).toBe('alice@corp.example')
  })

  it('within the clock skew on both ends', async () => {
    const xml = await sign(buildResponse(opts({ lifetime: 60 })), 'assertion')
    expect(() => verifySamlResponse(xml, exp({ now: new Date(NOW + 60_000 + CLOCK_SKEW_MS - 1000) }))).not.toThrow()
    expect(() => verifySamlResponse(xml, exp({ now: new Date(NOW - CLOCK_SKEW_MS + 1000) }))).not.toThrow()
  })

  it('comment injection: the identity is the whole signed text, not the part before the comment', async () => {
    const signed = await sign(buildResponse(opts({ email: 'alice@corp.example.evil.example' })), 'assertion')
    const injected = signed.replaceAll('alice@corp.example.evil.example', 'alice@corp.example<!---->.evil.example')
    expect(injected).not.toBe(signed)
    const v = verifySamlResponse(injected, exp())
    expect(v.nameId).toBe('alice@corp.example.evil.example')
    expect(v.attributes.get(EMAIL)).toEqual(['alice@corp.example.evil.example'])
  })

  it('SHA-1 only when the provider opts in', async () => {
    const xml = await sign(buildResponse(opts()), 'assertion', KEY_A, 'SHA-1')
    refused(xml, 'sha1')
    expect(verifySamlResponse(xml, exp({ allowSha1: true })).nameId).toBe('alice@corp.example')
  })
})

describe('refused: signatures', () => {
  it('unsigned', () => refused(buildResponse(opts()), 'unsigned'))

  it('signed with another key (its certificate in KeyInfo is not trusted)', async () => {
    const xml = await sign(buildResponse(opts()), 'assertion', KEY_B)
    expect(xml).toContain(KEY_B.certBase64) // KeyInfo names the signer's own certificate
    refused(xml, 'signature')
  })

  it("a foreign certificate put into KeyInfo of a response signed with the provider's key changes nothing, and a valid one is never needed", async () => {
    const xml = await sign(buildResponse(opts()), 'assertion', KEY_A)
    const swapped = xml.replace(KEY_A.certBase64, KEY_B.certBase64)
    expect(verifySamlResponse(swapped, exp()).nameId).toBe('alice@corp.example')
    // and a response signed by B whose KeyInfo claims to be A's certificate is still B's signature
    refused((await sign(buildResponse(opts()), 'assertion', KEY_B)).replace(KEY_B.certBase64, KEY_A.certBase64), 'signature')
  })

  for (const [what, from, to] of [
    ['the email attribute', '>alice@corp.example</saml:AttributeValue>', '>mallory@corp.example</saml:AttributeValue>'],
    ['the NameID', '>alice@corp.example</saml:NameID>', '>mallory@corp.example</saml:NameID>'],
    ['the audience', `<saml:Audience>${SP}</saml:Audience>`, `<saml:Audience>${SP}</saml:Audience><saml:Audience>x</saml:Audience>`],
  ] as const)
    it(`tampering after signing: ${what}`, async () => {
      for (const w of ['assertion', 'response'] as const) {
        const xml = await sign(buildResponse(opts()), w)
        const t = xml.replace(from, to)
        expect(t).not.toBe(xml)
        refused(t, 'signature')
      }
    })

  it('every present signature must verify: a good Assertion signature does not excuse a broken Response signature', async () => {
    const xml = await sign(buildResponse(opts()), 'both')
    refused(xml.replace('<samlp:StatusCode', '<samlp:StatusMessage>x</samlp:StatusMessage><samlp:StatusCode'), 'signature')
  })

  it('a signature over another element than its parent is refused', async () => {
    const xml = await sign(buildResponse(opts({ responseId: '_resp' })), 'assertion')
    refused(xml.replace(/URI="#[^"]+"/, 'URI="#_resp"'), 'reference')
  })

  it('an unsupported canonicalization or transform is refused', async () => {
    const xml = await sign(buildResponse(opts()), 'assertion')
    refused(xml.replace('<ds:Transform Algorithm="http://www.w3.org/2001/10/xml-exc-c14n#"/>', '<ds:Transform Algorithm="http://www.w3.org/TR/1999/REC-xpath-19991116"/>'), 'algorithm')
  })
})

describe('refused: signature wrapping', () => {
  it('an extra unsigned assertion before the signed one', async () => {
    const xml = await sign(buildResponse(opts()), 'assertion')
    const a = assertionOf(xml)
    refused(xml.replace(a, forged(a) + a), 'assertion_count')
  })
  it('an extra unsigned assertion after the signed one', async () => {
    const xml = await sign(buildResponse(opts()), 'assertion')
    const a = assertionOf(xml)
    refused(xml.replace(a, a + forged(a)), 'assertion_count')
  })
  it('the signed assertion wrapped inside a forged one', async () => {
    const xml = await sign(buildResponse(opts()), 'assertion')
    const a = assertionOf(xml)
    const f = forged(a)
    refused(xml.replace(a, f.replace('</saml:Assertion>', `${a}</saml:Assertion>`)), 'assertion_count')
  })
  it('the signed assertion moved into Extensions, a forged one in its place', async () => {
    const xml = await sign(buildResponse(opts()), 'assertion')
    const a = assertionOf(xml)
    const moved = xml.replace(a, forged(a)).replace('<samlp:Status>', `<samlp:Extensions>${a}</samlp:Extensions><samlp:Status>`)
    refused(moved, 'assertion_count')
  })
  it('the signed Response moved into Extensions of a forged Response', async () => {
    const xml = await sign(buildResponse(opts()), 'response')
    const inner = xml.replace(/^<samlp:Response /, '<samlp:Response xmlns:x="urn:x" ')
    const outer = buildResponse(opts({ email: 'mallory@corp.example' })).replace('<samlp:Status>', `<samlp:Extensions>${inner}</samlp:Extensions><samlp:Status>`)
    refused(outer, 'assertion_count')
  })
  it('the signed assertion moved into the signature’s ds:Object, a forged one in its place', async () => {
    const xml = await sign(buildResponse(opts()), 'assertion')
    const a = assertionOf(xml)
    const sig = /<ds:Signature[\s\S]*<\/ds:Signature>/.exec(a)![0]
    const f = forged(a).replace('</saml:Issuer>', `</saml:Issuer>${sig.replace('</ds:Signature>', `<ds:Object>${a}</ds:Object></ds:Signature>`)}`)
    refused(xml.replace(a, f), 'assertion_count')
  })
  it('duplicated IDs: another element carrying the signed assertion’s ID', async () => {
    const xml = await sign(buildResponse(opts()), 'assertion')
    const id = /<saml:Assertion ID="([^"]+)"/.exec(xml)![1]
    refused(xml.replace('<samlp:Status>', `<samlp:Extensions><x:Thing xmlns:x="urn:x" ID="${id}"/></samlp:Extensions><samlp:Status>`), 'duplicate_id')
  })
  it('a second signature anywhere else', async () => {
    const xml = await sign(buildResponse(opts()), 'assertion')
    const sig = /<ds:Signature[\s\S]*<\/ds:Signature>/.exec(xml)![0]
    refused(xml.replace('<samlp:Status>', `<samlp:Extensions>${sig}</samlp:Extensions><samlp:Status>`), 'signature_place')
  })
  it('an InResponseTo the signature does not cover is not trusted', async () => {
    const xml = await sign(buildResponse(opts({ inResponseTo: undefined })), 'assertion')
    refused(xml.replace('<samlp:Response ', '<samlp:Response InResponseTo="_req9" '), 'in_response_to')
  })
})

describe('refused: conditions', () => {
  const cases: [string, Partial<ResponseOptions>, string, Partial<ResponseExpectations>?][] = [
    ['expired', { now: NOW - 600_000 }, 'expired'],
    ['not yet valid', { now: NOW + 600_000, notBeforeOffset: 0 }, 'not_yet_valid'],
    ['wrong audience', { audience: 'https://other-sp.example' }, 'audience'],
    ['wrong destination', { destination: 'https://other-sp.example/acs' }, 'destination'],
    ['wrong recipient', { recipient: 'https://other-sp.example/acs' }, 'recipient'],
    ['wrong assertion issuer', { assertionIssuer: 'https://evil-idp.example' }, 'issuer'],
    ['wrong response issuer', { responseIssuer: 'https://evil-idp.example' }, 'issuer'],
    ['non-success status', { status: 'urn:oasis:names:tc:SAML:2.0:status:Requester' }, 'status'],
  ]
  for (const [name, o, reason] of cases)
    it(name, async () => {
      for (const w of ['assertion', 'response'] as const) refused(await sign(buildResponse(opts(o)), w), reason)
    })
  it('a signed Response without Destination', async () => refused(await sign(buildResponse(opts({ destination: null })), 'response'), 'destination'))
  it('an encrypted assertion (not supported)', () =>
    refused(buildResponse(opts()).replace('<saml:Assertion ', '<saml:EncryptedAssertion/><saml:Assertion '), 'encrypted'))
})

describe('refused: hostile input, quickly', () => {
  const timed = (f: () => void, reason: string) => {
    const t = performance.now()
    expect(f).toThrow(SamlResponseError)
    try {
      f()
    } catch (e) {
      expect((e as SamlResponseError).reason).toBe(reason)
    }
    expect(performance.now() - t).toBeLessThan(2000)
  }
  it('DOCTYPE / XXE / entity expansion', () => {
    const xxe = `<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]><samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol">&x;</samlp:Response>`
    const laughs = `<!DOCTYPE l [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">]><l>&c;</l>`
    timed(() => verifySamlResponse(xxe, exp()), 'doctype')
    timed(() => verifySamlResponse(laughs, exp()), 'doctype')
    timed(() => verifySamlResponse(decodeSamlResponse(b64(xxe)), exp()), 'doctype')
  })
  it('5 MB', () => {
    const big = buildResponse(opts()).replace('alice@corp.example</saml:NameID>', `${'a'.repeat(5 * 1024 * 1024)}</saml:NameID>`)
    const encoded = b64(big)
    timed(() => decodeSamlResponse(encoded), 'too_large')
    timed(() => verifySamlResponse(big, exp()), 'too_large')
  })
  it('deep nesting', () => {
    const deep = '<a>'.repeat(MAX_RESPONSE_DEPTH + 1) + '</a>'.repeat(MAX_RESPONSE_DEPTH + 1)
    timed(() => verifySamlResponse(deep, exp()), 'too_deep')
    const deeper = '<a>'.repeat(9000) + '</a>'.repeat(9000)
    timed(() => verifySamlResponse(deeper, exp()), 'too_deep')
    const many = '<a>'.repeat(30_000) + '</a>'.repeat(30_000)
    timed(() => verifySamlResponse(many, exp()), 'too_many_tags')
  })
  it('malformed base64, not UTF-8, not XML, empty', () => {
    timed(() => decodeSamlResponse('PHNhbWw+*'), 'bad_base64')
    timed(() => decodeSamlResponse('PHNhbWw'), 'bad_base64')
    timed(() => decodeSamlResponse(''), 'empty')
    timed(() => decodeSamlResponse(btoa('\xff\xfe<x/>')), 'not_utf8')
    timed(() => verifySamlResponse('{"SAMLResponse": true}', exp()), 'not_xml')
    timed(() => verifySamlResponse('<samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol"><a></samlp:Response>', exp()), 'not_xml')
    timed(() => verifySamlResponse('<r/>', exp()), 'shape')
  })
  it('base64 wrapped in lines (as some IdPs send it) is fine', () => {
    const text = buildResponse(opts())
    expect(decodeSamlResponse(b64(text).replace(/(.{76})/g, '$1\r\n'))).toBe(text)
  })
})

describe('responses signed by xmlsec1 (libxmlsec1, a third implementation; test/fixtures/saml/xmlsec/make.mjs)', () => {
  const x = (o: Partial<ResponseExpectations> = {}) =>
    exp({ idpEntityId: 'https://xmlsec-idp.test.example/entity', acsUrl: 'http://edgehound.test/api/v2/sso/xmlsec-idp/callback', spEntityId: 'http://edgehound.test/api/v2/sso/xmlsec-idp', ...o })
  it('assertion, response and both signed are accepted', () => {
    expect(verifySamlResponse(XMLSEC_ASSERTION, x()).nameId).toBe('xmlsec-a@corp.example')
    expect(verifySamlResponse(XMLSEC_RESPONSE, x()).signed).toEqual({ response: true, assertion: false })
    expect(verifySamlResponse(XMLSEC_BOTH, x()).signed).toEqual({ response: true, assertion: true })
  })
  it('signed by another key, or tampered with, is refused', () => {
    expect(() => verifySamlResponse(XMLSEC_BY_B, x())).toThrow(/does not verify/)
    expect(() => verifySamlResponse(XMLSEC_ASSERTION.replaceAll('xmlsec-a@', 'xmlsec-z@'), x())).toThrow(/does not verify/)
    expect(() => verifySamlResponse(XMLSEC_BOTH.replace('PasswordProtectedTransport', 'Password'), x())).toThrow(/does not verify/)
  })
})
