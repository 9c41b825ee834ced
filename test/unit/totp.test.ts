import { describe, expect, it } from 'vitest'
import { base32Decode, base32Encode, hotp, newTotpSecret, otpauthUri, totpAt, totpStep, verifyTotp } from '../../src/auth/totp'

const ascii = (s: string) => new TextEncoder().encode(s)
// RFC 6238 Appendix B seeds: the ASCII digits repeated to the hash's length
const SEED_SHA1 = ascii('12345678901234567890')
const SEED_SHA256 = ascii('12345678901234567890123456789012')
const SEED_SHA512 = ascii('1234567890123456789012345678901234567890123456789012345678901234')

describe('RFC 6238 Appendix B test vectors (8 digits, 30 s steps)', () => {
  const vectors: [number, string, string, string][] = [
    // [unix seconds, SHA-1, SHA-256, SHA-512]
    [59, '94287082', '46119246', '90693936'],
    [1111111109, '07081804', '68084774', '25091201'],
    [1111111111, '14050471', '67062674', '99943326'],
    [1234567890, '89005924', '91819424', '93441116'],
    [2000000000, '69279037', '90698825', '38618901'],
    [20000000000, '65353130', '77737706', '47863826'],
  ]
  for (const [t, sha1, sha256, sha512] of vectors) {
    it(`T = ${t}`, async () => {
      expect(await totpAt(SEED_SHA1, t * 1000, 8, 'SHA-1')).toBe(sha1)
      expect(await totpAt(SEED_SHA256, t * 1000, 8, 'SHA-256')).toBe(sha256)
      expect(await totpAt(SEED_SHA512, t * 1000, 8, 'SHA-512')).toBe(sha512)
    })
  }
})

describe('RFC 4226 Appendix D (HOTP, 6 digits)', () => {
  it('counters 0..9', async () => {
    const want = ['755224', '287082', '359152', '969429', '338314', '254676', '287922', '162583', '399871', '520489']
    for (let i = 0; i < want.length; i++) expect(await hotp(SEED_SHA1, i)).toBe(want[i])
  })
})

describe('base32 (RFC 4648 section 10 vectors)', () => {
  const v: [string, string][] = [['', ''], ['f', 'MY'], ['fo', 'MZXQ'], ['foo', 'MZXW6'], ['foob', 'MZXW6YQ'], ['fooba', 'MZXW6YTB'], ['foobar', 'MZXW6YTBOI']]
  it('encodes without padding and decodes with or without it', () => {
    for (const [plain, enc] of v) {
      expect(base32Encode(ascii(plain))).toBe(enc)
      expect(new TextDecoder().decode(base32Decode(enc)!)).toBe(plain)
      expect(new TextDecoder().decode(base32Decode(enc.toLowerCase() + '===')!)).toBe(plain)
    }
    expect(base32Decode('MZ1W')).toBeNull()
  })
  it('a new secret is 20 random bytes (32 base32 characters), different each time', () => {
    const a = newTotpSecret()
    expect(a).toMatch(/^[A-Z2-7]{32}$/)
    expect(base32Decode(a)!.length).toBe(20)
    expect(newTotpSecret()).not.toBe(a)
  })
})

describe('verifyTotp (6 digits, ±1 step, one use per step)', () => {
  const secret = base32Encode(SEED_SHA1)
  const now = 1_700_000_015_000 // inside step 56666667
  const step = totpStep(now)
  const codeAt = (s: number) => hotp(SEED_SHA1, s)

  it('accepts the current, previous and next step and returns the step', async () => {
    for (const s of [step - 1, step, step + 1]) expect(await verifyTotp(secret, await codeAt(s), now, null)).toEqual({ ok: true, step: s })
  })
  it('refuses two steps away', async () => {
    expect(await verifyTotp(secret, await codeAt(step - 2), now, null)).toEqual({ ok: false, reason: 'wrong' })
    expect(await verifyTotp(secret, await codeAt(step + 2), now, null)).toEqual({ ok: false, reason: 'wrong' })
  })
  it('refuses a code of a step already used, or of an earlier one', async () => {
    expect(await verifyTotp(secret, await codeAt(step), now, step)).toEqual({ ok: false, reason: 'reused' })
    expect(await verifyTotp(secret, await codeAt(step - 1), now, step)).toEqual({ ok: false, reason: 'reused' })
    expect(await verifyTotp(secret, await codeAt(step + 1), now, step)).toEqual({ ok: true, step: step + 1 })
  })
  it('refuses anything but exactly six ASCII digits', async () => {
    const good = await codeAt(step)
    for (const bad of ['', good.slice(0, 5), good + '0', ` ${good}`, good.replace(/./, 'a'), '１２３４５６'])
      expect(await verifyTotp(secret, bad, now, null)).toEqual({ ok: false, reason: 'malformed' })
  })
})

describe('otpauthUri', () => {
  it('names issuer, account, secret and parameters', () => {
    const u = new URL(otpauthUri('EdgeHound', 'alice@example.com', 'JBSWY3DPEHPK3PXP'))
    expect(u.protocol).toBe('otpauth:')
    expect(otpauthUri('EdgeHound', 'alice@example.com', 'JBSWY3DPEHPK3PXP')).toMatch(/^otpauth:\/\/totp\/EdgeHound:alice%40example\.com\?/)
    expect(u.searchParams.get('secret')).toBe('JBSWY3DPEHPK3PXP')
    expect(u.searchParams.get('issuer')).toBe('EdgeHound')
    expect(u.searchParams.get('algorithm')).toBe('SHA1')
    expect(u.searchParams.get('digits')).toBe('6')
    expect(u.searchParams.get('period')).toBe('30')
  })
})
