/**
 * Shortest paths proven unreachable in bulk by the D1 store (cypher.store.ts `reach`, one recursive
 * statement): its answers equal a breadth-first closure computed here (directions, kinds, environment
 * access, its node limit), and queries over D1 answer exactly as the in-memory source (whose answers
 * test/unit/cypher-shortest.test.ts checks against brute force), with the statement's bounds lowered so
 * small graphs take every branch. Then the shape that motivated it (issue 14's benchmark: starts and ends
 * in two regions, a restricted caller): exact answers, unreachable pairs proven by the store, and a
 * restricted caller's reach never crossing a node it may not see.
 */
import { env } from 'cloudflare:test'
import fc from 'fast-check'
import { afterEach, describe, expect, it } from 'vitest'
import { d1GraphSource } from '../../src/cypher/cypher.store'
import { parseCypher } from '../../src/cypher/parse'
import { runQuery } from '../../src/cypher/run'
import type { EdgeRecord, NodeRecord } from '../../src/cypher/source'
import { memorySource } from '../unit/cypher-graph'
import { PathVal } from '../../src/cypher/values'
import { ID_CEILING } from '../../src/graph/ids'

/** ids of this file's rows (kept apart from anything else in the database) */
// node and edge ids in the random-id range (src/graph/ids.ts), at its top end, away from ingested ones
const BASE = ID_CEILING - 3_000_000

const node = (id: number, envId: string, kinds: string[]): NodeRecord => ({
  id: BASE + id,
  objectid: `R${id}`,
  kind: kinds[0],
  kinds,
  name: `R${id}`,
  environment_id: envId,
  properties: { name: `R${id}` },
  updated_at: '2026-01-01T00:00:00.000Z',
})
const edge = (id: number, start: number, kind: string, end: number): EdgeRecord => ({
  id: BASE + id,
  start: BASE + start,
  end: BASE + end,
  kind,
  properties: {},
  updated_at: '2026-01-02T00:00:00.000Z',
})

async function clear(): Promise<void> {
  await env.DB.batch([env.DB.prepare('DELETE FROM edges WHERE id >= ?1').bind(BASE), env.DB.prepare('DELETE FROM nodes WHERE id >= ?1').bind(BASE)])
}

async function load(nodes: NodeRecord[], edges: EdgeRecord[]): Promise<void> {
  await clear()
  const stamp = '2026-01-01T00:00:00.000Z'
  const statements: D1PreparedStatement[] = []
  for (let i = 0; i < nodes.length; i += 2_000)
    statements.push(
      env.DB.prepare(
        `INSERT INTO nodes (id, objectid, kind, kinds, name, environment_id, properties, created_at, updated_at)
         SELECT json_extract(value, '$.id'), json_extract(value, '$.objectid'), json_extract(value, '$.kind'), json_extract(value, '$.kinds'),
                json_extract(value, '$.name'), json_extract(value, '$.env'), json_extract(value, '$.properties'), ?2, ?2
         FROM json_each(?1)`,
      ).bind(
        JSON.stringify(
          nodes
            .slice(i, i + 2_000)
            .map((n) => ({ id: n.id, objectid: n.objectid, kind: n.kind, kinds: JSON.stringify(n.kinds), name: n.name, env: n.environment_id, properties: JSON.stringify(n.properties) })),
        ),
        stamp,
      ),
    )
  for (let i = 0; i < edges.length; i += 2_000)
    statements.push(
      env.DB.prepare(
        `INSERT INTO edges (id, start_id, end_id, kind, created_at, updated_at)
         SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]'), json_extract(value, '$[2]'), json_extract(value, '$[3]'), ?2, ?2 FROM json_each(?1)`,
      ).bind(JSON.stringify(edges.slice(i, i + 2_000).map((e) => [e.id, e.start, e.end, e.kind])), stamp),
    )
  await env.DB.batch(statements)
}

afterEach(clear)

/** Relationships with the store's uniqueness: one per (start, kind, end), ids renumbered. */
function unique(edges: EdgeRecord[]): EdgeRecord[] {
  const seen = new Set<string>()
  return edges.filter((e) => !seen.has(`${e.start}|${e.kind}|${e.end}`) && !!seen.add(`${e.start}|${e.kind}|${e.end}`)).map((e, i) => ({ ...e, id: BASE + i + 1 }))
}

type Dir = 'out' | 'in' | 'both'

