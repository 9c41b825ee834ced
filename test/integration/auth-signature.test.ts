import { beforeAll, describe, expect, it } from 'vitest'
import { computeSignature } from '../../src/auth/signature'
import { toBase64 } from '../../src/auth/encoding'
import { adminSession, adminToken, BASE, client, expectEnvelope, workerFetch } from '../helpers'

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
    // another client in another zone, with its own token (a token remembers the offsets it used: see below)
    const other = await adminToken()
    const plus2 = new Date(d.getTime() + 2 * 3600_000).toISOString().replace('Z', '').replace(/\.\d+$/, '') + '+02:00'
    expect((await signed('GET', '/api/version', { date: plus2, id: other.tokenId, key: other.tokenKey })).status).toBe(200)
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

/**
 * Replay by UTC offset (issue 18 item 3). The signature covers only "YYYY-MM-DDTHH" of RequestDate, so a
 * replayer may rewrite minutes, seconds and the offset. These tests play the replayer: for a captured
 * request they pick, for each offset, the minutes that bring the claimed instant closest to server time.
 */
describe('replayed signed requests', () => {
  const HOUR = 3600_000
  const pad = (n: number, w = 2) => String(n).padStart(w, '0')
  const offText = (min: number) => `${min < 0 ? '-' : '+'}${pad(Math.floor(Math.abs(min) / 60))}:${pad(Math.abs(min) % 60)}`
  /** RequestDate text for instant `ms` written in offset `offMin` (what an honest client there sends). */
  const localDate = (ms: number, offMin: number) => new Date(ms + offMin * 60_000).toISOString().replace('Z', '') + offText(offMin)
  /** The replayer's best rewrite of `signedDate` (same first 13 characters) with offset `offMin`. */
  function rewrite(signedDate: string, offMin: number, nowMs = Date.now()): string {
    const hourNaive = Date.parse(signedDate.slice(0, 13) + ':00:00Z')
    const m = Math.min(Math.max(nowMs + offMin * 60_000 - hourNaive, 0), HOUR - 1)
    return new Date(hourNaive + m).toISOString().replace('Z', '') + offText(offMin)
  }
  async function freshToken() {
    const t = await adminToken()
    return { id: t.tokenId, key: t.tokenKey }
  }
  async function send(tok: { id: string; key: string }, method: string, target: string, signedDate: string, sentDate = signedDate, body = '') {
    const sig = toBase64(await computeSignature(tok.key, method, target, signedDate, new TextEncoder().encode(body)))
    const headers: Record<string, string> = { Authorization: `svcsignature ${tok.id}`, RequestDate: sentDate, Signature: sig }
    if (body) headers['Content-Type'] = 'application/json'
    return workerFetch(new Request(BASE + target, { method, headers, body: body || undefined }))
  }

  it('the 20-hour trick of the issue: a request signed 20 h ago in UTC, replayed as -20:00, is refused', async () => {
    const tok = await freshToken()
    const signedAt = Date.now() - 20 * HOUR
    const captured = localDate(signedAt, 0)
    await expectEnvelope(await send(tok, 'GET', '/api/version', captured), 401, /minutes behind/)
    await expectEnvelope(await send(tok, 'GET', '/api/version', captured, rewrite(captured, -20 * 60)), 401, 'not a real time zone')
    await expectEnvelope(await send(tok, 'GET', '/api/version', captured, rewrite(captured, -(23 * 60 + 59))), 401, 'not a real time zone')
  })

  it('once the token is in use, no offset from -12:00 to +14:00 revives a request signed 2 h 6 min ago', async () => {
    const tok = await freshToken()
    expect((await send(tok, 'GET', '/api/version', localDate(Date.now(), 0))).status).toBe(200)
    const captured = localDate(Date.now() - (2 * HOUR + 6 * 60_000), 0)
    const admitted: string[] = []
    for (let off = -12 * 60; off <= 14 * 60; off += 15) {
      const replay = rewrite(captured, off)
      const res = await send(tok, 'GET', '/api/version', captured, replay)
      if (res.status !== 401) admitted.push(`${replay} → ${res.status}`)
      await res.body?.cancel()
    }
    // and every minute of the one-hour step below the token's offset (the daylight-saving allowance)
    for (let off = -60; off < 0; off += 1) {
      const res = await send(tok, 'GET', '/api/version', captured, rewrite(captured, off))
      if (res.status !== 401) admitted.push(`${rewrite(captured, off)} → ${res.status}`)
      await res.body?.cancel()
    }
    expect(admitted).toEqual([])
    // offsets outside real time zones are refused whatever the time
    for (const off of [-12 * 60 - 15, 14 * 60 + 15, -(23 * 60 + 59), 23 * 60 + 59])
      await expectEnvelope(await send(tok, 'GET', '/api/version', captured, rewrite(captured, off)), 401, 'not a real time zone')
  })

  it('a request signed 12 h ago replayed as -12:00 is refused as more than an hour below the token’s offset', async () => {
    const tok = await freshToken()
    expect((await send(tok, 'GET', '/api/version', localDate(Date.now(), 0))).status).toBe(200)
    const captured = localDate(Date.now() - 12 * HOUR, 0)
    await expectEnvelope(await send(tok, 'GET', '/api/version', captured, rewrite(captured, -12 * 60)), 401, 'more than one hour below')
    // one hour below, the clock must be within 5 minutes: a request signed 2 h 6 min ago cannot pass as -01:00
    // (the latest instant it can claim then is 6 minutes behind; the old ±1 h check admitted it)
    const older = localDate(Date.now() - (2 * HOUR + 6 * 60_000), 0)
    // (the best rewrite claims 6 + <minutes past the signed hour> minutes behind: past minute 54 of that hour the
    // general one-hour clock check refuses it first, which is the same refusal with the other rule's message)
    await expectEnvelope(
      await send(tok, 'GET', '/api/version', older, rewrite(older, -60)),
      401,
      /at most 5 minutes are allowed|minutes beyond the allowed 60/,
    )
  })

  it('the offsets are kept in the object’s storage: an instance that lost its memory still refuses', async () => {
    const { runInDurableObject } = await import('cloudflare:test')
    const { env } = await import('cloudflare:workers')
    const tok = await freshToken()
    expect((await send(tok, 'GET', '/api/version', localDate(Date.now(), 120))).status).toBe(200)
    const stub = env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(`token:${tok.id}`))
    await runInDurableObject(stub, (obj, state) => {
      expect(state.storage.kv.get('offsets')).toEqual({ '120': expect.any(Number) })
      Object.assign(obj, { offsets: undefined }) // what a fresh instance has in memory
    })
    const captured = localDate(Date.now() - 3 * HOUR, 120)
    await expectEnvelope(await send(tok, 'GET', '/api/version', captured, rewrite(captured, 0)), 401, 'more than one hour below')
  })

  it('a one-use mutation (token creation) is accepted once, whatever minutes or offset the copy carries', async () => {
    const tok = await freshToken()
    const date = localDate(Date.now(), 0)
    const body = JSON.stringify({ token_name: 'once' })
    expect((await send(tok, 'POST', '/api/v2/tokens', date, date, body)).status).toBe(200)
    await expectEnvelope(await send(tok, 'POST', '/api/v2/tokens', date, date, body), 401, 'already accepted')
    // The copy keeps the signed hour but rewrites the minutes and the offset so that it claims the current
    // instant: it then passes the offset rules (a higher offset with the current time, rule 2b, or a lowered
    // one by 30 minutes, rule 2) whatever the minute of the hour, and only the one-use rule can refuse it.
    const minute = Number(date.slice(14, 16))
    const other = minute < 30
      ? date.slice(0, 13) + ':' + String(minute + 30).padStart(2, '0') + date.slice(16, 23) + '+00:30'
      : date.slice(0, 13) + ':' + String(minute - 30).padStart(2, '0') + date.slice(16, 23) + '-00:30'
    await expectEnvelope(await send(tok, 'POST', '/api/v2/tokens', date, other, body), 401, 'already accepted')
    // a different body is a different request; GETs may repeat
    expect((await send(tok, 'POST', '/api/v2/tokens', date, date, JSON.stringify({ token_name: 'twice' }))).status).toBe(200)
    for (let i = 0; i < 2; i++) expect((await send(tok, 'GET', '/api/version', date)).status).toBe(200)
    // the refused copies created nothing
    const admin = await adminSession()
    const names = (await admin.listTokens()).data.tokens.map((t: { name: string }) => t.name)
    expect(names.filter((n: string) => n === 'once')).toHaveLength(1)
  })

  it('a read-only POST (Cypher) may be sent again like a GET; the clock rules still bound it', async () => {
    const tok = await freshToken()
    const date = localDate(Date.now(), 0)
    const body = JSON.stringify({ query: 'MATCH (n) RETURN count(n)' })
    const first = await send(tok, 'POST', '/api/v2/graphs/cypher', date, date, body)
    const second = await send(tok, 'POST', '/api/v2/graphs/cypher', date, date, body)
    expect(first.status).toBe(200)
    expect(second.status).toBe(200)
    expect(await second.json()).toEqual(await first.json())
    const old = localDate(Date.now() - 3 * HOUR, 0)
    await expectEnvelope(await send(tok, 'POST', '/api/v2/graphs/cypher', old, old, body), 401, /minutes behind/)
  })

  it('only a route that declares it changes nothing (audit exempt) may be read-only', async () => {
    const { defineRoute } = await import('../../src/http/route')
    const def = { method: 'post' as const, path: '/x', operationId: 'X', summary: 'x', tags: [] as string[], auth: 'graph/Read' as const, responses: {}, readOnly: true as const, replay: { repeatable: 'a read-only test route' } }
    expect(() => defineRoute({ ...def, audit: { action: 'CreateAssetGroup' } }, (c) => c.body(null))).toThrow(/readOnly needs audit/)
    expect(() => defineRoute({ ...def, audit: { exempt: 'reads' } }, (c) => c.body(null))).not.toThrow()
  })

  it('clients sending local time keep working: any first offset, a later higher one, a daylight-saving fall-back', async () => {
    const ny = await freshToken() // Python's datetime.now().astimezone() in New York
    for (let i = 0; i < 2; i++) expect((await send(ny, 'GET', '/api/version', localDate(Date.now(), -300).replace(/(\.\d{3})/, '$1123'))).status).toBe(200)
    expect((await send(ny, 'GET', '/api/version', localDate(Date.now(), -240))).status).toBe(200) // spring forward
    const berlin = await freshToken()
    expect((await send(berlin, 'GET', '/api/version', localDate(Date.now(), 120))).status).toBe(200) // summer time
    expect((await send(berlin, 'GET', '/api/version', localDate(Date.now() - 2 * 60_000, 60))).status).toBe(200) // fall back, clock 2 min slow
    expect((await send(berlin, 'GET', '/api/version', localDate(Date.now(), 60))).status).toBe(200)
    await expectEnvelope(await send(berlin, 'GET', '/api/version', localDate(Date.now(), 0)), 401, 'more than one hour below')
  })
})
