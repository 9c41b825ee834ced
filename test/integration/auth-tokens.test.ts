import { describe, expect, it } from 'vitest'
import { dropAllLeases } from '../../src/ratelimit/admission'
import { runDurableObjectAlarm } from 'cloudflare:test'
import { adminSession, adminToken, client, env, expectEnvelope, userWithRole } from '../helpers'

function hex(bytes: Uint8Array) {
  return [...bytes].map((b) => b.toString(16).padStart(2, '0')).join('')
}

describe('API tokens', () => {
  it('creation returns the key once, with the documented fields', async () => {
    const admin = await adminSession()
    const res = await admin.raw('POST', '/api/v2/tokens', { token_name: 'connector' })
    expect(res.status).toBe(200)
    const { data } = (await res.json()) as { data: Record<string, unknown> }
    expect(data).toMatchObject({ name: 'connector', hmac_method: 'hmac-sha2-256', last_access: null, deleted_at: { valid: false } })
    expect(String(data.key)).toMatch(/^[A-Za-z0-9+/]{54}==$/) // 40 random bytes, standard base64
    expect(atob(String(data.key)).length).toBe(40)
    const list = await admin.listTokens()
    const listed = list.data.tokens.find((t) => t.id === data.id)!
    expect(listed).toBeTruthy()
    expect(JSON.stringify(list)).not.toContain(String(data.key))
    expect('key' in listed).toBe(false)
  })

  it('the D1 row holds the key in no form (text, base64 bytes, hex)', async () => {
    const t = await adminToken()
    const row = (await env.DB.prepare('SELECT * FROM api_tokens WHERE id = ?').bind(t.tokenId).first()) as Record<string, unknown>
    const stored = JSON.stringify(row)
    const raw = Uint8Array.from(atob(t.tokenKey), (ch) => ch.charCodeAt(0))
    for (const form of [t.tokenKey, hex(raw), hex(raw).toUpperCase(), btoa(t.tokenKey), t.tokenKey.replace(/=+$/, '')]) expect(stored).not.toContain(form)
    // and a token still verifies: the sealed key round-trips
    expect((await t.version()).data.API.current_version).toBe('v2')
  })

  it('revocation fails the token on the very next request', async () => {
    const t = await adminToken()
    expect((await t.raw('GET', '/api/version')).status).toBe(200)
    const admin = await adminSession()
    await admin.revokeToken(t.tokenId)
    await expectEnvelope(await t.raw('GET', '/api/version'), 401, 'unknown or revoked token')
    await expectEnvelope(await admin.raw('DELETE', `/api/v2/tokens/${t.tokenId}`), 404)
    await expectEnvelope(await admin.raw('DELETE', '/api/v2/tokens/xyz'), 400, 'id is malformed')
  })

  it('a revoked token whose key is still cached in the isolate is refused by its limiter object', async () => {
    const t = await adminToken()
    expect((await t.raw('GET', '/api/version')).status).toBe(200) // key now cached in this isolate
    // Revoke behind the worker's back (as another isolate would): delete the row, then invalidate the object.
    await env.DB.prepare('DELETE FROM api_tokens WHERE id = ?').bind(t.tokenId).run()
    const stub = env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(`token:${t.tokenId}`))
    await stub.invalidate()
    await expectEnvelope(await t.raw('GET', '/api/version'), 401, 'unknown or revoked token')
  })

  it('non-administrators create and see only their own tokens; creating for others is 403, revoking theirs 404', async () => {
    const u = await userWithRole('User')
    const other = await userWithRole('Read-Only')
    await expectEnvelope(await u.client.raw('POST', '/api/v2/tokens', { token_name: 'x', user_id: other.userId }), 403, 'other users')
    await expectEnvelope(await u.client.raw('GET', `/api/v2/tokens?user_id=${other.userId}`), 403)
    // revoking another user's token: the same 404 as for a token that does not exist (no existence oracle)
    const theirs = await expectEnvelope(await u.client.raw('DELETE', `/api/v2/tokens/${other.tokenId}`), 404)
    const none = await expectEnvelope(await u.client.raw('DELETE', `/api/v2/tokens/${crypto.randomUUID()}`), 404)
    expect(theirs.errors).toEqual(none.errors)
    expect((await other.client.raw('GET', '/api/version')).status).toBe(200) // and it was not revoked
    const mine = await u.client.createToken('mine')
    expect(mine.data.user_id).toBe(u.userId)
    // administrators may create for others and list everyone's
    const forOther = await u.admin.createToken('for-other', other.userId)
    expect(forOther.data.user_id).toBe(other.userId)
    const all = await u.admin.listTokens()
    expect(new Set(all.data.tokens.map((t) => t.user_id))).toContain(other.userId)
    await expectEnvelope(await u.admin.raw('POST', '/api/v2/tokens', { token_name: 'x', user_id: crypto.randomUUID() }), 404)
    await expectEnvelope(await u.admin.raw('POST', '/api/v2/tokens', { token_name: '  ' }), 400, 'blank')
  })

  it('last_access is written by the limiter object’s alarm, not on the request path', async () => {
    const t = await adminToken()
    await t.version()
    const before = await env.DB.prepare('SELECT last_access FROM api_tokens WHERE id = ?').bind(t.tokenId).first('last_access')
    expect(before).toBeNull()
    const stub = env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(`token:${t.tokenId}`))
    expect(await runDurableObjectAlarm(stub)).toBe(true)
    const after = (await env.DB.prepare('SELECT last_access FROM api_tokens WHERE id = ?').bind(t.tokenId).first('last_access')) as string
    expect(after).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
    expect(Date.now() - Date.parse(after)).toBeLessThan(60_000)
  })
})

