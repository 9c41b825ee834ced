import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { allFindingDefs } from '../../src/findings/catalogue'
import { analyse, analyseSteps, severityOf, type AnalysisResult } from '../../src/findings/engine'
import { GraphBuilder, nodeInputFromRecord, type AnalysisGraph } from '../../src/findings/graph'
import { kindRules } from '../../src/findings/kinds'
import { countReaching, countReachingSteps, stronglyConnectedComponents } from '../../src/findings/reach'
import type { KindCatalog } from '../../src/extensions/catalog'
import {
  EDGES,
  EXPECTED_FINDINGS,
  EXPECTED_SPARKLINES,
  KNOWN_CATALOG,
  NODES,
  PRINCIPALS,
  TIER_ZERO,
  type FixtureEdge,
  type FixtureNode,
} from '../fixtures/findings/known-graph'

function build(nodes: FixtureNode[], edges: FixtureEdge[], catalog: KindCatalog): { g: AnalysisGraph; result: AnalysisResult } {
  const rules = kindRules(catalog)
  const defs = allFindingDefs(catalog)
  const findingKinds = new Set(defs.filter((d) => d.edgeKind).map((d) => d.edgeKind!))
  const b = new GraphBuilder({ isTraversable: (k) => rules.isTraversable(k), findingKinds })
  const ids = new Map<string, number>()
  nodes.forEach((n, i) => {
    ids.set(n.objectid, i + 1)
    b.addNode(nodeInputFromRecord({ id: i + 1, objectid: n.objectid, kinds: n.kinds, environment_id: n.environment_id, properties: n.properties }))
  })
  for (const e of edges) b.addEdge(ids.get(e.start)!, ids.get(e.end)!, e.kind)
  const g = b.build()
  return { g, result: analyse(g, rules, defs) }
}

describe('analysis engine: the known-answer graph', () => {
  const { g, result } = build(NODES, EDGES, KNOWN_CATALOG)

  it('marks exactly the expected nodes Tier Zero', () => {
    const t0 = new Set(g.objectids.filter((_, i) => g.tierZero[i] === 1))
    expect([...t0].sort()).toEqual([...TIER_ZERO].sort())
  })

  it('counts the principals of every environment', () => {
    expect(Object.fromEntries(result.principalCounts)).toEqual(PRINCIPALS)
  })

  it('produces every finding with exact metrics, and nothing else', () => {
    const got = result.findings.map((f) => [f.finding, f.environmentId, f.from, f.to, f.impactCount, f.exposureCount, f.severity])
    const want = [...EXPECTED_FINDINGS].sort((a, b) => (a.join('\u0000') < b.join('\u0000') ? -1 : 1))
    got.sort((a, b) => (a.join('\u0000') < b.join('\u0000') ? -1 : 1))
    expect(got).toEqual(want)
    for (const f of result.findings) {
      const p = PRINCIPALS[f.environmentId as keyof typeof PRINCIPALS]
      expect(f.principalCount).toBe(p)
      expect(f.impactPercentage).toBe(f.impactCount / p)
      expect(f.exposurePercentage).toBe(f.exposureCount / p)
      expect(f.shape).toBe(f.to === '' ? 'list' : 'relationship')
      expect(f.relKind).toBe(f.to === '' ? null : f.finding === 'GH_T0AdminOf' ? 'GH_AdminOf' : f.finding.slice(2))
    }
  })

  it('produces the sparkline numbers per environment and type', () => {
    const got = result.sparklines.map((s) => [s.environmentId, s.finding, s.findingCount, s.impactedAssetCount, s.exposureCount, s.compositeRisk])
    expect(got).toEqual(EXPECTED_SPARKLINES)
    for (const s of result.sparklines) expect(s.impactCount).toBe(s.impactedAssetCount)
  })

  it('reports what it loaded', () => {
    expect(result.stats).toMatchObject({ nodes: NODES.length, edges: EDGES.length, environments: 3, principals: 33, findings: EXPECTED_FINDINGS.length })
    // GetChanges and GH_ReadOf are not traversable
    expect(result.stats.traversableEdges).toBe(EDGES.length - 2)
  })

  it('as steps, it pauses between phases and batches and reaches the same result', () => {
    const rules = kindRules(KNOWN_CATALOG)
    const steps = analyseSteps(g, rules, allFindingDefs(KNOWN_CATALOG))
    let pauses = 0
    let r = steps.next()
    while (!r.done) {
      pauses++
      r = steps.next()
    }
    // before the components, after them, and after the (single) batch of reach counting
    expect(pauses).toBe(3)
    expect(r.value).toEqual(result)
  })

  it('without the extension installed, its findings disappear and its kinds stop being traversable', () => {
    const empty: KindCatalog = { nodeKinds: new Set(), relationshipKinds: new Map(), environments: [], relationshipFindings: [], version: '0' }
    const r = build(NODES, EDGES, empty).result
    expect(r.findings.some((f) => f.finding === 'GH_T0AdminOf')).toBe(false)
    expect(r.findings.length).toBe(EXPECTED_FINDINGS.length - 1)
    // the GH organisation has no known principal kinds any more
    expect(r.principalCounts.get('GH-ORG-1')).toBe(0)
  })
})

