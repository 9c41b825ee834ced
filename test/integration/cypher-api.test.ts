/**
 * POST /api/v2/graphs/cypher through the worker and D1: BloodHound's response shape, every refusal as a
 * 400 envelope, 404 when nothing is found, environment access, and mutations refused with the graph
 * unchanged. The graph is the hand-built one of test/unit/cypher-graph.ts, ingested as OpenGraph.
 */
import { beforeAll, describe, expect, it } from 'vitest'
import { adminToken, env, expectEnvelope, userWithRole } from '../helpers'
import type { EdgeHoundClient } from '../../src/client'
import { ingest } from '../../src/client/graph'
import { cypherQuery } from '../../src/client/cypher'
import { CORP, EDGES, LAB, NODES, TENANT } from '../unit/cypher-graph'
import { Budget, DEFAULT_LIMITS, ISOLATE_MAX_BYTES, ISOLATE_POOL } from '../../src/cypher/budget'

let admin: EdgeHoundClient
let corpOnly: EdgeHoundClient

const objectIdOf = (id: number) => NODES.find((n) => n.id === id)!.objectid

beforeAll(async () => {
  admin = await adminToken()
  await ingest(admin, {
    graph: {
      nodes: NODES.map((n) => ({
        id: n.objectid,
        kinds: n.kinds,
        properties: { ...n.properties, ...(n.environment_id === TENANT ? { tenantid: TENANT } : n.kinds[0] === 'Domain' ? {} : { domainsid: n.environment_id }) },
      })),
      edges: EDGES.map((e) => ({ start: { value: objectIdOf(e.start) }, end: { value: objectIdOf(e.end) }, kind: e.kind, properties: e.properties })),
    },
  })
  corpOnly = (await userWithRole('Read-Only', { all_environments: false, environment_access: [CORP] })).client
})

const post = (c: EdgeHoundClient, body: unknown) => c.raw('POST', '/api/v2/graphs/cypher', body as Record<string, unknown>)

