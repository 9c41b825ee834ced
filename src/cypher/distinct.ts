/**
 * `MATCH (n:Label …) [WHERE …] RETURN DISTINCT n.a [AS x], n.b … [ORDER BY …] [SKIP …] [LIMIT …]` answered by
 * one SQL GROUP BY (issue 28: "DISTINCT" was 13× a native engine; `RETURN DISTINCT c.operatingsystem` read every
 * computer). Pure: it decides whether the query has that shape; run.ts asks the source (GraphSource.distinctValues)
 * and makes the rows.
 *
 * Why it is the same answer. The MATCH must be exact in SQL (nodecount.ts exactNodeMatch: labels, `objectid`
 * and property tests the store decides exactly as the engine; the answer cannot be narrowed afterwards). The
 * engine projects each kept node (id order) and keeps the first row of each set of equal rows (values.ts keyOf:
 * a string, a boolean, a number — 1 and 1.0 alike —, null; lists and maps by their items), so without ORDER BY
 * the rows come in the order of their first node by id; with ORDER BY they are sorted stably in that order.
 * The store groups by each item's type class (string, boolean, number, null or missing: as values.ts keyOf
 * tells them apart — json_extract gives true as 1, so the class keeps true apart from 1) and value, returns
 * each group's value as stored JSON and its first node id, and orders the groups by ORDER BY's keys (topk.ts
 * orderSql: type rank, value) and then by that first id, which is the engine's order. Values whose equality or
 * order SQLite would not decide as JavaScript does (a list or map, a real, an integer beyond 2^53, a string with
 * a character from U+E000 up: topk.ts) put their group first; when the answer holds one, run.ts runs the
 * query the ordinary way. The items are `n.key` (a stored property, or `objectid`), each at most once; ORDER BY
 * keys are items (written as `n.key` or by their alias).
 */
import type { Clause, Expr, Query } from './ast'
import { exactNodeMatch } from './nodecount'
import { projectionNames } from './counts'
import type { NodeCountTest, ScanOrder } from './source'

export interface DistinctPushdown {
  test: NodeCountTest
  /** the returned keys, in item order (`objectid`: the column) */
  keys: string[]
  /** ORDER BY: an index into keys and the direction */
  order: { item: number; descending: boolean }[]
  skip: number
  limit: number | null
  columns: string[]
  describe: string
}

const PLAIN = /^[A-Za-z_][A-Za-z0-9_]*$/

/** `skipLimit` as in topk.ts: a non-negative integer constant, or undefined. */
export function distinctPushdown(query: Query, skipLimit: (e: Expr) => number | undefined): DistinctPushdown | null {
  const [match, ret] = query.clauses as [Clause | undefined, Clause | undefined]
  if (query.clauses.length !== 2 || !match || ret?.type !== 'return' || !ret.distinct || ret.star || ret.items.length === 0) return null
  const exact = exactNodeMatch(match)
  if (!exact) return null
  const v = exact.variable
  const keyOf = (e: Expr): string | null => (e.type === 'property' && e.expr.type === 'var' && e.expr.name === v && PLAIN.test(e.key) && e.key !== 'system_tags' ? e.key : null)
  const keys: string[] = []
  for (const i of ret.items) {
    const k = keyOf(i.expr)
    if (k === null || keys.includes(k)) return null
    keys.push(k)
  }
  const names = projectionNames(ret)
  // ORDER BY sees the projected names over the row's variables: a name v hides the node
  if (names.includes(v)) return null
  const order: DistinctPushdown['order'] = []
  for (const o of ret.orderBy) {
    let item = -1
    const k = keyOf(o.expr)
    if (k !== null) item = keys.indexOf(k)
    else if (o.expr.type === 'var') item = names.indexOf(o.expr.name)
    if (item < 0) return null
    order.push({ item, descending: o.descending })
  }
  const skip = ret.skip ? skipLimit(ret.skip) : 0
  const limit = ret.limit ? skipLimit(ret.limit) : null
  if (skip === undefined || limit === undefined) return null
  const ordered = order.length ? `, ordered by ${order.map((o) => `${v}.${keys[o.item]}${o.descending ? ' DESC' : ''}`).join(', ')}` : ''
  return { test: exact.test, keys, order, skip, limit, columns: names, describe: `distinct values of ${keys.map((k) => `${v}.${k}`).join(', ')} (${exact.describe}${ordered}) in the store` }
}

/** The ScanOrder of a DISTINCT's ORDER BY (the store orders groups as it orders scans). */
export function distinctOrder(d: DistinctPushdown): ScanOrder {
  return { keys: d.order.map((o) => ({ key: d.keys[o.item], descending: o.descending })) }
}
