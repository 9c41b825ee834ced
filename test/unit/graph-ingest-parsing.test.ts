import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { zipSync, strToU8 } from 'fflate'
import { arrayElements, JsonSyntaxError, parseSpan, scanOpenGraph } from '../../src/graph/json-scan'
import { normalizeEdge, normalizeNode, parseMetadata, PayloadReader, environmentOfRow, type Violation } from '../../src/graph/opengraph'
import { JsonArrayChunker, uploadParts, utf8Length } from '../../src/graph/upload'

const enc = (s: string) => new TextEncoder().encode(s)
const ENV = new Map([
  ['Domain', 'active-directory'],
  ['AZTenant', 'azure'],
  ['GL_Instance', 'GitLab'],
])

describe('json-scan', () => {
  it('finds metadata, graph.nodes and graph.edges in any order, with BOM and whitespace', () => {
    const text = '\uFEFF \n{"graph": {"edges": [ ], "nodes": [ {"id":"a"} , {"id":"b \\" ] } ["}]}, "metadata": {"source_kind": "X"}}  \n'
    const b = enc(text)
    const l = scanOpenGraph(b)
    expect(l.hasGraph).toBe(true)
    expect(parseSpan(b, l.metadata!)).toEqual({ source_kind: 'X' })
    expect([...arrayElements(b, l.nodes!)].map((s) => parseSpan(b, s))).toEqual([{ id: 'a' }, { id: 'b " ] } [' }])
    expect([...arrayElements(b, l.edges!)]).toEqual([])
  })

  it('reports unknown and duplicate keys without failing', () => {
    const l = scanOpenGraph(enc('{"graph": {"nodes": [], "x": 1, "nodes": []}, "meta": {}, "graph2": 3}'))
    expect(l.unknownTopKeys).toEqual(['meta', 'graph2'])
    expect(l.unknownGraphKeys).toEqual(['x'])
    expect(l.duplicateKeys).toEqual(['graph.nodes'])
  })

  it('throws JsonSyntaxError with a byte offset on malformed structure', () => {
    for (const bad of ['', '   ', '[1]', '{"graph": {}', '{"graph" {}}', '{"a": 1,}', '{"a": 1} x', '{"graph": {"nodes": [1 2]}}', '{"a": "unterminated}']) {
      expect(() => {
        const b = enc(bad)
        const l = scanOpenGraph(b)
        if (l.nodes) [...arrayElements(b, l.nodes)]
      }, bad).toThrow(JsonSyntaxError)
    }
    const b = enc('{"graph": {"nodes": [{"id": tru}]}}')
    const span = [...arrayElements(b, scanOpenGraph(b).nodes!)][0]
    expect(() => parseSpan(b, span)).toThrow(/invalid JSON value .* at byte 21/)
  })

  it('element spans parse to exactly what JSON.parse sees (property test)', () => {
    fc.assert(
      fc.property(fc.array(fc.jsonValue(), { maxLength: 20 }), fc.array(fc.jsonValue(), { maxLength: 5 }), (nodes, edges) => {
        const text = JSON.stringify({ metadata: { source_kind: 'S' }, graph: { nodes, edges } }, null, nodes.length % 2 ? 2 : undefined)
        const b = enc(text)
        const l = scanOpenGraph(b)
        const parsed = JSON.parse(text) as { graph: { nodes: unknown[]; edges: unknown[] } }
        expect([...arrayElements(b, l.nodes!)].map((s) => parseSpan(b, s))).toEqual(parsed.graph.nodes)
        expect([...arrayElements(b, l.edges!)].map((s) => parseSpan(b, s))).toEqual(parsed.graph.edges)
      }),
      { numRuns: 300 },
    )
  })
})

