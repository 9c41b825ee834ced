/**
 * What one query may spend. Every loop of the engine charges its work here; the first limit crossed
 * stops the query with a 400 naming the limit, so a hostile or careless query never costs the service
 * more than these bounds (and never answers 5xx).
 */
import { CypherError } from './parse'

/**
 * A byte limit as a refusal names it: whole MiB as `64 MiB`, other sizes to a tenth of a MiB, below 1 MiB in
 * bytes (a limit rounded to `0 MiB` would not say which limit it was).
 */
export function limitBytes(n: number): string {
  const mib = n / 1024 / 1024
  if (Number.isInteger(mib)) return `${mib} MiB`
  return n >= 1024 * 1024 ? `${mib.toFixed(1)} MiB` : `${n} bytes`
}

export interface CypherLimits {
  /** rows produced by all stages together (pattern walks, UNWIND, rows held for ORDER BY / aggregation) */
  maxRows: number
  /** rows returned */
  maxResultRows: number
  /** nodes read, relationships read and relationships walked (a walk step), over the whole query */
  maxSteps: number
  /** wall-clock milliseconds (checked between store round trips) */
  maxMillis: number
  /** estimated bytes of graph data held for the query (nodes and relationships read, cached expansions) */
  maxBytes: number
  /**
   * list elements and string pieces built by expressions (range(), list comprehensions and quantifiers,
   * list and string `+`, split(), replace()), over the whole query; DEFAULT_MAX_VALUES when absent
   */
  maxValues?: number
}

/**
 * Expressions run without a store round trip, and a Worker's clock does not advance during pure
 * computation, so the time limit cannot stop them: `[x IN range(1, 100000) | range(1, 100000)]` would
 * build 10^10 numbers and kill the isolate. Counting what they build bounds their memory and CPU: 2
 * million is far above what a real query builds (the public Query Library: a few per row), well under
 * the isolate's 128 MB even if all were held at once, and about a second of evaluation.
 */
export const DEFAULT_MAX_VALUES = 2_000_000

/**
 * Sized for the 128 MB isolate: a walk state or held row costs a few hundred bytes (rows bound them);
 * every node and relationship read stays cached for the query, and its estimated size is counted
 * against `maxBytes` (relationship properties only when the query reads them); time bounds the store
 * round trips.
 *
 * `maxBytes` is an estimate of heap, measured under a V8 heap cap on the 1 M-edge benchmark graph
 * (`npm run bench:cypher -- --heap-cap N`, BENCHMARKS.md "Cypher memory under the 128 MiB heap cap"; the
 * worker holds ~16 MiB by itself). Until cb5694f the estimate was about half the real heap (a relationship
 * record carried its own getter closure, 661 B against 200 B charged; walk arrays copied by spread held
 * spare slots), so the budget was cut from 48 to 32 MiB (f2b2372). With the records now as charged
 * (source.ts classes, match.ts WALK_BYTES) it was sized again, 2026-11-26 12:57–13:03 UTC, load average
 * 1.4–3.3 (2 cores): `npm run bench:cypher -- --state DIR --runs 1 --hostile-runs 1 --stress 1
 * --concurrent 3 --heap-cap N --only "domain admins"` (every hostile and near-limit query alone, with and
 * without include_properties, then each near-limit query three at once) for N = 128, 96, 80, 64:
 * - 64 MiB per query, pool 64 MiB: every query alone survives an 80 MiB cap (the walks stopped at the
 *   64 MiB estimate; every user's shortest paths to Tier Zero, stopped by the row limit, dies at 64), and
 *   three at once survive 96 MiB (every user's shortest paths ×3 died at 80). So one query at its budget
 *   needs < 80 MiB and a full pool < 96 MiB: at least 32 MiB under the 128 MB isolate, ~1 byte of heap per
 *   estimated byte above the worker's own.
 * - 48 / 64 MiB: alone < 64 MiB except the row-bound shortest paths (64–80), three at once 80–96 MiB.
 * - The former 32 / 48 MiB: three at once < 80 MiB.
 * What it buys, the public Query Library at 20,000 users (27,239 nodes; `npm run bench:cypher-library --
 * Queries.json --users 20000`, same code and database): 32 MiB refuses 6 queries (all memory), 48 MiB 4,
 * 64 MiB 3 (one memory: ACEs across trusts; two row limit). Measure again before raising it.
 * Queries running at the same time in one isolate also share ISOLATE_MAX_BYTES (BytePool below).
 */
