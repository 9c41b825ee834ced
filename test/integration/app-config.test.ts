/**
 * BloodHound's application configuration routes (src/appcfg/, docs/configuration.md): capability tags, feature
 * flags and configuration parameters, each honoured by the code that reads it (analysis, password changes).
 */
import { beforeAll, describe, expect, it } from 'vitest'
import { strToU8, zipSync } from 'fflate'
import { adminToken, client, env, expectEnvelope, userWithRole } from '../helpers'
import { endUploadJob, startUploadJob, uploadFile } from '../../src/client/graph'
import type { EdgeHoundClient } from '../../src/client'
import { relayFiles } from '../fixtures/sharphound/relaylab'
import { runAnalysisDirect, settleRuns } from '../fixtures/findings/helpers'

let admin: EdgeHoundClient

beforeAll(async () => {
  admin = await adminToken()
})

describe('GET /api/v2/dog-tags', () => {
  it("answers EdgeHound's capabilities under BloodHound's keys, with BloodHound's value types", async () => {
    const res = await admin.raw('GET', '/api/v2/dog-tags')
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({
      data: {
        'auth.environment_targeted_access_control': true,
        'privilege_zones.label_limit': 2147483647,
        'privilege_zones.multi_tier_analysis': false,
        'privilege_zones.tier_limit': 1,
      },
    })
  })

  it('any signed-in user may read them (an Upload-Only user too); an anonymous caller gets 401', async () => {
    const { client: upload } = await userWithRole('Upload-Only')
    expect((await upload.raw('GET', '/api/v2/dog-tags')).status).toBe(200)
    await expectEnvelope(await client().raw('GET', '/api/v2/dog-tags'), 401)
  })
})

// ---- feature flags and configuration parameters -----------------------------------------------------------

const db = () => (env as unknown as { DB: D1Database }).DB

async function auditRows(res: Response) {
  const r = await db()
    .prepare(`SELECT action, status, fields FROM audit_logs WHERE request_id = ? ORDER BY id`)
    .bind(res.headers.get('requestid'))
    .all<{ action: string; status: string; fields: string }>()
  return r.results.map((x) => ({ action: x.action, status: x.status, fields: JSON.parse(x.fields) as Record<string, unknown> }))
}

async function ingestZip(files: Record<string, unknown>): Promise<void> {
  const job = (await startUploadJob(admin)).data.id
  const body = zipSync(Object.fromEntries(Object.entries(files).map(([k, v]) => [k, strToU8(JSON.stringify(v))])))
  const res = await uploadFile(admin, job, body, { contentType: 'application/zip', fileName: 'cfg.zip' })
  expect(res.data).toMatchObject({ errors: [] })
  await endUploadJob(admin, job)
  await settleRuns(db())
  await runAnalysisDirect(db())
}

async function edgesOfKind(kind: string): Promise<string[]> {
  const r = await db()
    .prepare(`SELECT s.objectid || '->' || t.objectid AS e FROM edges e JOIN nodes s ON s.id = e.start_id JOIN nodes t ON t.id = e.end_id WHERE e.kind = ?1 ORDER BY 1`)
    .bind(kind)
    .all<{ e: string }>()
  return r.results.map((x) => x.e)
}

