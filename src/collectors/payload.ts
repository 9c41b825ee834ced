/**
 * What every ingestible payload offers the ingest path (src/graph/ingest.ts), whatever its format:
 * OpenGraph (src/graph/opengraph.ts PayloadReader) or a collector's output (SharpHound, AzureHound, ...).
 *
 *   validate   pass 1: every violation with its JSON path; counts; environments seen
 *   nodeRows   pass 2a: the node rows to stage (the same NodeRow the OpenGraph path produces)
 *   edgeRows   pass 2b: the edge rows to stage
 *
 * A collector payload also yields PLACEHOLDER node rows (`ph: 1`): an object an edge refers to that
 * this file does not describe. The store inserts them only when no node has that object id yet, and
 * otherwise only adds their kind (src/graph/ingest.store.ts), so a relationship is never dropped for
 * an end that arrives later (BloodHound's behaviour), and a real node is never overwritten by one.
 *
 * Pure: bytes in, rows and violations out.
 */
import { arrayElements, parseSpan, type Span } from '../graph/json-scan'
import {
  environmentOfRow,
  MAX_ELEMENT_BYTES,
  type EdgeRow,
  type NodeRow,
  type PayloadContext,
  type PayloadSummary,
  type PropertyValue,
  type Violation,
} from '../graph/opengraph'

export type { EdgeRow, NodeRow, PayloadContext, PayloadSummary, PropertyValue, Violation }

/** A node row as staged; `ph` marks a placeholder (see the top of this file). */
export type StagedNodeRow = NodeRow & { ph?: 1 }

/** Receives the key of each valid element in pass 1, to find elements repeated in an upload (src/graph/repeats.ts). */
export interface ElementKeys {
  node(id: string): void
  edge(row: EdgeRow): void
}

export interface GraphPayload {
  validate(onViolation: (v: Violation) => boolean, keys?: ElementKeys): PayloadSummary
  nodeRows(): Iterable<StagedNodeRow>
  edgeRows(): Iterable<EdgeRow & { index: number }>
}

/** Where a converter writes what one `data` element becomes. */
export interface Emitter {
  /**
   * A node row. `reference`: the row only names an object the file points at (a trusted domain's name),
   * so its environment is not counted as collected by this file.
   */
  node(row: NodeRow, opts?: { reference?: boolean }): void
  /** a relationship between two objects by id; `startKind`/`endKind` give placeholders their kind */
  edge(start: string, startKind: string, end: string, endKind: string, kind: string, props: Record<string, PropertyValue>): void
  /** a malformed entry: reported with its JSON path; nothing of the file is written */
  violation(context: string, message: string): void
}

/** Converts one element of `data` (already parsed) found at JSON path `path` (e.g. `data[3]`). */
export type ElementConverter = (item: unknown, path: string, out: Emitter) => void

/** Thrown by the row generators when a payload that passed validation somehow fails it (never expected). */
export class CollectorPayloadChangedError extends Error {}

const PLACEHOLDER_BASE = 'Base'
const AZURE_PLACEHOLDER_BASE = 'AZBase'

/**
 * A collector file: `{"meta": {...}, "data": [...]}` whose elements one converter turns into rows.
 * Each pass parses one element at a time from the bytes (memory: the upload plus one element).
 */
export class CollectorPayload implements GraphPayload {
  constructor(
    private readonly bytes: Uint8Array,
    /** span of the `data` array (starts with `[`), or null when the header was invalid */
    private readonly data: Span | null,
    private readonly convert: ElementConverter,
    /** violations of the header (meta, data), found by the detection */
    private readonly headerViolations: Violation[],
    /** meta.count when given: validation compares it with the number of elements */
    private readonly declaredCount: number | null = null,
    /** warnings of the header (an unreadable meta.count), found by the detection */
    private readonly headerWarnings: Violation[] = [],
  ) {}

  /** [parsed element, its JSON path, its size in bytes] */
  private *elements(): Generator<[unknown, string, number]> {
    if (!this.data) return
    let i = 0
    for (const span of arrayElements(this.bytes, this.data)) yield [parseSpan(this.bytes, span), `data[${i++}]`, span[1] - span[0]]
  }