describe('opengraph rules', () => {
  const node = (v: unknown, source: string | null = null) => {
    const out: Violation[] = []
    return { row: normalizeNode(v, 'graph.nodes[0]', source, { environmentTypes: ENV }, out), out }
  }

  it('normalises a node: primary kind, source kind appended once, nulls ignored, environment kind', () => {
    expect(node({ id: 'S-1', kinds: ['User', 'Base'], properties: { name: 'A', n: 1, tags: ['x', 'y'], gone: null } }, 'SH').row).toEqual({
      o: 'S-1',
      k: 'User',
      ks: ['User', 'Base', 'SH'],
      p: { name: 'A', n: 1, tags: ['x', 'y'] },
      ek: null,
    })
    expect(node({ id: 'D', kinds: ['Base', 'Domain'] }, 'Base').row).toMatchObject({ ks: ['Base', 'Domain'], ek: 'Domain' })
    expect(node({ id: 'G', kinds: ['GL_Instance'], properties: null }).row).toMatchObject({ ek: 'GL_Instance', p: {} })
  })

  it('reports every node violation with its path', () => {
    const { row, out } = node({ id: 5, kinds: ['A', 'A', 'b-c', 'D'], properties: { o: {}, m: [1, 'x'], n: [null], '': 1 }, z: 1 })
    expect(row).toBeNull()
    expect(out.map((v) => v.context)).toEqual([
      'graph.nodes[0].z',
      'graph.nodes[0].id',
      'graph.nodes[0].kinds',
      'graph.nodes[0].kinds[2]',
      'graph.nodes[0].kinds',
      'graph.nodes[0].properties.o',
      'graph.nodes[0].properties.m',
      'graph.nodes[0].properties.n',
      'graph.nodes[0].properties',
    ])
    expect(node({ id: 'x'.repeat(1025), kinds: ['A'] }).out[0].message).toContain('at most 1024')
    expect(node({ kinds: [] }).out.map((v) => v.message)).toEqual(['id is required and must be a non-empty string', 'kinds must hold 1 to 3 kind names (found 0)'])
  })

  it('normalises edges (match_by defaults to id) and reports violations', () => {
    const out: Violation[] = []
    expect(normalizeEdge({ start: { value: 'a' }, end: { value: 'B', match_by: 'name', kind: 'User' }, kind: 'MemberOf' }, 'e', out)).toEqual({
      s: 'a', sm: 'id', sk: null, t: 'B', tm: 'name', tk: 'User', k: 'MemberOf', p: {},
    })
    expect(out).toEqual([])
    normalizeEdge({ start: 'a', end: { value: '', match_by: 'sid', kind: 'x y', q: 1 }, kind: 'a-b', properties: [] }, 'e', out)
    expect(out.map((v) => v.context)).toEqual(['e.start', 'e.end.q', 'e.end.value', 'e.end.match_by', 'e.end.kind', 'e.kind', 'e.properties'])
  })

  it('metadata: only source_kind, a valid kind name', () => {
    const out: Violation[] = []
    expect(parseMetadata({ source_kind: 'GitLab' }, out)).toBe('GitLab')
    expect(parseMetadata({ source_kind: null }, out)).toBeNull()
    expect(out).toEqual([])
    parseMetadata({ source_kind: 'a b', other: 1 }, out)
    expect(out.map((v) => v.context)).toEqual(['metadata.other', 'metadata.source_kind'])
  })

  it('environment of a row: itself when an environment, else environmentid, domainsid, tenantid', () => {
    const row = (p: Record<string, string>, ek: string | null = null) => environmentOfRow({ o: 'me', k: 'X', ks: ['X'], p, ek })
    expect(row({}, 'Domain')).toBe('me')
    expect(row({ domainsid: 'D', tenantid: 'T', environmentid: 'E' })).toBe('E')
    expect(row({ domainsid: 'D', tenantid: 'T' })).toBe('D')
    expect(row({ tenantid: 'T' })).toBe('T')
    expect(row({ domainsid: '' })).toBeNull()
  })

  it('PayloadReader validates whole payloads and stops at the caller’s cap', () => {
    const r = new PayloadReader(enc(JSON.stringify({ graph: { nodes: [{ id: '', kinds: ['A'] }, { id: '', kinds: ['A'] }, { id: 'ok', kinds: ['A'] }] } })), { environmentTypes: ENV })
    const seen: Violation[] = []
    r.validate((v) => (seen.push(v), seen.length < 1))
    expect(seen).toHaveLength(1)
    const all: Violation[] = []
    const summary = r.validate((v) => (all.push(v), true))
    expect(all.map((v) => v.context)).toEqual(['graph.nodes[0].id', 'graph.nodes[1].id'])
    expect(summary.nodes).toBe(1)
  })
})

describe('upload helpers', () => {
  it('utf8Length equals the encoded length (property test)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), (s) => {
        expect(utf8Length(s)).toBe(enc(s).length)
      }),
      { numRuns: 500 },
    )
    expect(utf8Length('é€😀a')).toBe(2 + 3 + 4 + 1)
  })

  it('JsonArrayChunker keeps every chunk within its byte budget and loses nothing', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ unit: 'grapheme', maxLength: 60 }), { maxLength: 200 }), fc.integer({ min: 70, max: 400 }), (values, max) => {
        const chunker = new JsonArrayChunker<number>(max)
        const chunks: { json: string; meta: number[] }[] = []
        values.forEach((v, i) => {
          const done = chunker.push(JSON.stringify(v), i)
          if (done) chunks.push(done)
        })
        const last = chunker.flush()
        if (last) chunks.push(last)
        const back = chunks.flatMap((c) => JSON.parse(c.json) as string[])
        expect(back).toEqual(values)
        expect(chunks.flatMap((c) => c.meta)).toEqual(values.map((_, i) => i))
        for (const c of chunks) if ((JSON.parse(c.json) as unknown[]).length > 1) expect(enc(c.json).length).toBeLessThanOrEqual(max)
      }),
      { numRuns: 200 },
    )
  })

  it('zip members are listed without inflating, then inflated one at a time', () => {
    const zip = zipSync({ 'a.json': strToU8('{"graph":{"nodes":[]}}'), 'dir/': new Uint8Array(0), 'dir/b.json': strToU8('{}') })
    const parts = uploadParts(zip, 'application/zip', 'upload.zip')
    expect(parts.map((p) => [p.name, p.member])).toEqual([
      ['a.json', true],
      ['dir/b.json', true],
    ])
    expect(new TextDecoder().decode(parts[1].load())).toBe('{}')
    expect(uploadParts(enc('{}'), 'application/json', 'x.json').map((p) => p.name)).toEqual(['x.json'])
  })

  // Declared sizes, zip bombs and the other upload budgets: test/unit/graph-upload-budgets.test.ts
})
