/**
 * Requests in flight for one limiter object (pure; the object holds one instance in memory).
 *
 * Each admitted request holds a lease until the worker releases it when the request ends. A release can
 * be lost (the isolate dies mid-request, the release call fails), so a lease also expires after `ttlMs`;
 * expired leases are dropped whenever the set is read. The cap is therefore exact while releases arrive
 * and self-healing when they do not: a lost release costs its caller one slot for at most `ttlMs`.
 */
export class Leases {
  private readonly leases = new Map<string, number>()
  private seq = 0

  /** Live leases at `nowMs`. */
  count(nowMs: number): number {
    for (const [id, expires] of this.leases) if (expires <= nowMs) this.leases.delete(id)
    return this.leases.size
  }

  /** A new lease, or null when `cap` are already live. */
  acquire(nowMs: number, cap: number, ttlMs: number): string | null {
    if (this.count(nowMs) >= cap) return null
    const id = `${nowMs.toString(36)}.${(this.seq++).toString(36)}`
    this.leases.set(id, nowMs + ttlMs)
    return id
  }

  /** Ends a lease; false when it was unknown (already released or expired). */
  release(id: string): boolean {
    return this.leases.delete(id)
  }
}