describe('answers', () => {
  it("Sentinel's Tier Zero query: nodes keyed by id with BloodHound's fields, properties and node_keys with include_properties", async () => {
    const q = "match (n) where (n:Tag_Tier_Zero) or coalesce(n.system_tags,'') contains('admin_tier_0') return n"
    const plain = await cypherQuery(admin, q)
    const nodes = Object.values(plain.data.nodes)
    expect(nodes.map((n) => n.objectId).sort()).toEqual([CORP, `${CORP}-512`, LAB].sort())
    expect(plain.data.edges).toEqual([])
    expect(plain.data.literals).toEqual([])
    expect('node_keys' in plain.data).toBe(false)
    const da = nodes.find((n) => n.objectId === `${CORP}-512`)!
    expect(da).toMatchObject({ label: 'DOMAIN ADMINS@CORP.LOCAL', kind: 'Group', isTierZero: true, isOwnedObject: false })
    expect(da.kinds).toEqual(['Group', 'Base', 'Tag_Tier_Zero'])
    expect(da.lastSeen).toMatch(/Z$/)
    expect('properties' in da).toBe(false)
    const full = await cypherQuery(admin, q, true)
    const fda = Object.values(full.data.nodes).find((n) => n.objectId === `${CORP}-512`)!
    expect(fda.properties).toMatchObject({ name: 'DOMAIN ADMINS@CORP.LOCAL', objectid: `${CORP}-512`, system_tags: 'admin_tier_0' })
    expect(full.data.node_keys).toEqual([...full.data.node_keys!].sort())
    expect(full.data.node_keys).toEqual(expect.arrayContaining(['name', 'objectid', 'system_tags']))
  })

  it('paths: nodes and one edge entry per relationship of every returned path, ends as node keys', async () => {
    const r = await cypherQuery(admin, "MATCH p = (u:User)-[:MemberOf*1..]->(g:Group) WHERE g.objectid ENDS WITH '-512' RETURN p")
    const byKey = r.data.nodes
    expect(Object.values(byKey).map((n) => n.objectId).sort()).toEqual(['G-HELP', 'G-IT', `${CORP}-512`, 'U-ALICE', 'U-BOB', 'U-CAROL'].sort())
    // 4 paths: ALICE-HELPDESK-DA, ALICE-IT-DA, BOB-DA, CAROL-DA → 6 relationship entries
    expect(r.data.edges).toHaveLength(6)
    for (const e of r.data.edges) {
      expect(byKey[e.source]).toBeDefined()
      expect(byKey[e.target]).toBeDefined()
      expect(e).toMatchObject({ label: 'MemberOf', kind: 'MemberOf' })
      expect('properties' in e).toBe(false)
    }
    const withProps = await cypherQuery(admin, "MATCH p = (:User {objectid: 'U-BOB'})-[r:MemberOf]->() RETURN p", true)
    expect(withProps.data.edges[0].properties).toEqual({ isprimarygroup: true })
    expect(withProps.data.edge_keys).toEqual(['isprimarygroup'])
  })

  it('scalar columns are literals, one per column per row in row order', async () => {
    const r = await cypherQuery(admin, "MATCH (u:User) WHERE u.name STARTS WITH 'A' OR u.name STARTS WITH 'B' RETURN u.name AS name, size(u.name) ORDER BY name")
    expect(r.data.literals).toEqual([
      { key: 'name', value: 'ALICE@CORP.LOCAL' },
      { key: 'size(u.name)', value: 16 },
      { key: 'name', value: 'BOB@CORP.LOCAL' },
      { key: 'size(u.name)', value: 14 },
    ])
    expect(r.data.nodes).toEqual({})
    const counts = await cypherQuery(admin, 'MATCH (u:User)-[:MemberOf]->(g:Group) RETURN g.name, count(u) AS c ORDER BY c DESC, g.name')
    expect(counts.data.literals.map((l) => l.value)).toEqual(['DOMAIN ADMINS@CORP.LOCAL', 2, 'HELPDESK@CORP.LOCAL', 1, 'IT@CORP.LOCAL', 1])
  })

  it('count per node answered by the store: the same answers as the walk, for every caller', async () => {
    for (const client of [admin, corpOnly]) {
      const pushed = await post(client, { query: 'MATCH (g:Group)<-[:MemberOf]-(m) WITH g, count(m) AS c RETURN g.name, c ORDER BY c DESC, g.name' })
      expect(pushed.status).toBe(200)
      expect(pushed.headers.get('x-cypher-plan')).toMatch(/count of incoming MemberOf relationships per node, in the store/)
      // a labelled m is walked (every AD node is Base)
      const walked = await cypherQuery(client, 'MATCH (g:Group)<-[:MemberOf]-(m:Base) WITH g, count(m) AS c RETURN g.name, c ORDER BY c DESC, g.name')
      expect(((await pushed.json()) as typeof walked).data.literals).toEqual(walked.data.literals)
    }
    const corp = await cypherQuery(corpOnly, 'MATCH (g:Group)<-[:MemberOf]-(m) WITH g, count(m) AS c RETURN g.name, c ORDER BY c DESC, g.name LIMIT 1')
    const all = await cypherQuery(admin, 'MATCH (g:Group)<-[:MemberOf]-(m) WITH g, count(m) AS c RETURN g.name, c ORDER BY c DESC, g.name LIMIT 1')
    // CAROL (LAB) is a member of DOMAIN ADMINS: counted for the administrator only
    expect(all.data.literals.map((l) => l.value)).toEqual(['DOMAIN ADMINS@CORP.LOCAL', 4])
    expect(corp.data.literals.map((l) => l.value)).toEqual(['DOMAIN ADMINS@CORP.LOCAL', 3])
  })

  it('shortest paths and the plan header', async () => {
    const res = await post(admin, { query: "MATCH p = allShortestPaths((a {objectid: 'U-ALICE'})-[:MemberOf*1..]->(g {objectid: 'S-1-5-21-1-512'})) RETURN p" })
    expect(res.status).toBe(200)
    expect(res.headers.get('x-cypher-plan')).toMatch(/allShortestPaths: 1 x 1/)
    const body = (await res.json()) as { data: { edges: unknown[]; nodes: Record<string, unknown> } }
    expect(body.data.edges).toHaveLength(4)
    expect(Object.keys(body.data.nodes)).toHaveLength(4)
  })

  it('relationships are walked without their properties; the returned ones get them (include_properties)', async () => {
    const query = "MATCH p = (u:User {objectid: 'U-BOB'})-[:MemberOf*1..]->(g) RETURN p"
    const res = await post(admin, { query, include_properties: true })
    expect(res.status).toBe(200)
    expect(res.headers.get('x-cypher-plan')).toMatch(/relationship properties not read/)
    const body = (await res.json()) as { data: { edge_keys?: string[]; edges: { properties?: Record<string, unknown>; kind: string }[] } }
    expect(body.data.edge_keys).toEqual(['isprimarygroup'])
    expect(body.data.edges).toEqual([expect.objectContaining({ kind: 'MemberOf', properties: { isprimarygroup: true } })])
    // a query that reads them while walking gets the same relationships
    const filtered = await post(admin, { query: "MATCH p = (u:User)-[r:MemberOf]->(g) WHERE r.isprimarygroup = true RETURN p", include_properties: true })
    expect(filtered.headers.get('x-cypher-plan')).toMatch(/relationship properties read/)
    expect(((await filtered.json()) as typeof body).data.edges).toEqual(body.data.edges)
  })

  it('nothing found → 404 "resource not found"', async () => {
    await expectEnvelope(await post(admin, { query: "MATCH (n) WHERE n.name = 'nobody' RETURN n" }), 404, 'resource not found')
  })
})

