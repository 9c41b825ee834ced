/**
 * The D1 store's shortcuts give the engine's answers: each query runs through the API and D1 (count push-down,
 * relationship conditions in SQL, node properties read alone, STARTS WITH index ranges, the Tier Zero partial
 * index) and through the engine over the in-memory store with count push-down off; the answers must be equal.
 * The graph is test/unit/cypher-graph.ts plus nodes and relationships chosen for the edge cases: JSON types
 * that are not the literal's (1 and 'true' for true), names with `%`, `_`, non-ASCII and lower case, a local
 * principal with a Tier Zero RID suffix (not Tier Zero), an AZRole whose template id is upper case, system_tags
 * stored as an array, a self-loop.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { adminToken } from '../helpers'
import type { EdgeHoundClient } from '../../src/client'
import { ingest } from '../../src/client/graph'
import { CypherError, parseCypher } from '../../src/cypher/parse'
import { loadReferenced, runQuery } from '../../src/cypher/run'
import { presentResult, type CypherResult } from '../../src/cypher/present'
import { EDGES as E0, memorySource, NODES as N0, TENANT, CORP } from '../unit/cypher-graph'
import { env } from 'cloudflare:workers'
import { d1GraphSource } from '../../src/cypher/cypher.store'
import { nodePropertyKeys } from '../../src/cypher/needs'
import { NodeRef, PathVal, RelRef } from '../../src/cypher/values'
import type { NodeCountTest } from '../../src/cypher/source'
const mk = (id: number, objectid: string, kinds: string[], name: string, p: Record<string, unknown>) => ({ id, objectid, kind: kinds[0], kinds, name, environment_id: CORP, properties: { name, ...p }, updated_at: '2026-01-01T00:00:00.000Z' })
// Xd nodes also labelled Xe (one in another environment): an Xe end has clearly fewer nodes than an Xd end, so
// with a relationship condition the walk starts at the Xe end (match.ts smallerEnd), the one-hop join too
const XE = ['B', 'I1', 'L1', 'TA']
const NODES = [...N0,
  mk(50, 'u-lower', ['User'], 'ÉVE_%@CORP.LOCAL', { enabled: 1 }),
  mk(51, 'U-EVE2', ['User'], 'eve@corp.local', { enabled: 'true' }),
  mk(52, 'U-Zed', ['User'], 'Zed_x@CORP.LOCAL', { enabled: true, isTierZero: false }),
  mk(53, 'S-1-5-21-1-1000-512', ['User', 'ADLocalUser'], 'LOCAL-512', { enabled: true }),
  mk(54, 'AZR', ['AZRole'], 'ROLE', { templateid: '62E90394-69F5-4237-9190-012177145E10' }),
  mk(55, 'SYS', ['Group'], 'TAGGED', { system_tags: ['admin_tier_0'] }),
  // property tests pushed into the scan (issue 28): the same key with every JSON type, null and missing
  mk(56, 'P-TRUE', ['User'], 'P-TRUE', { hasspn: true, ok: true, flag: true, pwdlastset: 1_500, title: 'Éve admin' }),
  mk(57, 'P-ONE', ['User'], 'P-ONE', { hasspn: 1, ok: false, flag: 1, pwdlastset: 1.5, title: 'adm' }),
  mk(58, 'P-STR', ['User'], 'P-STR', { hasspn: 'true', ok: null, flag: 'true', pwdlastset: '1000', title: 'ADMIN' }),
  mk(59, 'P-FALSE', ['User'], 'P-FALSE', { hasspn: false, ok: false, flag: false, pwdlastset: -3, title: '' }),
  mk(60, 'P-NULL', ['User'], 'P-NULL', { hasspn: null, pwdlastset: null, title: null }),
  mk(61, 'P-LIST', ['User'], 'P-LIST', { hasspn: [true], pwdlastset: [1000], title: ['admin'] }),
  mk(62, 'P-BIG', ['Computer'], 'P-BIG', { pwdlastset: 9007199254740991, title: 'x\u00e9y%_' }),
  // counts and DISTINCT read from the primary kind (issue 28, exactBranches): a node carrying a label that is not
  // its primary kind, one whose kinds are more than [kind, Base]; the indexed properties (migration 0048) with
  // every JSON type, null, missing, and in another environment
  mk(63, 'K-PERSON', ['Person', 'User'], 'K-PERSON', { enabled: true, hasspn: true, operatingsystem: 'Linux' }),
  mk(64, 'K-SERVER', ['Server', 'Computer'], 'K-SERVER', { operatingsystem: 'Linux', enabled: true }),
  mk(65, 'K-OS1', ['Computer'], 'K-OS1', { operatingsystem: 1, enabled: 'true' }),
  mk(66, 'K-OSNULL', ['Computer'], 'K-OSNULL', { operatingsystem: null, enabled: false }),
  mk(67, 'K-OSTRUE', ['Computer'], 'K-OSTRUE', { operatingsystem: true, enabled: true }),
  { ...mk(68, 'K-AZ', ['Computer'], 'K-AZ', { operatingsystem: 'Plan 9', enabled: true }), environment_id: TENANT },
  // ORDER BY … LIMIT read in order from the store (issue 28, topk.ts): every type ORDER BY ranks, ties, null, missing
  ...(
    [
      ['b', 1], ['a', 2], ['B', 1], ['\u00e9', 2], ['', 1], [true, 2], [false, 1], [10, 2], [-2, 1], [10, 1], [null, 2], [undefined, 1], ['a', 1], ['\ud7ff', 2], [-9007199254740991, 2], [1, 1], [0, 2],
    ] as [unknown, number][]
  ).map(([rank, grp], i) => mk(70 + i, `ORD-${String(i).padStart(2, '0')}`, ['Ord'], `ORD-${i}`, { ...(rank === undefined ? {} : { rank, pwdlastset: rank }), grp })),
  // pwdlastset is read through its order index (migration 0049): the same values, and the label carried by nodes
  // whose primary kind is another (nodes_kinds_extra), tied with ordinary ones
  mk(98, 'K-ORD-A', ['Other', 'Ord'], 'K-ORD-A', { rank: 10, pwdlastset: 10, grp: 1 }),
  mk(99, 'K-ORD-B', ['Ord', 'Other'], 'K-ORD-B', { rank: 'a', pwdlastset: 'a', grp: 2 }),
  // in another environment: a restricted caller never gets it first
  { ...mk(69, 'ORD-T', ['Ord'], 'ORD-T', { rank: '0', pwdlastset: '0', grp: 1 }), environment_id: TENANT },
  // values the store cannot order as the engine does, each next to an ordinary one: the engine sorts
  ...(
    [
      ['REAL', 1.5], ['LIST', [1]], ['PUA', '\ue000'], ['FULLWIDTH', '\uff3a'], ['EMOJI', '\u{1F600}'], ['BIG', 9007199254740992], ['A', 'a'], ['THREE', 3],
    ] as [string, unknown][]
  ).map(([name, rank], i) => mk(90 + i, `ODD-${name}`, ['OrdOdd'], `ODD-${name}`, { rank, pwdlastset: rank })),
  // one-hop WHERE `a.dk <> b.dk` (issue 28, cypher.store.ts differSql): equal and different strings, true vs 1,
  // false vs 0, '1' vs 1, equal reals (kept by the store, dropped by the engine), lists, null, missing, another environment
  ...(
    [['A', 'A'], ['A2', 'A'], ['B', 'B'], ['T', true], ['I1', 1], ['R1', 1.5], ['R2', 1.5], ['N', null], ['M', undefined], ['L1', [1, 2]], ['L2', [1, 2]], ['F', false], ['I0', 0], ['S1', '1'], ['TA', 'A']] as [string, unknown][]
  ).map(([name, dk], i) => ({ ...mk(110 + i, `XD-${name}`, ['Xd', ...(XE.includes(name) ? ['Xe'] : [])], `XD-${name}`, dk === undefined ? {} : { dk }), ...(name === 'TA' ? { environment_id: TENANT } : {}) })),
]
const EDGES = [...E0,
  { id: 50, start: 50, end: 51, kind: 'GenericAll', properties: { isacl: 1 }, updated_at: '2026-01-02T00:00:00.000Z' },
  { id: 51, start: 51, end: 52, kind: 'GenericAll', properties: { isacl: true, lastseen: '2026-03-04T05:06:07.000Z' }, updated_at: '2026-01-02T00:00:00.000Z' },
  { id: 52, start: 52, end: 50, kind: 'GenericAll', properties: { isacl: 'true' }, updated_at: '2026-01-02T00:00:00.000Z' },
  { id: 53, start: 50, end: 50, kind: 'GenericWrite', properties: {}, updated_at: '2026-01-02T00:00:00.000Z' },
  // chains (issue 28): a CORP user reaching CORP's Domain Admins through CAROL (LAB), an Azure user (TENANT) in a CORP group
  { id: 54, start: 3, end: 7, kind: 'GenericAll', properties: {}, updated_at: '2026-01-02T00:00:00.000Z' },
  { id: 55, start: 8, end: 5, kind: 'MemberOf', properties: {}, updated_at: '2026-01-02T00:00:00.000Z' },
  // primary groups (issue 28, match.ts smallerEnd): stored as 1 (SQL's true, not Cypher's), and CAROL's (LAB) in a CORP group
  { id: 56, start: 50, end: 55, kind: 'MemberOf', properties: { isprimarygroup: 1 }, updated_at: '2026-01-02T00:00:00.000Z' },
  { id: 57, start: 7, end: 5, kind: 'MemberOf', properties: { isprimarygroup: true }, updated_at: '2026-01-02T00:00:00.000Z' },
  // between the Xd nodes: each to the nodes 1, 2, 3, 5 and 8 after it (of 15, cyclic), isacl of every kind
  ...Array.from({ length: 15 }, (_, i) => [1, 2, 3, 5, 8].map((d, k) => ({ i, j: (i + d) % 15, k }))).flat().map(({ i, j, k }, n) => ({
    id: 200 + n, start: 110 + i, end: 110 + j, kind: k % 2 ? 'XAce' : 'XRel', properties: [{ isacl: true }, { isacl: 1 }, { isacl: false }, {}, { isacl: true }][(i + k) % 5], updated_at: '2026-01-02T00:00:00.000Z',
  })),
]

let admin: EdgeHoundClient
const oid = (id: number) => NODES.find((n) => n.id === id)!.objectid
const props = (n: (typeof NODES)[number]) => ({ ...n.properties, ...(n.environment_id === TENANT ? { tenantid: TENANT } : n.kinds[0] === 'Domain' ? {} : { domainsid: n.environment_id }) })
beforeAll(async () => {
  admin = await adminToken()
  await ingest(admin, { graph: { nodes: NODES.map((n) => ({ id: n.objectid, kinds: n.kinds, properties: props(n) })), edges: EDGES.map((e) => ({ start: { value: oid(e.start) }, end: { value: oid(e.end) }, kind: e.kind, properties: e.properties })) } })
})
function norm(status: number, data: CypherResult | null) {
  if (status !== 200 || !data) return { status }
  const byId = new Map(Object.entries(data.nodes).map(([id, n]) => [id, n.objectId]))
  return { status, nodes: Object.values(data.nodes).map((n) => `${n.objectId} ${n.isTierZero}`).sort(), edges: data.edges.map((e) => `${byId.get(e.source)} ${e.kind} ${byId.get(e.target)}`).sort(), literals: data.literals.map((l) => JSON.stringify(l)).sort() }
}
/**
 * shortest paths whose ends the store lists as ids (issue 28, match.ts endIds: GraphSource.nodeIds when every
 * condition of the end is exact as nodecount.ts decides it, over the JSON types of the property tests), and ends
 * it cannot list (a derived label, a label test in WHERE, a comparison, STARTS / ENDS WITH on objectid or name):
 * the engine scans those
 */
