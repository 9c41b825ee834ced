/**
 * The shapes of the public BloodHound Query Library (OPTIONAL MATCH + collect, collected lists with IN / NONE,
 * leading WITH constants, datetime arithmetic, bounded and unbounded variable length with type alternation,
 * reverse shortest paths, cross-clause conditions, list comparisons, whole-string regexes, …), written for
 * EdgeHound (no query of the library is copied here) and run through POST /api/v2/graphs/cypher and D1 against
 * a small hand-built graph. Answers are worked out by hand from the picture below; the shortest-path answers by
 * an independent breadth-first search over the same edge list in this file.
 *
 *   LIBLAB.LOCAL (S-1-5-21-77)                                   OTHER.LOCAL (S-1-5-21-88)
 *     DOM -Contains-> USERS -Contains-> ANN, BEN                 DOM -CrossForestTrust-> DOM2
 *     DOM -Contains-> WS1
 *     ANN -MemberOf-> HELPDESK -MemberOf-> DOMAIN ADMINS (-512)   BEN -MemberOf-> DOMAIN ADMINS
 *     ANN -MemberOf-> PROTECTED USERS (-525)                      CAT, DON -MemberOf-> DOMAIN USERS (-513)
 *     DC1 -MemberOf-> DOMAIN CONTROLLERS (-516)                   LOOP A -MemberOf-> LOOP B -MemberOf-> LOOP A
 *     WS1 -HasSession-> BEN     DC1 -HasSession-> ANN            HELPDESK -AdminTo-> WS1, SRV1
 *     DON -GenericAll-> SRV1    BEN -ForceChangePassword-> ANN   DOMAIN USERS -CanRDP-> WS1
 *   Azure tenant T-LIB: GA role; AG group -AZHasRole-> GA; AU1 -AZMemberOf-> AG; AU2 -AZHasRole-> GA;
 *     AG2 -AZMemberOf-> AG; AU3 -AZMemberOf-> AG2
 */
import { beforeAll, describe, expect, it } from 'vitest'
import { adminToken, expectEnvelope } from '../helpers'
import type { EdgeHoundClient } from '../../src/client'
import { ingest } from '../../src/client/graph'
import { cypherQuery } from '../../src/client/cypher'

const D = 'S-1-5-21-77'
const D2 = 'S-1-5-21-88'
const T = 'T-LIB'
const NOW_S = Math.floor(Date.now() / 1000)
const OLD = NOW_S - 400 * 86400
const RECENT = NOW_S - 10 * 86400

type Props = Record<string, unknown>
const ad = (id: string, kind: string, name: string, props: Props = {}, domain = D) => ({
  id,
  kinds: [kind],
  properties: { name, domainsid: domain, domain: domain === D ? 'LIBLAB.LOCAL' : 'OTHER.LOCAL', ...props },
})
const az = (id: string, kind: string, name: string) => ({ id, kinds: [kind], properties: { name, tenantid: T } })