/** The closure computed here: nodes reachable from the visible seeds through visible nodes (seeds included). */
function closure(nodes: NodeRecord[], edges: EdgeRecord[], access: string[] | null, seeds: number[], dir: Dir, kinds: string[] | null): Set<number> {
  const vis = new Set(nodes.filter((n) => access === null || access.includes(n.environment_id!)).map((n) => n.id))
  const seen = new Set(seeds.filter((s) => vis.has(s)))
  let grew = true
  while (grew) {
    grew = false
    for (const e of edges) {
      if (kinds && !kinds.includes(e.kind)) continue
      const steps: [number, number][] = []
      if (dir !== 'in') steps.push([e.start, e.end])
      if (dir !== 'out') steps.push([e.end, e.start])
      for (const [from, to] of steps)
        if (seen.has(from) && vis.has(to) && !seen.has(to)) {
          seen.add(to)
          grew = true
        }
    }
  }
  return seen
}

const graphArb = fc
  .record({
    n: fc.integer({ min: 2, max: 10 }),
    raw: fc.array(fc.tuple(fc.nat(), fc.nat(), fc.constantFrom('A', 'B')), { maxLength: 20 }),
    envs: fc.array(fc.boolean(), { minLength: 10, maxLength: 10 }),
    marks: fc.array(fc.subarray(['X', 'Y']), { minLength: 10, maxLength: 10 }),
    dir: fc.constantFrom<Dir>('out', 'in', 'both'),
    restricted: fc.boolean(),
  })
  .map(({ n, raw, envs, marks, dir, restricted }) => ({
    nodes: Array.from({ length: n }, (_, i) => node(i + 1, envs[i] ? 'E1' : 'E2', ['Base', ...marks[i]])),
    edges: unique(raw.map(([a, b, k], i) => edge(i + 1, (a % n) + 1, k, (b % n) + 1))),
    dir,
    access: restricted ? ['E1'] : null,
  }))

describe('the store proves unreachability in one statement', () => {
  it('reach equals the closure computed here: directions, kinds, environment access, node limit', async () => {
    await fc.assert(
      fc.asyncProperty(
        graphArb,
        fc.subarray([1, 2, 3, 4, 5], { minLength: 1 }),
        fc.constantFrom<string[] | null>(null, ['A'], ['A', 'B']),
        fc.integer({ min: 1, max: 12 }),
        async ({ nodes, edges, dir, access }, picks, kinds, limit) => {
          await load(nodes, edges)
          const seeds = [...new Set(picks.map((p) => BASE + ((p - 1) % nodes.length) + 1))]
          const targets = nodes.map((n) => n.id)
          const want = closure(nodes, edges, access, seeds, dir, kinds)
          const got = await d1GraphSource(env.DB, access === null ? null : JSON.stringify(access)).reach(seeds, dir, kinds, limit, targets)
          // the limit bounds what it counts; below it, the answer is the closure, exactly
          expect(got.nodes).toBe(Math.min(want.size, limit))
          expect(got.complete).toBe(want.size < limit)
          if (got.complete) expect(got.found.sort((a, b) => a - b)).toEqual([...want].sort((a, b) => a - b))
          else for (const f of got.found) expect(want.has(f)).toBe(true)
          // the unit tests' in-memory source answers the same (its property tests stand for the store's)
          const mem = await memorySource(access, nodes, edges).reach(seeds, dir, kinds, limit, targets)
          expect(mem.nodes).toBe(got.nodes)
          expect(mem.complete).toBe(got.complete)
          if (got.complete) expect(mem.found.sort((a, b) => a - b)).toEqual(got.found)
        },
      ),
      { numRuns: 60 },
    )
  })

  it('shortest paths over D1 with every strategy branch equal the in-memory answers', async () => {
    await fc.assert(
      fc.asyncProperty(
        graphArb,
        fc.record({
          pairwiseMax: fc.constantFrom(0, 64),
          proveAfter: fc.constantFrom(0, 1, 3),
          reachLimit: fc.constantFrom(1, 3, 50),
          levelChunk: fc.constantFrom(1, 2_000),
          // an end past 0 or 1 node(s) tested as the searches reach it (D1: listed ends by nodeIds, scanned ones by scanNodes)
          lazyList: fc.constantFrom(0, 1, 1e9),
          lazyScan: fc.constantFrom(0, 1, 1e9),
        }),
        fc.integer({ min: 1, max: 4 }),
        async ({ nodes, edges, dir, access }, shortest, k) => {
          await load(nodes, edges)
          const r = dir === 'out' ? '-[:A|B*1..]->' : dir === 'in' ? '<-[:A|B*1..]-' : '-[:A|B*1..]-'
          const queries = [
            `MATCH p = allShortestPaths((a:X)${r}(b:Y)) RETURN p`,
            `MATCH p = shortestPath((a:X)${r}(b:Y)) RETURN length(p), a.name, b.name`,
            // the order and the cut at a LIMIT as well (the row sequence compared): a derived-label condition
            // (scanned) and a listed end, either of them tested as reached
            `MATCH p = shortestPath((a:Base)${r}(b:Y)) WHERE NOT a:Y RETURN p LIMIT ${k}`,
            `MATCH p = allShortestPaths((a:X)${r}(b:Base)) WHERE NOT b:X RETURN p LIMIT ${k}`,
          ]
          for (const q of queries) {
            const query = parseCypher(q)
            const d1 = await runQuery(query, d1GraphSource(env.DB, access === null ? null : JSON.stringify(access)), { shortest })
            const mem = await runQuery(query, memorySource(access, nodes, edges), { shortest })
            const show = (rows: unknown[][]) => rows.map((row) => JSON.stringify(row)).sort()
            if (q.includes('LIMIT')) {
              // the paths cut at a LIMIT depend on the order the store returns parallel relationships in (D1 and
              // the in-memory source differ there): over D1, the same rows in the same order as with both ends
              // read whole; without the LIMIT, the in-memory answer
              const whole = await runQuery(query, d1GraphSource(env.DB, access === null ? null : JSON.stringify(access)), { shortest: { ...shortest, lazyList: 1e9, lazyScan: 1e9 } })
              expect(d1.rows.map((row) => JSON.stringify(row))).toEqual(whole.rows.map((row) => JSON.stringify(row)))
              const open = parseCypher(q.replace(/ LIMIT \d+$/, ''))
              const d1All = await runQuery(open, d1GraphSource(env.DB, access === null ? null : JSON.stringify(access)), { shortest })
              const memAll = await runQuery(open, memorySource(access, nodes, edges), { shortest })
              if (q.includes('allShortestPaths')) expect(show(d1All.rows)).toEqual(show(memAll.rows))
              // shortestPath: any of the shortest per pair: the pairs and lengths must agree
              else {
                const ends = (rows: unknown[][]) => rows.map((row) => ((p: PathVal) => `${p.nodes[0]} ${p.nodes[p.nodes.length - 1]} ${p.rels.length}`)(row[0] as PathVal)).sort()
                expect(ends(d1All.rows)).toEqual(ends(memAll.rows))
              }
            } else expect(show(d1.rows)).toEqual(show(mem.rows))
          }
        },
      ),
      { numRuns: 25 },
    )
  })
})

