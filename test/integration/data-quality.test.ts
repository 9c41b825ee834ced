import { env } from 'cloudflare:workers'
import { beforeAll, describe, expect, it } from 'vitest'
import { adminToken, userWithRole } from '../helpers'
import type { EdgeHoundClient } from '../../src/client'
import { ZERO_TIME } from '../../src/findings/details'
import { insertGraph, runAnalysisDirect } from '../fixtures/findings/helpers'
import type { FixtureEdge, FixtureNode } from '../fixtures/findings/known-graph'

/**
 * Data quality (issue 27): a small AD domain (D), a second one (D2) and an Azure tenant (T) with every number
 * below worked out by hand; two analysis runs; the four routes read what the runs wrote.
 *
 * Completeness in D (logon times in seconds; the newest candidate logon is NOW_S):
 *   users      U1 (enabled, logon now, session from C1)        active, covered
 *              U2 (enabled, logon now − 13 d)                  active (session from C2 added before run 2)
 *              U6 (enabled, logon now − 1 d)                   active
 *              U3 (enabled, logon now − 20 d, session)         not active (older than 14 days)
 *              U4 (disabled, logon now, session)               not a candidate
 *              U5 (enabled, no logon)                          not a candidate
 *     → run 1: 1 of 3; run 2: 2 of 3
 *   computers  C1 (Windows Server 2022, logon now, AdminTo)    active, covered
 *              C2 (WINDOWS 10 PRO, logon now − 1 d)            active
 *              C3 (Ubuntu, AdminTo)                            not Windows
 *              C4 (Windows 11, logon now − 30 d, CanRDP)       not active
 *     → 1 of 2
 */
const D = 'S-1-5-21-500'
const D2 = 'S-1-5-21-600'
const T = 'DQ-TENANT-1'
const NOW_S = 1_800_000_000
const DAY = 24 * 3600

const ad = (id: string, kind: string, props: Record<string, unknown> = {}, envId = D): FixtureNode => ({
  objectid: id,
  kinds: [kind, 'Base'],
  name: `${id}@CORP`,
  environment_id: envId,
  properties: { domainsid: envId, ...props },
})
const az = (id: string, kind: string): FixtureNode => ({ objectid: id, kinds: [kind, 'AZBase'], name: id, environment_id: T, properties: { tenantid: T } })
const user = (id: string, enabled: boolean, logon?: number) => ad(id, 'User', { enabled, ...(logon === undefined ? {} : { lastlogontimestamp: logon }) })
const computer = (id: string, os: string, logon: number) => ad(id, 'Computer', { enabled: true, operatingsystem: os, lastlogontimestamp: logon })

const NODES: FixtureNode[] = [
  { ...ad(D, 'Domain'), kinds: ['Domain', 'Base'] },
  user('U1', true, NOW_S),
  user('U2', true, NOW_S - 13 * DAY),
  user('U3', true, NOW_S - 20 * DAY),
  user('U4', false, NOW_S),
  user('U5', true),
  user('U6', true, NOW_S - DAY),
  ad('G1', 'Group'),
  ad('G2', 'Group'),
  computer('C1', 'Windows Server 2022 Datacenter', NOW_S),
  computer('C2', 'WINDOWS 10 PRO', NOW_S - DAY),
  computer('C3', 'Ubuntu 22.04', NOW_S),
  computer('C4', 'Windows 11 Enterprise', NOW_S - 30 * DAY),
  ad('OU1', 'OU'),
  ad('CN1', 'Container'),
  ad('GPO1', 'GPO'),
  ad('AIA1', 'AIACA'),
  ad('ROOT1', 'RootCA'),
  ad('ECA1', 'EnterpriseCA'),
  ad('NTA1', 'NTAuthStore'),
  ad('TPL1', 'CertTemplate'),
  ad('TPL2', 'CertTemplate'),
  ad('POL1', 'IssuancePolicy'),
  { ...ad(D2, 'Domain', {}, D2), kinds: ['Domain', 'Base'] },
  ad('X1', 'User', { enabled: true, lastlogontimestamp: NOW_S }, D2),
  { objectid: T, kinds: ['AZTenant', 'AZBase'], name: T, environment_id: T, properties: { tenantid: T } },
  az('AZU1', 'AZUser'),
  az('AZU2', 'AZUser'),
  az('AZG1', 'AZGroup'),
  az('AZAPP1', 'AZApp'),
  az('AZSP1', 'AZServicePrincipal'),
  az('AZDEV1', 'AZDevice'),
  az('AZMG1', 'AZManagementGroup'),
  az('AZSUB1', 'AZSubscription'),
  az('AZRG1', 'AZResourceGroup'),
  az('AZVM1', 'AZVM'),
  az('AZKV1', 'AZKeyVault'),
  az('AZWEB1', 'AZWebApp'),
  az('AZROLE1', 'AZRole'),
]

