/**
 * The connector flow of the spec (section C), end to end, the way the Google SecOps connector does it:
 * data arrives through ingest (file-upload job → analysis requested when the job ends), then a signed
 * client (bhesignature, Python-style RequestDate) reads environments → finding types → texts → details
 * paged with `skip` only until an empty page, remembers the newest created_at per domain NAME, and a
 * second poll keeps only items with a greater created_at string.
 */
import { env } from 'cloudflare:workers'
import { beforeAll, describe, expect, it } from 'vitest'
import { adminToken, client } from '../helpers'
import type { EdgeHoundClient } from '../../src/client'
import { upsertExtension } from '../../src/client/extensions'
import { ingest, type OpenGraphPayload } from '../../src/client/graph'
import {
  availableFindingTypes,
  findingAsset,
  isListFinding,
  pageAllDetails,
  requestAnalysis,
  type FindingAsset,
  type FindingJson,
} from '../../src/client/findings'
import { listRuns } from '../../src/findings/analysis.store'
import { D, EDGES, EXPECTED_FINDINGS, EXPECTED_IMPACT_VALUES, G, GH_EXTENSION, ID, NODES, T, environmentProperty } from '../fixtures/findings/known-graph'
import { waitForRun } from '../fixtures/findings/helpers'

const db = env.DB

function payload(nodes = NODES, edges = EDGES): OpenGraphPayload {
  return {
    graph: {
      nodes: nodes.map((n) => ({ id: n.objectid, kinds: n.kinds, properties: { ...n.properties, ...environmentProperty(n.environment_id) } })),
      edges: edges.map((e) => ({ start: { value: e.start }, end: { value: e.end }, kind: e.kind, properties: e.properties ?? {} })),
    },
  }
}

/** Python's datetime.now().astimezone().isoformat() on a UTC host: microseconds and +00:00. */
const pythonDate = (d: Date) => d.toISOString().replace(/\.(\d{3})Z$/, '.$1123+00:00')

async function latestRunDone(): Promise<void> {
  const { runs } = await listRuns(db, 0, 1)
  expect(runs.length).toBe(1)
  expect((await waitForRun(db, runs[0].id)).status).toBe('complete')
}

interface Domain {
  id: string
  name: string
  type: string
  collected: boolean
  impactValue: number
}

/**
 * One connector run; returns the new items per domain name and updates the watermarks. The connector
 * downloads the texts on every run; the tests do it on the first only (the machine is shared).
 */
async function poll(c: EdgeHoundClient, watermarks: Map<string, string>, withTexts = false) {
  const domains = (await c.call<{ data: Domain[] }>('GET', '/api/v2/available-domains')).data.filter((d) => d['collected'])
  const fresh = new Map<string, FindingJson[]>()
  const texts = new Map<string, Record<FindingAsset, string>>()
  let requests = 0
  for (const d of domains) {
    const types = (await availableFindingTypes(c, d.id)).data
    for (const t of types) {
      if (withTexts && !texts.has(t)) {
        const entry = {} as Record<FindingAsset, string>
        for (const a of ['title', 'short_description', 'short_remediation', 'long_remediation'] as const) entry[a] = (await findingAsset(c, t, a, { md: true })).trim()
        texts.set(t, entry)
      }
      const { items, requests: n } = await pageAllDetails(c, d.id, t)
      requests += n
      const mark = watermarks.get(d.name)
      for (const item of items) {
        if (!item.created_at || (mark !== undefined && !(item.created_at > mark))) continue
        fresh.set(d.name, [...(fresh.get(d.name) ?? []), item])
      }
    }
  }
  for (const [name, items] of fresh) {
    const max = items.map((i) => i.created_at).reduce((a, b) => (a > b ? a : b))
    const old = watermarks.get(name)
    if (old === undefined || max > old) watermarks.set(name, max)
  }
  return { domains, fresh, texts, requests }
}

