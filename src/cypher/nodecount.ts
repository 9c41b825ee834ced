/**
 * `MATCH (n:Label …) [WHERE …] RETURN count(n)` (or `count(*)`, `count(DISTINCT n)`, several of them, with
 * aliases) answered by one SQL count over the nodes table instead of reading every node (issue 28: "a count"
 * was 8.5× a native engine). Pure: it decides whether the query has that shape and whether every condition
 * of it can be tested by the store EXACTLY as the engine tests it; run.ts asks the source
 * (GraphSource.countNodes) and makes the one row.
 *
 * Why it is the same answer. The engine scans the visible nodes, keeps those whose labels, property map and
 * WHERE hold, and counts one row per kept node (each node once, so count(n) = count(*) = count(DISTINCT n)).
 * A scan's pushed conditions are elsewhere only a superset the engine narrows; a count cannot be narrowed
 * afterwards, so here every part must be exact or the query is not pushed down (the walk answers, slower):
 *  - each label: one of labels.ts exactKindsFor(label) among the stored kinds (hasLabel); a derived label
 *    (Tag_Tier_Zero, Tag_Owned) is not exact;
 *  - `objectid` = a string (the column, as nodeProperty reads it);
 *  - every WHERE conjunct and property-map entry a PropertyTest whose SQL (cypher.store.ts propertySql) is
 *    exact: `=` / `IN` strings and booleans (numbers: a real or a big integer is kept for the engine, a
 *    superset), IS [NOT] NULL, STARTS WITH / ENDS WITH / CONTAINS a string, and AND / OR of those. Never a bare
 *    `n.key` / `NOT n.key` (the engine stops with a type error on a non-boolean, which the store keeps so the
 *    engine can), never a comparison `<`. AND / OR of positive tests: a WHERE keeps a row only when it is true,
 *    and null (missing key, other type) behaves as false through AND / OR (both monotone), as SQL's false does.
 *    Each conjunct is translated whole (plan.ts propertyTest may drop an untranslatable side of an AND; here
 *    each side is checked on its own).
 * Nothing else in the query: one MATCH (not OPTIONAL) of one node pattern with a variable, no path variable,
 * then RETURN of count items only, without ORDER BY, SKIP, LIMIT (one row either way; not worth the cases).
 */
import type { Clause, Expr, NodePattern, Query } from './ast'
import { conjuncts, propertyTest } from './plan'
import { exactKindsFor } from './labels'
import { projectionNames } from './counts'
import type { NodeCountTest, PropertyTest } from './source'

export interface NodeCountPushdown {
  test: NodeCountTest
  columns: string[]
  describe: string
}

function exactLeaf(t: PropertyTest): boolean {
  switch (t.op) {
    case 'eq':
      return typeof t.value !== 'number'
    case 'in':
      return t.values.every((x) => typeof x !== 'number')
    case 'isNull':
    case 'isNotNull':
    case 'startsWith':
    case 'endsWith':
    case 'contains':
      return true
    default:
      return false
  }
}

/** `e` as an exact PropertyTest on `v`, every part of it translated, or null. */
function exactTest(e: Expr, v: string): PropertyTest | null {
  if (e.type === 'and' || e.type === 'or') {
    const l = exactTest(e.left, v)
    const r = l && exactTest(e.right, v)
    return l && r ? { op: e.type, tests: [l, r] } : null
  }
  // a single leaf: propertyTest gives a leaf (never and / or) for a leaf expression
  if (e.type !== 'compare' && e.type !== 'in' && e.type !== 'isNull' && e.type !== 'isNotNull' && e.type !== 'startsWith' && e.type !== 'endsWith' && e.type !== 'contains') return null
  if (e.type === 'compare' && e.op !== '=') return null
  const t = propertyTest(e, v)
  return t && t.op !== 'and' && t.op !== 'or' && exactLeaf(t) ? t : null
}

/** `n.objectid = 'x'` (either side) → 'x' */
function objectidEquality(e: Expr, v: string): string | null {
  if (e.type !== 'compare' || e.op !== '=') return null
  for (const [a, b] of [
    [e.left, e.right],
    [e.right, e.left],
  ])
    if (a.type === 'property' && a.key === 'objectid' && a.expr.type === 'var' && a.expr.name === v && b.type === 'literal' && typeof b.value === 'string') return b.value
  return null
}

export function nodeCountPushdown(query: Query): NodeCountPushdown | null {
  const [match, ret] = query.clauses as [Clause | undefined, Clause | undefined]
  if (query.clauses.length !== 2 || match?.type !== 'match' || ret?.type !== 'return') return null
  const exact = exactNodeMatch(match)
  if (!exact) return null
  const { variable: v, test, describe } = exact
  if (ret.star || ret.orderBy.length || ret.skip || ret.limit || ret.items.length === 0) return null
  const counts = ret.items.every(({ expr: e }) => e.type === 'countStar' || (e.type === 'call' && e.name.toLowerCase() === 'count' && e.args.length === 1 && e.args[0].type === 'var' && e.args[0].name === v))
  if (!counts) return null
  return { test, columns: projectionNames(ret), describe: `count of nodes (${describe}) in the store` }
}

/**
 * `MATCH (v[:L…] [{map}]) [WHERE …]` (one node pattern with a variable, not OPTIONAL, no path variable) whose
 * every label, map entry and WHERE conjunct the store tests exactly as the engine does (see above): the test,
 * or null. Also the DISTINCT pushdown's filter (distinct.ts).
 */
export function exactNodeMatch(match: Clause): { variable: string; test: NodeCountTest; describe: string } | null {
  if (match.type !== 'match' || match.optional || match.patterns.length !== 1) return null
  const part = match.patterns[0]
  if (part.variable || part.shortest || part.rels.length !== 0 || part.nodes.length !== 1) return null
  const node: NodePattern = part.nodes[0]
  const v = node.variable
  if (!v) return null
  const kinds: string[][] = []
  for (const l of node.labels) {
    const k = exactKindsFor(l)
    if (!k) return null
    kinds.push(k)
  }
  let objectid: string | null = null
  const tests: PropertyTest[] = []
  const equalities: Expr[] = (node.properties?.entries ?? []).map(({ key, value }) => ({ type: 'compare', op: '=', left: { type: 'property', expr: { type: 'var', name: v }, key }, right: value }))
  for (const c of [...equalities, ...conjuncts(match.where)]) {
    const oid = objectidEquality(c, v)
    if (oid !== null) {
      if (objectid !== null && objectid !== oid) return null
      objectid = oid
      continue
    }
    const t = exactTest(c, v)
    if (!t) return null
    tests.push(t)
  }
  // D1's limits on parameters and expression depth (cypher.store.ts MAX_SCAN_CONDITIONS): keep it small
  const size = (x: PropertyTest): number => (x.op === 'and' || x.op === 'or' ? x.tests.reduce((a, y) => a + size(y), 1) : 1)
  if (kinds.length > 4 || tests.reduce((a, t) => a + size(t), 0) > 12) return null
  const what = [kinds.length ? `labels ${node.labels.join(', ')}` : 'any node', objectid !== null ? 'objectid' : '', tests.length ? `${tests.length} property test(s)` : ''].filter(Boolean).join(', ')
  return { variable: v, test: { kinds, objectid, tests }, describe: what }
}
