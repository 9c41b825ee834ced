/**
 * A structural scanner for OpenGraph files that never builds the whole document in memory.
 *
 * Why: `JSON.parse` of a 20 MiB upload would create a full object graph (several times the file size)
 * next to the upload buffer itself; with the 128 MB isolate limit that is too close for comfort. Instead
 * we walk the UTF-8 bytes once to find the top-level members and the spans of every element of
 * `graph.nodes` / `graph.edges`, and `JSON.parse` one element at a time (a few hundred bytes each).
 *
 * Safe on raw UTF-8 because every byte of a multi-byte sequence is ≥ 0x80, so the ASCII structural
 * characters (`{ } [ ] , : "` and `\`) can never be confused with part of a character. The contents of
 * each element (and of `metadata`) are validated by `JSON.parse`; this module validates the structure
 * around them (braces, commas, colons, keys). Syntax errors throw `JsonSyntaxError` with a byte offset.
 *
 * Pure: bytes in, spans out.
 */
import { BACKSLASH, COLON, COMMA, LBRACE, LBRACKET, QUOTE, RBRACE, RBRACKET } from '../json-bytes'

export class JsonSyntaxError extends Error {
  constructor(
    message: string,
    readonly offset: number,
  ) {
    super(`${message} at byte ${offset}`)
    this.name = 'JsonSyntaxError'
  }
}

/** [start, end) byte offsets of one JSON value */
export type Span = readonly [number, number]

export interface OpenGraphLayout {
  /** span of the top-level `metadata` value, if present */
  metadata: Span | null
  /** `graph` present and an object */
  hasGraph: boolean
  /** `graph` present but not an object: its span */
  graphOther: Span | null
  /** span of the `graph.nodes` value (an array when it starts with `[`) */
  nodes: Span | null
  edges: Span | null
  /** top-level keys other than metadata/graph, and graph keys other than nodes/edges */
  unknownTopKeys: string[]
  unknownGraphKeys: string[]
  /** keys that appeared twice */
  duplicateKeys: string[]
}

const WS = new Uint8Array(256)
WS[0x20] = WS[0x09] = WS[0x0a] = WS[0x0d] = 1

const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })

export function decodeUtf8(bytes: Uint8Array, start: number, end: number): string {
  try {
    return decoder.decode(bytes.subarray(start, end))
  } catch {
    throw new JsonSyntaxError('invalid UTF-8', start)
  }
}

function skipWs(b: Uint8Array, i: number): number {
  while (i < b.length && WS[b[i]]) i++
  return i
}

/** `i` at the opening quote; returns the index after the closing quote. */
function skipString(b: Uint8Array, i: number): number {
  const n = b.length
  i++
  while (i < n) {
    const c = b[i]
    if (c === QUOTE) return i + 1
    i += c === BACKSLASH ? 2 : 1
  }
  throw new JsonSyntaxError('unterminated string', n)
}

/** Skips one value starting at `i` (no leading whitespace); returns the index after it. */
export function skipValue(b: Uint8Array, i: number): number {
  const n = b.length
  if (i >= n) throw new JsonSyntaxError('unexpected end of input', n)
  const c = b[i]
  if (c === QUOTE) return skipString(b, i)
  if (c === LBRACE || c === LBRACKET) {
    // Depth counting; bracket *kinds* are checked later by JSON.parse of the element.
    let depth = 0
    while (i < n) {
      const d = b[i]
      if (d === QUOTE) {
        i = skipString(b, i)
        continue
      }
      if (d === LBRACE || d === LBRACKET) depth++
      else if (d === RBRACE || d === RBRACKET) {
        depth--
        if (depth === 0) return i + 1
      }
      i++
    }
    throw new JsonSyntaxError('unterminated object or array', n)
  }
  // Scalar: runs until a structural character or whitespace.
  const start = i
  while (i < n) {
    const d = b[i]
    if (d === COMMA || d === RBRACE || d === RBRACKET || WS[d] || d === COLON) break
    i++
  }
  if (i === start) throw new JsonSyntaxError(`unexpected character '${String.fromCharCode(c)}'`, start)
  return i
}

function parseKey(b: Uint8Array, i: number): [string, number] {
  if (b[i] !== QUOTE) throw new JsonSyntaxError('expected a string key', i)
  const end = skipString(b, i)
  let key: string
  try {
    key = JSON.parse(decodeUtf8(b, i, end)) as string
  } catch (e) {
    if (e instanceof JsonSyntaxError) throw e
    throw new JsonSyntaxError('invalid string key', i)
  }
  return [key, end]
}

/**
 * Walks the members of the object starting at `i` (`{`), calling `member(key, valueStart)` which must
 * return the index after the value. Returns the index after the closing brace.
 */
function walkObject(b: Uint8Array, i: number, member: (key: string, valueStart: number) => number): number {
  if (b[i] !== LBRACE) throw new JsonSyntaxError('expected an object', i)
  i = skipWs(b, i + 1)
  if (b[i] === RBRACE) return i + 1
  for (;;) {
    const [key, afterKey] = parseKey(b, i)
    i = skipWs(b, afterKey)
    if (b[i] !== COLON) throw new JsonSyntaxError("expected ':'", i)
    i = skipWs(b, i + 1)
    i = skipWs(b, member(key, i))
    if (b[i] === COMMA) {
      i = skipWs(b, i + 1)
      continue
    }
    if (b[i] === RBRACE) return i + 1
    throw new JsonSyntaxError("expected ',' or '}'", i)
  }
}

