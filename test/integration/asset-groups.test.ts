/**
 * Asset groups (issue 15): the "Admin Tier Zero" and "Owned" system groups hold what the Tier Zero and Owned
 * rules (src/assetgroups/tierzero.ts) accept in the last analysis run; object-id selectors added by an
 * administrator change the NEXT run (its findings, the members, and Cypher's Tag_Tier_Zero / system_tags);
 * environment access applies to members; every error is the spec's envelope.
 */
import { env } from 'cloudflare:workers'
import { beforeAll, describe, expect, it } from 'vitest'
import { adminToken, client, expectEnvelope, userWithRole } from '../helpers'
import type { EdgeHoundClient } from '../../src/client'
import {
  createAssetGroup,
  deleteAssetGroup,
  getAssetGroup,
  listAssetGroupMembers,
  listAssetGroups,
  updateAssetGroup,
  updateAssetGroupSelectors,
  type AssetGroupMemberJson,
} from '../../src/client/assetgroups'
import { cypherQuery } from '../../src/client/cypher'
import { listAuditLogs } from '../../src/client/audit'
import { insertGraph, openFindingRows, runAnalysisDirect } from '../fixtures/findings/helpers'
import { D, ID, T, TIER_ZERO } from '../fixtures/findings/known-graph'

const db = env.DB
let admin: EdgeHoundClient & { tokenId: string; tokenKey: string }

async function allMembers(c: EdgeHoundClient, id: number): Promise<AssetGroupMemberJson[]> {
  const out: AssetGroupMemberJson[] = []
  for (let skip = 0; ; skip += 5) {
    const page = await listAssetGroupMembers(c, id, { skip, limit: 5 })
    out.push(...page.data.members)
    if (page.data.members.length < 5) return out
  }
}

async function openFinding(finding: string, from: string, to: string) {
  return (await openFindingRows(db)).find((r) => r.finding === finding && r.from_objectid === from && r.to_objectid === to && r.deleted_at === null)
}

/** Cypher's answer for one object among Tier Zero nodes (null when Cypher finds nothing: 404). */
async function tierZeroByCypher(objectid: string) {
  const r = await admin.raw('POST', '/api/v2/graphs/cypher', {
    query: `MATCH (n:Tag_Tier_Zero) WHERE n.objectid = '${objectid}' RETURN n`,
    include_properties: true,
  })
  if (r.status === 404) return null
  expect(r.status).toBe(200)
  const body = (await r.json()) as { data: { nodes: Record<string, { kinds: string[]; isTierZero: boolean; properties: Record<string, unknown> }> } }
  return Object.values(body.data.nodes)[0] ?? null
}

beforeAll(async () => {
  admin = await adminToken({ paced: true })
  await insertGraph(db)
  await runAnalysisDirect(db)
})

