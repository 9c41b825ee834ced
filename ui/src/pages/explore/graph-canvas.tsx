// The drawn graph: sigma.js 3 on graphology (WebGL), loaded on first use. Nodes are discs in their kind's colour
// with the kind's glyph drawn on a canvas layer above them (and Tier Zero / Owned marks); relationships are
// arrows labelled with their kind; hovering a node keeps it and its neighbours in colour and greys the rest.
// Layouts: `sequential` (left to right, for paths; computed here, it is cheap) or `force` (ForceAtlas2 in a Web
// Worker of this origin, so a large answer never blocks the page). Zoom with the wheel or the buttons, pan by
// dragging. Right-click a node for its actions.
import Graph from 'graphology'
import Sigma from 'sigma'
import { useEffect, useRef } from 'preact/hooks'
import type { ConsoleGraph } from './graph-model'
import { GLYPHS, styleOf, type GlyphName, type KindStyle } from './kind-style'
import { circleLayout, sequentialLayout } from './layouts'
import { edgeId } from './graph-ops'

export type LayoutName = 'sequential' | 'force'

export interface GraphCanvasProps {
  graph: ConsoleGraph
  styles: Map<string, KindStyle>
  layout: LayoutName
  onSelectNode: (id: string) => void
  onSelectEdge: (index: number) => void
  onContextNode: (id: string, x: number, y: number) => void
}

const GREY = '#d9dde5'
const EDGE = '#8d97a8'
const paths = new Map<GlyphName, Path2D>()
const glyphPath = (g: GlyphName) => paths.get(g) ?? (paths.set(g, new Path2D(GLYPHS[g])), paths.get(g)!)

