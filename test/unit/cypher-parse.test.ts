/**
 * Parser tests: every construct the engine supports parses into the expected tree, and every refusal
 * (syntax, empty, parameters, procedures, updating clauses, complexity) is decided from the tree with
 * BloodHound's message. Also: the committed generated parser matches the grammar.
 */
import { describe, expect, it } from 'vitest'
import peggy from 'peggy'
import grammar from '../../src/cypher/cypher.peggy?raw'
import generated from '../../src/cypher/cypher.parser.js?raw'
import { CypherError, MESSAGES, parseCypher, patternsOf } from '../../src/cypher/parse'
import type { Clause, Expr } from '../../src/cypher/ast'
import { unsafeRegex } from '../../src/cypher/eval'
import { regexLiteral } from '../../src/cypher/plan'

function refusal(text: string): string {
  try {
    parseCypher(text)
  } catch (e) {
    if (e instanceof CypherError) return e.message
    throw e
  }
  throw new Error(`accepted: ${text.slice(0, 200)}`)
}

const where = (text: string): Expr => (parseCypher(text).clauses[0] as Extract<Clause, { type: 'match' }>).where!
const ret = (text: string) => parseCypher(text).clauses.at(-1) as Extract<Clause, { type: 'return' }>

describe('generated parser', () => {
  it('is what `npm run cypher:grammar` makes of cypher.peggy (regenerate after editing the grammar)', () => {
    const fresh = peggy.generate(grammar, { output: 'source', format: 'es', allowedStartRules: ['Query'] })
    expect(fresh === generated).toBe(true)
  })
})

