/**
 * `r.isacl` read from the ACL relationships' partial index (issue 28, migration 0050, cypher.store.ts
 * relConditionSql): the statements the store writes name the index's condition word for word, SQLite reads the
 * relationships led by their start from it (EXPLAIN QUERY PLAN of the very statements, with their bindings), and the answers are the
 * walk's. While a relationship holds isacl as a number (1 passes SQL's `= 1`), the store writes the condition as
 * before and the walk's type error on `WHERE r.isacl` still comes. A one-hop join with `a.k <> b.k` charges a
 * traversal step per 4 candidates it examines (onehop.ts CANDIDATES_PER_STEP), where the walk charges each.
 */
import { beforeAll, describe, expect, it } from 'vitest'
import { env } from 'cloudflare:workers'
import { adminToken } from '../helpers'
import { ingest } from '../../src/client/graph'
import { d1GraphSource } from '../../src/cypher/cypher.store'
import { nodePropertyKeys } from '../../src/cypher/needs'
import { parseCypher } from '../../src/cypher/parse'
import { runQuery } from '../../src/cypher/run'
import type { CypherLimits } from '../../src/cypher/budget'
import { PathVal } from '../../src/cypher/values'

// two domains of 6 users each; every user has an ACE to the next 3 users of its own domain (isacl true), a
// membership to the next one (no isacl), one with isacl false; two ACEs cross the domains
const users = ['D1', 'D2'].flatMap((d) => Array.from({ length: 6 }, (_, i) => ({ id: `${d}-U${i}`, kinds: ['User'], properties: { name: `${d}-U${i}`, domainsid: d } })))
const rel = (a: string, kind: string, b: string, properties: Record<string, unknown>) => ({ start: { value: a }, end: { value: b }, kind, properties })
const edges = [
  ...['D1', 'D2'].flatMap((d) =>
    Array.from({ length: 6 }, (_, i) => [
      ...[1, 2, 3].map((k) => rel(`${d}-U${i}`, k === 2 ? 'WriteDacl' : 'GenericAll', `${d}-U${(i + k) % 6}`, { isacl: true })),
      rel(`${d}-U${i}`, 'MemberOf', `${d}-U${(i + 4) % 6}`, {}),
      rel(`${d}-U${i}`, 'Owns', `${d}-U${(i + 5) % 6}`, { isacl: false }),
    ]).flat(),
  ),
  rel('D1-U0', 'GenericAll', 'D2-U3', { isacl: true }),
  rel('D2-U5', 'ForceChangePassword', 'D1-U1', { isacl: true }),
  rel('D2-U4', 'MemberOf', 'D1-U2', {}),
]

const ACES_ACROSS = 'MATCH p=(a:Base)-[r]->(b:Base) WHERE a.domainsid <> b.domainsid AND r.isacl RETURN p LIMIT 1000'
const QUERIES = [
  ACES_ACROSS,
  // a walk level with the condition (expandLevel), from either end, and one relationship read by id (expand)
  'MATCH (a:User)-[r:GenericAll|WriteDacl]->(b:User) WHERE r.isacl = true AND a.name STARTS WITH "D1-U1" RETURN a.name, b.name',
  'MATCH (b:User {name: "D2-U3"})<-[r]-(a) WHERE r.isacl RETURN a.name ORDER BY a.name',
  'MATCH (a:User {name: "D1-U0"})-[r*1..2]->(b:User) WHERE all(x IN r WHERE x.isacl) RETURN DISTINCT b.name ORDER BY b.name',
]

/** env.DB, recording every statement bound through it (SQL and bindings) */
function recording(): { db: D1Database; seen: { sql: string; params: unknown[] }[] } {
  const seen: { sql: string; params: unknown[] }[] = []
  const db = new Proxy(env.DB, {
    get(target, key) {
      if (key === 'prepare')
        return (sql: string) => {
          const stmt = target.prepare(sql)
          return new Proxy(stmt, {
            get(s, k) {
              if (k === 'bind')
                return (...params: unknown[]) => {
                  seen.push({ sql, params })
                  return s.bind(...params)
                }
              const v = Reflect.get(s, k) as unknown
              return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(s) : v
            },
          })
        }
      const v = Reflect.get(target, key) as unknown
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v
    },
  })
  return { db, seen }
}

