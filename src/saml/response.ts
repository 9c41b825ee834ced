/**
 * SAML 2.0 Response verification: the `SAMLResponse` form value of the HTTP-POST binding in, the facts of
 * one signed assertion out — or a `SamlResponseError` naming precisely why not (for the log; the browser
 * never sees it). No HTTP, no storage; the clock and the provider's trust settings are parameters.
 * Replay and InResponseTo bookkeeping need storage and are done by the caller (sso.routes.ts) with what
 * this returns. See docs/saml.md, "Assertion consumer" and SECURITY.md, "SAML sign-in".
 *
 * XML-DSig itself (reference digests over exclusive canonicalisation, RSA signature over SignedInfo) is
 * xml-crypto 6's; everything around it is here and deliberately strict:
 *
 *   1. intake before any parser sees the text: size cap, strict base64 and UTF-8, no character XML forbids,
 *      no `<!DOCTYPE`/`<!ENTITY` anywhere (so no entity can be declared: no XXE, no billion laughs), a tag
 *      cap; then @xmldom/xmldom with an onError that throws on every level, and a nesting-depth cap
 *      walked iteratively; bounds on attributes and namespace declarations per tag (counted on the text,
 *      before the parser, which is quadratic in a tag's attributes) and on namespace declarations in scope
 *      (exclusive c14n is quadratic in them); so every unauthenticated request is cheap. xml-crypto later
 *      re-parses the same text with its own xmldom copy: it only ever sees a document this intake accepted.
 *   2. shape, over the WHOLE document (not just where we expect things): root samlp:Response; exactly one
 *      saml:Assertion anywhere and it is a direct child of the root (an extra assertion before, after or
 *      around the signed one, or one tucked into Extensions or a ds:Object, is refused outright); no
 *      EncryptedAssertion; every ID-like attribute value unique; every ds:Signature is a direct child of
 *      the Response or of the Assertion, at most one each.
 *   3. each present signature: exactly one Reference, whose URI is `#` + the ID of the signature's own
 *      parent (enveloped signature over its parent, nothing else); c14n = exclusive only; transforms
 *      only enveloped-signature and exclusive c14n; RSA-SHA256/512 and SHA-256/512 digests (SHA-1 only if
 *      the provider opted in). Key = one of the provider's metadata certificates, tried in turn; KeyInfo
 *      in the message is never read (getCertFromKeyInfo returns null). EVERY present signature must
 *      verify, and at least one must be present.
 *   4. what is read comes ONLY from what was signed: xml-crypto's getSignedReferences() returns the
 *      canonical bytes it digested; those are parsed again (same intake) and everything — issuer,
 *      subject, conditions, attributes, InResponseTo — is read from that copy, never from the received
 *      tree. Whatever was added around the signed element is simply not looked at. Canonical XML without
 *      comments has no comment nodes, so `user@evil.example<!---->.corp.example` reads as the whole text
 *      the IdP signed (the comment-truncation attack needs a reader that stops at the first text node).
 *   5. checks on the signed content: status Success; Destination (when present; required on a signed
 *      Response) = this provider's ACS URL; Issuer = the provider's entity id; a bearer
 *      SubjectConfirmation whose Recipient = ACS URL and whose NotOnOrAfter holds; Conditions present,
 *      NotBefore/NotOnOrAfter hold, every AudienceRestriction names this SP's entity id; all with
 *      CLOCK_SKEW_MS of tolerance. InResponseTo values that are signed must agree; an InResponseTo the
 *      signature does not cover is refused rather than trusted.
 */
import { DOMParser, type Document, type Element, type Node } from '@xmldom/xmldom'
import { SignedXml } from 'xml-crypto'

export const PROTOCOL_NS = 'urn:oasis:names:tc:SAML:2.0:protocol'
export const ASSERTION_NS = 'urn:oasis:names:tc:SAML:2.0:assertion'
const DSIG = 'http://www.w3.org/2000/09/xmldsig#'
const STATUS_SUCCESS = 'urn:oasis:names:tc:SAML:2.0:status:Success'
const BEARER = 'urn:oasis:names:tc:SAML:2.0:cm:bearer'
const NAMEID_ENTITY = 'urn:oasis:names:tc:SAML:2.0:nameid-format:entity'

