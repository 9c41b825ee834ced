/**
 * A gzip body inflated with a cap on what it inflates to (a small body may inflate to gigabytes): 413 as
 * soon as the output passes `max`, 400 for a body that is not gzip. Uses the platform's DecompressionStream,
 * reading chunk by chunk, so memory stays at the cap.
 */
import { ApiError } from '../http/errors'
import { overBudget } from '../http/budget'

export async function inflateGzip(bytes: Uint8Array, max: number): Promise<Uint8Array> {
  const stream = new Blob([bytes as unknown as ArrayBuffer]).stream().pipeThrough(new DecompressionStream('gzip'))
  const reader = stream.getReader()
  const chunks: Uint8Array[] = []
  let total = 0
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      total += value.byteLength
      if (total > max) {
        await reader.cancel().catch(() => undefined)
        throw overBudget(413, {
          context: 'body',
          what: 'the inflated body',
          budget: 'bytes per ingest post once inflated',
          limit: max,
          narrow: 'send the data in several posts to the same job',
        })
      }
      chunks.push(value)
    }
  } catch (e) {
    if (e instanceof ApiError) throw e
    throw new ApiError(400, 'the body is not valid gzip (Content-Encoding: gzip)', 'body')
  }
  const out = new Uint8Array(total)
  let at = 0
  for (const ch of chunks) {
    out.set(ch, at)
    at += ch.byteLength
  }
  return out
}