const e = (start: string, kind: string, end: string): FixtureEdge => ({ start, kind, end })
const EDGES: FixtureEdge[] = [
  // sessions (3, from computers)
  e('C1', 'HasSession', 'U1'),
  e('C1', 'HasSession', 'U3'),
  e('C2', 'HasSession', 'U4'),
  // local-group coverage
  e('G1', 'AdminTo', 'C1'),
  e('G1', 'AdminTo', 'C3'),
  e('G1', 'CanRDP', 'C4'),
  // memberships
  e('U1', 'MemberOf', 'G1'),
  e('U2', 'MemberOf', 'G2'),
  // ACLs (3)
  e('G1', 'GenericAll', 'U2'),
  e('U1', 'WriteDacl', 'G2'),
  e('G2', 'Owns', 'C2'),
  // structure
  e(D, 'Contains', 'OU1'),
  e('OU1', 'Contains', 'C1'),
  e('GPO1', 'GPLink', 'OU1'),
  // D2 → D: counts for D2 (where it starts)
  e('X1', 'MemberOf', 'G1'),
  // Azure: 6
  e(T, 'AZContains', 'AZSUB1'),
  e('AZSUB1', 'AZContains', 'AZRG1'),
  e('AZRG1', 'AZContains', 'AZVM1'),
  e('AZRG1', 'AZContains', 'AZKV1'),
  e('AZU1', 'AZMemberOf', 'AZG1'),
  e('AZAPP1', 'AZRunsAs', 'AZSP1'),
]

const AD_RUN1 = {
  domain_sid: D,
  users: 6,
  groups: 2,
  computers: 4,
  ous: 1,
  containers: 1,
  gpos: 1,
  aiacas: 1,
  rootcas: 1,
  enterprisecas: 1,
  ntauthstores: 1,
  certtemplates: 2,
  issuancepolicies: 1,
  acls: 3,
  sessions: 3,
  relationships: 14,
  session_completeness: 1 / 3,
  local_group_completeness: 1 / 2,
}
const AD_RUN2 = { ...AD_RUN1, sessions: 4, relationships: 15, session_completeness: 2 / 3 }
const D2_ROW = {
  domain_sid: D2,
  users: 1,
  groups: 0,
  computers: 0,
  acls: 0,
  sessions: 0,
  relationships: 1,
  session_completeness: 0,
  local_group_completeness: 0,
}
const AZ_ROW = {
  tenantid: T,
  users: 2,
  groups: 1,
  apps: 1,
  service_principals: 1,
  devices: 1,
  management_groups: 1,
  subscriptions: 1,
  resource_groups: 1,
  vms: 1,
  key_vaults: 1,
  automation_accounts: 0,
  container_registries: 0,
  function_apps: 0,
  logic_apps: 0,
  managed_clusters: 0,
  vm_scale_sets: 0,
  web_apps: 1,
  relationships: 6,
}

type Page = { count: number; skip: number; limit: number; start: string; end: string; data: Record<string, unknown>[] }
type Envelope = { http_status: number; request_id: string; errors: { context: string; message: string }[] }

const db = env.DB
let admin: EdgeHoundClient
const runs: { runId: number; completedAt: string }[] = []
const WIDE = 'start=2000-01-01T00:00:00Z&end=2100-01-01T00:00:00Z'

async function get<T>(client: EdgeHoundClient, path: string, status = 200): Promise<T> {
  const res = await client.raw('GET', path)
  const body = await res.json()
  expect(res.status, `${path}: ${JSON.stringify(body)}`).toBe(status)
  return body as T
}

/**
 * D1 statements an analysis run sends (a counting wrapper of the binding): all of them, the data quality ones
 * (environment list, pages, inserts), and whether the inserts went in the batch that marks the run complete.
 */
