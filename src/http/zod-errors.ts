import type { z } from 'zod'
import type { ErrorDetail } from './errors'

/** `["node_kinds", 2, "color"]` → `node_kinds[2].color` */
export function jsonPath(path: readonly PropertyKey[], prefix = ''): string {
  let out = prefix
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`
    // a prefix such as `path.` already ends with the separator (was producing `path..id`)
    else out += out && !out.endsWith('.') ? `.${String(seg)}` : String(seg)
  }
  return out
}

export function zodDetails(error: z.ZodError, prefix = ''): ErrorDetail[] {
  return error.issues.map((i) => ({ context: jsonPath(i.path, prefix), message: i.message }))
}
