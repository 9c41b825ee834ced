/**
 * shortestPath / allShortestPaths against an independent answer: on small random graphs (fast-check),
 * every walk is enumerated by brute force (no relationship twice, depth by depth) and the shortest ones
 * kept; the engine (bidirectional search for one start and one end, multi-target lockstep search for
 * sets) must give exactly those (allShortestPaths) or one of them per pair (shortestPath), with and
 * without environment access. Then the memory charging of a search that cannot stop early.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { parseCypher } from '../../src/cypher/parse'
import { runQuery } from '../../src/cypher/run'
import type { CypherLimits } from '../../src/cypher/budget'
import type { EdgeRecord, NodeRecord } from '../../src/cypher/source'
import { PathVal } from '../../src/cypher/values'
import { memorySource } from './cypher-graph'

const node = (id: number, env: string, kinds: string[]): NodeRecord => ({
  id,
  objectid: `N${id}`,
  kind: kinds[0],
  kinds,
  name: `N${id}`,
  environment_id: env,
  properties: { name: `N${id}` },
  updated_at: '2026-01-01T00:00:00.000Z',
})
const edge = (id: number, start: number, kind: string, end: number): EdgeRecord => ({ id, start, end, kind, properties: {}, updated_at: '2026-01-02T00:00:00.000Z' })

type Dir = 'out' | 'in' | 'both'
const arrow = (d: Dir, kinds: string, max: number | null = null) => {
  const r = `[:${kinds}*1..${max ?? ''}]`
  return d === 'out' ? `-${r}->` : d === 'in' ? `<-${r}-` : `-${r}-`
}

/** Every shortest walk from s to t as "n r n r … n" (brute force: all trails by length until t is reached). */
function bruteShortest(nodes: NodeRecord[], edges: EdgeRecord[], access: string[] | null, s: number, t: number, dir: Dir, kinds: string[], max: number | null = null): string[] {
  // the engine, as Neo4j, gives no shortest path from a node to itself unless the minimum length is 0
  if (s === t) return []
  const vis = new Set(nodes.filter((n) => access === null || access.includes(n.environment_id!)).map((n) => n.id))
  if (!vis.has(s) || !vis.has(t)) return []
  const usable = edges.filter((e) => kinds.includes(e.kind) && vis.has(e.start) && vis.has(e.end))
  let walks: { at: number; text: string; used: Set<number> }[] = [{ at: s, text: `${s}`, used: new Set() }]
  for (let len = 1; len <= Math.min(nodes.length, max ?? Infinity) && walks.length; len++) {
    const next: typeof walks = []
    for (const w of walks)
      for (const e of usable) {
        if (w.used.has(e.id)) continue
        const tos: number[] = []
        if ((dir === 'out' || dir === 'both') && e.start === w.at) tos.push(e.end)
        if ((dir === 'in' || dir === 'both') && e.end === w.at && !(dir === 'both' && e.start === e.end)) tos.push(e.start)
        for (const to of tos) next.push({ at: to, text: `${w.text} ${e.id} ${to}`, used: new Set([...w.used, e.id]) })
      }
    const done = next.filter((w) => w.at === t).map((w) => w.text)
    if (done.length) return [...new Set(done)].sort()
    walks = next
  }
  return []
}

const text = (p: PathVal) => p.nodes.map((n, i) => (i === 0 ? `${n}` : `${p.rels[i - 1].id} ${n}`)).join(' ')

const graphArb = fc
  .record({
    n: fc.integer({ min: 2, max: 9 }),
    raw: fc.array(fc.tuple(fc.nat(), fc.nat(), fc.constantFrom('A', 'B')), { maxLength: 18 }),
    envs: fc.array(fc.boolean(), { minLength: 9, maxLength: 9 }),
    marks: fc.array(fc.subarray(['X', 'Y']), { minLength: 9, maxLength: 9 }),
    dir: fc.constantFrom<Dir>('out', 'in', 'both'),
    restricted: fc.boolean(),
    max: fc.constantFrom<number | null>(null, null, 1, 2, 3),
    s: fc.nat(),
    t: fc.nat(),
  })
  .map(({ n, raw, envs, marks, dir, restricted, max, s, t }) => ({
    max,
    nodes: Array.from({ length: n }, (_, i) => node(i + 1, envs[i] ? 'E1' : 'E2', ['Base', ...marks[i]])),
    edges: raw.map(([a, b, k], i) => edge(i + 1, (a % n) + 1, k, (b % n) + 1)),
    dir,
    access: restricted ? ['E1'] : null,
    s: (s % n) + 1,
    t: (t % n) + 1,
  }))

