/**
 * The Cypher source's label scan (cypher.store.ts scanNodes, scanSql) has one statement per kind of caller so that
 * each is planned for its case: a restricted caller's scan reads its environments' rows from the index nodes_env
 * (never every node of the graph in id order, filtered afterwards: a rule evaluated per environment did that once
 * per environment), an unrestricted caller's walks the primary key from the page's start. The statements are the
 * ones scanNodes sends (captured by a stand-in for D1), planned by SQLite on the migrated database; the restricted
 * answers are checked against the unrestricted scan filtered by environment, page by page.
 */
import { env } from 'cloudflare:test'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { d1GraphSource } from '../../src/cypher/cypher.store'
import type { NodeScan } from '../../src/cypher/source'
import { ID_FLOOR } from '../../src/graph/ids'

// ids in the random range (src/graph/ids.ts: migration 0039's triggers refuse any other), chosen so that the
// test can delete exactly its rows
const BASE = ID_FLOOR + 9_300_000
const ENVS = ['S-1-5-21-9300-1', 'S-1-5-21-9300-2', 'S-1-5-21-9300-3']
const N = 60

/**
 * Scans, and the index their nodes are read from besides the environments' (null: nodes_env for a restricted caller,
 * the primary key in id order for an unrestricted one).
 */
const SCANS: [NodeScan, RegExp | null][] = [
  [{ kinds: null, objectid: null, name: null }, null],
  [{ kinds: ['User'], objectid: null, name: null }, null],
  [{ kinds: ['User'], objectid: null, name: null, where: [{ type: 'text', column: 'name', op: 'contains', value: '-1', anyCase: true }] }, null],
  // the partial index nodes_tier_zero_hint (a few ids, each read by its key)
  [{ kinds: ['Group', 'Computer'], objectid: null, name: null, where: [{ type: 'text', column: 'objectid', op: 'endsWith', value: '-519', anyCase: false }] }, /^SEARCH n USING INTEGER PRIMARY KEY \(rowid=\?\)/],
  [{ kinds: null, objectid: null, name: null, where: [{ type: 'tierZero' }] }, /^SEARCH n USING INTEGER PRIMARY KEY \(rowid=\?\)/],
  // a prefix range of the object id (read through that range only when the range is small: scanNodes)
  [{ kinds: null, objectid: null, name: null, where: [{ type: 'text', column: 'objectid', op: 'startsWith', value: `${ENVS[0]}-100`, anyCase: false }] }, /^SEARCH n USING INDEX sqlite_autoindex_nodes_1 \(objectid>\? AND objectid<\?\)/],
]

/** A stand-in for D1 that answers no rows and records every statement run, with its parameters, in `out`. */
function capturingDb(): { db: D1Database; out: { sql: string; params: unknown[] }[] } {
  const out: { sql: string; params: unknown[] }[] = []
  const stmt = (sql: string, params: unknown[] = []): D1PreparedStatement =>
    ({
      bind: (...p: unknown[]) => stmt(sql, p),
      all: async () => (out.push({ sql, params }), { results: [] }),
      first: async () => (out.push({ sql, params }), null),
    }) as unknown as D1PreparedStatement
  const db = { prepare: (sql: string) => stmt(sql), batch: async (s: D1PreparedStatement[]) => Promise.all(s.map((x) => x.all())) } as unknown as D1Database
  return { db, out }
}

/** The statements scanNodes sends for `access`, with their parameters (a stand-in for D1, no rows). */
async function captured(access: string | null): Promise<{ sql: string; params: unknown[] }[]> {
  const { db, out } = capturingDb()
  for (const [scan] of SCANS) await d1GraphSource(db, access).scanNodes(scan, 0, 100)
  // the scans themselves (a prefix's range is first counted: the stand-in answers "small")
  return out.filter((s) => s.sql.includes('ORDER BY n.id LIMIT ?6'))
}

async function plan(s: { sql: string; params: unknown[] }): Promise<string[]> {
  const { results } = await env.DB.prepare(`EXPLAIN QUERY PLAN ${s.sql}`)
    .bind(...s.params)
    .all<{ detail: string }>()
  return results.map((r) => r.detail)
}

beforeAll(async () => {
  const stamp = '2026-01-01T00:00:00.000Z'
  await env.DB.batch(
    Array.from({ length: N }, (_, i) => {
      const kind = ['User', 'Group', 'Computer'][i % 3]
      const objectid = `${ENVS[i % ENVS.length]}-${1000 + i}${i % 7 === 0 ? '-519' : ''}`
      return env.DB.prepare(
        'INSERT INTO nodes (id, objectid, kind, kinds, name, environment_id, properties, created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?2, ?5, ?6, ?7, ?7)',
      ).bind(BASE + i, objectid, kind, JSON.stringify([kind, 'Base']), i % 11 === 0 ? null : ENVS[Math.floor(i / 3) % ENVS.length], '{}', stamp)
    }),
  )
})

afterAll(async () => {
  await env.DB.prepare('DELETE FROM nodes WHERE id >= ?1 AND id < ?2').bind(BASE, BASE + N).run()
})