describe('conditions tested in the store', () => {
  it('derived labels and text conditions are pushed to the scan with the same answers (the engine re-tests every node)', async () => {
    const cases: [string, string[], RegExp][] = [
      ['MATCH (n:Tag_Tier_Zero) RETURN n.objectid AS o ORDER BY o', [CORP, `${CORP}-512`, LAB].sort(), /"tierZero"/],
      ["MATCH (n) WHERE (n:Tag_Tier_Zero) OR coalesce(n.system_tags, '') CONTAINS 'admin_tier_0' RETURN n.objectid AS o ORDER BY o", [CORP, `${CORP}-512`, LAB].sort(), /"tierZero"/],
      ['MATCH (n) WHERE n:Tag_Owned RETURN n.objectid AS o', ['U-DAVE'], /"owned"/],
      ["MATCH (n) WHERE n.name =~ '(?i)alice.*' RETURN n.objectid AS o ORDER BY o", ['AZ-ALICE', 'U-ALICE'], /"contains","value":"alice","anyCase":true/],
      ["MATCH (n:Group) WHERE n.objectid ENDS WITH '-512' RETURN n.objectid AS o", [`${CORP}-512`], /"endsWith","value":"-512"/],
      // Cypher's STARTS WITH is case-sensitive, and so is the store's test
      ["MATCH (n) WHERE n.name STARTS WITH 'bob' RETURN n.objectid AS o", [], /"startsWith","value":"bob","anyCase":false/],
      ["MATCH (n) WHERE n.name STARTS WITH 'BOB' RETURN n.objectid AS o", ['U-BOB'], /"startsWith"/],
    ]
    for (const [query, want, plan] of cases) {
      const res = await post(admin, { query })
      expect(res.headers.get('x-cypher-plan'), query).toMatch(plan)
      if (want.length === 0) {
        expect(res.status, query).toBe(404)
        continue
      }
      expect(res.status, query).toBe(200)
      const body = (await res.json()) as { data: { literals: { value: string }[] } }
      expect(body.data.literals.map((l) => l.value), query).toEqual(want)
    }
  })
})

