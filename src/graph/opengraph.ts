/**
 * OpenGraph payload rules: validation with JSON paths, and normalisation into the compact rows the
 * store writes (one JSON array per statement, expanded with json_each).
 *
 *   {"metadata": {"source_kind": "X"|null}?, "graph": {"nodes": [...]?, "edges": [...]?}}
 *   node: {"id": string, "kinds": [1..3 kind names], "properties"?: {key: primitive | [primitives]} | null}
 *   edge: {"start": End, "end": End, "kind": kind name, "properties"?: as for nodes}
 *   End:  {"value": string, "match_by"?: "id" | "name" (default "id"), "kind"?: kind name}
 *
 * Decisions (documented in docs/graph.md): unknown members inside `graph`, nodes, edges and metadata
 * are violations (a typo must not silently drop data); unknown top-level members such as `$schema` are
 * ignored as BloodHound ignores them (`topLevelMemberProblem`); a `null` property value is accepted
 * and ignored (it neither sets nor removes anything); arrays must be homogeneous; kind names follow
 * `^[A-Za-z0-9_]+$` for nodes as well as edges.
 *
 * Pure: values in, rows and violations out.
 */
import { KIND_PATTERN, environmentKindOf } from './kinds'
import { arrayElements, parseSpan, scanOpenGraph, type OpenGraphLayout, type Span } from './json-scan'

export interface Violation {
  context: string
  message: string
}

export type Primitive = string | number | boolean
export type PropertyValue = Primitive | Primitive[]

/** Node row as written: objectid, primary kind, kinds, properties, environment kind (when it is one). */
export interface NodeRow {
  o: string
  k: string
  ks: string[]
  p: Record<string, PropertyValue>
  ek: string | null
}

/** Edge row: start value/match/kind, end value/match/kind, relationship kind, properties. */
export interface EdgeRow {
  s: string
  sm: 'id' | 'name'
  sk: string | null
  t: string
  tm: 'id' | 'name'
  tk: string | null
  k: string
  p: Record<string, PropertyValue>
}

export interface PayloadContext {
  /** environment node kind → type; decides which nodes are environments */
  environmentTypes: ReadonlyMap<string, string>
}

export const MAX_ID_LENGTH = 1024
export const MAX_KINDS = 3
/** An element larger than this cannot fit a D1 statement together with its SQL; see docs/graph.md. */
export const MAX_ELEMENT_BYTES = 64 * 1024

const NODE_KEYS = new Set(['id', 'kinds', 'properties'])
const EDGE_KEYS = new Set(['start', 'end', 'kind', 'properties'])
const END_KEYS = new Set(['value', 'match_by', 'kind'])

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

function describe(v: unknown): string {
  if (v === null) return 'null'
  if (Array.isArray(v)) return 'an array'
  return typeof v === 'object' ? 'an object' : `a ${typeof v}`
}

function validateProperties(v: unknown, path: string, out: Violation[]): Record<string, PropertyValue> {
  if (v === undefined || v === null) return {}
  if (!isObject(v)) {
    out.push({ context: path, message: `properties must be an object or null, not ${describe(v)}` })
    return {}
  }
  const props: Record<string, PropertyValue> = {}
  for (const [key, value] of Object.entries(v)) {
    const p = `${path}.${key}`
    if (key === '') {
      out.push({ context: path, message: 'property names must not be empty' })
      continue
    }
    if (value === null) continue // accepted, ignored
    if (typeof value === 'string' || typeof value === 'boolean' || typeof value === 'number') props[key] = value
    else if (Array.isArray(value)) {
      const types = new Set(value.map((x) => (x === null ? 'null' : typeof x)))
      const bad = [...types].filter((t) => t !== 'string' && t !== 'number' && t !== 'boolean')
      if (bad.length > 0) out.push({ context: p, message: `array properties may only hold strings, numbers or booleans (found ${bad.join(', ')})` })
      else if (types.size > 1) out.push({ context: p, message: 'array properties must not mix types' })
      else props[key] = value as Primitive[]
    } else out.push({ context: p, message: `property values must be strings, numbers, booleans, null or arrays of those; found ${describe(value)}` })
  }
  return props
}

