import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { CertificateError, certificateText, parseAsn1Time, parseCertificate, sha256Fingerprint } from '../../src/saml/x509'
import { fromBase64Strict } from '../../src/auth/encoding'
import oktaXml from '../fixtures/saml/idp/okta.xml?raw'
import expectedJson from '../fixtures/saml/idp/expected.json?raw'

// ---- a tiny DER builder, to make certificates of any shape ---------------------------------------

function len(n: number): number[] {
  if (n < 0x80) return [n]
  const out: number[] = []
  for (let v = n; v > 0; v = Math.floor(v / 256)) out.unshift(v & 0xff)
  return [0x80 | out.length, ...out]
}
const tlv = (tag: number, ...content: number[][]): number[] => {
  const body = content.flat()
  return [tag, ...len(body.length), ...body]
}
const ascii = (s: string) => Array.from(s, (ch) => ch.charCodeAt(0))
const seq = (...c: number[][]) => tlv(0x30, ...c)
const int = (...b: number[]) => tlv(0x02, b)
const utc = (s: string) => tlv(0x17, ascii(s))
const gen = (s: string) => tlv(0x18, ascii(s))
const bits = (...b: number[]) => tlv(0x03, [0, ...b])
const oid = tlv(0x06, [0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x0b]) // sha256WithRSAEncryption
const alg = seq(oid, [0x05, 0x00])
const name = (cn: string) => seq(tlv(0x31, seq(tlv(0x06, [0x55, 0x04, 0x03]), tlv(0x0c, ascii(cn)))))

interface Shape {
  version?: number[] | null
  notBefore?: number[]
  notAfter?: number[]
  extra?: number[][]
  trailing?: number[]
  after?: number[]
}
function cert(s: Shape = {}): Uint8Array {
  const version = s.version === undefined ? tlv(0xa0, int(2)) : s.version === null ? [] : s.version
  const tbs = seq(
    version,
    int(0x01, 0x23),
    alg,
    name('issuer'),
    seq(s.notBefore ?? utc('260101000000Z'), s.notAfter ?? utc('360101000000Z')),
    name('subject'),
    seq(alg, bits(1, 2, 3)),
    ...(s.extra ?? [tlv(0xa3, seq(seq(tlv(0x06, [0x55, 0x1d, 0x13]), tlv(0x04, [0x30, 0x00]))))]),
    s.trailing ?? [],
  )
  return new Uint8Array([...seq(tbs, alg, bits(9, 9, 9)), ...(s.after ?? [])])
}

const rejects = (der: Uint8Array, message: RegExp) => {
  expect(() => parseCertificate(der)).toThrow(CertificateError)
  expect(() => parseCertificate(der)).toThrow(message)
}

describe('parseCertificate: structure', () => {
  it('accepts a v3 certificate and reads its validity', () => {
    const c = parseCertificate(cert())
    expect(c.version).toBe(3)
    expect(c.notBefore.toISOString()).toBe('2026-01-01T00:00:00.000Z')
    expect(c.notAfter.toISOString()).toBe('2036-01-01T00:00:00.000Z')
  })

  it('accepts a v1 certificate (no version field, no extensions)', () => {
    const c = parseCertificate(cert({ version: null, extra: [] }))
    expect(c.version).toBe(1)
  })

  it('accepts GeneralizedTime (dates from 2050 on)', () => {
    expect(parseCertificate(cert({ notAfter: gen('20570106214308Z') })).notAfter.toISOString()).toBe('2057-01-06T21:43:08.000Z')
  })

  it('accepts issuerUniqueID/subjectUniqueID before extensions', () => {
    expect(parseCertificate(cert({ extra: [tlv(0x81, [0, 1]), tlv(0x82, [0, 2]), tlv(0xa3, seq())] })).version).toBe(3)
  })

  it('refuses the empty input and a non-SEQUENCE', () => {
    rejects(new Uint8Array(), /empty/)
    rejects(new Uint8Array(tlv(0x04, [1, 2, 3])), /Certificate: expected DER tag 0x30, found 0x04/)
  })

  it('refuses bytes after the certificate', () => {
    rejects(cert({ after: [0x00] }), /unexpected data after the Certificate/)
  })

  it('refuses every truncation of a certificate', () => {
    const full = cert()
    for (let n = 0; n < full.length; n++) expect(() => parseCertificate(full.subarray(0, n)), `prefix of ${n} bytes`).toThrow(CertificateError)
  })

  it('refuses indefinite and non-minimal lengths (BER, not DER)', () => {
    const full = cert()
    const indefinite = new Uint8Array([0x30, 0x80, ...full.subarray(4), 0, 0])
    rejects(indefinite, /indefinite length/)
    // 0x30 0x82 0x00 0x05 …: a long form whose first byte is zero
    rejects(new Uint8Array([0x30, 0x82, 0x00, 0x05, 1, 2, 3, 4, 5]), /non-minimal length/)
    // long form for a length below 128
    rejects(new Uint8Array([0x30, 0x81, 0x05, 1, 2, 3, 4, 5]), /non-minimal length/)
  })

  it('refuses a length that points past the end, and huge lengths', () => {
    rejects(new Uint8Array([0x30, 0x84, 0x7f, 0xff, 0xff, 0xff, 0x00]), /truncated DER/)
    rejects(new Uint8Array([0x30, 0x85, 1, 0, 0, 0, 0, 0]), /too large/)
  })

  it('refuses high tag numbers', () => {
    rejects(new Uint8Array([0x1f, 0x81, 0x00]), /high tag number/)
  })

  it('refuses a version outside v1..v3 and misplaced optional fields', () => {
    rejects(cert({ version: tlv(0xa0, int(5)) }), /version must be v1, v2 or v3/)
    rejects(cert({ extra: [tlv(0xa3, seq()), tlv(0x81, [0])] }), /unexpected DER tag 0x81 in tbsCertificate/)
    rejects(cert({ extra: [tlv(0xa4, seq())] }), /unexpected DER tag 0xa4/)
    rejects(cert({ extra: [tlv(0xa3, tlv(0x04, []))] }), /extensions/)
  })

  it('refuses a missing serial number, a wrong validity and a wrong key', () => {
    const noSerial = seq(seq(tlv(0xa0, int(2)), alg), alg, bits(1))
    rejects(new Uint8Array(noSerial), /serialNumber: expected DER tag 0x02/)
    rejects(cert({ notBefore: int(1) }), /notBefore is not a UTCTime or GeneralizedTime/)
  })
})

