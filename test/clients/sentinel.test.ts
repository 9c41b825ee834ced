/**
 * Microsoft Sentinel's "BloodHound Enterprise" data connector against EdgeHound, request for request
 * (issue 15). Source read: Azure/Azure-Sentinel, Solutions/BloodHound Enterprise/Data Connectors/
 *
 *  - current generation (Python Azure Functions), BloodHoundDataConnector/SharedCode/utility/bloodhound_manager.py
 *    and SharedCode/azure_functions/{attack_path,attack_path_timeline,audit_log,finding_trends,posture_history,
 *    tier_zero_assets}_collector.py, plus the manager's get_posture_stats;
 *  - the older Python function AzureFunctionBloodHoundEnterprise/{bhe_client.py,__init__.py}.
 *
 * Each collector is replayed with the manager's exact request targets (path + query as it formats them,
 * unencoded, signed as sent), its `bhesignature` scheme, Python's RequestDate (local time, microseconds,
 * `+00:00` on an Azure host), `Content-Type: application/json` on every request and, for its one POST, the
 * body `json.dumps` produces. Every field a collector reads is asserted present, non-null and of the type
 * the Python code needs (`float()`, `int()`, string comparison, `.items()`, `json.dumps`).
 */
import { env } from 'cloudflare:workers'
import { beforeAll, describe, expect, it } from 'vitest'
import { adminToken, client, userWithRole } from '../helpers'
import type { EdgeHoundClient } from '../../src/client'
import { upsertExtension } from '../../src/client/extensions'
import { ingest, type OpenGraphPayload } from '../../src/client/graph'
import { listRuns } from '../../src/findings/analysis.store'
import { EDGES, GH_EXTENSION, NODES, TIER_ZERO, environmentProperty } from '../fixtures/findings/known-graph'
import { waitForRun } from '../fixtures/findings/helpers'

const db = env.DB

/** The known graph as an OpenGraph upload: data arrives through ingest, which marks its environments collected. */
function payload(): OpenGraphPayload {
  return {
    graph: {
      nodes: NODES.map((n) => ({ id: n.objectid, kinds: n.kinds, properties: { ...n.properties, ...environmentProperty(n.environment_id) } })),
      edges: EDGES.map((e) => ({ start: { value: e.start }, end: { value: e.end }, kind: e.kind, properties: e.properties ?? {} })),
    },
  }
}

/** Ingest the known graph (once per file) and wait for the analysis its job's end requested. */
async function ingestKnownGraph(admin: EdgeHoundClient): Promise<void> {
  await upsertExtension(admin, GH_EXTENSION)
  const { job } = await ingest(admin, payload())
  expect(job.failed_files).toBe(0)
  const { runs } = await listRuns(db, 0, 1)
  expect((await waitForRun(db, runs[0].id)).status).toBe('complete')
}

/** Python's datetime.now().astimezone().isoformat('T') on a UTC host: microseconds and +00:00. */
const pythonDate = (d: Date) => d.toISOString().replace(/\.(\d{3})Z$/, '.$1456+00:00')
/** (datetime.now() - timedelta(days=1)).replace(hour=0, …).strftime('%Y-%m-%dT%H:%M:%SZ') */
const yesterdayMidnight = () => new Date(Date.now() - 86400_000).toISOString().slice(0, 10) + 'T00:00:00Z'
/** (datetime.utcnow() - timedelta(days=n)).isoformat() + "Z": microseconds, no offset, then Z */
const utcIsoMinus = (days: number) => new Date(Date.now() - days * 86400_000).toISOString().replace(/\.(\d{3})Z$/, '.$1789Z')

const str = (v: unknown) => typeof v === 'string'
const int = (v: unknown) => typeof v === 'number' && Number.isInteger(v)
const num = (v: unknown) => typeof v === 'number' && Number.isFinite(v)
const bool = (v: unknown) => typeof v === 'boolean'
const obj = (v: unknown) => typeof v === 'object' && v !== null && !Array.isArray(v)
type Check = (v: unknown) => boolean

