/**
 * Which end a pattern part is walked from (src/cypher/plan.ts). Either end gives the same answers; the
 * wrong one reads far more of the graph (a scan of every AD node and all its relationships instead of the
 * few nodes of a rare kind), which on a large graph crosses the query's budgets.
 */
import { describe, expect, it } from 'vitest'
import { parseCypher } from '../../src/cypher/parse'
import { planPart } from '../../src/cypher/plan'
import type { Clause } from '../../src/cypher/ast'

/** The start node's variable (or its first label) of the first MATCH's first part. */
function start(query: string): string {
  const m = parseCypher(query).clauses.find((c): c is Extract<Clause, { type: 'match' }> => c.type === 'match')!
  const p = planPart(m.patterns[0], new Set(), m.where)
  return p.nodes[0].variable ?? p.nodes[0].labels[0]
}

describe('the end a walk starts from', () => {
  it('negated conditions barely narrow: a positive test on the other end wins', () => {
    // the shape of an ACL check on one container, excluding some principals
    expect(
      start("MATCH p = (n:Base)-[r]->(m:Container) WHERE m.distinguishedname STARTS WITH 'CN=X' AND NOT n.name STARTS WITH 'A@' AND NOT n.objectid =~ '.*-512' AND r.isacl RETURN p"),
    ).toBe('m')
    expect(start("MATCH p = (n:Base)-[r]->(m:Container) WHERE n.name <> 'A' AND n.enabled IS NOT NULL AND m.distinguishedname = 'CN=X' RETURN p")).toBe('m')
    // a positive test still beats a label
    expect(start("MATCH p = (n:Base)-[:Owns]->(m:Domain) WHERE n.name STARTS WITH 'A' RETURN p")).toBe('n')
  })

  it('without conditions, a rare kind before a numerous one, before Base / AZBase, before no label', () => {
    expect(start('MATCH p = (:Base)-[:Enroll]->(:CertTemplate)-[:PublishedTo]->(ca:EnterpriseCA) RETURN p')).toBe('ca')
    expect(start('MATCH p = (b:Base)-[:DCSync]->(d:Domain) RETURN p')).toBe('d')
    expect(start('MATCH p = (o:OU)<-[:WriteDacl]-(n:Base) WHERE NOT n:Tag_Tier_Zero RETURN p')).toBe('o')
    expect(start('MATCH p = (u:User)-[:MemberOf]->(g:Base) RETURN p')).toBe('u')
    expect(start('MATCH p = (n)-[:Owns]->(c:Computer) RETURN p')).toBe('c')
    // a tie keeps the written order
    expect(start('MATCH p = (a:User)-[:HasSession]-(b:User) RETURN p')).toBe('a')
  })

  it('exact ids and bound nodes still decide first', () => {
    expect(start("MATCH p = (n:Base)-[:MemberOf]->(d:Domain) WHERE n.objectid = 'S-1-5-21-1-1101' RETURN p")).toBe('n')
    expect(start("MATCH p = (n {name: 'ALICE@CORP.LOCAL'})-[:MemberOf]->(d:Domain) RETURN p")).toBe('n')
  })
})

/** The relationship types the walk asks the store for, per hop, of the first MATCH's first part. */
function hopTypes(query: string, bound: string[] = []): string[][] {
  const m = parseCypher(query).clauses.find((c): c is Extract<Clause, { type: 'match' }> => c.type === 'match')!
  return planPart(m.patterns[0], new Set(bound), m.where).rels.map((r) => r.types)
}

describe('relationship kinds narrowed by the WHERE', () => {
  it('NOT r:K drops K from the kinds read (shortcuts expanded); r:K keeps only K', () => {
    const [types] = hopTypes('MATCH (n:Base)-[r:AD_ATTACK_PATHS]->(m:Base) WHERE NOT r:MemberOf AND n.enabled = true RETURN n')
    expect(types).toContain('AdminTo')
    expect(types).toContain('GenericAll')
    expect(types).not.toContain('MemberOf')
    expect(hopTypes('MATCH p = (g:Group)-[r:AdminTo|CanRDP|MemberOf]->(c) WHERE r:CanRDP RETURN p')).toEqual([['CanRDP']])
    expect(hopTypes('MATCH p = (g)-[r:AdminTo|MemberOf]->(c)-[s:HasSession]->(u) WHERE NOT r:MemberOf RETURN p')).toEqual([['AdminTo'], ['HasSession']])
  })

  it('left as written when narrowing is not sound or says nothing', () => {
    // untyped: no list to narrow; variable length: r is a list; bound earlier: not this clause's to narrow
    expect(hopTypes('MATCH (a)-[r]->(b) WHERE NOT r:MemberOf RETURN a')).toEqual([[]])
    expect(hopTypes('MATCH p = (a)-[r:MemberOf|AdminTo*1..]->(b) WHERE NOT r:MemberOf RETURN p')).toEqual([['MemberOf', 'AdminTo']])
    expect(hopTypes('MATCH (a)-[r:MemberOf|AdminTo]->(b) WHERE NOT r:MemberOf RETURN a', ['r'])).toEqual([['MemberOf', 'AdminTo']])
    // inside an OR the test is not a condition of every row; excluding every kind keeps the pattern (the WHERE drops all)
    expect(hopTypes('MATCH (a)-[r:MemberOf|AdminTo]->(b) WHERE NOT r:MemberOf OR a.x = 1 RETURN a')).toEqual([['MemberOf', 'AdminTo']])
    expect(hopTypes('MATCH (a)-[r:MemberOf]->(b) WHERE NOT r:MemberOf RETURN a')).toEqual([['MemberOf']])
  })
})

