/**
 * SAML 2.0 IdP metadata intake: bytes of an uploaded metadata file in, the few facts a service provider
 * needs out (entity id, SSO endpoint, signing certificates, expiry). Pure: no HTTP, no storage; the
 * clock is a parameter. Every refusal is a MetadataError whose message names the element or attribute
 * at fault, so the route can answer a 400 (or 413) envelope with it.
 *
 * Hardening, in the order applied (reasoning next to each step in `parseIdpMetadata`):
 *   1. size cap before anything else (1 MiB)              -> bounded memory and time
 *   2. strict UTF-8 decoding                               -> no mojibake reaching the parser
 *   3. refuse `<!DOCTYPE` and `<!ENTITY` anywhere          -> no XXE, no entity expansion (billion laughs),
 *                                                             no external references (they only exist in DTDs)
 *   4. cap the number of tags                              -> bounds DOM size on adversarial input
 *   5. @xmldom/xmldom 0.9.12 with an onError that throws on warnings, errors and fatal errors
 *                                                          -> malformed, truncated, two-root documents and
 *                                                             undefined entity references are all refused
 *   6. match elements by namespace URI + local name, never by prefix; walk only direct children
 *      (iteratively), so deep nesting cannot exhaust the stack.
 *   7. refuse characters XML 1.0 does not allow (NUL, other C0 controls, U+FFFE/U+FFFF), which
 *      xmldom lets through                                 -> a stored document is well-formed XML
 *   8. refuse nesting deeper than MAX_DEPTH and documents with more than one IDPSSODescriptor
 *      (anywhere: side by side, or hidden in another entity's Extensions or a ds:Signature's ds:Object)
 *                                                          -> no signature-wrapping shape, no guess
 *                                                             about which IdP the admin meant
 */
import { DOMParser, type Document, type Element } from '@xmldom/xmldom'
import { fromBase64Strict } from '../auth/encoding'
import { CertificateError, certificateText, parseCertificate, sha256Fingerprint } from './x509'

export const MD_NS = 'urn:oasis:names:tc:SAML:2.0:metadata'
export const DSIG_NS = 'http://www.w3.org/2000/09/xmldsig#'
export const SAML2_PROTOCOL = 'urn:oasis:names:tc:SAML:2.0:protocol'
export const BINDING_POST = 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST'
export const BINDING_REDIRECT = 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect'

/** Largest accepted metadata file. Real IdP metadata is 2–80 KiB; 1 MiB leaves room for big ADFS files. */
export const MAX_METADATA_BYTES = 1024 * 1024
/** Largest accepted number of tags (`<` characters). ADFS metadata, the largest in practice, has ~2 000. */
export const MAX_TAGS = 100_000
/**
 * Deepest element nesting accepted. Real IdP metadata nests fewer than 15 levels (ADFS included); libxml2
 * refuses more than 256 by default. 128 leaves room for nested EntitiesDescriptor groups.
 */
export const MAX_DEPTH = 128
/** SAML metadata schema: entityID is an anyURI of at most 1024 characters. */
const MAX_ENTITY_ID = 1024
const MAX_URL = 2048

export class MetadataError extends Error {
  constructor(
    message: string,
    readonly status: 400 | 413 = 400,
  ) {
    super(message)
    this.name = 'MetadataError'
  }
}

export interface SigningCertificate {
  /** standard base64 of the DER, whitespace removed */
  der_base64: string
  /** SHA-256 of the DER, upper-case colon-separated hex */
  sha256_fingerprint: string
  not_before: string
  not_after: string
}

export interface IdpMetadata {
  /** the document as decoded text (UTF-8, byte order mark removed): what is stored */
  xml: string
  /** EntityDescriptor@entityID */
  entityId: string
  /** Location of the chosen SingleSignOnService */
  ssoUrl: string
  ssoBinding: 'HTTP-POST' | 'HTTP-Redirect'
  /** signing certificates (KeyDescriptor use="signing" or without use), in document order, duplicates removed */
  certificates: SigningCertificate[]
  /** earliest validUntil found on the path root → entity → IDPSSODescriptor, or null */
  validUntil: string | null
  /** NameIDFormat values the IdP declares */
  nameIdFormats: string[]
}

// ---- small DOM helpers (namespace-aware, direct children only) -----------------------------------

