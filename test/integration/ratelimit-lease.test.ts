import { env } from 'cloudflare:workers'
import { createExecutionContext, waitOnExecutionContext } from 'cloudflare:test'
import { describe, expect, it, vi } from 'vitest'
import { createApp } from '../../src/app'
import { EdgeHoundClient } from '../../src/client'
import { census, dropAllLeases } from '../../src/ratelimit/admission'
import { adminSession, BASE, expectEnvelope } from '../helpers'

/**
 * Admission by lease (src/ratelimit/lease.ts, admission.ts) through the real middleware and limiter
 * objects. The worker is called in-process with a chosen LIMITER_LEASE_MS, so the lease census is the one
 * the worker updates.
 */
const app = createApp()

function workerWith(vars: Record<string, unknown>, ip = `10.9.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}`) {
  const e = { ...env, ...vars } as Env
  return async (req: Request): Promise<Response> => {
    const h = new Headers(req.headers)
    h.set('CF-Connecting-IP', ip)
    const ctx = createExecutionContext()
    const res = await app.fetch(new Request(req, { headers: h }), e, ctx)
    await waitOnExecutionContext(ctx)
    return res
  }
}

async function tokenClient(vars: Record<string, unknown>) {
  const admin = await adminSession()
  const t = await admin.createToken(`lease-${crypto.randomUUID()}`)
  const c = new EdgeHoundClient({ baseUrl: BASE, credentials: { kind: 'token', tokenId: t.data.id, tokenKey: t.data.key }, fetch: workerWith(vars) })
  return Object.assign(c, { tokenId: t.data.id, admin })
}

function remaining(res: Response): number {
  const m = /^"token";r=(\d+);t=(\d+)$/.exec(res.headers.get('ratelimit') ?? '')
  expect(m, res.headers.get('ratelimit') ?? 'no RateLimit header').not.toBeNull()
  return Number(m![1])
}

/** Revoke behind this isolate's back, as another isolate would: D1 first, then the token's object. */
async function revokeElsewhere(tokenId: string) {
  await env.DB.prepare('DELETE FROM api_tokens WHERE id = ?').bind(tokenId).run()
  await env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(`token:${tokenId}`)).invalidate()
}