/** Every listed field is present, non-null and passes its check. */
function expectFields(item: Record<string, unknown>, fields: Record<string, Check>, where: string) {
  for (const [k, check] of Object.entries(fields)) {
    expect(item[k], `${where}.${k}`).not.toBeUndefined()
    expect(item[k], `${where}.${k}`).not.toBeNull()
    expect(check(item[k]), `${where}.${k} = ${JSON.stringify(item[k])}`).toBe(true)
  }
}

/**
 * The manager's `_api_request`: GET/POST of `tenant_domain + uri`, signed over `METHOD + uri`; a status ≥ 400
 * is logged and answers None. Every call is recorded so the test can assert the whole sequence succeeded.
 */
class SentinelManager {
  calls: { method: string; uri: string; status: number }[] = []
  constructor(private c: EdgeHoundClient) {}

  async request(uri: string, method = 'GET', payload?: string): Promise<{ status: number; json: unknown; text: string }> {
    const res = await this.c.raw(method, uri, payload, { exactTarget: true, headers: { 'Content-Type': 'application/json', 'User-Agent': 'BloodHound Enterprise - Azure Functions Integration' } })
    const text = await res.text()
    this.calls.push({ method, uri, status: res.status })
    let json: unknown = null
    if (res.status < 400 && !uri.includes('.md')) json = JSON.parse(text)
    return { status: res.status, json, text }
  }

  async get<T>(uri: string): Promise<T> {
    const r = await this.request(uri)
    expect(r.status, `GET ${uri}`).toBe(200)
    return r.json as T
  }
}

type Domain = { id: string; name: string; collected: boolean; type: string; impactValue: number }

async function collectedDomains(m: SentinelManager): Promise<Domain[]> {
  await m.get('/api/v2/available-domains') // test_connection
  const res = await m.get<{ data: Domain[] }>('/api/v2/available-domains')
  for (const d of res.data) expectFields(d, { id: str, name: str, collected: bool }, 'available-domains')
  return res.data.filter((d) => d.collected === true)
}

