/**
 * GET /api/v2/posture-history/{findings|exposure|assets|attack-paths} (issue 15; docs/findings.md
 * "Posture history"): real analysis runs of the known graph with known changes between them, each moved to a
 * chosen time on the calendar afterwards (runs commit at the wall clock; the history reads only the posture and
 * sparkline rows, whose times are shifted by run id):
 *
 *   2026-03-01 10:00  run A  the known graph (+ an environment E with a principal and no findings)
 *   2026-03-01 18:00  run B  ALL STAFF lost AddSecret on the Tier Zero app (tenant: 6 → 5 findings, 5 → 4 types)
 *   2026-03-02        no run
 *   2026-03-03 09:00  run C  MALLORY lost GenericAll on DOMAIN ADMINS (domain: 14 → 13 findings, 12 → 11 types)
 */
import { env } from 'cloudflare:workers'
import { beforeAll, describe, expect, it } from 'vitest'
import { adminToken, expectEnvelope, userWithRole } from '../helpers'
import type { EdgeHoundClient } from '../../src/client'
import { upsertExtension } from '../../src/client/extensions'
import { postureHistory, postureStats, type PostureHistoryType } from '../../src/client/posture'
import { D, G, GH_EXTENSION, ID, NODES, T, TIER_ZERO } from '../fixtures/findings/known-graph'
import { deleteEdge, insertGraph, runAnalysisDirect } from '../fixtures/findings/helpers'

const db = env.DB
const E = 'S-1-5-21-2000'
const E_NODES = [
  { objectid: E, kinds: ['Domain', 'Base'], name: 'QUIET.LOCAL', environment_id: E, properties: { name: 'QUIET.LOCAL', objectid: E, domainsid: E } },
  { objectid: `${E}-1105`, kinds: ['User', 'Base'], name: 'NOBODY@QUIET.LOCAL', environment_id: E, properties: { name: 'NOBODY@QUIET.LOCAL', objectid: `${E}-1105` } },
]
const tierZero = (envId: string) => NODES.filter((n) => n.environment_id === envId && TIER_ZERO.has(n.objectid)).length

/** Moves a committed run's posture and sparkline rows to `at` (test-only; see the file comment). */
async function placeRun(runId: number, at: string) {
  await db.batch([
    db.prepare(`UPDATE posture_stats SET created_at = ?2, updated_at = ?2 WHERE run_id = ?1`).bind(runId, at),
    db.prepare(`UPDATE finding_sparklines SET created_at = ?2 WHERE run_id = ?1`).bind(runId, at),
  ])
}

const WINDOW = { start: '2026-02-20T00:00:00Z', end: '2026-03-10T00:00:00Z' }
const DAY1 = '2026-03-01T00:00:00.000Z'
const DAY3 = '2026-03-03T00:00:00.000Z'

