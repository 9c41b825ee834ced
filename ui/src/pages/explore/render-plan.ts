/**
 * How an answer is drawn, chosen by its size (pure; unit-tested in test/unit/console-explore.test.ts).
 *
 * Where the time goes (measured in headless Chromium, software WebGL, 5,000 nodes / 10,000 relationships): not in
 * sigma's drawing of the items but in each frame itself: every WebGL layer (sigma has three) that changes is read
 * back for the compositor, and the hover test reads the picking buffer back on every mouse move, each waiting for
 * the GPU. A large answer therefore pans without drawing at all: while the mouse drags, the drawn layers are moved
 * as one picture (a CSS transform, composited without redrawing) and sigma draws once, at the new camera position,
 * when the button is released; the hover test is skipped during the drag. Zooming redraws, so relationships,
 * labels and glyphs are hidden while the camera moves. A large answer is laid out (ForceAtlas2 in the Web Worker)
 * before it is drawn, so the page's thread indexes the graph once, not once at the start and again with the
 * positions.
 */

/** Above this many nodes an answer is "large": the cheaper drawing below. */
export const LARGE_ANSWER_NODES = 1000
/** Above this many relationships they are hidden while the camera moves (also for answers with fewer nodes). */
export const HIDE_EDGES_ON_MOVE_EDGES = 2000
/** Relationship labels are drawn only for answers up to this many relationships. */
export const EDGE_LABELS_MAX = 300

export interface RenderPlan {
  large: boolean
  nodeSize: number
  edgeSize: number
  /** sigma edge program: arrows for readable answers, plain lines (one program, no heads) for large ones */
  edgeType: 'arrow' | 'line'
  renderEdgeLabels: boolean
  hideEdgesOnMove: boolean
  hideLabelsOnMove: boolean
  /** glyphs (kind icons, Tier Zero / Owned marks) are drawn again only once the camera rests */
  glyphsOnlyAtRest: boolean
  enableEdgeEvents: boolean
  /** sigma sorts every item by zIndex on each indexation (hovered items drawn on top): small answers only */
  zIndex: boolean
  labelRenderedSizeThreshold: number
  labelDensity: number
  /** drag-panning moves the drawn picture and draws once at release (see above) */
  panByMovingPicture: boolean
  /** lay out in the worker first, then draw once with the final positions */
  layoutBeforeDrawing: boolean
  /** ForceAtlas2 iterations in the worker */
  layoutIterations: number
}

export function renderPlan(nodeCount: number, edgeCount: number): RenderPlan {
  const large = nodeCount > LARGE_ANSWER_NODES
  const medium = nodeCount > 200
  return {
    large,
    nodeSize: large ? 4 : medium ? 7 : 11,
    edgeSize: large ? 1 : 2,
    edgeType: large ? 'line' : 'arrow',
    renderEdgeLabels: edgeCount <= EDGE_LABELS_MAX,
    hideEdgesOnMove: large || edgeCount > HIDE_EDGES_ON_MOVE_EDGES,
    hideLabelsOnMove: large,
    glyphsOnlyAtRest: large,
    enableEdgeEvents: !large,
    zIndex: !large,
    labelRenderedSizeThreshold: large ? 14 : medium ? 8 : 0,
    labelDensity: medium ? 0.5 : 4,
    panByMovingPicture: large,
    layoutBeforeDrawing: large,
    layoutIterations: large ? 100 : 300,
  }
}

/**
 * The camera position after dragging the picture by (dx, dy) pixels: the graph point that was under the pointer
 * stays under it. `toGraph` maps a viewport point to sigma's framed-graph coordinates (sigma.viewportToFramedGraph).
 */
export function cameraAfterDrag(
  camera: { x: number; y: number },
  dx: number,
  dy: number,
  toGraph: (p: { x: number; y: number }) => { x: number; y: number },
): { x: number; y: number } {
  const from = toGraph({ x: 0, y: 0 })
  const to = toGraph({ x: dx, y: dy })
  return { x: camera.x + from.x - to.x, y: camera.y + from.y - to.y }
}
