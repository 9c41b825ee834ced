/**
 * NTLM relay post-processing end to end (src/collectors/ntlm.store.ts, ESC8 victims in src/collectors/adcs.ts):
 * SharpHound files of test/fixtures/sharphound/relaylab.ts through the ordinary upload jobs, then an analysis
 * run; each CoerceAndRelayNTLMTo* relationship set is compared with the complete set worked out by hand in the
 * fixture's header (a missing edge and an extra one both fail), negatives included. A second upload turns the
 * domain's functional level vulnerable: the Protected Users member then counts as unprotected. The same lab
 * carries the ADCSESC16 case (a CA without the SID security extension).
 */
import { beforeAll, describe, expect, it } from 'vitest'
import { strToU8, zipSync } from 'fflate'
import { adminToken, env } from '../helpers'
import { endUploadJob, startUploadJob, uploadFile } from '../../src/client/graph'
import { R, relayFiles } from '../fixtures/sharphound/relaylab'
import { derivedEdges, openFindingRows, runAnalysisDirect, settleRuns } from '../fixtures/findings/helpers'

const db = () => (env as unknown as { DB: D1Database }).DB
const NAME = new Map<string, string>(Object.entries(R).map(([k, v]) => [v, k]))

/** Every relationship of a kind as `start->end` (fixture names); each is derived with BloodHound's properties. */
const edges = (kind: string) => derivedEdges(db(), kind, NAME)

/** Uploads the files as one zip in one job, lets the run the job requested finish, then runs one here. */
async function ingest(files: Record<string, unknown>): Promise<void> {
  const admin = await adminToken()
  const job = (await startUploadJob(admin)).data.id
  const body = zipSync(Object.fromEntries(Object.entries(files).map(([k, v]) => [k, strToU8(JSON.stringify(v))])))
  const res = await uploadFile(admin, job, body, { contentType: 'application/zip', fileName: 'relay.zip' })
  expect(res.data).toMatchObject({ files: Object.keys(files).length, errors: [] })
  await endUploadJob(admin, job)
  await settleRuns(db())
  await runAnalysisDirect(db())
}

beforeAll(async () => {
  await ingest(relayFiles())
})

