import { beforeAll, describe, expect, it } from 'vitest'
import { strToU8, zipSync } from 'fflate'
import { adminToken, env } from '../helpers'
import type { EdgeHoundClient } from '../../src/client'
import { endUploadJob, startUploadJob, uploadFile } from '../../src/client/graph'
import { D, adcs, computers, containers, gpos, groups, ous, users, v6Files } from '../fixtures/sharphound/testlab'
import { AZ, azureHoundFile, items, T } from '../fixtures/azurehound/tenant'
import { runAnalysisDirect, settleRuns } from '../fixtures/findings/helpers'

/**
 * Data quality of collector output (issue 27): the project's SharpHound (TESTLAB.LOCAL) and AzureHound (one
 * tenant) fixtures through the ordinary file-upload jobs, an analysis run, then each environment's row. The
 * expected kind counts are the fixtures' own object lists; completeness is 0 (the fixtures carry no logon times).
 */
const db = () => (env as unknown as { DB: D1Database }).DB
type Page = { count: number; data: Record<string, unknown>[] }
let admin: EdgeHoundClient
const azureOf = (kind: string) => items.filter((i) => i.kind === kind).length

/** Edges whose start node is in the environment, counted directly. */
async function startingIn(envId: string): Promise<number> {
  const r = await db().prepare(`SELECT count(*) AS n FROM edges e JOIN nodes s ON s.id = e.start_id WHERE s.environment_id = ?1`).bind(envId).first<{ n: number }>()
  return r!.n
}

async function get(path: string): Promise<Page> {
  const res = await admin.raw('GET', path)
  expect(res.status, path).toBe(200)
  return (await res.json()) as Page
}

describe('data quality of ingested SharpHound and AzureHound files', () => {
  let azureEdges = 0
  beforeAll(async () => {
    admin = await adminToken()
    const ad = (await startUploadJob(admin)).data.id
    const zip = zipSync(Object.fromEntries(Object.entries(v6Files()).map(([k, v]) => [k, strToU8(JSON.stringify(v))])))
    await uploadFile(admin, ad, zip, { contentType: 'application/zip', fileName: 'testlab.zip' })
    await endUploadJob(admin, ad)
    const az = (await startUploadJob(admin)).data.id
    azureEdges = Number((await uploadFile(admin, az, JSON.stringify(azureHoundFile), { fileName: 'azurehound.json' })).data.edges)
    await endUploadJob(admin, az)
    await settleRuns(db())
    await runAnalysisDirect(db())
  })

  it('counts the domain\'s objects as the collection lists them', async () => {
    const r = await get(`/api/v2/ad-domains/${D}/data-quality-stats`)
    const a = adcs()
    expect(r.data[0]).toMatchObject({
      domain_sid: D,
      users: users().length,
      // + the domain's Everyone and Authenticated Users groups (TESTLAB.LOCAL-S-1-1-0, -S-1-5-11) that ingest adds as
      // BloodHound does, and DOMAIN COMPUTERS (-515), the computers' primary group
      groups: groups().length + 3,
      computers: computers().length,
      ous: ous().length,
      containers: containers().length,
      gpos: gpos().length,
      aiacas: a.aiacas.length,
      rootcas: a.rootcas.length,
      enterprisecas: a.enterprisecas.length,
      ntauthstores: a.ntauthstores.length,
      certtemplates: a.certtemplates.length,
      issuancepolicies: a.issuancepolicies.length,
      session_completeness: 0,
      local_group_completeness: 0,
    })
    expect(r.data[0].relationships).toBe(await startingIn(D))
    expect(r.data[0].acls).toBeGreaterThan(0)
  })

  it('counts the tenant\'s objects as the collection lists them, and every relationship of the file', async () => {
    const r = await get(`/api/v2/azure-tenants/${AZ(T)}/data-quality-stats`)
    expect(r.data[0]).toMatchObject({
      tenantid: AZ(T),
      users: azureOf('AZUser'),
      groups: azureOf('AZGroup'),
      apps: azureOf('AZApp'),
      devices: azureOf('AZDevice'),
      management_groups: azureOf('AZManagementGroup'),
      subscriptions: azureOf('AZSubscription'),
      resource_groups: azureOf('AZResourceGroup'),
      vms: azureOf('AZVM'),
      key_vaults: azureOf('AZKeyVault'),
      automation_accounts: azureOf('AZAutomationAccount'),
      container_registries: azureOf('AZContainerRegistry'),
      function_apps: azureOf('AZFunctionApp'),
      logic_apps: azureOf('AZLogicApp'),
      managed_clusters: azureOf('AZManagedCluster'),
      vm_scale_sets: azureOf('AZVMScaleSet'),
      web_apps: azureOf('AZWebApp'),
    })
    // + Microsoft Graph's service principal, which the app role assignments name in the tenant
    expect(r.data[0].service_principals).toBe(azureOf('AZServicePrincipal') + 1)
    // the file's relationships and those the analysis derives from them (post-processing), all starting in the tenant
    expect(r.data[0].relationships).toBe(await startingIn(AZ(T)))
    expect(r.data[0].relationships).toBeGreaterThanOrEqual(azureEdges)
  })
})
