/**
 * AzureHound output through the ordinary file-upload jobs (issue 13): detection by `meta.type` "azure",
 * the conversion stored relationship by relationship (the pure conversion is asserted in full by
 * test/unit/collectors-azurehound.test.ts), placeholders, the tenant as an environment, the
 * /api/v2/azure/... endpoints and the findings engine on the converted data, and bad input.
 */
import { beforeAll, describe, expect, it } from 'vitest'
import { strToU8, zipSync } from 'fflate'
import { adminToken, env, expectEnvelope } from '../helpers'
import { availableDomains, azureEntity, azureRelated, endUploadJob, ingest, startUploadJob, uploadFile } from '../../src/client/graph'
import type { EdgeHoundClient } from '../../src/client'
import { requestAnalysis } from '../../src/client/findings'
import { waitForRun } from '../fixtures/findings/helpers'
import { convertAzureItem } from '../../src/collectors/azurehound'
import { AZ, azureHoundFile, ids, items, role, T } from '../fixtures/azurehound/tenant'

const db = () => (env as unknown as { DB: D1Database }).DB
const TEN = AZ(T)

async function node(objectid: string) {
  const n = await db().prepare('SELECT * FROM nodes WHERE objectid = ?').bind(objectid).first<{ kind: string; kinds: string; properties: string; environment_id: string | null; environment_kind: string | null }>()
  return n ? { ...n, kinds: JSON.parse(n.kinds) as string[], props: JSON.parse(n.properties) as Record<string, unknown> } : null
}

async function rel(start: string, kind: string, end: string): Promise<Record<string, unknown> | null> {
  const r = await db()
    .prepare(`SELECT e.properties FROM edges e JOIN nodes s ON s.id = e.start_id JOIN nodes t ON t.id = e.end_id WHERE s.objectid = ?1 AND e.kind = ?2 AND t.objectid = ?3`)
    .bind(start, kind, end)
    .first<{ properties: string }>()
  return r ? (JSON.parse(r.properties) as Record<string, unknown>) : null
}

async function upload(c: EdgeHoundClient, jobId: number, body: string | Uint8Array, contentType = 'application/json', name = 'azurehound.json') {
  return c.raw('POST', `/api/v2/file-upload/${jobId}`, body, { contentType, headers: { 'X-File-Upload-Name': name } })
}

let admin: EdgeHoundClient

beforeAll(async () => {
  admin = await adminToken()
})

