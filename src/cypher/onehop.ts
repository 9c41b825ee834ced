/**
 * A one-hop pattern with a LIMIT answered by one join in the store (issue 28: "expand one hop … as set-based SQL
 * joins"). Decides whether a query has the shape (pure) and streams its rows from GraphSource.oneHop page by page.
 *
 * The shape: the first clause `MATCH [p =] (a[:L…])-[[r][:K|…]]->(b[:L…])` (or `<-`), not OPTIONAL, a WHERE only
 * on one relationship (wherePushdown says which: necessary conditions in SQL, the engine re-tests it), no
 * property maps, labels whose test is exact on the stored kinds (nodecount.ts: not Tag_Tier_Zero / Tag_Owned),
 * a single relationship (not variable-length), distinct variables; then a `RETURN` or `WITH` without DISTINCT,
 * aggregates or ORDER BY, with a constant `LIMIT` (SKIP + LIMIT at most MAX_ONE_HOP). Later clauses are anything.
 *
 * Why it is the same answer. The engine (match.ts) scans the end its plan starts at (plan.ts planPart: the
 * same choice here; with a relationship property condition match.ts walkPlan, asked at run time, as smallerEnd
 * may start the walk at the other end) by id, a page at a time; for each scanned node, in id order, it walks the relationships the
 * store's level statement returns, in the order of that statement's index (near end, kind, other end: edges'
 * unique (start_id, kind, end_id), edges_end_kind), keeps those whose other end passes the far node's labels,
 * binds the row and hands the rows on in that order; the projection stops pulling after SKIP + LIMIT rows. The
 * store's join returns the same relationships (the same kinds and direction, both ends visible to the caller,
 * both ends' labels tested exactly on the stored kinds as labels.ts hasLabel does) in the same order (near node
 * id, kind, other end's id), page by page over the same near nodes, at most the rows still wanted, and the rows
 * are bound as match.ts bindRow binds them (node variables in pattern order, the relationship, the path). The
 * nodes of the rows are read as the walk reads them (loadNodes). test/integration/cypher-store-equivalence.test.ts
 * compares the rows with the engine's, in order, for an unrestricted and a restricted caller.
 *
 * Chains (issue 28): two or three such relationships, `(a)-[:K]->(b)<-[:L]-(c)…`, on the same conditions for every
 * node and relationship, are read by GraphSource.chain the same way: per page of near nodes one join, hop by hop
 * (each hop's relationships from the index led by its near end, the node reached by primary key, that node's labels
 * and access tested, the relationship different from the walk's earlier ones as match.ts hops requires), ordered
 * as the walk hands its rows on: near node, then each hop's kind and far node (the walk expands a batch of walks,
 * each walk's relationships in the level statement's index order, and finishes each batch depth-first before the
 * next). Rows are bound as bindRow binds a walk, reversed when the walk starts at the last node. chainStream says
 * how the candidate walks a page examines are capped by the step budget.
 *
 * Cost: each page reads at most its near nodes' relationships (as one level statement of the walk does for
 * its nodes), and every near node, relationship and row is charged to the budget as the walk charges them. The
 * relationships come with their properties (the same stored text loadRelProperties would read afterwards for
 * presenting them, charged by their length), so answering takes the join and one read of the rows' nodes.
 */
import type { Clause, Expr, PatternPart, Projection, Query } from './ast'
import { containsAggregate, type Row } from './eval'
import { exactKindsFor, relationshipKinds } from './labels'
import { BATCH, loadNodes, scanPageSize, walkPlan, type RunContext } from './match'
import { cannotFail, conjuncts, planPart, splitByEnd, type PartPlan } from './plan'
import type { ChainScan, NodeCountTest, NodeScan, OneHopScan, PropertyTest } from './source'
import { NodeRef, PathVal, RelRef } from './values'

/** At most this many rows (SKIP + LIMIT) are read by the join; a larger LIMIT walks. */
export const MAX_ONE_HOP = 5_000

