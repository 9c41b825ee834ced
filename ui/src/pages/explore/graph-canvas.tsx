// The drawn graph: sigma.js 3 on graphology, laid out by ForceAtlas2 in a Web Worker. Loaded on first use.
import Graph from 'graphology'
import Sigma from 'sigma'
import { useEffect, useRef } from 'preact/hooks'
import { kindColour, type ConsoleGraph } from './graph-model'

export default function GraphCanvas({ graph, onSelect }: { graph: ConsoleGraph; onSelect: (id: string) => void }) {
  const box = useRef<HTMLDivElement>(null)
  useEffect(() => {
    if (!box.current) return
    const g = new Graph({ multi: true })
    const n = graph.nodes.length
    graph.nodes.forEach((node, i) => {
      const a = (2 * Math.PI * i) / Math.max(1, n)
      g.addNode(node.id, { x: Math.cos(a) * 10, y: Math.sin(a) * 10, size: n > 500 ? 3 : 8, label: node.name, color: kindColour(node.kind) })
    })
    for (const e of graph.edges) g.addEdge(e.source, e.target, { label: e.kind, size: 2, type: 'arrow', color: '#9aa4b2' })
    const sigma = new Sigma(g, box.current, { renderEdgeLabels: n <= 200, labelRenderedSizeThreshold: n > 500 ? 12 : 0 })
    sigma.on('clickNode', ({ node }) => onSelect(node))
    let worker: Worker | null = null
    if (n > 1) {
      worker = new Worker(new URL('./layout.worker.ts', import.meta.url), { type: 'module' })
      worker.onmessage = (ev: MessageEvent<Record<string, { x: number; y: number }>>) => {
        for (const [id, p] of Object.entries(ev.data)) if (g.hasNode(id)) g.mergeNodeAttributes(id, p)
        sigma.refresh()
        worker?.terminate()
      }
      worker.postMessage({
        nodes: g.mapNodes((id, a) => ({ id, x: a.x, y: a.y })),
        edges: graph.edges.map((e) => ({ source: e.source, target: e.target })),
        iterations: n > 1000 ? 100 : 300,
      })
    }
    return () => {
      worker?.terminate()
      sigma.kill()
    }
  }, [graph])
  return <div ref={box} class="canvas" role="img" aria-label={`Graph of ${graph.nodes.length} nodes and ${graph.edges.length} relationships (see the table below)`} data-testid="graph-canvas" />
}
