/**
 * The answer of POST /api/v2/graphs/cypher is bounded by itself (src/cypher/answer.ts): a query whose answer
 * repeats what it built (one string of a million characters returned on every row) or multiplies columns
 * (2,000 property columns per node) is stopped with a 400 envelope naming the limit, never a 500 and never
 * a 100 MB answer; a large legitimate answer below the limit is answered whole.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { env } from 'cloudflare:test'
import { adminToken, expectEnvelope, userWithRole } from '../helpers'
import type { EdgeHoundClient } from '../../src/client'
import { ingest } from '../../src/client/graph'
import { ANSWER_LIMITS } from '../../src/cypher/answer'
import { ID_CEILING } from '../../src/graph/ids'

let reader: EdgeHoundClient

const post = (query: string, include_properties = false) => reader.raw('POST', '/api/v2/graphs/cypher', { query, include_properties })
/** A string of a million characters, built by five nested replace() calls (a 300-byte query). */
const MILLION = `replace(replace(replace(replace(replace('xxxxxxxxxx', 'x', 'xxxxxxxxxx'), 'x', 'xxxxxxxxxx'), 'x', 'xxxxxxxxxx'), 'x', 'xxxxxxxxxx'), 'x', 'xxxxxxxxxx')`
const repeated = (rows: number) => `WITH ${MILLION} AS s UNWIND range(1, ${rows}) AS i RETURN s`
const WIDE = Array.from({ length: 2000 }, (_, i) => `n.p${i}`).join(', ')
const WIDE_NODES = 150
/** Kerberoastable users of a large domain, inserted in SQL (one statement): more than the former 20,000-row refusal. */
const SPN_USERS = 25_000
const BASE = ID_CEILING - 4_000_000

beforeAll(async () => {
  const admin = await adminToken()
  await ingest(admin, {
    graph: {
      nodes: Array.from({ length: WIDE_NODES }, (_, i) => ({ id: `WIDE-${i}`, kinds: ['WideNode'], properties: { name: `WIDE ${i}`, p0: i, p1: 'x'.repeat(20) } })),
      edges: [],
    },
  })
  reader = (await userWithRole('Read-Only')).client
  const stamp = '2026-11-01T00:00:00.000Z'
  const big = 'x'.repeat(1_000)
  await env.DB.batch([
    env.DB.prepare(
      `WITH RECURSIVE seq(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM seq WHERE i < ?2 + 999)
       INSERT INTO nodes (id, objectid, kind, kinds, name, environment_id, properties, created_at, updated_at)
       SELECT ?1 + i, 'S-1-5-21-1004336348-1177238915-682003330-' || (100000 + i), 'User', '["User","Base"]', 'SVC' || (100000 + i) || '@BIGCORP.LOCAL', 'S-1-5-21-1004336348-1177238915-682003330',
              json_object('name', 'SVC' || (100000 + i) || '@BIGCORP.LOCAL', 'hasspn', json(CASE WHEN i < ?2 THEN 'true' ELSE 'false' END), 'enabled', json('true')), ?3, ?3
       FROM seq`,
    ).bind(BASE, SPN_USERS, stamp),
    // one relationship with a 1,000-character property, returned many times (the answer repeats it)
    env.DB.prepare(`INSERT INTO edges (id, start_id, end_id, kind, properties, created_at, updated_at) VALUES (?1, ?2, ?3, 'BigEdge', json_object('note', ?4), ?5, ?5)`).bind(BASE, BASE, BASE + 1, big, stamp),
  ])
})

afterAll(async () => {
  await env.DB.batch([env.DB.prepare('DELETE FROM edges WHERE id >= ?1').bind(BASE), env.DB.prepare('DELETE FROM nodes WHERE id >= ?1').bind(BASE)])
})

