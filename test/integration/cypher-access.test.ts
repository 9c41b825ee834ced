/**
 * Environment access on every Cypher construct, table-driven. Each query runs through the API and D1 twice:
 * as an administrator and as a user who may see CORP only. The expected answers come from the engine run
 * over an in-memory store holding, respectively, the whole graph and only the subgraph the restricted user
 * may see (CORP's nodes and the relationships between them) with no access rule at all: a restricted
 * caller must get exactly the unrestricted answer on its visible subgraph — never a node, relationship,
 * count, path or property key of another environment, and no path through one.
 *
 * The graph is test/unit/cypher-graph.ts plus relationships that lead through other environments:
 *   BOB -GenericWrite-> CAROL (LAB) -AdminTo-> WS1      (the only way from BOB to WS1)
 *   LAB.LOCAL -Contains-> CAROL;  ALICE@CONTOSO.COM (Azure) -SyncedToADUser-> ALICE
 *   DAVE -AddMember-> HELPDESK
 * CAROL also carries a property no CORP node has (`labonly`), so a leaked node would show in `node_keys`.
 */
import { env } from 'cloudflare:workers'
import { beforeAll, describe, expect, it } from 'vitest'
import { adminToken, userWithRole } from '../helpers'
import type { EdgeHoundClient } from '../../src/client'
import { ingest } from '../../src/client/graph'
import { parseCypher } from '../../src/cypher/parse'
import { loadReferenced, runQuery } from '../../src/cypher/run'
import { presentResult, type CypherResult } from '../../src/cypher/present'
import type { EdgeRecord, NodeRecord } from '../../src/cypher/source'
import { CORP, EDGES, memorySource, NODES, TENANT } from '../unit/cypher-graph'

const ingested = (n: NodeRecord): Record<string, unknown> => ({
  ...n.properties,
  ...(n.objectid === 'U-CAROL' ? { labonly: 'x' } : {}),
  ...(n.environment_id === TENANT ? { tenantid: TENANT } : n.kinds[0] === 'Domain' ? {} : { domainsid: n.environment_id }),
})
let ALL_NODES: NodeRecord[] = NODES.map((n) => ({ ...n, properties: ingested(n) }))
const extra: [number, number, string, number][] = [
  [101, 4, 'GenericWrite', 7],
  [102, 7, 'AdminTo', 6],
  [103, 9, 'Contains', 7],
  [104, 8, 'SyncedToADUser', 3],
  [105, 10, 'AddMember', 5],
]
let ALL_EDGES: EdgeRecord[] = [
  ...EDGES,
  ...extra.map(([id, start, kind, end]) => ({ id, start, end, kind, properties: {}, updated_at: '2026-01-02T00:00:00.000Z' })),
]
const visibleIds = new Set(ALL_NODES.filter((n) => n.environment_id === CORP).map((n) => n.id))
let VISIBLE_NODES = ALL_NODES.filter((n) => visibleIds.has(n.id))
let VISIBLE_EDGES = ALL_EDGES.filter((e) => visibleIds.has(e.start) && visibleIds.has(e.end))

const FIXTURE_NODES = ALL_NODES
const oid = (id: number) => FIXTURE_NODES.find((n) => n.id === id)!.objectid

let admin: EdgeHoundClient
let corpOnly: EdgeHoundClient

