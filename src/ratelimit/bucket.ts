/**
 * Token bucket arithmetic (pure). A bucket holds at most `burst` tokens and refills at `rate` per second;
 * a request takes one. State is two numbers so the Durable Object can persist it cheaply.
 */
export interface BucketState {
  tokens: number
  updatedMs: number
}

export interface BucketDecision {
  allowed: boolean
  /** whole tokens left after this request */
  remaining: number
  /** seconds until the bucket is full again (the draft's `t` for the policy window) */
  resetSeconds: number
  /** seconds until one token is available; 0 when allowed */
  retryAfterSeconds: number
  state: BucketState
}

/**
 * The time a bucket is refilled up to never goes back: `nowMs` comes from the calling isolate's clock,
 * and calls from several isolates (or a lease renewal sent before a request that arrives first) can reach
 * the object out of order. Moving `updatedMs` back would refill the same interval twice.
 */
function later(prev: BucketState | null, nowMs: number): number {
  return prev ? Math.max(prev.updatedMs, nowMs) : nowMs
}

export function take(prev: BucketState | null, nowMs: number, rate: number, burst: number, cost = 1): BucketDecision {
  const elapsed = prev ? Math.max(0, nowMs - prev.updatedMs) / 1000 : 0
  let tokens = prev ? Math.min(burst, prev.tokens + elapsed * rate) : burst
  const allowed = tokens >= cost
  if (allowed) tokens -= cost
  const state = { tokens, updatedMs: later(prev, nowMs) }
  return {
    allowed,
    remaining: Math.max(0, Math.floor(tokens)),
    resetSeconds: Math.ceil((burst - tokens) / rate),
    retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil((cost - tokens) / rate)),
    state,
  }
}

/**
 * How many buckets' worth of debt a bucket may run into (see `charge`). A caller that ran a long request
 * waits at most this many full refills (DEBT_BURSTS × burst / rate seconds: 20 s at the shipped 55/110).
 */
export const DEBT_BURSTS = 10

/**
 * Charge `cost` after the fact, even into debt: what a request turned out to cost beyond what it was
 * charged on admission (src/ratelimit/cost.ts). The balance never goes below −DEBT_BURSTS × burst, so a
 * single runaway request cannot lock a caller out for longer than that. `take` then refuses requests
 * until the refill has paid the debt back (its retry-after counts the debt).
 */
export function charge(prev: BucketState | null, nowMs: number, rate: number, burst: number, cost: number): BucketState {
  const elapsed = prev ? Math.max(0, nowMs - prev.updatedMs) / 1000 : 0
  const tokens = prev ? Math.min(burst, prev.tokens + elapsed * rate) : burst
  return { tokens: Math.max(-DEBT_BURSTS * burst, tokens - Math.max(0, cost)), updatedMs: later(prev, nowMs) }
}

export interface GrantDecision {
  /** tokens paid out: min(want, whole tokens in the bucket) */
  granted: number
  remaining: number
  resetSeconds: number
  /** seconds until one token is available after the grant; 0 if one is */
  retryAfterSeconds: number
  state: BucketState
}

/**
 * Pay out up to `want` tokens at once (a lease, ratelimit/lease.ts): exactly what `want` calls of `take`
 * at the same instant would have admitted, taken in one step.
 */
export function grant(prev: BucketState | null, nowMs: number, rate: number, burst: number, want: number): GrantDecision {
  const elapsed = prev ? Math.max(0, nowMs - prev.updatedMs) / 1000 : 0
  let tokens = prev ? Math.min(burst, prev.tokens + elapsed * rate) : burst
  const granted = Math.max(0, Math.min(Math.floor(want), Math.floor(tokens)))
  tokens -= granted
  return {
    granted,
    remaining: Math.max(0, Math.floor(tokens)),
    resetSeconds: Math.ceil((burst - tokens) / rate),
    retryAfterSeconds: tokens >= 1 ? 0 : Math.max(1, Math.ceil((1 - tokens) / rate)),
    state: { tokens, updatedMs: later(prev, nowMs) },
  }
}