const SHORTEST_ENDS: [query: string, listed: string[]][] = [
  ['MATCH p = allShortestPaths((u:User)-[*1..]->(g:Group)) WHERE u.hasspn = true OR u.enabled = true RETURN p', ['u', 'g']],
  ["MATCH p = shortestPath((n:Base)-[*1..]->(g:Group)) WHERE g.objectid ENDS WITH '-512' AND n <> g RETURN n.objectid AS n, g.objectid AS g, length(p) AS l", ['n']],
  ['MATCH p = allShortestPaths((u:User {enabled: true})-[*1..]-(x)) WHERE x:Domain OR x:Group RETURN p', ['u']],
  ["MATCH p = allShortestPaths((u:User)-[*1..]->(g:Group {name: 'DOMAIN ADMINS@CORP.LOCAL'})) WHERE u.title IS NOT NULL OR u.name STARTS WITH 'A' RETURN p", ['g']],
  ['MATCH p = shortestPath((n)-[*1..]->(t:Tag_Tier_Zero)) WHERE NOT n:Tag_Tier_Zero RETURN n.objectid AS n, t.objectid AS t, length(p) AS l', []],
  ['MATCH p = allShortestPaths((u:User)-[*1..]->(c:Computer)) WHERE u.pwdlastset < 2000 RETURN p', ['c']],
  ['MATCH p = allShortestPaths((:User {hasspn: true})-[*1..]->(:Group)) RETURN p', ['(anonymous)', '(anonymous)']],
  // CAROL (LAB) is a member of CORP's Domain Admins: for a caller restricted to CORP never an end, not even of a
  // path of length 0 (a longer path from her would also be dropped when its relationships are read: edgesByIds)
  ['MATCH p = allShortestPaths((u:User {enabled: true})-[:MemberOf*1..]->(g:Base)) RETURN p', ['u', 'g']],
  ['MATCH p = allShortestPaths((a:User {enabled: true})-[:MemberOf*0..]->(b:User)) RETURN a.name AS a, b.name AS b, length(p) AS l', ['a', 'b']],
]
/** counts nodecount.ts pushes down: exact in SQL (JSON types 1, 'true', null, missing, lists; non-ASCII; Base; none) */
const COUNTS_PUSHED = [
  'MATCH (u:User) WHERE u.enabled = true RETURN count(u) AS c',
  'MATCH (u:User) WHERE u.hasspn = true AND u.enabled = true RETURN count(u) AS c',
  "MATCH (u:User) WHERE u.hasspn IN [true, 'true', null] RETURN count(*) AS c",
  'MATCH (u:User {ok: false}) RETURN count(u) AS c, count(*) AS s',
  'MATCH (u:User) WHERE u.title IS NULL RETURN count(DISTINCT u) AS c',
  'MATCH (u:User) WHERE u.pwdlastset IS NOT NULL RETURN count(u) AS c',
  "MATCH (n) WHERE n.title STARTS WITH 'É' OR n.title ENDS WITH 'min' RETURN count(n) AS c",
  "MATCH (n) WHERE n.title CONTAINS '%_' RETURN count(n) AS c",
  "MATCH (n:Base) WHERE n.objectid = 'P-TRUE' RETURN count(n) AS c",
  'MATCH (n:Base) RETURN count(n) AS c',
  'MATCH (n:User:ADLocalUser) RETURN count(n) AS c',
  'MATCH (n) RETURN count(*) AS c',
  "MATCH (u:User) WHERE u.name = 'P-ONE' AND u.ok = true RETURN count(u) AS c",
  // the primary-kind index and the property indexes (migration 0048)
  'MATCH (c:Computer) WHERE c.enabled = true RETURN count(c) AS c',
  "MATCH (c:Computer) WHERE c.operatingsystem = 'Linux' RETURN count(c) AS c",
  'MATCH (c:Computer) WHERE c.operatingsystem IS NULL RETURN count(c) AS c',
  'MATCH (n:Person) RETURN count(n) AS c',
  'MATCH (n:User:Person) RETURN count(n) AS c',
  'MATCH (n:Computer:Base) RETURN count(n) AS c',
  "MATCH (u:User {hasspn: true}) WHERE u.enabled = true OR u.operatingsystem = 'Linux' RETURN count(u) AS c",
]
/** counts that are not exact in SQL (a number, a bare boolean read, a derived label, `<`): the walk answers */
const COUNTS_WALKED = [
  'MATCH (n) WHERE n.pwdlastset = 1000 RETURN count(n) AS c',
  'MATCH (u:User) WHERE u.flag RETURN count(u) AS c',
  'MATCH (n:Tag_Tier_Zero) RETURN count(n) AS c',
  'MATCH (u:User) WHERE u.pwdlastset < 0 RETURN count(u) AS c',
]
const Q = [
  "MATCH (n) WHERE n.name STARTS WITH 'ÉVE_%' RETURN n.name AS n",
  "MATCH (n) WHERE n.name STARTS WITH 'É' RETURN n.name AS n",
  "MATCH (n) WHERE n.name STARTS WITH 'eve' RETURN n.name AS n",
  "MATCH (n) WHERE n.name STARTS WITH 'EVE' RETURN n.name AS n",
  "MATCH (n) WHERE n.name STARTS WITH 'Zed_' RETURN n.name AS n",
  "MATCH (n) WHERE n.name STARTS WITH 'ZED' RETURN n.name AS n",
  "MATCH (n) WHERE n.objectid STARTS WITH 'u' RETURN n.name AS n",
  "MATCH (n) WHERE n.objectid STARTS WITH 'U-Z' RETURN n.name AS n",
  "MATCH (n) WHERE n.name ENDS WITH '%@CORP.LOCAL' RETURN n.name AS n",
  "MATCH (n) WHERE n.objectid ENDS WITH '-512' RETURN n.name AS n",
  'MATCH (n:Tag_Tier_Zero) RETURN n.name AS n',
  'MATCH (n) WHERE n:Tag_Tier_Zero RETURN n',
  'MATCH (a) OPTIONAL MATCH (a)-[r]->(b:User {enabled: true}) RETURN a.name AS a, count(r) AS c',
  "MATCH (a) OPTIONAL MATCH (a)-[r]->(b:User {enabled: 'true'}) RETURN a.name AS a, count(r) AS c",
  'MATCH (a) OPTIONAL MATCH (a)-[r]-(b:User) RETURN a.name AS a, count(r) AS c',
  'MATCH (a)-[r]->(b) WHERE r.isacl RETURN a.name AS a',
  'MATCH (a)-[r]->(b) WHERE r.isacl = true RETURN a.name AS a',
  'MATCH (a)-[r]->(b) WHERE r.isacl = 1 RETURN a.name AS a',
  "MATCH (a)-[r]->(b) WHERE r.isacl = 'true' RETURN a.name AS a",
  'MATCH (a:User) RETURN a.name AS n, a.enabled AS e',

  "MATCH (u:User) OPTIONAL MATCH (u)-[r]->(m:Group {name: 'IT@CORP.LOCAL'}) RETURN u.name AS u, count(r) AS c",
  'MATCH (u:User) OPTIONAL MATCH (u)-[r]->(m:Base) RETURN u.name AS u, count(DISTINCT m) AS c',
  'MATCH (g)<-[r]-(m) RETURN count(r) AS c',
  'MATCH (g:Group)<-[r]-(m) WITH g, count(m) AS c WHERE c > 1 RETURN g.name AS g, c',
  'MATCH (u:User) MATCH (u)-[r]-(m) RETURN u.name AS u, count(*) AS c',
  // WHERE A(n) OR B(m): one walk from each end (issue 28, plan.ts splitByEnd), the store's scans taking each end's terms
  'MATCH (n:Base)-[:MemberOf*0..]->(m:Group) WHERE (n.objectid =~ ".*-(512|519)$" OR m.objectid =~ ".*-(S-1-5-32-544|512)$" OR n.objectid =~ ".*-(500|502)$") RETURN n',
  'MATCH p = (n)-[:MemberOf*0..]->(m:Group) WHERE (n.hasspn = true OR m.name STARTS WITH "DOMAIN" OR n.enabled = false) RETURN n.name AS n, m.name AS m, length(p) AS l',
  'MATCH (u:User)-[r]->(x) WHERE (u.enabled = true OR x.pwdlastset < 1500 OR x:Tag_Tier_Zero) RETURN u.name AS u, type(r) AS t, x.name AS x',
  // counts with the MATCH's WHERE (issue 28): terms on g alone applied to g, `[NOT] r:K` folded into the kinds; and
  // collect() read only by size() counted ("Non-Tier Zero object with excessive control"); the others walk
  "MATCH (n:Base)-[r:AD_ATTACK_PATHS]->(m:Base) WHERE NOT r:MemberOf AND NOT ((n:Tag_Tier_Zero) OR COALESCE(n.system_tags, '') CONTAINS 'admin_tier_0') WITH n, COLLECT(DISTINCT(m)) AS endNodes WHERE SIZE(endNodes) >= 2 RETURN n",
  'MATCH (n)-[r:MemberOf|AdminTo|GenericAll|GenericWrite]->(m) WHERE NOT r:MemberOf AND n.enabled = true WITH n, collect(DISTINCT m) AS e RETURN n.name AS n, size(e) AS c',
  'MATCH (n)-[r]->(m) WHERE r:MemberOf RETURN n.name AS n, count(m) AS c',
  'MATCH (n)-[r:MemberOf|AdminTo]->(m) WHERE r:AdminTo AND n:User RETURN n.name AS n, count(*) AS c',
  'MATCH (n)-[r:MemberOf|AdminTo]->(m:Group) WHERE n.flag OR n.enabled = true RETURN n.name AS n, count(DISTINCT m) AS c',
  'MATCH (n)-[r:MemberOf]->(m) WHERE m.name STARTS WITH "D" RETURN n.name AS n, count(m) AS c',
  'MATCH (n)-[r:MemberOf]->(m) WHERE (n)-[:AdminTo]->() RETURN n.name AS n, count(m) AS c',
  'MATCH (n)-[r]->(m) WITH n, collect(m.enabled) AS e WHERE size(e) > 0 RETURN n.name AS n, size(e) AS c ORDER BY c DESC',
  'MATCH (n)-[r]->(m) WITH n, collect(DISTINCT m) AS e WHERE size(e) > 1 RETURN n.name AS n, e',
  'MATCH (n)-[r]->(m) WITH n, collect(m) AS e, count(m) AS x WHERE size(e) > 1 WITH n, e RETURN n.name AS n, [e IN [1, 2] | size(e)] AS c',
  'MATCH (u:User) MATCH (u)-[r]-(m) RETURN u, count(*) AS c',
  'MATCH (a)-[r]->(b) WHERE r.isprimarygroup RETURN a.name AS a',
  'MATCH (a)-[r:MemberOf]->(b) WHERE NOT r:MemberOf RETURN a.name AS a',
  'MATCH (a)-[r:MemberOf|AdminTo]->(b) WHERE r:AdminTo RETURN a.name AS a, b.name AS b',
  "MATCH (n) WHERE n.name STARTS WITH 'd' RETURN n.name AS n",
  "MATCH (n) WHERE n.name STARTS WITH 'DOMAIN ADMINS@CORP.LOCAL' RETURN n.name AS n",
  "MATCH (n) WHERE n.objectid ENDS WITH '1-512' RETURN n.name AS n",
  "MATCH (n) WHERE n.name =~ '(?i)alice.*' RETURN n.name AS n",
  'MATCH (u:User) RETURN u.name AS n, u.enabled AS e, u.objectid AS o',
  "MATCH (u:User) WHERE u.title = 'admin' RETURN u.pwdlastset AS p",
  'MATCH (u:User) WITH u RETURN u.name AS n',
  'MATCH (u:User) WITH u.name AS n, u RETURN n, u.enabled AS e',
  // shortestPath picks one of equally short paths (arbitrary in Cypher; node-id order here, and ids are random
  // since migration 0039), so its ends and length are compared, not the path drawn (allShortestPaths: below)
  'MATCH p = shortestPath((u:User)-[*1..]->(t:Tag_Tier_Zero)) RETURN u.objectid AS u, t.objectid AS t, length(p) AS l',
  "MATCH p = allShortestPaths((u:User {name: 'DAVE@CORP.LOCAL'})-[*1..]->(d:Domain)) RETURN p",
  'MATCH (n) WHERE n:Tag_Owned RETURN n.name AS n',
  'MATCH (n:User) WHERE n.enabled = true AND n.name STARTS WITH "A" RETURN n.objectid AS o',
  'MATCH (c:Computer) OPTIONAL MATCH (c)<-[:AdminTo]-(u) RETURN c.name AS c, count(u) AS n ORDER BY n DESC',
  'MATCH (u:User {enabled: true}) OPTIONAL MATCH (u)-[:MemberOf]->(g:Group {objectid: "G-IT"}) RETURN u.name AS u, count(g) AS n',
  'MATCH (u:User) OPTIONAL MATCH (u)-[r]-(x:User {enabled: false}) RETURN u.name AS u, count(r) AS c, count(*) AS s',
  'MATCH (u:User) WHERE u.objectid STARTS WITH "U-" AND u.objectid ENDS WITH "E" RETURN u.name AS u',
  // stored property tests in the scan's SQL (issue 28): 1, 'true', [true], null and a missing key are not true
  'MATCH (u:User) WHERE u.hasspn = true RETURN u.name AS n',
  'MATCH (u:User) WHERE u.hasspn = false RETURN u.name AS n',
  'MATCH (u:User) WHERE u.hasspn = 1 RETURN u.name AS n',
  "MATCH (u:User) WHERE u.hasspn = 'true' RETURN u.name AS n",
  'MATCH (u:User) WHERE true = u.hasspn AND u.enabled = true RETURN u.name AS n',
  'MATCH (u:User {hasspn: true}) RETURN u.name AS n',
  'MATCH (n) WHERE n.pwdlastset = 1000 RETURN n.name AS n',
  'MATCH (n) WHERE n.pwdlastset = 1.5 RETURN n.name AS n',
  'MATCH (n) WHERE n.pwdlastset < 1500 RETURN n.name AS n',
  'MATCH (n) WHERE n.pwdlastset <= 1500 RETURN n.name AS n',
  'MATCH (n) WHERE n.pwdlastset > 1.2 RETURN n.name AS n',
  'MATCH (n) WHERE n.pwdlastset >= 9007199254740991 RETURN n.name AS n',
  'MATCH (n) WHERE 1000 >= n.pwdlastset RETURN n.name AS n',
  'MATCH (n) WHERE n.pwdlastset < datetime().epochseconds - 86400 RETURN n.name AS n',
  "MATCH (n) WHERE n.pwdlastset < '2' RETURN n.name AS n",
  'MATCH (u:User) WHERE u.hasspn IS NULL RETURN u.name AS n',
  'MATCH (u:User) WHERE u.hasspn IS NOT NULL RETURN u.name AS n',
  'MATCH (u:User) WHERE u.title IS NULL AND u.pwdlastset IS NOT NULL RETURN u.name AS n',
  "MATCH (u:User) WHERE u.hasspn IN [true, 'x', null] RETURN u.name AS n",
  'MATCH (n) WHERE n.pwdlastset IN [1000, 1.5, -3, 9007199254740991] RETURN n.name AS n',
  'MATCH (u:User) WHERE u.title IN [] RETURN u.name AS n',
  "MATCH (u:User) WHERE u.title IN ['admin', 'ADMIN', null, 1] RETURN u.name AS n",
  'MATCH (u:User) WHERE u.hasspn IN [[true]] RETURN u.name AS n',
  "MATCH (n) WHERE n.title STARTS WITH 'ad' RETURN n.name AS n",
  "MATCH (n) WHERE n.title STARTS WITH 'É' RETURN n.name AS n",
  "MATCH (n) WHERE n.title ENDS WITH 'min' RETURN n.name AS n",
  "MATCH (n) WHERE n.title CONTAINS 'é' RETURN n.name AS n",
  "MATCH (n) WHERE n.title CONTAINS '%_' RETURN n.name AS n",
  "MATCH (n) WHERE n.title = '' RETURN n.name AS n",
  'MATCH (u:User) WHERE u.ok RETURN u.name AS n',
  'MATCH (u:User) WHERE NOT u.ok RETURN u.name AS n',
  'MATCH (u:User) WHERE u.flag RETURN u.name AS n',
  // under OR / NOT the engine reads the value as a boolean: 1 and 'true' stop it with a type error, so the
  // store must keep those nodes for the engine to see
  'MATCH (u:User) WHERE u.flag OR u.hasspn = 5 RETURN u.name AS n',
  'MATCH (u:User) WHERE NOT u.flag RETURN u.name AS n',
  "MATCH (u:User) WHERE u.hasspn = true OR u.title = 'adm' RETURN u.name AS n",
  "MATCH (u:User) WHERE (u.hasspn = true AND u.title STARTS WITH 'x') OR u.pwdlastset < 0 RETURN u.name AS n",
  "MATCH (u:User) WHERE u.hasspn = true OR u.name = 'P-ONE' RETURN u.name AS n",
  'MATCH (u:User) WHERE u.ok = true RETURN count(u) AS c',
  // node counts answered by one SQL count when every condition is exact (issue 28, nodecount.ts); the others walk
  ...COUNTS_PUSHED,
  ...COUNTS_WALKED,
  'MATCH p = (u:User)-[:GenericAll]->(v) WHERE u.enabled = true RETURN p',
  // a single relationship's level read joined with its far end (issue 28: expandLevel): both directions,
  // undirected, several kinds, self-loops (50 -GenericWrite-> 50), far property tests over every JSON type,
  // derived labels, far pattern predicates
  'MATCH p = (c:Computer)-[:HasSession]->(u:User) RETURN p',
  'MATCH (u:User)<-[:HasSession]-(c:Computer) RETURN u.name AS u, c.name AS c',
  'MATCH (u:User {enabled: true})-[:MemberOf]->(g:Group) RETURN u.name AS u, g.name AS g',
  'MATCH (a)-[r:GenericAll|GenericWrite]->(b:User) WHERE b.enabled = true RETURN a.name AS a, type(r) AS t, b.name AS b',
  'MATCH (a:User)-[r:GenericAll|GenericWrite]-(b:User) RETURN a.name AS a, type(r) AS t, b.name AS b',
  'MATCH (a)-[r:GenericWrite]-(b) RETURN a.name AS a, b.name AS b, id(r) = id(r) AS x',
  'MATCH (a)-[:GenericWrite]->(b) WHERE a = b RETURN a.name AS a',
  'MATCH (g:Group)<-[:MemberOf|AdminTo|HasSession]-(x) RETURN g.name AS g, x.name AS x',
  'MATCH (x)-[:MemberOf|AdminTo]->(y:Group:Base) RETURN x.name AS x, y.name AS y',
  'MATCH (x)-[:MemberOf]->(g:Tag_Tier_Zero) RETURN x.name AS x, g.name AS g',
  "MATCH (u:User)-[:MemberOf]->(g {objectid: 'G-IT'}) RETURN u.name AS u",
  "MATCH (u)-[:MemberOf]->(g {name: 'IT@CORP.LOCAL'}) RETURN u.name AS u",
  "MATCH (u)-[:MemberOf]->(g) WHERE g.name STARTS WITH 'DOMAIN' RETURN u.name AS u, g.name AS g",
  'MATCH (u:User)-[:MemberOf]->(g) WHERE NOT (g)-[:MemberOf]->() RETURN u.name AS u, g.name AS g',
  'MATCH (a)-[r:MemberOf]->(b:Group) WHERE r.isprimarygroup = true RETURN a.name AS a, b.name AS b',
  'MATCH (a)-[r]->(b:User) WHERE b.hasspn = true OR b.flag RETURN a.name AS a, b.name AS b',
  'MATCH (u:User) WHERE u.enabled = true MATCH (u)-[:MemberOf]->(g:Group) RETURN u.name AS u, g.name AS g',
  'MATCH (u:User) OPTIONAL MATCH (u)-[:MemberOf]->(g:Group {name: "IT@CORP.LOCAL"}) RETURN u.name AS u, g.name AS g',
  // fixed-length patterns: each level joined with its far end
  'MATCH p = (u:User)-[:MemberOf]->(g:Group)-[:AdminTo]->(c:Computer) RETURN p',
  "MATCH (c:Computer {objectid: 'C-WS1'})<-[:AdminTo]-(g:Group)<-[:MemberOf]-(u:User) RETURN u.name AS u, g.name AS g",
  'MATCH (a:User)-[:MemberOf]->(g)-[:MemberOf]->(h:Group)-[:GenericAll]->(d:Domain) RETURN a.name AS a, g.name AS g, d.name AS d',
  'MATCH (a)-[:GenericAll]->(b)-[:GenericAll]-(c:User) RETURN a.name AS a, b.name AS b, c.name AS c',
  'MATCH (a)-[:MemberOf*1..2]->(g:Group)-[:GenericAll]->(d) RETURN a.name AS a, d.name AS d',
  'MATCH (a:User)-[:MemberOf]->(g)-[:MemberOf*0..1]->(h:Group) RETURN a.name AS a, h.name AS h',
  // allShortestPaths (issue 28): from a set of users to a group and from one node to a set, both directions
  "MATCH p = allShortestPaths((u:User)-[:MemberOf|AdminTo|HasSession*1..]->(g:Group {objectid: 'S-1-5-21-1-512'})) RETURN p",
  "MATCH p = allShortestPaths((g:Group {objectid: 'S-1-5-21-1-512'})<-[:MemberOf|AdminTo|HasSession*1..]-(u:User)) RETURN p",
  "MATCH p = allShortestPaths((a {objectid: 'U-ALICE'})-[*1..]->(t)) WHERE t:Group OR t:Computer RETURN p",
  "MATCH p = allShortestPaths((t)<-[*1..]-(a {objectid: 'U-ALICE'})) WHERE t:Group OR t:Computer RETURN p",
  "MATCH p = allShortestPaths((u:User)-[*1..]-(c {objectid: 'C-WS1'})) RETURN p",
  ...SHORTEST_ENDS.map(([q]) => q),
  "MATCH (u:User) WHERE u.enabled = true WITH u MATCH (u)-[r]->(x) WHERE x.enabled IN [1, 'true'] RETURN u.name AS u, x.name AS x",
]
describe('store shortcuts = engine', () => {
  it.each(Q)('%s', async (q) => {
    const res = await admin.raw('POST', '/api/v2/graphs/cypher', { query: q })
    const api = norm(res.status, res.status === 200 ? ((await res.json()) as { data: CypherResult }).data : null)
    let r: Awaited<ReturnType<typeof runQuery>>
    try {
      r = await runQuery(parseCypher(q), memorySource(null, NODES.map((n) => ({ ...n, properties: props(n) })), EDGES), { now: Date.now(), countPushdown: false })
    } catch (e) {
      // the engine refuses the query over this graph (a type error: `WHERE u.flag` on 1 and 'true'): so must the store
      if (!(e instanceof CypherError)) throw e
      expect(api).toEqual({ status: 400 })
      return
    }
    await loadReferenced(r)
    const data = presentResult(r.columns, r.rows, r.ctx.graph, false)
    const found = Object.keys(data.nodes).length + data.edges.length + data.literals.length > 0
    expect(api).toEqual(norm(found ? 200 : 404, found ? data : null))
  })
})

