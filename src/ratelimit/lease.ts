/**
 * Admission by lease: the accounting, pure (no I/O, time passed in), so every rule is tested on its own
 * (test/unit/lease.test.ts). The glue that talks to the limiter object is `admission.ts`.
 *
 * The limiter object of a token or session stays the authority for its budget and its revocation. An
 * isolate may hold a LEASE for a subject: `tokens` requests pre-paid from the object's bucket, usable until
 * `expiresMs`. Requests are admitted from the lease without a round trip.
 *
 * Why it never over-admits. Every token of a lease was taken from the bucket by the object when the lease
 * was granted (`grant` in bucket.ts), exactly as if that many requests had arrived at that instant. An
 * isolate admits at most what it was granted; a token it does not use is never given back (it is lost when
 * the lease expires or the subject is dropped). So over any interval, the requests admitted by all
 * isolates together are at most what the bucket paid out, which is at most rate × time + burst.
 *
 * What it costs (under-admission). The only loss is the unused part of a lease: per isolate and subject at
 * most one lease, i.e. at most `target` tokens (≤ `cap`, see below) each time a caller stops or moves to
 * another isolate. A caller that keeps calling loses nothing: its lease is topped up (`want` counts what
 * it still holds) and the tokens still held carry over to the renewed lease.
 *
 * Why revocation takes effect within `leaseMs`. A lease is valid until `sentAtMs + leaseMs`, where
 * `sentAtMs` is when the isolate SENT the request that granted it: the object checked the subject
 * (revoked token, disabled user, ended or expired session) after that instant. Renewal is the re-check:
 * a renewal refused by the object drops the lease at once, and a lease that is not renewed expires. So a
 * subject revoked at time R is admitted nowhere after R + leaseMs. In the isolate that performs the
 * revocation the lease is dropped at once (admission.ts `dropLeases`).
 *
 * Size. The target is the number of requests this isolate saw for the subject over the last `leaseMs`
 * (at least 1, at most `cap`): a caller sending one request a minute gets leases of 1, i.e. exactly one
 * object call per request as without leases; a steady caller gets one lease per `leaseMs` or so. Requests
 * waiting for a lease raise what is asked to their number (so a burst is served by one grant, exactly as the
 * object would have served the requests one by one).
 *
 * Renewal before exhaustion. After each admission the lease asks to be renewed when what is left is at
 * most a quarter of the target or what the caller is expected to use during one renewal round trip (the
 * last one measured), or when what is left of its lifetime is down to a quarter of it (or two round trips,
 * if longer); the renewal runs in the background (one at a time, kept alive by waitUntil) while the
 * remaining tokens keep admitting, so a steady caller never waits. A steady caller costs about one object
 * call per 3/4 of `leaseMs`: at 50 requests/s and 1 s leases, ≈ 0.027 calls per request.
 */

export interface LeaseGrant {
  /** tokens paid from the bucket for this isolate */
  granted: number
  /** whole tokens left in the bucket after the grant */
  bucketRemaining: number
  /** seconds until one more token is available in the bucket (0 if one is) */
  retryAfterSeconds: number
}

export class Lease {
  tokens = 0
  expiresMs = 0
  /** the last sent time of a successful grant (0: none) */
  grantedAtMs = 0
  /** the bucket's remaining whole tokens at the last grant (for the RateLimit header) */
  bucketRemaining = 0
  /** rate observation: requests in the current and the previous window of `leaseMs` */
  private windowStartMs = 0
  private windowCount = 0
  private previousCount = 0

  constructor(
    readonly leaseMs: number,
    /** most tokens one grant may ask for */
    readonly cap: number,
  ) {}

  /** Count one arriving request (call once per request that may use the lease). */
  observe(nowMs: number): void {
    if (nowMs - this.windowStartMs >= this.leaseMs) {
      // One window later: the last window's count; more than one window later: nothing.
      this.previousCount = nowMs - this.windowStartMs < 2 * this.leaseMs ? this.windowCount : 0
      this.windowStartMs = nowMs
      this.windowCount = 0
    }
    this.windowCount++
  }

