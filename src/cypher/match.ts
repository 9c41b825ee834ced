/**
 * Pattern matching against the store. Rows flow in batches; each relationship hop costs one store
 * round trip per batch (frontier expansion), variable-length hops one per level; with a store that reads a
 * level at once (GraphSource.expandLevel, issue 28) that round trip is one set-based join of the frontier,
 * the relationships and their far ends (a single relationship's far end with its labels and conditions),
 * returning the far nodes as well. Results stream out as
 * soon as they exist, so a LIMIT downstream stops the walk early. Every read is charged to the budget.
 *
 * Semantics (openCypher): within one pattern part a relationship is used at most once (variable-length
 * walks are trails); a variable bound earlier must be the same node; `*0..` includes the empty walk.
 */
import type { Expr, NodePattern, PatternPart, RelPattern } from './ast'
import type { Budget } from './budget'
import { evaluate, variablesOf, type EvalContext, type GraphCache, type Row } from './eval'
import { exactKindsFor, hasLabel, nodeProperty, relationshipKinds } from './labels'
import { CypherError } from './parse'
import { planPart, splitByEnd, type Constant, type PartPlan } from './plan'
import type { EdgeRecord, GoOn, GraphSource, NodeCountTest, NodeRecord, NodeScan, RelCondition, ScanOrder } from './source'
import { exactNodeMatch } from './nodecount'
import { equals, fromJson, NodeRef, PathVal, RelRef, type Value } from './values'
import { chunks } from '../chunks'

export const BATCH = 500
/** Input rows a MATCH stage takes at once (its first hop expands them in EXPAND_CHUNK calls). */
export const MATCH_BATCH = 2_000
/** Nodes per scan page: the first page small (a LIMIT often ends the scan there), then growing. */
const SCAN_PAGE = 1_000
const SCAN_PAGE_MAX = 8_000
export function scanPageSize(i: number): number {
  return Math.min(SCAN_PAGE * 2 ** Math.min(i, 4), SCAN_PAGE_MAX)
}
/** Bytes of scan pages kept for reuse within one query (charged to the memory budget while kept). */
const SCAN_CACHE_BYTES = 8 * 1024 * 1024
/** Longest shortest path searched (relationships). */
export const MAX_SHORTEST_DEPTH = 32

export interface RunContext extends EvalContext {
  source: GraphSource
  budget: Budget
  nodes: Map<number, NodeRecord>
  rels: Map<number, EdgeRecord>
  /** expansions already fetched, per `direction|kinds`: node id → its relationships */
  expansions: Map<string, Map<number, EdgeRecord[]>>
  /** plans made (for the debug header and tests) */
  plans: string[]
  /**
   * node scans already read, per scan: pages in id order, whether the last page was reached, their
   * estimated bytes, and whether they were dropped (over SCAN_CACHE_BYTES: the scan is read again)
   */
  scans: Map<string, { pages: NodeRecord[][]; complete: boolean; bytes: number; dropped: boolean }>
  /** whether relationships are read with their properties (the query looks into them: needs.ts) */
  relProperties: boolean
  /** relationships whose properties were loaded afterwards (loadRelProperties) */
  withProps: Set<number>
  /** shortest-path strategy thresholds (tests lower them to exercise every branch on small graphs) */
  shortest: ShortestTuning
  /** whether variable-length levels drop the walks that can neither end the hop nor go on (hops; tests turn it off) */
  walkPruning: boolean
  /** the pattern part whose scan is read in a projection's order (topk.ts; run.ts sets it), `want` rows wanted */
  scanOrder?: { part: PatternPart; order: ScanOrder; want: number }
  /** visible nodes per label set as the store counted them for smallerEnd, per query (JSON of the kinds) */
  endCounts?: Map<string, number>
}

/**
 * The store cannot read an ordered scan in the engine's order (GraphSource.scanOrdered answered null):
 * run.ts runs the query again without the ordered scan.
 */
export class Unorderable extends Error {}

/** Pages of an ordered scan: the rows wanted (at least 16) first, four times more each time (a WHERE the store only narrows may drop rows). */
function orderedPageSize(want: number, i: number): number {
  return Math.min(Math.max(want, 16) * 4 ** Math.min(i, 6), SCAN_PAGE_MAX)
}

/** Rough heap cost of one node record held for the query (parsed properties included). */
const NODE_BYTES = 600
/** Rough heap cost of a relationship read without properties (when the store gives no estimate). */
const EDGE_BYTES = 200
/** Nodes whose relationships one store call reads (expand): bounds what a call can return before it is charged. */
const EXPAND_CHUNK = 2_000
/**
 * Heap cost of one walk of hops() besides its ids, and per id of its arrays (`seq`, `relSeq`, `hop`): the
 * walk object, its three arrays and its RelRef, plus the finished State made from it (`finish`: object,
 * `ends` and `groups`). Measured (`node --expose-gc`, retained heap of 200 000 walks built as hops() builds
 * them): 313 B + 192 B finished and 8 B per id with node's 8-byte pointers; workerd's V8 compresses
 * pointers to 4 bytes (its build flags say so), which about halves these: ~160 + ~95 B and 4 B per id.
 * Charged: 280 B and 8 B per id, the compressed figures rounded up. The arrays are built with concat() (exact length): the former spread copies
 * (`[...a, x]`) gave each array ~16 spare slots and made a walk cost about twice the estimate.
 */
const WALK_BYTES = 280
const WALK_ID_BYTES = 8

export function newContext(source: GraphSource, budget: Budget, now: number, relProperties = true): RunContext {
  const nodes = new Map<number, NodeRecord>()
  const rels = new Map<number, EdgeRecord>()
  const graph: GraphCache = {
    node(id) {
      const n = nodes.get(id)
      if (!n) throw new Error(`node ${id} not loaded`)
      return n
    },
    rel(id) {
      const r = rels.get(id)
      if (!r) throw new Error(`relationship ${id} not loaded`)
      return r
    },
  }
  return {
    graph,
    now,
    predicates: new Map(),
    source,
    budget,
    nodes,
    rels,
    expansions: new Map(),
    plans: [],
    scans: new Map(),
    relProperties,
    withProps: new Set(),
    shortest: { ...SHORTEST_TUNING },
    walkPruning: true,
  }
}

export async function loadNodes(ctx: RunContext, ids: Iterable<number>): Promise<void> {
  const missing = [...new Set(ids)].filter((id) => !ctx.nodes.has(id))
  if (missing.length === 0) return
  ctx.budget.chargeSteps(missing.length)
  ctx.budget.chargeBytes(missing.length * NODE_BYTES)
  for (const n of await ctx.source.nodesByIds(missing)) ctx.nodes.set(n.id, n)
}

/**
 * Makes the properties of relationships `ids` readable (they were read without them unless the query
 * looks into relationship properties): one store round trip for those not loaded yet.
 */
export async function loadRelProperties(ctx: RunContext, ids: Iterable<number>): Promise<void> {
  if (ctx.relProperties) return
  const missing = [...new Set(ids)].filter((id) => !ctx.withProps.has(id))
  if (missing.length === 0) return
  const props = await ctx.source.edgeProperties(missing)
  for (const id of missing) {
    const e = ctx.rels.get(id)
    if (!e) continue
    const p = props.get(id) ?? {}
    ctx.budget.chargeBytes(2 * JSON.stringify(p).length)
    ctx.rels.set(id, { id: e.id, start: e.start, end: e.end, kind: e.kind, updated_at: e.updated_at, properties: p })
    ctx.withProps.add(id)
  }
}

/**
 * One store call for the relationships at `part` (at most EXPAND_CHUNK nodes): the time is checked before
 * it, and its records are charged (their bytes, and a step each) before the caller holds them. Returns the
 * bytes charged, for a caller that gives them back once it has compacted the records.
 */
async function expandCharged(
  ctx: RunContext,
  part: number[],
  direction: 'out' | 'in' | 'both',
  kinds: string[] | null,
  where: RelCondition[] = [],
): Promise<{ edges: EdgeRecord[]; bytes: number }> {
  ctx.budget.checkTime()
  const edges = await ctx.source.expand(part, direction, kinds, ctx.relProperties, where)
  let bytes = 0
  for (const e of edges) bytes += e.bytes ?? EDGE_BYTES
  ctx.budget.chargeBytes(bytes)
  ctx.budget.chargeSteps(edges.length)
  return { edges, bytes }
}

/**
 * Relationships whose far nodes a level statement reads with them (expandLevel): those of the first batch of
 * walks (BATCH); the others are read by the batches of walks that reach them (loadNodes), so a LIMIT
 * downstream still stops before the far nodes of the whole frontier are read (measured at 100 k edges:
 * reading every far node of the level made the one-hop and 2-hop questions of the bench read 30 % more
 * nodes and cost more CPU than the round trips it saved).
 */
const LEVEL_NODES = BATCH
/** A level whose far nodes are read whatever they are (the inner levels of a variable-length relationship). */
const ANY_NODE: NodeScan = { kinds: null, objectid: null, name: null }

/**
 * A walk level as one store round trip (GraphSource.expandLevel, issue 28): the relationships at `part` whose
 * far end passes `far` (a superset the engine narrows), and those far nodes' records. Charged as expand and
 * loadNodes charge: every relationship and every node the store returned a step, their bytes (a node only
 * when it was not held yet) before the caller holds them.
 */
async function expandLevelCharged(
  ctx: RunContext,
  part: number[],
  direction: 'out' | 'in' | 'both',
  kinds: string[] | null,
  where: RelCondition[],
  far: NodeScan,
  goOn: GoOn | null,
): Promise<EdgeRecord[]> {
  ctx.budget.checkTime()
  const { edges, nodes } = await ctx.source.expandLevel!(part, direction, kinds, ctx.relProperties, where, far, LEVEL_NODES, goOn)
  let bytes = 0
  for (const e of edges) bytes += e.bytes ?? EDGE_BYTES
  ctx.budget.chargeSteps(edges.length + nodes.length)
  const fresh = nodes.filter((n) => !ctx.nodes.has(n.id))
  ctx.budget.chargeBytes(bytes + fresh.length * NODE_BYTES)
  for (const n of fresh) ctx.nodes.set(n.id, n)
  return edges
}

