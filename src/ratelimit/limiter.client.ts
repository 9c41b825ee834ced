import type { Config } from '../config'
import type { AuthorizeResult, LeaseResult, LimitResult, SignedRequestFacts } from './limiter.do'
import type { RateLimitOutcome } from './headers'
import { dropLease } from './admission'

/**
 * The worker's side of the limiter objects. What happens when an object cannot be reached: we fail
 * closed with 503 (and `Retry-After: 1`). The token/session object is also the revocation authority,
 * so admitting a request without it could let a revoked token through; for the per-IP buckets the same
 * rule keeps one behaviour everywhere. A caught error is retried once, as Cloudflare advises for
 * transient DO errors (`overloaded` is not retried).
 */
export class LimiterUnavailable extends Error {}

async function call<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn()
  } catch (e) {
    const err = e as { retryable?: boolean; overloaded?: boolean }
    if (err?.retryable && !err?.overloaded) {
      try {
        return await fn()
      } catch {
        /* fall through */
      }
    }
    throw new LimiterUnavailable(String((e as Error)?.message ?? e))
  }
}

function stub(env: Env, name: string) {
  return env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(name))
}

export function outcome(policy: RateLimitOutcome['policy'], rate: number, burst: number, r: LimitResult): RateLimitOutcome {
  return {
    policy,
    limit: burst,
    windowSeconds: Math.max(1, Math.ceil(burst / rate)),
    remaining: r.remaining,
    resetSeconds: r.resetSeconds,
    retryAfterSeconds: r.retryAfterSeconds,
    allowed: r.allowed,
  }
}

/** Login attempts per client IP: a fixed, small budget (1/s, burst 5), like BloodHound's 1/s on login. */
export const LOGIN_RATE = { rate: 1, burst: 5 }

export async function consumeIp(env: Env, cfg: Config, ip: string, kind: 'ip' | 'login', nowMs: number): Promise<RateLimitOutcome> {
  const { rate, burst } = kind === 'login' ? LOGIN_RATE : { rate: cfg.RATE_LIMIT_PER_IP_PER_SECOND, burst: cfg.RATE_LIMIT_PER_IP_BURST }
  const r = await call(() => stub(env, `${kind}:${ip}`).consume({ rate, burst, nowMs }))
  return outcome(kind, rate, burst, r)
}

/** How long an in-flight slot stays taken when its release never arrives (src/ratelimit/inflight.ts). */
export const LEASE_TTL_MS = 120_000

export async function authorizeSubject(
  env: Env,
  cfg: Config,
  kind: 'token' | 'session',
  id: string,
  nowMs: number,
  signed?: SignedRequestFacts,
  cost = 1,
  leaseWant?: number,
): Promise<AuthorizeResult> {
  // Only weighted requests (weight > 1) take an in-flight slot (src/ratelimit/cost.ts).
  const inFlight = cost > 1 ? { cap: cfg.RATE_LIMIT_IN_FLIGHT_PER_TOKEN, ttlMs: LEASE_TTL_MS } : undefined
  return call(
    () =>
      stub(env, `${kind}:${id}`).authorize({
        kind,
        id,
        rate: cfg.RATE_LIMIT_PER_SECOND,
        burst: cfg.RATE_LIMIT_BURST,
        nowMs,
        signed,
        cost,
        inFlight,
        ...(leaseWant === undefined ? {} : { leaseWant }),
      }) as Promise<AuthorizeResult>,
  )
}

/** A lease of up to `want` pre-paid requests (ratelimit/lease.ts), with the same subject check as authorize. */
export async function leaseSubject(env: Env, cfg: Config, kind: 'token' | 'session', id: string, nowMs: number, want: number): Promise<LeaseResult> {
  return call(
    () => stub(env, `${kind}:${id}`).lease({ kind, id, rate: cfg.RATE_LIMIT_PER_SECOND, burst: cfg.RATE_LIMIT_BURST, nowMs, want }) as Promise<LeaseResult>,
  )
}

/** A user's weighted request across all their tokens and sessions: the user's bucket and in-flight slots. */
export async function admitUser(env: Env, cfg: Config, userId: string, nowMs: number, cost: number): Promise<LimitResult> {
  const inFlight = { cap: cfg.RATE_LIMIT_IN_FLIGHT_PER_USER, ttlMs: LEASE_TTL_MS }
  return call(() => stub(env, `user:${userId}`).admit({ rate: cfg.RATE_LIMIT_PER_SECOND, burst: cfg.RATE_LIMIT_BURST, nowMs, cost, inFlight }))
}

/**
 * The end of an admitted request, on the object that admitted it (`token:<id>`, `session:<jti>`,
 * `user:<id>`): frees the slot and charges `extra` tokens. Best effort (called after the answer): a lost
 * release only keeps the slot until its lease expires.
 */
export async function releaseSlot(env: Env, cfg: Config, name: string, lease: string, nowMs: number, extra: number): Promise<void> {
  await call(() => stub(env, name).release({ lease, nowMs, extra, rate: cfg.RATE_LIMIT_PER_SECOND, burst: cfg.RATE_LIMIT_BURST }))
}

/** Tell a token's or session's object to re-read its subject (after D1 has been changed). */
export async function invalidateSubject(env: Env, kind: 'token' | 'session', id: string): Promise<void> {
  // This isolate's lease goes at once; other isolates' leases end at their next renewal or expiry
  // (within LIMITER_LEASE_MS, ratelimit/lease.ts).
  dropLease(kind, id)
  await call(() => stub(env, `${kind}:${id}`).invalidate())
}