/**
 * Strategy thresholds (match.ts ShortestTuning), lowered so small graphs take every branch: pairwise or
 * multi-target searches, pairs put off after 0–3 nodes, store reach answers complete or too large (limits
 * down to one node).
 */
const tuningArb = fc.record({
  pairwiseMax: fc.constantFrom(0, 4, 64),
  proveAfter: fc.constantFrom(0, 1, 3, 2_000),
  reachLimit: fc.constantFrom(1, 2, 4, 32_768),
  // a multi-target shortestPath level read and answered 1, 2 or every frontier node at a time
  levelChunk: fc.constantFrom(1, 2, 2_000),
  // an end past 0, 1 or 2 nodes tested as the searches reach it, or always read whole
  lazyList: fc.constantFrom(0, 1, 2, 1e9),
  lazyScan: fc.constantFrom(0, 1, 2, 1e9),
})

describe('shortest paths equal a brute-force answer', () => {
  it('one start, one end (bidirectional search): allShortestPaths all of them, shortestPath one of them', async () => {
    await fc.assert(
      fc.asyncProperty(graphArb, async ({ nodes, edges, dir, access, max, s, t }) => {
        fc.pre(s !== t)
        const src = memorySource(access, nodes, edges)
        const want = bruteShortest(nodes, edges, access, s, t, dir, ['A'], max)
        const pattern = `((a {objectid: 'N${s}'})${arrow(dir, 'A', max)}(b {objectid: 'N${t}'}))`
        const all = await runQuery(parseCypher(`MATCH p = allShortestPaths${pattern} RETURN p`), src)
        expect(all.rows.map((r) => text(r[0] as PathVal)).sort()).toEqual(want)
        if (want.length) expect(all.ctx.plans.join()).toContain('bidirectional')
        const one = await runQuery(parseCypher(`MATCH p = shortestPath${pattern} RETURN p`), src)
        expect(one.rows.length).toBe(want.length ? 1 : 0)
        if (want.length) expect(want).toContain(text(one.rows[0][0] as PathVal))
      }),
      { numRuns: 300 },
    )
  })

  it('sets of starts and ends (a bidirectional search per pair, pairs put off and proven unreachable by the store, or multi-target searches): per pair, the same answers', async () => {
    const plans = new Set<string>()
    await fc.assert(
      fc.asyncProperty(graphArb, tuningArb, async ({ nodes, edges, dir, access, max }, shortest) => {
        const src = memorySource(access, nodes, edges)
        const all = await runQuery(parseCypher(`MATCH p = allShortestPaths((a:X)${arrow(dir, 'A|B', max)}(b:Y)) RETURN p`), src, { shortest })
        const one = await runQuery(parseCypher(`MATCH p = shortestPath((a:X)${arrow(dir, 'A|B', max)}(b:Y)) RETURN p`), src, { shortest })
        const want: string[] = []
        const pairs: string[][] = []
        for (const a of nodes.filter((n) => n.kinds.includes('X')))
          for (const b of nodes.filter((n) => n.kinds.includes('Y'))) {
            const w = bruteShortest(nodes, edges, access, a.id, b.id, dir, ['A', 'B'], max)
            want.push(...w)
            if (w.length) pairs.push(w)
          }
        expect(all.rows.map((r) => text(r[0] as PathVal)).sort()).toEqual(want.sort())
        for (const p of [...all.ctx.plans, ...one.ctx.plans])
          plans.add(
            p.includes('per pair')
              ? 'pairwise'
              : p.includes('tested as the searches reach it')
                ? 'lazy'
                : p.includes('multi-target')
                  ? 'multi'
                  : /[1-9]\d* pair\(s\) proven/.test(p)
                    ? 'proven'
                    : /[1-9]\d* target\(s\) proven unreachable from a source/.test(p)
                      ? 'targets proven'
                      : p.includes('searched pair by pair')
                        ? 'finished pairwise'
                        : 'other',
          )
        // shortest answers first
        const lengths = all.rows.map((r) => (r[0] as PathVal).rels.length)
        expect(lengths).toEqual([...lengths].sort((x, y) => x - y))
        const got = one.rows.map((r) => text(r[0] as PathVal))
        expect(got.length).toBe(pairs.length)
        for (const g of got) expect(pairs.some((p) => p.includes(g))).toBe(true)
      }),
      { numRuns: 400 },
    )
    expect(plans).toContain('pairwise')
    expect(plans).toContain('multi')
    expect(plans).toContain('proven')
    expect(plans).toContain('lazy')
  })

  it('one start and several ends (pairs searched bidirectionally, unreachable ends learnt and left out): per pair, the same answers', async () => {
    await fc.assert(
      fc.asyncProperty(graphArb, tuningArb, async ({ nodes, edges, dir, access, max, s }, shortest) => {
        const src = memorySource(access, nodes, edges)
        const pattern = `((a {objectid: 'N${s}'})${arrow(dir, 'A|B', max)}(b:Y))`
        const all = await runQuery(parseCypher(`MATCH p = allShortestPaths${pattern} RETURN p`), src, { shortest })
        const one = await runQuery(parseCypher(`MATCH p = shortestPath${pattern} RETURN p`), src, { shortest })
        const want: string[] = []
        const pairs: string[][] = []
        for (const b of nodes.filter((n) => n.kinds.includes('Y'))) {
          const w = bruteShortest(nodes, edges, access, s, b.id, dir, ['A', 'B'], max)
          want.push(...w)
          if (w.length) pairs.push(w)
        }
        expect(all.rows.map((r) => text(r[0] as PathVal)).sort()).toEqual(want.sort())
        const got = one.rows.map((r) => text(r[0] as PathVal))
        expect(got.length).toBe(pairs.length)
        for (const g of got) expect(pairs.some((p) => p.includes(g))).toBe(true)
      }),
      { numRuns: 400 },
    )
  })
})

