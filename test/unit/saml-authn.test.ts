import { describe, expect, it } from 'vitest'
import { DOMParser, type Element } from '@xmldom/xmldom'
import { inflateSync } from 'fflate'
import {
  authnRequestXml,
  checkRelayState,
  chooseSsoTarget,
  cspOrigin,
  deflateAndEncode,
  htmlEscape,
  MAX_RELAY_STATE,
  NAMEID_UNSPECIFIED,
  newRequestId,
  normaliseEndpoint,
  postBindingPage,
  redirectBindingLocation,
} from '../../src/saml/authn-request'
import { idpSsoServices, MetadataError } from '../../src/saml/metadata'
import { EXPECTED, HOSTILE_FIXTURES, IDP_FIXTURES } from '../fixtures/saml/corpus'

const PROTOCOL = 'urn:oasis:names:tc:SAML:2.0:protocol'
const ASSERTION = 'urn:oasis:names:tc:SAML:2.0:assertion'
const POST = 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST'
const ACS = 'https://bh.example.com/api/v2/sso/corp/callback'
const ISSUER = 'https://bh.example.com/api/v2/sso/corp'
const INSTANT = new Date('2026-11-25T12:34:56.789Z')

function parse(xml: string): Element {
  const doc = new DOMParser({
    onError: (_l: string, m: string) => {
      throw new Error(m)
    },
  }).parseFromString(xml, 'application/xml')
  return doc.documentElement as Element
}

function request(destination = 'https://idp.example.com/sso') {
  return authnRequestXml({ id: '_abc123', issueInstant: INSTANT, destination, acsUrl: ACS, issuer: ISSUER })
}

async function inflateWithWorkerd(b64: string): Promise<string> {
  const bytes = Uint8Array.from(atob(b64), (ch) => ch.charCodeAt(0))
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('deflate-raw'))
  return new Response(stream).text()
}

describe('AuthnRequest', () => {
  it('has every attribute and element the SP-initiated profile needs, in the SAML namespaces', () => {
    const root = parse(request())
    expect(root.namespaceURI).toBe(PROTOCOL)
    expect(root.localName).toBe('AuthnRequest')
    expect(root.getAttribute('ID')).toBe('_abc123')
    expect(root.getAttribute('Version')).toBe('2.0')
    expect(root.getAttribute('IssueInstant')).toBe('2026-11-25T12:34:56.789Z')
    expect(root.getAttribute('Destination')).toBe('https://idp.example.com/sso')
    expect(root.getAttribute('AssertionConsumerServiceURL')).toBe(ACS)
    expect(root.getAttribute('ProtocolBinding')).toBe(POST)
    const issuer = root.getElementsByTagNameNS(ASSERTION, 'Issuer')
    expect(issuer.length).toBe(1)
    expect(issuer[0].textContent).toBe(ISSUER)
    const policy = root.getElementsByTagNameNS(PROTOCOL, 'NameIDPolicy')
    expect(policy.length).toBe(1)
    expect(policy[0].getAttribute('Format')).toBe(NAMEID_UNSPECIFIED)
    expect(policy[0].getAttribute('AllowCreate')).toBe('true')
    // Issuer comes before NameIDPolicy (schema order)
    const kids = [...Array.from({ length: root.childNodes.length }, (_, i) => root.childNodes[i])].map((n) => (n as Element).localName)
    expect(kids).toEqual(['Issuer', 'NameIDPolicy'])
  })

  it('escapes values: a destination with & and quotes stays one attribute with the exact value', () => {
    const nasty = 'https://idp.example.com/sso?a=1&b="2"&c=<3>\''
    const root = parse(request(nasty))
    expect(root.getAttribute('Destination')).toBe(nasty)
    expect(root.attributes.length).toBe(8) // 2 xmlns + 6 attributes: nothing injected
  })

  it('refuses an ID that is not an xs:ID', () => {
    expect(() => authnRequestXml({ id: '1abc', issueInstant: INSTANT, destination: 'https://i/x', acsUrl: ACS, issuer: ISSUER })).toThrow(/xs:ID/)
    expect(() => authnRequestXml({ id: '_a" x="y', issueInstant: INSTANT, destination: 'https://i/x', acsUrl: ACS, issuer: ISSUER })).toThrow(/xs:ID/)
  })

  it('request ids: "_" + 160 random bits in hex, different each time', () => {
    expect(newRequestId(new Uint8Array(20).fill(0xab))).toBe(`_${'ab'.repeat(20)}`)
    const ids = new Set(Array.from({ length: 50 }, () => newRequestId()))
    expect(ids.size).toBe(50)
    for (const id of ids) expect(id).toMatch(/^_[0-9a-f]{40}$/)
  })
})