describe('GET /api/v2/features and PUT /api/v2/features/{id}/toggle', () => {
  it("lists the flags in BloodHound's shape: ntlm_post_processing (id 1) user-updatable, the fixed features not", async () => {
    const res = await admin.raw('GET', '/api/v2/features')
    expect(res.status).toBe(200)
    const { data } = (await res.json()) as { data: Record<string, unknown>[] }
    expect(data.map((f) => [f.id, f.key, f.enabled, f.user_updatable])).toEqual([
      [1, 'ntlm_post_processing', true, true],
      [2, 'adcs', true, false],
      [3, 'azure_support', true, false],
      [4, 'enable_saml_sso', true, false],
      [5, 'clear_graph_data', true, false],
      [6, 'tier_management_engine', true, false],
      [7, 'environment_targeted_access_control', true, false],
      [8, 'opengraph_extension_management', true, false],
    ])
    for (const f of data) expect(Object.keys(f).sort()).toEqual(['description', 'enabled', 'id', 'key', 'name', 'user_updatable'])
  })

  it('reading needs app/ReadAppConfig (Read-Only has it, Upload-Only not); toggling needs app/WriteAppConfig', async () => {
    const { client: ro } = await userWithRole('Read-Only')
    expect((await ro.raw('GET', '/api/v2/features')).status).toBe(200)
    await expectEnvelope(await ro.raw('PUT', '/api/v2/features/1/toggle'), 403)
    const { client: up } = await userWithRole('Upload-Only')
    await expectEnvelope(await up.raw('GET', '/api/v2/features'), 403)
    await expectEnvelope(await client().raw('GET', '/api/v2/features'), 401)
  })

  it("refuses a fixed flag as BloodHound does (403), an unknown id (404) and a malformed one (400); nothing is stored", async () => {
    await expectEnvelope(await admin.raw('PUT', '/api/v2/features/2/toggle'), 403, 'Feature flag adcs(2) is not user updatable.')
    await expectEnvelope(await admin.raw('PUT', '/api/v2/features/99/toggle'), 404, 'resource not found')
    await expectEnvelope(await admin.raw('PUT', '/api/v2/features/abc/toggle'), 400, 'id is malformed')
    await expectEnvelope(await admin.raw('PUT', '/api/v2/features/99999999999/toggle'), 400, 'id is malformed')
    expect((await db().prepare('SELECT count(*) AS n FROM feature_flags').first<{ n: number }>())!.n).toBe(0)
  })

  it('ntlm_post_processing off: the next analysis run derives no NTLM relay relationship; on again: they return. Each toggle is audited', async () => {
    await ingestZip(relayFiles())
    expect(await edgesOfKind('CoerceAndRelayNTLMToSMB')).toHaveLength(1)
    expect((await edgesOfKind('CoerceAndRelayNTLMToADCS')).length).toBeGreaterThan(0)

    const off = await admin.raw('PUT', '/api/v2/features/1/toggle')
    expect(off.status).toBe(200)
    expect(await off.json()).toEqual({ data: { enabled: false } })
    expect((await auditRows(off)).map((r) => [r.action, r.status])).toEqual([
      ['ToggleEarlyAccessFeatureFlag', 'intent'],
      ['ToggleEarlyAccessFeatureFlag', 'success'],
    ])
    expect((await auditRows(off))[1].fields).toMatchObject({ feature_id: 1, flag: 'ntlm_post_processing', enabled: false })
    const listed = ((await (await admin.raw('GET', '/api/v2/features')).json()) as { data: { key: string; enabled: boolean }[] }).data
    expect(listed.find((f) => f.key === 'ntlm_post_processing')?.enabled).toBe(false)
    await runAnalysisDirect(db())
    for (const k of ['CoerceAndRelayNTLMToSMB', 'CoerceAndRelayNTLMToLDAP', 'CoerceAndRelayNTLMToLDAPS', 'CoerceAndRelayNTLMToADCS']) expect(await edgesOfKind(k), k).toEqual([])
    // other derived relationships are untouched
    expect((await edgesOfKind('AdminTo')).length).toBeGreaterThan(0)

    const on = await admin.raw('PUT', '/api/v2/features/1/toggle')
    expect(await on.json()).toEqual({ data: { enabled: true } })
    await runAnalysisDirect(db())
    expect(await edgesOfKind('CoerceAndRelayNTLMToSMB')).toHaveLength(1)
  })
})