function elementChildren(el: Element): Element[] {
  const out: Element[] = []
  for (let n = el.firstChild; n; n = n.nextSibling) if (n.nodeType === 1) out.push(n as Element)
  return out
}

function children(el: Element, ns: string, local: string): Element[] {
  return elementChildren(el).filter((c) => c.namespaceURI === ns && c.localName === local)
}

/** An attribute in no namespace (SAML metadata attributes are unqualified), or null. */
function attr(el: Element, name: string): string | null {
  const attrs = el.attributes
  for (let i = 0; i < attrs.length; i++) {
    const a = attrs.item(i)!
    if (!a.namespaceURI && (a.localName ?? a.name) === name) return a.value
  }
  return null
}

function text(el: Element): string {
  let s = ''
  for (let n = el.firstChild; n; n = n.nextSibling) if (n.nodeType === 3 || n.nodeType === 4) s += n.nodeValue ?? ''
  return s
}

const show = (s: string, max = 120) => JSON.stringify(s.length > max ? `${s.slice(0, max)}…` : s)

// ---- steps --------------------------------------------------------------------------------------

function decode(bytes: Uint8Array): string {
  if ((bytes[0] === 0xfe && bytes[1] === 0xff) || (bytes[0] === 0xff && bytes[1] === 0xfe))
    throw new MetadataError('metadata must be UTF-8 encoded XML; this file starts with a UTF-16 byte order mark')
  let s: string
  try {
    s = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes)
  } catch {
    throw new MetadataError('metadata is not valid UTF-8 text (is it an XML file?)')
  }
  if (s.charCodeAt(0) === 0xfeff) s = s.slice(1)
  // XML 1.0 Char production: no C0 controls but TAB, LF, CR; no U+FFFE, U+FFFF (xmldom accepts them).
  const bad = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/.exec(s)
  if (bad)
    throw new MetadataError(
      `metadata contains a character XML does not allow (U+${bad[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')} at offset ${bad.index})`,
    )
  const decl = /^\s*<\?xml\s[^?]*?\bencoding\s*=\s*["']([^"']*)["']/.exec(s)
  if (decl && !/^(utf-8|utf8|us-ascii)$/i.test(decl[1]))
    throw new MetadataError(`metadata must be UTF-8 encoded XML; the XML declaration says encoding="${decl[1]}"`)
  return s
}

/**
 * Refuses DTDs before parsing. A document type declaration is the only place where entities and
 * external references (SYSTEM/PUBLIC identifiers) can be declared, so with none of it the parser can
 * expand nothing and fetch nothing. The check is deliberately textual and case-insensitive: it also
 * fires inside comments or CDATA, which no legitimate metadata needs.
 */
function refuseDtd(xml: string): void {
  const m = /<!(DOCTYPE|ENTITY)/i.exec(xml)
  if (m)
    throw new MetadataError(
      `metadata must not contain a document type declaration (found "<!${m[1]}"): DTDs, entity declarations and external references are refused`,
    )
}

function parseXml(xml: string): Document {
  let tags = 0
  for (let i = xml.indexOf('<'); i !== -1; i = xml.indexOf('<', i + 1)) {
    if (++tags > MAX_TAGS) throw new MetadataError(`metadata has more than ${MAX_TAGS} tags; IdP metadata is far smaller`)
  }
  let first: string | undefined
  const parser = new DOMParser({
    // Warnings in xmldom's XML mode are all malformations (unquoted attributes and the like): stop on every level.
    onError: (_level: string, message: string) => {
      first ??= message
      throw new Error(message)
    },
  })
  let doc: Document
  try {
    doc = parser.parseFromString(xml, 'application/xml')
  } catch (e) {
    // xmldom wraps the error our onError threw; report the parser's own (first) message.
    const msg = (first ?? (e as Error)?.message ?? 'parse error').replace(/\s+/g, ' ').trim().slice(0, 300)
    throw new MetadataError(`metadata is not well-formed XML: ${explainXmlError(msg)}`)
  }
  if (!doc.documentElement) throw new MetadataError('metadata is not well-formed XML: missing root element')
  return doc
}

