/**
 * SharpHound CE files through the ordinary file-upload jobs: detection by content, conversion rule by
 * rule (BloodHound's), placeholders, zips, bad input.
 */
import { beforeAll, describe, expect, it } from 'vitest'
import { strToU8, zipSync } from 'fflate'
import { adminToken, env, expectEnvelope } from '../helpers'
import { availableDomains, endUploadJob, startUploadJob, uploadFile, listUploadJobs } from '../../src/client/graph'
import type { EdgeHoundClient } from '../../src/client'
import { D, PARTNER, CHILD, SID, OLD, OLD_SID, file, users, groups, v5Files, v6Files } from '../fixtures/sharphound/testlab'
import { openFindingRows, runAnalysisDirect, settleRuns } from '../fixtures/findings/helpers'

const db = () => (env as unknown as { DB: D1Database }).DB

interface NodeRowDb {
  objectid: string
  kind: string
  kinds: string
  name: string | null
  environment_id: string | null
  environment_kind: string | null
  properties: string
}

async function node(objectid: string) {
  const n = await db().prepare('SELECT * FROM nodes WHERE objectid = ?').bind(objectid).first<NodeRowDb>()
  return n ? { ...n, kinds: JSON.parse(n.kinds) as string[], props: JSON.parse(n.properties) as Record<string, unknown> } : null
}

/** The relationship start -kind-> end, its properties, or null. */
async function rel(start: string, kind: string, end: string): Promise<Record<string, unknown> | null> {
  const r = await db()
    .prepare(
      `SELECT e.properties FROM edges e JOIN nodes s ON s.id = e.start_id JOIN nodes t ON t.id = e.end_id
       WHERE s.objectid = ?1 AND e.kind = ?2 AND t.objectid = ?3`,
    )
    .bind(start, kind, end)
    .first<{ properties: string }>()
  return r ? (JSON.parse(r.properties) as Record<string, unknown>) : null
}

async function kindsBetween(start: string, end: string): Promise<string[]> {
  const r = await db()
    .prepare(`SELECT e.kind FROM edges e JOIN nodes s ON s.id = e.start_id JOIN nodes t ON t.id = e.end_id WHERE s.objectid = ?1 AND t.objectid = ?2 ORDER BY e.kind`)
    .bind(start, end)
    .all<{ kind: string }>()
  return r.results.map((x) => x.kind)
}

function zip(files: Record<string, unknown>): Uint8Array {
  return zipSync(Object.fromEntries(Object.entries(files).map(([k, v]) => [k, strToU8(typeof v === 'string' ? v : JSON.stringify(v))])))
}

let admin: EdgeHoundClient

beforeAll(async () => {
  admin = await adminToken()
})

describe('SharpHound v6: detection and conversion', () => {
  let jobId: number
  beforeAll(async () => {
    jobId = (await startUploadJob(admin)).data.id
    const res = await uploadFile(admin, jobId, zip(v6Files()), { contentType: 'application/zip', fileName: 'testlab.zip' })
    expect(res.data).toMatchObject({ files: 13, unmatched_edges: 0, errors: [] })
    await endUploadJob(admin, jobId)
  })

  it('writes nodes with BloodHound kinds, lower-case properties and the domain as environment', async () => {
    const alice = await node(SID.alice)
    expect(alice).toMatchObject({ kind: 'User', name: 'ALICE@TESTLAB.LOCAL', environment_id: D })
    expect(alice!.kinds).toEqual(['User', 'Base'])
    expect(alice!.props).toMatchObject({ enabled: true, hasspn: true, domainsid: D })
    const domain = await node(D)
    expect(domain).toMatchObject({ kind: 'Domain', environment_kind: 'Domain', environment_id: D, name: 'TESTLAB.LOCAL' })
    expect(domain!.props.machineaccountquota).toBe(10) // string → integer, as BloodHound converts it
    expect((await node(SID.admins))!.kind).toBe('Group')
    expect((await node(SID.gpo))!.kinds).toEqual(['GPO', 'Base'])
    expect((await node(SID.ou))!.kind).toBe('OU')
    expect((await node(SID.users))!.kind).toBe('Container')
    for (const [id, kind] of [[SID.rootca, 'RootCA'], [SID.ntauth, 'NTAuthStore'], [SID.eca, 'EnterpriseCA'], [SID.template, 'CertTemplate'], [SID.aia, 'AIACA'], [SID.policy, 'IssuancePolicy']])
      expect((await node(id))!.kinds).toEqual([kind, 'Base'])
    const sql = await node(SID.sql01)
    expect(sql!.props).toMatchObject({ ldapavailable: true, smbsigning: false, hasura: true, haslaps: true })
    expect(sql!.props.ldapenabled).toBeUndefined()
  })

  it('ACEs: one relationship per RightName with isacl / isinherited; self and unknown rights skipped', async () => {
    // `inheritancehash` is on every ACE relationship, '' when the ACE has none (as BloodHound writes it)
    expect(await rel(SID.da, 'GenericAll', SID.alice)).toEqual({ isacl: true, isinherited: false, inheritancehash: '' })
    expect(await rel(SID.it, 'ForceChangePassword', SID.alice)).toEqual({ isacl: true, isinherited: true, inheritancehash: 'H1' })
    expect(await rel(SID.alice, 'GenericWrite', SID.alice)).toBeNull()
    expect(await rel(SID.it, 'WriteDacl', D)).toEqual({ isacl: true, isinherited: true, inheritancehash: 'H2' })
    expect(await rel(D, 'GenericAll', D)).toBeNull()
    expect(await kindsBetween(SID.it, D)).not.toContain('NotARight')
    expect(await rel(SID.syncers, 'GetChanges', D)).toMatchObject({ isacl: true })
    expect(await rel(SID.syncers, 'GetChangesAll', D)).toMatchObject({ isacl: true })
    expect(await rel(SID.it, 'AddMember', SID.helpdesk)).toMatchObject({ isacl: true })
    expect(await rel(SID.it, 'GenericWrite', SID.gpo)).toMatchObject({ isacl: true })
    expect(await rel(SID.du, 'Enroll', SID.template)).toMatchObject({ isacl: true })
  })

  it('Owns / WriteOwner are written raw and the owner becomes ownersid', async () => {
    expect((await node(SID.bob))!.props.ownersid).toBe(SID.da)
    expect((await node(D))!.props.ownersid).toBe(SID.da)
  })

  it('memberships, containment, GPLinks', async () => {
    expect(await rel(SID.bob, 'MemberOf', SID.da)).toEqual({ isacl: false, isprimarygroup: false })
    expect(await rel(SID.alice, 'MemberOf', SID.du)).toEqual({ isacl: false, isprimarygroup: true })
    expect(await rel(SID.da, 'MemberOf', SID.admins)).toMatchObject({ isacl: false })
    expect(await rel(SID.users, 'Contains', SID.alice)).toEqual({ isacl: false })
    expect(await rel(D, 'Contains', SID.ou)).toEqual({ isacl: false })
    expect(await rel(D, 'Contains', SID.users)).toEqual({ isacl: false })
    expect(await rel(SID.ou, 'Contains', SID.ws2)).toEqual({ isacl: false })
    expect(await rel(SID.gpo, 'GPLink', D)).toEqual({ isacl: false, enforced: true })
    expect(await rel(SID.gpo, 'GPLink', SID.ou)).toEqual({ isacl: false, enforced: false })
  })

  it('trusts: SameForestTrust / CrossForestTrust in the directions of the trust, with its properties', async () => {
    expect(await rel(PARTNER, 'CrossForestTrust', D)).toEqual({ isacl: false, trusttype: 'External', transitive: false, trustattributesinbound: 4, tgtdelegation: false })
    expect(await rel(D, 'CrossForestTrust', PARTNER)).toEqual({ isacl: false, spoofsidhistoryblocked: false, trusttype: 'External', transitive: false, trustattributesoutbound: 4 })
    expect(await rel(PARTNER, 'SpoofSIDHistory', D)).toEqual({ isacl: false, trusttype: 'External' })
    expect(await rel(D, 'SameForestTrust', CHILD)).toMatchObject({ trusttype: 'ParentChild', transitive: true, spoofsidhistoryblocked: true })
    expect(await rel(CHILD, 'SameForestTrust', D)).toBeNull()
    expect(await node(PARTNER)).toMatchObject({ kind: 'Domain', name: 'PARTNER.LOCAL', environment_kind: 'Domain' })
    // listed as environments, but only TESTLAB.LOCAL was collected
    const domains = (await availableDomains(admin)).data
    expect(domains.find((d) => d.id === D)).toMatchObject({ name: 'TESTLAB.LOCAL', type: 'active-directory', collected: true })
    expect(domains.find((d) => d.id === PARTNER)).toMatchObject({ name: 'PARTNER.LOCAL', collected: false })
  })

  it('computers: sessions, delegation, DCFor, CoerceToTGT, SQLAdmin, SID history', async () => {
    expect(await rel(SID.dc01, 'HasSession', SID.bob)).toEqual({ isacl: false })
    expect(await rel(SID.sql01, 'HasSession', SID.alice)).toEqual({ isacl: false })
    expect(await rel(SID.sql01, 'HasSession', SID.eve)).toBeNull() // RegistrySessions not collected
    expect(await rel(SID.dc01, 'DCFor', D)).toEqual({ isacl: false })
    expect(await rel(SID.dc01, 'CoerceToTGT', D)).toBeNull() // never from a DC
    expect(await rel(SID.sql01, 'CoerceToTGT', D)).toEqual({ isacl: false })
    expect(await rel(SID.bob, 'CoerceToTGT', D)).toEqual({ isacl: false })
    expect(await rel(SID.alice, 'AllowedToAct', SID.sql01)).toEqual({ isacl: false })
    expect(await rel(SID.alice, 'AllowedToDelegate', SID.sql01)).toEqual({ isacl: false })
    expect(await rel(SID.alice, 'SQLAdmin', SID.sql01)).toEqual({ isacl: true, port: 1433 })
    expect(await rel(SID.bob, 'HasSIDHistory', SID.partnerAdmin)).toEqual({ isacl: false })
  })

  it('local groups: ADLocalGroup nodes, LocalToComputer, MemberOfLocalGroup, RemoteInteractiveLogonRight', async () => {
    const g = await node(`${SID.sql01}-544`)
    expect(g).toMatchObject({ kind: 'ADLocalGroup', name: 'ADMINISTRATORS@SQL01.TESTLAB.LOCAL' })
    expect(await rel(`${SID.sql01}-544`, 'LocalToComputer', SID.sql01)).toEqual({ isacl: false })
    expect(await rel(SID.helpdesk, 'MemberOfLocalGroup', `${SID.sql01}-544`)).toEqual({ isacl: false })
    expect(await node(`${SID.sql01}-500`)).toMatchObject({ name: 'ADMINISTRATOR@SQL01' })
    expect(await node(`${SID.sql01}-562`)).toBeNull() // empty group: skipped
    expect(await rel(SID.alice, 'RemoteInteractiveLogonRight', SID.sql01)).toEqual({ isacl: false })
    // GPO changes: local groups of the affected computers
    expect(await rel(SID.helpdesk, 'MemberOfLocalGroup', `${SID.ws2}-544`)).toEqual({ isacl: false })
    expect(await rel(SID.bob, 'MemberOfLocalGroup', `${SID.ws2}-580`)).toEqual({ isacl: false })
    expect(await rel(SID.eve, 'MemberOfLocalGroup', `${SID.ws2}-562`)).toEqual({ isacl: false })
  })

  it('ADCS structural relationships', async () => {
    expect(await rel(SID.rootca, 'RootCAFor', D)).toEqual({ isacl: false })
    expect(await rel(SID.ntauth, 'NTAuthStoreFor', D)).toEqual({ isacl: false })
    expect(await rel(SID.template, 'PublishedTo', SID.eca)).toEqual({ isacl: false })
    expect(await rel(SID.sql01, 'HostsCAService', SID.eca)).toEqual({ isacl: false })
    expect(await rel(SID.policy, 'OIDGroupLink', SID.lapssync)).toEqual({ isacl: false })
    expect(await rel(SID.da, 'ManageCA', SID.eca)).toMatchObject({ isacl: true }) // from CA security
    expect(await rel(SID.du, 'Enroll', SID.eca)).toBeNull() // replaced by the collected CA security
    expect(await rel(SID.it, 'GenericAll', SID.eca)).toMatchObject({ isacl: true })
    expect(await rel(SID.users, 'Contains', SID.aia)).toEqual({ isacl: false })
  })

  it('records the job like any upload', async () => {
    const job = (await listUploadJobs(admin)).data.find((j) => j.id === jobId)!
    expect(job).toMatchObject({ status: 2, total_files: 1, failed_files: 0, unmatched_edges: 0 })
    expect(job.nodes_received).toBeGreaterThan(20)
  })
})

