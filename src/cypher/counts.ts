/**
 * Counts answered by the store: `[OPTIONAL] MATCH (g)-[:K]->(m …)` followed directly by a WITH / RETURN that
 * only counts the match (`count(m)`, `count(r)`, `count(*)`, `count(DISTINCT m)`) is one stage that asks the
 * store, per g, how many relationships there are (or how many different far nodes), instead of walking
 * every relationship and reading every far node ("largest groups" read 194,881 MemberOf relationships;
 * "optional sessions" read every computer's sessions and every user at the end of one).
 *
 * Why it is the same answer. The walk makes, for an input row whose g is node x, one row per relationship
 * of the pattern at x whose far node passes the far node's pattern (labels, property map) and is visible
 * to the caller; OPTIONAL makes one row with m (and r) null when there is none. The projection groups
 * those rows by its keys, which (checked below) do not read m or r, so every row made from one input row
 * falls in that input row's group. For such a group:
 *  - count(m) / count(r) = Σ over its input rows of n(x), n(x) the store's count (null m adds nothing);
 *  - count(*) = Σ n(x) for MATCH, Σ max(n(x), 1) for OPTIONAL MATCH (the null row is a row);
 *  - count(DISTINCT m) = the number of different far nodes of x, only when g itself is a key (every row of
 *    the group then has the same x, whose far nodes are the same set however often x occurs); with other
 *    keys two nodes' far nodes may overlap, which per-node counts cannot see: not pushed down.
 * So the projection is kept with each count replaced by sum() (max() for the distinct count, the same
 * value on every row of a group) of a hidden per-row value. A MATCH makes no row for x with n(x) = 0, so
 * neither does the stage. The far node's conditions must be exact in SQL (source.ts FarNodeTest): stored
 * labels, Base / AZBase by their kind lists, `objectid` and plain property keys equal to a string or a
 * boolean literal; a derived label (Tag_Tier_Zero, Tag_Owned), `system_tags`, other values, a relationship
 * property map or range, a bound m: not pushed down (the walk runs, same answers, slower). The MATCH's WHERE
 * may hold terms on g and the input row only (applied to g's rows first) and type tests of the relationship
 * (`NOT r:MemberOf`, folded into the kinds: splitWhere below); any other term walks.
 *
 * LIMIT. Without ORDER BY a LIMIT may return any n groups, but each with its whole count. A group keyed by
 * g alone (with other keys of its row) whose input holds each node at most once (g scanned by this MATCH
 * as the first clause, or bound by a first `MATCH (g…)` of one node) has exactly one row: the projection
 * is then made non-aggregating (the count is the row's value), so it streams and LIMIT stops the scan after
 * n rows. A group keyed by anything else (`c.name`: two computers may share a name) is complete only when
 * the last input row has been counted, since a later row may belong to it — the scan goes in id order, not
 * in key order — so LIMIT cannot end the counting early; it still costs one store round trip per 8,000
 * input rows and no relationship or far node is read.
 */
import type { Clause, Expr, NodePattern, PatternPart, Projection, Query } from './ast'
import { children, containsAggregate, isAggregate, variablesOf, type Row } from './eval'
import { exactKindsFor, relationshipKinds } from './labels'
import { starts, type RunContext } from './match'
import { planPart } from './plan'
import type { FarNodeTest } from './source'
import { NodeRef } from './values'

/** Hidden per-row values (run.ts never returns them: the projection names its columns). */
export const COUNT_VAR = '\u0000count'
export const ROWS_VAR = '\u0000rows'
export const DISTINCT_VAR = '\u0000distinct'

/** A property key the store writes into a JSON path (cypher.store.ts PLAIN_KEY). */
const PLAIN_KEY = /^[A-Za-z_][A-Za-z0-9_]*$/

type ProjectionClause = Extract<Clause, { type: 'with' | 'return' }>

