/**
 * Runs a parsed query: clauses as a pipeline of batch streams (MATCH → WHERE → WITH → ... → RETURN).
 * Streams are pulled, so RETURN ... LIMIT n stops every upstream walk once n rows exist (unless
 * ORDER BY or aggregation needs every row, which the row budget bounds).
 */
import type { Clause, Expr, NodePattern, PatternPart, Projection, Query } from './ast'
import { Budget, DEFAULT_LIMITS, type CypherLimits } from './budget'
import { children, containsAggregate, evaluate, isAggregate, type Row } from './eval'
import { BATCH, MATCH_BATCH, loadNodes, loadRelProperties, matchPart, newContext, Unorderable, type RunContext, type ShortestTuning } from './match'
import { countCollectedSizes, countPushdown, countStream, projectionNames } from './counts'
import { nodeCountPushdown } from './nodecount'
import { orderPushdown } from './topk'
import { distinctOrder, distinctPushdown } from './distinct'
import { oneHopPushdown, oneHopStream, type OneHopPushdown } from './onehop'
import { readsRelationshipProperties } from './needs'
import { CypherError } from './parse'
import { chargeRow, referencedNodes, referencedRels } from './present'
import type { AnswerBudget } from './answer'
import type { GraphSource } from './source'
import { fromJson, keyOf, NodeRef, orderCompare, type Value } from './values'
import { relationshipKinds } from './labels'
import { chunks } from '../chunks'

type Stream = AsyncGenerator<Row[]>

export interface QueryResult {
  columns: string[]
  rows: Value[][]
  ctx: RunContext
}

export interface RunOptions {
  limits?: CypherLimits
  now?: number
  clock?: () => number
  /** false: counts are never answered by the store (counts.ts), every match is walked (equivalence tests) */
  countPushdown?: boolean
  /** false: ORDER BY … LIMIT is never read in order from the store (topk.ts) nor DISTINCT grouped by it (distinct.ts): the engine sorts (equivalence tests) */
  orderPushdown?: boolean
  /** false: a one-hop pattern with a LIMIT is never answered by the store's join (onehop.ts): the engine walks (equivalence tests) */
  hopPushdown?: boolean
  /** false: variable-length levels keep every relationship (match.ts hops: no pruning of walks that can neither end nor go on; equivalence tests) */
  walkPruning?: boolean
  /** shortest-path thresholds (match.ts ShortestTuning); tests lower them */
  shortest?: Partial<ShortestTuning>
  /** the budget to charge (a pooled one: budget.ts withPooledBudget); else a new one from `limits` and `clock` */
  budget?: Budget
  /**
   * the answer's budget (answer.ts), charged per returned row as it arrives (present.ts chargeRow): a
   * query whose answer would be too large is stopped before all its rows are held. None: rows are not
   * charged (Tier Zero rules read ids, they send no answer)
   */
  answer?: AnswerBudget
}

export async function runQuery(query: Query, source: GraphSource, opts: RunOptions = {}): Promise<QueryResult> {
  const running: { ctx: RunContext | null } = { ctx: null }
  try {
    return await runIn(query, source, opts, running)
  } catch (e) {
    // a query stopped while it ran (a limit, a type error): the plans made so far go with the error, so the
    // refusal can say how the patterns were being matched (cypher.routes.ts, X-Cypher-Plan)
    if (e instanceof CypherError && running.ctx && e.plans === undefined) e.plans = running.ctx.plans
    throw e
  }
}

