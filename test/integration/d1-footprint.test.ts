import { env } from 'cloudflare:workers'
import { describe, expect, it } from 'vitest'
import { adminSession } from '../helpers'

/**
 * D1 bytes per node and per edge, measured (docs/scale.md extrapolates from these). A small graph is
 * ingested through the API (the real write path: rows, indexes, staging cleaned up) and the database size
 * D1 reports (`meta.size_after`) is read before and after the nodes and after the edges. Each figure is
 * printed and checked against a budget, so a schema change that inflates storage shows up here.
 */
const N = 2_000
const M = 10_000
const DOMAIN = 'S-1-5-21-1111111111-2222222222-3333333333'

async function dbBytes(): Promise<number> {
  const r = await env.DB.prepare('SELECT 1').run()
  return Number((r.meta as { size_after?: number }).size_after)
}

function sid(i: number) {
  return `${DOMAIN}-${10_000 + i}`
}

function nodes() {
  return Array.from({ length: N }, (_, i) => {
    const kind = i % 10 === 0 ? 'Computer' : i % 10 === 1 ? 'Group' : 'User'
    return {
      id: sid(i),
      kinds: [kind, 'Base'],
      properties: {
        name: kind === 'Computer' ? `WS${i}.CORP.LOCAL` : `${kind.toUpperCase()}${i}@CORP.LOCAL`,
        domainsid: DOMAIN,
        domain: 'CORP.LOCAL',
        distinguishedname: `CN=${kind.toUpperCase()}${i},OU=STAFF,DC=CORP,DC=LOCAL`,
        enabled: true,
        lastlogontimestamp: 1_700_000_000 + i,
      },
    }
  })
}

function edges() {
  const kinds = ['MemberOf', 'AdminTo', 'HasSession', 'GenericAll', 'CanRDP']
  return Array.from({ length: M }, (_, j) => ({
    start: { value: sid(j % N) },
    end: { value: sid((j * 7 + 1 + Math.floor(j / N)) % N) },
    kind: kinds[j % kinds.length],
    properties: { isacl: j % 5 === 3 },
  }))
}

describe('D1 footprint', () => {
  it(`bytes per node and per edge (${N} nodes, ${M} edges through the ingest API)`, async () => {
    const admin = await adminSession()
    async function ingest(graph: object) {
      const job = ((await (await admin.raw('POST', '/api/v2/file-upload/start')).json()) as { data: { id: number } }).data
      const res = await admin.raw('POST', `/api/v2/file-upload/${job.id}`, JSON.stringify({ graph }), { contentType: 'application/json' })
      expect(res.status).toBe(202)
      expect((await admin.raw('POST', `/api/v2/file-upload/${job.id}/end`)).status).toBeLessThan(300)
    }
    const before = await dbBytes()
    await ingest({ nodes: nodes(), edges: [] })
    const afterNodes = await dbBytes()
    await ingest({ nodes: [], edges: edges() })
    const afterEdges = await dbBytes()
    // every generated node and edge is a row (no duplicates, every edge matched)
    const edgeRows = Number(await env.DB.prepare("SELECT COUNT(*) AS c FROM edges WHERE start_id IN (SELECT id FROM nodes WHERE objectid LIKE ?)").bind(`${DOMAIN}-%`).first('c'))
    const perNode = (afterNodes - before) / N
    const perEdge = (afterEdges - afterNodes) / edgeRows
    console.log(`D1 FOOTPRINT ${JSON.stringify({ nodes: N, edges: M, edgeRows, before, afterNodes, afterEdges, bytesPerNode: Math.round(perNode), bytesPerEdge: Math.round(perEdge) })}`)
    expect(perNode).toBeGreaterThan(0)
    expect(perEdge).toBeGreaterThan(0)
    expect(perNode).toBeLessThan(2_000)
    expect(perEdge).toBeLessThan(600)
  })
})
