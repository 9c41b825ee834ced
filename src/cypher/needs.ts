/**
 * Whether a query ever looks into a relationship's properties while it runs. Most do not (they test
 * kinds and node properties), and then the engine reads relationships without their properties text:
 * a traversal touching hundreds of thousands of relationships then holds a few small fields per
 * relationship instead of each one's JSON (that text was what filled the 128 MB isolate). Properties of
 * the relationships an answer returns are read afterwards, for those relationships only.
 *
 * Conservative by construction: a property access, `properties()` or `keys()` counts as "needs
 * relationship properties" unless its argument is a plain variable that can only ever hold a node
 * (declared in node patterns and never re-bound by WITH, UNWIND, a path, a relationship or a list
 * expression). A relationship pattern with a property map always counts.
 */
import type { Clause, Expr, PatternPart, Query } from './ast'
import { children } from './eval'

export function readsRelationshipProperties(query: Query): boolean {
  const nodeVars = new Set<string>()
  const otherVars = new Set<string>()
  const exprs: Expr[] = []
  let relMaps = false
  const visitPattern = (p: PatternPart) => {
    if (p.variable) otherVars.add(p.variable)
    for (const n of p.nodes) {
      if (n.variable) nodeVars.add(n.variable)
      if (n.properties) exprs.push(n.properties)
    }
    for (const r of p.rels) {
      if (r.variable) otherVars.add(r.variable)
      if (r.properties) relMaps = true
    }
  }
  const visitExpr = (e: Expr) => {
    if (e.type === 'listComprehension' || e.type === 'quantifier') otherVars.add(e.variable)
    if (e.type === 'exists') {
      e.patterns.forEach(visitPattern)
      if (e.where) visitExpr(e.where)
    }
    if (e.type === 'patternPredicate') visitPattern(e.pattern)
    for (const c of children(e)) visitExpr(c)
  }
  const visitClause = (c: Clause) => {
    if (c.type === 'match') {
      c.patterns.forEach(visitPattern)
      if (c.where) exprs.push(c.where)
    } else if (c.type === 'unwind') {
      otherVars.add(c.variable)
      exprs.push(c.expr)
    } else if (c.type === 'with' || c.type === 'return') {
      for (const it of c.items) {
        exprs.push(it.expr)
        // `WITH n` / `WITH n AS n` keeps what n is; any other alias may hold anything
        const name = it.alias ?? (it.expr.type === 'var' ? it.expr.name : null)
        if (name !== null && !(it.expr.type === 'var' && it.expr.name === name)) otherVars.add(name)
      }
      exprs.push(...c.orderBy.map((o) => o.expr))
      if (c.type === 'with' && c.where) exprs.push(c.where)
    }
  }
  query.clauses.forEach(visitClause)
  // patterns inside expressions declare variables too: collect them before judging accesses
  exprs.forEach(visitExpr)
  if (relMaps) return true
  const nodeOnly = (e: Expr) => e.type === 'var' && nodeVars.has(e.name) && !otherVars.has(e.name)
  const reads = (e: Expr): boolean => {
    if (e.type === 'property' && !nodeOnly(e.expr)) return true
    if (e.type === 'call' && (e.name.toLowerCase() === 'properties' || e.name.toLowerCase() === 'keys') && !e.args.every(nodeOnly)) return true
    if (e.type === 'exists' && ((e.where && reads(e.where)) || e.patterns.some((p) => p.nodes.some((n) => n.properties && reads(n.properties)))))
      return true
    return children(e).some(reads)
  }
  return exprs.some(reads)
}
