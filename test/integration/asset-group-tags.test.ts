/**
 * Cypher-defined Tier Zero (issue 14): BloodHound's asset group tag selectors (`/api/v2/asset-group-tags/{id}/selectors`),
 * object-id and Cypher seeds in one store with the older asset-groups API; each analysis run evaluates the enabled
 * Cypher rules and their nodes become Tier Zero for that run (findings, members, Cypher's Tag_Tier_Zero); a rule
 * that fails or crosses a budget is recorded and the run goes on; only callers with every environment read or
 * write rules; every change is audited.
 */
import { env } from 'cloudflare:workers'
import { beforeAll, describe, expect, it } from 'vitest'
import { adminToken, client, expectEnvelope, userWithRole } from '../helpers'
import type { EdgeHoundClient } from '../../src/client'
import {
  createAssetGroupTag,
  createTagSelector,
  deleteAssetGroupTag,
  updateAssetGroupTag,
  deleteTagSelector,
  getAssetGroup,
  getTagSelector,
  listAssetGroupMembers,
  listAssetGroupTags,
  listTagMembers,
  listTagSelectorMembers,
  listTagSelectors,
  updateAssetGroupSelectors,
  updateTagSelector,
} from '../../src/client/assetgroups'
import { listAuditLogs } from '../../src/client/audit'
import { insertGraph, openFindingRows, runAnalysisDirect } from '../fixtures/findings/helpers'
import { D, ID, NODES, T, TIER_ZERO } from '../fixtures/findings/known-graph'
import { DEFAULT_LIMITS } from '../../src/cypher/budget'

const db = env.DB
let admin: EdgeHoundClient & { tokenId: string; tokenKey: string }

const SEL = '/api/v2/asset-group-tags/1/selectors'

async function openFinding(finding: string, from: string, to: string) {
  return (await openFindingRows(db)).find((r) => r.finding === finding && r.from_objectid === from && r.to_objectid === to && r.deleted_at === null)
}

async function isTierZeroByCypher(objectid: string): Promise<boolean> {
  const r = await admin.raw('POST', '/api/v2/graphs/cypher', { query: `MATCH (n:Tag_Tier_Zero) WHERE n.objectid = '${objectid}' RETURN n`, include_properties: true })
  if (r.status === 404) return false
  const body = (await r.json()) as { data: { nodes: Record<string, { isTierZero: boolean; properties: Record<string, unknown> }> } }
  const n = Object.values(body.data.nodes)[0]
  expect(n.isTierZero).toBe(true)
  expect(String(n.properties.system_tags).split(' ')).toContain('admin_tier_0')
  return true
}

async function auditRows(res: Response) {
  const id = res.headers.get('requestid')!
  return (await listAuditLogs(admin, { filters: { request_id: `eq:${id}` }, sort_by: 'id' })).data.logs.map((l) => [l.action, l.status, l.fields])
}

beforeAll(async () => {
  admin = await adminToken({ paced: true })
  await insertGraph(db)
  await runAnalysisDirect(db)
})

describe('asset group tags', () => {
  it('Tier Zero is tag 1 (type 1, position 1), Owned tag 2 (type 3), with BloodHound\'s fields', async () => {
    const tags = (await listAssetGroupTags(admin)).data.tags
    expect(tags.slice(0, 2).map((t) => [t.id, t.name, t.type, t.position])).toEqual([
      [1, 'Tier Zero', 1, { int32: 1, valid: true }],
      [2, 'Owned', 3, { int32: 0, valid: false }],
    ])
    expect(Object.keys(tags[0]).sort()).toEqual(
      ['analysis_enabled', 'created_at', 'created_by', 'deleted_at', 'deleted_by', 'description', 'id', 'kind_id', 'name', 'position', 'require_certify', 'type', 'updated_at', 'updated_by', 'rule_failures'].sort(),
    )
    expect((await admin.call<{ data: { tag: { name: string } } }>('GET', '/api/v2/asset-group-tags/1')).data.tag.name).toBe('Tier Zero')
    await expectEnvelope(await admin.raw('GET', '/api/v2/asset-group-tags/77'), 404, 'asset group tag not found')
  })
})