describe('Microsoft Sentinel data connector (current Python Azure Functions)', () => {
  let admin: EdgeHoundClient
  let sentinel: EdgeHoundClient

  beforeAll(async () => {
    admin = await adminToken({ paced: true })
    await ingestKnownGraph(admin)
    // least privilege: the Auditor role reads the graph, findings, posture and the audit log
    const t = await userWithRole('Auditor')
    sentinel = client({ kind: 'token', tokenId: t.tokenId, tokenKey: t.tokenKey, scheme: 'bhesignature' }, { formatDate: pythonDate, paced: true })
  })

  it('attack_path_collector: domains → available-types → the four texts → details paged with skip (stops under 10)', async () => {
    const m = new SentinelManager(sentinel)
    const domains = await collectedDomains(m)
    expect(domains.length).toBe(3)
    let items = 0
    for (const d of domains) {
      const types = (await m.get<{ data: unknown[] }>(`/api/v2/domains/${d.id}/available-types`)).data
      expect(types.every(str)).toBe(true)
      for (const t of types as string[]) {
        for (const asset of ['title', 'short_description', 'short_remediation', 'long_remediation']) {
          const r = await m.request(`/api/v2/assets/findings/${t}/${asset}.md`)
          expect(r.status).toBe(200)
          expect(r.text.trim().length).toBeGreaterThan(0)
        }
        for (let skip = 0; ; ) {
          const page = await m.get<{ data: Record<string, unknown>[] }>(`/api/v2/domains/${d.id}/details?finding=${t}&skip=${skip}`)
          if (!page.data || page.data.length === 0) break
          for (const f of page.data) {
            items++
            // _prepare_attack_path_log_entry and the updated_at string comparison
            expectFields(
              f,
              {
                updated_at: str,
                created_at: str,
                Accepted: bool,
                deleted_at: obj,
                DomainSID: str,
                Environment: str,
                ExposureCount: int,
                ExposurePercentage: num,
                Finding: str,
                id: int,
                ImpactCount: int,
                ImpactPercentage: num,
                Severity: str,
              },
              t,
            )
            if ('FromPrincipal' in f) {
              expectFields(
                f,
                {
                  AcceptedUntil: str,
                  ComboGraphRelationID: obj,
                  FromEnvironment: str,
                  FromEnvironmentID: str,
                  FromPrincipal: str,
                  FromPrincipalKind: str,
                  FromPrincipalName: str,
                  FromPrincipalProps: obj,
                  IsInherited: bool,
                  PrincipalHash: str,
                  RelProps: obj,
                  ToEnvironment: str,
                  ToEnvironmentID: str,
                  ToPrincipal: str,
                  ToPrincipalKind: str,
                  ToPrincipalName: str,
                  ToPrincipalProps: obj,
                },
                t,
              )
            } else {
              expectFields(f, { Principal: str, PrincipalKind: str, PrincipalName: str, Props: obj }, t)
            }
            expect(String(f.updated_at) > '1970-01-01T00:00:00Z').toBe(true)
          }
          if (page.data.length < 10) break
          skip += page.data.length
        }
      }
    }
    expect(items).toBeGreaterThan(0)
    expect(m.calls.filter((c) => c.status !== 200)).toEqual([])
  }, 120_000)

  it('attack_path_timeline_collector: sparkline from yesterday midnight, then from the newest updated_at', async () => {
    const m = new SentinelManager(sentinel)
    const domains = await collectedDomains(m)
    let rows = 0
    for (const d of domains) {
      const types = (await m.get<{ data: string[] }>(`/api/v2/domains/${d.id}/available-types`)).data
      let last = ''
      for (const t of types) {
        const from = last || yesterdayMidnight()
        const page = await m.get<{ data: Record<string, unknown>[] } | Record<string, unknown>[]>(`/api/v2/domains/${d.id}/sparkline?finding=${t}&from=${from}`)
        const data = Array.isArray(page) ? page : page.data
        expect(Array.isArray(data)).toBe(true)
        for (const s of data) {
          rows++
          expectFields(
            s,
            {
              CompositeRisk: num,
              FindingCount: int,
              ExposureCount: int,
              ImpactCount: int,
              ImpactedAssetCount: int,
              DomainSID: str,
              Finding: str,
              id: int,
              created_at: str,
              updated_at: str,
              deleted_at: obj,
            },
            `sparkline ${t}`,
          )
        }
        // update_timestamps: the newest updated_at becomes the next `from`, sent raw
        const newest = data.map((s) => String(s.updated_at)).reduce((a, b) => (a > b ? a : b), '')
        if (newest) last = newest
      }
      if (last) {
        // the next run asks from that updated_at (as returned, unencoded): it parses and answers
        const again = await m.get<{ data: unknown[] }>(`/api/v2/domains/${d.id}/sparkline?finding=${types[0]}&from=${last}`)
        expect(Array.isArray(again.data)).toBe(true)
      }
    }
    expect(rows).toBeGreaterThan(0)
    expect(m.calls.filter((c) => c.status !== 200)).toEqual([])
  }, 120_000)

  it('audit_log_collector: skip/limit=1000/after until an empty page; the next run resumes after the newest created_at', async () => {
    const m = new SentinelManager(sentinel)
    await m.get('/api/v2/available-domains')
    const fetchAll = async (after: string) => {
      const logs: Record<string, unknown>[] = []
      for (let skip = 0; ; ) {
        const r = await m.get<{ data: { logs: Record<string, unknown>[] } }>(`/api/v2/audit?skip=${skip}&limit=1000&after=${after}`)
        expect(obj(r.data)).toBe(true)
        expect(Array.isArray(r.data.logs)).toBe(true)
        if (r.data.logs.length === 0) return logs
        logs.push(...r.data.logs)
        skip += r.data.logs.length
      }
    }
    const first = await fetchAll(yesterdayMidnight())
    expect(first.length).toBeGreaterThan(0) // at least the token creations of this file
    for (const l of first)
      expectFields(
        l,
        { action: str, actor_email: str, actor_id: str, actor_name: str, commit_id: str, created_at: str, fields: obj, id: int, request_id: str, source_ip_address: str, status: str },
        'audit',
      )
    const newest = first.map((l) => String(l.created_at)).reduce((a, b) => (a > b ? a : b))
    await admin.createToken('sentinel-second-run')
    const second = await fetchAll(newest)
    expect(second.some((l) => l.action === 'CreateAuthToken' && (l.fields as { token_name?: string }).token_name === 'sentinel-second-run')).toBe(true)
    expect(m.calls.filter((c) => c.status !== 200)).toEqual([])
  })

  it('finding_trends_collector: environments=<id>&start=<utcnow − n days>Z for 365/180/90/30/7 days', async () => {
    const m = new SentinelManager(sentinel)
    const domains = await collectedDomains(m)
    let findings = 0
    for (const days of [365, 180, 90, 30, 7]) {
      const start = utcIsoMinus(days)
      for (const d of domains) {
        const r = await m.get<{ start: string; end: string; data: { findings: Record<string, unknown>[] } }>(`/api/v2/attack-paths/finding-trends?environments=${d.id}&start=${start}`)
        expectFields(r as unknown as Record<string, unknown>, { start: str, end: str, data: obj }, 'finding-trends')
        for (const f of r.data.findings) {
          findings++
          expectFields(
            f,
            {
              composite_risk: num,
              display_title: str,
              display_type: str,
              exposure_count: int,
              finding: str,
              finding_count_decrease: int,
              finding_count_end: int,
              finding_count_increase: int,
              finding_count_start: int,
              impact_count: int,
            },
            `trends ${d.id}`,
          )
        }
      }
    }
    expect(findings).toBeGreaterThan(0)
    expect(m.calls.filter((c) => c.status !== 200)).toEqual([])
  })

  it('posture_history_collector: findings, exposure, assets, attack-paths per environment; resumes from the newest date', async () => {
    const m = new SentinelManager(sentinel)
    const domains = await collectedDomains(m)
    const last = new Map<string, string>()
    for (const run of [1, 2]) {
      for (const d of domains) {
        for (const type of ['findings', 'exposure', 'assets', 'attack-paths']) {
          const start = last.get(`${d.id}/${type}`) || yesterdayMidnight()
          const r = await m.get<{ start: string; end: string; data: Record<string, unknown>[] }>(`/api/v2/posture-history/${type}?environments=${d.id}&start=${start}`)
          expectFields(r as unknown as Record<string, unknown>, { start: str, end: str }, 'posture-history')
          // today's analysis run is in the window
          expect(r.data.length, `${type} ${d.id} run ${run}`).toBe(1)
          for (const p of r.data) expectFields(p, { date: str, value: num }, `posture-history ${type}`)
          last.set(`${d.id}/${type}`, r.data.map((p) => String(p.date)).reduce((a, b) => (a > b ? a : b)))
        }
      }
    }
    expect(m.calls.filter((c) => c.status !== 200)).toEqual([])
  })

  it('get_posture_stats: no parameters; every row with the fields send_posture_stat_data reads', async () => {
    const m = new SentinelManager(sentinel)
    const r = await m.get<{ data: Record<string, unknown>[] }>('/api/v2/posture-stats')
    expect(r.data.length).toBe(3)
    for (const p of r.data)
      expectFields(p, { created_at: str, critical_risk_count: int, deleted_at: obj, domain_sid: str, exposure_index: num, id: int, tier_zero_count: int, updated_at: str }, 'posture-stats')
  })

  it('tier_zero_assets_collector: POST graphs/cypher with its query; nodes keyed by id with every field it reads', async () => {
    const m = new SentinelManager(sentinel)
    await collectedDomains(m)
    // json.dumps({"query": …, "include_properties": True}): Python's separators ", " and ": "
    const payload = `{"query": "match (n) where (n:Tag_Tier_Zero) or coalesce(n.system_tags,'') contains('admin_tier_0') return n", "include_properties": true}`
    const r = await m.request('/api/v2/graphs/cypher', 'POST', payload)
    expect(r.status).toBe(200)
    const nodes = (r.json as { data: { nodes: Record<string, Record<string, unknown>> } }).data.nodes
    expect(obj(nodes)).toBe(true)
    const entries = Object.entries(nodes)
    expect(entries.length).toBeGreaterThan(0)
    for (const [, n] of entries) {
      expectFields(n, { kind: str, properties: obj, label: str, objectId: str, isTierZero: bool, isOwnedObject: bool, lastSeen: str }, 'tier zero node')
    }
    // the query's `contains` is a substring test: a node tagged `admin_tier_0_candidate` matches too, and is
    // (correctly) not Tier Zero; every node the rules mark is there
    expect(entries.filter(([, n]) => n.isTierZero === true).length).toBe(TIER_ZERO.size)
  })

  it('tier_zero_assets_collector twice in one hour (its timer has runOnStartup: a restart re-runs it): the same signed POST is answered again', async () => {
    const m = new SentinelManager(sentinel)
    const payload = `{"query": "match (n) where (n:Tag_Tier_Zero) or coalesce(n.system_tags,'') contains('admin_tier_0') return n", "include_properties": true}`
    const a = await m.request('/api/v2/graphs/cypher', 'POST', payload)
    const b = await m.request('/api/v2/graphs/cypher', 'POST', payload)
    expect([a.status, b.status]).toEqual([200, 200])
    expect(b.json).toEqual(a.json)
  })
})