describe('shortest-path ends read as ids (issue 28)', () => {
  it('for each row of an earlier clause: an end whose conditions read no other variable scanned once, one that reads the row per row; the same answers as brute force', async () => {
    await fc.assert(
      fc.asyncProperty(graphArb, tuningArb, async ({ nodes, edges, dir, access, max }, shortest) => {
        const src = memorySource(access, nodes, edges)
        // b's nodes read by scans (pages of 1 to 3 nodes when the lazy caps are fuzzed low: counted as nodes)
        let bRead = 0
        const counting = {
          ...src,
          scanNodes: async (...a: Parameters<typeof src.scanNodes>) => {
            const page = await src.scanNodes(...a)
            if (a[0].kinds?.join() === 'Y') bRead += page.length
            return page
          },
        }
        // rows: every visible X or Y node s; `a` is the node named as s (its condition reads the row), `b` any Y (reads none)
        const q = `MATCH (s) WHERE s:X OR s:Y MATCH p = allShortestPaths((a)${arrow(dir, 'A|B', max)}(b:Y)) WHERE a.name = s.name RETURN s.name, p`
        const got = await runQuery(parseCypher(q), counting, { shortest })
        const vis = nodes.filter((n) => access === null || access.includes(n.environment_id!))
        const want: string[] = []
        for (const s of vis.filter((n) => n.kinds.includes('X') || n.kinds.includes('Y')))
          for (const b of nodes.filter((n) => n.kinds.includes('Y'))) for (const w of bruteShortest(nodes, edges, access, s.id, b.id, dir, ['A', 'B'], max)) want.push(`${s.name}: ${w}`)
        expect(got.rows.map((r) => `${r[0]}: ${text(r[1] as PathVal)}`).sort()).toEqual(want.sort())
        // b's nodes read once, however many rows
        expect(bRead).toBeLessThanOrEqual(vis.filter((n) => n.kinds.includes('Y')).length)
      }),
      { numRuns: 300 },
    )
  })

  it('an end set larger than the row and memory budgets is searched, not refused: only its ids are held', async () => {
    // 3 000 starts (:X), three of them one or two hops from the one end (:Y)
    const nodes: NodeRecord[] = [node(1, 'E1', ['Base', 'Y']), node(2, 'E1', ['Base'])]
    for (let i = 0; i < 3000; i++) nodes.push(node(10 + i, 'E1', ['Base', 'X']))
    const edges = [edge(1, 10, 'A', 1), edge(2, 11, 'A', 2), edge(3, 2, 'A', 1), edge(4, 3009, 'A', 1)]
    const query = parseCypher('MATCH p = allShortestPaths((a:X)-[:A*1..]->(b:Y)) RETURN p')
    const want = ['10 1 1', '11 2 2 3 1', '3009 4 1']
    const fewRows: CypherLimits = { maxRows: 1_000, maxResultRows: 1e6, maxSteps: 1e6, maxMillis: 60_000, maxBytes: 64 * 1024 * 1024 }
    const fewBytes: CypherLimits = { ...fewRows, maxRows: 1e6, maxBytes: 1_500_000 }
    // (read whole: a large end tested as reached instead is the next describe's)
    const shortest = { lazyScan: Infinity, lazyList: Infinity }
    for (const limits of [fewRows, fewBytes]) {
      const r = await runQuery(query, memorySource(null, nodes, edges), { limits, shortest })
      expect(r.rows.map((row) => text(row[0] as PathVal)).sort()).toEqual(want)
      expect(r.ctx.plans.join()).toMatch(/3000 x 1, multi-target search from the end side/)
    }
    // ...and each node read is still a step: a step budget under the 3 000 starts refuses it, naming the limit
    await expect(runQuery(query, memorySource(null, nodes, edges), { limits: { ...fewRows, maxSteps: 2_000 }, shortest })).rejects.toThrow(/traversal step limit/)
  })
})