async function runIn(query: Query, source: GraphSource, opts: RunOptions, running: { ctx: RunContext | null }): Promise<QueryResult> {
  // size(collect(…)) read as count(…) (counts.ts): the same answer without holding the lists
  if (opts.countPushdown !== false) query = countCollectedSizes(query)
  const budget = opts.budget ?? new Budget(opts.limits ?? DEFAULT_LIMITS, opts.clock)
  const ctx = newContext(source, budget, opts.now ?? Date.now(), readsRelationshipProperties(query))
  running.ctx = ctx
  if (opts.shortest) ctx.shortest = { ...ctx.shortest, ...opts.shortest }
  if (opts.walkPruning === false) ctx.walkPruning = false
  // `MATCH (n:Label) WHERE … RETURN count(n)` with every condition exact in SQL: one count in the store
  const nodeCount = opts.countPushdown !== false && ctx.source.countNodes ? nodeCountPushdown(query) : null
  if (nodeCount) {
    budget.checkTime()
    const c = await ctx.source.countNodes!(nodeCount.test)
    if (ctx.plans.length < 32) ctx.plans.push(nodeCount.describe)
    const row = nodeCount.columns.map(() => c)
    if (opts.answer) chargeRow(opts.answer, nodeCount.columns, row, new Set())
    return { columns: nodeCount.columns, rows: [row], ctx }
  }
  // `MATCH (n:Label) WHERE … RETURN DISTINCT n.a, …` with every condition exact in SQL: one GROUP BY (distinct.ts)
  const distinct = opts.orderPushdown !== false && ctx.source.distinctValues ? distinctPushdown(query, (e) => skipLimit(ctx, e)) : null
  if (distinct) {
    budget.checkTime()
    const values = await ctx.source.distinctValues!(distinct.test, distinct.keys, distinctOrder(distinct), distinct.skip, distinct.limit)
    if (values !== null) {
      if (ctx.plans.length < 32) ctx.plans.push(distinct.describe)
      budget.chargeRows(values.length)
      const rows: Value[][] = []
      for (const v of values) {
        if (rows.length >= budget.limits.maxResultRows)
          throw new CypherError(`the query was stopped: it returns more than ${budget.limits.maxResultRows} rows (result row limit); add or lower a LIMIT`)
        const row = v.map(fromJson)
        if (opts.answer) chargeRow(opts.answer, distinct.columns, row, new Set())
        rows.push(row)
      }
      return { columns: distinct.columns, rows, ctx }
    }
    // a value the store cannot compare as the engine does: the ordinary way
    if (ctx.plans.length < 32) ctx.plans.push('DISTINCT by the engine (a value the store cannot compare)')
  }
  // ORDER BY … LIMIT over a label scan: the scan read in the projection's order (topk.ts)
  const top = opts.orderPushdown !== false && ctx.source.scanOrdered ? orderPushdown(query, (e) => skipLimit(ctx, e)) : null
  if (!top) {
    // a one-hop pattern (or a chain of 2-3 relationships) with a LIMIT: its rows from one join in the store (onehop.ts)
    const found = opts.hopPushdown !== false && ctx.source.oneHop ? oneHopPushdown(query, (e) => skipLimit(ctx, e)) : null
    // a chain of 2-3 relationships: one join per page too, when the store has it
    const hop = found && (found.chain === null || ctx.source.chain) ? found : null
    if (hop && ctx.plans.length < 32) ctx.plans.push(hop.describe)
    return pipeline(query, ctx, opts, budget, null, hop)
  }
  ctx.scanOrder = { part: top.part, order: top.order, want: top.want }
  if (ctx.plans.length < 32) ctx.plans.push(top.describe)
  try {
    return await pipeline(query, ctx, opts, budget, top.projection)
  } catch (e) {
    if (!(e instanceof Unorderable)) throw e
    // a value the store cannot order as the engine does (topk.ts): the ordinary way, from the start (no row
    // was answered yet: the ordered scan's first page is the query's first read)
    const again = newContext(source, budget, ctx.now, ctx.relProperties)
    if (opts.shortest) again.shortest = { ...again.shortest, ...opts.shortest }
    again.walkPruning = ctx.walkPruning
    again.plans.push('ORDER BY sorted by the engine (a value the store cannot order)')
    running.ctx = again
    return pipeline(query, again, opts, budget, null)
  }
}

/** SKIP / LIMIT's value when it is a non-negative integer constant, else undefined. */
function skipLimit(ctx: RunContext, e: Expr): number | undefined {
  try {
    const v = evaluate(e, {}, ctx)
    return typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : undefined
  } catch {
    return undefined
  }
}

