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

/** A property key the store can read on its own (written into a JSON path as is). */
const PLAIN_KEY = /^[A-Za-z_][A-Za-z0-9_]*$/
const DERIVED_LABELS = new Set(['Tag_Tier_Zero', 'Tag_Owned'])

/**
 * The node properties a query can ever read, when that is a short known list; null when it may need
 * whole nodes. With a list, the store reads only those properties of every node (a scan of 22,500
 * computers for `RETURN c.name, count(u)` read ~5 MB of properties text to use one of them).
 *
 * Conservative by construction: every occurrence of a variable that may hold a graph element must be the
 * object of a property access `x.key` (the key is listed), the argument of `count(x)`, `id(x)` or `type(x)`, a label
 * test without a derived label, `x IS [NOT] NULL`, or a whole WITH item (`WITH c` / `WITH c AS d`: the
 * node passes on unread, and every later use is checked the same way). Anything else — a variable
 * returned, collected, compared, listed, given to another function (`labels`, `properties`, `keys`,
 * `nodes` …), a path — may put a whole node in the answer or read more of it: null. So does `system_tags`
 * and a derived label (`Tag_Tier_Zero`, `Tag_Owned`: the Tier Zero rule reads several properties).
 * A variable known to hold no graph element is free: an alias of a checked WITH / RETURN item (an
 * expression passing these rules can only make scalars, lists and maps of them), an UNWIND or list
 * variable over a checked list.
 */
export function nodePropertyKeys(query: Query): string[] | null {
  return propertyReads(query, false).keys
}

/**
 * What the store reads of each node for a query whose answer is sent with or without the nodes' properties
 * (`include_properties`). As nodePropertyKeys, except that without properties a RETURN item that is a variable
 * holding graph elements (a node, a relationship or a list of them, a path) does not need whole nodes: such a node
 * is only presented (label, kinds, object id, Tier Zero, Owned, last seen), which reads the node's columns and
 * PRESENTED_KEYS of its properties (src/graph/present.ts). `presented`: the store then reads every column of a node
 * and, of its properties, `keys` (the query's) and PRESENTED_KEYS (cypher.store.ts nodeColumns). `RETURN p` with
 * 1,000 paths read ~250 bytes of properties per node to show none of them.
 */
export interface NodeReads {
  /** the properties the query reads (sorted), or null: whole nodes */
  keys: string[] | null
  /** every column of a node is read (it may be presented); false with a list: partial records (cypher.store.ts nodeColumns) */
  presented: boolean
}

export function nodeReads(query: Query, includeProperties: boolean): NodeReads {
  return propertyReads(query, !includeProperties)
}

function propertyReads(query: Query, presentable: boolean): NodeReads {
  const keys = new Set<string>()
  let whole = false
  let presented = false
  const visitPattern = (p: PatternPart, scalars: ReadonlySet<string>) => {
    for (const n of p.nodes) {
      if (n.labels.some((l) => DERIVED_LABELS.has(l))) whole = true
      for (const { key, value } of n.properties?.entries ?? []) {
        keys.add(key)
        visit(value, scalars)
      }
    }
    for (const r of p.rels) for (const { value } of r.properties?.entries ?? []) visit(value, scalars)
  }
  /** whether `e` passed (nothing in it needs whole nodes) */
  const visit = (e: Expr, scalars: ReadonlySet<string>): boolean => {
    const before = whole
    whole = false
    check(e, scalars)
    const passed = !whole
    whole = before || whole
    return passed
  }
  const check = (e: Expr, scalars: ReadonlySet<string>): void => {
    switch (e.type) {
      case 'var':
        if (!scalars.has(e.name)) whole = true
        return
      case 'property':
        if (e.expr.type === 'var') {
          keys.add(e.key)
          return
        }
        break
      case 'call':
        if ((e.name === 'count' || e.name === 'id' || e.name === 'type') && e.args.length === 1 && e.args[0].type === 'var') return
        break
      case 'countStar':
        return
      case 'hasLabels':
        if (e.labels.some((l) => DERIVED_LABELS.has(l))) whole = true
        if (e.expr.type === 'var') return
        break
      case 'isNull':
      case 'isNotNull':
        if (e.expr.type === 'var') return
        break
      case 'listComprehension':
      case 'quantifier': {
        const inner = visit(e.list, scalars) ? new Set([...scalars, e.variable]) : scalars
        if (e.where) check(e.where, inner)
        if (e.type === 'listComprehension' && e.map) check(e.map, inner)
        return
      }
      case 'exists':
        e.patterns.forEach((p) => visitPattern(p, scalars))
        if (e.where) check(e.where, scalars)
        return
      case 'patternPredicate':
        visitPattern(e.pattern, scalars)
        return
    }
    for (const c of children(e)) check(c, scalars)
  }
  let scalars = new Set<string>()
  for (const c of query.clauses) {
    if (c.type === 'match') {
      c.patterns.forEach((p) => visitPattern(p, scalars))
      if (c.where) visit(c.where, scalars)
    } else if (c.type === 'unwind') {
      if (visit(c.expr, scalars)) scalars.add(c.variable)
      else scalars.delete(c.variable)
    } else if (c.type === 'with' || c.type === 'return') {
      // RETURN * returns every variable
      if (c.star && c.type === 'return') whole = true
      const next = new Set<string>(c.star ? scalars : [])
      for (const it of c.items) {
        const name = it.alias ?? (it.expr.type === 'var' ? it.expr.name : it.text)
        // returned as is into an answer without properties: only presented (not an item later clauses can read)
        if (presentable && c.type === 'return' && it.expr.type === 'var' && !scalars.has(it.expr.name)) {
          presented = true
          next.delete(name)
          continue
        }
        // `WITH c` passes c on unread; its later uses are checked
        const passed = c.type === 'with' && it.expr.type === 'var' ? scalars.has(it.expr.name) : visit(it.expr, scalars)
        if (passed && !(it.expr.type === 'var' && !scalars.has(it.expr.name))) next.add(name)
        else next.delete(name)
      }
      // ORDER BY (and WITH … WHERE) see the items' names as well as the variables before the projection
      const after = new Set([...scalars, ...next])
      for (const it of c.items) if (!next.has(it.alias ?? (it.expr.type === 'var' ? it.expr.name : it.text))) after.delete(it.alias ?? '')
      c.orderBy.forEach((o) => visit(o.expr, after))
      if (c.skip) visit(c.skip, scalars)
      if (c.limit) visit(c.limit, scalars)
      if (c.type === 'with' && c.where) visit(c.where, next)
      scalars = next
    } else whole = true
  }
  if (whole || keys.has('system_tags') || [...keys].some((k) => !PLAIN_KEY.test(k))) return { keys: null, presented: false }
  return { keys: [...keys].sort(), presented }
}
