/// <reference types="node" />
/**
 * The generator and the path helpers (pure code the benchmark's figures rest on). Run with
 * `node --import tsx --test bench/test/*.test.ts` (part of `npm run bench:smoke`).
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import {
  bfsPath,
  buildCsr,
  EDGE_KINDS,
  GLOBAL_ADMIN_TEMPLATE,
  generateGraph,
  graphFingerprint,
  LARGE_FILE_ID_PREFIX,
  largeFilePayload,
  openGraphDocument,
  openGraphPayloads,
  prng,
} from '../lib/generate'
import { bfsDistances, choosePairs, pathLength } from '../lib/paths'

describe('generateGraph', () => {
  it('is deterministic: same size and seed give the same graph, another seed a different one', () => {
    const a = generateGraph({ edges: 5000 })
    const b = generateGraph({ edges: 5000 })
    const c = generateGraph({ edges: 5000, seed: 8 })
    assert.equal(graphFingerprint(a), graphFingerprint(b))
    assert.notEqual(graphFingerprint(a), graphFingerprint(c))
    assert.deepEqual(openGraphDocument(a), openGraphDocument(b))
  })

  for (const edges of [1500, 10_000, 60_000]) {
    it(`makes exactly ${edges} unique, loop-free edges between existing nodes`, () => {
      const g = generateGraph({ edges })
      assert.equal(g.edgeCount, edges)
      // nodes = edges / 10; tiny graphs get a few more (every domain keeps its well-known principals)
      if (edges >= 10_000) assert.equal(g.nodes.length, edges / 10)
      else assert.ok(g.nodes.length >= Math.max(120, Math.round(edges / 10)) && g.nodes.length <= edges / 10 + 20)
      const seen = new Set<string>()
      for (let i = 0; i < g.edgeCount; i++) {
        const s = g.edgeStart[i], e = g.edgeEnd[i]
        assert.ok(s >= 0 && s < g.nodes.length && e >= 0 && e < g.nodes.length)
        assert.notEqual(s, e)
        const k = `${s}/${g.edgeKind[i]}/${e}`
        assert.ok(!seen.has(k), `duplicate edge ${k}`)
        seen.add(k)
      }
      assert.equal(new Set(g.nodes.map((n) => n.objectid)).size, g.nodes.length, 'object ids are unique')
    })
  }

  it('has the AD well-known principals, an Azure tenant with Tier Zero roles, and connected Tier Zero paths', () => {
    const g = generateGraph({ edges: 20_000 })
    const ids = new Set(g.nodes.map((n) => n.objectid))
    for (const d of g.domains) {
      for (const rid of [500, 512, 513, 515, 516]) assert.ok(ids.has(`${d.sid}-${rid}`), `${d.name} -${rid}`)
      assert.ok(ids.has(`${d.name}-S-1-5-32-544`))
    }
    assert.ok(ids.has(`${g.domains[0].sid}-519`), 'Enterprise Admins in the forest root')
    const ga = g.nodes.find((n) => n.kinds[0] === 'AZRole' && n.properties.templateid === GLOBAL_ADMIN_TEMPLATE)
    assert.ok(ga)
    assert.equal(ga.objectid, `${GLOBAL_ADMIN_TEMPLATE}@${g.tenant.id}`.toUpperCase())
    assert.ok(g.tierZeroPaths.length >= 5)
    const csr = buildCsr(g)
    const prev = new Int32Array(g.nodes.length), q = new Int32Array(g.nodes.length)
    for (const p of g.tierZeroPaths) {
      const found = bfsPath(csr, p.nodes[0], p.nodes[p.nodes.length - 1], prev, q)
      assert.ok(found, p.name)
      assert.ok(found.length <= p.nodes.length, `${p.name}: BFS finds a path at most as long as the designed one`)
    }
  })

  it('writes OpenGraph (§8.2): nodes first, then edges by id, kinds ≤ 3, flat primitive properties, files within the limit', () => {
    const g = generateGraph({ edges: 7000 })
    const files = [...openGraphPayloads(g, 2000)]
    let nodes = 0, edges = 0, seenEdges = false
    for (const f of files) {
      const doc = JSON.parse(f.text) as { graph: { nodes: { id: string; kinds: string[]; properties: Record<string, unknown> }[]; edges: { start: { value: string }; end: { value: string }; kind: string }[] } }
      assert.ok(doc.graph.nodes.length + doc.graph.edges.length <= 2000)
      if (doc.graph.nodes.length) assert.ok(!seenEdges, 'no node file after an edge file')
      if (doc.graph.edges.length) seenEdges = true
      for (const n of doc.graph.nodes) {
        assert.ok(n.kinds.length >= 1 && n.kinds.length <= 3)
        assert.equal(n.properties.objectid, n.id)
        assert.equal(typeof n.properties.name, 'string')
        for (const v of Object.values(n.properties)) assert.ok(['string', 'number', 'boolean'].includes(typeof v))
      }
      for (const e of doc.graph.edges) {
        assert.match(e.kind, /^[A-Za-z0-9_]+$/)
        assert.ok((EDGE_KINDS as readonly string[]).includes(e.kind))
      }
      nodes += doc.graph.nodes.length
      edges += doc.graph.edges.length
    }
    assert.equal(nodes, g.nodes.length)
    assert.equal(edges, g.edgeCount)
  })

  it('refuses a budget smaller than the node count', () => {
    assert.throws(() => generateGraph({ edges: 100, nodes: 500 }), /too few/)
  })
})

describe('prng', () => {
  it('repeats for a seed and stays in [0, 1)', () => {
    const a = prng(42), b = prng(42)
    for (let i = 0; i < 1000; i++) {
      const x = a()
      assert.equal(x, b())
      assert.ok(x >= 0 && x < 1)
    }
  })
})

describe('pairs and path checking', () => {
  const g = generateGraph({ edges: 12_000 })
  const csr = buildCsr(g)
  const dist = new Int32Array(g.nodes.length), queue = new Int32Array(g.nodes.length)

  it('chooses connected pairs that are connected and unreachable pairs that are not, deterministically', () => {
    const { reach, unreach } = choosePairs(g, csr, 30, 10)
    assert.equal(reach.length, 30)
    assert.equal(unreach.length, 10)
    for (const [s, t] of reach) {
      bfsDistances(csr, s, dist, queue)
      assert.ok(dist[t] >= 1)
    }
    for (const [s, t] of unreach) {
      bfsDistances(csr, s, dist, queue)
      assert.equal(dist[t], -1)
    }
    assert.deepEqual(choosePairs(g, csr, 30, 10), { reach, unreach })
  })

  it('bfsPath agrees with the BFS distances', () => {
    const prev = new Int32Array(g.nodes.length)
    for (const [s, t] of choosePairs(g, csr, 20, 0).reach) {
      bfsDistances(csr, s, dist, queue)
      const p = bfsPath(csr, s, t, prev, new Int32Array(g.nodes.length))
      assert.ok(p)
      assert.equal(p.length - 1, dist[t])
    }
  })

  it('pathLength measures the shortest start→end distance inside an all-shortest-paths answer', () => {
    const node = (objectId: string) => ({ objectId, label: objectId, kind: 'User' })
    // two shortest paths of length 2 (A→B→D, A→C→D): 4 edges, length 2
    const answer = {
      data: {
        nodes: { '1': node('A'), '2': node('B'), '3': node('C'), '4': node('d') },
        edges: [
          { source: '1', target: '2' },
          { source: '1', target: '3' },
          { source: '2', target: '4' },
          { source: '3', target: '4' },
        ],
      },
    }
    assert.equal(pathLength(answer, 'A', 'D'), 2)
    assert.equal(pathLength(answer, 'D', 'A'), -1, 'edges are directed')
    assert.equal(pathLength(answer, 'A', 'Z'), -1)
    assert.equal(pathLength(null, 'A', 'D'), -1)
  })
})

describe('largeFilePayload (the one-large-file ingest case)', () => {
  const MiB = 2 ** 20
  it('fills the byte budget without passing it, ASCII only, and is valid OpenGraph with the counts it claims', () => {
    for (const maxBytes of [MiB, 20 * MiB]) {
      const p = largeFilePayload({ maxBytes })
      assert.equal(Buffer.byteLength(p.text, 'utf8'), p.bytes, 'characters = bytes')
      assert.ok(p.bytes <= maxBytes, `${p.bytes} ≤ ${maxBytes}`)
      assert.ok(p.bytes >= maxBytes - 1024, `${p.bytes} within 1 KiB of ${maxBytes}`)
      const doc = JSON.parse(p.text) as { graph: { nodes: { id: string; kinds: string[] }[]; edges: { start: { value: string }; end: { value: string }; kind: string }[] } }
      assert.equal(doc.graph.nodes.length, p.nodes)
      assert.equal(doc.graph.edges.length, p.edges)
      assert.ok(p.edges > 4 * p.nodes, 'mostly edges, as collected data is')
      const ids = new Set(doc.graph.nodes.map((n) => n.id))
      assert.equal(ids.size, p.nodes, 'node ids are unique')
      const triples = new Set<string>()
      for (const e of doc.graph.edges) {
        assert.ok(ids.has(e.start.value) && ids.has(e.end.value), 'every edge end is a node of the file')
        assert.notEqual(e.start.value, e.end.value)
        triples.add(`${e.start.value}|${e.kind}|${e.end.value}`)
      }
      assert.equal(triples.size, p.edges, '(start, kind, end) is unique')
      assert.deepEqual(new Set(doc.graph.nodes.map((n) => n.kinds[0])), new Set(['Domain', 'User', 'Computer', 'Group']))
    }
  })

  it('the 20 MiB file is between 19 and 20 MiB (the upload limit is 20 MiB)', () => {
    const p = largeFilePayload({ maxBytes: 20 * MiB })
    assert.ok(p.bytes >= 19 * MiB && p.bytes <= 20 * MiB)
  })

  it('is deterministic: same size and seed, same text; another seed, another file', () => {
    const a = largeFilePayload({ maxBytes: 256 * 1024 })
    assert.equal(largeFilePayload({ maxBytes: 256 * 1024 }).text, a.text)
    assert.notEqual(largeFilePayload({ maxBytes: 256 * 1024, seed: 12 }).text, a.text)
  })

  it('never collides with the ids of a generated graph', () => {
    const g = generateGraph({ edges: 20_000 })
    assert.ok(g.nodes.every((n) => !n.objectid.startsWith(LARGE_FILE_ID_PREFIX)))
    const doc = JSON.parse(largeFilePayload({ maxBytes: MiB }).text) as { graph: { nodes: { id: string }[] } }
    const graphIds = new Set(g.nodes.map((n) => n.objectid))
    for (const n of doc.graph.nodes) {
      assert.ok(n.id.startsWith(LARGE_FILE_ID_PREFIX))
      assert.ok(!graphIds.has(n.id))
    }
  })
})
