/**
 * The packed graph loader (analysis.store.ts loadNodesPage / loadEdgesPage, packed.ts, run.ts loadGraph)
 * must build exactly the graph that the rules would build from the node records themselves, whatever
 * the page sizes and however odd the stored property values.
 */
import { env } from 'cloudflare:workers'
import { beforeAll, describe, expect, it } from 'vitest'
import { loadKindCatalog, type KindCatalog } from '../../src/extensions/catalog'
import { allFindingDefs } from '../../src/findings/catalogue'
import { GraphBuilder, nodeInputFromRecord, type AnalysisGraph } from '../../src/findings/graph'
import { kindRules } from '../../src/findings/kinds'
import { loadGraph } from '../../src/findings/run'
import { D, EDGES, ID, NODES, type FixtureEdge, type FixtureNode } from '../fixtures/findings/known-graph'
import { insertGraph } from '../fixtures/findings/helpers'

const db = env.DB

// Property values that a careless reduction in SQL would misread. `tier` says whether the rules make the
// node Tier Zero, `list` which list-finding bits it gets (1 Kerberoasting, 2 AS-REP roasting).
const ODD: (FixtureNode & { tier: boolean; list: number })[] = [
  { objectid: 'ODD-ARRAY-TAGS', kinds: ['User', 'Base'], name: 'a', environment_id: D, properties: { system_tags: ['x', ' admin_tier_0 '] }, tier: true, list: 0 },
  { objectid: 'ODD-OBJECT-TAGS', kinds: ['User', 'Base'], name: 'b', environment_id: D, properties: { system_tags: { t: 'admin_tier_0' } }, tier: false, list: 0 },
  { objectid: 'ODD-NUMBER-TAGS', kinds: ['User'], name: 'c', environment_id: D, properties: { system_tags: 0 }, tier: false, list: 0 },
  { objectid: 'ODD-CANDIDATE-TAG', kinds: ['User'], name: 'd', environment_id: D, properties: { system_tags: 'admin_tier_0_candidate' }, tier: false, list: 0 },
  { objectid: 'ODD-STRING-TRUE', kinds: ['User'], name: 'e', environment_id: D, properties: { isTierZero: 'true', enabled: 'true', hasspn: true }, tier: false, list: 0 },
  { objectid: 'ODD-LOWER-CASE', kinds: ['Computer'], name: 'f', environment_id: D, properties: { istierzero: true }, tier: true, list: 0 },
  { objectid: 'ODD-ONE', kinds: ['User'], name: 'g', environment_id: D, properties: { isTierZero: 1, enabled: 1, hasspn: 1, dontreqpreauth: 1.0 }, tier: true, list: 3 },
  { objectid: 'ODD-STRING-ONE', kinds: ['User'], name: 'h', environment_id: D, properties: { enabled: true, hasspn: '1', dontreqpreauth: [1] }, tier: false, list: 0 },
  { objectid: 'ODD-ROASTABLE', kinds: ['User'], name: 'i', environment_id: D, properties: { enabled: true, hasspn: true, dontreqpreauth: true }, tier: false, list: 3 },
  { objectid: 'ODD-DISABLED', kinds: ['User'], name: 'j', environment_id: D, properties: { enabled: false, hasspn: true }, tier: false, list: 0 },
  // an AZRole whose templateid is not a string: the rule falls back to the object id, which is Global Administrator's
  { objectid: '62E90394-69F5-4237-9190-012177145E10@TENANT-1', kinds: ['AZRole'], name: 'k', environment_id: 'TENANT-1', properties: { templateid: 5 }, tier: true, list: 0 },
  { objectid: 'ROLE-2@TENANT-1', kinds: ['AZRole'], name: 'l', environment_id: 'TENANT-1', properties: { templateid: 'E8611AB8-C189-46E8-94E1-60213AB1F814' }, tier: true, list: 0 },
  { objectid: 'ODD, "QUOTED" \\ ID ☃', kinds: ['Group'], name: 'm', environment_id: D, properties: { name: 'x'.repeat(2000) }, tier: false, list: 0 },
]
const ODD_EDGES: FixtureEdge[] = [
  { start: ODD[12].objectid, end: ID.DA, kind: 'GenericAll' },
  { start: 'ODD-ROASTABLE', end: ODD[12].objectid, kind: 'MemberOf' },
  { start: 'ODD-ROASTABLE', end: 'ODD-LOWER-CASE', kind: 'AdminTo' },
  { start: 'ODD-ROASTABLE', end: 'ODD-ROASTABLE', kind: 'GenericAll' },
  { start: 'ODD-ONE', end: 'ODD-DISABLED', kind: 'NotAKindAnyoneTraverses' },
]