function countingDb(inner: D1Database) {
  const tally = { statements: 0, dataQuality: 0, insertsInCommit: 0 }
  const isDq = (sql: string) => /data_quality_stats/.test(sql) || /AS is_users/.test(sql) || /environment_kind IN \(\?1, \?2\)/.test(sql)
  const unwrap = new WeakMap<object, D1PreparedStatement>()
  const sqlOf = new WeakMap<object, string>()
  const wrap = (stmt: D1PreparedStatement, sql: string): D1PreparedStatement => {
    const p = new Proxy(stmt, {
      get(target, prop) {
        if (prop === 'bind') return (...args: unknown[]) => wrap(target.bind(...args), sql)
        if (prop === 'first' || prop === 'all' || prop === 'run' || prop === 'raw')
          return (...args: unknown[]) => {
            tally.statements++
            if (isDq(sql)) tally.dataQuality++
            return (target[prop] as (...a: unknown[]) => unknown).apply(target, args)
          }
        const v = Reflect.get(target, prop, target)
        return typeof v === 'function' ? v.bind(target) : v
      },
    })
    unwrap.set(p, stmt)
    sqlOf.set(p, sql)
    return p
  }
  const proxy = new Proxy(inner, {
    get(target, prop) {
      if (prop === 'prepare') return (sql: string) => wrap(target.prepare(sql), sql)
      if (prop === 'batch')
        return async (stmts: D1PreparedStatement[]) => {
          const sqls = stmts.map((st) => sqlOf.get(st) ?? '')
          tally.statements += stmts.length
          tally.dataQuality += sqls.filter(isDq).length
          if (sqls.some((q) => /SET status = 'complete'/.test(q))) tally.insertsInCommit += sqls.filter((q) => /INSERT INTO \w+_data_quality_stats/.test(q)).length
          return target.batch(stmts.map((st) => unwrap.get(st) ?? st))
        }
      const v = Reflect.get(target, prop, target)
      return typeof v === 'function' ? v.bind(target) : v
    },
  })
  return { db: proxy as D1Database, tally }
}