/** Rough heap cost of a relationship record (match.ts EDGE_BYTES). */
const EDGE_BYTES = 200

export interface OneHopPushdown {
  part: PatternPart
  /** the projection that reads the rows */
  projection: Projection
  /** one relationship: the store's oneHop join */
  scan: OneHopScan | null
  /** two or three: the store's chain join */
  chain: ChainScan | null
  /** whether the walk starts at the pattern's last node (plan.ts planPart) */
  reversed: boolean
  /**
   * with a relationship property condition: the join's scan from the other end, used when the walk would start
   * there (match.ts walkPlan, decided at run time by smallerEnd); null otherwise
   */
  other: OneHopScan | null
  /** SKIP + LIMIT */
  want: number
  /** the MATCH's WHERE (one relationship only), re-tested by the engine on every row the store returns */
  where: Expr | null
  describe: string
}

function exactTest(labels: string[]): NodeCountTest | null {
  const kinds: string[][] = []
  for (const l of labels) {
    const k = exactKindsFor(l)
    if (!k) return null
    kinds.push(k)
  }
  return kinds.length > 4 ? null : { kinds, objectid: null, tests: [] }
}

/** At most this many relationships in a chain answered by one join (onehop.ts chain). */
export const MAX_CHAIN = 3

/** `skipLimit`: SKIP / LIMIT's value when a non-negative integer constant (run.ts), else undefined. */
export function oneHopPushdown(query: Query, skipLimit: (e: Expr) => number | undefined): OneHopPushdown | null {
  const [match, proj] = query.clauses as [Clause | undefined, Clause | undefined]
  if (match?.type !== 'match' || (proj?.type !== 'return' && proj?.type !== 'with')) return null
  if (match.optional || match.patterns.length !== 1) return null
  const part = match.patterns[0]
  const where = match.where
  if (where && part.rels.length !== 1) return null
  if (part.shortest || part.rels.length < 1 || part.rels.length > MAX_CHAIN || part.nodes.length !== part.rels.length + 1) return null
  if (part.rels.some((r) => r.range || r.properties || r.direction === 'both')) return null
  if (part.nodes.some((n) => n.properties)) return null
  const names = [...part.nodes.map((n) => n.variable), ...part.rels.map((r) => r.variable), part.variable].filter((v): v is string => v !== null)
  if (new Set(names).size !== names.length) return null
  const tests = part.nodes.map((n) => exactTest(n.labels))
  if (tests.some((t) => t === null)) return null
  if (proj.distinct || proj.orderBy.length || proj.items.some((i) => containsAggregate(i.expr)) || !proj.limit) return null
  const limit = skipLimit(proj.limit)
  const skip = proj.skip ? skipLimit(proj.skip) : 0
  if (limit === undefined || skip === undefined || skip + limit > MAX_ONE_HOP) return null
  // the end the engine's walk starts at, so that its rows come in the walk's order
  const plan = planPart(part, new Set(), where)
  // `A(a) OR B(b)`: the engine walks once per end (plan.ts splitByEnd), in another order
  if (where && splitByEnd(part, new Set(), where)) return null
  const reversed = plan.reversed
  const walkTests = (reversed ? [...tests].reverse() : tests) as NodeCountTest[]
  if (part.rels.length > 1) {
    // the walk's hops (plan.rels: flipped when it starts at the last node), each with the node it reaches
    const chain: ChainScan = { near: walkTests[0], hops: plan.rels.map((r, i) => ({ direction: r.direction as 'out' | 'in', kinds: relationshipKinds(r.types), far: walkTests[i + 1] })) }
    return { part, projection: proj, scan: null, chain, reversed, other: null, want: skip + limit, where: null, describe: `${part.rels.length}-hop chain joined in the store${reversed ? ' from the last node' : ''}, ${skip + limit} rows at most` }
  }
  const rel = part.rels[0]
  const outFromLeft = rel.direction === 'out'
  // the join's scan for a walk planned as `p` (started at its first or last node), null when it cannot be joined
  const hopScan = (p: PartPlan): OneHopScan | null => {
    const t = (p.reversed ? [...tests].reverse() : tests) as NodeCountTest[]
    const scan: OneHopScan = { near: t[0], far: t[1], direction: outFromLeft !== p.reversed ? 'out' : 'in', kinds: relationshipKinds(rel.types) }
    if (!where) return scan
    // the walk's scans push an object id, a name, a text test, a pattern predicate or a tag the join does not
    // take: the join would read every node and relationship the walk's scan skips ("Unresolved SID with
    // outbound control", `n.name CONTAINS …`): the walk answers
    if ([p.scan, p.farScans[0]].some((s) => s.objectid !== null || s.name !== null || (s.where ?? []).some((c) => c.type !== 'property'))) return null
    const pushed = wherePushdown(part, where, p.nodes.map((n) => n.variable), p.scan, p.farScans[0])
    if (!pushed) return null
    scan.near = { ...scan.near, tests: pushed.near }
    scan.far = { ...scan.far, tests: pushed.far }
    scan.kinds = relationshipKinds(p.rels[0].types)
    scan.rel = p.relWhere[0]
    scan.differ = pushed.differ
    return scan
  }
  const scan = hopScan(plan)
  if (!scan) return null
  // A relationship property condition (`r.isacl`): the walk may start at the other end, the one the store counts
  // clearly fewer nodes at (match.ts smallerEnd, decided by counts at run time). The join is ready for both
  // ends; oneHopStream asks the walk's own decision (match.ts walkPlan) before the first page, so its rows come
  // in the order of the walk actually made.
  const other = where && plan.relWhere[0].length > 0 ? hopScan(planPart(part, new Set(), where, undefined, !plan.reversed)) : null
  if (where && plan.relWhere[0].length > 0 && !other) return null
  const conds = where ? `, WHERE re-tested by the engine (in the store: ${JSON.stringify({ near: scan.near.tests, far: scan.far.tests, rel: scan.rel, differ: scan.differ })})` : ''
  return {
    part,
    projection: proj,
    scan,
    chain: null,
    reversed,
    other,
    want: skip + limit,
    where,
    describe: `one-hop join in the store${reversed ? ' from the last node' : ''}${other ? ' (or from the other end when the walk would start there)' : ''}, ${skip + limit} rows at most${conds}`,
  }
}

