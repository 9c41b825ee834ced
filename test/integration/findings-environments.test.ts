/**
 * Findings across environments (issue 18, item 1): a caller restricted to CORP reads CORP's findings, some of
 * whose other end lies in DEV (hidden), in no environment, or no longer in the graph. The row is kept and the
 * hidden end is opaque (src/findings/visibility.ts, docs/permissions.md); principal filters and sorts use what
 * is served, so `FromPrincipal=eq:<hidden id>` is no existence oracle; counts are the same for every caller.
 */
import { env } from 'cloudflare:workers'
import { beforeAll, describe, expect, it } from 'vitest'
import { adminToken, expectEnvelope, userWithRole } from '../helpers'
import type { EdgeHoundClient } from '../../src/client'
import {
  availableFindingTypes,
  findingDetails,
  findingSparkline,
  isListFinding,
  setFindingAcceptance,
  type FindingJson,
  type ListFindingJson,
  type RelationshipFindingJson,
} from '../../src/client/findings'
import { principalHash } from '../../src/findings/details'
import { insertGraph, runAnalysisDirect } from '../fixtures/findings/helpers'

const db = env.DB
const CORP = 'S-1-5-21-1800000001'
const DEV = 'S-1-5-21-1800000002'
const ABSENT = 'S-1-5-21-1800000009-1105'
const ID = {
  corpDa: `${CORP}-512`,
  corpUser: `${CORP}-1105`,
  kerb: `${CORP}-1106`,
  devDa: `${DEV}-512`,
  devUser: `${DEV}-1105`,
  noEnv: 'ZZ-NOENV-1105',
  gone: 'ZZ-GONE-1105',
}
/** Everything of DEV (and of the environment-less and vanished sources) that CORP's reader must never see. */
const SECRETS = [DEV, 'DEV.LOCAL', ID.devUser, 'DEVUSER@DEV.LOCAL', 'dev-only description', 'dev-edge-note', ID.noEnv, 'NOENV USER', ID.gone, 'GONE USER', ID.kerb, 'KERB@CORP.LOCAL', 'kerb-secret']

let admin: EdgeHoundClient
let restricted: EdgeHoundClient
let everything: EdgeHoundClient

const rel = (items: FindingJson[]) => items.filter((f): f is RelationshipFindingJson => !isListFinding(f))

beforeAll(async () => {
  admin = await adminToken()
  await insertGraph(
    db,
    [
      { objectid: CORP, kinds: ['Domain'], name: 'CORP.LOCAL', environment_id: CORP, properties: { name: 'CORP.LOCAL' } },
      { objectid: ID.corpDa, kinds: ['Group'], name: 'DOMAIN ADMINS@CORP.LOCAL', environment_id: CORP, properties: {} },
      { objectid: ID.corpUser, kinds: ['User'], name: 'CORPUSER@CORP.LOCAL', environment_id: CORP, properties: { enabled: true } },
      { objectid: ID.kerb, kinds: ['User'], name: 'KERB@CORP.LOCAL', environment_id: CORP, properties: { enabled: true, hasspn: true, note: 'kerb-secret' } },
      { objectid: DEV, kinds: ['Domain'], name: 'DEV.LOCAL', environment_id: DEV, properties: { name: 'DEV.LOCAL' } },
      { objectid: ID.devDa, kinds: ['Group'], name: 'DOMAIN ADMINS@DEV.LOCAL', environment_id: DEV, properties: {} },
      { objectid: ID.devUser, kinds: ['User'], name: 'DEVUSER@DEV.LOCAL', environment_id: DEV, properties: { description: 'dev-only description' } },
      { objectid: ID.noEnv, kinds: ['User'], name: 'NOENV USER', environment_id: null, properties: {} },
      { objectid: ID.gone, kinds: ['User'], name: 'GONE USER', environment_id: DEV, properties: {} },
    ],
    [
      // into CORP: from DEV, from CORP itself, from a node without environment, from a node that will vanish
      { start: ID.devUser, end: ID.corpDa, kind: 'WriteDacl', properties: { isinherited: true, note: 'dev-edge-note' } },
      { start: ID.corpUser, end: ID.corpDa, kind: 'WriteDacl', properties: { isinherited: true } },
      { start: ID.noEnv, end: ID.corpDa, kind: 'WriteDacl' },
      { start: ID.gone, end: ID.corpDa, kind: 'WriteDacl' },
      // into DEV from CORP (the other direction)
      { start: ID.corpUser, end: ID.devDa, kind: 'WriteDacl' },
    ],
  )
  await runAnalysisDirect(db)
  // After the run: one source leaves the graph, and CORP's kerberoastable user moves to DEV.
  await db.batch([
    db.prepare(`DELETE FROM edges WHERE start_id = (SELECT id FROM nodes WHERE objectid = ?1)`).bind(ID.gone),
    db.prepare(`DELETE FROM nodes WHERE objectid = ?1`).bind(ID.gone),
    db.prepare(`UPDATE nodes SET environment_id = ?2 WHERE objectid = ?1`).bind(ID.kerb, DEV),
  ])
  restricted = (await userWithRole('Read-Only', { all_environments: false, environment_access: [CORP] })).client
  everything = (await userWithRole('Read-Only')).client
})

