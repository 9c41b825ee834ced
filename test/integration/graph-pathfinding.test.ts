/** GET /api/v2/pathfinding and GET /api/v2/graph-search: BloodHound's older graph format over the graph reads. */
import { beforeAll, describe, expect, it } from 'vitest'
import { adminToken, expectEnvelope, userWithRole } from '../helpers'
import type { EdgeHoundClient } from '../../src/client'
import { ingest } from '../../src/client/graph'
import { adPayload, azurePayload, CORP, ID, LAB } from '../fixtures/graph/corp'
import { GRAPH_SEARCH_MAX_NODES } from '../../src/graph/pathfinding.routes'

let admin: EdgeHoundClient
/** Read-Only, restricted to the CORP domain */
let corpOnly: EdgeHoundClient

type LegacyNode = {
  data: Record<string, unknown>
  label: { text: string }
  fontIcon: { text: string }
  color: string
  size: number
  border: { color: string }
}
type LegacyRel = { data: Record<string, unknown>; label: { text: string }; id1: string; id2: string; end2: { arrow: boolean }; color: string }
type Legacy = { data: Record<string, LegacyNode | LegacyRel> }

const nodesOf = (g: Legacy) => Object.entries(g.data).filter(([k]) => !k.startsWith('rel_')) as [string, LegacyNode][]
const relsOf = (g: Legacy) => Object.entries(g.data).filter(([k]) => k.startsWith('rel_')) as [string, LegacyRel][]

beforeAll(async () => {
  admin = await adminToken()
  await ingest(admin, adPayload, azurePayload)
  await ingest(admin, {
    graph: {
      nodes: [
        { id: 'V-LAB', kinds: ['Group', 'Base'], properties: { name: 'VIA LAB@LAB.LOCAL', domainsid: LAB } },
        { id: 'V-END', kinds: ['Group', 'Base'], properties: { name: 'VIA END@CORP.LOCAL', domainsid: CORP } },
      ],
      edges: [
        { start: { value: ID.alice }, end: { value: 'V-LAB' }, kind: 'MemberOf', properties: { isacl: false } },
        { start: { value: 'V-LAB' }, end: { value: 'V-END' }, kind: 'MemberOf' },
      ],
    },
  })
  corpOnly = (await userWithRole('Read-Only', { all_environments: false, environment_access: [CORP] })).client
})