export interface CountPushdown {
  grouped: NodePattern
  /** g is bound by an earlier clause (else this MATCH scans it) */
  bound: boolean
  /**
   * g is bound by the query's first clause, a `MATCH (g …) [WHERE …]` of one node: that clause and this
   * one can be one stage (run.ts), which scans g itself (the same scan, the same WHERE) and counts, instead
   * of making a row per node in one stage and extending it in the next (22,500 computers)
   */
  fused: { node: NodePattern; where: Expr | null } | null
  /**
   * the MATCH's WHERE when every term of it reads only g and the input row (applied to g's rows before
   * counting) or is a type test of the relationship (`[NOT] r:K`, folded into `kinds`); null when none
   */
  where: Expr | null
  optional: boolean
  /** direction seen from g */
  direction: 'out' | 'in' | 'both'
  kinds: string[] | null
  far: FarNodeTest | null
  /** which per-node counts the projection uses */
  relationships: boolean
  distinct: boolean
  /** the projection that follows, its counts replaced */
  projection: ProjectionClause
}

/** Variables in scope before clause `i`, and whether a first `MATCH (v)` of one node bound `v` once per row. */
function scopeBefore(clauses: Clause[], i: number): Set<string> {
  let scope = new Set<string>()
  for (const c of clauses.slice(0, i)) {
    if (c.type === 'match')
      for (const p of c.patterns) for (const v of [p.variable, ...p.nodes.map((n) => n.variable), ...p.rels.map((r) => r.variable)]) if (v) scope.add(v)
    if (c.type === 'unwind') scope.add(c.variable)
    if (c.type === 'with') {
      const names = c.items.map((it) => it.alias ?? (it.expr.type === 'var' ? it.expr.name : it.text))
      scope = c.star ? new Set([...scope, ...names]) : new Set(names)
    }
  }
  return scope
}

/** The far node's pattern as exact store conditions, or null when one of them cannot be. */
function farTest(m: NodePattern): FarNodeTest | null | 'no' {
  const kinds: string[][] = []
  for (const l of m.labels) {
    const k = exactKindsFor(l)
    if (!k) return 'no'
    kinds.push(k)
  }
  const properties: FarNodeTest['properties'] = []
  for (const { key, value } of m.properties?.entries ?? []) {
    if (key === 'system_tags' || !PLAIN_KEY.test(key)) return 'no'
    if (value.type !== 'literal' || (typeof value.value !== 'string' && typeof value.value !== 'boolean')) return 'no'
    properties.push({ key, value: value.value })
  }
  // each test is a term of the store's statement, and most bind parameters: D1 refuses more than 100 of
  // them (cypher.store.ts MAX_SCAN_CONDITIONS). An exact test cannot be dropped, so a wider far node is
  // counted by the walk instead.
  if (kinds.length + properties.length > MAX_FAR_TESTS) return 'no'
  return kinds.length || properties.length ? { kinds, properties } : null
}

/** Tests on the far node the store may be given (each binds at most two parameters). */
const MAX_FAR_TESTS = 16

const hidden = (fn: 'sum' | 'max', name: string): Expr => ({ type: 'call', name: fn, distinct: false, args: [{ type: 'var', name }] })

class NotCountable extends Error {}

/** `e` with every aggregate replaced by `f` (which throws NotCountable for an aggregate it cannot replace). */
function mapAggregates(e: Expr, f: (a: Expr) => Expr): Expr {
  if (isAggregate(e)) return f(e)
  if (!containsAggregate(e)) return e
  // rebuilt field by field: sub-expressions, lists of them, CASE branches and map entries
  const map = (x: unknown): unknown => {
    if (Array.isArray(x)) return x.map(map)
    if (x && typeof x === 'object') {
      if (typeof (x as { type?: unknown }).type === 'string') return mapAggregates(x as Expr, f)
      return Object.fromEntries(Object.entries(x).map(([k, v]) => [k, map(v)]))
    }
    return x
  }
  return Object.fromEntries(Object.entries(e).map(([k, v]) => [k, map(v)])) as Expr
}

function conjuncts(e: Expr, out: Expr[] = []): Expr[] {
  if (e.type === 'and') {
    conjuncts(e.left, out)
    conjuncts(e.right, out)
  } else out.push(e)
  return out
}

