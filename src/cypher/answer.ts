/**
 * The answer's own budget: what a query may send back, counted while the answer is built, never after.
 *
 * Why it exists. The engine's budgets (budget.ts) count what a query reads and what its expressions build,
 * but an answer can repeat what was built once: `WITH <a string of 1 M characters> AS s UNWIND range(1, 600)
 * AS i RETURN s` builds one string and returns it 600 times (600 MB of JSON: V8 refuses a string that long,
 * and an isolate has 128 MB long before that), and `RETURN n.p0, …, n.p1999` over 20,000 rows is 40 million
 * literals of `null`. So the answer is bounded by itself: bytes of the serialised answer and entries
 * (nodes, edges and literals), charged per returned row as the rows arrive (run.ts: a lower bound, exact for
 * literals, so the rows of a refused answer are never all held) and exactly while the answer is presented
 * (present.ts measureAnswer: every node, edge, literal and key list, by the length JSON.stringify will give it,
 * in UTF-8), all before the first byte of the answer is sent: a streamed answer cannot change its status.
 * The first limit crossed stops the query with a 400 naming it. The presented answer is at most
 * `maxBytes` long when serialised, far below V8's longest string, and no value in it is nested deeper than
 * `maxDepth`, far below what JSON.stringify's recursion allows: serialising it cannot fail.
 *
 * The work of counting is bounded too: a string is charged before it is scanned when even its shortest
 * JSON form would not fit, and every other value costs at least one byte, so counting stops after at most
 * `maxBytes` bytes' worth of values whatever the answer repeats.
 */
import { CypherError } from './parse'
import { DateTimeVal } from './values'
import { limitBytes } from './budget'

export interface AnswerLimits {
  /** bytes of the serialised answer, `{"data":…}` included (UTF-8) */
  maxBytes: number
  /** nodes + edges + literals */
  maxEntries: number
  /** lists and maps inside one another in a returned value (properties included) */
  maxDepth: number
}

/**
 * Sized from measurements (docs/cypher.md "Answer size"). The answer is streamed (present.ts answerStream,
 * after measureAnswer decided every limit): beside the rows and the graph data they refer to (which the
 * memory budget counts, budget.ts), writing it holds a few MiB whatever its size (node, `bench/cypher-answer-
 * memory.ts`: 3.8 MiB for 50,000 users, 11 MiB; 7.1 MiB for 33 MiB), where the whole answer as objects plus
 * its text needed about three times its size, which had kept this limit at 8 MiB. So the byte limit bounds
 * what is sent and its CPU (~70–80 ms per MiB for both passes), not memory: 32 MiB holds every kerberoastable
 * user of a large domain (50,000 plain user nodes are 11 MiB), and the public Query Library's largest
 * answer at 20,000 generated users (27,239 nodes) is 1.7 MB.
 */
export const ANSWER_LIMITS: AnswerLimits = { maxBytes: 32 * 1024 * 1024, maxEntries: 200_000, maxDepth: 64 }

const SAFE_ASCII = /^[\x20\x21\x23-\x5b\x5d-\x7f]*$/

const ASCII = /^[\x00-\x7f]*$/

/**
 * UTF-8 bytes of a string without lone surrogates, such as JSON.stringify's output (which escapes them): for text
 * already serialised, the bytes chargeJson would have counted for its value.
 */
export function utf8Length(s: string): number {
  if (ASCII.test(s)) return s.length
  let n = 0
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c < 0x80) n += 1
    else if (c < 0x800) n += 2
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && s.charCodeAt(i + 1) >= 0xdc00 && s.charCodeAt(i + 1) <= 0xdfff) {
      n += 4
      i++
    } else n += 3
  }
  return n
}

