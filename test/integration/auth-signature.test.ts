import { beforeAll, describe, expect, it } from 'vitest'
import { computeSignature } from '../../src/auth/signature'
import { toBase64 } from '../../src/auth/encoding'
import { adminToken, BASE, client, expectEnvelope, workerFetch } from '../helpers'

/** Signed requests: every failure mode is a 401 envelope whose message names the cause. */
let tokenId: string
let tokenKey: string

beforeAll(async () => {
  const t = await adminToken()
  tokenId = t.tokenId
  tokenKey = t.tokenKey
})

async function signed(
  method: string,
  target: string,
  opts: { body?: string; date?: string; scheme?: string; id?: string; key?: string; signature?: string | null; headers?: Record<string, string> } = {},
) {
  const date = opts.date ?? new Date().toISOString()
  const body = opts.body ?? ''
  const sig = toBase64(await computeSignature(opts.key ?? tokenKey, method, target, date, new TextEncoder().encode(body)))
  const headers: Record<string, string> = {
    Authorization: `${opts.scheme ?? 'svcsignature'} ${opts.id ?? tokenId}`,
    RequestDate: date,
    ...(opts.signature === null ? {} : { Signature: opts.signature ?? sig }),
    ...(body ? { 'Content-Type': 'application/json' } : {}),
    ...opts.headers,
  }
  return workerFetch(new Request(BASE + target, { method, headers, body: body || undefined }))
}

const minutes = (m: number) => new Date(Date.now() + m * 60_000).toISOString()

describe('signed requests', () => {
  it('a correct signature passes; the BloodHound alias bhesignature too, in any case', async () => {
    expect((await signed('GET', '/api/version')).status).toBe(200)
    expect((await signed('GET', '/api/version', { scheme: 'bhesignature' })).status).toBe(200)
    expect((await signed('GET', '/api/version', { scheme: 'BHESignature' })).status).toBe(200)
    expect((await signed('GET', '/api/version', { scheme: 'SvcSignature' })).status).toBe(200)
  })

  it('accepts Python-style dates (microseconds, +00:00) and other offsets', async () => {
    const d = new Date()
    const py = d.toISOString().replace('Z', '').replace(/\.(\d{3})$/, '.$1123') + '+00:00'
    expect((await signed('GET', '/api/version', { date: py })).status).toBe(200)
    const plus2 = new Date(d.getTime() + 2 * 3600_000).toISOString().replace('Z', '').replace(/\.\d+$/, '') + '+02:00'
    expect((await signed('GET', '/api/version', { date: plus2 })).status).toBe(200)
  })

  it('signs the raw query string with percent-escapes exactly as sent', async () => {
    const target = '/api/version?q=DOMAIN%20ADMINS%40CORP.LOCAL&z=1&a=%2B'
    expect((await signed('GET', target)).status).toBe(200)
    // The same query, decoded, does not verify: the server never re-encodes.
    const date = new Date().toISOString()
    const sig = toBase64(await computeSignature(tokenKey, 'GET', '/api/version?q=DOMAIN ADMINS@CORP.LOCAL&z=1&a=+', date, new Uint8Array()))
    const res = await workerFetch(
      new Request(BASE + target, { headers: { Authorization: `svcsignature ${tokenId}`, RequestDate: date, Signature: sig } }),
    )
    await expectEnvelope(res, 401, 'signature digest mismatch')
  })

  it('skew: 59 minutes either way passes, 61 minutes either way is a 401 that gives the skew', async () => {
    expect((await signed('GET', '/api/version', { date: minutes(-59) })).status).toBe(200)
    expect((await signed('GET', '/api/version', { date: minutes(59) })).status).toBe(200)
    await expectEnvelope(await signed('GET', '/api/version', { date: minutes(-61) }), 401, /61\.\d\d minutes behind/)
    await expectEnvelope(await signed('GET', '/api/version', { date: minutes(61) }), 401, /61\.\d\d minutes ahead/)
  })

  it('a body altered after signing is a 401', async () => {
    const date = new Date().toISOString()
    const signedBody = JSON.stringify({ token_name: 'a' })
    const sig = toBase64(await computeSignature(tokenKey, 'POST', '/api/v2/tokens', date, new TextEncoder().encode(signedBody)))
    const res = await workerFetch(
      new Request(`${BASE}/api/v2/tokens`, {
        method: 'POST',
        headers: { Authorization: `svcsignature ${tokenId}`, RequestDate: date, Signature: sig, 'Content-Type': 'application/json' },
        body: JSON.stringify({ token_name: 'b' }),
      }),
    )
    await expectEnvelope(res, 401, 'signature digest mismatch')
  })

  it('a PUT whose body was altered after signing is a 401', async () => {
    const date = new Date().toISOString()
    const body = JSON.stringify({ schema: { name: 'x' } })
    const sig = toBase64(await computeSignature(tokenKey, 'PUT', '/api/v2/extensions', date, new TextEncoder().encode(body)))
    const res = await workerFetch(
      new Request(`${BASE}/api/v2/extensions`, {
        method: 'PUT',
        headers: { Authorization: `svcsignature ${tokenId}`, RequestDate: date, Signature: sig, 'Content-Type': 'application/json' },
        body: body.replace('"x"', '"y"'),
      }),
    )
    await expectEnvelope(res, 401, 'signature digest mismatch')
  })

  it('a signature for another method or path is a 401', async () => {
    const date = new Date().toISOString()
    const sig = toBase64(await computeSignature(tokenKey, 'GET', '/api/v2/tokens', date, new Uint8Array()))
    const res = await workerFetch(new Request(`${BASE}/api/version`, { headers: { Authorization: `svcsignature ${tokenId}`, RequestDate: date, Signature: sig } }))
    await expectEnvelope(res, 401, 'signature digest mismatch')
  })

  const failures: [string, Parameters<typeof signed>[2], string | RegExp][] = [
    ['unknown scheme', { scheme: 'Basic' }, 'unsupported authorization scheme "basic"'],
    ['token id not a UUID', { id: 'not-a-uuid' }, 'token id is malformed'],
    ['missing RequestDate', { headers: { RequestDate: '' } }, 'missing RequestDate header'],
    ['unparseable RequestDate', { date: 'Wed, 25 Nov 2026 08:15:00 GMT' }, 'malformed RequestDate header'],
    ['missing Signature', { signature: null }, 'missing Signature header'],
    ['non-base64 Signature', { signature: 'not*base64' }, 'malformed Signature header'],
    ['unknown token', { id: crypto.randomUUID() }, 'unknown or revoked token'],
    ['wrong key', { key: 'AAAA' }, 'signature digest mismatch'],
  ]
  for (const [name, opts, message] of failures) {
    it(`${name} → 401 envelope`, async () => {
      await expectEnvelope(await signed('GET', '/api/version', opts), 401, message)
    })
  }

  it('an Authorization header with no credential → 401', async () => {
    const res = await workerFetch(new Request(`${BASE}/api/version`, { headers: { Authorization: 'svcsignature' } }))
    await expectEnvelope(res, 401, 'token id is malformed')
    await expectEnvelope(await client().raw('GET', '/api/version'), 401, 'no Authorization header')
  })

  it('the handler still reads the body after verification', async () => {
    const res = await signed('POST', '/api/v2/tokens', { body: JSON.stringify({ token_name: 'read-after-verify' }) })
    expect(res.status).toBe(200)
    expect(((await res.json()) as { data: { name: string } }).data.name).toBe('read-after-verify')
  })
})
