/**
 * The answer's budget (src/cypher/answer.ts): the bytes charged for an answer are exactly the bytes of
 * `JSON.stringify({ data })` in UTF-8, so the serialised answer never exceeds the limit; the per-row charge
 * of run.ts is a lower bound of it; a value repeated beyond the limit is refused while it is counted.
 */
import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { AnswerBudget, ANSWER_LIMITS, stringBytes, utf8Length } from '../../src/cypher/answer'
import { answerPieces, chargeRow, measureAnswer, presentResult } from '../../src/cypher/present'
import { CypherError } from '../../src/cypher/parse'
import { DateTimeVal, NodeRef, PathVal, RelRef, type Value } from '../../src/cypher/values'
import { EDGES, NODES } from './cypher-graph'
import type { GraphCache } from '../../src/cypher/eval'

const utf8 = (s: string) => new TextEncoder().encode(s).length
const serialised = (data: unknown) => utf8(JSON.stringify({ data }))

const graph: GraphCache = {
  node: (id) => NODES.find((n) => n.id === id)!,
  rel: (id) => EDGES.find((e) => e.id === id)!,
}

/** Any text, lone surrogates and control characters included. */
const text = fc.string({ unit: 'binary', maxLength: 40 })
const scalar: fc.Arbitrary<Value> = fc.oneof(
  text,
  fc.double(), // NaN, ±Infinity, -0 too: written as JSON.stringify writes them
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
  fc.integer({ min: -8.64e15, max: 8.64e15 }).map((ms) => new DateTimeVal(ms)),
)
const literal: fc.Arbitrary<Value> = fc.letrec<{ v: Value }>((tie) => ({
  v: fc.oneof({ depthSize: 'small', withCrossShrink: true }, scalar, fc.array(tie('v'), { maxLength: 4 }), fc.dictionary(text, tie('v'), { maxKeys: 4, noNullPrototype: true })),
})).v
const nodeIds = NODES.map((n) => n.id)
const graphValue: fc.Arbitrary<Value> = fc.oneof(
  fc.constantFrom(...nodeIds).map((id) => new NodeRef(id)),
  fc.constantFrom(...EDGES).map((e) => new RelRef(e.id, e.start, e.end, e.kind)),
  fc.constantFrom(...EDGES).map((e) => new PathVal([e.start, e.end], [new RelRef(e.id, e.start, e.end, e.kind)])),
  fc.constantFrom(...nodeIds).map((id) => [new NodeRef(id), 'x'] as Value),
)
const answerRows = fc
  .array(text, { minLength: 1, maxLength: 4 })
  .chain((columns) => fc.tuple(fc.constant(columns), fc.array(fc.array(fc.oneof(literal, graphValue), { minLength: columns.length, maxLength: columns.length }), { maxLength: 8 })))

