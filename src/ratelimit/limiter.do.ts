import { DurableObject } from 'cloudflare:workers'
import { take, type BucketState } from './bucket'
import { loadSessionSubject, loadTokenSubject, type Subject } from '../auth/subjects.store'
import { touchLastAccess } from '../auth/tokens.store'
import type { EnvironmentAccess, Role } from '../auth/permissions'

/**
 * One object per API token (`token:<id>`), per JWT session (`session:<jti>`), per client IP (`ip:<addr>`)
 * and per login IP (`login:<addr>`).
 *
 * For tokens and sessions the object is both the rate limiter and the revocation authority, so an
 * authenticated request costs exactly one Durable Object round-trip (`authorize`):
 *  - it caches its subject (the user's roles, environment access, disabled flag; for a session its expiry)
 *    after one D1 read, and answers from memory afterwards. Concurrent requests on a cold object share that
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
 */
export const FLUSH_MS = 30 * 1000

interface PendingAccess {
  tokenId: string
  atMs: number
}

export interface LimitParams {
  rate: number
  burst: number
  nowMs: number
}

export interface LimitResult {
  allowed: boolean
  remaining: number
  resetSeconds: number
  retryAfterSeconds: number
}

export interface PrincipalSnapshot {
  userId: string
  principalName: string
  roles: Role[]
  environmentAccess: EnvironmentAccess
}

export type AuthorizeResult = { ok: false; reason: string } | { ok: true; principal: PrincipalSnapshot; limit: LimitResult }

export class RateLimiter extends DurableObject<Env> {
  /** In memory only (see above). Null: full (never used, or forgotten). */
  private bucket: BucketState | null = null
  private subject: Subject | null | undefined
  /** The D1 read in flight for a cold subject, shared by every request that arrives meanwhile. */
  private subjectLoad: Promise<Subject | null> | undefined
  /** Bumped by `invalidate()`: a read started under an older generation is never cached. */
  private generation = 0
  private tokenId: string | undefined
  private lastAccessMs = 0
  private flushedAccessMs = 0
  /** Time of the alarm this instance has set (0: none pending). */
  private alarmAtMs = 0

  private spend(p: LimitParams): LimitResult {
    const d = take(this.bucket, p.nowMs, p.rate, p.burst)
    this.bucket = d.state
    return { allowed: d.allowed, remaining: d.remaining, resetSeconds: d.resetSeconds, retryAfterSeconds: d.retryAfterSeconds }
  }

  /** Plain bucket for per-IP and login limits. No storage, no alarm. */
  async consume(p: LimitParams): Promise<LimitResult> {
    return this.spend(p)
  }

  private subjectOf(kind: 'token' | 'session', id: string): Subject | null | Promise<Subject | null> {
    if (this.subject !== undefined) return this.subject
    if (this.subjectLoad) return this.subjectLoad
    const gen = this.generation
    // Promise callbacks never run synchronously, so `load` is assigned before the identity checks run.
    const load: Promise<Subject | null> = (kind === 'token' ? loadTokenSubject(this.env.DB, id) : loadSessionSubject(this.env.DB, id))
      .then((s) => {
        // Cache only if no invalidate() arrived while the read was in flight (it may predate the write).
        if (this.generation === gen) this.subject = s
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
  async authorize(req: LimitParams & { kind: 'token' | 'session'; id: string }): Promise<AuthorizeResult> {
    // A failed D1 read rejects here; the worker turns that into a 503 (fail closed), never an admission.
    const s = await this.subjectOf(req.kind, req.id)
    if (!s) return { ok: false, reason: req.kind === 'token' ? 'unknown or revoked token' : 'session not found' }
    if (s.user.is_disabled) return { ok: false, reason: 'user disabled' }
    if (req.kind === 'session') {
      if (s.ended) return { ok: false, reason: 'session has ended (logged out)' }
      if (s.expiresAt && Date.parse(s.expiresAt) <= req.nowMs) return { ok: false, reason: 'session expired' }
    }
    const limit = this.spend(req)
    if (req.kind === 'token' && limit.allowed) this.noteAccess(req.id, req.nowMs)
    return {
      ok: true,
      principal: {
        userId: s.user.id,
        principalName: s.user.principal_name,
        roles: s.user.roles,
        environmentAccess: s.user.environment_access,
      },
      limit,
    }
  }

  /**
   * Remember a token's access for the alarm. Storage is touched once per flush window (when no flush is
   * pending): the pending access and the alarm; later accesses in the window only move the memory copy.
   */
  private noteAccess(tokenId: string, nowMs: number): void {
    this.tokenId = tokenId
    if (nowMs > this.lastAccessMs) this.lastAccessMs = nowMs
    if (this.alarmAtMs) return
    this.alarmAtMs = nowMs + FLUSH_MS
    this.ctx.storage.kv.put<PendingAccess>('access', { tokenId, atMs: nowMs })
    void this.ctx.storage.setAlarm(this.alarmAtMs)
  }

  /** Forget the cached subject: the next request re-reads D1 (called after revocation or user changes). */
  async invalidate(): Promise<void> {
    this.generation++
    this.subject = undefined
    this.subjectLoad = undefined
  }

  /** Flush a token's last_access to D1, then leave no storage behind unless a new access arrived meanwhile. */
  async alarm(): Promise<void> {
    // After an eviction or restart memory is empty; the stored pending access stands in for it.
    const stored = this.ctx.storage.kv.get<PendingAccess>('access')
    const tokenId = this.tokenId ?? stored?.tokenId
    const at = Math.max(this.lastAccessMs, stored?.atMs ?? 0)
    this.alarmAtMs = 0
    if (tokenId && at > this.flushedAccessMs) {
      await touchLastAccess(this.env.DB, tokenId, new Date(at).toISOString())
      this.flushedAccessMs = at
    }
    // A request during the flush (input gates stay open across D1 I/O) has set a new alarm and stored its
    // access: keep those. Otherwise nothing is pending: delete everything (the pending access, anything an
    // older version stored); the alarm that is running is consumed by returning.
    if (this.alarmAtMs) return
    await this.ctx.storage.deleteAll()
  }
}
