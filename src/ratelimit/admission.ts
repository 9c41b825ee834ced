import type { Config } from '../config'
import { rememberedMax, rememberOffset, type OffsetMemory } from '../auth/request-date'
import { Lease } from './lease'
import type { RateLimitOutcome } from './headers'
import { authorizeSubject, leaseSubject, outcome } from './limiter.client'
import type { PrincipalSnapshot, SignedRequestFacts } from './limiter.do'

/**
 * Admission of a verified token or session request: from this isolate's lease when it may be
 * (ratelimit/lease.ts has the accounting and the reasoning), else by the limiter object as before.
 *
 * Which requests still go to the object, one call each, exactly as with `LIMITER_LEASE_MS = 0`:
 *  - every request when `LIMITER_LEASE_MS` is 0 (today's path, unchanged);
 *  - a signed mutation (POST, PUT, PATCH, DELETE): its signature must be recorded in the token's object
 *    before it is admitted (single use, auth/request-date.ts rule 3);
 *  - a signed request whose UTC offset is not the one the token's object remembers as its highest and
 *    refreshed within the hour (rule 2: the object must check it, and may have to remember it). A signed
 *    read with the usual offset changes nothing in the object, so the lease may admit it; the snapshot of
 *    the offsets is at most `LIMITER_LEASE_MS` old (renewal refreshes it), so a copy of a signed read is
 *    accepted at most `LIMITER_LEASE_MS` longer than the bound SECURITY.md states.
 *
 * Fail closed. If the object cannot be reached, a request is admitted only from a lease that is still
 * valid and holds a token; otherwise it is a 503, as before.
 */

export type Admission = { ok: false; reason: string } | { ok: true; principal: PrincipalSnapshot; outcome: RateLimitOutcome }

interface Entry {
  lease: Lease
  principal?: PrincipalSnapshot
  offsets?: OffsetMemory
  /** the grant in flight (one at a time per subject and isolate) */
  fetching?: Promise<FetchResult>
  /** requests waiting for a token, and the highest waiter number any grant sent so far has counted */
  waiting: number
  arrivals: number
  counted: number
  /** direct calls in flight */
  directs: number
}

type FetchResult = { ok: false; reason: string } | { ok: true; limit: RateLimitOutcome }

/** Leases of this isolate, by `kind:id`. Bounded: the oldest entry goes first beyond MAX_ENTRIES. */
const entries = new Map<string, Entry>()
const MAX_ENTRIES = 5000

/** Census of limiter object calls made by admission (bench and tests read it). */
export const census = { objectCalls: 0, leaseAdmissions: 0, directAdmissions: 0 }

/** Forget this isolate's lease of a subject (revocation, user change, logout: admission.ts callers). */
export function dropLease(kind: 'token' | 'session', id: string): void {
  const e = entries.get(`${kind}:${id}`)
  if (e) e.lease.drop()
  entries.delete(`${kind}:${id}`)
}

/** For tests: forget every lease of this isolate. */
export function dropAllLeases(): void {
  for (const e of entries.values()) e.lease.drop()
  entries.clear()
}

/** Lease size cap: half the burst, so one isolate never holds the whole bucket of a subject. */
export function leaseCap(cfg: Config): number {
  return Math.max(1, Math.floor(cfg.RATE_LIMIT_BURST / 2))
}

function mustReachObject(signed: SignedRequestFacts | undefined, e: Entry, nowMs: number): boolean {
  if (!signed) return false
  if (signed.replayKey) return true
  const offsets = e.offsets
  if (!offsets) return true
  return rememberedMax(offsets, nowMs) !== signed.offsetMinutes || rememberOffset(offsets, signed.offsetMinutes, nowMs) !== null
}

function leaseOutcome(cfg: Config, kind: 'token' | 'session', lease: Lease): RateLimitOutcome {
  const rate = cfg.RATE_LIMIT_PER_SECOND
  const burst = cfg.RATE_LIMIT_BURST
  const remaining = lease.remaining(burst)
  return {
    policy: kind,
    limit: burst,
    windowSeconds: Math.max(1, Math.ceil(burst / rate)),
    remaining,
    resetSeconds: Math.ceil((burst - remaining) / rate),
    retryAfterSeconds: 0,
    allowed: true,
  }
}

async function direct(
  env: Env,
  cfg: Config,
  kind: 'token' | 'session',
  id: string,
  nowMs: number,
  signed: SignedRequestFacts | undefined,
  e: Entry | undefined,
): Promise<Admission> {
  census.objectCalls++
  census.directAdmissions++
  // With a lease entry, the same call may top the lease up, but only when no other call for this subject is
  // in flight here (so a cold burst of direct calls reserves nothing it cannot use).
  const extra = e && !e.fetching && e.directs === 0 ? Math.max(0, e.lease.want(nowMs, 0, cfg.RATE_LIMIT_BURST) - 1) : undefined
  if (e) e.directs++
  let res
  try {
    res = await authorizeSubject(env, cfg, kind, id, nowMs, signed, 1, e ? (extra ?? 0) : undefined)
  } finally {
    if (e) e.directs--
  }
  if (!res.ok) {
    dropLease(kind, id)
    return res
  }
  if (e && entries.get(`${kind}:${id}`) === e) {
    e.principal = res.principal
    if (res.offsets) e.offsets = res.offsets
    if (res.granted) {
      e.lease.apply({ granted: res.granted, bucketRemaining: res.limit.remaining, retryAfterSeconds: res.limit.retryAfterSeconds }, nowMs)
      return { ok: true, principal: res.principal, outcome: leaseOutcome(cfg, kind, e.lease) }
    }
  }
  return { ok: true, principal: res.principal, outcome: outcome(kind, cfg.RATE_LIMIT_PER_SECOND, cfg.RATE_LIMIT_BURST, res.limit) }
}

