// The drawn graph: sigma.js 3 on graphology (WebGL), loaded on first use. Nodes are discs in their kind's colour
// with the kind's glyph drawn on a canvas layer above them (and Tier Zero / Owned marks); relationships are
// arrows labelled with their kind; hovering a node keeps it and its neighbours in colour and greys the rest.
// Layouts: `sequential` (left to right, for paths; computed here, it is cheap) or `force` (ForceAtlas2 in a Web
// Worker of this origin, so a large answer never blocks the page). Zoom with the wheel or the buttons, pan by
// dragging. Right-click a node for its actions. How much is drawn, and how panning works, depends on the answer's
// size (render-plan.ts): a large answer is laid out before it is drawn, and pans by moving the drawn picture
// (picture-pan.ts). While the worker lays it out, the page's thread does the rest in tasks short enough to keep
// taking input: the graph is built a slice at a time, and sigma is created (WebGL contexts, shader programs, a first
// drawing of a stand-in graph) in a task of its own; when the positions are back, sigma is given the answer
// (setGraph: indexed and drawn once). Its layers stay hidden until the GPU has rasterised that drawing, then are
// shown one per frame (gpu-ready.ts: otherwise the compositor reads every WebGL layer back in one long task).
import Graph from 'graphology'
import Sigma from 'sigma'
import type { Settings } from 'sigma/settings'
import { useEffect, useRef, useState } from 'preact/hooks'
import type { ConsoleGraph } from './graph-model'
import { GLYPHS, styleOf, type GlyphName, type KindStyle } from './kind-style'
import { circleLayout, sequentialLayout } from './layouts'
import { edgeId } from './graph-ops'
import { LARGE_ANSWER_NODES, renderPlan } from './render-plan'
import { attachPicturePan } from './picture-pan'
import type { LayoutRequest } from './layout.worker'
import { thousands } from './table-page'
import { unveil, veil, whenRasterized, type FenceContext } from './gpu-ready'

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
/** Yields to the page (a new task), so that input and painting run between slices of work. */
const nextTask = () => new Promise<void>((resolve) => setTimeout(resolve, 0))
/** Node keys of the stand-in graph (see `standIn`): no answer's node, and no events. */
const STAND_IN = '\u0000stand-in:'
/** Two transparent nodes and a relationship in the answer's programs (drawn while the answer is laid out). */
function standIn(plan: ReturnType<typeof renderPlan>): Graph {
  const g = new Graph({ multi: true, type: 'directed' })
  const look = { size: plan.nodeSize, color: 'rgba(0,0,0,0)', label: '' }
  g.addNode(`${STAND_IN}a`, { ...look, x: 0, y: 0 })
  g.addNode(`${STAND_IN}b`, { ...look, x: 1, y: 1 })
  g.addDirectedEdgeWithKey(`${STAND_IN}e`, `${STAND_IN}a`, `${STAND_IN}b`, { size: plan.edgeSize, type: plan.edgeType, color: 'rgba(0,0,0,0)' })
  return g
}
/** sigma's WebGL contexts (its layers drawn by the GPU). */
const webGLOf = (sigma: Sigma): FenceContext[] =>
  Object.values(sigma.getCanvases()).flatMap((c) => {
    const gl = c.getContext('webgl2') ?? c.getContext('webgl')
    return gl ? [gl] : []
  })
/**
 * sigma with its 2D layers (labels, hovers, the mouse layer) in memory instead of on the GPU, for large answers: with
 * a software renderer each GPU-backed 2D layer is sized, cleared and read back for the compositor through the GPU
 * process, a wait on the page's thread every time (traced: 20-330 ms per layer per commit at load 6-13); these
 * layers hold little (labels of a few nodes at most), so drawing them on the CPU costs nothing noticeable.
 */
