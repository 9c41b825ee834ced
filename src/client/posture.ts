/** Typed wrapper for GET /api/v2/posture-stats (issue 15; docs/findings.md "Posture"). */
import type { EdgeHoundClient } from './index'
import type { NullTime } from './findings'

export interface PostureStatJson {
  id: number
  created_at: string
  updated_at: string
  deleted_at: NullTime
  domain_sid: string
  exposure_index: number
  tier_zero_count: number
  critical_risk_count: number
}

export interface PostureStatsQuery {
  from?: string | Date
  to?: string | Date
  skip?: number
  limit?: number
  sort_by?: string
  /** e.g. `eq:S-1-5-21-1000` */
  domain_sid?: string
}

export function postureStats(c: EdgeHoundClient, q: PostureStatsQuery = {}) {
  const p = new URLSearchParams()
  const d = (v: string | Date) => (v instanceof Date ? v.toISOString() : v)
  if (q.from !== undefined) p.set('from', d(q.from))
  if (q.to !== undefined) p.set('to', d(q.to))
  if (q.skip !== undefined) p.set('skip', String(q.skip))
  if (q.limit !== undefined) p.set('limit', String(q.limit))
  if (q.sort_by) p.set('sort_by', q.sort_by)
  if (q.domain_sid) p.set('domain_sid', q.domain_sid)
  const s = p.toString()
  return c.call<{ count: number; skip: number; limit: number; start: string; end: string; data: PostureStatJson[] }>('GET', `/api/v2/posture-stats${s ? `?${s}` : ''}`)
}

export interface FindingTrendJson {
  finding: string
  display_title: string
  display_type: string
  environment_id: string
  composite_risk: number
  finding_count_start: number
  finding_count_end: number
  finding_count_increase: number
  finding_count_decrease: number
  exposure_count: number
  impact_count: number
}

/** GET /api/v2/attack-paths/finding-trends: `environments` repeated, `start`/`end` optional. */
export function findingTrends(c: EdgeHoundClient, environments: string[], q: { start?: string | Date; end?: string | Date } = {}) {
  const p = new URLSearchParams()
  for (const e of environments) p.append('environments', e)
  const d = (v: string | Date) => (v instanceof Date ? v.toISOString() : v)
  if (q.start !== undefined) p.set('start', d(q.start))
  if (q.end !== undefined) p.set('end', d(q.end))
  return c.call<{
    start: string
    end: string
    environments: string[]
    data: { findings: FindingTrendJson[]; total_finding_count_start: number; total_finding_count_end: number }
  }>('GET', `/api/v2/attack-paths/finding-trends?${p}`)
}

export type PostureHistoryType = 'findings' | 'exposure' | 'assets' | 'attack-paths'

/**
 * GET /api/v2/posture-history/{data_type}: one point per UTC day with an analysis run in [start, end)
 * (docs/findings.md "Posture history"); `environments` repeated.
 */
export function postureHistory(c: EdgeHoundClient, dataType: PostureHistoryType, environments: string[], q: { start?: string | Date; end?: string | Date } = {}) {
  const p = new URLSearchParams()
  for (const e of environments) p.append('environments', e)
  const d = (v: string | Date) => (v instanceof Date ? v.toISOString() : v)
  if (q.start !== undefined) p.set('start', d(q.start))
  if (q.end !== undefined) p.set('end', d(q.end))
  return c.call<{ start: string; end: string; environments: string[]; data_type: PostureHistoryType; data: { date: string; value: number }[] }>(
    'GET',
    `/api/v2/posture-history/${encodeURIComponent(dataType)}?${p}`,
  )
}
