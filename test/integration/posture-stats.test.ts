import { env } from 'cloudflare:workers'
import { beforeAll, describe, expect, it } from 'vitest'
import { adminToken, userWithRole } from '../helpers'
import type { EdgeHoundClient } from '../../src/client'
import { upsertExtension } from '../../src/client/extensions'
import { findingTrends, postureStats, type PostureStatJson } from '../../src/client/posture'
import { ZERO_TIME } from '../../src/findings/details'
import { D, G, GH_EXTENSION, ID, NODES, T, TIER_ZERO } from '../fixtures/findings/known-graph'
import { deleteEdge, insertGraph, runAnalysisDirect } from '../fixtures/findings/helpers'

const db = env.DB
let admin: EdgeHoundClient

const tierZero = (envId: string) => NODES.filter((n) => n.environment_id === envId && TIER_ZERO.has(n.objectid)).length
const pick = (r: PostureStatJson) => [r.domain_sid, r.exposure_index, r.tier_zero_count, r.critical_risk_count]

describe('GET /api/v2/posture-stats: one row per environment per analysis run', () => {
  const commits: string[] = []

  beforeAll(async () => {
    admin = await adminToken()
    await upsertExtension(admin, GH_EXTENSION)
    await insertGraph(db)
    // run 1: the known graph; run 2: ALL STAFF loses AddSecret on the Tier Zero app (the only critical finding)
    commits.push((await runAnalysisDirect(db)).completedAt)
    await deleteEdge(db, ID.AZ_ALL, 'AZAddSecret', ID.AZ_APP)
    commits.push((await runAnalysisDirect(db)).completedAt)
  })

  it('answers the newest row of each environment without parameters, with every field set', async () => {
    const r = await postureStats(admin)
    expect(r).toMatchObject({ count: 3, skip: 0, limit: 100 })
    expect(typeof r.start).toBe('string')
    expect(typeof r.end).toBe('string')
    // exposure: largest share of the environment's principals one finding type lets reach Tier Zero
    expect(r.data.map(pick).sort()).toEqual(
      [
        [D, 8 / 20, tierZero(D), 0],
        [G, 2 / 3, tierZero(G), 0],
        [T, 8 / 10, tierZero(T), 0],
      ].sort(),
    )
    for (const row of r.data) {
      expect(Number.isInteger(row.id)).toBe(true)
      expect(row.created_at).toBe(commits[1])
      expect(row.updated_at).toBe(commits[1])
      expect(row.deleted_at).toEqual({ time: ZERO_TIME, valid: false })
    }
    expect(tierZero(D)).toBeGreaterThan(0)
  })

  it('answers every row in a from/to window, sorted and filtered as asked', async () => {
    const all = await postureStats(admin, { from: '2000-01-01T00:00:00Z', sort_by: 'domain_sid,created_at' })
    expect(all.count).toBe(6)
    const tenant = all.data.filter((r) => r.domain_sid === T).map(pick)
    expect(tenant).toEqual([
      [T, 1, tierZero(T), 1],
      [T, 8 / 10, tierZero(T), 0],
    ])
    const only = await postureStats(admin, { from: '2000-01-01T00:00:00Z', domain_sid: `eq:${T}`, sort_by: '-created_at', limit: 1 })
    expect(only.count).toBe(2)
    expect(only.data.map(pick)).toEqual([[T, 8 / 10, tierZero(T), 0]])
    const firstOnly = await postureStats(admin, { from: '2000-01-01T00:00:00Z', to: commits[0] })
    expect(firstOnly.count).toBe(3)
    expect(firstOnly.data.every((r) => r.created_at === commits[0])).toBe(true)
  })

  it('answers an empty page for a window with no runs', async () => {
    const r = await postureStats(admin, { from: '2001-01-01T00:00:00Z', to: '2002-01-01T00:00:00Z' })
    expect(r).toMatchObject({ count: 0, data: [], start: '2001-01-01T00:00:00.000Z', end: '2002-01-01T00:00:00.000Z' })
  })

  it('shows a restricted user only the environments they may see', async () => {
    const { client } = await userWithRole('Read-Only', { all_environments: false, environment_access: [G] })
    const r = await postureStats(client)
    expect(r.count).toBe(1)
    expect(r.data.map((x) => x.domain_sid)).toEqual([G])
  })

  it('refuses a malformed query with the error envelope', async () => {
    for (const q of ['from=yesterday', 'sort_by=password', 'limit=10001', 'from=2020-01-02T00:00:00Z&to=2020-01-01T00:00:00Z']) {
      const res = await admin.raw('GET', `/api/v2/posture-stats?${q}`)
      expect(res.status, q).toBe(400)
      const body = (await res.json()) as { http_status: number; errors: { context: string; message: string }[] }
      expect(body.http_status).toBe(400)
      expect(body.errors[0].message).toBeTruthy()
    }
  })

  it('finding trends: counts from the findings\' lifetimes between two runs', async () => {
    const r = await findingTrends(admin, [T], { start: commits[0], end: commits[1] })
    expect(r.environments).toEqual([T])
    expect(r.data.total_finding_count_start).toBe(6)
    expect(r.data.total_finding_count_end).toBe(5)
    const secret = r.data.findings.find((f) => f.finding === 'T0AZAddSecret')!
    expect(secret).toMatchObject({ environment_id: T, finding_count_start: 1, finding_count_end: 0, finding_count_increase: 0, finding_count_decrease: 1 })
    for (const f of r.data.findings) for (const v of Object.values(f)) expect(v).not.toBeNull()
    const atFirst = await findingTrends(admin, [T], { start: '2000-01-01T00:00:00Z', end: commits[0] })
    expect(atFirst.data.findings.find((f) => f.finding === 'T0AZAddSecret')).toMatchObject({
      finding_count_start: 0,
      finding_count_end: 1,
      finding_count_increase: 1,
      finding_count_decrease: 0,
      composite_risk: 100,
      impact_count: 10,
      exposure_count: 10,
    })
    expect(atFirst.data.total_finding_count_end).toBe(6)
  })

  it('finding trends: an environment with no findings and a window with no runs answer zeros, never null', async () => {
    const none = await findingTrends(admin, ['S-1-5-21-9999'])
    expect(none.data).toEqual({ findings: [], total_finding_count_start: 0, total_finding_count_end: 0 })
    const before = await findingTrends(admin, [D, T], { start: '2001-01-01T00:00:00Z', end: '2002-01-01T00:00:00Z' })
    expect(before).toMatchObject({ start: '2001-01-01T00:00:00.000Z', end: '2002-01-01T00:00:00.000Z', environments: [D, T] })
    expect(before.data).toEqual({ findings: [], total_finding_count_start: 0, total_finding_count_end: 0 })
    const res = await admin.raw('GET', '/api/v2/attack-paths/finding-trends')
    expect(res.status).toBe(400)
  })
})