/**
 * The MATCH's WHERE as what the count push-down can do with it: the terms reading neither the relationship
 * nor the far node (nor a pattern: only g and the input row), kept as one WHERE on g's rows, and the type
 * tests `r:K` / `NOT r:K` of the relationship variable, folded into the kinds walked; null when any term is
 * something else, or when the kinds are all the kinds (an exclusion cannot be listed) or none.
 *
 * Why it is the same answer. WHERE keeps a row when each of its terms is true (AND). A term that reads only g
 * and the input row has one value for every row made from one input row and one g, so keeping g's rows where
 * it is true and then counting keeps the same rows. `r:K` on a relationship is true exactly when its type is K
 * (eval.ts hasLabels; never null for a relationship), so `r:K` keeps the relationships of kind K and `NOT r:K`
 * the others: the walked kinds intersected with, or without, K.
 */
function splitWhere(where: Expr, m: string | null, r: string | null, kinds: string[] | null): { where: Expr | null; kinds: string[] | null } | null {
  let kept: Expr | null = null
  let narrowed = kinds
  for (const t of conjuncts(where)) {
    const inner = t.type === 'not' ? t.expr : t
    if (r && inner.type === 'hasLabels' && inner.expr.type === 'var' && inner.expr.name === r && inner.labels.length === 1) {
      if (!narrowed) return null
      const k = inner.labels[0]
      narrowed = t.type === 'not' ? narrowed.filter((x) => x !== k) : narrowed.filter((x) => x === k)
      continue
    }
    const vars = variablesOf(t)
    if ((m && vars.has(m)) || (r && vars.has(r)) || hasPattern(t)) return null
    kept = kept ? { type: 'and', left: kept, right: t } : t
  }
  if (narrowed && narrowed.length === 0) return null
  return { where: kept, kinds: narrowed }
}

/** Whether `e` holds a pattern (its variables may be new ones: the caller cannot tell them from g's). */
function hasPattern(e: Expr): boolean {
  return e.type === 'patternPredicate' || e.type === 'exists' || children(e).some(hasPattern)
}

/**
 * Clause `i` and the next one as a count push-down, or null when they are not exactly of the shape above.
 */
