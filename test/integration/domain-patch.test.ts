/**
 * PATCH /api/v2/domains/{object_id} (BloodHound's PatchDomain): sets a Domain node's `collected` property, which
 * post-processing reads (DCSync only for collected domains), audited; BloodHound's messages for bad input.
 */
import { beforeAll, describe, expect, it } from 'vitest'
import { adminToken, env, expectEnvelope, userWithRole } from '../helpers'
import { endUploadJob, startUploadJob, uploadFile } from '../../src/client/graph'
import type { EdgeHoundClient } from '../../src/client'
import { runAnalysisDirect, settleRuns } from '../fixtures/findings/helpers'

const db = () => (env as unknown as { DB: D1Database }).DB
const DOM = 'S-1-5-21-7070-7171-7272'
const SYNC = `${DOM}-1500`
const OTHER = 'S-1-5-21-8080-8181-8282'

const meta = (type: string, n: number) => ({ methods: 46067, type, count: n, version: 6 })
const ace = (sid: string, right: string) => ({ PrincipalSID: sid, PrincipalType: 'User', RightName: right, IsInherited: false })
const domain = (sid: string, name: string, aces: unknown[] = []) => ({
  ObjectIdentifier: sid,
  Properties: { name, domain: name, domainsid: sid, collected: false },
  Aces: aces,
  Trusts: [],
  Links: [],
  ChildObjects: [],
  GPOChanges: { AffectedComputers: [], DcomUsers: [], LocalAdmins: [], PSRemoteUsers: [], RemoteDesktopUsers: [] },
  IsDeleted: false,
  IsACLProtected: false,
  ContainedBy: null,
})

let admin: EdgeHoundClient

async function collectedProp(objectid: string): Promise<unknown> {
  const r = await db().prepare('SELECT properties FROM nodes WHERE objectid = ?').bind(objectid).first<{ properties: string }>()
  return (JSON.parse(r!.properties) as Record<string, unknown>).collected
}

async function dcsync(): Promise<boolean> {
  const r = await db()
    .prepare(`SELECT 1 FROM edges e JOIN nodes s ON s.id = e.start_id JOIN nodes t ON t.id = e.end_id WHERE s.objectid = ?1 AND e.kind = 'DCSync' AND t.objectid = ?2`)
    .bind(SYNC, DOM)
    .first()
  return r !== null
}

beforeAll(async () => {
  admin = await adminToken()
  const job = (await startUploadJob(admin)).data.id
  const domains = { data: [domain(DOM, 'PATCH.EXAMPLE', [ace(SYNC, 'GetChanges'), ace(SYNC, 'GetChangesAll')]), domain(OTHER, 'OTHER.EXAMPLE')], meta: meta('domains', 2) }
  const users = { data: [{ ObjectIdentifier: SYNC, Properties: { name: 'SYNC@PATCH.EXAMPLE', domainsid: DOM }, Aces: [], IsDeleted: false, IsACLProtected: false, ContainedBy: null }], meta: meta('users', 1) }
  await uploadFile(admin, job, JSON.stringify(domains), { contentType: 'application/json', fileName: 'domains.json' })
  await uploadFile(admin, job, JSON.stringify(users), { contentType: 'application/json', fileName: 'users.json' })
  await endUploadJob(admin, job)
  await settleRuns(db())
  await runAnalysisDirect(db())
})

describe('PATCH /api/v2/domains/{object_id}', () => {
  it("sets the domain's collected flag, which post-processing honours from the next analysis run (DCSync for collected domains only)", async () => {
    expect(await collectedProp(DOM)).toBe(false)
    expect(await dcsync()).toBe(false)
    const res = await admin.raw('PATCH', `/api/v2/domains/${DOM}`, { collected: true })
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ data: { collected: true } })
    expect(await collectedProp(DOM)).toBe(true)
    await runAnalysisDirect(db())
    expect(await dcsync()).toBe(true)
    // and back: the derived edge goes with the next run
    expect((await admin.raw('PATCH', `/api/v2/domains/${DOM}`, { collected: false })).status).toBe(200)
    expect(await collectedProp(DOM)).toBe(false)
    await runAnalysisDirect(db())
    expect(await dcsync()).toBe(false)
  })

  it('writes a MutateGraph audit entry naming the domain, with its outcome in the change batch', async () => {
    const res = await admin.raw('PATCH', `/api/v2/domains/${DOM}`, { collected: true })
    const rows = await db()
      .prepare(`SELECT action, status, fields, environments FROM audit_logs WHERE request_id = ? ORDER BY id`)
      .bind(res.headers.get('requestid'))
      .all<{ action: string; status: string; fields: string; environments: string }>()
    expect(rows.results.map((r) => [r.action, r.status])).toEqual([
      ['MutateGraph', 'intent'],
      ['MutateGraph', 'success'],
    ])
    expect(JSON.parse(rows.results[1].fields)).toMatchObject({ objectid: DOM, collected: true })
    expect(JSON.parse(rows.results[1].environments)).toEqual([DOM])
  })

  it("BloodHound's answers to bad input: no field, not a boolean, not JSON; a node that is not a domain or does not exist is 404", async () => {
    await expectEnvelope(await admin.raw('PATCH', `/api/v2/domains/${DOM}`, {}), 400, 'no domain fields sent for patching')
    await expectEnvelope(await admin.raw('PATCH', `/api/v2/domains/${DOM}`, { collected: 'yes' }), 400, 'collected must be a boolean')
    await expectEnvelope(await admin.raw('PATCH', `/api/v2/domains/${DOM}`, '{"collected":', { contentType: 'application/json' }), 400)
    await expectEnvelope(await admin.raw('PATCH', `/api/v2/domains/${SYNC}`, { collected: true }), 404, 'node not found')
    await expectEnvelope(await admin.raw('PATCH', '/api/v2/domains/S-1-5-21-0-0-0', { collected: true }), 404, 'node not found')
  })

  it('needs graph/Ingest (a Read-Only user is refused) and access to the domain (404 outside it, nothing changed)', async () => {
    const { client: ro } = await userWithRole('Read-Only')
    await expectEnvelope(await ro.raw('PATCH', `/api/v2/domains/${OTHER}`, { collected: true }), 403)
    const { client: restricted } = await userWithRole('User', { all_environments: false, environment_access: [DOM] })
    await expectEnvelope(await restricted.raw('PATCH', `/api/v2/domains/${OTHER}`, { collected: true }), 404, 'node not found')
    expect(await collectedProp(OTHER)).toBe(false)
    expect((await restricted.raw('PATCH', `/api/v2/domains/${DOM}`, { collected: true })).status).toBe(200)
  })
})