describe('rate limits', () => {
  it('successful responses carry RateLimit headers in the draft-11 syntax', async () => {
    const t = await adminToken()
    const res = await t.raw('GET', '/api/version')
    expect(res.headers.get('ratelimit-policy')).toBe('"token";q=110;w=2')
    expect(res.headers.get('ratelimit')).toMatch(/^"token";r=109;t=\d+$/)
  })

  it('burst then 429 with envelope and headers, then recovery after the advertised wait', async () => {
    const t = await adminToken()
    const { workerFetch } = await import('../helpers')
    const reqs = await Promise.all(Array.from({ length: 300 }, () => t.buildRequest('GET', '/api/version')))
    const started = Date.now()
    const results = await Promise.all(reqs.map((r) => workerFetch(r)))
    const elapsed = (Date.now() - started) / 1000
    const ok = results.filter((r) => r.status === 200).length
    // the burst, plus what the bucket refilled (55/s) while the requests were in flight
    expect(ok).toBeGreaterThanOrEqual(110)
    expect(ok).toBeLessThanOrEqual(110 + Math.ceil(55 * elapsed) + 1)
    const over = results.find((r) => r.status === 429)
    expect(over).toBeDefined()
    const body = await expectEnvelope(over!, 429, 'Too many requests')
    expect(body.errors[0].context).toBe('middleware')
    const retry = Number(over!.headers.get('retry-after'))
    expect(retry).toBeGreaterThanOrEqual(1)
    expect(over!.headers.get('ratelimit')).toMatch(/^"token";r=0;t=\d+$/)
    expect(over!.headers.get('ratelimit-policy')).toBe('"token";q=110;w=2')
    await new Promise((r) => setTimeout(r, retry * 1000))
    expect((await t.raw('GET', '/api/version')).status).toBe(200)
  })

  it('forged signatures naming a token do not spend its budget; the forger’s IP is limited instead', async () => {
    const victim = await adminToken()
    const forger = client({ kind: 'token', tokenId: victim.tokenId, tokenKey: 'wrong-key' })
    const started = Date.now()
    const results = await Promise.all(
      Array.from({ length: 60 }, () => forger.raw('GET', '/api/version', undefined, { headers: { 'CF-Connecting-IP': '198.51.100.9' } })),
    )
    const elapsed = (Date.now() - started) / 1000
    const statuses = results.map((r) => r.status)
    expect(statuses.every((s) => s === 401 || s === 429)).toBe(true)
    expect(statuses.filter((s) => s === 401).length).toBeLessThanOrEqual(20 + Math.ceil(10 * elapsed) + 1)
    expect(statuses).toContain(429)
    const res = await victim.raw('GET', '/api/version')
    expect(res.status).toBe(200)
    expect(res.headers.get('ratelimit')).toMatch(/^"token";r=109;/)
  })

  it('unauthenticated traffic is limited per client IP', async () => {
    const started = Date.now()
    const results = await Promise.all(
      Array.from({ length: 60 }, () => client().raw('GET', '/health', undefined, { headers: { 'CF-Connecting-IP': '198.51.100.10' } })),
    )
    const elapsed = (Date.now() - started) / 1000
    const ok = results.filter((r) => r.status === 200).length
    expect(ok).toBeGreaterThanOrEqual(20)
    expect(ok).toBeLessThanOrEqual(20 + Math.ceil(10 * elapsed) + 1)
    const limited = results.find((r) => r.status === 429)!
    await expectEnvelope(limited, 429)
    expect(limited.headers.get('ratelimit-policy')).toBe('"ip";q=20;w=2')
  })

  it('per-IP objects keep the bucket in memory: nothing stored, no alarm, and the limit still holds', async () => {
    const { runInDurableObject } = await import('cloudflare:test')
    const stub = env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName('ip:192.0.2.55'))
    const nowMs = Date.now()
    const results = []
    for (let i = 0; i < 3; i++) results.push(await stub.consume({ rate: 1, burst: 2, nowMs }))
    expect(results.map((r) => r.allowed)).toEqual([true, true, false])
    expect(results[2]).toMatchObject({ remaining: 0, retryAfterSeconds: 1 })
    await runInDurableObject(stub, async (_obj, state) => {
      expect([...state.storage.kv.list()]).toEqual([])
      expect(await state.storage.getAlarm()).toBeNull()
    })
  })

  it('the alarm deletes a bucket an older version stored', async () => {
    const { runInDurableObject } = await import('cloudflare:test')
    const stub = env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName('ip:192.0.2.56'))
    await runInDurableObject(stub, async (_obj, state) => {
      state.storage.kv.put('bucket', { tokens: 3, updatedMs: Date.now() })
      await state.storage.setAlarm(Date.now() + 60_000)
    })
    expect(await runDurableObjectAlarm(stub)).toBe(true)
    await runInDurableObject(stub, async (_obj, state) => {
      expect([...state.storage.kv.list()]).toEqual([])
      expect(await state.storage.getAlarm()).toBeNull()
    })
  })

  it('a token object stores its pending last_access once per flush window; once flushed, only the offsets it used (48 h)', async () => {
    const { runInDurableObject } = await import('cloudflare:test')
    const t = await adminToken()
    const stub = env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(`token:${t.tokenId}`))
    expect((await t.raw('GET', '/api/version')).status).toBe(200)
    const first = await runInDurableObject(stub, async (_obj, state) => {
      const stored = [...state.storage.kv.list()]
      expect(stored.map(([k]) => k)).toEqual(['access', 'offsets'])
      expect(await state.storage.getAlarm()).toBeGreaterThan(Date.now())
      return stored[0][1] as { tokenId: string; atMs: number }
    })
    expect(first.tokenId).toBe(t.tokenId)
    // more requests in the same window write nothing: the stored access stays the first one
    for (let i = 0; i < 3; i++) expect((await t.raw('GET', '/api/version')).status).toBe(200)
    await runInDurableObject(stub, (_obj, state) => expect(state.storage.kv.get('access')).toEqual(first))
    expect(await runDurableObjectAlarm(stub)).toBe(true)
    const at = (await env.DB.prepare('SELECT last_access FROM api_tokens WHERE id = ?').bind(t.tokenId).first('last_access')) as string
    expect(Date.parse(at)).toBeGreaterThan(first.atMs) // the latest access, from memory
    await runInDurableObject(stub, async (_obj, state) => {
      // the access is flushed; the token's UTC offset stays remembered, and the alarm is set to forget it
      expect([...state.storage.kv.list()].map(([k]) => k)).toEqual(['offsets'])
      expect(await state.storage.getAlarm()).toBeGreaterThan(Date.now() + 47 * 3600_000)
    })
    // the next access that reaches the object opens a new window (with leases, requests admitted from this
    // isolate's lease are noted at the grant: last_access lags by at most LIMITER_LEASE_MS)
    dropAllLeases()
    expect((await t.raw('GET', '/api/version')).status).toBe(200)
    await runInDurableObject(stub, async (_obj, state) => {
      expect(state.storage.kv.get<{ atMs: number }>('access')!.atMs).toBeGreaterThan(first.atMs)
      expect(await state.storage.getAlarm()).toBeLessThan(Date.now() + 60_000)
    })
  })

  it('the alarm forgets aged offsets and replay records, then leaves no storage', async () => {
    const { runInDurableObject } = await import('cloudflare:test')
    const t = await adminToken()
    const stub = env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(`token:${t.tokenId}`))
    expect((await t.raw('POST', '/api/v2/tokens', { token_name: 'aged' })).status).toBe(200)
    expect(await runDurableObjectAlarm(stub)).toBe(true)
    await runInDurableObject(stub, async (_obj, state) => {
      const keys = [...state.storage.kv.list()].map(([k]) => k)
      expect(keys).toContain('offsets')
      expect(keys.filter((k) => k.startsWith('replay:'))).toHaveLength(1)
      // age everything past its memory
      state.storage.kv.put('offsets', { '0': Date.now() - 49 * 3600_000 })
      for (const k of keys.filter((k) => k.startsWith('replay:'))) state.storage.kv.put(k, Date.now() - 1)
      await state.storage.setAlarm(Date.now() + 1000)
    })
    // (the object's memory copy of the offsets is older than storage here: reset it as a restart would)
    await runInDurableObject(stub, (obj) => void Object.assign(obj, { offsets: undefined }))
    expect(await runDurableObjectAlarm(stub)).toBe(true)
    await runInDurableObject(stub, async (_obj, state) => {
      expect([...state.storage.kv.list()]).toEqual([])
      expect(await state.storage.getAlarm()).toBeNull()
    })
  })

  it('a pending last_access survives the loss of the object’s memory (eviction or restart)', async () => {
    const { runInDurableObject } = await import('cloudflare:test')
    const t = await adminToken()
    const stub = env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(`token:${t.tokenId}`))
    expect((await t.raw('GET', '/api/version')).status).toBe(200)
    const stored = await runInDurableObject(stub, (obj, state) => {
      // what a fresh instance has in memory: nothing
      Object.assign(obj, { tokenId: undefined, lastAccessMs: 0, flushedAccessMs: 0, alarmAtMs: 0 })
      return state.storage.kv.get<{ atMs: number }>('access')!
    })
    expect(await runDurableObjectAlarm(stub)).toBe(true)
    const at = await env.DB.prepare('SELECT last_access FROM api_tokens WHERE id = ?').bind(t.tokenId).first('last_access')
    expect(at).toBe(new Date(stored.atMs).toISOString())
  })
})

