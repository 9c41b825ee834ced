/**
 * Cost-aware admission (src/ratelimit/cost.ts, bucket.ts `charge`, inflight.ts): the pure rules, then the
 * limiter object's `admit` / `release` as the worker calls them.
 */
import { describe, expect, it } from 'vitest'
import { env } from 'cloudflare:workers'
import { charge, DEBT_BURSTS, take, type BucketState } from '../../src/ratelimit/bucket'
import { cypherComputeMs, FREE_MS, measuredExtra, MS_PER_TOKEN, WEIGHT, weightBySize } from '../../src/ratelimit/cost'
import { Leases } from '../../src/ratelimit/inflight'

describe('weights', () => {
  it('a request takes its weight from the bucket: 110 tokens admit 11 requests of weight 10, then refuse', () => {
    let s: BucketState | null = null
    const results = Array.from({ length: 12 }, () => {
      const d = take(s, 1000, 55, 110, WEIGHT.path)
      s = d.state
      return d.allowed
    })
    expect(results.filter(Boolean)).toHaveLength(11)
    expect(results[11]).toBe(false)
    // weight 10 needs 10 tokens: refilled at 55/s after 10/55 s, so the wait is one second (rounded up)
    expect(take(s, 1000, 55, 110, 10).retryAfterSeconds).toBe(1)
    expect(take(s, 1000 + Math.ceil((10 / 55) * 1000), 55, 110, 10).allowed).toBe(true)
  })

  it('an upload weighs its base plus one per started MiB of Content-Length; without one, the most it may be', () => {
    const MAX = 20 * 1024 * 1024
    expect(weightBySize(2, '100', MAX)).toBe(3)
    expect(weightBySize(2, String(1024 * 1024), MAX)).toBe(3)
    expect(weightBySize(2, String(1024 * 1024 + 1), MAX)).toBe(4)
    expect(weightBySize(2, String(MAX), MAX)).toBe(22)
    for (const missing of [undefined, '', 'abc', '-5', '1e9']) expect(weightBySize(2, missing, MAX)).toBe(22)
    expect(weightBySize(2, String(10 * MAX), MAX)).toBe(22) // the body limit answers 413 anyway
  })

  it('the measured rest: one token per MS_PER_TOKEN ms past the first FREE_MS', () => {
    expect([MS_PER_TOKEN, FREE_MS]).toEqual([5, 50])
    expect(measuredExtra(4)).toBe(0)
    expect(measuredExtra(50)).toBe(0)
    expect(measuredExtra(59)).toBe(1)
    expect(measuredExtra(1050)).toBe(200)
    expect(measuredExtra(1050, 10, 0)).toBe(105)
    expect(measuredExtra(1050, 0)).toBe(0) // switched off
    for (const bad of [0, -5, NaN, Infinity]) expect(measuredExtra(bad)).toBe(0)
  })
})

describe('charging after the fact', () => {
  it('runs into debt, never below DEBT_BURSTS bursts, and refuses until the refill has paid it back', () => {
    const s0 = charge(null, 0, 55, 110, 300)
    expect(s0.tokens).toBe(110 - 300)
    expect(charge(s0, 0, 55, 110, 1e9).tokens).toBe(-DEBT_BURSTS * 110)
    const refused = take(s0, 0, 55, 110, 1)
    expect(refused).toMatchObject({ allowed: false, remaining: 0 })
    // 190 tokens of debt plus the one asked for, at 55/s: 4 s (rounded up)
    expect(refused.retryAfterSeconds).toBe(Math.ceil(191 / 55))
    expect(take(s0, 3000, 55, 110, 1).allowed).toBe(false)
    expect(take(s0, 3500, 55, 110, 1).allowed).toBe(true)
    // a negative charge is no gift
    expect(charge({ tokens: 5, updatedMs: 0 }, 0, 55, 110, -50).tokens).toBe(5)
  })
})

describe("Cypher's computation the clock does not see", () => {
  it('is estimated from its work: the value limit is about a second, an 8 MiB answer 160 ms', () => {
    expect(cypherComputeMs({ values: 0, answerBytes: 0 })).toBe(0)
    expect(cypherComputeMs({ values: 2_000_000, answerBytes: 0 })).toBe(1000)
    expect(cypherComputeMs({ values: 0, answerBytes: 8 * 1024 * 1024 })).toBe(160)
    // charged with the clock's time at the shipped rate: a query stopped at the value limit after 20 ms of
    // store time pays (1020 - 50) / 5 = 194 tokens beyond its weight
    expect(measuredExtra(20 + cypherComputeMs({ values: 2_000_000, answerBytes: 0 }))).toBe(194)
  })
})

describe('in-flight leases', () => {
  it('at most `cap` live leases; a release frees one; a lost release expires after its ttl', () => {
    const l = new Leases()
    const a = l.acquire(0, 2, 1000)
    const b = l.acquire(0, 2, 1000)
    expect(a && b && a !== b).toBeTruthy()
    expect(l.acquire(10, 2, 1000)).toBeNull()
    expect(l.release(a!)).toBe(true)
    expect(l.release(a!)).toBe(false)
    const c = l.acquire(20, 2, 1000)
    expect(c).not.toBeNull()
    expect(l.acquire(999, 2, 1000)).toBeNull()
    // b expires at 1000 (never released): its slot comes back
    expect(l.count(1000)).toBe(1)
    expect(l.acquire(1000, 2, 1000)).not.toBeNull()
  })
})

describe('the limiter object: admit and release', () => {
  const obj = (name: string) => env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(name))
  const p = (nowMs: number, cost = 1) => ({ rate: 55, burst: 110, nowMs, cost, inFlight: { cap: 2, ttlMs: 60_000 } })

  it('refuses a request while every slot is taken, without charging it; a release frees the slot', async () => {
    const o = obj(`user:test-${crypto.randomUUID()}`)
    const a = await o.admit(p(1000, 10))
    const b = await o.admit(p(1000, 10))
    expect([a.allowed, b.allowed, typeof a.lease, typeof b.lease]).toEqual([true, true, 'string', 'string'])
    const busy = await o.admit(p(1000, 10))
    expect(busy).toMatchObject({ allowed: false, busy: true, retryAfterSeconds: 1, remaining: 90 })
    await o.release({ lease: a.lease!, nowMs: 1000, extra: 0, rate: 55, burst: 110 })
    const c = await o.admit(p(1000, 10))
    expect(c).toMatchObject({ allowed: true, remaining: 80 })
  })

  it('a release charges the measured rest, which the next admission pays for', async () => {
    const o = obj(`user:test-${crypto.randomUUID()}`)
    const a = await o.admit(p(1000, 10))
    await o.release({ lease: a.lease!, nowMs: 1000, extra: 150, rate: 55, burst: 110 })
    const next = await o.admit(p(1000, 1))
    expect(next).toMatchObject({ allowed: false, remaining: 0 })
    expect(next.retryAfterSeconds).toBe(Math.ceil((50 + 1) / 55))
  })
})
