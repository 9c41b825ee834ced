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
 *    Since then derived edges take the upper half of the range and are inserted in id order after their
 *    DISTINCT (NEW_DERIVED_EDGE_ID_SQL, DERIVED_INSERT_HEAD below). Replaying the post-processing statements
 *    with Python's sqlite3 on a copy of the benchmark's 150 055-edge database (its floor database; for the new
 *    code with the ingested edge ids moved into the lower half, as ingest now writes them; 3 rounds each,
 *    2 MB page cache, loaded shared machine): 6.2–7.3 s before, 3.3–4.7 s after (about 0.6×; not a
 *    workerd figure); not yet confirmed with bench:sharphound, whose runtime kept
 *    dying mid-run on the loaded machine (2026-11-29 05:00–05:20, old, new and pre-random code alike).
 *    See SECURITY.md "Ids that count nothing".
 *
 * The range: [2^40, 2^40 + 2^52), i.e. 52 random bits, below 2^53 so every id is a safe integer in
 * JavaScript (clients read BloodHound's ids as JSON numbers; a larger value would lose precision in JSON.parse
 * and in D1's own number conversion). Ids below 2^40 are the old sequential ones: migration 0039 renumbers
 * them all, and the triggers refuse them from then on, so a new id never meets an old one.
 *
 * Collisions: with 52 random bits (51 for edges, one half each for ingested and derived ones), an insert meets
 * an existing id with probability rows / 2^52 (rows / 2^51 for edges: one in 225 million with 10 million rows).
 * The column is the primary key, so a collision never merges two objects:
 *  - node and ingested-edge upserts name their conflict target (objectid; start, kind, end), so a clash on
 *    the id aborts the statement with "UNIQUE constraint failed: nodes.id" (or edges.id) and the batch rolls
 *    back; `withIdRetry` runs such a batch again (new random ids) — see isIdCollision;
 *  - derived edges (post-processing) name the same conflict target, so a clash fails the batch, which
 *    `withIdRetry` runs again (DERIVED_INSERT_HEAD); before, INSERT OR IGNORE skipped such an edge silently;
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

/**
 * Edge ids come from two halves of the same range, by how the edge came to be:
 *  - ingested edges (uploads, the well-known links): [ID_FLOOR, ID_FLOOR + 2^51), NEW_EDGE_ID_SQL;
 *  - derived edges (post-processing, `derived = 1`): [ID_FLOOR + 2^51, ID_CEILING], NEW_DERIVED_EDGE_ID_SQL.
 * Why: `edges` is a rowid table, so a row lives where its id sorts. Post-processing deletes every derived
 * edge and inserts the new set (about 25 000 at the 10 000-user benchmark) at each analysis run; with ids
 * drawn from the whole range those rows were spread over every page of the table, each page rewritten by
 * the DELETE and again by the inserts. Kept in the top half, and inserted in id order (DERIVED_INSERT), they
 * fill pages of their own at the end of the table, as the sequential ids did. What this tells a reader is
 * whether an edge was derived, which the relationship's kind mostly tells already and which counts nothing;
 * each half still has 51 random bits (collisions below). Edges stored before this split (migration 0039)
 * keep their ids; the range check of the triggers is the same for both halves.
 */
const HALF = 2 ** 51
const HALF_MASK = HALF - 1
/** SQL expression of a new random id for an ingested edge: the lower half. */
export const NEW_EDGE_ID_SQL = `(${ID_FLOOR} + (random() & ${HALF_MASK}))`
/** Smallest derived-edge id. */
export const DERIVED_EDGE_ID_FLOOR = ID_FLOOR + HALF
/** SQL expression of a new random id for a derived edge: the upper half. */
export const NEW_DERIVED_EDGE_ID_SQL = `(${DERIVED_EDGE_ID_FLOOR} + (random() & ${HALF_MASK}))`

/**
 * Derived-edge inserts: `${DERIVED_INSERT_HEAD} <candidates> ${DERIVED_INSERT_TAIL}`, where <candidates> is a
 * SELECT of (start_id, end_id, kind, properties, created_at, updated_at, derived) (WITH clauses go before the
 * head). The candidates are complete (their DISTINCT, if any, done) before the id is drawn: a random column
 * inside the SELECT DISTINCT made every row distinct, so duplicates reached the table's unique index. The
 * rows are inserted in id order (see NEW_DERIVED_EDGE_ID_SQL).
 *
 * No row is lost to a clash of ids: the conflict target is the (start_id, kind, end_id) key only (an edge
 * already there, ingested or derived earlier in the batch, stays as it is: what INSERT OR IGNORE did), so a
 * new id that meets an existing id is NOT ignored: the statement fails with "UNIQUE constraint failed:
 * edges.id", the batch rolls back, and `withIdRetry` runs it again with new ids (replaceDerivedEdges). With
 * INSERT OR IGNORE, such a clash silently dropped the derived edge. Tested in
 * test/integration/derived-edge-ids.test.ts.
 */
export const DERIVED_INSERT_HEAD = `INSERT INTO edges (start_id, end_id, kind, properties, created_at, updated_at, derived, id)
SELECT derived_candidate.*, ${NEW_DERIVED_EDGE_ID_SQL} AS id FROM (`
export const DERIVED_INSERT_TAIL = `) AS derived_candidate WHERE true ORDER BY id ON CONFLICT (start_id, kind, end_id) DO NOTHING`

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
