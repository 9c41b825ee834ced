/**
 * One environment-access rule for both asset-group APIs (issue 24, src/assetgroups/access.ts): the same data read
 * and written through the older `/api/v2/asset-groups` and the newer `/api/v2/asset-group-tags`, for each role and
 * for callers restricted to one environment. Selectors (object ids and names of every environment) and tag writes
 * need access to every environment; members are filtered by environment in both.
 */
import { env } from 'cloudflare:workers'
import { beforeAll, describe, expect, it } from 'vitest'
import { adminToken, expectEnvelope, userWithRole } from '../helpers'
import type { EdgeHoundClient } from '../../src/client'
import {
  allTagSelectors,
  createAssetGroup,
  createAssetGroupTag,
  deleteAssetGroup,
  getAssetGroup,
  listAssetGroupMembers,
  listAssetGroups,
  listAssetGroupTags,
  listTagMembers,
  updateAssetGroup,
  updateAssetGroupSelectors,
} from '../../src/client/assetgroups'
import { insertGraph, runAnalysisDirect } from '../fixtures/findings/helpers'
import { D, ID, T } from '../fixtures/findings/known-graph'

const db = env.DB
const DENIED = 'user does not have access to this resource'
let admin: EdgeHoundClient

beforeAll(async () => {
  admin = await adminToken({ paced: true })
  await insertGraph(db)
  // one selector in each environment: ALICE (domain D) and AZ_U4 (tenant T)
  await updateAssetGroupSelectors(admin, 1, [
    { sid: ID.ALICE, action: 'add', selector_name: 'alice of the hidden domain' },
    { sid: ID.AZ_U4, action: 'add' },
  ])
  await runAnalysisDirect(db)
})

const ROLES = ['Administrator', 'User', 'Read-Only', 'Auditor'] as const

describe('reads: the same data through both APIs', () => {
  it.each(ROLES)('%s with every environment: both APIs list the selectors of both environments', async (role) => {
    const c = (await userWithRole(role)).client
    const legacy = (await getAssetGroup(c, 1)).data.selectors.map((s) => s.selector).sort()
    expect(legacy).toEqual([ID.ALICE, ID.AZ_U4].sort())
    const listed = (await listAssetGroups(c)).data.asset_groups.find((g) => g.id === 1)!
    expect(listed.selectors.map((s) => s.selector).sort()).toEqual(legacy)
    const newer = (await allTagSelectors(c, 1)).flatMap((s) => s.seeds.filter((d) => d.type === 1).map((d) => d.value)).sort()
    expect(newer).toEqual(legacy)
  })

  it.each(ROLES)('%s restricted to the tenant: no selector through either API, the same members through both', async (role) => {
    const c = (await userWithRole(role, { all_environments: false, environment_access: [T] })).client
    // the newer API refuses selectors ...
    await expectEnvelope(await c.raw('GET', '/api/v2/asset-group-tags/1/selectors'), 403, DENIED)
    // ... and the older one withholds them: neither the hidden domain's object id and name nor the tenant's
    const body = JSON.stringify(await (await c.raw('GET', '/api/v2/asset-groups')).json())
    expect(body).not.toContain(ID.ALICE)
    expect(body).not.toContain('alice of the hidden domain')
    for (const g of (await listAssetGroups(c)).data.asset_groups) expect(g.selectors).toEqual([])
    const one = (await getAssetGroup(c, 1)).data
    expect(one.selectors).toEqual([])
    expect(JSON.stringify(one)).not.toContain(ID.ALICE)
    // groups and tags themselves stay readable, with the same member counts of the caller's environment
    const tagCount = (await listAssetGroupTags(c, { counts: true })).data.tags.find((t) => t.id === 1)!.counts!.members
    expect(one.member_count).toBe(tagCount)
    const legacyMembers = (await listAssetGroupMembers(c, 1, { limit: 1000 })).data.members
    const newerMembers = (await listTagMembers(c, 1, { limit: 1000 })).data.members
    expect(legacyMembers.length).toBeGreaterThan(0)
    expect(legacyMembers.every((m) => m.environment_id === T)).toBe(true)
    expect(legacyMembers.map((m) => m.object_id).sort()).toEqual(newerMembers.map((m) => m.object_id).sort())
    expect(legacyMembers.map((m) => m.object_id)).not.toContain(ID.ALICE)
  })

  it('Upload-Only reads neither API', async () => {
    const c = (await userWithRole('Upload-Only')).client
    await expectEnvelope(await c.raw('GET', '/api/v2/asset-groups'), 403)
    await expectEnvelope(await c.raw('GET', '/api/v2/asset-group-tags/1/selectors'), 403)
  })
})

describe('writes: a restricted administrator is refused by both APIs, an unrestricted one is not', () => {
  it('create, rename, delete and select: 403 through the older API exactly as through the newer one; nothing changes', async () => {
    const tenantAdmin = (await userWithRole('Administrator', { all_environments: false, environment_access: [T] })).client
    const g = (await createAssetGroup(admin, { name: 'Shared', tag: 'shared_acl' })).data
    const tag = (await createAssetGroupTag(admin, { name: 'Shared newer', type: 2 })).data

    await expectEnvelope(await tenantAdmin.raw('POST', '/api/v2/asset-groups', { name: 'Mine', tag: 'mine_acl' }), 403, DENIED)
    await expectEnvelope(await tenantAdmin.raw('POST', '/api/v2/asset-group-tags', { name: 'Mine', type: 2 }), 403, DENIED)
    await expectEnvelope(await tenantAdmin.raw('PUT', `/api/v2/asset-groups/${g.id}`, { name: 'Renamed' }), 403, DENIED)
    await expectEnvelope(await tenantAdmin.raw('PATCH', `/api/v2/asset-group-tags/${tag.id}`, { name: 'Renamed' }), 403, DENIED)
    await expectEnvelope(await tenantAdmin.raw('DELETE', `/api/v2/asset-groups/${g.id}`), 403, DENIED)
    await expectEnvelope(await tenantAdmin.raw('DELETE', `/api/v2/asset-group-tags/${tag.id}`), 403, DENIED)
    await expectEnvelope(await tenantAdmin.raw('PUT', `/api/v2/asset-groups/${g.id}/selectors`, [{ sid: ID.AZ_U4, action: 'add' }]), 403, DENIED)
    await expectEnvelope(
      await tenantAdmin.raw('POST', `/api/v2/asset-group-tags/${tag.id}/selectors`, { name: 's', seeds: [{ type: 1, value: ID.AZ_U4 }] }),
      403,
      DENIED,
    )

    const groups = (await listAssetGroups(admin)).data.asset_groups
    expect(groups.find((x) => x.tag === 'mine_acl')).toBeUndefined()
    expect(groups.find((x) => x.id === g.id)).toMatchObject({ name: 'Shared', selectors: [] })
    expect((await listAssetGroupTags(admin)).data.tags.find((t) => t.name === 'Mine')).toBeUndefined()

    // an administrator with every environment still does all of it through the older API
    expect((await updateAssetGroup(admin, g.id, { name: 'Renamed' })).data.name).toBe('Renamed')
    const added = await updateAssetGroupSelectors(admin, g.id, [{ sid: ID.AZ_U4, action: 'add' }])
    expect(added.data.added_selectors.map((s) => s.selector)).toEqual([ID.AZ_U4])
    await deleteAssetGroup(admin, g.id)
    await expectEnvelope(await admin.raw('GET', `/api/v2/asset-groups/${g.id}`), 404)
    expect(D).not.toBe(T)
  })
})
