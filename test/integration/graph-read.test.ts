import { beforeAll, describe, expect, it } from 'vitest'
import { adminToken, env, expectEnvelope, userWithRole } from '../helpers'
import type { EdgeHoundClient } from '../../src/client'
import { availableDomains, ingest, search, shortestPath, startUploadJob, uploadFile } from '../../src/client/graph'
import { adPayload, azurePayload, CORP, ID, LAB, TENANT } from '../fixtures/graph/corp'
import { PATH_LIMITS, PATH_MAX_ANSWER_EDGES, SEARCH_MAX_SKIP } from '../../src/graph/read.routes'
import { expandFrontier, getNodeByObjectId } from '../../src/graph/graph.store'
import { allShortestPaths, PathSearchTooLarge } from '../../src/graph/path'

let admin: EdgeHoundClient
/** Read-Only, restricted to the CORP domain */
let corpOnly: EdgeHoundClient

beforeAll(async () => {
  admin = await adminToken()
  await ingest(admin, adPayload, azurePayload)
  // Extra shapes for path tests: a diamond (two shortest paths) and a path through another environment.
  await ingest(admin, {
    graph: {
      nodes: [
        { id: 'D-X', kinds: ['User', 'Base'], properties: { name: 'DIAMOND X@CORP.LOCAL', domainsid: CORP } },
        { id: 'D-A', kinds: ['Group', 'Base'], properties: { name: 'DIAMOND A@CORP.LOCAL', domainsid: CORP } },
        { id: 'D-B', kinds: ['Group', 'Base'], properties: { name: 'DIAMOND B@CORP.LOCAL', domainsid: CORP } },
        { id: 'D-Z', kinds: ['Group', 'Base'], properties: { name: 'DIAMOND Z@CORP.LOCAL', domainsid: CORP } },
        { id: 'V-LAB', kinds: ['Group', 'Base'], properties: { name: 'VIA LAB@LAB.LOCAL', domainsid: LAB } },
        { id: 'V-END', kinds: ['Group', 'Base'], properties: { name: 'VIA END@CORP.LOCAL', domainsid: CORP } },
      ],
      edges: [
        { start: { value: 'D-X' }, end: { value: 'D-A' }, kind: 'MemberOf' },
        { start: { value: 'D-X' }, end: { value: 'D-B' }, kind: 'MemberOf' },
        { start: { value: 'D-A' }, end: { value: 'D-Z' }, kind: 'MemberOf' },
        { start: { value: 'D-B' }, end: { value: 'D-Z' }, kind: 'MemberOf' },
        { start: { value: 'D-Z' }, end: { value: 'V-LAB' }, kind: 'MemberOf' },
        { start: { value: 'V-LAB' }, end: { value: 'V-END' }, kind: 'MemberOf' },
        { start: { value: 'D-Z' }, end: { value: ID.dc1 }, kind: 'TrustedBy' },
      ],
    },
  })
  corpOnly = (await userWithRole('Read-Only', { all_environments: false, environment_access: [CORP] })).client
})

describe('available-domains', () => {
  it('lists every environment with type, collected and impactValue for an administrator', async () => {
    const r = await availableDomains(admin)
    expect(r.data.map((d) => d.name)).toEqual(['CONTOSO', 'CORP.LOCAL', 'LAB.LOCAL'])
    const corp = r.data.find((d) => d.id === CORP)!
    expect(corp).toMatchObject({ id: CORP, name: 'CORP.LOCAL', type: 'active-directory', collected: true, impactValue: 0 })
    expect(corp.collected_at).toMatch(/Z$/)
    expect(r.data.find((d) => d.id === TENANT)).toMatchObject({ type: 'azure', collected: true, impactValue: 0 })
  })

  it('only shows the environments a restricted caller may see', async () => {
    expect((await availableDomains(corpOnly)).data.map((d) => d.id)).toEqual([CORP])
    const labOnly = await userWithRole('User', { all_environments: false, environment_access: [LAB, 'S-1-5-21-999'] })
    expect((await availableDomains(labOnly.client)).data.map((d) => d.id)).toEqual([LAB])
    const none = await userWithRole('Read-Only', { all_environments: false, environment_access: [] })
    expect((await availableDomains(none.client)).data).toEqual([])
  })

  it('per role: Read-Only and User may read; Upload-Only may not', async () => {
    expect((await availableDomains((await userWithRole('User')).client)).data).toHaveLength(3)
    expect((await availableDomains((await userWithRole('Read-Only')).client)).data).toHaveLength(3)
    await expectEnvelope(await (await userWithRole('Upload-Only')).client.raw('GET', '/api/v2/available-domains'), 403)
  })

  it('an environment is collected only once a job carrying it has ended', async () => {
    const job = (await startUploadJob(admin)).data
    await uploadFile(admin, job.id, { graph: { nodes: [{ id: 'S-1-5-21-300', kinds: ['Domain'], properties: { name: 'NEW.LOCAL' } }] } })
    expect((await availableDomains(admin)).data.find((d) => d.id === 'S-1-5-21-300')).toMatchObject({ collected: false, collected_at: null })
    await admin.call('POST', `/api/v2/file-upload/${job.id}/end`)
    expect((await availableDomains(admin)).data.find((d) => d.id === 'S-1-5-21-300')).toMatchObject({ collected: true })
  })
})