describe('connector flow end to end (ingest → analysis → the connector read endpoints)', () => {
  let admin: EdgeHoundClient
  let connector: EdgeHoundClient
  const watermarks = new Map<string, string>()

  beforeAll(async () => {
    // a connector's whole poll from one token: back off on 429 (Retry-After) as the real connectors do
    admin = await adminToken({ paced: true })
    await upsertExtension(admin, GH_EXTENSION)
    const { job } = await ingest(admin, payload())
    expect(job.failed_files).toBe(0)
    await latestRunDone()
    const t = await admin.createToken('secops-connector')
    connector = client({ kind: 'token', tokenId: t.data.id, tokenKey: t.data.key, scheme: 'bhesignature' }, { formatDate: pythonDate, paced: true })
  })

  it('first poll: every environment, type, text and finding, paging with skip until an empty page', async () => {
    const { domains, fresh, texts } = await poll(connector, watermarks, true)
    const byId = new Map(domains.map((d) => [d.id, d]))
    expect([...byId.keys()].sort()).toEqual([G, D, T].sort())
    for (const [id, v] of Object.entries(EXPECTED_IMPACT_VALUES)) expect(byId.get(id)!.impactValue).toBe(v)

    const all = [...fresh.values()].flat()
    expect(all.length).toBe(EXPECTED_FINDINGS.length)
    const got = all.map((f) => [f.Finding, f.DomainSID, isListFinding(f) ? f.Principal : f.FromPrincipal, isListFinding(f) ? '' : f.ToPrincipal, f.ImpactCount, f.ExposureCount, f.Severity])
    const key = (a: unknown[]) => a.join('\u0000')
    expect(got.map(key).sort()).toEqual(EXPECTED_FINDINGS.map(key).sort())

    // what the connectors need to not crash: numbers, strings, objects
    for (const f of all) {
      expect(typeof f.ImpactPercentage).toBe('number')
      expect(typeof f.ExposurePercentage).toBe('number')
      expect(typeof f.Severity).toBe('string')
      expect(f.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)
      const props = isListFinding(f) ? [f.Props] : [f.FromPrincipalProps, f.ToPrincipalProps]
      for (const p of props) {
        expect(typeof p.objectid).toBe('string')
        expect(typeof p.name).toBe('string')
      }
    }
    // texts: every type has a non-empty title and the three texts
    expect(texts.get('T0DCSync')!.title).toBe('Non Tier Zero Principals with DCSync Privileges on Tier Zero Objects')
    expect(texts.get('GH_T0AdminOf')!.title).toBe('Non Tier Zero Administrators of Tier Zero Repositories')
    for (const t of texts.values()) for (const v of Object.values(t)) expect(v.length).toBeGreaterThan(0)
    // watermarks are kept per domain name
    expect([...watermarks.keys()].sort()).toEqual(['ACME-ORG', 'CONTOSO', 'CORP.LOCAL'])
  }, 120_000)

  it('a second poll after another (unchanged) analysis run yields nothing new', async () => {
    const run = await requestAnalysis(admin)
    expect((await waitForRun(db, run.data.id)).unchanged_count).toBe(EXPECTED_FINDINGS.length)
    const { fresh, requests } = await poll(connector, watermarks)
    expect(fresh.size).toBe(0)
    // one request per page plus the terminating empty page for every (domain, type)
    expect(requests).toBeGreaterThan(0)
  }, 120_000)

  it('after new data arrives through ingest, the next poll yields exactly the new finding', async () => {
    const { job } = await ingest(admin, payload([], [{ start: ID.GRACE, end: ID.DA, kind: 'GenericAll' }]))
    expect(job.failed_files).toBe(0)
    await latestRunDone()
    const { fresh } = await poll(connector, watermarks)
    expect([...fresh.keys()]).toEqual(['CORP.LOCAL'])
    const [item] = fresh.get('CORP.LOCAL')!
    expect(fresh.get('CORP.LOCAL')).toHaveLength(1)
    expect(item).toMatchObject({ Finding: 'T0GenericAll', FromPrincipal: ID.GRACE, ToPrincipal: ID.DA, DomainSID: D })
    // and the poll after that is quiet again
    expect((await poll(connector, watermarks)).fresh.size).toBe(0)
  }, 120_000)
})