export function countPushdown(clauses: Clause[], i: number): CountPushdown | null {
  const clause = clauses[i]
  const next = clauses[i + 1]
  if (clause.type !== 'match' || clause.patterns.length !== 1) return null
  // OPTIONAL MATCH … WHERE keeps a row whose matches all fail the WHERE (with nulls): not counted here
  if (clause.where && clause.optional) return null
  if (!next || (next.type !== 'with' && next.type !== 'return') || next.star) return null
  const part = clause.patterns[0]
  if (part.variable || part.shortest || part.rels.length !== 1) return null
  const rel = part.rels[0]
  if (rel.properties || rel.range) return null
  const scope = scopeBefore(clauses, i)
  if (rel.variable && scope.has(rel.variable)) return null
  for (const [gi, mi] of [
    [0, 1],
    [1, 0],
  ]) {
    const g = part.nodes[gi]
    const m = part.nodes[mi]
    if (!g.variable || g.variable === m.variable || g.variable === rel.variable) continue
    if (m.variable && (scope.has(m.variable) || m.variable === rel.variable)) continue
    const bound = scope.has(g.variable)
    // OPTIONAL: g must come from the input (a scanned g would make one all-null row when nothing matches)
    // and be unconstrained here (a g failing its own pattern still makes a row, with a count of 0)
    if (clause.optional && (!bound || g.labels.length || g.properties)) continue
    const far = farTest(m)
    if (far === 'no') return null
    const split = clause.where ? splitWhere(clause.where, m.variable, rel.variable, relationshipKinds(rel.types)) : { where: null, kinds: relationshipKinds(rel.types) }
    if (!split) continue
    const counted = new Set([m.variable, rel.variable].filter((v): v is string => v !== null))
    let relationships = false
    let distinct = false
    const replace = (a: Expr): Expr => {
      if (a.type === 'countStar') {
        relationships = true
        return hidden('sum', clause.optional ? ROWS_VAR : COUNT_VAR)
      }
      if (a.type === 'call' && a.name === 'count' && a.args.length === 1 && a.args[0].type === 'var' && counted.has(a.args[0].name)) {
        if (!a.distinct) {
          relationships = true
          return hidden('sum', COUNT_VAR)
        }
        if (a.args[0].name === m.variable) {
          distinct = true
          return hidden('max', DISTINCT_VAR)
        }
      }
      throw new NotCountable()
    }
    let items: ProjectionClause['items']
    let orderBy: ProjectionClause['orderBy']
    try {
      items = next.items.map((it) => ({ ...it, expr: mapAggregates(it.expr, replace) }))
      orderBy = next.orderBy.map((o) => ({ ...o, expr: mapAggregates(o.expr, replace) }))
    } catch (e) {
      if (e instanceof NotCountable) return null
      throw e
    }
    if (!relationships && !distinct) return null
    // nothing but the counts may read the match's new variables
    if ([...items, ...orderBy].some((x) => [...variablesOf(x.expr)].some((v) => counted.has(v)))) return null
    const byG = items.some((it) => !containsAggregate(it.expr) && it.expr.type === 'var' && it.expr.name === g.variable)
    const direction = rel.direction === 'both' ? 'both' : (gi === 0) === (rel.direction === 'out') ? 'out' : 'in'
    if (distinct && (!byG || direction === 'both')) return null
    // each group one row (see LIMIT above): the counts are the row's values and the projection streams
    const first = clauses[0]
    const once =
      (!bound && i === 0) ||
      (bound && i === 1 && first.type === 'match' && !first.optional && first.patterns.length === 1 && first.patterns[0].rels.length === 0 && !first.patterns[0].variable && first.patterns[0].nodes[0].variable === g.variable)
    const fused = bound && once && !split.where && first.type === 'match' && !g.labels.length && !g.properties ? { node: first.patterns[0].nodes[0], where: first.where } : null
    if (once && byG) {
      const unwrap = (e: Expr): Expr =>
        mapAggregates(e, (a) => {
          if (a.type === 'call' && (a.name === 'sum' || a.name === 'max') && a.args[0]?.type === 'var') return a.args[0]
          throw new Error('unreachable: only hidden counts are left')
        })
      items = items.map((it) => ({ ...it, expr: unwrap(it.expr) }))
      orderBy = orderBy.map((o) => ({ ...o, expr: unwrap(o.expr) }))
    }
    const names = projectionNames(next)
    const projection: ProjectionClause = { ...next, items: items.map((it, k) => ({ ...it, alias: names[k] })), orderBy }
    return { grouped: g, bound, fused, where: split.where, optional: clause.optional, direction, kinds: split.kinds, far, relationships, distinct, projection }
  }
  return null
}

export function projectionNames(p: Projection): string[] {
  return p.items.map((i) => i.alias ?? (i.expr.type === 'var' ? i.expr.name : i.text))
}

function describe(push: CountPushdown): string {
  const dir = push.direction === 'out' ? 'outgoing' : push.direction === 'in' ? 'incoming' : 'undirected'
  const far = push.far
    ? ` whose other end is (${push.far.kinds.map((k) => `:${k.length === 1 ? k[0] : `[${k.length} kinds]`}`).join('')}${push.far.properties.length ? ` {${push.far.properties.map((p) => p.key).join(', ')}}` : ''})`
    : ''
  const what = [push.relationships ? `count of ${dir} ${push.kinds ? push.kinds.join('|') : 'any'} relationships` : '', push.distinct ? `count of distinct far nodes` : '']
    .filter(Boolean)
    .join(' and ')
  return `${what} per node${far}${push.optional ? ' (optional)' : ''}, in the store`
}