describe('shortest-path ends listed by the store (issue 28)', () => {
  it.each(SHORTEST_ENDS)('%s: the same answer for a caller restricted to CORP (ids listed: %j)', async (q, listed) => {
    const access = [CORP]
    const show = async (r: Awaited<ReturnType<typeof runQuery>>) => {
      await loadReferenced(r)
      return norm(200, presentResult(r.columns, r.rows, r.ctx.graph, false))
    }
    const query = parseCypher(q)
    const store = await runQuery(query, d1GraphSource(env.DB, JSON.stringify(access), { nodeKeys: nodePropertyKeys(query) }), { now: Date.now() })
    const engine = await runQuery(query, memorySource(access, NODES.map((n) => ({ ...n, properties: props(n) })), EDGES), { now: Date.now() })
    expect(await show(store)).toEqual(await show(engine))
    // the exact ends were listed by the store (ids only), the others scanned
    expect(store.ctx.plans.flatMap((p) => /^end (\S+): \d+ id\(s\) listed by the store$/.exec(p)?.[1] ?? [])).toEqual(listed)
  })
})

/**
 * One relationship under a property condition between two label scans (issue 28, match.ts smallerEnd): the store
 * counts each end's visible nodes and starts the walk at the clearly smaller one (here the 4 groups, against 15
 * users; a restricted caller's counts are of CORP's nodes); the engine over the in-memory copy, which counts
 * nothing, walks from the end plan.ts scores. The same rows, for an administrator and a caller restricted to CORP
 * (CAROL of LAB is never an answer); `started`: whether the store's walk was started at the other end.
 */
