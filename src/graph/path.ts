/**
 * All shortest paths between two nodes by bidirectional breadth-first search.
 *
 * The graph is never loaded: `expand(frontier, direction)` fetches the edges leaving (out) or entering
 * (in) a whole frontier with indexed queries (src/graph/graph.store.ts), so each BFS level costs one
 * round of queries. We always expand the smaller frontier, so on typical AD graphs (a few hubs with huge
 * degree) the search meets in the middle after touching a small part of the graph.
 *
 * Correctness: levels are expanded whole. Suppose forward levels 0..a and backward levels 0..b are
 * complete and no node was yet reached from both sides; then every path is longer than a+b-1
 * (a path of length L ≤ a+b-1 has a node at position min(a, L) from the start that both sides reach).
 * When the expansion to a+b first finds nodes reached from both sides, all of them lie on shortest paths
 * of length exactly a+b and every shortest path passes through one of them (its node at position a).
 * Each side records, per node, every edge from the previous level, so walking those records back from
 * the meeting nodes yields exactly the union of all shortest paths (BloodHound's allShortestPaths).
 *
 * Pure: the data access is injected.
 */

export interface PathEdge {
  /** edge start node id */
  from: number
  /** edge end node id */
  to: number
  kind: string
}

/**
 * The edges leaving (`out`) or entering (`in`) a frontier, at most `max + 1` of them: the store enforces
 * the bound in SQL (a LIMIT per statement), so an expansion never fetches more than one edge past what
 * the search may still touch, however large the frontier's degree.
 */
export type Expand = (frontier: number[], direction: 'out' | 'in', max: number) => Promise<PathEdge[]>

export interface PathLimits {
  /** longest path considered (edges) */
  maxDepth: number
  /** edges fetched over the whole search before giving up (bounds memory and time), enforced per expansion */
  maxEdges: number
}

export class PathSearchTooLarge extends Error {}

export interface PathResult {
  nodes: number[]
  edges: PathEdge[]
  length: number
}

export async function allShortestPaths(start: number, end: number, expand: Expand, limits: PathLimits): Promise<PathResult | null> {
  if (start === end) return { nodes: [start], edges: [], length: 0 }
  const distF = new Map<number, number>([[start, 0]])
  const distB = new Map<number, number>([[end, 0]])
  /** node → edges reaching it from the previous forward level */
  const parents = new Map<number, PathEdge[]>()
  /** node → edges leaving it towards the previous backward level */
  const children = new Map<number, PathEdge[]>()
  let frontF = [start]
  let frontB = [end]
  let depthF = 0
  let depthB = 0
  let fetched = 0

  while (frontF.length > 0 && frontB.length > 0 && depthF + depthB < limits.maxDepth) {
    const forward = frontF.length <= frontB.length
    const edges = await expand(forward ? frontF : frontB, forward ? 'out' : 'in', limits.maxEdges - fetched)
    fetched += edges.length
    if (fetched > limits.maxEdges) throw new PathSearchTooLarge(`the search touched more than ${limits.maxEdges} edges`)
    const next: number[] = []
    const dist = forward ? distF : distB
    const links = forward ? parents : children
    const level = (forward ? depthF : depthB) + 1
    for (const e of edges) {
      const v = forward ? e.to : e.from
      const d = dist.get(v)
      if (d === undefined) {
        dist.set(v, level)
        links.set(v, [e])
        next.push(v)
      } else if (d === level) links.get(v)!.push(e)
    }
    if (forward) {
      frontF = next
      depthF = level
    } else {
      frontB = next
      depthB = level
    }
    const other = forward ? distB : distF
    const meet = next.filter((v) => other.has(v))
    if (meet.length > 0) return collect(meet, start, end, parents, children, depthF + depthB)
  }
  return null
}

function collect(
  meet: number[],
  start: number,
  end: number,
  parents: Map<number, PathEdge[]>,
  children: Map<number, PathEdge[]>,
  length: number,
): PathResult {
  const nodes = new Set<number>(meet)
  const edges = new Map<string, PathEdge>()
  const walk = (from: number[], links: Map<number, PathEdge[]>, stop: number, next: (e: PathEdge) => number) => {
    const queue = [...from]
    const seen = new Set<number>(from)
    while (queue.length > 0) {
      const v = queue.pop()!
      if (v === stop) continue
      for (const e of links.get(v) ?? []) {
        edges.set(`${e.from}|${e.kind}|${e.to}`, e)
        const w = next(e)
        nodes.add(w)
        if (!seen.has(w)) {
          seen.add(w)
          queue.push(w)
        }
      }
    }
  }
  walk(meet, parents, start, (e) => e.from)
  walk(meet, children, end, (e) => e.to)
  return { nodes: [...nodes], edges: [...edges.values()], length }
}