/**
 * The store-side part of a one-hop pattern's WHERE (issue 28: "Principals with foreign domain group membership",
 * "ACEs across trusts", "Sessions across trusts"), each a NECESSARY condition of a row passing the WHERE: the
 * engine re-tests the full WHERE on every row the store returns (oneHopStream), so the answer never depends on
 * the SQL being exact, only on it never dropping a row the WHERE keeps. Per top-level conjunct:
 *  - on one end: the property tests the walk's scan / level already pushes for it (plan.ts scanFor → `property`
 *    conditions; every one kept whenever the engine's test could be true);
 *  - on the relationship: plan.ts relConditions (`r.k`, `r.k = literal`), as the walk's levels apply them;
 *  - `x.k <> y.k` across the two ends: `differ`, in SQL "both present, neither JSON null, and not the same stored
 *    value" (cypher.store.ts differSql says why that is necessary);
 *  - anything else is left to the engine.
 * Refused (null: the walk answers) when a conjunct might stop the query with an error (eval.ts type errors):
 * the walk tests a node's conditions on every node it reaches, also on rows the store would drop here, so such
 * a query must walk to raise the same error. Conjuncts that are plan.ts relConditions are accepted: the walk
 * pushes them the same way (a stored non-boolean `r.isacl` is dropped by both, never tested).
 */