describe('SharpHound v6: post-processing and findings (after the ingest above)', () => {
  let summary: Awaited<ReturnType<typeof runAnalysisDirect>>
  /** Ending the job requested a run from the Analyzer object: let it finish, then run one here. */
  async function analyse() {
    await settleRuns(db())
    return runAnalysisDirect(db())
  }
  beforeAll(async () => {
    summary = await analyse()
  })

  const derived = async (start: string, kind: string, end: string) => {
    const r = await db()
      .prepare(
        `SELECT e.derived, e.properties FROM edges e JOIN nodes s ON s.id = e.start_id JOIN nodes t ON t.id = e.end_id
         WHERE s.objectid = ?1 AND e.kind = ?2 AND t.objectid = ?3`,
      )
      .bind(start, kind, end)
      .first<{ derived: number; properties: string }>()
    return r ? { derived: r.derived, props: JSON.parse(r.properties) as Record<string, unknown> } : null
  }

  it('DCSync: a group holding GetChanges and GetChangesAll; a user holding them through two groups; not their members', async () => {
    expect(await derived(SID.syncers, 'DCSync', D)).toEqual({ derived: 1, props: { isacl: false } })
    expect(await derived(SID.admins, 'DCSync', D)).toMatchObject({ derived: 1 })
    expect(await derived(SID.alice, 'DCSync', D)).toMatchObject({ derived: 1 }) // REPL (GetChanges) + IT (GetChangesAll)
    expect(await derived(SID.eve, 'DCSync', D)).toBeNull() // reaches the domain through SYNCERS
    expect(await derived(SID.da, 'DCSync', D)).toBeNull() // through ADMINISTRATORS
    expect(await derived(SID.it, 'DCSync', D)).toBeNull() // GetChangesAll only
    expect(await derived(SID.repl, 'DCSync', D)).toBeNull() // GetChanges only
    expect(summary.postProcessing.derivedEdges).toBeGreaterThan(10)
  })

  it('SyncLAPSPassword: GetChanges + GetChangesInFilteredSet → every LAPS computer of the domain', async () => {
    expect(await derived(SID.lapssync, 'SyncLAPSPassword', SID.sql01)).toMatchObject({ derived: 1 })
    expect(await derived(SID.lapssync, 'SyncLAPSPassword', SID.ws2)).toBeNull() // no LAPS
  })

  it('local groups → AdminTo / CanPSRemote / ExecuteDCOM / CanRDP (with user rights collected: only right holders)', async () => {
    expect(await derived(SID.helpdesk, 'AdminTo', SID.sql01)).toEqual({ derived: 1, props: { isacl: false } })
    expect(await derived(SID.helpdesk, 'AdminTo', SID.ws2)).toMatchObject({ derived: 1 }) // GPO changes
    // a local user: BloodHound's current PostLocalGroups takes every member of the local group (older versions skipped it)
    expect(await derived(`${SID.sql01}-500`, 'AdminTo', SID.sql01)).toMatchObject({ derived: 1 })
    expect(await derived(SID.bob, 'CanPSRemote', SID.sql01)).toMatchObject({ derived: 1 })
    expect(await derived(SID.bob, 'CanPSRemote', SID.ws2)).toMatchObject({ derived: 1 })
    expect(await derived(SID.eve, 'ExecuteDCOM', SID.ws2)).toMatchObject({ derived: 1 })
    expect(await derived(SID.alice, 'CanRDP', SID.sql01)).toMatchObject({ derived: 1 }) // member and holds the logon right
    expect(await derived(SID.eve, 'CanRDP', SID.sql01)).toBeNull() // member without the logon right
    // user rights not collected on WS2: BloodHound enforces them (enforceURA), nobody is known to hold the logon right
    expect(await derived(SID.alice, 'CanRDP', SID.ws2)).toBeNull()
    expect(await rel(SID.alice, 'MemberOfLocalGroup', `${SID.ws2}-555`)).not.toBeNull() // the membership itself is there
  })

  it('ADCS certificate relationships: IssuedSignedBy (certificate chain), TrustedForNTAuth (NTAuth thumbprints)', async () => {
    expect(await derived(SID.eca, 'IssuedSignedBy', SID.rootca)).toEqual({ derived: 1, props: { isacl: false } })
    expect(await derived(SID.rootca, 'IssuedSignedBy', SID.rootca)).toBeNull() // self-signed
    expect(await derived(SID.eca, 'TrustedForNTAuth', SID.ntauth)).toMatchObject({ derived: 1 })
    expect(await derived(SID.eca, 'EnterpriseCAFor', SID.rootca)).toBeNull() // different certificates
    expect(await derived(SID.eca, 'EnterpriseCAFor', SID.rootca2)).toMatchObject({ derived: 1 }) // the same certificate
    expect(await derived(SID.rootca2, 'IssuedSignedBy', SID.rootca)).toMatchObject({ derived: 1 })
  })

  it('OwnsRaw / WriteOwnerRaw resolve to Owns / WriteOwner (raw edges kept, non-traversable)', async () => {
    expect(await derived(SID.da, 'OwnsRaw', SID.bob)).toEqual({ derived: 0, props: { isacl: true, isinherited: false } })
    expect(await derived(SID.da, 'Owns', SID.bob)).toEqual({ derived: 1, props: { isacl: true, isinherited: false } })
    expect(await derived(SID.it, 'WriteOwner', SID.bob)).toMatchObject({ derived: 1 })
    expect(await derived(SID.da, 'Owns', D)).toMatchObject({ derived: 1 })
  })

  it('a second run replaces the derived set: same edges, nothing duplicated, ingested edges untouched', async () => {
    const count = async () => (await db().prepare(`SELECT count(*) AS n, sum(derived) AS d FROM edges`).first<{ n: number; d: number }>())!
    const before = await count()
    await analyse()
    expect(await count()).toEqual(before)
  })

  it('the findings engine produces findings from this data unchanged', async () => {
    const rows = (await openFindingRows(db())).filter((r) => r.deleted_at === null)
    const has = (finding: string, from: string, to = '') => rows.some((r) => r.finding === finding && r.from_objectid === from && r.to_objectid === to)
    expect(has('T0DCSync', SID.syncers, D)).toBe(true)
    expect(has('T0DCSync', SID.alice, D)).toBe(true)
    expect(has('T0DCSync', SID.admins, D)).toBe(false) // Tier Zero → Tier Zero is not a finding
    expect(has('T0WriteDacl', SID.it, D)).toBe(true)
    expect(has('Kerberoasting', SID.alice)).toBe(true)
    expect(has('Kerberoasting', SID.eve)).toBe(false) // disabled
    expect(has('ASREPRoasting', SID.bob)).toBe(true)
    expect(has('ASREPRoasting', SID.eve)).toBe(false)
    // a computer's local Administrators group (<computer SID>-544) is not Tier Zero
    expect(rows.some((r) => r.to_objectid === `${SID.sql01}-544`)).toBe(false)
  })
})

