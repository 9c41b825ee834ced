import { DurableObject } from 'cloudflare:workers'
import { charge, grant, take, type BucketState } from './bucket'
import { Leases } from './inflight'
import { loadSessionSubject, loadTokenSubject, type Subject } from '../auth/subjects.store'
import { touchLastAccess } from '../auth/tokens.store'
import type { EnvironmentAccess, Role } from '../auth/permissions'
import { offsetError, pruneOffsets, rememberOffset, REPLAY_MEMORY_MS, type OffsetMemory } from '../auth/request-date'

/**
 * One object per API token (`token:<id>`), per JWT session (`session:<jti>`), per client IP (`ip:<addr>`)
 * and per login IP (`login:<addr>`).
 *
 * For tokens and sessions the object is both the rate limiter and the revocation authority, so an
 * authenticated request costs exactly one Durable Object round-trip (`authorize`):
 *  - it caches its subject (the user's roles, environment access, disabled flag; for a session its expiry)
 *    after one D1 read, and answers from memory afterwards, for at most SUBJECT_MAX_AGE_MS (5 s) before reading again. Concurrent requests on a cold object share that
 *    one read (single flight), and a failed read is not cached: every waiter fails (503, fail closed) and
 *    the next request reads again;
 *  - whoever revokes a token, disables or changes a user, or ends a session writes D1 first and then
 *    calls `invalidate()`, so the very next request, whichever isolate serves it, sees the change (the
 *    object is unique world-wide; the cache that could be stale lives here and nowhere else). A read that
 *    was already in flight when `invalidate()` arrived may have seen D1 before the write, so its result
 *    is never cached (generation check) and later requests read D1 again;
 *  - only requests whose signature or JWT already verified reach `authorize`, so forged requests naming a
 *    token id never spend its budget;
 *  - `last_access` is kept in memory and written to D1 by the alarm (at most every 30 s), never on the
 *    request's critical path.
 *
 * What is stored, and why so little. The revocation state is D1 itself (token row deleted, user disabled,
 * session ended): a fresh instance after an eviction or restart reads it again before admitting anything,
 * so revocation needs no Durable Object storage. The bucket lives in memory only: persisting it cost a
 * synchronous storage write on every request, and bought almost nothing, because a bucket refills
 * completely in burst / rate seconds (2 s for tokens, sessions and IPs, 5 s for logins) while an object is
 * only evicted after a much longer idle time. The only case where a lost bucket matters is a restart in
 * the middle of a burst (a deploy, a runtime restart): the caller then gets at most one extra burst. The
 * one thing stored is a token's pending `last_access` (key `access`, written once per flush window, not per
 * request) plus the alarm that flushes it, so an access is not lost if the object goes away before its
 * alarm; the alarm deletes both once flushed. Per-IP, login and session objects store nothing and set no
 * alarm. The alarm also deletes whatever an older version left (a persisted `bucket`).
 *
 * A token's object also guards against replays of its signed requests (auth/request-date.ts gives the
 * rules and the reasoning): it stores the UTC offsets the token used in the last 48 h (key `offsets`,
 * re-written only when an offset is new or its stored time is over an hour old) and, for each admitted
 * mutating request, its signature (key `replay:<signature>`, kept 60 h). These must survive an eviction,
 * so they are in storage; the alarm prunes them and deletes everything once nothing is left.
 *
 * Cost and concurrency (src/ratelimit/cost.ts): admission takes the route's declared weight from the
 * bucket and a lease on one of the object's in-flight slots (src/ratelimit/inflight.ts, memory only); the
 * worker calls `release` when the request ends, which frees the slot and charges what the request's
 * measured time cost beyond its weight. A user's own object (`user:<id>`) admits that user's weighted
 * requests (`admit`) across all their tokens and sessions the same way.
 */
export const FLUSH_MS = 30 * 1000
/**
 * How long a cached subject is believed without reading D1 again. `invalidate()` remains the way a
 * change takes effect at once; this bounds the damage when a change reaches D1 without it (a session
 * created between a change's listing and its write, a row ended by hand or by a future code path): such a
 * change is seen within this age. One D1 read per active token or session every 5 s costs little.
 */
export const SUBJECT_MAX_AGE_MS = 5 * 1000

interface PendingAccess {
  tokenId: string
  atMs: number
}

export interface LimitParams {
  rate: number
  burst: number
  nowMs: number
  /** tokens this request takes (its declared weight); default 1 */
  cost?: number
  /** in-flight slots of this object, and how long a lease lives without a release; none when absent */
  inFlight?: { cap: number; ttlMs: number }
}

export interface ReleaseParams {
  lease: string
  rate: number
  burst: number
  nowMs: number
  /** tokens to charge beyond the admission's weight (the measured rest; may run into debt) */
  extra: number
}