describe('AzureHound: ingest and conversion', () => {
  let result: Record<string, unknown>
  beforeAll(async () => {
    const job = (await startUploadJob(admin)).data
    const res = await upload(admin, job.id, JSON.stringify(azureHoundFile))
    expect(res.status).toBe(202)
    result = ((await res.json()) as { data: Record<string, unknown> }).data
    expect((await endUploadJob(admin, job.id)).data).toMatchObject({ status: 2, failed_files: 0 })
  })

  it('is detected by meta.type "azure" and written: every relationship, none unmatched', () => {
    expect(result).toMatchObject({ files: 1, unmatched_edges: 0, errors: [] })
    let converted = 0
    items.forEach((item, i) => convertAzureItem(item, `data[${i}]`, { node: () => undefined, edge: () => void converted++, violation: () => undefined }))
    expect(result.edges).toBe(converted) // every relationship the conversion gives (asserted one by one in the unit test)
    expect(converted).toBeGreaterThan(60)
  })

  it('stores nodes with BloodHound kinds, upper-cased ids, tenantid and the tenant as their environment', async () => {
    const alice = await node(AZ(ids.alice))
    expect(alice).toMatchObject({ kind: 'AZUser', kinds: ['AZUser', 'AZBase'], environment_id: TEN })
    expect(alice!.props).toMatchObject({ name: 'ALICE@CONTOSO.EXAMPLE', tenantid: TEN, enabled: true, userprincipalname: 'alice@contoso.example' })
    expect(await node(TEN)).toMatchObject({ kind: 'AZTenant', environment_kind: 'AZTenant', environment_id: TEN })
    expect(await node(role(ids.ga))).toMatchObject({ kind: 'AZRole', environment_id: TEN })
    // the synchronised on-premises account
    expect(await node(AZ(ids.onPremAlice))).toMatchObject({ kind: 'User', kinds: ['User', 'Base'] })
  })

  it('stores relationships with their properties', async () => {
    expect(await rel(TEN, 'AZContains', AZ(ids.alice))).toEqual({})
    expect(await rel(AZ(ids.alice), 'AZMemberOf', AZ(ids.admins))).toEqual({})
    expect(await rel(AZ(ids.admins), 'AZHasRole', role(ids.ga))).toEqual({ scope: TEN })
    expect(await rel(AZ(ids.bob), 'AZAppAdmin', AZ(ids.appObject))).toEqual({})
    expect(await rel(AZ(ids.sp), 'AZMGRoleManagement_ReadWrite_Directory', AZ(ids.graphSp))).toEqual({})
    expect(await rel(AZ(ids.vm), 'AZManagedIdentity', AZ(ids.uaiSp))).toEqual({})
    expect(await rel(AZ(ids.alice), 'AZVMAdminLogin', AZ(ids.vm))).toEqual({})
    expect(await rel(AZ(ids.bob), 'AZVMAdminLogin', AZ(ids.vm))).toBeNull() // a resource-group scope does not count
    expect(await rel(AZ(ids.mg), 'AZContains', AZ(ids.sub))).toEqual({})
  })

  it('gives ends the data does not describe placeholder nodes of the right Azure kind', async () => {
    expect(await node(role(ids.pra))).toMatchObject({ kind: 'AZRole', kinds: ['AZRole', 'AZBase'], props: {} })
    expect(await node(AZ(ids.appObject))).toMatchObject({ kind: 'AZBase', kinds: ['AZBase'] })
    expect(await node(AZ(ids.vmSp))).toMatchObject({ kind: 'AZServicePrincipal', kinds: ['AZServicePrincipal', 'AZBase'] })
    expect(await node(AZ(ids.contact))).toBeNull() // an orgContact member is skipped, as BloodHound does
  })

  it('the tenant is an environment; /api/v2/azure endpoints answer on the converted data (ids in any case)', async () => {
    expect((await availableDomains(admin)).data.find((d) => d.id === TEN)).toMatchObject({ name: 'CONTOSO', type: 'azure', collected: true })
    const u = await azureEntity(admin, 'users', ids.alice) // lower case, as the Graph API returns it
    expect(u.data).toMatchObject({ kind: 'AZUser', props: { objectid: AZ(ids.alice), tenantid: TEN }, group_membership: 1, roles: 2 })
    const g = await azureEntity(admin, 'groups', AZ(ids.admins))
    expect(g.data).toMatchObject({ group_members: 2, roles: 1 })
    const r = await azureEntity(admin, 'roles', role(ids.ga))
    expect(r.data).toMatchObject({ active_assignments: 3, approvers: 3 })
    const kv = await azureEntity(admin, 'key-vaults', AZ(ids.kv))
    expect(kv.data).toMatchObject({ Readers: { SecretReaders: 4, CertificateReaders: 4, KeyReaders: 4 } }) // holders and the members of holder groups
    const t = await azureEntity(admin, 'tenants', TEN)
    expect(t.data.descendents).toMatchObject({ descendent_counts: { AZUser: 2, AZGroup: 1, AZSubscription: 1, AZVM: 1, AZKeyVault: 1, AZResourceGroup: 1 } })
    const vms = await azureRelated(admin, 'tenants', TEN, 'descendent-virtual-machines')
    expect(vms.data.map((n) => n.props.objectid)).toEqual([AZ(ids.vm)])
  })

  it('feeds the findings engine: an AZOwns relationship into a Tier Zero object is a T0AZOwns finding', async () => {
    // Tier Zero in Azure is the tenant, Global/Privileged Role Administrator roles and tagged objects; tag
    // the admin group (as an operator tags it in BloodHound) and bob, its owner, becomes a finding.
    await ingest(admin, { graph: { nodes: [{ id: AZ(ids.admins), kinds: ['AZGroup'], properties: { system_tags: 'admin_tier_0' } }] } })
    const run = await requestAnalysis(admin)
    expect((await waitForRun(db(), run.data.id)).status).toBe('complete')
    const types = (await admin.call<{ data: string[] }>('GET', `/api/v2/domains/${TEN}/available-types`)).data
    expect(types).toContain('T0AZOwns')
    const details = await admin.call<{ data: { FromPrincipalProps?: { objectid?: string }; FromPrincipal?: string }[] }>('GET', `/api/v2/domains/${TEN}/details?finding=T0AZOwns`)
    expect(JSON.stringify(details.data)).toContain(AZ(ids.bob))
  })
})