const EXC_C14N = 'http://www.w3.org/2001/10/xml-exc-c14n#'
const ENVELOPED = 'http://www.w3.org/2000/09/xmldsig#enveloped-signature'
const RSA_SHA1 = 'http://www.w3.org/2000/09/xmldsig#rsa-sha1'
const RSA_SHA256 = 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256'
const RSA_SHA512 = 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha512'
const SHA1 = 'http://www.w3.org/2000/09/xmldsig#sha1'
const SHA256 = 'http://www.w3.org/2001/04/xmlenc#sha256'
const SHA512 = 'http://www.w3.org/2001/04/xmlenc#sha512'

/** Largest decoded response. Real ones are 4–40 KiB (ADFS with many group claims ~100 KiB). */
export const MAX_RESPONSE_BYTES = 512 * 1024
/** Largest `SAMLResponse` form value: base64 of MAX_RESPONSE_BYTES, plus line breaks some IdPs insert. */
export const MAX_RESPONSE_BASE64 = Math.ceil(MAX_RESPONSE_BYTES / 3) * 4 + 64 * 1024
/** Tag cap: a response has tens to a few thousand elements. */
export const MAX_RESPONSE_TAGS = 20_000
/** Nesting cap: Response > Assertion > AttributeStatement > Attribute > AttributeValue is 5; signatures add 6. */
export const MAX_RESPONSE_DEPTH = 32
/**
 * Attributes (namespace declarations included) on one start tag. The busiest element of a real response
 * (an Assertion or AttributeValue with ID, Version, IssueInstant, xsi:type and a few xmlns) has under 10.
 * xmldom checks each attribute against the element's others (quadratic: 32,500 on one tag cost 0.3 s),
 * so this is counted on the text, before the parser runs.
 */
export const MAX_ATTRIBUTES_PER_ELEMENT = 64
/** Namespace declarations on one start tag: real responses declare at most a handful per element. */
export const MAX_NAMESPACES_PER_ELEMENT = 32
/**
 * Namespace declarations in scope at any element (its own plus its ancestors', overrides counted twice).
 * Exclusive canonicalisation (xml-crypto) considers every in-scope namespace at every element it
 * writes, once per metadata certificate tried: a root declaring 32,500 prefixes made signature checking
 * quadratic (3.5–6.3 s for one forged request). Real responses have under 20 in scope (samlp, saml, ds,
 * xs, xsi, ...); 128 keeps the check linear in the document with a small constant.
 */
export const MAX_NAMESPACES_IN_SCOPE = 128
/**
 * Clock tolerance for NotBefore / NotOnOrAfter / IssueInstant: two minutes. IdP and worker clocks are
 * NTP-synchronised; two minutes covers drift and the browser's round trip without stretching a
 * five-minute assertion lifetime by much. (crewjam/saml, BloodHound's library, allows 180 s.)
 */
export const CLOCK_SKEW_MS = 120_000

/** `reason` is a short stable code for logs and tests; `message` says exactly what was wrong. */
export class SamlResponseError extends Error {
  constructor(
    readonly reason: string,
    message: string,
  ) {
    super(message)
    this.name = 'SamlResponseError'
  }
}
const fail = (reason: string, message: string): never => {
  throw new SamlResponseError(reason, message)
}

export interface ResponseExpectations {
  /** the provider's IdP entity id (saml_providers.issuer_uri) */
  idpEntityId: string
  /** DER of each signing certificate from the provider's metadata, standard base64 */
  certificates: string[]
  /** this provider's sp_acs_uri */
  acsUrl: string
  /** this provider's sp_issuer_uri (the SP entity id, the expected Audience) */
  spEntityId: string
  /** accept RSA-SHA1 signatures and SHA-1 digests (a per-provider opt-in; off by default) */
  allowSha1: boolean
  now: Date
}

export interface VerifiedAssertion {
  /** saml:Assertion@ID (the replay-cache key) */
  assertionId: string
  /** the signed InResponseTo, or null for an IdP-initiated response */
  inResponseTo: string | null
  nameId: string | null
  nameIdFormat: string | null
  /** attribute Name -> its values' text, in document order */
  attributes: Map<string, string[]>
  /** the last moment (skew included) at which this assertion could be accepted: replay entries live until then */
  acceptableUntil: Date
  /** AuthnStatement@SessionNotOnOrAfter, if the IdP limited the session */
  sessionNotOnOrAfter: Date | null
  signed: { response: boolean; assertion: boolean }
}

// ---- intake ----------------------------------------------------------------------------------------

/**
 * The form value → XML text. Base64 is strict apart from whitespace (IdPs wrap lines at 64 or 76): any
 * other stray character, bad padding or a length that is not a multiple of 4 is refused.
 */
