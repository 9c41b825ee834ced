// Drag-panning a large answer without drawing during the drag (see render-plan.ts for why): while the left button
// drags the canvas, sigma's layers (the children of its container) are moved together with a CSS transform, which
// the compositor applies to the pictures already drawn; sigma sees none of the drag's mouse moves, so it neither
// pans frame by frame nor reads its picking buffer back for the hover test. On release the camera is moved by the
// dragged distance (the graph point under the pointer stays under it) and sigma draws once; the transform is removed
// in that same frame. A click that ends a drag does not select what is under the pointer.
import type Sigma from 'sigma'
import { cameraAfterDrag } from './render-plan'

/** Below this distance (pixels) a press and release is a click, not a drag. */
const CLICK_TOLERANCE = 3

export function attachPicturePan(sigma: Sigma, container: HTMLElement, onSettle: () => void): () => void {
  let drag: { x: number; y: number; dx: number; dy: number } | null = null
  let dragged = false
  const layers = () => Array.from(container.children) as HTMLElement[]
  const place = (t: string) => {
    for (const l of layers()) l.style.transform = t
  }
  for (const l of layers()) l.style.willChange = 'transform'

  const down = (e: MouseEvent) => {
    dragged = false
    if (e.button === 0) drag = { x: e.clientX, y: e.clientY, dx: 0, dy: 0 }
  }
  const move = (e: MouseEvent) => {
    if (!drag) return
    e.stopPropagation() // sigma does not see the drag
    drag.dx = e.clientX - drag.x
    drag.dy = e.clientY - drag.y
    place(`translate(${drag.dx}px, ${drag.dy}px)`)
  }
  const up = () => {
    if (!drag) return
    const { dx, dy } = drag
    drag = null
    if (Math.abs(dx) + Math.abs(dy) < CLICK_TOLERANCE) return place('')
    dragged = true
    const camera = sigma.getCamera()
    sigma.once('afterRender', () => place(''))
    camera.setState(cameraAfterDrag(camera.getState(), dx, dy, (p) => sigma.viewportToFramedGraph(p)))
    onSettle()
  }
  const click = (e: MouseEvent) => {
    if (!dragged) return
    dragged = false
    e.stopPropagation()
  }
  container.addEventListener('mousedown', down, true)
  container.addEventListener('click', click, true)
  window.addEventListener('mousemove', move, true)
  window.addEventListener('mouseup', up, true)
  return () => {
    container.removeEventListener('mousedown', down, true)
    container.removeEventListener('click', click, true)
    window.removeEventListener('mousemove', move, true)
    window.removeEventListener('mouseup', up, true)
    place('')
  }
}