async function details(c: EdgeHoundClient, q: Record<string, string | number> & { finding: string }, environmentId = CORP) {
  const res = await c.raw('GET', `/api/v2/domains/${encodeURIComponent(environmentId)}/details?${new URLSearchParams(Object.entries(q).map(([k, v]) => [k, String(v)]))}`)
  const text = await res.text()
  expect(res.status, text).toBe(200)
  return { text, body: JSON.parse(text) as { count: number; data: FindingJson[] } }
}

function expectNoSecrets(text: string) {
  for (const s of SECRETS) expect(text, `answer shows ${s}`).not.toContain(s)
}

describe('a finding whose other end is hidden: the row is kept, the hidden end is opaque', () => {
  it('the all-environment reader sees every end', async () => {
    const { body } = await details(everything, { finding: 'T0WriteDacl', limit: 0 })
    expect(body.count).toBe(4)
    expect(rel(body.data).map((f) => f.FromPrincipal).sort()).toEqual([ID.corpUser, ID.devUser, ID.gone, ID.noEnv].sort())
    const dev = rel(body.data).find((f) => f.FromPrincipal === ID.devUser)!
    expect(dev).toMatchObject({ FromPrincipalName: 'DEVUSER@DEV.LOCAL', FromEnvironmentID: DEV, FromEnvironment: 'DEV.LOCAL', IsInherited: true })
    expect(dev.FromPrincipalProps.description).toBe('dev-only description')
  })

  it('the restricted reader gets the same rows and count, with nothing of the hidden ends', async () => {
    const all = await details(everything, { finding: 'T0WriteDacl', limit: 0 })
    const { text, body } = await details(restricted, { finding: 'T0WriteDacl', limit: 0 })
    expectNoSecrets(text)
    expect(body.count).toBe(all.body.count)
    expect(body.data.map((f) => f.id).sort()).toEqual(all.body.data.map((f) => f.id).sort())
    const items = rel(body.data)
    const own = items.find((f) => f.FromPrincipal === ID.corpUser)!
    expect(own).toMatchObject({ FromPrincipalName: 'CORPUSER@CORP.LOCAL', FromEnvironmentID: CORP, ToPrincipal: ID.corpDa, IsInherited: true })
    expect(own.ComboGraphRelationID.valid).toBe(true)
    expect(own.PrincipalHash).toBe(principalHash(ID.corpUser, ID.corpDa))
    const hidden = items.filter((f) => f !== own)
    expect(hidden).toHaveLength(3)
    for (const f of hidden) {
      expect(f).toMatchObject({
        FromPrincipal: '',
        FromPrincipalKind: '',
        FromPrincipalName: '',
        FromPrincipalProps: { objectid: '', name: '' },
        FromEnvironment: '',
        FromEnvironmentID: '',
        // the visible end and the finding itself are intact
        ToPrincipal: ID.corpDa,
        ToPrincipalName: 'DOMAIN ADMINS@CORP.LOCAL',
        ToEnvironmentID: CORP,
        DomainSID: CORP,
        RelProps: {},
        IsInherited: false,
        ComboGraphRelationID: { int64: 0, valid: false },
      })
      expect(Object.keys(f.FromPrincipalProps).sort()).toEqual(['name', 'objectid'])
      expect(typeof f.ImpactPercentage).toBe('number')
    }
    // PrincipalHash is not the (recomputable) hash of the hidden id, and differs between findings
    const dev = all.body.data.find((f) => !isListFinding(f) && f.FromPrincipal === ID.devUser)!
    const devSeen = hidden.find((f) => f.id === dev.id)!
    expect(devSeen.PrincipalHash).not.toBe(principalHash(ID.devUser, ID.corpDa))
    expect(new Set(hidden.map((f) => f.PrincipalHash)).size).toBe(3)
  })

  it('a list finding whose principal moved to a hidden environment is kept, with an opaque principal', async () => {
    const all = await details(everything, { finding: 'Kerberoasting' })
    expect(all.body.data.map((f) => (f as ListFindingJson).Principal)).toEqual([ID.kerb])
    const { text, body } = await details(restricted, { finding: 'Kerberoasting' })
    expectNoSecrets(text)
    expect(body.count).toBe(1)
    expect(body.data[0]).toMatchObject({ Principal: '', PrincipalKind: '', PrincipalName: '', Props: { objectid: '', name: '' }, DomainSID: CORP })
    expect((await details(restricted, { finding: 'Kerberoasting', Principal: `eq:${ID.kerb}` })).body.count).toBe(0)
  })

  it('FromPrincipal=eq:<hidden id> answers exactly like an id that does not exist (no existence oracle)', async () => {
    const strip = (t: string) => t
    for (const [op, expected] of [
      ['eq', 0],
      ['neq', 4],
    ] as const) {
      const hidden = await details(restricted, { finding: 'T0WriteDacl', FromPrincipal: `${op}:${ID.devUser}`, limit: 0 })
      const absent = await details(restricted, { finding: 'T0WriteDacl', FromPrincipal: `${op}:${ABSENT}`, limit: 0 })
      expect(hidden.body.count).toBe(expected)
      expect(strip(hidden.text)).toBe(strip(absent.text))
      for (const id of [ID.noEnv, ID.gone]) expect((await details(restricted, { finding: 'T0WriteDacl', FromPrincipal: `${op}:${id}`, limit: 0 })).text).toBe(absent.text)
    }
    // the all-environment reader does find it (the test discriminates)
    expect((await details(everything, { finding: 'T0WriteDacl', FromPrincipal: `eq:${ID.devUser}` })).body.count).toBe(1)
    // every served value selects exactly the rows served with it: the SQL filter and the item agree
    const served = rel((await details(restricted, { finding: 'T0WriteDacl', limit: 0 })).body.data)
    for (const v of new Set(served.flatMap((f) => [f.FromPrincipal, f.ToPrincipal]))) {
      const byFrom = rel((await details(restricted, { finding: 'T0WriteDacl', FromPrincipal: `eq:${v}`, limit: 0 })).body.data)
      expect(byFrom.map((f) => f.id).sort()).toEqual(served.filter((f) => f.FromPrincipal === v).map((f) => f.id).sort())
      const byTo = rel((await details(restricted, { finding: 'T0WriteDacl', ToPrincipal: `eq:${v}`, limit: 0 })).body.data)
      expect(byTo.map((f) => f.id).sort()).toEqual(served.filter((f) => f.ToPrincipal === v).map((f) => f.id).sort())
    }
  })

  it('sorting by FromPrincipal orders by what is served, not by the hidden ids', async () => {
    const { body } = await details(restricted, { finding: 'T0WriteDacl', sort_by: 'FromPrincipal', limit: 0 })
    const items = rel(body.data)
    // hidden ends are '' (first, ties by id), then the visible source
    const hiddenIds = items.filter((f) => f.FromPrincipal === '').map((f) => f.id)
    expect(items.map((f) => f.id)).toEqual([...[...hiddenIds].sort((a, b) => a - b), items.find((f) => f.FromPrincipal === ID.corpUser)!.id])
    const desc = rel((await details(restricted, { finding: 'T0WriteDacl', sort_by: '-FromPrincipal', limit: 0 })).body.data)
    expect(desc[0].FromPrincipal).toBe(ID.corpUser)
    // paging through the sorted order shows each row once
    const paged: number[] = []
    for (let skip = 0; skip < 4; skip++) paged.push(...(await details(restricted, { finding: 'T0WriteDacl', sort_by: 'FromPrincipal', skip, limit: 1 })).body.data.map((f) => f.id))
    expect(paged).toEqual(items.map((f) => f.id))
  })

  it('counts agree for every caller: available-types, the details count and the sparkline', async () => {
    expect((await availableFindingTypes(restricted, CORP)).data).toEqual((await availableFindingTypes(everything, CORP)).data)
    const spark = await findingSparkline(restricted, CORP, { finding: 'T0WriteDacl' })
    expect(spark.data.at(-1)!.FindingCount).toBe((await details(restricted, { finding: 'T0WriteDacl' })).body.count)
    expectNoSecrets(JSON.stringify(spark))
  })

  it('the finding in DEV whose source is in CORP stays invisible to CORP’s reader, whatever the filter', async () => {
    const res = await restricted.raw('GET', `/api/v2/domains/${DEV}/details?finding=T0WriteDacl&FromPrincipal=eq:${ID.corpUser}`)
    expect(res.status).toBe(404)
    const all = await details(everything, { finding: 'T0WriteDacl' }, DEV)
    expect(rel(all.body.data).map((f) => f.FromPrincipal)).toEqual([ID.corpUser])
  })

  it('accepting a finding with a hidden end: a restricted administrator is answered with the opaque end', async () => {
    const all = await details(everything, { finding: 'T0WriteDacl', FromPrincipal: `eq:${ID.devUser}` })
    const id = all.body.data[0].id
    const { client: restrictedAdmin } = await userWithRole('Administrator', { all_environments: false, environment_access: [CORP] })
    const res = await setFindingAcceptance(restrictedAdmin, id, { accepted: true })
    expectNoSecrets(JSON.stringify(res))
    expect(res.data).toMatchObject({ id, Accepted: true, FromPrincipal: '', FromPrincipalName: '', ToPrincipal: ID.corpDa })
    await setFindingAcceptance(admin, id, { accepted: false })
  })

  it('analysis runs (whole-graph counts, every caller’s reasons) are refused to a restricted administrator', async () => {
    const { client: restrictedAdmin } = await userWithRole('Administrator', { all_environments: false, environment_access: [CORP] })
    for (const [method, target] of [
      ['GET', '/api/v2/analysis'],
      ['GET', '/api/v2/analysis/1'],
      ['POST', '/api/v2/analysis'],
    ] as const)
      await expectEnvelope(await restrictedAdmin.raw(method, target), 403, 'analysis runs cover every environment')
    const all = await admin.raw('GET', '/api/v2/analysis')
    expect(all.status).toBe(200)
  })
})
