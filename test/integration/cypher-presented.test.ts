/**
 * An answer without include_properties presents each returned node (label, kinds, Tier Zero, Owned, last seen) from
 * its columns and PRESENTED_KEYS of its properties, which is all the store reads of it then (needs.ts nodeReads,
 * issue 28): through the worker and D1, that answer is the answer with properties, properties removed — for a node
 * of every input of the presentation.
 */
import { beforeAll, describe, expect, it } from 'vitest'
import { adminToken } from '../helpers'
import type { EdgeHoundClient } from '../../src/client'
import { ingest } from '../../src/client/graph'

const CORP = 'S-1-5-21-7'
const TENANT = '6c12b0b0-b2cc-4a73-8252-0b94bfca2145'
let admin: EdgeHoundClient
beforeAll(async () => {
  admin = await adminToken()
})
const post = (c: EdgeHoundClient, body: unknown) => c.raw('POST', '/api/v2/graphs/cypher', body as Record<string, unknown>)

describe('nodes presented without their properties (issue 28)', () => {
  it('returned nodes are presented the same when only their presented properties are read (include_properties false)', async () => {
    // one node per input of the presentation (lastSeen, the Tier Zero and Owned rules), plus unrelated properties
    const ga = '62e90394-69f5-4237-9190-012177145e10'
    const n = (id: string, kinds: string[], properties: Record<string, unknown>) => ({ id, kinds, properties: { name: id, domainsid: CORP, description: 'x'.repeat(50), ...properties } })
    await ingest(admin, {
      graph: {
        nodes: [
          n('PK-SEEN', ['User'], { lastseen: '2025-12-24T10:00:00Z', enabled: true }),
          n('PK-TAGGED', ['Group'], { system_tags: 'admin_tier_0' }),
          n('PK-OWNED', ['Computer'], { system_tags: 'owned' }),
          n('PK-FLAG', ['User'], { istierzero: true }),
          n('PK-FLAG2', ['User'], { isTierZero: true }),
          { id: 'PK-ROLE@TENANT', kinds: ['AZRole'], properties: { name: 'ROLE', tenantid: TENANT, templateid: ga } },
        ],
        edges: ['PK-TAGGED', 'PK-OWNED', 'PK-FLAG', 'PK-FLAG2', 'PK-ROLE@TENANT'].map((to) => ({ start: { value: 'PK-SEEN' }, end: { value: to }, kind: 'PresentedTest' })),
      },
    })
    const query = 'MATCH p = (a)-[:PresentedTest]->(b) RETURN p, b'
    const plain = await post(admin, { query })
    expect(plain.status).toBe(200)
    expect(plain.headers.get('x-cypher-plan')).toMatch(/node properties none and the presented ones\)$/)
    const full = await post(admin, { query, include_properties: true })
    expect(full.headers.get('x-cypher-plan')).toMatch(/node properties all\)$/)
    type Answer = { data: { node_keys?: string[]; edge_keys?: string[]; nodes: Record<string, { properties?: unknown; objectId: string; isTierZero: boolean; isOwnedObject: boolean; lastSeen: string }>; edges: { properties?: unknown }[] } }
    const a = (await plain.json()) as Answer
    const b = (await full.json()) as Answer
    const { node_keys: _n, edge_keys: _e, ...rest } = b.data
    const stripped = { ...rest, nodes: Object.fromEntries(Object.entries(rest.nodes).map(([k, { properties: _p, ...v }]) => [k, v])), edges: rest.edges.map(({ properties: _p, ...e }) => e) }
    expect(a.data).toEqual(stripped)
    const byObjectId = Object.fromEntries(Object.values(a.data.nodes).map((x) => [x.objectId, x]))
    expect(byObjectId['PK-SEEN'].lastSeen).toBe('2025-12-24T10:00:00Z')
    expect(['PK-TAGGED', 'PK-FLAG', 'PK-FLAG2', 'PK-ROLE@TENANT'].map((id) => byObjectId[id].isTierZero)).toEqual([true, true, true, true])
    expect([byObjectId['PK-OWNED'].isOwnedObject, byObjectId['PK-OWNED'].isTierZero, byObjectId['PK-SEEN'].isTierZero]).toEqual([true, false, false])
  })

})