describe('environment access', () => {
  it('existence tests are answered by the store, for every caller, with the same answers as a walk', async () => {
    for (const [client, query, want] of [
      [admin, 'MATCH (u:User) WHERE NOT (u)-[:MemberOf]->() RETURN u.name AS n', ['DAVE@CORP.LOCAL']],
      [corpOnly, 'MATCH (u:User) WHERE (u)-[:MemberOf]-() RETURN u.name AS n ORDER BY n', ['ALICE@CORP.LOCAL', 'BOB@CORP.LOCAL']],
      [corpOnly, 'MATCH (g:Group) WHERE ()-[:MemberOf]->(g) AND (g)-[:MemberOf]->() RETURN g.name AS n ORDER BY n', ['HELPDESK@CORP.LOCAL', 'IT@CORP.LOCAL']],
    ] as [EdgeHoundClient, string, string[]][]) {
      const res = await post(client, { query })
      expect(res.status, query).toBe(200)
      expect(res.headers.get('x-cypher-plan'), query).toMatch(/existence test on/)
      const body = (await res.json()) as { data: { literals: { value: string }[] } }
      expect(body.data.literals.map((l) => l.value), query).toEqual(want)
    }
  })

  it('a scan takes [NOT] (n)-[:K]->() to the store (one statement, access applied), with the answers of a walk', async () => {
    const names = async (client: EdgeHoundClient, query: string) => {
      const res = await post(client, { query })
      if (res.status === 404) return { plan: res.headers.get('x-cypher-plan') ?? '', names: [] as string[] }
      expect(res.status, query).toBe(200)
      const body = (await res.json()) as { data: { literals: { value: string }[] } }
      return { plan: res.headers.get('x-cypher-plan') ?? '', names: body.data.literals.map((l) => l.value) }
    }
    for (const client of [admin, corpOnly])
      for (const [test, walk] of [
        ['NOT (n)-[:MemberOf]->()', 'NOT EXISTS { MATCH (n)-[:MemberOf]->() WHERE true }'],
        ['(n)-[:MemberOf]->()', 'EXISTS { MATCH (n)-[:MemberOf]->() WHERE true }'],
        ['NOT ()-[:MemberOf|AdminTo]->(n)', 'NOT EXISTS { MATCH ()-[:MemberOf|AdminTo]->(n) WHERE true }'],
        ['(n)-[]-()', 'EXISTS { MATCH (n)-[]-() WHERE true }'],
        ['NOT (n)-[]-()', 'NOT EXISTS { MATCH (n)-[]-() WHERE true }'],
      ]) {
        const pushed = await names(client, `MATCH (n) WHERE ${test} RETURN n.objectid AS o ORDER BY o`)
        const walked = await names(client, `MATCH (n) WHERE ${walk} RETURN n.objectid AS o ORDER BY o`)
        expect(pushed.names, test).toEqual(walked.names)
        if (pushed.plan) expect(pushed.plan, test).toContain('"type":"related"')
        expect(walked.plan).not.toContain('"type":"related"')
      }
    // the restricted caller: a relationship to a node it may not see does not count
    const admins = await names(admin, 'MATCH (n) WHERE NOT (n)-[]-() RETURN n.objectid AS o ORDER BY o')
    const corp = await names(corpOnly, 'MATCH (n) WHERE NOT (n)-[]-() RETURN n.objectid AS o ORDER BY o')
    expect(corp.names).not.toEqual(admins.names)
  })

  it('a restricted caller neither sees nor traverses nodes of other environments', async () => {
    const r = await cypherQuery(corpOnly, "MATCH p = (u:User)-[:MemberOf*1..]->(g:Group) WHERE g.objectid ENDS WITH '-512' RETURN p")
    expect(Object.values(r.data.nodes).map((n) => n.objectId)).not.toContain('U-CAROL')
    expect(r.data.edges).toHaveLength(5)
    await expectEnvelope(await post(corpOnly, { query: "MATCH (n {objectid: 'U-CAROL'}) RETURN n" }), 404, 'resource not found')
    await expectEnvelope(await post(corpOnly, { query: "MATCH (n)-[*0..]-(m) WHERE m.objectid IN ['U-CAROL', 'AZ-ALICE', $x] RETURN m" }), 400)
    await expectEnvelope(await post(corpOnly, { query: "MATCH (n)-[*0..]-(m) WHERE m.objectid IN ['U-CAROL', 'AZ-ALICE', 'S-1-5-21-2'] RETURN m" }), 404)
    // one-to-one shortest paths (bidirectional search, relationship records read at the end) through D1
    const toCarol = "MATCH p = shortestPath((a {objectid: 'U-ALICE'})-[*1..]-(c {objectid: 'U-CAROL'})) RETURN p"
    const seen = await cypherQuery(admin, toCarol)
    expect(seen.data.edges).toHaveLength(3)
    expect(seen.data.edges.every((e) => typeof e.lastSeen === 'string' && e.lastSeen !== '')).toBe(true)
    await expectEnvelope(await post(corpOnly, { query: toCarol }), 404, 'resource not found')
    const toDa = await cypherQuery(corpOnly, "MATCH p = allShortestPaths((a {objectid: 'U-ALICE'})-[:MemberOf*1..]->(g {objectid: 'S-1-5-21-1-512'})) RETURN p")
    expect(toDa.data.edges).toHaveLength(4)
    const t0 = await cypherQuery(corpOnly, 'MATCH (n:Tag_Tier_Zero) RETURN count(n) AS c')
    expect(t0.data.literals).toEqual([{ key: 'c', value: 2 }])
    const none = await userWithRole('Read-Only', { all_environments: false, environment_access: [] })
    await expectEnvelope(await post(none.client, { query: 'MATCH (n) RETURN n' }), 404)
  })

  it('needs graph read permission', async () => {
    await expectEnvelope(await post((await userWithRole('Upload-Only')).client, { query: 'MATCH (n) RETURN n' }), 403)
    expect((await post((await userWithRole('Read-Only')).client, { query: 'MATCH (n) RETURN n LIMIT 1' })).status).toBe(200)
  })
})