describe('parseAsn1Time (RFC 5280 §4.1.2.5)', () => {
  it('reads UTCTime with the 1950/2049 pivot', () => {
    expect(parseAsn1Time(0x17, '491231235959Z', 't').toISOString()).toBe('2049-12-31T23:59:59.000Z')
    expect(parseAsn1Time(0x17, '500101000000Z', 't').toISOString()).toBe('1950-01-01T00:00:00.000Z')
  })
  it('reads GeneralizedTime and leap days', () => {
    expect(parseAsn1Time(0x18, '20240229120000Z', 't').toISOString()).toBe('2024-02-29T12:00:00.000Z')
    expect(parseAsn1Time(0x18, '20000229000000Z', 't').toISOString()).toBe('2000-02-29T00:00:00.000Z')
  })
  it.each([
    [0x17, '2601010000Z'], // no seconds
    [0x17, '260101000000'], // no Z
    [0x17, '260101000000+0100'], // offset
    [0x18, '20260101000000.5Z'], // fraction
    [0x18, '2026010100000Z'],
    [0x17, '20260101000000Z'], // GeneralizedTime text in a UTCTime
  ])('refuses the format %#: %s', (tag, text) => {
    expect(() => parseAsn1Time(tag, text, 'notAfter')).toThrow(/notAfter is not a valid/)
  })
  it.each(['20230229000000Z', '19000229000000Z', '20261301000000Z', '20260431000000Z', '20260101240000Z', '20260101006000Z', '20260101000060Z', '20260100000000Z'])(
    'refuses the impossible date %s',
    (text) => {
      expect(() => parseAsn1Time(0x18, text, 'notBefore')).toThrow(/notBefore is not a valid date/)
    },
  )
  it('refuses notAfter before notBefore', () => {
    rejects(cert({ notBefore: utc('300101000000Z'), notAfter: utc('290101000000Z') }), /notAfter is before notBefore/)
  })
})

describe('real certificates (made with openssl; fingerprints and dates from `openssl x509`)', () => {
  const expected = JSON.parse(expectedJson) as Record<string, { certs: { sha256_fingerprint: string; not_before: string; not_after: string }[] }>
  const b64 = /<ds:X509Certificate>([^<]+)</.exec(oktaXml)![1]

  it('parses the Okta fixture certificate and matches openssl', async () => {
    const der = fromBase64Strict(certificateText(b64))!
    const c = parseCertificate(der)
    const want = expected['okta.xml'].certs[0]
    expect(c.version).toBe(3)
    expect(c.notBefore.toISOString()).toBe(want.not_before)
    expect(c.notAfter.toISOString()).toBe(want.not_after)
    expect(await sha256Fingerprint(der)).toBe(want.sha256_fingerprint)
  })

  it('certificateText strips whitespace of every kind and a PEM armour', () => {
    const wrapped = `\r\n  -----BEGIN CERTIFICATE-----\n${b64.replace(/(.{64})/g, '$1\n\t ')}\n-----END CERTIFICATE-----\n`
    expect(certificateText(wrapped)).toBe(b64)
  })

  it('random single-byte corruptions either parse or fail with CertificateError, never anything else', () => {
    const der = fromBase64Strict(b64)!
    fc.assert(
      fc.property(fc.nat({ max: der.length - 1 }), fc.integer({ min: 0, max: 255 }), (i, v) => {
        const copy = der.slice()
        copy[i] = v
        try {
          parseCertificate(copy)
        } catch (e) {
          if (!(e instanceof CertificateError)) throw e
        }
      }),
      { numRuns: 2000 },
    )
  })

  it('random bytes fail with CertificateError only', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => {
        try {
          parseCertificate(bytes)
        } catch (e) {
          if (!(e instanceof CertificateError)) throw e
        }
      }),
      { numRuns: 2000 },
    )
  })
})