class SigmaCpu2d extends Sigma {
  override createCanvasContext(id: string, options: Parameters<Sigma['createCanvasContext']>[1] = {}) {
    const canvas = this.createCanvas(id, options)
    ;(this as unknown as { canvasContexts: Record<string, CanvasRenderingContext2D> }).canvasContexts[id] = canvas.getContext('2d', { willReadFrequently: true })!
    return this
  }
}
/** sigma's settings for a plan (the reducers are added by the drawing that owns the hover state). */
function settingsOf(plan: ReturnType<typeof renderPlan>) {
  return {
    renderEdgeLabels: plan.renderEdgeLabels,
    hideEdgesOnMove: plan.hideEdgesOnMove,
    hideLabelsOnMove: plan.hideLabelsOnMove,
    enableEdgeEvents: plan.enableEdgeEvents,
    labelRenderedSizeThreshold: plan.labelRenderedSizeThreshold,
    labelDensity: plan.labelDensity,
    defaultEdgeType: plan.edgeType,
    zIndex: plan.zIndex,
    minCameraRatio: 0.05,
    maxCameraRatio: 20,
    // The canvas box can be 0 px wide or high for a moment (the page laid out again, the result area collapsed while
    // a panel opens, the box hidden on its way out): sigma's resize, run by every refresh, then throws "Container has
    // no width" from an animation frame, an uncaught page error. Allowed, sigma draws at 1 px until the box has a
    // size again, and the box's ResizeObserver (below) draws it again at the real size.
    allowInvalidContainer: true,
  }
}

/**
 * A sigma made ahead of time for the next large answer, in its own hidden holder (not painted, so never read back):
 * its construction (WebGL contexts, shader programs, sizing its canvases: 0.25-0.8 s of the page's thread on a
 * software renderer) and its first drawing (a stand-in graph) happen while the page is idle, not between Run and
 * the drawn answer. The Explore page asks for it when it opens (`prepareSpare`), and a new one is made after each
 * large answer takes it. Its size is that of the canvas box the answer will be drawn in (measured on a stand-in
 * box), so that taking it resizes nothing.
 */
let spare: { holder: HTMLDivElement; sigma: Sigma } | null = null
let spareWhere: HTMLElement | null = null
let spareTimer: number | undefined
const LARGE = renderPlan(LARGE_ANSWER_NODES + 1, 0)
const idle = (f: () => void): number =>
  typeof requestIdleCallback === 'function' ? requestIdleCallback(f, { timeout: 2000 }) : (setTimeout(f, 200) as unknown as number)

/** Makes the spare sigma in idle time, sized like a canvas box placed in `where` (the page's result area). */
export function prepareSpare(where: HTMLElement) {
  spareWhere = where
  if (spare || spareTimer !== undefined) return
  spareTimer = idle(() => {
    spareTimer = undefined
    if (spare || !spareWhere?.isConnected) return
    const probe = document.createElement('div')
    probe.className = 'canvas'
    spareWhere.append(probe)
    const width = probe.clientWidth
    const height = probe.clientHeight
    probe.remove()
    if (!width || !height) return
    const holder = document.createElement('div')
    holder.style.cssText = `position:fixed;left:0;top:0;width:${width}px;height:${height}px;visibility:hidden;pointer-events:none;z-index:-1`
    holder.setAttribute('aria-hidden', 'true')
    document.body.append(holder)
    const sigma = new SigmaCpu2d(new Graph({ multi: true, type: 'directed' }), holder, settingsOf(LARGE))
    const made = { holder, sigma }
    spare = made
    // its first drawing (the software renderer prepares each program then) in a later idle task
    idle(() => spare === made && sigma.setGraph(standIn(LARGE)))
  })
}

/** Drops the spare sigma (the Explore page closed). */
export function dropSpare() {
  if (spareTimer !== undefined) (typeof cancelIdleCallback === 'function' ? cancelIdleCallback : clearTimeout)(spareTimer)
  spareTimer = undefined
  spareWhere = null
  spare?.sigma.kill()
  spare?.holder.remove()
  spare = null
}

/** The spare sigma, taken (null when none is ready). */
function takeSpare(): { holder: HTMLDivElement; sigma: Sigma } | null {
  const got = spare
  spare = null
  return got
}
/** Another spare for the next large answer, made once the page has been idle a while after this one was drawn. */
function replenishSpare() {
  const where = spareWhere
  if (where) setTimeout(() => spareWhere === where && prepareSpare(where), SPARE_AFTER_MS)
}
/** How long after a large answer is drawn the next spare is made (not while the user is likely panning the new one). */
const SPARE_AFTER_MS = 10_000

/** A sigma instance in the canvas box, and what removes it. */
type Drawn = { sigma: Sigma; undo: () => void }