describe('GET /api/v2/posture-history/{data_type}: one point per day, the day’s last run', () => {
  let admin: EdgeHoundClient
  let eTierZero = -1

  beforeAll(async () => {
    admin = await adminToken()
    await upsertExtension(admin, GH_EXTENSION)
    await insertGraph(db)
    await insertGraph(db, E_NODES, [])
    await placeRun((await runAnalysisDirect(db)).runId, '2026-03-01T10:00:00.000Z')
    await deleteEdge(db, ID.AZ_ALL, 'AZAddSecret', ID.AZ_APP)
    await placeRun((await runAnalysisDirect(db)).runId, '2026-03-01T18:00:00.000Z')
    await deleteEdge(db, ID.MALLORY, 'GenericAll', ID.DA)
    await placeRun((await runAnalysisDirect(db)).runId, '2026-03-03T09:00:00.000Z')
    const stats = await postureStats(admin, { from: WINDOW.start, to: WINDOW.end, domain_sid: `eq:${E}` })
    expect(stats.count).toBe(3) // E has a posture row in every run
    eTierZero = stats.data[0].tier_zero_count
  })

  const points = async (type: PostureHistoryType, envs: string[], q: { start?: string; end?: string } = WINDOW, c = admin) =>
    (await postureHistory(c, type, envs, q)).data.map((p) => [p.date, p.value])

  it('answers the window, the type and the environments asked, with one point per day that had a run', async () => {
    const r = await postureHistory(admin, 'findings', [D, T], WINDOW)
    expect(r).toMatchObject({ start: '2026-02-20T00:00:00.000Z', end: '2026-03-10T00:00:00.000Z', data_type: 'findings', environments: [D, T] })
    // day 1: run B (the later run of the day), not run A; day 2: no run, no point; day 3: run C
    expect(r.data).toEqual([
      { date: DAY1, value: 14 + 5 },
      { date: DAY3, value: 13 + 5 },
    ])
  })

  it('counts attack paths (finding types with open findings), Tier Zero assets and exposure', async () => {
    expect(await points('attack-paths', [D, T])).toEqual([
      [DAY1, 12 + 4],
      [DAY3, 11 + 4],
    ])
    expect(await points('assets', [D, T])).toEqual([
      [DAY1, tierZero(D) + tierZero(T)],
      [DAY3, tierZero(D) + tierZero(T)],
    ])
    expect(tierZero(D)).toBeGreaterThan(0)
    // exposure: the largest of the environments' exposure indexes (tenant 8/10 after run B, domain 8/20)
    expect(await points('exposure', [D, T])).toEqual([
      [DAY1, 8 / 10],
      [DAY3, 8 / 10],
    ])
    expect(await points('exposure', [D])).toEqual([
      [DAY1, 8 / 20],
      [DAY3, 8 / 20],
    ])
    // one environment alone, and the tenant's day-1 value is run B's, not run A's (6 findings, exposure 1)
    expect(await points('findings', [T])).toEqual([
      [DAY1, 5],
      [DAY3, 5],
    ])
  })

  it('an environment with no findings has points of zero findings, attack paths and exposure', async () => {
    expect(await points('findings', [E])).toEqual([
      [DAY1, 0],
      [DAY3, 0],
    ])
    expect(await points('attack-paths', [E])).toEqual([
      [DAY1, 0],
      [DAY3, 0],
    ])
    expect(await points('exposure', [E])).toEqual([
      [DAY1, 0],
      [DAY3, 0],
    ])
    expect(await points('assets', [E])).toEqual([
      [DAY1, eTierZero],
      [DAY3, eTierZero],
    ])
    // and adds nothing to another environment's counts
    expect(await points('findings', [G, E])).toEqual([
      [DAY1, 1],
      [DAY3, 1],
    ])
  })

  it('a window with no runs, or an unknown environment, answers no points', async () => {
    // start inclusive, end exclusive: day 2 alone, up to the instant before run C
    const gap = await postureHistory(admin, 'findings', [D, T], { start: '2026-03-02T00:00:00Z', end: '2026-03-03T09:00:00Z' })
    expect(gap).toMatchObject({ start: '2026-03-02T00:00:00.000Z', end: '2026-03-03T09:00:00.000Z', data: [] })
    expect(await points('assets', [D], { start: '2001-01-01T00:00:00Z', end: '2002-01-01T00:00:00Z' })).toEqual([])
    expect(await points('findings', ['S-1-5-21-9999'])).toEqual([])
    // the default window is the 30 days before now: these runs are months earlier
    expect((await postureHistory(admin, 'findings', [D])).data).toEqual([])
  })

  it('a start within a day counts only that day’s runs from start on', async () => {
    // run A (10:00) is before start; run B (18:00) is the day's last run in the window
    expect(await points('findings', [T], { start: '2026-03-01T12:00:00Z', end: '2026-03-02T00:00:00Z' })).toEqual([[DAY1, 5]])
    // only run A is in this window
    expect(await points('findings', [T], { start: '2026-03-01T00:00:00Z', end: '2026-03-01T12:00:00Z' })).toEqual([[DAY1, 6]])
  })

  it('accepts the environments repeated or comma-separated and dates with an offset, as Sentinel sends them', async () => {
    const res = await admin.raw('GET', `/api/v2/posture-history/findings?environments=${D},${T}&start=2026-03-01T00:00:00+00:00`)
    expect(res.status).toBe(200)
    const body = (await res.json()) as { start: string; data: { date: string; value: number }[] }
    expect(body.start).toBe('2026-03-01T00:00:00.000Z')
    expect(body.data.map((p) => p.date)).toEqual([DAY1, DAY3])
  })

  it('shows a restricted caller only the environments it may see; a hidden one is like an unknown one', async () => {
    const { client } = await userWithRole('Read-Only', { all_environments: false, environment_access: [G] })
    expect(await points('findings', [D, G], WINDOW, client)).toEqual([
      [DAY1, 1],
      [DAY3, 1],
    ])
    expect(await points('findings', [D], WINDOW, client)).toEqual([])
    expect(await points('findings', [D], WINDOW, client)).toEqual(await points('findings', ['S-1-5-21-9999'], WINDOW, client))
  })

  it('refuses a bad type, a missing environment list and bad dates with the error envelope', async () => {
    await expectEnvelope(await admin.raw('GET', `/api/v2/posture-history/bogus?environments=${D}`), 400, 'data_type must be one of findings, exposure, assets, attack-paths')
    await expectEnvelope(await admin.raw('GET', `/api/v2/posture-history/session_completeness?environments=${D}`), 400, 'data_type must be one of')
    await expectEnvelope(await admin.raw('GET', '/api/v2/posture-history/findings'), 400, 'environments is required')
    await expectEnvelope(await admin.raw('GET', `/api/v2/posture-history/findings?environments=${D}&start=yesterday`), 400, 'start must be an RFC 3339 date-time')
    await expectEnvelope(await admin.raw('GET', `/api/v2/posture-history/findings?environments=${D}&end=2026-13-01T00:00:00Z`), 400, 'end must be an RFC 3339 date-time')
    await expectEnvelope(
      await admin.raw('GET', `/api/v2/posture-history/findings?environments=${D}&start=2026-03-02T00:00:00Z&end=2026-03-01T00:00:00Z`),
      400,
      'end must not be before start',
    )
    await expectEnvelope(await admin.raw('GET', '/api/v2/posture-history'), 404)
  })

  it('bounds the work: environments × days of the window at most 20,000 (one index seek each)', async () => {
    // 20,000 days for one environment (1971-04-01 … 2026-01-01, both days counted) is within the budget
    expect((await admin.raw('GET', `/api/v2/posture-history/findings?environments=${D}&start=1971-04-01T00:00:00Z&end=2026-01-01T00:00:00Z`)).status).toBe(200)
    await expectEnvelope(
      await admin.raw('GET', `/api/v2/posture-history/findings?environments=${D}&start=1971-03-31T00:00:00Z&end=2026-01-01T00:00:00Z`),
      400,
      '1 environment(s) × 20001 day(s) exceeds the environment-days per posture history budget of 20000',
    )
    const many = Array.from({ length: 55 }, (_, i) => `environments=S-1-5-21-${i}`).join('&')
    const res = await admin.raw('GET', `/api/v2/posture-history/assets?${many}&start=2025-01-01T00:00:00Z&end=2026-01-01T00:00:00Z`)
    const body = await expectEnvelope(res, 400, 'fewer environments')
    expect(body.errors[0].context).toBe('query.start')
  })

  it('is in the OpenAPI document with its permission and the data_type enum', async () => {
    const doc = (await (await admin.raw('GET', '/api/v2/spec')).json()) as {
      paths: Record<string, { get: { operationId: string; 'x-permission': string; parameters: { name: string; in: string; schema: { enum?: string[] } }[] } }>
    }
    const op = doc.paths['/api/v2/posture-history/{data_type}'].get
    expect(op).toMatchObject({ operationId: 'PostureHistoryForEnvironments', 'x-permission': 'graph/Read' })
    expect(op.parameters.find((p) => p.name === 'data_type')?.schema.enum).toEqual(['findings', 'exposure', 'assets', 'attack-paths'])
  })
})