describe('data quality: counted at the end of each analysis run, read by the four BloodHound routes', () => {
  let tally: ReturnType<typeof countingDb>['tally']

  beforeAll(async () => {
    admin = await adminToken()
    await insertGraph(db, NODES, EDGES)
    const counted = countingDb(db)
    tally = counted.tally
    runs.push(await runAnalysisDirect(counted.db))
    // a new session: U2 is covered from run 2 on. Run 2 reads the graph in pages of 2 nodes (D: 23 nodes, 12 pages):
    // its numbers must be those of one page.
    await insertGraph(db, [], [e('C2', 'HasSession', 'U2')])
    runs.push(await runAnalysisDirect(db, { dataQualityPageSize: 2 }))
  })

  it('costs the run one statement per environment page plus the list, and writes its rows in the commit batch', () => {
    console.log(`analysis run: ${tally.statements} D1 statements, of which ${tally.dataQuality} data quality`)
    // environment list 1 + one page each for D, D2, T + one insert per platform (in the commit batch)
    expect(tally.dataQuality).toBe(6)
    expect(tally.insertsInCommit).toBe(2)
  })

  it('AD domain: exact counts and completeness per run, newest first by default', async () => {
    const r = await get<Page>(admin, `/api/v2/ad-domains/${D}/data-quality-stats?${WIDE}`)
    expect(r).toMatchObject({ count: 2, skip: 0, limit: 1000, start: '2000-01-01T00:00:00.000Z', end: '2100-01-01T00:00:00.000Z' })
    expect(r.data[0]).toMatchObject({ ...AD_RUN2, run_id: String(runs[1].runId), created_at: runs[1].completedAt, updated_at: runs[1].completedAt })
    expect(r.data[1]).toMatchObject({ ...AD_RUN1, run_id: String(runs[0].runId), created_at: runs[0].completedAt })
    expect(r.data[0].deleted_at).toEqual({ time: ZERO_TIME, valid: false })
    expect(Number.isInteger(r.data[0].id)).toBe(true)
    // nothing of the parts behind the fractions leaks into the row
    expect(Object.keys(r.data[0])).not.toContain('active_users')
    const d2 = await get<Page>(admin, `/api/v2/ad-domains/${D2}/data-quality-stats?${WIDE}&sort_by=created_at`)
    expect(d2.data.map((x) => x.run_id)).toEqual(runs.map((x) => String(x.runId)))
    expect(d2.data[1]).toMatchObject(D2_ROW)
  })

  it('Azure tenant: exact counts per run', async () => {
    const r = await get<Page>(admin, `/api/v2/azure-tenants/${T}/data-quality-stats?${WIDE}`)
    expect(r.count).toBe(2)
    expect(r.data[0]).toMatchObject({ ...AZ_ROW, run_id: String(runs[1].runId) })
    expect(r.data[1]).toMatchObject(AZ_ROW)
  })

  it('pages and windows the history: sort_by, skip, limit, start, end', async () => {
    const asc = await get<Page>(admin, `/api/v2/ad-domains/${D}/data-quality-stats?${WIDE}&sort_by=created_at&limit=1`)
    expect(asc).toMatchObject({ count: 2, limit: 1 })
    expect(asc.data.map((x) => x.created_at)).toEqual([runs[0].completedAt])
    const second = await get<Page>(admin, `/api/v2/ad-domains/${D}/data-quality-stats?${WIDE}&sort_by=-created_at&skip=1`)
    expect(second.data.map((x) => x.created_at)).toEqual([runs[0].completedAt])
    const onlyFirst = await get<Page>(admin, `/api/v2/ad-domains/${D}/data-quality-stats?start=2000-01-01T00:00:00Z&end=${runs[0].completedAt}`)
    expect(onlyFirst.count).toBe(1)
    expect(onlyFirst.data[0]).toMatchObject(AD_RUN1)
    // default window: the last 30 days (the runs just happened)
    const recent = await get<Page>(admin, `/api/v2/ad-domains/${D}/data-quality-stats`)
    expect(recent.count).toBe(2)
    const none = await get<Page>(admin, `/api/v2/ad-domains/${D}/data-quality-stats?start=2001-01-01T00:00:00Z&end=2002-01-01T00:00:00Z`)
    expect(none).toMatchObject({ count: 0, data: [] })
  })

  it('platform aggregates: one row per run, counts summed over the domains / tenants, completeness over all their active objects', async () => {
    const adAgg = await get<Page>(admin, `/api/v2/platform/ad/data-quality-stats?${WIDE}`)
    expect(adAgg.count).toBe(2)
    expect(adAgg.data[0]).toMatchObject({
      domains: 2,
      users: 7,
      groups: 2,
      computers: 4,
      certtemplates: 2,
      acls: 3,
      sessions: 4,
      relationships: 16,
      // (2 + 0) of (3 + 1) active users; (1 + 0) of (2 + 0) active Windows computers
      session_completeness: 2 / 4,
      local_group_completeness: 1 / 2,
      run_id: String(runs[1].runId),
      created_at: runs[1].completedAt,
    })
    expect(adAgg.data[1]).toMatchObject({ domains: 2, sessions: 3, session_completeness: 1 / 4 })
    const azAgg = await get<Page>(admin, `/api/v2/platform/azure/data-quality-stats?${WIDE}&sort_by=created_at`)
    expect(azAgg.count).toBe(2)
    expect(azAgg.data[0]).toMatchObject({ tenants: 1, users: 2, relationships: 6, run_id: String(runs[0].runId) })
  })

  it('completeness: the newest run, over every domain the caller may see', async () => {
    const r = await get<{ data: Record<string, number> }>(admin, '/api/v2/completeness')
    expect(r).toEqual({ data: { LocalGroupCompleteness: 1 / 2, SessionCompleteness: 2 / 4 } })
  })

  it('a caller restricted to D2 sees D2 only: 404 for D, D2 alone in the aggregates and completeness', async () => {
    const { client } = await userWithRole('Read-Only', { all_environments: false, environment_access: [D2] })
    const hidden = await get<Envelope>(client, `/api/v2/ad-domains/${D}/data-quality-stats?${WIDE}`, 404)
    const unknown = await get<Envelope>(client, `/api/v2/ad-domains/S-1-5-21-999/data-quality-stats`, 404)
    // the same answer for a hidden and an unknown domain
    expect(hidden.errors).toEqual(unknown.errors)
    await get<Envelope>(client, `/api/v2/azure-tenants/${T}/data-quality-stats`, 404)
    const own = await get<Page>(client, `/api/v2/ad-domains/${D2}/data-quality-stats?${WIDE}`)
    expect(own.count).toBe(2)
    const agg = await get<Page>(client, `/api/v2/platform/ad/data-quality-stats?${WIDE}`)
    expect(agg.data[0]).toMatchObject({ domains: 1, users: 1, relationships: 1, session_completeness: 0 })
    const az = await get<Page>(client, `/api/v2/platform/azure/data-quality-stats?${WIDE}`)
    expect(az).toMatchObject({ count: 0, data: [] })
    expect(await get(client, '/api/v2/completeness')).toEqual({ data: { LocalGroupCompleteness: 0, SessionCompleteness: 0 } })
  })

  it('unknown environment: the 404 envelope', async () => {
    for (const path of ['/api/v2/ad-domains/S-1-5-21-999/data-quality-stats', '/api/v2/azure-tenants/NO-SUCH-TENANT/data-quality-stats']) {
      const body = await get<Envelope>(admin, path, 404)
      expect(body.http_status).toBe(404)
      expect(body.errors[0]).toMatchObject({ message: 'environment not found' })
    }
  })

  it('bad query parameters and platform ids: the 400 envelope', async () => {
    const bad = [
      `/api/v2/ad-domains/${D}/data-quality-stats?start=yesterday`,
      `/api/v2/ad-domains/${D}/data-quality-stats?end=2020-13-01`,
      `/api/v2/ad-domains/${D}/data-quality-stats?sort_by=users`,
      `/api/v2/ad-domains/${D}/data-quality-stats?sort_by=created_at&sort_by=password`,
      `/api/v2/ad-domains/${D}/data-quality-stats?limit=10001`,
      `/api/v2/ad-domains/${D}/data-quality-stats?skip=-1`,
      `/api/v2/ad-domains/${D}/data-quality-stats?start=2020-01-02T00:00:00Z&end=2020-01-01T00:00:00Z`,
      `/api/v2/azure-tenants/${T}/data-quality-stats?limit=abc`,
      '/api/v2/platform/gcp/data-quality-stats',
      '/api/v2/platform/ad/data-quality-stats?sort_by=domains',
    ]
    for (const path of bad) {
      const body = await get<Envelope>(admin, path, 400)
      expect(body.http_status, path).toBe(400)
      expect(body.errors[0].message, path).toBeTruthy()
    }
    const sort = await get<Envelope>(admin, `/api/v2/ad-domains/${D}/data-quality-stats?sort_by=users`, 400)
    expect(sort.errors[0]).toEqual({ context: 'query.sort_by', message: 'column format does not support sorting' })
  })

  it('a run whose commit fails writes no data quality row (the rows are in the commit batch)', async () => {
    const before = await get<Page>(admin, `/api/v2/platform/ad/data-quality-stats?${WIDE}`)
    await db.prepare(`CREATE TRIGGER dq_test_fail_commit BEFORE UPDATE OF status ON analysis_runs WHEN NEW.status = 'complete'
      BEGIN SELECT RAISE(ABORT, 'dq test: commit refused'); END`).run()
    try {
      await expect(runAnalysisDirect(db)).rejects.toThrow(/commit refused/)
    } finally {
      await db.prepare(`DROP TRIGGER dq_test_fail_commit`).run()
    }
    const after = await get<Page>(admin, `/api/v2/platform/ad/data-quality-stats?${WIDE}`)
    expect(after.count).toBe(before.count)
    const rows = await db.prepare(`SELECT (SELECT count(*) FROM ad_data_quality_stats) + (SELECT count(*) FROM azure_data_quality_stats) AS n`).first<{ n: number }>()
    expect(rows!.n).toBe(6)
  })

  it('clear-database with deleteDataQualityHistory deletes the history of both platforms', async () => {
    const res = await admin.raw('POST', '/api/v2/clear-database', { deleteDataQualityHistory: true })
    expect(res.status).toBe(204)
    const adRows = await get<Page>(admin, `/api/v2/ad-domains/${D}/data-quality-stats?${WIDE}`)
    expect(adRows).toMatchObject({ count: 0, data: [] })
    const azRows = await get<Page>(admin, `/api/v2/platform/azure/data-quality-stats?${WIDE}`)
    expect(azRows.count).toBe(0)
    expect(await get(admin, '/api/v2/completeness')).toEqual({ data: { LocalGroupCompleteness: 0, SessionCompleteness: 0 } })
  })
})
