/**
 * The console's graph model, built from the API's answers (no DOM, no drawing library: unit-tested in
 * test/unit/console-graph-model.test.ts). Search results, shortest paths and Cypher answers all become one
 * shape, which the table view and the canvas both draw.
 */
import { styleOf } from './kind-style'

export interface ConsoleNode {
  /** the key of the answer's node map (graph id), or the object id for a search result */
  id: string
  name: string
  kind: string
  objectId: string
  /** every kind of the node (primary first), when the answer gives them */
  kinds?: string[]
  tierZero?: boolean
  owned?: boolean
}
export interface ConsoleEdge {
  source: string
  target: string
  kind: string
}
export interface ConsoleGraph {
  nodes: ConsoleNode[]
  edges: ConsoleEdge[]
}

/** the shape shared by GET /api/v2/graphs/shortest-path and POST /api/v2/graphs/cypher */
export interface GraphAnswer {
  nodes: Record<string, { label: string; kind: string; objectId: string; kinds?: string[]; isTierZero?: boolean; isOwnedObject?: boolean }>
  edges: { source: string; target: string; kind: string; label?: string }[]
}

/** More nodes than this are listed in the table only (with a warning), never drawn: the tab must not freeze. */
export const MAX_DRAWN_NODES = 5000

export const emptyGraph = (): ConsoleGraph => ({ nodes: [], edges: [] })

export function fromGraphAnswer(a: GraphAnswer | null | undefined): ConsoleGraph {
  if (!a) return emptyGraph()
  const nodes: ConsoleNode[] = Object.entries(a.nodes ?? {}).map(([id, n]) => {
    const node: ConsoleNode = { id, name: n.label || n.objectId, kind: n.kind || 'Unknown', objectId: n.objectId }
    if (n.kinds?.length) node.kinds = n.kinds
    if (n.isTierZero) node.tierZero = true
    if (n.isOwnedObject) node.owned = true
    return node
  })
  const known = new Set(nodes.map((n) => n.id))
  // an edge whose end is not in the answer cannot be drawn; keep only complete ones
  const edges = (a.edges ?? []).filter((e) => known.has(e.source) && known.has(e.target)).map((e) => ({ source: e.source, target: e.target, kind: e.kind || e.label || '' }))
  return { nodes, edges }
}

export function fromSearchResult(r: { objectid: string; name: string; type: string }): ConsoleGraph {
  return { nodes: [{ id: r.objectid, name: r.name || r.objectid, kind: r.type || 'Unknown', objectId: r.objectid }], edges: [] }
}

export type DrawMode = 'empty' | 'graph' | 'table-only'

/** How an answer is shown: nothing, drawn (and tabled), or only tabled with a warning above MAX_DRAWN_NODES. */
export function drawMode(g: ConsoleGraph, max = MAX_DRAWN_NODES): DrawMode {
  if (g.nodes.length === 0) return 'empty'
  return g.nodes.length > max ? 'table-only' : 'graph'
}

/** The colour of a kind (kind-style.ts: built-in kinds' own, else a stable colour from the kind's name). */
export function kindColour(kind: string): string {
  return styleOf(kind).colour
}

/** Node names for the relationship rows of the table view: "source name → target name". */
export function edgeRows(g: ConsoleGraph): { from: string; kind: string; to: string }[] {
  const name = new Map(g.nodes.map((n) => [n.id, n.name]))
  return g.edges.map((e) => ({ from: name.get(e.source) ?? e.source, kind: e.kind, to: name.get(e.target) ?? e.target }))
}