/** Bytes of JSON.stringify(s) in UTF-8 (escapes as JSON.stringify writes them; a lone surrogate as \uXXXX). */
export function stringBytes(s: string): number {
  if (SAFE_ASCII.test(s)) return s.length + 2
  let n = 2
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c < 0x80) {
      if (c === 0x22 || c === 0x5c) n += 2
      else if (c >= 0x20) n += 1
      else n += c === 8 || c === 9 || c === 10 || c === 12 || c === 13 ? 2 : 6
    } else if (c < 0x800) n += 2
    else if (c >= 0xd800 && c <= 0xdbff) {
      const d = i + 1 < s.length ? s.charCodeAt(i + 1) : 0
      if (d >= 0xdc00 && d <= 0xdfff) {
        n += 4
        i++
      } else n += 6
    } else if (c >= 0xdc00 && c <= 0xdfff) n += 6
    else n += 3
  }
  return n
}

/** The ISO text a datetime is answered as (present.ts literalJson); RangeError for an invalid one, as there. */
export function isoOf(v: DateTimeVal): string {
  return new Date(v.ms).toISOString()
}

export class AnswerBudget {
  private bytes = 0
  private entries = 0

  constructor(readonly limits: AnswerLimits = ANSWER_LIMITS) {}

  get used() {
    return { bytes: this.bytes, entries: this.entries }
  }

  /** `n` more bytes of the serialised answer */
  chargeBytes(n: number): void {
    this.bytes += n
    if (this.bytes > this.limits.maxBytes) throw this.tooLarge()
  }

  /** `n` more nodes, edges or literals */
  chargeEntries(n: number): void {
    this.entries += n
    if (this.entries > this.limits.maxEntries)
      throw new CypherError(
        `the query was stopped: its answer would hold more than ${this.limits.maxEntries} nodes, edges and literals (answer entry limit); return fewer rows or columns, or add a LIMIT`,
      )
  }

  private tooLarge(): CypherError {
    return new CypherError(
      `the query was stopped: its answer would be larger than ${limitBytes(this.limits.maxBytes)} (answer size limit); return fewer rows, columns or properties, or add a LIMIT`,
    )
  }

  /** A string: refused before it is scanned when even its shortest form (no escapes) cannot fit. */
  chargeString(s: string): void {
    if (this.bytes + s.length + 2 > this.limits.maxBytes) throw this.tooLarge()
    this.chargeBytes(stringBytes(s))
  }

  /**
   * A value as JSON.stringify writes it: JSON data (stored properties, presented objects) and the engine's
   * scalar values (lists, maps, datetimes as their ISO text; present.ts literalJson). Charged as it is
   * walked, so a value repeated beyond the limit is refused after `maxBytes` bytes' worth of it.
   */
  chargeJson(v: unknown, depth = 0): void {
    if (v === null || v === undefined) return this.chargeBytes(4) // undefined only in lists: `null`
    switch (typeof v) {
      case 'string':
        return this.chargeString(v)
      case 'number':
        return this.chargeBytes(Number.isFinite(v) ? String(v).length : 4)
      case 'boolean':
        return this.chargeBytes(v ? 4 : 5)
      case 'object':
        break
      default:
        return this.chargeBytes(4) // JSON data holds nothing else; `null` as JSON.stringify writes in a list
    }
    if (v instanceof DateTimeVal) return this.chargeString(isoOf(v))
    if (depth >= this.limits.maxDepth)
      throw new CypherError(
        `the query was stopped: its answer would nest lists and maps more than ${this.limits.maxDepth} levels deep (answer depth limit); return less nested values`,
      )
    if (Array.isArray(v)) {
      this.chargeBytes(2 + Math.max(0, v.length - 1))
      for (const x of v) this.chargeJson(x, depth + 1)
      return
    }
    this.chargeBytes(2)
    let first = true
    for (const k of Object.keys(v)) {
      const x = (v as Record<string, unknown>)[k]
      if (x === undefined || typeof x === 'function' || typeof x === 'symbol') continue // left out by JSON.stringify
      this.chargeBytes(first ? 1 : 2) // `:` and `,`
      first = false
      this.chargeString(k)
      this.chargeJson(x, depth + 1)
    }
  }
}
