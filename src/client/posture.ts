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
