/**
 * Counts answered by D1 (src/cypher/counts.ts, cypher.store.ts countRelationships) through the worker: the
 * benchmark's `OPTIONAL MATCH … count(u)` shape on a graph with two computers of one name, a computer
 * without sessions, sessions to a group and to a user of another domain, answered by hand, the same as
 * the walk (the same query with `WHERE true`, which is never pushed down), for an administrator and for a
 * caller restricted to one domain. Then the count statement's query plans: no pass over `edges` or `nodes`.
 */
import { env } from 'cloudflare:workers'
import { beforeAll, describe, expect, it } from 'vitest'
import { adminToken, userWithRole } from '../helpers'
import type { EdgeHoundClient } from '../../src/client'
import { ingest } from '../../src/client/graph'
import { cypherQuery } from '../../src/client/cypher'
import { d1GraphSource } from '../../src/cypher/cypher.store'

const CNT = 'S-1-5-21-770'
const OTHER = 'S-1-5-21-771'

let admin: EdgeHoundClient
let cntOnly: EdgeHoundClient

const node = (id: string, kind: string, name: string, domain: string, props: Record<string, unknown> = {}) => ({
  id,
  kinds: [kind, 'Base'],
  properties: { name, ...(kind === 'Domain' ? {} : { domainsid: domain }), ...props },
})
const session = (from: string, to: string) => ({ start: { value: from }, end: { value: to }, kind: 'HasSession', properties: {} })

beforeAll(async () => {
  admin = await adminToken()
  await ingest(admin, {
    graph: {
      nodes: [
        node(CNT, 'Domain', 'CNT.LOCAL', CNT),
        node(OTHER, 'Domain', 'OTHER.LOCAL', OTHER),
        node('CNT-C1', 'Computer', 'WS.CNT.LOCAL', CNT),
        node('CNT-C2', 'Computer', 'WS.CNT.LOCAL', CNT),
        node('CNT-C3', 'Computer', 'SRV.CNT.LOCAL', CNT),
        node('CNT-C4', 'Computer', 'DC.CNT.LOCAL', CNT),
        // a computer whose primary kind is another one: found by the scan through its stored kinds
        { ...node('CNT-C5', 'CntThing', 'THING.CNT.LOCAL', CNT), kinds: ['CntThing', 'Computer'] },
        node('CNT-U1', 'User', 'U1@CNT.LOCAL', CNT, { enabled: true, spns: ['a/b', 'c/d'], n: 1.5, m: [1, 2] }),
        node('CNT-U2', 'User', 'U2@OTHER.LOCAL', OTHER, { enabled: true }),
        node('CNT-U3', 'User', 'U3@CNT.LOCAL', CNT, { enabled: 'true' }),
        node('CNT-G1', 'Group', 'G1@CNT.LOCAL', CNT),
      ],
      edges: [session('CNT-C1', 'CNT-U1'), session('CNT-C1', 'CNT-U2'), session('CNT-C2', 'CNT-U1'), session('CNT-C2', 'CNT-G1'), session('CNT-C2', 'CNT-U3'), session('CNT-C4', 'CNT-G1')],
    },
  })
  cntOnly = (await userWithRole('Read-Only', { all_environments: false, environment_access: [CNT] })).client
})

const post = (c: EdgeHoundClient, query: string) => c.raw('POST', '/api/v2/graphs/cypher', { query })
const values = (r: { data: { literals: { value: unknown }[] } }) => r.data.literals.map((l) => l.value)