describe('GET /api/v2/pathfinding', () => {
  it('answers the shortest paths in BloodHound’s legacy graph format', async () => {
    const r = await admin.call<Legacy>('GET', `/api/v2/pathfinding?start_node=${ID.alice}&end_node=${CORP}`)
    const nodes = nodesOf(r)
    const byObject = Object.fromEntries(nodes.map(([k, n]) => [n.data.objectid as string, k]))
    expect(Object.keys(byObject).sort()).toEqual([ID.alice, ID.helpdesk, ID.ws1, ID.bob, ID.da, CORP].sort())
    const alice = r.data[byObject[ID.alice]] as LegacyNode
    expect(alice).toMatchObject({
      size: 1,
      border: { color: 'black' },
      label: { text: 'ALICE@CORP.LOCAL' },
      fontIcon: { text: 'fas fa-user' },
      data: { objectid: ID.alice, name: 'ALICE@CORP.LOCAL', nodetype: 'User', domainsid: CORP },
    })
    expect(alice.data.level).toBeUndefined()
    expect((r.data[byObject[ID.da]] as LegacyNode).data.level).toBe(0) // Tier Zero
    const rels = relsOf(r)
    expect(rels).toHaveLength(5)
    const chain = rels.map(([, e]) => `${(r.data[e.id1] as LegacyNode).data.objectid} ${e.label.text} ${(r.data[e.id2] as LegacyNode).data.objectid}`).sort()
    expect(chain).toEqual(
      [`${ID.alice} MemberOf ${ID.helpdesk}`, `${ID.helpdesk} AdminTo ${ID.ws1}`, `${ID.ws1} HasSession ${ID.bob}`, `${ID.bob} MemberOf ${ID.da}`, `${ID.da} GenericAll ${CORP}`].sort(),
    )
    for (const [key, e] of rels) {
      expect(key).toMatch(/^rel_\d+$/)
      expect(e.end2.arrow).toBe(true)
    }
  })

  it('takes relationship_kinds as shortest-path does', async () => {
    const r = await admin.call<Legacy>('GET', `/api/v2/pathfinding?start_node=${ID.alice}&end_node=V-END&relationship_kinds=in:MemberOf`)
    const rels = relsOf(r)
    expect(rels).toHaveLength(2)
    expect(rels.find(([, e]) => (r.data[e.id2] as LegacyNode).data.objectid === 'V-LAB')![1].data).toMatchObject({ isacl: false })
    // without MemberOf there is no path: BloodHound's deprecated route answers an empty graph
    expect(await admin.call<Legacy>('GET', `/api/v2/pathfinding?start_node=${ID.alice}&end_node=V-END&relationship_kinds=nin:MemberOf`)).toEqual({ data: {} })
    await expectEnvelope(await admin.raw('GET', `/api/v2/pathfinding?start_node=a&end_node=b&relationship_kinds=MemberOf`), 400, 'in|nin:Kind1,Kind2')
    await expectEnvelope(await admin.raw('GET', `/api/v2/pathfinding?start_node=a&end_node=b&relationship_kinds=in:NotAKind`), 400, 'unknown kind(s) NotAKind')
  })

  it('refuses missing and repeated ends with BloodHound’s messages, and 404s unknown ones', async () => {
    await expectEnvelope(await admin.raw('GET', `/api/v2/pathfinding?end_node=${CORP}`), 400, 'Missing query parameter: start_node')
    await expectEnvelope(await admin.raw('GET', `/api/v2/pathfinding?start_node=${CORP}`), 400, 'Missing query parameter: end_node')
    await expectEnvelope(await admin.raw('GET', `/api/v2/pathfinding?start_node=&end_node=${CORP}`), 400, 'Missing query parameter: start_node')
    await expectEnvelope(await admin.raw('GET', `/api/v2/pathfinding?start_node=a&start_node=b&end_node=${CORP}`), 400, 'Expected only one start_node.')
    await expectEnvelope(await admin.raw('GET', `/api/v2/pathfinding?start_node=${'x'.repeat(1025)}&end_node=${CORP}`), 400)
    await expectEnvelope(await admin.raw('GET', `/api/v2/pathfinding?start_node=NOPE&end_node=${CORP}`), 404, 'Path not found')
  })

  it('a restricted caller: hidden ends are absent, hidden nodes are never crossed', async () => {
    const hidden = await corpOnly.raw('GET', `/api/v2/pathfinding?start_node=${ID.dave}&end_node=${ID.helpdesk}`)
    const absent = await corpOnly.raw('GET', `/api/v2/pathfinding?start_node=NO-SUCH-NODE&end_node=${ID.helpdesk}`)
    const h = await expectEnvelope(hidden, 404)
    const a = await expectEnvelope(absent, 404)
    expect(h.errors).toEqual(a.errors)
    // the path through LAB exists for the administrator, not for CORP-only
    expect(relsOf(await admin.call<Legacy>('GET', `/api/v2/pathfinding?start_node=${ID.alice}&end_node=V-END`))).toHaveLength(2)
    expect(await corpOnly.call<Legacy>('GET', `/api/v2/pathfinding?start_node=${ID.alice}&end_node=V-END`)).toEqual({ data: {} })
    expect(relsOf(await corpOnly.call<Legacy>('GET', `/api/v2/pathfinding?start_node=${ID.alice}&end_node=${CORP}`))).toHaveLength(5)
  })

  it('needs graph/Read', async () => {
    await expectEnvelope(await (await userWithRole('Upload-Only')).client.raw('GET', `/api/v2/pathfinding?start_node=${ID.alice}&end_node=${CORP}`), 403)
  })
})