export const DEFAULT_LIMITS: CypherLimits = { maxRows: 100_000, maxResultRows: 20_000, maxSteps: 500_000, maxMillis: 5_000, maxBytes: 64 * 1024 * 1024 }

/**
 * The limits of POST /api/v2/graphs/cypher: DEFAULT_LIMITS without a separate count of returned rows.
 * A returned row was produced by a stage and counted against `maxRows` there; what it costs to send is
 * counted by the answer's own budget (answer.ts: bytes and entries, decided before the first byte), and the
 * answer is streamed (cypher.routes.ts answerStream), so its size in memory is no longer that of the whole
 * answer as objects plus its whole text. Until issue 28 the route refused more than 20,000 returned rows
 * (`maxResultRows`), which refused every kerberoastable user of a large domain although such an answer
 * costs little. The row limit stays the safety net (a result row count equal to it). Tier Zero rules keep
 * DEFAULT_LIMITS (20,000 selected nodes per rule: they write what they select).
 */
export const QUERY_LIMITS: CypherLimits = { ...DEFAULT_LIMITS, maxResultRows: DEFAULT_LIMITS.maxRows }

/**
 * Bytes held by all the Cypher queries running at the same time in this isolate. A Workers isolate serves
 * several requests at once (they interleave at every store round trip), and one isolate's heap is capped at
 * 128 MB: when it passes, the isolate dies with every request it serves (a 5xx for each). `maxBytes` of
 * DEFAULT_LIMITS bounds one query; this pool bounds them together, so two or three queries near their own
 * limit at once are stopped (400, "memory limit, shared …") instead of killing the isolate.
 *
 * A query's bytes count from its first charge until it ends in any way: the route and the Tier Zero rule
 * evaluation run each query inside `withPooledBudget` (try/finally). A request whose client went away may
 * be cancelled by the runtime without its `finally` ever running: a member still in the pool
 * STALE_AFTER_MS after its own deadline is dropped the next time the pool is full (its objects are garbage
 * by then; a live query is stopped by its time limit long before).
 */
export class BytePool {
  private used = 0
  private readonly members = new Set<Budget>()

  constructor(
    readonly maxBytes: number,
    private readonly clock: () => number = Date.now,
  ) {}

  /** bytes held by the queries in the pool now */
  get held(): number {
    return this.used
  }

  /** @internal Budget only: `n` more bytes held by `b` (negative: given back) */
  add(b: Budget, n: number): void {
    if (!this.members.has(b)) {
      if (b.ended) return
      this.members.add(b)
    }
    this.used += n
  }

  /** @internal whether `n` more bytes fit, after dropping members gone stale */
  fits(n: number): boolean {
    if (this.used + n <= this.maxBytes) return true
    const now = this.clock()
    for (const m of this.members)
      if (now > m.deadline + STALE_AFTER_MS) {
        this.members.delete(m)
        this.used -= m.used.bytes
        m.ended = true
      }
    return this.used + n <= this.maxBytes
  }

  /** @internal `b` ended: everything it held is given back */
  leave(b: Budget): void {
    if (this.members.delete(b)) this.used -= b.used.bytes
    if (this.members.size === 0) this.used = 0
  }
}

/** The refusal of a query because the queries running at the same time hold the isolate's pool. */
export class SharedMemoryLimit extends CypherError {}

/** How long after its deadline a query that never ended (its request cancelled) still counts. */
export const STALE_AFTER_MS = 30_000

/**
 * The isolate-wide total of estimated bytes. Measured with DEFAULT_LIMITS (above): the near-limit queries
 * three at once in one isolate, this pool full, survive a 96 MiB V8 heap cap (the heaviest triple died at
 * 80), at least 32 MiB under the 128 MB limit (a margin for what no query charges: the answer being
 * serialised, V8's young generation). It equals one query's own limit: a query alone keeps all of it; the
 * bench's library-shaped queries estimate at most 13.5 MB, so several of them at once fit, while two or
 * three heavy ones at once are stopped (400, shared limit) instead of killing the isolate.
 */
export const ISOLATE_MAX_BYTES = 64 * 1024 * 1024

/** The pool of this isolate (module state: one per isolate, shared by every request it serves). */
export const ISOLATE_POOL = new BytePool(ISOLATE_MAX_BYTES)