describe('starts and ends in two regions (the benchmark shape)', () => {
  /**
   * Two regions, each strongly connected with a small diameter (a ring with chords): A (1 200 nodes) and
   * B (400), all in environment E1; 3 starts (:X) and one end (:Y) in each. A node Z of environment E2
   * links start 1 of A to B's end. Every start reaches its own region's end; only through Z does a start
   * reach the other region.
   */
  function regions(): { nodes: NodeRecord[]; edges: EdgeRecord[]; a: number[]; b: number[] } {
    const nodes: NodeRecord[] = []
    const edges: EdgeRecord[] = []
    const region = (first: number, size: number): number[] => {
      const ids = Array.from({ length: size }, (_, i) => first + i)
      for (const id of ids) nodes.push(node(id, 'E1', ['Base']))
      ids.forEach((id, i) => {
        for (const j of [i + 1, i * 7 + 3, i * 13 + 5]) edges.push(edge(edges.length + 1, id, 'A', ids[j % size]))
      })
      return ids
    }
    const a = region(1, 1_200)
    const b = region(2_001, 400)
    for (const id of [a[10], a[20], a[30], b[10], b[20], b[30]]) nodes.find((n) => n.id === BASE + id)!.kinds.push('X')
    for (const id of [a[600], b[200]]) nodes.find((n) => n.id === BASE + id)!.kinds.push('Y')
    nodes.push(node(3_000, 'E2', ['Base']))
    edges.push(edge(edges.length + 1, a[10], 'A', 3_000), edge(edges.length + 2, 3_000, 'A', b[200]))
    return { nodes, edges: unique(edges), a, b }
  }

  /** shortest length per (start, end) pair, by breadth-first search here */
  function lengths(nodes: NodeRecord[], edges: EdgeRecord[], access: string[] | null): string[] {
    const vis = new Set(nodes.filter((n) => access === null || access.includes(n.environment_id!)).map((n) => n.id))
    const out = new Map<number, number[]>()
    for (const e of edges) if (vis.has(e.start) && vis.has(e.end)) out.set(e.start, [...(out.get(e.start) ?? []), e.end])
    const rows: string[] = []
    for (const s of nodes.filter((n) => n.kinds.includes('X') && vis.has(n.id))) {
      const depth = new Map([[s.id, 0]])
      let frontier = [s.id]
      while (frontier.length) {
        const next: number[] = []
        for (const u of frontier) for (const v of out.get(u) ?? []) if (!depth.has(v)) (depth.set(v, depth.get(u)! + 1), next.push(v))
        frontier = next
      }
      for (const t of nodes.filter((n) => n.kinds.includes('Y') && vis.has(n.id))) if (depth.has(t.id)) rows.push(JSON.stringify([depth.get(t.id), s.name, t.name]))
    }
    return rows.sort()
  }

  it('answers exactly, proves the other region unreachable with the store, and a restricted caller is never carried across Z', async () => {
    const { nodes, edges } = regions()
    await load(nodes, edges)
    const query = parseCypher('MATCH p = shortestPath((a:X)-[:A*1..]->(b:Y)) RETURN length(p), a.name, b.name')
    // statement bounds lowered to the regions' scale: region A's reach (1 200) is too large to tell, B's (400) is not
    const shortest = { proveAfter: 300, reachLimit: 1_000 }
    const show = (rows: unknown[][]) => rows.map((row) => JSON.stringify(row)).sort()

    const open = await runQuery(query, d1GraphSource(env.DB, null), { shortest })
    expect(show(open.rows)).toEqual(lengths(nodes, edges, null))
    expect(show(open.rows)).toContain(JSON.stringify([2, 'R11', 'R2201']))

    const restricted = await runQuery(query, d1GraphSource(env.DB, JSON.stringify(['E1'])), { shortest })
    const want = lengths(nodes, edges, ['E1'])
    expect(show(restricted.rows)).toEqual(want)
    expect(want).toHaveLength(6)
    // the six cross-region pairs are proven by the store (had its recursion crossed Z, start 1 of A would
    // lie in B's end's backward reach, and that pair would be searched to the end instead)
    expect(restricted.ctx.plans.join()).toMatch(/ 6 pair\(s\) proven unreachable/)
    // two statements, none too large: B's starts' reach (their group, put off by A's end), then B's end's
    // own reach first (it lies in that complete reach, A's starts outside it), never A's starts' reach
    expect(restricted.ctx.plans.join()).toMatch(/reachability in the store: 2 statement\(s\), 2 complete/)

    // the same query searching each pair to the end (the store never asked) costs more steps (each node a
    // search reaches is a step, and its relationships read are more steps)
    const exhaustive = await runQuery(query, d1GraphSource(env.DB, JSON.stringify(['E1'])), { shortest: { proveAfter: Infinity } })
    expect(show(exhaustive.rows)).toEqual(want)
    expect(restricted.ctx.budget.used.steps).toBeLessThan(exhaustive.ctx.budget.used.steps)
  })

  it('each statement is charged every node it counted, and is limited to the steps left above a quarter of the budget', async () => {
    const { nodes, edges } = regions()
    await load(nodes, edges)
    const query = parseCypher('MATCH p = shortestPath((a:X)-[:A*1..]->(b:Y)) RETURN length(p), a.name, b.name')
    const limits = { maxRows: 100_000, maxResultRows: 1_000, maxSteps: 40_000, maxMillis: 30_000, maxBytes: 48 * 1024 * 1024 }
    const store = d1GraphSource(env.DB, JSON.stringify(['E1']))
    const calls: { limit: number; nodes: number }[] = []
    const source = {
      ...store,
      async reach(...args: Parameters<typeof store.reach>) {
        const r = await store.reach(...args)
        calls.push({ limit: args[3], nodes: r.nodes })
        return r
      },
    }
    const r = await runQuery(query, source, { limits, shortest: { proveAfter: 300, reachLimit: 1_000 } })
    expect(calls.length).toBeGreaterThan(0)
    for (const c of calls) expect(c.limit).toBeLessThanOrEqual(1_000)
    expect(r.ctx.budget.used.steps).toBeGreaterThanOrEqual(calls.reduce((n, c) => n + c.nodes, 0))
    // with a budget whose spare quarter is gone, no statement is made and the pairs are searched (or refused)
    calls.length = 0
    const tight = { ...limits, maxSteps: 2_000 }
    const t = await runQuery(query, source, { limits: tight, shortest: { proveAfter: 300, reachLimit: 1_000 } }).catch((e: Error) => e)
    if (t instanceof Error) expect(t.message).toMatch(/traversal step limit/)
    for (const c of calls) expect(c.limit).toBeLessThanOrEqual(tight.maxSteps * 0.75)
  })
})
