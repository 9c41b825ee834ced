/**
 * ORDER BY … LIMIT over a label scan read in the projection's order from the store (issue 28: "top-k without
 * reading every row"). Pure: it decides whether a query has the shape; match.ts reads the scan's pages in that
 * order (GraphSource.scanOrdered) and run.ts lets the projection stream them instead of sorting.
 *
 * The shape: the first clause `MATCH (v[:L…] [{map}]) [WHERE …]` (one node pattern with a variable, not
 * OPTIONAL, no path variable), then a `RETURN` or `WITH` [DISTINCT] without aggregates, with `ORDER BY` keys
 * that are each `v.key` (a stored property: letters, digits and `_`; or `objectid`, the column), written so or
 * through an item's alias, and a `LIMIT` (SKIP + LIMIT at most MAX_TOP). Later clauses are anything: they read
 * the projection's rows.
 *
 * Why it is the same answer. The engine scans the visible nodes in id order, keeps those the pattern and the
 * WHERE keep (each row on its own: a filter never reorders), projects them, and sorts them stably by the keys
 * (values.ts orderCompare: by type — strings, then booleans, then numbers, null last ascending; within a type
 * by value; DESC reverses that, null first), then SKIP / LIMIT. The store returns the same scan's nodes (the
 * same kinds, object id / name and necessary conditions, the same environment access) ordered by each key's
 * type rank and value (DESC: both reversed) and then by id ascending, which is exactly the stable sort of the
 * id-ordered rows; its pages are still filtered by the engine in that order, so the first SKIP + LIMIT rows
 * that pass are the engine's. The store's order equals orderCompare only for values it can compare as
 * JavaScript does, so the store sorts every node holding another value first and answers "unorderable" when
 * one is there (run.ts then runs the query the ordinary way): a list or a map (compared element-wise or by key
 * text), a real (SQLite and JSON.parse may read its digits a unit apart), an integer beyond 2^53 (JavaScript
 * rounds it: ties the store would order), a string holding a character from U+E000 up (UTF-8 byte order, as
 * SQLite compares, differs from JavaScript's UTF-16 order only between U+E000–U+FFFF and characters above
 * U+FFFF; a lone surrogate stays below U+E000 in both). DISTINCT: allowed only when every key is also a
 * projected item, so two equal rows have equal keys and the first of equal rows met in the store's order is
 * the first met by id among those with its keys (the engine keeps the first met by id, then sorts stably).
 * One difference: a row past the LIMIT is never evaluated, so an error only such a row would raise (a type
 * error in the WHERE) is not raised, as with LIMIT without ORDER BY.
 */
import type { Clause, Expr, Projection, Query } from './ast'
import { containsAggregate } from './eval'
import { projectionNames } from './counts'
import type { ScanOrder } from './source'

/** At most this many rows (SKIP + LIMIT) are read in order from the store; a larger answer is sorted by the engine. */
export const MAX_TOP = 8_000

export interface OrderPushdown {
  /** the scanned pattern part (match.ts reads its scan in this order) */
  part: Extract<Clause, { type: 'match' }>['patterns'][number]
  /** the projection that streams the ordered rows */
  projection: Projection
  order: ScanOrder
  /** SKIP + LIMIT */
  want: number
  describe: string
}

const PLAIN = /^[A-Za-z_][A-Za-z0-9_]*$/

/**
 * `skipLimit` evaluates SKIP / LIMIT (run.ts: a query constant); undefined when it is not a non-negative
 * integer (the projection then raises its error the ordinary way).
 */
export function orderPushdown(query: Query, skipLimit: (e: Expr) => number | undefined): OrderPushdown | null {
  const [match, proj] = query.clauses
  if (!match || !proj || match.type !== 'match' || (proj.type !== 'return' && proj.type !== 'with')) return null
  if (match.optional || match.patterns.length !== 1) return null
  const part = match.patterns[0]
  if (part.variable || part.shortest || part.rels.length !== 0 || part.nodes.length !== 1) return null
  const v = part.nodes[0].variable
  if (!v || proj.star || proj.orderBy.length === 0 || proj.limit === null) return null
  if (proj.items.some((i) => containsAggregate(i.expr)) || proj.orderBy.some((o) => containsAggregate(o.expr))) return null
  const names = projectionNames(proj)
  // ORDER BY sees the projected names over the row's variables: a name v that is not v itself hides the node
  if (names.some((n, i) => n === v && !(proj.items[i].expr.type === 'var' && (proj.items[i].expr as { name: string }).name === v))) return null
  const keyOf = (e: Expr): string | null => (e.type === 'property' && e.expr.type === 'var' && e.expr.name === v && PLAIN.test(e.key) && e.key !== 'system_tags' ? e.key : null)
  const keys: ScanOrder['keys'] = []
  for (const o of proj.orderBy) {
    let key = keyOf(o.expr)
    if (key === null && o.expr.type === 'var') {
      const i = names.indexOf(o.expr.name)
      if (i >= 0) key = keyOf(proj.items[i].expr)
    } else if (key !== null && proj.distinct && !proj.items.some((i) => keyOf(i.expr) === key)) return null
    if (key === null) return null
    keys.push({ key, descending: o.descending })
  }
  const skip = proj.skip ? skipLimit(proj.skip) : 0
  const limit = skipLimit(proj.limit)
  if (skip === undefined || limit === undefined || limit === 0 || skip + limit > MAX_TOP) return null
  const order: ScanOrder = { keys }
  return {
    part,
    projection: proj,
    order,
    want: skip + limit,
    describe: `scan of ${v} read in order (${keys.map((k) => `${v}.${k.key}${k.descending ? ' DESC' : ''}`).join(', ')}) from the store, top ${skip + limit}`,
  }
}