describe('OPTIONAL MATCH … count(u) answered by the store', () => {
  const first = "MATCH (c:Computer) WHERE c.objectid STARTS WITH 'CNT-' "

  it('one group per name (the sum of its computers), 0 without sessions, the far label and property tested, access applied, as the walk', async () => {
    const cases: [string, unknown[], unknown[]][] = [
      // WS = C1 (U1, U2) + C2 (U1, U3; G1 is not a User); U2 is in the other domain
      ['(u:User)', ['DC.CNT.LOCAL', 0, 'SRV.CNT.LOCAL', 0, 'THING.CNT.LOCAL', 0, 'WS.CNT.LOCAL', 4], ['DC.CNT.LOCAL', 0, 'SRV.CNT.LOCAL', 0, 'THING.CNT.LOCAL', 0, 'WS.CNT.LOCAL', 3]],
      // the boolean true only (U3's enabled is the string 'true')
      ['(u:User {enabled: true})', ['DC.CNT.LOCAL', 0, 'SRV.CNT.LOCAL', 0, 'THING.CNT.LOCAL', 0, 'WS.CNT.LOCAL', 3], ['DC.CNT.LOCAL', 0, 'SRV.CNT.LOCAL', 0, 'THING.CNT.LOCAL', 0, 'WS.CNT.LOCAL', 2]],
      ["(u {objectid: 'CNT-G1'})", ['DC.CNT.LOCAL', 1, 'SRV.CNT.LOCAL', 0, 'THING.CNT.LOCAL', 0, 'WS.CNT.LOCAL', 1], ['DC.CNT.LOCAL', 1, 'SRV.CNT.LOCAL', 0, 'THING.CNT.LOCAL', 0, 'WS.CNT.LOCAL', 1]],
    ]
    for (const [far, all, restricted] of cases)
      for (const [client, expected] of [
        [admin, all],
        [cntOnly, restricted],
      ] as const) {
        const query = `${first}OPTIONAL MATCH (c)-[:HasSession]->${far} RETURN c.name, count(u) ORDER BY c.name`
        const res = await post(client, query)
        expect(res.status).toBe(200)
        expect(res.headers.get('x-cypher-plan')).toMatch(/count of outgoing HasSession relationships per node whose other end is .* \(optional\), in the store/)
        const body = (await res.json()) as Awaited<ReturnType<typeof cypherQuery>>
        expect(values(body), `${far} ${client === admin ? 'admin' : 'restricted'}`).toEqual(expected)
        const walked = await post(client, query.replace(` RETURN`, ' WHERE true RETURN'))
        expect(walked.headers.get('x-cypher-plan')).not.toMatch(/in the store/)
        expect(values((await walked.json()) as typeof body)).toEqual(expected)
      }
  })

  it('grouped by the computer, incoming, distinct, WITH … WHERE: as the walk', async () => {
    for (const client of [admin, cntOnly])
      for (const tail of [
        'OPTIONAL MATCH (c)-[:HasSession]->(u) RETURN c, count(DISTINCT u) AS n, count(u) AS m ORDER BY c.objectid',
        'OPTIONAL MATCH (c)-[:HasSession]->(u:User) WITH c, count(u) AS n WHERE n > 0 RETURN c.objectid, n ORDER BY c.objectid',
        'MATCH (c)-[:HasSession|MemberOf]-(u:Base) RETURN c.name, count(*) AS n ORDER BY c.name',
      ]) {
        const res = await post(client, first + tail)
        expect(res.headers.get('x-cypher-plan'), tail).toMatch(/in the store/)
        const pushed = (await res.json()) as Awaited<ReturnType<typeof cypherQuery>>
        const walked = await cypherQuery(client, first + tail.replace(/ (RETURN|WITH)/, ' WHERE true $1'))
        expect(values(pushed), tail).toEqual(values(walked))
      }
  })
})