const N = {
  dom: ad(D, 'Domain', 'LIBLAB.LOCAL', { dsheuristics: '0020000', functionallevel: 2008, collected: true }),
  dom2: ad(D2, 'Domain', 'OTHER.LOCAL', { dsheuristics: '0000000', functionallevel: '2016', collected: true }, D2),
  da: ad(`${D}-512`, 'Group', 'DOMAIN ADMINS@LIBLAB.LOCAL'),
  du: ad(`${D}-513`, 'Group', 'DOMAIN USERS@LIBLAB.LOCAL'),
  dcs: ad(`${D}-516`, 'Group', 'DOMAIN CONTROLLERS@LIBLAB.LOCAL'),
  pu: ad(`${D}-525`, 'Group', 'PROTECTED USERS@LIBLAB.LOCAL'),
  loopA: ad(`${D}-1001`, 'Group', 'LOOP A@LIBLAB.LOCAL'),
  loopB: ad(`${D}-1002`, 'Group', 'LOOP B@LIBLAB.LOCAL'),
  help: ad(`${D}-1003`, 'Group', 'HELPDESK@LIBLAB.LOCAL'),
  ann: ad(`${D}-1101`, 'User', 'ANN@LIBLAB.LOCAL', {
    enabled: true, hasspn: true, pwdlastset: OLD, logonscript: '\\\\other.local\\netlogon\\a.bat',
    supportedencryptiontypes: ['RC4-HMAC-MD5'], serviceprincipalnames: ['MSSQLSvc/db.liblab.local:1433', 'HTTP/web.liblab.local'],
  }),
  ben: ad(`${D}-1102`, 'User', 'BEN@LIBLAB.LOCAL', { enabled: true, pwdlastset: RECENT, system_tags: 'owned', logonscript: '\\\\liblab.local\\netlogon\\b.bat', supportedencryptiontypes: [] }),
  cat: ad(`${D}-1103`, 'User', 'CAT@LIBLAB.LOCAL', { enabled: false }),
  don: ad(`${D}-1104`, 'User', 'DON@LIBLAB.LOCAL', { enabled: true, pwdlastset: 0, supportedencryptiontypes: ['Not defined'] }),
  dc1: ad(`${D}-1000`, 'Computer', 'DC1.LIBLAB.LOCAL', { operatingsystem: 'Windows Server 2022 Standard' }),
  ws1: ad(`${D}-1201`, 'Computer', 'WS1.LIBLAB.LOCAL', { operatingsystem: 'Windows 10 Pro', haslaps: false }),
  srv1: ad(`${D}-1202`, 'Computer', 'SRV1.LIBLAB.LOCAL', { operatingsystem: 'Windows Server 2012 R2', haslaps: true }),
  users: ad('CT-USERS-LIB', 'Container', 'USERS@LIBLAB.LOCAL'),
  tenant: az(T, 'AZTenant', 'LIBTENANT'),
  ga: az('AZ-GA-LIB', 'AZRole', 'GLOBAL ADMINISTRATOR@LIBTENANT'),
  ag: az('AZ-AG', 'AZGroup', 'ADMINS@LIBTENANT'),
  ag2: az('AZ-AG2', 'AZGroup', 'NESTED@LIBTENANT'),
  au1: az('AZ-AU1', 'AZUser', 'AU1@LIBTENANT'),
  au2: az('AZ-AU2', 'AZUser', 'AU2@LIBTENANT'),
  au3: az('AZ-AU3', 'AZUser', 'AU3@LIBTENANT'),
}
type Key = keyof typeof N
const nameOf = (k: Key) => N[k].properties.name as string

const E: [Key, string, Key, Props?][] = [
  ['dom', 'Contains', 'users'], ['users', 'Contains', 'ann'], ['users', 'Contains', 'ben'], ['dom', 'Contains', 'ws1'],
  ['ann', 'MemberOf', 'help'], ['help', 'MemberOf', 'da'], ['ben', 'MemberOf', 'da'], ['ann', 'MemberOf', 'pu'],
  ['cat', 'MemberOf', 'du'], ['don', 'MemberOf', 'du'], ['dc1', 'MemberOf', 'dcs'], ['loopA', 'MemberOf', 'loopB'], ['loopB', 'MemberOf', 'loopA'],
  ['ws1', 'HasSession', 'ben'], ['dc1', 'HasSession', 'ann'], ['help', 'AdminTo', 'ws1'], ['help', 'AdminTo', 'srv1'],
  ['don', 'GenericAll', 'srv1', { isacl: true }], ['ben', 'ForceChangePassword', 'ann', { isacl: true }], ['du', 'CanRDP', 'ws1'],
  ['dom', 'CrossForestTrust', 'dom2'],
  ['ag', 'AZHasRole', 'ga'], ['au1', 'AZMemberOf', 'ag'], ['au2', 'AZHasRole', 'ga'], ['ag2', 'AZMemberOf', 'ag'], ['au3', 'AZMemberOf', 'ag2'],
]

// ---- an independent breadth-first search over E (for the shortest-path answers) ----------------------------
/** The traversable AD kinds among E's (BloodHound's AD_ATTACK_PATHS; CrossForestTrust is not one). */
const AD_TRAVERSABLE = new Set(['Contains', 'MemberOf', 'HasSession', 'AdminTo', 'GenericAll', 'ForceChangePassword', 'CanRDP'])

/** Every shortest path (as lists of names) from s to t over the traversable edges. */
function allShortest(s: Key, t: Key): string[][] {
  const out = new Map<Key, Key[]>()
  for (const [a, k, b] of E) if (AD_TRAVERSABLE.has(k)) out.set(a, [...(out.get(a) ?? []), b])
  const depth = new Map<Key, number>([[s, 0]])
  const parents = new Map<Key, Key[]>()
  let frontier: Key[] = [s]
  while (frontier.length && !depth.has(t)) {
    const next: Key[] = []
    for (const u of frontier)
      for (const v of out.get(u) ?? []) {
        if (!depth.has(v)) {
          depth.set(v, depth.get(u)! + 1)
          next.push(v)
        }
        if (depth.get(v) === depth.get(u)! + 1) parents.set(v, [...(parents.get(v) ?? []), u])
      }
    frontier = next
  }
  if (!depth.has(t) || s === t) return []
  const walk = (v: Key): Key[][] => (v === s ? [[s]] : (parents.get(v) ?? []).flatMap((p) => walk(p).map((path) => [...path, v])))
  return walk(t).map((p) => p.map(nameOf))
}