describe('AzureHound: zips and bad input', () => {
  it('reads AzureHound files inside a zip, next to OpenGraph members', async () => {
    const job = (await startUploadJob(admin)).data
    const z = zipSync({
      'azurehound.json': strToU8(JSON.stringify({ meta: { type: 'azure', version: 5, count: 1 }, data: [{ kind: 'AZUser', data: { id: 'zz-user-1', tenantId: 'zz-tenant' } }] })),
      'extra.json': strToU8(JSON.stringify({ graph: { nodes: [{ id: 'ZZ-OG-1', kinds: ['XH_User'] }] } })),
    })
    const r = (await uploadFile(admin, job.id, z, { contentType: 'application/zip', fileName: 'mixed.zip' })).data
    expect(r).toMatchObject({ files: 2, nodes: 2, unmatched_edges: 0 })
    expect(await node('ZZ-USER-1')).toMatchObject({ kind: 'AZUser', environment_id: 'ZZ-TENANT' })
    expect(await node('ZZ-TENANT')).toMatchObject({ kind: 'AZTenant', kinds: ['AZTenant', 'AZBase'] }) // a placeholder
  })

  it('unknown kind, malformed item, truncated member: 400 naming the file and the JSON path, nothing written', async () => {
    const job = (await startUploadJob(admin)).data
    const good = { kind: 'AZUser', data: { id: 'bad-case-user', tenantId: T } }
    const cases: [string | Uint8Array, string, string, string][] = [
      [JSON.stringify({ meta: { type: 'azure', count: 2 }, data: [good, { kind: 'AZUsers', data: {} }] }), 'application/json', 'data[1].kind', 'unknown AzureHound kind "AZUsers"'],
      [JSON.stringify({ meta: { type: 'azure', count: 2 }, data: [good, { kind: 'AZGroupMember', data: { groupId: 'g', members: [{ member: 7 }] } }] }), 'application/json', 'data[1].data.members[0].member', 'member must be an object'],
      [JSON.stringify({ meta: { type: 'azure', count: 2 }, data: [good, { kind: 'AZUser', data: { tenantId: T } }] }), 'application/json', 'data[1].data.id', 'id is required'],
      [zipSync({ 'tenant.json': strToU8(JSON.stringify({ meta: { type: 'azure', count: 2 }, data: [good, { kind: 'AZVM', data: { id: 5 } }] })) }), 'application/zip', 'tenant.json: data[1].data.id', 'id must be a string'],
    ]
    for (const [body, type, context, message] of cases) {
      const env_ = await expectEnvelope(await upload(admin, job.id, body, type, 'tenant-export.json'), 400, message)
      expect(env_.errors.map((e) => e.context)).toContain(context)
    }
    // the job records each failed file with its name and the path
    const stored = await admin.call<{ data: { errors: { file: string; context: string }[]; failed_files: number } }>('GET', `/api/v2/file-upload?limit=1000`)
    const mine = (stored.data as unknown as { id: number; failed_files: number; errors: { file: string; context: string }[] }[]).find((j) => j.id === job.id)!
    expect(mine.failed_files).toBe(cases.length)
    expect(mine.errors.some((e) => e.file === 'tenant-export.json' && e.context === 'data[1].kind')).toBe(true)
    expect(await node('BAD-CASE-USER')).toBeNull()
  })
})

it('the fixture holds every kind EdgeHound converts', async () => {
  const { AZURE_CONVERTERS } = await import('../../src/collectors/azurehound')
  const used = new Set(items.map((i) => i.kind))
  expect(Object.keys(AZURE_CONVERTERS).filter((k) => !used.has(k))).toEqual([])
})