describe('Microsoft Sentinel, older Python function (bhe_client.py, "bhe-sentinel-integration v0.0.1")', () => {
  let old: SentinelManager

  beforeAll(async () => {
    const t = await userWithRole('Read-Only')
    old = new SentinelManager(client({ kind: 'token', tokenId: t.tokenId, tokenKey: t.tokenKey, scheme: 'bhesignature' }, { formatDate: pythonDate, paced: true }))
  })

  it('version → domains → types + titles → details limit=0 Accepted=eq:False → sparkline from/to → posture-stats from/to', async () => {
    const version = await old.request('/api/version')
    expect(version.status).toBe(200)
    const domains = (await old.get<{ data: Record<string, unknown>[] }>('/api/v2/available-domains')).data
    expect(domains.filter((d) => d.collected === true).length).toBe(3)
    for (const d of domains) expectFields(d, { collected: bool, id: str, name: str, impactValue: int, type: str }, 'available-domains')
    // first run: from the beginning of time to now, milliseconds and Z
    const from = '1970-01-01T00:00:00.000Z'
    const to = new Date().toISOString()
    for (const d of domains.filter((x) => x.collected)) {
      const types = (await old.get<{ data: string[] }>(`/api/v2/domains/${d.id}/available-types`)).data
      for (const t of types) {
        const title = await old.request(`/api/v2/assets/findings/${t}/title.md`)
        expect(title.status).toBe(200)
        const details = await old.get<{ count: number; data: Record<string, unknown>[] }>(`/api/v2/domains/${d.id}/details?finding=${t}&skip=0&limit=0&Accepted=eq:False`)
        expect(int(details.count)).toBe(true)
        expect(details.data.length).toBe(details.count) // limit=0: every row in one answer
        for (const f of details.data) {
          if ('FromPrincipalProps' in f && 'ToPrincipalProps' in f) {
            expectFields(f, { FromPrincipalProps: obj, ToPrincipalProps: obj, FromPrincipal: str, ToPrincipal: str }, t)
          } else {
            expectFields(f, { Props: obj }, t)
            expect(str((f.Props as Record<string, unknown>).name)).toBe(true) // path_data['Props']['name']
          }
        }
        const spark = await old.get<{ data: Record<string, unknown>[] }>(`/api/v2/domains/${d.id}/sparkline?finding=${t}&from=${from}&to=${to}`)
        expect(spark.data.length).toBeGreaterThan(0)
        for (const s of spark.data)
          expectFields(s, { CompositeRisk: num, FindingCount: int, ImpactedAssetCount: int, id: int, created_at: str, updated_at: str, deleted_at: obj }, `sparkline ${t}`)
      }
    }
    const posture = (await old.get<{ data: Record<string, unknown>[] }>(`/api/v2/posture-stats?from=${from}&to=${to}`)).data
    expect(posture.length).toBeGreaterThan(0)
    const ids = new Set(domains.map((d) => d.id))
    for (const p of posture) {
      expectFields(p, { domain_sid: str, exposure_index: num }, 'posture-stats')
      // next(x for x in domains if x['id'] == posture_event['domain_sid']) raises StopIteration otherwise
      expect(ids.has(String(p.domain_sid)), String(p.domain_sid)).toBe(true)
    }
    expect(old.calls.filter((c) => c.status !== 200)).toEqual([])
  }, 120_000)
})