describe('a large end tested as the searches reach it (issue 28)', () => {
  /** eager: both ends read whole before the search, as before */
  const eager = { lazyList: Infinity, lazyScan: Infinity }
  it('the same rows in the same order as with the end read whole: LIMITs, derived labels and WHERE on either end, restricted callers', async () => {
    const queries = (dir: Dir, max: number | null, k: number) => [
      `MATCH p = shortestPath((a:Base)${arrow(dir, 'A|B', max)}(b:Y)) WHERE NOT a:Y RETURN p LIMIT ${k}`,
      `MATCH p = allShortestPaths((a:Base)${arrow(dir, 'A|B', max)}(b:Y)) WHERE NOT a:Y RETURN p LIMIT ${k}`,
      `MATCH p = shortestPath((a:X)${arrow(dir, 'A|B', max)}(b)) WHERE NOT b:X AND b.name <> 'N3' RETURN p LIMIT ${k}`,
      `MATCH p = allShortestPaths((a:X)${arrow(dir, 'A|B', max)}(b:Base)) RETURN p`,
      `MATCH p = shortestPath((a)${arrow(dir, 'A|B', 0)}(b:Y)) WHERE a.name STARTS WITH 'N' RETURN p`.replace('*1..0', '*0..'),
    ]
    let lazy = 0
    await fc.assert(
      fc.asyncProperty(
        graphArb,
        fc.integer({ min: 1, max: 6 }),
        fc.record({ lazyList: fc.constantFrom(0, 1, 2), lazyScan: fc.constantFrom(0, 1, 2), levelChunk: fc.constantFrom(1, 2, 2_000), pairwiseMax: fc.constantFrom(0, 64) }),
        async ({ nodes, edges, dir, access, max }, k, shortest) => {
          const src = memorySource(access, nodes, edges)
          for (const q of queries(dir, max, k)) {
            const query = parseCypher(q)
            const got = await runQuery(query, src, { shortest })
            const want = await runQuery(query, src, { shortest: { ...shortest, ...eager } })
            expect(got.rows.map((r) => (r[0] instanceof PathVal ? text(r[0]) : r))).toEqual(want.rows.map((r) => (r[0] instanceof PathVal ? text(r[0]) : r)))
            if (got.ctx.plans.some((p) => p.includes('tested as the searches reach it'))) lazy++
          }
        },
      ),
      { numRuns: 250 },
    )
    expect(lazy).toBeGreaterThan(50)
  })

  it("the console's shortest paths to Tier Zero shape: the start end is not read whole, so a LIMIT met in the first levels answers under budgets its scan would pass", async () => {
    // 1 target (:Y) <- 20 nodes <- 20 x 20 nodes; 5 000 other Base nodes (the scan of `NOT a:Y` reads them all)
    const nodes: NodeRecord[] = [node(1, 'E1', ['Base', 'Y'])]
    const edges: EdgeRecord[] = []
    const add = (to: number) => {
      const id = nodes.length + 1
      nodes.push(node(id, 'E1', ['Base']))
      edges.push(edge(edges.length + 1, id, 'A', to))
      return id
    }
    for (let i = 0; i < 20; i++) {
      const m = add(1)
      for (let j = 0; j < 20; j++) add(m)
    }
    for (let i = 0; i < 5_000; i++) nodes.push(node(nodes.length + 1, 'E1', ['Base']))
    const query = parseCypher('MATCH p = shortestPath((n:Base)-[:A*1..]->(t:Y)) WHERE NOT n:Y RETURN length(p) AS l LIMIT 30')
    const limits: CypherLimits = { maxRows: 1e6, maxResultRows: 1e6, maxSteps: 3_000, maxMillis: 60_000, maxBytes: 64 * 1024 * 1024 }
    const r = await runQuery(query, memorySource(null, nodes, edges), { limits })
    expect(r.rows).toEqual([...Array.from({ length: 20 }, () => [1]), ...Array.from({ length: 10 }, () => [2])])
    expect(r.ctx.plans.join()).toMatch(/shortestPath: \d+\+ x 1, multi-target search from the end side, 1 source\(s\) in lockstep; the start end tested as the searches reach it/)
    // read whole (as before), the start end's 5 420 nodes pass the step limit
    await expect(runQuery(query, memorySource(null, nodes, edges), { limits, shortest: eager })).rejects.toThrow(/traversal step limit/)
  })
})