describe('selectors: create, list, read, update, delete', () => {
  it('a Cypher rule round trip with BloodHound\'s field names', async () => {
    const created = await admin.raw('POST', SEL, {
      name: 'Crown containers',
      description: 'containers named USERS',
      seeds: [{ type: 2, value: "MATCH (n:Container) WHERE n.name = 'USERS@CORP.LOCAL' RETURN n" }],
    })
    expect(created.status).toBe(201)
    const s = ((await created.json()) as { data: Record<string, unknown> & { id: number } }).data
    expect(Object.keys(s).sort()).toEqual(
      ['allow_disable', 'asset_group_tag_id', 'auto_certify', 'created_at', 'created_by', 'description', 'disabled_at', 'disabled_by', 'evaluation', 'id', 'is_default', 'name', 'seeds', 'updated_at', 'updated_by'].sort(),
    )
    expect(s).toMatchObject({
      asset_group_tag_id: 1,
      name: 'Crown containers',
      description: 'containers named USERS',
      is_default: false,
      allow_disable: true,
      auto_certify: 0,
      disabled_at: { time: '0001-01-01T00:00:00Z', valid: false },
      disabled_by: { string: '', valid: false },
      seeds: [{ type: 2, value: "MATCH (n:Container) WHERE n.name = 'USERS@CORP.LOCAL' RETURN n" }],
      evaluation: { evaluated_at: null, members: null, error: null },
    })

    const one = await getTagSelector(admin, 1, s.id)
    expect(one.data.selector).toEqual(s)
    const list = await listTagSelectors(admin, 1, { type: 'eq:2' })
    expect(list).toMatchObject({ count: 1, skip: 0, limit: 50 })
    expect(list.data.selectors.map((x) => x.id)).toEqual([s.id])
    expect((await listTagSelectors(admin, 1, { name: '~eq:crown' })).count).toBe(1)
    expect((await listTagSelectors(admin, 1, { name: 'neq:Crown containers', type: '2' })).count).toBe(0)

    const patched = await updateTagSelector(admin, 1, s.id, { description: 'changed', disabled: true })
    expect(patched.data).toMatchObject({ name: 'Crown containers', description: 'changed', disabled_at: { valid: true }, disabled_by: { valid: true } })
    expect(patched.data.seeds).toEqual(s.seeds as unknown[])
    const enabled = await updateTagSelector(admin, 1, s.id, { disabled: false, seeds: [{ type: 2, value: 'MATCH (n:Domain) RETURN n' }] })
    expect(enabled.data.disabled_at.valid).toBe(false)
    expect(enabled.data.seeds).toEqual([{ type: 2, value: 'MATCH (n:Domain) RETURN n' }])

    const del = await admin.raw('DELETE', `${SEL}/${s.id}`)
    expect(del.status).toBe(204)
    await expectEnvelope(await admin.raw('GET', `${SEL}/${s.id}`), 404, 'selector not found')
    await expectEnvelope(await admin.raw('DELETE', `${SEL}/${s.id}`), 404)
  })

  it('refusals are envelopes with BloodHound\'s messages; nothing is written', async () => {
    const before = (await listTagSelectors(admin, 1)).count
    await expectEnvelope(await admin.raw('POST', SEL, { name: 'no seeds' }), 400, 'seeds are required')
    await expectEnvelope(await admin.raw('POST', SEL, { name: 'empty', seeds: [] }), 400, 'seeds are required')
    await expectEnvelope(await admin.raw('POST', SEL, { name: 'bad type', seeds: [{ type: 3, value: 'x' }] }), 400, 'invalid seed type 3')
    await expectEnvelope(
      await admin.raw('POST', SEL, { name: 'mixed', seeds: [{ type: 1, value: ID.ALICE }, { type: 2, value: 'MATCH (n) RETURN n' }] }),
      400,
      'all seeds must be of the same type',
    )
    await expectEnvelope(
      await admin.raw('POST', SEL, { name: 'mutating', seeds: [{ type: 2, value: "MATCH (n) SET n.x = 1 RETURN n" }] }),
      400,
      'cypher is invalid: updating clauses are not supported',
    )
    await expectEnvelope(await admin.raw('POST', SEL, { name: 'syntax', seeds: [{ type: 2, value: 'MATCH (n RETURN n' }] }), 400, /cypher is invalid: line 1:/)
    await expectEnvelope(await admin.raw('POST', SEL, { name: '  ', seeds: [{ type: 1, value: ID.ALICE }] }), 400, 'name is required')
    await expectEnvelope(await admin.raw('POST', SEL, { seeds: [{ type: 1, value: ID.ALICE }] }), 400)
    await expectEnvelope(await admin.raw('POST', SEL, { name: 'x', seeds: [{ type: 1, value: ID.ALICE }], auto_certify: 'yes' }), 400)
    await expectEnvelope(await admin.raw('POST', '/api/v2/asset-group-tags/99/selectors', { name: 'x', seeds: [{ type: 1, value: ID.ALICE }] }), 404)
    await expectEnvelope(await admin.raw('GET', `${SEL}/abc`), 400, 'id is malformed')
    await expectEnvelope(await admin.raw('GET', `${SEL}?type=3`), 400)
    await expectEnvelope(await admin.raw('GET', `${SEL}?limit=0`), 400)
    expect((await listTagSelectors(admin, 1)).count).toBe(before)

    // a name the tag already has: 409; the same name on another tag is fine; a selector of another tag: 404
    const a = await createTagSelector(admin, 1, { name: 'dup', seeds: [{ type: 1, value: ID.BOB }] })
    await expectEnvelope(await admin.raw('POST', SEL, { name: 'dup', seeds: [{ type: 1, value: ID.CAROL }] }), 409, 'asset group tag selector name must be unique')
    const other = await createTagSelector(admin, 2, { name: 'dup', seeds: [{ type: 1, value: ID.CAROL }] })
    await expectEnvelope(await admin.raw('GET', `${SEL}/${other.data.id}`), 404, 'selector is not part of asset group tag')
    const b = await createTagSelector(admin, 1, { name: 'dup 2', seeds: [{ type: 1, value: ID.CAROL }] })
    await expectEnvelope(await admin.raw('PATCH', `${SEL}/${b.data.id}`, { name: 'dup' }), 409, 'must be unique')
    expect((await getTagSelector(admin, 1, b.data.id)).data.selector.name).toBe('dup 2')
    for (const [tag, id] of [
      [1, a.data.id],
      [2, other.data.id],
      [1, b.data.id],
    ])
      await deleteTagSelector(admin, tag, id)
  })

  it('one store: object-id selectors are the older API\'s selectors and the other way round', async () => {
    const s = await createTagSelector(admin, 1, { name: 'bob by id', seeds: [{ type: 1, value: ID.BOB }] })
    const legacy = (await getAssetGroup(admin, 1)).data.selectors
    expect(legacy).toEqual([expect.objectContaining({ asset_group_id: 1, name: 'bob by id', selector: ID.BOB })])
    // the older API's addition is a selector with one object-id seed; its removal deletes it
    const added = await updateAssetGroupSelectors(admin, 1, [{ selector_name: 'carol', sid: ID.CAROL, action: 'add' }])
    expect(added.data.added_selectors).toEqual([expect.objectContaining({ name: 'carol', selector: ID.CAROL })])
    const ids = await listTagSelectors(admin, 1, { type: 'eq:1' })
    expect(ids.data.selectors.map((x) => [x.name, x.seeds])).toEqual([
      ['bob by id', [{ type: 1, value: ID.BOB }]],
      ['carol', [{ type: 1, value: ID.CAROL }]],
    ])
    // a disabled selector no longer applies, so the older API does not list it
    await updateTagSelector(admin, 1, s.data.id, { disabled: true })
    expect((await getAssetGroup(admin, 1)).data.selectors.map((x) => x.selector)).toEqual([ID.CAROL])
    await updateAssetGroupSelectors(admin, 1, [
      { sid: ID.CAROL, action: 'remove' },
      { sid: ID.BOB, action: 'remove' },
    ])
    expect((await listTagSelectors(admin, 1)).count).toBe(0)
  })
})

