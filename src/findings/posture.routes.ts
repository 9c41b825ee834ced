/**
 * GET /api/v2/posture-stats (issue 15; docs/findings.md "Posture"), as BloodHound's GetPostureStats:
 * `{count, skip, limit, start, end, data}`. Without from/to: the newest row of each environment.
 */
import { z } from 'zod'
import { ApiError, rfc3339 } from '../http/errors'
import { defineRoute, type RouteEntry } from '../http/route'
import { nullTime } from './details'
import { listPostureStats, POSTURE_SORT_COLUMNS, type PostureQuery, type PostureSortColumn } from './posture.store'
import { parseTime, splitOp } from './query'

export const POSTURE_DEFAULT_LIMIT = 100
export const POSTURE_MAX_LIMIT = 10_000
const YEAR_MS = 365 * 24 * 3600 * 1000

const intStr = (name: string) => z.string().regex(/^\d{1,9}$/, `${name} must be a non-negative integer`).transform(Number).optional()

const PostureStat = z
  .object({
    id: z.number().int(),
    created_at: z.string(),
    updated_at: z.string(),
    deleted_at: z.object({ time: z.string(), valid: z.boolean() }),
    domain_sid: z.string(),
    exposure_index: z.number().describe('0..1, docs/findings.md "Posture"'),
    tier_zero_count: z.number().int(),
    critical_risk_count: z.number().int(),
  })
  .meta({ id: 'PostureStat' })

function parseSortBy(raw: string | undefined): PostureQuery['sort'] {
  if (raw === undefined || raw.trim() === '') return [{ column: 'created_at', desc: false }]
  return raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((p) => {
      const desc = p.startsWith('-')
      const name = (desc ? p.slice(1) : p).toLowerCase()
      if (!(POSTURE_SORT_COLUMNS as readonly string[]).includes(name))
        throw new ApiError(400, `sort_by column "${name.slice(0, 100)}" is not sortable; sortable columns: ${POSTURE_SORT_COLUMNS.join(', ')}`, 'query.sort_by')
      return { column: name as PostureSortColumn, desc }
    })
}

export const postureRoutes: RouteEntry[] = [
  defineRoute(
    {
      method: 'get',
      path: '/api/v2/posture-stats',
      operationId: 'GetPostureStats',
      summary: 'Posture statistics per environment, one row per analysis run',
      description:
        'Without `from`/`to`: the newest row of each environment. With either: every row created in [`from`, `to`] ' +
        '(`to` defaults to now, `from` to one year before `to`). `skip`/`limit` (default 100, at most 10000), ' +
        '`sort_by` (id, created_at, updated_at, domain_sid, exposure_index, tier_zero_count, critical_risk_count; a leading `-` ' +
        'sorts descending; ties by id), `domain_sid=eq:<id>` or `neq:`. Only environments the caller may see.',
      tags: ['Attack Paths'],
      auth: 'graph/Read',
      query: z.object({
        from: z.string().optional(),
        to: z.string().optional(),
        skip: intStr('skip'),
        limit: intStr('limit'),
        sort_by: z.string().optional(),
        domain_sid: z.string().optional(),
      }),
      responses: {
        200: {
          description: 'a page of posture rows',
          schema: z.object({
            count: z.number().int(),
            skip: z.number().int(),
            limit: z.number().int(),
            start: z.string(),
            end: z.string(),
            data: z.array(PostureStat),
          }),
        },
      },
    },
    async (c, { query }) => {
      const now = c.var.now()
      const hasTo = query.to !== undefined && query.to !== ''
      const hasFrom = query.from !== undefined && query.from !== ''
      const to = hasTo ? parseTime(query.to!, 'query.to', 'to must be an RFC 3339 date-time') : now
      const from = hasFrom ? parseTime(query.from!, 'query.from', 'from must be an RFC 3339 date-time') : new Date(to.getTime() - YEAR_MS)
      if (to.getTime() < from.getTime()) throw new ApiError(400, 'to must not be before from', 'query.to')
      const limit = query.limit ?? POSTURE_DEFAULT_LIMIT
      if (limit > POSTURE_MAX_LIMIT) throw new ApiError(400, `limit must be at most ${POSTURE_MAX_LIMIT}`, 'query.limit')
      const skip = query.skip ?? 0
      let domainSid: PostureQuery['domainSid']
      if (query.domain_sid !== undefined) {
        const { op, value } = splitOp(query.domain_sid, 'query.domain_sid', ['eq', 'neq'])
        domainSid = { op: op as 'eq' | 'neq', value }
      }
      const page = await listPostureStats(c.env.DB, {
        latest: !hasFrom && !hasTo,
        from: rfc3339(from),
        to: rfc3339(to),
        domainSid,
        sort: parseSortBy(query.sort_by),
        skip,
        limit,
        access: c.var.principal.environmentAccess,
      })
      return c.json({
        count: page.count,
        skip,
        limit,
        start: rfc3339(from),
        end: rfc3339(to),
        data: page.rows.map((r) => ({
          id: r.id,
          created_at: r.created_at,
          updated_at: r.updated_at,
          deleted_at: nullTime(r.deleted_at),
          domain_sid: r.domain_sid,
          exposure_index: r.exposure_index,
          tier_zero_count: r.tier_zero_count,
          critical_risk_count: r.critical_risk_count,
        })),
      })
    },
  ),
]
