/**
 * Splitting one large collector file into uploads the server accepts (≤ 20 MiB each), as a stream.
 *
 *   SharpHound / AzureHound  {"meta": {...}, "data": [e, ...]}     → {"meta": {..., "count": n}, "data": [n elements]}
 *   OpenGraph                {"metadata", "graph": {"nodes", "edges"}} → {"metadata", "graph": {"nodes": [...]}} parts,
 *                                                                      then {"metadata", "graph": {"edges": [...]}} parts
 *
 * The file is read as a stream of byte chunks (from disk, or inflated from a zip member) and never held
 * whole: at any time the process holds the part being filled (≤ the upload limit) and one chunk.
 *
 * Passes (each reads the stream again, so the order of members in the file does not matter):
 *   1. layout  which format, the small top-level members (`meta`, `metadata`) and element counts;
 *              SharpHound writes `meta` AFTER `data`, so the header of every part is only known here;
 *   2. parts   the elements of `data` (collectors) or `graph.nodes` (OpenGraph), packed into parts;
 *   3. parts   OpenGraph only: the elements of `graph.edges`, after every node part, so that every
 *              edge's ends are already in the graph when it arrives (edges may refer to earlier uploads).
 *
 * The scanner is a byte-level state machine over JSON's grammar (objects, arrays, keys, colons, commas,
 * strings; scalars' characters are left to the server's parser); each element is copied out verbatim, so
 * the server validates exactly what was in the file, and a file whose structure is broken (a missing
 * comma or colon, a truncated end) is refused rather than re-assembled into something it did not say.
 * Safe on raw UTF-8 for the same reason as src/graph/json-scan.ts: multi-byte characters never contain
 * ASCII structural bytes. Malformed JSON is reported with its byte offset; nothing is guessed.
 */
import { BACKSLASH, COLON, COMMA, LBRACE, LBRACKET, QUOTE, RBRACE, RBRACKET } from '../json-bytes'

export type SplitFormat = 'collector' | 'opengraph'

/** The target arrays: collectors' `data`, OpenGraph's `graph.nodes` and `graph.edges`. */
export type ArrayName = 'data' | 'nodes' | 'edges'

export class SplitError extends Error {}

export interface Layout {
  format: SplitFormat
  /** raw JSON of `meta` (collectors) or `metadata` (OpenGraph, may be null) */
  header: string | null
  counts: Record<ArrayName, number>
}

/** One part ready to upload: its JSON body and which elements of which array it holds. */
export interface Part {
  array: ArrayName
  /** index of the first element in the file's array, and how many */
  first: number
  elements: Uint8Array[]
  /** bytes of the source file consumed when this part was completed (for progress) */
  consumed: number
}

const enc = new TextEncoder()
const dec = new TextDecoder()
const MAX_HEADER_BYTES = 1024 * 1024

const isWs = (c: number) => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d

type Role = 'top' | 'graph' | 'target' | 'other'

interface Frame {
  /** object or array */
  obj: boolean
  role: Role
  /** target arrays: which */
  array?: ArrayName
  /**
   * Where the container is in JSON's grammar: objects `key0` (just opened: a key or `}`), `key`, `colon`,
   * `value`, `next` (a `,` or `}`); arrays `val0` (just opened: a value or `]`), `val`, `next`.
   */
  st: 'key0' | 'key' | 'colon' | 'value' | 'next' | 'val0' | 'val'
  key: string | null
}

/**
 * The structural scanner. `onElement(array, bytes)` receives each complete element of a target array;
 * `wantElements` says which arrays' elements to copy (others are only counted). Small top-level values
 * named in `capture` are kept as text in `captured`.
 */
export class JsonSplitScanner {
  private stack: Frame[] = []
  private started = false
  private done = false
  private inString = false
  private escape = false
  private keyBytes: number[] | null = null
  /** a key of an object below `graph` or an element: skipped unread */
  private skippingKey = false
  /** inside a number / true / false / null */
  private inScalar = false
  /** offset of the stream processed so far */
  private offset = 0
  // element being copied: pieces from earlier chunks, and the start in the current chunk
  private elementDepth = -1
  private elementArray: ArrayName | null = null
  private pieces: Uint8Array[] = []
  private segStart = -1
  private scalarElement = false
  // top-level value being captured
  private captureKey: string | null = null
  private captureDepth = -1
  private capturePieces: Uint8Array[] = []
  private captureSize = 0
  private captureSeg = -1
  private captureScalar = false

  readonly counts: Record<ArrayName, number> = { data: 0, nodes: 0, edges: 0 }
  readonly captured = new Map<string, string>()
  readonly topKeys = new Set<string>()