beforeAll(async () => {
  admin = await adminToken()
  await ingest(admin, {
    graph: {
      nodes: ALL_NODES.map((n) => ({ id: n.objectid, kinds: n.kinds, properties: n.properties })),
      edges: ALL_EDGES.map((e) => ({ start: { value: oid(e.start) }, end: { value: oid(e.end) }, kind: e.kind, properties: e.properties })),
    },
  })
  corpOnly = (await userWithRole('Read-Only', { all_environments: false, environment_access: [CORP] })).client
  // The in-memory graphs take D1's ids: the engine breaks ties (which of equal shortest paths, collect order)
  // by id, and D1's ids are random (src/graph/ids.ts), not the fixture's 1, 2, 3 …
  const rows = await env.DB.prepare(
    `SELECT 'n' AS t, id, objectid AS s, NULL AS k, NULL AS e FROM nodes
     UNION ALL SELECT 'e', e.id, s.objectid, e.kind, t.objectid FROM edges e JOIN nodes s ON s.id = e.start_id JOIN nodes t ON t.id = e.end_id`,
  ).all<{ t: string; id: number; s: string; k: string | null; e: string | null }>()
  const nodeId = new Map(rows.results.filter((r) => r.t === 'n').map((r) => [r.s, r.id]))
  const edgeId = new Map(rows.results.filter((r) => r.t === 'e').map((r) => [`${r.s}|${r.k}|${r.e}`, r.id]))
  const d1 = (id: number) => nodeId.get(oid(id))!
  const nodes = ALL_NODES.map((n) => ({ ...n, id: d1(n.id) }))
  const edges = ALL_EDGES.map((e) => ({ ...e, id: edgeId.get(`${oid(e.start)}|${e.kind}|${oid(e.end)}`)!, start: d1(e.start), end: d1(e.end) }))
  const visible = new Set(nodes.filter((n) => n.environment_id === CORP).map((n) => n.id))
  ALL_NODES = nodes
  ALL_EDGES = edges
  VISIBLE_NODES = nodes.filter((n) => visible.has(n.id))
  VISIBLE_EDGES = edges.filter((e) => visible.has(e.start) && visible.has(e.end))
})

/**
 * An answer with internal ids replaced by object ids (D1's ids are not the in-memory ones): node facts,
 * relationships as "start kind end" (a multiset), literals (a multiset, as JSON), property key lists.
 */
function normalise(status: number, data: CypherResult | null) {
  if (status !== 200 || !data) return { status }
  const byId = new Map(Object.entries(data.nodes).map(([id, n]) => [id, n.objectId]))
  return {
    status,
    nodes: Object.values(data.nodes)
      .map((n) => `${n.objectId} ${n.kind} [${[...n.kinds].sort().join(',')}] t0=${n.isTierZero} owned=${n.isOwnedObject} ${n.label}`)
      .sort(),
    edges: data.edges.map((e) => `${byId.get(e.source)} ${e.kind} ${byId.get(e.target)}`).sort(),
    // lists of strings compared as sets: collect() order follows the scan, i.e. the random ids (src/graph/ids.ts)
    literals: data.literals.map((l) => JSON.stringify(l, (_k, v: unknown) => (Array.isArray(v) && v.every((x) => typeof x === 'string') ? [...v].sort() : v))).sort(),
    node_keys: data.node_keys ?? [],
    edge_keys: data.edge_keys ?? [],
  }
}

async function viaApi(c: EdgeHoundClient, query: string, includeProperties: boolean) {
  const res = await c.raw('POST', '/api/v2/graphs/cypher', { query, include_properties: includeProperties })
  if (res.status >= 500) throw new Error(`${res.status} for ${query}: ${await res.text()}`)
  const body = res.status === 200 ? ((await res.json()) as { data: CypherResult }).data : null
  return normalise(res.status, body)
}

async function inMemory(nodes: NodeRecord[], edges: EdgeRecord[], query: string, includeProperties: boolean) {
  const r = await runQuery(parseCypher(query), memorySource(null, nodes, edges), { now: Date.now() })
  await loadReferenced(r)
  const data = presentResult(r.columns, r.rows, r.ctx.graph, includeProperties)
  const found = Object.keys(data.nodes).length + data.edges.length + data.literals.length > 0
  return normalise(found ? 200 : 404, found ? data : null)
}