/**
 * Relationships at each of `ids` (near end), fetched once per query and direction/kinds/conditions. With
 * `far` (a single relationship's far end, plan.ts farScans) and a store that reads a level at once, only
 * those whose far end may pass it, the far nodes read in the same round trip; with `goOn` as well, also
 * those whose far end has a relationship to go on (GraphSource.expandLevel `orGoOn`, variable-length levels).
 */
async function expand(
  ctx: RunContext,
  ids: number[],
  direction: 'out' | 'in' | 'both',
  kinds: string[] | null,
  where: RelCondition[] = [],
  far: NodeScan | null = null,
  goOn: GoOn | null = null,
): Promise<Map<number, EdgeRecord[]>> {
  const level = far !== null && ctx.source.expandLevel !== undefined
  const key = `${direction}|${kinds ? kinds.join(',') : '*'}${where.length ? `|${JSON.stringify(where)}` : ''}${level ? `|far ${JSON.stringify(far)}${goOn ? `|or goes on ${JSON.stringify(goOn)}` : ''}` : ''}`
  let cache = ctx.expansions.get(key)
  if (!cache) ctx.expansions.set(key, (cache = new Map()))
  const missing = [...new Set(ids)].filter((id) => !cache!.has(id))
  for (const id of missing) cache.set(id, [])
  // A few thousand nodes per store call, each charged before the next: a whole frontier in one call
  // (tens of thousands of nodes deep in a shortest-path search at 1 M edges) returned ~400 000
  // relationships at once, held in full before the budget could refuse them (measured: ~380 MB of heap).
  for (const part of chunks(missing, EXPAND_CHUNK)) {
    const edges = level ? await expandLevelCharged(ctx, part, direction, kinds, where, far!, goOn) : (await expandCharged(ctx, part, direction, kinds, where)).edges
    const wanted = new Set(part)
    for (const e of edges) {
      ctx.rels.set(e.id, e)
      if ((direction === 'out' || direction === 'both') && wanted.has(e.start)) cache.get(e.start)!.push(e)
      if ((direction === 'in' || direction === 'both') && wanted.has(e.end) && !(direction === 'both' && e.start === e.end)) cache.get(e.end)!.push(e)
    }
  }
  return cache
}

function farEnd(e: EdgeRecord, near: number): number {
  return e.start === near ? e.end : e.start
}

function relRef(e: EdgeRecord): RelRef {
  return new RelRef(e.id, e.start, e.end, e.kind)
}

function nodeOk(ctx: RunContext, id: number, np: NodePattern, filters: Expr[], row: Row): boolean {
  const n = ctx.nodes.get(id)
  if (!n) return false
  if (!np.labels.every((l) => hasLabel(n, l))) return false
  if (np.properties)
    for (const { key, value } of np.properties.entries)
      if (equals(fromJson(nodeProperty(n, key)), evaluate(value, row, ctx)) !== true) return false
  if (np.variable) {
    const b = row[np.variable]
    if (b !== undefined && !(b instanceof NodeRef && b.id === id)) return false
    if (filters.length > 0) {
      const r = { ...row, [np.variable]: new NodeRef(id) }
      for (const f of filters) if (evaluate(f, r, ctx) !== true) return false
    }
  }
  return true
}

function relOk(ctx: RunContext, e: EdgeRecord, rp: RelPattern, row: Row): boolean {
  if (rp.properties)
    for (const { key, value } of rp.properties.entries) if (equals(fromJson(e.properties[key]), evaluate(value, row, ctx)) !== true) return false
  if (rp.variable && rp.range === null) {
    const b = row[rp.variable]
    if (b !== undefined && !(b instanceof RelRef && b.id === e.id)) return false
  }
  return true
}

/** A walk in progress (walk order). */
interface State {
  row: Row
  /** every node of the walk */
  seq: number[]
  /** every relationship of the walk */
  relSeq: RelRef[]
  /** node id at each pattern node reached so far */
  ends: number[]
  /** relationships of each hop done */
  groups: RelRef[][]
}

/** Start nodes for a batch of rows: the bound node, or a scan (streamed page by page). */
export async function* starts(ctx: RunContext, plan: PartPlan, rows: Row[]): AsyncGenerator<State[]> {
  const np = plan.nodes[0]
  const boundVar = np.variable !== null && np.variable in rows[0] ? np.variable : null
  if (boundVar) {
    const out: State[] = []
    for (const row of rows) {
      const v = row[boundVar]
      if (!(v instanceof NodeRef)) continue
      if (!nodeOk(ctx, v.id, np, plan.filters[0], row)) continue
      out.push({ row, seq: [v.id], relSeq: [], ends: [v.id], groups: [] })
    }
    if (out.length) yield out
    return
  }
  // The store-side part of a scan does not depend on the rows, so its pages are kept for the query (a
  // later batch of rows, or a second part scanning the same way, reuses them) while they are small: a
  // scan of the whole graph (100 k nodes at the benchmark's size, ~60 MB of records) is read page by page
  // and only the nodes that start a walk stay in memory; a later use reads it from the store again.
  // an ordered scan (topk.ts) reads its pages in the projection's order, by offset
  const ordered = ctx.scanOrder?.part === plan.part ? ctx.scanOrder : null
  const pageSize = (i: number) => (ordered ? orderedPageSize(ordered.want, i) : scanPageSize(i))
  const key = JSON.stringify(ordered ? { scan: plan.scan, order: ordered.order } : plan.scan)
  let cached = ctx.scans.get(key)
  if (!cached) ctx.scans.set(key, (cached = { pages: [], complete: false, bytes: 0, dropped: false }))
  let after = 0
  // Without a relationship to walk, a whole page goes on at once (its nodes are read already), so a
  // WHERE with a pattern predicate downstream asks the store once per page instead of once per 500.
  const yieldAt = plan.rels.length === 0 ? SCAN_PAGE_MAX : BATCH
  for (let i = 0; ; i++) {
    ctx.budget.checkTime()
    let page: NodeRecord[]
    /** nodes of this page that were not held before it was read (released unless a walk starts there) */
    let fresh: Set<number> | null = null
    if (!cached.dropped && i < cached.pages.length) page = cached.pages[i]
    else if (!cached.dropped && cached.complete) return
    else {
      const size = pageSize(i)
      if (ordered) {
        const got = await ctx.source.scanOrdered!(plan.scan, ordered.order, after, size)
        // such values sort first, so only the first page can show one, before any row was answered; a later
        // page shows one only if the graph changed between the pages (run.ts could not start again cleanly)
        if (got === null && after > 0) throw new CypherError('the graph changed while the query read it in order; run it again')
        if (got === null) throw new Unorderable('the store cannot order this scan as the engine does')
        page = got
      } else page = await ctx.source.scanNodes(plan.scan, after, size)
      ctx.budget.chargeSteps(page.length)
      const bytes = page.length * NODE_BYTES
      if (!cached.dropped && i === cached.pages.length && cached.bytes + bytes <= SCAN_CACHE_BYTES) {
        ctx.budget.chargeBytes(bytes)
        cached.bytes += bytes
        if (page.length < size) cached.complete = true
        if (page.length > 0) cached.pages.push(page)
        for (const n of page) ctx.nodes.set(n.id, n)
      } else {
        if (!cached.dropped) {
          // over the cache's size: forget the pages (their nodes that start walks stay held)
          cached.dropped = true
          cached.pages = []
        }
        fresh = new Set()
        for (const n of page)
          if (!ctx.nodes.has(n.id)) {
            ctx.nodes.set(n.id, n)
            fresh.add(n.id)
          }
      }
      if (page.length === 0) return
    }
    after = ordered ? after + page.length : page[page.length - 1].id
    let out: State[] = []
    for (const n of page) {
      // every row is tested against the node before anything is yielded, so a node read for this page
      // only is released before any other stage could start to rely on it
      const made: State[] = []
      for (const row of rows) if (nodeOk(ctx, n.id, np, plan.filters[0], row)) made.push({ row, seq: [n.id], relSeq: [], ends: [n.id], groups: [] })
      if (fresh?.has(n.id)) {
        if (made.length === 0) ctx.nodes.delete(n.id)
        else ctx.budget.chargeBytes(NODE_BYTES)
      }
      for (const st of made) {
        out.push(st)
        if (out.length >= yieldAt) {
          ctx.budget.chargeRows(out.length)
          yield out
          out = []
        }
      }
    }
    if (out.length) {
      ctx.budget.chargeRows(out.length)
      yield out
    }
    if (page.length < pageSize(i) && (cached.dropped || i >= cached.pages.length - 1)) return
  }
}