/** The clauses as streams; `presorted`: the projection whose input comes in its ORDER BY's order (topk.ts). */
async function pipeline(query: Query, ctx: RunContext, opts: RunOptions, budget: Budget, presorted: Projection | null, hop: OneHopPushdown | null = null): Promise<QueryResult> {
  let stream: Stream = (async function* () {
    yield [{}]
  })()
  let columns: string[] = []
  for (let i = 0; i < query.clauses.length; i++) {
    const clause = query.clauses[i]
    if (clause.type === 'return') columns = projectionNames(clause)
    if (i === 0 && hop) {
      // the first MATCH's rows come from the store's join (onehop.ts)
      // with a WHERE, the engine re-tests it on every row the store returns (the store's conditions are necessary ones)
      const where = clause.type === 'match' ? clause.where : null
      stream = oneHopStream(ctx, hop, (rows) => applyWhere(ctx, where, rows))
      continue
    }
    // a first MATCH (g …) of one node whose g the next clause counts: the three clauses are one stage
    const ahead = i === 0 && opts.countPushdown !== false && query.clauses.length > 2 ? countPushdown(query.clauses, 1) : null
    const push = ahead?.fused ? ahead : opts.countPushdown === false ? null : countPushdown(query.clauses, i)
    if (push) {
      // the MATCH and the projection's counts become one stage; the projection sums the store's counts
      if (push.projection.type === 'return') columns = projectionNames(push.projection)
      const where = push.fused?.where ?? push.where
      stream = stage(ctx, push.projection, countStream(ctx, push, stream, (rows) => applyWhere(ctx, where, rows)))
      i += push === ahead ? 2 : 1
      continue
    }
    stream = stage(ctx, clause, stream, clause === presorted)
  }
  const rows: Value[][] = []
  const seenNodes = new Set<number>()
  for await (const batch of stream)
    for (const r of batch) {
      if (rows.length >= budget.limits.maxResultRows)
        throw new CypherError(`the query was stopped: it returns more than ${budget.limits.maxResultRows} rows (result row limit); add or lower a LIMIT`)
      if (columns.length === 0) columns = Object.keys(r)
      const row = columns.map((c) => r[c])
      if (opts.answer) chargeRow(opts.answer, columns, row, seenNodes)
      rows.push(row)
    }
  return { columns, rows, ctx }
}

/**
 * Reads what presenting the rows needs: the nodes they refer to, and the properties of the relationships
 * they return (walks read relationships without them unless the query looks into them: needs.ts).
 */
export async function loadReferenced(r: QueryResult): Promise<void> {
  await loadNodes(r.ctx, referencedNodes(r.rows))
  await loadRelProperties(r.ctx, referencedRels(r.rows))
}

function stage(ctx: RunContext, clause: Clause, input: Stream, presorted = false): Stream {
  switch (clause.type) {
    case 'match':
      return matchStage(ctx, clause, input)
    case 'unwind':
      return unwindStage(ctx, clause, input)
    case 'with':
      return filterStage(ctx, clause.where, project(ctx, clause, input, presorted))
    case 'return':
      return project(ctx, clause, input, presorted)
    default:
      throw new CypherError('unsupported clause')
  }
}


/** Every part of a MATCH, one after the other (later parts see the earlier parts' variables). */
async function* matchAll(ctx: RunContext, patterns: PatternPart[], rows: Row[], where: Expr | null, i = 0): Stream {
  if (i === patterns.length) {
    yield rows
    return
  }
  for await (const batch of matchPart(ctx, patterns[i], rows, where)) yield* matchAll(ctx, patterns, batch, where, i + 1)
}

async function* matchStage(ctx: RunContext, clause: Extract<Clause, { type: 'match' }>, input: Stream): Stream {
  const newVars = [
    ...new Set(clause.patterns.flatMap((p) => [p.variable, ...p.nodes.map((n) => n.variable), ...p.rels.map((r) => r.variable)]).filter((v): v is string => v !== null)),
  ]
  for await (const batch of input)
    for (const rows of chunks(batch, MATCH_BATCH)) {
      if (!clause.optional) {
        for await (const out of matchAll(ctx, clause.patterns, rows, clause.where)) {
          const kept = await applyWhere(ctx, clause.where, out)
          if (kept.length) yield kept
        }
        continue
      }
      // OPTIONAL MATCH: the whole batch is matched at once (one store round trip per hop, as MATCH);
      // each input row is tagged so that a row without any match goes on with the new variables null.
      const tagged = rows.map((r, i) => ({ ...r, [OPTIONAL_TAG]: i }))
      const matched = new Set<number>()
      const strip = (r: Row): Row => {
        const { [OPTIONAL_TAG]: _tag, ...rest } = r
        return rest
      }
      for await (const out of matchAll(ctx, clause.patterns, tagged, clause.where)) {
        const kept = await applyWhere(ctx, clause.where, out)
        for (const r of kept) matched.add(r[OPTIONAL_TAG] as number)
        if (kept.length) yield kept.map(strip)
      }
      const missing: Row[] = []
      rows.forEach((row, i) => {
        if (matched.has(i)) return
        const r: Row = { ...row }
        for (const v of newVars) if (!(v in r)) r[v] = null
        missing.push(r)
      })
      if (missing.length) yield missing
    }
}