describe('answer size', () => {
  it('stringBytes is the UTF-8 length of JSON.stringify (escapes, surrogate pairs and lone surrogates)', () => {
    fc.assert(fc.property(fc.string({ unit: 'binary' }), (s) => stringBytes(s) === utf8(JSON.stringify(s))))
    for (const s of ['', '"', '\\', '\u0000', '\b\f\n\r\t', '\u007f', '\u00e9', '\u4e2d', '\ud83d\ude00', '\ud83d', '\ude00x', '\u2028']) expect(stringBytes(s), JSON.stringify(s)).toBe(utf8(JSON.stringify(s)))
  })

  it('what presentResult charges is exactly the serialised answer, with and without properties', () => {
    fc.assert(
      fc.property(answerRows, fc.boolean(), ([columns, rows], props) => {
        const answer = new AnswerBudget({ ...ANSWER_LIMITS, maxBytes: 1e9, maxEntries: 1e9 })
        const data = presentResult(columns, rows, graph, props, answer)
        expect(answer.used.bytes).toBe(serialised(data))
        expect(answer.used.entries).toBe(Object.keys(data.nodes).length + data.edges.length + data.literals.length)
      }),
    )
  })

  it('the streamed answer (route: measureAnswer, then answerPieces) is exactly JSON.stringify of the presented answer, and charged the same', () => {
    fc.assert(
      fc.property(answerRows, fc.boolean(), ([columns, rows], props) => {
        const limits = { ...ANSWER_LIMITS, maxBytes: 1e9, maxEntries: 1e9 }
        const exact = new AnswerBudget(limits)
        const data = presentResult(columns, rows, graph, props, exact)
        const measuring = new AnswerBudget(limits)
        const measured = measureAnswer(columns, rows, graph, props, measuring)
        const text = [...answerPieces(columns, rows, graph, props, measured)].join('')
        expect(text).toBe(JSON.stringify({ data }))
        expect(measured.bytes).toBe(utf8(text))
        expect(measuring.used).toEqual(exact.used)
        expect(measured.entries).toBe(exact.used.entries)
      }),
    )
    // stored ids are random from 2^40 (not array indices: an object keeps them in the order they were added)
    const big = (id: number) => 2 ** 40 + id
    const bigGraph: GraphCache = { node: (id) => ({ ...NODES.find((n) => big(n.id) === id)!, id }), rel: graph.rel }
    const mixed: Value[][] = [...NODES].reverse().map((n, i) => [new NodeRef(i % 2 ? big(n.id) : n.id)])
    const mixedGraph: GraphCache = { node: (id) => (id >= 2 ** 40 ? bigGraph.node(id) : graph.node(id)), rel: graph.rel }
    const measured = measureAnswer(['n'], mixed, mixedGraph, true)
    expect([...answerPieces(['n'], mixed, mixedGraph, true, measured)].join('')).toBe(JSON.stringify({ data: presentResult(['n'], mixed, mixedGraph, true) }))
    // refused by the measuring pass exactly where presenting refuses, before anything is written
    const s = 'x'.repeat(1_000_000)
    expect(() => measureAnswer(['s'], Array.from({ length: 34 }, () => [s]), graph, false)).toThrow(/larger than 32 MiB \(answer size limit\)/)
    expect(measureAnswer(['s'], Array.from({ length: 33 }, () => [s]), graph, false).bytes).toBeLessThanOrEqual(ANSWER_LIMITS.maxBytes)
  })

  it('utf8Length is the UTF-8 length of serialised text (JSON.stringify escapes lone surrogates)', () => {
    fc.assert(fc.property(fc.string({ unit: 'binary' }), (s) => utf8Length(JSON.stringify(s)) === utf8(JSON.stringify(s))))
    for (const s of ['', 'abc', '\u00e9', '\u4e2d', '\ud83d\ude00', '\ud83d', 'x\ude00', '\u007f\u0080\u07ff\u0800\uffff']) expect(utf8Length(JSON.stringify(s)), s).toBe(utf8(JSON.stringify(s)))
  })

  it('nodes presented without properties are serialised once for the first ~2 MiB of them, presented again beyond: the same text', () => {
    // 3,000 nodes of ~1 KB each (names), some repeated: about 3 MB of node text
    const name = (id: number) => `N${id}-${'\u00e9x'.repeat(500)}`
    const many: GraphCache = {
      node: (id) => ({ ...NODES[id % NODES.length], id, objectid: `O-${id}`, name: name(id), properties: { name: name(id), lastseen: '2026-01-03T00:00:00Z' } }),
      rel: graph.rel,
    }
    const rows: Value[][] = Array.from({ length: 3300 }, (_, i) => [new NodeRef(2 ** 40 + (i % 3000))])
    const measured = measureAnswer(['n'], rows, many, false)
    expect(measured.nodeText.size).toBeGreaterThan(1000)
    expect(measured.nodeText.size).toBeLessThan(3000)
    const text = [...answerPieces(['n'], rows, many, false, measured)].join('')
    expect(text).toBe(JSON.stringify({ data: presentResult(['n'], rows, many, false) }))
    expect(measured.bytes).toBe(utf8(text))
  })

  it('the serialised answer never exceeds the byte limit: either it fits or the query is stopped naming the limit', () => {
    fc.assert(
      fc.property(answerRows, fc.boolean(), fc.integer({ min: 40, max: 3000 }), ([columns, rows], props, maxBytes) => {
        let data
        try {
          data = presentResult(columns, rows, graph, props, new AnswerBudget({ ...ANSWER_LIMITS, maxBytes }))
        } catch (e) {
          expect(e).toBeInstanceOf(CypherError)
          expect((e as Error).message).toMatch(/answer (size|entry|depth) limit/)
          const whole = presentResult(columns, rows, graph, props, new AnswerBudget({ ...ANSWER_LIMITS, maxBytes: 1e9 }))
          expect(serialised(whole)).toBeGreaterThan(maxBytes)
          return
        }
        expect(serialised(data)).toBeLessThanOrEqual(maxBytes)
      }),
    )
  })

  it('the per-row charge (run.ts) is a lower bound of the answer: rows refused there make an answer over the limit', () => {
    fc.assert(
      fc.property(answerRows, fc.boolean(), ([columns, rows], props) => {
        const early = new AnswerBudget({ ...ANSWER_LIMITS, maxBytes: 1e9 })
        const seen = new Set<number>()
        for (const r of rows) chargeRow(early, columns, r, seen)
        const exact = new AnswerBudget({ ...ANSWER_LIMITS, maxBytes: 1e9 })
        presentResult(columns, rows, graph, props, exact)
        expect(early.used.bytes).toBeLessThanOrEqual(exact.used.bytes)
        expect(early.used.entries).toBe(exact.used.entries)
      }),
    )
  })

  it('a value repeated beyond the limit is refused while it is counted, after at most the limit in bytes', () => {
    const s = 'x'.repeat(1_000_000)
    const rows: Value[][] = Array.from({ length: 600 }, () => [s])
    const answer = new AnswerBudget()
    expect(() => presentResult(['s'], rows, graph, false, answer)).toThrow(/larger than 32 MiB \(answer size limit\)/)
    expect(answer.used.bytes).toBeLessThanOrEqual(ANSWER_LIMITS.maxBytes + s.length + 2)
    // one list holding the string 600 times: the same, without copying the list first
    expect(() => presentResult(['l'], [[rows.map((r) => r[0])]], graph, false)).toThrow(/answer size limit/)
    // per row as the rows arrive: the 34th row of a million characters is over 32 MiB
    const early = new AnswerBudget()
    let accepted = 0
    expect(() => rows.forEach((r) => (chargeRow(early, ['s'], r, new Set()), accepted++))).toThrow(/answer size limit/)
    expect(accepted).toBe(33)
  })

  it('entries and nesting are bounded too', () => {
    const wide = Array.from({ length: 2000 }, (_, i) => `n.p${i}`)
    const row: Value[] = wide.map(() => null)
    const answer = new AnswerBudget()
    let accepted = 0
    expect(() => {
      for (let i = 0; i < 1000; i++) chargeRow(answer, wide, row, new Set()), accepted++
    }).toThrow(/more than 200000 nodes, edges and literals \(answer entry limit\)/)
    expect(accepted).toBe(100)
    let deep: Value = 1
    for (let i = 0; i < 65; i++) deep = [deep]
    expect(() => presentResult(['d'], [[deep]], graph, false)).toThrow(/more than 64 levels deep \(answer depth limit\)/)
    expect(() => presentResult(['d'], [[(deep as Value[])[0]]], graph, false)).not.toThrow()
  })
})