const SMALLER_END: [query: string, started: boolean][] = [
  ['MATCH (n:User)-[r:MemberOf]->(g:Group) WHERE NOT g.objectid ENDS WITH "-513" AND r.isprimarygroup = true AND NOT n.objectid ENDS WITH "-501" AND (n.gmsa IS NULL OR n.gmsa = false) RETURN n.objectid AS n, g.objectid AS g', true],
  ['MATCH (n:User)-[r:MemberOf]->(g:Group) WHERE r.isprimarygroup = true RETURN n.objectid AS n, g.objectid AS g, r.isprimarygroup AS p', true],
  ['MATCH (g:Group)<-[r:MemberOf]-(n:User) WHERE r.isprimarygroup = true AND n.enabled = true RETURN n.objectid AS n, g.objectid AS g', true],
  // planned from the groups already (the user's map is not scored)
  ['MATCH (g:Group)<-[r:MemberOf]-(n:User {enabled: true}) WHERE r.isprimarygroup = true RETURN n.objectid AS n, g.objectid AS g', false],
  ['MATCH (n:User)-[r:MemberOf]-(g:Group) WHERE r.isprimarygroup = 1 RETURN n.objectid AS n, g.objectid AS g', true],
  ['MATCH (n:User)-[r:MemberOf]->(g:Group) WHERE r.isprimarygroup = true AND g.objectid ENDS WITH "-512" RETURN n.objectid AS n', false],
  ['MATCH (n:User)-[r:MemberOf]->(g:Base) WHERE r.isprimarygroup = true RETURN n.objectid AS n, g.objectid AS g', false],
  ['MATCH (n:User)-[r:MemberOf]->(g:Group) RETURN n.objectid AS n, g.objectid AS g', false],
  ['MATCH (n:User)-[r:MemberOf]->(g:Group) WHERE r.isprimarygroup = true RETURN n.objectid AS n, g.objectid AS g ORDER BY n LIMIT 2', true],
]
describe('a walk started at the end the store counts fewer nodes at = the engine (issue 28)', () => {
  it.each(SMALLER_END)('%s (started at the other end: %s)', async (q, started) => {
    for (const access of [null, [CORP]]) {
      const query = parseCypher(q)
      const store = await runQuery(query, d1GraphSource(env.DB, access && JSON.stringify(access), { nodeKeys: nodePropertyKeys(query) }), { now: Date.now() })
      const engine = await runQuery(query, memorySource(access, NODES.map((n) => ({ ...n, properties: props(n) })), EDGES), { now: Date.now() })
      const rows = (r: typeof store) => r.rows.map((x) => JSON.stringify(x)).sort()
      expect(rows(store)).toEqual(rows(engine))
      if (access === null) expect(rows(store).length).toBeGreaterThan(0)
      expect(store.ctx.plans.some((p) => p.includes('started at the end with fewer nodes'))).toBe(started)
    }
  })
})