describe('analysis evaluates the Cypher rules', () => {
  it('a rule makes its nodes Tier Zero at the next run (findings, members, Cypher); disabling it reverts', async () => {
    // ALICE -GenericAll-> FAKE_TAG is no finding while FAKE_TAG is not Tier Zero
    expect(await openFinding('T0GenericAll', ID.ALICE, ID.FAKE_TAG)).toBeUndefined()
    const rule = await createTagSelector(admin, 1, {
      name: 'users container',
      seeds: [{ type: 2, value: "MATCH (n:Container) WHERE n.name STARTS WITH 'USERS@' RETURN n" }],
    })
    // nothing before the next run
    expect(await isTierZeroByCypher(ID.FAKE_TAG)).toBe(false)

    const run = await runAnalysisDirect(db)
    expect(run.rules).toEqual([{ selectorId: rule.data.id, members: 1, error: null }])
    expect(await openFinding('T0GenericAll', ID.ALICE, ID.FAKE_TAG)).toBeDefined()
    const m = await listAssetGroupMembers(admin, 1, { object_id: ID.FAKE_TAG })
    expect(m.data.members).toEqual([expect.objectContaining({ object_id: ID.FAKE_TAG, custom_member: true })])
    expect((await getAssetGroup(admin, 1)).data.member_count).toBe(TIER_ZERO.size + 1)
    expect(await isTierZeroByCypher(ID.FAKE_TAG)).toBe(true)
    const base = await admin.call<{ data: { props: Record<string, unknown> } }>('GET', `/api/v2/base/${ID.FAKE_TAG}`)
    expect(String(base.data.props.system_tags).split(' ')).toContain('admin_tier_0')
    const read = (await listTagSelectors(admin, 1, { counts: true })).data.selectors[0]
    expect(read.counts).toEqual({ members: 1 })
    expect(read.evaluation).toMatchObject({ members: 1, error: null })
    expect(read.evaluation.evaluated_at).toBe(run.completedAt)

    await updateTagSelector(admin, 1, rule.data.id, { disabled: true })
    const after = await runAnalysisDirect(db)
    expect(after.rules).toEqual([])
    expect(await openFinding('T0GenericAll', ID.ALICE, ID.FAKE_TAG)).toBeUndefined()
    expect(await isTierZeroByCypher(ID.FAKE_TAG)).toBe(false)
    expect((await getAssetGroup(admin, 1)).data.member_count).toBe(TIER_ZERO.size)
    expect((await getTagSelector(admin, 1, rule.data.id)).data.selector.evaluation).toEqual({ evaluated_at: null, members: null, error: null, failures: [] })
    await deleteTagSelector(admin, 1, rule.data.id)
  })

  it('an object-id selector created here applies at the next run and records how many of its ids are nodes', async () => {
    const s = await createTagSelector(admin, 1, { name: 'bob and a stranger', seeds: [{ type: 1, value: ID.BOB }, { type: 1, value: 'S-1-5-21-404-9999' }] })
    const run = await runAnalysisDirect(db)
    expect(run.rules).toEqual([])
    expect((await listAssetGroupMembers(admin, 1, { custom_member: 'true' })).data.members.map((x) => x.object_id)).toEqual([ID.BOB])
    expect(await isTierZeroByCypher(ID.BOB)).toBe(true)
    expect((await getTagSelector(admin, 1, s.data.id)).data.selector.evaluation).toEqual({ evaluated_at: run.completedAt, members: 1, error: null, failures: [] })
    await deleteTagSelector(admin, 1, s.data.id)
    await runAnalysisDirect(db)
    expect(await isTierZeroByCypher(ID.BOB)).toBe(false)
  })

  it('a rule over its budget is recorded and selects nothing; the run and the other rules go on', async () => {
    const big = await createTagSelector(admin, 1, { name: 'everything', seeds: [{ type: 2, value: 'MATCH (n) RETURN n' }] })
    const small = await createTagSelector(admin, 1, { name: 'one user', seeds: [{ type: 2, value: `MATCH (n:User) WHERE n.objectid = '${ID.CAROL}' RETURN n` }] })
    const run = await runAnalysisDirect(db, { ruleLimits: { ...DEFAULT_LIMITS, maxResultRows: 5 } })
    const byId = Object.fromEntries(run.rules.map((r) => [r.selectorId, r]))
    expect(byId[big.data.id]).toMatchObject({ members: 0, error: expect.stringContaining('result row limit') })
    expect(byId[small.data.id]).toEqual({ selectorId: small.data.id, members: 1, error: null })
    expect((await listAssetGroupMembers(admin, 1, { custom_member: 'true' })).data.members.map((x) => x.object_id)).toEqual([ID.CAROL])
    expect((await getAssetGroup(admin, 1)).data.member_count).toBe(TIER_ZERO.size + 1)
    const rec = (await getTagSelector(admin, 1, big.data.id)).data.selector.evaluation
    expect(rec).toMatchObject({ members: 0, error: expect.stringContaining('the query was stopped') })
    expect(rec.evaluated_at).toBe(run.completedAt)
    await deleteTagSelector(admin, 1, big.data.id)
    await deleteTagSelector(admin, 1, small.data.id)
    await runAnalysisDirect(db)
  })

  it('rules run over the whole graph; a restricted reader sees only its members and no rules', async () => {
    const rule = await createTagSelector(admin, 1, {
      name: 'both environments',
      seeds: [{ type: 2, value: `MATCH (n) WHERE n.objectid IN ['${ID.FAKE_TAG}', '${ID.AZ_U4}'] RETURN n` }],
    })
    await runAnalysisDirect(db)
    const custom = (await listAssetGroupMembers(admin, 1, { custom_member: 'true' })).data.members
    expect(custom.map((x) => [x.object_id, x.environment_id]).sort()).toEqual(
      [
        [ID.AZ_U4, T],
        [ID.FAKE_TAG, D],
      ].sort(),
    )
    const tenantOnly = (await userWithRole('Read-Only', { all_environments: false, environment_access: [T] })).client
    expect((await listAssetGroupMembers(tenantOnly, 1, { custom_member: 'true' })).data.members.map((x) => x.object_id)).toEqual([ID.AZ_U4])
    // BloodHound's tag member list: the same members, the caller's environments only, `environments` narrows
    const all = await listTagMembers(admin, 1, { limit: 1000 })
    expect(all.count).toBe(TIER_ZERO.size + 2)
    expect(all.data.members.find((x) => x.object_id === ID.FAKE_TAG)).toEqual({
      id: expect.any(Number),
      object_id: ID.FAKE_TAG,
      primary_kind: 'Container',
      name: 'USERS@CORP.LOCAL',
      source: 1,
      custom_member: true,
    })
    const ids = all.data.members.map((x) => x.id)
    expect(ids).toEqual([...ids].sort((a, b) => a - b))
    const tenantMembers = await listTagMembers(tenantOnly, 1, { limit: 1000 })
    expect(tenantMembers.count).toBe((await listAssetGroupMembers(admin, 1, { environment_id: `eq:${T}`, limit: 1000 })).count)
    expect(tenantMembers.data.members.map((x) => x.object_id)).toContain(ID.AZ_U4)
    expect(tenantMembers.data.members.map((x) => x.object_id)).not.toContain(ID.FAKE_TAG)
    expect((await listTagMembers(tenantOnly, 1, { environments: [D] })).count).toBe(0)
    // naming an object of a hidden environment is the 404 of an absent one; its own objects filter as usual
    await expectEnvelope(await tenantOnly.raw('GET', `/api/v2/asset-group-tags/1/members?object_id=eq:${ID.FAKE_TAG}`), 404, 'object not found')
    await expectEnvelope(await tenantOnly.raw('GET', '/api/v2/asset-group-tags/1/members?object_id=eq:S-1-5-21-404-1'), 404, 'object not found')
    expect((await listTagMembers(tenantOnly, 1, { object_id: [`eq:${ID.AZ_U4}`] })).data.members.map((x) => x.object_id)).toEqual([ID.AZ_U4])
    expect((await listTagMembers(admin, 1, { object_id: ['eq:S-1-5-21-404-1'] })).count).toBe(0)
    const inD = all.data.members.filter((x) => NODES.find((n) => n.objectid === x.object_id)?.environment_id === D).length
    expect(inD).toBeGreaterThan(1)
    expect((await listTagMembers(admin, 1, { environments: [D], limit: 1000 })).count).toBe(inD)
    const byName = await listTagMembers(admin, 1, { sort_by: '-node_name', limit: 1000 })
    const names = byName.data.members.map((x) => x.name)
    expect(names).toEqual([...names].sort().reverse())
    // BloodHound's sort names and member filters (one filter's values ORed)
    expect((await listTagMembers(admin, 1, { sort_by: '-name', limit: 1000 })).data.members.map((x) => x.name)).toEqual(names)
    const byObject = (await listTagMembers(admin, 1, { sort_by: 'objectid', limit: 1000 })).data.members.map((x) => x.object_id)
    expect(byObject).toEqual([...byObject].sort())
    const q = (s: string) => admin.call<{ count: number; data: { members: { object_id: string; primary_kind: string }[] } }>('GET', `/api/v2/asset-group-tags/1/members?${s}`)
    expect((await q('name=~eq:users@')).data.members.map((x) => x.object_id)).toEqual([ID.FAKE_TAG])
    expect((await q(`object_id=eq:${ID.FAKE_TAG}&object_id=eq:${ID.AZ_U4}`)).count).toBe(2)
    expect((await q('primary_kind=eq:Container&limit=1000')).data.members.every((x) => x.primary_kind === 'Container')).toBe(true)
    expect((await q('primary_kind=neq:Container&limit=1000')).count).toBe(all.count - (await q('primary_kind=eq:Container&limit=1000')).count)
    await expectEnvelope(await admin.raw('GET', '/api/v2/asset-group-tags/1/members?sort_by=kinds'), 400, 'column format does not support sorting')
    await expectEnvelope(await admin.raw('GET', '/api/v2/asset-group-tags/1/members?primary_kind=~eq:x'), 400, /not supported/)
    await expectEnvelope(await tenantOnly.raw('GET', SEL), 403, 'user does not have access to this resource')
    await expectEnvelope(await tenantOnly.raw('GET', `${SEL}/${rule.data.id}`), 403, 'user does not have access to this resource')
    const tenantAdmin = (await userWithRole('Administrator', { all_environments: false, environment_access: [T] })).client
    await expectEnvelope(await tenantAdmin.raw('POST', SEL, { name: 'mine', seeds: [{ type: 1, value: ID.AZ_U4 }] }), 403, 'user does not have access to this resource')
    await expectEnvelope(await tenantAdmin.raw('DELETE', `${SEL}/${rule.data.id}`), 403)
    await deleteTagSelector(admin, 1, rule.data.id)
    await runAnalysisDirect(db)
  })
})

