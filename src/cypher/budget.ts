/**
 * What one query may spend. Every loop of the engine charges its work here; the first limit crossed
 * stops the query with a 400 naming the limit, so a hostile or careless query never costs the service
 * more than these bounds (and never answers 5xx).
 */
import { CypherError } from './parse'

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
 * `maxBytes` is an estimate, and the isolate's real heap is larger: measured under a V8 heap cap on the
 * 1 M-edge benchmark graph (`npm run bench:cypher -- --heap-cap N`, BENCHMARKS.md "Cypher memory under
 * the 128 MiB heap cap"), the unbounded walk `MATCH p = (a)-[*1..]->(b) RETURN count(p)`, stopped at a
 * 48 MiB estimate, needed between 112 and 128 MiB of isolate heap (it killed the isolate under a 112 MiB
 * cap, not under 128): about twice the estimate on top of the ~16 MiB the worker holds anyway, and less
 * than 16 MiB from the Workers limit. At 32 MiB every hostile and near-limit shape of the bench survived
 * a 96 MiB cap (the unbounded walks need 80–96 MiB); the library-shaped queries estimate at most 13.5 MB
 * there and answer as before. Measure again before raising it.
 */
export const DEFAULT_LIMITS: CypherLimits = { maxRows: 100_000, maxResultRows: 20_000, maxSteps: 500_000, maxMillis: 5_000, maxBytes: 32 * 1024 * 1024 }

export class Budget {
  private rows = 0
  private steps = 0
  private bytes = 0
  private values = 0
  private readonly deadline: number

  constructor(
    readonly limits: CypherLimits,
    private readonly clock: () => number = Date.now,
  ) {
    this.deadline = clock() + limits.maxMillis
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
    this.bytes += n
    if (this.bytes > this.limits.maxBytes)
      throw new CypherError(
        `the query was stopped: it would hold more than ${Math.round(this.limits.maxBytes / 1024 / 1024)} MiB of graph data in memory (memory limit); narrow the pattern or add a LIMIT`,
      )
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
    this.bytes = Math.max(0, this.bytes - n)
  }

  checkTime(): void {
    if (this.clock() > this.deadline)
      throw new CypherError(`the query was stopped: it ran longer than ${this.limits.maxMillis} ms (time limit); narrow it or add a LIMIT`)
  }

  get used() {
    return { rows: this.rows, steps: this.steps, bytes: this.bytes }
  }
}
