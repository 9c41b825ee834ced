import { describe, expect, it } from 'vitest'
import { env } from 'cloudflare:workers'
import { take, type BucketState } from '../../src/ratelimit/bucket'
import { rateLimitHeaders } from '../../src/ratelimit/headers'
import { SUBJECT_MAX_AGE_MS } from '../../src/ratelimit/limiter.do'
import { ADMIN, client } from '../helpers'

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

describe('the limiter object: cached subject state has a bounded age', () => {
  type Stub = {
    authorize(p: { kind: 'session'; id: string; rate: number; burst: number; nowMs: number }): Promise<{ ok: boolean; reason?: string }>
  }
  it(`a session ended in storage without invalidate() is refused once the cache is ${SUBJECT_MAX_AGE_MS / 1000} s old (time injected)`, async () => {
    const login = await client().login(ADMIN.username, ADMIN.password)
    const jti = JSON.parse(atob(login.data.session_token.split('.')[1].replace(/-/g, '+').replace(/_/g, '/'))).jti as string
    const stub = env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(`session:${jti}`)) as unknown as Stub
    const t0 = Date.now()
    const at = (ms: number) => stub.authorize({ kind: 'session', id: jti, rate: 100, burst: 100, nowMs: t0 + ms })
    expect(await at(0)).toMatchObject({ ok: true }) // cached now
    // ended in storage, and nobody tells the object (the case a missed or raced invalidation leaves)
    await env.DB.prepare('UPDATE sessions SET ended_at = ? WHERE id = ?').bind(new Date(t0).toISOString(), jti).run()
    expect(await at(SUBJECT_MAX_AGE_MS - 1)).toMatchObject({ ok: true }) // within the bound: the cache answers
    expect(await at(SUBJECT_MAX_AGE_MS)).toMatchObject({ ok: false, reason: 'session has ended (logged out)' })
    // and a clock that goes backwards does not revive the cache
    expect(await at(-60_000)).toMatchObject({ ok: false })
  })
})