describe('multi-target shortestPath levels answered chunk by chunk (issue 28)', () => {
  it('a LIMIT reached inside a level stops the search there: the rest of the level is never walked', async () => {
    // target T <- 1 500 middle nodes (level 1); each middle node <- one start (:X) and 5 other nodes (level 2:
    // 9 000 nodes). LIMIT 10 is met by the first chunk of level 2; walking all of it passes the step limit.
    const nodes: NodeRecord[] = [node(1, 'E1', ['Base', 'Y'])]
    const edges: EdgeRecord[] = []
    const add = (kinds: string[], to: number) => {
      const id = nodes.length + 1
      nodes.push(node(id, 'E1', kinds))
      edges.push(edge(edges.length + 1, id, 'A', to))
      return id
    }
    for (let i = 0; i < 1500; i++) {
      const m = add(['Base'], 1)
      add(['Base', 'X'], m)
      for (let j = 0; j < 5; j++) add(['Base'], m)
    }
    const query = parseCypher('MATCH p = shortestPath((s:X)-[:A*1..]->(t:Y)) RETURN length(p) AS l LIMIT 10')
    const limits: CypherLimits = { maxRows: 4_000, maxResultRows: 1e6, maxSteps: 8_000, maxMillis: 60_000, maxBytes: 64 * 1024 * 1024 }
    // (the start end read whole, as in the plan below: a large end tested as reached is the next describe's)
    const whole = { lazyList: Infinity, lazyScan: Infinity }
    const r = await runQuery(query, memorySource(null, nodes, edges), { limits, shortest: { levelChunk: 100, ...whole } })
    expect(r.rows).toEqual(Array.from({ length: 10 }, () => [2]))
    expect(r.ctx.plans.join()).toMatch(/1500 x 1, multi-target search from the end side/)
    // the whole level at once (as allShortestPaths must, every parent of a level: 9 000 relationships and
    // nodes) passes the step limit
    await expect(runQuery(query, memorySource(null, nodes, edges), { limits, shortest: { levelChunk: 1e9, ...whole } })).rejects.toThrow(/traversal step limit/)
  })
})

