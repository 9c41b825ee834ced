/**
 * Derived edges and their random ids (src/graph/ids.ts, DERIVED_INSERT_HEAD): post-processing never loses a
 * derived edge to an id that is already taken. The clash is forced by a D1 wrapper that, in the first
 * attempt of the derived-edge batch (the one starting with `DELETE FROM edges WHERE derived = 1`), replaces
 * the random id expression by the id of an existing ingested edge. With `INSERT OR IGNORE` (before this
 * test) every such row was silently skipped and the run stored no derived edge at all.
 */
import { env } from 'cloudflare:test'
import { beforeEach, describe, expect, it } from 'vitest'
import { postProcess } from '../../src/collectors/postprocess'
import { DERIVED_EDGE_ID_FLOOR, ID_CEILING, ID_FLOOR, NEW_DERIVED_EDGE_ID_SQL, NEW_EDGE_ID_SQL, NEW_ID_SQL } from '../../src/graph/ids'

const db = (env as unknown as { DB: D1Database }).DB
const NOW = '2026-03-01T00:00:00.000Z'

/** A random id expression of src/graph/ids.ts, whatever its range. */
const RANDOM_ID = /\(\d+ \+ \(random\(\) & \d+\)\)/g
const TAKEN_ID = `(SELECT min(id) FROM edges WHERE derived = 0)`

/**
 * `db` whose derived-edge batch gets a taken id instead of a random one in its first `clashes` attempts.
 * Statements are recorded and prepared on the real database when the batch runs, so a retry of the same
 * statements gets the real SQL back.
 */
function clashingDb(clashes: number) {
  const calls = { derivedBatches: 0 }
  type Rec = { sql: string; params: unknown[] }
  const real = (r: Rec, clash = false) => db.prepare(clash ? r.sql.replace(RANDOM_ID, TAKEN_ID) : r.sql).bind(...r.params)
  // a statement run on its own (the reads) goes to the real database as it is
  const rec = (sql: string, params: unknown[] = []) => {
    const r: Rec = { sql, params }
    return {
      ...r,
      bind: (...p: unknown[]) => rec(sql, p),
      all: () => real(r).all(),
      first: (col?: string) => (col === undefined ? real(r).first() : real(r).first(col)),
      run: () => real(r).run(),
      raw: () => real(r).raw(),
    }
  }
  const wrapped = {
    prepare: (sql: string) => rec(sql),
    batch: async (statements: Rec[]) => {
      const derived = /^\s*DELETE FROM edges WHERE derived = 1/.test(statements[0]?.sql ?? '')
      if (derived) calls.derivedBatches++
      return db.batch(statements.map((s) => real(s, derived && calls.derivedBatches <= clashes)))
    },
  }
  return { db: wrapped as unknown as D1Database, calls }
}

async function derivedSet(): Promise<string[]> {
  const { results } = await db
    .prepare(
      `SELECT s.objectid || ' ' || e.kind || ' ' || t.objectid AS k FROM edges e JOIN nodes s ON s.id = e.start_id JOIN nodes t ON t.id = e.end_id
       WHERE e.derived = 1 ORDER BY 1`,
    )
    .all<{ k: string }>()
  return results.map((r) => r.k)
}

beforeEach(async () => {
  // (storage may be shared by the cases of this file: the rows are written once)
  // three owners of three groups: post-processing derives Owns from each OwnsRaw (postprocess.store.ts OWNS)
  const nodes = ['DEI-U1', 'DEI-U2', 'DEI-U3', 'DEI-G1', 'DEI-G2', 'DEI-G3']
  await db.batch([
    ...nodes.map((o) =>
      db
        .prepare(`INSERT INTO nodes (objectid, kind, kinds, created_at, updated_at, id) VALUES (?1, ?2, ?3, ?4, ?4, ${NEW_ID_SQL}) ON CONFLICT (objectid) DO NOTHING`)
        .bind(o, o.startsWith('DEI-U') ? 'User' : 'Group', o.startsWith('DEI-U') ? '["User","Base"]' : '["Group","Base"]', NOW),
    ),
    ...[1, 2, 3].map((i) =>
      db
        .prepare(
          `INSERT INTO edges (start_id, end_id, kind, properties, created_at, updated_at, id)
           SELECT s.id, t.id, 'OwnsRaw', '{}', ?1, ?1, ${NEW_EDGE_ID_SQL} FROM nodes s, nodes t WHERE s.objectid = ?2 AND t.objectid = ?3
           ON CONFLICT (start_id, kind, end_id) DO NOTHING`,
        )
        .bind(NOW, `DEI-U${i}`, `DEI-G${i}`),
    ),
  ])
})

describe('derived edges and random ids', () => {
  it('a derived edge whose new id is already taken is written with another id, not dropped', async () => {
    await postProcess(db, NOW)
    const expected = await derivedSet()
    expect(expected).toEqual(['DEI-U1 Owns DEI-G1', 'DEI-U2 Owns DEI-G2', 'DEI-U3 Owns DEI-G3'])

    const c = clashingDb(1)
    const summary = await postProcess(c.db, NOW)
    expect(c.calls.derivedBatches).toBe(2) // the clash failed the first attempt; the second wrote the set
    expect(await derivedSet()).toEqual(expected)
    expect(summary.derivedEdges).toBe(expected.length)
  })

  it('when every attempt clashes, the run fails and the previous derived edges stay (never a silently smaller set)', async () => {
    await postProcess(db, NOW)
    const before = await derivedSet()
    const c = clashingDb(Infinity)
    await expect(postProcess(c.db, NOW)).rejects.toThrow(/UNIQUE constraint failed: edges\.id/)
    expect(c.calls.derivedBatches).toBe(3)
    expect(await derivedSet()).toEqual(before)
  })

  it('derived edges take ids in the upper half of the range, ingested ones in the lower half', async () => {
    await postProcess(db, NOW)
    const ids = await db.prepare(`SELECT id, derived FROM edges WHERE kind IN ('Owns', 'OwnsRaw')`).all<{ id: number; derived: number }>()
    expect(ids.results.length).toBe(6)
    for (const r of ids.results) {
      if (r.derived) expect(r.id >= DERIVED_EDGE_ID_FLOOR && r.id <= ID_CEILING, String(r.id)).toBe(true)
      else expect(r.id >= ID_FLOOR && r.id < DERIVED_EDGE_ID_FLOOR, String(r.id)).toBe(true)
    }
    const draws = await db
      .prepare(`WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < 2000) SELECT ${NEW_EDGE_ID_SQL} AS e, ${NEW_DERIVED_EDGE_ID_SQL} AS d FROM k`)
      .all<{ e: number; d: number }>()
    expect(draws.results.every((r) => r.e >= ID_FLOOR && r.e < DERIVED_EDGE_ID_FLOOR && r.d >= DERIVED_EDGE_ID_FLOOR && r.d <= ID_CEILING)).toBe(true)
    // both halves are drawn over: not stuck at one end
    expect(new Set(draws.results.map((r) => Math.floor((r.d - DERIVED_EDGE_ID_FLOOR) / 2 ** 47))).size).toBeGreaterThan(8)
  })
})
