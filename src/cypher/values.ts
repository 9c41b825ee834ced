/**
 * Runtime values of the engine and Cypher's comparison rules. Pure.
 * Graph values are references (ids); their records live in the run's cache (see eval.ts `Graph`).
 */

export class NodeRef {
  constructor(readonly id: number) {}
}

export class RelRef {
  constructor(
    readonly id: number,
    readonly start: number,
    readonly end: number,
    readonly kind: string,
  ) {}
}

export class PathVal {
  /** nodes in path order; rels[i] joins nodes[i] and nodes[i + 1] (in either stored direction) */
  constructor(
    readonly nodes: number[],
    readonly rels: RelRef[],
  ) {}
}

export class DateTimeVal {
  constructor(readonly ms: number) {}
}

export type Value = null | boolean | number | string | Value[] | NodeRef | RelRef | PathVal | DateTimeVal | { [key: string]: Value }

export type MapValue = { [key: string]: Value }

export function isMap(v: Value): v is MapValue {
  return v !== null && typeof v === 'object' && !Array.isArray(v) && Object.getPrototypeOf(v) === Object.prototype
}

export function isGraphValue(v: Value): boolean {
  return v instanceof NodeRef || v instanceof RelRef || v instanceof PathVal
}

/** A key equal for equal values (DISTINCT, grouping, IN). */
export function keyOf(v: Value): string {
  if (v === null) return 'null'
  if (v instanceof NodeRef) return `n${v.id}`
  if (v instanceof RelRef) return `r${v.id}`
  if (v instanceof PathVal) return `p${v.nodes.join(',')}|${v.rels.map((r) => r.id).join(',')}`
  if (v instanceof DateTimeVal) return `d${v.ms}`
  if (Array.isArray(v)) return `[${v.map(keyOf).join(',')}]`
  if (isMap(v)) return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${keyOf(v[k])}`).join(',')}}`
  if (typeof v === 'number') return `#${v}`
  return JSON.stringify(v)
}

/** Cypher `=`: null when either side is null (or a list holding null decides nothing), else true/false. */
export function equals(a: Value, b: Value): boolean | null {
  if (a === null || b === null) return null
  if (Array.isArray(a) && Array.isArray(b)) {
    if (a.length !== b.length) return false
    let unknown = false
    for (let i = 0; i < a.length; i++) {
      const e = equals(a[i], b[i])
      if (e === false) return false
      if (e === null) unknown = true
    }
    return unknown ? null : true
  }
  if (isMap(a) && isMap(b)) {
    const ka = Object.keys(a)
    if (ka.length !== Object.keys(b).length) return false
    let unknown = false
    for (const k of ka) {
      if (!(k in b)) return false
      const e = equals(a[k], b[k])
      if (e === false) return false
      if (e === null) unknown = true
    }
    return unknown ? null : true
  }
  if (typeof a === 'number' && typeof b === 'number') return a === b
  return keyOf(a) === keyOf(b)
}

/** Cypher `<` family: a number, or null when the two are not comparable. */
export function compare(a: Value, b: Value): number | null {
  if (a === null || b === null) return null
  if (typeof a === 'number' && typeof b === 'number') return a < b ? -1 : a > b ? 1 : 0
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0
  if (typeof a === 'boolean' && typeof b === 'boolean') return Number(a) - Number(b)
  if (a instanceof DateTimeVal && b instanceof DateTimeVal) return a.ms - b.ms
  return null
}

function typeRank(v: Value): number {
  if (isMap(v)) return 0
  if (v instanceof NodeRef) return 1
  if (v instanceof RelRef) return 2
  if (Array.isArray(v)) return 3
  if (v instanceof PathVal) return 4
  if (v instanceof DateTimeVal) return 5
  if (typeof v === 'string') return 6
  if (typeof v === 'boolean') return 7
  if (typeof v === 'number') return 8
  return 9 // null last
}

/** ORDER BY's total order (openCypher): by type, then within a type; null sorts last ascending. */
export function orderCompare(a: Value, b: Value): number {
  const ta = typeRank(a)
  const tb = typeRank(b)
  if (ta !== tb) return ta - tb
  if (a instanceof NodeRef && b instanceof NodeRef) return a.id - b.id
  if (a instanceof RelRef && b instanceof RelRef) return a.id - b.id
  if (Array.isArray(a) && Array.isArray(b)) {
    for (let i = 0; i < Math.min(a.length, b.length); i++) {
      const c = orderCompare(a[i], b[i])
      if (c !== 0) return c
    }
    return a.length - b.length
  }
  const c = compare(a, b)
  if (c !== null) return c
  const ka = keyOf(a)
  const kb = keyOf(b)
  return ka < kb ? -1 : ka > kb ? 1 : 0
}

/** JSON-compatible stored value → engine value */
export function fromJson(v: unknown): Value {
  if (v === undefined || v === null) return null
  if (typeof v === 'boolean' || typeof v === 'number' || typeof v === 'string') return v
  if (Array.isArray(v)) return v.map(fromJson)
  if (typeof v === 'object') {
    const out: MapValue = {}
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) out[k] = fromJson(x)
    return out
  }
  return null
}
