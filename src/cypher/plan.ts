/**
 * Planning (pure): how one pattern part is matched. The engine walks a part from one end; the plan
 * picks that end (a node already bound by an earlier clause, else the one the store can find fastest:
 * exact object id or name, then WHERE conditions on it alone, then labels), turns the walk's
 * relationships around when it starts from the far end, and attaches to each node the WHERE conditions
 * that mention only that node (and variables bound before), so a walk is cut as early as possible.
 * The full WHERE is still applied to every result: attaching is an optimisation, never a change of
 * meaning.
 */
import type { Expr, NodePattern, PatternPart, RelPattern } from './ast'
import type { NodeScan } from './source'
import { scanKindsFor } from './labels'
import { variablesOf } from './eval'

export interface PartPlan {
  part: PatternPart
  /** the walk starts at the part's last node */
  reversed: boolean
  /** node patterns in walk order */
  nodes: NodePattern[]
  /** relationship patterns in walk order, directions as walked */
  rels: RelPattern[]
  /** conditions per node (walk order) */
  filters: Expr[][]
  /** how to find the first node when it is not bound: the store-side part of its conditions */
  scan: NodeScan
  /** readable summary (tests, the plan header) */
  describe: string
}

/** `a AND b AND c` → [a, b, c] */
export function conjuncts(e: Expr | null): Expr[] {
  if (!e) return []
  if (e.type === 'and') return [...conjuncts(e.left), ...conjuncts(e.right)]
  return [e]
}

function hasPatternPredicate(e: Expr): boolean {
  if (e.type === 'patternPredicate' || e.type === 'exists') return true
  return Object.values(e).some((v) =>
    Array.isArray(v) ? v.some((x) => x && typeof x === 'object' && 'type' in x && hasPatternPredicate(x as Expr)) : v && typeof v === 'object' && 'type' in v && hasPatternPredicate(v as Expr),
  )
}

/** `v.key = 'literal'` or `'literal' = v.key` → the literal, for key objectid / name */
function equalityOn(e: Expr, variable: string, key: 'objectid' | 'name'): string | null {
  if (e.type !== 'compare' || e.op !== '=') return null
  for (const [a, b] of [
    [e.left, e.right],
    [e.right, e.left],
  ]) {
    if (a.type === 'property' && a.key === key && a.expr.type === 'var' && a.expr.name === variable && b.type === 'literal' && typeof b.value === 'string')
      return b.value
  }
  return null
}

function scanFor(node: NodePattern, filters: Expr[]): NodeScan {
  let kinds: string[] | null = null
  for (const l of node.labels) {
    kinds = scanKindsFor(l)
    if (kinds) break
  }
  const scan: NodeScan = { kinds, objectid: null, name: null }
  for (const key of ['objectid', 'name'] as const) {
    const entry = node.properties?.entries.find((x) => x.key === key)
    if (entry && entry.value.type === 'literal' && typeof entry.value.value === 'string') scan[key] = entry.value.value
    if (node.variable && scan[key] === null)
      for (const f of filters) {
        const v = equalityOn(f, node.variable, key)
        if (v !== null) scan[key] = v
      }
  }
  return scan
}

function score(node: NodePattern, bound: ReadonlySet<string>, filters: Expr[]): number {
  if (node.variable && bound.has(node.variable)) return 1000
  const s = scanFor(node, filters)
  return (s.objectid !== null ? 500 : 0) + (s.name !== null ? 400 : 0) + filters.length * 20 + (s.kinds ? 10 : 0) + node.labels.length
}

function flip(r: RelPattern): RelPattern {
  return { ...r, direction: r.direction === 'out' ? 'in' : r.direction === 'in' ? 'out' : 'both' }
}

/**
 * `bound`: variables bound before this part. `where`: the clause's WHERE (null: none). The chosen end
 * may be overridden (`forceReversed`) for shortest paths, which search from the smaller side.
 */
export function planPart(part: PatternPart, bound: ReadonlySet<string>, where: Expr | null): PartPlan {
  const cs = conjuncts(where).filter((c) => !hasPatternPredicate(c))
  const filtersOf = (n: NodePattern): Expr[] => {
    if (!n.variable || bound.has(n.variable)) return []
    return cs.filter((c) => {
      const vars = variablesOf(c)
      return vars.has(n.variable!) && [...vars].every((v) => v === n.variable || bound.has(v))
    })
  }
  const all = part.nodes.map(filtersOf)
  const first = score(part.nodes[0], bound, all[0])
  const last = score(part.nodes[part.nodes.length - 1], bound, all[all.length - 1])
  const reversed = part.rels.length > 0 && last > first
  const nodes = reversed ? [...part.nodes].reverse() : part.nodes
  const rels = reversed ? [...part.rels].reverse().map(flip) : part.rels
  const filters = reversed ? [...all].reverse() : all
  const scan = scanFor(nodes[0], filters[0])
  const start = nodes[0].variable && bound.has(nodes[0].variable) ? `bound ${nodes[0].variable}` : `scan ${JSON.stringify(scan)}`
  return { part, reversed, nodes, rels, filters, scan, describe: `${start}; ${rels.length} hop(s)${reversed ? ' from the last node' : ''}` }
}
