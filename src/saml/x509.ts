/**
 * Just enough DER / X.509 to accept or refuse an IdP signing certificate taken from SAML metadata,
 * and to show its validity dates. Pure: bytes in, plain values out; no Node APIs (runs in workerd,
 * Node and browsers alike).
 *
 * Why our own parser rather than `node:crypto` X509Certificate: it keeps the module pure and testable
 * with hand-built DER, avoids depending on the nodejs_compat polyfill surface, and we only need
 * structure + dates (the key itself is used later, when assertions are verified, by a real crypto stack).
 *
 * What "is an X.509 certificate" means here (RFC 5280 §4.1), checked strictly as DER:
 *
 *   Certificate ::= SEQUENCE {                 -- must span the whole input, nothing after it
 *     tbsCertificate       SEQUENCE {
 *       version         [0] EXPLICIT INTEGER OPTIONAL   -- v1..v3 (0..2)
 *       serialNumber        INTEGER
 *       signature           SEQUENCE                    -- AlgorithmIdentifier
 *       issuer              SEQUENCE                    -- Name
 *       validity            SEQUENCE { notBefore Time, notAfter Time }
 *       subject             SEQUENCE
 *       subjectPublicKeyInfo SEQUENCE { SEQUENCE, BIT STRING }
 *       [1] [2] [3] OPTIONAL, in this order             -- issuerUID, subjectUID, extensions
 *     }
 *     signatureAlgorithm   SEQUENCE
 *     signatureValue       BIT STRING
 *   }
 *
 * Safety reasoning:
 * - Every length is checked against the enclosing element's end before anything is read, so a
 *   hostile length can never make us read past the buffer or loop: each step advances by at least
 *   the two header bytes, and nesting depth is fixed by the code (no recursion on input).
 * - DER only: definite lengths, minimal length encoding, low tag numbers. Indefinite lengths and
 *   non-minimal forms are refused (Go's x509.ParseCertificate, which BloodHound relies on, is as strict).
 * - We do not descend into extensions, names or keys; they are only checked to be well-formed TLVs of
 *   the right tag at the right place.
 */

export class CertificateError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'CertificateError'
  }
}

export interface ParsedCertificate {
  /** X.509 version as written on the certificate: 1, 2 or 3 */
  version: number
  notBefore: Date
  notAfter: Date
}

// Universal tags (class 0) we care about; context-specific tags are 0xa0 | n (constructed).
const TAG_INTEGER = 0x02
const TAG_BIT_STRING = 0x03
const TAG_SEQUENCE = 0x30
const TAG_UTC_TIME = 0x17
const TAG_GENERALIZED_TIME = 0x18

interface Tlv {
  tag: number
  /** offset of the first content byte */
  start: number
  /** offset just past the last content byte */
  end: number
}

/** Reads one TLV at `pos`, which must end at or before `limit`. */
function readTlv(der: Uint8Array, pos: number, limit: number, what: string): Tlv {
  if (pos + 2 > limit) throw new CertificateError(`truncated DER: ${what} is missing`)
  const tag = der[pos]
  if ((tag & 0x1f) === 0x1f) throw new CertificateError(`unsupported DER: ${what} uses a high tag number`)
  let len = der[pos + 1]
  let p = pos + 2
  if (len & 0x80) {
    const n = len & 0x7f
    if (n === 0) throw new CertificateError(`not DER: ${what} has an indefinite length`)
    if (n > 4) throw new CertificateError(`DER length of ${what} is too large`)
    if (p + n > limit) throw new CertificateError(`truncated DER: length of ${what}`)
    if (der[p] === 0) throw new CertificateError(`not DER: ${what} has a non-minimal length`)
    len = 0
    for (let i = 0; i < n; i++) len = len * 256 + der[p + i]
    if (len < 0x80) throw new CertificateError(`not DER: ${what} has a non-minimal length`)
    p += n
  }
  if (p + len > limit) throw new CertificateError(`truncated DER: ${what} is longer than the data that contains it`)
  return { tag, start: p, end: p + len }
}

function expectTag(t: Tlv, tag: number, what: string): Tlv {
  if (t.tag !== tag) throw new CertificateError(`${what}: expected DER tag 0x${hex(tag)}, found 0x${hex(t.tag)}`)
  return t
}

const hex = (n: number) => n.toString(16).padStart(2, '0')

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]

/**
 * RFC 5280 §4.1.2.5: UTCTime is `YYMMDDHHMMSSZ` (YY >= 50 means 19YY), GeneralizedTime is
 * `YYYYMMDDHHMMSSZ`; both in UTC with seconds and no fraction. Anything else is refused.
 */
export function parseAsn1Time(tag: number, text: string, what: string): Date {
  const m = tag === TAG_UTC_TIME ? /^(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})Z$/.exec(text) : /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})Z$/.exec(text)
  if (!m) throw new CertificateError(`${what} is not a valid ${tag === TAG_UTC_TIME ? 'UTCTime' : 'GeneralizedTime'}: "${text}"`)
  let year = Number(m[1])
  if (tag === TAG_UTC_TIME) year += year >= 50 ? 1900 : 2000
  const [month, day, hour, minute, second] = [m[2], m[3], m[4], m[5], m[6]].map(Number)
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0
  const dim = month === 2 && leap ? 29 : DAYS_IN_MONTH[month - 1]
  if (month < 1 || month > 12 || day < 1 || day > dim || hour > 23 || minute > 59 || second > 59)
    throw new CertificateError(`${what} is not a valid date: "${text}"`)
  return new Date(Date.UTC(year, month - 1, day, hour, minute, second))
}