describe('answer size limit (400 naming the limit, never a 500)', () => {
  it('one string of a million characters returned on 100 and on 600 rows: 400 answer size limit, with the envelope', async () => {
    expect(repeated(100).length).toBeLessThan(300)
    for (const rows of [100, 600]) {
      const res = await post(repeated(rows))
      expect(Number(res.headers.get('content-length') ?? 0)).toBeLessThan(4096)
      await expectEnvelope(res, 400, `its answer would be larger than ${ANSWER_LIMITS.maxBytes / 1024 / 1024} MiB (answer size limit)`)
    }
    // the same string collected into one list 600 times: one literal, refused while it is counted
    await expectEnvelope(await post(`WITH ${MILLION} AS s UNWIND range(1, 600) AS i RETURN collect(s) AS l`), 400, /answer size limit/)
  })

  it('2,000 property columns per node: 400 answer entry limit; the same columns on fewer rows are answered', async () => {
    await expectEnvelope(await post(`MATCH (n:WideNode) RETURN ${WIDE}`), 400, `more than ${ANSWER_LIMITS.maxEntries} nodes, edges and literals (answer entry limit)`)
    const res = await post(`MATCH (n:WideNode) RETURN ${WIDE} LIMIT 50`)
    expect(res.status).toBe(200)
    const body = (await res.json()) as { data: { literals: { key: string; value: unknown }[] } }
    expect(body.data.literals).toHaveLength(50 * 2000)
    expect(body.data.literals[0].key).toBe('n.p0')
  })

  it('a legitimate large answer below the limit is answered whole, and never over the limit', async () => {
    const res = await post(repeated(7))
    expect(res.status).toBe(200)
    const text = await res.text()
    const bytes = new TextEncoder().encode(text).length
    expect(bytes).toBeGreaterThan(7_000_000)
    expect(bytes).toBeLessThanOrEqual(ANSWER_LIMITS.maxBytes)
    const body = JSON.parse(text) as { data: { literals: { key: string; value: string }[] } }
    expect(body.data.literals.map((l) => [l.key, l.value.length])).toEqual(Array.from({ length: 7 }, () => ['s', 1_000_000]))
    // every node of the graph with its properties
    const nodes = await post('MATCH (n:WideNode) RETURN n', true)
    expect(nodes.status).toBe(200)
    expect(Object.keys(((await nodes.json()) as { data: { nodes: object } }).data.nodes)).toHaveLength(WIDE_NODES)
  })

  it('every kerberoastable user of a large domain (25,000 rows, over the former 20,000-row refusal) is answered, streamed, in the shape of BloodHound', async () => {
    const res = await post('MATCH (u:User) WHERE u.hasspn = true RETURN u')
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toMatch(/^application\/json/)
    const text = await res.text()
    expect(new TextEncoder().encode(text).length).toBeLessThanOrEqual(ANSWER_LIMITS.maxBytes)
    const { data } = JSON.parse(text) as { data: { nodes: Record<string, Record<string, unknown>>; edges: unknown[]; literals: unknown[] } }
    const ids = Object.keys(data.nodes)
    expect(ids).toHaveLength(SPN_USERS)
    expect(data.edges).toEqual([])
    expect(data.literals).toEqual([])
    expect(data.nodes[String(BASE + 7)]).toEqual({
      label: 'SVC100007@BIGCORP.LOCAL',
      kind: 'User',
      kinds: ['User', 'Base'],
      objectId: 'S-1-5-21-1004336348-1177238915-682003330-100007',
      isTierZero: false,
      isOwnedObject: false,
      lastSeen: '2026-11-01T00:00:00.000Z',
    })
    // a scalar column over the same rows: 25,000 literals in row order
    const names = await post('MATCH (u:User) WHERE u.hasspn = true RETURN u.name ORDER BY u.name')
    expect(names.status).toBe(200)
    const literals = ((await names.json()) as { data: { literals: { key: string; value: string }[] } }).data.literals
    expect(literals).toHaveLength(SPN_USERS)
    expect(literals[0]).toEqual({ key: 'u.name', value: 'SVC100000@BIGCORP.LOCAL' })
  })

  it('an answer over the byte limit is refused before its first byte, with the envelope naming the limit and its value', async () => {
    // one relationship of 1 KB returned 40,000 times: under every other limit, ~43 MB of answer
    const res = await post('MATCH ()-[r:BigEdge]->() UNWIND range(1, 40000) AS i RETURN r', true)
    expect(Number(res.headers.get('content-length') ?? 0)).toBeLessThan(4096)
    await expectEnvelope(res, 400, `the query was stopped: its answer would be larger than ${ANSWER_LIMITS.maxBytes / 1024 / 1024} MiB (answer size limit)`)
    // the same relationship fewer times is answered whole
    const ok = await post('MATCH ()-[r:BigEdge]->() UNWIND range(1, 2000) AS i RETURN r', true)
    expect(ok.status).toBe(200)
    const data = ((await ok.json()) as { data: { edges: { properties: { note: string } }[] } }).data
    expect(data.edges).toHaveLength(2000)
    expect(data.edges[1999].properties.note).toHaveLength(1_000)
  })

  it('values nested deeper than 64 lists: 400 answer depth limit; 64 levels are answered', async () => {
    const nest = (levels: number) => `WITH 1 AS a ${'WITH [a] AS a '.repeat(levels)}RETURN a`
    await expectEnvelope(await post(nest(65)), 400, 'more than 64 levels deep (answer depth limit)')
    const ok = await post(nest(64))
    expect(ok.status).toBe(200)
  })
})
