/**
 * Showing a large drawing only once the GPU has finished it (pure of sigma; unit-tested in
 * test/unit/console-explore.test.ts with a fake WebGL context).
 *
 * Why (measured with a Chromium trace, headless Chromium with software WebGL as on CI, 5,000 nodes / 10,000
 * relationships): sigma's drawing calls return at once, the GPU process rasterises them afterwards (0.5 s per WebGL
 * layer on this machine), and the first compositor commit after the drawing reads each visible WebGL canvas back
 * (`GLES2::ReadPixels` in `LayerTreeHost::DoUpdateLayers`), waiting on the page's thread for that rasterisation:
 * one task of 0.8–1.3 s. A canvas that is not painted (`visibility: hidden`) is not read back, so the page keeps its
 * thread while the GPU works; once a fence placed after the drawing has passed, the layers are shown, and the commit
 * that shows them only copies finished pixels.
 */

/** The part of a WebGL context used here (WebGL 2 has fences; a WebGL 1 context is treated as done at once). */
export interface FenceContext {
  flush(): void
  isContextLost(): boolean
  fenceSync?(condition: number, flags: number): unknown
  getSyncParameter?(sync: unknown, pname: number): unknown
  deleteSync?(sync: unknown): void
}

// WebGL 2 constants (the same values in every implementation)
export const SYNC_GPU_COMMANDS_COMPLETE = 0x9117
export const SYNC_STATUS = 0x9114
export const SIGNALED = 0x9119

/**
 * Resolves once every context has executed the commands issued so far (a fence each, polled between tasks with
 * `wait`), or when `stop()` turns true, or after `limitMs` (a lost or stuck context never holds the drawing back).
 * Returns whether every fence passed.
 */
export async function whenRasterized(
  contexts: readonly FenceContext[],
  wait: () => Promise<void>,
  { stop = () => false, limitMs = 10_000, now = () => Date.now() }: { stop?: () => boolean; limitMs?: number; now?: () => number } = {},
): Promise<boolean> {
  const fences = contexts.map((gl) => {
    const sync = gl.fenceSync && !gl.isContextLost() ? gl.fenceSync(SYNC_GPU_COMMANDS_COMPLETE, 0) : null
    gl.flush()
    return { gl, sync }
  })
  const until = now() + limitMs
  let all = true
  for (const { gl, sync } of fences) {
    if (!sync) {
      if (gl.isContextLost()) all = false
      continue
    }
    while (!stop() && !gl.isContextLost() && gl.getSyncParameter!(sync, SYNC_STATUS) !== SIGNALED) {
      if (now() >= until) {
        all = false
        break
      }
      await wait()
    }
    if (stop() || gl.isContextLost()) all = false
    if (!gl.isContextLost()) gl.deleteSync?.(sync)
  }
  return all
}

/** A drawing's layer (an element: only its visibility is used here). */
export type Layer = { style: { visibility: string } }

/** Hides the layers of a drawing (the children of its box, not the box itself: its border and background stay). */
export function veil(layers: ArrayLike<Layer>) {
  for (const layer of Array.from(layers)) layer.style.visibility = 'hidden'
}

/**
 * Shows the hidden layers one per frame (`frame` resolves in a frame's animation callbacks, before its commit), so
 * that each commit reads back one layer, not all of them at once (each WebGL read-back is a wait of its own on a
 * software renderer). Stops early when `stop()` turns true. Returns how many frames it took.
 */
export async function unveil(layers: ArrayLike<Layer>, frame: () => Promise<void>, stop = () => false): Promise<number> {
  let frames = 0
  for (const layer of Array.from(layers)) {
    if (layer.style.visibility !== 'hidden') continue
    await frame()
    frames++
    if (stop()) break
    layer.style.visibility = ''
  }
  return frames
}