describe('RelayState', () => {
  it.each(['/', '/ui', '/ui/explore?x=1&y=%20z#frag', `/${'a'.repeat(MAX_RELAY_STATE - 1)}`])('accepts %s', (v) => {
    expect(checkRelayState(v)).toEqual({ ok: true, value: v })
  })

  it.each([
    ['', /starting with "\/"/],
    ['ui/explore', /starting with "\/"/],
    ['https://evil.example/', /starting with "\/"/],
    ['javascript:alert(1)', /starting with "\/"/],
    ['//evil.example/', /another site/],
    ['/\\evil.example/', /another site/],
    ['/a\\b', /printable ASCII/],
    ['/\t/evil.example', /printable ASCII/],
    ['/a b', /printable ASCII/],
    ['/x\r\nSet-Cookie: a=b', /printable ASCII/],
    ['/caf\u00e9', /printable ASCII/],
    [`/${'a'.repeat(MAX_RELAY_STATE)}`, /at most 512 characters \(it has 513\)/],
  ])('refuses %j', (v, message) => {
    const r = checkRelayState(v)
    expect(r.ok).toBe(false)
    if (!r.ok) expect(r.message).toMatch(message)
  })
})

describe('HTTP-Redirect binding', () => {
  it('SAMLRequest is raw DEFLATE + base64, URL-encoded; it inflates (fflate and workerd) to the request', async () => {
    const xml = request()
    const loc = redirectBindingLocation('https://idp.example.com/sso', xml, null)
    expect(loc.startsWith('https://idp.example.com/sso?SAMLRequest=')).toBe(true)
    const u = new URL(loc)
    expect([...u.searchParams.keys()]).toEqual(['SAMLRequest'])
    const b64 = u.searchParams.get('SAMLRequest')!
    expect(b64).toBe(deflateAndEncode(xml))
    expect(new TextDecoder().decode(inflateSync(Uint8Array.from(atob(b64), (c) => c.charCodeAt(0))))).toBe(xml)
    expect(await inflateWithWorkerd(b64)).toBe(xml)
    // base64's + / = are percent-encoded in the query (a raw + would read as a space)
    expect(loc.slice(loc.indexOf('=') + 1)).not.toMatch(/[+/=]/)
  })

  it('keeps the endpoint query (tenant parameters) and appends RelayState encoded', () => {
    const loc = redirectBindingLocation('https://idp.example.com/sso?tenant=acme&flow=sp', request(), '/ui/explore?x=1&y=2')
    const u = new URL(loc)
    expect(u.origin + u.pathname).toBe('https://idp.example.com/sso')
    expect(u.searchParams.get('tenant')).toBe('acme')
    expect(u.searchParams.get('flow')).toBe('sp')
    expect(u.searchParams.get('RelayState')).toBe('/ui/explore?x=1&y=2')
    expect(loc).toContain('&RelayState=%2Fui%2Fexplore%3Fx%3D1%26y%3D2')
    expect(redirectBindingLocation('https://i.example/s?', request(), null)).toMatch(/^https:\/\/i\.example\/s\?SAMLRequest=/)
    expect(redirectBindingLocation('https://i.example/s?a=1&', request(), null)).toMatch(/^https:\/\/i\.example\/s\?a=1&SAMLRequest=/)
  })

  it('normalised endpoints: fragment dropped, spaces and non-ASCII percent-encoded, only http(s)', () => {
    expect(normaliseEndpoint('https://idp.example.com/sso#x')).toBe('https://idp.example.com/sso')
    expect(normaliseEndpoint('https://idp.example.com/a b/é?q=ü')).toBe('https://idp.example.com/a%20b/%C3%A9?q=%C3%BC')
    expect(normaliseEndpoint('https://idp.example.com/sso?tenant=acme&flow=sp')).toBe('https://idp.example.com/sso?tenant=acme&flow=sp')
    expect(() => normaliseEndpoint('ftp://idp.example.com/')).toThrow()
  })
})

describe('binding choice', () => {
  const stored = { binding: 'HTTP-POST' as const, url: 'https://idp/post' }
  it('Redirect when listed (at its own Location), else POST, else what was stored', () => {
    expect(chooseSsoTarget({ post: 'https://idp/post', redirect: 'https://idp/redirect' }, stored)).toEqual({ binding: 'HTTP-Redirect', url: 'https://idp/redirect' })
    expect(chooseSsoTarget({ post: 'https://idp/post', redirect: null }, stored)).toEqual({ binding: 'HTTP-POST', url: 'https://idp/post' })
    expect(chooseSsoTarget({ post: null, redirect: 'https://idp/r' }, stored)).toEqual({ binding: 'HTTP-Redirect', url: 'https://idp/r' })
    expect(chooseSsoTarget(null, stored)).toEqual(stored)
    expect(chooseSsoTarget({ post: null, redirect: null }, stored)).toEqual(stored)
  })
})