describe('SharpHound v5 (older shapes), after the v6 data above', () => {
  beforeAll(async () => {
    const job = (await startUploadJob(admin)).data.id
    // one file per request this time (plain JSON uploads), sessions first: its ends become placeholders
    const files = v5Files()
    for (const name of ['20200101_sessions.json', '20200101_users.json', '20200101_groups.json', '20200101_computers.json', '20200101_domains.json'])
      expect((await uploadFile(admin, job, JSON.stringify(files[name]), { fileName: name })).data.unmatched_edges).toBe(0)
    await endUploadJob(admin, job)
  })

  it('properties-only domainsid and unconstrained delegation, sessions file with the logon type', async () => {
    expect(await node(OLD_SID.carl)).toMatchObject({ kind: 'User', environment_id: OLD })
    expect(await rel(OLD_SID.carl, 'CoerceToTGT', OLD)).toEqual({ isacl: false })
    expect(await rel(OLD_SID.srv, 'CoerceToTGT', OLD)).toEqual({ isacl: false })
    expect(await rel(OLD_SID.srv, 'HasSession', OLD_SID.dana)).toEqual({ isacl: false, logontype: 10 })
    expect(await rel(OLD_SID.srv, 'HasSession', OLD_SID.carl)).toEqual({ isacl: false })
    expect(await rel(OLD_SID.gpo, 'GPLink', OLD)).toEqual({ isacl: false, enforced: false })
    expect(await rel(OLD, 'Contains', OLD_SID.carl)).toEqual({ isacl: false })
  })

  it('numeric trust direction and type; a domains file without meta.version', async () => {
    // 1 = Inbound, 2 = Forest: the trusted domain → this one
    expect(await rel(D, 'CrossForestTrust', OLD)).toEqual({ isacl: false, trusttype: 'Forest', transitive: true })
    expect(await rel(OLD, 'CrossForestTrust', D)).toBeNull()
    expect((await node(OLD))!.environment_kind).toBe('Domain')
  })

  it('LocalAdmins / RemoteDesktopUsers / DcomUsers lists become local groups, then AdminTo / ExecuteDCOM (no CanRDP: no user rights)', async () => {
    expect(await rel(OLD_SID.ops, 'MemberOfLocalGroup', `${OLD_SID.srv}-544`)).toEqual({ isacl: false })
    expect(await rel(`${OLD_SID.srv}-544`, 'LocalToComputer', OLD_SID.srv)).toEqual({ isacl: false })
    expect(await node(`${OLD_SID.srv}-580`)).toBeNull() // not collected
    await settleRuns(db())
    await runAnalysisDirect(db())
    expect(await rel(OLD_SID.ops, 'AdminTo', OLD_SID.srv)).toEqual({ isacl: false })
    expect(await rel(OLD_SID.dana, 'MemberOfLocalGroup', `${OLD_SID.srv}-555`)).toEqual({ isacl: false })
    expect(await rel(OLD_SID.dana, 'CanRDP', OLD_SID.srv)).toBeNull() // older output has no user rights: BloodHound derives no CanRDP
    expect(await rel(OLD_SID.dana, 'ExecuteDCOM', OLD_SID.srv)).toEqual({ isacl: false })
    expect(await rel(OLD_SID.ops, 'DCSync', OLD)).toEqual({ isacl: false })
  })
})

describe('SharpHound: BloodHound ingest normalisation (own fixture: EXAMPLE.ORG)', () => {
  // Spelled the way Windows and LDAP report them, not upper-cased by the collector.
  const E = 'S-1-5-21-4444-5555-6666'
  const ws = `${E}-1300`
  const domain = {
    ObjectIdentifier: E,
    Properties: { name: 'example.org', domain: 'EXAMPLE.ORG', domainsid: E, distinguishedname: 'DC=example,DC=org' },
    Aces: [{ PrincipalSID: `${E}-512`, PrincipalType: 'Group', RightName: 'GenericAll', IsInherited: false }],
    Links: [{ GUID: 'c45e9585-4932-4c03-91a8-1856869d49af', IsEnforced: true }],
    Trusts: [{ TargetDomainSid: 'S-1-5-21-4444-5555-7777', TargetDomainName: 'Partner.example', IsTransitive: true, TrustDirection: 'Outbound', TrustType: 'External', SidFilteringEnabled: true, TGTDelegationEnabled: false }],
  }
  const computer = {
    ObjectIdentifier: ws,
    Properties: { name: 'ws1.example.org', domainsid: E, operatingsystem: 'Windows 11 Pro', distinguishedname: 'CN=WS1,OU=Workstations,DC=example,DC=org' },
    LocalGroups: [{ ObjectIdentifier: `${ws}-544`, Name: 'Administrators@ws1.example.org', Collected: true, Results: [{ ObjectIdentifier: `${E}-512`, ObjectType: 'Group' }] }],
  }

  beforeAll(async () => {
    const job = (await startUploadJob(admin)).data.id
    // meta.count 0 with a non-empty data: BloodHound's own ingest test files are written so; accepted as "not counted".
    const res = await uploadFile(admin, job, zip({
      'example_domains.json': { meta: { type: 'domains', version: 6, count: 0 }, data: [domain] },
      'example_computers.json': { meta: { type: 'computers', version: 6, count: 0 }, data: [computer] },
    }), { contentType: 'application/zip', fileName: 'example.zip' })
    expect(res.data).toMatchObject({ files: 2, errors: [] })
    await endUploadJob(admin, job)
  })

  it('name, operatingsystem and distinguishedname are upper-cased on every node, other properties kept as written', async () => {
    const c = await node(ws)
    expect(c).toMatchObject({ name: 'WS1.EXAMPLE.ORG' })
    expect(c!.props).toMatchObject({ name: 'WS1.EXAMPLE.ORG', operatingsystem: 'WINDOWS 11 PRO', distinguishedname: 'CN=WS1,OU=WORKSTATIONS,DC=EXAMPLE,DC=ORG' })
    const d = await node(E)
    expect(d!.props).toMatchObject({ name: 'EXAMPLE.ORG', distinguishedname: 'DC=EXAMPLE,DC=ORG', domain: 'EXAMPLE.ORG' })
    // a trusted domain named only by the trust, and a local group named by the collector
    expect((await node('S-1-5-21-4444-5555-7777'))!.props.name).toBe('PARTNER.EXAMPLE')
    expect((await node(`${ws}-544`))!.props.name).toBe('ADMINISTRATORS@WS1.EXAMPLE.ORG')
    expect(await rel(`${E}-512`, 'GenericAll', E)).toEqual({ isacl: true, isinherited: false, inheritancehash: '' })
  })

  it('object ids are upper-cased on nodes and relationship ends (a GPO GUID written in lower case)', async () => {
    expect(await rel('C45E9585-4932-4C03-91A8-1856869D49AF', 'GPLink', E)).toEqual({ isacl: false, enforced: true })
    expect(await node('c45e9585-4932-4c03-91a8-1856869d49af')).toBeNull()
  })

  it('meta.count 0 is "not counted" (no warning); any other disagreement is accepted with a warning', async () => {
    expect(await rel(`${E}-512`, 'MemberOfLocalGroup', `${ws}-544`)).not.toBeNull()
    const job = (await startUploadJob(admin)).data.id
    const res = await admin.raw('POST', `/api/v2/file-upload/${job}`, JSON.stringify({ meta: { type: 'computers', version: 6, count: 2 }, data: [computer] }), {
      contentType: 'application/json', headers: { 'X-File-Upload-Name': 'example_computers.json' },
    })
    expect(res.status).toBe(202)
    const body = (await res.json()) as { data: { warnings: { context: string; message: string }[] } }
    expect(body.data.warnings).toContainEqual({ file: 'example_computers.json', context: 'meta.count', message: expect.stringContaining('meta.count is 2 but data holds 1') })
    await endUploadJob(admin, job)
  })
})