describe('AzureHound: post-processing at each analysis run (derived relationships)', () => {
  const carol = 'ca000000-0000-4000-8000-0000000000c1'
  const dave = 'da000000-0000-4000-8000-0000000000d1'
  const team = '7e000000-0000-4000-8000-0000000000e1'
  const intune = '3a2c62db-5318-420d-8d74-23affee5d9d5'

  async function derived(start: string, kind: string, end: string): Promise<boolean> {
    const r = await db()
      .prepare(`SELECT e.derived FROM edges e JOIN nodes s ON s.id = e.start_id JOIN nodes t ON t.id = e.end_id WHERE s.objectid = ?1 AND e.kind = ?2 AND t.objectid = ?3`)
      .bind(start, kind, end)
      .first<{ derived: number }>()
    return r?.derived === 1
  }

  beforeAll(async () => {
    const more = [
      { kind: 'AZUser', data: { id: carol, tenantId: T, userPrincipalName: 'carol@contoso.example' } },
      { kind: 'AZUser', data: { id: dave, tenantId: T, userPrincipalName: 'dave@contoso.example' } },
      { kind: 'AZGroup', data: { id: team, tenantId: T, tenantName: 'Contoso', displayName: 'Helpdesk Team', isAssignableToRole: false } },
      { kind: 'AZRole', data: { id: ids.pra, templateId: ids.pra, tenantId: T, displayName: 'Privileged Role Administrator' } },
      { kind: 'AZRole', data: { id: intune, templateId: intune, tenantId: T, displayName: 'Intune Administrator' } },
      { kind: 'AZRoleAssignment', data: { roleDefinitionId: ids.pra, tenantId: T, roleAssignments: [{ roleDefinitionId: ids.pra, principalId: carol, directoryScopeId: '/' }] } },
      { kind: 'AZRoleAssignment', data: { roleDefinitionId: intune, tenantId: T, roleAssignments: [{ roleDefinitionId: intune, principalId: dave, directoryScopeId: '/' }] } },
    ]
    const job = (await startUploadJob(admin)).data
    expect((await upload(admin, job.id, JSON.stringify({ meta: { type: 'azure', version: 5, count: more.length }, data: more }))).status).toBe(202)
    await endUploadJob(admin, job.id)
    const run = await requestAnalysis(admin)
    expect((await waitForRun(db(), run.data.id)).status).toBe('complete')
  })

  it('derives the role-based relationships BloodHound derives', async () => {
    // tenant-level administrators
    expect(await derived(AZ(ids.admins), 'AZGlobalAdmin', TEN)).toBe(true)
    expect(await derived(AZ(carol), 'AZPrivilegedRoleAdmin', TEN)).toBe(true)
    // application administrator roles → every application and service principal of the tenant
    expect(await derived(role(ids.appAdmin), 'AZAddSecret', AZ(ids.app))).toBe(true)
    expect(await derived(role(ids.appAdmin), 'AZAddSecret', AZ(ids.sp))).toBe(true)
    // Global Administrator resets every user's password
    for (const u of [ids.alice, ids.bob, carol, dave]) expect(await derived(role(ids.ga), 'AZResetPassword', AZ(u))).toBe(true)
    // Privileged Role Administrator adds members to every group; Intune Administrator only to non role-assignable ones
    expect(await derived(AZ(carol), 'AZAddMembers', AZ(ids.admins))).toBe(true)
    expect(await derived(AZ(carol), 'AZAddMembers', AZ(team))).toBe(true)
    expect(await derived(AZ(dave), 'AZAddMembers', AZ(team))).toBe(true)
    expect(await derived(AZ(dave), 'AZAddMembers', AZ(ids.admins))).toBe(false)
    // Intune Administrator runs commands on Windows devices
    expect(await derived(AZ(dave), 'AZExecuteCommand', AZ(ids.device))).toBe(true)
    // ingested relationships are never marked derived
    expect(await derived(AZ(ids.alice), 'AZMemberOf', AZ(ids.admins))).toBe(false)
  })

  it('a derived AZAddMembers into a Tier Zero group is a T0AZAddMembers finding', async () => {
    const types = (await admin.call<{ data: string[] }>('GET', `/api/v2/domains/${TEN}/available-types`)).data
    expect(types).toContain('T0AZAddMembers')
    const details = await admin.call<{ data: unknown[] }>('GET', `/api/v2/domains/${TEN}/details?finding=T0AZAddMembers`)
    expect(JSON.stringify(details.data)).toContain(AZ(carol))
    expect(JSON.stringify(details.data)).not.toContain(AZ(dave))
  })
})