describe('constructs', () => {
  it('MATCH with labels, property maps, WHERE, RETURN items with aliases and column text', () => {
    const q = parseCypher("match (n:User:Base {name: 'A', enabled: true}) where n.x = 1 return n, n.name AS name, toUpper( n.name )")
    const [part] = patternsOf(q)
    expect(part.nodes[0]).toMatchObject({ variable: 'n', labels: ['User', 'Base'] })
    expect(part.nodes[0].properties!.entries.map((e) => e.key)).toEqual(['name', 'enabled'])
    const r = ret("MATCH (n) RETURN n, n.name AS name, toUpper( n.name )")
    expect(r.items.map((i) => [i.alias, i.text])).toEqual([
      [null, 'n'],
      ['name', 'n.name'],
      [null, 'toUpper( n.name )'],
    ])
  })

  it('operator precedence: OR < XOR < AND < NOT < comparison < string predicates < + < * < unary < postfix', () => {
    expect(where('MATCH (n) WHERE a OR b XOR c AND NOT d = 1 RETURN n')).toMatchObject({
      type: 'or',
      right: { type: 'xor', right: { type: 'and', right: { type: 'not', expr: { type: 'compare', op: '=' } } } },
    })
    expect(where("MATCH (n) WHERE n.a + 'x' CONTAINS 'y' RETURN n")).toMatchObject({ type: 'contains', left: { type: 'arith', op: '+' } })
    expect(where('MATCH (n) WHERE 1 + 2 * -3 ^ 2 > 0 RETURN n')).toMatchObject({
      type: 'compare',
      left: { type: 'arith', op: '+', right: { type: 'arith', op: '*', right: { type: 'arith', op: '^', left: { type: 'neg' } } } },
    })
    expect(where('MATCH (n) WHERE 1 < n.x < 5 RETURN n')).toMatchObject({ type: 'and', left: { op: '<' }, right: { op: '<' } })
  })

  it('string and list predicates, regex, IS [NOT] NULL, label tests in WHERE', () => {
    for (const [text, type] of [
      ["n.a STARTS WITH 'x'", 'startsWith'],
      ["n.a ENDS WITH 'x'", 'endsWith'],
      ["n.a contains('x')", 'contains'],
      ['n.a IN [1, 2]', 'in'],
      ['n.a IS NULL', 'isNull'],
      ['n.a is not null', 'isNotNull'],
      ['n:Tag_Tier_Zero', 'hasLabels'],
    ] as const)
      expect(where(`MATCH (n) WHERE ${text} RETURN n`).type, text).toBe(type)
    expect(where("MATCH (n) WHERE n.name =~ '(?i).*adm.*' RETURN n")).toMatchObject({ type: 'compare', op: '=~' })
    expect(where('MATCH (n) WHERE n:A OR n:B RETURN n')).toMatchObject({ type: 'or', left: { type: 'hasLabels', labels: ['A'] } })
  })

  it('literals: strings with escapes, numbers, booleans, null, lists, maps; backticked names', () => {
    expect(ret("RETURN 'it\\'s', \"a\\tb\", 1.5, 2e3, 0x1F, true, NULL, [1, 'a'], {k: 1}").items.map((i) => i.expr)).toEqual([
      { type: 'literal', value: "it's" },
      { type: 'literal', value: 'a\tb' },
      { type: 'literal', value: 1.5 },
      { type: 'literal', value: 2000 },
      { type: 'literal', value: 31 },
      { type: 'literal', value: true },
      { type: 'literal', value: null },
      { type: 'list', items: [{ type: 'literal', value: 1 }, { type: 'literal', value: 'a' }] },
      { type: 'map', entries: [{ key: 'k', value: { type: 'literal', value: 1 } }] },
    ])
    expect(patternsOf(parseCypher('MATCH (`my var`:`Odd Label`) RETURN `my var`'))[0].nodes[0]).toMatchObject({ variable: 'my var', labels: ['Odd Label'] })
  })

  it('relationship patterns: directions, types with alternation, ranges, properties, path variables', () => {
    const [p] = patternsOf(parseCypher('MATCH p = (a)-[r:A|B|:C {x: 1}]->(b)<-[*1..]-(c)-[*0..]-(d)<-[:X*1..2]->(e)-[*3]-(f)-[*..4]-(g)-[*]-(h)--(i) RETURN p'))
    expect(p.variable).toBe('p')
    expect(p.rels.map((r) => [r.direction, r.types, r.range])).toEqual([
      ['out', ['A', 'B', 'C'], null],
      ['in', [], { min: 1, max: null }],
      ['both', [], { min: 0, max: null }],
      ['both', ['X'], { min: 1, max: 2 }],
      ['both', [], { min: 3, max: 3 }],
      ['both', [], { min: 1, max: 4 }],
      ['both', [], { min: 1, max: null }],
      ['both', [], null],
    ])
    expect(p.rels[0].properties!.entries[0].key).toBe('x')
  })

  it('shortestPath / allShortestPaths, several MATCH clauses, OPTIONAL MATCH, comma-separated parts', () => {
    const q = parseCypher('MATCH (a) MATCH p = shortestPath((a)-[*1..]->(b)), q = allShortestPaths((a)-[:X*1..]->(c)) OPTIONAL MATCH (c)--(d) RETURN p, q')
    expect(q.clauses.map((c) => c.type)).toEqual(['match', 'match', 'match', 'return'])
    expect(patternsOf(q).map((p) => p.shortest)).toEqual([null, 'shortest', 'all', null])
    expect((q.clauses[2] as { optional: boolean }).optional).toBe(true)
  })

  it('pattern predicates and EXISTS subqueries in WHERE', () => {
    expect(where('MATCH (n) WHERE NOT (n)-[:MemberOf]->(:Group) RETURN n')).toMatchObject({ type: 'not', expr: { type: 'patternPredicate' } })
    expect(where('MATCH (n) WHERE exists { MATCH (n)-->(m) WHERE m.x = 1 } RETURN n')).toMatchObject({ type: 'exists' })
    expect(where('MATCH (n) WHERE exists(n.x) RETURN n')).toMatchObject({ type: 'call', name: 'exists' })
  })

  it('WITH, aggregation, DISTINCT, ORDER BY / SKIP / LIMIT, UNWIND, CASE, comprehensions, quantifiers', () => {
    const q = parseCypher(
      'MATCH (n) WITH DISTINCT n, count(*) AS c, collect(DISTINCT n.x) AS xs WHERE c > 1 UNWIND xs AS x ' +
        'RETURN x, CASE x WHEN 1 THEN "a" ELSE "b" END, [y IN xs WHERE y > 0 | y * 2], ANY(y IN xs WHERE y = 1) ORDER BY x DESC, c ASC SKIP 1 LIMIT 10',
    )
    expect(q.clauses.map((c) => c.type)).toEqual(['match', 'with', 'unwind', 'return'])
    const w = q.clauses[1] as Extract<Clause, { type: 'with' }>
    expect(w.distinct).toBe(true)
    expect(w.items[1].expr).toEqual({ type: 'countStar' })
    expect(w.items[2].expr).toMatchObject({ type: 'call', name: 'collect', distinct: true })
    const r = q.clauses[3] as Extract<Clause, { type: 'return' }>
    expect(r.items.map((i) => i.expr.type)).toEqual(['var', 'case', 'listComprehension', 'quantifier'])
    expect(r.orderBy.map((o) => o.descending)).toEqual([true, false])
    expect([r.skip, r.limit]).toEqual([{ type: 'literal', value: 1 }, { type: 'literal', value: 10 }])
  })

  it('comments anywhere, keywords in any case, a trailing semicolon', () => {
    expect(parseCypher('// first\nmAtCh (n) /* SET n.x = 1 */ ReTuRn n; // CREATE').clauses.map((c) => c.type)).toEqual(['match', 'return'])
    expect(parseCypher("MATCH (n) WHERE n.name = 'DELETE me' RETURN n // MERGE").clauses).toHaveLength(2)
  })

  it('datetime().epochseconds and function names with dots', () => {
    expect(where('MATCH (n) WHERE n.t > datetime().epochseconds - 86400 RETURN n')).toMatchObject({
      right: { type: 'arith', left: { type: 'property', key: 'epochseconds', expr: { type: 'call', name: 'datetime' } } },
    })
  })
})