/** Extends walks by hop `h` (and the following ones), yielding finished walks as rows. */
async function* hops(ctx: RunContext, plan: PartPlan, states: State[], h: number): AsyncGenerator<Row[]> {
  if (h === plan.rels.length) {
    yield states.map((s) => bindRow(plan, s))
    return
  }
  const rp = plan.rels[h]
  const far = plan.nodes[h + 1]
  const kinds = relationshipKinds(rp.types)
  const min = rp.range ? rp.range.min : 1
  const max = rp.range ? rp.range.max : 1
  type Walk = State & { hop: RelRef[] }
  let frontier: Walk[] = states.map((s) => ({ ...s, hop: [] }))
  const finish = (w: Walk): State => ({ row: w.row, seq: w.seq, relSeq: w.relSeq, ends: w.ends.concat(w.seq[w.seq.length - 1]), groups: w.groups.concat([w.hop]) })
  if (min === 0) {
    const done = frontier.filter((w) => nodeOk(ctx, w.seq[w.seq.length - 1], far, plan.filters[h + 1], w.row)).map(finish)
    for (let i = 0; i < done.length; i += BATCH) yield* hops(ctx, plan, done.slice(i, i + BATCH), h + 1)
  }
  if (rp.range === null) {
    // One relationship: the walks are made, their far nodes read and the finished ones handed on a
    // batch at a time, so a LIMIT downstream stops before the far nodes of every relationship of the
    // frontier are read (a group administering thousands of computers read them all for LIMIT 500).
    const edgesAt = await expand(
      ctx,
      frontier.map((w) => w.seq[w.seq.length - 1]),
      rp.direction,
      kinds,
      plan.relWhere[h],
      plan.farScans[h],
    )
    let chunk: Walk[] = []
    const flush = async function* (): AsyncGenerator<Row[]> {
      const walks = chunk
      chunk = []
      ctx.budget.chargeRows(walks.length)
      ctx.budget.chargeSteps(walks.length)
      ctx.budget.chargeBytes(walks.length * (WALK_BYTES + WALK_ID_BYTES * (walks[0].seq.length + walks[0].relSeq.length + 1)))
      await loadNodes(
        ctx,
        walks.map((w) => w.seq[w.seq.length - 1]),
      )
      const done = walks.filter((w) => nodeOk(ctx, w.seq[w.seq.length - 1], far, plan.filters[h + 1], w.row)).map(finish)
      if (done.length) yield* hops(ctx, plan, done, h + 1)
    }
    for (const w of frontier) {
      const at = w.seq[w.seq.length - 1]
      for (const e of edgesAt.get(at) ?? []) {
        if (w.relSeq.some((r) => r.id === e.id)) continue
        if (!relOk(ctx, e, rp, w.row)) continue
        const r = relRef(e)
        chunk.push({ ...w, seq: w.seq.concat(farEnd(e, at)), relSeq: w.relSeq.concat(r), hop: [r] })
        if (chunk.length >= BATCH) yield* flush()
      }
    }
    if (chunk.length) yield* flush()
    return
  }
  let level = 0
  let noted = false
  while (frontier.length > 0 && (max === null || level < max)) {
    // every node a level reaches is read (below), so with the relationships, in the same round trip.
    // Pruning (issue 28: the OU map `(:Domain)-[:Contains*1..]->(:OU)` at 1 M edges walked every user and
    // computer the OUs and containers hold, ~62 000 walks and their nodes, past the memory limit, for 31
    // rows): a walk made at this level is needed only if it can end the hop here (level >= min and its last
    // node passes the far node's conditions, whose store-side part `farScans[h]` every such node passes:
    // the contract the single relationship's level above relies on as well) or go on (max not reached, and
    // its last node has a relationship the next level's `expand` would return: same direction and kinds,
    // the other end visible; the trail rule and property maps only drop more). The store keeps a
    // relationship when its far end passes either (expandLevel `orGoOn`), a superset of the walks needed;
    // every walk dropped is neither a row nor the prefix of one, and the walks kept are made in the same
    // order (the store returns the relationships kept in the order it would return them all), so the rows
    // and their order are those of the walk without pruning. At the last level (max) only ending counts.
    // An undirected hop is not pruned before its last level: its far end always has the relationship just
    // walked, which the trail rule forbids, so "has a relationship" would prove nothing there.
    const last = max !== null && level + 1 >= max
    const prune = ctx.walkPruning && ctx.source.expandLevel !== undefined && (last || rp.direction !== 'both')
    const goOn: GoOn | null = prune && !last ? { direction: rp.direction as 'out' | 'in', kinds } : null
    if (prune && !noted && ctx.plans.length < 32) {
      noted = true
      ctx.plans.push(`variable-length hop ${h + 1}: a level keeps the relationships whose far end passes ${JSON.stringify(plan.farScans[h])}${last ? '' : ` or has a ${kinds ? kinds.join('|') : 'relationship'} to go on`}`)
    }
    const edgesAt = await expand(
      ctx,
      frontier.map((w) => w.seq[w.seq.length - 1]),
      rp.direction,
      kinds,
      plan.relWhere[h],
      prune ? plan.farScans[h] : ANY_NODE,
      goOn,
    )
    const next: Walk[] = []
    // Walks are charged while they are made, not after the level: one level of an unbounded pattern
    // over a dense graph can multiply the walks by the average degree, and building them all before
    // charging them held ~1 GB (measured, see BENCHMARKS.md). A walk costs WALK_BYTES and its ids.
    let uncharged = 0
    let unchargedBytes = 0
    const charge = () => {
      ctx.budget.chargeRows(uncharged)
      ctx.budget.chargeSteps(uncharged)
      ctx.budget.chargeBytes(unchargedBytes)
      uncharged = 0
      unchargedBytes = 0
    }
    for (const w of frontier) {
      const at = w.seq[w.seq.length - 1]
      for (const e of edgesAt.get(at) ?? []) {
        if (w.relSeq.some((r) => r.id === e.id)) continue
        if (!relOk(ctx, e, rp, w.row)) continue
        const r = relRef(e)
        next.push({ ...w, seq: w.seq.concat(farEnd(e, at)), relSeq: w.relSeq.concat(r), hop: w.hop.concat(r) })
        uncharged++
        unchargedBytes += WALK_BYTES + WALK_ID_BYTES * (w.seq.length + w.relSeq.length + w.hop.length + 3)
        if (uncharged >= 1_000) charge()
      }
    }
    charge()
    level++
    await loadNodes(
      ctx,
      next.map((w) => w.seq[w.seq.length - 1]),
    )
    if (level >= min) {
      const done = next.filter((w) => nodeOk(ctx, w.seq[w.seq.length - 1], far, plan.filters[h + 1], w.row)).map(finish)
      for (let i = 0; i < done.length; i += BATCH) yield* hops(ctx, plan, done.slice(i, i + BATCH), h + 1)
    }
    if (rp.range === null) break
    frontier = next
  }
}

/** A finished walk → the row with the part's variables bound (pattern order). */
function bindRow(plan: PartPlan, s: State): Row {
  const part = plan.part
  const ends = plan.reversed ? [...s.ends].reverse() : s.ends
  const groups = plan.reversed ? [...s.groups].reverse().map((g) => [...g].reverse()) : s.groups
  const row: Row = { ...s.row }
  part.nodes.forEach((np, i) => {
    if (np.variable) row[np.variable] = new NodeRef(ends[i])
  })
  part.rels.forEach((rp, i) => {
    if (rp.variable) row[rp.variable] = rp.range === null ? groups[i][0] : groups[i]
  })
  if (part.variable) {
    const seq = plan.reversed ? [...s.seq].reverse() : s.seq
    const rels = plan.reversed ? [...s.relSeq].reverse() : s.relSeq
    row[part.variable] = new PathVal(seq, rels)
  }
  return row
}

/**
 * Whether `e` has one value for the whole query: literals, lists, arithmetic, a property of such a value, and
 * datetime() / timestamp() (the query's clock, ctx.now) — never rand() nor anything reading a row.
 */
function queryConstant(e: Expr): boolean {
  switch (e.type) {
    case 'literal':
      return true
    case 'list':
      return e.items.every(queryConstant)
    case 'neg':
      return queryConstant(e.expr)
    case 'arith':
      return queryConstant(e.left) && queryConstant(e.right)
    case 'property':
      return queryConstant(e.expr)
    case 'call':
      return !e.distinct && (e.name === 'datetime' || e.name === 'timestamp') && e.args.every(queryConstant)
    default:
      return false
  }
}

/** The plan's evaluator of query-wide constants (plan.ts Constant): `u.pwdlastset < datetime().epochseconds - 86400`. */
const constants =
  (ctx: RunContext): Constant =>
  (e) => {
    if (!queryConstant(e)) return undefined
    try {
      return evaluate(e, {}, ctx)
    } catch {
      return undefined
    }
  }

/** Start from the other end when the store counts at most this share of the chosen end's nodes there. */
const SMALLER_END = 0.5

/**
 * One relationship read under property conditions in the store (plan.ts relConditions: `r.isprimarygroup = true`)
 * between two label scans that the static scores of plan.ts cannot tell apart (no object id, name or text
 * condition at either end, only labels and stored property tests): the walk is started at the end the store
 * counts clearly fewer visible nodes at (GraphSource.countNodes, the labels only, one count per label set and
 * query), else as planned. Such a relationship condition keeps few of the relationships, so what the walk costs is
 * its start: every start node is read and made a row before the hop. "Users with non-default Primary Group
 * membership" near 1 M edges (`(n:User)-[r:MemberOf]->(g:Group) WHERE r.isprimarygroup = true AND NOT g.objectid
 * ENDS WITH "-513" …`) started at its 56,000 users (their conditions score higher: `n.gmsa IS NULL OR …`) and
 * was refused by the row or time limit; from its 2,853 groups (Domain Users dropped by its own condition before
 * the hop) it reads a few thousand nodes.
 *
 * Why the answer is the same: a pattern part's rows are the same whichever end its walk starts from (plan.ts
 * planPart; bindRow binds them in pattern order), so only their order changes, which Cypher leaves unspecified
 * without ORDER BY. Not for a part whose scan is read in a projection's order (topk.ts reads the planned start
 * end in order), nor when either end is bound. Every budget is charged as for any walk; the counts are of the
 * caller's visible nodes, so they change which end is read, never what is answered.
 */
async function smallerEnd(ctx: RunContext, part: PatternPart, bound: ReadonlySet<string>, where: Expr | null, plan: PartPlan): Promise<PartPlan> {
  if (part.rels.length !== 1 || part.rels[0].range !== null || plan.relWhere[0].length === 0) return plan
  if (!ctx.source.countNodes || ctx.scanOrder?.part === part) return plan
  if (part.nodes.some((n) => n.variable !== null && bound.has(n.variable))) return plan
  const scans = [plan.scan, plan.farScans[0]]
  if (scans.some((s) => s.kinds === null || s.objectid !== null || s.name !== null || (s.where ?? []).some((c) => c.type !== 'property'))) return plan
  const kinds = plan.nodes.map((n) => n.labels.map(exactKindsFor))
  if (kinds.some((k) => k.length === 0 || k.length > 4 || k.some((x) => x === null))) return plan
  const counts: number[] = []
  for (const k of kinds as string[][][]) {
    const key = JSON.stringify(k)
    ctx.endCounts ??= new Map()
    let c = ctx.endCounts.get(key)
    if (c === undefined) {
      ctx.budget.checkTime()
      c = await ctx.source.countNodes({ kinds: k, objectid: null, tests: [] })
      ctx.endCounts.set(key, c)
    }
    counts.push(c)
  }
  if (counts[1] > counts[0] * SMALLER_END) return plan
  const other = planPart(part, bound, where, constants(ctx), !plan.reversed)
  return { ...other, describe: `${other.describe}; started at the end with fewer nodes (${counts[1]} against ${counts[0]}, counted by the store)` }
}