describe('severity', () => {
  it('uses the issue thresholds on ImpactPercentage', () => {
    expect(severityOf(1)).toBe('critical')
    expect(severityOf(0.95)).toBe('critical')
    expect(severityOf(0.9499)).toBe('high')
    expect(severityOf(0.8)).toBe('high')
    expect(severityOf(0.7999)).toBe('moderate')
    expect(severityOf(0.4)).toBe('moderate')
    expect(severityOf(0.3999)).toBe('low')
    expect(severityOf(0)).toBe('low')
  })
})

/** Oracle: one reverse BFS per item. */
function naiveCounts(n: number, edges: [number, number][], envOf: number[], isPrincipal: boolean[], items: { seeds: number[]; env: number }[]) {
  const rev: number[][] = Array.from({ length: n }, () => [])
  for (const [a, b] of edges) rev[b].push(a)
  return items.map((it) => {
    const seen = new Uint8Array(n)
    const queue = [...it.seeds]
    for (const s of it.seeds) seen[s] = 1
    while (queue.length) {
      const v = queue.pop()!
      for (const u of rev[v]) if (!seen[u]) (seen[u] = 1), queue.push(u)
    }
    let c = 0
    for (let v = 0; v < n; v++) if (seen[v] && isPrincipal[v] && envOf[v] === it.env) c++
    return c
  })
}

describe('reachability counting (SCC + bit-parallel) against one BFS per item', () => {
  it('agrees on random graphs, with cycles, self-loops, several environments and many items', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 60 }).chain((n) =>
          fc.record({
            n: fc.constant(n),
            edges: fc.array(fc.tuple(fc.integer({ min: 0, max: n - 1 }), fc.integer({ min: 0, max: n - 1 })), { maxLength: 200 }),
            envOf: fc.array(fc.integer({ min: 0, max: 2 }), { minLength: n, maxLength: n }),
            isPrincipal: fc.array(fc.boolean(), { minLength: n, maxLength: n }),
            items: fc.array(
              fc.record({ seeds: fc.array(fc.integer({ min: 0, max: n - 1 }), { minLength: 1, maxLength: 4 }), env: fc.integer({ min: 0, max: 2 }) }),
              { maxLength: 300 },
            ),
            maxWords: fc.integer({ min: 1, max: 4 }),
          }),
        ),
        ({ n, edges, envOf, isPrincipal, items }) => {
          const offsets = new Int32Array(n + 1)
          for (const [a] of edges) offsets[a + 1]++
          for (let i = 0; i < n; i++) offsets[i + 1] += offsets[i]
          const fill = offsets.slice(0, n)
          const targets = new Int32Array(edges.length)
          for (const [a, b] of edges) targets[fill[a]++] = b
          const comps = stronglyConnectedComponents({ nodeCount: n, offsets, targets })
          // every edge leaving a component points to an earlier one
          for (const [a, b] of edges) expect(comps.comp[b] <= comps.comp[a]).toBe(true)
          const principalsByEnv = [0, 1, 2].map((e) => Int32Array.from([...Array(n).keys()].filter((v) => isPrincipal[v] && envOf[v] === e)))
          for (const maxWords of [1, 3]) {
            const got = countReaching(comps, principalsByEnv, items, maxWords)
            expect([...got]).toEqual(naiveCounts(n, edges, envOf, isPrincipal, items))
          }
        },
      ),
      { numRuns: 150 },
    )
  })

  it('yields once per batch of 32·W items', () => {
    const offsets = new Int32Array(2)
    const comps = stronglyConnectedComponents({ nodeCount: 1, offsets, targets: new Int32Array(0) })
    const items = Array.from({ length: 100 }, () => ({ seeds: [0], env: 0 }))
    const steps = countReachingSteps(comps, [Int32Array.from([0])], items, 1)
    let pauses = 0
    let r = steps.next()
    while (!r.done) {
      pauses++
      r = steps.next()
    }
    expect(pauses).toBe(4) // 100 items, 32 per batch
    expect([...r.value]).toEqual(new Array(100).fill(1))
  })

  it('handles a long chain without recursion (100 000 nodes)', () => {
    const n = 100_000
    const offsets = new Int32Array(n + 1)
    for (let i = 0; i < n; i++) offsets[i + 1] = i < n - 1 ? i + 1 : n - 1
    const targets = new Int32Array(n - 1)
    for (let i = 0; i < n - 1; i++) targets[i] = i + 1
    const comps = stronglyConnectedComponents({ nodeCount: n, offsets, targets })
    expect(comps.count).toBe(n)
    const all = Int32Array.from({ length: n }, (_, i) => i)
    const counts = countReaching(comps, [all], [
      { seeds: [n - 1], env: 0 },
      { seeds: [0], env: 0 },
      { seeds: [50_000], env: 0 },
    ])
    expect([...counts]).toEqual([n, 1, 50_001])
  })
})