describe('GET /api/v2/graph-search', () => {
  it('fuzzy (default): names or object ids starting with the query, case-insensitively, keyed by node id', async () => {
    const r = await admin.call<Legacy>('GET', '/api/v2/graph-search?query=alice')
    const names = nodesOf(r).map(([, n]) => n.label.text).sort()
    expect(names).toEqual(['ALICE@CONTOSO.COM', 'ALICE@CORP.LOCAL'])
    for (const [key, n] of nodesOf(r)) {
      expect(key).toMatch(/^\d+$/)
      expect(n.data.nodetype).toBeDefined()
    }
    const az = nodesOf(r).find(([, n]) => n.data.objectid === ID.azAlice)![1]
    expect(az).toMatchObject({ fontIcon: { text: 'fas fa-user' }, data: { nodetype: 'AZUser' } })
    // by object id prefix
    expect(nodesOf(await admin.call<Legacy>('GET', `/api/v2/graph-search?query=${CORP}-110`)).map(([, n]) => n.data.objectid).sort()).toEqual(
      [ID.alice, ID.bob, ID.carol].sort(),
    )
  })

  it('type=exact: equal name or object id only', async () => {
    expect(nodesOf(await admin.call<Legacy>('GET', '/api/v2/graph-search?query=alice&type=exact'))).toEqual([])
    const byName = nodesOf(await admin.call<Legacy>('GET', '/api/v2/graph-search?query=alice@corp.local&type=EXACT'))
    expect(byName.map(([, n]) => n.data.objectid)).toEqual([ID.alice])
    const byId = nodesOf(await admin.call<Legacy>('GET', `/api/v2/graph-search?query=${ID.alice.toLowerCase()}&type=exact`))
    expect(byId.map(([, n]) => n.data.objectid)).toEqual([ID.alice])
  })

  it('refuses missing and repeated parameters with BloodHound’s messages', async () => {
    await expectEnvelope(await admin.raw('GET', '/api/v2/graph-search'), 400, 'Expected search parameter to be set.')
    await expectEnvelope(await admin.raw('GET', '/api/v2/graph-search?query='), 400, 'Expected search parameter to be set.')
    await expectEnvelope(await admin.raw('GET', '/api/v2/graph-search?query=a&query=b'), 400, 'Expected only one search value.')
    await expectEnvelope(await admin.raw('GET', '/api/v2/graph-search?query=a&type=exact&type=fuzzy'), 400, 'Expected only one search type.')
    await expectEnvelope(await admin.raw('GET', `/api/v2/graph-search?query=${'q'.repeat(1025)}`), 400, 'query must be at most 1024 characters')
  })

  it(`refuses more than ${GRAPH_SEARCH_MAX_NODES} matches with the budget envelope`, async () => {
    const nodes = Array.from({ length: GRAPH_SEARCH_MAX_NODES + 1 }, (_, i) => ({
      id: `BULK-${String(i).padStart(5, '0')}`,
      kinds: ['User', 'Base'],
      properties: { name: `BULK ${i}@CORP.LOCAL`, domainsid: CORP },
    }))
    await ingest(admin, { graph: { nodes } })
    await expectEnvelope(await admin.raw('GET', '/api/v2/graph-search?query=bulk'), 400, `budget of ${GRAPH_SEARCH_MAX_NODES}`)
    expect(nodesOf(await admin.call<Legacy>('GET', `/api/v2/graph-search?query=${encodeURIComponent('bulk 99@')}`)).map(([, n]) => n.label.text)).toEqual(['BULK 99@CORP.LOCAL'])
  })

  it('a restricted caller finds only nodes of its environments', async () => {
    expect(nodesOf(await admin.call<Legacy>('GET', '/api/v2/graph-search?query=dave')).map(([, n]) => n.data.objectid)).toEqual([ID.dave])
    expect(await corpOnly.call<Legacy>('GET', '/api/v2/graph-search?query=dave')).toEqual({ data: {} })
    expect(await corpOnly.call<Legacy>('GET', `/api/v2/graph-search?query=${ID.dave}&type=exact`)).toEqual({ data: {} })
    expect(nodesOf(await corpOnly.call<Legacy>('GET', '/api/v2/graph-search?query=alice')).map(([, n]) => n.data.objectid)).toEqual([ID.alice])
  })

  it('needs graph/Read', async () => {
    await expectEnvelope(await (await userWithRole('Upload-Only')).client.raw('GET', '/api/v2/graph-search?query=alice'), 403)
  })
})