describe('search', () => {
  it('puts exact (case-insensitive) name matches first, then names containing q, by name', async () => {
    const r = await search(admin, { q: 'corp.local' })
    // a domain is Tier Zero (src/assetgroups/tierzero.ts): its system_tags carry admin_tier_0 as BloodHound's do
    expect(r.data[0]).toEqual({ objectid: CORP, type: 'Domain', name: 'CORP.LOCAL', distinguishedname: 'DC=CORP,DC=LOCAL', system_tags: 'admin_tier_0' })
    const rest = r.data.slice(1).map((d) => d.name)
    expect(rest).toEqual([...rest].sort())
    expect(rest.every((n) => n.toLowerCase().includes('corp.local'))).toBe(true)
    expect(r.data).toHaveLength(10) // default limit
  })

  it('matches object ids exactly and names by substring', async () => {
    expect((await search(admin, { q: ID.alice.toLowerCase() })).data.map((d) => d.objectid)).toEqual([ID.alice])
    const alice = await search(admin, { q: 'alice' })
    expect(alice.data.map((d) => d.name)).toEqual(['ALICE@CONTOSO.COM', 'ALICE@CORP.LOCAL'])
    expect(alice.data[1]).toMatchObject({ type: 'User', distinguishedname: 'CN=ALICE,CN=USERS,DC=CORP,DC=LOCAL' })
    const da = await search(admin, { q: 'domain admins' })
    expect(da.data[0]).toMatchObject({ objectid: ID.da, system_tags: 'admin_tier_0' })
    expect((await search(admin, { q: 'no such thing anywhere' })).data).toEqual([])
  })

  it('pages over the combined list with skip and limit', async () => {
    const all = (await search(admin, { q: 'corp.local', limit: 100 })).data.map((d) => d.objectid)
    expect(all.length).toBeGreaterThan(12)
    const pages: string[] = []
    for (let skip = 0; skip < all.length + 3; skip += 3) pages.push(...(await search(admin, { q: 'corp.local', skip, limit: 3 })).data.map((d) => d.objectid))
    expect(pages).toEqual(all)
    expect((await search(admin, { q: 'corp.local', skip: all.length })).data).toEqual([])
  })

  it('filters by type (repeatable or comma-separated)', async () => {
    expect((await search(admin, { q: 'corp.local', type: ['Computer'] })).data.map((d) => d.name)).toEqual(['DC1.CORP.LOCAL', 'WS1.CORP.LOCAL'])
    const r = await search(admin, { q: 'alice', type: ['User', 'AZUser'] })
    expect(r.data).toHaveLength(2)
    expect((await admin.call<{ data: unknown[] }>('GET', '/api/v2/search?q=alice&type=AZUser,Group')).data).toHaveLength(1)
  })

  it('short queries match exact names and name prefixes', async () => {
    expect((await search(admin, { q: 'vm' })).data.map((d) => d.name)).toEqual(['VM-01'])
    expect((await search(admin, { q: 'D' })).data.map((d) => d.name).slice(0, 2)).toEqual(['DAVE@LAB.LOCAL', 'DC1.CORP.LOCAL'])
  })

  it('treats q literally (FTS syntax characters are not operators)', async () => {
    for (const q of ['x"y', 'a* OR b', '(NEAR)', 'AND', '@corp', '"'])
      expect(Array.isArray((await search(admin, { q })).data), q).toBe(true)
    expect((await search(admin, { q: '@corp' })).data.length).toBe(10)
  })

  it('respects environment access', async () => {
    expect((await search(corpOnly, { q: 'alice' })).data.map((d) => d.name)).toEqual(['ALICE@CORP.LOCAL'])
    expect((await search(corpOnly, { q: 'lab.local' })).data).toEqual([])
  })

  it('answers 400 envelopes for a missing q and malformed parameters', async () => {
    await expectEnvelope(await admin.raw('GET', '/api/v2/search'), 400, 'Invalid search parameter')
    await expectEnvelope(await admin.raw('GET', '/api/v2/search?q='), 400, 'Invalid search parameter')
    await expectEnvelope(await admin.raw('GET', '/api/v2/search?q=a&limit=x'), 400, 'limit must be a non-negative integer')
    await expectEnvelope(await admin.raw('GET', '/api/v2/search?q=a&skip=-1'), 400, 'skip must be a non-negative integer')
    const deep = await expectEnvelope(await admin.raw('GET', `/api/v2/search?q=a&skip=${SEARCH_MAX_SKIP + 1}`), 400)
    expect(deep.errors).toEqual([
      { context: 'query.skip', message: `skip exceeds the skip budget of ${SEARCH_MAX_SKIP}: narrow the search with a longer q or with type` },
    ])
    expect((await search(admin, { q: 'corp.local', skip: SEARCH_MAX_SKIP })).data).toEqual([])
    await expectEnvelope(await admin.raw('GET', '/api/v2/search?q=a&type=Not%20A%20Kind'), 400, 'Invalid type parameter')
  })
})