  /** the last grant's round trip (send to arrival), ms */
  rttMs = 0

  /**
   * Requests expected over one lease lifetime: the observed count, 1 … cap. The current window counts
   * extrapolated once a tenth of it has passed, so a caller that starts fast gets a fitting lease within
   * a fraction of a second instead of a whole window.
   */
  target(nowMs?: number): number {
    let current = this.windowCount
    const elapsed = nowMs === undefined ? 0 : nowMs - this.windowStartMs
    if (elapsed >= this.leaseMs / 10) current = Math.ceil((this.windowCount * this.leaseMs) / elapsed)
    return Math.max(1, Math.min(this.cap, Math.max(this.previousCount, current)))
  }

  valid(nowMs: number): boolean {
    return nowMs < this.expiresMs
  }

  /** Admit one request from the lease if it holds one that is still valid. An expired lease's tokens are lost. */
  tryTake(nowMs: number): boolean {
    if (!this.valid(nowMs)) {
      this.tokens = 0
      return false
    }
    if (this.tokens < 1) return false
    this.tokens--
    return true
  }

  /** After an admission: is it time to fetch the next lease (before this one runs out or expires)? */
  shouldRenew(nowMs: number): boolean {
    if (!this.valid(nowMs)) return true
    const target = this.target(nowMs)
    // Enough left to cover the requests expected during one renewal round trip, and a quarter in any case.
    const duringRenewal = Math.ceil((target * this.rttMs) / this.leaseMs) + 1
    if (this.tokens <= Math.max(Math.floor(target / 4), duringRenewal)) return true
    // Time: once what is left of the lifetime is down to a quarter of it or two measured round trips,
    // whichever is longer, so the renewal lands before expiry. (Half the lifetime, as before, cost a
    // steady caller two calls per lease lifetime instead of one and a third; the revocation bound does not
    // depend on when the renewal is sent, only on validity running from its send time.)
    return this.expiresMs - nowMs <= Math.max(this.leaseMs / 4, 2 * this.rttMs)
  }

  /**
   * How many tokens to ask for: enough to hold `target` for the next lifetime, minus what the lease still
   * holds (those carry over), or one per request waiting if more. At most the burst.
   */
  want(nowMs: number, waiting: number, burst: number): number {
    const held = this.valid(nowMs) ? this.tokens : 0
    return Math.max(0, Math.min(burst, Math.max(this.target(nowMs) - held, waiting)))
  }

  /** A grant arrived for a request sent at `sentAtMs`: add it, and extend validity from the send time. */
  apply(g: LeaseGrant, sentAtMs: number, arrivedMs?: number): void {
    if (arrivedMs !== undefined && arrivedMs >= sentAtMs) this.rttMs = arrivedMs - sentAtMs
    // Tokens still held carry over only if the lease has not expired in the meantime.
    if (!this.valid(sentAtMs)) this.tokens = 0
    this.tokens += g.granted
    this.bucketRemaining = g.bucketRemaining
    if (sentAtMs >= this.grantedAtMs) {
      this.grantedAtMs = sentAtMs
      this.expiresMs = sentAtMs + this.leaseMs
    }
  }

  /** Revoked, disabled, logged out, or refused by the object: nothing more is admitted from this lease. */
  drop(): void {
    this.tokens = 0
    this.expiresMs = 0
    this.grantedAtMs = 0
  }

  /**
   * Remaining for the `RateLimit` header: what this lease holds plus what the bucket had left at the
   * grant, never more than the burst. With one isolate calling, that is exactly the bucket's level
   * without the refill since the grant, so it is never more than the bucket holds.
   */
  remaining(burst: number): number {
    return Math.min(burst, this.tokens + this.bucketRemaining)
  }
}