export function decodeSamlResponse(value: string): string {
  if (value.length > MAX_RESPONSE_BASE64) fail('too_large', `SAMLResponse is longer than ${MAX_RESPONSE_BASE64} characters`)
  const b64 = value.replace(/[\t\n\r ]+/g, '')
  if (!b64) fail('empty', 'SAMLResponse is empty')
  if (!/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(b64)) fail('bad_base64', 'SAMLResponse is not valid base64')
  const bin = atob(b64)
  if (bin.length > MAX_RESPONSE_BYTES) fail('too_large', `the decoded SAML response is larger than ${MAX_RESPONSE_BYTES} bytes`)
  const bytes = new Uint8Array(bin.length)
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i)
  let text: string
  try {
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes)
  } catch {
    return fail('not_utf8', 'the decoded SAML response is not UTF-8 text')
  }
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text
}

/** Hardened parse (see 1. above). Used for the received document and again for each signed reference. */
export function parseHardened(xml: string, what = 'SAML response'): Document {
  if (xml.length > MAX_RESPONSE_BYTES) fail('too_large', `the ${what} is larger than ${MAX_RESPONSE_BYTES} characters`)
  const bad = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/.exec(xml)
  if (bad) fail('bad_char', `the ${what} contains a character XML does not allow (offset ${bad.index})`)
  // Textual and case-insensitive on purpose, comments and CDATA included: no legitimate response has a DTD.
  const dtd = /<!(DOCTYPE|ENTITY)/i.exec(xml)
  if (dtd) fail('doctype', `the ${what} contains a document type declaration ("<!${dtd[1]}"); DTDs are refused`)
  const decl = /^\s*<\?xml\s[^?]*?\bencoding\s*=\s*["']([^"']*)["']/.exec(xml)
  if (decl && !/^(utf-8|utf8|us-ascii)$/i.test(decl[1])) fail('not_utf8', `the ${what} declares encoding "${decl[1].slice(0, 40)}"`)
  let tags = 0
  for (let i = xml.indexOf('<'); i !== -1; i = xml.indexOf('<', i + 1))
    if (++tags > MAX_RESPONSE_TAGS) fail('too_many_tags', `the ${what} has more than ${MAX_RESPONSE_TAGS} tags`)
  checkStartTags(xml, what)
  let first: string | undefined
  let doc: Document
  try {
    doc = new DOMParser({
      onError: (_level: string, message: string) => {
        first ??= message
        throw new Error(message)
      },
    }).parseFromString(xml, 'application/xml')
  } catch (e) {
    const msg = (first ?? (e as Error)?.message ?? 'parse error').replace(/\s+/g, ' ').trim().slice(0, 200)
    return fail('not_xml', `the ${what} is not well-formed XML: ${msg}`)
  }
  const root = doc.documentElement
  if (!root) return fail('not_xml', `the ${what} has no root element`)
  // Depth and in-scope namespace declarations, walked iteratively (the parser has already bounded each tag).
  const stack: [Element, number, number][] = [[root, 1, 0]]
  while (stack.length) {
    const [el, depth, outer] = stack.pop()!
    if (depth > MAX_RESPONSE_DEPTH) fail('too_deep', `the ${what} nests elements more than ${MAX_RESPONSE_DEPTH} levels deep`)
    let inScope = outer
    for (let i = 0; i < el.attributes.length; i++) {
      const n = el.attributes.item(i)!.name
      if (n === 'xmlns' || n.startsWith('xmlns:')) inScope++
    }
    if (inScope > MAX_NAMESPACES_IN_SCOPE)
      fail('too_many_namespaces', `the ${what} has more than ${MAX_NAMESPACES_IN_SCOPE} namespace declarations in scope at one element`)
    for (let n = el.firstChild; n; n = n.nextSibling) if (n.nodeType === 1) stack.push([n as Element, depth + 1, inScope])
  }
  return doc
}

/**
 * Counts the attributes and namespace declarations of every start tag on the text, in one linear pass,
 * so that a tag too rich to be a SAML element is refused before xmldom (quadratic in a tag's attributes)
 * sees it. Comments, CDATA sections and processing instructions are skipped; anything this scanner
 * does not understand is left for the parser to refuse (it is only a bound, not a validator).
 */