async function* unwindStage(ctx: RunContext, clause: Extract<Clause, { type: 'unwind' }>, input: Stream): Stream {
  // Rows are charged per input row before they are built and handed on BATCH at a time: building a whole
  // batch's rows first (`UNWIND range(1, 100000) AS x UNWIND range(1, 100000) AS y`: 10^10 rows) would
  // exhaust the isolate before the row limit was checked.
  for await (const batch of input) {
    let out: Row[] = []
    for (const row of batch) {
      const v = evaluate(clause.expr, row, ctx)
      if (v === null) continue
      const items = Array.isArray(v) ? v : [v]
      ctx.budget.chargeRows(items.length)
      for (const x of items) {
        out.push({ ...row, [clause.variable]: x })
        if (out.length >= BATCH) {
          yield out
          out = []
        }
      }
    }
    if (out.length) yield out
  }
}

async function* filterStage(ctx: RunContext, where: Expr | null, input: Stream): Stream {
  for await (const batch of input) {
    const kept = await applyWhere(ctx, where, batch)
    if (kept.length) yield kept
  }
}

// ---- WHERE and pattern predicates ----------------------------------------------------------------------------

function predicatesIn(e: Expr, out: Expr[] = []): Expr[] {
  if (e.type === 'patternPredicate' || e.type === 'exists') out.push(e)
  else for (const c of children(e)) predicatesIn(c, out)
  return out
}

/** Rows for which `where` is true. Pattern predicates are answered for the whole batch first. */
async function applyWhere(ctx: RunContext, where: Expr | null, rows: Row[]): Promise<Row[]> {
  if (!where || rows.length === 0) return rows
  await resolvePredicates(ctx, where, rows)
  return rows.filter((r) => evaluate(where, r, ctx) === true)
}

const ROW_TAG = '\u0000row'
const OPTIONAL_TAG = '\u0000optional'

/**
 * `(a)-[:K]->()` (either end a node bound by the row, the other end anonymous and unconstrained, one
 * relationship without variable or properties): whether the bound node has such a relationship is asked
 * of the store for the whole batch, without reading the relationships or the nodes at their other end
 * (`WHERE NOT (u)-[:MemberOf]->()` over every user read ~200 000 relationships at 1 M edges).
 * Returns the bound variable and the direction seen from it, or null when the pattern is anything else.
 */
function existenceTest(parts: PatternPart[], inner: Expr | null, row: Row): { variable: string; direction: 'out' | 'in' | 'both'; types: string[] } | null {
  if (inner || parts.length !== 1) return null
  const part = parts[0]
  if (part.variable || part.shortest || part.rels.length !== 1) return null
  const rel = part.rels[0]
  if (rel.variable || rel.properties || rel.range) return null
  const free = (n: NodePattern) => n.variable === null && n.labels.length === 0 && n.properties === null
  const bound = (n: NodePattern) => n.variable !== null && n.labels.length === 0 && n.properties === null && row[n.variable] instanceof NodeRef
  const [a, b] = part.nodes
  if (bound(a) && free(b)) return { variable: a.variable!, direction: rel.direction, types: rel.types }
  if (free(a) && bound(b)) return { variable: b.variable!, direction: rel.direction === 'out' ? 'in' : rel.direction === 'in' ? 'out' : 'both', types: rel.types }
  return null
}

