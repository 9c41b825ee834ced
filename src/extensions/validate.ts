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
/** Members in the order the spec lists them; anything else (unknown members) sorts after them. */
const FIELD_ORDER = [
  'name', 'display_name', 'version', 'namespace', 'description', 'is_display_kind', 'icon', 'color', 'is_traversable',
  'environment_kind', 'source_kind', 'principal_kinds', 'relationship_kind', 'remediation',
  'short_description', 'long_description', 'short_remediation', 'long_remediation',
]

/** Document order: top-level member, array index, then member and nested index by the spec's order. */
function sortKey(context: string): number[] {
  const key: number[] = []
  const re = /([A-Za-z0-9_]+)|\[(\d+)\]/g
  let m: RegExpExecArray | null
  let first = true
  while ((m = re.exec(context)) !== null) {
    if (m[2] !== undefined) key.push(Number(m[2]))
    else {
      const order = first ? TOP_ORDER : FIELD_ORDER
      const i = order.indexOf(m[1])
      key.push(i < 0 ? order.length : i)
      first = false
    }
  }
  return key
}

function compareKeys(a: number[], b: number[]): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    if (a[i] === undefined) return -1
    if (b[i] === undefined) return 1
    if (a[i] !== b[i]) return a[i] - b[i]
  }
  return 0
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
  keyed.sort((a, b) => compareKeys(a.k, b.k) || a.i - b.i)
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