// One query per construct; `props` runs it with include_properties.
const CASES: { construct: string; query: string; props?: boolean }[] = [
  { construct: 'node scan', query: 'MATCH (n) RETURN n', props: true },
  { construct: 'label scan (derived Base)', query: 'MATCH (n:Base) RETURN n.objectid AS o' },
  { construct: 'property-map lookup of a hidden node', query: "MATCH (n {objectid: 'U-CAROL'}) RETURN n" },
  { construct: 'WHERE objectid lookup', query: "MATCH (n) WHERE n.objectid IN ['U-CAROL', 'U-BOB', 'AZ-ALICE'] RETURN n" },
  { construct: 'name text condition pushed to the scan', query: "MATCH (n) WHERE n.name ENDS WITH '.LOCAL' RETURN n.name AS x" },
  // CAROL (LAB) passes each of these property tests, which the scan's SQL applies (issue 28)
  { construct: 'property tests pushed to the scan', query: 'MATCH (u:User) WHERE u.enabled = true AND u.pwdlastset IS NULL RETURN u.objectid AS o' },
  { construct: 'property map pushed to the scan', query: 'MATCH (u {enabled: true}) RETURN u', props: true },
  { construct: 'property IN / OR pushed to the scan', query: "MATCH (u) WHERE u.enabled IN [true] OR u.labonly STARTS WITH 'x' RETURN count(u) AS c" },
  // one SQL count over the caller's nodes (issue 28, nodecount.ts)
  { construct: 'node count in the store', query: 'MATCH (u:User) WHERE u.enabled = true RETURN count(u) AS c' },
  { construct: 'node count of every node in the store', query: 'MATCH (n) RETURN count(*) AS c' },
  { construct: 'one hop out', query: "MATCH p = (:User {objectid: 'U-BOB'})-[r]->(m) RETURN p" },
  { construct: 'one hop in', query: "MATCH p = (n)<-[:MemberOf]-(m) RETURN p", props: true },
  { construct: 'undirected, untyped hop', query: "MATCH (a {objectid: 'U-ALICE'})-[r]-(b) RETURN b.objectid AS o, type(r) AS t" },
  { construct: 'relationship scan', query: 'MATCH ()-[r]->() RETURN r', props: true },
  // a single relationship's level joined with its far end in the store (issue 28): CAROL (LAB) is a User
  // and a member of DOMAIN ADMINS, BOB's GenericWrite leads to her, she administers WS1
  { construct: 'one hop, far label joined', query: 'MATCH p = (u:User)-[:MemberOf]->(g:Group) RETURN p', props: true },
  { construct: 'one hop in, several kinds, far label joined', query: 'MATCH (g:Group)<-[:MemberOf|GenericWrite|AddMember]-(u:User) RETURN g.name AS g, u.name AS u' },
  { construct: 'one hop undirected, far label joined', query: 'MATCH (a:User)-[r]-(b:User) RETURN a.objectid AS a, type(r) AS t, b.objectid AS b' },
  { construct: 'one hop, far property test joined', query: "MATCH (b:User)-[:GenericWrite]->(x) WHERE x.labonly = 'x' OR x.enabled = true RETURN b.name AS b" },
  { construct: 'two hops through another environment', query: 'MATCH p = (u:User)-[:GenericWrite]->(x:User)-[:AdminTo]->(c:Computer) RETURN p' },
  { construct: 'one hop from a bound node, far label joined', query: 'MATCH (d:Domain) MATCH (d)-[:Contains]->(x:User) RETURN d.name AS d, x.name AS x' },
  { construct: 'allShortestPaths from a set of users to a group', query: "MATCH p = allShortestPaths((u:User)-[*1..]->(g:Group {objectid: 'S-1-5-21-1-512'})) RETURN p" },
  { construct: 'allShortestPaths from one node to a set', query: "MATCH p = allShortestPaths((b {objectid: 'U-BOB'})-[*1..]->(c)) WHERE c:Computer OR c:Domain RETURN p" },
  { construct: 'NOT r:Kind test', query: 'MATCH (a)-[r]->(b) WHERE NOT r:MemberOf RETURN a.objectid AS a, b.objectid AS b' },
  { construct: 'variable length *1..', query: "MATCH p = (b {objectid: 'U-BOB'})-[*1..]->(m) RETURN p" },
  { construct: 'variable length *0.. undirected', query: "MATCH (b {objectid: 'U-BOB'})-[*0..]-(m) RETURN DISTINCT m.objectid AS o" },
  { construct: 'variable length, both ends scanned', query: 'MATCH p = (u:User)-[*1..3]->(c:Computer) RETURN p' },
  { construct: 'AD_ATTACK_PATHS shortcut', query: 'MATCH p = (u:User)-[:AD_ATTACK_PATHS*1..]->(c:Computer) RETURN p' },
  { construct: 'shortestPath one-to-one', query: "MATCH p = shortestPath((b {objectid: 'U-BOB'})-[*1..]->(c {objectid: 'C-WS1'})) RETURN p" },
  { construct: 'shortestPath reverse', query: "MATCH p = shortestPath((u:User)-[*1..]->(c {objectid: 'C-WS1'})) RETURN p" },
  { construct: 'shortestPath many-to-many', query: 'MATCH p = shortestPath((u:User)-[*1..]->(g:Group)) RETURN p' },
  { construct: 'allShortestPaths', query: "MATCH p = allShortestPaths((b:User)-[*1..]-(c:Computer)) RETURN p" },
  { construct: 'several MATCH clauses', query: "MATCH (d:Domain) MATCH (u:User) RETURN d.name AS d, u.name AS u" },
  { construct: 'cartesian product', query: 'MATCH (a), (b) RETURN count(*) AS c' },
  { construct: 'OPTIONAL MATCH', query: 'MATCH (u:User) OPTIONAL MATCH (u)-[:GenericWrite]->(m) RETURN u.name AS u, m.name AS m' },
  { construct: 'OPTIONAL MATCH returning the node', query: "MATCH (d:Domain) OPTIONAL MATCH (d)-[:Contains]->(x) RETURN d, x" },
  { construct: 'pattern predicate (store existence test)', query: 'MATCH (u:User) WHERE (u)-[:GenericWrite]->() RETURN u.name AS u' },
  { construct: 'pattern predicate on a bound node (batch existence test)', query: 'MATCH (u:User) WITH u WHERE (u)-[:GenericWrite]->() RETURN u.name AS u' },
  { construct: 'negated pattern predicate on a walked node', query: 'MATCH (u:User)-[:MemberOf]->(g) WHERE NOT (g)<-[:AddMember|SyncedToADUser]-() RETURN g.name AS g' },
  { construct: 'negated pattern predicate', query: 'MATCH (n) WHERE NOT (n)-[]-() RETURN n.objectid AS o' },
  { construct: 'pattern predicate with a labelled far end', query: 'MATCH (u) WHERE (u)-[:GenericWrite|SyncedToADUser]->(:User) RETURN u.objectid AS o' },
  { construct: 'variable-length pattern predicate', query: 'MATCH (u:User) WHERE (u)-[*1..3]->(:Computer) RETURN u.name AS u' },
  { construct: 'EXISTS subquery', query: 'MATCH (u) WHERE EXISTS { MATCH (u)-[r]->(x) WHERE x.enabled = true } RETURN u.objectid AS o' },
  { construct: 'count push-down per node', query: 'MATCH (u:User) OPTIONAL MATCH (u)-[r]->(m) RETURN u.name AS u, count(m) AS c' },
  { construct: 'count push-down, incoming, DISTINCT', query: 'MATCH (c)<-[:AdminTo]-(m) RETURN c.name AS c, count(DISTINCT m) AS n' },
  { construct: 'count push-down grouped by a property', query: 'MATCH (g:Group) OPTIONAL MATCH (g)<-[]-(m) RETURN g.name AS g, count(*) AS n' },
  { construct: 'aggregation: count, collect, size', query: 'MATCH (n)-[r]->(m) WITH type(r) AS t, collect(DISTINCT m.objectid) AS ms RETURN t, size(ms) AS k, ms' },
  { construct: 'count of everything', query: 'MATCH (n) RETURN count(n) AS n' },
  { construct: 'collect then UNWIND', query: 'MATCH (n:User) WITH collect(n) AS ns UNWIND ns AS x RETURN x' },
  { construct: 'Tag_Tier_Zero label', query: 'MATCH (n:Tag_Tier_Zero) RETURN n' },
  { construct: "Sentinel's Tier Zero query", query: "match (n) where (n:Tag_Tier_Zero) or coalesce(n.system_tags,'') contains('admin_tier_0') return n", props: true },
  { construct: 'Tag_Owned and paths from owned', query: 'MATCH p = (o:Tag_Owned)-[*1..]->(t) RETURN p' },
  { construct: 'list quantifier over a path', query: "MATCH p = (u:User)-[*1..3]->(c:Computer) WHERE NONE(r IN relationships(p) WHERE type(r) = 'MemberOf') RETURN p" },
  { construct: 'objectid ENDS WITH a Tier Zero RID (partial index)', query: "MATCH (n) WHERE n.objectid ENDS WITH '-512' RETURN n" },
  { construct: 'name STARTS WITH (index range)', query: "MATCH (n) WHERE n.name STARTS WITH 'CAROL' OR n.name STARTS WITH 'BOB' RETURN n.objectid AS o" },
  { construct: 'name STARTS WITH, one condition (index range)', query: "MATCH (n) WHERE n.name STARTS WITH 'CAROL' RETURN n.objectid AS o" },
  { construct: 'objectid STARTS WITH (index range)', query: "MATCH (n) WHERE n.objectid STARTS WITH 'U-' RETURN n.objectid AS o" },
  { construct: 'Tier Zero scan with a name range', query: "MATCH (n:Tag_Tier_Zero) WHERE n.name STARTS WITH 'LAB' RETURN n.name AS n" },
  { construct: 'relationship property pushed to the store', query: 'MATCH (a)-[r]->(b) WHERE r.isprimarygroup = true RETURN a.name AS a, b.name AS b' },
  { construct: 'count push-down with a far-node property', query: 'MATCH (g:Group) OPTIONAL MATCH (g)<-[r]-(m:User {enabled: true}) RETURN g.name AS g, count(r) AS c' },
  { construct: 'count push-down, undirected', query: 'MATCH (g:Group) OPTIONAL MATCH (g)-[r]-(m) RETURN g.name AS g, count(r) AS n' },
  { construct: 'count push-down fused with a first MATCH', query: "MATCH (g {objectid: 'S-1-5-21-1-512'}) MATCH (g)<-[:MemberOf]-(m) RETURN g.name AS g, count(m) AS c" },
  { construct: 'node properties read alone', query: 'MATCH (u:User) RETURN u.name AS n, u.enabled AS e, u.labonly AS l' },
  { construct: 'nodes() / labels() / keys()', query: "MATCH p = (a {objectid: 'U-DAVE'})-[*1..]->(b) RETURN [x IN nodes(p) | x.objectid] AS ns, labels(b) AS l" },
]

describe('environment access on every construct: restricted answer = unrestricted answer on the visible subgraph', () => {
  it.each(CASES)('$construct', async ({ query, props }) => {
    const includeProperties = props === true
    const [adminAnswer, corpAnswer, all, visible] = await Promise.all([
      viaApi(admin, query, includeProperties),
      viaApi(corpOnly, query, includeProperties),
      inMemory(ALL_NODES, ALL_EDGES, query, includeProperties),
      inMemory(VISIBLE_NODES, VISIBLE_EDGES, query, includeProperties),
    ])
    expect(adminAnswer, `administrator: ${query}`).toEqual(all)
    expect(corpAnswer, `CORP only: ${query}`).toEqual(visible)
  })

  it('the table is not vacuous: most constructs answer differently for the two callers', async () => {
    let differ = 0
    for (const { query, props } of CASES) {
      const a = await inMemory(ALL_NODES, ALL_EDGES, query, props === true)
      const v = await inMemory(VISIBLE_NODES, VISIBLE_EDGES, query, props === true)
      if (JSON.stringify(a) !== JSON.stringify(v)) differ++
    }
    expect(differ).toBeGreaterThanOrEqual(CASES.length - 4)
  })
})
