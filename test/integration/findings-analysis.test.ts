import { env } from 'cloudflare:workers'
import { beforeAll, describe, expect, it } from 'vitest'
import { adminToken } from '../helpers'
import type { EdgeHoundClient } from '../../src/client'
import { deleteExtension, extensionIdByName, upsertExtension } from '../../src/client/extensions'
import {
  availableFindingTypes,
  findingAsset,
  findingDetails,
  findingSparkline,
  getAnalysisRun,
  isListFinding,
  listAnalysisRuns,
  requestAnalysis,
  type FindingJson,
} from '../../src/client/findings'
import { impactValues } from '../../src/findings/impact'
import { ZERO_TIME } from '../../src/findings/details'
import {
  D,
  EXPECTED_FINDINGS,
  EXPECTED_IMPACT_VALUES,
  EXPECTED_SPARKLINES,
  G,
  GH_EXTENSION,
  GH_REMEDIATION,
  ID,
  NODES,
  PRINCIPALS,
  T,
} from '../fixtures/findings/known-graph'
import { deleteEdge, insertGraph, openFindingRows, runAnalysisDirect, setNodeProperties, waitForRun } from '../fixtures/findings/helpers'

const db = env.DB
let admin: EdgeHoundClient

async function analyse(): Promise<number> {
  const r = await requestAnalysis(admin)
  expect(r.data.status).toBe('pending')
  const done = await waitForRun(db, r.data.id)
  expect(done.status).toBe('complete')
  return r.data.id
}

async function allOf(envId: string, finding: string): Promise<FindingJson[]> {
  const page = await findingDetails(admin, envId, { finding, limit: 0 })
  expect(page.count).toBe(page.data.length)
  return page.data
}

function summary(f: FindingJson): [string, string, string, string, number, number, string] {
  return isListFinding(f)
    ? [f.Finding, f.DomainSID, f.Principal, '', f.ImpactCount, f.ExposureCount, f.Severity]
    : [f.Finding, f.DomainSID, f.FromPrincipal, f.ToPrincipal, f.ImpactCount, f.ExposureCount, f.Severity]
}

const byKey = (a: unknown[], b: unknown[]) => (a.join('\u0000') < b.join('\u0000') ? -1 : 1)