describe('NTLM relay post-processing on SharpHound data', () => {
  it('the converter keeps the properties the rules read', async () => {
    const props = async (id: string) => JSON.parse((await db().prepare('SELECT properties FROM nodes WHERE objectid = ?').bind(id).first<{ properties: string }>())!.properties) as Record<string, unknown>
    expect(await props(R.dc01)).toMatchObject({ isdc: true, ldapsigning: false, ldapavailable: true, ldapsavailable: true, ldapsepa: false, webclientrunning: true, restrictoutboundntlm: false })
    expect(await props(R.srv01)).toMatchObject({ smbsigning: false, restrictoutboundntlm: false })
    expect(await props(R.ws02)).toMatchObject({ restrictoutboundntlm: true, webclientrunning: true })
    expect(await props(R.srv05)).not.toHaveProperty('smbsigning')
    expect(await props(R.relayca)).toMatchObject({ hasvulnerableendpoint: true })
    expect(await props(R.nowebca)).toMatchObject({ hasvulnerableendpoint: false })
    expect(await props(R.au)).toMatchObject({ domainsid: R.domain })
  })

  it('CoerceAndRelayNTLMToSMB: to SRV01 only (its admin group reaches WS01; not a user, a restricted, protected or the same computer; not with signing or unknown signing)', async () => {
    expect(await edges('AdminTo')).toEqual(['alice->srv02', 'serveradmins->srv01', 'srv03->srv03', 'ws01->srv04', 'ws01->srv05', 'ws02->srv02', 'wsprot->srv03'])
    expect(await edges('CoerceAndRelayNTLMToSMB')).toEqual(['au->srv01'])
  })

  it('CoerceAndRelayNTLMToLDAP / LDAPS: to WS01 only (DC01 would relay to itself; WS02 restricted; WSPROT protected)', async () => {
    expect(await edges('CoerceAndRelayNTLMToLDAP')).toEqual(['au->ws01'])
    expect(await edges('CoerceAndRelayNTLMToLDAPS')).toEqual(['au->ws01'])
  })

  it('CoerceAndRelayNTLMToADCS: the unprotected computers enrolling through the vulnerable endpoint (not approval, signature, no-auth, unpublished or non-vulnerable-CA templates)', async () => {
    expect(await edges('CoerceAndRelayNTLMToADCS')).toEqual(['au->app01', 'au->srv01', 'au->ws01'])
  })

  it('ADCSESC16: the enrolling group of the authentication template on the CA without the SID security extension (not a user when DNS is required, not a template requiring a signature, not a CA keeping the extension)', async () => {
    const ca = JSON.parse((await db().prepare('SELECT properties FROM nodes WHERE objectid = ?').bind(R.esc16ca).first<{ properties: string }>())!.properties) as Record<string, unknown>
    expect(ca).toMatchObject({ isuserspecifiessanenabled: true, isuserspecifiessanenabledcollected: true, disabledextensionscollected: true, disabledextensions: ['1.3.6.1.4.1.311.25.2'] })
    expect(await edges('ADCSESC16')).toEqual(['serveradmins->domain'])
  })

  it('findings: a relay relationship into a Tier Zero computer is an open T0<kind> finding; ADCSESC16 into the domain too', async () => {
    const findings = async () =>
      (await openFindingRows(db()))
        .filter((f) => f.deleted_at === null && /^T0(CoerceAndRelay|ADCSESC16)/.test(f.finding))
        .map((f) => `${f.finding} ${NAME.get(f.from_objectid) ?? f.from_objectid}->${NAME.get(f.to_objectid) ?? f.to_objectid}`)
        .sort()
    // the relay victims are ordinary computers: no relay finding yet
    expect(await findings()).toEqual(['T0ADCSESC16 serveradmins->domain'])
    // SRV01 (relayed to over SMB, and an ESC8 victim) and WS01 (an LDAP/LDAPS and ESC8 victim) made Tier Zero
    const admin = await adminToken()
    const made = await admin.raw('POST', '/api/v2/asset-group-tags/1/selectors', { name: 'relay victims', seeds: [{ type: 1, value: R.srv01 }, { type: 1, value: R.ws01 }] })
    expect(made.status).toBe(201)
    await runAnalysisDirect(db())
    expect(await findings()).toEqual([
      'T0ADCSESC16 serveradmins->domain',
      'T0CoerceAndRelayNTLMToADCS au->srv01',
      'T0CoerceAndRelayNTLMToADCS au->ws01',
      'T0CoerceAndRelayNTLMToLDAP au->ws01',
      'T0CoerceAndRelayNTLMToLDAPS au->ws01',
      'T0CoerceAndRelayNTLMToSMB au->srv01',
    ])
    // the finding types are listed for the domain, with their titles
    const types = await admin.raw('GET', `/api/v2/domains/${R.domain}/available-types`)
    expect(types.status).toBe(200)
    const listed = ((await types.json()) as { data: string[] }).data
    expect(listed).toEqual(expect.arrayContaining(['T0CoerceAndRelayNTLMToSMB', 'T0CoerceAndRelayNTLMToLDAP', 'T0CoerceAndRelayNTLMToLDAPS', 'T0CoerceAndRelayNTLMToADCS', 'T0ADCSESC16']))
    const title = await admin.raw('GET', '/api/v2/assets/findings/T0CoerceAndRelayNTLMToSMB/title.md')
    expect(await title.text()).toBe('Non Tier Zero Principals with Coerce and Relay NTLM to SMB Privileges on Tier Zero Objects')
  })

  it('a second run derives the same set', async () => {
    const count = async () => (await db().prepare(`SELECT count(*) AS n FROM edges WHERE derived = 1 AND kind LIKE 'CoerceAndRelayNTLMTo%'`).first<{ n: number }>())!.n
    expect(await count()).toBe(6)
    await runAnalysisDirect(db())
    expect(await count()).toBe(6)
  })

  it('a vulnerable functional level (2012): the Protected Users member is a relay victim again', async () => {
    await ingest({ 'relay_domains.json': relayFiles('2012')['relay_domains.json'] })
    expect(await edges('CoerceAndRelayNTLMToSMB')).toEqual(['au->srv01', 'au->srv03'])
    expect(await edges('CoerceAndRelayNTLMToLDAP')).toEqual(['au->ws01', 'au->wsprot'])
    expect(await edges('CoerceAndRelayNTLMToLDAPS')).toEqual(['au->ws01', 'au->wsprot'])
    expect(await edges('CoerceAndRelayNTLMToADCS')).toEqual(['au->app01', 'au->srv01', 'au->ws01', 'au->wsprot'])
  })
})
