/**
 * Counts answered by the store (src/cypher/counts.ts) against the walk: on small random graphs (fast-check)
 * with duplicate names, computers without sessions, far nodes of other labels, self-loops, parallel
 * relationships and two environments, every query of the shapes below must give the same answer with the
 * push-down as without it (RunOptions.countPushdown false: every match walked), for every caller. A LIMIT
 * without ORDER BY may pick any groups, so there each returned row must be a row of the full answer (its
 * whole count) and the number of rows must be the same. Then which shapes are pushed down, and what they
 * cost.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { parseCypher } from '../../src/cypher/parse'
import { runQuery, type QueryResult } from '../../src/cypher/run'
import type { EdgeRecord, NodeRecord } from '../../src/cypher/source'
import { NodeRef, type Value } from '../../src/cypher/values'
import { memorySource } from './cypher-graph'
import { DEFAULT_LIMITS } from '../../src/cypher/budget'

const NOW = Date.UTC(2026, 0, 10)

const FIRST = [
  'MATCH (c:Computer) ',
  'MATCH (c) ',
  'MATCH (c:Computer)-[:MemberOf]->(x) ',
  "MATCH (c:Computer) WHERE c.name <> 'N0' ",
  'MATCH (c:Computer) WHERE NOT (c)<-[:AdminTo]-() ',
  "MATCH (c) WHERE c.name = 'N1' OR (c)-[:MemberOf]->() ",
]
const REL = ['-[:HasSession]->', '<-[:HasSession]-', '-[:HasSession]-', '-[:HasSession|AdminTo]->', '-->', '-[r:HasSession]->']
const FAR = ['(u)', '(u:User)', '(u:User:Base)', '(u:Base)', '(u {enabled: true})', "(u:User {name: 'N1'})", "(u {title: 'a'})", "(u {objectid: 'O3'})", '(u:Tag_Owned)', '(u {title: 1})', '()']
const PROJECTION = [
  'RETURN c.name, count(u)',
  'RETURN c, count(u) AS n',
  'WITH c, count(u) AS n WHERE n > 0 RETURN c.name, n',
  'RETURN c.name AS k, count(*) AS n',
  'RETURN count(u) AS n',
  'RETURN c, count(DISTINCT u) AS n',
  'RETURN c.name, count(DISTINCT u) AS n',
  'RETURN c, count(r) AS n',
  'RETURN c.name, count(u) * 2 AS d, count(*) AS s',
  'RETURN c.name, count(u) AS n ORDER BY count(u) DESC, c.name',
  'RETURN DISTINCT count(u) AS n',
  'RETURN c.name, collect(u.name) AS names',
]

const node = (id: number, env: string, kinds: string[], name: string, props: Record<string, unknown>): NodeRecord => ({
  id,
  objectid: `O${id}`,
  kind: kinds[0],
  kinds,
  name,
  environment_id: env,
  properties: { name, ...props },
  updated_at: '2026-01-01T00:00:00.000Z',
})
const edge = (id: number, start: number, kind: string, end: number): EdgeRecord => ({ id, start, end, kind, properties: {}, updated_at: '2026-01-02T00:00:00.000Z' })

const graphArb = fc
  .record({
    n: fc.integer({ min: 1, max: 10 }),
    nodes: fc.array(
      fc.record({
        kinds: fc.constantFrom<string[]>(['Computer', 'Base'], ['Computer'], ['User', 'Base'], ['User'], ['Group', 'Base'], ['Tag_Owned', 'User']),
        name: fc.constantFrom('N0', 'N1', 'N2'),
        env: fc.boolean(),
        enabled: fc.constantFrom<unknown>(true, false, 'true', 1, undefined),
        title: fc.constantFrom<unknown>('a', 'b', 1, ['a'], undefined),
      }),
      { minLength: 10, maxLength: 10 },
    ),
    raw: fc.array(fc.tuple(fc.nat(), fc.nat(), fc.constantFrom('HasSession', 'HasSession', 'AdminTo', 'MemberOf')), { maxLength: 24 }),
    restricted: fc.boolean(),
  })
  .map(({ n, nodes, raw, restricted }) => ({
    nodes: nodes.slice(0, n).map((x, i) => {
      const props: Record<string, unknown> = {}
      if (x.enabled !== undefined) props.enabled = x.enabled
      if (x.title !== undefined) props.title = x.title
      return node(i + 1, x.env ? 'E1' : 'E2', x.kinds, x.name, props)
    }),
    edges: raw.map(([a, b, k], i) => edge(i + 1, (a % n) + 1, k, (b % n) + 1)),
    access: restricted ? ['E1'] : null,
  }))

const show = (v: Value): unknown => (v instanceof NodeRef ? `#${v.id}` : Array.isArray(v) ? [...v.map(show)].sort() : v)
const rowsOf = (r: QueryResult) => r.rows.map((row) => JSON.stringify(row.map(show)))

async function run(text: string, g: { nodes: NodeRecord[]; edges: EdgeRecord[]; access: string[] | null }, countPushdown: boolean) {
  return runQuery(parseCypher(text), memorySource(g.access, g.nodes, g.edges), { now: NOW, countPushdown })
}

describe('counts answered by the store = the walk (random graphs)', () => {
  it('OPTIONAL MATCH and MATCH, every direction, far-node conditions and projection, with and without access', async () => {
    await fc.assert(
      fc.asyncProperty(
        graphArb,
        fc.constantFrom(...FIRST),
        fc.boolean(),
        fc.constantFrom(...REL),
        fc.constantFrom(...FAR),
        fc.constantFrom(...PROJECTION),
        fc.constantFrom<number | null>(null, null, 1, 2),
        async (g, first, optional, rel, far, projection, limit) => {
          const text = `${first}${optional ? 'OPTIONAL ' : ''}MATCH (c)${rel}${far} ${projection}`
          // patterns the projection cannot read (no r, or an anonymous far node) are not queries to compare
          if ((projection.includes('(r)') && !rel.includes('r:')) || (far === '()' && /\bu\b/.test(projection))) return
          const walked = rowsOf(await run(text, g, false))
          if (limit === null || /ORDER BY/.test(projection)) {
            const pushed = rowsOf(await run(limit === null ? text : `${text} LIMIT ${limit}`, g, true))
            const expected = limit === null ? walked : walked.slice(0, limit)
            expect(/ORDER BY/.test(projection) ? pushed : [...pushed].sort(), text).toEqual(/ORDER BY/.test(projection) ? expected : [...expected].sort())
            return
          }
          const pushed = rowsOf(await run(`${text} LIMIT ${limit}`, g, true))
          expect(pushed.length, text).toBe(Math.min(limit, walked.length))
          for (const row of pushed) expect(walked, `${text} LIMIT ${limit}`).toContain(row)
        },
      ),
      { numRuns: 400 },
    )
  })

  it('the count MATCH as the first clause (g scanned), every direction and far node', async () => {
    await fc.assert(
      fc.asyncProperty(graphArb, fc.constantFrom(...REL), fc.constantFrom(...FAR), fc.constantFrom('WITH c, count(u) AS n RETURN c, n', 'WITH c.name AS k, count(*) AS n RETURN k, n', 'RETURN c, count(DISTINCT u) AS n'), async (g, rel, far, projection) => {
        const text = `MATCH (c:Computer)${rel}${far} ${projection}`
        if (far === '()' && /\bu\b/.test(projection)) return
        expect([...rowsOf(await run(text, g, true))].sort(), text).toEqual([...rowsOf(await run(text, g, false))].sort())
      }),
      { numRuns: 200 },
    )
  })
})

describe('which counts the store answers', () => {
  const g = {
    // two computers named WS (one with two sessions, one with a session to a group), one without any
    nodes: [
      node(1, 'E1', ['Computer', 'Base'], 'WS', {}),
      node(2, 'E1', ['Computer', 'Base'], 'WS', {}),
      node(3, 'E1', ['Computer', 'Base'], 'SRV', {}),
      node(4, 'E1', ['User', 'Base'], 'U1', { enabled: true }),
      node(5, 'E2', ['User', 'Base'], 'U2', { enabled: 'true' }),
      node(6, 'E1', ['Group', 'Base'], 'G', {}),
    ],
    edges: [edge(1, 1, 'HasSession', 4), edge(2, 1, 'HasSession', 5), edge(3, 2, 'HasSession', 6), edge(4, 2, 'HasSession', 4)],
    access: null as string[] | null,
  }
  const plan = (r: QueryResult) => r.ctx.plans.join(' | ')

  it("the benchmark's query: one group per name (sum of its computers' counts), 0 for a computer without sessions, far label tested, no relationship or user read", async () => {
    const text = 'MATCH (c:Computer) OPTIONAL MATCH (c)-[:HasSession]->(u:User) RETURN c.name, count(u) ORDER BY c.name'
    const r = await run(text, g, true)
    expect(r.rows).toEqual([
      ['SRV', 0],
      ['WS', 3],
    ])
    // the first MATCH and the count are one stage: the scan of c, then its counts
    expect(plan(r)).toMatch(/^scan {"kinds":\["Computer"\][^|]*; count of outgoing HasSession relationships per node whose other end is \(:User\) \(optional\), in the store$/)
    expect(r.ctx.rels.size).toBe(0)
    expect([...r.ctx.nodes.keys()].sort()).toEqual([1, 2, 3])
    // a restricted caller: U2 (E2) is not counted
    expect((await run(text, { ...g, access: ['E1'] }, true)).rows).toEqual([
      ['SRV', 0],
      ['WS', 2],
    ])
    // enabled must be the boolean true: U2's string 'true' does not count
    expect((await run('MATCH (c:Computer) OPTIONAL MATCH (c)-[:HasSession]->(u:User {enabled: true}) RETURN c.name, count(u) ORDER BY c.name', g, true)).rows).toEqual([
      ['SRV', 0],
      ['WS', 2],
    ])
  })

  it('grouped by the node itself with each node once: the projection streams, LIMIT stops the scan', async () => {
    const many = {
      nodes: Array.from({ length: 3000 }, (_, i) => node(i + 1, 'E1', ['Computer'], `C${i}`, {})),
      edges: [edge(1, 1, 'HasSession', 2)],
      access: null,
    }
    const src = memorySource(null, many.nodes, many.edges)
    const r = await runQuery(parseCypher('MATCH (c:Computer) OPTIONAL MATCH (c)-[:HasSession]->(u) RETURN c, count(u) AS n LIMIT 3'), src, { now: NOW })
    expect(r.rows.map((row) => row[1])).toEqual([1, 0, 0])
    // the first scan page (1,000 nodes) and its count statement: the scan did not go on
    expect(src.calls).toBe(2)
    expect(r.ctx.budget.used.steps).toBeLessThan(1_100)
  })

  it('shapes that are not pushed down are walked (same answers: see the random graphs above)', async () => {
    for (const text of [
      'MATCH (c:Computer) OPTIONAL MATCH (c)-[:HasSession]->(u:Tag_Owned) RETURN c.name, count(u)', // derived label
      'MATCH (c:Computer) OPTIONAL MATCH (c)-[:HasSession]->(u {title: 1}) RETURN c.name, count(u)', // a number
      'MATCH (c:Computer) OPTIONAL MATCH (c)-[:HasSession]->(u) WHERE u.enabled RETURN c.name, count(u)', // a WHERE
      'MATCH (c:Computer) OPTIONAL MATCH (c)-[:HasSession]->(u) RETURN c.name, count(DISTINCT u)', // distinct across nodes
      'MATCH (c:Computer) OPTIONAL MATCH (c)-[:HasSession]->(u) RETURN c.name, count(u), collect(u.name)', // another aggregate
      'MATCH (c:Computer) OPTIONAL MATCH (c)-[:HasSession]->(u) RETURN u.name, count(u)', // a key reads u
      'MATCH (c:Computer) OPTIONAL MATCH (c)-[:HasSession*1..2]->(u) RETURN c.name, count(u)', // a range
      'OPTIONAL MATCH (c:Computer)-[:HasSession]->(u) RETURN c.name, count(u)', // g not bound
    ])
      expect(plan(await run(text, g, true)), text).not.toMatch(/in the store/)
    for (const text of [
      'MATCH (c:Computer) OPTIONAL MATCH (c)<-[:AdminTo|HasSession]-(u:Base) WITH c, count(u) AS n WHERE n > 0 RETURN c',
      'MATCH (c:Computer) MATCH (c)-[r]-() RETURN c.name, count(r)',
      'MATCH (c:Computer) OPTIONAL MATCH (c)-[:HasSession]->(u) RETURN c, count(DISTINCT u)',
    ])
      expect(plan(await run(text, g, true)), text).toMatch(/in the store/)
  })

  it('budgets: each counted relationship is a traversal step', async () => {
    const text = 'MATCH (c:Computer) OPTIONAL MATCH (c)-[:HasSession]->(u) RETURN c.name, count(u)'
    const r = await run(text, g, true)
    // 3 computers scanned + 4 sessions counted
    expect(r.ctx.budget.used.steps).toBe(7)
    await expect(runQuery(parseCypher(text), memorySource(null, g.nodes, g.edges), { now: NOW, limits: { ...DEFAULT_LIMITS, maxSteps: 5 } })).rejects.toThrow(/traversal step limit/)
  })
})
