/**
 * Pattern matching against the store. Rows flow in batches; each relationship hop costs one store
 * round trip per batch (frontier expansion), variable-length hops one per level. Results stream out as
 * soon as they exist, so a LIMIT downstream stops the walk early. Every read is charged to the budget.
 *
 * Semantics (openCypher): within one pattern part a relationship is used at most once (variable-length
 * walks are trails); a variable bound earlier must be the same node; `*0..` includes the empty walk.
 */
import type { Expr, NodePattern, PatternPart, RelPattern } from './ast'
import type { Budget } from './budget'
import { evaluate, type EvalContext, type GraphCache, type Row } from './eval'
import { hasLabel, nodeProperty, relationshipKinds } from './labels'
import { CypherError } from './parse'
import { planPart, type PartPlan } from './plan'
import type { EdgeRecord, GraphSource, NodeRecord } from './source'
import { equals, fromJson, NodeRef, PathVal, RelRef, type Value } from './values'

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
}

/** Rough heap cost of one node record held for the query (parsed properties included). */
const NODE_BYTES = 600
/** Rough heap cost of a relationship read without properties (when the store gives no estimate). */
const EDGE_BYTES = 200
/** Nodes whose relationships one store call reads (expand): bounds what a call can return before it is charged. */
const EXPAND_CHUNK = 2_000
/** Rough heap cost of one walk state besides its id arrays (object, row reference, RelRef) */
const WALK_BYTES = 150

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
  return { graph, now, predicates: new Map(), source, budget, nodes, rels, expansions: new Map(), plans: [], scans: new Map(), relProperties, withProps: new Set() }
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