describe('shortest-path searches: access and memory', () => {
  it('a restricted caller never takes a shortcut through a node it may not see', async () => {
    // S -> X (other environment) -> T is shorter than S -> A -> B -> T
    const nodes = [node(1, 'E1', ['Base']), node(2, 'E2', ['Base']), node(3, 'E1', ['Base']), node(4, 'E1', ['Base']), node(5, 'E1', ['Base'])]
    const edges = [edge(1, 1, 'A', 2), edge(2, 2, 'A', 5), edge(3, 1, 'A', 3), edge(4, 3, 'A', 4), edge(5, 4, 'A', 5)]
    const query = parseCypher("MATCH p = shortestPath((a {objectid: 'N1'})-[:A*1..]->(b {objectid: 'N5'})) RETURN p")
    const open = await runQuery(query, memorySource(null, nodes, edges))
    expect(text(open.rows[0][0] as PathVal)).toBe('1 1 2 2 5')
    const restricted = await runQuery(query, memorySource(['E1'], nodes, edges))
    expect(text(restricted.rows[0][0] as PathVal)).toBe('1 3 3 4 4 5 5')
  })

  it('one start, several ends out of its reach with a shared backward reach: the reach is searched once, not once per end', async () => {
    // x -> 3 000 nodes (one of them a target, reached in one hop); targets t1 <- t2 <- t3 <- t4 <- 1 000
    // feeders, none reached from x. Each unreachable end's backward search would walk ~1 000 nodes again
    // (~7 000 rows in all); the first one learns that those nodes are out of x's reach.
    const nodes: NodeRecord[] = [node(1, 'E1', ['Base'])]
    const edges: EdgeRecord[] = []
    for (let i = 0; i < 3000; i++) {
      nodes.push(node(2 + i, 'E1', i === 1500 ? ['Base', 'Target'] : ['Base']))
      edges.push(edge(edges.length + 1, 1, 'A', 2 + i))
    }
    const t = [5001, 5002, 5003, 5004]
    for (const id of t) nodes.push(node(id, 'E1', ['Base', 'Target']))
    for (let i = 1; i < t.length; i++) edges.push(edge(edges.length + 1, t[i], 'A', t[i - 1]))
    for (let i = 0; i < 1000; i++) {
      nodes.push(node(6000 + i, 'E1', ['Base']))
      edges.push(edge(edges.length + 1, 6000 + i, 'A', t[3]))
    }
    const query = parseCypher("MATCH p = shortestPath((a {objectid: 'N1'})-[:A*1..]->(t:Target)) RETURN length(p)")
    const limits: CypherLimits = { maxRows: 5_000, maxResultRows: 1e6, maxSteps: 1e7, maxMillis: 60_000, maxBytes: 48 * 1024 * 1024 }
    const r = await runQuery(query, memorySource(null, nodes, edges), { limits })
    expect(r.rows).toEqual([[1]])
    expect(r.ctx.plans.join()).toMatch(/per pair/)
  })

  it('many starts x many ends, every pair far: the store statements and searches stay within the step and row budgets (400 naming the limit)', async () => {
    // 3 000 nodes in a ring with chords (every pair reachable, far apart), 8 starts x 8 ends (64 pairs)
    const n = 3_000
    const nodes = Array.from({ length: n }, (_, i) => node(i + 1, 'E1', i % 375 === 0 ? ['Base', 'X'] : i % 375 === 187 ? ['Base', 'Y'] : ['Base']))
    const edges: EdgeRecord[] = []
    for (let i = 0; i < n; i++) for (const j of [i + 1, i * 7 + 3]) edges.push(edge(edges.length + 1, i + 1, 'A', (j % n) + 1))
    const query = parseCypher('MATCH p = shortestPath((a:X)-[:A*1..]->(b:Y)) RETURN length(p)')
    for (const maxSteps of [2_000, 20_000]) {
      const limits: CypherLimits = { maxRows: 50_000, maxResultRows: 1e6, maxSteps, maxMillis: 60_000, maxBytes: 48 * 1024 * 1024 }
      const src = memorySource(null, nodes, edges)
      let counted = 0
      const counting = {
        ...src,
        async reach(...args: Parameters<typeof src.reach>) {
          const got = await src.reach(...args)
          counted += got.nodes
          return got
        },
      }
      const r = await runQuery(query, counting, { limits, shortest: { proveAfter: 50, reachLimit: 1_000 } }).catch((e: Error) => e)
      if (r instanceof Error) expect(r.message).toMatch(/traversal step limit|row limit/)
      else expect(r.rows).toHaveLength(64)
      // the statements never count into the quarter of the step budget kept for the searches
      expect(counted).toBeLessThanOrEqual(maxSteps * 0.75)
      if (maxSteps > 2_000) expect(counted).toBeGreaterThan(0)
    }
  })

  it('a search that cannot stop early holds ids, not relationship records, and is charged every relationship read', async () => {
    // 12 layers of 40 nodes, each node linked to every node of the next layer (17,600 relationships);
    // targets: the last layer's first node and 17 isolated nodes (more than 16 pairs, searched here as
    // a multi-target search: pairwiseMax 16), so the search walks everything.
    const layers = 12
    const width = 40
    const nodes: NodeRecord[] = [node(1, 'E1', ['Base'])]
    for (let l = 0; l < layers; l++) for (let i = 0; i < width; i++) nodes.push(node(2 + l * width + i, 'E1', ['Base']))
    const last = 2 + (layers - 1) * width
    nodes.find((n) => n.id === last)!.kinds.push('Target')
    for (let i = 0; i < 17; i++) nodes.push(node(2 + layers * width + i, 'E1', ['Base', 'Target']))
    const edges: EdgeRecord[] = []
    for (let i = 0; i < width; i++) edges.push(edge(edges.length + 1, 1, 'A', 2 + i))
    for (let l = 0; l + 1 < layers; l++)
      for (let i = 0; i < width; i++) for (let j = 0; j < width; j++) edges.push(edge(edges.length + 1, 2 + l * width + i, 'A', 2 + (l + 1) * width + j))
    const query = parseCypher("MATCH p = shortestPath((a {objectid: 'N1'})-[:A*1..]->(t:Target)) RETURN length(p)")
    // every relationship held as a record (200 bytes each, as before) would be ~3.5 MB: 1.5 MB is enough now
    const limits: CypherLimits = { maxRows: 1e6, maxResultRows: 1e6, maxSteps: 1e7, maxMillis: 60_000, maxBytes: 1_500_000 }
    const shortest = { pairwiseMax: 16 }
    const r = await runQuery(query, memorySource(null, nodes, edges), { limits, shortest })
    expect(r.rows).toEqual([[layers]])
    expect(r.ctx.plans.join()).toMatch(/multi-target/)
    expect(r.ctx.budget.used.steps).toBeGreaterThanOrEqual(edges.length)
    // ...and the memory it does hold is charged: a budget below one level's records refuses it
    await expect(runQuery(query, memorySource(null, nodes, edges), { limits: { ...limits, maxBytes: 200_000 }, shortest })).rejects.toThrow(/memory limit/)
  })
})