/**
 * Runs `fn` with a budget that also counts against `pool`, and gives the budget's bytes back to the pool
 * however `fn` ends (answer, CypherError, any other error).
 */
export async function withPooledBudget<T>(
  fn: (budget: Budget) => Promise<T>,
  opts: { limits?: CypherLimits; pool?: BytePool; clock?: () => number } = {},
): Promise<T> {
  const budget = new Budget(opts.limits ?? DEFAULT_LIMITS, opts.clock, opts.pool ?? ISOLATE_POOL)
  try {
    return await fn(budget)
  } finally {
    budget.end()
  }
}

export class Budget {
  private rows = 0
  private steps = 0
  private bytes = 0
  private values = 0
  readonly deadline: number
  /** set once the query ended (or its pool dropped it as stale): nothing more counts in the pool */
  ended = false

  constructor(
    readonly limits: CypherLimits,
    private readonly clock: () => number = Date.now,
    /** the isolate-wide pool this query's bytes also count against (none: this query's own limit only) */
    private readonly pool: BytePool | null = null,
  ) {
    this.deadline = clock() + limits.maxMillis
  }

  /** The query ended: its bytes leave the pool (idempotent). */
  end(): void {
    this.pool?.leave(this)
    this.ended = true
  }

  /** `n` more rows produced by a stage */
  chargeRows(n: number): void {
    this.rows += n
    if (this.rows > this.limits.maxRows)
      throw new CypherError(
        `the query was stopped: it produced more than ${this.limits.maxRows} intermediate rows (row limit); narrow the pattern or add a LIMIT`,
      )
  }

  /** `n` more relationships or nodes read from the graph */
  chargeSteps(n: number): void {
    this.steps += n
    if (this.steps > this.limits.maxSteps)
      throw new CypherError(
        `the query was stopped: it would read more than ${this.limits.maxSteps} nodes and relationships (traversal step limit); narrow the pattern, bound variable-length relationships or add a LIMIT`,
      )
    this.checkTime()
  }

  /** `n` more bytes of graph data held for the query (an estimate; see DEFAULT_LIMITS) */
  chargeBytes(n: number): void {
    // The query's own limit first: a charge that would pass it is refused as this query's own (it would be
    // refused with the isolate to itself), not as the shared limit, whose message says "try again later".
    // A single charge can be large (a variable-length level's walks), so with the pool only 16 MiB above
    // one query's limit a query alone could otherwise cross the pool first. Refused charges are not counted.
    if (this.bytes + n > this.limits.maxBytes)
      throw new CypherError(
        `the query was stopped: it would hold more than ${limitBytes(this.limits.maxBytes)} of graph data in memory (memory limit); narrow the pattern or add a LIMIT`,
      )
    if (this.pool && !this.ended && !this.pool.fits(n))
      throw new SharedMemoryLimit(
        `the query was stopped: together with the other queries running at the same time it would hold more than ${limitBytes(this.pool.maxBytes)} of graph data in memory (memory limit, shared by the queries running at the same time); try again later, narrow the pattern or add a LIMIT`,
      )
    this.bytes += n
    if (this.pool && !this.ended) this.pool.add(this, n)
  }

  /** `n` more list elements (or string pieces of 16 characters) built by expressions */
  chargeValues(n: number): void {
    this.values += n
    const max = this.limits.maxValues ?? DEFAULT_MAX_VALUES
    if (this.values > max)
      throw new CypherError(
        `the query was stopped: its expressions would build more than ${max} list elements and string pieces (value limit); narrow the lists it builds or add a LIMIT`,
      )
  }

  /**
   * `n` bytes charged earlier are no longer held (a store answer compacted into ids, then dropped): the
   * memory limit bounds what is held at any one time, so a search that reads far more than it keeps is
   * charged its peak, not its total. Steps are never given back.
   */
  releaseBytes(n: number): void {
    const back = Math.min(n, this.bytes)
    this.bytes -= back
    if (this.pool && !this.ended) this.pool.add(this, -back)
  }

  checkTime(): void {
    if (this.clock() > this.deadline)
      throw new CypherError(`the query was stopped: it ran longer than ${this.limits.maxMillis} ms (time limit); narrow it or add a LIMIT`)
  }

  get used() {
    return { rows: this.rows, steps: this.steps, bytes: this.bytes, values: this.values }
  }
}