  constructor(
    private readonly wantElements: ReadonlySet<ArrayName>,
    private readonly onElement: (array: ArrayName, bytes: Uint8Array) => void,
    private readonly capture: ReadonlySet<string> = new Set(['meta', 'metadata']),
  ) {}

  private fail(message: string, at: number): never {
    throw new SplitError(`${message} at byte ${at}`)
  }

  private top(): Frame | undefined {
    return this.stack[this.stack.length - 1]
  }

  /** The role of a value starting now, from its container. */
  private roleOf(open: number): { role: Role; array?: ArrayName } {
    const f = this.top()
    if (!f) return { role: 'top' }
    if (f.role === 'top' && f.obj) {
      if (f.key === 'data' && open === LBRACKET) return { role: 'target', array: 'data' }
      if (f.key === 'graph' && open === LBRACE) return { role: 'graph' }
    }
    if (f.role === 'graph' && f.obj && open === LBRACKET && (f.key === 'nodes' || f.key === 'edges')) return { role: 'target', array: f.key }
    return { role: 'other' }
  }

  private startElementIfTarget(i: number, scalar: boolean): void {
    const f = this.top()
    if (f && f.role === 'target' && this.elementDepth < 0) {
      this.elementArray = f.array!
      this.elementDepth = this.stack.length
      this.scalarElement = scalar
      if (this.wantElements.has(f.array!)) this.segStart = i
    }
  }

  private endElement(chunk: Uint8Array, endExclusive: number): void {
    const array = this.elementArray!
    this.counts[array]++
    if (this.segStart >= 0) {
      this.pieces.push(chunk.subarray(this.segStart, endExclusive))
      const bytes = this.pieces.length === 1 ? this.pieces[0].slice() : concat(this.pieces)
      this.pieces = []
      this.segStart = -1
      this.onElement(array, bytes)
    }
    this.elementDepth = -1
    this.elementArray = null
    this.scalarElement = false
  }

  private startCaptureIfWanted(i: number, scalar: boolean): void {
    const f = this.top()
    if (f && f.role === 'top' && f.obj && f.key !== null && this.capture.has(f.key) && this.captureKey === null) {
      this.captureKey = f.key
      this.captureDepth = this.stack.length
      this.captureSeg = i
      this.captureScalar = scalar
      this.capturePieces = []
      this.captureSize = 0
    }
  }

  private endCapture(chunk: Uint8Array, endExclusive: number): void {
    this.capturePieces.push(chunk.subarray(this.captureSeg, endExclusive))
    this.captured.set(this.captureKey!, dec.decode(concat(this.capturePieces)))
    this.captureKey = null
    this.captureSeg = -1
    this.capturePieces = []
  }

  /** A value (scalar or container) ended at `i` (inclusive) in its container: element/capture ends. */
  private valueEnded(chunk: Uint8Array, i: number): void {
    if (this.elementDepth === this.stack.length && this.elementArray) this.endElement(chunk, i + 1)
    if (this.captureKey !== null && this.captureDepth === this.stack.length) this.endCapture(chunk, i + 1)
    const f = this.top()
    if (f && f.obj) f.key = null
  }