export interface LimitResult {
  allowed: boolean
  remaining: number
  resetSeconds: number
  retryAfterSeconds: number
  /** refused because every in-flight slot is taken (the bucket was not charged) */
  busy?: boolean
  /** the in-flight slot held by an admitted request, for `release` */
  lease?: string
}

export interface PrincipalSnapshot {
  userId: string
  principalName: string
  roles: Role[]
  environmentAccess: EnvironmentAccess
}

/** What a token's object needs to check a signed request against replays (see auth/request-date.ts). */
export interface SignedRequestFacts {
  /** the RequestDate offset, minutes east of UTC (already checked to be a real time zone) */
  offsetMinutes: number
  /** the instant RequestDate claims, ms */
  claimedMs: number
  /** base64 of the signature, for a mutating request only */
  replayKey?: string
}

export type AuthorizeResult =
  | { ok: false; reason: string }
  | {
      ok: true
      principal: PrincipalSnapshot
      limit: LimitResult
      /** with `leaseWant`: extra tokens pre-paid for the isolate, and the token's offsets (see `lease`) */
      granted?: number
      offsets?: OffsetMemory
    }

/** A lease (ratelimit/lease.ts): `granted` requests pre-paid from the bucket, for an isolate to admit. */
export type LeaseResult =
  | { ok: false; reason: string }
  | {
      ok: true
      principal: PrincipalSnapshot
      granted: number
      limit: LimitResult
      /** a token's remembered offsets, so the isolate can admit a signed read that changes nothing here */
      offsets?: OffsetMemory
    }

/** Why a subject may not be admitted (null: it may). */
function subjectRefusal(s: Subject | null, kind: 'token' | 'session', nowMs: number): string | null {
  if (!s) return kind === 'token' ? 'unknown or revoked token' : 'session not found'
  if (s.user.is_disabled) return 'user disabled'
  if (kind === 'session') {
    if (s.ended) return 'session has ended (logged out)'
    if (s.expiresAt && Date.parse(s.expiresAt) <= nowMs) return 'session expired'
  }
  return null
}

function snapshot(s: Subject): PrincipalSnapshot {
  return {
    userId: s.user.id,
    principalName: s.user.principal_name,
    roles: s.user.roles,
    environmentAccess: s.user.environment_access,
  }
}

export class RateLimiter extends DurableObject<Env> {
  /** In memory only (see above). Null: full (never used, or forgotten). */
  private bucket: BucketState | null = null
  private subject: Subject | null | undefined
  /** The request time (nowMs) at which the cached subject's read started; past SUBJECT_MAX_AGE_MS it is read again. */
  private subjectAtMs = 0
  /** The D1 read in flight for a cold subject, shared by every request that arrives meanwhile. */
  private subjectLoad: Promise<Subject | null> | undefined
  /** Bumped by `invalidate()`: a read started under an older generation is never cached. */
  private generation = 0
  private tokenId: string | undefined
  private lastAccessMs = 0
  private flushedAccessMs = 0
  /** Time of the alarm this instance has set (0: none pending). */
  private alarmAtMs = 0
  /** A token access is stored and waits for the alarm to flush it. */
  private accessPending = false
  /** The token's remembered offsets (loaded from storage on first use). */
  private offsets: OffsetMemory | undefined

  private readonly leases = new Leases()

  /**
   * Admission: a free in-flight slot first (a busy refusal charges nothing), then the weight from the
   * bucket, then the slot is taken. Both happen in one synchronous step, so concurrent requests to the
   * object cannot overshoot either cap.
   */
  private spend(p: LimitParams): LimitResult {
    if (p.inFlight && this.leases.count(p.nowMs) >= p.inFlight.cap) {
      const full = take(this.bucket, p.nowMs, p.rate, p.burst, 0)
      return { allowed: false, busy: true, remaining: full.remaining, resetSeconds: full.resetSeconds, retryAfterSeconds: 1 }
    }
    const d = take(this.bucket, p.nowMs, p.rate, p.burst, p.cost ?? 1)
    this.bucket = d.state
    const r: LimitResult = { allowed: d.allowed, remaining: d.remaining, resetSeconds: d.resetSeconds, retryAfterSeconds: d.retryAfterSeconds }
    if (d.allowed && p.inFlight) r.lease = this.leases.acquire(p.nowMs, p.inFlight.cap, p.inFlight.ttlMs) ?? undefined
    return r
  }

  /** Weighted admission on a user's own object (`user:<id>`): bucket and in-flight slots, nothing else. */
  async admit(p: LimitParams): Promise<LimitResult> {
    return this.spend(p)
  }