describe('selector list filters (BloodHound\'s AssetGroupTagSelector filters)', () => {
  it('filters on description, authors, times, disabled state, auto_certify and is_default; bad predicates are 400', async () => {
    const other = (await userWithRole('Administrator')).client
    const a = await createTagSelector(admin, 2, { name: 'filter a', description: 'Finance servers', seeds: [{ type: 1, value: ID.BOB }], auto_certify: 1 })
    await new Promise((r) => setTimeout(r, 5))
    const b = await createTagSelector(other, 2, { name: 'filter b', description: 'helpdesk', seeds: [{ type: 1, value: ID.CAROL }], disabled: true })
    const names = async (q: Record<string, string>) => (await listTagSelectors(admin, 2, q)).data.selectors.map((x) => x.name).sort()
    expect(await names({ description: '~eq:finance' })).toEqual(['filter a'])
    expect(await names({ description: 'neq:helpdesk', name: '~eq:filter' })).toEqual(['filter a'])
    expect(await names({ created_by: `eq:${b.data.created_by}` })).toEqual(['filter b'])
    expect(await names({ created_by: `neq:${b.data.created_by}`, name: '~eq:filter' })).toEqual(['filter a'])
    expect(await names({ updated_by: `eq:${a.data.updated_by}`, name: '~eq:filter' })).toEqual(['filter a'])
    expect(await names({ disabled_by: `eq:${b.data.created_by}` })).toEqual(['filter b'])
    expect(await names({ created_at: `gt:${a.data.created_at}`, name: '~eq:filter' })).toEqual(['filter b'])
    expect(await names({ created_at: `lte:${a.data.created_at}`, name: '~eq:filter' })).toEqual(['filter a'])
    // XSOAR-style offsets parse: the same instant written with +02:00
    const shifted = new Date(Date.parse(a.data.created_at) + 2 * 3600_000).toISOString().replace('Z', '+02:00')
    expect(await names({ created_at: `eq:${shifted}` })).toEqual(['filter a'])
    expect(await names({ disabled_at: `gte:2000-01-01T00:00:00Z` })).toEqual(['filter b'])
    expect(await names({ auto_certify: 'eq:1' })).toEqual(['filter a'])
    expect(await names({ is_default: 'eq:false', name: '~eq:filter' })).toEqual(['filter a', 'filter b'])
    expect(await names({ is_default: 'eq:true' })).toEqual([])
    await expectEnvelope(await admin.raw('GET', '/api/v2/asset-group-tags/2/selectors?created_by=~eq:x'), 400, 'the filter predicate is not supported: created_by ~eq')
    await expectEnvelope(await admin.raw('GET', '/api/v2/asset-group-tags/2/selectors?name=gt:x'), 400, 'the filter predicate is not supported: name gt')
    await expectEnvelope(await admin.raw('GET', '/api/v2/asset-group-tags/2/selectors?created_at=gt:yesterday'), 400, 'created_at must be an RFC 3339 date-time')
    await expectEnvelope(await admin.raw('GET', '/api/v2/asset-group-tags/2/selectors?auto_certify=eq:5'), 400, 'auto_certify must be an input value of 0 to 2')
    await expectEnvelope(await admin.raw('GET', '/api/v2/asset-group-tags/2/selectors?is_default=eq:maybe'), 400, 'is_default must be true or false')
    await deleteTagSelector(admin, 2, a.data.id)
    await deleteTagSelector(admin, 2, b.data.id)
  })
})