describe('relationship property conditions taken to the store', () => {
  const relWhere = (query: string, bound: string[] = []) => {
    const m = parseCypher(query).clauses.find((c): c is Extract<Clause, { type: 'match' }> => c.type === 'match')!
    return planPart(m.patterns[0], new Set(bound), m.where).relWhere
  }

  it('r.key and r.key = literal conjuncts of a single relationship new in the clause', () => {
    expect(relWhere('MATCH p = (n:Base)-[r]->(m:Base) WHERE r.isacl AND n.domainsid <> m.domainsid RETURN p')).toEqual([[{ key: 'isacl', value: true }]])
    expect(relWhere("MATCH (n)-[r:MemberOf]->(g) WHERE true = r.isprimarygroup AND r.x = 'a' AND r.n = 2 RETURN n")).toEqual([
      [
        { key: 'isprimarygroup', value: true },
        { key: 'x', value: 'a' },
        { key: 'n', value: 2 },
      ],
    ])
  })

  it('none when a row could pass without it, or r is a list or bound earlier', () => {
    expect(relWhere('MATCH (n)-[r]->(m) WHERE r.isacl OR n.x = 1 RETURN n')).toEqual([[]])
    expect(relWhere('MATCH (n)-[r]->(m) WHERE NOT r.isacl RETURN n')).toEqual([[]])
    expect(relWhere('MATCH (n)-[r]->(m) WHERE r.isacl = m.flag RETURN n')).toEqual([[]])
    expect(relWhere('MATCH (n)-[r*1..2]->(m) WHERE r.isacl RETURN n')).toEqual([[]])
    expect(relWhere('MATCH (n)-[r]->(m) WHERE r.isacl RETURN n', ['r'])).toEqual([[]])
    expect(relWhere('MATCH (n)-[r]->(m) WHERE r.`odd key` = 1 RETURN n')).toEqual([[]])
  })
})

/** The property tests the first part's scan takes to the store (issue 28). */
function pushed(query: string) {
  const m = parseCypher(query).clauses.find((c): c is Extract<Clause, { type: 'match' }> => c.type === 'match')!
  return (planPart(m.patterns[0], new Set(), m.where).scan.where ?? []).flatMap((c) => (c.type === 'property' ? [c.test] : []))
}

describe('stored property tests taken to the scan (issue 28)', () => {
  it('equality, comparisons, IS NULL, IN, text tests, bare and negated properties, AND / OR', () => {
    expect(pushed('MATCH (u:User) WHERE u.hasspn = true AND u.enabled = true RETURN u')).toEqual([
      { op: 'eq', key: 'hasspn', value: true },
      { op: 'eq', key: 'enabled', value: true },
    ])
    expect(pushed('MATCH (u:User) WHERE 1000 > u.pwdlastset RETURN u')).toEqual([{ op: 'cmp', key: 'pwdlastset', cmp: '<', value: 1000 }])
    expect(pushed("MATCH (u:User) WHERE u.x IS NULL AND u.y IS NOT NULL AND u.t IN ['a', null, 2] RETURN u")).toEqual([
      { op: 'isNull', key: 'x' },
      { op: 'isNotNull', key: 'y' },
      { op: 'in', key: 't', values: ['a', 2] },
    ])
    expect(pushed("MATCH (u) WHERE u.t STARTS WITH 'a' AND u.t ENDS WITH 'b' AND u.t CONTAINS 'c' RETURN u")).toEqual([
      { op: 'startsWith', key: 't', value: 'a' },
      { op: 'endsWith', key: 't', value: 'b' },
      { op: 'contains', key: 't', value: 'c' },
    ])
    expect(pushed('MATCH (u) WHERE u.enabled AND NOT u.hasspn RETURN u')).toEqual([
      { op: 'truthy', key: 'enabled' },
      { op: 'falsy', key: 'hasspn' },
    ])
    expect(pushed('MATCH (u) WHERE u.a = 1 OR (u.b = 2 AND u.c =~ "x") RETURN u')).toEqual([
      { op: 'or', tests: [{ op: 'eq', key: 'a', value: 1 }, { op: 'eq', key: 'b', value: 2 }] },
    ])
    expect(pushed('MATCH (u:User {enabled: true}) RETURN u')).toEqual([{ op: 'eq', key: 'enabled', value: true }])
  })

  it('nothing it cannot test exactly: other variables, non-constant values, lists, surrogates, objectid / system_tags / name text', () => {
    expect(pushed('MATCH (u) WHERE u.a = 1 OR u.b =~ "x" RETURN u')).toEqual([])
    expect(pushed('MATCH (u) WHERE u.a = u.b OR u.a = rand() RETURN u')).toEqual([])
    expect(pushed('MATCH (u) WHERE u.a = [1] OR u.a IN [[1]] RETURN u')).toEqual([])
    expect(pushed("MATCH (u) WHERE u.a = '\uD83D\uDE00' RETURN u")).toEqual([])
    expect(pushed("MATCH (u) WHERE u.objectid = 'x' AND u.system_tags = 'x' AND u.name STARTS WITH 'x' RETURN u")).toEqual([])
    expect(pushed("MATCH (u) WHERE u.a < 'b' AND u.a <> 1 RETURN u")).toEqual([])
    // datetime() is a query constant only to the engine's evaluator (match.ts); the plan alone reads literals
    expect(pushed('MATCH (u) WHERE u.a < datetime().epochseconds RETURN u')).toEqual([])
  })
})