describe('only the node properties a query can read', () => {
  it('each keeps its JSON type (string, boolean, number, lists, missing), the same as from whole nodes', async () => {
    const query = "MATCH (u:User) WHERE u.objectid STARTS WITH 'CNT-' RETURN u.name, u.enabled, u.spns, u.n, u.m, u.missing ORDER BY u.name"
    const res = await post(admin, query)
    expect(res.headers.get('x-cypher-plan')).toMatch(/node properties enabled,m,missing,n,name,objectid,spns\)$/)
    const body = (await res.json()) as Awaited<ReturnType<typeof cypherQuery>>
    expect(values(body).slice(0, 6)).toEqual(['U1@CNT.LOCAL', true, ['a/b', 'c/d'], 1.5, [1, 2], null])
    // `u` returned as well: presented (every column, and the presented properties too), the same values
    const presented = await post(admin, query.replace(' ORDER BY', ', u ORDER BY'))
    expect(presented.headers.get('x-cypher-plan')).toMatch(/node properties enabled,m,missing,n,name,objectid,spns and the presented ones\)$/)
    expect(values((await presented.json()) as typeof body)).toEqual(values(body))
    // and with its properties in the answer: whole nodes
    const whole = await admin.raw('POST', '/api/v2/graphs/cypher', { query: query.replace(' ORDER BY', ', u ORDER BY'), include_properties: true })
    expect(whole.headers.get('x-cypher-plan')).toMatch(/node properties all\)$/)
    expect(values((await whole.json()) as typeof body)).toEqual(values(body))
  })

  it('the plan header lists at most 20 of them and their count (a wide query kept the header to a proxy-safe size)', async () => {
    const keys = Array.from({ length: 40 }, (_, i) => `k${String(i).padStart(2, '0')}`)
    const res = await post(admin, `MATCH (u:User) WHERE u.objectid STARTS WITH 'CNT-' RETURN ${keys.map((k) => `u.${k}`).join(', ')}`)
    const plan = res.headers.get('x-cypher-plan') ?? ''
    expect(plan).toMatch(/node properties k00,k01,.*,\.\.\. \(41 keys\)\)$/)
    expect(plan.length).toBeLessThan(2000)
  })
})

describe('count statements: query plans', () => {
  /** Statements countRelationships sends, captured by a stand-in for D1 (no rows). */
  async function statements(): Promise<{ sql: string; params: unknown[] }[]> {
    const out: { sql: string; params: unknown[] }[] = []
    const stmt = (sql: string, params: unknown[] = []): D1PreparedStatement =>
      ({ bind: (...p: unknown[]) => stmt(sql, p), all: async () => (out.push({ sql, params }), { results: [] }) }) as unknown as D1PreparedStatement
    const db = {
      prepare: (sql: string) => stmt(sql),
      batch: async (s: D1PreparedStatement[]) => Promise.all(s.map((x) => x.all())),
    } as unknown as D1Database
    const far = { kinds: [['User'], ['Base', 'Computer']], properties: [{ key: 'enabled', value: true }, { key: 'name', value: 'X' }, { key: 'objectid', value: 'O' }] }
    for (const access of [null, JSON.stringify([CNT])]) {
      const src = d1GraphSource(db, access)
      for (const direction of ['out', 'in', 'both'] as const)
        for (const kinds of [null, ['HasSession', 'AdminTo']])
          for (const f of [null, far]) for (const distinct of direction === 'both' ? [false] : [false, true]) await src.countRelationships([1, 2, 3], direction, kinds, f, distinct)
    }
    return out
  }

  it('each count is answered from the edges indexes and the nodes primary key (no scan, no automatic index)', async () => {
    const all = await statements()
    expect(all.length).toBe(2 * (2 * 2 * 2 * 2 + 2 * 2))
    for (const s of all) {
      const { results } = await env.DB.prepare(`EXPLAIN QUERY PLAN ${s.sql}`)
        .bind(...s.params)
        .all<{ detail: string }>()
      const plan = results.map((r) => r.detail)
      const bad = plan.filter((l) => /^SCAN (e|v|edges|nodes)\b/.test(l) || /AUTOMATIC/.test(l))
      expect(bad, `${s.sql.replace(/\s+/g, ' ')}\n${plan.join('\n')}`).toEqual([])
      expect(plan.some((l) => /^SEARCH e USING (COVERING )?INDEX/.test(l))).toBe(true)
    }
  })
})