async function counts(ctx: RunContext, push: CountPushdown, ids: number[]): Promise<{ rels: Map<number, number> | null; distinct: Map<number, number> | null }> {
  const unique = [...new Set(ids)]
  ctx.budget.checkTime()
  const rels = push.relationships ? await ctx.source.countRelationships(unique, push.direction, push.kinds, push.far, false) : null
  const distinct = push.distinct ? await ctx.source.countRelationships(unique, push.direction, push.kinds, push.far, true) : null
  // each relationship counted is charged as a traversal step, as a walk over it would be
  let steps = 0
  for (const n of (rels ?? distinct)!.values()) steps += n
  ctx.budget.chargeSteps(steps)
  return { rels, distinct }
}

/**
 * The row with g and the hidden counts the projection reads (only those). A bound g's row is the input
 * row itself, given its values in place: every stage hands each row it makes to exactly one consumer and
 * never touches it again (MATCH and OPTIONAL MATCH copy the rows they extend, WITH / RETURN make new ones),
 * and a bound g makes one counted row per input row, so nothing else can see the change; copying each of
 * 22,500 rows cost more than counting them. A scanned g shares its input row with every node: copied.
 */
function withCounts(push: CountPushdown, row: Row, id: number | null, c: { rels: Map<number, number> | null; distinct: Map<number, number> | null }): Row {
  const out: Row = push.bound ? row : { ...row }
  const n = id === null ? 0 : (c.rels?.get(id) ?? 0)
  if (id !== null && !push.bound) out[push.grouped.variable!] = new NodeRef(id)
  if (push.relationships) {
    out[COUNT_VAR] = n
    if (push.optional) out[ROWS_VAR] = Math.max(n, 1)
  }
  if (push.distinct) out[DISTINCT_VAR] = id === null ? 0 : (c.distinct?.get(id) ?? 0)
  return out
}

/** The full WHERE of a fused first clause, applied as its MATCH stage would (run.ts applyWhere). */
export type RowFilter = (rows: Row[]) => Promise<Row[]>

async function* countRows(ctx: RunContext, push: CountPushdown, rows: Row[], where: RowFilter): AsyncGenerator<Row[]> {
  if (rows.length === 0) return
  const g = push.grouped.variable!
  if (push.fused) {
    // the first clause's MATCH (g …) WHERE …, exactly as its stage runs it: the scan with the WHERE's
    // conditions on g, one new row per node, then the whole WHERE; then each row counted
    const plan = planPart({ variable: null, shortest: null, nodes: [push.fused.node], rels: [] }, new Set(Object.keys(rows[0])), push.fused.where)
    for await (const batch of starts(ctx, plan, rows)) {
      const made = await where(batch.map((s) => ({ ...s.row, [g]: new NodeRef(s.seq[0]) })))
      if (made.length === 0) continue
      const ids = made.map((r) => (r[g] as NodeRef).id)
      const c = await counts(ctx, push, ids)
      const out: Row[] = []
      made.forEach((r, k) => {
        if (push.optional || (c.rels ?? c.distinct)!.has(ids[k])) out.push(withCounts(push, r, ids[k], c))
      })
      ctx.budget.chargeRows(out.length)
      if (out.length) yield out
    }
    return
  }
  if (push.optional) {
    // every input row goes on: a g that is not a node (null from an earlier OPTIONAL MATCH) counts 0
    const nodeOf = (r: Row): number | null => {
      const v = r[g]
      return v instanceof NodeRef ? v.id : null
    }
    const c = await counts(ctx, push, rows.flatMap((r) => nodeOf(r) ?? []))
    const out = rows.map((r) => withCounts(push, r, nodeOf(r), c))
    ctx.budget.chargeRows(out.length)
    yield out
    return
  }
  // g bound (its pattern's labels and properties tested) or scanned, as a walk starts (with the MATCH's
  // WHERE on g, which the scan may take conditions from), then that WHERE on g's rows, then each counted
  const plan = planPart({ variable: null, shortest: null, nodes: [push.grouped], rels: [] }, new Set(Object.keys(rows[0])), push.where)
  for await (const all of starts(ctx, plan, rows)) {
    let batch = all
    if (push.where) {
      // applyWhere keeps the very row objects it is given
      const candidates = all.map((s) => (push.bound ? s.row : { ...s.row, [g]: new NodeRef(s.seq[0]) }))
      const kept = new Set(await where(candidates))
      batch = all.filter((_, k) => kept.has(candidates[k]))
    }
    if (batch.length === 0) continue
    const c = await counts(ctx, push, batch.map((s) => s.seq[0]))
    const out: Row[] = []
    for (const s of batch) if ((c.rels ?? c.distinct)!.has(s.seq[0])) out.push(withCounts(push, s.row, s.seq[0], c))
    ctx.budget.chargeRows(out.length)
    if (out.length) yield out
  }
}

