import type { z } from 'zod'
import type { ErrorDetail } from '../http/errors'
import { jsonPath } from '../http/zod-errors'
import { checkRules, type InstalledState } from './rules'
import { ExtensionDocumentSchema, shapeMessage, type ExtensionDocument } from './schema'

/**
 * Validation of a PUT /api/v2/extensions body: the zod shape and the rules, both always, so that a client
 * sees every violation of its payload in one 400 answer (each detail's `context` a JSON path such as
 * `node_kinds[2].color`). Pure: the installed state is an argument.
 */

export type ValidationResult = { ok: true; doc: ExtensionDocument } | { ok: false; errors: ErrorDetail[] }

/** Upper bound on the details of one answer; a payload with thousands of mistakes gets the first ones. */
export const MAX_DETAILS = 500

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

function shapeDetails(error: z.ZodError): ErrorDetail[] {
  const out: ErrorDetail[] = []
  for (const issue of error.issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) out.push({ context: jsonPath([...issue.path, key]), message: `unknown member "${key}"` })
      continue
    }
    out.push({ context: jsonPath(issue.path), message: issue.message })
  }
  return out
}

const TOP_ORDER = ['body', 'schema', 'node_kinds', 'relationship_kinds', 'environments', 'relationship_findings']

/** Document order: top-level member, then array index, then the rest of the path. */
function sortKey(context: string): [number, number, string] {
  const m = /^([a-z_]+)(?:\[(\d+)\])?(.*)$/.exec(context)
  if (!m) return [TOP_ORDER.length, 0, context]
  const top = TOP_ORDER.indexOf(m[1])
  return [top < 0 ? TOP_ORDER.length : top, m[2] === undefined ? -1 : Number(m[2]), m[3]]
}

export function orderDetails(details: ErrorDetail[]): ErrorDetail[] {
  const seen = new Set<string>()
  const unique = details.filter((d) => {
    const k = `${d.context}\u0000${d.message}`
    if (seen.has(k)) return false
    seen.add(k)
    return true
  })
  const keyed = unique.map((d, i) => ({ d, k: sortKey(d.context), i }))
  keyed.sort((a, b) => a.k[0] - b.k[0] || a.k[1] - b.k[1] || (a.k[2] < b.k[2] ? -1 : a.k[2] > b.k[2] ? 1 : 0) || a.i - b.i)
  const sorted = keyed.map((x) => x.d)
  if (sorted.length <= MAX_DETAILS) return sorted
  const rest = sorted.length - (MAX_DETAILS - 1)
  return [...sorted.slice(0, MAX_DETAILS - 1), { context: 'body', message: `${rest} further violations are not listed` }]
}

export function validateExtension(raw: unknown, installed: InstalledState): ValidationResult {
  if (!isPlainObject(raw)) {
    const got = raw === null ? 'null' : Array.isArray(raw) ? 'an array' : `a ${typeof raw}`
    return { ok: false, errors: [{ context: 'body', message: `the request body must be a JSON object (a graph extension document), not ${got}` }] }
  }
  const shape = ExtensionDocumentSchema.safeParse(raw, { error: shapeMessage })
  const errors = [...(shape.success ? [] : shapeDetails(shape.error)), ...checkRules(raw, installed)]
  if (errors.length > 0 || !shape.success) {
    if (errors.length === 0) errors.push({ context: 'body', message: 'the graph extension document is invalid' })
    return { ok: false, errors: orderDetails(errors) }
  }
  return { ok: true, doc: shape.data }
}