function readTime(der: Uint8Array, t: Tlv, what: string): Date {
  if (t.tag !== TAG_UTC_TIME && t.tag !== TAG_GENERALIZED_TIME) throw new CertificateError(`${what} is not a UTCTime or GeneralizedTime`)
  let s = ''
  for (let i = t.start; i < t.end; i++) s += String.fromCharCode(der[i])
  return parseAsn1Time(t.tag, s, what)
}

/** Validates the DER structure of an X.509 certificate and returns its version and validity. */
export function parseCertificate(der: Uint8Array): ParsedCertificate {
  if (der.length === 0) throw new CertificateError('certificate is empty')
  const cert = expectTag(readTlv(der, 0, der.length, 'Certificate'), TAG_SEQUENCE, 'Certificate')
  if (cert.end !== der.length) throw new CertificateError('unexpected data after the Certificate SEQUENCE')

  const tbs = expectTag(readTlv(der, cert.start, cert.end, 'tbsCertificate'), TAG_SEQUENCE, 'tbsCertificate')
  const sigAlg = expectTag(readTlv(der, tbs.end, cert.end, 'signatureAlgorithm'), TAG_SEQUENCE, 'signatureAlgorithm')
  const sigVal = expectTag(readTlv(der, sigAlg.end, cert.end, 'signatureValue'), TAG_BIT_STRING, 'signatureValue')
  if (sigVal.end !== cert.end) throw new CertificateError('unexpected data after signatureValue')

  // tbsCertificate
  let p = tbs.start
  let version = 1
  let t = readTlv(der, p, tbs.end, 'serialNumber')
  if (t.tag === 0xa0) {
    const v = expectTag(readTlv(der, t.start, t.end, 'version'), TAG_INTEGER, 'version')
    if (v.end !== t.end || v.end - v.start !== 1 || der[v.start] > 2) throw new CertificateError('version must be v1, v2 or v3')
    version = der[v.start] + 1
    p = t.end
    t = readTlv(der, p, tbs.end, 'serialNumber')
  }
  expectTag(t, TAG_INTEGER, 'serialNumber')
  if (t.end === t.start) throw new CertificateError('serialNumber is empty')
  const signature = expectTag(readTlv(der, t.end, tbs.end, 'signature'), TAG_SEQUENCE, 'signature')
  const issuer = expectTag(readTlv(der, signature.end, tbs.end, 'issuer'), TAG_SEQUENCE, 'issuer')
  const validity = expectTag(readTlv(der, issuer.end, tbs.end, 'validity'), TAG_SEQUENCE, 'validity')
  const nb = readTlv(der, validity.start, validity.end, 'notBefore')
  const na = readTlv(der, nb.end, validity.end, 'notAfter')
  if (na.end !== validity.end) throw new CertificateError('unexpected data after notAfter')
  const notBefore = readTime(der, nb, 'notBefore')
  const notAfter = readTime(der, na, 'notAfter')
  if (notAfter.getTime() < notBefore.getTime()) throw new CertificateError('notAfter is before notBefore')
  const subject = expectTag(readTlv(der, validity.end, tbs.end, 'subject'), TAG_SEQUENCE, 'subject')
  const spki = expectTag(readTlv(der, subject.end, tbs.end, 'subjectPublicKeyInfo'), TAG_SEQUENCE, 'subjectPublicKeyInfo')
  const spkiAlg = expectTag(readTlv(der, spki.start, spki.end, 'subjectPublicKeyInfo algorithm'), TAG_SEQUENCE, 'subjectPublicKeyInfo algorithm')
  const spkiKey = expectTag(readTlv(der, spkiAlg.end, spki.end, 'subjectPublicKey'), TAG_BIT_STRING, 'subjectPublicKey')
  if (spkiKey.end !== spki.end) throw new CertificateError('unexpected data after subjectPublicKey')

  // Optional [1] issuerUniqueID, [2] subjectUniqueID (primitive or constructed), [3] extensions; in order.
  p = spki.end
  let lastContextTag = 0
  while (p < tbs.end) {
    const opt = readTlv(der, p, tbs.end, 'optional tbsCertificate field')
    const n = opt.tag & 0x1f
    if ((opt.tag & 0xc0) !== 0x80 || n < 1 || n > 3 || n <= lastContextTag)
      throw new CertificateError(`unexpected DER tag 0x${hex(opt.tag)} in tbsCertificate`)
    if (n === 3 && (opt.tag !== 0xa3 || expectTag(readTlv(der, opt.start, opt.end, 'extensions'), TAG_SEQUENCE, 'extensions').end !== opt.end))
      throw new CertificateError('extensions must be one SEQUENCE')
    lastContextTag = n
    p = opt.end
  }
  return { version, notBefore, notAfter }
}

/**
 * Base64 text of a certificate as found in `<ds:X509Certificate>`: every whitespace character is
 * removed (IdPs wrap lines at 64 or 76 columns, indent them, or use CRLF). A PEM armour
 * (`-----BEGIN CERTIFICATE-----`) is tolerated because some IdP consoles paste it in. The rest must be
 * strict, padded standard base64.
 */
export function certificateText(text: string): string {
  return text
    .replace(/-----(BEGIN|END) CERTIFICATE-----/g, '')
    .replace(/\s+/g, '')
}

/** SHA-256 of the DER, as upper-case colon-separated hex (the form `openssl x509 -fingerprint -sha256` and IdP consoles show). */
export async function sha256Fingerprint(der: Uint8Array): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', der))
  return Array.from(digest, (b) => hex(b).toUpperCase()).join(':')
}