function wherePushdown(
  part: PatternPart,
  where: Expr,
  walkVars: (string | null)[],
  nearScan: NodeScan,
  farScan: NodeScan,
): { near: PropertyTest[]; far: PropertyTest[]; differ: { near: string; far: string }[] } | null {
  const rv = part.rels[0].variable
  // the nodes' and the relationship's properties read without failing (a path's would not: not in the set)
  const vars = new Set([...part.nodes.map((n) => n.variable), rv].filter((v): v is string => v !== null))
  // the conjuncts plan.ts relConditions pushes into the walk's levels (the same test: keys of letters, digits, _)
  const relProp = (x: Expr): boolean => rv !== null && x.type === 'property' && x.expr.type === 'var' && x.expr.name === rv && /^[A-Za-z0-9_]+$/.test(x.key)
  const relCondition = (c: Expr): boolean =>
    rv !== null &&
    (relProp(c) ||
      (c.type === 'compare' &&
        c.op === '=' &&
        [c.left, c.right].some(relProp) &&
        [c.left, c.right].some((x) => x.type === 'literal' && ['string', 'number', 'boolean'].includes(typeof x.value))))
  const differ: { near: string; far: string }[] = []
  for (const c of conjuncts(where)) {
    if (relCondition(c)) continue
    if (!safe(c, vars)) return null
    if (c.type === 'compare' && c.op === '<>' && c.left.type === 'property' && c.right.type === 'property' && c.left.expr.type === 'var' && c.right.expr.type === 'var') {
      const [l, r] = [c.left, c.right]
      const lv = (l.expr as { name: string }).name
      const rvar = (r.expr as { name: string }).name
      const plain = (k: string) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(k) && k !== 'objectid' && k !== 'system_tags'
      if (plain(l.key) && plain(r.key) && lv !== rvar) {
        if (lv === walkVars[0] && rvar === walkVars[1]) differ.push({ near: l.key, far: r.key })
        else if (lv === walkVars[1] && rvar === walkVars[0]) differ.push({ near: r.key, far: l.key })
      }
    }
  }
  const props = (s: NodeScan): PropertyTest[] => (s.where ?? []).flatMap((w) => (w.type === 'property' ? [w.test] : []))
  return { near: props(nearScan), far: props(farScan), differ }
}

/**
 * A conjunct that can never stop the query with an error whatever rows it is tested on: plan.ts cannotFail,
 * where a property of any of the pattern's variables reads without failing (it is a node's or relationship's
 * stored value, or null).
 */
function safe(c: Expr, vars: Set<string>): boolean {
  // cannotFail takes one variable whose properties are atoms: rename every pattern variable's property reads to one
  const rename = (e: Expr): Expr => {
    if (e.type === 'property' && e.expr.type === 'var' && vars.has(e.expr.name)) return { ...e, expr: { type: 'var', name: '\u0000' } } as Expr
    const out: Record<string, unknown> = { ...e }
    for (const [k, v] of Object.entries(e)) {
      if (Array.isArray(v)) out[k] = v.map((x) => (x && typeof x === 'object' && 'type' in x ? rename(x as Expr) : x))
      else if (v && typeof v === 'object' && 'type' in v) out[k] = rename(v as Expr)
    }
    return out as unknown as Expr
  }
  return cannotFail(rename(c), '\u0000')
}

/**
 * Candidates of a one-hop page with `differ` per traversal step. A candidate is examined inside one store
 * statement and never leaves it (no record, no isolate memory): near 1 M relationships "ACEs across trusts"
 * examines 636,000 ACL relationships for its one row, ~1.9 s of SQLite with the ACL index (migration 0050:
 * ~3 µs each), where a walk step costs the isolate its record as well. Charged a step each, such a question was
 * refused by the step limit although its time is well within the time limit, which bounds these statements
 * together (each statement is bounded by `cap`: the steps left, in candidates).
 */
const CANDIDATES_PER_STEP = 4