async function resolvePredicates(ctx: RunContext, where: Expr, rows: Row[]): Promise<void> {
  for (const p of predicatesIn(where)) {
    const parts = p.type === 'exists' ? p.patterns : p.type === 'patternPredicate' ? [p.pattern] : []
    const inner = p.type === 'exists' ? p.where : null
    const test = existenceTest(parts, inner, rows[0])
    if (test && rows.every((r) => r[test.variable] instanceof NodeRef)) {
      const ids = rows.map((r) => (r[test.variable] as NodeRef).id)
      ctx.budget.chargeSteps(ids.length)
      ctx.budget.checkTime()
      const yes = await ctx.source.connected([...new Set(ids)], test.direction, relationshipKinds(test.types))
      const answers = new WeakMap<Row, boolean>()
      rows.forEach((r, i) => answers.set(r, yes.has(ids[i])))
      ctx.predicates.set(p, answers)
      if (ctx.plans.length < 32) ctx.plans.push(`existence test on ${test.variable} (${test.direction})`)
      continue
    }
    const tagged = rows.map((r, i) => ({ ...r, [ROW_TAG]: i }))
    const hit = new Set<number>()
    for await (const out of matchAll(ctx, parts, tagged, inner)) {
      const kept = await applyWhere(ctx, inner, out)
      for (const r of kept) hit.add(r[ROW_TAG] as number)
    }
    const answers = new WeakMap<Row, boolean>()
    rows.forEach((r, i) => answers.set(r, hit.has(i)))
    ctx.predicates.set(p, answers)
  }
}

// ---- WITH / RETURN ----------------------------------------------------------------------------------------------

function constant(ctx: RunContext, e: Expr | null, what: string): number | null {
  if (!e) return null
  const v = evaluate(e, {}, ctx)
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) throw new CypherError(`${what} must be a non-negative integer`)
  return v
}

function aggregatesIn(e: Expr, out: Expr[] = []): Expr[] {
  if (isAggregate(e)) out.push(e)
  else for (const c of children(e)) aggregatesIn(c, out)
  return out
}

/**
 * One aggregate of one group, fed row by row: only its running value is held (a count, a sum, the values
 * collect() keeps, the keys DISTINCT has seen), never the rows themselves. A class, not closures: a
 * projection may hold tens of thousands of groups (every computer by name).
 */
class Accumulator {
  private count = 0
  private sum = 0
  private best: Value = null
  private collected: Value[] | null
  private seen: Set<string> | null
  private readonly name: string
  private readonly arg: Expr | null

  constructor(
    private readonly ctx: RunContext,
    e: Expr,
  ) {
    if (e.type === 'countStar') {
      this.name = 'count'
      this.arg = null
    } else {
      if (e.type !== 'call') throw new CypherError('not an aggregate')
      if (e.args.length !== 1) throw new CypherError(`${e.name}() takes one argument`)
      this.name = e.name
      this.arg = e.args[0]
    }
    this.collected = this.name === 'collect' ? [] : null
    this.seen = e.type === 'call' && e.distinct ? new Set<string>() : null
  }

  add(row: Row): void {
    if (this.arg === null) {
      this.count++
      return
    }
    const v = evaluate(this.arg, row, this.ctx)
    if (v === null) return
    if (this.seen) {
      const k = keyOf(v)
      if (this.seen.has(k)) return
      this.seen.add(k)
    }
    this.count++
    switch (this.name) {
      case 'collect':
        this.ctx.budget.chargeRows(1)
        this.collected!.push(v)
        break
      case 'sum':
      case 'avg':
        if (typeof v !== 'number') throw new CypherError(`${this.name}() takes numbers`)
        this.sum += v
        break
      case 'min':
      case 'max':
        if (this.count === 1 || orderCompare(v, this.best) <= 0 === (this.name === 'min')) this.best = v
        break
    }
  }

  value(): Value {
    switch (this.name) {
      case 'count':
        return this.count
      case 'collect':
        return this.collected!
      case 'sum':
        return this.sum
      case 'avg':
        return this.count ? this.sum / this.count : null
      default:
        return this.count ? this.best : null
    }
  }
}