function unknownKeys(obj: Record<string, unknown>, allowed: ReadonlySet<string>, path: string, out: Violation[]) {
  for (const k of Object.keys(obj)) if (!allowed.has(k)) out.push({ context: `${path}.${k}`, message: `unknown member "${k}"` })
}

function validKind(v: unknown): v is string {
  return typeof v === 'string' && v.length <= 256 && KIND_PATTERN.test(v)
}

/** `metadata` → source kind (appended to every node's kinds). */
export function parseMetadata(v: unknown, out: Violation[]): string | null {
  if (v === null || v === undefined) return null
  if (!isObject(v)) {
    out.push({ context: 'metadata', message: `metadata must be an object, not ${describe(v)}` })
    return null
  }
  unknownKeys(v, new Set(['source_kind']), 'metadata', out)
  const sk = v.source_kind
  if (sk === undefined || sk === null) return null
  if (!validKind(sk)) {
    out.push({ context: 'metadata.source_kind', message: 'source_kind must be a kind name matching ^[A-Za-z0-9_]+$' })
    return null
  }
  return sk
}

export function normalizeNode(v: unknown, path: string, sourceKind: string | null, ctx: PayloadContext, out: Violation[]): NodeRow | null {
  const before = out.length
  if (!isObject(v)) {
    out.push({ context: path, message: `a node must be an object, not ${describe(v)}` })
    return null
  }
  unknownKeys(v, NODE_KEYS, path, out)
  const id = v.id
  if (typeof id !== 'string' || id.length === 0) out.push({ context: `${path}.id`, message: 'id is required and must be a non-empty string' })
  else if (id.length > MAX_ID_LENGTH) out.push({ context: `${path}.id`, message: `id must be at most ${MAX_ID_LENGTH} characters` })
  const kinds = v.kinds
  if (!Array.isArray(kinds)) out.push({ context: `${path}.kinds`, message: 'kinds is required and must be an array of 1 to 3 kind names' })
  else {
    if (kinds.length < 1 || kinds.length > MAX_KINDS)
      out.push({ context: `${path}.kinds`, message: `kinds must hold 1 to ${MAX_KINDS} kind names (found ${kinds.length})` })
    kinds.forEach((k, i) => {
      if (!validKind(k)) out.push({ context: `${path}.kinds[${i}]`, message: 'kind names must match ^[A-Za-z0-9_]+$' })
    })
    if (new Set(kinds).size !== kinds.length) out.push({ context: `${path}.kinds`, message: 'kinds must not repeat' })
  }
  const props = validateProperties(v.properties, `${path}.properties`, out)
  if (out.length > before) return null
  const ks = [...(kinds as string[])]
  if (sourceKind && !ks.includes(sourceKind)) ks.push(sourceKind)
  return { o: id as string, k: ks[0], ks, p: props, ek: environmentKindOf(ks, ctx.environmentTypes) }
}

function normalizeEnd(v: unknown, path: string, out: Violation[]): { value: string; match: 'id' | 'name'; kind: string | null } | null {
  const before = out.length
  if (!isObject(v)) {
    out.push({ context: path, message: `must be an object {value, match_by, kind}, not ${describe(v)}` })
    return null
  }
  unknownKeys(v, END_KEYS, path, out)
  if (typeof v.value !== 'string' || v.value.length === 0) out.push({ context: `${path}.value`, message: 'value is required and must be a non-empty string' })
  else if (v.value.length > MAX_ID_LENGTH) out.push({ context: `${path}.value`, message: `value must be at most ${MAX_ID_LENGTH} characters` })
  const mb = v.match_by ?? 'id'
  if (mb !== 'id' && mb !== 'name') out.push({ context: `${path}.match_by`, message: 'match_by must be "id" or "name"' })
  if (v.kind !== undefined && v.kind !== null && !validKind(v.kind)) out.push({ context: `${path}.kind`, message: 'kind must match ^[A-Za-z0-9_]+$' })
  if (out.length > before) return null
  return { value: v.value as string, match: mb as 'id' | 'name', kind: (v.kind as string | undefined) ?? null }
}

