import { describe, expect, it } from 'vitest'
import vectors from '../fixtures/signature/vectors.json'
import { computeSignature, importTokenKey, parseRfc3339, requestTarget, skewError, verifySignature } from '../../src/auth/signature'
import { fromBase64Strict, toBase64 } from '../../src/auth/encoding'

const enc = new TextEncoder()

describe('signature chain: every vector in test/fixtures/signature/vectors.json (scripts/signature-vectors.mjs)', () => {
  it('the fixture holds its cases (a missing or emptied file fails here, never skips)', () => {
    expect(vectors.cases.length).toBeGreaterThanOrEqual(11)
    expect(vectors.cases.some((x) => x.method === 'PUT')).toBe(true)
  })

  it('the imported token key (what the worker caches) verifies exactly like the key text, and cannot be exported', async () => {
    const imported = await importTokenKey(vectors.token_key)
    expect(imported.extractable).toBe(false)
    await expect(crypto.subtle.exportKey('raw', imported)).rejects.toThrow()
    const other = await importTokenKey(vectors.token_key + 'x')
    for (const v of vectors.cases) {
      const sig = fromBase64Strict(v.signature)!
      expect(await verifySignature(imported, v.method, v.request_target, v.request_date, enc.encode(v.body), sig)).toBe(true)
      expect(toBase64(await computeSignature(imported, v.method, v.request_target, v.request_date, enc.encode(v.body)))).toBe(v.signature)
      expect(await verifySignature(other, v.method, v.request_target, v.request_date, enc.encode(v.body), sig)).toBe(false)
    }
  })

  for (const v of vectors.cases) {
    it(`${v.method} ${v.request_target} @ ${v.request_date}`, async () => {
      const sig = await computeSignature(vectors.token_key, v.method, v.request_target, v.request_date, enc.encode(v.body))
      expect(toBase64(sig)).toBe(v.signature)
      const ok = await verifySignature(vectors.token_key, v.method, v.request_target, v.request_date, enc.encode(v.body), fromBase64Strict(v.signature)!)
      expect(ok).toBe(true)
    })
  }

  it('a changed method, target, hour or body breaks the signature', async () => {
    const v = vectors.cases.find((x) => x.method === 'PUT')!
    const sig = fromBase64Strict(v.signature)!
    const body = enc.encode(v.body)
    expect(await verifySignature(vectors.token_key, 'POST', v.request_target, v.request_date, body, sig)).toBe(false)
    expect(await verifySignature(vectors.token_key, v.method, v.request_target + '?x=1', v.request_date, body, sig)).toBe(false)
    expect(await verifySignature(vectors.token_key, v.method, v.request_target, '2026-11-25T09:15:00Z', body, sig)).toBe(false)
    expect(await verifySignature(vectors.token_key, v.method, v.request_target, v.request_date, enc.encode(v.body + ' '), sig)).toBe(false)
    // same hour, other minutes: still valid (the date is signed to the hour)
    expect(await verifySignature(vectors.token_key, v.method, v.request_target, '2026-11-25T08:59:59.999Z', body, sig)).toBe(true)
  })

  it('a signature of another length is rejected without throwing', async () => {
    const v = vectors.cases[0]
    expect(await verifySignature(vectors.token_key, v.method, v.request_target, v.request_date, new Uint8Array(), new Uint8Array(31))).toBe(false)
  })
})

describe('RFC 3339 parsing', () => {
  it('accepts fractions and offsets, gives the right instant', () => {
    expect(parseRfc3339('2026-11-25T21:06:03.134832+00:00')?.toISOString()).toBe('2026-11-25T21:06:03.134Z')
    expect(parseRfc3339('2026-11-25T21:59:59.999999+02:00')?.toISOString()).toBe('2026-11-25T19:59:59.999Z')
    expect(parseRfc3339('2026-06-30T23:30:00-05:00')?.toISOString()).toBe('2026-07-01T04:30:00.000Z')
    expect(parseRfc3339('2026-11-25T08:15:00.5Z')?.toISOString()).toBe('2026-11-25T08:15:00.500Z')
    expect(parseRfc3339('2026-11-25t08:15:00z')?.toISOString()).toBe('2026-11-25T08:15:00.000Z')
  })
  it('rejects what is not RFC 3339', () => {
    for (const s of ['', '2026-11-25', '2026-11-25 08:15:00Z', '2026-11-25T08:15:00', '2026-13-01T00:00:00Z', '2026-02-30T00:00:00Z',
      '2026-11-25T24:00:00Z', 'Wed, 25 Nov 2026 08:15:00 GMT', '2026-11-25T08:15:00+0200', '2026-11-25T08:15:00.Z'])
      expect(parseRfc3339(s), s).toBeNull()
  })
})

describe('skew', () => {
  const now = new Date('2026-11-25T12:00:00Z')
  it('allows up to an hour either way and names the skew beyond it', () => {
    expect(skewError(new Date(now.getTime() - 59 * 60_000), now)).toBeNull()
    expect(skewError(new Date(now.getTime() + 59 * 60_000), now)).toBeNull()
    expect(skewError(new Date(now.getTime() - 61 * 60_000), now)).toMatch(/61\.00 minutes behind.*1\.00 minutes beyond/)
    expect(skewError(new Date(now.getTime() + 61 * 60_000), now)).toMatch(/61\.00 minutes ahead of/)
  })
})

describe('request target', () => {
  it('is the path plus the raw query, escapes and order untouched', () => {
    expect(requestTarget('https://h.example/api/v2/search?q=DOMAIN%20ADMINS%40CORP.LOCAL&b=1&a=2')).toBe('/api/v2/search?q=DOMAIN%20ADMINS%40CORP.LOCAL&b=1&a=2')
    expect(requestTarget('http://h:8787/a?')).toBe('/a?')
    expect(requestTarget('http://h/a#frag')).toBe('/a')
  })
})

describe('strict base64', () => {
  it('accepts standard padded base64 only', () => {
    expect(fromBase64Strict('tLsUcN+4yyuN6xPP4T1Z6qeR+UKrJ3I1cDdJgrXbLgc=')?.length).toBe(32)
    expect(fromBase64Strict('tLsUcN-4yyuN6xPP4T1Z6qeR_UKrJ3I1cDdJgrXbLgc=')).toBeNull()
    expect(fromBase64Strict('abc')).toBeNull()
    expect(fromBase64Strict('not base64!')).toBeNull()
  })
})