describe('node counts in the store (issue 28)', () => {
  it.each(COUNTS_PUSHED)('%s: the same count for a caller restricted to CORP', async (q) => {
    const access = [CORP]
    const query = parseCypher(q)
    const store = await runQuery(query, d1GraphSource(env.DB, JSON.stringify(access), { nodeKeys: nodePropertyKeys(query) }), { now: Date.now() })
    const engine = await runQuery(query, memorySource(access, NODES.map((n) => ({ ...n, properties: props(n) })), EDGES), { now: Date.now(), countPushdown: false })
    expect(store.ctx.plans.join()).toContain('count of nodes')
    expect(store.rows).toEqual(engine.rows)
  })
  it.each([...COUNTS_PUSHED.map((q): [string, boolean] => [q, true]), ...COUNTS_WALKED.map((q): [string, boolean] => [q, false])])('%s: counted in the store %s', async (q, pushed) => {
    const res = await admin.raw('POST', '/api/v2/graphs/cypher', { query: q })
    expect([200, 400]).toContain(res.status)
    if (res.status === 200) expect((res.headers.get('X-Cypher-Plan') ?? '').includes('count of nodes')).toBe(pushed)
  })
})

/**
 * ORDER BY … LIMIT read in order from D1 (issue 28, topk.ts) against the engine's own sort over the same D1 rows
 * (ids are random since migration 0039, so ties are ordered by the same ids in both): the rows in order, for an
 * administrator and a caller restricted to CORP, and whether the plan says the store ordered the scan.
 */