describe('system groups', () => {
  it('"Admin Tier Zero" (admin_tier_0) and "Owned" (owned) exist with BloodHound\'s fields', async () => {
    const r = await listAssetGroups(admin)
    const [t0, owned] = r.data.asset_groups
    expect(Object.keys(t0).sort()).toEqual(
      ['created_at', 'deleted_at', 'id', 'member_count', 'name', 'selectors', 'system_group', 'tag', 'updated_at'].sort(),
    )
    expect(t0).toMatchObject({ id: 1, name: 'Admin Tier Zero', tag: 'admin_tier_0', system_group: true, selectors: [], member_count: TIER_ZERO.size })
    expect(t0.deleted_at).toEqual({ time: '0001-01-01T00:00:00Z', valid: false })
    expect(owned).toMatchObject({ id: 2, name: 'Owned', tag: 'owned', system_group: true, member_count: 1 })
    expect((await getAssetGroup(admin, 1)).data).toEqual(t0)
    // BloodHound's filters: clients look the Tier Zero group up by its tag
    expect((await admin.call<{ data: { asset_groups: { id: number }[] } }>('GET', '/api/v2/asset-groups?tag=eq:admin_tier_0')).data.asset_groups.map((g) => g.id)).toEqual([1])
    expect((await listAssetGroups(admin, { sort_by: '-member_count' })).data.asset_groups[0].id).toBe(1)
    expect((await admin.call<{ data: { asset_groups: { id: number }[] } }>('GET', '/api/v2/asset-groups?member_count=lt:2&system_group=eq:true')).data.asset_groups.map((g) => g.id)).toEqual([2])
    await expectEnvelope(await admin.raw('GET', '/api/v2/asset-groups?member_count=gt:many'), 400)
  })

  it('Tier Zero members are exactly what the Tier Zero rules accept, in BloodHound\'s member shape', async () => {
    const members = await allMembers(admin, 1)
    expect(new Set(members.map((m) => m.object_id))).toEqual(TIER_ZERO)
    expect(members).toHaveLength(TIER_ZERO.size)
    const da = members.find((m) => m.object_id === ID.DA)
    expect(da).toEqual({
      asset_group_id: 1,
      object_id: ID.DA,
      primary_kind: 'Group',
      kinds: ['Group', 'Base'],
      environment_id: D,
      environment_kind: 'Domain',
      name: 'DOMAIN ADMINS@CORP.LOCAL',
      custom_member: false,
    })
    expect(members.find((m) => m.object_id === ID.GA)).toMatchObject({ environment_id: T, environment_kind: 'AZTenant' })
    const page = await listAssetGroupMembers(admin, 1, { limit: 2 })
    expect(page).toMatchObject({ count: TIER_ZERO.size, skip: 0, limit: 2 })
    expect((await listAssetGroupMembers(admin, 2)).data.members.map((m) => m.object_id)).toEqual([ID.DC1])
  })

  it('Cypher\'s Tag_Tier_Zero, graph answers\' isTierZero and the members are one rule', async () => {
    const r = await cypherQuery(admin, 'MATCH (n:Tag_Tier_Zero) RETURN n', true)
    const nodes = Object.values(r.data.nodes) as unknown as { objectId: string; isTierZero: boolean; properties: Record<string, unknown> }[]
    expect(new Set(nodes.map((n) => n.objectId))).toEqual(TIER_ZERO)
    for (const n of nodes) {
      expect(n.isTierZero).toBe(true)
      expect(String(n.properties.system_tags).split(' ')).toContain('admin_tier_0')
    }
    // a shortest path's nodes: the domain (Tier Zero by its primary kind, no tag stored) and a plain group
    const path = await admin.call<{ data: { nodes: Record<string, { objectId: string; isTierZero: boolean }> } }>(
      'GET',
      `/api/v2/graphs/shortest-path?start_node=${ID.HELPDESK}&end_node=${ID.DA}`,
    )
    const byId = Object.fromEntries(Object.values(path.data.nodes).map((n) => [n.objectId, n.isTierZero]))
    expect(byId).toEqual({ [ID.HELPDESK]: false, [ID.DA]: true })
  })

  it('filters and sorts members', async () => {
    const groups = await listAssetGroupMembers(admin, 1, { primary_kind: 'eq:Group', sort_by: '-name' })
    const names = groups.data.members.map((m) => m.name)
    expect(names.length).toBeGreaterThan(3)
    expect(names).toEqual([...names].sort().reverse())
    expect(groups.data.members.every((m) => m.primary_kind === 'Group')).toBe(true)
    const notAd = await listAssetGroupMembers(admin, 1, { environment_id: `neq:${D}`, limit: 100 })
    expect(notAd.data.members.every((m) => m.environment_id !== D)).toBe(true)
    expect(notAd.count).toBe(notAd.data.members.length)
    expect((await listAssetGroupMembers(admin, 1, { custom_member: 'eq:true' })).count).toBe(0)
  })
})

