import { describe, expect, it } from 'vitest'
import { env } from 'cloudflare:workers'
import { take, type BucketState } from '../../src/ratelimit/bucket'
import { rateLimitHeaders } from '../../src/ratelimit/headers'

describe('token bucket', () => {
  it('admits exactly the burst at one instant, then refills at the rate', () => {
    let s: BucketState | null = null
    let allowed = 0
    for (let i = 0; i < 200; i++) {
      const d = take(s, 1000, 55, 110)
      s = d.state
      if (d.allowed) allowed++
    }
    expect(allowed).toBe(110)
    const denied = take(s, 1000, 55, 110)
    expect(denied).toMatchObject({ allowed: false, remaining: 0, retryAfterSeconds: 1 })
    // 1 second later: 55 more
    let again = 0
    for (let i = 0; i < 100; i++) {
      const d = take(s, 2000, 55, 110)
      s = d.state
      if (d.allowed) again++
    }
    expect(again).toBe(55)
  })

  it('never exceeds the burst after a long idle time, and reports time to full', () => {
    const d = take({ tokens: 0, updatedMs: 0 }, 3_600_000, 10, 20)
    expect(d).toMatchObject({ allowed: true, remaining: 19, resetSeconds: 1 })
  })

  it('retry-after reflects a slow rate', () => {
    const d = take({ tokens: 0, updatedMs: 0 }, 0, 0.25, 1)
    expect(d).toMatchObject({ allowed: false, retryAfterSeconds: 4 })
  })
})

describe('RateLimit headers (draft-11)', () => {
  it('formats policy, remaining and Retry-After', () => {
    expect(rateLimitHeaders({ policy: 'token', limit: 110, windowSeconds: 2, remaining: 0, resetSeconds: 2, retryAfterSeconds: 1, allowed: false })).toEqual({
      'RateLimit-Policy': '"token";q=110;w=2',
      RateLimit: '"token";r=0;t=2',
      'Retry-After': '1',
    })
  })
})

describe('limiter object', () => {
  it('200 concurrent requests at one instant: exactly the burst is admitted', async () => {
    const stub = env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName('ip:exactness'))
    const nowMs = Date.now()
    const results = await Promise.all(Array.from({ length: 200 }, () => stub.consume({ rate: 55, burst: 110, nowMs })))
    expect(results.filter((r) => r.allowed).length).toBe(110)
  })
})