describe('tags: counts, filters, create, update, delete', () => {
  it('counts=true adds selectors and members per tag (members in the caller\'s environments); filters as BloodHound', async () => {
    const sel = await createTagSelector(admin, 1, { name: 'count me', seeds: [{ type: 1, value: ID.BOB }] })
    const plain = (await listAssetGroupTags(admin)).data.tags
    expect(plain.every((t) => t.counts === undefined)).toBe(true)
    const counted = (await listAssetGroupTags(admin, { counts: true })).data.tags
    const t0 = counted.find((t) => t.id === 1)!
    expect(t0.counts).toEqual({ selectors: 1, members: (await getAssetGroup(admin, 1)).data.member_count })
    expect(counted.find((t) => t.id === 2)!.counts!.selectors).toBe(0)
    const tenantOnly = (await userWithRole('Read-Only', { all_environments: false, environment_access: [T] })).client
    const tenantT0 = (await listAssetGroupTags(tenantOnly, { counts: true })).data.tags.find((t) => t.id === 1)!
    expect(tenantT0.counts!.members).toBe((await listAssetGroupMembers(admin, 1, { environment_id: `eq:${T}`, limit: 1000 })).count)
    expect(tenantT0.counts!.members).toBeLessThan(t0.counts!.members)
    expect((await listAssetGroupTags(admin, { type: ['eq:3'] })).data.tags.map((t) => t.name)).toEqual(['Owned'])
    expect((await listAssetGroupTags(admin, { type: ['neq:3'] })).data.tags.map((t) => t.id)).not.toContain(2)
    expect((await listAssetGroupTags(admin, { name: ['~eq:tier'] })).data.tags.map((t) => t.id)).toEqual([1])
    expect((await listAssetGroupTags(admin, { name: ['eq:Owned'], description: ['eq:'] })).data.tags.map((t) => t.id)).toEqual([2])
    await expectEnvelope(await admin.raw('GET', '/api/v2/asset-group-tags?type=~eq:1'), 400, /not supported/)
    await expectEnvelope(await admin.raw('GET', '/api/v2/asset-group-tags?type=eq:x'), 400, 'type must be an integer')
    await expectEnvelope(await admin.raw('GET', '/api/v2/asset-group-tags?counts=maybe'), 400)
    await deleteTagSelector(admin, 1, sel.data.id)
  })

  it('creates a label, renames and describes it, refuses what BloodHound refuses, deletes it with its selectors; system tags stay', async () => {
    const created = await admin.raw('POST', '/api/v2/asset-group-tags', { name: 'Crown Jewels', type: 2, description: 'the databases' })
    expect(created.status).toBe(201)
    const tag = ((await created.json()) as { data: { id: number; name: string; type: number; description: string; created_by: string } }).data
    expect(tag).toMatchObject({ name: 'Crown Jewels', type: 2, description: 'the databases', created_by: expect.stringMatching(/^[0-9a-f-]{36}$/) })
    expect(await auditRows(created)).toEqual([
      ['CreateAssetGroupTag', 'intent', { name: 'Crown Jewels', type: 2, description: 'the databases' }],
      ['CreateAssetGroupTag', 'success', { name: 'Crown Jewels', type: 2, description: 'the databases', asset_group_tag_id: tag.id }],
    ])
    // the older API sees the same group, its members carrying the system tag crown_jewels
    expect((await getAssetGroup(admin, tag.id)).data).toMatchObject({ name: 'Crown Jewels', tag: 'crown_jewels', system_group: false })
    // an object-id selector on it makes its node a member at the next run
    const sel = await createTagSelector(admin, tag.id, { name: 'db', seeds: [{ type: 1, value: ID.CAROL }] })
    await runAnalysisDirect(db)
    expect((await listTagMembers(admin, tag.id)).data.members.map((m) => m.object_id)).toEqual([ID.CAROL])

    // refusals (envelopes with BloodHound's messages), nothing written
    await expectEnvelope(await admin.raw('POST', '/api/v2/asset-group-tags', { name: 'crown_jewels', type: 2 }), 409, 'asset group tag name must be unique')
    await expectEnvelope(await admin.raw('POST', '/api/v2/asset-group-tags', { name: 'Crown_Jewels', type: 2 }), 409, 'asset group tag name must be unique')
    await expectEnvelope(await admin.raw('POST', '/api/v2/asset-group-tags', { name: 'Tier Zero', type: 2 }), 409, 'asset group tag name must be unique')
    await expectEnvelope(
      await admin.raw('POST', '/api/v2/asset-group-tags', { name: 'bad-name!', type: 2 }),
      400,
      'asset group tag name must contain only alphanumeric characters, spaces, and underscores',
    )
    await expectEnvelope(await admin.raw('POST', '/api/v2/asset-group-tags', { name: 'x'.repeat(251), type: 2 }), 400, 'asset group tag name is limited to 250 characters')
    await expectEnvelope(await admin.raw('POST', '/api/v2/asset-group-tags', { name: 'x', type: 7 }), 400, 'valid tag_type is required')
    await expectEnvelope(await admin.raw('POST', '/api/v2/asset-group-tags', { name: 'x', type: 1 }), 400, /labels \(tag_type 2\) only/)
    await expectEnvelope(await admin.raw('POST', '/api/v2/asset-group-tags', { name: 'x', type: 2, position: 2 }), 400, 'position and require_certify are only allowed for tiers')
    await expectEnvelope(await admin.raw('POST', '/api/v2/asset-group-tags', { name: '  ', type: 2 }), 400, 'name can not be empty')

    // PATCH: name and description; the system tag its members carry does not change
    const renamed = await updateAssetGroupTag(admin, tag.id, { name: 'Crown Jewels 2', description: 'and the backups' })
    expect(renamed.data).toMatchObject({ id: tag.id, name: 'Crown Jewels 2', description: 'and the backups' })
    expect((await getAssetGroup(admin, tag.id)).data.tag).toBe('crown_jewels')
    const same = await admin.raw('PATCH', `/api/v2/asset-group-tags/${tag.id}`, { description: 'and the backups' })
    expect(same.status).toBe(200)
    expect((await auditRows(same)).map((r) => [r[0], r[1]])).toEqual([
      ['UpdateAssetGroupTag', 'intent'],
      ['UpdateAssetGroupTag', 'success'],
    ])
    const p = (id: number, b: unknown) => admin.raw('PATCH', `/api/v2/asset-group-tags/${id}`, b as Record<string, unknown>)
    await expectEnvelope(await p(tag.id, {}), 400, 'no valid fields specified')
    await expectEnvelope(await p(tag.id, { name: '' }), 400, 'name can not be empty')
    await expectEnvelope(await p(tag.id, { name: 'Owned' }), 409, 'asset group tag name must be unique')
    await expectEnvelope(await p(1, { name: 'Tier One' }), 400, 'renaming default tags is forbidden currently')
    await expectEnvelope(await p(2, { name: 'Pwned' }), 400, 'renaming default tags is forbidden currently')
    await expectEnvelope(await p(1, { position: 2 }), 403, 'tier zero position cannot be modified')
    await expectEnvelope(await p(1, { analysis_enabled: false }), 403, 'tier zero analysis_enabled cannot be modified')
    await expectEnvelope(await p(1, { glyph: 'star' }), 400, 'tier zero glyph cannot be modified')
    await expectEnvelope(await p(tag.id, { position: 3 }), 400, 'only zones support modifying position')
    await expectEnvelope(await p(tag.id, { require_certify: true }), 400, 'only zones support modifying require_certify')
    await expectEnvelope(await p(tag.id, { glyph: 'star' }), 400, 'only zones support custom glyphs')
    await expectEnvelope(await p(999, { name: 'x' }), 404, 'asset group tag not found')
    const t0 = await updateAssetGroupTag(admin, 1, { description: 'our crown' })
    expect(t0.data).toMatchObject({ id: 1, name: 'Tier Zero', description: 'our crown' })

    // permissions: readers and restricted administrators may not write tags
    const reader = (await userWithRole('Read-Only')).client
    await expectEnvelope(await reader.raw('POST', '/api/v2/asset-group-tags', { name: 'nope', type: 2 }), 403)
    await expectEnvelope(await reader.raw('DELETE', `/api/v2/asset-group-tags/${tag.id}`), 403)
    const tenantAdmin = (await userWithRole('Administrator', { all_environments: false, environment_access: [T] })).client
    await expectEnvelope(await tenantAdmin.raw('PATCH', `/api/v2/asset-group-tags/${tag.id}`, { name: 'mine' }), 403, 'user does not have access to this resource')

    // DELETE: system tags stay (409), a created tag goes with its selectors, seeds and members
    await expectEnvelope(await admin.raw('DELETE', '/api/v2/asset-group-tags/1'), 409, 'Cannot delete a system defined asset group.')
    await expectEnvelope(await admin.raw('DELETE', '/api/v2/asset-group-tags/2'), 409, 'Cannot delete a system defined asset group.')
    const del = await admin.raw('DELETE', `/api/v2/asset-group-tags/${tag.id}`)
    expect(del.status).toBe(204)
    expect((await auditRows(del)).map((r) => [r[0], r[1]])).toEqual([
      ['DeleteAssetGroupTag', 'intent'],
      ['DeleteAssetGroupTag', 'success'],
    ])
    await expectEnvelope(await admin.raw('GET', `/api/v2/asset-group-tags/${tag.id}`), 404, 'asset group tag not found')
    for (const table of ['asset_group_tag_selectors', 'asset_group_tag_selector_seeds', 'asset_group_members'])
      expect((await db.prepare(`SELECT COUNT(*) AS n FROM ${table} WHERE asset_group_id = ?1`).bind(tag.id).first<{ n: number }>())!.n).toBe(0)
    expect((await db.prepare('SELECT COUNT(*) AS n FROM asset_group_tag_selector_nodes WHERE selector_id = ?1').bind(sel.data.id).first<{ n: number }>())!.n).toBe(0)
    await expectEnvelope(await admin.raw('DELETE', `/api/v2/asset-group-tags/${tag.id}`), 404)
    // the name is free again
    const again = await createAssetGroupTag(admin, { name: 'Crown Jewels', type: 2 })
    await deleteAssetGroupTag(admin, again.data.id)
    await updateAssetGroupTag(admin, 1, { description: '' })
    await runAnalysisDirect(db)
  })
})

