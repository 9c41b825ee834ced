/**
 * Variable-length levels drop the walks that can neither end the hop nor go on (issue 28, match.ts hops with
 * GraphSource.expandLevel `orGoOn`): the library's OU map `(:Domain)-[:Contains*1..]->(:OU)` at 1 M edges walked
 * every user and computer the OUs and containers hold, past the memory limit, for a few dozen rows. Here a small
 * domain of the same shape: the query answers under a memory limit the unpruned walk passes, and the rows, in
 * order, are those of the unpruned walk (the same D1 rows) for an administrator and for a caller restricted to
 * the domain, and those of the engine over an in-memory copy (no store shortcut).
 *
 *   DOM -Contains-> OU A -Contains-> OU B -Contains-> OU C -Contains-> OU A (a cycle); OU B -Contains-> OU B (a loop)
 *   DOM -Contains-> USERS (Container) -Contains-> U0..U119 ; USERS -Contains-> OU D (an OU under a container)
 *   OU A -Contains-> C0..C79 (computers) ; U0 -Contains-> OU E (arbitrary data: a user holding an OU)
 *   DOM -Contains-> HOLD (Container) -Contains-> FAR (Container, other domain) -Contains-> OU G
 *     (restricted to DOM's domain: HOLD's only relationship leads to a node it may not see, so OU G is not reached)
 *   U1 -GenericAll-> OU F (not a Contains: never walked by Contains*, walked by Contains|GenericAll*)
 */
import { beforeAll, describe, expect, it } from 'vitest'
import { env } from 'cloudflare:workers'
import { adminToken } from '../helpers'
import { ingest } from '../../src/client/graph'
import { parseCypher } from '../../src/cypher/parse'
import { loadReferenced, runQuery } from '../../src/cypher/run'
import { d1GraphSource } from '../../src/cypher/cypher.store'
import { nodePropertyKeys } from '../../src/cypher/needs'
import { DEFAULT_LIMITS, type CypherLimits } from '../../src/cypher/budget'
import { NodeRef, PathVal, RelRef } from '../../src/cypher/values'
import type { NodeRecord } from '../../src/cypher/source'
import { memorySource } from '../unit/cypher-graph'

const D = 'S-1-5-21-4242'
const D2 = 'S-1-5-21-4343'
type Node = { id: string; kinds: string[]; properties: Record<string, unknown> }
const ad = (id: string, kind: string, name: string, domain = D): Node => ({ id, kinds: [kind], properties: { name, domainsid: domain } })
const NODES: Node[] = [
  ad(D, 'Domain', 'PRUNE.LOCAL'),
  ad('OU-A', 'OU', 'OU A'),
  ad('OU-B', 'OU', 'OU B'),
  ad('OU-C', 'OU', 'OU C'),
  ad('OU-D', 'OU', 'OU D'),
  ad('OU-E', 'OU', 'OU E'),
  ad('OU-F', 'OU', 'OU F'),
  ad('OU-G', 'OU', 'OU G'),
  ad('CT-USERS', 'Container', 'USERS'),
  ad('CT-HOLD', 'Container', 'HOLD'),
  ad('CT-FAR', 'Container', 'FAR', D2),
  ...Array.from({ length: 120 }, (_, i) => ad(`${D}-${1000 + i}`, 'User', `U${i}`)),
  ...Array.from({ length: 80 }, (_, i) => ad(`${D}-${2000 + i}`, 'Computer', `C${i}`)),
]
const EDGES: [string, string, string][] = [
  [D, 'Contains', 'OU-A'],
  ['OU-A', 'Contains', 'OU-B'],
  ['OU-B', 'Contains', 'OU-C'],
  ['OU-C', 'Contains', 'OU-A'],
  ['OU-B', 'Contains', 'OU-B'],
  [D, 'Contains', 'CT-USERS'],
  ...Array.from({ length: 120 }, (_, i): [string, string, string] => ['CT-USERS', 'Contains', `${D}-${1000 + i}`]),
  ['CT-USERS', 'Contains', 'OU-D'],
  ...Array.from({ length: 80 }, (_, i): [string, string, string] => ['OU-A', 'Contains', `${D}-${2000 + i}`]),
  [`${D}-1000`, 'Contains', 'OU-E'],
  [D, 'Contains', 'CT-HOLD'],
  ['CT-HOLD', 'Contains', 'CT-FAR'],
  ['CT-FAR', 'Contains', 'OU-G'],
  [`${D}-1001`, 'GenericAll', 'OU-F'],
]

