/**
 * The remaining asset-group routes of BloodHound CE (issue 27): the older API's custom-selector count, selector delete,
 * deprecated POST selectors, collections and member counts; the newer API's member counts, member info, search,
 * preview and history. Shapes, refusals (envelopes), environment access and audit.
 */
import { env } from 'cloudflare:workers'
import { beforeAll, describe, expect, it } from 'vitest'
import { adminToken, expectEnvelope, userWithRole } from '../helpers'
import type { EdgeHoundClient } from '../../src/client'
import { getAssetGroup, updateAssetGroupSelectors } from '../../src/client/assetgroups'
import { insertGraph, runAnalysisDirect } from '../fixtures/findings/helpers'
import { D, ID, T } from '../fixtures/findings/known-graph'

const db = env.DB
const DENIED = 'user does not have access to this resource'
let admin: EdgeHoundClient
let tenantReader: EdgeHoundClient
let reader: EdgeHoundClient

type Json = Record<string, unknown>
async function ok(res: Response, status = 200): Promise<Json> {
  const text = await res.text()
  expect(res.status, text).toBe(status)
  return JSON.parse(text) as Json
}
const nodeId = async (objectid: string) => (await db.prepare('SELECT id FROM nodes WHERE objectid = ?1').bind(objectid).first<{ id: number }>())!.id

beforeAll(async () => {
  admin = await adminToken({ paced: true })
  tenantReader = (await userWithRole('Read-Only', { all_environments: false, environment_access: [T] })).client
  reader = (await userWithRole('Read-Only')).client
  await insertGraph(db)
  await updateAssetGroupSelectors(admin, 1, [
    { sid: ID.ALICE, action: 'add', selector_name: 'alice' },
    { sid: ID.AZ_U4, action: 'add', selector_name: 'u4' },
  ])
  await runAnalysisDirect(db)
})