const ORDERED_PUSHED = [
  'MATCH (n:Ord) RETURN n.name AS name, n.rank AS r ORDER BY n.rank LIMIT 20',
  'MATCH (n:Ord) RETURN n.name AS name, n.rank AS r ORDER BY n.rank DESC LIMIT 20',
  'MATCH (n:Ord) RETURN n.name AS name ORDER BY n.rank SKIP 3 LIMIT 4',
  'MATCH (n:Ord) RETURN n.name AS name ORDER BY n.rank DESC SKIP 5 LIMIT 3',
  'MATCH (n:Ord) RETURN n.name AS name, n.grp AS g, n.rank AS r ORDER BY n.grp, n.rank DESC LIMIT 20',
  'MATCH (n:Ord) RETURN n.rank AS r ORDER BY r LIMIT 6',
  'MATCH (n:Ord {grp: 1}) RETURN n ORDER BY n.name DESC LIMIT 3',
  'MATCH (n:Ord) RETURN n.objectid AS o ORDER BY n.objectid DESC LIMIT 5',
  // DISTINCT streamed in order (a WHERE not exact in SQL: no GROUP BY)
  'MATCH (n:Ord) WHERE n.grp >= 1 RETURN DISTINCT n.rank AS r ORDER BY r DESC LIMIT 5',
  'MATCH (n:Ord) WHERE n.grp >= 1 RETURN DISTINCT n.rank AS r, n.grp AS g ORDER BY n.grp LIMIT 20',
  "MATCH (n:Ord) WHERE n.rank STARTS WITH 'a' OR n.rank > 0 RETURN n.name AS name ORDER BY n.rank LIMIT 3",
  // a WHERE the store cannot test: the engine drops rows of the ordered pages
  "MATCH (n) WHERE n.name =~ '.*[2-7].*' RETURN n.name AS name ORDER BY n.name DESC LIMIT 2",
  'MATCH (n:Ord) WHERE n.grp * 2 = 4 RETURN n.name AS name ORDER BY n.rank LIMIT 4',
  'MATCH (n:Ord) WITH n ORDER BY n.rank LIMIT 6 WHERE n.grp = 1 RETURN n.name AS n',
  'MATCH (n:Ord) WITH n, n.rank AS r ORDER BY r DESC LIMIT 4 MATCH (n)-[x]-(m) RETURN n.name AS name, count(x) AS c',
  // through the order index of pwdlastset (migration 0049): every type, ties, null, missing, DESC, SKIP, pages
  'MATCH (n:Ord) RETURN n.name AS name, n.pwdlastset AS p ORDER BY n.pwdlastset LIMIT 25',
  'MATCH (n:Ord) RETURN n.name AS name, n.pwdlastset AS p ORDER BY n.pwdlastset DESC LIMIT 25',
  'MATCH (n:Ord) RETURN n.name AS name ORDER BY n.pwdlastset SKIP 3 LIMIT 5',
  'MATCH (n:Ord) WHERE n.grp = 1 RETURN n.name AS name, n.pwdlastset AS p ORDER BY p DESC SKIP 1 LIMIT 4',
  "MATCH (n:Ord) WHERE n.name STARTS WITH 'ORD-1' RETURN n.name AS name ORDER BY n.pwdlastset LIMIT 2",
  'MATCH (n:Ord) RETURN n.name AS name ORDER BY n.pwdlastset LIMIT 1',
]
/** not read in order: not the shape, or (*) a value the store cannot order (the engine sorts after one ordered page) */
const ORDERED_NOT = [
  'MATCH (n:Ord) RETURN n.name AS name ORDER BY n.rank',
  'MATCH (n:Ord) RETURN n.rank AS r, count(*) AS c ORDER BY r LIMIT 3',
  'MATCH (n:Ord) RETURN n.name AS name ORDER BY toLower(n.name) LIMIT 3',
  'MATCH (n:Ord) RETURN DISTINCT n.grp AS g ORDER BY n.rank LIMIT 3',
  'MATCH (n:Ord) RETURN n.grp AS n ORDER BY n.rank LIMIT 3',
  'MATCH (n:Ord)-[r]-(m) RETURN n.name AS name ORDER BY n.rank LIMIT 3',
  'OPTIONAL MATCH (n:Ord) RETURN n.name AS name ORDER BY n.rank LIMIT 3',
  ...['REAL', 'LIST', 'PUA', 'FULLWIDTH', 'EMOJI', 'BIG'].map((x) => `MATCH (n:OrdOdd) WHERE n.name IN ['ODD-A', 'ODD-THREE', 'ODD-${x}'] RETURN n.name AS name ORDER BY n.rank LIMIT 2 // *`),
  // orders SQLite and JavaScript disagree on: U+FF3A before U+1F600 in UTF-8, after it in UTF-16; a list before a string
  "MATCH (n:OrdOdd) WHERE n.name IN ['ODD-FULLWIDTH', 'ODD-EMOJI'] RETURN n.name AS name ORDER BY n.rank DESC LIMIT 1 // *",
  "MATCH (n:OrdOdd) WHERE n.name IN ['ODD-A', 'ODD-LIST'] RETURN n.name AS name ORDER BY n.rank LIMIT 1 // *",
  // the order index's kind holds an unorderable value (a real, a list, …: looked for among every OrdOdd)
  "MATCH (n:OrdOdd) WHERE n.name IN ['ODD-A', 'ODD-THREE'] RETURN n.name AS name ORDER BY n.pwdlastset LIMIT 1 // *",
]
/** DISTINCT answered by one GROUP BY (distinct.ts): the MATCH exact in SQL, the items stored properties */
const DISTINCT_PUSHED = [
  'MATCH (n:Ord) RETURN DISTINCT n.rank AS r',
  'MATCH (n:Ord) RETURN DISTINCT n.grp AS g, n.rank',
  'MATCH (n:Ord) RETURN DISTINCT n.rank AS r, n.grp AS g ORDER BY g DESC, r SKIP 2 LIMIT 9',
  'MATCH (n:Ord) RETURN DISTINCT n.rank AS r ORDER BY n.rank DESC',
  'MATCH (n:Ord) WHERE n.rank IS NOT NULL RETURN DISTINCT n.grp AS g LIMIT 1',
  'MATCH (n:Ord) RETURN DISTINCT n.objectid AS o ORDER BY o DESC LIMIT 3',
  'MATCH (c:Computer) RETURN DISTINCT c.operatingsystem',
  "MATCH (n:OrdOdd) WHERE n.name IN ['ODD-A', 'ODD-THREE'] RETURN DISTINCT n.rank AS r",
  // the primary-kind index and the property indexes (migration 0048): every JSON type, null and missing alike
  'MATCH (c:Computer) RETURN DISTINCT c.operatingsystem AS os ORDER BY os DESC',
  'MATCH (c:Computer) WHERE c.enabled = true RETURN DISTINCT c.operatingsystem AS os',
  'MATCH (c:Computer) RETURN DISTINCT c.enabled AS e, c.operatingsystem AS os ORDER BY e, os DESC',
  'MATCH (u:User:Person) RETURN DISTINCT u.operatingsystem AS os, u.objectid AS o',
  'MATCH (u:Base) RETURN DISTINCT u.enabled AS e SKIP 1 LIMIT 3',
]
/** DISTINCT not answered by the store: not exact, not the shape, or (*) a value the store cannot compare */
const DISTINCT_NOT = [
  'MATCH (n:Ord) WHERE n.grp = 1 RETURN DISTINCT n.rank AS r',
  'MATCH (n:Ord) RETURN DISTINCT toLower(n.name) AS l',
  'MATCH (n:Ord) RETURN DISTINCT n.grp AS n ORDER BY n LIMIT 2',
  'MATCH (n:Ord)-[r]-(m) RETURN DISTINCT n.rank AS r',
  ...['REAL', 'LIST', 'PUA', 'EMOJI', 'BIG'].map((x) => `MATCH (n:OrdOdd) WHERE n.name IN ['ODD-A', 'ODD-THREE', 'ODD-${x}'] RETURN DISTINCT n.rank AS r // *`),
]
describe('ORDER BY … LIMIT read in order from the store = the engine sorting (issue 28)', () => {
  const rows = (r: { rows: unknown[][] }) => JSON.stringify(r.rows, (_k, v: unknown) => (v instanceof NodeRef ? `node ${v.id}` : v))
  const run = async (q: string, access: string | null, orderPushdown: boolean) => {
    const query = parseCypher(q)
    try {
      const r = await runQuery(query, d1GraphSource(env.DB, access, { nodeKeys: nodePropertyKeys(query) }), { now: Date.now(), orderPushdown })
      return { rows: rows(r), plans: r.ctx.plans.join(' | ') }
    } catch (e) {
      if (!(e instanceof CypherError)) throw e
      return { rows: 'error', plans: '' }
    }
  }
  it.each([...ORDERED_PUSHED.map((q): [string, boolean] => [q, true]), ...ORDERED_NOT.map((q): [string, boolean] => [q, false])])('%s: in order from the store %s', async (q, pushed) => {
    for (const access of [null, JSON.stringify([CORP])]) {
      const store = await run(q, access, true)
      const engine = await run(q, access, false)
      expect(store.rows).toEqual(engine.rows)
      expect(engine.plans).not.toContain('read in order')
      expect(store.plans.includes('read in order') && !store.plans.includes('sorted by the engine')).toBe(pushed)
      if (q.endsWith('// *')) expect(store.plans).toContain('sorted by the engine')
    }
  })
  it.each([...DISTINCT_PUSHED.map((q): [string, boolean] => [q, true]), ...DISTINCT_NOT.map((q): [string, boolean] => [q, false])])('%s: DISTINCT in the store %s', async (q, pushed) => {
    for (const access of [null, JSON.stringify([CORP])]) {
      const store = await run(q, access, true)
      const engine = await run(q, access, false)
      expect(store.rows).toEqual(engine.rows)
      expect(store.plans.includes('distinct values of')).toBe(pushed)
      if (q.endsWith('// *')) expect(store.plans).toContain('DISTINCT by the engine')
    }
  })
  it('a restricted caller never gets a node of another environment first', async () => {
    const q = 'MATCH (n:Ord) RETURN n.name AS name ORDER BY n.objectid DESC LIMIT 1'
    expect(await run(q, null, true)).toEqual({ rows: '[["ORD-T"]]', plans: expect.stringContaining('read in order') })
    expect(await run(q, JSON.stringify([CORP]), true)).toEqual({ rows: '[["ORD-16"]]', plans: expect.stringContaining('read in order') })
  })
})

/**
 * A one-hop pattern with a LIMIT answered by one join in the store (issue 28, onehop.ts) against the engine's walk
 * over the same D1 rows (pushdown off: the same rows in the same order, so the same LIMIT cut) and, when the LIMIT
 * cuts nothing, against the engine over the in-memory copy: for an administrator and a caller restricted to CORP
 * (a relationship to a node of another environment is never returned: ALICE@CONTOSO's and CAROL's). BOB is a
 * member of two asset groups by selector (selected_tags, which the join's node read must give as nodesByIds does:
 * Tier Zero, Owned and system_tags in the answer).
 */