/**
 * The pattern's rows, from the store's join page by page, bound as match.ts bindRow binds them. With a WHERE,
 * `keep` is the engine's test of the full WHERE (run.ts applyWhere) on every row the store returns; only rows it
 * keeps count towards SKIP + LIMIT. The store's rows (a superset of the passing ones, in the walk's order) are
 * read on from where the last statement stopped (`offset` within the same page of near nodes) until the page is
 * exhausted or enough rows passed, so no row the walk would make is skipped.
 *
 * Budgets with a `differ` condition (`a.k <> b.k`, which the walk cannot push: it reads every relationship and
 * every far node, then tests the WHERE): the store also counts the candidates of the page, the relationships
 * the walk's level would read (kinds, relationship conditions, far node's labels and property tests, access),
 * at most CANDIDATES_PER_STEP times the steps the budget has left + 1 (`cap`), and at most the step limit + 1 in
 * one statement (the bound a statement had when each candidate was a step). Every CANDIDATES_PER_STEP
 * candidates are charged a step (the walk charges each relationship it reads, and its far node, as a step: it
 * holds their records; the join examines them inside the statement and returns only the rows passing); past the
 * cap the query stops at the step limit. The whole page's candidates are charged even when the LIMIT stopped the
 * rows statement before the page's end. Bytes and rows are charged only for the relationships returned: the skipped
 * ones are never in memory (the walk's heap of them is what refused these questions near 1 M edges).
 */
export async function* oneHopStream(ctx: RunContext, push: OneHopPushdown, keep?: (rows: Row[]) => Promise<Row[]>): AsyncGenerator<Row[]> {
  if (push.chain) {
    yield* chainStream(ctx, push, push.chain)
    return
  }
  const { part } = push
  let scan = push.scan!
  if (push.other) {
    // the end the walk would start at (its plan, smallerEnd's counts included): the same order as the walk
    const walk = await walkPlan(ctx, part, new Set(), push.where)
    if (walk.reversed !== push.reversed) {
      scan = push.other
      if (ctx.plans.length < 32) ctx.plans.push(`one-hop join started at the ${walk.reversed ? 'last' : 'first'} node as the walk would: ${walk.describe}`)
    }
  }
  const [a, b] = part.nodes
  const rel = part.rels[0]
  const test = push.where && keep ? keep : null
  let after = 0
  let made = 0
  for (let i = 0; made < push.want; i++) {
    const size = scanPageSize(i)
    let offset = 0
    let lastId: number | null = null
    let scanned = 0
    for (;;) {
      ctx.budget.checkTime()
      const wanted = push.want - made
      // the steps left, in candidates, and never more than the step limit + 1 in one statement: a statement
      // cannot be stopped once it runs, so one page examines no more candidates than a walk could read in all
      const left = Math.max(1, (ctx.budget.limits.maxSteps - ctx.budget.used.steps + 1) * CANDIDATES_PER_STEP)
      const cap = Math.min(left, ctx.budget.limits.maxSteps + 1)
      const page = await ctx.source.oneHop!(scan, after, size, wanted, offset, cap)
      if (offset === 0) {
        // a step per scanned node, and with `differ` a step per CANDIDATES_PER_STEP candidates of the page; a page
        // that reached the per-statement cap stops the query at the step limit (its rows may miss some)
        if (page.candidates !== undefined && page.candidates >= cap && cap < left) ctx.budget.chargeSteps(ctx.budget.limits.maxSteps + 1)
        ctx.budget.chargeSteps(page.scanned + Math.ceil((page.candidates ?? 0) / CANDIDATES_PER_STEP))
        scanned = page.scanned
        lastId = page.lastId
      }
      // without `differ`: the rows are the relationships the walk's level reads, a step each
      if (page.candidates === undefined) ctx.budget.chargeSteps(page.edges.length)
      ctx.budget.chargeBytes(page.edges.reduce((n, e) => n + (e.bytes ?? EDGE_BYTES), 0))
      ctx.budget.chargeRows(page.edges.length)
      for (const e of page.edges) {
        ctx.rels.set(e.id, e)
        // read with their properties: presenting them (lastseen) needs no statement of its own (loadRelProperties)
        ctx.withProps.add(e.id)
      }
      await loadNodes(
        ctx,
        page.edges.flatMap((e) => [e.start, e.end]),
      )
      const bound: Row[] = page.edges.map((e) => {
        const [l, r] = rel.direction === 'out' ? [e.start, e.end] : [e.end, e.start]
        const ref = new RelRef(e.id, e.start, e.end, e.kind)
        const row: Row = {}
        if (a.variable) row[a.variable] = new NodeRef(l)
        if (b.variable) row[b.variable] = new NodeRef(r)
        if (rel.variable) row[rel.variable] = ref
        if (part.variable) row[part.variable] = new PathVal([l, r], [ref])
        return row
      })
      const rows = test ? await test(bound) : bound
      made += rows.length
      for (let j = 0; j < rows.length; j += BATCH) yield rows.slice(j, j + BATCH)
      // the statement stopped at its LIMIT and some rows failed the engine's test: read on within the page
      if (made >= push.want || page.edges.length < wanted) break
      offset += page.edges.length
    }
    if (scanned < size || lastId === null) return
    after = lastId
  }
}