describe('SharpHound: CanRDP through a group holding the logon right (own fixture: RDP.EXAMPLE)', () => {
  // WS3 (user rights collected): its Remote Desktop Users group holds the domain group RDPERS (u1, u2);
  // the logon right is granted to the domain group LOGON (u1 directly, u3 through NESTED), not to the RDP group.
  const R = 'S-1-5-21-7777-8888-9999'
  const [ws3, rdpers, logon, nested, u1, u2, u3, u4] = [`${R}-1400`, `${R}-1401`, `${R}-1402`, `${R}-1403`, `${R}-1411`, `${R}-1412`, `${R}-1413`, `${R}-1414`]
  const u4dn = 'DN=CN=U4,OU=Staff,DC=rdp,DC=example'
  // Also: the local Administrators group holds the right (u5: admin and RDP member; u6: admin only); the domain
  // group RDPHOLD holds the right and is itself an RDP member (its member u7 reaches the computer through it).
  // WS4 (no user rights collected): u1 in its Backup Operators; u2 in WS3's (user rights collected there).
  const [u5, u6, u7, rdphold, ws4] = [`${R}-1415`, `${R}-1416`, `${R}-1417`, `${R}-1404`, `${R}-1405`]
  const member = (id: string, t: string) => ({ ObjectIdentifier: id, ObjectType: t })
  const g = (id: string, members: { ObjectIdentifier: string; ObjectType: string }[]) => ({ ObjectIdentifier: id, Properties: { name: `${id}@RDP.EXAMPLE`, domainsid: R }, Members: members })

  beforeAll(async () => {
    const job = (await startUploadJob(admin)).data.id
    const res = await uploadFile(admin, job, zip({
      'rdp_users.json': file('users', [{ ObjectIdentifier: u4, Properties: { name: 'U4@RDP.EXAMPLE', domainsid: R, distinguishedname: 'CN=U4,OU=STAFF,DC=RDP,DC=EXAMPLE' } }]),
      'rdp_groups.json': file('groups', [g(rdpers, [member(u1, 'User'), member(u2, 'User'), member(u4dn, 'Base'), member('DN=CN=NOBODY,DC=RDP,DC=EXAMPLE', 'Base')]), g(logon, [member(u1, 'User'), member(nested, 'Group')]), g(nested, [member(u3, 'User')]), g(rdphold, [member(u7, 'User')])]),
      'rdp_computers.json': file('computers', [{
        ObjectIdentifier: ws3,
        Properties: { name: 'WS3.RDP.EXAMPLE', domainsid: R },
        LocalGroups: [
          { ObjectIdentifier: `${ws3}-555`, Name: 'REMOTE DESKTOP USERS@WS3.RDP.EXAMPLE', Collected: true, Results: [member(rdpers, 'Group'), member(u3, 'User'), member(u5, 'User'), member(rdphold, 'Group')] },
          { ObjectIdentifier: `${ws3}-544`, Name: 'ADMINISTRATORS@WS3.RDP.EXAMPLE', Collected: true, Results: [member(u5, 'User'), member(u6, 'User')] },
          { ObjectIdentifier: `${ws3}-551`, Name: 'BACKUP OPERATORS@WS3.RDP.EXAMPLE', Collected: true, Results: [member(u2, 'User')] },
        ],
        UserRights: [{ Privilege: 'SeRemoteInteractiveLogonRight', Collected: true, Results: [member(logon, 'Group'), member(u4, 'User'), member(`${ws3}-544`, 'LocalGroup'), member(rdphold, 'Group')] }],
      }, {
        ObjectIdentifier: ws4,
        Properties: { name: 'WS4.RDP.EXAMPLE', domainsid: R },
        LocalGroups: [{ ObjectIdentifier: `${ws4}-551`, Name: 'BACKUP OPERATORS@WS4.RDP.EXAMPLE', Collected: true, Results: [member(u1, 'User')] }],
      }]),
    }), { contentType: 'application/zip', fileName: 'rdp.zip' })
    expect(res.data).toMatchObject({ files: 3, errors: [] })
    await endUploadJob(admin, job)
    await settleRuns(db())
    await runAnalysisDirect(db())
  })

  it('a DN= member gets its MemberOf on the node with that distinguishedname, whatever the case; the placeholder stays', async () => {
    // u4 is a member of RDPERS written by its DN only (as SharpHound writes members it could not resolve)
    const m = await db()
      .prepare(`SELECT e.derived, e.properties FROM edges e JOIN nodes s ON s.id = e.start_id JOIN nodes t ON t.id = e.end_id WHERE s.objectid = ?1 AND e.kind = 'MemberOf' AND t.objectid = ?2`)
      .bind(u4, rdpers)
      .first<{ derived: number; properties: string }>()
    expect(m).toEqual({ derived: 1, properties: JSON.stringify({ isacl: false, isprimarygroup: false }) })
    expect(await rel(u4, 'CanRDP', ws3)).toEqual({ isacl: false }) // the resolved membership counts for CanRDP too
    expect(await rel(u4dn.toUpperCase(), 'MemberOf', rdpers)).toEqual({ isacl: false, isprimarygroup: false }) // ids upper-cased, as BloodHound
    expect(await rel(`DN=CN=NOBODY,DC=RDP,DC=EXAMPLE`, 'MemberOf', rdpers)).not.toBeNull() // unresolved: placeholder only
    const c = await db().prepare(`SELECT count(*) AS n FROM edges e JOIN nodes t ON t.id = e.end_id WHERE t.objectid = ?1 AND e.kind = 'MemberOf' AND e.derived = 1`).bind(rdpers).first<{ n: number }>()
    expect(c!.n).toBe(1)
  })

  it('members of the right-holding group who are also RDP members get CanRDP; the others do not', async () => {
    expect(await rel(u1, 'CanRDP', ws3)).toEqual({ isacl: false }) // right through LOGON, RDP through RDPERS
    expect(await rel(u3, 'CanRDP', ws3)).toEqual({ isacl: false }) // right through NESTED → LOGON, RDP directly
    expect(await rel(u2, 'CanRDP', ws3)).toBeNull() // RDP member without the right
    expect(await rel(logon, 'CanRDP', ws3)).toBeNull() // holds the right, not an RDP member
    expect(await rel(rdpers, 'CanRDP', ws3)).toBeNull() // RDP member, the group itself lacks the right
    expect(await rel(nested, 'CanRDP', ws3)).toBeNull()
    expect(await rel(u5, 'CanRDP', ws3)).toEqual({ isacl: false }) // right through the local Administrators group
    expect(await rel(u6, 'CanRDP', ws3)).toBeNull() // administrator, not an RDP member
    expect(await rel(rdphold, 'CanRDP', ws3)).toEqual({ isacl: false }) // holder and RDP member (step 2)
    expect(await rel(u7, 'CanRDP', ws3)).toBeNull() // reaches WS3 through RDPHOLD's CanRDP, no edge of its own
  })

  it('CanBackup: direct members of Backup Operators (-551) where user rights were not collected', async () => {
    expect(await rel(u1, 'CanBackup', ws4)).toEqual({ isacl: false })
    expect(await rel(u2, 'CanBackup', ws3)).toBeNull() // user rights collected: BackupPrivilege + RestorePrivilege needed (not derived)
  })
})

describe('SharpHound: CanRDP on Citrix computers (own fixture: CTX.EXAMPLE)', () => {
  // A computer with a "Direct Access Users" local group (Citrix): CanRDP needs membership of Remote Desktop
  // Users AND of Direct Access Users AND the logon right, each directly or through groups; reported at the
  // highest group satisfying all three (BloodHound's cross product). Worked out by hand:
  //   CTX1  RDP = {gA(uA1, uA2), uB, uC, gN(uN), gAll(uX)}   DAU = {gA, uB, uD, gAll}   logon right = {gL(uA1, uB, uD), gN, gAll}
  //         → uA1, uB (in all three through different ways), gAll (itself in all three; uX reaches through it)
  //   CTX2  RDP = {uA2, uC}  DAU = {uA2}  logon right = {Everyone}: a set holding Everyone constrains nothing → uA2
  //   CTX3  RDP = {uB} holding the logon right itself, DAU empty (ingested all the same) → nobody
  const C = 'S-1-5-21-3131-3232-3333'
  const id = (n: number) => `${C}-${n}`
  const [ctx1, ctx2, ctx3] = [id(1501), id(1502), id(1503)]
  const [gA, gN, gAll, gL] = [id(1601), id(1602), id(1603), id(1604)]
  const [uA1, uA2, uB, uC, uD, uN, uX] = [id(1701), id(1702), id(1703), id(1704), id(1705), id(1706), id(1707)]
  const everyone = 'CTX.EXAMPLE-S-1-1-0'
  const m = (oid: string, t = 'User') => ({ ObjectIdentifier: oid, ObjectType: t })
  const grp = (oid: string, members: string[]) => ({ ObjectIdentifier: oid, Properties: { name: `${oid}@CTX.EXAMPLE`, domainsid: C }, Members: members.map((x) => m(x)) })
  const lg = (computer: string, rid: string, name: string, results: { ObjectIdentifier: string; ObjectType: string }[]) => ({
    ObjectIdentifier: `${computer}-${rid}`, Name: `${name}@${computer}`, Collected: true, Results: results,
  })
  const ril = (results: { ObjectIdentifier: string; ObjectType: string }[]) => [{ Privilege: 'SeRemoteInteractiveLogonRight', Collected: true, Results: results }]

  beforeAll(async () => {
    const job = (await startUploadJob(admin)).data.id
    const res = await uploadFile(admin, job, zip({
      'ctx_groups.json': file('groups', [grp(gA, [uA1, uA2]), grp(gN, [uN]), grp(gAll, [uX]), grp(gL, [uA1, uB, uD])]),
      'ctx_computers.json': file('computers', [
        {
          ObjectIdentifier: ctx1, Properties: { name: 'CTX1.CTX.EXAMPLE', domainsid: C },
          LocalGroups: [
            lg(ctx1, '555', 'REMOTE DESKTOP USERS', [m(gA, 'Group'), m(uB), m(uC), m(gN, 'Group'), m(gAll, 'Group')]),
            lg(ctx1, '1000', 'DIRECT ACCESS USERS', [m(gA, 'Group'), m(uB), m(uD), m(gAll, 'Group')]),
          ],
          UserRights: ril([m(gL, 'Group'), m(gN, 'Group'), m(gAll, 'Group')]),
        },
        {
          ObjectIdentifier: ctx2, Properties: { name: 'CTX2.CTX.EXAMPLE', domainsid: C },
          LocalGroups: [lg(ctx2, '555', 'REMOTE DESKTOP USERS', [m(uA2), m(uC)]), lg(ctx2, '1000', 'Direct Access Users', [m(uA2)])],
          UserRights: ril([m(everyone, 'Group')]),
        },
        {
          ObjectIdentifier: ctx3, Properties: { name: 'CTX3.CTX.EXAMPLE', domainsid: C },
          LocalGroups: [lg(ctx3, '555', 'REMOTE DESKTOP USERS', [m(uB)]), lg(ctx3, '1000', 'DIRECT ACCESS USERS', [])],
          UserRights: ril([m(`${ctx3}-555`, 'LocalGroup')]),
        },
      ]),
    }), { contentType: 'application/zip', fileName: 'ctx.zip' })
    expect(res.data).toMatchObject({ files: 2, errors: [] })
    await endUploadJob(admin, job)
    await settleRuns(db())
    await runAnalysisDirect(db())
  })

  async function rdpOn(computer: string): Promise<string[]> {
    const r = await db()
      .prepare(`SELECT s.objectid FROM edges e JOIN nodes s ON s.id = e.start_id JOIN nodes t ON t.id = e.end_id WHERE t.objectid = ?1 AND e.kind = 'CanRDP' ORDER BY s.objectid`)
      .bind(computer)
      .all<{ objectid: string }>()
    return r.results.map((x) => x.objectid)
  }

  it('CTX1: exactly the principals in all three sets, at the highest group level', async () => {
    expect(await rdpOn(ctx1)).toEqual([gAll, uA1, uB].sort())
    // negatives: RDP + DAU without the right (uA2), RDP only (uC), DAU + right without RDP (uD), RDP + right through
    // gN without DAU (uN, gN: the non-Citrix rules would have given gN CanRDP), members of gAll (uX), the right only (gL)
    expect(await rel(gAll, 'CanRDP', ctx1)).toEqual({ isacl: false })
  })

  it('CTX2: a set holding Everyone constrains nothing (RDP and DAU members only)', async () => {
    expect(await rdpOn(ctx2)).toEqual([uA2])
  })

  it('CTX3: an empty Direct Access Users group, as SharpHound writes it, leaves nobody with CanRDP', async () => {
    expect(await node(`${ctx3}-1000`)).toMatchObject({ kind: 'ADLocalGroup' })
    expect(await rdpOn(ctx3)).toEqual([])
  })
})