/** The graph as the builder makes it from the node records in insertion (= nodes.id) order. */
function expectedGraph(catalog: KindCatalog, nodes: { id: number; objectid: string; kinds: string[]; environment_id: string | null; environment_kind: string | null; properties: Record<string, unknown> }[], edges: [number, number, string][]): AnalysisGraph {
  const rules = kindRules(catalog)
  const defs = allFindingDefs(catalog)
  const findingKinds = new Set(defs.filter((d) => d.shape === 'relationship' && d.edgeKind).map((d) => d.edgeKind!))
  const b = new GraphBuilder({ isTraversable: (k) => rules.isTraversable(k), findingKinds })
  for (const n of nodes) b.addNode({ ...nodeInputFromRecord(n), environmentKind: n.environment_kind })
  // the loader transfers only the edges that can matter: traversable kinds and finding kinds
  for (const [s, t, k] of edges) if (rules.isTraversable(k) || findingKinds.has(k)) b.addEdge(s, t, k)
  return b.build()
}

function summary(g: AnalysisGraph) {
  return {
    nodeCount: g.nodeCount,
    objectids: g.objectids,
    primaryKind: [...g.primaryKind].map((k) => g.kinds.names[k]),
    kinds: [...g.kindOffsets.subarray(0, -1)].map((o, v) => [...g.kindList.subarray(o, g.kindOffsets[v + 1])].map((k) => g.kinds.names[k])),
    env: [...g.env].map((e) => (e < 0 ? null : g.envs.names[e])),
    tierZero: [...g.tierZero],
    listFlags: [...g.listFlags],
    envNode: [...g.envNode],
    adjacency: [...g.offsets.subarray(0, -1)].map((o, v) => [...g.targets.subarray(o, g.offsets[v + 1])].sort((a, b) => a - b)),
    candidates: g.candidates.map((c) => [c.from, c.to, g.kinds.names[c.kind]]),
    edgeCount: g.edgeCount,
  }
}

describe('the packed graph loader', () => {
  let catalog: KindCatalog
  let expected: ReturnType<typeof summary>

  beforeAll(async () => {
    await insertGraph(db, [...NODES, ...ODD], [...EDGES, ...ODD_EDGES])
    catalog = await loadKindCatalog(db)
    const { results: nodes } = await db
      .prepare(`SELECT id, objectid, kinds, environment_id, environment_kind, properties FROM nodes ORDER BY id`)
      .all<{ id: number; objectid: string; kinds: string; environment_id: string | null; environment_kind: string | null; properties: string }>()
    const edges = await db.prepare(`SELECT start_id, end_id, kind FROM edges ORDER BY id`).raw<[number, number, string]>()
    expect(nodes.length).toBe(NODES.length + ODD.length)
    expect(edges.length).toBe(EDGES.length + ODD_EDGES.length)
    expected = summary(
      expectedGraph(
        catalog,
        nodes.map((n) => ({ ...n, kinds: JSON.parse(n.kinds) as string[], properties: JSON.parse(n.properties) as Record<string, unknown> })),
        edges,
      ),
    )
    expect(expected.edgeCount).toBeLessThan(edges.length) // NotAKindAnyoneTraverses is left out
  })

  it('reads the odd property values as the rules do (the reference graph agrees with the fixture)', () => {
    for (const n of ODD) {
      const v = expected.objectids.indexOf(n.objectid)
      expect([n.objectid, expected.tierZero[v], expected.listFlags[v]]).toEqual([n.objectid, n.tier ? 1 : 0, n.list])
    }
  })

  for (const [nodePage, edgePage] of [
    [1, 1],
    [2, 3],
    [7, 5],
    [1000, 10_000],
  ]) {
    it(`builds the same graph with pages of ${nodePage} nodes and ${edgePage} edges`, async () => {
      const rules = kindRules(catalog)
      const defs = allFindingDefs(catalog)
      const findingKinds = new Set(defs.filter((d) => d.shape === 'relationship' && d.edgeKind).map((d) => d.edgeKind!))
      const g = await loadGraph(db, catalog, rules, findingKinds, nodePage, edgePage)
      const got = summary(g)
      expect(got).toEqual(expected)
      expect(got.candidates.length).toBeGreaterThan(0)
    })
  }
})
