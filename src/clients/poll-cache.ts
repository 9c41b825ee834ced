/**
 * The isolate's memory of idle polls: for how long a client is known to have no ready job.
 *
 * Every registered client asks `GET /api/v2/jobs/available` every few seconds (AzureHound: 5 s) and is told
 * "nothing" almost every time; 1,000 clients are 200 store reads a second on a database that runs one query
 * at a time. An isolate that has just read "no ready job" for a client remembers it until the sooner of
 *  - `freshMs` later (CLIENT_POLL_FRESH_MS, default 15 s), and
 *  - the execution time of the client's next pending job (read with the answer, so a scheduled job is served
 *    on time: the memory never outlives what the store said would happen),
 * and answers the client's next polls from memory. Only empty answers are remembered: a list of jobs is read
 * afresh every time, so a job canceled meanwhile is never offered from memory.
 *
 * What may be late: a job created after the read by ANOTHER isolate (an administrator's "run now", a Cron
 * Trigger run) reaches the client at most `freshMs` later than it would have; a job created by this isolate
 * forgets the memory at once (`forgetClient`: run now, a schedule's occurrence). Nothing else depends on it: starting, ingesting and
 * ending a job always read the store. docs/collectors.md "Running collectors as services" states the bound.
 */

interface Idle {
  clientId: string
  /** epoch ms until which "no ready job" holds */
  until: number
}

const MAX_ENTRIES = 50_000
const idle = new Map<string, Idle>()

/** The client id of `userId` when it is known to have no ready job at `nowMs`. */
export function knownIdle(userId: string, nowMs: number): string | null {
  const e = idle.get(userId)
  if (!e) return null
  if (nowMs >= e.until) {
    idle.delete(userId)
    return null
  }
  return e.clientId
}

/** Remembers an empty answer read at `nowMs`; `nextExecution`: the client's earliest pending job (ISO), if any. */
export function rememberIdle(userId: string, clientId: string, nowMs: number, freshMs: number, nextExecution: string | null): void {
  if (freshMs <= 0) return
  const next = nextExecution === null ? Infinity : Date.parse(nextExecution)
  const until = Math.min(nowMs + freshMs, Number.isNaN(next) ? nowMs : next)
  if (until <= nowMs) return
  if (idle.size >= MAX_ENTRIES) idle.clear()
  idle.set(userId, { clientId, until })
}

/** A job of this client was created or changed by this isolate. */
export function forgetClient(clientId: string): void {
  for (const [userId, e] of idle) if (e.clientId === clientId) idle.delete(userId)
}