async function answer(q: string, opts: { db?: D1Database; hopPushdown?: boolean; limits?: CypherLimits } = {}) {
  const r = await runQuery(parseCypher(q), d1GraphSource(opts.db ?? env.DB, null, { nodeKeys: nodePropertyKeys(parseCypher(q)) }), {
    now: Date.now(),
    hopPushdown: opts.hopPushdown,
    ...(opts.limits ? { limits: opts.limits } : {}),
  })
  return r.rows.map((row) => JSON.stringify(row.map((v) => (v instanceof PathVal ? v.nodes.map((id) => r.ctx.graph.node(id).objectid) : v))))
}

beforeAll(async () => {
  await ingest(await adminToken(), { graph: { nodes: users, edges } })
})

describe('r.isacl from the ACL index (issue 28, migration 0050)', () => {
  it('the store names the index’s condition and SQLite reads the ACL relationships from it; the answers are the walk’s', async () => {
    const { db, seen } = recording()
    for (const q of QUERIES) expect(await answer(q, { db }), q).toEqual(await answer(q, { hopPushdown: false }))
    // (node ids are random: the walk's order is theirs)
    expect((await answer(ACES_ACROSS)).sort()).toEqual([JSON.stringify([['D1-U0', 'D2-U3']]), JSON.stringify([['D2-U5', 'D1-U1']])])
    const acl = seen.filter((s) => s.sql.includes(`json_type(e.properties, '$.isacl') = 'true'`))
    expect(acl.length).toBeGreaterThan(2)
    const used = new Set<string>()
    for (const s of acl) {
      const plan = await env.DB.prepare(`EXPLAIN QUERY PLAN ${s.sql}`)
        .bind(...s.params)
        .all<{ detail: string }>()
      for (const row of plan.results) for (const m of row.detail.matchAll(/INDEX (edges_acl_\w+)/g)) used.add(m[1])
    }
    expect([...used]).toEqual(['edges_acl_start'])
    // no statement tests isacl from the relationship's row
    expect(seen.some((s) => s.params.includes('$."isacl"'))).toBe(false)
  })

  it('while a relationship holds isacl as a number, the condition is written as before and `WHERE r.isacl` stops with the walk’s type error', async () => {
    await ingest(await adminToken(), { graph: { nodes: [], edges: [rel('D1-U3', 'GenericWrite', 'D2-U0', { isacl: 1 })] } })
    try {
      const { db, seen } = recording()
      await expect(answer(ACES_ACROSS, { db })).rejects.toThrow('type mismatch: expected a boolean but got a number')
      await expect(answer(ACES_ACROSS, { hopPushdown: false })).rejects.toThrow('type mismatch: expected a boolean but got a number')
      expect(seen.some((s) => s.sql.includes(`json_type(e.properties, '$.isacl') = 'true'`))).toBe(false)
      // `= true` leaves the stored 1 out (Cypher's equality), as the walk does
      const q = 'MATCH (a)-[r]->(b) WHERE a.domainsid <> b.domainsid AND r.isacl = true RETURN a.name, b.name ORDER BY a.name'
      expect(await answer(q)).toEqual(await answer(q, { hopPushdown: false }))
      expect(await answer(q)).toEqual([JSON.stringify(['D1-U0', 'D2-U3']), JSON.stringify(['D2-U5', 'D1-U1'])])
    } finally {
      await env.DB.prepare("DELETE FROM edges WHERE kind = 'GenericWrite'").run()
    }
    const { db, seen } = recording()
    expect(await answer(ACES_ACROSS, { db })).toHaveLength(2)
    expect(seen.some((s) => s.sql.includes(`json_type(e.properties, '$.isacl') = 'true'`))).toBe(true)
  })

  it('a one-hop join with `a.k <> b.k` charges a step per 4 candidates: it answers under a step limit the walk passes', async () => {
    // 12 users scanned; 38 ACL relationships are candidates (12 × 3 per domain's ring + 2 across): 12 + 10 steps
    // for the join and its 2 rows' nodes, where the walk reads every ACL relationship and far node
    const limits: CypherLimits = { maxRows: 1e6, maxResultRows: 1e6, maxSteps: 40, maxMillis: 60_000, maxBytes: 64 * 1024 * 1024 }
    expect(await answer(ACES_ACROSS, { limits })).toHaveLength(2)
    await expect(answer(ACES_ACROSS, { limits, hopPushdown: false })).rejects.toThrow(/traversal step limit/)
    // one statement examines at most the step limit + 1 candidates (it cannot be stopped once it runs): with a
    // limit of 30 the page's 38 candidates are refused, although 30 steps left would take 124 of them
    await expect(answer(ACES_ACROSS, { limits: { ...limits, maxSteps: 30 } })).rejects.toThrow(/traversal step limit/)
  })
})