describe('limiter object: the subject read (single flight, failures, invalidation)', () => {
  /** Runs `fn` inside the token's object with its DB replaced by one that counts subject reads. */
  async function withCountingDb<T>(tokenId: string, gateOrFail: { wait?: Promise<void>; fail?: () => boolean; afterRead?: () => void }, fn: (obj: import('../../src/ratelimit/limiter.do').RateLimiter, count: () => number) => Promise<T>) {
    const { runInDurableObject } = await import('cloudflare:test')
    const stub = env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(`token:${tokenId}`))
    return runInDurableObject(stub, async (obj) => {
      const o = obj as unknown as { env: Env }
      const real = o.env
      let reads = 0
      o.env = {
        ...real,
        DB: {
          prepare: (sql: string) => {
            const stmt = real.DB.prepare(sql)
            return {
              bind: (...args: unknown[]) => ({
                // reads D1 for real, then holds the answer until the test opens the gate
                first: async () => {
                  reads++
                  const row = await stmt.bind(...args).first()
                  gateOrFail.afterRead?.()
                  await gateOrFail.wait
                  if (gateOrFail.fail?.()) throw new Error('D1 unavailable')
                  return row
                },
              }),
            }
          },
        } as unknown as D1Database,
      }
      try {
        return await fn(obj as never, () => reads)
      } finally {
        o.env = real
      }
    })
  }
  const req = (id: string) => ({ kind: 'token' as const, id, rate: 55, burst: 110, nowMs: Date.now() })

  it('20 concurrent requests on a cold object read the subject once', async () => {
    const t = await adminToken() // a fresh token: its object has never been used
    let open!: () => void
    const wait = new Promise<void>((r) => (open = r))
    await withCountingDb(t.tokenId, { wait }, async (obj, reads) => {
      const all = Array.from({ length: 20 }, () => obj.authorize(req(t.tokenId)))
      open()
      const results = await Promise.all(all)
      expect(results.every((r) => r.ok)).toBe(true)
      expect(reads()).toBe(1)
      expect((await obj.authorize(req(t.tokenId))).ok).toBe(true)
      expect(reads()).toBe(1)
    })
  })

  it('a failed read fails every waiter (the worker answers 503) and is not cached', async () => {
    const t = await adminToken()
    let failing = true
    await withCountingDb(t.tokenId, { fail: () => failing }, async (obj, reads) => {
      const settled = await Promise.allSettled(Array.from({ length: 5 }, () => obj.authorize(req(t.tokenId))))
      expect(settled.every((s) => s.status === 'rejected')).toBe(true)
      expect(reads()).toBe(1)
      failing = false
      expect((await obj.authorize(req(t.tokenId))).ok).toBe(true)
      expect(reads()).toBe(2)
    })
  })

  it('fail closed: a request whose object cannot read its subject gets 503 with Retry-After: 1, never admission', async () => {
    const { runInDurableObject } = await import('cloudflare:test')
    const t = await adminToken()
    const stub = env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(`token:${t.tokenId}`))
    const real = await runInDurableObject(stub, (obj) => {
      const o = obj as unknown as { env: Env }
      const saved = o.env
      o.env = { ...saved, DB: { prepare: () => ({ bind: () => ({ first: async () => { throw new Error('D1 unavailable') } }) }) } as unknown as D1Database }
      return saved
    })
    try {
      const res = await t.raw('GET', '/api/version')
      await expectEnvelope(res, 503, 'rate limiter is unavailable')
      expect(res.headers.get('retry-after')).toBe('1')
    } finally {
      await runInDurableObject(stub, (obj) => void ((obj as unknown as { env: Env }).env = real))
    }
    expect((await t.raw('GET', '/api/version')).status).toBe(200) // the failure was not cached
  })

  it('a read in flight when the token is revoked is not cached: the next request is refused', async () => {
    const t = await adminToken()
    let open!: () => void
    const wait = new Promise<void>((r) => (open = r))
    let read!: () => void
    const readDone = new Promise<void>((r) => (read = r))
    await withCountingDb(t.tokenId, { wait, afterRead: read }, async (obj, reads) => {
      const inFlight = obj.authorize(req(t.tokenId)) // reads the row while the token still exists...
      await readDone
      await env.DB.prepare('DELETE FROM api_tokens WHERE id = ?').bind(t.tokenId).run() // ...then it is revoked
      await obj.invalidate()
      open()
      await inFlight // concurrent with the revocation: either answer is linearisable; it must not be cached
      expect(await obj.authorize(req(t.tokenId))).toEqual({ ok: false, reason: 'unknown or revoked token' })
      expect(reads()).toBe(2)
    })
  })
})
