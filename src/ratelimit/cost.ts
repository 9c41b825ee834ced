/**
 * What a request costs the caller's budget (pure). Security-relevant: these rules decide how much of the
 * service one caller may take from the others; each is small and tested in test/unit/ratelimit-cost.test.ts.
 *
 * Two parts:
 *  1. The declared weight, charged on admission (`take(cost)`): each route declares it next to its
 *     definition (`cost` in src/http/route.ts; table in README "Rate limits and cost"), scaled where the
 *     cost is known in advance (an upload by its Content-Length). A request whose weight exceeds what the
 *     bucket holds is refused before any work.
 *  2. For weighted reads (GET, or a route declared `readOnly`: POST /api/v2/graphs/cypher; weight > 1), the
 *     measured rest, charged when the request ends (`charge`, possibly into debt): one token per
 *     MS_PER_TOKEN milliseconds past the first FREE_MS. D1 runs one query at a time per database, so wall
 *     time inside a request is mostly time other callers could not use. A caller running long reads back
 *     to back therefore sustains at most about rate × MS_PER_TOKEN milliseconds of read time per second
 *     (275 ms/s at the shipped 55 tokens/s and 5 ms), while reads under FREE_MS (almost all of them) cost
 *     their weight only. A Worker's clock stands still while it computes, so the time of pure computation
 *     (a Cypher query building lists and strings, serialising its answer) is added as the route estimates
 *     it from its work counts (`unclockedMs`, cypherComputeMs below). Writes (uploads) pay their declared,
 *     size-scaled weight only.
 *
 * In-flight caps (src/ratelimit/inflight.ts) bound the concurrency of weighted requests on top: a token or
 * session may have RATE_LIMIT_IN_FLIGHT_PER_TOKEN of them running; a user, across all their tokens and
 * sessions, RATE_LIMIT_IN_FLIGHT_PER_USER, and the user's weighted requests also share one more bucket in
 * the user's own limiter object. Requests of weight 1 (cheap reads, bounded by their budgets) take no slot
 * and cost one Durable Object round trip, as before.
 */

/**
 * Declared weights, used by the route declarations (`cost`) and listed in README's "Rate limits and cost".
 * Everything else weighs 1. Chosen from the work each does before the measured part corrects it:
 */
export const WEIGHT = {
  /** search: one FTS statement, up to 1,000 rows */
  search: 2,
  /** findings details / sparkline pages: up to 10,000 rows */
  findings: 2,
  /** a related-entity list page: a count and a page over a recursive walk */
  list: 5,
  /** an entity's details with its related counts: one walk per count */
  counts: 5,
  /** a related-entity graph: the walk plus its relationships (budgeted, docs/budgets.md) */
  graph: 10,
  /** shortest path: a search of up to 200,000 relationships */
  path: 10,
  /** a Cypher query: up to 500,000 nodes and relationships read, 5 s (src/cypher/budget.ts), then measured */
  cypher: 10,
  /** an upload: 2 plus 1 per MiB (weightBySize) */
  upload: 2,
  /** ending an upload job or requesting an analysis run (an analysis run follows) */
  analysis: 5,
} as const

/** Milliseconds of request time one token pays for (RATE_LIMIT_MS_PER_TOKEN; 0 turns the measured part off). */
export const MS_PER_TOKEN = 5
/** The first milliseconds of a weighted read are paid for by its weight (RATE_LIMIT_FREE_MS). */
export const FREE_MS = 50

/** Tokens to charge when a request ends: every `msPerToken` of its time past the first `freeMs`. */
export function measuredExtra(elapsedMs: number, msPerToken = MS_PER_TOKEN, freeMs = FREE_MS): number {
  if (!Number.isFinite(elapsedMs) || elapsedMs <= freeMs || msPerToken <= 0) return 0
  return Math.floor((elapsedMs - freeMs) / msPerToken)
}

/**
 * Milliseconds of computation a Cypher query did that the clock did not see, estimated from what it
 * counted: the list elements and string pieces its expressions built (src/cypher/budget.ts: its 2,000,000
 * limit is "about a second of evaluation", so 0.5 µs each) and the bytes of its answer (counted, presented,
 * serialised and encoded: 15–100 ms per MiB measured in node on this 2-core machine under load, so the low
 * end, 20 ms per MiB). Store round trips are not counted here: the clock sees them.
 */
export function cypherComputeMs(used: { values: number; answerBytes: number }): number {
  return used.values / VALUES_PER_MS + (used.answerBytes / (1024 * 1024)) * MS_PER_ANSWER_MIB
}
export const VALUES_PER_MS = 2000
export const MS_PER_ANSWER_MIB = 20

/**
 * Weight of an upload: `base` plus one per started MiB of the body, known before the body is read from
 * Content-Length; without one (a streamed body) the most a body may hold (`maxBytes`).
 */
export function weightBySize(base: number, contentLength: string | undefined, maxBytes: number): number {
  const n = contentLength !== undefined && /^\d{1,15}$/.test(contentLength.trim()) ? Number(contentLength) : maxBytes
  return base + Math.ceil(Math.min(n, maxBytes) / (1024 * 1024))
}
