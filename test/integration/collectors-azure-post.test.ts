/**
 * Azure post-processing (src/collectors/azurehound/post.store.ts) on an own AzureHound fixture
 * (test/fixtures/azurehound/roles.ts): the whole set of derived relationships is compared with the one
 * worked out by hand from BloodHound's rules (packages/go/analysis/azure/post.go, role.go), edge by edge,
 * negatives included; then the findings that these relationships produce.
 */
import { beforeAll, describe, expect, it } from 'vitest'
import { adminToken, env } from '../helpers'
import { endUploadJob, ingest, startUploadJob } from '../../src/client/graph'
import type { EdgeHoundClient } from '../../src/client'
import { requestAnalysis } from '../../src/client/findings'
import { waitForRun } from '../fixtures/findings/helpers'
import { postProcess } from '../../src/collectors/postprocess'
import { file, gid, noPropGroup, ONPREM, P, ROLES } from '../fixtures/azurehound/roles'

const db = () => (env as unknown as { DB: D1Database }).DB

const USERS = ['uGa', 'uRa', 'uHelp', 'uAuth', 'uUserAdm', 'uPwd', 'uPt1', 'uReader', 'uRr', 'uGadm', 'uPlain', 'uRagm', 'uNra', 'uExchange']
const GROUPS = ['gPriv', 'gRaEmpty', 'gTeam', 'gNoProp']
const SPS = ['spMg', 'spApp', 'spGraph', 'spIntune']
const APPS_AND_SPS = ['app1', ...SPS]

/** Expected derived relationships, as "start KIND end" with the fixture's short names. */
function expected(): string[] {
  const e: string[] = []
  const add = (start: string, kind: string, ends: string[]) => ends.forEach((end) => e.push(`${start} ${kind} ${end}`))
  // Tenant administrators: the direct holder, the role-assignable group holding the role and its user member;
  // the device in that group is not a principal, the member of the non role-assignable group inherits nothing
  add('uGa', 'AZGlobalAdmin', ['tenant'])
  add('gPriv', 'AZPrivilegedRoleAdmin', ['tenant'])
  add('uRa', 'AZPrivilegedRoleAdmin', ['tenant'])
  // From roles to every application and service principal of the tenant (the apps SharpHound-style
  // service principals imply are not contained by the tenant: not targets)
  add('role:appAdm', 'AZAddSecret', APPS_AND_SPS)
  add('role:hybrid', 'AZAddOwner', APPS_AND_SPS)
  add('role:pt1', 'AZAddOwner', APPS_AND_SPS)
  // Password reset tiers
  add('role:ga', 'AZResetPassword', USERS)
  // Helpdesk: users holding no role or only {Reports Reader, Message Center Reader, Helpdesk, Guest Inviter,
  // Directory Readers, Password Administrator, Usage Summary Reports Reader}; never role-assignable group members
  add('role:help', 'AZResetPassword', ['uHelp', 'uPwd', 'uReader', 'uRr', 'uPlain', 'uNra'])
  add('role:auth', 'AZResetPassword', ['uAuth', 'uPwd', 'uReader', 'uRr', 'uPlain', 'uNra'])
  add('role:userAdm', 'AZResetPassword', ['uHelp', 'uUserAdm', 'uPwd', 'uReader', 'uRr', 'uGadm', 'uPlain', 'uNra'])
  add('role:pwd', 'AZResetPassword', ['uPwd', 'uReader', 'uPlain', 'uNra'])
  add('role:pt1', 'AZResetPassword', ['uPlain', 'uNra'])
  // AZAddMembers: Global / Privileged Role Administrator users → every group; Groups / User Administrator
  // users and the Intune Administrator service principal → groups whose isassignabletorole is false only
  add('uGa', 'AZAddMembers', GROUPS)
  add('uRa', 'AZAddMembers', GROUPS)
  add('uGadm', 'AZAddMembers', ['gTeam'])
  add('uUserAdm', 'AZAddMembers', ['gTeam'])
  add('spIntune', 'AZAddMembers', ['gTeam'])
  add('spIntune', 'AZExecuteCommand', ['devWin'])
  // Microsoft Graph app role grants
  add('spMg', 'AZMGGrantAppRoles', ['tenant'])
  add('spMg', 'AZMGGrantRole', Object.keys(ROLES).map((r) => `role:${r}`))
  add('spMg', 'AZMGAddSecret', APPS_AND_SPS)
  add('spMg', 'AZMGAddOwner', [...APPS_AND_SPS, ...GROUPS])
  add('spMg', 'AZMGAddMember', GROUPS)
  add('spApp', 'AZMGAddSecret', APPS_AND_SPS)
  add('spApp', 'AZMGAddOwner', APPS_AND_SPS)
  add('spApp', 'AZMGAddMember', ['gTeam'])
  // Hybrid: the synchronised user and its AD account, both ways (uAuth: synchronisation off)
  add('adGa', 'SyncedToEntraUser', ['uGa'])
  add('uGa', 'SyncedToADUser', ['adGa'])
  return e.sort()
}

let admin: EdgeHoundClient
const names = new Map<string, string>() // graph object id → short name

beforeAll(async () => {
  admin = await adminToken()
  for (const k of Object.keys(P)) names.set(gid(k), k)
  for (const r of Object.keys(ROLES)) names.set(gid(`role:${r}`), `role:${r}`)
  for (const k of Object.keys(ONPREM)) names.set(gid(k), k)
  names.set(gid('tenant'), 'tenant')
  const job = (await startUploadJob(admin)).data
  const res = await admin.raw('POST', `/api/v2/file-upload/${job.id}`, JSON.stringify(file), { contentType: 'application/json', headers: { 'X-File-Upload-Name': 'fabrikam.json' } })
  expect(res.status).toBe(202)
  expect((await endUploadJob(admin, job.id)).data).toMatchObject({ status: 2, failed_files: 0 })
  await ingest(admin, noPropGroup)
})

