/// <reference lib="webworker" />
// ForceAtlas2 off the page's thread: receives the graph as typed arrays (start positions x0,y0,x1,y1,… in node
// order; relationships as pairs of node indexes), runs the layout and posts the positions back in the same order,
// transferring the buffer (no copy, nothing for the page to parse). A file of this origin (CSP worker-src 'self'),
// not a blob: worker.
import Graph from 'graphology'
import forceAtlas2 from 'graphology-layout-forceatlas2'

export type LayoutRequest = { positions: Float32Array; edges: Uint32Array; iterations: number }

self.onmessage = (ev: MessageEvent<LayoutRequest>) => {
  const { positions, edges, iterations } = ev.data
  const n = positions.length / 2
  const g = new Graph({ multi: true })
  for (let i = 0; i < n; i++) g.addNode(i, { x: positions[2 * i], y: positions[2 * i + 1] })
  for (let j = 0; j < edges.length; j += 2) g.addEdge(edges[j], edges[j + 1])
  forceAtlas2.assign(g, { iterations, settings: forceAtlas2.inferSettings(g) })
  const out = new Float32Array(2 * n)
  g.forEachNode((id, a) => {
    const i = Number(id)
    out[2 * i] = a.x as number
    out[2 * i + 1] = a.y as number
  })
  ;(self as unknown as Worker).postMessage(out, [out.buffer])
}
