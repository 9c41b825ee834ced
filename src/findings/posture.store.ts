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
