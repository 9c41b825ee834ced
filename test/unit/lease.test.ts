import { describe, expect, it } from 'vitest'
import { grant, type BucketState } from '../../src/ratelimit/bucket'
import { Lease } from '../../src/ratelimit/lease'

/** One limiter object's bucket, granting leases (what RateLimiter.lease does, without the object). */
class Bucket {
  state: BucketState | null = null
  paid = 0
  constructor(
    readonly rate: number,
    readonly burst: number,
  ) {}
  calls = 0
  lease(nowMs: number, want: number) {
    this.calls++
    const d = grant(this.state, nowMs, this.rate, this.burst, want)
    this.state = d.state
    this.paid += d.granted
    return { granted: d.granted, bucketRemaining: d.remaining, retryAfterSeconds: d.retryAfterSeconds }
  }
}

/** An isolate admitting from its lease, renewing with a round trip of `rttMs` (grant applied on arrival). */
class Isolate {
  lease: Lease
  pending: { arriveMs: number; sentMs: number; want: number } | null = null
  admitted = 0
  stalls = 0
  lateStalls = 0
  constructor(
    readonly bucket: Bucket,
    leaseMs: number,
    readonly rttMs: number,
  ) {
    this.lease = new Lease(leaseMs, Math.floor(bucket.burst / 2))
  }
  tick(nowMs: number) {
    if (this.pending && this.pending.arriveMs <= nowMs) {
      // the object decides when the request reaches it (half way), the isolate applies on arrival
      const g = this.bucket.lease(this.pending.sentMs + this.rttMs / 2, this.pending.want)
      this.lease.apply(g, this.pending.sentMs)
      this.pending = null
    }
  }
  request(nowMs: number): boolean {
    this.tick(nowMs)
    this.lease.observe(nowMs)
    if (this.lease.tryTake(nowMs)) {
      this.admitted++
      if (!this.pending && this.lease.shouldRenew(nowMs)) this.pending = { arriveMs: nowMs + this.rttMs, sentMs: nowMs, want: this.lease.want(nowMs, 0, this.bucket.burst) }
      return true
    }
    this.stalls++
    if (nowMs >= 1000) this.lateStalls++
    if (!this.pending) this.pending = { arriveMs: nowMs + this.rttMs, sentMs: nowMs, want: this.lease.want(nowMs, 1, this.bucket.burst) }
    return false
  }
}