  push(chunk: Uint8Array): void {
    if (this.done) {
      for (const c of chunk) if (!isWs(c)) this.fail('unexpected data after the document', this.offset)
      this.offset += chunk.length
      return
    }
    if (this.segStart >= 0) this.segStart = 0
    if (this.captureSeg >= 0) this.captureSeg = 0
    const n = chunk.length
    for (let i = 0; i < n; i++) {
      const c = chunk[i]
      if (this.inString) {
        if (this.escape) this.escape = false
        else if (c === BACKSLASH) this.escape = true
        else if (c === QUOTE) {
          this.inString = false
          if (this.skippingKey) {
            this.skippingKey = false
            continue
          }
          if (this.keyBytes) {
            const f = this.top()!
            let key: string
            try {
              key = JSON.parse(`"${dec.decode(new Uint8Array(this.keyBytes))}"`) as string
            } catch {
              this.fail('invalid object key', this.offset + i)
            }
            f.key = key
            if (f.role === 'top') this.topKeys.add(key)
            this.keyBytes = null
            continue
          }
          // a string value ended
          if (this.scalarElement && this.elementDepth === this.stack.length) this.endElement(chunk, i + 1)
          if (this.captureScalar && this.captureKey !== null && this.captureDepth === this.stack.length) this.endCapture(chunk, i + 1)
          const f = this.top()
          if (f && f.obj) f.key = null
          continue
        }
        if (this.keyBytes) {
          this.keyBytes.push(c)
          if (this.keyBytes.length > 4096) this.fail('object key too long', this.offset + i)
        }
        continue
      }
      if (isWs(c)) {
        this.inScalar = false
        // a bare scalar element ends at whitespace too
        if (this.scalarElement && this.elementDepth === this.stack.length && this.segStart >= 0) this.endScalar(chunk, i)
        continue
      }
      if (!this.started) {
        if (c === 0xef || c === 0xbb || c === 0xbf) continue // BOM
        if (c !== LBRACE) this.fail('the document must be a JSON object', this.offset + i)
        this.started = true
        this.stack.push({ obj: true, role: 'top', st: 'key0', key: null })
        continue
      }
      const f = this.top()
      if (!f) this.fail('unexpected data after the document', this.offset + i)
      const at = this.offset + i
      if (f.obj && (f.st === 'key0' || f.st === 'key')) {
        if (c === QUOTE) {
          this.inString = true
          f.st = 'colon'
          // only the keys of the top-level object and of `graph` matter; others are skipped unread
          if (f.role === 'top' || f.role === 'graph') this.keyBytes = []
          else {
            f.key = ''
            this.skippingKey = true
          }
          continue
        }
        if (c === RBRACE && f.st === 'key0') {
          this.close(chunk, i)
          continue
        }
        this.fail('expected an object key', at)
      }
      if (c !== COMMA && c !== RBRACE && c !== RBRACKET && c !== COLON && this.inScalar) continue // the same scalar
      this.inScalar = false
      switch (c) {
        case COLON:
          if (!f.obj || f.st !== 'colon') this.fail("unexpected ':'", at)
          f.st = 'value'
          continue
        case COMMA:
          if (this.scalarElement && this.elementDepth === this.stack.length) this.endScalar(chunk, i)
          if (this.captureScalar && this.captureKey !== null && this.captureDepth === this.stack.length) this.endCaptureScalar(chunk, i)
          if (f.st !== 'next') this.fail("unexpected ','", at)
          f.st = f.obj ? 'key' : 'val'
          if (f.obj) f.key = null
          continue
        case RBRACE:
        case RBRACKET:
          if (this.scalarElement && this.elementDepth === this.stack.length) this.endScalar(chunk, i)
          if (this.captureScalar && this.captureKey !== null && this.captureDepth === this.stack.length) this.endCaptureScalar(chunk, i)
          if ((c === RBRACE) !== f.obj || (f.st !== 'next' && f.st !== 'val0')) this.fail(`unexpected '${String.fromCharCode(c)}'`, at)
          this.close(chunk, i)
          continue
      }
      // a value starts: only where the grammar expects one
      if (f.obj ? f.st !== 'value' : f.st !== 'val0' && f.st !== 'val') this.fail(f.obj && f.st === 'colon' ? "expected ':'" : "expected ',' or a closing bracket", at)
      switch (c) {
        case LBRACE:
        case LBRACKET: {
          const { role, array } = this.roleOf(c)
          this.startElementIfTarget(i, false)
          this.startCaptureIfWanted(i, false)
          f.st = 'next'
          this.stack.push({ obj: c === LBRACE, role, array, st: c === LBRACE ? 'key0' : 'val0', key: null })
          if (this.stack.length > 512) this.fail('nesting too deep', at)
          continue
        }
        case QUOTE:
          this.startElementIfTarget(i, true)
          this.startCaptureIfWanted(i, true)
          f.st = 'next'
          this.inString = true
          continue
        default:
          // a number, true, false or null (its characters are checked by the server's JSON parser)
          f.st = 'next'
          this.inScalar = true
          this.startElementIfTarget(i, true)
          this.startCaptureIfWanted(i, true)
      }
    }
    if (this.segStart >= 0) {
      this.pieces.push(chunk.slice(this.segStart))
      this.segStart = 0
    }
    if (this.captureSeg >= 0 && this.captureKey !== null) {
      const piece = chunk.slice(this.captureSeg)
      this.captureSize += piece.length
      if (this.captureSize > MAX_HEADER_BYTES) this.fail(`the "${this.captureKey}" member is larger than ${MAX_HEADER_BYTES} bytes`, this.offset)
      this.capturePieces.push(piece)
      this.captureSeg = 0
    }
    this.offset += n
  }

  /** A bare scalar element ends before `i` (a comma, bracket or whitespace). */
  private endScalar(chunk: Uint8Array, i: number): void {
    this.endElement(chunk, i)
  }

  private endCaptureScalar(chunk: Uint8Array, i: number): void {
    this.endCapture(chunk, i)
  }

  private close(chunk: Uint8Array, i: number): void {
    this.stack.pop()
    if (this.stack.length === 0) {
      this.done = true
      return
    }
    this.valueEnded(chunk, i)
  }

  end(): void {
    if (!this.started) this.fail('empty document', this.offset)
    if (!this.done || this.inString) this.fail('the document ends early (truncated?)', this.offset)
  }
}

