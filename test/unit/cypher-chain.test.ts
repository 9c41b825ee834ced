/**
 * Chains of 2-3 single relationships with a constant LIMIT answered by one join per page (issue 28, onehop.ts):
 * which queries have the shape, the hops as the walk sees them (the end it starts at, directions flipped), and a
 * store that reports its candidate cap cut a page stops the query as the walk's step limit does. That the rows are
 * the engine's, in order, is test/integration/cypher-store-equivalence.test.ts.
 */
import { describe, expect, it } from 'vitest'
import type { Expr } from '../../src/cypher/ast'
import { parseCypher } from '../../src/cypher/parse'
import { MAX_ONE_HOP, oneHopPushdown } from '../../src/cypher/onehop'
import { runQuery } from '../../src/cypher/run'
import { DEFAULT_LIMITS } from '../../src/cypher/budget'
import type { GraphSource } from '../../src/cypher/source'
import { memorySource } from './cypher-graph'

const constant = (e: Expr) => (e.type === 'literal' && typeof e.value === 'number' ? e.value : undefined)
const shape = (q: string) => oneHopPushdown(parseCypher(q), constant)

describe('chain shapes (onehop.ts)', () => {
  it('a 2-hop pattern with LIMIT is a chain from its first node, hops in pattern order', () => {
    const p = shape('MATCH p = (u:User)-[:MemberOf]->(g:Group)-[:AdminTo|HasSession]->(c:Computer) RETURN p SKIP 5 LIMIT 100')
    expect(p?.scan).toBeNull()
    expect(p?.reversed).toBe(false)
    expect(p?.want).toBe(105)
    expect(p?.chain).toEqual({
      near: { kinds: [['User']], objectid: null, tests: [] },
      hops: [
        { direction: 'out', kinds: ['MemberOf'], far: { kinds: [['Group']], objectid: null, tests: [] } },
        { direction: 'out', kinds: ['AdminTo', 'HasSession'], far: { kinds: [['Computer']], objectid: null, tests: [] } },
      ],
    })
    expect(p?.describe).toContain('2-hop chain joined in the store')
  })

  it('a chain the walk starts at its last node: hops reversed and flipped', () => {
    const p = shape('MATCH (x)-[:MemberOf]->(g:Base)<-[r]-(d:Domain) RETURN x LIMIT 10')
    expect(p?.reversed).toBe(true)
    expect(p?.chain?.near.kinds).toEqual([['Domain']])
    expect(p?.chain?.hops.map((h) => [h.direction, h.kinds, h.far.kinds])).toEqual([
      ['out', null, [expect.arrayContaining(['Base', 'User', 'Group'])]],
      ['in', ['MemberOf'], []],
    ])
  })

  it('three relationships are a chain; four are walked', () => {
    expect(shape('MATCH (a)-[]->(b)-[]->(c)-[]->(d) RETURN a LIMIT 3')?.chain?.hops).toHaveLength(3)
    expect(shape('MATCH (a)-[]->(b)-[]->(c)-[]->(d)-[]->(e) RETURN a LIMIT 3')).toBeNull()
  })

  it.each([
    'MATCH (a)-[:GenericAll]->(b)-[:GenericAll]->(a) RETURN a LIMIT 3',
    'MATCH (a)-[r]->(b)-[r]->(c) RETURN a LIMIT 3',
    'MATCH (a)-[]->(b)-[]-(c) RETURN a LIMIT 3',
    'MATCH (a)-[]->(b)-[*1..2]->(c) RETURN a LIMIT 3',
    'MATCH (a)-[]->(b {name: "x"})-[]->(c) RETURN a LIMIT 3',
    'MATCH (a)-[]->(b)-[{isacl: true}]->(c) RETURN a LIMIT 3',
    'MATCH (a)-[]->(b:Tag_Tier_Zero)-[]->(c) RETURN a LIMIT 3',
    'MATCH (a)-[]->(b)-[]->(c) WHERE b.enabled RETURN a LIMIT 3',
    'OPTIONAL MATCH (a)-[]->(b)-[]->(c) RETURN a LIMIT 3',
    'MATCH (a)-[]->(b)-[]->(c) RETURN a',
    'MATCH (a)-[]->(b)-[]->(c) RETURN DISTINCT a LIMIT 3',
    'MATCH (a)-[]->(b)-[]->(c) RETURN a ORDER BY a.name LIMIT 3',
    'MATCH (a)-[]->(b)-[]->(c) RETURN count(a) AS n LIMIT 3',
    `MATCH (a)-[]->(b)-[]->(c) RETURN a SKIP 1 LIMIT ${MAX_ONE_HOP}`,
  ])('%s is walked', (q) => {
    expect(shape(q)).toBeNull()
  })

  it('a page the store says its cap cut short stops the query at the step limit, as the walk would', async () => {
    const source: GraphSource = {
      ...memorySource(),
      oneHop: async () => ({ edges: [], scanned: 0, lastId: null }),
      chain: async (_scan, _after, _page, _limit, cap) => {
        expect(cap).toBe(DEFAULT_LIMITS.maxSteps + 1)
        return { rows: [], scanned: 1, lastId: 1, capped: true }
      },
    }
    await expect(runQuery(parseCypher('MATCH (a)-[]->(b)-[]->(c) RETURN a LIMIT 3'), source, { now: 0 })).rejects.toThrow(/traversal step limit/)
  })
})