export function normalizeEdge(v: unknown, path: string, out: Violation[]): EdgeRow | null {
  const before = out.length
  if (!isObject(v)) {
    out.push({ context: path, message: `an edge must be an object, not ${describe(v)}` })
    return null
  }
  unknownKeys(v, EDGE_KEYS, path, out)
  const start = normalizeEnd(v.start, `${path}.start`, out)
  const end = normalizeEnd(v.end, `${path}.end`, out)
  if (!validKind(v.kind)) out.push({ context: `${path}.kind`, message: 'kind is required and must match ^[A-Za-z0-9_]+$' })
  const props = validateProperties(v.properties, `${path}.properties`, out)
  if (out.length > before || !start || !end) return null
  return { s: start.value, sm: start.match, sk: start.kind, t: end.value, tm: end.match, tk: end.kind, k: v.kind as string, p: props }
}

/** The environment a node row reports (for the job's collection record): itself, or its properties. */
export function environmentOfRow(r: NodeRow): string | null {
  if (r.ek) return r.o
  for (const key of ['environmentid', 'domainsid', 'tenantid']) {
    const v = r.p[key]
    if (typeof v === 'string' && v !== '') return v
  }
  return null
}

// ---- whole payloads ------------------------------------------------------------------------------

const KNOWN_TOP_LEVEL = ['metadata', 'graph']

/**
 * What an unknown top-level member means (null: accepted and ignored). BloodHound's reference
 * (cmd/api/src/services/upload/streamdecoder.go) skips every top-level member but `graph`, `meta` and
 * `data`, so collectors add their own: every SpecterOps OpenGraph collector writes `$schema`. We do the
 * same, with two exceptions that would otherwise lose data silently:
 *  - `meta` / `data` next to `graph`: a file mixing the legacy and the OpenGraph format (BloodHound
 *    refuses it too); without `graph` the legacy message explains the format;
 *  - a spelling of `metadata` or `graph` in another case (`Metadata`, `GRAPH`): a typo, never ignored.
 * Inside `graph`, nodes, edges, their ends and `metadata`, unknown members stay violations (a typo there
 * drops an array, a property or a kind).
 */
export function topLevelMemberProblem(key: string, hasGraph: boolean): string | null {
  if (key === 'meta' || key === 'data')
    return hasGraph
      ? `"${key}" belongs to the SharpHound/AzureHound format and cannot be mixed with OpenGraph "graph" in one file`
      : 'legacy SharpHound/AzureHound files are not accepted: send OpenGraph {"metadata", "graph"}'
  const known = KNOWN_TOP_LEVEL.find((k) => k === key.toLowerCase())
  if (known) return `unknown member "${key}" (did you mean "${known}"?)`
  return null
}

export interface PayloadSummary {
  nodes: number
  edges: number
  environments: Set<string>
  /** accepted but suspicious (a collector's meta.count that disagrees with its data): recorded in the job */
  warnings?: Violation[]
}

/** Thrown by the row generators when a payload that passed validation somehow fails it (never expected). */
export class PayloadChangedError extends Error {}

/**
 * A file with none of `graph`, `meta`, `data`: name both formats, since whoever sends it most likely meant one of
 * them (a SharpHound / AzureHound file re-saved without its `meta`, or an OpenGraph file without `graph`).
 */
export const NOT_A_GRAPH_FILE =
  'graph is required: the file is neither OpenGraph ({"graph": {"nodes": [...], "edges": [...]}}) nor SharpHound / AzureHound output ({"meta": {"type": ..., "version": ...}, "data": [...]})'

export class PayloadReader {
  readonly layout: OpenGraphLayout
  readonly sourceKind: string | null
  /** structural violations found while reading the layout and metadata */
  readonly layoutViolations: Violation[] = []