describe('analysis of the known-answer graph, through D1, the Analyzer object and the endpoints', () => {
  let runId: number
  let completedAt: string

  beforeAll(async () => {
    admin = await adminToken()
    await upsertExtension(admin, GH_EXTENSION)
    await insertGraph(db)
    runId = await analyse()
    completedAt = (await getAnalysisRun(admin, runId)).data.completed_at!
  })

  it('records the run with its counts', async () => {
    const run = (await getAnalysisRun(admin, runId)).data
    expect(run).toMatchObject({
      status: 'complete',
      attempts: 1,
      error: null,
      node_count: NODES.length,
      environment_count: 3,
      principal_count: 33,
      finding_count: EXPECTED_FINDINGS.length,
      new_count: EXPECTED_FINDINGS.length,
      changed_count: 0,
      closed_count: 0,
      unchanged_count: 0,
    })
    expect(run.completed_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)
    expect(run.reasons[0]).toMatch(/^requested by /)
    const list = await listAnalysisRuns(admin)
    expect(list.data[0].id).toBe(runId)
  })

  it('lists the finding types with current findings per environment', async () => {
    const types = (e: string) => [...new Set(EXPECTED_FINDINGS.filter((f) => f[1] === e).map((f) => f[0]))].sort()
    for (const e of [D, T, G]) expect((await availableFindingTypes(admin, e)).data).toEqual(types(e))
  })

  it('reports every finding with its exact metrics, and nothing else', async () => {
    const got: unknown[][] = []
    for (const e of [D, T, G]) {
      for (const type of (await availableFindingTypes(admin, e)).data) {
        for (const f of await allOf(e, type)) {
          got.push(summary(f))
          const p = PRINCIPALS[e as keyof typeof PRINCIPALS]
          expect(f.ImpactPercentage).toBe(f.ImpactCount / p)
          expect(f.ExposurePercentage).toBe(f.ExposureCount / p)
          expect(f.created_at).toBe(completedAt)
          expect(f.updated_at).toBe(completedAt)
        }
      }
    }
    expect(got.sort(byKey)).toEqual([...EXPECTED_FINDINGS].sort(byKey))
  })

  it('relationship items carry every field the connectors read', async () => {
    const [f] = await allOf(D, 'T0GenericWrite')
    const edge = await db
      .prepare(`SELECT e.id FROM edges e JOIN nodes s ON s.id = e.start_id JOIN nodes t ON t.id = e.end_id WHERE s.objectid = ?1 AND t.objectid = ?2 AND e.kind = 'GenericWrite'`)
      .bind(ID.USERS, ID.T0OPS)
      .first<{ id: number }>()
    expect(f).toEqual({
      id: expect.any(Number),
      Finding: 'T0GenericWrite',
      DomainSID: D,
      Environment: 'CORP.LOCAL',
      created_at: completedAt,
      updated_at: completedAt,
      deleted_at: { time: ZERO_TIME, valid: false },
      Accepted: false,
      AcceptedUntil: ZERO_TIME,
      Severity: 'moderate',
      ImpactPercentage: 0.4,
      ImpactCount: 8,
      ExposurePercentage: 0.45,
      ExposureCount: 9,
      FromPrincipal: ID.USERS,
      FromPrincipalKind: 'Group',
      FromPrincipalName: 'DOMAIN USERS@CORP.LOCAL',
      FromPrincipalProps: { name: 'DOMAIN USERS@CORP.LOCAL', objectid: ID.USERS },
      FromEnvironment: 'CORP.LOCAL',
      FromEnvironmentID: D,
      ToPrincipal: ID.T0OPS,
      ToPrincipalKind: 'Group',
      ToPrincipalName: 'TIER0 OPS@CORP.LOCAL',
      ToPrincipalProps: { name: 'TIER0 OPS@CORP.LOCAL', objectid: ID.T0OPS, system_tags: 'admin_tier_0' },
      ToEnvironment: 'CORP.LOCAL',
      ToEnvironmentID: D,
      RelProps: { isinherited: true },
      PrincipalHash: expect.stringMatching(/^[0-9a-f]{16}$/),
      IsInherited: true,
      ComboGraphRelationID: { int64: edge!.id, valid: true },
    })
  })

  it('a cross-environment finding belongs to the target environment and names both', async () => {
    const items = await allOf(T, 'T0AZResetPassword')
    const alice = items.find((i) => !isListFinding(i) && i.FromPrincipal === ID.ALICE)
    expect(alice).toMatchObject({
      DomainSID: T,
      Environment: 'CONTOSO',
      FromEnvironment: 'CORP.LOCAL',
      FromEnvironmentID: D,
      ToEnvironment: 'CONTOSO',
      ToEnvironmentID: T,
      ImpactCount: 0,
      ImpactPercentage: 0,
      IsInherited: false,
      RelProps: {},
    })
  })

  it('list items carry Principal fields instead of From/To', async () => {
    const items = await allOf(D, 'Kerberoasting')
    const carol = items.find((i) => isListFinding(i) && i.Principal === ID.CAROL)!
    expect(carol).toEqual({
      id: expect.any(Number),
      Finding: 'Kerberoasting',
      DomainSID: D,
      Environment: 'CORP.LOCAL',
      created_at: completedAt,
      updated_at: completedAt,
      deleted_at: { time: ZERO_TIME, valid: false },
      Accepted: false,
      AcceptedUntil: ZERO_TIME,
      accepted_until: ZERO_TIME,
      Severity: 'low',
      ImpactPercentage: 0.05,
      ImpactCount: 1,
      ExposurePercentage: 0.05,
      ExposureCount: 1,
      Principal: ID.CAROL,
      PrincipalKind: 'User',
      PrincipalName: 'CAROL@CORP.LOCAL',
      Props: { name: 'CAROL@CORP.LOCAL', objectid: ID.CAROL, enabled: true, hasspn: true },
      RelProps: {},
      PrincipalHash: expect.stringMatching(/^[0-9a-f]{16}$/),
      IsInherited: false,
      ComboGraphRelationID: { int64: 0, valid: false },
    })
    for (const k of Object.keys(carol)) expect(k.startsWith('From') || k.startsWith('To')).toBe(false)
  })

  it('stores one sparkline record per environment and type with the exact risk numbers', async () => {
    const got: unknown[][] = []
    for (const [e, finding] of EXPECTED_SPARKLINES.map((s) => [s[0], s[1]])) {
      const r = await findingSparkline(admin, e, { finding })
      expect(r.data).toHaveLength(1)
      const s = r.data[0]
      expect(s).toMatchObject({ created_at: completedAt, updated_at: completedAt, deleted_at: { time: ZERO_TIME, valid: false }, DomainSID: e, Finding: finding })
      expect(s.ImpactCount).toBe(s.ImpactedAssetCount)
      got.push([s.DomainSID, s.Finding, s.FindingCount, s.ImpactedAssetCount, s.ExposureCount, s.CompositeRisk])
    }
    expect(got).toEqual(EXPECTED_SPARKLINES)
  })

  it('impactValue per environment is the highest CompositeRisk of the latest run, as an integer', async () => {
    expect(Object.fromEntries(await impactValues(db))).toEqual(EXPECTED_IMPACT_VALUES)
  })

  it('serves the extension finding texts from the installed extension', async () => {
    expect(await findingAsset(admin, 'GH_T0AdminOf', 'title', { md: true })).toBe('Non Tier Zero Administrators of Tier Zero Repositories')
    expect(await findingAsset(admin, 'GH_T0AdminOf', 'long_remediation')).toBe(GH_REMEDIATION.long_remediation)
  })
})

