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

export function take(prev: BucketState | null, nowMs: number, rate: number, burst: number, cost = 1): BucketDecision {
  const elapsed = prev ? Math.max(0, nowMs - prev.updatedMs) / 1000 : 0
  let tokens = prev ? Math.min(burst, prev.tokens + elapsed * rate) : burst
  const allowed = tokens >= cost
  if (allowed) tokens -= cost
  const state = { tokens, updatedMs: nowMs }
  return {
    allowed,
    remaining: Math.floor(tokens),
    resetSeconds: Math.ceil((burst - tokens) / rate),
    retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil((cost - tokens) / rate)),
    state,
  }
}