/**
 * The plan the walk of one pattern part follows (its start end included: plan.ts planPart, then smallerEnd at run
 * time). onehop.ts asks it too, so that a one-hop join with a relationship condition starts where the walk would.
 */
export async function walkPlan(ctx: RunContext, part: PatternPart, bound: ReadonlySet<string>, where: Expr | null): Promise<PartPlan> {
  return smallerEnd(ctx, part, bound, where, planPart(part, bound, where, constants(ctx)))
}

/** Rows extended by every match of one pattern part. */
export async function* matchPart(ctx: RunContext, part: PatternPart, rows: Row[], where: Expr | null): AsyncGenerator<Row[]> {
  if (rows.length === 0) return
  const bound = new Set(Object.keys(rows[0]))
  if (part.shortest) {
    yield* matchShortest(ctx, part, rows, where, bound)
    return
  }
  // `A(a) OR B(b)`: one walk per end, each cut where its disjunct is (plan.ts splitByEnd)
  const split = splitByEnd(part, bound, where)
  if (split && ctx.plans.length < 32) ctx.plans.push(`WHERE A OR B split by the node each disjunct reads: ${split.length} walks`)
  for (const w of split ?? [where]) {
    const plan = await walkPlan(ctx, part, bound, w)
    if (ctx.plans.length < 32) ctx.plans.push(plan.describe)
    for await (const batch of starts(ctx, plan, rows)) yield* hops(ctx, plan, batch, 0)
  }
}

// ---- shortest paths ------------------------------------------------------------------------------------------

/**
 * Heap estimates of the searches' compact state (charged to the memory budget): a node reached (its entry
 * in a Map of depths and one in a Map of parents, with a small array) and one more parent link (two numbers).
 * A relationship read during the search is held only until its store answer is compacted (charged, then
 * given back): the search keeps numbers, never relationship records, and reads the records of the paths it
 * returns at the end (edgesByIds).
 */
const SEARCH_NODE_BYTES = 160
const PARENT_BYTES = 16
/** One entry of a level's adjacency: the node's array slot pair (relationship id, far node). */
const ADJ_PAIR_BYTES = 16
const ADJ_NODE_BYTES = 80

/** Compact adjacency: node → flat [relationship id, far node, …] (an empty array: read, none). */
type Adj = Map<number, number[]>

/**
 * Adjacency kept across the levels of one lockstep search (several sources reach the same nodes at
 * different levels: each is read once) while it stays under ADJ_CACHE_BYTES; past that, a level's
 * adjacency is dropped once the level is walked (read again if needed: more round trips, bounded memory).
 */
interface AdjCache {
  adj: Adj
  bytes: number
}
const ADJ_CACHE_BYTES = 16 * 1024 * 1024
/**
 * A multi-target search with at most this many targets left, past `proveAfter` nodes, asks the store for each
 * one's reach (up to `proveAfter` nodes) and finishes pair by pair before a large level. With more left it goes
 * on as it is: many targets left are most often reached by the next levels, and a LIMIT stops it there (the
 * console's Kerberoastable users' paths to Tier Zero at 1 M edges, 13 searches with ~2 800 targets each: asking
 * for them took 1.9 s where the search alone takes 0.44 s).
 */
const PROVE_EACH = 64

/** A level's adjacency and the bytes charged for it that are given back once the level is walked. */
interface Level {
  get: (n: number) => number[] | undefined
  transient: number
}

/**
 * The relationships at `ids` (direction from them), as ids only: the nodes not in `cache` are read
 * EXPAND_CHUNK per store call, every relationship charged as a step, the call's records charged while
 * they are compacted and then given back. `keep` filters relationships (the pattern's property map).
 * Access filtering is the store's (a relationship to a node the caller may not see is never returned,
 * so never walked).
 */
async function adjacency(
  ctx: RunContext,
  ids: number[],
  direction: 'out' | 'in' | 'both',
  kinds: string[] | null,
  keep: (e: EdgeRecord) => boolean,
  cache: AdjCache | null,
): Promise<Level> {
  const missing = cache ? ids.filter((id) => !cache.adj.has(id)) : ids
  const local: Adj = new Map()
  let transient = 0
  for (const part of chunks(missing, EXPAND_CHUNK)) {
    const { edges, bytes } = await expandCharged(ctx, part, direction, kinds)
    const into = cache && cache.bytes < ADJ_CACHE_BYTES ? cache.adj : local
    const wanted = new Set(part)
    let held = 0
    for (const id of part) {
      into.set(id, [])
      held += ADJ_NODE_BYTES
    }
    for (const e of edges) {
      if (!keep(e)) continue
      if ((direction === 'out' || direction === 'both') && wanted.has(e.start)) {
        into.get(e.start)!.push(e.id, e.end)
        held += ADJ_PAIR_BYTES
      }
      if ((direction === 'in' || direction === 'both') && wanted.has(e.end) && !(direction === 'both' && e.start === e.end)) {
        into.get(e.end)!.push(e.id, e.start)
        held += ADJ_PAIR_BYTES
      }
    }
    ctx.budget.chargeBytes(held)
    ctx.budget.releaseBytes(bytes)
    if (into === local) transient += held
    else cache!.bytes += held
  }
  return { get: (n) => local.get(n) ?? cache?.adj.get(n), transient }
}

/** A breadth-first search's state, numbers only. */
interface Search {
  source: number
  /** node → flat [previous node, relationship id, …]: every link from the level before its own */
  parents: Map<number, number[]>
  depth: Map<number, number>
  frontier: number[]
  /** levels done */
  level: number
  /** targets not reached yet (multi-target search) */
  left: number
  /** bytes charged for this search's state (given back when a pairwise search is done) */
  bytes: number
}

function newSearch(ctx: RunContext, source: number, left: number): Search {
  ctx.budget.chargeBytes(SEARCH_NODE_BYTES)
  return { source, parents: new Map([[source, []]]), depth: new Map([[source, 0]]), frontier: [source], level: 0, left, bytes: SEARCH_NODE_BYTES }
}

/**
 * Part of the next level of `search` over `level`: the nodes of `from` (part of its frontier) walked, every
 * node first reached added to `next` with every link from the level before (so the parents of a level are
 * complete when the whole level is). The search's own level and frontier are left to the caller.
 */
function stepFrom(ctx: RunContext, search: Search, level: Level, from: number[], next: number[]): void {
  const d = search.level + 1
  const before = next.length
  let links = 0
  for (const at of from) {
    const l = level.get(at)
    if (!l) continue
    for (let i = 0; i < l.length; i += 2) {
      const rel = l[i]
      const to = l[i + 1]
      const seen = search.depth.get(to)
      if (seen === undefined) {
        search.depth.set(to, d)
        search.parents.set(to, [at, rel])
        next.push(to)
      } else if (seen === d) {
        search.parents.get(to)!.push(at, rel)
        links++
      }
    }
  }
  const added = next.length - before
  // a node reached is a step and its state bytes (SEARCH_NODE_BYTES, measured: ~150-190 bytes of heap per node
  // reached with its depth, parent link and frontier slot, node ids past 2^31), not a row: the row limit
  // bounds rows of values, and counting search nodes as rows refused the Domain Users group's search of
  // a large domain (64 000 nodes, twice) that the memory and step limits allow
  ctx.budget.chargeSteps(added)
  const bytes = added * SEARCH_NODE_BYTES + links * PARENT_BYTES
  ctx.budget.chargeBytes(bytes)
  search.bytes += bytes
}

/** One more level of `search` over `level` (stepFrom over its whole frontier). Returns the nodes of the new level. */
function step(ctx: RunContext, search: Search, level: Level): number[] {
  const next: number[] = []
  stepFrom(ctx, search, level, search.frontier, next)
  search.frontier = next
  search.level++
  return next
}

/** A path as ids: nodes, and the relationship ids between them (search order). */
interface IdPath {
  nodes: number[]
  rels: number[]
}

/** Paths from the search's source to `t` along recorded parents: one (the first links), or all of them. */
function walksBack(ctx: RunContext, parents: Map<number, number[]>, t: number, all: boolean): IdPath[] {
  const out: IdPath[] = []
  const walk = (at: number, nodes: number[], rels: number[]): void => {
    const ps = parents.get(at) ?? []
    if (ps.length === 0) {
      out.push({ nodes: [at, ...nodes], rels })
      ctx.budget.chargeRows(1)
      return
    }
    for (let i = 0; i < (all ? ps.length : 2); i += 2) walk(ps[i], [at, ...nodes], [ps[i + 1], ...rels])
  }
  walk(t, [], [])
  return out
}

/** Reads the records of relationships `ids` not held yet (the paths a search returns), charged as read. */
async function loadRels(ctx: RunContext, ids: Iterable<number>): Promise<void> {
  const missing = [...new Set(ids)].filter((id) => !ctx.rels.has(id))
  if (missing.length === 0) return
  ctx.budget.chargeSteps(missing.length)
  for (let i = 0; i < missing.length; i += EXPAND_CHUNK) {
    const edges = await ctx.source.edgesByIds(missing.slice(i, i + EXPAND_CHUNK), ctx.relProperties)
    let bytes = 0
    for (const e of edges) {
      bytes += e.bytes ?? EDGE_BYTES
      ctx.rels.set(e.id, e)
    }
    ctx.budget.chargeBytes(bytes)
  }
}

/**
 * Shortest-path strategy thresholds:
 *  - `pairwiseMax`: at most this many (start, end) pairs → one bidirectional search per pair (a pair whose
 *    ends both have large reaches costs little: the sides meet in the middle; a multi-target search from a
 *    node walks all it reaches whenever one of its ends is unreachable). Otherwise multi-target searches.
 *  - `proveAfter`: a pair whose two sides have reached more than this many nodes without meeting asks the
 *    store for the reach of its ends (Reaches): a complete one proves it, and often many other pairs,
 *    unreachable without walking the rest in the isolate.
 *  - `reachLimit`: nodes one such store statement may count before it answers "too large to tell".
 */
