/**
 * A one-hop pattern with a LIMIT answered by one join in the store (issue 28: "expand one hop … as set-based SQL
 * joins"). Decides whether a query has the shape (pure) and streams its rows from GraphSource.oneHop page by page.
 *
 * The shape: the first clause `MATCH [p =] (a[:L…])-[[r][:K|…]]->(b[:L…])` (or `<-`), not OPTIONAL, no WHERE, no
 * property maps, labels whose test is exact on the stored kinds (nodecount.ts: not Tag_Tier_Zero / Tag_Owned),
 * a single relationship (not variable-length), distinct variables; then a `RETURN` or `WITH` without DISTINCT,
 * aggregates or ORDER BY, with a constant `LIMIT` (SKIP + LIMIT at most MAX_ONE_HOP). Later clauses are anything.
 *
 * Why it is the same answer. The engine (match.ts) scans the end its plan starts at (plan.ts planPart: the
 * same choice here) by id, a page at a time; for each scanned node, in id order, it walks the relationships the
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
import { BATCH, loadNodes, scanPageSize, type RunContext } from './match'
import { planPart } from './plan'
import type { ChainScan, NodeCountTest, OneHopScan } from './source'
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
  /** SKIP + LIMIT */
  want: number
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
  if (match.optional || match.where || match.patterns.length !== 1) return null
  const part = match.patterns[0]
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
  const plan = planPart(part, new Set(), null)
  const reversed = plan.reversed
  const walkTests = (reversed ? [...tests].reverse() : tests) as NodeCountTest[]
  if (part.rels.length > 1) {
    // the walk's hops (plan.rels: flipped when it starts at the last node), each with the node it reaches
    const chain: ChainScan = { near: walkTests[0], hops: plan.rels.map((r, i) => ({ direction: r.direction as 'out' | 'in', kinds: relationshipKinds(r.types), far: walkTests[i + 1] })) }
    return { part, projection: proj, scan: null, chain, reversed, want: skip + limit, describe: `${part.rels.length}-hop chain joined in the store${reversed ? ' from the last node' : ''}, ${skip + limit} rows at most` }
  }
  const rel = part.rels[0]
  const outFromLeft = rel.direction === 'out'
  const scan: OneHopScan = {
    near: walkTests[0],
    far: walkTests[1],
    direction: outFromLeft !== reversed ? 'out' : 'in',
    kinds: relationshipKinds(rel.types),
  }
  return { part, projection: proj, scan, chain: null, reversed, want: skip + limit, describe: `one-hop join in the store${reversed ? ' from the last node' : ''}, ${skip + limit} rows at most` }
}

/** The pattern's rows, from the store's join page by page, bound as match.ts bindRow binds them. */
export async function* oneHopStream(ctx: RunContext, push: OneHopPushdown): AsyncGenerator<Row[]> {
  if (push.chain) {
    yield* chainStream(ctx, push, push.chain)
    return
  }
  const { part } = push
  const scan = push.scan!
  const [a, b] = part.nodes
  const rel = part.rels[0]
  let after = 0
  let made = 0
  for (let i = 0; made < push.want; i++) {
    ctx.budget.checkTime()
    const size = scanPageSize(i)
    const page = await ctx.source.oneHop!(scan, after, size, push.want - made)
    // as the walk charges: a step per scanned node and per relationship, their bytes, then the far nodes read
    ctx.budget.chargeSteps(page.scanned + page.edges.length)
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
    const rows: Row[] = page.edges.map((e) => {
      const [l, r] = rel.direction === 'out' ? [e.start, e.end] : [e.end, e.start]
      const ref = new RelRef(e.id, e.start, e.end, e.kind)
      const row: Row = {}
      if (a.variable) row[a.variable] = new NodeRef(l)
      if (b.variable) row[b.variable] = new NodeRef(r)
      if (rel.variable) row[rel.variable] = ref
      if (part.variable) row[part.variable] = new PathVal([l, r], [ref])
      return row
    })
    made += rows.length
    for (let j = 0; j < rows.length; j += BATCH) yield rows.slice(j, j + BATCH)
    if (page.scanned < size || page.lastId === null) return
    after = page.lastId
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
