/**
 * Operations on the drawn graph (../graph-model.ts's ConsoleGraph): merging a section's walk into what is
 * drawn (nodes are the same object when their object ids are equal, whatever id each answer keyed them by),
 * and the JSON export of the drawn graph. Pure; unit-tested.
 */
import type { ConsoleEdge, ConsoleGraph, ConsoleNode } from './graph-model'

const edgeKey = (e: ConsoleEdge) => `${e.source}\u0000${e.kind}\u0000${e.target}`

/** `a` plus what `b` adds: b's nodes already in `a` (same object id) keep a's id; duplicate edges are dropped. */
export function mergeGraphs(a: ConsoleGraph, b: ConsoleGraph): ConsoleGraph {
  const byObject = new Map(a.nodes.map((n) => [n.objectId, n.id]))
  const ids = new Set(a.nodes.map((n) => n.id))
  const rename = new Map<string, string>()
  const nodes: ConsoleNode[] = [...a.nodes]
  for (const n of b.nodes) {
    const existing = byObject.get(n.objectId)
    if (existing !== undefined) {
      rename.set(n.id, existing)
      continue
    }
    // an id already used by another object in `a` (answers key nodes differently): key this one by its object id
    const id = ids.has(n.id) ? `obj:${n.objectId}` : n.id
    rename.set(n.id, id)
    ids.add(id)
    byObject.set(n.objectId, id)
    nodes.push({ ...n, id })
  }
  const seen = new Set(a.edges.map(edgeKey))
  const edges = [...a.edges]
  for (const e of b.edges) {
    const m = { ...e, source: rename.get(e.source) ?? e.source, target: rename.get(e.target) ?? e.target }
    const k = edgeKey(m)
    if (!seen.has(k)) {
      seen.add(k)
      edges.push(m)
    }
  }
  return { nodes, edges }
}

/** The drawn graph as a JSON document: nodes (id, name, kind, object id) and relationships by object id. */
export function exportGraph(g: ConsoleGraph, now: Date = new Date()): string {
  const obj = new Map(g.nodes.map((n) => [n.id, n.objectId]))
  return JSON.stringify(
    {
      exported_at: now.toISOString(),
      nodes: g.nodes.map((n) => ({ id: n.id, name: n.name, kind: n.kind, object_id: n.objectId })),
      edges: g.edges.map((e) => ({ source: obj.get(e.source) ?? e.source, target: obj.get(e.target) ?? e.target, kind: e.kind })),
    },
    null,
    2,
  )
}

export const EXPORT_FILE_NAME = 'edgehound-graph.json'

/** An edge's stable id in the drawn graph (for selection): its position and kind. */
export const edgeId = (i: number) => `e${i}`
