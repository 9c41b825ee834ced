/**
 * Object ids clients see: graph node ids, relationship (edge) ids and posture-stats row ids.
 *
 * Why random (issue 24, item 3): these ids used to be SQLite's sequential rowids, shared by every
 * environment. A reader restricted to environment A who saw two of A's node ids learnt how many objects
 * hidden environments had received in between, and a posture-stats row id counted every environment's rows.
 * Every such row now gets a random id when it is inserted, so an id carries no count and no order.
 *
 * The choice, and what was weighed:
 *  - Random ids at insert (this module), not a keyed permutation applied at the API boundary. A permutation
 *    (e.g. a Feistel network keyed from a server secret) leaves the counters in storage and maps them
 *    wherever an id crosses the API: every presenter (search, entity, pathfinding, Cypher graphs and values,
 *    asset-group members, findings, posture) and every place an id comes back (Cypher `id(n) = …`, its
 *    comparisons and ordering). One missed mapping leaks the counter again, and nothing would notice. With
 *    random ids the stored id IS the presented id: there is nothing to map, so nothing to miss, and the
 *    Cypher engine needs no change. The database itself refuses an insert without a random id (the
 *    triggers of migration 0039), so a new insert site that forgets `NEW_ID_SQL` fails its first test
 *    instead of leaking.
 *  - Cost: no per-id work on reads. Inserts land at random places in the rowid b-trees of `nodes` and
 *    `edges` instead of appending. Measured (`npm run bench:sharphound -- --users 10000`, 164 631 elements,
 *    old and new code alternating on a shared 2-core machine, 2026-11-29): ingest 32 576 → 17 060 elements/s
 *    and 18 447 → 11 544 (0.52×, 0.63×); post-processing 366 → 1 910 ms and 479 → 1 977 ms (about 4–5×: the
 *    derived-edge inserts pay the random b-tree inserts, and a random id column defeats their SELECT DISTINCT).
 *    Not yet optimised; see SECURITY.md "Ids that count nothing".
 *
 * The range: [2^40, 2^40 + 2^52), i.e. 52 random bits, below 2^53 so every id is a safe integer in
 * JavaScript (clients read BloodHound's ids as JSON numbers; a larger value would lose precision in JSON.parse
 * and in D1's own number conversion). Ids below 2^40 are the old sequential ones: migration 0039 renumbers
 * them all, and the triggers refuse them from then on, so a new id never meets an old one.
 *
 * Collisions: with 52 random bits, an insert meets an existing id with probability rows / 2^52 (one in 450
 * million with 10 million rows). The column is the primary key, so a collision never merges two objects:
 *  - node and ingested-edge upserts name their conflict target (objectid; start, kind, end), so a clash on
 *    the id aborts the statement with "UNIQUE constraint failed: nodes.id" (or edges.id) and the batch rolls
 *    back; `withIdRetry` runs such a batch again (new random ids) — see isIdCollision;
 *  - derived edges (post-processing, INSERT OR IGNORE) are recomputed from scratch at every analysis run, so
 *    one skipped by a clash comes back at the next run;
 *  - a posture-stats clash fails the analysis commit, which the Analyzer retries as a whole.
 *
 * Unit-tested in test/unit/ids.test.ts; the opacity across environments in test/integration/ids-opacity.test.ts.
 */

/** Smallest random id; everything below is a legacy sequential id (refused by migration 0039's triggers). */
export const ID_FLOOR = 2 ** 40
/** Mask of the random part: 52 bits. */
const RANDOM_MASK = 2 ** 52 - 1
/** Largest id this module can produce (below Number.MAX_SAFE_INTEGER = 2^53 - 1). */
export const ID_CEILING = ID_FLOOR + RANDOM_MASK

/**
 * SQL expression of a new random id, evaluated once per inserted row. SQLite's random() is a 64-bit value
 * from SQLite's own generator (ChaCha20, seeded from the runtime's randomness source through the VFS);
 * `&` keeps 52 of its bits, which also makes the value non-negative whatever the sign of random().
 */
export const NEW_ID_SQL = `(${ID_FLOOR} + (random() & ${RANDOM_MASK}))`

/** Whether `id` is one this module can produce (a safe integer in [ID_FLOOR, ID_CEILING]). */
export function isRandomId(id: unknown): id is number {
  return typeof id === 'number' && Number.isSafeInteger(id) && id >= ID_FLOOR && id <= ID_CEILING
}

/** Tables whose primary key is a random id. */
const RANDOM_ID_TABLES = ['nodes', 'edges', 'posture_stats'] as const

/** Whether a failed batch failed because a new random id met an existing one (D1 wraps SQLite's message). */
export function isIdCollision(e: unknown): boolean {
  if (!(e instanceof Error)) return false
  return RANDOM_ID_TABLES.some((t) => e.message.includes(`UNIQUE constraint failed: ${t}.id`))
}

/**
 * Runs `batch` (one D1 batch: one transaction, rolled back whole when it fails) and runs it again, with new
 * random ids, when it failed on an id collision; at most `attempts` times in all. Any other error, or a
 * collision on the last attempt, is thrown as it is.
 */
export async function withIdRetry<T>(batch: () => Promise<T>, attempts = 3): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await batch()
    } catch (e) {
      if (i >= attempts || !isIdCollision(e)) throw e
    }
  }
}
