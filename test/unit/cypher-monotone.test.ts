/**
 * src/cypher/monotone.ts: which queries' answers over a subgraph (an environment's view) are contained in their answer
 * over the whole graph. Asset-group rules skip the environments' own evaluations on that ground
 * (src/assetgroups/rules.ts), so a query wrongly called monotone would lose selected nodes: each refused shape below
 * is one whose answer over a subgraph can hold what the whole graph's answer does not.
 */
import { describe, expect, it } from 'vitest'
import { isMonotone } from '../../src/cypher/monotone'
import { parseCypher } from '../../src/cypher/parse'

const monotone = (q: string) => isMonotone(parseCypher(q))

describe('isMonotone', () => {
  it('accepts patterns, filters on bound values, UNWIND, WITH and RETURN without aggregation or paging', () => {
    for (const q of [
      "MATCH (u)-[:MemberOf*1..]->(g:Group) WHERE g.objectid ENDS WITH '-519' RETURN u",
      'MATCH (n:Group) RETURN n',
      'MATCH p = (c:Computer)-[:HasSession]->(u:User) WHERE NOT u.enabled = false RETURN p',
      "MATCH (n {name: 'X'}) WHERE n:Tag_Tier_Zero OR coalesce(n.system_tags, '') CONTAINS 'admin_tier_0' RETURN DISTINCT n ORDER BY n.name",
      'MATCH (a:User), (b:Group) WHERE a.name = b.name RETURN a, b',
      'MATCH (a)-[r]->(b) WITH a, r WHERE type(r) = "AdminTo" RETURN a',
      'UNWIND [1, 2] AS i MATCH (n) WHERE id(n) = i RETURN n',
      'MATCH (n) WHERE size(labels(n)) > 2 AND all(k IN labels(n) WHERE k <> "Foo") RETURN n',
    ])
      expect(monotone(q), q).toBe(true)
  })

  it('refuses OPTIONAL MATCH, pattern predicates, EXISTS, aggregation, SKIP / LIMIT and shortest paths', () => {
    for (const q of [
      'OPTIONAL MATCH (n:User) RETURN n',
      'MATCH (n:User) WHERE NOT (n)-[:MemberOf]->() RETURN n',
      'MATCH (n:User) WHERE (n)-[:MemberOf]->() RETURN n',
      'MATCH (n:User) WHERE EXISTS { MATCH (n)-[:MemberOf]->() } RETURN n',
      'MATCH (n:User) RETURN n LIMIT 5',
      'MATCH (n:User) RETURN n SKIP 5',
      'MATCH (n:User) WITH n LIMIT 1 MATCH (n)-->(m) RETURN m',
      'MATCH (n:User) WITH count(n) AS c MATCH (m:Group) WHERE c < 10 RETURN m',
      'MATCH (n:User)-[:MemberOf]->(g) WITH g, count(*) AS c WHERE c > 3 RETURN g',
      'MATCH (n:User) RETURN collect(n)',
      'MATCH p = shortestPath((u:User)-[*1..]->(g:Group)) RETURN p',
      'MATCH p = allShortestPaths((u:User)-[*1..]->(g:Group)) RETURN p',
    ])
      expect(monotone(q), q).toBe(false)
  })
})