describe('GET /api/v2/config and PUT /api/v2/config', () => {
  it("lists the parameters EdgeHound honours, in BloodHound's shape, with their defaults (the session TTL from SESSION_TTL_HOURS)", async () => {
    const res = await admin.raw('GET', '/api/v2/config')
    expect(res.status).toBe(200)
    const { data } = (await res.json()) as { data: { key: string; name: string; description: string; value: unknown }[] }
    expect(data.map((p) => [p.key, p.value])).toEqual([
      ['auth.password_expiration_window', { duration: 'P90D' }],
      ['analysis.citrix_rdp_support', { enabled: true }],
      ['auth.session_ttl_hours', { hours: 8 }],
    ])
    for (const p of data) expect(p.name.length * p.description.length).toBeGreaterThan(0)
    const one = await admin.raw('GET', '/api/v2/config?parameter=eq:analysis.citrix_rdp_support')
    expect(((await one.json()) as { data: { key: string }[] }).data.map((p) => p.key)).toEqual(['analysis.citrix_rdp_support'])
    await expectEnvelope(await admin.raw('GET', '/api/v2/config?parameter=neq:analysis.citrix_rdp_support'), 400, 'the specified filter predicate is not supported for this column: parameter neq')
    await expectEnvelope(await admin.raw('GET', '/api/v2/config?parameter=eq:neo4j.configuration'), 400, 'Configuration parameter neo4j.configuration is not valid.')
  })

  it("refuses bad input with a 400 envelope (BloodHound's messages) and stores nothing", async () => {
    const put = (body: Record<string, unknown>) => admin.raw('PUT', '/api/v2/config', body)
    await expectEnvelope(await put({ key: 'prune.ttl', value: { base_ttl: 'P7D', has_session_edge_ttl: 'P3D' } }), 400, 'Configuration parameter prune.ttl is not valid.')
    await expectEnvelope(await put({ key: 'auth.session_ttl_hours', value: { hours: 1 } }), 400, 'Configuration parameter auth.session_ttl_hours is not valid.')
    await expectEnvelope(await put({ key: 'analysis.citrix_rdp_support' }), 400, 'missing or invalid property: value')
    await expectEnvelope(await put({ key: 'analysis.citrix_rdp_support', value: {} }), 400, 'missing or invalid property: value')
    await expectEnvelope(await put({ key: 'analysis.citrix_rdp_support', value: { enabled: false, extra: 1 } }), 400, 'value property contains an invalid field')
    await expectEnvelope(await put({ key: 'analysis.citrix_rdp_support', value: { enabled: 'no' } }), 400, 'value.enabled must be a boolean')
    await expectEnvelope(await put({ key: 'auth.password_expiration_window', value: { duration: '90 days' } }), 400, 'ISO 8601 duration')
    await expectEnvelope(await put({ key: 'auth.password_expiration_window', value: { duration: 'PT5M' } }), 400, 'at least one hour')
    await expectEnvelope(await put({ key: 7, value: { enabled: true } }), 400)
    await expectEnvelope(await admin.raw('PUT', '/api/v2/config', '{"key":', { contentType: 'application/json' }), 400)
    expect((await db().prepare('SELECT count(*) AS n FROM app_config_parameters').first<{ n: number }>())!.n).toBe(0)
  })

  it('writing needs app/WriteAppConfig (an Auditor reads, cannot write)', async () => {
    const { client: auditor } = await userWithRole('Auditor')
    expect((await auditor.raw('GET', '/api/v2/config')).status).toBe(200)
    await expectEnvelope(await auditor.raw('PUT', '/api/v2/config', { key: 'analysis.citrix_rdp_support', value: { enabled: false } }), 403)
    expect((await db().prepare('SELECT count(*) AS n FROM app_config_parameters').first<{ n: number }>())!.n).toBe(0)
  })

  it('the password expiration window is stored, audited in its batch, and applies to passwords set from then on', async () => {
    const expiryOf = async (id: string) => (await db().prepare('SELECT secret_expires_at AS e FROM users WHERE id = ?').bind(id).first<{ e: string | null }>())!.e
    const before = Date.now()
    const { userId: oldUser } = await userWithRole('Read-Only')
    const withDefault = Date.parse((await expiryOf(oldUser))!)
    expect(withDefault).toBeGreaterThanOrEqual(before + 90 * 86_400_000)
    expect(withDefault).toBeLessThanOrEqual(Date.now() + 90 * 86_400_000)

    const res = await admin.raw('PUT', '/api/v2/config', { key: 'auth.password_expiration_window', value: { duration: 'P1DT12H' } })
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ data: { key: 'auth.password_expiration_window', value: { duration: 'P1DT12H' } } })
    expect((await auditRows(res)).map((r) => [r.action, r.status, r.fields.parameter])).toEqual([
      ['UpdateParameter', 'intent', 'auth.password_expiration_window'],
      ['UpdateParameter', 'success', 'auth.password_expiration_window'],
    ])
    expect((await auditRows(res))[1].fields).toMatchObject({ value: { duration: 'P1DT12H' } })
    const listed = await admin.raw('GET', '/api/v2/config?parameter=eq:auth.password_expiration_window')
    expect(((await listed.json()) as { data: { value: unknown }[] }).data[0].value).toEqual({ duration: 'P1DT12H' })

    // a user created now, and a password set now, expire 36 hours later; the earlier password keeps its expiry
    const t0 = Date.now()
    const { userId, admin: adminSessionClient } = await userWithRole('Read-Only')
    const created = Date.parse((await expiryOf(userId))!)
    expect(created).toBeGreaterThanOrEqual(t0 + 36 * 3_600_000)
    expect(created).toBeLessThanOrEqual(Date.now() + 36 * 3_600_000)
    const t1 = Date.now()
    expect((await adminSessionClient.raw('PUT', `/api/v2/bloodhound-users/${oldUser}/secret`, { secret: 'another-correct-horse-1' })).status).toBe(200)
    const changed = Date.parse((await expiryOf(oldUser))!)
    expect(changed).toBeGreaterThanOrEqual(t1 + 36 * 3_600_000)
    expect(changed).toBeLessThanOrEqual(Date.now() + 36 * 3_600_000)
    // a password set through PATCH /api/v2/bloodhound-users/{id} too
    const t2 = Date.now()
    expect((await adminSessionClient.raw('PATCH', `/api/v2/bloodhound-users/${userId}`, { secret: 'patched-correct-horse-3' })).status).toBe(200)
    const patched = Date.parse((await expiryOf(userId))!)
    expect(patched).toBeGreaterThanOrEqual(t2 + 36 * 3_600_000)
    expect(patched).toBeLessThanOrEqual(Date.now() + 36 * 3_600_000)
    // a forced change still expires at once
    expect((await adminSessionClient.raw('PUT', `/api/v2/bloodhound-users/${oldUser}/secret`, { secret: 'yet-another-horse-2', needs_password_reset: true })).status).toBe(200)
    expect(Date.parse((await expiryOf(oldUser))!)).toBeLessThanOrEqual(Date.now())
  })

  it('analysis.citrix_rdp_support off: a computer with a Direct Access Users group gets the ordinary CanRDP rule at the next run', async () => {
    const C = 'S-1-5-21-4141-4242-4343'
    const ctx = `${C}-1501`
    const [uA, uB] = [`${C}-1701`, `${C}-1702`]
    const m = (oid: string, t = 'User') => ({ ObjectIdentifier: oid, ObjectType: t })
    const lg = (rid: string, name: string, results: unknown[]) => ({ ObjectIdentifier: `${ctx}-${rid}`, Name: `${name}@${ctx}`, Collected: true, Results: results })
    const meta = (type: string, n: number) => ({ methods: 46067, type, count: n, version: 6 })
    await ingestZip({
      'cfg_computers.json': {
        meta: meta('computers', 1),
        data: [
          {
            ObjectIdentifier: ctx,
            Properties: { name: 'CTXCFG.CFG.EXAMPLE', domainsid: C },
            // the Remote Desktop Users group holds the logon right itself: without Citrix, its members get CanRDP
            LocalGroups: [lg('555', 'REMOTE DESKTOP USERS', [m(uA), m(uB)]), lg('1000', 'DIRECT ACCESS USERS', [m(uA)])],
            UserRights: [{ Privilege: 'SeRemoteInteractiveLogonRight', Collected: true, Results: [m(`${ctx}-555`, 'LocalGroup')] }],
          },
        ],
      },
    })
    const rdp = async () => (await edgesOfKind('CanRDP')).filter((e) => e.endsWith(`->${ctx}`)).map((e) => e.split('->')[0])
    expect(await rdp()).toEqual([uA]) // Citrix: uB is not a Direct Access User

    const off = await admin.raw('PUT', '/api/v2/config', { key: 'analysis.citrix_rdp_support', value: { enabled: false } })
    expect(off.status).toBe(200)
    await runAnalysisDirect(db())
    expect(await rdp()).toEqual([uA, uB].sort())

    expect((await admin.raw('PUT', '/api/v2/config', { key: 'analysis.citrix_rdp_support', value: { enabled: true } })).status).toBe(200)
    await runAnalysisDirect(db())
    expect(await rdp()).toEqual([uA])
  })
})