function checkStartTags(xml: string, what: string): void {
  const n = xml.length
  const isSpace = (c: number) => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d
  let i = xml.indexOf('<')
  while (i !== -1 && i < n) {
    if (xml.startsWith('<!--', i)) {
      const e = xml.indexOf('-->', i + 4)
      if (e === -1) return
      i = xml.indexOf('<', e + 3)
      continue
    }
    if (xml.startsWith('<![CDATA[', i)) {
      const e = xml.indexOf(']]>', i + 9)
      if (e === -1) return
      i = xml.indexOf('<', e + 3)
      continue
    }
    if (xml.startsWith('<?', i)) {
      const e = xml.indexOf('?>', i + 2)
      if (e === -1) return
      i = xml.indexOf('<', e + 2)
      continue
    }
    const c0 = xml.charCodeAt(i + 1)
    if (c0 === 0x2f /* </ */ || c0 === 0x21 /* <! */) {
      i = xml.indexOf('<', i + 1)
      continue
    }
    // a start tag: the element name, then name="value" pairs up to > or />
    let j = i + 1
    while (j < n && !isSpace(xml.charCodeAt(j)) && xml[j] !== '>' && xml[j] !== '/') j++
    let attributes = 0
    let namespaces = 0
    for (;;) {
      while (j < n && isSpace(xml.charCodeAt(j))) j++
      if (j >= n || xml[j] === '>' || xml[j] === '/' || xml[j] === '<') break
      const nameStart = j
      while (j < n && xml[j] !== '=' && !isSpace(xml.charCodeAt(j)) && xml[j] !== '>' && xml[j] !== '<') j++
      const name = xml.slice(nameStart, j)
      while (j < n && isSpace(xml.charCodeAt(j))) j++
      if (xml[j] !== '=') break
      j++
      while (j < n && isSpace(xml.charCodeAt(j))) j++
      const q = xml[j]
      if (q !== '"' && q !== "'") break
      const end = xml.indexOf(q, j + 1)
      if (end === -1) return
      j = end + 1
      if (++attributes > MAX_ATTRIBUTES_PER_ELEMENT)
        fail('too_many_attributes', `the ${what} has an element with more than ${MAX_ATTRIBUTES_PER_ELEMENT} attributes`)
      if ((name === 'xmlns' || name.startsWith('xmlns:')) && ++namespaces > MAX_NAMESPACES_PER_ELEMENT)
        fail('too_many_namespaces', `the ${what} has an element with more than ${MAX_NAMESPACES_PER_ELEMENT} namespace declarations`)
    }
    i = xml.indexOf('<', j)
  }
}

// ---- DOM helpers (namespace + local name, never prefixes) ------------------------------------------

function kids(el: Element, ns?: string, local?: string): Element[] {
  const out: Element[] = []
  for (let n = el.firstChild; n; n = n.nextSibling)
    if (n.nodeType === 1) {
      const e = n as Element
      if ((ns === undefined || e.namespaceURI === ns) && (local === undefined || e.localName === local)) out.push(e)
    }
  return out
}
function one(el: Element, ns: string, local: string, where: string, optional: true): Element | null
function one(el: Element, ns: string, local: string, where: string): Element
function one(el: Element, ns: string, local: string, where: string, optional = false): Element | null {
  const k = kids(el, ns, local)
  if (k.length > 1) fail('shape', `${where} has ${k.length} ${local} elements; one is allowed`)
  if (k.length === 0 && !optional) fail('shape', `${where} has no ${local}`)
  return k[0] ?? null
}
/** Unqualified attribute, or null. */
function attr(el: Element, name: string): string | null {
  for (let i = 0; i < el.attributes.length; i++) {
    const a = el.attributes.item(i)!
    if (!a.namespaceURI && (a.localName ?? a.name) === name) return a.value
  }
  return null
}
/** All descendant text (CDATA included), as a DOM textContent. Only used on canonical, comment-free copies. */
function textOf(el: Element): string {
  let s = ''
  const stack: Node[] = [el]
  while (stack.length) {
    const n = stack.pop()!
    if (n.nodeType === 3 || n.nodeType === 4) s += n.nodeValue ?? ''
    else for (let c = n.lastChild; c; c = c.previousSibling) stack.push(c)
  }
  return s
}
/** Element-free text content, trimmed (Issuer, NameID, Audience, StatusCode): a child element is refused. */
function plainText(el: Element, where: string): string {
  if (kids(el).length) fail('shape', `${where} must contain text only`)
  return textOf(el).trim()
}
const show = (s: string | null) => (s === null ? 'none' : JSON.stringify(s.length > 200 ? `${s.slice(0, 200)}…` : s))

