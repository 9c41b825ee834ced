/**
 * ADCS post-processing end to end: SharpHound files of an ADCS environment (test/fixtures/sharphound/
 * pkilab.ts) through the ordinary upload jobs, then an analysis run; every ADCS relationship derived is
 * compared, kind by kind, with the complete set worked out by hand in the fixture's header (so a missing
 * edge and an extra one both fail).
 */
import { beforeAll, describe, expect, it } from 'vitest'
import { strToU8, zipSync } from 'fflate'
import { adminToken, env } from '../helpers'
import { endUploadJob, startUploadJob, uploadFile } from '../../src/client/graph'
import { P, pkiFiles } from '../fixtures/sharphound/pkilab'
import { derivedEdges, openFindingRows, runAnalysisDirect, settleRuns } from '../fixtures/findings/helpers'

const db = () => (env as unknown as { DB: D1Database }).DB
const NAME = new Map<string, string>(Object.entries(P).map(([k, v]) => [v, k]))

/** Every relationship of a kind as `start->end` (fixture names); each derived, with these properties. */
const edges = (kind: string, props?: Record<string, unknown>) => derivedEdges(db(), kind, NAME, props)

beforeAll(async () => {
  const admin = await adminToken()
  const job = (await startUploadJob(admin)).data.id
  const body = zipSync(Object.fromEntries(Object.entries(pkiFiles()).map(([k, v]) => [k, strToU8(JSON.stringify(v))])))
  const res = await uploadFile(admin, job, body, { contentType: 'application/zip', fileName: 'pki.zip' })
  expect(res.data).toMatchObject({ files: 9, unmatched_edges: 0, errors: [] })
  await endUploadJob(admin, job)
  // Ending the job requested a run from the Analyzer object: let it finish, then run one here.
  await settleRuns(db())
  await runAnalysisDirect(db())
})

