/**
 * Issue 24 item 3: the ids a client sees reveal nothing about other environments (src/graph/ids.ts).
 *
 * Two domains, A and B. A reader restricted to A sees A's node, relationship and posture-stats ids. Between
 * two of A's inserts, B receives N objects: with sequential ids the reader would see A's ids move by N + 1
 * (and B's objects in insert order, posture rows numbered across every environment). Each id must instead be
 * a random id, the gap must not be N + 1, and ids must round-trip: the same across requests and routes, and
 * accepted back by Cypher's id() (without reaching a hidden object).
 */
import { env } from 'cloudflare:workers'
import { beforeAll, describe, expect, it } from 'vitest'
import { adminToken, userWithRole } from '../helpers'
import type { EdgeHoundClient } from '../../src/client'
import { cypherQuery } from '../../src/client/cypher'
import { ingest, shortestPath, type OpenGraphPayload } from '../../src/client/graph'
import { postureStats } from '../../src/client/posture'
import { ID_FLOOR, isRandomId } from '../../src/graph/ids'
import { runAnalysisDirect, settleRuns } from '../fixtures/findings/helpers'

const A = 'S-1-5-21-2400-1'
const B = 'S-1-5-21-2400-2'
/** objects B receives between two of A's inserts */
const N = 40

const user = (id: string, domain: string) => ({ id, kinds: ['User'], properties: { name: `${id}@X`, domainsid: domain, enabled: true } })
const domain = (sid: string, name: string) => ({ id: sid, kinds: ['Domain'], properties: { name, domainsid: sid } })
const payload = (nodes: OpenGraphPayload['graph']['nodes'], edges: OpenGraphPayload['graph']['edges'] = []): OpenGraphPayload => ({ graph: { nodes, edges } })

let admin: EdgeHoundClient
let onlyA: EdgeHoundClient

/** Node ids by object id, as `client` sees them in a Cypher graph answer. */
async function nodeIds(client: EdgeHoundClient, where: string): Promise<Map<string, number>> {
  const r = await cypherQuery(client, `MATCH (n) WHERE ${where} RETURN n`)
  return new Map(Object.entries(r.data.nodes).map(([id, n]) => [n.objectId, Number(id)]))
}

/** The literal answer of a one-column query, as a list of values. */
async function column(client: EdgeHoundClient, query: string): Promise<unknown[]> {
  const r = await cypherQuery(client, query)
  return r.data.literals.map((l) => (l as { value?: unknown }).value ?? l)
}

beforeAll(async () => {
  admin = await adminToken()
  await ingest(admin, payload([domain(A, 'A.LOCAL'), domain(B, 'B.LOCAL'), user('IDS-A-1', A)]))
  await ingest(
    admin,
    payload(Array.from({ length: N }, (_, i) => user(`IDS-B-${String(i).padStart(3, '0')}`, B))),
  )
  await ingest(
    admin,
    payload([user('IDS-A-2', A)], [
      { start: { value: 'IDS-A-1' }, end: { value: 'IDS-A-2' }, kind: 'GenericAll' },
      { start: { value: 'IDS-B-000' }, end: { value: 'IDS-B-001' }, kind: 'GenericAll' },
    ]),
  )
  onlyA = (await userWithRole('Read-Only', { all_environments: false, environment_access: [A] })).client
})