describe('identity of findings across runs', () => {
  let first: Awaited<ReturnType<typeof openFindingRows>>

  it('run 2: unchanged keep everything, changed update updated_at only, gone are closed', async () => {
    first = await openFindingRows(db)
    // changed: ALICE leaves HELPDESK (HELPDESK's reachers 4 → 3; DA's and DAVE's lose ALICE too)
    await deleteEdge(db, ID.ALICE, 'MemberOf', ID.HELPDESK)
    // gone: MALLORY loses GenericAll on DA; CAROL loses her SPN
    await deleteEdge(db, ID.MALLORY, 'GenericAll', ID.DA)
    await setNodeProperties(db, ID.CAROL, { name: 'CAROL@CORP.LOCAL', objectid: ID.CAROL, enabled: true, hasspn: false })
    const run2 = await analyse()
    const r2 = (await getAnalysisRun(admin, run2)).data
    // changed: AddMember, ForceChangePassword, DCSync and WriteDacl (exposure via DA), ASREPRoasting of DAVE
    expect(r2).toMatchObject({ new_count: 0, closed_count: 2, changed_count: 5, unchanged_count: EXPECTED_FINDINGS.length - 7 })

    const rows = await openFindingRows(db)
    const before = new Map(first.map((r) => [r.id, r]))
    const at = (finding: string, from: string) => rows.find((r) => r.finding === finding && r.from_objectid === from)!

    // unchanged (BOB → DC1 does not involve ALICE): same id, created_at and updated_at
    const adminTo = at('T0AdminTo', ID.BOB)
    expect(adminTo).toEqual(before.get(adminTo.id))

    // changed: same id and created_at, new updated_at, new metrics
    const addMember = at('T0AddMember', ID.HELPDESK)
    expect(addMember.id).toBe(before.get(addMember.id)!.id)
    expect(addMember.created_at).toBe(before.get(addMember.id)!.created_at)
    expect(addMember.updated_at).toBe(r2.completed_at)
    expect(addMember.updated_at > addMember.created_at).toBe(true)
    expect(addMember.impact_count).toBe(3)
    const [viaApi] = await allOf(D, 'T0AddMember')
    // DA is now reached by DA, ADMIN, WS1, IT, BOB, HELPDESK (6; ALICE and MALLORY lost their ways)
    expect(viaApi).toMatchObject({ id: addMember.id, ImpactCount: 3, ExposureCount: 6, ImpactPercentage: 0.15, ExposurePercentage: 0.3, updated_at: r2.completed_at })

    // gone: closed with deleted_at, no longer served
    const closed = rows.filter((r) => r.deleted_at !== null)
    expect(closed.map((r) => [r.finding, r.from_objectid]).sort()).toEqual([
      ['Kerberoasting', ID.CAROL],
      ['T0GenericAll', ID.MALLORY],
    ])
    for (const c of closed) expect(c.deleted_at).toBe(r2.completed_at)
    expect((await availableFindingTypes(admin, D)).data).not.toContain('T0GenericAll')
    expect((await findingDetails(admin, D, { finding: 'T0GenericAll' })).count).toBe(0)
    expect((await allOf(D, 'Kerberoasting')).map((f) => (isListFinding(f) ? f.Principal : ''))).toEqual([ID.SVC])

    // the sparkline of a type that had findings records the zero
    const spark = await findingSparkline(admin, D, { finding: 'T0GenericAll' })
    expect(spark.data.map((s) => [s.FindingCount, s.CompositeRisk])).toEqual([
      [1, 5],
      [0, 0],
    ])
  })

  it('run 3: a finding that comes back is a new finding (new id, new created_at); readers see the old run until the commit', async () => {
    await insertGraph(db, [], [{ start: ID.MALLORY, end: ID.DA, kind: 'GenericAll' }])
    const beforeRows = await openFindingRows(db)
    let observed = false
    const summary = await runAnalysisDirect(db, {
      beforeCommit: async () => {
        // the plan is staged, nothing is visible yet
        const staged = await db.prepare(`SELECT COUNT(*) AS n FROM analysis_staged_findings`).first<{ n: number }>()
        expect(staged!.n).toBeGreaterThan(0)
        expect((await findingDetails(admin, D, { finding: 'T0GenericAll' })).count).toBe(0)
        expect((await availableFindingTypes(admin, D)).data).not.toContain('T0GenericAll')
        expect(await openFindingRows(db)).toEqual(beforeRows)
        const runs = await listAnalysisRuns(admin)
        expect(runs.data[0].status).toBe('running')
        observed = true
      },
    })
    expect(observed).toBe(true)
    // MALLORY reaches DA again: DA's exposure grows back for AddMember, DCSync and WriteDacl
    expect(summary.plan).toEqual({ inserts: 1, updates: 3, closes: 0, unchanged: EXPECTED_FINDINGS.length - 2 - 3 })
    const staged = await db.prepare(`SELECT (SELECT COUNT(*) FROM analysis_staged_findings) + (SELECT COUNT(*) FROM analysis_staged_sparklines) AS n`).first<{ n: number }>()
    expect(staged!.n).toBe(0)

    const [back] = await allOf(D, 'T0GenericAll')
    const old = first.find((r) => r.finding === 'T0GenericAll')!
    expect(isListFinding(back)).toBe(false)
    expect(back.id).toBeGreaterThan(Math.max(...beforeRows.map((r) => r.id)))
    expect(back.id).not.toBe(old.id)
    expect(back.created_at).toBe(summary.completedAt)
    expect(back.created_at > old.created_at).toBe(true)
    // the closed row stays closed
    const oldRow = (await openFindingRows(db)).find((r) => r.id === old.id)!
    expect(oldRow.deleted_at).not.toBeNull()
  })
})

describe('uninstalling the extension', () => {
  it('closes its findings on the next run; their history stays readable', async () => {
    expect((await allOf(G, 'GH_T0AdminOf')).length).toBe(1)
    await deleteExtension(admin, (await extensionIdByName(admin, GH_EXTENSION.schema.name))!)
    // the type is no longer in the catalogue, but the environment had findings of it: still a valid query
    expect((await allOf(G, 'GH_T0AdminOf')).length).toBe(1)
    await analyse()
    expect((await findingDetails(admin, G, { finding: 'GH_T0AdminOf' })).count).toBe(0)
    expect((await availableFindingTypes(admin, G)).data).toEqual([])
    const spark = await findingSparkline(admin, G, { finding: 'GH_T0AdminOf' })
    expect(spark.data.map((s) => s.FindingCount)).toEqual([1, 1, 1, 0])
    // texts need the extension
    const res = await admin.raw('GET', '/api/v2/assets/findings/GH_T0AdminOf/title.md')
    expect(res.status).toBe(404)
  })
})