function concat(parts: Uint8Array[]): Uint8Array {
  let n = 0
  for (const p of parts) n += p.length
  const out = new Uint8Array(n)
  let o = 0
  for (const p of parts) {
    out.set(p, o)
    o += p.length
  }
  return out
}

export type ChunkSource = () => AsyncIterable<Uint8Array>

/** Pass 1: the file's format and header. Throws SplitError when it is neither format. */
export async function readLayout(source: ChunkSource): Promise<Layout> {
  const s = new JsonSplitScanner(new Set(), () => undefined)
  for await (const chunk of source()) s.push(chunk)
  s.end()
  const has = (k: string) => s.topKeys.has(k)
  if (has('graph') && !has('meta') && !has('data')) return { format: 'opengraph', header: s.captured.get('metadata') ?? null, counts: s.counts }
  if (has('data') && has('meta') && !has('graph')) {
    const meta = s.captured.get('meta')!
    let parsed: unknown
    try {
      parsed = JSON.parse(meta)
    } catch {
      throw new SplitError('"meta" is not valid JSON')
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new SplitError('"meta" must be an object')
    return { format: 'collector', header: meta, counts: s.counts }
  }
  throw new SplitError('not a SharpHound/AzureHound file ({"meta": {"type", ...}, "data": [...]}) nor an OpenGraph file ({"graph": {"nodes": [...], "edges": [...]}})')
}

/** The JSON body of a part. */
export function partBody(layout: Layout, part: Pick<Part, 'array' | 'elements'>): Uint8Array {
  let head: string
  if (layout.format === 'collector') {
    const meta = JSON.parse(layout.header!) as Record<string, unknown>
    head = `{"meta":${JSON.stringify({ ...meta, count: part.elements.length })},"data":[`
  } else head = `{${layout.header !== null ? `"metadata":${layout.header},` : ''}"graph":{"${part.array}":[`
  const tail = layout.format === 'collector' ? ']}' : ']}}'
  const pieces: Uint8Array[] = [enc.encode(head)]
  part.elements.forEach((e, i) => {
    if (i > 0) pieces.push(COMMA_BYTES)
    pieces.push(e)
  })
  pieces.push(enc.encode(tail))
  return concat(pieces)
}
const COMMA_BYTES = new Uint8Array([COMMA])

/** Bytes a part's body takes besides its elements (header, brackets), with room for meta.count digits. */
export function partOverhead(layout: Layout, array: ArrayName): number {
  return partBody(layout, { array, elements: [] }).length + 16
}

export interface SplitOptions {
  /** largest body of one upload */
  maxBytes: number
  /** most elements in one part (the server's per-upload element budget, with room for fan-out) */
  maxElements: number
}

/**
 * Passes 2 and 3: yields parts in upload order, each ≤ `maxBytes` and ≤ `maxElements` elements. The
 * caller uploads a part before asking for the next (the async generator waits), so memory stays at one
 * part and one chunk.
 */
export async function* splitParts(source: ChunkSource, layout: Layout, opts: SplitOptions): AsyncGenerator<Part> {
  const passes: ArrayName[][] = layout.format === 'collector' ? [['data']] : [['nodes'], ['edges']]
  for (const arrays of passes) {
    const array = arrays[0]
    const room = opts.maxBytes - partOverhead(layout, array)
    let elements: Uint8Array[] = []
    let size = 0
    let first = 0
    let index = 0
    let consumed = 0
    const ready: Part[] = []
    const scanner = new JsonSplitScanner(new Set(arrays), (_a, bytes) => {
      if (bytes.length > room) throw new SplitError(`${array === 'data' ? 'data' : `graph.${array}`}[${index}] is ${bytes.length} bytes: larger than one upload (${opts.maxBytes} bytes)`)
      if (elements.length > 0 && (size + 1 + bytes.length > room || elements.length >= opts.maxElements)) {
        ready.push({ array, first, elements, consumed })
        first = index
        elements = []
        size = 0
      }
      elements.push(bytes)
      size += bytes.length + (elements.length > 1 ? 1 : 0)
      index++
    })
    for await (const chunk of source()) {
      scanner.push(chunk)
      consumed += chunk.length
      while (ready.length) yield { ...ready.shift()!, consumed }
    }
    scanner.end()
    if (elements.length) yield { array, first, elements, consumed }
  }
}

/** Halves a part (by elements), for a server that refused it as over one of its budgets. */
export function halve(part: Part): [Part, Part] {
  const mid = Math.ceil(part.elements.length / 2)
  return [
    { ...part, elements: part.elements.slice(0, mid) },
    { ...part, first: part.first + mid, elements: part.elements.slice(mid) },
  ]
}