const HOP_PUSHED = [
  'MATCH p = (c:Computer)-[:HasSession]->(u:User) RETURN p LIMIT 1000',
  'MATCH (u:User)<-[:HasSession]-(c:Computer) RETURN u.name AS u, c.name AS c LIMIT 50',
  'MATCH (a)-[r:GenericAll|GenericWrite]->(b:User) RETURN a.name AS a, type(r) AS t, b.name AS b LIMIT 100',
  'MATCH (x)-[:MemberOf]->(g:Group) RETURN x.name AS x, g.name AS g LIMIT 3',
  'MATCH (x:Base)-[:MemberOf]->(g) RETURN x.name AS x, g.name AS g SKIP 2 LIMIT 4',
  'MATCH (a)-[r]->(b) RETURN a, r, b LIMIT 7',
  'MATCH (a)-[r]->(b) RETURN a.name AS a, type(r) AS t, b.name AS b LIMIT 500',
  'MATCH (a)-[:GenericWrite]->(b) RETURN a.name AS a, b.name AS b LIMIT 10',
  'MATCH p = (u:User:Base)-[:MemberOf]->(g:Group) WITH p, u LIMIT 5 RETURN u.name AS u, length(p) AS l',
  'MATCH (g:Group)<-[r]-(m) RETURN * LIMIT 6',
  'MATCH (d:Domain)<-[:GenericAll|MemberOf]-(g) RETURN d.name AS d, g.name AS g LIMIT 10',
  'MATCH (x:AZBase)-[r]->(y) RETURN x, y LIMIT 10',
  // relationship properties presented (isacl; lastseen on one)
  'MATCH p = (a:User)-[:GenericAll]->(b:User) RETURN p LIMIT 5',
  'MATCH (a:User)-[r:GenericAll]->(b) RETURN r LIMIT 10',
  // the far end's labels drop relationships (MemberOf to groups, HasSession to users)
  'MATCH (g:Group)-[r]->(x:Domain) RETURN g.name AS g, type(r) AS t LIMIT 20',
  'MATCH (u:User)-[r]->(x:Computer) RETURN u.name AS u, x.name AS x LIMIT 20',
  // chains of 2-3 relationships (one join per page): kinds, directions, labels, a middle node in another
  // environment (ALICE -> CAROL of LAB -> Domain Admins), self-loops and relationship uniqueness, SKIP
  'MATCH p = (u:User)-[:MemberOf]->(g:Group)-[:AdminTo]->(c:Computer) RETURN p LIMIT 100',
  'MATCH p = (u:User)-[:MemberOf]->(g:Group)-[:MemberOf]->(h:Group) RETURN p LIMIT 10',
  'MATCH p = (u:User)-[:MemberOf]->(g:Group)-[:MemberOf|GenericAll]->(d:Domain) RETURN p LIMIT 10',
  'MATCH (a)-[:MemberOf|AdminTo]->(b)-[r:MemberOf|AdminTo|GenericAll|HasSession]->(c) RETURN a.name AS a, b.name AS b, type(r) AS t, c.name AS c LIMIT 50',
  'MATCH p = (d:Domain)<-[:GenericAll]-(g:Group)<-[:MemberOf]-(x) RETURN p LIMIT 20',
  'MATCH (x)-[:MemberOf]->(g)-[:GenericAll]->(d:Domain) RETURN x.name AS x, d.name AS d LIMIT 10',
  'MATCH p = (u:Base)-[:GenericAll]->(m:Base)-[:MemberOf]->(g:Group) RETURN p LIMIT 10',
  'MATCH (u:User)-[:GenericAll]->(m)-[r:MemberOf]->(g) RETURN u.name AS u, m.name AS m, r, g.name AS g LIMIT 10',
  'MATCH p = (a:AZBase)-[]->(b)-[]->(c) RETURN p LIMIT 10',
  'MATCH p = (a)-[]->(b:AZBase)<-[]-(c) RETURN p LIMIT 10',
  'MATCH (a)-[:GenericWrite]->(b)-[:GenericWrite]->(c) RETURN a.name AS a LIMIT 5',
  'MATCH (a)-[x]->(b)<-[y]-(c) RETURN a.name AS a, b.name AS b, c.name AS c, type(x) AS x, type(y) AS y LIMIT 40',
  'MATCH (a)<-[x]-(b)-[y]->(c) RETURN a.name AS a, b.name AS b, c.name AS c LIMIT 40',
  'MATCH (a)-[r]->(b)-[s]->(c) RETURN a, r, b, s, c LIMIT 500',
  'MATCH p = (a)-[]->(b)-[]->(c) RETURN p SKIP 3 LIMIT 5',
  'MATCH p = (a:User)-[:MemberOf]->(b)-[:MemberOf]->(c)-[:GenericAll]->(d) RETURN p LIMIT 10',
  'MATCH p = (a)-[:GenericAll]->(b)-[:GenericAll]->(c)-[:GenericAll]->(d) RETURN p LIMIT 10',
  'MATCH p = (a)-[:MemberOf]->(b)-[:MemberOf]->(c) WITH p, a LIMIT 3 RETURN a.name AS a, length(p) AS l',
  // a WHERE (issue 28): necessary conditions in SQL, the full WHERE re-tested by the engine. The library's three shapes
  'MATCH p=(s:Base)-[:MemberOf]->(t:Group) WHERE s.domainsid<>t.domainsid RETURN p LIMIT 1000',
  'MATCH p=(c:Computer)-[r:HasSession]->(u:User) WHERE c.domainsid <> u.domainsid RETURN p LIMIT 1000',
  'MATCH (a:User)-[:MemberOf]->(g) WHERE a.enabled = true RETURN a.name AS a LIMIT 3',
  // null, missing, true vs 1, false vs 0, '1' vs 1, equal reals, equal lists, another environment; both directions
  'MATCH (a:Xd)-[r]->(b:Xd) WHERE a.dk <> b.dk RETURN a.name AS a, type(r) AS t, b.name AS b LIMIT 1000',
  'MATCH (b:Xd)<-[r:XRel]-(a:Xd) WHERE b.dk <> a.dk RETURN a.name AS a, b.name AS b LIMIT 1000',
  'MATCH (a:Xd)-[r:XAce]->(b) WHERE b.dk <> a.dk AND a.name <> "XD-I1" RETURN a.name AS a, b.name AS b LIMIT 1000',
  // SKIP + LIMIT cut inside a page where the engine drops some of the store's rows (the reals): read on within the page
  'MATCH (a:Xd)-[r]->(b:Xd) WHERE a.dk <> b.dk RETURN a.name AS a, b.name AS b SKIP 3 LIMIT 4',
  'MATCH (a:Xd)-[r]->(b:Xd) WHERE a.dk <> b.dk RETURN a.name AS a, b.name AS b SKIP 20 LIMIT 9',
  'MATCH (a:Xd)-[]->(b:Xd) WHERE a.dk <> b.dk RETURN a.name AS a, b.name AS b LIMIT 2',
  // the store's statement stops at its LIMIT with rows the engine drops (the equal reals): the page is read on
  // (without that, the SKIP 20 LIMIT 9 query above and the next one lose rows: seen failing)
  'MATCH (a:Xd)-[r]->(b:Xd) WHERE a.dk <> b.dk AND a.dk = 1.5 RETURN a.name AS a, b.name AS b LIMIT 2',
  'MATCH (a:Xd)-[r]->(b:Xd) WHERE a.dk <> b.dk AND a.dk = 1.5 RETURN a.name AS a, b.name AS b SKIP 1 LIMIT 2',
  // a relationship property condition (issue 28, "ACEs across trusts"): stored true, 1, false, missing; the walk
  // may start at the end the store counts fewer nodes at (match.ts smallerEnd), and the join starts where it does
  'MATCH p=(a:Base)-[r]->(b:Base) WHERE a.domainsid <> b.domainsid AND r.isacl RETURN p LIMIT 1000',
  'MATCH p = (a:Xd)-[r]->(b:Xd) WHERE a.dk <> b.dk AND r.isacl = true RETURN p LIMIT 1000',
  'MATCH (a:Xd)-[r]->(b:Xd) WHERE a.dk <> b.dk AND r.isacl = 1 RETURN a.name AS a, b.name AS b LIMIT 1000',
  'MATCH (a:Xd)-[r]->(b:Xd) WHERE a.dk <> b.dk AND r.isacl = true RETURN a.name AS a, b.name AS b SKIP 2 LIMIT 5',
  'MATCH (a:Xd)-[r]->(b:Xd) WHERE r.isacl = true AND a.dk = "A" RETURN a.name AS a, b.name AS b LIMIT 10',
  // started at the Xe end by the walk (fewer nodes): the join too; and where the Xe end is the planned start
  'MATCH p = (a:Xd)-[r]->(b:Xe) WHERE a.dk <> b.dk AND r.isacl = true RETURN p LIMIT 1000',
  'MATCH (a:Xd)-[r:XRel|XAce]->(b:Xe) WHERE r.isacl = 1 AND a.dk <> b.dk RETURN a.name AS a, type(r) AS t, b.name AS b LIMIT 1000',
  'MATCH (a:Xd)-[r]->(b:Xe) WHERE a.dk <> b.dk AND r.isacl = true RETURN a.name AS a, b.name AS b SKIP 1 LIMIT 3',
  'MATCH (b:Xe)<-[r]-(a:Xd) WHERE a.dk <> b.dk AND r.isacl = true RETURN a.name AS a, b.name AS b LIMIT 1000',
  'MATCH (a:Xe)-[r]->(b:Xd) WHERE a.dk <> b.dk AND r.isacl = true RETURN a.name AS a, b.name AS b LIMIT 1000',
  'MATCH (b:Xd)<-[r]-(a:Xe) WHERE r.isacl = true AND b.dk <> a.dk RETURN a.name AS a, b.name AS b LIMIT 1000',
  'MATCH (a:Xd)-[r]->(b:Xe) WHERE r.isacl = 1 RETURN a.name AS a, b.name AS b LIMIT 4',
]
const HOP_NOT = [
  'MATCH (a)-[r]-(b) RETURN a.name AS a LIMIT 3',
  'MATCH (a)-[:MemberOf]->(g:Tag_Tier_Zero) RETURN a.name AS a LIMIT 3',
  // a WHERE that may stop with a type error, OR across the ends (two walks); a condition the walk's scan pushes
  // and the join would not (a name's text test: "Unresolved SID with outbound control")
  'MATCH p=(n:Base)-[r]->(:Base) WHERE r.isacl AND n.name CONTAINS "S-1-5-21-" RETURN p LIMIT 1000',
  'MATCH (a:Xd)-[r]->(b:Xd) WHERE a.dk <> b.dk AND a.name STARTS WITH "XD-A" RETURN a.name AS a LIMIT 3',
  'MATCH (a:Xd)-[r]->(b:Xd) WHERE a.dk <> b.dk AND a.name = "XD-R1" RETURN a.name AS a, b.name AS b LIMIT 2',
  'MATCH (a:Xd)-[r]->(b:Xd) WHERE a.dk <> b.dk AND toLower(a.name) = "xd-a" RETURN a.name AS a LIMIT 3',
  'MATCH (a:Xd)-[r]->(b:Xd) WHERE a.dk = "A" OR b.dk = "B" RETURN a.name AS a LIMIT 3',
  'MATCH (a)-[:MemberOf]->(g) RETURN DISTINCT g.name AS g LIMIT 3',
  'MATCH (a)-[:MemberOf]->(g) RETURN g.name AS g ORDER BY g LIMIT 3',
  'MATCH (a)-[:MemberOf]->(g) RETURN g.name AS g',
  'MATCH (a)-[:MemberOf]->(g) RETURN g.name AS g, count(a) AS c LIMIT 3',
  'MATCH (a)-[:GenericWrite]->(a) RETURN a.name AS a LIMIT 3',
  'MATCH (a)-[:MemberOf*1..2]->(g) RETURN g.name AS g LIMIT 3',
  'MATCH (a {enabled: true})-[:MemberOf]->(g) RETURN g.name AS g LIMIT 3',
  'OPTIONAL MATCH (a)-[:MemberOf]->(g) RETURN g.name AS g LIMIT 3',
  'MATCH (a)-[]->(b)-[]->(c)-[]->(d)-[]->(e) RETURN a.name AS a LIMIT 3',
  'MATCH (x)-[:GenericAll]->(y)-[:GenericAll]->(x) RETURN x.name AS x LIMIT 3',
  'MATCH (a)-[:MemberOf]->(b)-[]-(c) RETURN a.name AS a LIMIT 3',
  'MATCH (a)-[:MemberOf]->(b)-[:MemberOf*1..2]->(c) RETURN a.name AS a LIMIT 3',
  'MATCH (a:User)-[:MemberOf]->(b)-[:MemberOf]->(c) WHERE b.name STARTS WITH "H" RETURN a.name AS a LIMIT 3',
]
describe('one-hop patterns joined in the store = the engine walking (issue 28)', () => {
  it('a chain page examines at most `cap` candidate walks and says when the cap cut its rows short', async () => {
    const any: NodeCountTest = { kinds: [], objectid: null, tests: [] }
    const to = (far: NodeCountTest) => ({ near: any, hops: [{ direction: 'out' as const, kinds: null, far: any }, { direction: 'out' as const, kinds: null, far }] })
    const src = d1GraphSource(env.DB, null)
    // no relationship ends at an Ord node: every candidate is rejected by the last node's test
    const ord = to({ ...any, kinds: [['Ord']] })
    expect(await src.chain!(ord, 0, 1000, 10, 1_000_000)).toMatchObject({ rows: [], capped: false })
    expect(await src.chain!(ord, 0, 1000, 10, 3)).toMatchObject({ rows: [], capped: true })
    // enough rows before the cap: exact, not cut
    const first = await src.chain!(to(any), 0, 1000, 2, 3)
    expect(first.rows).toHaveLength(2)
    expect(first.capped).toBe(false)
  })

  it('"Principals with foreign domain group membership" answers under a memory budget its walk exceeds (issue 28): the store skips the same-domain memberships', async () => {
    // the walk reads every membership and every group at its far end before testing the domains (over 7,000 bytes
    // charged here); the join returns the cross-domain memberships and reads their nodes (under 3,000)
    const q = 'MATCH p=(s:Base)-[:MemberOf]->(t:Group) WHERE s.domainsid<>t.domainsid RETURN p LIMIT 1000'
    const run = async (hopPushdown: boolean, maxBytes: number) => {
      const r = await runQuery(parseCypher(q), d1GraphSource(env.DB, null, { nodeKeys: nodePropertyKeys(parseCypher(q)) }), { now: Date.now(), hopPushdown, limits: { maxRows: 1e9, maxResultRows: 1e9, maxSteps: 1e9, maxMillis: 60_000, maxBytes } })
      return r.rows.map((row) => row.map((v) => (v instanceof PathVal ? v.nodes.map((id) => r.ctx.graph.node(id).objectid).join(' -> ') : v)))
    }
    await expect(run(false, 3_000)).rejects.toThrow(/more than 3000 bytes of graph data in memory \(memory limit\)/)
    const rows = await run(true, 3_000)
    expect(rows).toEqual(await run(false, 1e12))
    expect(rows.map(String).sort()).toEqual(['U-CAROL -> G-HELP', 'U-CAROL -> S-1-5-21-1-512'])
  })

  it('a one-hop page with `a.k <> b.k` counts its candidates, at most `cap`, in the statement that returns its rows (issue 28)', async () => {
    const xd: NodeCountTest = { kinds: [['Xd']], objectid: null, tests: [] }
    const src = d1GraphSource(env.DB, null)
    const hop = (key: string) => ({ near: xd, far: xd, direction: 'out' as const, kinds: null, differ: [{ near: key, far: key }] })
    // 15 Xd nodes, 5 relationships each to another Xd node: 75 candidates; the rows are those the test keeps
    const all = await src.oneHop!(hop('dk'), 0, 1000, 1000, 0, 1_000_000)
    expect(all).toMatchObject({ candidates: 75, scanned: 15 })
    expect(all.edges.length).toBeGreaterThan(0)
    expect(all.edges.length).toBeLessThan(75)
    // in the walk's order: near node, kind, far node
    const key = (e: (typeof all.edges)[number]) => [e.start, e.kind, e.end] as const
    const sorted = [...all.edges].sort((x, y) => (key(x)[0] - key(y)[0]) || (key(x)[1] < key(y)[1] ? -1 : key(x)[1] > key(y)[1] ? 1 : key(x)[2] - key(y)[2]))
    expect(all.edges.map((e) => e.id)).toEqual(sorted.map((e) => e.id))
    // the cap: at most `cap` counted (the query then stops at the step limit)
    expect((await src.oneHop!(hop('dk'), 0, 1000, 1000, 0, 10)).candidates).toBe(10)
    // no row passes (a key no node has): the count still comes
    expect(await src.oneHop!(hop('nokey'), 0, 1000, 1000, 0, 1_000_000)).toMatchObject({ edges: [], candidates: 75 })
    // LIMIT and OFFSET over the rows passing
    const two = await src.oneHop!(hop('dk'), 0, 1000, 2, 1, 1_000_000)
    expect(two.edges.map((e) => e.id)).toEqual(all.edges.slice(1, 3).map((e) => e.id))
    expect(two.candidates).toBe(75)
  })

  it('`r.isacl` on a relationship storing isacl: 1 stops the joined query with the type error the walk raises (issue 28)', async () => {
    for (const q of ['MATCH (a:Xd)-[r]->(b:Xe) WHERE a.dk <> b.dk AND r.isacl RETURN a.name AS a LIMIT 1000', 'MATCH (a:Xd)-[r]->(b:Xd) WHERE r.isacl AND a.dk <> b.dk RETURN a.name AS a SKIP 2 LIMIT 5']) {
      const run = (hopPushdown: boolean) => runQuery(parseCypher(q), d1GraphSource(env.DB, null, { nodeKeys: nodePropertyKeys(parseCypher(q)) }), { now: Date.now(), hopPushdown })
      await expect(run(false)).rejects.toThrow('type mismatch: expected a boolean but got a number')
      await expect(run(true)).rejects.toThrow('type mismatch: expected a boolean but got a number')
    }
  })

  beforeAll(async () => {
    await env.DB.batch([1, 2].map((g) => env.DB.prepare('INSERT INTO asset_group_members (asset_group_id, objectid, custom_member) VALUES (?1, ?2, 1)').bind(g, 'U-BOB')))
  })
  afterAll(async () => {
    await env.DB.prepare("DELETE FROM asset_group_members WHERE objectid = 'U-BOB'").run()
  })
  const runOn = async (q: string, source: Parameters<typeof runQuery>[1], hopPushdown: boolean) => {
    const r = await runQuery(parseCypher(q), source, { now: Date.now(), hopPushdown })
    await loadReferenced(r)
    const oid = (id: number) => r.ctx.graph.node(id).objectid
    const show = (v: unknown): unknown =>
      v instanceof NodeRef ? oid(v.id) : v instanceof RelRef ? `${oid(v.start)} ${v.kind} ${oid(v.end)}` : v instanceof PathVal ? `${v.nodes.map(oid).join(',')} / ${v.rels.map(show).join(',')}` : v
    // the answer as the route writes it, with and without properties (ids are the same D1 rows on both sides)
    const answers = [false, true].map((props) => JSON.stringify(presentResult(r.columns, r.rows, r.ctx.graph, props)))
    return { rows: r.rows.map((row) => JSON.stringify(row.map(show))), columns: r.columns, plans: r.ctx.plans.join(' | '), answers }
  }
  it.each([...HOP_PUSHED.map((q): [string, boolean] => [q, true]), ...HOP_NOT.map((q): [string, boolean] => [q, false])])('%s: joined in the store %s', async (q, pushed) => {
    const limit = Number(/LIMIT (\d+)/.exec(q)?.[1] ?? Infinity)
    for (const access of [null, [CORP]]) {
      const d1 = () => d1GraphSource(env.DB, access && JSON.stringify(access), { nodeKeys: nodePropertyKeys(parseCypher(q)) })
      const store = await runOn(q, d1(), true)
      const engine = await runOn(q, d1(), false)
      expect(store).toEqual({ ...engine, plans: store.plans })
      if (q.startsWith('MATCH p = (c:Computer)-[:HasSession]')) expect(store.answers[1]).toContain('"system_tags":"admin_tier_0 owned"')
      expect(engine.plans).not.toMatch(/one-hop join|chain joined/)
      expect(/one-hop join|chain joined/.test(store.plans)).toBe(pushed)
      // the walk started at the end with fewer nodes (match.ts smallerEnd) exactly when the join did
      const flipped = engine.plans.includes('started at the end with fewer nodes')
      if (pushed) expect(store.plans.includes('one-hop join started at')).toBe(flipped)
      if (/\(a:Xd\)-\[r[^\]]*\]->\(b:Xe\)|\(b:Xd\)<-\[r\]-\(a:Xe\)/.test(q)) expect(flipped).toBe(true)
      const memory = await runOn(q, memorySource(access, NODES.map((n) => ({ ...n, properties: props(n) })), EDGES), false)
      expect(store.rows.length).toBe(memory.rows.length)
      if (q.includes('GenericAll]->(b')) expect(store.answers.join()).toContain('"lastSeen":"2026-03-04T05:06:07.000Z"')
      if (store.rows.length < limit && !/SKIP/.test(q)) expect([...store.rows].sort()).toEqual([...memory.rows].sort())
    }
  })
})