export interface ShortestTuning {
  pairwiseMax: number
  proveAfter: number
  reachLimit: number
  /** frontier nodes per chunk of a multi-target shortestPath level (answered chunk by chunk) */
  levelChunk: number
  /**
   * An end with more nodes than this, listed by the store (`lazyList`) or scanned (`lazyScan`), facing a
   * smaller end: not read whole, its nodes tested as the searches from the other end reach them (LazyEnd)
   */
  lazyList: number
  lazyScan: number
}
// lazyList: four ID_PAGEs. Listing is cheap (ids only, one statement per 32 768): at 1 M edges (90 000 Base nodes,
// 55 789 users) testing the reached nodes of a listed end (records read by id) used as much CPU or more than
// listing it whole (BENCHMARKS.md, issue 28), so only ends beyond that are tested as reached.
export const SHORTEST_TUNING: ShortestTuning = { pairwiseMax: 64, proveAfter: 2_000, reachLimit: 32_768, levelChunk: EXPAND_CHUNK, lazyList: 131_072, lazyScan: SCAN_PAGE }

/**
 * Shortest paths from the source of `shared` to `y` (a different node) by bidirectional breadth-first
 * search (see matchShortest), in search order (shared's source first): one, or all of them. `shared` is
 * the search from x, a node of the smaller end set, kept across x's pairs: its levels only grow, each
 * read once; a pair starts with `y` alone on its side and first checks whether `shared` already reached y
 * (its parents are complete: their level is done). The proof in matchShortest needs no balance between the
 * sides, only that they share no node before each level, which that check makes true. `yCache` keeps the
 * other side's adjacency across the pairs. With `off`, the search is bounded: y's side about to pass
 * `maxWork` nodes, or entering what a put-off pair's far side reached, puts the pair off (null; PutOff).
 */
async function bidirectional(
  ctx: RunContext,
  shared: Search,
  sharedDir: 'out' | 'in' | 'both',
  y: number,
  maxDepth: number,
  kinds: string[] | null,
  keep: (e: EdgeRecord) => boolean,
  all: boolean,
  yCache: AdjCache,
  dead: Dead,
  maxWork: number,
  off: PutOff | null,
): Promise<IdPath[] | null> {
  if (shared.depth.has(y)) return walksBack(ctx, shared.parents, y, all)
  if (dead.nodes.has(y)) return []
  const other = newSearch(ctx, y, 1)
  const paths: IdPath[] = []
  /** the pair is put off: y joins the group of the put-off pair whose side reached `near`, or starts one */
  const putOff = (near: number | undefined): null => {
    const group = near === undefined ? undefined : off!.seen.get(near)
    if (group !== undefined) off!.groups.get(group)!.push(y)
    else {
      off!.groups.set(y, [y])
      for (const n of other.depth.keys()) off!.seen.set(n, y)
      ctx.budget.chargeBytes(other.depth.size * DEAD_NODE_BYTES)
      off!.bytes += other.depth.size * DEAD_NODE_BYTES
    }
    ctx.budget.releaseBytes(other.bytes)
    return null
  }
  if (off?.seen.has(y)) return putOff(y)
  while (shared.level + other.level < maxDepth && shared.frontier.length > 0 && other.frontier.length > 0) {
    const side = shared.frontier.length <= other.frontier.length ? shared : other
    // y's side about to grow past maxWork nodes (its next level guessed at 8 x its frontier): the pair is
    // put off (see PutOff). x's side is not bounded here: it is shared, every pair of x uses it.
    if (off && side === other && other.depth.size + 8 * other.frontier.length > maxWork) return putOff(undefined)
    const rest = side === shared ? other : shared
    const read = await adjacency(ctx, side.frontier, side === shared ? sharedDir : reverse(sharedDir), kinds, keep, side === shared ? null : yCache)
    // y's side never enters a dead node (see Dead): no path from x passes through one
    const level: Level =
      side === other && dead.nodes.size > 0
        ? {
            transient: read.transient,
            get: (n) => {
              const l = read.get(n)
              if (!l) return l
              const out: number[] = []
              for (let i = 0; i < l.length; i += 2) if (!dead.nodes.has(l[i + 1])) out.push(l[i], l[i + 1])
              return out
            },
          }
        : read
    const next = step(ctx, side, level)
    ctx.budget.releaseBytes(level.transient)
    const meet = next.filter((n) => rest.depth.has(n)).sort((a, b) => a - b)
    if (meet.length === 0) {
      // y's side entered what the side of a put-off pair reached: y is likely in the same place (not a
      // proof: the group's reach decides), and is put off with it rather than walked further
      if (off && side === other && off.seen.size > 0) {
        const near = next.find((n) => off.seen.has(n))
        if (near !== undefined) return putOff(near)
      }
      continue
    }
    for (const m of all ? meet : meet.slice(0, 1)) {
      const heads = walksBack(ctx, shared.parents, m, all) // x … m
      const tails = walksBack(ctx, other.parents, m, all) // y … m
      for (const h of heads)
        for (const w of tails) {
          ctx.budget.chargeRows(1)
          paths.push({ nodes: [...h.nodes, ...w.nodes.slice(0, -1).reverse()], rels: [...h.rels, ...[...w.rels].reverse()] })
        }
    }
    break
  }
  // y's side ended without meeting x's: every node it reached cannot be reached from x
  if (paths.length === 0 && other.frontier.length === 0) {
    for (const n of other.depth.keys()) dead.nodes.add(n)
    ctx.budget.chargeBytes(other.depth.size * DEAD_NODE_BYTES)
    dead.bytes += other.depth.size * DEAD_NODE_BYTES
  }
  ctx.budget.releaseBytes(other.bytes)
  return paths
}

/**
 * Nodes x (a node of the smaller end set, see bidirectional) cannot reach in its search direction, learnt from the
 * pairs whose other side ended without meeting x's: that side's search reached every node that reaches y
 * (walking backwards; nodes already dead left out, see below), and none of them was reached from x — had x
 * reached one, x's own node would have been among them, and the sides would have met. The set is closed
 * under "reaches": a node that reaches a dead node is dead (had x reached it, x would reach the dead node).
 * So for a later y: y dead → no path; and y's side may leave dead nodes out, since no path from x passes
 * through one (every node of such a path is reached from x). Its nodes stay dead when that side ends
 * (the nodes it left out are dead already), so the set stays closed. It settles the ends whose reach is
 * small enough to end within the bounded search; larger ones are put off and proven by the store
 * (Reaches). Charged to the memory budget while the query runs.
 */
/**
 * Pairs of one x put off by their bounded search (bidirectional with `maxWork`), grouped: a pair whose far
 * side reaches a node the far side of an earlier put-off pair reached joins that pair's group (far ends
 * in one region, e.g. users of one domain, likely share their fate). Each group is then asked for its
 * reach at once (Reaches): a complete one without x proves every pair of the group. `seen`: the nodes the
 * far sides of each group's first pair reached, their group (keyed by that first far end).
 */
interface PutOff {
  groups: Map<number, number[]>
  seen: Map<number, number>
  bytes: number
}

interface Dead {
  nodes: Set<number>
  bytes: number
}
const DEAD_NODE_BYTES = 24

/**
 * Unreachability proven in bulk by the store (GraphSource.reach), for the pairwise searches. R(s, d) is
 * the set of nodes reachable from s walking direction d (s included) over the pattern's kinds and the
 * caller's visible nodes; it is closed: every node reachable from a node of R(s, d) is in it. Let P be
 * the pattern's direction (start a → end b). A complete answer proves:
 *  - R(s, P) with a in it and b not: a reaches nothing outside it (closure), so no path a → b;
 *  - R(s, reverse P) with b in it and a not: the same, walking backwards from b.
 * (With P = both the two coincide.) The store ignores relationship property maps and the length bound,
 * so R is a superset of what the search may walk: "not in R" stays a proof; "in R" proves nothing and the
 * pair is searched. R of a set of seeds is the union of their reaches, closed as well, so the same holds.
 *
 * Order (matchShortest): for each x, every pair is first searched with a bound (`proveAfter` nodes on the
 * far side); the pairs put off are grouped (PutOff), each group's reach is asked at once, walking from the
 * far ends towards x (they failed to meet x's side), then x's own reach if pairs are left; what no answer
 * settles is searched to the end as before. Each answer records which candidates of both sides lie in R,
 * so it also settles later pairs before any search. At 1 M edges one statement (the backward reach of the
 * 4 other-domain Tier Zero ends, 21 079 nodes) settles the 4 pairs whose backward searches walked
 * ~230 000 relationships in the isolate. A statement is asked at most once per seed set and direction,
 * never for a superset of a set already too large, and each node it counted is charged as a traversal
 * step (the relationships it scanned are not counted one by one: its LIMIT bounds them, reachLimit nodes
 * and never more than the steps left above a quarter of the budget, kept for the searches).
 */
interface Reaches {
  /** complete answers: direction walked and the candidates inside */
  known: { dir: 'out' | 'in' | 'both'; inside: Set<number> }[]
  /** `seeds|direction` already asked */
  asked: Set<string>
  /** seed sets whose reach was too large, per direction (a superset of one is too large as well) */
  tooLarge: { dir: 'out' | 'in' | 'both'; seeds: Set<number> }[]
  /** statements made, pairs settled by them */
  statements: number
  settled: number
  /** pairs put off by their bounded search, and their groups (PutOff) */
  putOff: number
  groups: number
}

/** Whether the known reaches prove that start `a` has no path to end `b` in pattern direction `p`. */
function provenUnreachable(reaches: Reaches, p: 'out' | 'in' | 'both', a: number, b: number): boolean {
  const back = reverse(p)
  return reaches.known.some((r) => (r.dir === p && r.inside.has(a) && !r.inside.has(b)) || (r.dir === back && r.inside.has(b) && !r.inside.has(a)))
}

/**
 * Asks the store for R(seeds, dir), the union of the seeds' reaches (closed as well), once; a complete
 * answer is recorded with the candidates inside it.
 */
