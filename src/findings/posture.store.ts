/** SQL of the posture statistics (issue 15); rows are written by commitRun (analysis.store.ts). */
import type { EnvironmentAccess } from '../auth/permissions'

export interface PostureStatRow {
  id: number
  domain_sid: string
  exposure_index: number
  tier_zero_count: number
  critical_risk_count: number
  created_at: string
  updated_at: string
  deleted_at: string | null
}

export const POSTURE_SORT_COLUMNS = ['id', 'created_at', 'updated_at', 'domain_sid', 'exposure_index', 'tier_zero_count', 'critical_risk_count'] as const
export type PostureSortColumn = (typeof POSTURE_SORT_COLUMNS)[number]

export interface PostureQuery {
  /** only the newest row of each environment (no from/to given) */
  latest: boolean
  from: string
  to: string
  domainSid?: { op: 'eq' | 'neq'; value: string }
  sort: { column: PostureSortColumn; desc: boolean }[]
  skip: number
  limit: number
  access: EnvironmentAccess
}

/**
 * A page of posture rows and the total. Environment access is applied in SQL (a restricted caller never
 * counts nor sees another environment's rows). Column names in ORDER BY come from POSTURE_SORT_COLUMNS only.
 */
export async function listPostureStats(db: D1Database, q: PostureQuery): Promise<{ count: number; rows: PostureStatRow[] }> {
  const where: string[] = ['p.deleted_at IS NULL', 'p.created_at >= ?1', 'p.created_at <= ?2']
  const binds: unknown[] = [q.from, q.to]
  if (q.latest)
    where.push(
      `p.id = (SELECT p2.id FROM posture_stats p2 WHERE p2.domain_sid = p.domain_sid AND p2.deleted_at IS NULL
               AND p2.created_at >= ?1 AND p2.created_at <= ?2 ORDER BY p2.created_at DESC, p2.id DESC LIMIT 1)`,
    )
  if (q.domainSid) {
    binds.push(q.domainSid.value)
    where.push(`p.domain_sid ${q.domainSid.op === 'eq' ? '=' : '<>'} ?${binds.length}`)
  }
  if (!q.access.all) {
    binds.push(JSON.stringify(q.access.ids))
    where.push(`p.domain_sid IN (SELECT value FROM json_each(?${binds.length}))`)
  }
  const order = [...q.sort.map((s) => `p.${s.column} ${s.desc ? 'DESC' : 'ASC'}`), 'p.id ASC'].join(', ')
  const sql = `FROM posture_stats p WHERE ${where.join(' AND ')}`
  const [c, rows] = await db.batch([
    db.prepare(`SELECT COUNT(*) AS n ${sql}`).bind(...binds),
    db
      .prepare(`SELECT p.id, p.domain_sid, p.exposure_index, p.tier_zero_count, p.critical_risk_count, p.created_at, p.updated_at, p.deleted_at ${sql} ORDER BY ${order} LIMIT ?${binds.length + 1} OFFSET ?${binds.length + 2}`)
      .bind(...binds, q.limit, q.skip),
  ])
  return { count: (c.results[0] as { n: number }).n, rows: rows.results as PostureStatRow[] }
}

export interface TrendRow {
  environment_id: string
  finding: string
  count_start: number
  count_end: number
  increase: number
  decrease: number
  composite_risk: number | null
  impact_count: number | null
  exposure_count: number | null
}

/**
 * Finding trends from the findings' lifetimes (issue 15): per environment and finding type, the findings
 * open at `start` and at `end` (created at or before, not closed by then), created and closed in
 * (start, end]; risk numbers from the newest sparkline row at or before `end`. Only the given environments.
 */
export async function findingTrends(db: D1Database, environments: string[], start: string, end: string): Promise<TrendRow[]> {
  const r = await db
    .prepare(
      `WITH t AS (
         SELECT environment_id, finding,
           SUM(created_at <= ?2 AND (deleted_at IS NULL OR deleted_at > ?2)) AS count_start,
           SUM(created_at <= ?3 AND (deleted_at IS NULL OR deleted_at > ?3)) AS count_end,
           SUM(created_at > ?2 AND created_at <= ?3) AS increase,
           SUM(deleted_at IS NOT NULL AND deleted_at > ?2 AND deleted_at <= ?3) AS decrease
         FROM findings
         WHERE environment_id IN (SELECT value FROM json_each(?1)) AND created_at <= ?3 AND (deleted_at IS NULL OR deleted_at > ?2)
         GROUP BY environment_id, finding)
       SELECT t.*, s.composite_risk, s.impact_count, s.exposure_count
       FROM t LEFT JOIN finding_sparklines s ON s.id = (
         SELECT s2.id FROM finding_sparklines s2 WHERE s2.environment_id = t.environment_id AND s2.finding = t.finding
           AND s2.created_at <= ?3 ORDER BY s2.created_at DESC, s2.id DESC LIMIT 1)
       ORDER BY t.environment_id, t.finding`,
    )
    .bind(JSON.stringify(environments), start, end)
    .all<TrendRow>()
  return r.results
}

export const POSTURE_HISTORY_TYPES = ['findings', 'exposure', 'assets', 'attack-paths'] as const
export type PostureHistoryType = (typeof POSTURE_HISTORY_TYPES)[number]

/**
 * One aggregate per UTC day of the window [start, end) (issue 15; docs/findings.md "Posture history"): for
 * each of `environments`, its day's last posture row (the last analysis run that day, ties by id); then over
 * the environments, the sum of the counts (open findings, finding types with open findings = attack paths,
 * Tier Zero nodes) and the largest exposure index. Days without a run of any of these environments have no
 * row. Counts of findings come from the run's sparkline rows (one per environment and finding type).
 *
 * Cost: one index seek (posture_stats_domain_created, backwards) per environment and day of the window,
 * whatever the number of runs per day; the caller bounds days × environments (POSTURE_HISTORY_BUDGET).
 * The caller passes only environments it may see.
 */
export async function postureHistory(
  db: D1Database,
  environments: string[],
  start: string,
  end: string,
): Promise<{ day: string; findings: number; attack_paths: number; assets: number; exposure: number }[]> {
  const r = await db
    .prepare(
      `WITH RECURSIVE days(d) AS (
         SELECT substr(?2, 1, 10)
         UNION ALL SELECT date(d, '+1 day') FROM days WHERE date(d, '+1 day') < ?3),
       cells AS (
         SELECT e.value AS env, days.d AS day,
                (SELECT p.id FROM posture_stats p
                 WHERE p.domain_sid = e.value AND p.deleted_at IS NULL
                   AND p.created_at >= max(?2, days.d) AND p.created_at < min(?3, date(days.d, '+1 day'))
                 ORDER BY p.created_at DESC, p.id DESC LIMIT 1) AS pid
         FROM json_each(?1) e, days)
       SELECT c.day,
              COALESCE(SUM((SELECT SUM(s.finding_count) FROM finding_sparklines s WHERE s.run_id = p.run_id AND s.environment_id = p.domain_sid)), 0) AS findings,
              COALESCE(SUM((SELECT COUNT(*) FROM finding_sparklines s WHERE s.run_id = p.run_id AND s.environment_id = p.domain_sid AND s.finding_count > 0)), 0) AS attack_paths,
              SUM(p.tier_zero_count) AS assets,
              MAX(p.exposure_index) AS exposure
       FROM cells c JOIN posture_stats p ON p.id = c.pid
       GROUP BY c.day ORDER BY c.day`,
    )
    .bind(JSON.stringify(environments), start, end)
    .all<{ day: string; findings: number; attack_paths: number; assets: number; exposure: number }>()
  return r.results
}