describe('selectors', () => {
  it('an added object-id selector makes the object Tier Zero at the next analysis: findings, members and Cypher', async () => {
    // ALICE -GenericAll-> FAKE_TAG is no finding while FAKE_TAG is not Tier Zero
    expect(await openFinding('T0GenericAll', ID.ALICE, ID.FAKE_TAG)).toBeUndefined()
    expect(await tierZeroByCypher(ID.FAKE_TAG)).toBeNull()

    const r = await updateAssetGroupSelectors(admin, 1, [{ selector_name: 'fake tag host', sid: ID.FAKE_TAG, action: 'add' }])
    expect(r.data.removed_selectors).toEqual([])
    expect(r.data.added_selectors).toHaveLength(1)
    expect(r.data.added_selectors[0]).toMatchObject({ asset_group_id: 1, name: 'fake tag host', selector: ID.FAKE_TAG, system_selector: false })
    expect((await getAssetGroup(admin, 1)).data.selectors.map((s) => s.selector)).toEqual([ID.FAKE_TAG])
    // adding it again changes nothing
    expect((await updateAssetGroupSelectors(admin, 1, [{ sid: ID.FAKE_TAG, action: 'add' }])).data.added_selectors).toEqual([])

    // not before the next analysis run
    expect((await listAssetGroupMembers(admin, 1, { object_id: ID.FAKE_TAG })).count).toBe(0)
    expect(await tierZeroByCypher(ID.FAKE_TAG)).toBeNull()

    await runAnalysisDirect(db)
    expect(await openFinding('T0GenericAll', ID.ALICE, ID.FAKE_TAG)).toBeDefined()
    const m = await listAssetGroupMembers(admin, 1, { object_id: ID.FAKE_TAG })
    expect(m.data.members).toEqual([expect.objectContaining({ object_id: ID.FAKE_TAG, custom_member: true })])
    expect((await listAssetGroupMembers(admin, 1, { custom_member: 'true' })).count).toBe(1)
    expect((await getAssetGroup(admin, 1)).data.member_count).toBe(TIER_ZERO.size + 1)
    const node = await tierZeroByCypher(ID.FAKE_TAG)
    expect(node).not.toBeNull()
    expect(node!.isTierZero).toBe(true)
    expect(node!.kinds).toContain('Tag_Tier_Zero')
    expect(String(node!.properties.system_tags).split(' ')).toContain('admin_tier_0')
    // graph reads use the same rule: the entity endpoint and search show it too
    const base = await admin.call<{ data: { props: Record<string, unknown> } }>('GET', `/api/v2/base/${ID.FAKE_TAG}`)
    expect(String(base.data.props.system_tags).split(' ')).toContain('admin_tier_0')

    // removing the selector undoes it at the next run
    const rm = await updateAssetGroupSelectors(admin, 1, [{ sid: ID.FAKE_TAG, action: 'remove' }])
    expect(rm.data.removed_selectors.map((s) => s.selector)).toEqual([ID.FAKE_TAG])
    await runAnalysisDirect(db)
    expect(await openFinding('T0GenericAll', ID.ALICE, ID.FAKE_TAG)).toBeUndefined()
    expect(await tierZeroByCypher(ID.FAKE_TAG)).toBeNull()
    expect((await getAssetGroup(admin, 1)).data.member_count).toBe(TIER_ZERO.size)
  })

  it("an Owned selector: the next run's Owned members, Cypher's Tag_Owned, isOwnedObject and owned tag, and the entity's system_tags are one set", async () => {
    const ownedByCypher = async (query: string) => {
      const r = await cypherQuery(admin, query, true)
      const nodes = Object.values(r.data.nodes) as unknown as { objectId: string; isOwnedObject: boolean; kinds: string[]; properties: Record<string, unknown> }[]
      for (const n of nodes) {
        expect(n.isOwnedObject, n.objectId).toBe(true)
        expect(n.kinds, n.objectId).toContain('Tag_Owned')
        expect(String(n.properties.system_tags).split(' '), n.objectId).toContain('owned')
      }
      return new Set(nodes.map((n) => n.objectId))
    }
    const members = async () => new Set((await allMembers(admin, 2)).map((m) => m.object_id))
    const before = await members()
    expect(before.has(ID.BOB)).toBe(false)
    await updateAssetGroupSelectors(admin, 2, [{ selector_name: 'phished', sid: ID.BOB, action: 'add' }])
    await runAnalysisDirect(db)
    const after = await members()
    expect(after).toEqual(new Set([...before, ID.BOB]))
    expect(await ownedByCypher('MATCH (n:Tag_Owned) RETURN n')).toEqual(after)
    expect(await ownedByCypher("MATCH (n) WHERE coalesce(n.system_tags, '') CONTAINS 'owned' RETURN n")).toEqual(after)
    const tagsOf = async (id: string) => String((await admin.call<{ data: { props: Record<string, unknown> } }>('GET', `/api/v2/base/${id}`)).data.props.system_tags).split(' ')
    expect(await tagsOf(ID.BOB)).toContain('owned')
    // removed: no longer owned anywhere after the next run
    await updateAssetGroupSelectors(admin, 2, [{ sid: ID.BOB, action: 'remove' }])
    await runAnalysisDirect(db)
    expect(await members()).toEqual(before)
    expect(await ownedByCypher('MATCH (n:Tag_Owned) RETURN n')).toEqual(before)
    expect(await tagsOf(ID.BOB)).not.toContain('owned')
  })

  it('a created group gets the objects its selectors name, tagged with its tag', async () => {
    const g = await createAssetGroup(admin, { name: 'Crown servers', tag: 'crown' })
    expect(g.data).toMatchObject({ name: 'Crown servers', tag: 'crown', system_group: false, member_count: 0, selectors: [] })
    await updateAssetGroupSelectors(admin, g.data.id, [{ sid: ID.WS1, action: 'add' }])
    await runAnalysisDirect(db)
    const m = await listAssetGroupMembers(admin, g.data.id)
    expect(m.data.members).toEqual([expect.objectContaining({ object_id: ID.WS1, custom_member: true, primary_kind: 'Computer' })])
    const r = await cypherQuery(admin, `MATCH (n) WHERE n.objectid = '${ID.WS1}' RETURN n`, true)
    const ws1 = Object.values(r.data.nodes)[0] as unknown as { isTierZero: boolean; properties: Record<string, unknown> }
    expect(String(ws1.properties.system_tags).split(' ')).toContain('crown')
    expect(ws1.isTierZero).toBe(false)
    await expectEnvelope(await admin.raw('POST', '/api/v2/asset-groups', { name: 'again', tag: 'crown' }), 409, 'already exists')
  })
})