describe('older API: custom selectors, selector delete, deprecated POST, collections, member counts', () => {
  it('custom-selectors counts the object-id selectors; restricted callers 403; unknown group 404; bad id 400', async () => {
    const body = await ok(await reader.raw('GET', '/api/v2/asset-groups/1/custom-selectors'))
    const selectors = (await getAssetGroup(admin, 1)).data.selectors
    expect(body).toEqual({ data: { custom_member_count: selectors.length } })
    expect(selectors.length).toBeGreaterThanOrEqual(2)
    await expectEnvelope(await tenantReader.raw('GET', '/api/v2/asset-groups/1/custom-selectors'), 403, DENIED)
    await expectEnvelope(await reader.raw('GET', '/api/v2/asset-groups/999/custom-selectors'), 404, 'asset group not found')
    await expectEnvelope(await reader.raw('GET', '/api/v2/asset-groups/x/custom-selectors'), 400)
  })

  it('member counts per primary kind equal the member list, filtered alike, and only the caller\u2019s environments', async () => {
    const all = (await ok(await reader.raw('GET', '/api/v2/asset-groups/1/members?limit=1000'))) as { data: { members: { primary_kind: string; environment_id: string }[] } }
    const expected: Record<string, number> = {}
    for (const m of all.data.members) expected[m.primary_kind] = (expected[m.primary_kind] ?? 0) + 1
    expect(await ok(await reader.raw('GET', '/api/v2/asset-groups/1/members/counts'))).toEqual({ data: { total_count: all.data.members.length, counts: expected } })
    // a filter narrows as the list's does
    const users = (await ok(await reader.raw('GET', '/api/v2/asset-groups/1/members/counts?primary_kind=eq:User'))) as { data: { total_count: number; counts: Json } }
    expect(users.data).toEqual({ total_count: expected.User ?? 0, counts: expected.User ? { User: expected.User } : {} })
    // the tenant reader counts the tenant's members only
    const mine = all.data.members.filter((m) => m.environment_id === T).length
    expect(mine).toBeGreaterThan(0)
    expect(((await ok(await tenantReader.raw('GET', '/api/v2/asset-groups/1/members/counts'))) as { data: { total_count: number } }).data.total_count).toBe(mine)
    // naming the hidden domain is the 404 an absent environment gets
    await expectEnvelope(await tenantReader.raw('GET', `/api/v2/asset-groups/1/members/counts?environment_id=eq:${D}`), 404, 'environment not found')
    await expectEnvelope(await tenantReader.raw('GET', '/api/v2/asset-groups/1/members/counts?environment_id=eq:NOPE'), 404, 'environment not found')
    await expectEnvelope(await reader.raw('GET', '/api/v2/asset-groups/1/members/counts?custom_member=maybe'), 400, 'custom_member must be true or false')
    await expectEnvelope(await reader.raw('GET', '/api/v2/asset-groups/999/members/counts'), 404, 'asset group not found')
  })

  it('collections: the last complete run\u2019s membership as one collection; filters, sort and refusals', async () => {
    const run = (await db.prepare(`SELECT id, completed_at FROM analysis_runs WHERE status = 'complete' ORDER BY completed_at DESC, id DESC LIMIT 1`).first<{ id: number; completed_at: string }>())!
    const body = (await ok(await reader.raw('GET', '/api/v2/asset-groups/1/collections'))) as {
      data: { id: number; created_at: string; entries: { object_id: string; node_label: string; properties: Json }[] }[]
    }
    expect(body.data).toHaveLength(1)
    expect(body.data[0]).toMatchObject({ id: run.id, created_at: run.completed_at, deleted_at: { valid: false } })
    const alice = body.data[0].entries.find((e) => e.object_id === ID.ALICE)!
    expect(alice).toMatchObject({ node_label: 'User', properties: expect.objectContaining({ name: 'ALICE@CORP.LOCAL' }) })
    const members = (await ok(await reader.raw('GET', '/api/v2/asset-groups/1/members?limit=1000'))) as { count: number }
    expect(body.data[0].entries).toHaveLength(members.count)
    expect(((await ok(await reader.raw('GET', `/api/v2/asset-groups/1/collections?id=gt:${run.id}`))) as { data: unknown[] }).data).toEqual([])
    expect(((await ok(await reader.raw('GET', `/api/v2/asset-groups/1/collections?id=eq:${run.id}&sort_by=-created_at`))) as { data: unknown[] }).data).toHaveLength(1)
    await expectEnvelope(await reader.raw('GET', '/api/v2/asset-groups/1/collections?sort_by=name'), 400, 'column format does not support sorting')
    await expectEnvelope(await reader.raw('GET', '/api/v2/asset-groups/1/collections?created_at=gt:yesterday'), 400)
    await expectEnvelope(await reader.raw('GET', '/api/v2/asset-groups/1/collections?id=gt:abc'), 400)
    await expectEnvelope(await tenantReader.raw('GET', '/api/v2/asset-groups/1/collections'), 403, DENIED)
    await expectEnvelope(await reader.raw('GET', '/api/v2/asset-groups/999/collections'), 404, 'asset group not found')
  })

  it('POST selectors is the deprecated twin of PUT: same answer, a Deprecation header, the same audit', async () => {
    const g = (await ok(await admin.raw('POST', '/api/v2/asset-groups', { name: 'Extra', tag: 'extra_grp' }))) as { data: { id: number } }
    const res = await admin.raw('POST', `/api/v2/asset-groups/${g.data.id}/selectors`, [{ sid: ID.AZ_U4, action: 'add', selector_name: 'via post' }])
    expect(res.headers.get('deprecation')).toMatch(/^@\d+$/)
    const body = (await ok(res, 201)) as { data: { added_selectors: { id: number; selector: string; name: string }[]; removed_selectors: unknown[] } }
    expect(body.data.added_selectors).toEqual([expect.objectContaining({ selector: ID.AZ_U4, name: 'via post', asset_group_id: g.data.id })])
    await expectEnvelope(await admin.raw('POST', `/api/v2/asset-groups/${g.data.id}/selectors`, []), 400)
    await expectEnvelope(await admin.raw('POST', `/api/v2/asset-groups/${g.data.id}/selectors`, [{ sid: 'x', action: 'nope' }]), 400)
    const tenantAdmin = (await userWithRole('Administrator', { all_environments: false, environment_access: [T] })).client
    await expectEnvelope(await tenantAdmin.raw('POST', `/api/v2/asset-groups/${g.data.id}/selectors`, [{ sid: ID.AZ_U4, action: 'remove' }]), 403, DENIED)
  })

  it('DELETE one selector: 200 empty, gone from the group, audited in its batch; 404s; 403 for restricted and non-admins', async () => {
    const g = (await ok(await admin.raw('POST', '/api/v2/asset-groups', { name: 'Deletable', tag: 'deletable_grp' }))) as { data: { id: number } }
    const other = (await ok(await admin.raw('POST', '/api/v2/asset-groups', { name: 'Other', tag: 'other_grp' }))) as { data: { id: number } }
    const added = await updateAssetGroupSelectors(admin, g.data.id, [{ sid: ID.ALICE, action: 'add', selector_name: 'to delete' }])
    const sid = added.data.added_selectors[0].id
    const tenantAdmin = (await userWithRole('Administrator', { all_environments: false, environment_access: [T] })).client
    await expectEnvelope(await tenantAdmin.raw('DELETE', `/api/v2/asset-groups/${g.data.id}/selectors/${sid}`), 403, DENIED)
    await expectEnvelope(await reader.raw('DELETE', `/api/v2/asset-groups/${g.data.id}/selectors/${sid}`), 403)
    await expectEnvelope(await admin.raw('DELETE', `/api/v2/asset-groups/${other.data.id}/selectors/${sid}`), 404, 'asset group selector not found')
    await expectEnvelope(await admin.raw('DELETE', `/api/v2/asset-groups/999/selectors/${sid}`), 404, 'asset group not found')
    await expectEnvelope(await admin.raw('DELETE', `/api/v2/asset-groups/${g.data.id}/selectors/0`), 400)
    const res = await admin.raw('DELETE', `/api/v2/asset-groups/${g.data.id}/selectors/${sid}`)
    expect(res.status).toBe(200)
    expect(await res.text()).toBe('')
    expect((await getAssetGroup(admin, g.data.id)).data.selectors).toEqual([])
    const rows = await db
      .prepare(`SELECT action, status, fields FROM audit_logs WHERE request_id = ?1 ORDER BY id`)
      .bind(res.headers.get('requestid') ?? '')
      .all<{ action: string; status: string; fields: string }>()
    expect(rows.results.map((r) => [r.action, r.status])).toEqual([
      ['DeleteAssetGroupSelector', 'intent'],
      ['DeleteAssetGroupSelector', 'success'],
    ])
    expect(JSON.parse(rows.results[1].fields)).toMatchObject({ asset_group_id: g.data.id, asset_group_selector_id: sid, remove: [ID.ALICE] })
    await expectEnvelope(await admin.raw('DELETE', `/api/v2/asset-groups/${g.data.id}/selectors/${sid}`), 404, 'asset group selector not found')
  })
})

