/**
 * Which format an uploaded JSON payload is, decided by its content (never by its file name):
 *
 *   {"graph": ...}                    OpenGraph (src/graph/opengraph.ts)
 *   {"meta": {"type": T, ...}, "data": [...]}
 *                                     a collector's output; T picks the collector from COLLECTORS
 *                                     (SharpHound: users, groups, computers, ...; AzureHound: azure)
 *   both                              OpenGraph's reader refuses it: one format per file (BloodHound: "mixed")
 *
 * To add a collector: write a CollectorFormat (its meta.type values and a converter per element) and
 * add it to COLLECTORS, one line. The header checks every collector shares (meta an object, a known
 * type, data an array) happen here, once. `meta.count` is advisory, as in BloodHound (whose ingest model has
 * no count): a count that is not a non-negative integer, or that disagrees with data's length, is a warning
 * recorded in the job, never a refusal (docs/collectors.md, "What is refused and what is only warned").
 *
 * Pure: bytes in, a payload reader out.
 */
import { firstTopLevelKey, parseSpan, scanTopLevel, type Span } from '../graph/json-scan'
import { PayloadReader, type PayloadContext } from '../graph/opengraph'
import { CollectorPayload, type ElementConverter, type GraphPayload, type Violation } from './payload'
import { azureHound } from './azurehound'
import { sharpHound } from './sharphound'

export interface CollectorHeader {
  /** meta.type as written */
  type: string
  /** meta.version when it is a number, else null */
  version: number | null
  /** the whole meta object */
  meta: Record<string, unknown>
}

export interface CollectorFormat {
  /** for messages: "SharpHound", "AzureHound" */
  name: string
  /** the meta.type values this collector writes */
  types: readonly string[]
  /**
   * The converter for one file's elements, or a violation (e.g. an unsupported meta.version) as
   * {context, message}.
   */
  converter(header: CollectorHeader): ElementConverter | Violation
}

/** Every collector format, by the meta.type values it claims. Add a collector here. */
export const COLLECTORS: readonly CollectorFormat[] = [sharpHound, azureHound]

function formatFor(type: string): CollectorFormat | undefined {
  return COLLECTORS.find((c) => c.types.includes(type))
}

/** Every meta.type accepted, for messages and docs. */
export function acceptedMetaTypes(): string[] {
  return COLLECTORS.flatMap((c) => [...c.types])
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

const FORMAT_KEYS: ReadonlySet<string> = new Set(['graph', 'meta', 'data'])

/**
 * The collector header of a buffer, computed once per buffer: the three passes over a plain JSON upload
 * (validate, nodes, edges) share it; a zip member is inflated anew for each pass and scanned again.
 */
interface Header {
  data: Span | null
  converter: ElementConverter | null
  count: number | null
  violations: Violation[]
  /** suspicious but accepted (a meta.count that is not a count) */
  warnings: Violation[]
}
const headers = new WeakMap<Uint8Array, Header>()

/** Opens a payload of any format. Throws JsonSyntaxError when the bytes are not one JSON object. */
export function openGraphPayload(bytes: Uint8Array, ctx: PayloadContext): GraphPayload {
  // The first of `graph` / `meta` / `data` decides; `graph` first is OpenGraph, whose reader also refuses
  // `meta` / `data` next to it (a mixed file). Finding it never walks the `graph` value itself.
  const first = firstTopLevelKey(bytes, FORMAT_KEYS)
  if (first === null || first === 'graph') return new PayloadReader(bytes, ctx)
  let h = headers.get(bytes)
  if (!h) {
    h = collectorHeader(bytes)
    headers.set(bytes, h)
  }
  // A collector file that also has `graph` (after meta/data): OpenGraph's reader reports the mix.
  if (h === MIXED) return new PayloadReader(bytes, ctx)
  return new CollectorPayload(bytes, h.violations.length === 0 ? h.data : null, h.converter ?? (() => undefined), h.violations, h.count, h.warnings)
}

const MIXED: Header = { data: null, converter: null, count: null, violations: [], warnings: [] }

function collectorHeader(bytes: Uint8Array): Header {
  const top = scanTopLevel(bytes)
  const m = top.members
  if (m.has('graph')) return MIXED
  const v: Violation[] = []
  const w: Violation[] = []
  for (const k of top.duplicateKeys) v.push({ context: k, message: `member "${k}" appears more than once` })
  const metaSpan = m.get('meta')
  const dataSpan = m.get('data')
  let converter: ElementConverter | null = null
  let count: number | null = null
  if (!metaSpan) v.push({ context: 'meta', message: 'meta is required: {"type", "version", "count", "methods"}' })
  else {
    const meta = parseSpan(bytes, metaSpan)
    if (!isObject(meta)) v.push({ context: 'meta', message: 'meta must be an object' })
    else if (typeof meta.type !== 'string' || !formatFor(meta.type))
      v.push({ context: 'meta.type', message: `no valid meta tag found: meta.type must be one of ${acceptedMetaTypes().join(', ')}${typeof meta.type === 'string' ? ` (found "${meta.type}")` : ''}` })
    else {
      const header: CollectorHeader = { type: meta.type, version: typeof meta.version === 'number' ? meta.version : null, meta }
      const c = formatFor(meta.type)!.converter(header)
      if (typeof c === 'function') converter = c
      else v.push(c)
      if (meta.count !== undefined && meta.count !== null) {
        if (typeof meta.count !== 'number' || !Number.isInteger(meta.count) || meta.count < 0)
          w.push({ context: 'meta.count', message: `meta.count ${JSON.stringify(meta.count).slice(0, 40)} is not a count (a non-negative integer); ignored, as BloodHound ignores it` })
        else count = meta.count // compared with data's length while validating (one walk, not two)
      }
    }
  }
  let data: Span | null = null
  if (!dataSpan || bytes[dataSpan[0]] !== 0x5b) v.push({ context: 'data', message: 'no data tag found: data must be an array' })
  else data = dataSpan
  return { data, converter, count, violations: v, warnings: w }
}