  /** The end of an admitted request: frees its slot and charges the measured rest of its cost. */
  async release(p: ReleaseParams): Promise<void> {
    this.leases.release(p.lease)
    if (p.extra > 0) this.bucket = charge(this.bucket, p.nowMs, p.rate, p.burst, p.extra)
  }

  /** Plain bucket for per-IP and login limits. No storage, no alarm. */
  async consume(p: LimitParams): Promise<LimitResult> {
    return this.spend(p)
  }

  private subjectOf(kind: 'token' | 'session', id: string, nowMs: number): Subject | null | Promise<Subject | null> {
    // A clock that went backwards (nowMs < subjectAtMs) also counts as aged.
    if (this.subject !== undefined && nowMs >= this.subjectAtMs && nowMs - this.subjectAtMs < SUBJECT_MAX_AGE_MS) return this.subject
    this.subject = undefined
    if (this.subjectLoad) return this.subjectLoad
    const gen = this.generation
    // Promise callbacks never run synchronously, so `load` is assigned before the identity checks run.
    const load: Promise<Subject | null> = (kind === 'token' ? loadTokenSubject(this.env.DB, id) : loadSessionSubject(this.env.DB, id))
      .then((s) => {
        // Cache only if no invalidate() arrived while the read was in flight (it may predate the write).
        if (this.generation === gen) {
          this.subject = s
          this.subjectAtMs = nowMs
        }
        return s
      })
      .finally(() => {
        // Success or failure, the next cold request starts a new read: a failure is never cached.
        if (this.subjectLoad === load) this.subjectLoad = undefined
      })
    this.subjectLoad = load
    return load
  }

  /** Subject check plus one token from the bucket, for a request whose credential already verified. */
  async authorize(req: LimitParams & { kind: 'token' | 'session'; id: string; signed?: SignedRequestFacts; leaseWant?: number }): Promise<AuthorizeResult> {
    // A failed D1 read rejects here; the worker turns that into a 503 (fail closed), never an admission.
    const s = await this.subjectOf(req.kind, req.id, req.nowMs)
    const refusal = subjectRefusal(s, req.kind, req.nowMs)
    if (refusal || !s) return { ok: false, reason: refusal ?? 'unknown subject' }
    // Replay checks run after the subject check (a revoked token learns nothing) and before the bucket.
    // Everything from here to the end is synchronous (kv is the synchronous SQLite API), so two copies of
    // one mutating request can never both pass the replay check.
    if (req.kind === 'token' && req.signed) {
      const refused = this.checkReplay(req.signed, req.nowMs)
      if (refused) return { ok: false, reason: refused }
    }
    const limit = this.spend(req)
    if (req.kind === 'token' && limit.allowed) {
      // Recorded only when admitted: a request refused with 429 may be sent again unchanged.
      if (req.signed?.replayKey) this.recordReplay(req.signed.replayKey, req.nowMs)
      this.noteAccess(req.id, req.nowMs)
    }
    if (req.leaseWant === undefined) return { ok: true, principal: snapshot(s), limit }
    // Admission by lease (ratelimit/admission.ts): after this request's own token, up to `leaseWant` more
    // are paid out for the isolate, and it gets the offsets to check the next signed reads against.
    let granted = 0
    if (limit.allowed && req.leaseWant > 0) {
      const d = grant(this.bucket, req.nowMs, req.rate, req.burst, req.leaseWant)
      this.bucket = d.state
      granted = d.granted
      limit.remaining = d.remaining
      limit.resetSeconds = d.resetSeconds
    }
    return {
      ok: true,
      principal: snapshot(s),
      limit,
      granted,
      ...(req.kind === 'token' ? { offsets: { ...this.offsetMemory() } } : {}),
    }
  }

  /**
   * A lease: the same subject check as `authorize` (this is where a lease holder learns of a revocation),
   * then up to `want` tokens paid from the bucket at once. Granting 0 is an answer too (bucket empty: the
   * isolate answers 429 with these figures).
   */
  async lease(req: LimitParams & { kind: 'token' | 'session'; id: string; want: number }): Promise<LeaseResult> {
    const s = await this.subjectOf(req.kind, req.id, req.nowMs)
    const refusal = subjectRefusal(s, req.kind, req.nowMs)
    if (refusal || !s) return { ok: false, reason: refusal ?? 'unknown subject' }
    const d = grant(this.bucket, req.nowMs, req.rate, req.burst, req.want)
    this.bucket = d.state
    if (req.kind === 'token' && d.granted > 0) this.noteAccess(req.id, req.nowMs)
    return {
      ok: true,
      principal: snapshot(s),
      granted: d.granted,
      limit: { allowed: d.granted > 0, remaining: d.remaining, resetSeconds: d.resetSeconds, retryAfterSeconds: d.retryAfterSeconds },
      ...(req.kind === 'token' ? { offsets: { ...this.offsetMemory() } } : {}),
    }
  }