const XS_DATETIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/
function instant(el: Element, name: string, where: string, required: true): Date
function instant(el: Element, name: string, where: string, required?: false): Date | null
function instant(el: Element, name: string, where: string, required = false): Date | null {
  const v = attr(el, name)
  if (v === null) return required ? fail('shape', `${where} has no ${name}`) : null
  // SAML requires UTC ("Z"); an explicit offset is accepted, a zone-less time is not (its meaning would be a guess).
  const d = XS_DATETIME.test(v.trim()) ? new Date(v.trim()) : null
  if (!d || Number.isNaN(d.getTime())) fail('shape', `${where} ${name} ${show(v)} is not a valid UTC xs:dateTime`)
  return d
}

// ---- signatures --------------------------------------------------------------------------------------

function certPem(derBase64: string): string {
  return `-----BEGIN CERTIFICATE-----\n${derBase64.match(/.{1,64}/g)!.join('\n')}\n-----END CERTIFICATE-----\n`
}

/**
 * The algorithm whitelist, checked on the received Signature before anything is computed (so the log
 * says which algorithm was refused) and enforced again by handing xml-crypto only these implementations.
 */
function checkSignatureShape(sig: Element, parent: Element, allowSha1: boolean, where: string): void {
  const signedInfo = one(sig, DSIG, 'SignedInfo', `${where} Signature`)
  const c14n = attr(one(signedInfo, DSIG, 'CanonicalizationMethod', `${where} SignedInfo`), 'Algorithm')
  if (c14n !== EXC_C14N) fail('algorithm', `${where} signature uses canonicalization ${show(c14n)}; only exclusive c14n is accepted`)
  const method = attr(one(signedInfo, DSIG, 'SignatureMethod', `${where} SignedInfo`), 'Algorithm')
  const methods = allowSha1 ? [RSA_SHA256, RSA_SHA512, RSA_SHA1] : [RSA_SHA256, RSA_SHA512]
  if (!methods.includes(method ?? ''))
    fail(
      method === RSA_SHA1 ? 'sha1' : 'algorithm',
      method === RSA_SHA1
        ? `${where} signature uses RSA-SHA1, which this provider does not accept (enable allow_sha1 only for an IdP that cannot do better)`
        : `${where} signature uses ${show(method)}; accepted: ${methods.join(', ')}`,
    )
  const refs = kids(signedInfo, DSIG, 'Reference')
  if (refs.length !== 1) fail('reference', `${where} signature has ${refs.length} references; exactly one is accepted`)
  const uri = attr(refs[0], 'URI')
  const id = attr(parent, 'ID')
  // The signature must cover its own parent: `#ID` of the enveloping element. An empty URI (whole document),
  // an XPointer or another element's ID would make "what is signed" differ from "where the signature sits".
  if (!id || uri !== `#${id}`) fail('reference', `${where} signature references ${show(uri)}, not its own ${parent.localName} (ID ${show(id)})`)
  const transforms = one(refs[0], DSIG, 'Transforms', `${where} Reference`, true)
  for (const t of transforms ? kids(transforms) : []) {
    const alg = t.namespaceURI === DSIG && t.localName === 'Transform' ? attr(t, 'Algorithm') : null
    if (alg !== ENVELOPED && alg !== EXC_C14N) fail('algorithm', `${where} signature uses transform ${show(alg)}; only enveloped-signature and exclusive c14n are accepted`)
  }
  const digest = attr(one(refs[0], DSIG, 'DigestMethod', `${where} Reference`), 'Algorithm')
  const digests = allowSha1 ? [SHA256, SHA512, SHA1] : [SHA256, SHA512]
  if (!digests.includes(digest ?? ''))
    fail(digest === SHA1 ? 'sha1' : 'algorithm', `${where} signature uses digest ${show(digest)}; accepted: ${digests.join(', ')}`)
}

/**
 * Verifies one enveloped signature against the metadata certificates (KeyInfo ignored) and returns the
 * parsed canonical copy of what it signed: its root is the signature's parent, as signed.
 */
