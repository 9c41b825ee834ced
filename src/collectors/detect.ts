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
 * type, data an array, meta.count equal to data's length) happen here, once.
 *
 * Pure: bytes in, a payload reader out.
 */
import { arrayElements, parseSpan, scanTopLevel, type Span } from '../graph/json-scan'
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

/** Opens a payload of any format. Throws JsonSyntaxError when the bytes are not one JSON object. */
export function openGraphPayload(bytes: Uint8Array, ctx: PayloadContext): GraphPayload {
  const top = scanTopLevel(bytes)
  const m = top.members
  // `graph` decides OpenGraph; its reader refuses `meta` / `data` next to it (a mixed file).
  const isCollector = !m.has('graph') && (m.has('meta') || m.has('data'))
  if (!isCollector) return new PayloadReader(bytes, ctx)
  const v: Violation[] = []
  for (const k of top.duplicateKeys) v.push({ context: k, message: `member "${k}" appears more than once` })
  const metaSpan = m.get('meta')
  const dataSpan = m.get('data')
  let converter: ElementConverter | null = null
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
      if (dataSpan && bytes[dataSpan[0]] === 0x5b && meta.count !== undefined && meta.count !== null) {
        const count = countElements(bytes, dataSpan)
        if (typeof meta.count !== 'number' || !Number.isInteger(meta.count) || meta.count < 0)
          v.push({ context: 'meta.count', message: 'meta.count must be a non-negative integer' })
        else if (meta.count !== count) v.push({ context: 'meta.count', message: `meta.count is ${meta.count} but data holds ${count} element(s): the file may be truncated or edited` })
      }
    }
  }
  let data: Span | null = null
  if (!dataSpan) v.push({ context: 'data', message: 'no data tag found: data must be an array' })
  else if (bytes[dataSpan[0]] !== 0x5b) v.push({ context: 'data', message: 'no data tag found: data must be an array' })
  else data = dataSpan
  return new CollectorPayload(bytes, v.length === 0 ? data : null, converter ?? (() => undefined), v)
}

function countElements(bytes: Uint8Array, span: Span): number {
  let n = 0
  for (const _ of arrayElements(bytes, span)) n++
  return n
}
