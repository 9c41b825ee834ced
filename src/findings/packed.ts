/**
 * Parsing of the packed pages the graph loader reads (src/findings/analysis.store.ts): SQL returns a page
 * of the graph as ONE row whose columns are `group_concat` lists of integers ("12,7,3,…") and
 * `json_group_array` lists of strings, instead of one row per node or edge. The isolate then receives a
 * few strings per page instead of thousands of row objects, and the integers are read straight into a
 * reusable Float64Array with a charCodeAt loop (no split(), no string per number). Float64, not Int32:
 * node ids are random 52-bit values (src/graph/ids.ts), exact in a double, as every safe integer is.
 *
 * Pure; unit-tested in test/unit/findings-packed.test.ts.
 */
import type { EdgePage, NodePage } from './analysis.store'
import type { NodeInput } from './graph'

/** Fact bits of a packed node page (the store's SQL computes them): the property is JSON true or the number 1. */
export const NODE_FACT_TIER_ZERO = 1 // isTierZero or istierzero
export const NODE_FACT_ENABLED = 2
export const NODE_FACT_HASSPN = 4
export const NODE_FACT_DONTREQPREAUTH = 8

const COMMA = 44
const MINUS = 45
const ZERO = 48
const NINE = 57

/**
 * Reads the comma-separated decimal integers of `text` into `out` from index 0 and returns how many there
 * were. The empty string (and null, which is what `group_concat` gives for an empty page) holds none.
 * Throws on anything that is not such a list (empty item, other characters), on a value that is not a
 * safe integer (beyond ±(2^53 - 1): a double would round it) and when `out` is too small.
 */
export function parseIntList(text: string | null, out: Float64Array): number {
  if (text === null || text.length === 0) return 0
  let n = 0
  let value = 0
  let digits = 0
  let negative = false
  const len = text.length
  for (let i = 0; i <= len; i++) {
    const c = i < len ? text.charCodeAt(i) : COMMA
    if (c >= ZERO && c <= NINE) {
      value = value * 10 + (c - ZERO)
      digits++
      if (value > Number.MAX_SAFE_INTEGER) throw new Error(`packed integer list: value out of range at ${i}`)
    } else if (c === COMMA) {
      if (digits === 0) throw new Error(`packed integer list: empty item at ${i}`)
      const v = negative ? -value : value
      if (n >= out.length) throw new Error(`packed integer list: more than ${out.length} values`)
      out[n++] = v
      value = 0
      digits = 0
      negative = false
    } else if (c === MINUS && digits === 0 && !negative) {
      negative = true
    } else {
      throw new Error(`packed integer list: unexpected character at ${i}`)
    }
  }
  return n
}

/**
 * A `json_group_array` column: a JSON array of strings and nulls, of exactly `count` items (it must line
 * up with the page's other columns). Null text (an empty page) is an empty array.
 */
export function parseStringList(text: string | null, count: number): (string | null)[] {
  const v: unknown = text === null ? [] : JSON.parse(text)
  if (!Array.isArray(v) || v.length !== count) throw new Error(`packed string list: expected ${count} items`)
  for (const s of v) if (s !== null && typeof s !== 'string') throw new Error('packed string list: not a string')
  return v as (string | null)[]
}

/** A node page's `kinds` column value as a list of kinds: the JSON array's non-empty strings. */
export function parseKindList(text: string | null): string[] {
  if (text === null) return []
  try {
    const v: unknown = JSON.parse(text)
    if (Array.isArray(v)) return v.filter((k): k is string => typeof k === 'string' && k !== '')
  } catch {
    /* not JSON: no kinds */
  }
  return []
}

/**
 * Turns packed node pages (analysis.store.ts `loadNodesPage`) into the NodeInput records the graph builder
 * takes, one at a time. Keeps one parsed kinds list per distinct `kinds` text across pages (a graph has
 * few distinct ones), so nodes share their kinds arrays instead of each holding a copy.
 */
export class NodePageDecoder {
  private readonly kindLists = new Map<string, readonly string[]>()

  decode(page: NodePage, add: (n: NodeInput) => void): void {
    const count = page.count
    const ids = new Float64Array(count)
    const facts = new Float64Array(count)
    if (parseIntList(page.ids, ids) !== count || parseIntList(page.facts, facts) !== count) {
      throw new Error(`packed node page: expected ${count} ids and facts`)
    }
    const objectids = parseStringList(page.objectids, count)
    const kinds = parseStringList(page.kinds, count)
    const kindLists = parseStringList(page.kindLists, count)
    const envIds = parseStringList(page.environmentIds, count)
    const tags = parseStringList(page.systemTags, count)
    const templates = parseStringList(page.templateIds, count)
    const envKinds = parseStringList(page.environmentKinds, count)
    for (let i = 0; i < count; i++) {
      const kind = kinds[i] ?? ''
      const text = kindLists[i] ?? ''
      let list = this.kindLists.get(text)
      if (!list) this.kindLists.set(text, (list = parseKindList(text)))
      const f = facts[i]
      add({
        id: ids[i],
        objectid: objectids[i] ?? '',
        kind,
        // the primary kind alone when the kinds column holds no usable list
        kinds: list.length > 0 ? list : [kind],
        environmentId: envIds[i] || null,
        systemTags: tags[i],
        isTierZero: f & NODE_FACT_TIER_ZERO ? 1 : null,
        enabled: f & NODE_FACT_ENABLED ? 1 : null,
        hasspn: f & NODE_FACT_HASSPN ? 1 : null,
        dontreqpreauth: f & NODE_FACT_DONTREQPREAUTH ? 1 : null,
        templateid: templates[i],
        environmentKind: envKinds[i],
      })
    }
  }
}

/**
 * Feeds one packed edge page (analysis.store.ts `loadEdgesPage`) to `add` edge by edge, with the kind
 * resolved against the kinds list the page was asked for. `scratch` is a reusable buffer of at least
 * 3 × the page size.
 */
export function decodeEdgePage(
  page: EdgePage,
  kinds: readonly string[],
  scratch: Float64Array,
  add: (startId: number, endId: number, kind: string) => void,
): void {
  const n = parseIntList(page.triples, scratch)
  if (n !== page.count * 3) throw new Error(`packed edge page: expected ${page.count} edges`)
  for (let i = 0; i < n; i += 3) {
    const kind = kinds[scratch[i + 2]]
    if (kind === undefined) throw new Error('packed edge page: kind index out of range')
    add(scratch[i], scratch[i + 1], kind)
  }
}