async function derivedSet(): Promise<string[]> {
  const rows = await db()
    .prepare(`SELECT s.objectid AS s, e.kind AS k, t.objectid AS t FROM edges e JOIN nodes s ON s.id = e.start_id JOIN nodes t ON t.id = e.end_id WHERE e.derived = 1`)
    .all<{ s: string; k: string; t: string }>()
  return rows.results.filter((r) => names.has(r.s) && names.has(r.t)).map((r) => `${names.get(r.s)} ${r.k} ${names.get(r.t)}`).sort()
}

describe('Azure post-processing on the FABRIKAM fixture', () => {
  it('derives exactly the relationships BloodHound derives, no more', async () => {
    await postProcess(db(), '2026-11-26T00:00:00.000Z')
    const got = await derivedSet()
    const want = expected()
    expect(got.filter((x) => !want.includes(x))).toEqual([]) // nothing extra
    expect(want.filter((x) => !got.includes(x))).toEqual([]) // nothing missing
    expect(got).toHaveLength(116)
  })

  it('negatives, one by one', async () => {
    const got = new Set(await derivedSet())
    for (const absent of [
      'uNra AZPrivilegedRoleAdmin tenant', // member of a group that is not role-assignable: no inherited role
      'gTeam AZAddMembers gTeam',
      'devLinux AZPrivilegedRoleAdmin tenant', // a device in the role-assignable group is not a principal
      'role:help AZResetPassword uRagm', // member of a role-assignable group (even one holding no role)
      'role:help AZResetPassword uRa',
      'role:help AZResetPassword uAuth', // Authentication Administrator is not in Helpdesk's tier
      'role:help AZResetPassword uExchange', // a role outside every tier
      'role:pwd AZResetPassword uHelp', // Helpdesk is not in Password Administrator's tier
      'role:pt1 AZResetPassword uReader', // Partner Tier1 Support: only users without any role
      'uGadm AZAddMembers gNoProp', // no isassignabletorole property: not "false"
      'uGadm AZAddMembers gPriv',
      'gPriv AZAddMembers gTeam', // a group holding Privileged Role Administrator: only users and service principals
      'spIntune AZExecuteCommand devLinux',
      'spApp AZMGAddOwner gTeam', // Directory.ReadWrite.All on a principal outside the tenant counts for nothing
      'spApp AZMGGrantRole role:ga',
      'role:exchange AZAddOwner app1',
      'adAuth SyncedToEntraUser uAuth', // on-premises SID, synchronisation off
      'uAuth SyncedToADUser adAuth',
    ])
      expect(got.has(absent), absent).toBe(false)
  })

  it('a run replaces the derived set: a removed role assignment removes what it gave', async () => {
    await db()
      .prepare(`DELETE FROM edges WHERE kind = 'AZHasRole' AND start_id = (SELECT id FROM nodes WHERE objectid = ?1)`)
      .bind(gid('uGadm'))
      .run()
    await postProcess(db(), '2026-11-26T00:01:00.000Z')
    const got = new Set(await derivedSet())
    expect(got.has('uGadm AZAddMembers gTeam')).toBe(false)
    expect(got.has('role:help AZResetPassword uGadm')).toBe(true) // now a user without any role
    expect(got.has('role:pt1 AZResetPassword uGadm')).toBe(true)
  })

  it('feeds the findings: T0AZAddOwner, T0AZResetPassword and T0AZAddMembers from the derived relationships', async () => {
    // tag the application, a plain user and the Team group Tier Zero, as an operator does
    await ingest(admin, {
      graph: {
        nodes: [
          { id: gid('app1'), kinds: ['AZApp'], properties: { system_tags: 'admin_tier_0' } },
          { id: gid('uPlain'), kinds: ['AZUser'], properties: { system_tags: 'admin_tier_0' } },
          { id: gid('gTeam'), kinds: ['AZGroup'], properties: { system_tags: 'admin_tier_0' } },
        ],
      },
    })
    const run = await requestAnalysis(admin)
    expect((await waitForRun(db(), run.data.id)).status).toBe('complete')
    const tenant = gid('tenant')
    const types = (await admin.call<{ data: string[] }>('GET', `/api/v2/domains/${tenant}/available-types`)).data
    expect(types).toEqual(expect.arrayContaining(['T0AZAddOwner', 'T0AZResetPassword', 'T0AZAddMembers']))
    const from = async (finding: string) => JSON.stringify((await admin.call<{ data: unknown[] }>('GET', `/api/v2/domains/${tenant}/details?finding=${finding}&limit=1000`)).data)
    const addOwner = await from('T0AZAddOwner')
    expect(addOwner).toContain(gid('role:hybrid'))
    expect(addOwner).toContain(gid('role:pt1'))
    const reset = await from('T0AZResetPassword')
    for (const r of ['help', 'auth', 'userAdm', 'pwd', 'pt1']) expect(reset).toContain(gid(`role:${r}`))
    expect(reset).not.toContain(gid('role:ga')) // Global Administrator is itself Tier Zero
    const addMembers = await from('T0AZAddMembers')
    for (const p of ['uUserAdm', 'spIntune', 'uGa', 'uRa']) expect(addMembers, p).toContain(gid(p))
    expect(addMembers).not.toContain(gid('uGadm')) // its role assignment was removed above
  })
})