/** `presorted`: the input comes in ORDER BY's order already (topk.ts), so the rows stream without a sort. */
async function* project(ctx: RunContext, p: Projection, input: Stream, presorted = false): Stream {
  const names = projectionNames(p)
  const skip = constant(ctx, p.skip, 'SKIP') ?? 0
  const limit = constant(ctx, p.limit, 'LIMIT')
  const aggregating = p.items.some((i) => containsAggregate(i.expr)) || p.orderBy.some((o) => containsAggregate(o.expr))
  const starNames = (row: Row) => (p.star ? Object.keys(row).filter((k) => k !== ROW_TAG && !names.includes(k)) : [])
  const projectRow = (row: Row): Row => {
    const out: Row = {}
    for (const k of starNames(row)) out[k] = row[k]
    p.items.forEach((item, i) => (out[names[i]] = evaluate(item.expr, row, ctx)))
    return out
  }
  const seen = new Set<string>()
  const fresh = (r: Row): boolean => {
    if (!p.distinct) return true
    const k = Object.keys(r)
      .map((c) => keyOf(r[c]))
      .join('\u0001')
    if (seen.has(k)) return false
    seen.add(k)
    return true
  }
  if (limit === 0) return

  if (!aggregating && (p.orderBy.length === 0 || presorted)) {
    // Streaming: stop pulling once SKIP + LIMIT rows have passed.
    let skipped = 0
    let emitted = 0
    for await (const batch of input) {
      const out: Row[] = []
      for (const row of batch) {
        const r = projectRow(row)
        if (!fresh(r)) continue
        if (skipped < skip) {
          skipped++
          continue
        }
        out.push(r)
        emitted++
        if (limit !== null && emitted >= limit) break
      }
      if (out.length) yield out
      if (limit !== null && emitted >= limit) return
    }
    return
  }

  // Materialising: every input row is held (charged to the row budget).
  let sorted: { row: Row; keys: Value[] }[] = []
  if (!aggregating) {
    for await (const batch of input) {
      ctx.budget.chargeRows(batch.length)
      for (const row of batch) {
        const r = projectRow(row)
        if (!fresh(r)) continue
        const scope = { ...row, ...r }
        sorted.push({ row: r, keys: p.orderBy.map((o) => evaluate(o.expr, scope, ctx)) })
      }
    }
  } else {
    const keyItems = p.items.map((item, i) => ({ item, i })).filter(({ item }) => !containsAggregate(item.expr))
    const aggs = [...p.items.map((i) => i.expr), ...p.orderBy.map((o) => o.expr)].flatMap((e) => aggregatesIn(e))
    const groups = new Map<string, { rep: Row; accs: Accumulator[] }>()
    for await (const batch of input) {
      for (const row of batch) {
        const k = keyItems.length === 1 ? keyOf(evaluate(keyItems[0].item.expr, row, ctx)) : keyItems.map(({ item }) => keyOf(evaluate(item.expr, row, ctx))).join('\u0001')
        let g = groups.get(k)
        if (!g) {
          // a group holds its first row and its aggregates' running values (charged as one row)
          ctx.budget.chargeRows(1)
          groups.set(k, (g = { rep: row, accs: aggs.map((a) => new Accumulator(ctx, a)) }))
        }
        for (const acc of g.accs) acc.add(row)
      }
    }
    if (groups.size === 0 && keyItems.length === 0) groups.set('', { rep: {}, accs: aggs.map((a) => new Accumulator(ctx, a)) })
    // without ORDER BY only the first SKIP + LIMIT groups are returned: the others are not projected
    const wanted = p.orderBy.length === 0 && limit !== null ? skip + limit : Infinity
    const actx = { ...ctx, aggregates: new Map<Expr, Value>() }
    for (const g of groups.values()) {
      if (sorted.length >= wanted) break
      const values = new Map<Expr, Value>()
      aggs.forEach((a, i) => values.set(a, g.accs[i].value()))
      actx.aggregates = values
      const r: Row = {}
      p.items.forEach((item, i) => (r[names[i]] = evaluate(item.expr, g.rep, actx)))
      if (!fresh(r)) continue
      const scope = { ...g.rep, ...r }
      sorted.push({ row: r, keys: p.orderBy.map((o) => evaluate(o.expr, scope, actx)) })
    }
  }
  if (p.orderBy.length)
    sorted.sort((x, y) => {
      for (let i = 0; i < p.orderBy.length; i++) {
        const c = orderCompare(x.keys[i], y.keys[i])
        if (c !== 0) return p.orderBy[i].descending ? -c : c
      }
      return 0
    })
  sorted = sorted.slice(skip, limit === null ? undefined : skip + limit)
  for (const c of chunks(
    sorted.map((s) => s.row),
    BATCH,
  ))
    yield c
}