describe('ADCS post-processing on SharpHound data', () => {
  it('the converter keeps the properties the rules read', async () => {
    const props = async (id: string) => JSON.parse((await db().prepare('SELECT properties FROM nodes WHERE objectid = ?').bind(id).first<{ properties: string }>())!.properties) as Record<string, unknown>
    expect(await props(P.esc9)).toMatchObject({ schemaversion: 2, authorizedsignatures: 0, requiresmanagerapproval: false, authenticationenabled: true, enrolleesuppliessubject: false, nosecurityextension: true, subjectaltrequireupn: true, effectiveekus: ['1.3.6.1.5.5.7.3.2'] })
    expect(await props(P.sanca)).toMatchObject({ isuserspecifiessanenabled: true, isuserspecifiessanenabledcollected: true, enrollmentagentrestrictionscollected: true, hasenrollmentagentrestrictions: false, certchain: ['DD', 'AA'] })
    expect(await props(P.pkica)).toMatchObject({ isuserspecifiessanenabled: false, hasenrollmentagentrestrictions: true })
    expect(await props(P.dc01)).toMatchObject({ certificatemappingmethodsraw: 4, strongcertificatebindingenforcementraw: 1 })
    expect(await props(P.policy)).toMatchObject({ certtemplateoid: '1.3.6.1.4.1.311.21.8.100.1' })
  })

  it('certificate relationships: IssuedSignedBy, TrustedForNTAuth (the rogue CA is not in the store), no EnterpriseCAFor', async () => {
    expect(await edges('IssuedSignedBy')).toEqual(['pkica->root', 'rogueca->root', 'sanca->root'])
    expect(await edges('TrustedForNTAuth')).toEqual(['pkica->ntauth', 'sanca->ntauth'])
    expect(await edges('EnterpriseCAFor')).toEqual([])
  })

  it('GoldenCert: the CA host → the domain', async () => {
    expect(await edges('GoldenCert')).toEqual(['ca01->domain'])
  })

  it('ADCSESC1: the enrolling group only (not its member; not approval, no-auth, unpublished or untrusted-CA templates)', async () => {
    expect(await edges('ADCSESC1')).toEqual(['enrollers->domain'])
  })

  it('EnrollOnBehalfOf and ADCSESC3 (the CA restricts enrollment agents: only the delegated agent)', async () => {
    expect(await edges('EnrollOnBehalfOf')).toEqual(['agent->target', 'agent->v1'])
    const delegated = await db()
      .prepare(`SELECT s.objectid AS s, t.objectid AS t FROM edges e JOIN nodes s ON s.id = e.start_id JOIN nodes t ON t.id = e.end_id WHERE e.kind = 'DelegatedEnrollmentAgent'`)
      .all<{ s: string; t: string }>()
    expect(delegated.results).toEqual([{ s: P.bob, t: P.target }])
    expect(await edges('ADCSESC3')).toEqual(['bob->domain'])
  })

  it('ADCSESC4: GenericWrite + Enroll, WriteDacl (with enrollment on the CA)', async () => {
    expect(await edges('ADCSESC4')).toEqual(['dave->domain', 'erin->domain'])
  })

  it('ADCSESC6a / ADCSESC6b: only through the CA with the SAN flag', async () => {
    expect(await edges('ADCSESC6a')).toEqual(['enrollers->domain'])
    expect(await edges('ADCSESC6b')).toEqual(['enrollers->domain'])
  })

  it('ADCSESC9a / ADCSESC10a: the principals controlling a victim (GenericAll; Owns resolved from the raw owner)', async () => {
    // the owner of a computer in a domain without dsheuristics gets Owns (it was dropped before)
    expect(await edges('Owns', { isacl: true, isinherited: false })).toEqual(['da->ca01'])
    expect(await edges('ADCSESC9a')).toEqual(['carol->domain', 'da->domain'])
    expect(await edges('ADCSESC10a')).toEqual(['carol->domain', 'da->domain'])
    expect(await edges('ADCSESC9b')).toEqual([])
    expect(await edges('ADCSESC10b')).toEqual([])
  })

  it('ExtendedByPolicy (same domain only) and ADCSESC13 to the linked group', async () => {
    expect(await edges('ExtendedByPolicy')).toEqual(['esc13->policy'])
    expect(await edges('ADCSESC13')).toEqual(['enrollers->priv'])
  })

  it('a second run derives the same set', async () => {
    const count = async () => (await db().prepare(`SELECT count(*) AS n FROM edges WHERE derived = 1`).first<{ n: number }>())!.n
    const before = await count()
    await runAnalysisDirect(db())
    expect(await count()).toBe(before)
    expect(await edges('ADCSESC1')).toEqual(['enrollers->domain'])
  })

  it('findings: every derived ADCS relationship into Tier Zero is an open T0<kind> finding (the domain is Tier Zero)', async () => {
    const open = (await openFindingRows(db())).filter((f) => f.deleted_at === null && /^T0(ADCSESC|GoldenCert)/.test(f.finding))
    const got = open.map((f) => `${f.finding} ${NAME.get(f.from_objectid) ?? f.from_objectid}->${NAME.get(f.to_objectid) ?? f.to_objectid}`).sort()
    expect(got).toEqual([
      'T0ADCSESC1 enrollers->domain',
      'T0ADCSESC10a carol->domain',
      'T0ADCSESC3 bob->domain',
      'T0ADCSESC4 dave->domain',
      'T0ADCSESC4 erin->domain',
      'T0ADCSESC6a enrollers->domain',
      'T0ADCSESC6b enrollers->domain',
      'T0ADCSESC9a carol->domain',
      'T0GoldenCert ca01->domain',
    ])
    // the same set as the derived relationships that end at the domain, but those from `da`, a Domain Admin and so
    // Tier Zero itself (ESC13 ends at a group outside Tier Zero: no finding)
    const kinds = ['GoldenCert', 'ADCSESC1', 'ADCSESC3', 'ADCSESC4', 'ADCSESC6a', 'ADCSESC6b', 'ADCSESC9a', 'ADCSESC9b', 'ADCSESC10a', 'ADCSESC10b', 'ADCSESC13', 'ADCSESC16']
    const derived = (await Promise.all(kinds.map(async (k) => (await edges(k)).filter((e) => e.endsWith('->domain') && !e.startsWith('da->')).map((e) => `T0${k} ${e}`)))).flat().sort()
    expect(got).toEqual(derived)
  })
})