describe('refusals', () => {
  it('syntax errors carry line and column (BloodHound: 1-based line, 0-based column)', () => {
    expect(refusal('MATCH (n RETURN n')).toMatch(/^line 1:9 /)
    expect(refusal('MATCH (n)\nWHERE n.x = \nRETURN n')).toMatch(/^line 3:0 /)
    expect(refusal('RETURN')).toMatch(/^line 1:6 /)
    expect(refusal('MATCH (n) RETURN n UNION MATCH (m) RETURN m')).toMatch(/^line 1:/)
  })

  it('empty queries', () => {
    expect(refusal('')).toBe(MESSAGES.invalidInput)
    expect(refusal('   \n\t')).toBe(MESSAGES.invalidInput)
  })

  it('parameters anywhere', () => {
    for (const q of ['MATCH (n) WHERE n.name = $name RETURN n', 'MATCH (n {name: $1}) RETURN n', 'RETURN [x IN $list | x]'])
      expect(refusal(q), q).toBe(MESSAGES.parameters)
  })

  it('procedure calls', () => {
    for (const q of ['CALL db.labels()', 'CALL db.labels() YIELD label RETURN label', 'MATCH (n) CALL apoc.do.it(n) RETURN n', 'CALL { MATCH (n) RETURN n } RETURN 1'])
      expect(refusal(q), q).toBe(MESSAGES.procedures)
  })

  it('updating clauses, in any case and after WITH, decided by the parser', () => {
    for (const q of [
      'CREATE (n:User {name: "x"})',
      'create (n)-[:X]->(m) RETURN n',
      'MATCH (n) SET n.admin = true',
      'MATCH (n) set n += {a: 1} RETURN n',
      'MATCH (n) SET n:Tag_Tier_Zero',
      'MATCH (n) WITH n DETACH DELETE n',
      'MATCH (n) WITH n LIMIT 1 delete n',
      'MATCH (n) REMOVE n.name',
      'MATCH (n) REMOVE n:User RETURN n',
      'MERGE (n:User {name: "x"}) ON CREATE SET n.a = 1 RETURN n',
      'MATCH (n) WITH n MERGE (n)-[:X]->(m)',
    ])
      expect(refusal(q), q).toBe(MESSAGES.updating)
  })

  it('too complex: deep nesting, a huge query, an enormous tree, catastrophic regexes', () => {
    expect(refusal(`RETURN ${'('.repeat(5_000)}1${')'.repeat(5_000)}`)).toBe(MESSAGES.tooComplex)
    expect(refusal(`MATCH (n) WHERE n.name = '${'x'.repeat(70_000)}' RETURN n`)).toBe(MESSAGES.tooComplex)
    expect(refusal(`RETURN [${Array(21_000).fill('1').join(',')}]`)).toBe(MESSAGES.tooComplex)
    // a tree the parser builds but the engine's recursive evaluation could not (it overflowed the stack: a 500)
    expect(refusal(`RETURN ${'NOT '.repeat(2_000)}true`)).toBe(MESSAGES.tooComplex)
    expect(refusal(`RETURN ${'-'.repeat(1_000)}1`)).toBe(MESSAGES.tooComplex)
    expect(parseCypher(`RETURN ${'NOT '.repeat(100)}true`).clauses).toHaveLength(1)
  })

  it('catastrophic regexes are refused before any value is tested; the library\'s shapes are not', () => {
    // the shapes of BloodHound's public query library (inline flags are stripped before this check)
    for (const ok of ['Global Administrator|User Administrator', '.*Windows.* (2000|2003|xp|nt).*', '.*WINDOWS (SERVER)? ?(10|11|2019).*', '(10.0.19044|6.3.9600).?.*', 'svc0001.*', '(a|b)?x', '[(*+]{0}'])
      expect(unsafeRegex(ok), ok).toBe(false)
    // exponential: nested quantifiers, repeated overlapping alternatives, back-references;
    // polynomial of high degree: many unbounded quantifiers (measured: `(.|.)*!` ran 16 s of CPU on one name)
    for (const bad of ['(a+)+$', '(.*a){20}', '(.|.)*!', '(a|aa)+b', '(x|y){30}', '(a)\\1', '.*.*.*.*!', 'a+b+c*d{2,}'])
      expect(unsafeRegex(bad), bad).toBe(true)
    expect(refusal("MATCH (n) WHERE n.name =~ '(.|.)*!' RETURN n")).toBe(MESSAGES.tooComplex)
  })

  it('the literal text every match of a regex must contain (pushed to node scans)', () => {
    expect(regexLiteral('(?i)svc0001.*')).toEqual({ value: 'svc0001', anyCase: true })
    expect(regexLiteral('Global Administrator.*')).toEqual({ value: 'Global Administrator', anyCase: false })
    expect(regexLiteral('.*Windows.* (2000|2003).*')).toBeNull() // an alternation anywhere: nothing is required
    expect(regexLiteral('^.*ADMIN\\d+')).toEqual({ value: 'ADMIN', anyCase: false })
    expect(regexLiteral('abc?d')).toEqual({ value: 'ab', anyCase: false }) // c is optional
    expect(regexLiteral('ab*')).toBeNull() // one character is too little to narrow anything
    expect(regexLiteral('[a-z]+x')).toBeNull()
    // non-ASCII text is never pushed: SQLite's lower() would not fold it as a case-blind regex does
    expect(regexLiteral('(?i)éric.*')).toBeNull()
    expect(regexLiteral('(?i)ab élan')).toEqual({ value: 'ab ', anyCase: true })
  })

  it('a query must end with RETURN', () => {
    expect(refusal('MATCH (n)')).toBe('a query must end with RETURN')
    expect(refusal('MATCH (n) WITH n')).toBe('a query must end with RETURN')
  })
})