describe('SharpHound: ProtectAdminGroups and HasTrustKeys (own fixture: PAG.EXAMPLE)', () => {
  // PAG.EXAMPLE (collected, NetBIOS "PAG") trusts TRUSTED.EXAMPLE (outbound, external). Worked out by hand:
  //   ProtectAdminGroups  its AdminSDHolder container → uProt, gProt, cProt (adminsdholderprotected: true);
  //                       not uNot (false), not uElsewhere (protected, but of TRUSTED.EXAMPLE, not collected)
  //   HasTrustKeys        PAG.EXAMPLE → PAG$ of TRUSTED.EXAMPLE (the trust account); not OTHER$ there, not
  //                       the PAG$ of PAG.EXAMPLE itself; TRUSTED.EXAMPLE (not collected, no netbios) → nothing
  const S1 = 'S-1-5-21-5151-5252-5353'
  const S2 = 'S-1-5-21-6161-6262-6363'
  const [holder, otherContainer, uProt, gProt, cProt, uNot, ownPag] = [`${S1}-ADMINSDHOLDER`, `${S1}-SYSTEMCONT`, `${S1}-1801`, `${S1}-1802`, `${S1}-1803`, `${S1}-1804`, `${S1}-1805`]
  const [trustAcct, otherAcct, uElsewhere] = [`${S2}-1901`, `${S2}-1902`, `${S2}-1903`]
  const u = (id: string, domainsid: string, props: Record<string, unknown>) => ({ ObjectIdentifier: id, Properties: { name: `${id}@X`, domainsid, ...props } })

  beforeAll(async () => {
    const job = (await startUploadJob(admin)).data.id
    const res = await uploadFile(admin, job, zip({
      'pag_domains.json': file('domains', [{
        ObjectIdentifier: S1,
        Properties: { name: 'PAG.EXAMPLE', domain: 'PAG.EXAMPLE', domainsid: S1, netbios: 'PAG', collected: true },
        Trusts: [{ TargetDomainSid: S2, TargetDomainName: 'TRUSTED.EXAMPLE', IsTransitive: false, TrustDirection: 'Outbound', TrustType: 'External', SidFilteringEnabled: true, TGTDelegationEnabled: false }],
      }]),
      'pag_containers.json': file('containers', [
        { ObjectIdentifier: holder, Properties: { name: 'ADMINSDHOLDER@PAG.EXAMPLE', domainsid: S1, distinguishedname: 'CN=AdminSDHolder,CN=System,DC=pag,DC=example' } },
        { ObjectIdentifier: otherContainer, Properties: { name: 'SYSTEM@PAG.EXAMPLE', domainsid: S1, distinguishedname: 'CN=System,DC=pag,DC=example' } },
      ]),
      'pag_users.json': file('users', [
        u(uProt, S1, { adminsdholderprotected: true }), u(uNot, S1, { adminsdholderprotected: false }), u(ownPag, S1, { samaccountname: 'PAG$' }),
        u(trustAcct, S2, { samaccountname: 'PAG$' }), u(otherAcct, S2, { samaccountname: 'OTHER$' }), u(uElsewhere, S2, { adminsdholderprotected: true }),
      ]),
      'pag_groups.json': file('groups', [{ ...u(gProt, S1, { adminsdholderprotected: true }), Members: [] }]),
      'pag_computers.json': file('computers', [u(cProt, S1, { adminsdholderprotected: true })]),
    }), { contentType: 'application/zip', fileName: 'pag.zip' })
    expect(res.data).toMatchObject({ files: 5, errors: [] })
    await endUploadJob(admin, job)
    await settleRuns(db())
    await runAnalysisDirect(db())
  })

  async function ends(start: string, kind: string): Promise<string[]> {
    const r = await db()
      .prepare(`SELECT t.objectid FROM edges e JOIN nodes s ON s.id = e.start_id JOIN nodes t ON t.id = e.end_id WHERE s.objectid = ?1 AND e.kind = ?2 AND e.derived = 1 ORDER BY t.objectid`)
      .bind(start, kind)
      .all<{ objectid: string }>()
    return r.results.map((x) => x.objectid)
  }

  it('ProtectAdminGroups: the AdminSDHolder container → the protected users, groups and computers of its domain', async () => {
    expect(await ends(holder, 'ProtectAdminGroups')).toEqual([uProt, gProt, cProt].sort())
    expect(await ends(otherContainer, 'ProtectAdminGroups')).toEqual([])
    expect(await rel(holder, 'ProtectAdminGroups', uProt)).toEqual({ isacl: false })
  })

  it('HasTrustKeys: the trusting domain → its trust account in the trusted domain', async () => {
    expect(await ends(S1, 'HasTrustKeys')).toEqual([trustAcct])
    expect(await ends(S2, 'HasTrustKeys')).toEqual([])
  })
})

describe('SharpHound: placeholders', () => {
  it('a relationship to an object not in the data keeps a Base node, filled in when the object arrives', async () => {
    const other = 'S-1-5-21-55-55-55'
    const job = (await startUploadJob(admin)).data.id
    const u = { ...(users()[0] as Record<string, unknown>), ObjectIdentifier: `${other}-1101`, Properties: { name: 'ZED@OTHER.LOCAL', domainsid: other, enabled: true }, PrimaryGroupSID: `${other}-513`, ContainedBy: null, SPNTargets: [], AllowedToDelegate: [], Aces: [{ PrincipalSID: `${other}-9999`, PrincipalType: 'Base', RightName: 'GenericAll', IsInherited: false }] }
    const res = await uploadFile(admin, job, JSON.stringify(file('users', [u])))
    expect(res.data).toMatchObject({ nodes: 1, unmatched_edges: 0 })
    const ph = await node(`${other}-513`)
    expect(ph).toMatchObject({ kind: 'Group', name: null, environment_id: null })
    expect(ph!.kinds).toEqual(['Group', 'Base'])
    expect(await rel(`${other}-1101`, 'MemberOf', `${other}-513`)).toEqual({ isacl: false, isprimarygroup: true })
    expect((await node(`${other}-9999`))!.kinds).toEqual(['Base'])
    // the object arrives: the same node is filled in, the relationship stays
    const g = { ...(groups()[1] as Record<string, unknown>), ObjectIdentifier: `${other}-513`, Properties: { name: 'DOMAIN USERS@OTHER.LOCAL', domainsid: other } }
    await uploadFile(admin, job, JSON.stringify(file('groups', [g])))
    expect(await node(`${other}-513`)).toMatchObject({ kind: 'Group', name: 'DOMAIN USERS@OTHER.LOCAL', environment_id: other })
    expect(await rel(`${other}-1101`, 'MemberOf', `${other}-513`)).not.toBeNull()
    // a later placeholder never overwrites a real node
    await uploadFile(admin, job, JSON.stringify(file('users', [u])))
    expect(await node(`${other}-513`)).toMatchObject({ name: 'DOMAIN USERS@OTHER.LOCAL' })
    await endUploadJob(admin, job)
  })
})