  validate(onViolation: (v: Violation) => boolean, keys?: ElementKeys): PayloadSummary {
    const summary: PayloadSummary = { nodes: 0, edges: 0, environments: new Set(), warnings: [...this.headerWarnings] }
    for (const v of this.headerViolations) if (!onViolation(v)) return summary
    if (this.headerViolations.length > 0) return summary
    let stop = false
    // A node's properties come from its element: only an element larger than a row may hold can make one.
    let large = false
    const emit: Emitter = {
      node: (row, opts) => {
        if (large && JSON.stringify(row.p).length > MAX_ELEMENT_BYTES) emit.violation(`node ${row.o}`, `the object's properties exceed ${MAX_ELEMENT_BYTES} bytes`)
        summary.nodes++
        keys?.node(row.o)
        const env = opts?.reference ? null : environmentOfRow(row)
        if (env && summary.environments.size < 10_000) summary.environments.add(env)
      },
      edge: (s, _sk, t, _tk, k) => {
        if (s === '' || t === '') return
        summary.edges++
        keys?.edge({ s, sm: 'id', sk: null, t, tm: 'id', tk: null, k, p: {} })
      },
      violation: (context, message) => {
        if (!stop && !onViolation({ context, message })) stop = true
      },
    }
    let count = 0
    for (const [item, path, size] of this.elements()) {
      count++
      large = size > MAX_ELEMENT_BYTES
      this.convert(item, path, emit)
      if (stop) return summary
    }
    // `meta.count` is advisory. BloodHound's ingest model has no count at all (packages/go/ein: OriginalMetadata is
    // {type, methods, version}), and its own v5 test file `domains.json` declares 5 for 1 element; refusing it lost
    // every relationship of that domain. 0 reads as "not counted" (files written by hand or adapted by tools,
    // BloodHound's v6 test files among them, carry 0 with a non-empty `data`): no warning. Any other disagreement
    // may mean a truncated or edited file: the data is ingested and the job records a warning saying so.
    if (this.declaredCount !== null && this.declaredCount !== 0 && this.declaredCount !== count)
      summary.warnings!.push({
        context: 'meta.count',
        message: `meta.count is ${this.declaredCount} but data holds ${count} element(s): the file may be truncated or edited; its data was ingested as it is (BloodHound does not check the count)`,
      })
    return summary
  }

  *nodeRows(): Generator<StagedNodeRow> {
    const rows: StagedNodeRow[] = []
    // Placeholders already staged (or real nodes already staged) in this file: one row per object id.
    const seen = new Set<string>()
    const placeholder = (id: string, kind: string) => {
      if (seen.has(id)) return
      seen.add(id)
      // Azure objects' base kind is AZBase (BloodHound's azure.Entity), AD objects' Base
      const base = kind.startsWith('AZ') ? AZURE_PLACEHOLDER_BASE : PLACEHOLDER_BASE
      const ks = kind === base ? [base] : [kind, base]
      rows.push({ o: id, k: ks[0], ks, p: {}, ek: null, ph: 1 })
    }
    const emit: Emitter = {
      node: (row) => {
        seen.add(row.o)
        rows.push(row)
      },
      edge: (s, sk, t, tk) => {
        if (s === '' || t === '') return
        placeholder(s, sk)
        placeholder(t, tk)
      },
      violation: (_c, message) => {
        throw new CollectorPayloadChangedError(message)
      },
    }
    for (const [item, path] of this.elements()) {
      this.convert(item, path, emit)
      yield* rows
      rows.length = 0
    }
  }

  *edgeRows(): Generator<EdgeRow & { index: number }> {
    const rows: (EdgeRow & { index: number })[] = []
    let index = 0
    const emit: Emitter = {
      node: () => undefined,
      edge: (s, _sk, t, _tk, k, p) => {
        if (s === '' || t === '') return
        rows.push({ s, sm: 'id', sk: null, t, tm: 'id', tk: null, k, p, index: index++ })
      },
      violation: (_c, message) => {
        throw new CollectorPayloadChangedError(message)
      },
    }
    for (const [item, path] of this.elements()) {
      this.convert(item, path, emit)
      yield* rows
      rows.length = 0
    }
  }
}