/**
 * A chain's rows (2-3 relationships), from the store's chain join page by page, bound as match.ts bindRow binds
 * them: the walk's nodes and relationships (from its start end), reversed into pattern order when the walk starts
 * at the last node. Charged as the walk charges what it reads for them: a step per scanned near node, per
 * relationship and per walk (each hop's walk of each row), their bytes, the rows, then the nodes read. The store
 * examines at most the steps the budget has left of candidate walks per page (the walk charges each a step): when
 * that cap cut a page short, the walk would have passed the step limit there, and the query stops as it would.
 */
async function* chainStream(ctx: RunContext, push: OneHopPushdown, chain: ChainScan): AsyncGenerator<Row[]> {
  const { part } = push
  let after = 0
  let made = 0
  for (let i = 0; made < push.want; i++) {
    ctx.budget.checkTime()
    const size = scanPageSize(i)
    const cap = Math.max(1, ctx.budget.limits.maxSteps - ctx.budget.used.steps + 1)
    const page = await ctx.source.chain!(chain, after, size, push.want - made, cap)
    if (page.capped) ctx.budget.chargeSteps(cap)
    const edges = new Map<number, (typeof page.rows)[number][number]>()
    for (const r of page.rows) for (const e of r) edges.set(e.id, e)
    ctx.budget.chargeSteps(page.scanned + 2 * page.rows.length * chain.hops.length)
    ctx.budget.chargeBytes([...edges.values()].reduce((n, e) => n + (e.bytes ?? EDGE_BYTES), 0))
    ctx.budget.chargeRows(page.rows.length * chain.hops.length)
    for (const e of edges.values()) {
      ctx.rels.set(e.id, e)
      ctx.withProps.add(e.id)
    }
    await loadNodes(
      ctx,
      [...edges.values()].flatMap((e) => [e.start, e.end]),
    )
    const rows: Row[] = page.rows.map((es) => {
      // the walk's nodes: each hop's far end from the node before it
      const seq = [chain.hops[0].direction === 'out' ? es[0].start : es[0].end]
      es.forEach((e, j) => seq.push(chain.hops[j].direction === 'out' ? e.end : e.start))
      const refs = es.map((e) => new RelRef(e.id, e.start, e.end, e.kind))
      const nodes = push.reversed ? seq.reverse() : seq
      const rels = push.reversed ? refs.reverse() : refs
      const row: Row = {}
      part.nodes.forEach((np, j) => {
        if (np.variable) row[np.variable] = new NodeRef(nodes[j])
      })
      part.rels.forEach((rp, j) => {
        if (rp.variable) row[rp.variable] = rels[j]
      })
      if (part.variable) row[part.variable] = new PathVal(nodes, rels)
      return row
    })
    made += rows.length
    for (let j = 0; j < rows.length; j += BATCH) yield rows.slice(j, j + BATCH)
    if (page.scanned < size || page.lastId === null) return
    after = page.lastId
  }
}