function startOfDocument(b: Uint8Array): number {
  const bom = b.length >= 3 && b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf ? 3 : 0
  return skipWs(b, bom)
}

/** Finds the OpenGraph members. Element contents are not validated here (see `arrayElements`). */
export function scanOpenGraph(b: Uint8Array): OpenGraphLayout {
  const out: OpenGraphLayout = {
    metadata: null,
    hasGraph: false,
    graphOther: null,
    nodes: null,
    edges: null,
    unknownTopKeys: [],
    unknownGraphKeys: [],
    duplicateKeys: [],
  }
  let i = startOfDocument(b)
  if (i >= b.length) throw new JsonSyntaxError('empty document', i)
  if (b[i] !== LBRACE) throw new JsonSyntaxError('the document must be a JSON object', i)
  const seenTop = new Set<string>()
  i = walkObject(b, i, (key, v) => {
    if (seenTop.has(key)) out.duplicateKeys.push(key)
    seenTop.add(key)
    if (key === 'graph' && b[v] === LBRACE) {
      out.hasGraph = true
      out.graphOther = null
      const seenGraph = new Set<string>()
      return walkObject(b, v, (gk, gv) => {
        if (seenGraph.has(gk)) out.duplicateKeys.push(`graph.${gk}`)
        seenGraph.add(gk)
        const end = skipValue(b, gv)
        if (gk === 'nodes') out.nodes = [gv, end]
        else if (gk === 'edges') out.edges = [gv, end]
        else out.unknownGraphKeys.push(gk)
        return end
      })
    }
    const end = skipValue(b, v)
    if (key === 'metadata') out.metadata = [v, end]
    else if (key === 'graph') out.graphOther = [v, end]
    else out.unknownTopKeys.push(key)
    return end
  })
  i = skipWs(b, i)
  if (i < b.length) throw new JsonSyntaxError('unexpected data after the document', i)
  return out
}

/** Yields the span of each element of the array at `span` (which must start with `[`). */
export function* arrayElements(b: Uint8Array, span: Span): Generator<Span> {
  let i = span[0]
  const end = span[1]
  if (b[i] !== LBRACKET) throw new JsonSyntaxError('expected an array', i)
  i = skipWs(b, i + 1)
  if (b[i] === RBRACKET) return
  for (;;) {
    const s = i
    const e = skipValue(b, i)
    if (e > end) throw new JsonSyntaxError('malformed array', s)
    yield [s, e]
    i = skipWs(b, e)
    if (b[i] === COMMA) {
      i = skipWs(b, i + 1)
      continue
    }
    if (b[i] === RBRACKET) return
    throw new JsonSyntaxError("expected ',' or ']'", i)
  }
}

/** `JSON.parse` of one span; syntax errors carry the span's offset. */
export function parseSpan(b: Uint8Array, span: Span): unknown {
  const text = decodeUtf8(b, span[0], span[1])
  try {
    return JSON.parse(text)
  } catch (e) {
    throw new JsonSyntaxError(`invalid JSON value (${(e as Error).message})`, span[0])
  }
}

/**
 * The top-level members of the document (key → value span), in document order, and the keys that
 * appeared more than once (the later span wins). Used to tell formats apart by content
 * (src/collectors/detect.ts) before any of them is parsed.
 */
export function scanTopLevel(b: Uint8Array): { members: Map<string, Span>; duplicateKeys: string[] } {
  const members = new Map<string, Span>()
  const duplicateKeys: string[] = []
  let i = startOfDocument(b)
  if (i >= b.length) throw new JsonSyntaxError('empty document', i)
  if (b[i] !== LBRACE) throw new JsonSyntaxError('the document must be a JSON object', i)
  i = walkObject(b, i, (key, v) => {
    const end = skipValue(b, v)
    if (members.has(key)) duplicateKeys.push(key)
    members.set(key, [v, end])
    return end
  })
  i = skipWs(b, i)
  if (i < b.length) throw new JsonSyntaxError('unexpected data after the document', i)
  return { members, duplicateKeys }
}

/**
 * The first top-level member name of the document that is one of `wanted`, or null. Stops as soon as it
 * finds one: a member's value is only skipped when its name is not wanted, so deciding the format of an
 * OpenGraph file (`metadata`, then `graph`) costs a few bytes, never a walk over `graph`. Syntax errors
 * found on the way throw; the rest of the document is not checked here.
 */
export function firstTopLevelKey(b: Uint8Array, wanted: ReadonlySet<string>): string | null {
  let i = startOfDocument(b)
  if (i >= b.length) throw new JsonSyntaxError('empty document', i)
  if (b[i] !== LBRACE) throw new JsonSyntaxError('the document must be a JSON object', i)
  i = skipWs(b, i + 1)
  if (b[i] === RBRACE) return null
  for (;;) {
    const [key, afterKey] = parseKey(b, i)
    if (wanted.has(key)) return key
    i = skipWs(b, afterKey)
    if (b[i] !== COLON) throw new JsonSyntaxError("expected ':'", i)
    i = skipWs(b, skipValue(b, skipWs(b, i + 1)))
    if (b[i] === COMMA) {
      i = skipWs(b, i + 1)
      continue
    }
    if (b[i] === RBRACE) return null
    throw new JsonSyntaxError("expected ',' or '}'", i)
  }
}