/** Relationships at each of `ids` (near end), fetched once per query and direction/kinds. */
async function expand(ctx: RunContext, ids: number[], direction: 'out' | 'in' | 'both', kinds: string[] | null): Promise<Map<number, EdgeRecord[]>> {
  const key = `${direction}|${kinds ? kinds.join(',') : '*'}`
  let cache = ctx.expansions.get(key)
  if (!cache) ctx.expansions.set(key, (cache = new Map()))
  const missing = [...new Set(ids)].filter((id) => !cache!.has(id))
  for (const id of missing) cache.set(id, [])
  // A few thousand nodes per store call, each charged before the next: a whole frontier in one call
  // (tens of thousands of nodes deep in a shortest-path search at 1 M edges) returned ~400 000
  // relationships at once, held in full before the budget could refuse them (measured: ~380 MB of heap).
  for (let i = 0; i < missing.length; i += EXPAND_CHUNK) {
    ctx.budget.checkTime()
    const part = missing.slice(i, i + EXPAND_CHUNK)
    const edges = await ctx.source.expand(part, direction, kinds, ctx.relProperties)
    let bytes = 0
    for (const e of edges) bytes += e.bytes ?? EDGE_BYTES
    ctx.budget.chargeBytes(bytes)
    ctx.budget.chargeSteps(edges.length)
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
async function* starts(ctx: RunContext, plan: PartPlan, rows: Row[]): AsyncGenerator<State[]> {
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
  const key = JSON.stringify(plan.scan)
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
      const size = scanPageSize(i)
      page = await ctx.source.scanNodes(plan.scan, after, size)
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
    after = page[page.length - 1].id
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
    if (page.length < scanPageSize(i) && (cached.dropped || i >= cached.pages.length - 1)) return
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
  const finish = (w: Walk): State => ({ row: w.row, seq: w.seq, relSeq: w.relSeq, ends: [...w.ends, w.seq[w.seq.length - 1]], groups: [...w.groups, w.hop] })
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
    )
    let chunk: Walk[] = []
    const flush = async function* (): AsyncGenerator<Row[]> {
      const walks = chunk
      chunk = []
      ctx.budget.chargeRows(walks.length)
      ctx.budget.chargeSteps(walks.length)
      ctx.budget.chargeBytes(walks.length * (WALK_BYTES + 16 * (walks[0].seq.length + walks[0].relSeq.length)))
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
        chunk.push({ ...w, seq: [...w.seq, farEnd(e, at)], relSeq: [...w.relSeq, r], hop: [r] })
        if (chunk.length >= BATCH) yield* flush()
      }
    }
    if (chunk.length) yield* flush()
    return
  }
  let level = 0
  while (frontier.length > 0 && (max === null || level < max)) {
    const edgesAt = await expand(
      ctx,
      frontier.map((w) => w.seq[w.seq.length - 1]),
      rp.direction,
      kinds,
    )
    const next: Walk[] = []
    // Walks are charged while they are made, not after the level: one level of an unbounded pattern
    // over a dense graph can multiply the walks by the average degree, and building them all before
    // charging them held ~1 GB (measured, see BENCHMARKS.md). A walk costs its two id arrays.
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
        next.push({ ...w, seq: [...w.seq, farEnd(e, at)], relSeq: [...w.relSeq, r], hop: [...w.hop, r] })
        uncharged++
        unchargedBytes += WALK_BYTES + 16 * (w.seq.length + w.relSeq.length + w.hop.length)
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

/** Rows extended by every match of one pattern part. */
export async function* matchPart(ctx: RunContext, part: PatternPart, rows: Row[], where: Expr | null): AsyncGenerator<Row[]> {
  if (rows.length === 0) return
  const bound = new Set(Object.keys(rows[0]))
  if (part.shortest) {
    yield* matchShortest(ctx, part, rows, where, bound)
    return
  }
  const plan = planPart(part, bound, where)
  if (ctx.plans.length < 32) ctx.plans.push(plan.describe)
  for await (const batch of starts(ctx, plan, rows)) yield* hops(ctx, plan, batch, 0)
}

// ---- shortest paths ------------------------------------------------------------------------------------------

async function candidates(ctx: RunContext, plan: PartPlan, row: Row): Promise<number[]> {
  const out: number[] = []
  for await (const batch of starts(ctx, plan, [row])) for (const s of batch) out.push(s.seq[0])
  return out
}

/**
 * shortestPath / allShortestPaths between every pair of the two end sets: one breadth-first search per
 * node of the smaller set, each a multi-target search (it reaches every node of the other set it can in
 * one pass, and stops once it has reached them all). The searches run level by level in lockstep, so a
 * level costs one store round trip for the union of all their frontiers (batched frontier expansion),
 * however many sources there are. Every parent is recorded at the first level a node is reached, so a
 * target's paths are complete when its level ends: they are yielded right then, and a LIMIT downstream
 * stops the searches early (shortest answers first). shortestPath yields one path per reachable pair,
 * allShortestPaths every path of the shortest length.
 */
async function* matchShortest(ctx: RunContext, part: PatternPart, rows: Row[], where: Expr | null, bound: Set<string>): AsyncGenerator<Row[]> {
  if (part.rels.length !== 1) throw new CypherError('shortestPath and allShortestPaths take a pattern with exactly one relationship')
  const rp = part.rels[0]
  const min = rp.range ? rp.range.min : 1
  if (min > 1) throw new CypherError('shortestPath and allShortestPaths support a minimum length of 0 or 1 only')
  const maxDepth = Math.min(rp.range ? (rp.range.max ?? MAX_SHORTEST_DEPTH) : 1, MAX_SHORTEST_DEPTH)
  const kinds = relationshipKinds(rp.types)
  const single = (np: NodePattern) => planPart({ variable: null, shortest: null, nodes: [np], rels: [] }, bound, where)
  const startPlan = single(part.nodes[0])
  const endPlan = single(part.nodes[1])
  for (const row of rows) {
    const a = await candidates(ctx, startPlan, row)
    if (a.length === 0) continue
    const b = await candidates(ctx, endPlan, row)
    if (b.length === 0) continue
    // search from the smaller side; `dir` is the direction walked from it
    const fromA = a.length <= b.length
    const sources = [...new Set(fromA ? a : b)]
    const targets = new Set(fromA ? b : a)
    const dir = fromA ? rp.direction : rp.direction === 'out' ? 'in' : rp.direction === 'in' ? 'out' : 'both'
    if (ctx.plans.length < 32)
      ctx.plans.push(
        `${part.shortest === 'all' ? 'allShortestPaths' : 'shortestPath'}: ${a.length} x ${b.length}, multi-target search from the ${fromA ? 'start' : 'end'} side, ${sources.length} source(s) in lockstep`,
      )
    /** Rows for the paths from `s` to each of `ends` (search order: s first). */
    const pathRows = async (search: Search, ends: number[]): Promise<Row[]> => {
      const out: Row[] = []
      for (const t of ends)
        for (const w of walksBack(ctx, search.parents, t, part.shortest === 'all')) {
          const nodes = fromA ? w.nodes : [...w.nodes].reverse()
          const rels = fromA ? w.rels : [...w.rels].reverse()
          const r: Row = { ...row }
          if (part.nodes[0].variable) r[part.nodes[0].variable] = new NodeRef(nodes[0])
          if (part.nodes[1].variable) r[part.nodes[1].variable] = new NodeRef(nodes[nodes.length - 1])
          if (rp.variable) r[rp.variable] = rels
          if (part.variable) r[part.variable] = new PathVal(nodes, rels)
          out.push(r)
        }
      await loadNodes(ctx, [search.source, ...ends, ...out.flatMap((r) => (part.variable ? (r[part.variable] as PathVal).nodes : []))])
      return out
    }
    const searches: Search[] = sources.map((s) => ({
      source: s,
      parents: new Map([[s, []]]),
      depth: new Map([[s, 0]]),
      frontier: [s],
      left: targets.has(s) ? targets.size - 1 : targets.size,
    }))
    if (min === 0)
      for (const search of searches)
        if (targets.has(search.source)) {
          const out = await pathRows(search, [search.source])
          if (out.length) yield out
        }
    for (let d = 1; d <= maxDepth; d++) {
      const active = searches.filter((x) => x.frontier.length > 0 && x.left > 0)
      if (active.length === 0) break
      const edgesAt = await expand(ctx, [...new Set(active.flatMap((x) => x.frontier))], dir, kinds)
      for (const search of active) {
        const next: number[] = []
        const reached: number[] = []
        for (const at of search.frontier)
          for (const e of edgesAt.get(at) ?? []) {
            if (!relOk(ctx, e, rp, row)) continue
            const to = farEnd(e, at)
            const seen = search.depth.get(to)
            if (seen === undefined) {
              search.depth.set(to, d)
              search.parents.set(to, [{ prev: at, rel: relRef(e) }])
              next.push(to)
              if (targets.has(to) && to !== search.source) reached.push(to)
            } else if (seen === d) search.parents.get(to)!.push({ prev: at, rel: relRef(e) })
          }
        ctx.budget.chargeRows(next.length)
        ctx.budget.chargeSteps(next.length)
        search.frontier = next
        search.left -= reached.length
        if (reached.length === 0) continue
        // parents at depth d are complete once the whole level is expanded (done above for this search)
        const out = await pathRows(
          search,
          reached.sort((x, y) => x - y),
        )
        for (let i = 0; i < out.length; i += BATCH) yield out.slice(i, i + BATCH)
      }
    }
  }
}

interface Search {
  source: number
  parents: Map<number, { prev: number; rel: RelRef }[]>
  depth: Map<number, number>
  frontier: number[]
  /** targets not reached yet */
  left: number
}

/** Paths from the search's source to `t` along recorded parents: one, or all of them. */
function walksBack(ctx: RunContext, parents: Map<number, { prev: number; rel: RelRef }[]>, t: number, all: boolean): { nodes: number[]; rels: RelRef[] }[] {
  const out: { nodes: number[]; rels: RelRef[] }[] = []
  const walk = (at: number, nodes: number[], rels: RelRef[]): void => {
    const ps = parents.get(at) ?? []
    if (ps.length === 0) {
      out.push({ nodes: [at, ...nodes], rels })
      ctx.budget.chargeRows(1)
      return
    }
    for (const p of all ? ps : ps.slice(0, 1)) walk(p.prev, [at, ...nodes], [p.rel, ...rels])
  }
  walk(t, [], [])
  return out
}

export type { Value }