beforeAll(async () => {
  const admin = await adminToken()
  await ingest(admin, { graph: { nodes: NODES, edges: EDGES.map(([a, kind, b]) => ({ start: { value: a }, end: { value: b }, kind, properties: {} })) } })
})

const OU_MAP = 'MATCH p = (:Domain)-[:Contains*1..]->(:OU) RETURN p LIMIT 1000'
const unlimited: CypherLimits = { maxRows: 1e9, maxResultRows: 1e9, maxSteps: 1e9, maxMillis: 60_000, maxBytes: 1e12 }

/** The rows as object ids (paths: nodes / relationships), in order, and the plans. */
async function rowsOf(q: string, source: Parameters<typeof runQuery>[1], walkPruning: boolean, limits: CypherLimits = unlimited) {
  const r = await runQuery(parseCypher(q), source, { now: Date.now(), walkPruning, limits, hopPushdown: false })
  await loadReferenced(r)
  const oid = (id: number) => r.ctx.graph.node(id).objectid
  const show = (v: unknown): unknown =>
    v instanceof NodeRef
      ? oid(v.id)
      : v instanceof RelRef
        ? `${oid(v.start)} ${v.kind} ${oid(v.end)}`
        : v instanceof PathVal
          ? `${v.nodes.map(oid).join(',')} / ${v.rels.map(show).join(',')}`
          : Array.isArray(v)
            ? v.map(show)
            : v
  return { rows: r.rows.map((row) => JSON.stringify(row.map(show))), plans: r.ctx.plans.join(' | '), bytes: r.ctx.budget.used.bytes }
}
const d1 = (q: string, access: string[] | null) => d1GraphSource(env.DB, access && JSON.stringify(access), { nodeKeys: nodePropertyKeys(parseCypher(q)) })

/** The same graph in memory (the engine alone, no expandLevel), node ids as D1 gave them. */
async function memory(access: string[] | null) {
  const rows = (await env.DB.prepare('SELECT id, objectid, kind, kinds, name, environment_id, properties, updated_at FROM nodes').all<Record<string, string | number>>()).results
  const nodes: NodeRecord[] = rows
    .filter((n) => NODES.some((m) => m.id === n.objectid))
    .map((n) => ({ id: n.id as number, objectid: n.objectid as string, kind: n.kind as string, kinds: JSON.parse(n.kinds as string), name: n.name as string, environment_id: n.environment_id as string, properties: JSON.parse(n.properties as string), updated_at: n.updated_at as string }))
  const ids = new Set(nodes.map((n) => n.id))
  const edges = (await env.DB.prepare('SELECT id, start_id, end_id, kind, updated_at FROM edges ORDER BY id').all<Record<string, string | number>>()).results
    .filter((e) => ids.has(e.start_id as number))
    .map((e) => ({ id: e.id as number, start: e.start_id as number, end: e.end_id as number, kind: e.kind as string, properties: {}, updated_at: e.updated_at as string }))
  return memorySource(access, nodes, edges)
}

