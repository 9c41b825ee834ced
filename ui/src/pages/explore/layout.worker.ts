/// <reference lib="webworker" />
// ForceAtlas2 off the page's thread: receives the graph (node ids with start positions, edges), runs the
// layout and posts the positions back. A file of this origin (CSP worker-src 'self'), not a blob: worker.
import Graph from 'graphology'
import forceAtlas2 from 'graphology-layout-forceatlas2'

type In = { nodes: { id: string; x: number; y: number }[]; edges: { source: string; target: string }[]; iterations: number }

self.onmessage = (ev: MessageEvent<In>) => {
  const g = new Graph({ multi: true })
  for (const n of ev.data.nodes) g.addNode(n.id, { x: n.x, y: n.y })
  for (const e of ev.data.edges) if (g.hasNode(e.source) && g.hasNode(e.target)) g.addEdge(e.source, e.target)
  const settings = forceAtlas2.inferSettings(g)
  forceAtlas2.assign(g, { iterations: ev.data.iterations, settings })
  const out: Record<string, { x: number; y: number }> = {}
  g.forEachNode((id, a) => (out[id] = { x: a.x as number, y: a.y as number }))
  ;(self as unknown as Worker).postMessage(out)
}