describe('refusals (400 envelope, never a 5xx)', () => {
  it("each refusal with BloodHound's message", async () => {
    const cases: [unknown, string | RegExp][] = [
      [{ query: 'MATCH (n RETURN n' }, /^line 1:9 /],
      [{ query: '' }, 'invalid input'],
      [{ query: 'MATCH (n) WHERE n.name = $name RETURN n' }, 'user-specified parameters are not supported'],
      [{ query: 'CALL db.labels()' }, 'procedure invocation is not supported'],
      [{ query: `RETURN ${'('.repeat(5_000)}1${')'.repeat(5_000)}` }, 'cypher query is too complex and is likely to result in poor or unstable database performance'],
      [{ query: "MATCH (n) WHERE n.name =~ '(a+)+b' RETURN n" }, /too complex/],
      [{ query: 'MATCH (a), (b), (c), (d), (e) RETURN count(*)' }, /it produced more than 100000 intermediate rows \(row limit\)/],
      // these killed the worker or answered 500 before (no store round trip stops them, so no clock does)
      [{ query: 'UNWIND range(1, 100000) AS x UNWIND range(1, 100000) AS y RETURN count(*)' }, /row limit/],
      [{ query: 'RETURN size([x IN range(1, 100000) | range(1, 100000)]) AS n' }, /more than 2000000 list elements and string pieces \(value limit\)/],
      [{ query: `RETURN ${'NOT '.repeat(2_000)}true AS x` }, 'cypher query is too complex and is likely to result in poor or unstable database performance'],
      [{ include_properties: true }, 'invalid input'],
      [{}, 'invalid input'],
      [{ query: 42 }, /query/],
    ]
    for (const [body, message] of cases) await expectEnvelope(await post(admin, body), 400, message)
    // a query stopped while it ran says how it was being matched and what it had spent; one refused before it ran has no plan
    const stopped = await post(admin, { query: 'MATCH (a), (b), (c), (d), (e) RETURN count(*)' })
    expect(stopped.headers.get('x-cypher-plan')).toMatch(/^scan .*; 0 hop\(s\) \(stopped; rows 1\d{5}, steps \d+, bytes \d+\)$/)
    expect((await post(admin, { query: 'CALL db.labels()' })).headers.get('x-cypher-plan')).toBeNull()
    await expectEnvelope(await post(admin, { query: `MATCH (n) WHERE n.name = '${'x'.repeat(100_000)}' RETURN n` }), 400, /too complex/)
    await expectEnvelope(await post(admin, { query: `MATCH (n) WHERE n.name = '${'x'.repeat(1_000_000)}' RETURN n` }), 413)
    // a non-ASCII literal (quoted in the plan header) is answered normally
    await expectEnvelope(await post(admin, { query: "MATCH (n {name: 'ÄLICE\u2028'}) RETURN n" }), 404, 'resource not found')
    const bad = await admin.raw('POST', '/api/v2/graphs/cypher', '{"query": ', { headers: { 'content-type': 'application/json' } })
    await expectEnvelope(bad, 400)
  })

  it('updating clauses are refused and the graph is unchanged', async () => {
    const snapshot = async () =>
      env.DB.prepare('SELECT (SELECT count(*) FROM nodes) AS n, (SELECT count(*) FROM edges) AS e, (SELECT group_concat(properties) FROM nodes) AS p').first()
    const before = await snapshot()
    for (const query of [
      "MATCH (n {objectid: 'U-BOB'}) SET n.admincount = true RETURN n",
      'MATCH (n) DETACH DELETE n',
      'MATCH (n) WITH n delete n',
      'CREATE (n:User {name: "EVIL"}) RETURN n',
      "MERGE (n:Group {objectid: 'X'}) RETURN n",
      "MATCH (n {objectid: 'U-BOB'}) REMOVE n.name RETURN n",
      "MATCH (n {objectid: 'U-BOB'}) set n:Tag_Tier_Zero",
    ])
      await expectEnvelope(await post(admin, { query }), 400, 'updating clauses are not supported')
    expect(await snapshot()).toEqual(before)
    // a comment or a string saying SET is harmless
    const ok = await cypherQuery(admin, "// SET n.x = 1\nMATCH (n) WHERE n.name = 'SET' OR n.objectid = 'U-BOB' RETURN n.name")
    expect(ok.data.literals).toEqual([{ key: 'n.name', value: 'BOB@CORP.LOCAL' }])
  })
})