function verifyOne(xml: string, sig: Element, parent: Element, exp: ResponseExpectations, where: string): Element {
  checkSignatureShape(sig, parent, exp.allowSha1, where)
  const problems: string[] = []
  for (const [i, der] of exp.certificates.entries()) {
    const sx = new SignedXml({ publicCert: certPem(der), getCertFromKeyInfo: () => null })
    // Only what checkSignatureShape allows, so nothing else can be reached even through a path not checked there.
    sx.CanonicalizationAlgorithms = {
      [EXC_C14N]: sx.CanonicalizationAlgorithms[EXC_C14N],
      [ENVELOPED]: sx.CanonicalizationAlgorithms[ENVELOPED],
    } as typeof sx.CanonicalizationAlgorithms
    sx.HashAlgorithms = Object.fromEntries(
      Object.entries(sx.HashAlgorithms).filter(([k]) => k === SHA256 || k === SHA512 || (exp.allowSha1 && k === SHA1)),
    ) as typeof sx.HashAlgorithms
    sx.SignatureAlgorithms = Object.fromEntries(
      Object.entries(sx.SignatureAlgorithms).filter(([k]) => k === RSA_SHA256 || k === RSA_SHA512 || (exp.allowSha1 && k === RSA_SHA1)),
    ) as typeof sx.SignatureAlgorithms
    let ok = false
    try {
      sx.loadSignature(sig as unknown as Parameters<typeof sx.loadSignature>[0])
      ok = sx.checkSignature(xml)
      if (!ok) {
        const why = sx.getReferences().find((r) => r.validationError)?.validationError?.message
        problems.push(`certificate ${i + 1}: ${why ?? 'signature value does not verify'}`)
      }
    } catch (e) {
      problems.push(`certificate ${i + 1}: ${String((e as Error)?.message ?? e).slice(0, 200)}`)
    }
    if (!ok) continue
    const signed = sx.getSignedReferences()
    if (signed.length !== 1) fail('reference', `${where} signature verified ${signed.length} references; exactly one is accepted`)
    const copy = parseHardened(signed[0], `signed ${parent.localName}`).documentElement as Element
    if (copy.namespaceURI !== parent.namespaceURI || copy.localName !== parent.localName || attr(copy, 'ID') !== attr(parent, 'ID'))
      fail('reference', `${where} signature covers a ${copy.localName} that is not the element it sits in`)
    return copy
  }
  return fail(
    'signature',
    `${where} signature does not verify against any of the provider's ${exp.certificates.length} signing certificate(s): ${problems.join('; ').slice(0, 600)}`,
  )
}

// ---- the whole check -------------------------------------------------------------------------------