/**
 * Input rows counted at once: one store round trip (countRelationships sends a statement per 5,000 ids in
 * one batch); a scan page is up to 8,000 nodes. Fewer, larger calls: each D1 call costs a few ms of fixed
 * work (22,500 computers took 12 calls of 2,000).
 */
const COUNT_BATCH = 8_000

/** The MATCH's rows with their counts (input taken COUNT_BATCH rows at a time). */
export async function* countStream(ctx: RunContext, push: CountPushdown, input: AsyncGenerator<Row[]>, where: RowFilter): AsyncGenerator<Row[]> {
  const scanned = push.fused?.node ?? (push.bound ? null : push.grouped)
  const start = scanned ? planPart({ variable: null, shortest: null, nodes: [scanned], rels: [] }, new Set(), push.fused?.where ?? null).describe : `bound ${push.grouped.variable}`
  if (ctx.plans.length < 32) ctx.plans.push(`${start}; ${describe(push)}`)
  for await (const batch of input)
    for (let i = 0; i < batch.length; i += COUNT_BATCH) yield* countRows(ctx, push, batch.slice(i, i + COUNT_BATCH), where)
}

/**
 * `WITH …, collect([DISTINCT] x) AS c … size(c)`: when every later use of `c` is `size(c)`, the list is never
 * needed, only its length, so the query is run as `count([DISTINCT] x) AS c … c`. The count streams (run.ts
 * Accumulator holds a number, and for DISTINCT the keys seen, instead of a row-charged list of every value), and
 * a count right after a one-relationship MATCH is answered by the store (countPushdown above): "Non-Tier Zero
 * object with excessive control" (`WITH n, COLLECT(DISTINCT(m)) AS endNodes WHERE SIZE(endNodes) >= 1000`)
 * walked every attack-path relationship of the graph into lists and was refused by the row limit.
 *
 * Why it is the same answer: collect() skips nulls and count() does too; DISTINCT compares the same keys in
 * both (values.ts keyOf); so size(collect(…)) = count(…) for every group. Rewritten only when `c` is read in
 * no other way: in the projection's own WHERE and ORDER BY and every later clause, each `c` is the whole
 * argument of size(), no later clause projects `*` (it would return `c`) and nothing later binds the name `c`
 * again (a pattern, UNWIND, projection alias, list comprehension or quantifier variable). Otherwise the query
 * is left as it is.
 */
export function countCollectedSizes(query: Query): Query {
  let clauses = query.clauses
  for (let i = 0; i < clauses.length; i++) {
    if (clauses[i].type !== 'with') continue
    for (let k = 0; k < (clauses[i] as ProjectionClause).items.length; k++) {
      const c = clauses[i] as Extract<Clause, { type: 'with' }>
      const item = c.items[k]
      const e = item.expr
      if (e.type !== 'call' || e.name !== 'collect' || e.args.length !== 1 || !item.alias) continue
      const alias = item.alias
      const later = clauses.slice(i + 1)
      const own = [...(c.where ? [c.where] : []), ...c.orderBy.map((o) => o.expr)]
      if (c.items.some((it, j) => j !== k && (it.alias ?? (it.expr.type === 'var' ? it.expr.name : it.text)) === alias)) continue
      if (!own.every((x) => onlySized(x, alias)) || !later.every((l) => clauseOnlySized(l, alias))) continue
      const sized = (x: Expr): Expr => replaceSized(x, alias)
      const items = c.items.map((it, j) => (j === k ? { ...it, expr: { ...e, name: 'count' } } : it))
      const rewritten: Clause = { ...c, items, where: c.where ? sized(c.where) : null, orderBy: c.orderBy.map((o) => ({ ...o, expr: sized(o.expr) })) }
      clauses = [...clauses.slice(0, i), rewritten, ...later.map((l) => clauseSized(l, alias))]
    }
  }
  return clauses === query.clauses ? query : { ...query, clauses }
}

