/**
 * How long a signed request stays valid, and why a replayer cannot stretch it by rewriting the UTC offset
 * of `RequestDate` (issue 18 item 3). Pure functions; the token's limiter object (ratelimit/limiter.do.ts)
 * holds the state and calls them.
 *
 * The problem. The signature covers only the first 13 characters of `RequestDate` ("YYYY-MM-DDTHH", the
 * hour in the client's own offset). Minutes, seconds and the offset are not signed, so whoever holds a
 * signed request may rewrite them. Take a request signed at true time T by a client at offset O: its signed
 * local hour L satisfies L − O ≤ T < L − O + 1 h. Replayed with offset O' and any minutes, it claims the
 * instant c = L + m − O' (0 ≤ m < 1 h), so c < T + 1 h + (O − O'). The clock check admits it while
 * now ≤ c + 1 h, so the replay works until T + 2 h + (O − O'): every hour by which the replayer LOWERS the
 * offset buys one more hour (raising it buys nothing). No check on the date alone can tell a client's real
 * offset from a rewritten one.
 *
 * The rules, all enforced only after the signature verified:
 *  1. The offset must be one of a real time zone: whole quarter hours from −12:00 to +14:00 (checked in
 *     the worker, stateless).
 *  2. The token's object remembers the offsets the token used in the last OFFSET_MEMORY_MS (48 h), and
 *     M, the highest of them. An offset O' < M − 1 h is refused. An offset O' with M − 1 h ≤ O' < M (a
 *     daylight-saving fall-back, D = M − O') is admitted only if the claimed instant is at most
 *     max(5 min, 60 min − D) behind server time. M itself is admitted under the normal ±1 h check.
 *     Every verified request's offset is then remembered (so M only rises while the token is in use).
 * 2b. An offset above M (a spring-forward, a move east) is admitted only if the claimed instant is at most
 *     5 minutes behind server time. Without this, whoever holds a request signed at the start of an hour
 *     could replay it at once with an offset almost two hours higher and so raise M past the one-hour
 *     step, locking the real client out. A copy raised by Δ claims at most (signed hour) + 1 h − Δ, at
 *     least Δ − 1 h behind server time, so Δ ≤ 1 h 5 min, i.e. 1 h in whole quarter hours (rule 1): the
 *     real client stays within the one-hour step (with a clock within 5 minutes, which NTP gives).
 *  3. A mutating request (POST, PUT, PATCH, DELETE) is admitted at most once: its signature is recorded in
 *     the object for REPLAY_MEMORY_MS and the same signature is refused after that (see below).
 *     Except on a route declared read-only (src/http/route.ts `readOnly`, which only a route whose audit
 *     declaration says it changes nothing may carry; today POST /api/v2/graphs/cypher, which refuses updating
 *     clauses): it is checked like a GET. Rule 3 exists so that a captured request cannot repeat a change; a
 *     repeat of a read changes nothing, and its answer goes to whoever sent it, who could already read the
 *     original answer if it could capture the request. So a read-only POST gains a replayer exactly what a
 *     GET does — nothing beyond the validity window of rules 1–2, which still apply, as do rate limits and
 *     costs — while real clients that repeat a read query within one signed hour keep working.
 *
 * Why rule 2 bounds every replay of a request the service has received to VALIDITY_WINDOW_MS (2 h 5 min).
 * Say the captured request R (true offset O) reached the token's object at some time a ≥ T. Then O was
 * remembered at a, so until a + 48 h the remembered maximum M is ≥ O (the maximum can only fall when
 * entries age out, never through a replay: adding offsets only raises it). A replay with O' therefore has
 * D = M − O' ≥ O − O', and it is admitted only if now − c ≤ B(D), where B(D) = 60 min for D ≤ 0 and
 * max(5 min, 60 min − D) for 0 < D ≤ 60 min. The lag now − T < 1 h + (O − O') + B(D) ≤ 1 h + D⁺ + B(D)
 * ≤ 2 h 5 min. After a + 48 h no replay is possible with any offset: rule 1 caps O − O' at 26 h, so the
 * lag is below 2 h + 26 h = 28 h whatever is remembered. The bound does not depend on which request came
 * first: the very first request of a token is remembered the moment it is admitted, exactly like the later
 * ones, and the object keeps what it remembers in Durable Object storage (written before the response is
 * released, by the output gate), so neither an eviction nor a restart forgets it; concurrent first requests
 * are serialised by the object, whichever is admitted first sets M and the others are checked against it.
 * A replay cannot walk the offset down an hour at a time either (O − 1 h, then O − 2 h, …), because only
 * the maximum matters and a lower offset never lowers it.
 *
 * What no server can do: a request that never reached the service (captured and withheld in transit) of a
 * token that has not been used for 48 hours carries no remembered offset. The bytes of such a request are
 * exactly those an honest client at any other offset O' would send at time T + (O − O'), so whichever of
 * them arrives first is admitted and its offset remembered; the withheld request can then be presented up
 * to 28 h after it was signed. SECURITY.md states this limit.
 *
 * Why rule 3 makes "at most once" unconditional. Any admission of a request signed at T happens between
 * T − 28 h and T + 28 h (rule 1 and the ±1 h clock check bound the claimed instant to T ± 27 h), so two
 * admissions of the same signature are less than 56 h apart, and REPLAY_MEMORY_MS (60 h) outlives that.
 * The replay key is the signature itself: it binds the method, target, signed hour and body, and it is
 * the one part of the request a replayer cannot change (the date's minutes, seconds and offset are not in it).
 */