describe('audit entries', () => {
  async function rowsOf(res: Response) {
    const id = res.headers.get('requestid')!
    return (await listAuditLogs(admin, { filters: { request_id: `eq:${id}` }, sort_by: 'id' })).data.logs.map((l) => [l.action, l.status, l.fields])
  }

  it('creating a group and changing selectors write intent and success in the change\'s batch; refusals write failure', async () => {
    const created = await admin.raw('POST', '/api/v2/asset-groups', { name: 'Audited', tag: 'audited' })
    expect(created.status).toBe(200)
    const id = ((await created.json()) as { data: { id: number } }).data.id
    expect(await rowsOf(created)).toEqual([
      ['CreateAssetGroup', 'intent', { asset_group_name: 'Audited', asset_group_tag: 'audited' }],
      ['CreateAssetGroup', 'success', { asset_group_name: 'Audited', asset_group_tag: 'audited', asset_group_tag_id: id }],
    ])
    const dup = await admin.raw('POST', '/api/v2/asset-groups', { name: 'Again', tag: 'audited' })
    expect(dup.status).toBe(409)
    expect((await rowsOf(dup)).map(([a, st]) => [a, st])).toEqual([
      ['CreateAssetGroup', 'intent'],
      ['CreateAssetGroup', 'failure'],
    ])

    await updateAssetGroupSelectors(admin, id, [{ sid: ID.BOB, action: 'add' }])
    const both = await admin.raw('PUT', `/api/v2/asset-groups/${id}/selectors`, [
      { sid: ID.CAROL, action: 'add' },
      { sid: ID.BOB, action: 'remove' },
    ])
    expect(both.status).toBe(201)
    const rows = await rowsOf(both)
    expect(rows).toHaveLength(3)
    expect(rows[0]).toEqual(['CreateAssetGroupSelector', 'intent', { asset_group_id: id, add: [ID.CAROL], remove: [ID.BOB] }])
    expect(rows.slice(1)).toEqual(
      expect.arrayContaining([
        ['CreateAssetGroupSelector', 'success', { asset_group_id: id, add: [ID.CAROL], remove: [ID.BOB] }],
        ['DeleteAssetGroupSelector', 'success', { asset_group_id: id, remove: [ID.BOB] }],
      ]),
    )
    const bad = await admin.raw('PUT', '/api/v2/asset-groups/999/selectors', [{ sid: ID.BOB, action: 'remove' }])
    expect(bad.status).toBe(404)
    expect((await rowsOf(bad)).map(([a, st]) => [a, st])).toEqual([
      ['DeleteAssetGroupSelector', 'intent'],
      ['DeleteAssetGroupSelector', 'failure'],
    ])
  })
})