let admin: EdgeHoundClient

beforeAll(async () => {
  admin = await adminToken()
  await ingest(admin, {
    graph: {
      nodes: Object.values(N),
      edges: E.map(([a, kind, b, properties]) => ({ start: { value: N[a].id }, end: { value: N[b].id }, kind, properties: properties ?? {} })),
    },
  })
})

const run = async (query: string) => (await cypherQuery(admin, query)).data
/** The names of the answer's nodes, sorted. */
const names = async (query: string) => Object.values((await run(query)).nodes).map((n) => n.label).sort()
/** The literal values of the answer, in row order. */
const literals = async (query: string) => (await run(query)).literals.map((l) => l.value)
const notFound = async (query: string) => expectEnvelope(await admin.raw('POST', '/api/v2/graphs/cypher', { query }), 404, 'resource not found')

describe('library shapes, exact answers', () => {
  it('a two-hop chain with type alternation and a capitalised boolean literal: one path per match', async () => {
    const r = await run('MATCH p = (u:User)-[:MemberOf]->(g:Group)-[:AdminTo|CanRDP]->(c:Computer) WHERE c.haslaps = False RETURN p')
    // ANN→HELPDESK→WS1 (AdminTo), CAT→DOMAIN USERS→WS1, DON→DOMAIN USERS→WS1 (CanRDP); SRV1 has LAPS
    expect(Object.values(r.nodes).map((n) => n.label).sort()).toEqual([nameOf('ann'), nameOf('cat'), nameOf('du'), nameOf('don'), nameOf('help'), nameOf('ws1')].sort())
    expect(r.edges).toHaveLength(6)
    expect(r.edges.map((e) => e.kind).sort()).toEqual(['AdminTo', 'CanRDP', 'CanRDP', 'MemberOf', 'MemberOf', 'MemberOf'])
  })

  it('circular memberships: *2.. from a node back to itself (trails: each relationship once per path)', async () => {
    const r = await run('MATCH p = (x:Group)-[:MemberOf*2..]->(y:Group) WHERE x.objectid = y.objectid RETURN p')
    expect(Object.values(r.nodes).map((n) => n.label).sort()).toEqual([nameOf('loopA'), nameOf('loopB')])
    expect(r.edges).toHaveLength(4) // A→B→A and B→A→B; a longer walk would repeat a relationship
    expect(await literals('MATCH p = (x:Group)-[:MemberOf*2..]->(y:Group) WHERE x.objectid = y.objectid RETURN x.name, length(p) ORDER BY x.name')).toEqual([nameOf('loopA'), 2, nameOf('loopB'), 2])
  })

  it('OPTIONAL MATCH with a WHERE, collect, and a WHERE on the size of the collected list', async () => {
    const q = 'MATCH (d:Domain) OPTIONAL MATCH (c:Computer) WHERE c.domainsid = d.objectid AND c.haslaps = true WITH d, collect(c) AS cs WHERE size(cs) = 0 RETURN d'
    expect(await names(q)).toEqual(['OTHER.LOCAL']) // LIBLAB has SRV1 with LAPS
  })

  it('OPTIONAL MATCH then WITH n, g WHERE g IS NULL: the nodes with no matching relationship', async () => {
    const q =
      "MATCH (n:User) OPTIONAL MATCH (n)-[:MemberOf]->(g:Group) WHERE g.objectid ENDS WITH '-512' OR g.objectid ENDS WITH '-525' WITH n, g WHERE g IS NULL RETURN n.name ORDER BY n.name"
    // ANN is in PROTECTED USERS, BEN in DOMAIN ADMINS (directly); CAT and DON only in DOMAIN USERS
    expect(await literals(q)).toEqual([nameOf('cat'), nameOf('don')])
  })

  it('collect(nodes) in a first part, NOT c IN that list in the second', async () => {
    const base = "MATCH p = (c:Computer)-[:HasSession]->(:User)-[:MemberOf*1..]->(g:Group) WHERE g.objectid ENDS WITH '-512'"
    // without the exclusion: WS1→BEN→DA and DC1→ANN→HELPDESK→DA
    expect(await literals(`${base} RETURN c.name ORDER BY c.name`)).toEqual([nameOf('dc1'), nameOf('ws1')])
    const q = `MATCH (s)-[:MemberOf*0..]->(g:Group) WHERE g.objectid ENDS WITH '-516' WITH collect(s) AS exclude ${base} AND NOT c IN exclude RETURN p`
    const r = await run(q)
    expect(Object.values(r.nodes).map((n) => n.label).sort()).toEqual([nameOf('ben'), nameOf('da'), nameOf('ws1')].sort())
    expect(r.edges.map((e) => e.kind).sort()).toEqual(['HasSession', 'MemberOf'])
  })

  it('collect(property) then NOT x.prop IN the list', async () => {
    const q =
      "MATCH (n:User)-[:MemberOf*1..]->(g:Group) WHERE g.objectid ENDS WITH '-512' WITH collect(n.objectid) AS das MATCH (x:User) WHERE NOT x.objectid IN das RETURN x.name ORDER BY x.name"
    expect(await literals(q)).toEqual([nameOf('cat'), nameOf('don')])
  })

  it('OPTIONAL MATCH over a variable-length pattern, collect, NONE(x IN list WHERE …)', async () => {
    const q =
      "MATCH (m:User) WHERE m.enabled = true OPTIONAL MATCH (g:Group)<-[:MemberOf*1..]-(n:Base) WHERE g.objectid ENDS WITH '-525' WITH m, collect(n) AS prot WHERE NONE(x IN prot WHERE x.objectid = m.objectid) RETURN m.name ORDER BY m.name"
    // enabled: ANN, BEN, DON; ANN is the one protected user
    expect(await literals(q)).toEqual([nameOf('ben'), nameOf('don')])
  })

  it('a leading WITH constant, datetime().epochseconds arithmetic, NOT … IN a list of floats (0 = 0.0)', async () => {
    const head = 'WITH 365 AS days MATCH (u:User) WHERE u.pwdlastset < (datetime().epochseconds - (days * 86400))'
    expect(await literals(`${head} RETURN u.name ORDER BY u.name`)).toEqual([nameOf('ann'), nameOf('don')])
    expect(await literals(`${head} AND NOT u.pwdlastset IN [-1.0, 0.0] RETURN u.name`)).toEqual([nameOf('ann')])
  })

  it('a relationship property as the predicate (r.isacl) on an untyped relationship, with a cross-node condition', async () => {
    const r = await run('MATCH p = (a:Base)-[r]->(b:Base) WHERE r.isacl AND a.domainsid = b.domainsid RETURN p')
    expect(r.edges.map((e) => e.kind).sort()).toEqual(['ForceChangePassword', 'GenericAll'])
    expect(Object.values(r.nodes).map((n) => n.label).sort()).toEqual([nameOf('ann'), nameOf('ben'), nameOf('don'), nameOf('srv1')].sort())
    // r.isacl is applied by the store while reading: the same answer as a WHERE it cannot take (an OR), fewer steps
    const steps = async (query: string) => {
      const res = await admin.raw('POST', '/api/v2/graphs/cypher', { query })
      expect(res.status).toBe(200)
      const plan = res.headers.get('x-cypher-plan') ?? ''
      return { plan, steps: Number(/steps (\d+)/.exec(plan)?.[1]), body: ((await res.json()) as { data: { edges: unknown[] } }).data }
    }
    const pushed = await steps('MATCH p = (a:Base)-[r]->(b:Base) WHERE r.isacl AND a.domainsid = b.domainsid RETURN p')
    const walked = await steps('MATCH p = (a:Base)-[r]->(b:Base) WHERE (r.isacl OR a.nothing = 1) AND a.domainsid = b.domainsid RETURN p')
    expect(pushed.plan).toMatch(/relationships read where r\.isacl = true/)
    expect(walked.plan).not.toMatch(/relationships read where/)
    expect(pushed.body.edges).toEqual(walked.body.edges)
    expect(pushed.steps).toBeLessThan(walked.steps)
  })

  it('AD_ATTACK_PATHS with NOT r:Kind, collect(DISTINCT(m)), SIZE(list) >= n', async () => {
    const q = 'MATCH (n:Base)-[r:AD_ATTACK_PATHS]->(m:Base) WHERE NOT r:MemberOf WITH n, COLLECT(DISTINCT(m)) AS endNodes WHERE SIZE(endNodes) >= 2 RETURN n.name ORDER BY n.name'
    // HELPDESK: AdminTo WS1, SRV1; LIBLAB: Contains USERS, WS1; USERS: Contains ANN, BEN (the trust is not traversable)
    expect(await literals(q)).toEqual([nameOf('help'), nameOf('dom'), nameOf('users')])
  })

  it('WITH DISTINCT u, COUNT(c) then ORDER BY the count (not returned); COUNT(n) grouped by n itself', async () => {
    const q = 'MATCH (u:User) WHERE u.enabled = true MATCH (u)-[:MemberOf|AdminTo*1..]->(c:Computer) WITH DISTINCT u, COUNT(c) AS n RETURN u.name, n ORDER BY n DESC'
    expect(await literals(q)).toEqual([nameOf('ann'), 2]) // ANN→HELPDESK→WS1 / SRV1
    expect(await names('MATCH (n:Group)<-[:MemberOf]-(:User) WITH n, COUNT(n) AS c WHERE c = 2 RETURN n')).toEqual([nameOf('du')])
  })

  it('last(split(…)) and string concatenation with backslashes inside STARTS WITH, over a trust and Contains*1..', async () => {
    const q = String.raw`MATCH (n:User) WHERE n.logonscript IS NOT NULL MATCH (d:Domain)<-[:SameForestTrust|CrossForestTrust]-(:Domain)-[:Contains*1..]->(n) WITH n, last(split(d.name, '@')) AS dom WHERE toUpper(n.logonscript) STARTS WITH ('\\\\' + dom + '\\') RETURN n.name`
    expect(await literals(q)).toEqual([nameOf('ann')]) // BEN's script is in its own domain
  })

  it('toString of a number IN a list of strings', async () => {
    expect(await names("MATCH (n:Domain) WHERE toString(n.functionallevel) IN ['2008', '2003', '2000 Mixed/Native'] RETURN n")).toEqual(['LIBLAB.LOCAL'])
  })

  it('shortestPath written from the target (<-[:AD_ATTACK_PATHS*1..]-) with s <> t: one shortest path per source', async () => {
    const sources: Key[] = ['ann', 'ben', 'cat', 'don', 'help', 'dc1', 'ws1', 'dom', 'users', 'du']
    const expected = sources.map((s) => [nameOf(s), allShortest(s, 'da')[0].length - 1] as const).filter(([, l]) => l > 0)
    const rows = await literals("MATCH p = shortestPath((t:Group)<-[:AD_ATTACK_PATHS*1..]-(s:Base)) WHERE t.objectid ENDS WITH '-512' AND s <> t RETURN s.name, length(p)")
    const got: [string, number][] = []
    for (let i = 0; i < rows.length; i += 2) got.push([rows[i] as string, rows[i + 1] as number])
    expect(got.sort()).toEqual([...expected].sort())
    // the brute force agrees with the picture: CAT reaches DA through DOMAIN USERS -CanRDP-> WS1 -HasSession-> BEN
    expect(expected.find(([n]) => n === nameOf('cat'))![1]).toBe(4)
  })

  it('allShortestPaths: every path of the shortest length, as the brute force enumerates them', async () => {
    const rows = await literals(
      "MATCH p = allShortestPaths((s:Domain)-[:AD_ATTACK_PATHS*1..]->(t:Group)) WHERE t.objectid ENDS WITH '-512' RETURN [x IN nodes(p) | x.name] AS names",
    )
    const expected = allShortest('dom', 'da')
    expect(expected).toHaveLength(2) // LIBLAB→USERS→BEN→DA and LIBLAB→WS1→BEN→DA
    expect((rows as string[][]).map((r) => r.join(' > ')).sort()).toEqual(expected.map((r) => r.join(' > ')).sort())
    const one = await literals("MATCH p = shortestPath((s:Domain)-[:AD_ATTACK_PATHS*1..]->(t:Group)) WHERE t.objectid ENDS WITH '-512' RETURN length(p)")
    expect(one).toEqual([3])
  })

  it('shortest paths from owned objects (label OR system_tags), to every reachable node', async () => {
    const rows = await literals(
      "MATCH p = shortestPath((s:Base)-[:AD_ATTACK_PATHS*1..]->(t:Base)) WHERE ((s:Tag_Owned) OR COALESCE(s.system_tags, '') CONTAINS 'owned') AND s <> t RETURN t.name, length(p)",
    )
    const targets: Key[] = ['da', 'ann', 'help', 'pu', 'ws1', 'srv1']
    const expected = targets.map((t) => [nameOf(t), allShortest('ben', t)[0].length - 1])
    const got: unknown[][] = []
    for (let i = 0; i < rows.length; i += 2) got.push([rows[i], rows[i + 1]])
    expect(got.sort()).toEqual(expected.sort())
  })

  it('bounded variable length with type alternation toward a role (*1..2), regex with (?i)', async () => {
    const r = await run("MATCH p = (t:AZRole)<-[:AZHasRole|AZMemberOf*1..2]-(:AZBase) WHERE t.name =~ '(?i)global administrator.*' RETURN p")
    // AG→GA, AU2→GA, AU1→AG→GA, AG2→AG→GA; AU3 is three hops away
    expect(Object.values(r.nodes).map((n) => n.label).sort()).toEqual([nameOf('ag'), nameOf('ag2'), nameOf('au1'), nameOf('au2'), nameOf('ga')].sort())
    expect(r.edges).toHaveLength(6)
  })

  it('an undirected pattern with an undirected pattern predicate on two bound nodes', async () => {
    const r = await run('MATCH p = (n:Domain)-[:CrossForestTrust|SameForestTrust]-(m:Domain) WHERE (n)-[:CrossForestTrust]-(m) RETURN p')
    expect(Object.values(r.nodes).map((n) => n.label).sort()).toEqual(['LIBLAB.LOCAL', 'OTHER.LOCAL'])
    expect(r.edges).toHaveLength(2) // the one relationship, matched from either end
  })

  it('several MATCH clauses joined by conditions across them (a cartesian product filtered)', async () => {
    const q =
      "MATCH (dc:Computer) WHERE dc.operatingsystem CONTAINS '2012' MATCH (m:User) WHERE m.enabled = false MATCH p = (c:Computer)<-[:GenericAll|AdminTo]-(n:Base) WHERE c.domain = dc.domain AND c.domain = m.domain AND NOT ((n:Tag_Tier_Zero) OR COALESCE(n.system_tags, '') CONTAINS 'admin_tier_0') RETURN p"
    const r = await run(q)
    expect(r.edges.map((e) => e.kind).sort()).toEqual(['AdminTo', 'AdminTo', 'GenericAll'])
    expect(Object.values(r.nodes).map((n) => n.label).sort()).toEqual([nameOf('don'), nameOf('help'), nameOf('srv1'), nameOf('ws1')].sort())
  })

  it('list properties: <> and = against list literals, IN, ANY / NONE with string tests', async () => {
    expect(await literals("MATCH (n:User) WHERE n.supportedencryptiontypes <> ['Not defined'] RETURN n.name ORDER BY n.name")).toEqual([nameOf('ann'), nameOf('ben')])
    expect(await literals('MATCH (n:User) WHERE n.supportedencryptiontypes = [] RETURN n.name')).toEqual([nameOf('ben')])
    expect(await literals("MATCH (n:User) WHERE 'RC4-HMAC-MD5' IN n.supportedencryptiontypes RETURN n.name")).toEqual([nameOf('ann')])
    expect(await literals("MATCH (n:User) WHERE ANY(s IN n.serviceprincipalnames WHERE toLower(s) CONTAINS 'mssqlsvc') RETURN n.name")).toEqual([nameOf('ann')])
    // NONE over an empty list is true; over a missing (null) list it is null, so CAT is not returned
    expect(await literals("MATCH (n:User) WHERE NONE(t IN n.supportedencryptiontypes WHERE t CONTAINS 'AES') RETURN n.name ORDER BY n.name")).toEqual([
      nameOf('ann'),
      nameOf('ben'),
      nameOf('don'),
    ])
  })

  it('regular expressions match the whole string (as Neo4j, BloodHound’s default driver)', async () => {
    expect(await names("MATCH (n:Domain) WHERE n.dsheuristics =~ '.{2}[^0].*' RETURN n")).toEqual(['LIBLAB.LOCAL'])
    expect(await names("MATCH (n:Computer) WHERE n.operatingsystem =~ '(?i).*windows.* (2008|2012|xp).*' RETURN n")).toEqual([nameOf('srv1')])
    expect(await names("MATCH (g:Group) WHERE g.objectid =~ '.*-(512|516)$' RETURN g")).toEqual([nameOf('da'), nameOf('dcs')].sort())
    // a pattern written for a substring search ('-(512|516)$') matches no whole object id
    await notFound("MATCH (g:Group) WHERE g.objectid =~ '-(512|516)$' RETURN g")
  })
})