describe('label scan: query plans', () => {
  it("a restricted caller's scan reads its environments from the index nodes_env, never the whole table", async () => {
    for (const access of [JSON.stringify([ENVS[0]]), JSON.stringify(ENVS.slice(0, 2))]) {
      const statements = await captured(access)
      expect(statements.length).toBe(SCANS.length)
      for (const [i, s] of statements.entries()) {
        const p = await plan(s)
        const why = `${s.sql.replace(/\s+/g, ' ')}\n${p.join('\n')}`
        // from the environments' ranges of nodes_env, or (an index of the scan's own) from that index alone
        const own = SCANS[i][1]
        if (own) {
          expect(p.some((l) => own.test(l)), why).toBe(true)
          expect(p.filter((l) => /nodes_env/.test(l)), why).toEqual([])
        } else expect(p.some((l) => /^SEARCH n USING INDEX nodes_env \(environment_id=\? AND rowid>\?\)/.test(l)), why).toBe(true)
        expect(p.filter((l) => /^SCAN n\b/.test(l) || /AUTOMATIC/.test(l)), why).toEqual([])
      }
    }
  })

  it("an unrestricted caller's scan walks the primary key from the page's start, in id order (no sort)", async () => {
    const statements = await captured(null)
    expect(statements.length).toBe(SCANS.length)
    for (const [i, s] of statements.entries()) {
      const p = await plan(s)
      const why = `${s.sql.replace(/\s+/g, ' ')}\n${p.join('\n')}`
      expect(p.filter((l) => /^SCAN n\b/.test(l) || /nodes_env/.test(l)), why).toEqual([])
      // a plain scan: the primary key in id order, stopping at the page's end (no sort); else the scan's own index
      const own = SCANS[i][1]
      if (own) expect(p.some((l) => own.test(l)), why).toBe(true)
      else {
        expect(p.some((l) => /^SEARCH n USING INTEGER PRIMARY KEY \(rowid>\?\)/.test(l)), why).toBe(true)
        expect(p.filter((l) => /TEMP B-TREE FOR ORDER BY/.test(l)), why).toEqual([])
      }
    }
  })

  it('both statements answer alike: a restricted scan is the unrestricted one filtered by environment, page by page', async () => {
    const mine = (rows: { id: number; environment_id: string | null }[]) => rows.filter((n) => n.id >= BASE && n.id < BASE + N)
    for (const [scan] of SCANS)
      for (const access of [[ENVS[0]], ENVS.slice(0, 2), ENVS]) {
        const all = mine(await d1GraphSource(env.DB, null).scanNodes(scan, BASE - 1, 10_000))
        const expected = all.filter((n) => n.environment_id !== null && access.includes(n.environment_id)).map((n) => n.id)
        if (access === ENVS) expect(expected.length).toBeGreaterThan(0)
        // pages of 4: each starts after the last id of the one before
        const got: number[] = []
        let after = BASE - 1
        for (;;) {
          const page = mine(await d1GraphSource(env.DB, JSON.stringify(access)).scanNodes(scan, after, 4))
          got.push(...page.map((n) => n.id))
          if (page.length < 4) break
          after = page[page.length - 1].id
        }
        expect(got, `${JSON.stringify(scan)} ${access}`).toEqual(expected)
      }
  })
})

/**
 * Counts and DISTINCT (issue 28: countNodes, distinctValues): a label that is a primary kind and a property with an
 * index of migration 0048 are read from that index alone (its (kind, json_type, json_extract, environment) answer
 * the label, the test, the group and a restricted caller's environments), the nodes whose kinds are more than
 * [kind, Base] from the partial index nodes_kinds_extra; never every node of the graph.
 */
describe('counts and DISTINCT: query plans', () => {
  const statements = async (access: string | null) => {
    const { db, out } = capturingDb()
    const src = d1GraphSource(db, access)
    await src.countNodes!({ kinds: [['User']], objectid: null, tests: [{ op: 'eq', key: 'enabled', value: true }] })
    await src.distinctValues!({ kinds: [['Computer']], objectid: null, tests: [] }, ['operatingsystem'], { keys: [] }, 0, null)
    await src.scanOrdered!({ kinds: ['User'], objectid: null, name: null, where: [{ type: 'property', test: { op: 'eq', key: 'enabled', value: true } }] }, { keys: [{ key: 'pwdlastset', descending: false }] }, 0, 16)
    return out
  }
  it.each([null, JSON.stringify([ENVS[0]]), JSON.stringify(ENVS.slice(0, 2))])('read from the property index and nodes_kinds_extra (access %s)', async (access) => {
    const [count, distinct, unorderable, ordered] = await statements(access)
    // ORDER BY pwdlastset LIMIT: the unorderable values looked for in index ranges, the page read in the order index's
    // order (only the nodes_kinds_extra part is sorted) and merged
    const u = await plan(unorderable)
    expect(u.filter((l) => /^SEARCH n USING INDEX nodes_order_pwdlastset \(kind=\? AND <expr>=\?\)/.test(l)).length, u.join('\n')).toBe(3)
    const o = await plan(ordered)
    const why = `${ordered.sql.replace(/\s+/g, ' ')}\n${o.join('\n')}`
    expect(o, why).toEqual(expect.arrayContaining(['MERGE (UNION ALL)', 'SEARCH n USING INDEX nodes_order_pwdlastset (kind=?)', 'SCAN n USING INDEX nodes_kinds_extra']))
    expect(o.filter((l) => /TEMP B-TREE/.test(l)).length, why).toBe(1)
    expect(o.filter((l) => /nodes_env|^SCAN n$/.test(l)), why).toEqual([])
    for (const [s, index] of [
      [count, 'nodes_prop_enabled'],
      [distinct, 'nodes_prop_operatingsystem'],
    ] as const) {
      const p = await plan(s)
      const why = `${s.sql.replace(/\s+/g, ' ')}\n${p.join('\n')}`
      expect(p.some((l) => new RegExp(`^SEARCH n USING (COVERING )?INDEX ${index} \\(kind=\\?`).test(l)), why).toBe(true)
      expect(p.some((l) => /USING (COVERING )?INDEX nodes_kinds_extra/.test(l)), why).toBe(true)
      expect(p.filter((l) => /^SCAN (n|x)\b(?! USING)/.test(l) || /AUTOMATIC/.test(l)), why).toEqual([])
    }
  })
})