describe('shortest path', () => {
  it('finds the path in BloodHound shape', async () => {
    const r = await shortestPath(admin, ID.alice, CORP)
    const nodes = r.data.nodes
    const byObject = Object.fromEntries(Object.entries(nodes).map(([k, v]) => [v.objectId, k]))
    expect(Object.keys(byObject).sort()).toEqual([ID.alice, ID.helpdesk, ID.ws1, ID.bob, ID.da, CORP].sort())
    expect(nodes[byObject[ID.alice]]).toMatchObject({ label: 'ALICE@CORP.LOCAL', kind: 'User', kinds: ['User', 'Base'], isTierZero: false, isOwnedObject: false })
    expect(nodes[byObject[ID.da]].isTierZero).toBe(true)
    const chain = r.data.edges.map((e) => `${nodes[e.source].objectId} ${e.kind} ${nodes[e.target].objectId}`).sort()
    expect(chain).toEqual(
      [
        `${ID.alice} MemberOf ${ID.helpdesk}`,
        `${ID.helpdesk} AdminTo ${ID.ws1}`,
        `${ID.ws1} HasSession ${ID.bob}`,
        `${ID.bob} MemberOf ${ID.da}`,
        `${ID.da} GenericAll ${CORP}`,
      ].sort(),
    )
    for (const e of r.data.edges) {
      expect(e.label).toBe(e.kind)
      expect(e.lastSeen).toMatch(/Z$/)
    }
  })

  it('returns every shortest path (the union), not just one', async () => {
    const r = await shortestPath(admin, 'D-X', 'D-Z')
    expect(Object.values(r.data.nodes).map((n) => n.objectId).sort()).toEqual(['D-A', 'D-B', 'D-X', 'D-Z'])
    expect(r.data.edges).toHaveLength(4)
  })

  it('404 Path not found when no path exists or only through non-traversable kinds', async () => {
    await expectEnvelope(await admin.raw('GET', `/api/v2/graphs/shortest-path?start_node=${ID.dc1}&end_node=${ID.alice}`), 404, 'Path not found')
    // TrustedBy is not traversable
    await expectEnvelope(await admin.raw('GET', `/api/v2/graphs/shortest-path?start_node=D-X&end_node=${ID.dc1}`), 404, 'Path not found')
    await expectEnvelope(await admin.raw('GET', `/api/v2/graphs/shortest-path?start_node=NOPE&end_node=${ID.dc1}`), 404, 'Path not found')
  })

  it('filters relationship kinds with in: and nin:', async () => {
    await expectEnvelope(
      await admin.raw('GET', `/api/v2/graphs/shortest-path?start_node=${ID.alice}&end_node=${CORP}&relationship_kinds=nin:HasSession`),
      404,
      'Path not found',
    )
    const r = await shortestPath(admin, ID.alice, CORP, 'in:MemberOf,AdminTo,HasSession,GenericAll')
    expect(r.data.edges).toHaveLength(5)
    // `in:` may name a non-traversable kind explicitly
    const t = await shortestPath(admin, 'D-Z', ID.dc1, 'in:TrustedBy')
    expect(t.data.edges.map((e) => e.kind)).toEqual(['TrustedBy'])
  })

  it(`budgets: an answer of more than ${PATH_MAX_ANSWER_EDGES} relationships is refused before any detail is read (400 naming the budget)`, async () => {
    // 2,501 parallel shortest paths of length 2: 5,002 relationships in the union
    const mids = Array.from({ length: PATH_MAX_ANSWER_EDGES / 2 + 1 }, (_, i) => `PB-M${i}`)
    await ingest(admin, {
      graph: {
        nodes: [
          { id: 'PB-S', kinds: ['User', 'Base'], properties: { name: 'PB START@CORP.LOCAL', domainsid: CORP } },
          { id: 'PB-E', kinds: ['Group', 'Base'], properties: { name: 'PB END@CORP.LOCAL', domainsid: CORP } },
          ...mids.map((id) => ({ id, kinds: ['Group', 'Base'], properties: { name: `${id}@CORP.LOCAL`, domainsid: CORP } })),
        ],
        edges: mids.flatMap((id) => [
          { start: { value: 'PB-S' }, end: { value: id }, kind: 'MemberOf' },
          { start: { value: id }, end: { value: 'PB-E' }, kind: 'MemberOf' },
        ]),
      },
    })
    const body = await expectEnvelope(await admin.raw('GET', '/api/v2/graphs/shortest-path?start_node=PB-S&end_node=PB-E'), 400)
    expect(body.errors).toEqual([
      {
        context: 'query.relationship_kinds',
        message: `the shortest paths (${PATH_MAX_ANSWER_EDGES + 2} relationships of length 2) exceeds the relationships per answer budget of ${PATH_MAX_ANSWER_EDGES}: narrow the search with relationship_kinds (in:... or nin:...) or choose nearer nodes`,
      },
    ])
    // one path fewer fits
    const ok = await shortestPath(admin, 'PB-S', 'PB-M0')
    expect(ok.data.edges).toHaveLength(1)
  })

  it(`budgets: the edges a search may touch are bounded in SQL on every expansion (${PATH_LIMITS.maxEdges} in production)`, async () => {
    const db = env.DB
    const hub = (await getNodeByObjectId(db, 'PB-S'))!
    // the store never returns more than max + 1 edges, whatever the frontier's degree
    expect(await expandFrontier(db, [hub.id], 'out', ['MemberOf'], null, 10)).toHaveLength(11)
    expect(await expandFrontier(db, [hub.id], 'out', ['MemberOf'], JSON.stringify([CORP]), 0)).toHaveLength(1)
    expect(await expandFrontier(db, [hub.id], 'out', ['MemberOf'], null)).toHaveLength(PATH_MAX_ANSWER_EDGES / 2 + 1)
    // a search whose budget is spent stops at the first expansion that passes it, having fetched budget + 1
    let fetched = 0
    const expand = async (f: number[], d: 'out' | 'in', max: number) => {
      const edges = await expandFrontier(db, f, d, ['MemberOf'], null, max)
      fetched += edges.length
      return edges
    }
    const target = (await getNodeByObjectId(db, ID.dc1))!
    await expect(allShortestPaths(hub.id, target.id, expand, { maxDepth: 64, maxEdges: 100 })).rejects.toBeInstanceOf(PathSearchTooLarge)
    expect(fetched).toBeLessThanOrEqual(101)
  })

  it('answers 400 envelopes for missing or malformed parameters', async () => {
    await expectEnvelope(await admin.raw('GET', `/api/v2/graphs/shortest-path?end_node=${CORP}`), 400, 'start_node is required')
    await expectEnvelope(await admin.raw('GET', `/api/v2/graphs/shortest-path?start_node=${CORP}`), 400, 'end_node is required')
    await expectEnvelope(await admin.raw('GET', '/api/v2/graphs/shortest-path?start_node=&end_node=x'), 400, 'start_node is required')
    await expectEnvelope(
      await admin.raw('GET', `/api/v2/graphs/shortest-path?start_node=a&end_node=b&relationship_kinds=MemberOf`),
      400,
      'acceptable values should match the format: in|nin:Kind1,Kind2',
    )
    const body = await expectEnvelope(
      await admin.raw('GET', `/api/v2/graphs/shortest-path?start_node=a&end_node=b&relationship_kinds=in:MemberOf,NotAKind`),
      400,
      'unknown kind(s) NotAKind',
    )
    expect(body.errors[0].message).toContain('acceptable relationship kinds are: [')
    expect(body.errors[0].context).toBe('query.relationship_kinds')
  })

  it('respects environment access: invisible nodes are absent, also in the middle of a path', async () => {
    const adminPath = await shortestPath(admin, 'D-X', 'V-END')
    expect(Object.values(adminPath.data.nodes).map((n) => n.objectId)).toContain('V-LAB')
    await expectEnvelope(await corpOnly.raw('GET', '/api/v2/graphs/shortest-path?start_node=D-X&end_node=V-END'), 404, 'Path not found')
    await expectEnvelope(await corpOnly.raw('GET', `/api/v2/graphs/shortest-path?start_node=${ID.dave}&end_node=${ID.helpdesk}`), 404, 'Path not found')
    expect((await shortestPath(corpOnly, ID.alice, CORP)).data.edges).toHaveLength(5)
  })
})