/**
 * One iterative pass over the whole document: nesting depth, and the number of IDPSSODescriptor elements
 * wherever they are. Exactly one identity provider per upload: a second one — a sibling entity, an
 * entity tucked into Extensions or into a ds:Signature's ds:Object (the signature-wrapping shapes), or a
 * federation aggregate listing many IdPs — leaves it to chance which one is trusted, so it is refused.
 */
function checkShape(root: Element): void {
  let idps = 0
  const stack: [Element, number][] = [[root, 1]]
  while (stack.length) {
    const [el, depth] = stack.pop()!
    if (depth > MAX_DEPTH) throw new MetadataError(`metadata nests elements more than ${MAX_DEPTH} levels deep; IdP metadata is far flatter`)
    if (el.namespaceURI === MD_NS && el.localName === 'IDPSSODescriptor') idps++
    for (let n = el.firstChild; n; n = n.nextSibling) if (n.nodeType === 1) stack.push([n as Element, depth + 1])
  }
  if (idps > 1)
    throw new MetadataError(
      `metadata contains ${idps} IDPSSODescriptor elements; upload the metadata of exactly one identity provider (aggregates and wrapped entities are refused)`,
    )
}

/** xmldom's wording for the common cases, made plain; anything else is passed through. */
function explainXmlError(msg: string): string {
  if (/HierarchyRequestError/.test(msg)) return `the document has more than one root element (${msg})`
  if (/prefix is non-null and namespace is null/.test(msg)) return `a namespace prefix is used without being declared (${msg})`
  if (/^missing root element/.test(msg)) return 'there is no root element (is this an XML file?)'
  return msg
}

const XS_DATETIME = /^(-?\d{4,})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d+)?(Z|[+-]\d{2}:\d{2})?$/

/** validUntil is an xs:dateTime; SAML says UTC, so a missing zone is read as UTC. */
function parseValidUntil(el: Element, now: Date): Date | null {
  const raw = attr(el, 'validUntil')
  if (raw === null) return null
  const v = raw.trim()
  const m = XS_DATETIME.exec(v)
  // Date() would roll 30 February over into March: check the calendar fields first.
  const fieldsOk =
    m !== null && Number(m[2]) >= 1 && Number(m[2]) <= 12 && Number(m[3]) >= 1 &&
    Number(m[3]) <= new Date(Date.UTC(Number(m[1]), Number(m[2]), 0)).getUTCDate() &&
    Number(m[4]) <= 23 && Number(m[5]) <= 59 && Number(m[6]) <= 59
  const d = fieldsOk ? new Date(m![8] ? v : `${v}Z`) : null
  if (!d || Number.isNaN(d.getTime()))
    throw new MetadataError(`${el.localName} attribute validUntil ${show(raw)} is not a valid xs:dateTime`)
  if (d.getTime() <= now.getTime())
    throw new MetadataError(`metadata has expired: ${el.localName} validUntil is ${d.toISOString()}, which is in the past`)
  return d
}