describe('multi-target searches that end without walking all they reach (issue 28)', () => {
  /**
   * The Domain Users shape: start S (:X) reaches T1 (:Y) at depth 2 and T2 (:Y) at depth 5, behind a level of
   * 100 nodes holding 4 000 relationships (and 8 000 more beyond); a second start S2 reaches only T3 (:Y), 4
   * away; five more ends (:Y) sit in small regions neither start reaches. Searching until nothing is left walks
   * ~24 000 nodes and relationships; the store proves the six S cannot reach unreachable and T2 is met pair by
   * pair from its own side, its path held until S2's shorter one is answered.
   */
  function domainUsers(): { nodes: NodeRecord[]; edges: EdgeRecord[] } {
    const nodes: NodeRecord[] = []
    const edges: EdgeRecord[] = []
    const add = (kinds: string[]) => (nodes.push(node(nodes.length + 1, 'E1', ['Base', ...kinds])), nodes.length)
    const link = (a: number, b: number) => edges.push(edge(edges.length + 1, a, 'A', b))
    const s = add(['X'])
    const m = add([])
    link(s, m)
    link(m, add(['Y']))
    const middles = Array.from({ length: 100 }, () => add([]))
    for (const n of middles) {
      link(m, n)
      for (let i = 0; i < 40; i++) {
        const leaf = add([])
        link(n, leaf)
        link(leaf, add([]))
        link(leaf, add([]))
      }
    }
    const x1 = add([])
    const x2 = add([])
    link(middles[0], x1)
    link(x1, x2)
    link(x2, add(['Y']))
    // a second start whose own end is 4 relationships away: its path comes before S's 5-relationship one
    let at = add(['X'])
    for (let i = 0; i < 3; i++) {
      const next = add([])
      link(at, next)
      at = next
    }
    link(at, add(['Y']))
    for (let k = 0; k < 5; k++) {
      const u = add([])
      link(u, add(['Y']))
    }
    return { nodes, edges }
  }

  it('targets proven unreachable by the store and the last ones met pair by pair: the same answers, shortest first, within a step limit that searching everything passes', async () => {
    const { nodes, edges } = domainUsers()
    const limits: CypherLimits = { maxRows: 1e6, maxResultRows: 1e6, maxSteps: 3_000, maxMillis: 60_000, maxBytes: 64 * 1024 * 1024 }
    const shortest = { pairwiseMax: 0, proveAfter: 50 }
    for (const fn of ['shortestPath', 'allShortestPaths']) {
      const query = parseCypher(`MATCH p = ${fn}((s:X)-[:A*1..]->(t:Y)) RETURN p`)
      const r = await runQuery(query, memorySource(null, nodes, edges), { limits, shortest })
      // the part S reaches is a tree: each end's one path by a plain breadth-first search (bruteShortest
      // enumerates trails, too slow for 12 000 relationships)
      const want = nodes
        .filter((n) => n.kinds.includes('X'))
        .flatMap((start) => {
          const parent = new Map<number, EdgeRecord>()
          for (let level = [start.id]; level.length; ) {
            const next: number[] = []
            for (const e of edges) if (level.includes(e.start) && e.end !== start.id && !parent.has(e.end)) (parent.set(e.end, e), next.push(e.end))
            level = next
          }
          const pathTo = (t: number): string => (t === start.id ? `${t}` : `${pathTo(parent.get(t)!.start)} ${parent.get(t)!.id} ${t}`)
          return nodes.filter((n) => n.kinds.includes('Y') && parent.has(n.id)).map((t) => pathTo(t.id))
        })
        .sort((a, b) => a.split(' ').length - b.split(' ').length)
      expect(want.map((w) => (w.split(' ').length - 1) / 2)).toEqual([2, 4, 5])
      expect(r.rows.map((row) => text(row[0] as PathVal))).toEqual(want)
      const plan = r.ctx.plans.join(' | ')
      expect(plan).toContain('multi-target search from the start side, 2 source(s)')
      expect(plan).toMatch(/ 6 target\(s\) proven unreachable from a source/)
      expect(plan).toContain('1 target(s) left before a large level searched pair by pair')
      // searching until nothing is left (the store never asked, no pair searched alone) passes the step limit
      await expect(runQuery(query, memorySource(null, nodes, edges), { limits, shortest: { ...shortest, proveAfter: Infinity } })).rejects.toThrow(/traversal step limit/)
    }
  })

  it("a level reaching thousands of ends answers them a batch at a time, so a LIMIT stops before the rest's paths are read", async () => {
    // end T (:Y) <- 9 000 starts (:X): the search from T reaches them all in one level of one frontier node
    const nodes: NodeRecord[] = [node(1, 'E1', ['Base', 'Y'])]
    const edges: EdgeRecord[] = []
    for (let i = 0; i < 9_000; i++) {
      nodes.push(node(i + 2, 'E1', ['Base', 'X']))
      edges.push(edge(i + 1, i + 2, 'A', 1))
    }
    const limits: CypherLimits = { maxRows: 4_000, maxResultRows: 1e6, maxSteps: 1e6, maxMillis: 60_000, maxBytes: 64 * 1024 * 1024 }
    const r = await runQuery(parseCypher('MATCH p = shortestPath((s:X)-[:A*1..]->(t:Y)) RETURN p LIMIT 10'), memorySource(null, nodes, edges), { limits })
    expect(r.rows.map((row) => text(row[0] as PathVal))).toEqual(Array.from({ length: 10 }, (_, i) => `${i + 2} ${i + 1} 1`))
    expect(r.ctx.plans.join()).toMatch(/x 1, multi-target search from the end side/)
    expect(r.ctx.budget.used.rows).toBeLessThan(1_000)
  })

  it('a level stops being read once every search has reached all its ends', async () => {
    // S (:X) -> 1 000 middles, the first of them -> T (:Y); each middle -> 10 leaves. Read 10 frontier nodes at
    // a time, level 2 stops after its first part (T found): ~2 100 steps instead of ~23 000
    const nodes: NodeRecord[] = [node(1, 'E1', ['Base', 'X']), node(2, 'E1', ['Base', 'Y'])]
    const edges: EdgeRecord[] = []
    const link = (a: number, b: number) => edges.push(edge(edges.length + 1, a, 'A', b))
    for (let i = 0; i < 1_000; i++) {
      const m = nodes.push(node(nodes.length + 1, 'E1', ['Base'])) && nodes.length
      link(1, m)
      if (i === 0) link(m, 2)
      for (let j = 0; j < 10; j++) link(m, nodes.push(node(nodes.length + 1, 'E1', ['Base'])) && nodes.length)
    }
    const limits: CypherLimits = { maxRows: 1e6, maxResultRows: 1e6, maxSteps: 5_000, maxMillis: 60_000, maxBytes: 64 * 1024 * 1024 }
    const query = parseCypher('MATCH p = shortestPath((s:X)-[:A*1..]->(t:Y)) RETURN length(p) AS l')
    const r = await runQuery(query, memorySource(null, nodes, edges), { limits, shortest: { pairwiseMax: 0, levelChunk: 10 } })
    expect(r.rows).toEqual([[2]])
    expect(r.ctx.plans.join()).toMatch(/1 x 1, multi-target search from the start side/)
    // the whole level read: past the step limit
    await expect(runQuery(query, memorySource(null, nodes, edges), { limits, shortest: { pairwiseMax: 0, levelChunk: 1e9 } })).rejects.toThrow(/traversal step limit/)
  })
})