describe('rename and delete (BloodHound\'s UpdateAssetGroup, DeleteAssetGroup)', () => {
  async function rowsOf(res: Response) {
    const id = res.headers.get('requestid')!
    return (await listAuditLogs(admin, { filters: { request_id: `eq:${id}` }, sort_by: 'id' })).data.logs.map((l) => [l.action, l.status, l.fields])
  }
  const systemTagsOf = async (objectid: string) => {
    const r = await cypherQuery(admin, `MATCH (n) WHERE n.objectid = '${objectid}' RETURN n`, true)
    const node = Object.values(r.data.nodes)[0] as unknown as { properties: Record<string, unknown> }
    return String(node.properties.system_tags ?? '').split(' ')
  }

  it('PUT renames a group, keeps its tag, selectors and members, and is audited', async () => {
    const g = (await createAssetGroup(admin, { name: 'Old name', tag: 'renamable' })).data
    await updateAssetGroupSelectors(admin, g.id, [{ sid: ID.WS1, action: 'add' }])
    const res = await admin.raw('PUT', `/api/v2/asset-groups/${g.id}`, { name: 'New name', tag: 'ignored_tag' })
    expect(res.status).toBe(200)
    const body = (await res.json()) as { data: { id: number; name: string; tag: string; selectors: { selector: string }[]; updated_at: string } }
    expect(body.data).toMatchObject({ id: g.id, name: 'New name', tag: 'renamable' })
    expect(body.data.selectors.map((s) => s.selector)).toEqual([ID.WS1])
    expect((await getAssetGroup(admin, g.id)).data).toMatchObject({ name: 'New name', tag: 'renamable' })
    expect(await rowsOf(res)).toEqual([
      ['UpdateAssetGroup', 'intent', { asset_group_id: g.id, asset_group_name: 'New name' }],
      ['UpdateAssetGroup', 'success', { asset_group_id: g.id, asset_group_name: 'New name' }],
    ])
    // system groups may be renamed, as in BloodHound; the typed client does it too
    expect((await updateAssetGroup(admin, 2, { name: 'Owned objects' })).data).toMatchObject({ id: 2, tag: 'owned', system_group: true, name: 'Owned objects' })
    expect((await updateAssetGroup(admin, 2, { name: 'Owned' })).data.name).toBe('Owned')

    const missing = await admin.raw('PUT', '/api/v2/asset-groups/999', { name: 'x' })
    await expectEnvelope(missing, 404, 'asset group not found')
    expect((await rowsOf(missing)).map(([a, st]) => [a, st])).toEqual([
      ['UpdateAssetGroup', 'intent'],
      ['UpdateAssetGroup', 'failure'],
    ])
    await expectEnvelope(await admin.raw('PUT', `/api/v2/asset-groups/${g.id}`, { name: '  ' }), 400, 'name is required')
    await expectEnvelope(await admin.raw('PUT', `/api/v2/asset-groups/${g.id}`, {}), 400)
    await expectEnvelope(await admin.raw('PUT', '/api/v2/asset-groups/abc', { name: 'x' }), 400)
    await expectEnvelope(await (await userWithRole('Read-Only')).client.raw('PUT', `/api/v2/asset-groups/${g.id}`, { name: 'x' }), 403)
    expect((await getAssetGroup(admin, g.id)).data.name).toBe('New name')
  })

  it('DELETE removes a group with its selectors and members; the next run drops its tag; audited', async () => {
    const g = (await createAssetGroup(admin, { name: 'Doomed', tag: 'doomed' })).data
    await updateAssetGroupSelectors(admin, g.id, [{ sid: ID.BOB, action: 'add' }])
    await runAnalysisDirect(db)
    expect((await listAssetGroupMembers(admin, g.id)).data.members.map((m) => m.object_id)).toEqual([ID.BOB])
    expect(await systemTagsOf(ID.BOB)).toContain('doomed')

    const res = await admin.raw('DELETE', `/api/v2/asset-groups/${g.id}`)
    expect(res.status).toBe(200)
    expect(await res.text()).toBe('')
    expect(await rowsOf(res)).toEqual([
      ['DeleteAssetGroup', 'intent', { asset_group_id: g.id }],
      ['DeleteAssetGroup', 'success', { asset_group_id: g.id, asset_group_name: 'Doomed', asset_group_tag: 'doomed' }],
    ])
    await expectEnvelope(await admin.raw('GET', `/api/v2/asset-groups/${g.id}`), 404, 'asset group not found')
    await expectEnvelope(await admin.raw('GET', `/api/v2/asset-groups/${g.id}/members`), 404)
    expect((await listAssetGroups(admin)).data.asset_groups.map((x) => x.id)).not.toContain(g.id)
    const left = await db.batch([
      db.prepare('SELECT COUNT(*) AS n FROM asset_group_tag_selectors WHERE asset_group_id = ?1').bind(g.id),
      db.prepare('SELECT COUNT(*) AS n FROM asset_group_tag_selector_seeds WHERE asset_group_id = ?1').bind(g.id),
      db.prepare('SELECT COUNT(*) AS n FROM asset_group_members WHERE asset_group_id = ?1').bind(g.id),
    ])
    expect(left.map((r) => (r.results[0] as { n: number }).n)).toEqual([0, 0, 0])
    // the tag stays on the node until the next run recomputes membership, then it is gone
    await runAnalysisDirect(db)
    expect(await systemTagsOf(ID.BOB)).not.toContain('doomed')
    // deleting again is 404; the tag is free again
    const again = await admin.raw('DELETE', `/api/v2/asset-groups/${g.id}`)
    await expectEnvelope(again, 404, 'asset group not found')
    expect((await rowsOf(again)).map(([a, st]) => [a, st])).toEqual([
      ['DeleteAssetGroup', 'intent'],
      ['DeleteAssetGroup', 'failure'],
    ])
    const reborn = await createAssetGroup(admin, { name: 'Doomed again', tag: 'doomed' })
    expect(reborn.data.id).not.toBe(g.id)
    await deleteAssetGroup(admin, reborn.data.id)
    await expectEnvelope(await admin.raw('GET', `/api/v2/asset-groups/${reborn.data.id}`), 404)
  })

  it('a group deleted while an analysis run computes gets no members from that run', async () => {
    const g = (await createAssetGroup(admin, { name: 'Racing', tag: 'racing' })).data
    await updateAssetGroupSelectors(admin, g.id, [{ sid: ID.CAROL, action: 'add' }])
    await runAnalysisDirect(db, { beforeCommit: () => deleteAssetGroup(admin, g.id) })
    const { results } = await db.prepare('SELECT COUNT(*) AS n FROM asset_group_members WHERE asset_group_id = ?1').bind(g.id).all<{ n: number }>()
    expect(results[0].n).toBe(0)
    expect(await systemTagsOf(ID.CAROL)).not.toContain('racing')
  })

  it('system groups cannot be deleted: 409 with BloodHound\'s message, nothing removed, a failure entry', async () => {
    await updateAssetGroupSelectors(admin, 1, [{ sid: ID.FAKE_TAG, action: 'add' }])
    const before = (await getAssetGroup(admin, 1)).data
    for (const id of [1, 2]) {
      const res = await admin.raw('DELETE', `/api/v2/asset-groups/${id}`)
      await expectEnvelope(res, 409, 'Cannot delete a system defined asset group.')
      expect((await rowsOf(res)).map(([a, st]) => [a, st])).toEqual([
        ['DeleteAssetGroup', 'intent'],
        ['DeleteAssetGroup', 'failure'],
      ])
    }
    expect((await getAssetGroup(admin, 1)).data).toEqual(before)
    expect(before.selectors.map((s) => s.selector)).toEqual([ID.FAKE_TAG])
    await updateAssetGroupSelectors(admin, 1, [{ sid: ID.FAKE_TAG, action: 'remove' }])
    const reader = (await userWithRole('Read-Only')).client
    const g = (await createAssetGroup(admin, { name: 'Kept', tag: 'kept' })).data
    await expectEnvelope(await reader.raw('DELETE', `/api/v2/asset-groups/${g.id}`), 403)
    expect((await getAssetGroup(admin, g.id)).data.name).toBe('Kept')
    await expectEnvelope(await admin.raw('DELETE', '/api/v2/asset-groups/abc'), 400)
  })
})