export default function GraphCanvas({ graph, styles, layout, onSelectNode, onSelectEdge, onContextNode }: GraphCanvasProps) {
  const box = useRef<HTMLDivElement>(null)
  const sigmaRef = useRef<Sigma | null>(null)
  const handlers = useRef({ onSelectNode, onSelectEdge, onContextNode })
  handlers.current = { onSelectNode, onSelectEdge, onContextNode }

  useEffect(() => {
    const el = box.current
    if (!el) return
    const n = graph.nodes.length
    const big = n > 1000
    const g = new Graph({ multi: true, type: 'directed' })
    const ids = graph.nodes.map((x) => x.id)
    const start = layout === 'sequential' ? sequentialLayout(ids, graph.edges) : circleLayout(ids)
    for (const node of graph.nodes) {
      const st = styleOf(node.kinds?.length ? node.kinds : node.kind, styles)
      const p = start.get(node.id)!
      g.addNode(node.id, { x: p.x, y: p.y, size: big ? 4 : n > 200 ? 7 : 11, label: node.name, color: st.colour, glyph: st.glyph, tierZero: !!node.tierZero, owned: !!node.owned })
    }
    graph.edges.forEach((e, i) => {
      if (g.hasNode(e.source) && g.hasNode(e.target)) g.addDirectedEdgeWithKey(edgeId(i), e.source, e.target, { label: e.kind, size: big ? 1 : 2, type: 'arrow', color: EDGE })
    })

    // hover: the node and its neighbours stay in colour
    const objectIds = new Map(graph.nodes.map((x) => [x.id, x.objectId]))
    let hovered: string | null = null
    let near = new Set<string>()
    const sigma = new Sigma(g, el, {
      renderEdgeLabels: graph.edges.length <= 300,
      enableEdgeEvents: !big,
      labelRenderedSizeThreshold: big ? 14 : n > 200 ? 8 : 0,
      labelDensity: n > 200 ? 0.5 : 4,
      defaultEdgeType: 'arrow',
      zIndex: true,
      minCameraRatio: 0.05,
      maxCameraRatio: 20,
      nodeReducer: (node, data) => {
        if (!hovered || near.has(node)) return hovered === node ? { ...data, highlighted: true, zIndex: 2 } : data
        return { ...data, color: GREY, label: '', zIndex: 0 }
      },
      edgeReducer: (edge, data) => {
        if (!hovered) return data
        const [s, t] = g.extremities(edge)
        return s === hovered || t === hovered ? { ...data, color: '#1d2433', size: (data.size ?? 1) + 1, zIndex: 1 } : { ...data, color: '#eceef2', label: '' }
      },
    })
    sigmaRef.current = sigma
    sigma.on('enterNode', ({ node }) => {
      hovered = node
      near = new Set([node, ...g.neighbors(node)])
      el.dataset.hovered = objectIds.get(node) ?? node
      sigma.refresh({ skipIndexation: true })
    })
    sigma.on('leaveNode', () => {
      hovered = null
      near = new Set()
      delete el.dataset.hovered
      sigma.refresh({ skipIndexation: true })
    })
    sigma.on('clickNode', ({ node }) => handlers.current.onSelectNode(node))
    sigma.on('clickEdge', ({ edge }) => handlers.current.onSelectEdge(Number(edge.slice(1))))
    sigma.on('rightClickNode', ({ node, event }) => {
      event.original.preventDefault()
      event.preventSigmaDefault()
      const r = el.getBoundingClientRect()
      handlers.current.onContextNode(node, r.left + event.x, r.top + event.y)
    })
    const noMenu = (e: Event) => e.preventDefault()
    el.addEventListener('contextmenu', noMenu)

    // the glyph layer, above the discs; it takes no pointer events
    const layer = sigma.createCanvas('glyphs', { afterLayer: 'nodes', style: { pointerEvents: 'none' } })
    const ctx = layer.getContext('2d')!
    const drawGlyphs = () => {
      const dpr = window.devicePixelRatio || 1
      const { width, height } = sigma.getDimensions()
      if (layer.width !== Math.round(width * dpr) || layer.height !== Math.round(height * dpr)) {
        layer.width = Math.round(width * dpr)
        layer.height = Math.round(height * dpr)
        layer.style.width = `${width}px`
        layer.style.height = `${height}px`
      }
      ctx.setTransform(dpr, 0, 0, dpr, 0, 0)
      ctx.clearRect(0, 0, width, height)
      g.forEachNode((id, a) => {
        const d = sigma.getNodeDisplayData(id)
        if (!d || d.hidden) return
        const r = sigma.scaleSize(d.size)
        if (r < 5) return
        const p = sigma.framedGraphToViewport(d)
        if (p.x < -r || p.y < -r || p.x > width + r || p.y > height + r) return
        const k = (0.68 * r) / 12
        ctx.save()
        ctx.translate(p.x - 12 * k, p.y - 12 * k)
        ctx.scale(k, k)
        ctx.fillStyle = d.color === GREY ? '#f5f6f8' : '#ffffff'
        ctx.fill(glyphPath(a.glyph as GlyphName), 'evenodd')
        ctx.restore()
        if (a.tierZero) {
          ctx.fillStyle = '#c8102e'
          ctx.beginPath()
          const cx = p.x + r * 0.75, cy = p.y - r * 0.75, m = Math.max(3, r * 0.3)
          ctx.moveTo(cx, cy - m); ctx.lineTo(cx + m, cy); ctx.lineTo(cx, cy + m); ctx.lineTo(cx - m, cy); ctx.closePath(); ctx.fill()
        }
        if (a.owned) {
          ctx.fillStyle = '#1d2433'
          ctx.beginPath()
          ctx.arc(p.x + r * 0.75, p.y + r * 0.75, Math.max(3, r * 0.28), 0, 2 * Math.PI)
          ctx.fill()
        }
      })
    }
    sigma.on('afterRender', drawGlyphs)

    // test and automation hook: where a node is on the screen (page coordinates)
    const hook = el as HTMLDivElement & { nodePosition?: (objectId: string) => { x: number; y: number } | null }
    hook.nodePosition = (objectId) => {
      const node = graph.nodes.find((x) => x.objectId === objectId || x.id === objectId)
      const d = node && sigma.getNodeDisplayData(node.id)
      if (!d) return null
      const p = sigma.framedGraphToViewport(d)
      const r = el.getBoundingClientRect()
      return { x: r.left + p.x, y: r.top + p.y }
    }

    let worker: Worker | null = null
    el.dataset.layout = 'pending'
    if (layout === 'force' && n > 1) {
      worker = new Worker(new URL('./layout.worker.ts', import.meta.url), { type: 'module' })
      worker.onmessage = (ev: MessageEvent<Record<string, { x: number; y: number }>>) => {
        for (const [id, p] of Object.entries(ev.data)) if (g.hasNode(id)) g.mergeNodeAttributes(id, p)
        sigma.refresh()
        sigma.getCamera().setState({ x: 0.5, y: 0.5, ratio: 1, angle: 0 })
        el.dataset.layout = 'done'
        worker?.terminate()
        worker = null
      }
      worker.postMessage({
        nodes: g.mapNodes((id, a) => ({ id, x: a.x, y: a.y })),
        edges: graph.edges.map((e) => ({ source: e.source, target: e.target })),
        iterations: n > 1000 ? 100 : 300,
      })
    } else el.dataset.layout = 'done'
    return () => {
      worker?.terminate()
      el.removeEventListener('contextmenu', noMenu)
      delete hook.nodePosition
      sigma.kill()
      sigmaRef.current = null
    }
  }, [graph, styles, layout])

  const zoom = (f: number) => {
    const cam = sigmaRef.current?.getCamera()
    if (cam) f > 1 ? cam.animatedUnzoom({ duration: 200, factor: f }) : cam.animatedZoom({ duration: 200, factor: 1 / f })
  }
  return (
    <div class="canvas-wrap">
      <div class="canvas-controls" role="toolbar" aria-label="Zoom">
        <button class="secondary" aria-label="Zoom in" onClick={() => zoom(1 / 1.5)}>+</button>
        <button class="secondary" aria-label="Zoom out" onClick={() => zoom(1.5)}>−</button>
        <button class="secondary" onClick={() => sigmaRef.current?.getCamera().animatedReset({ duration: 200 })}>Reset view</button>
      </div>
      <div
        ref={box}
        class="canvas"
        role="img"
        aria-label={`Graph of ${graph.nodes.length} nodes and ${graph.edges.length} relationships (see the table below)`}
        data-testid="graph-canvas"
      />
    </div>
  )
}