function startFetch(env: Env, cfg: Config, kind: 'token' | 'session', id: string, e: Entry, nowMs: number, waitUntil: (p: Promise<unknown>) => void): Promise<FetchResult> {
  const want = e.lease.want(nowMs, e.waiting, cfg.RATE_LIMIT_BURST)
  e.counted = e.arrivals
  census.objectCalls++
  const key = `${kind}:${id}`
  const p: Promise<FetchResult> = leaseSubject(env, cfg, kind, id, nowMs, want)
    .then((r): FetchResult => {
      if (!r.ok) {
        // Refused (revoked, disabled, ended): nothing more from this lease, here, now.
        if (entries.get(key) === e) dropLease(kind, id)
        return r
      }
      const limit = outcome(kind, cfg.RATE_LIMIT_PER_SECOND, cfg.RATE_LIMIT_BURST, r.limit)
      if (entries.get(key) !== e) return { ok: false, reason: 'lease dropped' } // revocation here wins
      e.lease.apply({ granted: r.granted, bucketRemaining: r.limit.remaining, retryAfterSeconds: r.limit.retryAfterSeconds }, nowMs, Date.now())
      e.principal = r.principal
      if (r.offsets) e.offsets = r.offsets
      return { ok: true, limit }
    })
    .finally(() => {
      if (e.fetching === p) e.fetching = undefined
    })
  e.fetching = p
  // A background renewal must outlive the response that started it. Its failure is answered by whoever
  // waits for it (503); otherwise it is harmless (the lease runs until it expires or is used up).
  waitUntil(p.catch(() => undefined))
  return p
}

export async function admit(
  env: Env,
  cfg: Config,
  kind: 'token' | 'session',
  id: string,
  nowMs: number,
  signed: SignedRequestFacts | undefined,
  waitUntil: (p: Promise<unknown>) => void,
): Promise<Admission> {
  if (cfg.LIMITER_LEASE_MS === 0 || signed?.replayKey) return direct(env, cfg, kind, id, nowMs, signed, undefined)
  const key = `${kind}:${id}`
  let e = entries.get(key)
  if (!e) {
    if (entries.size >= MAX_ENTRIES) entries.delete(entries.keys().next().value as string)
    e = { lease: new Lease(cfg.LIMITER_LEASE_MS, leaseCap(cfg)), waiting: 0, arrivals: 0, counted: 0, directs: 0 }
    entries.set(key, e)
  }
  e.lease.observe(nowMs)
  const me = ++e.arrivals
  e.waiting++
  try {
    for (;;) {
      // A signed request whose offset the snapshot does not cover (or a token this isolate has not seen
      // yet): the object decides, one call, which may also start the lease.
      if (signed && (!e.principal || mustReachObject(signed, e, nowMs)) && !e.fetching) return await direct(env, cfg, kind, id, nowMs, signed, e)
      if (e.principal && e.lease.tryTake(nowMs)) {
        census.leaseAdmissions++
        const principal = e.principal
        const o = leaseOutcome(cfg, kind, e.lease)
        if (!e.fetching && e.lease.shouldRenew(nowMs)) {
          e.waiting-- // this request is served: the renewal asks for the lease's target only
          startFetch(env, cfg, kind, id, e, nowMs, waitUntil).catch(() => undefined)
          e.waiting++
        }
        return { ok: true, principal, outcome: o }
      }
      const f = e.fetching ?? startFetch(env, cfg, kind, id, e, nowMs, waitUntil)
      const counted = me <= e.counted
      // Fail closed: the object unreachable and no token held here rejects with LimiterUnavailable (503).
      const r = await f
      if (!r.ok) return { ok: false, reason: r.reason === 'lease dropped' ? (kind === 'token' ? 'unknown or revoked token' : 'session not found') : r.reason }
      if (counted && !(e.principal && e.lease.valid(nowMs) && e.lease.tokens >= 1)) {
        // A grant that counted this request left nothing for it: the bucket gave all it had. 429 with
        // the object's figures (remaining 0, at least a second to wait).
        return { ok: true, principal: e.principal!, outcome: { ...r.limit, allowed: false, remaining: 0, retryAfterSeconds: Math.max(1, r.limit.retryAfterSeconds) } }
      }
    }
  } finally {
    e.waiting--
  }
}

/** Exported for tests. */
export const _internals = { entries }