function absoluteUrl(value: string | null, what: string): string {
  const v = (value ?? '').trim()
  if (!v) throw new MetadataError(`${what} is missing`)
  if (v.length > MAX_URL) throw new MetadataError(`${what} is longer than ${MAX_URL} characters`)
  let u: URL
  try {
    u = new URL(v)
  } catch {
    throw new MetadataError(`${what} ${show(v)} is not an absolute URL`)
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:') throw new MetadataError(`${what} ${show(v)} must be an http(s) URL`)
  return v
}

/** Picks the entity: the root EntityDescriptor, or the first one (document order, nested groups included) having an IDPSSODescriptor. */
function chooseEntity(root: Element): { entity: Element; path: Element[] } {
  if (root.namespaceURI !== MD_NS || (root.localName !== 'EntityDescriptor' && root.localName !== 'EntitiesDescriptor')) {
    const found = root.namespaceURI ? `{${root.namespaceURI}}${root.localName}` : `${root.localName} in no namespace`
    throw new MetadataError(`root element must be EntityDescriptor or EntitiesDescriptor in namespace ${MD_NS}, found ${found}`)
  }
  if (root.localName === 'EntityDescriptor') return { entity: root, path: [] }
  // Iterative pre-order walk (children pushed in reverse, so they pop in document order): no recursion,
  // and no per-node copying, whatever the nesting depth of EntitiesDescriptor groups.
  let entities = 0
  const stack: Element[] = [root]
  while (stack.length) {
    const el = stack.pop()!
    if (el.localName === 'EntityDescriptor') {
      entities++
      if (children(el, MD_NS, 'IDPSSODescriptor').length > 0) {
        const path: Element[] = []
        for (let p = el.parentNode as Element | null; p && p.nodeType === 1; p = p.parentNode as Element | null) path.unshift(p)
        return { entity: el, path }
      }
      continue
    }
    const kids = elementChildren(el).filter(
      (c) => c.namespaceURI === MD_NS && (c.localName === 'EntityDescriptor' || c.localName === 'EntitiesDescriptor'),
    )
    for (let i = kids.length - 1; i >= 0; i--) stack.push(kids[i])
  }
  if (entities === 0) throw new MetadataError('EntitiesDescriptor contains no EntityDescriptor')
  throw new MetadataError('metadata is not IdP metadata: no EntityDescriptor in the EntitiesDescriptor has an IDPSSODescriptor')
}

async function signingCertificates(idp: Element): Promise<SigningCertificate[]> {
  const out: SigningCertificate[] = []
  const seen = new Set<string>()
  const kds = children(idp, MD_NS, 'KeyDescriptor')
  for (let i = 0; i < kds.length; i++) {
    const kd = kds[i]
    const use = attr(kd, 'use')
    if (use !== null && use !== 'signing' && use !== 'encryption')
      throw new MetadataError(`IDPSSODescriptor KeyDescriptor[${i}] attribute use ${show(use)} must be "signing" or "encryption"`)
    if (use === 'encryption') continue
    for (const keyInfo of children(kd, DSIG_NS, 'KeyInfo'))
      for (const data of children(keyInfo, DSIG_NS, 'X509Data'))
        for (const certEl of children(data, DSIG_NS, 'X509Certificate')) {
          const where = `IDPSSODescriptor KeyDescriptor[${i}] X509Certificate`
          const b64 = certificateText(text(certEl))
          if (!b64) throw new MetadataError(`${where} is empty`)
          const der = fromBase64Strict(b64)
          if (!der) throw new MetadataError(`${where} is not valid base64`)
          let parsed
          try {
            parsed = parseCertificate(der)
          } catch (e) {
            if (e instanceof CertificateError) throw new MetadataError(`${where} is not a DER X.509 certificate: ${e.message}`)
            throw e
          }
          const fp = await sha256Fingerprint(der)
          if (seen.has(fp)) continue
          seen.add(fp)
          out.push({ der_base64: b64, sha256_fingerprint: fp, not_before: parsed.notBefore.toISOString(), not_after: parsed.notAfter.toISOString() })
        }
  }
  return out
}

/**
 * Parses IdP metadata. `now` decides whether validUntil has passed.
 * Throws MetadataError (status 400, or 413 for an oversized file) with a message naming what is wrong.
 */
export async function parseIdpMetadata(input: Uint8Array | string, now: Date): Promise<IdpMetadata> {
  const bytes = typeof input === 'string' ? new TextEncoder().encode(input) : input
  // 1. Size first: nothing below runs on more than 1 MiB.
  if (bytes.length > MAX_METADATA_BYTES)
    throw new MetadataError(`metadata file is ${bytes.length} bytes; the limit is ${MAX_METADATA_BYTES} bytes (1 MiB)`, 413)
  // 2–3. Text, then no DTD of any kind.
  const xml = decode(bytes)
  if (xml.trim() === '') throw new MetadataError('metadata file is empty')
  refuseDtd(xml)
  // 4–5. Strict parse.
  const doc = parseXml(xml)
  const root = doc.documentElement as Element
  // 8. Depth, and exactly one IdP (7, characters XML forbids, is part of decoding).
  checkShape(root)
  // 6. Namespace-aware walk.
  const { entity, path } = chooseEntity(root)

  const entityId = (attr(entity, 'entityID') ?? '').trim()
  if (!entityId) throw new MetadataError('EntityDescriptor is missing the entityID attribute')
  if (entityId.length > MAX_ENTITY_ID) throw new MetadataError(`EntityDescriptor entityID is longer than ${MAX_ENTITY_ID} characters`)

  const idps = children(entity, MD_NS, 'IDPSSODescriptor')
  if (idps.length === 0) {
    if (children(entity, MD_NS, 'SPSSODescriptor').length > 0)
      throw new MetadataError('metadata is not IdP metadata: the EntityDescriptor has an SPSSODescriptor but no IDPSSODescriptor (this is service provider metadata)')
    throw new MetadataError('metadata is not IdP metadata: the EntityDescriptor has no IDPSSODescriptor')
  }
  const idp = idps.find((d) => (attr(d, 'protocolSupportEnumeration') ?? '').split(/\s+/).includes(SAML2_PROTOCOL))
  if (!idp) throw new MetadataError(`IDPSSODescriptor attribute protocolSupportEnumeration does not include ${SAML2_PROTOCOL}`)

  // validUntil on every level that governs the chosen descriptor; the earliest one wins.
  let validUntil: Date | null = null
  for (const el of [...path, entity, idp]) {
    const d = parseValidUntil(el, now)
    if (d && (!validUntil || d < validUntil)) validUntil = d
  }

  const services = children(idp, MD_NS, 'SingleSignOnService')
  const post = services.find((s) => attr(s, 'Binding') === BINDING_POST)
  const redirect = services.find((s) => attr(s, 'Binding') === BINDING_REDIRECT)
  const chosen = post ?? redirect
  if (!chosen) {
    const found = services.map((s) => attr(s, 'Binding') ?? '(no Binding)')
    throw new MetadataError(
      `IDPSSODescriptor has no SingleSignOnService with the HTTP-POST or HTTP-Redirect binding` +
        (found.length ? ` (found: ${found.slice(0, 5).join(', ')})` : ' (it has no SingleSignOnService at all)'),
    )
  }
  const ssoBinding = chosen === post ? 'HTTP-POST' : 'HTTP-Redirect'
  const ssoUrl = absoluteUrl(attr(chosen, 'Location'), `SingleSignOnService (${ssoBinding}) attribute Location`)

  const certificates = await signingCertificates(idp)
  if (certificates.length === 0)
    throw new MetadataError('IDPSSODescriptor has no signing certificate: expected a KeyDescriptor (use="signing" or no use) with a ds:X509Certificate')

  const nameIdFormats = children(idp, MD_NS, 'NameIDFormat')
    .map((e) => text(e).trim())
    .filter(Boolean)

  return { xml, entityId, ssoUrl, ssoBinding, certificates, validUntil: validUntil ? validUntil.toISOString() : null, nameIdFormats }
}

// ---- SSO endpoints by binding (for SP-initiated login; see src/saml/authn-request.ts) ------------

export interface IdpSsoServices {
  /** Location of the first SingleSignOnService with the HTTP-POST binding, or null */
  post: string | null
  /** Location of the first SingleSignOnService with the HTTP-Redirect binding, or null */
  redirect: string | null
}

/**
 * The IdP's SSO endpoints per binding, read from metadata that `parseIdpMetadata` accepted before (the
 * stored `metadata_xml`). The same hardening applies (no DTD, tag cap, strict parser) and the same entity
 * and IDPSSODescriptor are chosen, so `post ?? redirect` is the provider's stored `idp_sso_uri`.
 * A Location that is not an absolute http(s) URL counts as absent for its binding rather than failing:
 * the upload accepted the metadata on the strength of the binding it chose.
 * Throws MetadataError when the document no longer parses (the caller falls back to the stored columns).
 */
export function idpSsoServices(xml: string): IdpSsoServices {
  refuseDtd(xml)
  const root = parseXml(xml).documentElement as Element
  const { entity } = chooseEntity(root)
  const idp = children(entity, MD_NS, 'IDPSSODescriptor').find((d) =>
    (attr(d, 'protocolSupportEnumeration') ?? '').split(/\s+/).includes(SAML2_PROTOCOL),
  )
  if (!idp) throw new MetadataError(`IDPSSODescriptor attribute protocolSupportEnumeration does not include ${SAML2_PROTOCOL}`)
  const services = children(idp, MD_NS, 'SingleSignOnService')
  const location = (binding: string): string | null => {
    const s = services.find((x) => attr(x, 'Binding') === binding)
    if (!s) return null
    try {
      return absoluteUrl(attr(s, 'Location'), 'SingleSignOnService attribute Location')
    } catch (e) {
      if (e instanceof MetadataError) return null
      throw e
    }
  }
  return { post: location(BINDING_POST), redirect: location(BINDING_REDIRECT) }
}