export default function GraphCanvas({ graph, styles, layout, onSelectNode, onSelectEdge, onContextNode }: GraphCanvasProps) {
  const box = useRef<HTMLDivElement>(null)
  const sigmaRef = useRef<Sigma | null>(null)
  const handlers = useRef({ onSelectNode, onSelectEdge, onContextNode })
  handlers.current = { onSelectNode, onSelectEdge, onContextNode }

  const [layingOut, setLayingOut] = useState<number | null>(null)

  useEffect(() => {
    const el = box.current
    if (!el) return
    const n = graph.nodes.length
    const plan = renderPlan(n, graph.edges.length)
    const ids = graph.nodes.map((x) => x.id)
    const force = layout === 'force' && n > 1
    const start = layout === 'sequential' ? sequentialLayout(ids, graph.edges) : circleLayout(ids)
    let worker: Worker | null = null
    let undraw = () => {}
    let gone = false
    // data-layout (read by the browser tests): pending, running (in the worker), drawing (positions back), done
    el.dataset.layout = 'pending'

    /** The graphology graph of the answer (nodes at `at(i)`), built a slice at a time so the page stays responsive. */
    async function build(at: (i: number) => { x: number; y: number }): Promise<Graph> {
      const g = new Graph({ multi: true, type: 'directed' })
      const slice = plan.large ? 500 : Infinity
      for (let i = 0; i < n; i++) {
        const node = graph.nodes[i]
        const st = styleOf(node.kinds?.length ? node.kinds : node.kind, styles)
        g.addNode(node.id, { ...at(i), size: plan.nodeSize, label: node.name, color: st.colour, glyph: st.glyph, tierZero: !!node.tierZero, owned: !!node.owned })
        if ((i + 1) % slice === 0) await nextTask()
      }
      for (let i = 0; i < graph.edges.length; i++) {
        const e = graph.edges[i]
        if (g.hasNode(e.source) && g.hasNode(e.target)) g.addDirectedEdgeWithKey(edgeId(i), e.source, e.target, { label: e.kind, size: plan.edgeSize, type: plan.edgeType, color: EDGE })
        if ((i + 1) % (2 * slice) === 0) await nextTask()
      }
      return g
    }
    const startAt = (i: number) => start.get(ids[i])!

    if (!force) {
      void build(startAt).then((g) => {
        if (gone) return
        undraw = draw(g).undo
        el.dataset.layout = 'done'
      })
    } else {
      // ForceAtlas2 in the worker; a large answer is drawn once, with its final positions
      const index = new Map(ids.map((id, i) => [id, i]))
      const positions = new Float32Array(2 * n)
      ids.forEach((id, i) => ((positions[2 * i] = start.get(id)!.x), (positions[2 * i + 1] = start.get(id)!.y)))
      const pairs: number[] = []
      for (const e of graph.edges) {
        const s = index.get(e.source)
        const t = index.get(e.target)
        if (s !== undefined && t !== undefined) pairs.push(s, t)
      }
      const request: LayoutRequest = { positions, edges: Uint32Array.from(pairs), iterations: plan.layoutIterations }
      const built = plan.layoutBeforeDrawing ? build(startAt) : null
      // A large answer: while the worker lays it out, sigma is created in a task of its own (its WebGL contexts,
      // canvases and shader programs: the costliest part of its construction), then given a stand-in graph of two
      // invisible nodes and a relationship, so that its first drawing (where the software renderer prepares each
      // program) is done meanwhile too. Drawing the laid-out answer is then sigma indexing it and drawing once (setGraph).
      const stage: Promise<Drawn | null> | null = built
        ? built.then(async () => {
            await nextTask()
            if (gone) return null
            // the spare sigma made while the page was idle, when there is one (its stand-in already drawn)
            const made = takeSpare()
            const drawn = draw(made ?? new Graph({ multi: true, type: 'directed' }))
            undraw = drawn.undo
            // not painted (so never read back by the compositor) until the answer's drawing is rasterised: gpu-ready.ts
            veil(drawn.sigma.getContainer().children as HTMLCollectionOf<HTMLElement>)
            if (made) return drawn
            // the stand-in's drawing in a later task than sigma's construction (each is long on a software renderer)
            await nextTask()
            if (!gone) drawn.sigma.setGraph(standIn(plan))
            return drawn
          })
        : null
      let g: Graph | null = null
      if (plan.layoutBeforeDrawing) setLayingOut(n)
      else
        void build(startAt).then((graphBuilt) => {
          if (gone) return
          g = graphBuilt
          undraw = draw(graphBuilt).undo
        })
      worker = new Worker(new URL('./layout.worker.ts', import.meta.url), { type: 'module' })
      worker.onmessage = async (ev: MessageEvent<Float32Array>) => {
        worker?.terminate()
        worker = null
        el.dataset.layout = 'drawing'
        const p = ev.data
        const at = (i: number) => ({ x: p[2 * i], y: p[2 * i + 1] })
        if (built && stage) {
          const laid = await built
          if (gone) return
          laid.updateEachNodeAttributes((id, a) => ({ ...a, ...at(index.get(id)!) }), { attributes: ['x', 'y'] })
          const drawn = await stage
          if (gone || !drawn) return
          await nextTask()
          if (gone) return
          // sigma indexes the answer and draws it once (setGraph refreshes synchronously)
          drawn.sigma.setGraph(laid)
          // shown once the GPU has rasterised it (the commit that shows it then waits for nothing)
          await whenRasterized(webGLOf(drawn.sigma), () => new Promise((resolve) => setTimeout(resolve, 16)), { stop: () => gone })
          if (gone) return
          await unveil(drawn.sigma.getContainer().children as HTMLCollectionOf<HTMLElement>, () => new Promise((resolve) => requestAnimationFrame(() => resolve())), () => gone)
          if (gone) return
          replenishSpare()
          setLayingOut(null)
        } else if (g) {
          // one update event for all the nodes, then indexed and drawn now (not at the next frame), so that node
          // positions read once the layout is done are the final ones
          g.updateEachNodeAttributes((id, a) => ({ ...a, ...at(index.get(id)!) }), { attributes: ['x', 'y'] })
          sigmaRef.current?.refresh()
          sigmaRef.current?.getCamera().setState({ x: 0.5, y: 0.5, ratio: 1, angle: 0 })
        }
        el.dataset.layout = 'done'
      }
      worker.postMessage(request, [request.positions.buffer, request.edges.buffer])
      el.dataset.layout = 'running'
    }

    /** sigma on the graph (which it may later be given with setGraph: read through sigma.getGraph()); returns it and what undoes it. */
    function draw(first: Graph | { holder: HTMLDivElement; sigma: Sigma }): Drawn {
      const box = el!
      // a spare sigma's layers are moved into the box, in their holder
      const made = first instanceof Graph ? null : first
      if (made) {
        made.holder.style.cssText = 'position:relative;width:100%;height:100%'
        made.holder.removeAttribute('aria-hidden')
        box.append(made.holder)
      }
      // hover: the node and its neighbours stay in colour
      const objectIds = new Map(graph.nodes.map((x) => [x.id, x.objectId]))
      let hovered: string | null = null
      let near = new Set<string>()
      const settings: Partial<Settings> = {
        ...settingsOf(plan),
        nodeReducer: (node, data) => {
          if (!hovered || near.has(node)) return hovered === node ? { ...data, highlighted: true, zIndex: 2 } : data
          return { ...data, color: GREY, label: '', zIndex: 0 }
        },
        edgeReducer: (edge, data) => {
          if (!hovered) return data
          const [s, t] = sigma.getGraph().extremities(edge)
          return s === hovered || t === hovered ? { ...data, color: '#1d2433', size: (data.size ?? 1) + 1, zIndex: 1 } : { ...data, color: '#eceef2', label: '' }
        },
      }
      const sigma: Sigma = made ? made.sigma.setSettings(settings) : new (plan.large ? SigmaCpu2d : Sigma)(first as Graph, box, settings)
      // where sigma's layers are (the box, or the spare's holder in it)
      const container = made ? made.holder : box
      sigmaRef.current = sigma
      const real = (node: string) => !node.startsWith(STAND_IN)
      sigma.on('enterNode', ({ node }) => {
        if (!real(node)) return
        hovered = node
        near = new Set([node, ...sigma.getGraph().neighbors(node)])
        box.dataset.hovered = objectIds.get(node) ?? node
        sigma.refresh({ skipIndexation: true })
      })
      sigma.on('leaveNode', () => {
        hovered = null
        near = new Set()
        delete box.dataset.hovered
        sigma.refresh({ skipIndexation: true })
      })
      sigma.on('clickNode', ({ node }) => real(node) && handlers.current.onSelectNode(node))
      sigma.on('clickEdge', ({ edge }) => real(edge) && handlers.current.onSelectEdge(Number(edge.slice(1))))
      sigma.on('rightClickNode', ({ node, event }) => {
        if (!real(node)) return
        event.original.preventDefault()
        event.preventSigmaDefault()
        const r = container.getBoundingClientRect()
        handlers.current.onContextNode(node, r.left + event.x, r.top + event.y)
      })
      const noMenu = (e: Event) => e.preventDefault()
      box.addEventListener('contextmenu', noMenu)
      // sigma follows the window's size but not its container's: opening a node or relationship panel narrows the
      // canvas box, and until sigma drew again at the new size, the part of the graph beyond the box was cut off
      // (the box contains its paint) and could not be hovered or clicked. Drawn again at the box's new size.
      // The observer also reports the box's size once when it starts observing: that is the size sigma has just drawn
      // at, and a refresh then indexed and drew the whole answer a second time (for 5,000 nodes, a long task of the
      // page's thread right after the first), so only a change of size counts.
      let seen = `${box.clientWidth}x${box.clientHeight}`
      const boxSize = new ResizeObserver(() => {
        const now = `${box.clientWidth}x${box.clientHeight}`
        if (now === seen) return
        seen = now
        sigma.scheduleRefresh()
      })
      boxSize.observe(box)
      // test and automation hook: where a node is on the screen (page coordinates), and how many times sigma drew
      const hook = box as HTMLDivElement & { nodePosition?: (objectId: string) => { x: number; y: number } | null; renders?: number }

      // the glyph layer, above the discs; it takes no pointer events. A large answer's glyphs are drawn again only
      // once the camera has rested for a moment (zooming redraws every frame).
      const layer = sigma.createCanvas('glyphs', { afterLayer: 'nodes', style: { pointerEvents: 'none' } })
      const ctx = layer.getContext('2d', { willReadFrequently: plan.large })!
      let moving = false
      let still: ReturnType<typeof setTimeout> | undefined
      const settle = () => {
        clearTimeout(still)
        moving = false
      }
      sigma.getCamera().on('updated', () => {
        if (!plan.glyphsOnlyAtRest) return
        moving = true
        clearTimeout(still)
        still = setTimeout(() => (settle(), sigma.scheduleRender()), 150)
      })
      let blank = false
      const drawGlyphs = () => {
        const dpr = window.devicePixelRatio || 1
        const { width, height } = sigma.getDimensions()
        if (layer.width !== Math.round(width * dpr) || layer.height !== Math.round(height * dpr)) {
          layer.width = Math.round(width * dpr)
          layer.height = Math.round(height * dpr)
          layer.style.width = `${width}px`
          layer.style.height = `${height}px`
          blank = true
        }
        if (moving && blank) return
        ctx.setTransform(dpr, 0, 0, dpr, 0, 0)
        ctx.clearRect(0, 0, width, height)
        blank = true
        if (moving) return
        // every node of an answer has the plan's size: when that is drawn too small for a glyph, none is drawn
        if (sigma.scaleSize(plan.nodeSize) < 5) return
        sigma.getGraph().forEachNode((id, a) => {
          const d = sigma.getNodeDisplayData(id)
          if (!d || d.hidden) return
          const r = sigma.scaleSize(d.size)
          if (r < 5) return
          const p = sigma.framedGraphToViewport(d)
          if (p.x < -r || p.y < -r || p.x > width + r || p.y > height + r) return
          blank = false
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
      sigma.on('afterRender', () => {
        drawGlyphs()
        hook.renders = (hook.renders ?? 0) + 1
      })
      // sigma drew once in its constructor, before this hook: the glyphs of that drawing (and the layer's size)
      drawGlyphs()
      const unpan = plan.panByMovingPicture ? attachPicturePan(sigma, container, settle) : () => {}

      hook.nodePosition = (objectId) => {
        const node = graph.nodes.find((x) => x.objectId === objectId || x.id === objectId)
        const d = node && sigma.getNodeDisplayData(node.id)
        if (!d) return null
        const p = sigma.framedGraphToViewport(d)
        const r = container.getBoundingClientRect()
        return { x: r.left + p.x, y: r.top + p.y }
      }
      const undo = () => {
        clearTimeout(still)
        unpan()
        boxSize.disconnect()
        box.removeEventListener('contextmenu', noMenu)
        delete hook.nodePosition
        sigma.kill()
        made?.holder.remove()
        sigmaRef.current = null
      }
      return { sigma, undo }
    }

    return () => {
      gone = true
      worker?.terminate()
      setLayingOut(null)
      undraw()
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
      {layingOut !== null && (
        <p class="canvas-note" role="status">
          Laying out {thousands(layingOut)} nodes…
        </p>
      )}
    </div>
  )
}