import { MAX_CLOCK_SKEW_MS } from './signature'

export const MIN_OFFSET_MINUTES = -12 * 60
export const MAX_OFFSET_MINUTES = 14 * 60
/** How far below the remembered maximum a new offset may be (one daylight-saving step). */
export const OFFSET_STEP_MS = 60 * 60 * 1000
/** The least "behind" allowance for a request below the remembered maximum offset. */
export const LOWERED_OFFSET_MIN_SKEW_MS = 5 * 60 * 1000
export const OFFSET_MEMORY_MS = 48 * 3600 * 1000
/** An offset seen again is re-written to storage only when its stored time is older than this. */
export const OFFSET_REFRESH_MS = 3600 * 1000
export const REPLAY_MEMORY_MS = 60 * 3600 * 1000
/** The longest a request that reached the service can be replayed after it was signed. */
export const VALIDITY_WINDOW_MS = 2 * 3600 * 1000 + LOWERED_OFFSET_MIN_SKEW_MS

/** Offsets (minutes east of UTC, as text keys) → last time (ms) a verified request used them. */
export type OffsetMemory = Record<string, number>

export function offsetText(minutes: number): string {
  const sign = minutes < 0 ? '-' : '+'
  const a = Math.abs(minutes)
  return `${sign}${String(Math.floor(a / 60)).padStart(2, '0')}:${String(a % 60).padStart(2, '0')}`
}

/** Rule 1: null when the offset is one of a real time zone (whole quarter hours, -12:00 … +14:00). */
export function offsetRangeError(offsetMinutes: number): string | null {
  if (offsetMinutes >= MIN_OFFSET_MINUTES && offsetMinutes <= MAX_OFFSET_MINUTES && offsetMinutes % 15 === 0) return null
  return `RequestDate offset ${offsetText(offsetMinutes)} is not a real time zone: it must be a whole quarter hour between -12:00 and +14:00`
}

/** The highest offset used within OFFSET_MEMORY_MS of nowMs; null when none is remembered. */
export function rememberedMax(memory: OffsetMemory, nowMs: number): number | null {
  let max: number | null = null
  for (const [k, at] of Object.entries(memory)) {
    if (nowMs - at > OFFSET_MEMORY_MS) continue
    const o = Number(k)
    if (max === null || o > max) max = o
  }
  return max
}

/** Rule 2: null when a verified request with this offset and claimed instant may be admitted. */
export function offsetError(memory: OffsetMemory, offsetMinutes: number, claimedMs: number, nowMs: number): string | null {
  const max = rememberedMax(memory, nowMs)
  if (max === null || offsetMinutes === max) return null
  if (offsetMinutes > max) {
    // A new, higher offset (spring forward, a move east) comes with the current time. This stops a holder
    // of a fresh request from raising the remembered maximum by more than an hour (see rule 2b above).
    const behind = nowMs - claimedMs
    if (behind <= LOWERED_OFFSET_MIN_SKEW_MS) return null
    return `RequestDate is ${(behind / 60_000).toFixed(2)} minutes behind server time with offset ${offsetText(offsetMinutes)}, above the offset this token used recently (${offsetText(max)}); with a new offset at most ${LOWERED_OFFSET_MIN_SKEW_MS / 60_000} minutes are allowed`
  }
  const dMs = (max - offsetMinutes) * 60_000
  if (dMs > OFFSET_STEP_MS) {
    return `RequestDate offset ${offsetText(offsetMinutes)} is more than one hour below the offset this token used recently (${offsetText(max)}); send the date in the client's usual offset or in UTC as that client did`
  }
  const allowedBehind = Math.max(LOWERED_OFFSET_MIN_SKEW_MS, MAX_CLOCK_SKEW_MS - dMs)
  const behind = nowMs - claimedMs
  if (behind <= allowedBehind) return null
  return `RequestDate is ${(behind / 60_000).toFixed(2)} minutes behind server time with offset ${offsetText(offsetMinutes)}, below the offset this token used recently (${offsetText(max)}); with that offset at most ${allowedBehind / 60_000} minutes are allowed`
}

/**
 * Remember that a verified request used this offset. Returns the memory to store, or null when storage
 * need not be written (the offset is known and its stored time is recent enough). Entries past
 * OFFSET_MEMORY_MS are dropped at the same time.
 */
export function rememberOffset(memory: OffsetMemory, offsetMinutes: number, nowMs: number): OffsetMemory | null {
  const key = String(offsetMinutes)
  const prev = memory[key]
  if (prev !== undefined && nowMs - prev < OFFSET_REFRESH_MS) return null
  const next: OffsetMemory = {}
  for (const [k, at] of Object.entries(memory)) if (nowMs - at <= OFFSET_MEMORY_MS) next[k] = at
  next[key] = nowMs
  return next
}

/** Entries still remembered at nowMs, and when the next one ages out (null: none left). */
export function pruneOffsets(memory: OffsetMemory, nowMs: number): { memory: OffsetMemory; nextExpiryMs: number | null } {
  const out: OffsetMemory = {}
  let next: number | null = null
  for (const [k, at] of Object.entries(memory)) {
    if (nowMs - at > OFFSET_MEMORY_MS) continue
    out[k] = at
    const exp = at + OFFSET_MEMORY_MS
    if (next === null || exp < next) next = exp
  }
  return { memory: out, nextExpiryMs: next }
}

export function isMutating(method: string): boolean {
  return method === 'POST' || method === 'PUT' || method === 'PATCH' || method === 'DELETE'
}