describe('per-selector members (GET …/selectors/{id}/members)', () => {
  it('lists the members each selector picked in the last run, with source 1, filters, environments and refusals', async () => {
    const ids = await createTagSelector(admin, 1, { name: 'by id', seeds: [{ type: 1, value: ID.BOB }, { type: 1, value: 'S-1-5-21-404-9999' }] })
    const rule = await createTagSelector(admin, 1, {
      name: 'two environments',
      seeds: [{ type: 2, value: `MATCH (n) WHERE n.objectid IN ['${ID.FAKE_TAG}', '${ID.AZ_U4}'] RETURN n` }],
    })
    // nothing recorded before a run evaluated them
    expect(await listTagSelectorMembers(admin, 1, rule.data.id)).toEqual({ count: 0, skip: 0, limit: 50, data: { members: [] } })
    await runAnalysisDirect(db)

    const byIds = await listTagSelectorMembers(admin, 1, ids.data.id)
    expect(byIds).toEqual({
      count: 1,
      skip: 0,
      limit: 50,
      data: {
        members: [
          { id: expect.any(Number), object_id: ID.BOB, environment_id: D, primary_kind: 'User', name: 'BOB@CORP.LOCAL', source: 1, asset_group_tag_id: 1 },
        ],
      },
    })
    const all = await listTagSelectorMembers(admin, 1, rule.data.id)
    expect(all.count).toBe(2)
    expect(all.data.members.map((m) => m.object_id).sort()).toEqual([ID.AZ_U4, ID.FAKE_TAG].sort())
    expect(all.data.members.every((m) => m.source === 1 && m.asset_group_tag_id === 1)).toBe(true)
    // counts.members of the selector list: the same members, `environments` narrows the count
    const counted = Object.fromEntries((await listTagSelectors(admin, 1, { counts: true })).data.selectors.map((x) => [x.id, x.counts!.members]))
    expect([counted[ids.data.id], counted[rule.data.id]]).toEqual([1, 2])
    const inTenant = Object.fromEntries((await listTagSelectors(admin, 1, { counts: true, environments: T })).data.selectors.map((x) => [x.id, x.counts!.members]))
    expect([inTenant[ids.data.id], inTenant[rule.data.id]]).toEqual([0, 1])
    const nodeIds = all.data.members.map((m) => m.id)
    expect(nodeIds).toEqual([...nodeIds].sort((a, b) => a - b))
    expect((await listTagSelectorMembers(admin, 1, rule.data.id, { sort_by: '-id' })).data.members.map((m) => m.id)).toEqual([...nodeIds].reverse())
    // filters: one column's values are ORed, columns ANDed; ~eq is a case-insensitive contains
    expect((await listTagSelectorMembers(admin, 1, rule.data.id, { name: ['~eq:users@'] })).data.members.map((m) => m.object_id)).toEqual([ID.FAKE_TAG])
    expect((await listTagSelectorMembers(admin, 1, rule.data.id, { object_id: [`eq:${ID.FAKE_TAG}`, `eq:${ID.AZ_U4}`] })).count).toBe(2)
    expect((await listTagSelectorMembers(admin, 1, rule.data.id, { primary_kind: ['neq:Container'] })).data.members.map((m) => m.object_id)).toEqual([ID.AZ_U4])
    expect((await listTagSelectorMembers(admin, 1, rule.data.id, { environments: [T] })).data.members.map((m) => m.object_id)).toEqual([ID.AZ_U4])
    expect((await listTagSelectorMembers(admin, 1, rule.data.id, { skip: 1, limit: 1 })).data.members).toHaveLength(1)
    await expectEnvelope(await admin.raw('GET', `${SEL}/${rule.data.id}/members?primary_kind=~eq:Cont`), 400, /not supported/)
    await expectEnvelope(await admin.raw('GET', `${SEL}/${rule.data.id}/members?sort_by=kinds`), 400, 'column format does not support sorting')
    await expectEnvelope(await admin.raw('GET', `/api/v2/asset-group-tags/2/selectors/${rule.data.id}/members`), 404, 'selector is not part of asset group tag')
    await expectEnvelope(await admin.raw('GET', `${SEL}/999999/members`), 404)
    const tenantOnly = (await userWithRole('Read-Only', { all_environments: false, environment_access: [T] })).client
    await expectEnvelope(await tenantOnly.raw('GET', `${SEL}/${rule.data.id}/members`), 403, 'user does not have access to this resource')
    const reader = (await userWithRole('Read-Only')).client
    expect((await listTagSelectorMembers(reader, 1, rule.data.id)).count).toBe(2)

    // the record is the last run's: a changed rule changes it at the next run, not before
    await updateTagSelector(admin, 1, rule.data.id, { seeds: [{ type: 2, value: `MATCH (n) WHERE n.objectid = '${ID.FAKE_TAG}' RETURN n` }] })
    expect((await listTagSelectorMembers(admin, 1, rule.data.id)).count).toBe(2)
    await runAnalysisDirect(db)
    expect((await listTagSelectorMembers(admin, 1, rule.data.id)).data.members.map((m) => m.object_id)).toEqual([ID.FAKE_TAG])
    // a disabled selector: 409, as BloodHound
    await updateTagSelector(admin, 1, rule.data.id, { disabled: true })
    await expectEnvelope(await admin.raw('GET', `${SEL}/${rule.data.id}/members`), 409, 'selector is disabled')
    // deleting a selector removes its record in the same batch
    await deleteTagSelector(admin, 1, rule.data.id)
    await deleteTagSelector(admin, 1, ids.data.id)
    const left = await db.prepare('SELECT COUNT(*) AS n FROM asset_group_tag_selector_nodes WHERE selector_id IN (?1, ?2)').bind(rule.data.id, ids.data.id).first<{ n: number }>()
    expect(left!.n).toBe(0)
    await runAnalysisDirect(db)
  })
})