const isSizeOf = (e: Expr, name: string): boolean => e.type === 'call' && e.name === 'size' && e.args.length === 1 && e.args[0].type === 'var' && e.args[0].name === name

/** Whether every `name` in `e` is the argument of size(), and nothing in `e` binds `name` or holds a pattern. */
function onlySized(e: Expr, name: string): boolean {
  if (isSizeOf(e, name)) return true
  if (e.type === 'var') return e.name !== name
  if ((e.type === 'listComprehension' || e.type === 'quantifier') && e.variable === name) return false
  if (e.type === 'patternPredicate' || e.type === 'exists') return false
  return children(e).every((x) => onlySized(x, name))
}

function replaceSized(e: Expr, name: string): Expr {
  if (isSizeOf(e, name)) return { type: 'var', name }
  const map = (x: unknown): unknown => {
    if (Array.isArray(x)) return x.map(map)
    if (x && typeof x === 'object') {
      if (typeof (x as { type?: unknown }).type === 'string') return replaceSized(x as Expr, name)
      return Object.fromEntries(Object.entries(x).map(([k, v]) => [k, map(v)]))
    }
    return x
  }
  return Object.fromEntries(Object.entries(e).map(([k, v]) => [k, map(v)])) as Expr
}

function clauseOnlySized(c: Clause, name: string): boolean {
  switch (c.type) {
    case 'match':
      return (
        c.patterns.every((p) => p.variable !== name && p.nodes.every((n) => n.variable !== name && (!n.properties || onlySized(n.properties, name))) && p.rels.every((r) => r.variable !== name && (!r.properties || onlySized(r.properties, name)))) &&
        (!c.where || onlySized(c.where, name))
      )
    case 'unwind':
      return c.variable !== name && onlySized(c.expr, name)
    case 'with':
    case 'return':
      return (
        !c.star &&
        c.items.every((it) => onlySized(it.expr, name) && (it.alias ?? (it.expr.type === 'var' ? it.expr.name : it.text)) !== name) &&
        c.orderBy.every((o) => onlySized(o.expr, name)) &&
        (!c.skip || onlySized(c.skip, name)) &&
        (!c.limit || onlySized(c.limit, name)) &&
        (c.type !== 'with' || !c.where || onlySized(c.where, name))
      )
    default:
      return false
  }
}

function clauseSized(c: Clause, name: string): Clause {
  const sized = (x: Expr): Expr => replaceSized(x, name)
  switch (c.type) {
    case 'match':
      return { ...c, where: c.where ? sized(c.where) : null, patterns: c.patterns.map((p) => replaceSized(p as unknown as Expr, name) as unknown as PatternPart) }
    case 'unwind':
      return { ...c, expr: sized(c.expr) }
    case 'with':
      return { ...c, items: c.items.map((it) => ({ ...it, expr: sized(it.expr) })), orderBy: c.orderBy.map((o) => ({ ...o, expr: sized(o.expr) })), skip: c.skip && sized(c.skip), limit: c.limit && sized(c.limit), where: c.where ? sized(c.where) : null }
    case 'return':
      return { ...c, items: c.items.map((it) => ({ ...it, expr: sized(it.expr) })), orderBy: c.orderBy.map((o) => ({ ...o, expr: sized(o.expr) })), skip: c.skip && sized(c.skip), limit: c.limit && sized(c.limit) }
    default:
      return c
  }
}