describe('HTTP-POST binding page', () => {
  const nonce = 'AAECAwQFBgcICQoLDA0ODw=='
  it('posts base64 SAMLRequest and RelayState to the endpoint; everything is escaped; CSP is strict', () => {
    const xml = request('https://idp.example.com/sso?a=1&b=2')
    const page = postBindingPage({
      endpoint: 'https://idp.example.com/sso?a=1&b=2',
      xml,
      relayState: '/ui/"><script>alert(1)</script>',
      nonce,
      providerName: 'Evil <script>alert(2)</script> & "Co"',
    })
    expect(page.csp).toBe(`default-src 'none'; script-src 'nonce-${nonce}'; form-action https://idp.example.com; base-uri 'none'; frame-ancestors 'none'`)
    expect(page.html).toContain('<form method="post" action="https://idp.example.com/sso?a=1&amp;b=2">')
    const samlRequest = /name="SAMLRequest" value="([^"]*)"/.exec(page.html)![1]
    expect(new TextDecoder().decode(Uint8Array.from(atob(samlRequest), (c) => c.charCodeAt(0)))).toBe(xml)
    expect(page.html).toContain('name="RelayState" value="/ui/&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;"')
    expect(page.html).toContain('Evil &lt;script&gt;alert(2)&lt;/script&gt; &amp; &quot;Co&quot;')
    // exactly one script element, and it carries the nonce
    expect(page.html.match(/<script/g)).toHaveLength(1)
    expect(page.html).toContain(`<script nonce="${nonce}">document.forms[0].submit()</script>`)
    expect(page.html).toContain('<button type="submit">')
  })

  it('omits RelayState when none was given; refuses a nonce that is not base64', () => {
    const page = postBindingPage({ endpoint: 'https://idp.example.com/sso', xml: request(), relayState: null, nonce, providerName: 'x' })
    expect(page.html).not.toContain('RelayState')
    expect(() => postBindingPage({ endpoint: 'https://idp.example.com/sso', xml: request(), relayState: null, nonce: "a'; script-src *", providerName: 'x' })).toThrow(/nonce/)
  })

  it('CSP origins: ordinary hosts, ports and IPv6 pass; hosts with CSP syntax do not', () => {
    expect(cspOrigin('https://idp.example.com/sso?x=1')).toBe('https://idp.example.com')
    expect(cspOrigin('http://localhost:8080/realms/x')).toBe('http://localhost:8080')
    expect(cspOrigin('https://[::1]:8443/sso')).toBe('https://[::1]:8443')
    expect(cspOrigin('https://bücher.example/sso')).toBe('https://xn--bcher-kva.example')
    expect(cspOrigin('https://a;script-src.example/sso')).toBeNull()
    expect(cspOrigin('https://a,b.example/sso')).toBeNull()
  })

  it('htmlEscape covers the five characters', () => {
    expect(htmlEscape(`<a href="x" title='y'>&</a>`)).toBe('&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;')
  })
})

describe('idpSsoServices: endpoints per binding from stored metadata', () => {
  for (const [file, xml] of Object.entries(IDP_FIXTURES)) {
    it(`${file}: agrees with the endpoint chosen at upload`, () => {
      const s = idpSsoServices(xml)
      const want = EXPECTED[file]
      expect(want.binding === 'HTTP-POST' ? s.post : s.redirect).toBe(want.sso_url)
      expect(s.post ?? s.redirect).toBe(want.sso_url)
    })
  }

  it('finds Redirect endpoints that differ from POST, and absent bindings', () => {
    expect(idpSsoServices(IDP_FIXTURES['shibboleth.xml'])).toEqual({
      post: 'https://idp.university.example.edu/idp/profile/SAML2/POST/SSO',
      redirect: 'https://idp.university.example.edu/idp/profile/SAML2/Redirect/SSO',
    })
    expect(idpSsoServices(IDP_FIXTURES['jumpcloud.xml'])).toEqual({ post: 'https://sso.jumpcloud.com/saml2/edgehound', redirect: null })
    expect(idpSsoServices(IDP_FIXTURES['redirect-only.xml'])).toEqual({ post: null, redirect: 'https://idp.redirect-only.example.net/saml/sso?tenant=acme&flow=sp' })
  })

  it('keeps the hardening: DTDs and malformed documents are refused', () => {
    for (const f of ['doctype.xml', 'xxe.xml', 'billion-laughs.xml', 'truncated.xml', 'two-roots.xml'])
      expect(() => idpSsoServices(HOSTILE_FIXTURES[f]), f).toThrow(MetadataError)
  })

  it('a relative Redirect Location counts as absent (POST stays usable)', () => {
    const xml = IDP_FIXTURES['okta.xml'].replace(
      /(Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location=")[^"]*"/,
      '$1/relative/sso"',
    )
    expect(xml).toContain('/relative/sso')
    expect(idpSsoServices(xml)).toEqual({ post: EXPECTED['okta.xml'].sso_url, redirect: null })
  })
})
