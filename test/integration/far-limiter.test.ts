import { env } from 'cloudflare:workers'
import { createExecutionContext, waitOnExecutionContext } from 'cloudflare:test'
import { describe, expect, it } from 'vitest'
import { createApp } from '../../src/app'
import { EdgeHoundClient } from '../../src/client'
import { census, dropAllLeases } from '../../src/ratelimit/admission'
import { adminSession, BASE } from '../helpers'

/**
 * The "far limiter" measurement (docs/scale.md): one connector sending 200 sequential signed reads while
 * every limiter object call takes 30 ms longer (the object on another continent), leases on and off.
 * Latencies are printed (`FAR LIMITER` line, run with --silent=false), not asserted: the assertions are
 * about object calls, which do not depend on the machine.
 */
const app = createApp()
const DELAY_MS = 30
const N = 200

function delayedLimiter(counter: { calls: number }) {
  return {
    idFromName: (n: string) => env.RATE_LIMITER.idFromName(n),
    get: (id: DurableObjectId) => {
      const real = env.RATE_LIMITER.get(id)
      return new Proxy(real, {
        get(target, prop) {
          const v = Reflect.get(target, prop, target)
          if (typeof v !== 'function') return v
          return async (...args: unknown[]) => {
            counter.calls++
            await new Promise((r) => setTimeout(r, DELAY_MS))
            try {
              return await (target as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>)[prop as string](...args)
            } finally {
              /* nothing */
            }
          }
        },
      })
    },
  }
}

async function run(leaseMs: string, delayed: boolean) {
  dropAllLeases()
  const admin = await adminSession()
  const t = (await admin.createToken(`far-${crypto.randomUUID()}`)).data
  const counter = { calls: 0 }
  const e = { ...env, LIMITER_LEASE_MS: leaseMs, RATE_LIMIT_PER_SECOND: '1000', RATE_LIMIT_BURST: '2000', ...(delayed ? { RATE_LIMITER: delayedLimiter(counter) } : {}) } as Env
  const c = new EdgeHoundClient({
    baseUrl: BASE,
    credentials: { kind: 'token', tokenId: t.id, tokenKey: t.key },
    fetch: async (req: Request) => {
      const ctx = createExecutionContext()
      const res = await app.fetch(req, e, ctx)
      await waitOnExecutionContext(ctx)
      return res
    },
  })
  const before = census.objectCalls
  const ms: number[] = []
  for (let i = 0; i < N; i++) {
    const t0 = performance.now()
    const res = await c.raw('GET', '/api/v2/available-domains')
    ms.push(performance.now() - t0)
    expect(res.status).toBe(200)
  }
  ms.sort((a, b) => a - b)
  return { p50: Math.round(ms[N / 2] * 10) / 10, p95: Math.round(ms[Math.floor(N * 0.95)] * 10) / 10, callsPerRequest: (census.objectCalls - before) / N }
}

describe('far limiter (30 ms per object call), 200 sequential signed reads', () => {
  it('leases on: object calls per request stay low; leases off: one per request', { timeout: 60_000 }, async () => {
    const onNear = await run('1000', false)
    const onFar = await run('1000', true)
    const offNear = await run('0', false)
    const offFar = await run('0', true)
    console.log(`FAR LIMITER ${JSON.stringify({ requests: N, delayMs: DELAY_MS, onNear, onFar, offNear, offFar })}`)
    expect(offFar.callsPerRequest).toBe(1)
    expect(onFar.callsPerRequest).toBeLessThan(0.2)
  })
})