describe('permissions and audit', () => {
  it('readers read, only administrators write; no credentials is 401', async () => {
    const reader = (await userWithRole('Read-Only')).client
    expect((await listTagSelectors(reader, 1)).count).toBe(0)
    expect((await listAssetGroupTags(reader)).data.tags.length).toBeGreaterThanOrEqual(2)
    await expectEnvelope(await reader.raw('POST', SEL, { name: 'x', seeds: [{ type: 1, value: ID.ALICE }] }), 403)
    await expectEnvelope(await client().raw('GET', SEL), 401)
    expect((await listTagSelectors(admin, 1)).count).toBe(0)
  })

  it('create, update and delete write intent and success rows in the change\'s batch; refusals write failure', async () => {
    const res = await admin.raw('POST', SEL, { name: 'audited', seeds: [{ type: 2, value: 'MATCH (n:Domain) RETURN n' }] })
    expect(res.status).toBe(201)
    const id = ((await res.json()) as { data: { id: number } }).data.id
    const fields = { asset_group_tag_id: 1, name: 'audited', seeds: [{ type: 2, value: 'MATCH (n:Domain) RETURN n' }] }
    expect(await auditRows(res)).toEqual([
      ['CreateAssetGroupTagSelector', 'intent', fields],
      ['CreateAssetGroupTagSelector', 'success', fields],
    ])
    const dup = await admin.raw('POST', SEL, { name: 'audited', seeds: [{ type: 1, value: ID.ALICE }] })
    expect(dup.status).toBe(409)
    expect((await auditRows(dup)).map(([a, s]) => [a, s])).toEqual([
      ['CreateAssetGroupTagSelector', 'intent'],
      ['CreateAssetGroupTagSelector', 'failure'],
    ])
    const upd = await admin.raw('PATCH', `${SEL}/${id}`, { disabled: true })
    expect(await auditRows(upd)).toEqual([
      ['UpdateAssetGroupTagSelector', 'intent', { asset_group_tag_id: 1, asset_group_tag_selector_id: id, disabled: true }],
      ['UpdateAssetGroupTagSelector', 'success', { asset_group_tag_id: 1, asset_group_tag_selector_id: id, disabled: true, selector_name: 'audited' }],
    ])
    const del = await admin.raw('DELETE', `${SEL}/${id}`)
    expect(del.status).toBe(204)
    expect((await auditRows(del)).map(([a, s, f]) => [a, s, f])).toEqual([
      ['DeleteAssetGroupTagSelector', 'intent', { asset_group_tag_id: 1, asset_group_tag_selector_id: id }],
      ['DeleteAssetGroupTagSelector', 'success', { asset_group_tag_id: 1, asset_group_tag_selector_id: id, selector_name: 'audited' }],
    ])
  })

  it('every selector operation is in the OpenAPI document with its permission', async () => {
    const doc = (await (await admin.raw('GET', '/api/v2/spec')).json()) as { paths: Record<string, Record<string, { operationId: string; 'x-permission'?: string | null }>> }
    const p = '/api/v2/asset-group-tags/{asset_group_tag_id}/selectors'
    expect(doc.paths['/api/v2/asset-group-tags'].get.operationId).toBe('GetAssetGroupTags')
    expect(doc.paths[p].get.operationId).toBe('GetAssetGroupTagSelectors')
    expect(doc.paths[p].post).toMatchObject({ operationId: 'CreateAssetGroupTagSelector', 'x-permission': 'graph/ManageAssetGroups' })
    const one = doc.paths[`${p}/{asset_group_tag_selector_id}`]
    expect(one.get.operationId).toBe('GetAssetGroupTagSelector')
    expect(one.patch).toMatchObject({ operationId: 'UpdateAssetGroupTagSelector', 'x-permission': 'graph/ManageAssetGroups' })
    expect(one.delete).toMatchObject({ operationId: 'DeleteAssetGroupTagSelector', 'x-permission': 'graph/ManageAssetGroups' })
  })
})