describe('node and relationship ids', () => {
  it('are random ids in the safe-integer range, with no gap that counts the hidden objects', async () => {
    const seen = await nodeIds(onlyA, "n.objectid STARTS WITH 'IDS-'")
    expect([...seen.keys()].sort()).toEqual(['IDS-A-1', 'IDS-A-2'])
    const [a1, a2] = [seen.get('IDS-A-1')!, seen.get('IDS-A-2')!]
    for (const id of [a1, a2]) {
      expect(isRandomId(id), String(id)).toBe(true)
      expect(Number.isSafeInteger(id)).toBe(true)
    }
    // sequential ids would have put B's N objects (and nothing else) between A's two
    expect(a2 - a1).not.toBe(N + 1)
    expect(Math.abs(a2 - a1)).toBeGreaterThan(N + 1)
  })

  it('carry no insert order: B objects written one after another do not get ascending ids', async () => {
    const b = await nodeIds(admin, "n.objectid STARTS WITH 'IDS-B-'")
    expect(b.size).toBe(N)
    const inOrder = [...b.entries()].sort(([x], [y]) => x.localeCompare(y)).map(([, id]) => id)
    expect(inOrder.every(isRandomId)).toBe(true)
    // ascending (as a counter gives) by chance: 1 in N!
    expect(inOrder).not.toEqual([...inOrder].sort((x, y) => x - y))
    expect(new Set(inOrder).size).toBe(N)
  })

  it('relationship ids are random too, and id() takes them back', async () => {
    const [rid] = await column(onlyA, "MATCH (a)-[r:GenericAll]->(b) WHERE a.objectid = 'IDS-A-1' RETURN id(r)")
    expect(isRandomId(rid), String(rid)).toBe(true)
    const back = await cypherQuery(onlyA, `MATCH (a)-[r]->(b) WHERE id(r) = ${rid} RETURN a, r, b`)
    expect(Object.values(back.data.nodes).map((n) => n.objectId).sort()).toEqual(['IDS-A-1', 'IDS-A-2'])
    expect(back.data.edges.map((e) => e.kind)).toEqual(['GenericAll'])
  })

  it('are stable: the same object has the same id in every answer and every route', async () => {
    const first = await nodeIds(onlyA, "n.objectid STARTS WITH 'IDS-A-'")
    const again = await nodeIds(onlyA, "n.objectid STARTS WITH 'IDS-A-'")
    expect(again).toEqual(first)
    expect(await nodeIds(admin, "n.objectid STARTS WITH 'IDS-A-'")).toEqual(first)
    // id() answers the graph answer's key
    const [viaId] = await column(onlyA, "MATCH (n) WHERE n.objectid = 'IDS-A-1' RETURN id(n)")
    expect(viaId).toBe(first.get('IDS-A-1'))
    // pathfinding keys its nodes by the same ids
    const path = await shortestPath(onlyA, 'IDS-A-1', 'IDS-A-2')
    expect(Object.fromEntries(Object.entries(path.data.nodes).map(([id, n]) => [n.objectId, Number(id)]))).toEqual(Object.fromEntries(first))
    expect(path.data.edges).toEqual([expect.objectContaining({ source: String(first.get('IDS-A-1')), target: String(first.get('IDS-A-2')), kind: 'GenericAll' })])
  })

  it('are accepted back by Cypher id(), and a hidden object id finds nothing for a restricted reader', async () => {
    const a = await nodeIds(onlyA, "n.objectid = 'IDS-A-1'")
    const id = a.get('IDS-A-1')!
    expect([...(await nodeIds(onlyA, `id(n) = ${id}`)).keys()]).toEqual(['IDS-A-1'])
    expect([...(await nodeIds(onlyA, `id(n) IN [${id}, ${id + 1}]`)).keys()]).toEqual(['IDS-A-1'])
    const hidden = (await nodeIds(admin, "n.objectid = 'IDS-B-000'")).get('IDS-B-000')!
    expect([...(await nodeIds(admin, `id(n) = ${hidden}`)).keys()]).toEqual(['IDS-B-000'])
    await expect(nodeIds(onlyA, `id(n) = ${hidden}`)).rejects.toMatchObject({ status: 404 })
  })

  it('the database refuses a node or relationship without a random id (migration 0039)', async () => {
    const now = new Date().toISOString()
    await expect(
      env.DB.prepare(`INSERT INTO nodes (objectid, kind, kinds, created_at, updated_at) VALUES ('IDS-NO-ID', 'User', '["User"]', ?1, ?1)`).bind(now).run(),
    ).rejects.toThrow(/nodes\.id must be a random id/)
    await expect(
      env.DB.prepare(`INSERT INTO nodes (id, objectid, kind, kinds, created_at, updated_at) VALUES (?2, 'IDS-SMALL', 'User', '["User"]', ?1, ?1)`).bind(now, ID_FLOOR - 1).run(),
    ).rejects.toThrow(/nodes\.id must be a random id/)
    await expect(
      env.DB.prepare(
        `INSERT OR IGNORE INTO edges (start_id, end_id, kind, created_at, updated_at) SELECT s.id, t.id, 'Owns', ?1, ?1 FROM nodes s, nodes t WHERE s.objectid = 'IDS-A-1' AND t.objectid = 'IDS-A-2'`,
      ).bind(now).run(),
    ).rejects.toThrow(/edges\.id must be a random id/)
  })
})

describe('posture-stats row ids', () => {
  it('are random ids that do not count the environments', async () => {
    await settleRuns(env.DB) // the runs the upload jobs asked the Analyzer for
    await runAnalysisDirect(env.DB)
    await runAnalysisDirect(env.DB)
    const all = await postureStats(admin, { from: '2000-01-01T00:00:00Z', limit: 1000 })
    const environments = new Set(all.data.map((r) => r.domain_sid)).size
    expect(environments).toBeGreaterThanOrEqual(2)
    expect(all.data.every((r) => isRandomId(r.id))).toBe(true)
    const mine = await postureStats(onlyA, { from: '2000-01-01T00:00:00Z', sort_by: 'created_at' })
    expect(mine.data.length).toBeGreaterThanOrEqual(2)
    expect(new Set(mine.data.map((r) => r.domain_sid))).toEqual(new Set([A]))
    const ids = mine.data.map((r) => r.id)
    for (const id of ids) expect(isRandomId(id), String(id)).toBe(true)
    // sequential rows: one per environment per run, so A's rows of consecutive runs would be `environments` apart
    for (let i = 1; i < ids.length; i++) {
      expect(ids[i] - ids[i - 1]).not.toBe(environments)
      expect(Math.abs(ids[i] - ids[i - 1])).toBeGreaterThan(all.count)
    }
  })
})
