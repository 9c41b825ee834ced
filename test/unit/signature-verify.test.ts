/**
 * The server's check (src/auth/signature-verify.ts: d2 and d3 through node:crypto) accepts exactly what the
 * reference chain (src/auth/signature.ts, SubtleCrypto only) accepts: the vectors of test/fixtures/signature/vectors.json, many generated
 * requests (non-ASCII targets and dates, empty and binary bodies), and every single-bit change of
 * signature, body, target, method or date hour is refused; so is a signature of another length.
 */
import { describe, expect, it } from 'vitest'
import vectors from '../fixtures/signature/vectors.json'
import { computeSignature, importTokenKey } from '../../src/auth/signature'
import { verifyRequestSignature } from '../../src/auth/signature-verify'
import { fromBase64Strict } from '../../src/auth/encoding'

const enc = new TextEncoder()

describe('verifyRequestSignature', () => {
  it('accepts every fixture vector, and refuses them under another key', async () => {
    expect(vectors.cases.length).toBeGreaterThanOrEqual(11)
    const key = await importTokenKey(vectors.token_key)
    const other = await importTokenKey(vectors.token_key + 'x')
    for (const v of vectors.cases) {
      const sig = fromBase64Strict(v.signature)!
      expect(await verifyRequestSignature(key, v.method, v.request_target, v.request_date, enc.encode(v.body), sig)).toBe(true)
      expect(await verifyRequestSignature(other, v.method, v.request_target, v.request_date, enc.encode(v.body), sig)).toBe(false)
    }
  })

  it('agrees with the reference chain on generated requests, and refuses every one-bit change', async () => {
    const keyText = 'k-Ω-' + crypto.randomUUID()
    const key = await importTokenKey(keyText)
    const targets = ['/api/version', '/api/v2/search?q=%C3%A9l%C3%A8ve&type=User', '/ä/ü?x=€', '/api/v2/available-domains?']
    const dates = ['2026-11-26T09:00:00Z', '2026-11-26T23:59:59.999999+05:30', '2026-01-01T00:00:00-00:00']
    const bodies = [new Uint8Array(0), enc.encode('{"a":1}'), crypto.getRandomValues(new Uint8Array(4096))]
    for (const method of ['GET', 'POST', 'PUT'])
      for (const target of targets)
        for (const date of dates)
          for (const body of bodies) {
            const sig = await computeSignature(keyText, method, target, date, body)
            expect(await verifyRequestSignature(key, method, target, date, body, sig)).toBe(true)
            expect(await verifyRequestSignature(key, method, target, date, body.buffer.slice(0) as ArrayBuffer, sig)).toBe(true)
            const flipped = sig.slice()
            flipped[(body.length + target.length) % 32] ^= 1 << (date.length % 8)
            expect(await verifyRequestSignature(key, method, target, date, body, flipped)).toBe(false)
            if (body.length > 0) {
              const b = body.slice()
              b[b.length - 1] ^= 1
              expect(await verifyRequestSignature(key, method, target, date, b, sig)).toBe(false)
            }
            expect(await verifyRequestSignature(key, method, target + 'x', date, body, sig)).toBe(false)
            expect(await verifyRequestSignature(key, method.toLowerCase(), target, date, body, sig)).toBe(false)
            const otherHour = date.slice(0, 11) + String((Number(date.slice(11, 13)) + 1) % 24).padStart(2, '0') + date.slice(13)
            expect(await verifyRequestSignature(key, method, target, otherHour, body, sig)).toBe(false)
          }
  })

  it('refuses a signature of another length (shorter, longer, empty) without throwing', async () => {
    const key = await importTokenKey('key')
    const sig = await computeSignature('key', 'GET', '/api/version', '2026-11-26T09:00:00Z', new Uint8Array(0))
    for (const s of [sig.slice(0, 31), new Uint8Array([...sig, 0]), new Uint8Array(0)])
      expect(await verifyRequestSignature(key, 'GET', '/api/version', '2026-11-26T09:00:00Z', new Uint8Array(0), s)).toBe(false)
  })
})