describe('permissions and environment access', () => {
  it('readers read, only administrators change; no credentials is 401', async () => {
    const reader = (await userWithRole('Read-Only')).client
    expect((await listAssetGroups(reader)).data.asset_groups.length).toBeGreaterThanOrEqual(2)
    await expectEnvelope(await reader.raw('PUT', '/api/v2/asset-groups/1/selectors', [{ sid: ID.ALICE, action: 'add' }]), 403)
    await expectEnvelope(await reader.raw('POST', '/api/v2/asset-groups', { name: 'x', tag: 'x' }), 403)
    await expectEnvelope(await client().raw('GET', '/api/v2/asset-groups'), 401)
    expect((await getAssetGroup(admin, 1)).data.selectors).toEqual([])
  })

  it('a caller restricted to the tenant sees only the tenant\'s members and no selectors, and may not select', async () => {
    const tenantOnly = (await userWithRole('Read-Only', { all_environments: false, environment_access: [T] })).client
    const members = await allMembers(tenantOnly, 1)
    expect(members.length).toBeGreaterThan(0)
    expect(members.every((m) => m.environment_id === T)).toBe(true)
    const expected = (await allMembers(admin, 1)).filter((m) => m.environment_id === T)
    expect(members).toEqual(expected)
    expect((await getAssetGroup(tenantOnly, 1)).data.member_count).toBe(expected.length)
    expect((await listAssetGroupMembers(tenantOnly, 1, { object_id: ID.DA })).count).toBe(0)
    // naming a hidden environment is the same 404 as naming one that does not exist
    const hidden = await tenantOnly.raw('GET', `/api/v2/asset-groups/1/members?environment_id=eq:${D}`)
    const absent = await tenantOnly.raw('GET', '/api/v2/asset-groups/1/members?environment_id=eq:S-1-5-21-404')
    await expectEnvelope(hidden, 404, 'environment not found')
    await expectEnvelope(absent, 404, 'environment not found')
    expect((await listAssetGroupMembers(tenantOnly, 1, { environment_id: `eq:${T}` })).count).toBe(expected.length)

    const tenantAdmin = (await userWithRole('Administrator', { all_environments: false, environment_access: [T] })).client
    // selectors need access to every environment, in this API as in asset-group-tags (src/assetgroups/access.ts)
    await expectEnvelope(await tenantAdmin.raw('PUT', '/api/v2/asset-groups/1/selectors', [{ sid: ID.ALICE, action: 'add' }]), 403, 'user does not have access to this resource')
    await expectEnvelope(await tenantAdmin.raw('PUT', '/api/v2/asset-groups/1/selectors', [{ sid: ID.AZ_U4, action: 'add' }]), 403, 'user does not have access to this resource')
  })
})

