/**
 * Layouts computed on the page's thread for small answers (ForceAtlas2, for the general case, runs in a Web
 * Worker: ../layout.worker.ts). Pure functions of node ids and edges; unit-tested.
 *
 * `sequentialLayout` draws paths (pathfinding answers, shortest paths, memberships) left to right: each node's
 * rank is its longest distance from a node with no incoming edge in the answer (cycles are broken by ignoring
 * the edges that close them during a depth-first walk), nodes of a rank form a column, and a few sweeps order
 * each column by the mean position of its neighbours in the previous column, so that edges cross less.
 */

export interface Point {
  x: number
  y: number
}

export interface LayoutEdge {
  source: string
  target: string
}

/** Spacing between columns and between nodes of a column (graph units). */
export const RANK_GAP = 100
export const ROW_GAP = 40

/** Ranks (longest distance from a root), after removing the edges that close cycles. */
export function ranks(nodes: readonly string[], edges: readonly LayoutEdge[]): Map<string, number> {
  const known = new Set(nodes)
  const out = new Map<string, string[]>()
  for (const n of nodes) out.set(n, [])
  for (const e of edges) if (known.has(e.source) && known.has(e.target) && e.source !== e.target) out.get(e.source)!.push(e.target)
  // depth-first walk from every node (roots first): an edge to a node still on the stack closes a cycle
  const state = new Map<string, 0 | 1 | 2>()
  const dag = new Map<string, string[]>(nodes.map((n) => [n, []]))
  const hasIn = new Set(edges.filter((e) => known.has(e.source) && e.source !== e.target).map((e) => e.target))
  const starts = [...nodes.filter((n) => !hasIn.has(n)), ...nodes.filter((n) => hasIn.has(n))]
  for (const s of starts) {
    if (state.get(s)) continue
    const stack: [string, number][] = [[s, 0]]
    state.set(s, 1)
    while (stack.length) {
      const top = stack[stack.length - 1]
      const next = out.get(top[0])![top[1]++]
      if (next === undefined) {
        state.set(top[0], 2)
        stack.pop()
        continue
      }
      const st = state.get(next)
      if (st === 1) continue // closes a cycle: ignored
      dag.get(top[0])!.push(next)
      if (!st) {
        state.set(next, 1)
        stack.push([next, 0])
      }
    }
  }
  // longest-path ranks over the acyclic edges (Kahn's order)
  const indeg = new Map<string, number>(nodes.map((n) => [n, 0]))
  for (const ts of dag.values()) for (const t of ts) indeg.set(t, indeg.get(t)! + 1)
  const rank = new Map<string, number>(nodes.map((n) => [n, 0]))
  const queue = nodes.filter((n) => indeg.get(n) === 0)
  for (let i = 0; i < queue.length; i++) {
    const u = queue[i]
    for (const v of dag.get(u)!) {
      rank.set(v, Math.max(rank.get(v)!, rank.get(u)! + 1))
      indeg.set(v, indeg.get(v)! - 1)
      if (indeg.get(v) === 0) queue.push(v)
    }
  }
  return rank
}

/** Left-to-right layered positions: x by rank, y by order within the rank (centred on 0). */
export function sequentialLayout(nodes: readonly string[], edges: readonly LayoutEdge[]): Map<string, Point> {
  const rank = ranks(nodes, edges)
  const columns: string[][] = []
  for (const n of nodes) (columns[rank.get(n)!] ??= []).push(n)
  const preds = new Map<string, string[]>(nodes.map((n) => [n, []]))
  for (const e of edges) if (preds.has(e.target) && rank.has(e.source)) preds.get(e.target)!.push(e.source)
  const order = new Map<string, number>()
  columns.forEach((col) => col.forEach((n, i) => order.set(n, i)))
  for (let sweep = 0; sweep < 4; sweep++) {
    for (let r = 1; r < columns.length; r++) {
      const col = columns[r] ?? []
      const key = new Map(
        col.map((n) => {
          const ps = preds.get(n)!.filter((p) => rank.get(p) === r - 1)
          return [n, ps.length ? ps.reduce((s, p) => s + order.get(p)!, 0) / ps.length : order.get(n)!]
        }),
      )
      col.sort((a, b) => key.get(a)! - key.get(b)! || a.localeCompare(b))
      col.forEach((n, i) => order.set(n, i))
    }
  }
  const pos = new Map<string, Point>()
  columns.forEach((col, r) => {
    const h = ((col?.length ?? 1) - 1) * ROW_GAP
    ;(col ?? []).forEach((n, i) => pos.set(n, { x: r * RANK_GAP, y: i * ROW_GAP - h / 2 }))
  })
  return pos
}

/** Start positions for ForceAtlas2: a circle (deterministic, so a layout is repeatable). */
export function circleLayout(nodes: readonly string[], radius = 100): Map<string, Point> {
  const n = nodes.length
  return new Map(nodes.map((id, i) => [id, { x: Math.cos((2 * Math.PI * i) / Math.max(1, n)) * radius, y: Math.sin((2 * Math.PI * i) / Math.max(1, n)) * radius }]))
}

/**
 * Whether an answer reads best as a sequence: it has edges, no node has more than a few predecessors and
 * successors… approximated as: every node within `maxDegree` edges, and at most 300 nodes (pathfinding answers
 * and section walks). Larger or denser answers are laid out by ForceAtlas2.
 */
export function prefersSequential(nodeCount: number, edges: readonly LayoutEdge[], maxDegree = 8): boolean {
  if (nodeCount === 0 || edges.length === 0 || nodeCount > 300) return false
  const deg = new Map<string, number>()
  for (const e of edges) {
    deg.set(e.source, (deg.get(e.source) ?? 0) + 1)
    deg.set(e.target, (deg.get(e.target) ?? 0) + 1)
  }
  return [...deg.values()].every((d) => d <= maxDegree)
}