  constructor(
    readonly bytes: Uint8Array,
    readonly ctx: PayloadContext,
  ) {
    this.layout = scanOpenGraph(bytes) // may throw JsonSyntaxError
    const l = this.layout
    const v = this.layoutViolations
    for (const k of l.duplicateKeys) v.push({ context: k, message: `member "${k}" appears more than once` })
    for (const k of l.unknownTopKeys) {
      const problem = topLevelMemberProblem(k, l.hasGraph || l.graphOther !== null)
      if (problem) v.push({ context: k, message: problem })
    }
    for (const k of l.unknownGraphKeys) v.push({ context: `graph.${k}`, message: `unknown member "${k}"` })
    if (!l.hasGraph) v.push({ context: 'graph', message: l.graphOther ? 'graph must be an object' : NOT_A_GRAPH_FILE })
    else if (!l.nodes && !l.edges) v.push({ context: 'graph', message: 'graph must contain nodes and/or edges' })
    for (const [name, span] of [['nodes', l.nodes], ['edges', l.edges]] as const)
      if (span && bytes[span[0]] !== 0x5b) v.push({ context: `graph.${name}`, message: `graph.${name} must be an array` })
    this.sourceKind = l.metadata ? parseMetadata(parseSpan(bytes, l.metadata), v) : null
  }

  private arraySpan(which: 'nodes' | 'edges'): Span | null {
    const s = this.layout[which]
    return s && this.bytes[s[0]] === 0x5b ? s : null
  }

  /**
   * Validates everything; `onViolation` returns false to stop early (cap reached). `keys`, when given,
   * receives each valid node's id and each valid edge's row (to find repeated elements).
   */
  validate(onViolation: (v: Violation) => boolean, keys?: { node(id: string): void; edge(row: EdgeRow): void }): PayloadSummary {
    const summary: PayloadSummary = { nodes: 0, edges: 0, environments: new Set() }
    for (const v of this.layoutViolations) if (!onViolation(v)) return summary
    const out: Violation[] = []
    const flush = () => {
      for (const v of out) if (!onViolation(v)) return false
      out.length = 0
      return true
    }
    const nodes = this.arraySpan('nodes')
    if (nodes) {
      let i = 0
      for (const span of arrayElements(this.bytes, nodes)) {
        const path = `graph.nodes[${i++}]`
        if (span[1] - span[0] > MAX_ELEMENT_BYTES) out.push({ context: path, message: `a node may be at most ${MAX_ELEMENT_BYTES} bytes` })
        else {
          const row = normalizeNode(parseSpan(this.bytes, span), path, this.sourceKind, this.ctx, out)
          if (row) {
            summary.nodes++
            keys?.node(row.o)
            const env = environmentOfRow(row)
            if (env && summary.environments.size < 10_000) summary.environments.add(env)
          }
        }
        if (out.length && !flush()) return summary
      }
    }
    const edges = this.arraySpan('edges')
    if (edges) {
      let i = 0
      for (const span of arrayElements(this.bytes, edges)) {
        const path = `graph.edges[${i++}]`
        if (span[1] - span[0] > MAX_ELEMENT_BYTES) out.push({ context: path, message: `an edge may be at most ${MAX_ELEMENT_BYTES} bytes` })
        else {
          const row = normalizeEdge(parseSpan(this.bytes, span), path, out)
          if (row) {
            summary.edges++
            keys?.edge(row)
          }
        }
        if (out.length && !flush()) return summary
      }
    }
    return summary
  }

  *nodeRows(): Generator<NodeRow> {
    const span = this.arraySpan('nodes')
    if (!span) return
    const out: Violation[] = []
    let i = 0
    for (const s of arrayElements(this.bytes, span)) {
      const row = normalizeNode(parseSpan(this.bytes, s), `graph.nodes[${i++}]`, this.sourceKind, this.ctx, out)
      if (!row) throw new PayloadChangedError(out[0]?.message ?? 'invalid node')
      yield row
    }
  }

  *edgeRows(): Generator<EdgeRow & { index: number }> {
    const span = this.arraySpan('edges')
    if (!span) return
    const out: Violation[] = []
    let i = 0
    for (const s of arrayElements(this.bytes, span)) {
      const index = i++
      const row = normalizeEdge(parseSpan(this.bytes, s), `graph.edges[${index}]`, out)
      if (!row) throw new PayloadChangedError(out[0]?.message ?? 'invalid edge')
      yield { ...row, index }
    }
  }
}
