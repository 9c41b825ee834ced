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
 *    after one D1 read, and answers from memory afterwards;
 *  - whoever revokes a token, disables or changes a user, or ends a session writes D1 first and then
 *    calls `invalidate()`, so the very next request, whichever isolate serves it, sees the change (the
 *    object is unique world-wide; the cache that could be stale lives here and nowhere else);
 *  - only requests whose signature or JWT already verified reach `authorize`, so forged requests naming a
 *    token id never spend its budget;
 *  - `last_access` is kept in memory and written to D1 by the alarm (at most every 30 s), never on the
 *    request's critical path.
 * Idle objects delete their storage (and with it their alarm) after IDLE_MS.
 */
export const IDLE_MS = 10 * 60 * 1000
const FLUSH_MS = 30 * 1000

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
  private bucket: BucketState | null | undefined
  private subject: Subject | null | undefined
  private lastAccessMs = 0
  private flushedAccessMs = 0
  private lastSeenMs = 0
  private alarmAtMs = 0

  private spend(p: LimitParams): LimitResult {
    if (this.bucket === undefined) this.bucket = this.ctx.storage.kv.get<BucketState>('bucket') ?? null
    const d = take(this.bucket, p.nowMs, p.rate, p.burst)
    this.bucket = d.state
    this.ctx.storage.kv.put('bucket', d.state)
    this.lastSeenMs = p.nowMs
    this.ensureAlarm(p.nowMs + IDLE_MS)
    return { allowed: d.allowed, remaining: d.remaining, resetSeconds: d.resetSeconds, retryAfterSeconds: d.retryAfterSeconds }
  }

  private ensureAlarm(atMs: number): void {
    if (this.alarmAtMs && this.alarmAtMs <= atMs) return
    this.alarmAtMs = atMs
    void this.ctx.storage.setAlarm(atMs)
  }

  /** Plain bucket for per-IP and login limits. */
  async consume(p: LimitParams): Promise<LimitResult> {
    return this.spend(p)
  }

  /** Subject check plus one token from the bucket, for a request whose credential already verified. */
  async authorize(req: LimitParams & { kind: 'token' | 'session'; id: string }): Promise<AuthorizeResult> {
    if (this.subject === undefined) {
      this.subject = req.kind === 'token' ? await loadTokenSubject(this.env.DB, req.id) : await loadSessionSubject(this.env.DB, req.id)
    }
    const s = this.subject
    if (!s) return { ok: false, reason: req.kind === 'token' ? 'unknown or revoked token' : 'session not found' }
    if (s.user.is_disabled) return { ok: false, reason: 'user disabled' }
    if (req.kind === 'session') {
      if (s.ended) return { ok: false, reason: 'session has ended (logged out)' }
      if (s.expiresAt && Date.parse(s.expiresAt) <= req.nowMs) return { ok: false, reason: 'session expired' }
    }
    const limit = this.spend(req)
    if (req.kind === 'token' && limit.allowed) {
      this.lastAccessMs = req.nowMs
      this.tokenId = req.id
      this.ensureAlarm(req.nowMs + FLUSH_MS)
    }
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

  private tokenId: string | undefined

  /** Forget the cached subject: the next request re-reads D1 (called after revocation or user changes). */
  async invalidate(): Promise<void> {
    this.subject = undefined
  }

  async alarm(): Promise<void> {
    this.alarmAtMs = 0
    const now = Date.now()
    if (this.tokenId && this.lastAccessMs > this.flushedAccessMs) {
      const at = this.lastAccessMs
      await touchLastAccess(this.env.DB, this.tokenId, new Date(at).toISOString())
      this.flushedAccessMs = at
    }
    if (now - this.lastSeenMs >= IDLE_MS) {
      // Idle: drop bucket state and (compat date ≥ 2026-02-24) the alarm with it.
      await this.ctx.storage.deleteAll()
      this.bucket = undefined
      this.subject = undefined
      return
    }
    this.ensureAlarm(this.lastSeenMs + IDLE_MS)
  }
}