describe('lease accounting (pure)', () => {
  it('never over-admits: 4 isolates hammering one bucket for 10 s admit at most rate × time + burst, and only what was paid', () => {
    const bucket = new Bucket(55, 110)
    const isolates = Array.from({ length: 4 }, (_, i) => new Isolate(bucket, 1000, 5 + i * 10))
    let seed = 7
    const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31)
    for (let t = 0; t < 10_000; t++) for (const iso of isolates) if (rnd() < 0.2) iso.request(t)
    const admitted = isolates.reduce((n, i) => n + i.admitted, 0)
    expect(admitted).toBeLessThanOrEqual(bucket.paid)
    expect(bucket.paid).toBeLessThanOrEqual(55 * 10 + 110)
    // and it is not far below: the loss is at most one lease per isolate and expiry
    expect(admitted).toBeGreaterThan(55 * 10 * 0.8)
  })

  it('an unused part is lost at expiry, never carried past it', () => {
    const l = new Lease(1000, 50)
    l.apply({ granted: 10, bucketRemaining: 90, retryAfterSeconds: 0 }, 0)
    expect(l.tryTake(999)).toBe(true)
    expect(l.tokens).toBe(9)
    expect(l.tryTake(1000)).toBe(false) // expired: the 9 are gone
    expect(l.tokens).toBe(0)
    // a grant for a request sent after expiry does not revive them
    l.apply({ granted: 2, bucketRemaining: 88, retryAfterSeconds: 0 }, 1500)
    expect(l.tokens).toBe(2)
  })

  it('tokens still held carry over to a renewal sent while the lease was valid; validity runs from the send time', () => {
    const l = new Lease(1000, 50)
    l.apply({ granted: 10, bucketRemaining: 90, retryAfterSeconds: 0 }, 0)
    for (let i = 0; i < 7; i++) l.tryTake(100)
    l.apply({ granted: 5, bucketRemaining: 85, retryAfterSeconds: 0 }, 400)
    expect(l.tokens).toBe(8)
    expect(l.expiresMs).toBe(1400) // not from the arrival time: revocation bound holds
  })

  it('renewal is asked before exhaustion, and a steady caller never stalls after the first lease', () => {
    const bucket = new Bucket(1000, 2000)
    const iso = new Isolate(bucket, 1000, 30)
    // 100 requests/s for 5 s, round trip 30 ms
    for (let t = 0; t < 5000; t += 10) iso.request(t)
    expect(iso.lateStalls).toBe(0) // only while the first second's rate is learnt
    expect(iso.stalls).toBeLessThanOrEqual(10)
    expect(iso.admitted).toBeGreaterThanOrEqual(490)
    const l = new Lease(1000, 50)
    for (let t = 0; t < 20; t++) l.observe(t)
    l.apply({ granted: 20, bucketRemaining: 0, retryAfterSeconds: 0 }, 0)
    let asked = -1
    for (let i = 0; i < 20 && asked < 0; i++) if (l.tryTake(30) && l.shouldRenew(30)) asked = l.tokens
    expect(asked).toBeGreaterThan(0) // asked while tokens were left
  })

  it('a steady caller costs about one object call per 3/4 of the lease lifetime (≤ 0.05 per request at 50/s)', () => {
    const bucket = new Bucket(55, 110)
    const iso = new Isolate(bucket, 1000, 30)
    // one connector polling at 50 requests/s for 10 s, object 30 ms away
    let afterFirstSecond = 0
    for (let t = 0; t < 10_000; t += 20) {
      if (t === 1000) afterFirstSecond = bucket.calls
      iso.request(t)
    }
    const steadyCalls = bucket.calls - afterFirstSecond
    // 450 requests after the first second: renewing at half the lifetime made that 18 calls (0.04 per
    // request); renewing when a quarter of it is left makes it 12 (≈ one per 750 ms)
    expect(steadyCalls / 450).toBeLessThanOrEqual(0.03)
    expect(iso.lateStalls).toBe(0)
    expect(iso.admitted).toBeGreaterThanOrEqual(495)
  })

  it('size adapts to the observed rate: one request a minute gets leases of 1', () => {
    const l = new Lease(1000, 55)
    for (let m = 0; m < 5; m++) {
      l.observe(m * 60_000)
      expect(l.want(m * 60_000, 1, 110)).toBe(1)
    }
    const busy = new Lease(1000, 55)
    for (let t = 0; t < 2000; t += 50) busy.observe(t) // 20/s
    expect(busy.target()).toBe(20)
    for (let t = 0; t < 2000; t += 1) busy.observe(2000 + t) // 1000/s: capped
    expect(busy.target()).toBe(55)
  })

  it('a dropped lease (revoked, disabled, logged out) admits nothing', () => {
    const l = new Lease(1000, 50)
    l.apply({ granted: 10, bucketRemaining: 90, retryAfterSeconds: 0 }, 0)
    l.drop()
    expect(l.tryTake(1)).toBe(false)
  })

  it('RateLimit remaining: the lease plus what the bucket had at the grant, never above the burst', () => {
    const l = new Lease(1000, 50)
    l.apply({ granted: 10, bucketRemaining: 95, retryAfterSeconds: 0 }, 0)
    expect(l.remaining(100)).toBe(100)
    l.tryTake(1)
    expect(l.remaining(100)).toBe(100)
    for (let i = 0; i < 5; i++) l.tryTake(1)
    expect(l.remaining(110)).toBe(99)
  })

  it('a call arriving with an older clock than the last one does not refill the same interval twice', () => {
    const a = grant(null, 1000, 10, 10, 10)
    const b = grant(a.state, 2000, 10, 10, 10) // 1 s later: 10 refilled
    expect(b.granted).toBe(10)
    const c = grant(b.state, 1500, 10, 10, 10) // older clock: nothing new
    expect(c.granted).toBe(0)
    expect(grant(c.state, 2000, 10, 10, 10).granted).toBe(0)
  })

  it('grant pays exactly what the same number of single takes would', () => {
    const g = grant(null, 0, 55, 110, 200)
    expect(g.granted).toBe(110)
    expect(g).toMatchObject({ remaining: 0, retryAfterSeconds: 1 })
    expect(grant(g.state, 1000, 55, 110, 30)).toMatchObject({ granted: 30, remaining: 25 })
  })
})