describe('variable-length walks pruned in the store (issue 28)', () => {
  it('the OU map answers under a memory limit the unpruned walk passes (every user and computer held)', async () => {
    const tight: CypherLimits = { ...DEFAULT_LIMITS, maxBytes: 64 * 1024 }
    const got = await rowsOf(OU_MAP, d1(OU_MAP, null), true, tight)
    expect(got.plans).toContain('variable-length hop 1: a level keeps the relationships whose far end passes {"kinds":["OU"]')
    // every OU reachable by Contains: through OUs, the loop and the cycle (each relationship once per path), the
    // container, the user holding an OU, and the other domain's container
    // (the order within a level follows the ids D1 gave the nodes; the differential tests below check the order)
    const paths = got.rows.map((r) => JSON.parse(r)[0].split(' / ')[0] as string)
    const depths = paths.map((x) => x.split(',').length)
    expect(depths).toEqual([...depths].sort((a, b) => a - b))
    expect([...paths].sort()).toEqual([
      `${D},OU-A`,
      `${D},OU-A,OU-B`,
      `${D},CT-USERS,OU-D`,
      `${D},OU-A,OU-B,OU-B`,
      `${D},OU-A,OU-B,OU-C`,
      `${D},CT-USERS,${D}-1000,OU-E`,
      `${D},CT-HOLD,CT-FAR,OU-G`,
      `${D},OU-A,OU-B,OU-B,OU-C`,
      // back to OU A through the cycle: a trail may pass a node twice, never a relationship
      `${D},OU-A,OU-B,OU-C,OU-A`,
      `${D},OU-A,OU-B,OU-B,OU-C,OU-A`,
    ].sort())
    expect(got.bytes).toBeLessThan(tight.maxBytes)
    await expect(rowsOf(OU_MAP, d1(OU_MAP, null), false, tight)).rejects.toThrow(/memory limit/)
  })

  const SHAPES = [
    OU_MAP,
    'MATCH p = (:Domain)-[:Contains*1..]->(:OU) RETURN p LIMIT 3',
    'MATCH p = (d:Domain)-[:Contains*2..3]->(o:OU) RETURN d.name AS d, o.name AS o',
    'MATCH (d:Domain)-[:Contains*0..]->(o:OU) RETURN o.name AS o, d.name AS d',
    'MATCH (d:Domain)-[:Contains*..2]->(o:OU) RETURN o.name AS o',
    "MATCH p = (o:OU {name: 'OU C'})<-[:Contains*1..]-(d:Domain) RETURN p",
    "MATCH p = (:Domain)-[:Contains*1..]->(o:OU) WHERE o.name ENDS WITH 'C' OR o.name = 'OU E' RETURN p",
    'MATCH (d:Domain)-[:Contains*1..]->(c:Computer) RETURN c.name AS c LIMIT 10',
    'MATCH (d:Domain)-[:Contains|GenericAll*1..]->(o:OU) RETURN o.name AS o',
    'MATCH (d:Domain)-[r:Contains*1..]->(o:OU)-[:Contains]->(c:Computer) RETURN o.name AS o, size(r) AS n, count(c) AS c',
    'MATCH (d:Domain)-[:Contains*1..2]-(o:OU) RETURN o.name AS o',
    'MATCH (d:Domain)-[:Contains*1..4]-(o:OU) RETURN o.name AS o LIMIT 20',
    'MATCH (u:User)-[:Contains*1..]->(o:OU) RETURN u.name AS u, o.name AS o',
  ]
  it.each(SHAPES)('%s: the rows of the unpruned walk, in order, for every caller; those of the engine alone', async (q) => {
    for (const access of [null, [D]]) {
      const pruned = await rowsOf(q, d1(q, access), true)
      const whole = await rowsOf(q, d1(q, access), false)
      expect(pruned.rows).toEqual(whole.rows)
      expect(whole.plans).not.toContain('variable-length hop')
      const engine = await rowsOf(q, await memory(access), true)
      if (!/LIMIT/.test(q)) expect([...pruned.rows].sort()).toEqual([...engine.rows].sort())
      else expect(pruned.rows.length).toBe(engine.rows.length)
    }
  })
})