describe('admission by lease', () => {
  it('a steady caller is admitted mostly from leases: object calls per request fall well below 1', async () => {
    dropAllLeases()
    const t = await tokenClient({ LIMITER_LEASE_MS: '1000', RATE_LIMIT_PER_SECOND: '1000', RATE_LIMIT_BURST: '2000' })
    const before = { ...census }
    const n = 60
    for (let i = 0; i < n; i++) expect((await t.raw('GET', '/api/version')).status).toBe(200)
    const calls = census.objectCalls - before.objectCalls
    expect(census.leaseAdmissions - before.leaseAdmissions).toBeGreaterThan(n / 2)
    expect(calls / n).toBeLessThan(0.25)
  })

  it('LIMITER_LEASE_MS=0 is today\'s path: one object call per request, no lease admission', async () => {
    dropAllLeases()
    const t = await tokenClient({ LIMITER_LEASE_MS: '0' })
    const before = { ...census }
    const rs: number[] = []
    for (let i = 0; i < 5; i++) {
      const res = await t.raw('GET', '/api/version')
      expect(res.status).toBe(200)
      rs.push(remaining(res))
    }
    expect(census.objectCalls - before.objectCalls).toBe(5)
    expect(census.leaseAdmissions - before.leaseAdmissions).toBe(0)
    expect(rs[0]).toBe(109)
  })

  it('headers under leases: remaining never above what the bucket allows, 429 with Retry-After once it is spent', async () => {
    dropAllLeases()
    // rate 1/s so refill is negligible over the test; burst 20
    const t = await tokenClient({ LIMITER_LEASE_MS: '1000', RATE_LIMIT_PER_SECOND: '1', RATE_LIMIT_BURST: '20' })
    const start = Date.now()
    let admitted = 0
    let refused: Response | undefined
    for (let i = 0; i < 40 && !refused; i++) {
      const res = await t.raw('GET', '/api/version')
      expect(res.headers.get('ratelimit-policy')).toBe('"token";q=20;w=20')
      if (res.status === 429) {
        refused = res
        break
      }
      expect(res.status).toBe(200)
      admitted++
      const refill = Math.ceil((Date.now() - start) / 1000) + 1
      expect(remaining(res)).toBeLessThanOrEqual(Math.min(20, 20 - admitted + refill))
      expect(remaining(res)).toBeGreaterThanOrEqual(0)
    }
    expect(refused).toBeDefined()
    // never over-admits: at most burst + refill over the run
    expect(admitted).toBeLessThanOrEqual(20 + Math.ceil((Date.now() - start) / 1000))
    expect(Number(refused!.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
    expect(remaining(refused!)).toBe(0)
    await expectEnvelope(refused!, 429)
  })

  it('200 concurrent requests of one token with leases on: never more than the bucket holds, the rest 429', async () => {
    dropAllLeases()
    const t = await tokenClient({ LIMITER_LEASE_MS: '1000', RATE_LIMIT_PER_SECOND: '1', RATE_LIMIT_BURST: '30' })
    expect((await t.raw('GET', '/api/version')).status).toBe(200) // offsets known, principal cached
    const statuses = await Promise.all(Array.from({ length: 200 }, () => t.raw('GET', '/api/version').then((r) => r.status)))
    const ok = statuses.filter((s) => s === 200).length
    expect(statuses.filter((s) => s !== 200 && s !== 429)).toEqual([])
    // 29 left after the first; refill 1/s adds at most a couple during the run; never more
    expect(ok).toBeGreaterThanOrEqual(27)
    expect(ok).toBeLessThanOrEqual(29 + 3)
  })

  for (const leaseMs of ['1000', '0']) {
    it(`revocation elsewhere takes effect within LIMITER_LEASE_MS (${leaseMs})`, async () => {
      dropAllLeases()
      const t = await tokenClient({ LIMITER_LEASE_MS: leaseMs, RATE_LIMIT_PER_SECOND: '1000', RATE_LIMIT_BURST: '2000' })
      for (let i = 0; i < 20; i++) expect((await t.raw('GET', '/api/version')).status).toBe(200)
      const revokedAt = Date.now()
      await revokeElsewhere(t.tokenId)
      let admittedAfter = 0
      for (;;) {
        const res = await t.raw('GET', '/api/version')
        if (res.status === 401) {
          await expectEnvelope(res, 401, 'unknown or revoked token')
          break
        }
        expect(res.status).toBe(200)
        admittedAfter++
        expect(Date.now() - revokedAt).toBeLessThanOrEqual(Number(leaseMs) + 50)
      }
      if (leaseMs === '0') expect(admittedAfter).toBe(0)
      // and it stays refused
      expect((await t.raw('GET', '/api/version')).status).toBe(401)
    })
  }

  it('revocation through the API and logout are immediate in the isolate that performs them', async () => {
    dropAllLeases()
    const vars = { LIMITER_LEASE_MS: '1000', RATE_LIMIT_PER_SECOND: '1000', RATE_LIMIT_BURST: '2000' }
    const t = await tokenClient(vars)
    for (let i = 0; i < 10; i++) expect((await t.raw('GET', '/api/version')).status).toBe(200)
    const admin = new EdgeHoundClient({ baseUrl: BASE, credentials: t.admin.credentials, fetch: workerWith(vars) })
    expect((await admin.raw('DELETE', `/api/v2/tokens/${t.tokenId}`)).status).toBeLessThan(300)
    await expectEnvelope(await t.raw('GET', '/api/version'), 401, 'unknown or revoked token')
    // a session: logout ends it at once, whatever lease this isolate held
    for (let i = 0; i < 10; i++) expect((await admin.raw('GET', '/api/version')).status).toBe(200)
    expect((await admin.raw('POST', '/api/v2/logout')).status).toBeLessThan(300)
    await expectEnvelope(await admin.raw('GET', '/api/version'), 401)
  })

  for (const leaseMs of ['0', '1000']) {
    it(`D1 failing on the token key read → 503 envelope with Retry-After: 1, cause logged, never 500 nor an admission (leases ${leaseMs === '0' ? 'off' : 'on'})`, async () => {
      dropAllLeases()
      const vars = { LIMITER_LEASE_MS: leaseMs }
      // a fresh token: its key is not cached in this isolate, so authentication must read D1
      const t = await tokenClient(vars)
      let reads = 0
      // The worker's D1 binding fails every statement as D1 does when overloaded; no Sessions API, so
      // the request runs on this binding directly (the limiter object keeps its own, working binding).
      const failing = {
        prepare: () => {
          throw new Error('D1_ERROR: D1 DB is overloaded. Requests queued for too long. (injected)')
        },
        batch: () => Promise.reject(new Error('D1_ERROR: overloaded (injected)')),
      }
      const counting = new Proxy(failing, {
        get: (target, prop) => {
          if (prop === 'prepare') reads++
          return Reflect.get(target, prop)
        },
      })
      const cut = new EdgeHoundClient({ baseUrl: BASE, credentials: t.credentials, fetch: workerWith({ ...vars, DB: counting }) })
      const logged: string[] = []
      const spy = vi.spyOn(console, 'error').mockImplementation((...a: unknown[]) => void logged.push(a.map(String).join(' ')))
      let res: Response
      try {
        res = await cut.raw('GET', '/api/version')
      } finally {
        spy.mockRestore()
      }
      expect(reads).toBeGreaterThan(0)
      expect(res.headers.get('retry-after')).toBe('1')
      const body = (await res.clone().json()) as { request_id: string; errors: { message: string }[] }
      await expectEnvelope(res, 503, 'credential store is unavailable')
      expect(JSON.stringify(body)).not.toContain('D1_ERROR')
      // the cause is in the worker's log, under the answer's request id
      expect(logged.some((l) => l.includes(body.request_id) && l.includes('D1_ERROR'))).toBe(true)
      // the failure is not cached: with D1 back, the same token is admitted
      expect((await t.raw('GET', '/api/version')).status).toBe(200)
    })
  }

  it('fail closed: limiter unreachable and no lease held → 503; a valid lease keeps admitting until it runs out', async () => {
    dropAllLeases()
    const vars = { LIMITER_LEASE_MS: '60000', RATE_LIMIT_PER_SECOND: '1000', RATE_LIMIT_BURST: '2000' }
    const t = await tokenClient(vars)
    for (let i = 0; i < 10; i++) expect((await t.raw('GET', '/api/version')).status).toBe(200)
    let broken = 0
    const down = {
      idFromName: (n: string) => env.RATE_LIMITER.idFromName(n),
      get: () =>
        new Proxy(
          {},
          {
            get: () => () => {
              broken++
              return Promise.reject(new Error('limiter unreachable (injected)'))
            },
          },
        ),
    }
    const cut = new EdgeHoundClient({ baseUrl: BASE, credentials: t.credentials, fetch: workerWith({ ...vars, RATE_LIMITER: down }) })
    // the lease held since the steady run admits a few more without the object …
    let served = 0
    let res: Response
    for (;;) {
      res = await cut.raw('GET', '/api/version')
      if (res.status !== 200) break
      served++
      expect(served).toBeLessThan(100)
    }
    // … then, with no lease left and no object, 503 with Retry-After: 1
    expect(served).toBeGreaterThan(0)
    await expectEnvelope(res, 503, 'rate limiter is unavailable')
    expect(res.headers.get('retry-after')).toBe('1')
    expect(broken).toBeGreaterThan(0)
    // a token this isolate never leased: 503 at once
    dropAllLeases()
    await expectEnvelope(await cut.raw('GET', '/api/version'), 503)
  })
})