describe('newer API: counts, member info, search, preview, history', () => {
  it('tag member counts equal the tag member list per kind, filtered by the caller\u2019s environments and `environments`', async () => {
    const list = (await ok(await reader.raw('GET', '/api/v2/asset-group-tags/1/members?limit=1000'))) as { data: { members: { primary_kind: string }[] } }
    const expected: Record<string, number> = {}
    for (const m of list.data.members) expected[m.primary_kind] = (expected[m.primary_kind] ?? 0) + 1
    expect(await ok(await reader.raw('GET', '/api/v2/asset-group-tags/1/members/counts'))).toEqual({ data: { total_count: list.data.members.length, counts: expected } })
    const tenantList = (await ok(await tenantReader.raw('GET', '/api/v2/asset-group-tags/1/members?limit=1000'))) as { count: number }
    const tenantCounts = (await ok(await tenantReader.raw('GET', '/api/v2/asset-group-tags/1/members/counts'))) as { data: { total_count: number; counts: Json } }
    expect(tenantCounts.data.total_count).toBe(tenantList.count)
    expect(tenantCounts.data.counts).not.toHaveProperty('User')
    // the tenant reader asking for the domain gets nothing of it
    expect(((await ok(await tenantReader.raw('GET', `/api/v2/asset-group-tags/1/members/counts?environments=${D}`))) as { data: { total_count: number } }).data.total_count).toBe(0)
    expect(((await ok(await reader.raw('GET', `/api/v2/asset-group-tags/1/members/counts?environments=${T}`))) as { data: { total_count: number } }).data.total_count).toBe(tenantList.count)
    await expectEnvelope(await reader.raw('GET', '/api/v2/asset-group-tags/999/members/counts'), 404, 'asset group tag not found')
    await expectEnvelope(await reader.raw('GET', '/api/v2/asset-group-tags/abc/members/counts'), 400, 'id is malformed')
  })

  it('member info: the node with its properties and the selectors that picked it; 404 for a non-member; 403 restricted', async () => {
    const alice = await nodeId(ID.ALICE)
    const body = (await ok(await reader.raw('GET', `/api/v2/asset-group-tags/1/members/${alice}`))) as {
      data: { member: { id: number; object_id: string; environment_id: string; primary_kind: string; name: string; properties: Json; asset_group_tag_id: number; selectors: { name: string; seeds: { value: string }[] }[] } }
    }
    expect(body.data.member).toMatchObject({ id: alice, object_id: ID.ALICE, environment_id: D, primary_kind: 'User', name: 'ALICE@CORP.LOCAL', asset_group_tag_id: 1 })
    expect(body.data.member.properties).toMatchObject({ name: 'ALICE@CORP.LOCAL' })
    expect(body.data.member.selectors.map((s) => s.name)).toEqual(['alice'])
    // a node that is not a member of Owned (tag 2)
    await expectEnvelope(await reader.raw('GET', `/api/v2/asset-group-tags/2/members/${alice}`), 404, 'resource not found')
    await expectEnvelope(await reader.raw('GET', '/api/v2/asset-group-tags/1/members/12'), 404, 'resource not found')
    await expectEnvelope(await reader.raw('GET', '/api/v2/asset-group-tags/1/members/x1'), 400, 'id is malformed')
    await expectEnvelope(await reader.raw('GET', '/api/v2/asset-group-tags/1/members/99999999999999999999'), 400, 'id is malformed')
    await expectEnvelope(await tenantReader.raw('GET', `/api/v2/asset-group-tags/1/members/${await nodeId(ID.AZ_U4)}`), 403, DENIED)
  })

  it('selector member counts: per kind of the selector\u2019s members; 409 disabled; 404 wrong tag; 403 restricted', async () => {
    const sel = (await ok(await admin.raw('POST', '/api/v2/asset-group-tags/1/selectors', { name: 'users rule', seeds: [{ type: 2, value: 'MATCH (n:User) WHERE n.name STARTS WITH "ALICE" RETURN n' }] }), 201)) as {
      data: { id: number }
    }
    await runAnalysisDirect(db)
    const counts = (await ok(await reader.raw('GET', `/api/v2/asset-group-tags/1/selectors/${sel.data.id}/members/counts`))) as { data: { total_count: number; counts: Json } }
    expect(counts.data).toEqual({ total_count: 1, counts: { User: 1 } })
    const members = (await ok(await reader.raw('GET', `/api/v2/asset-group-tags/1/selectors/${sel.data.id}/members`))) as { count: number }
    expect(members.count).toBe(1)
    expect(((await ok(await reader.raw('GET', `/api/v2/asset-group-tags/1/selectors/${sel.data.id}/members/counts?environments=${T}`))) as { data: { total_count: number } }).data.total_count).toBe(0)
    await expectEnvelope(await reader.raw('GET', `/api/v2/asset-group-tags/2/selectors/${sel.data.id}/members/counts`), 404, 'selector is not part of asset group tag')
    await expectEnvelope(await tenantReader.raw('GET', `/api/v2/asset-group-tags/1/selectors/${sel.data.id}/members/counts`), 403, DENIED)
    await ok(await admin.raw('PATCH', `/api/v2/asset-group-tags/1/selectors/${sel.data.id}`, { disabled: true }))
    await expectEnvelope(await reader.raw('GET', `/api/v2/asset-group-tags/1/selectors/${sel.data.id}/members/counts`), 409, 'selector is disabled')
  })

  it('search: tags, selectors and members matching the text for a tag type; BloodHound\u2019s refusals', async () => {
    const body = (await ok(await reader.raw('POST', '/api/v2/asset-group-tags/search', { query: 'alic', tag_type: 1 }))) as {
      data: { tags: { name: string }[]; selectors: { name: string; asset_group_tag_id: number }[]; members: { object_id: string; asset_group_tag_id: number; name: string }[] }
    }
    expect(body.data.tags).toEqual([])
    expect(body.data.selectors.map((s) => s.name)).toContain('alice')
    expect(body.data.members).toContainEqual(expect.objectContaining({ object_id: ID.ALICE, asset_group_tag_id: 1, name: 'ALICE@CORP.LOCAL' }))
    const tier = (await ok(await reader.raw('POST', '/api/v2/asset-group-tags/search', { query: 'zero', tag_type: 1 }))) as { data: { tags: { name: string }[] } }
    expect(tier.data.tags.map((t) => t.name)).toEqual(['Tier Zero'])
    // labels include Owned; narrowing to one tag id
    const owned = (await ok(await reader.raw('POST', '/api/v2/asset-group-tags/search', { query: 'own', tag_type: 2 }))) as { data: { tags: { name: string }[] } }
    expect(owned.data.tags.map((t) => t.name)).toContain('Owned')
    const none = (await ok(await reader.raw('POST', '/api/v2/asset-group-tags/search', { query: 'alic', tag_type: 1, asset_group_tag_id: 2 }))) as { data: Json }
    expect(none.data).toEqual({ tags: [], selectors: [], members: [] })
    await expectEnvelope(await reader.raw('POST', '/api/v2/asset-group-tags/search', { query: 'al', tag_type: 1 }), 400, 'search query must be at least 3 characters long')
    await expectEnvelope(await reader.raw('POST', '/api/v2/asset-group-tags/search', { query: 'alice', tag_type: 7 }), 400, 'valid tag_type is required')
    await expectEnvelope(await reader.raw('POST', '/api/v2/asset-group-tags/search', { query: 'alice' }), 400, 'valid tag_type is required')
    await expectEnvelope(await reader.raw('POST', '/api/v2/asset-group-tags/search', { query: 5, tag_type: 1 }), 400)
    await expectEnvelope(await tenantReader.raw('POST', '/api/v2/asset-group-tags/search', { query: 'alice', tag_type: 1 }), 403, DENIED)
  })

  it('preview: object-id and Cypher seeds select nodes now, capped by limit; seed refusals as for selectors; 403 restricted', async () => {
    const byId = (await ok(await reader.raw('POST', '/api/v2/asset-group-tags/preview-selectors', { seeds: [{ type: 1, value: ID.ALICE }, { type: 1, value: 'NOT-A-NODE' }] }))) as {
      data: { members: Json[] }
    }
    expect(byId.data.members).toEqual([{ id: await nodeId(ID.ALICE), object_id: ID.ALICE, environment_id: D, primary_kind: 'User', name: 'ALICE@CORP.LOCAL', source: 1 }])
    const rule = (await ok(await reader.raw('POST', '/api/v2/asset-group-tags/preview-selectors?limit=1', { seeds: [{ type: 2, value: 'MATCH (n:User) RETURN n' }] }))) as {
      data: { members: { primary_kind: string }[] }
    }
    expect(rule.data.members).toHaveLength(1)
    expect(rule.data.members[0].primary_kind).toBe('User')
    await expectEnvelope(await reader.raw('POST', '/api/v2/asset-group-tags/preview-selectors', { seeds: [] }), 400, 'seeds are required')
    await expectEnvelope(await reader.raw('POST', '/api/v2/asset-group-tags/preview-selectors', { seeds: [{ type: 3, value: 'x' }] }), 400, 'invalid seed type 3')
    await expectEnvelope(await reader.raw('POST', '/api/v2/asset-group-tags/preview-selectors', { seeds: [{ type: 2, value: 'MATCH (n' }] }), 400, /^cypher is invalid/)
    await expectEnvelope(await reader.raw('POST', '/api/v2/asset-group-tags/preview-selectors', { seeds: [{ type: 1, value: ID.ALICE }], expansion: 9 }), 400, 'invalid expansion method')
    await expectEnvelope(await reader.raw('POST', '/api/v2/asset-group-tags/preview-selectors?limit=0', { seeds: [{ type: 1, value: ID.ALICE }] }), 400)
    await expectEnvelope(await tenantReader.raw('POST', '/api/v2/asset-group-tags/preview-selectors', { seeds: [{ type: 1, value: ID.AZ_U4 }] }), 403, DENIED)
  })

  it('history: changes of both APIs as BloodHound\u2019s records, newest first; filters, search, paging and refusals', async () => {
    const created = (await ok(await admin.raw('POST', '/api/v2/asset-group-tags', { name: 'History Tag', type: 2 }), 201)) as { data: { id: number } }
    const tagId = created.data.id
    const sel = (await ok(await admin.raw('POST', `/api/v2/asset-group-tags/${tagId}/selectors`, { name: 'history sel', seeds: [{ type: 1, value: ID.ALICE }] }), 201)) as { data: { id: number } }
    expect((await admin.raw('DELETE', `/api/v2/asset-group-tags/${tagId}/selectors/${sel.data.id}`)).status).toBe(204)
    // a PATCH that changes nothing is not a record
    await ok(await admin.raw('PATCH', `/api/v2/asset-group-tags/${tagId}`, { name: 'History Tag' }))
    const page = (await ok(await reader.raw('GET', `/api/v2/asset-group-tags-history?asset_group_tag_id=eq:${tagId}`))) as {
      count: number
      skip: number
      limit: number
      data: { records: { action: string; target: string; asset_group_tag_id: number; actor: string; email: Json; environment_id: Json; note: Json }[] }
    }
    expect(page).toMatchObject({ count: 3, skip: 0, limit: 50 })
    expect(page.data.records.map((r) => [r.action, r.target, r.asset_group_tag_id])).toEqual([
      ['DeleteSelector', 'history sel', tagId],
      ['CreateSelector', 'history sel', tagId],
      ['CreateTag', 'History Tag', tagId],
    ])
    expect(page.data.records[0]).toMatchObject({ environment_id: { valid: false }, note: { valid: false } })
    expect(page.data.records[0].actor).toMatch(/^[0-9a-f-]{36}$/)
    const asc = (await ok(await reader.raw('GET', `/api/v2/asset-group-tags-history?asset_group_tag_id=eq:${tagId}&sort_by=created_at&limit=1&skip=1`))) as {
      count: number
      data: { records: { action: string }[] }
    }
    expect(asc.data.records.map((r) => r.action)).toEqual(['CreateSelector'])
    const filtered = (await ok(await reader.raw('GET', `/api/v2/asset-group-tags-history?asset_group_tag_id=eq:${tagId}&action=eq:CreateTag`))) as { count: number }
    expect(filtered.count).toBe(1)
    const searched = (await ok(await reader.raw('POST', `/api/v2/asset-group-tags-history?asset_group_tag_id=eq:${tagId}`, { query: 'HISTORY SEL' }))) as { count: number }
    expect(searched.count).toBe(2)
    await expectEnvelope(await reader.raw('POST', '/api/v2/asset-group-tags-history', { query: 'hi' }), 400, 'search query must be at least 3 characters long')
    await expectEnvelope(await reader.raw('GET', '/api/v2/asset-group-tags-history?sort_by=actor'), 400, 'column format does not support sorting')
    await expectEnvelope(await reader.raw('GET', '/api/v2/asset-group-tags-history?created_at=gt:soon'), 400)
    await expectEnvelope(await reader.raw('GET', '/api/v2/asset-group-tags-history?asset_group_tag_id=gt:x'), 400)
    await expectEnvelope(await reader.raw('GET', '/api/v2/asset-group-tags-history?action=gt:x'), 400)
    await expectEnvelope(await reader.raw('GET', '/api/v2/asset-group-tags-history?limit=0'), 400)
    await expectEnvelope(await tenantReader.raw('GET', '/api/v2/asset-group-tags-history'), 403, DENIED)
    await expectEnvelope(await tenantReader.raw('POST', '/api/v2/asset-group-tags-history', { query: 'history' }), 403, DENIED)
  })
})
