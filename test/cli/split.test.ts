/**
 * The streaming splitter (src/cli/split.ts) on its own: every chunking of the input gives the same parts,
 * elements come out byte for byte, the header is read wherever it is, and malformed input is an error.
 */
import { describe, expect, it } from 'vitest'
import { halve, partBody, readLayout, splitParts, SplitError, type ChunkSource } from '../../src/cli/split'

const enc = new TextEncoder()
const dec = new TextDecoder()

function chunked(text: string, size: number): ChunkSource {
  const bytes = enc.encode(text)
  return async function* () {
    for (let i = 0; i < bytes.length; i += size) yield bytes.slice(i, i + size)
  }
}

async function split(text: string, size: number, maxBytes = 300, maxElements = 1000) {
  const src = chunked(text, size)
  const layout = await readLayout(src)
  const parts: { array: string; first: number; body: unknown }[] = []
  for await (const p of splitParts(src, layout, { maxBytes, maxElements })) {
    const body = partBody(layout, p)
    expect(body.length).toBeLessThanOrEqual(maxBytes)
    parts.push({ array: p.array, first: p.first, body: JSON.parse(dec.decode(body)) })
  }
  return { layout, parts }
}

// AzureHound writes data first and meta last, with awkward strings inside items
const azure = `\ufeff {"data" : [
  {"kind":"AZUser","data":{"id":"u1","displayName":"a \\"quoted\\" ]} name","tags":[1,[2,{"x":"}"}]]}},
  {"kind":"AZGroup","data":{"id":"g1","description":"caf\u00e9 \u2603 \\\\ back\\\\slash"}},
  {"kind":"AZGroupMember","data":{"groupId":"g1","members":[{"member":{"id":"u1","@odata.type":"#microsoft.graph.user"}}]}},
  7, "bare", null, true
 ] , "meta":{"type":"azure","version":5,"count":7}, "extra": {"k": [1, 2]} }`

describe('streaming splitter', () => {
  it('gives the same parts for every chunk size, elements byte for byte, meta from the end', async () => {
    const expected = JSON.parse(azure.slice(1)).data
    const reference = await split(azure, 1 << 20)
    expect(reference.layout).toMatchObject({ format: 'collector', counts: { data: 7 } })
    expect(JSON.parse(reference.layout.header!)).toEqual({ type: 'azure', version: 5, count: 7 })
    expect(reference.parts.length).toBeGreaterThan(1)
    expect(reference.parts.flatMap((p) => (p.body as { data: unknown[] }).data)).toEqual(expected)
    for (const p of reference.parts) {
      const b = p.body as { meta: { count: number; type: string }; data: unknown[] }
      expect(b.meta).toMatchObject({ type: 'azure', version: 5, count: b.data.length })
    }
    for (const size of [1, 2, 3, 5, 7, 13, 64]) expect((await split(azure, size)).parts).toEqual(reference.parts)
  })

  it('splits OpenGraph nodes before edges, with metadata, whatever their order in the file', async () => {
    const og = JSON.stringify({ graph: { edges: [{ start: { value: 'a' }, end: { value: 'b' }, kind: 'K' }], nodes: [{ id: 'a', kinds: ['X'] }, { id: 'b', kinds: ['X'] }] }, metadata: { source_kind: 'S' }, $schema: 'x' })
    for (const size of [1, 4, 1000]) {
      const { layout, parts } = await split(og, size, 200, 1)
      expect(layout).toMatchObject({ format: 'opengraph', counts: { nodes: 2, edges: 1 } })
      expect(parts.map((p) => [p.array, p.first])).toEqual([['nodes', 0], ['nodes', 1], ['edges', 0]])
      expect(parts[0].body).toEqual({ metadata: { source_kind: 'S' }, graph: { nodes: [{ id: 'a', kinds: ['X'] }] } })
    }
  })

  it('halves a part by elements', async () => {
    const { parts } = await split(azure, 1 << 20, 1 << 20)
    expect(parts).toHaveLength(1)
    const src = chunked(azure, 1 << 20)
    const layout = await readLayout(src)
    for await (const p of splitParts(src, layout, { maxBytes: 1 << 20, maxElements: 100 })) {
      const [a, b] = halve(p)
      expect([a.first, a.elements.length, b.first, b.elements.length]).toEqual([0, 4, 4, 3])
    }
  })

  it('refuses what it cannot split, with a reason', async () => {
    const cases: [string, RegExp][] = [
      ['[1, 2]', /must be a JSON object/],
      ['{"rows": []}', /not a SharpHound\/AzureHound file/],
      ['{"meta": {"type": "users"}, "data": [1, 2', /ends early/],
      ['{"meta": 5, "data": []}', /"meta" must be an object/],
      ['{"graph": {"nodes": []}, "data": []}', /nor an OpenGraph file/],
      ['{"data": [1]} trailing', /unexpected data after the document/],
      ['{"data" [1]}', /expected ':'/],
      ['{"data": [1 2], "meta": {"type": "users"}}', /expected ',' or a closing bracket/],
      ['{"data": [1,,2], "meta": {"type": "users"}}', /unexpected ','/],
      ['{"data": [{"a": 1,}], "meta": {"type": "users"}}', /expected an object key/],
      ['{"data": [{"a" 1}], "meta": {"type": "users"}}', /expected ':'/],
      ['{"data": [1], "meta": {"type": "users"}]', /unexpected '\]'/],
    ]
    for (const [text, message] of cases) {
      const err = await readLayout(chunked(text, 3)).catch((e: unknown) => e)
      expect(err, text).toBeInstanceOf(SplitError)
      expect((err as Error).message, text).toMatch(message)
    }
  })
})