async function askReach(
  ctx: RunContext,
  reaches: Reaches,
  seeds: number[],
  dir: 'out' | 'in' | 'both',
  kinds: string[] | null,
  candidates: number[],
  most = ctx.shortest.reachLimit,
): Promise<boolean> {
  const key = `${[...seeds].sort((a, b) => a - b).join(',')}|${dir}`
  if (reaches.asked.has(key)) return true
  reaches.asked.add(key)
  if (reaches.tooLarge.some((t) => t.dir === dir && [...t.seeds].every((n) => seeds.includes(n)))) return false
  ctx.budget.checkTime()
  // Proofs never take the last quarter of the step budget: a pair they cannot settle is still searched
  // (a far but reachable pair meets in the middle), and that search must not find the budget spent.
  const spare = ctx.budget.limits.maxSteps - ctx.budget.used.steps - Math.floor(ctx.budget.limits.maxSteps / 4)
  if (spare < 1) return false
  const limit = Math.min(most, spare)
  const r = await ctx.source.reach(seeds, dir, kinds, limit, candidates)
  reaches.statements++
  ctx.budget.chargeSteps(r.nodes)
  if (!r.complete) {
    reaches.tooLarge.push({ dir, seeds: new Set(seeds) })
    return false
  }
  ctx.budget.chargeBytes(r.found.length * DEAD_NODE_BYTES)
  reaches.known.push({ dir, inside: new Set(r.found) })
  return true
}

async function candidates(ctx: RunContext, plan: PartPlan, row: Row): Promise<number[]> {
  const out: number[] = []
  for await (const batch of starts(ctx, plan, [row])) for (const s of batch) out.push(s.seq[0])
  return out
}

/** Bytes of one end candidate kept as an id (an array slot and its entry in the search's Set of targets). */
const END_ID_BYTES = 24
/** Ids per store call when the store lists an end's ids itself (GraphSource.nodeIds). */
const ID_PAGE = 32_768
/** Smallest scan page of an end read up to a cap (someEndIds). */
const SCAN_PAGE_MIN = 64

/**
 * The end's labels, property map and own WHERE conditions as one NodeCountTest the store answers exactly, or
 * null (a derived label, a condition the store would only narrow, one reading another variable).
 */
function exactEnd(np: NodePattern, filters: Expr[]): NodeCountTest | null {
  const node: NodePattern = np.variable ? np : { ...np, variable: '_end' }
  const where = filters.reduce<Expr | null>((acc, f) => (acc ? { type: 'and', left: acc, right: f } : f), null)
  return exactNodeMatch({ type: 'match', optional: false, patterns: [{ variable: null, shortest: null, nodes: [node], rels: [] }], where })?.test ?? null
}

/**
 * The nodes one end of a shortest-path pattern may be (the same nodes as `candidates`: its labels, property
 * map and own WHERE conditions), as ids only (issue 28). An end set can be most of the graph (`(n:Base)`,
 * every user: 90 000 and 55 789 nodes at 1 M edges), and the searches need only its ids; `candidates`
 * held every record (600 bytes charged each, ~54 MB for `(n:Base)`, past the memory limit with the search) and counted each
 * node as a row, so such a question was refused before its search began. Here each scan page is held only
 * while its nodes are tested (charged, then given back), every node read is a step, and each id kept is
 * charged END_ID_BYTES. The records of the ends a path returns are read again then (loadNodes). An end
 * bound by an earlier clause is the one node `candidates` gives.
 */
async function endIds(ctx: RunContext, plan: PartPlan, row: Row): Promise<number[]> {
  return (await someEndIds(ctx, plan, row, { list: Infinity, scan: Infinity })).ids
}

/**
 * An end's ids read up to `cap` of them (endIds with a bound): `over`, more than `cap` nodes pass; `ids` are
 * exactly the end's nodes with an id up to `upTo` (the store lists and scans by id, a scan a superset of the
 * end's nodes), so a node up to `upTo` passes only if listed there; `complete`: that is every node of the end
 * (`upTo` infinite).
 */
interface SomeEnd {
  ids: number[]
  complete: boolean
  over: boolean
  upTo: number
}

async function someEndIds(ctx: RunContext, plan: PartPlan, row: Row, caps: { list: number; scan: number }, from: SomeEnd | null = null): Promise<SomeEnd> {
  const np = plan.nodes[0]
  if (from?.complete) return from
  if (np.variable !== null && np.variable in row) return { ids: await candidates(ctx, plan, row), complete: true, over: false, upTo: Infinity }
  // `from`: a first part read before (past a lower cap), read on from where it stopped
  const out: number[] = from ? [...from.ids] : []
  const start = from ? from.upTo : 0
  // every condition of the end tested by the store exactly as nodeOk tests it (nodecount.ts exactNodeMatch,
  // as a node count is pushed down): the store lists the ids, no record leaves it
  const exact = ctx.source.nodeIds ? exactEnd(np, plan.filters[0]) : null
  const cap = exact ? caps.list : caps.scan
  if (exact) {
    for (let after = start; ; ) {
      ctx.budget.checkTime()
      const limit = Math.min(ID_PAGE, cap + 1 - out.length)
      const ids = await ctx.source.nodeIds!(exact, after, limit)
      ctx.budget.chargeSteps(ids.length)
      ctx.budget.chargeBytes(ids.length * END_ID_BYTES)
      for (const id of ids) out.push(id)
      const complete = ids.length < limit
      // past the cap: the first part only
      if (out.length > cap) {
        if (ctx.plans.length < 32) ctx.plans.push(`end ${np.variable ?? '(anonymous)'}: more than ${cap} id(s) listed by the store, ${out.length} read`)
        return { ids: out, complete, over: true, upTo: complete ? Infinity : ids[ids.length - 1] }
      }
      if (complete) {
        if (ctx.plans.length < 32) ctx.plans.push(`end ${np.variable ?? '(anonymous)'}: ${out.length} id(s) listed by the store`)
        return { ids: out, complete, over: false, upTo: Infinity }
      }
      after = ids[ids.length - 1]
    }
  }
  let after = start
  for (let i = from ? 1 : 0; ; i++) {
    ctx.budget.checkTime()
    // near the cap, pages no larger than needed to pass it (at least SCAN_PAGE_MIN nodes, or cap + 1)
    const size = Math.min(scanPageSize(i), Math.max(cap + 1 - out.length, Math.min(SCAN_PAGE_MIN, cap + 1)))
    const page = await ctx.source.scanNodes(plan.scan, after, size)
    ctx.budget.chargeSteps(page.length)
    const bytes = page.length * NODE_BYTES
    ctx.budget.chargeBytes(bytes)
    let kept = 0
    for (const n of page) {
      const held = ctx.nodes.has(n.id)
      if (!held) ctx.nodes.set(n.id, n)
      if (nodeOk(ctx, n.id, np, plan.filters[0], row)) {
        out.push(n.id)
        kept++
      }
      if (!held) ctx.nodes.delete(n.id)
    }
    ctx.budget.releaseBytes(bytes)
    ctx.budget.chargeBytes(kept * END_ID_BYTES)
    const complete = page.length < size
    if (out.length > cap) return { ids: out, complete, over: true, upTo: complete ? Infinity : page[page.length - 1].id }
    if (complete) return { ids: out, complete, over: false, upTo: Infinity }
    after = page[page.length - 1].id
  }
}

/**
 * The end nodes of a multi-target search's far side, when that end is too large to list first (issue 28):
 * `(n:Base) WHERE NOT n:Tag_Tier_Zero` (a derived label the store cannot list: ~90 000 records read and
 * tested at 1 M edges before a search whose first two levels give the 1 000 pairs a LIMIT asks for), every
 * user (55 789 ids). The search runs from the other, small side and each node it reaches is tested here
 * against this end's labels, property map and own WHERE conditions (nodeOk, as the scan tests them) when it
 * is reached: the answers are those of the listed end (the same searches, sources and order; a target is a
 * node that passes). A node up to `upTo` is known from the first part read (SomeEnd); a later one is read
 * by id (nodesByIds: access applies), tested, and kept only if it passes (a target: its path will load it
 * anyway), each read a step and its bytes charged; the verdicts are held as numbers.
 */
interface LazyEnd {
  has(id: number): boolean
  /** tests the nodes of `ids` not tested yet (before `has` is asked about them) */
  prepare(ids: number[]): Promise<void>
}
const VERDICT_BYTES = 24

function lazyEnd(ctx: RunContext, plan: PartPlan, row: Row, first: SomeEnd): LazyEnd {
  const np = plan.nodes[0]
  const listed = new Set(first.ids)
  const verdict = new Map<number, boolean>()
  return {
    has: (id) => (id <= first.upTo ? listed.has(id) : verdict.get(id) === true),
    async prepare(ids) {
      const todo = [...new Set(ids)].filter((id) => id > first.upTo && !verdict.has(id))
      if (todo.length === 0) return
      ctx.budget.chargeBytes(todo.length * VERDICT_BYTES)
      const read = todo.filter((id) => !ctx.nodes.has(id))
      for (const part of chunks(read, EXPAND_CHUNK)) {
        ctx.budget.checkTime()
        ctx.budget.chargeSteps(part.length)
        ctx.budget.chargeBytes(part.length * NODE_BYTES)
        const got = await ctx.source.nodesByIds(part)
        let dropped = part.length - got.length
        for (const n of got)
          if (!ctx.nodes.has(n.id)) {
            ctx.nodes.set(n.id, n)
            if (!nodeOk(ctx, n.id, np, plan.filters[0], row)) {
              ctx.nodes.delete(n.id)
              dropped++
            }
          } else dropped++
        ctx.budget.releaseBytes(dropped * NODE_BYTES)
      }
      for (const id of todo) verdict.set(id, nodeOk(ctx, id, np, plan.filters[0], row))
    },
  }
}

const reverse = (d: 'out' | 'in' | 'both'): 'out' | 'in' | 'both' => (d === 'out' ? 'in' : d === 'in' ? 'out' : 'both')

/**
 * shortestPath / allShortestPaths between every pair of the two end sets. shortestPath yields one path
 * per reachable pair, allShortestPaths every path of the shortest length; shortest answers come first.
 *
 * Up to `pairwiseMax` pairs: a bidirectional breadth-first search per pair (different nodes; pairs
 * proven unreachable by the store are left out, see Reaches). It extends the side
 * whose frontier is smaller by one whole level and stops at the first level where the two sides meet.
 * Why that is exact: before a level the sides share no node; a node m first shared after side X reached
 * depth dX must be at depth dY (the other side's last level) on side Y — were it nearer to Y, its parent
 * on X (depth dX − 1) would be within dY of Y, hence already seen by both, a contradiction. So every
 * shared node lies on a path of length dX + dY, no shorter path exists (the sides met no earlier), and
 * every shortest path passes, at position dX, through a node of the new level seen by Y: its paths are
 * (start → m along X's parents) + (m → end along Y's parents), all of them for allShortestPaths.
 *
 * Otherwise: one multi-target search per node of the smaller set (it reaches every node of the other set
 * it can in one pass and stops once it has reached them all), run level by level in lockstep so a level
 * costs one store round trip for the union of their frontiers. A target's paths are complete when its
 * level ends: they are yielded right then, and a LIMIT downstream stops the searches early.
 *
 * Both keep numbers only while searching (search state and each level's adjacency, see adjacency()),
 * so a search that cannot stop early (targets partly reachable) holds ids, not relationship records.
 */