export function verifySamlResponse(xml: string, exp: ResponseExpectations): VerifiedAssertion {
  const doc = parseHardened(xml)
  const root = doc.documentElement as Element
  if (root.namespaceURI !== PROTOCOL_NS || root.localName !== 'Response')
    fail('shape', `root element is ${show(root.localName)} in ${show(root.namespaceURI)}, not samlp:Response`)

  // One pass over everything (iterative): the elements an attacker could add anywhere.
  const assertions: Element[] = []
  const signatures: Element[] = []
  const ids = new Set<string>()
  const stack: Element[] = [root]
  while (stack.length) {
    const el = stack.pop()!
    if (el.namespaceURI === ASSERTION_NS && el.localName === 'Assertion') assertions.push(el)
    if (el.namespaceURI === ASSERTION_NS && (el.localName === 'EncryptedAssertion' || el.localName === 'EncryptedID'))
      fail('encrypted', `the response contains ${el.localName}; encrypted assertions are not supported (turn assertion encryption off at the IdP)`)
    if (el.namespaceURI === DSIG && el.localName === 'Signature') signatures.push(el)
    for (let i = 0; i < el.attributes.length; i++) {
      const a = el.attributes.item(i)!
      // xml-crypto resolves references by any attribute named ID, Id or id (any namespace): all must be unique.
      if (['ID', 'Id', 'id'].includes(a.localName ?? a.name)) {
        if (ids.has(a.value)) fail('duplicate_id', `the ID ${show(a.value)} occurs more than once`)
        ids.add(a.value)
      }
    }
    for (let n = el.firstChild; n; n = n.nextSibling) if (n.nodeType === 1) stack.push(n as Element)
  }
  if (assertions.length !== 1) fail('assertion_count', `the response contains ${assertions.length} Assertion elements; exactly one is accepted`)
  const assertion = assertions[0]
  if (assertion.parentNode !== root) fail('shape', 'the Assertion is not a direct child of the Response')

  let responseSig: Element | null = null
  let assertionSig: Element | null = null
  for (const s of signatures) {
    if (s.parentNode === root && !responseSig) responseSig = s
    else if (s.parentNode === assertion && !assertionSig) assertionSig = s
    else fail('signature_place', `a Signature sits in ${(s.parentNode as Element | null)?.localName ?? 'nothing'}; only one on the Response and one on the Assertion are accepted`)
  }
  if (!responseSig && !assertionSig) fail('unsigned', 'neither the Response nor the Assertion is signed')

  // Every present signature must verify; each yields the canonical copy of what it covers.
  const signedResponse = responseSig ? verifyOne(xml, responseSig, root, exp, 'Response') : null
  const signedAssertionCopy = assertionSig ? verifyOne(xml, assertionSig, assertion, exp, 'Assertion') : null
  let signedAssertion: Element
  if (signedAssertionCopy) signedAssertion = signedAssertionCopy
  else {
    const inside = kids(signedResponse!, ASSERTION_NS, 'Assertion')
    if (inside.length !== 1) fail('assertion_count', `the signed Response contains ${inside.length} Assertion elements`)
    signedAssertion = inside[0]
  }

  const now = exp.now.getTime()
  // Response-level checks: on the signed copy when the Response is signed, else on the received element
  // (its values then only ever refuse, never grant: status and Destination must still be right).
  const response = signedResponse ?? root
  if (attr(response, 'Version') !== '2.0') fail('shape', `Response Version is ${show(attr(response, 'Version'))}, not 2.0`)
  const destination = attr(response, 'Destination')
  if (destination === null && signedResponse) fail('destination', 'the signed Response has no Destination')
  if (destination !== null && destination !== exp.acsUrl) fail('destination', `Response Destination is ${show(destination)}, not this provider's ACS URL ${show(exp.acsUrl)}`)
  const status = one(response, PROTOCOL_NS, 'Status', 'Response')
  const code = attr(one(status, PROTOCOL_NS, 'StatusCode', 'Status'), 'Value')
  if (code !== STATUS_SUCCESS) fail('status', `the IdP answered status ${show(code)}`)
  const rIssuer = one(response, ASSERTION_NS, 'Issuer', 'Response', true)
  if (rIssuer && plainText(rIssuer, 'Response Issuer') !== exp.idpEntityId)
    fail('issuer', `Response Issuer is ${show(plainText(rIssuer, 'Response Issuer'))}, not the provider's entity id ${show(exp.idpEntityId)}`)

  // Assertion checks, on the signed copy only.
  const a = signedAssertion
  if (attr(a, 'Version') !== '2.0') fail('shape', `Assertion Version is ${show(attr(a, 'Version'))}, not 2.0`)
  const assertionId = attr(a, 'ID')
  if (!assertionId) return fail('shape', 'the Assertion has no ID')
  const issueInstant = instant(a, 'IssueInstant', 'Assertion', true)
  if (issueInstant.getTime() > now + CLOCK_SKEW_MS) fail('not_yet_valid', `Assertion IssueInstant ${issueInstant.toISOString()} is in the future`)
  const issuerEl = one(a, ASSERTION_NS, 'Issuer', 'Assertion')
  const issuerFormat = attr(issuerEl, 'Format')
  if (issuerFormat !== null && issuerFormat !== NAMEID_ENTITY) fail('issuer', `Assertion Issuer Format is ${show(issuerFormat)}`)
  const issuer = plainText(issuerEl, 'Assertion Issuer')
  if (issuer !== exp.idpEntityId) fail('issuer', `Assertion Issuer is ${show(issuer)}, not the provider's entity id ${show(exp.idpEntityId)}`)

  // Subject: NameID and a bearer confirmation addressed to this ACS that has not expired.
  const subject = one(a, ASSERTION_NS, 'Subject', 'Assertion')
  const nameIdEl = one(subject, ASSERTION_NS, 'NameID', 'Subject', true)
  const nameId = nameIdEl ? plainText(nameIdEl, 'NameID') : null
  const bearerProblems: string[] = []
  let confirmation: { inResponseTo: string | null; notOnOrAfter: Date } | null = null
  for (const sc of kids(subject, ASSERTION_NS, 'SubjectConfirmation')) {
    if (attr(sc, 'Method') !== BEARER) continue
    const d = one(sc, ASSERTION_NS, 'SubjectConfirmationData', 'SubjectConfirmation', true)
    if (!d) {
      bearerProblems.push('no SubjectConfirmationData')
      continue
    }
    const recipient = attr(d, 'Recipient')
    const notOnOrAfter = instant(d, 'NotOnOrAfter', 'SubjectConfirmationData')
    const notBefore = instant(d, 'NotBefore', 'SubjectConfirmationData')
    if (recipient !== exp.acsUrl) bearerProblems.push(`Recipient ${show(recipient)} is not this provider's ACS URL ${show(exp.acsUrl)}`)
    else if (!notOnOrAfter) bearerProblems.push('no NotOnOrAfter')
    else if (now >= notOnOrAfter.getTime() + CLOCK_SKEW_MS) bearerProblems.push(`expired: NotOnOrAfter ${notOnOrAfter.toISOString()}`)
    else if (notBefore && now < notBefore.getTime() - CLOCK_SKEW_MS) bearerProblems.push(`not yet valid: NotBefore ${notBefore.toISOString()}`)
    else {
      confirmation = { inResponseTo: attr(d, 'InResponseTo'), notOnOrAfter }
      break
    }
  }
  if (!confirmation) {
    const reason = bearerProblems.some((p) => p.startsWith('Recipient')) ? 'recipient' : bearerProblems.some((p) => p.startsWith('expired')) ? 'expired' : bearerProblems.some((p) => p.startsWith('not yet')) ? 'not_yet_valid' : 'subject'
    return fail(reason, `no acceptable bearer SubjectConfirmation: ${bearerProblems.join('; ') || 'none present'}`)
  }

  // Conditions: required (an assertion without an audience restriction is good for any SP).
  const cond = one(a, ASSERTION_NS, 'Conditions', 'Assertion')
  const cNotBefore = instant(cond, 'NotBefore', 'Conditions')
  const cNotOnOrAfter = instant(cond, 'NotOnOrAfter', 'Conditions')
  if (cNotBefore && now < cNotBefore.getTime() - CLOCK_SKEW_MS) fail('not_yet_valid', `Conditions NotBefore ${cNotBefore.toISOString()} is in the future`)
  if (cNotOnOrAfter && now >= cNotOnOrAfter.getTime() + CLOCK_SKEW_MS) fail('expired', `Conditions NotOnOrAfter ${cNotOnOrAfter.toISOString()} has passed`)
  const restrictions = kids(cond, ASSERTION_NS, 'AudienceRestriction')
  if (restrictions.length === 0) fail('audience', 'the Assertion has no AudienceRestriction')
  for (const r of restrictions) {
    const audiences = kids(r, ASSERTION_NS, 'Audience').map((x) => plainText(x, 'Audience'))
    // Each restriction must be satisfied (SAML core §2.5.1.4): this SP must be named in every one.
    if (!audiences.includes(exp.spEntityId)) fail('audience', `AudienceRestriction names ${audiences.map(show).join(', ') || 'nobody'}, not this SP ${show(exp.spEntityId)}`)
  }

  const authn = kids(a, ASSERTION_NS, 'AuthnStatement')
  if (authn.length === 0) fail('shape', 'the Assertion has no AuthnStatement')
  const sessionNotOnOrAfter = instant(authn[0], 'SessionNotOnOrAfter', 'AuthnStatement')

  // InResponseTo: only signed values count, and they must agree. An unsigned Response's InResponseTo
  // that the signed assertion does not confirm is refused: it could turn an IdP-initiated assertion
  // into one that looks solicited.
  const signedIrt = [signedResponse ? attr(signedResponse, 'InResponseTo') : null, confirmation.inResponseTo].filter((v): v is string => v !== null)
  if (new Set(signedIrt).size > 1) fail('in_response_to', `the signed InResponseTo values differ: ${signedIrt.map(show).join(', ')}`)
  const inResponseTo = signedIrt[0] ?? null
  const outerIrt = attr(root, 'InResponseTo')
  if (!signedResponse && outerIrt !== null && outerIrt !== inResponseTo)
    fail('in_response_to', `the unsigned Response says InResponseTo ${show(outerIrt)}, which the signed Assertion does not confirm (${show(inResponseTo)})`)

  const attributes = new Map<string, string[]>()
  for (const st of kids(a, ASSERTION_NS, 'AttributeStatement'))
    for (const at of kids(st, ASSERTION_NS, 'Attribute')) {
      const name = attr(at, 'Name')
      if (!name) continue
      const values = kids(at, ASSERTION_NS, 'AttributeValue').map((v) => textOf(v).trim())
      attributes.set(name, [...(attributes.get(name) ?? []), ...values])
    }

  const limits = [confirmation.notOnOrAfter.getTime(), ...(cNotOnOrAfter ? [cNotOnOrAfter.getTime()] : [])]
  return {
    assertionId,
    inResponseTo,
    nameId,
    nameIdFormat: nameIdEl ? attr(nameIdEl, 'Format') : null,
    attributes,
    acceptableUntil: new Date(Math.min(...limits) + CLOCK_SKEW_MS),
    sessionNotOnOrAfter,
    signed: { response: signedResponse !== null, assertion: signedAssertionCopy !== null },
  }
}