describe('SharpHound: BloodHound\'s first post-processing steps (own fixture: WK.EXAMPLE)', () => {
  // FixWellKnownNodeTypes, RunDomainAssociations and LinkWellKnownNodes (packages/go/analysis/ad/ad.go), which
  // BloodHound's Post runs before everything else: its analysed v6 test graph names an unresolved session user
  // "(TESTLAB.LOCAL) S-1-5-21-...-1107" with that domainsid, and links Domain Users to Everyone.
  const W = 'S-1-5-21-77-77-77'
  const TRUSTED = 'S-1-5-21-78-78-78'
  const base = (id: string, props: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({ ObjectIdentifier: id, Properties: props, Aces: [], IsDeleted: false, IsACLProtected: false, ...extra })
  const wkFiles = () => ({
    wk_domains: file('domains', [
      base(W, { name: 'WK.EXAMPLE', domain: 'WK.EXAMPLE', domainsid: W, collected: true }, {
        Trusts: [{ TargetDomainSid: TRUSTED, TargetDomainName: 'TRUSTED.EXAMPLE', IsTransitive: true, TrustDirection: 'Bidirectional', TrustType: 'External', SidFilteringEnabled: true }],
        // principals only named by their SID: a Base placeholder with a Domain Admins-like RID, an unknown user
        Aces: [
          { PrincipalSID: `${W}-519`, PrincipalType: 'Base', RightName: 'GenericAll', IsInherited: false },
          { PrincipalSID: `${W}-1999`, PrincipalType: 'User', RightName: 'WriteDacl', IsInherited: false },
          { PrincipalSID: `${TRUSTED}-1999`, PrincipalType: 'User', RightName: 'WriteOwner', IsInherited: false },
        ],
      }),
    ]),
    wk_users: file('users', [
      base(`${W}-501`, { name: 'GUEST@WK.EXAMPLE', domain: 'WK.EXAMPLE', domainsid: W, enabled: true }, { PrimaryGroupSID: `${W}-514` }),
      base(`${W}-1101`, { name: 'ANN@WK.EXAMPLE', domain: 'WK.EXAMPLE', domainsid: W, enabled: true }, { PrimaryGroupSID: `${W}-513` }),
    ]),
    wk_groups: file('groups', [base(`${W}-513`, { name: 'DOMAIN USERS@WK.EXAMPLE', domain: 'WK.EXAMPLE', domainsid: W }, { Members: [] })]),
  })
  const everyone = 'WK.EXAMPLE-S-1-1-0'
  const authUsers = 'WK.EXAMPLE-S-1-5-11'
  async function analyse() {
    await settleRuns(db())
    return runAnalysisDirect(db())
  }
  const graphSize = async () =>
    (await db().prepare('SELECT (SELECT count(*) FROM nodes) AS n, (SELECT count(*) FROM edges) AS e, (SELECT group_concat(kinds) FROM nodes) AS k').first<{ n: number; e: number; k: string }>())!

  beforeAll(async () => {
    const job = (await startUploadJob(admin)).data.id
    const res = await uploadFile(admin, job, zip(wkFiles()), { contentType: 'application/zip', fileName: 'wk.zip' })
    expect(res.data).toMatchObject({ errors: [], unmatched_edges: 0 })
    await endUploadJob(admin, job)
    await analyse()
  })

  it('FixWellKnownNodeTypes: a Base placeholder with a well-known group RID becomes a Group', async () => {
    const n = await node(`${W}-519`)
    expect(n).toMatchObject({ kind: 'Group' })
    expect(n!.kinds).toEqual(['Group', 'Base'])
  })

  it('RunDomainAssociations: an unnamed SID of a known domain is named after it and joins its environment', async () => {
    const n = await node(`${W}-1999`)
    expect(n).toMatchObject({ kind: 'User', name: `(WK.EXAMPLE) ${W}-1999`, environment_id: W })
    expect(n!.props).toMatchObject({ domainsid: W, name: `(WK.EXAMPLE) ${W}-1999` })
    // the trusted domain is a Domain node with a name (from the trust): its SIDs are associated too
    expect(await node(`${TRUSTED}-1999`)).toMatchObject({ name: `(TRUSTED.EXAMPLE) ${TRUSTED}-1999`, environment_id: TRUSTED })
    // a named node is left as it is
    expect(await node(`${W}-1101`)).toMatchObject({ name: 'ANN@WK.EXAMPLE' })
  })

  it('LinkWellKnownNodes: Everyone, Authenticated Users, Domain Computers created; Domain Users kept; the MemberOf chain and Guest', async () => {
    expect(await node(everyone)).toMatchObject({ kind: 'Group', name: 'EVERYONE@WK.EXAMPLE', environment_id: W })
    expect(await node(authUsers)).toMatchObject({ kind: 'Group', name: 'AUTHENTICATED USERS@WK.EXAMPLE', environment_id: W })
    expect((await node(`${W}-515`))!.props).toMatchObject({ name: 'DOMAIN COMPUTERS@WK.EXAMPLE', domainsid: W })
    expect(await node(`${W}-513`)).toMatchObject({ name: 'DOMAIN USERS@WK.EXAMPLE' })
    expect(await rel(`${W}-513`, 'MemberOf', authUsers)).toEqual({})
    expect(await rel(`${W}-515`, 'MemberOf', authUsers)).toEqual({})
    expect(await rel(authUsers, 'MemberOf', everyone)).toEqual({})
    expect(await rel(`${W}-501`, 'MemberOf', everyone)).toEqual({})
    expect(await rel(everyone, 'ClaimSpecialIdentity', `${W}-501`)).toEqual({}) // the Guest is enabled
    // a user reaches Everyone through its primary group
    expect(await rel(`${W}-1101`, 'MemberOf', `${W}-513`)).not.toBeNull()
    // only collected domains get them
    expect(await node('TRUSTED.EXAMPLE-S-1-1-0')).toBeNull()
    expect(await node(`${TRUSTED}-513`)).toBeNull()
  })

  it('a second run changes nothing', async () => {
    const before = await graphSize()
    await analyse()
    expect(await graphSize()).toEqual(before)
  })
})

describe('SharpHound: DC registry and GPO status as BloodHound writes them (own fixture: REG.EXAMPLE)', () => {
  // BloodHound's ParseDCRegistryData (every computer) and ParseGPOData: display forms beside the raw values.
  const R = 'S-1-5-21-88-88-88'
  const base = (id: string, props: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({ ObjectIdentifier: id, Properties: props, Aces: [], IsDeleted: false, IsACLProtected: false, ...extra })
  beforeAll(async () => {
    const job = (await startUploadJob(admin)).data.id
    const dc = base(`${R}-1000`, { name: 'DC.REG.EXAMPLE', domain: 'REG.EXAMPLE', domainsid: R }, {
      DCRegistryData: {
        CertificateMappingMethods: { Collected: true, FailureReason: null, Value: 0x1c },
        StrongCertificateBindingEnforcement: { Collected: true, FailureReason: null, Value: 1 },
        VulnerableNetlogonSecurityDescriptor: { Collected: true, FailureReason: null, Value: 'O:SYG:SYD:(A;;RC;;;WD)' },
      },
    })
    const old = base(`${R}-1001`, { name: 'OLD.REG.EXAMPLE', domain: 'REG.EXAMPLE', domainsid: R }, {
      DCRegistryData: { CertificateMappingMethods: { Collected: true, Value: -1 }, StrongCertificateBindingEnforcement: { Collected: true, Value: -1 } },
    })
    const ws = base(`${R}-1101`, { name: 'WS.REG.EXAMPLE', domain: 'REG.EXAMPLE', domainsid: R })
    const gpo = (guid: string, status?: unknown) => base(guid, { name: `${guid}@REG.EXAMPLE`, domain: 'REG.EXAMPLE', domainsid: R, ...(status === undefined ? {} : { gpostatus: status }) })
    const res = await uploadFile(admin, job, zip({
      reg_computers: file('computers', [dc, old, ws]),
      reg_gpos: file('gpos', [gpo('C0000000-0000-0000-0000-000000000003', '3'), gpo('C0000000-0000-0000-0000-000000000000', 0), gpo('C0000000-0000-0000-0000-000000000007', '7'), gpo('C0000000-0000-0000-0000-0000000000FF')]),
    }), { contentType: 'application/zip', fileName: 'reg.zip' })
    expect(res.data).toMatchObject({ errors: [] })
    await endUploadJob(admin, job)
  })

  it('DC registry: raw values, their display forms, and whether the Netlogon descriptor was collected', async () => {
    expect((await node(`${R}-1000`))!.props).toMatchObject({
      certificatemappingmethodsraw: 0x1c,
      certificatemappingmethods: ['0x04: User principal name (UPN/SAN)', '0x08: Kerberos service-for-user (S4U) certificate', '0x10: Kerberos service-for-user (S4U) explicit certificate'],
      strongcertificatebindingenforcementraw: 1,
      strongcertificatebindingenforcement: 'Compatibility mode',
      vulnerablenetlogonsecuritydescriptorcollected: true,
      vulnerablenetlogonsecuritydescriptor: 'O:SYG:SYD:(A;;RC;;;WD)',
    })
    expect((await node(`${R}-1001`))!.props).toMatchObject({
      certificatemappingmethodsraw: -1,
      certificatemappingmethods: ['Registry value does not exist'],
      strongcertificatebindingenforcementraw: -1,
      strongcertificatebindingenforcement: 'Registry value does not exist',
      vulnerablenetlogonsecuritydescriptorcollected: false,
    })
    const ws = (await node(`${R}-1101`))!.props
    expect(ws.vulnerablenetlogonsecuritydescriptorcollected).toBe(false)
    expect(ws).not.toHaveProperty('certificatemappingmethods')
    expect(ws).not.toHaveProperty('vulnerablenetlogonsecuritydescriptor')
  })

  it('GPO status: the written value as text in gpostatusraw, its display text in gpostatus', async () => {
    expect((await node('C0000000-0000-0000-0000-000000000003'))!.props).toMatchObject({ gpostatusraw: '3', gpostatus: 'Disabled' })
    expect((await node('C0000000-0000-0000-0000-000000000000'))!.props).toMatchObject({ gpostatusraw: '0', gpostatus: 'Enabled' })
    expect((await node('C0000000-0000-0000-0000-000000000007'))!.props).toMatchObject({ gpostatusraw: '7', gpostatus: 'GPO Status does not exist' })
    expect((await node('C0000000-0000-0000-0000-0000000000FF'))!.props).not.toHaveProperty('gpostatus')
  })
})

describe('SharpHound: `deleted` and `localgroups` files are accepted and write nothing (as BloodHound)', () => {
  // BloodHound accepts both meta.type values (its ingest model lists them) and converts nothing from them; its own
  // ingest test uploads a `deleted` file (the ids of deleted objects) with each SharpHound set. Refusing them
  // failed the whole zip SharpHound-style sets are uploaded in.
  const gone = ['S-1-5-21-66-66-66-1101', 'B1C2D3E4-0000-0000-0000-0000000000DE']
  async function total(): Promise<number> {
    const r = await db().prepare('SELECT (SELECT count(*) FROM nodes) + (SELECT count(*) FROM edges) AS n').first<{ n: number }>()
    return r!.n
  }

  it('a `deleted` file alone, and `deleted` / `localgroups` members of a zip beside a users file', async () => {
    const job = (await startUploadJob(admin)).data.id
    const before = await total()
    const deleted = { meta: { methods: 46067, type: 'deleted', count: 2, version: 6 }, data: gone }
    const alone = await uploadFile(admin, job, JSON.stringify(deleted), { fileName: '20260101_deleted.json' })
    expect(alone.data).toMatchObject({ files: 1, nodes: 0, edges: 0, errors: [] })
    expect(await total()).toBe(before)
    const localgroups = { meta: { methods: 4, type: 'localgroups', count: 1, version: 5 }, data: [{ ObjectIdentifier: `${gone[0]}-544`, Results: [] }] }
    const other = 'S-1-5-21-66-66-66'
    const u = { ...(users()[0] as Record<string, unknown>), ObjectIdentifier: `${other}-1102`, Properties: { name: 'KEPT@GONE.LOCAL', domainsid: other, enabled: true }, PrimaryGroupSID: null, ContainedBy: null, SPNTargets: [], AllowedToDelegate: [], HasSIDHistory: [], Aces: [] }
    const res = await uploadFile(admin, job, zip({ 'x_deleted.json': deleted, 'x_localgroups.json': localgroups, 'x_users.json': file('users', [u]) }), {
      contentType: 'application/zip',
      fileName: 'set.zip',
    })
    expect(res.data).toMatchObject({ files: 3, nodes: 1, errors: [] })
    expect(await node(`${other}-1102`)).toMatchObject({ kind: 'User', name: 'KEPT@GONE.LOCAL' })
    for (const id of gone) expect(await node(id)).toBeNull()
    expect(await node(`${gone[0]}-544`)).toBeNull()
    await endUploadJob(admin, job)
  })

  it('the AD site types (`sites`, `siteservers`, `sitesubnets`): accepted alone and as zip members, writing nothing', async () => {
    // Valid original types of BloodHound's newest ingest model; refused with a 400 before, which failed the whole zip.
    const job = (await startUploadJob(admin)).data.id
    const site = 'D3E4F5A6-0000-0000-0000-00000000517E'
    const sites = { meta: { methods: 0, type: 'sites', count: 1, version: 6 }, data: [{ ObjectIdentifier: site, Properties: { name: 'DEFAULT-FIRST-SITE-NAME@GONE.LOCAL' }, Aces: [] }] }
    const alone = await uploadFile(admin, job, JSON.stringify(sites), { fileName: '20260101_sites.json' })
    expect(alone.data).toMatchObject({ files: 1, nodes: 0, edges: 0, errors: [] })
    expect(await node(site)).toBeNull()
    const before = await total()
    const siteservers = { meta: { methods: 0, type: 'siteservers', count: 0, version: 6 }, data: [] }
    const sitesubnets = { meta: { methods: 0, type: 'sitesubnets', count: 1, version: 6 }, data: [{ ObjectIdentifier: 'D3E4F5A6-0000-0000-0000-0000000005B7' }] }
    const other = 'S-1-5-21-66-66-67'
    const u = { ...(users()[0] as Record<string, unknown>), ObjectIdentifier: `${other}-1103`, Properties: { name: 'SITED@GONE.LOCAL', domainsid: other, enabled: true }, PrimaryGroupSID: null, ContainedBy: null, SPNTargets: [], AllowedToDelegate: [], HasSIDHistory: [], Aces: [] }
    const res = await uploadFile(
      admin,
      job,
      zip({ 'x_sites.json': sites, 'x_siteservers.json': siteservers, 'x_sitesubnets.json': sitesubnets, 'x_users.json': file('users', [u]) }),
      { contentType: 'application/zip', fileName: 'sites.zip' },
    )
    expect(res.data).toMatchObject({ files: 4, nodes: 1, errors: [] })
    expect(await node(`${other}-1103`)).toMatchObject({ kind: 'User', name: 'SITED@GONE.LOCAL' })
    expect(await total()).toBe(before + 1)
    await endUploadJob(admin, job)
  })

  it('the header rules still apply to the site types: a `sitesubnets` file whose count disagrees gets the warning', async () => {
    const job = (await startUploadJob(admin)).data.id
    const res = await admin.raw('POST', `/api/v2/file-upload/${job}`, JSON.stringify({ meta: { type: 'sitesubnets', version: 6, count: 3 }, data: [] }), {
      contentType: 'application/json',
    })
    expect(res.status).toBe(202)
    expect(JSON.stringify(await res.json())).toMatch(/meta.count is 3 but data holds 0/)
    await expectEnvelope(await admin.raw('POST', `/api/v2/file-upload/${job}`, JSON.stringify({ meta: { type: 'sitesubnets', version: 6 }, data: {} }), { contentType: 'application/json' }), 400, 'no data tag found')
    await endUploadJob(admin, job)
  })

  it('the header rules still apply to them: a `deleted` file whose count disagrees gets the warning', async () => {
    const job = (await startUploadJob(admin)).data.id
    const res = await admin.raw('POST', `/api/v2/file-upload/${job}`, JSON.stringify({ meta: { type: 'deleted', version: 6, count: 5 }, data: gone }), {
      contentType: 'application/json',
    })
    expect(res.status).toBe(202)
    expect(JSON.stringify(await res.json())).toMatch(/meta.count is 5 but data holds 2/)
    await endUploadJob(admin, job)
  })
})

describe('SharpHound: bad input writes nothing of the file', () => {
  async function count(): Promise<number> {
    const r = await db().prepare('SELECT (SELECT count(*) FROM nodes) + (SELECT count(*) FROM edges) AS n').first<{ n: number }>()
    return r!.n
  }
  const good = () => file('users', users())

  it('unknown meta.type, malformed ACE and member entries, data not an array, old versions, duplicate members', async () => {
    const job = (await startUploadJob(admin)).data.id
    const before = await count()
    const send = (body: unknown) => admin.raw('POST', `/api/v2/file-upload/${job}`, JSON.stringify(body), { contentType: 'application/json', headers: { 'X-File-Upload-Name': 'bad_users.json' } })
    await expectEnvelope(await send({ ...good(), meta: { type: 'printers', version: 6, count: 3 } }), 400, /no valid meta tag found.*"printers"/)
    const dup = await admin.raw('POST', `/api/v2/file-upload/${job}`, `{"meta": {"type": "users", "version": 6}, "data": [], "data": ${JSON.stringify(users())}}`, {
      contentType: 'application/json', headers: { 'X-File-Upload-Name': 'bad_users.json' },
    })
    await expectEnvelope(dup, 400, 'member "data" appears more than once')
    const badAce = users()
    ;(badAce[0] as { Aces: unknown[] }).Aces.push({ PrincipalType: 'Group', RightName: 'GenericAll' }, 'x')
    const b2 = (await expectEnvelope(await send(file('users', badAce)), 400)) as { errors: { context: string }[] }
    expect(b2.errors.map((e) => e.context)).toEqual(expect.arrayContaining(['data[0].Aces[3].PrincipalSID', 'data[0].Aces[4]']))
    const badMember = groups()
    ;(badMember[0] as { Members: unknown[] }).Members.push({ ObjectType: 'User' })
    const b3 = (await expectEnvelope(await send(file('groups', badMember)), 400)) as { errors: { context: string }[] }
    expect(b3.errors.map((e) => e.context)).toContain('data[0].Members[1].ObjectIdentifier')
    await expectEnvelope(await send({ meta: { type: 'users', version: 6, count: 0 }, data: {} }), 400, 'no data tag found')
    await expectEnvelope(await send({ ...good(), meta: { type: 'users', version: 4, count: 3 } }), 400, /version 4 is not supported/)
    await expectEnvelope(await send({ ...good(), graph: { nodes: [] } }), 400, /cannot be mixed/)
    expect(await count()).toBe(before)
    const stored = (await listUploadJobs(admin)).data.find((j) => j.id === job)!
    expect(stored.failed_files).toBe(7)
    expect(stored.errors.every((e) => e.file === 'bad_users.json')).toBe(true)
  })

  it('a zip with one bad or truncated member writes nothing, and names the member', async () => {
    const job = (await startUploadJob(admin)).data.id
    const before = await count()
    const badAce = users()
    ;(badAce[1] as { Aces: unknown[] }).Aces.push({ PrincipalSID: SID.it, RightName: 7 })
    const z = zip({ 'x_groups.json': file('groups', groups()), 'x_users.json': file('users', badAce) })
    const res = (await expectEnvelope(await admin.raw('POST', `/api/v2/file-upload/${job}`, z, { contentType: 'application/zip' }), 400)) as {
      errors: { context: string }[]
    }
    expect(res.errors.map((e) => e.context)).toContain('x_users.json: data[1].Aces[2].RightName')
    const text = JSON.stringify(file('users', users()))
    const truncated = zip({ 'x_groups.json': file('groups', groups()), 'x_users.json': text.slice(0, text.length - 40) })
    await expectEnvelope(await admin.raw('POST', `/api/v2/file-upload/${job}`, truncated, { contentType: 'application/zip' }), 400, 'file is not valid JSON')
    expect(await count()).toBe(before)
  })
})

describe('SharpHound: DCSync and SyncLAPSPassword by BloodHound\'s cross product (own fixture: SYNCA/SYNCB/SYNCC.EXAMPLE)', () => {
  // Three collected domains, each with its replication ACEs; expected relationships worked out by hand from
  // BloodHound's CalculateCrossProductNodeSets (docs/collectors.md, "Cross product"):
  //   SYNCA  OUTER ∋ INNER ∋ U1, OUTER and INNER hold GetChanges + GetChangesAll → DCSync OUTER, INNER (not U1);
  //          U2 holds GetChanges itself and GetChangesAll through GRP → DCSync U2 (not GRP);
  //          ONLYGC ∋ U3 holds GetChanges only, U4 GetChangesAll only → nothing;
  //          LAPSG ∋ LAPSIN, both hold GetChanges + GetChangesInFilteredSet → SyncLAPSPassword from both to the
  //          LAPS computer C1, not to C2 (no LAPS)
  //   SYNCB  Everyone holds GetChanges, ALLG ∋ V1 and V2 hold GetChangesAll → DCSync ALLG, V2 (not V1);
  //          Authenticated Users holds GetChangesInFilteredSet → SyncLAPSPassword from Everyone and
  //          Authenticated Users to the LAPS computer C3
  //   SYNCC  Authenticated Users holds GetChangesAll, HOLD ∋ W1 holds GetChanges → DCSync HOLD (not W1)
  // The two-set rule used before gave OUTER only, LAPSG only, V1 and V2, Authenticated Users only, and W1.
  const SA = 'S-1-5-21-7171-7272-7301'
  const SB = 'S-1-5-21-7171-7272-7302'
  const SC = 'S-1-5-21-7171-7272-7303'
  const NAME: Record<string, string> = { [SA]: 'SYNCA.EXAMPLE', [SB]: 'SYNCB.EXAMPLE', [SC]: 'SYNCC.EXAMPLE' }
  const base = (id: string, sid: string, name: string, props: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) => ({
    ObjectIdentifier: id,
    Properties: { name: `${name}@${NAME[sid]}`, domain: NAME[sid], domainsid: sid, ...props },
    Aces: [],
    IsDeleted: false,
    IsACLProtected: false,
    ...extra,
  })
  const ace = (sid: string, type: string, right: string) => ({ PrincipalSID: sid, PrincipalType: type, RightName: right, IsInherited: false })
  const member = (id: string, type: string) => ({ ObjectIdentifier: id, ObjectType: type })
  const user = (id: string, sid: string, name: string) => base(id, sid, name, { enabled: true }, { PrimaryGroupSID: `${sid}-513` })
  const group = (id: string, sid: string, name: string, members: [string, string][] = []) =>
    base(id, sid, name, {}, { Members: members.map(([m, t]) => member(m, t)) })
  const computer = (id: string, sid: string, name: string, haslaps: boolean) =>
    base(id, sid, name, { enabled: true, haslaps }, { PrimaryGroupSID: `${sid}-515`, DomainSID: sid })
  const domain = (sid: string, aces: ReturnType<typeof ace>[]) => base(sid, sid, '', { name: NAME[sid], collected: true }, { Aces: aces, Trusts: [], Links: [], ChildObjects: [] })
  const A = { outer: `${SA}-2001`, inner: `${SA}-2002`, grp: `${SA}-2003`, onlygc: `${SA}-2004`, lapsg: `${SA}-2005`, lapsin: `${SA}-2006`, u1: `${SA}-1101`, u2: `${SA}-1102`, u3: `${SA}-1103`, u4: `${SA}-1104`, c1: `${SA}-1201`, c2: `${SA}-1202` }
  const B = { allg: `${SB}-2001`, v1: `${SB}-1101`, v2: `${SB}-1102`, c3: `${SB}-1201`, everyone: 'SYNCB.EXAMPLE-S-1-1-0', auth: 'SYNCB.EXAMPLE-S-1-5-11' }
  const C = { hold: `${SC}-2001`, w1: `${SC}-1101`, auth: 'SYNCC.EXAMPLE-S-1-5-11' }

  beforeAll(async () => {
    const job = (await startUploadJob(admin)).data.id
    const res = await uploadFile(admin, job, zip({
      'sync_domains.json': file('domains', [
        domain(SA, [
          ...['GetChanges', 'GetChangesAll'].flatMap((r) => [ace(A.outer, 'Group', r), ace(A.inner, 'Group', r)]),
          ace(A.u2, 'User', 'GetChanges'), ace(A.grp, 'Group', 'GetChangesAll'),
          ace(A.onlygc, 'Group', 'GetChanges'), ace(A.u4, 'User', 'GetChangesAll'),
          ...['GetChanges', 'GetChangesInFilteredSet'].flatMap((r) => [ace(A.lapsg, 'Group', r), ace(A.lapsin, 'Group', r)]),
        ]),
        domain(SB, [ace(B.everyone, 'Group', 'GetChanges'), ace(B.allg, 'Group', 'GetChangesAll'), ace(B.v2, 'User', 'GetChangesAll'), ace(B.auth, 'Group', 'GetChangesInFilteredSet')]),
        domain(SC, [ace(C.auth, 'Group', 'GetChangesAll'), ace(C.hold, 'Group', 'GetChanges')]),
      ]),
      'sync_groups.json': file('groups', [
        group(A.outer, SA, 'OUTER', [[A.inner, 'Group']]), group(A.inner, SA, 'INNER', [[A.u1, 'User']]),
        group(A.grp, SA, 'GRP', [[A.u2, 'User']]), group(A.onlygc, SA, 'ONLYGC', [[A.u3, 'User']]),
        group(A.lapsg, SA, 'LAPSG', [[A.lapsin, 'Group']]), group(A.lapsin, SA, 'LAPSIN'),
        ...[SA, SB, SC].map((s) => group(`${s}-513`, s, 'DOMAIN USERS')),
        group(B.allg, SB, 'ALLG', [[B.v1, 'User']]),
        group(C.hold, SC, 'HOLD', [[C.w1, 'User']]),
      ]),
      'sync_users.json': file('users', [
        user(A.u1, SA, 'U1'), user(A.u2, SA, 'U2'), user(A.u3, SA, 'U3'), user(A.u4, SA, 'U4'),
        user(B.v1, SB, 'V1'), user(B.v2, SB, 'V2'), user(C.w1, SC, 'W1'),
      ]),
      'sync_computers.json': file('computers', [computer(A.c1, SA, 'C1$', true), computer(A.c2, SA, 'C2$', false), computer(B.c3, SB, 'C3$', true)]),
    }), { contentType: 'application/zip', fileName: 'sync.zip' })
    expect(res.data).toMatchObject({ files: 4, errors: [] })
    await endUploadJob(admin, job)
    await settleRuns(db())
    await runAnalysisDirect(db())
  })

  /** The derived `kind` relationships into `end`: their start object ids, sorted. */
  async function starts(kind: string, end: string): Promise<string[]> {
    const r = await db()
      .prepare(`SELECT s.objectid FROM edges e JOIN nodes s ON s.id = e.start_id JOIN nodes t ON t.id = e.end_id WHERE t.objectid = ?1 AND e.kind = ?2 AND e.derived = 1 ORDER BY s.objectid`)
      .bind(end, kind)
      .all<{ objectid: string }>()
    return r.results.map((x) => x.objectid)
  }

  it('nested groups that both hold both rights both get DCSync; one right directly and one through a group; one right only gets nothing', async () => {
    expect(await starts('DCSync', SA)).toEqual([A.u2, A.outer, A.inner].sort())
    expect(await rel(A.inner, 'DCSync', SA)).toEqual({ isacl: false })
  })

  it('nested groups both holding GetChanges + GetChangesInFilteredSet both get SyncLAPSPassword, to LAPS computers only', async () => {
    expect(await starts('SyncLAPSPassword', A.c1)).toEqual([A.lapsg, A.lapsin].sort())
    expect(await starts('SyncLAPSPassword', A.c2)).toEqual([])
  })

  it('Everyone holding GetChanges constrains nothing: the GetChangesAll holders get DCSync as they hold it', async () => {
    expect(await starts('DCSync', SB)).toEqual([B.allg, B.v2].sort())
  })

  it('Everyone and Authenticated Users holding one right each: both get SyncLAPSPassword', async () => {
    expect(await starts('SyncLAPSPassword', B.c3)).toEqual([B.everyone, B.auth].sort())
  })

  it('Authenticated Users holding GetChangesAll: the GetChanges holder group gets DCSync, not its member', async () => {
    expect(await starts('DCSync', SC)).toEqual([C.hold])
  })
})