async function* matchShortest(ctx: RunContext, part: PatternPart, rows: Row[], where: Expr | null, bound: Set<string>): AsyncGenerator<Row[]> {
  if (part.rels.length !== 1) throw new CypherError('shortestPath and allShortestPaths take a pattern with exactly one relationship')
  const rp = part.rels[0]
  const min = rp.range ? rp.range.min : 1
  if (min > 1) throw new CypherError('shortestPath and allShortestPaths support a minimum length of 0 or 1 only')
  const maxDepth = Math.min(rp.range ? (rp.range.max ?? MAX_SHORTEST_DEPTH) : 1, MAX_SHORTEST_DEPTH)
  const kinds = relationshipKinds(rp.types)
  const all = part.shortest === 'all'
  const single = (np: NodePattern) => planPart({ variable: null, shortest: null, nodes: [np], rels: [] }, bound, where, constants(ctx))
  const startPlan = single(part.nodes[0])
  const endPlan = single(part.nodes[1])
  // an end whose conditions read no other variable has the same nodes for every row: scanned once
  // (first read up to `lazyList` listed / `lazyScan` scanned ids: an end past that may be tested as reached)
  const kept = new Map<PartPlan, SomeEnd>()
  const lazyCaps = { list: ctx.shortest.lazyList, scan: ctx.shortest.lazyScan }
  const rowFree = (plan: PartPlan, row: Row): boolean => {
    const np = plan.nodes[0]
    const vars = new Set<string>()
    for (const f of plan.filters[0]) variablesOf(f, vars)
    if (np.properties) variablesOf(np.properties, vars)
    return (np.variable === null || !(np.variable in row)) && [...vars].every((v) => v === np.variable)
  }
  const someEnds = async (plan: PartPlan, row: Row): Promise<SomeEnd> => {
    if (!rowFree(plan, row)) return someEndIds(ctx, plan, row, lazyCaps)
    if (!kept.has(plan)) kept.set(plan, await someEndIds(ctx, plan, row, lazyCaps))
    return kept.get(plan)!
  }
  /** the whole end (after a first part past its cap: read on from there), kept as such when row-free */
  const allEnds = async (plan: PartPlan, row: Row, got: SomeEnd): Promise<number[]> => {
    if (got.complete) return got.ids
    const whole = await someEndIds(ctx, plan, row, { list: Infinity, scan: Infinity }, got)
    if (rowFree(plan, row)) kept.set(plan, whole)
    return whole.ids
  }
  for (const row of rows) {
    const someA = await someEnds(startPlan, row)
    if (someA.ids.length === 0) continue
    const someB = await someEnds(endPlan, row)
    if (someB.ids.length === 0) continue
    // One end past its cap (more nodes than `cap`) and the other complete, no larger than that cap, and too
    // many pairs for pairwise searches (even at cap + 1): the search runs from the complete end, as it would
    // with both listed (the smaller side; ties go to the start, which a lazy start never is), and the large
    // end is tested as reached (LazyEnd). Otherwise both ends are read whole.
    // (an end past its cap has at least as many nodes as it listed: ids.length is a lower bound of its size)
    const lazySide = (big: SomeEnd, small: SomeEnd): boolean => {
      const n = new Set(small.ids).size
      return big.over && small.complete && n < big.ids.length && n * big.ids.length > ctx.shortest.pairwiseMax
    }
    const lazy: 'start' | 'end' | null = lazySide(someA, someB) ? 'start' : lazySide(someB, someA) ? 'end' : null
    const a = lazy === 'start' ? someA.ids : await allEnds(startPlan, row, someA)
    const b = lazy === 'end' ? someB.ids : await allEnds(endPlan, row, someB)
    const keep = (e: EdgeRecord) => relOk(ctx, e, rp, row)
    /** Rows for id paths in pattern order (start node first). */
    const toRows = async (paths: IdPath[]): Promise<Row[]> => {
      await loadRels(
        ctx,
        paths.flatMap((p) => p.rels),
      )
      await loadNodes(
        ctx,
        paths.flatMap((p) => (part.variable ? p.nodes : [p.nodes[0], p.nodes[p.nodes.length - 1]])),
      )
      const out: Row[] = []
      for (const p of paths) {
        const recs = p.rels.map((id) => ctx.rels.get(id))
        // a relationship gone from the store between the search and this read: the path is not returned
        if (recs.some((e) => e === undefined)) continue
        const rels = (recs as EdgeRecord[]).map(relRef)
        const r: Row = { ...row }
        if (part.nodes[0].variable) r[part.nodes[0].variable] = new NodeRef(p.nodes[0])
        if (part.nodes[1].variable) r[part.nodes[1].variable] = new NodeRef(p.nodes[p.nodes.length - 1])
        if (rp.variable) r[rp.variable] = rels
        if (part.variable) r[part.variable] = new PathVal(p.nodes, rels)
        out.push(r)
      }
      return out
    }

    const as = [...new Set(a)]
    const bs = [...new Set(b)]
    if (lazy === null && as.length * bs.length <= ctx.shortest.pairwiseMax) {
      if (ctx.plans.length < 32)
        ctx.plans.push(`${all ? 'allShortestPaths' : 'shortestPath'}: ${as.length} x ${bs.length}, bidirectional search per pair (${as.length * bs.length})`)
      // each node of the smaller side (`xs`) has one search shared by its pairs; `fromStart`: the xs are
      // the pattern's starts
      const fromStart = as.length <= bs.length
      const xs = fromStart ? as : bs
      const ys = fromStart ? bs : as
      const sharedDir = fromStart ? rp.direction : reverse(rp.direction)
      const yCache: AdjCache = { adj: new Map(), bytes: 0 }
      const reaches: Reaches = { known: [], asked: new Set(), tooLarge: [], statements: 0, settled: 0, putOff: 0, groups: 0 }
      const everyCandidate = [...new Set([...as, ...bs])]
      const found: IdPath[] = []
      const settled = (a: number, b: number): boolean => {
        const proven = provenUnreachable(reaches, rp.direction, a, b)
        if (proven) reaches.settled++
        return proven
      }
      for (const x of xs) {
        const shared = newSearch(ctx, x, ys.length)
        const dead: Dead = { nodes: new Set(), bytes: 0 }
        const pair = (y: number): [number, number] => (fromStart ? [x, y] : [y, x])
        const off: PutOff = { groups: new Map(), seen: new Map(), bytes: 0 }
        const search = async (y: number, bounded: boolean): Promise<void> => {
          const paths = await bidirectional(ctx, shared, sharedDir, y, maxDepth, kinds, keep, all, yCache, dead, ctx.shortest.proveAfter, bounded ? off : null)
          for (const p of paths ?? []) found.push(fromStart ? p : { nodes: [...p.nodes].reverse(), rels: [...p.rels].reverse() })
        }
        // x inside a complete reach walked from the other side (x's region is known to be small there)
        // with far ends outside it: x's own reach is asked first, likely complete and separating them
        // (at 1 M edges: the second Domain Admins group, after the first group's pass learnt the other
        // domain's users' reach; asking the users' reach first would count 32 768 nodes for nothing)
        const farDir = reverse(sharedDir)
        const small = reaches.known.some((r) => r.dir === farDir && r.inside.has(x) && ys.some((y) => !r.inside.has(y)))
        if (small) await askReach(ctx, reaches, [x], sharedDir, kinds, everyCandidate)
        // first every pair with a bounded search: most reachable pairs meet within it
        for (const y of ys) {
          if (y === x) {
            if (min === 0) found.push({ nodes: [x], rels: [] })
            continue
          }
          if (settled(...pair(y))) continue
          await search(y, true)
        }
        // the pairs put off: each group's reach at once (walking from the far ends, the sides that failed
        // to meet x's: one complete answer without x settles the group), then x's own reach
        reaches.groups += off.groups.size
        reaches.putOff += [...off.groups.values()].reduce((n, g) => n + g.length, 0)
        // largest groups first; after one too large to tell, no more (each costs reachLimit nodes)
        for (const group of [...off.groups.values()].sort((g, h) => h.length - g.length))
          if (group.some((y) => !provenUnreachable(reaches, rp.direction, ...pair(y))) && !(await askReach(ctx, reaches, group, farDir, kinds, everyCandidate))) break
        let put = [...off.groups.values()].flat().filter((y) => !settled(...pair(y)))
        if (put.length) await askReach(ctx, reaches, [x], sharedDir, kinds, everyCandidate)
        put = put.filter((y) => !settled(...pair(y)))
        ctx.budget.releaseBytes(off.bytes)
        off.seen.clear()
        // the rest is searched to the end (the sides meet, or one of them runs out)
        for (const y of put) await search(y, false)
        ctx.budget.releaseBytes(shared.bytes + dead.bytes)
      }
      ctx.budget.releaseBytes(yCache.bytes)
      if ((reaches.putOff > 0 || reaches.statements > 0) && ctx.plans.length < 32)
        ctx.plans.push(
          `${reaches.putOff} pair(s) put off in ${reaches.groups} group(s); reachability in the store: ${reaches.statements} statement(s), ${reaches.known.length} complete; ${reaches.settled} pair(s) proven unreachable`,
        )
      // shortest answers first, as the multi-target search gives them
      const out = await toRows(found.sort((x, y) => x.rels.length - y.rels.length))
      for (let i = 0; i < out.length; i += BATCH) yield out.slice(i, i + BATCH)
      continue
    }

    // search from the smaller side (a lazy end is the larger one); `dir` is the direction walked from it
    const fromA = lazy === null ? a.length <= b.length : lazy === 'end'
    const sources = [...new Set(fromA ? a : b)]
    const listed = lazy === null ? new Set(fromA ? b : a) : null
    const tested = lazy === null ? null : lazyEnd(ctx, lazy === 'start' ? startPlan : endPlan, row, lazy === 'start' ? someA : someB)
    // a lazy end's size is unknown: its searches never count their targets down to 0 (they run until their
    // frontier is empty, the length bound, or a LIMIT stops them)
    const targets = {
      size: listed ? listed.size : Infinity,
      has: (n: number) => (listed ? listed.has(n) : tested!.has(n)),
      prepare: async (ns: number[]) => {
        if (tested) await tested.prepare(ns)
      },
    }
    const dir = fromA ? rp.direction : reverse(rp.direction)
    const sizeText = (side: 'start' | 'end', n: number) => (lazy === side ? `${n}+` : `${n}`)
    if (ctx.plans.length < 32)
      ctx.plans.push(
        `${all ? 'allShortestPaths' : 'shortestPath'}: ${sizeText('start', a.length)} x ${sizeText('end', b.length)}, multi-target search from the ${fromA ? 'start' : 'end'} side, ${sources.length} source(s) in lockstep` +
          (lazy ? `; the ${lazy} end tested as the searches reach it` : ''),
      )
    /** Paths of `search` to each of `ends`, in pattern order. */
    const pathsTo = (search: Search, ends: number[]): IdPath[] =>
      ends.flatMap((t) =>
        walksBack(ctx, search.parents, t, all).map((w) => (fromA ? w : { nodes: [...w.nodes].reverse(), rels: [...w.rels].reverse() })),
      )
    const cache: AdjCache = { adj: new Map(), bytes: 0 }
    const searches: Search[] = sources.map((s) => newSearch(ctx, s, targets.has(s) ? targets.size - 1 : targets.size))
    if (min === 0) await targets.prepare(sources)
    if (min === 0)
      for (const search of searches)
        if (targets.has(search.source)) {
          const out = await toRows(pathsTo(search, [search.source]))
          if (out.length) yield out
        }
    /**
     * The answers for the nodes each search reached first in a level part: each search's new nodes in id
     * order, tested `size` at a time (a lazy end reads them by id, `size` ahead across the searches so that
     * many small searches share round trips), the paths of the targets among them returned BATCH targets at
     * a time, so a LIMIT stops before the paths (and a lazy end's records) of the rest are read: at 1 M edges
     * one chunk of the reverse search from a Domain Admins group reaches ~61 000 nodes, every one of them an
     * end of `(s:Base)`.
     */
    const size = Math.max(1, ctx.shortest.levelChunk)
    async function* answer(active: Search[], fresh: number[][]): AsyncGenerator<Row[]> {
      const lists = fresh.map((f) => [...f].sort((x, y) => x - y))
      const flat = lists.flat()
      let prepared = 0
      let at = 0
      for (const [i, search] of active.entries()) {
        const list = lists[i]
        for (let j = 0; j < list.length; j += size) {
          const slice = list.slice(j, j + size)
          while (prepared < at + j + slice.length) {
            const part = flat.slice(prepared, prepared + size)
            await targets.prepare(part)
            prepared += part.length
          }
          const reached = slice.filter((to) => targets.has(to) && to !== search.source)
          search.left -= reached.length
          for (const part of chunks(reached, BATCH)) {
            const out = await toRows(pathsTo(search, part))
            if (out.length) yield out
          }
        }
        at += list.length
      }
    }
    // Targets proven unreachable by the store (Reaches): a search past `proveAfter` nodes whose listed targets
    // are not all reached asks for the reach of the rest walking back towards it; a complete one without the
    // search's source proves those targets unreachable from it, so the search ends once it has reached the
    // others instead of walking everything it reaches (at 1 M edges the Domain Users group of the largest
    // domain reaches 64 000 nodes; the Tier Zero nodes of the other domains are never among them). Only a
    // few targets left (PROVE_EACH) are asked for, one by one, each up to `proveAfter` nodes: the reach of them
    // all together is too large to tell whenever one of them lies in the search's own large region, which
    // would prove nothing about the others. Each target is asked once per query; a search asks again only
    // once its rest shrank.
    const reaches: Reaches = { known: [], asked: new Set(), tooLarge: [], statements: 0, settled: 0, putOff: 0, groups: 0 }
    const asked = new Map<Search, number>()
    const unreachable = new Set<number>()
    /** the listed targets `search` has neither reached nor ruled out (Reaches) */
    const restOf = (search: Search): number[] =>
      [...listed!].filter((t) => t !== search.source && !search.depth.has(t) && !provenUnreachable(reaches, dir, search.source, t))
    const prove = async (active: Search[]): Promise<void> => {
      if (!listed) return
      for (const search of active) {
        if (search.left <= 0 || search.left > PROVE_EACH || search.depth.size <= ctx.shortest.proveAfter) continue
        if ((asked.get(search) ?? Infinity) <= search.left) continue
        const rest = restOf(search)
        asked.set(search, rest.length)
        for (const t of rest) {
          if (provenUnreachable(reaches, dir, search.source, t)) continue
          await askReach(ctx, reaches, [t], reverse(dir), kinds, [...sources, t], Math.max(1, ctx.shortest.proveAfter))
        }
        const left = rest.filter((t) => !provenUnreachable(reaches, dir, search.source, t))
        for (const t of rest) if (!left.includes(t)) unreachable.add(t)
        search.left = left.length
      }
    }
    // A search with a few targets left (PROVE_EACH) whose next level is large (more than `proveAfter` nodes to
    // read) finishes pair by pair: a bidirectional search from each target left towards its own (the
    // pairwise searches' `bidirectional`, its levels read on from where the lockstep left them). Targets
    // reached only through a large level cost only what the two sides need to meet: at 1 M edges the
    // Domain Users group of the largest domain has 2 of its Tier Zero targets left before a level whose
    // 2 836 nodes hold 334 000 relationships, and they are met from their side within a few dozen nodes.
    // Their paths are held until the lockstep reaches their length, so answers stay shortest first.
    let held: IdPath[] = []
    let pairwise = 0
    const finish = async (search: Search): Promise<void> => {
      const yCache: AdjCache = { adj: new Map(), bytes: 0 }
      const dead: Dead = { nodes: new Set(), bytes: 0 }
      for (const y of restOf(search).sort((x, z) => x - z)) {
        pairwise++
        const paths = await bidirectional(ctx, search, dir, y, maxDepth, kinds, keep, all, yCache, dead, Infinity, null)
        for (const p of paths ?? []) held.push(fromA ? p : { nodes: [...p.nodes].reverse(), rels: [...p.rels].reverse() })
      }
      ctx.budget.releaseBytes(yCache.bytes + dead.bytes)
      search.left = 0
    }
    /** the held paths up to `length` relationships long, shortest first */
    async function* release(length: number): AsyncGenerator<Row[]> {
      if (held.length === 0) return
      held.sort((x, y) => x.rels.length - y.rels.length)
      const now = held.filter((p) => p.rels.length <= length)
      held = held.filter((p) => p.rels.length > length)
      for (const part of chunks(now, BATCH)) {
        const out = await toRows(part)
        if (out.length) yield out
      }
    }
    for (let d = 1; d <= maxDepth; d++) {
      yield* release(d - 1)
      await prove(searches.filter((x) => x.frontier.length > 0 && x.left > 0))
      if (listed)
        for (const search of searches)
          if (search.frontier.length > ctx.shortest.proveAfter && search.left > 0 && search.left <= PROVE_EACH) await finish(search)
      const active = searches.filter((x) => x.frontier.length > 0 && x.left > 0)
      if (active.length === 0) break
      if (!all) {
        // shortestPath: a node's depth is final when it is first reached and its first parent link gives a
        // shortest path, so the level is read `levelChunk` (EXPAND_CHUNK) frontier nodes at a time and the targets each
        // chunk reaches are answered before the next chunk is read: a LIMIT stops the search inside a level
        // (at 1 M edges the kerberoastable users' paths to Tier Zero: 842 pairs after three levels, the
        // fourth would walk ~120 000 nodes for 158 more). allShortestPaths needs every parent of a level.
        const union = [...new Set(active.flatMap((x) => x.frontier))]
        const parts = chunks(union, size)
        const chunkOf = new Map<number, number>()
        union.forEach((n, i) => chunkOf.set(n, Math.floor(i / size)))
        const byChunk = active.map((x) => {
          const b: number[][] = parts.map(() => [])
          for (const n of x.frontier) b[chunkOf.get(n)!].push(n)
          return b
        })
        const nexts: number[][] = active.map(() => [])
        for (let c = 0; c < parts.length; c++) {
          const level = await adjacency(ctx, parts[c], dir, kinds, keep, cache)
          const fresh = active.map((search, i) => {
            if (byChunk[i][c].length === 0) return []
            const first = nexts[i].length
            stepFrom(ctx, search, level, byChunk[i][c], nexts[i])
            return nexts[i].slice(first)
          })
          ctx.budget.releaseBytes(level.transient)
          yield* answer(active, fresh)
          // every search has reached or ruled out all its targets, or has no frontier node in the rest of the
          // level: the rest is not read (a search still looking has its whole next level; the others are done)
          if (active.every((x, i) => x.left <= 0 || byChunk[i].every((b, k) => k <= c || b.length === 0))) break
        }
        active.forEach((search, i) => {
          search.frontier = nexts[i]
          search.level = d
        })
        continue
      }
      const level = await adjacency(ctx, [...new Set(active.flatMap((x) => x.frontier))], dir, kinds, keep, cache)
      const news = active.map((search) => step(ctx, search, level))
      ctx.budget.releaseBytes(level.transient)
      // parents at depth d are complete once the whole level is expanded (done above for every search)
      yield* answer(active, news)
    }
    yield* release(Infinity)
    if (reaches.statements > 0 && ctx.plans.length < 32)
      ctx.plans.push(`reachability in the store: ${reaches.statements} statement(s), ${reaches.known.length} complete; ${unreachable.size} target(s) proven unreachable from a source`)
    if (pairwise > 0 && ctx.plans.length < 32) ctx.plans.push(`${pairwise} target(s) left before a large level searched pair by pair`)
    ctx.budget.releaseBytes(cache.bytes)
  }
}

export type { Value }