  private offsetMemory(): OffsetMemory {
    if (this.offsets === undefined) this.offsets = this.ctx.storage.kv.get<OffsetMemory>('offsets') ?? {}
    return this.offsets
  }

  /**
   * Rule 2 (offsets) and rule 3 (one use of a mutating request) of auth/request-date.ts. Null: admissible.
   * A verified request's offset is remembered even if the bucket then refuses it (remembering more offsets
   * only makes the rule stricter).
   */
  private checkReplay(f: SignedRequestFacts, nowMs: number): string | null {
    const memory = this.offsetMemory()
    const offsetRefusal = offsetError(memory, f.offsetMinutes, f.claimedMs, nowMs)
    if (offsetRefusal) return offsetRefusal
    if (f.replayKey) {
      const until = this.ctx.storage.kv.get<number>(`replay:${f.replayKey}`)
      if (until !== undefined && until > nowMs) {
        return 'this signed request was already accepted: a mutating request (POST, PUT, PATCH, DELETE) is accepted once; to repeat it, sign a request that differs (for example with a nonce=<random> query parameter, which routes ignore)'
      }
    }
    const next = rememberOffset(memory, f.offsetMinutes, nowMs)
    if (next) {
      this.offsets = next
      this.ctx.storage.kv.put('offsets', next)
      this.ensureAlarm(nowMs + FLUSH_MS)
    }
    return null
  }

  private recordReplay(key: string, nowMs: number): void {
    this.ctx.storage.kv.put(`replay:${key}`, nowMs + REPLAY_MEMORY_MS)
    this.ensureAlarm(nowMs + FLUSH_MS)
  }

  /** Set the alarm to `atMs` unless one is already due earlier. */
  private ensureAlarm(atMs: number): void {
    if (this.alarmAtMs && this.alarmAtMs <= atMs) return
    this.alarmAtMs = atMs
    void this.ctx.storage.setAlarm(atMs)
  }

  /**
   * Remember a token's access for the alarm. Storage is touched once per flush window (when no flush is
   * pending): the pending access and the alarm; later accesses in the window only move the memory copy.
   */
  private noteAccess(tokenId: string, nowMs: number): void {
    this.tokenId = tokenId
    if (nowMs > this.lastAccessMs) this.lastAccessMs = nowMs
    if (this.accessPending) return
    this.accessPending = true
    this.ctx.storage.kv.put<PendingAccess>('access', { tokenId, atMs: nowMs })
    this.ensureAlarm(nowMs + FLUSH_MS)
  }

  /** Forget the cached subject: the next request re-reads D1 (called after revocation or user changes). */
  async invalidate(): Promise<void> {
    this.generation++
    this.subject = undefined
    this.subjectLoad = undefined
  }

  /**
   * Flush a token's last_access to D1 and prune aged replay memory; leave no storage behind once nothing
   * is pending or remembered.
   */
  async alarm(): Promise<void> {
    const kv = this.ctx.storage.kv
    // After an eviction or restart memory is empty; the stored pending access stands in for it.
    const stored = kv.get<PendingAccess>('access')
    const tokenId = this.tokenId ?? stored?.tokenId
    const at = Math.max(this.lastAccessMs, stored?.atMs ?? 0)
    this.alarmAtMs = 0
    this.accessPending = false
    if (tokenId && at > this.flushedAccessMs) {
      await touchLastAccess(this.env.DB, tokenId, new Date(at).toISOString())
      this.flushedAccessMs = at
    }
    // A request during the flush (input gates stay open across D1 I/O) has stored a new access and set a
    // new alarm: keep everything, that alarm prunes. Otherwise the access is flushed.
    if (this.accessPending) return
    const nowMs = Date.now()
    const pruned = pruneOffsets(this.offsetMemory(), nowMs)
    this.offsets = pruned.memory
    let nextMs = pruned.nextExpiryMs
    for (const [key, until] of kv.list<number>({ prefix: 'replay:' })) {
      if (until <= nowMs) kv.delete(key)
      else if (nextMs === null || until < nextMs) nextMs = until
    }
    if (nextMs === null) {
      // Nothing pending or remembered: delete everything (anything an older version stored too); the
      // alarm that is running is consumed by returning.
      this.offsets = {}
      await this.ctx.storage.deleteAll()
      return
    }
    kv.delete('access')
    kv.delete('bucket')
    if (Object.keys(pruned.memory).length) kv.put('offsets', pruned.memory)
    else kv.delete('offsets')
    this.ensureAlarm(nextMs)
  }
}