describe('errors are envelopes', () => {
  it('unknown group, malformed id, bad bodies and parameters', async () => {
    await expectEnvelope(await admin.raw('GET', '/api/v2/asset-groups/999'), 404, 'asset group not found')
    await expectEnvelope(await admin.raw('GET', '/api/v2/asset-groups/999/members'), 404)
    await expectEnvelope(await admin.raw('PUT', '/api/v2/asset-groups/999/selectors', [{ sid: ID.ALICE, action: 'add' }]), 404)
    await expectEnvelope(await admin.raw('GET', '/api/v2/asset-groups/abc'), 400)
    await expectEnvelope(await admin.raw('PUT', '/api/v2/asset-groups/1/selectors', [{ sid: ID.ALICE, action: 'bogus' }]), 400)
    await expectEnvelope(await admin.raw('PUT', '/api/v2/asset-groups/1/selectors', []), 400)
    await expectEnvelope(await admin.raw('PUT', '/api/v2/asset-groups/1/selectors', { sid: ID.ALICE }), 400)
    await expectEnvelope(await admin.raw('POST', '/api/v2/asset-groups', { name: 'x', tag: 'Not A Tag' }), 400)
    await expectEnvelope(await admin.raw('GET', '/api/v2/asset-groups/1/members?limit=0'), 400)
    await expectEnvelope(await admin.raw('GET', '/api/v2/asset-groups/1/members?sort_by=kinds'), 400)
    await expectEnvelope(await admin.raw('GET', '/api/v2/asset-groups/1/members?custom_member=maybe'), 400)
    await expectEnvelope(await admin.raw('GET', '/api/v2/asset-groups/1/members?name=gt:a'), 400)
  })

  it('every asset group operation is in the OpenAPI document with its permission', async () => {
    const doc = (await (await admin.raw('GET', '/api/v2/spec')).json()) as { paths: Record<string, Record<string, { operationId: string; 'x-permission'?: string | null }>> }
    expect(doc.paths['/api/v2/asset-groups'].get.operationId).toBe('ListAssetGroups')
    expect(doc.paths['/api/v2/asset-groups'].post).toMatchObject({ operationId: 'CreateAssetGroup', 'x-permission': 'graph/ManageAssetGroups' })
    expect(doc.paths['/api/v2/asset-groups/{asset_group_id}'].get.operationId).toBe('GetAssetGroup')
    expect(doc.paths['/api/v2/asset-groups/{asset_group_id}'].put).toMatchObject({ operationId: 'UpdateAssetGroup', 'x-permission': 'graph/ManageAssetGroups' })
    expect(doc.paths['/api/v2/asset-groups/{asset_group_id}'].delete).toMatchObject({ operationId: 'DeleteAssetGroup', 'x-permission': 'graph/ManageAssetGroups' })
    expect(doc.paths['/api/v2/asset-groups/{asset_group_id}/members'].get.operationId).toBe('ListAssetGroupMembers')
    expect(doc.paths['/api/v2/asset-groups/{asset_group_id}/selectors'].put).toMatchObject({
      operationId: 'UpdateAssetGroupSelectors',
      'x-permission': 'graph/ManageAssetGroups',
    })
  })
})