describe('queries running at the same time share the isolate memory (never a 5xx)', () => {
  const WALK = 'MATCH p = (a)-[*1..]->(b) RETURN p'
  it('two concurrent queries with the pool nearly full are stopped with 400 naming the shared limit; their bytes are given back, and a plain query then answers 200', async () => {
    // other queries holding nearly all of this isolate's pool (the worker under test runs in this isolate)
    const other = new Budget({ ...DEFAULT_LIMITS, maxBytes: ISOLATE_MAX_BYTES }, Date.now, ISOLATE_POOL)
    other.chargeBytes(ISOLATE_MAX_BYTES - 1024)
    try {
      const [a, b] = await Promise.all([post(admin, { query: WALK }), post(admin, { query: WALK })])
      for (const r of [a, b]) {
        expect([200, 400]).toContain(r.status)
        if (r.status === 400) await expectEnvelope(r, 400, /memory limit, shared by the queries running at the same time/)
      }
      expect([a.status, b.status]).toContain(400)
      expect(ISOLATE_POOL.held).toBe(ISOLATE_MAX_BYTES - 1024)
    } finally {
      other.end()
    }
    expect(ISOLATE_POOL.held).toBe(0)
    const [c, d] = await Promise.all([post(admin, { query: WALK }), post(admin, { query: WALK })])
    expect([c.status, d.status]).toEqual([200, 200])
    expect((await post(admin, { query: 'MATCH (n:User) RETURN n LIMIT 1' })).status).toBe(200)
    expect(ISOLATE_POOL.held).toBe(0)
  })
})
