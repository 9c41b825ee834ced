/**
 * GET /api/v2/posture-stats (issue 15; docs/findings.md "Posture"), as BloodHound's GetPostureStats:
 * `{count, skip, limit, start, end, data}`. Without from/to: the newest row of each environment.
 */
import { z } from 'zod'
import { PageInt } from '../http/paging'
import { ApiError, rfc3339 } from '../http/errors'
import { overBudget } from '../http/budget'
import { defineRoute, type RouteEntry } from '../http/route'
import { NullTime } from '../http/null-types'
import { nullTime } from './details'
import { loadKindCatalog } from '../extensions/catalog'
import { canSeeEnvironment } from '../auth/permissions'
import { findFindingDef } from './catalogue'
import {
  findingTrends,
  listPostureStats,
  postureHistory,
  POSTURE_HISTORY_TYPES,
  POSTURE_SORT_COLUMNS,
  type PostureQuery,
  type PostureSortColumn,
} from './posture.store'
import { parseTime, splitOp } from './query'

export const POSTURE_DEFAULT_LIMIT = 100
export const POSTURE_MAX_LIMIT = 10_000
const YEAR_MS = 365 * 24 * 3600 * 1000
const DAY_MS = 24 * 3600 * 1000
/** Environment-days one posture-history request may read (one index seek each; docs/budgets.md). */
export const POSTURE_HISTORY_BUDGET = 20_000

/** `environments` repeated or comma-separated, trimmed, de-duplicated (finding trends and posture history). */
function environmentsOf(c: { req: { queries: (k: string) => string[] | undefined } }): string[] {
  return [...new Set((c.req.queries('environments') ?? []).flatMap((v) => v.split(',')).map((v) => v.trim()).filter(Boolean))]
}

const intStr = (name: string) => PageInt(name)

const PostureStat = z
  .object({
    id: z.number().int(),
    created_at: z.string(),
    updated_at: z.string(),
    deleted_at: NullTime,
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
  defineRoute(
    {
      method: 'get',
      path: '/api/v2/attack-paths/finding-trends',
      operationId: 'GetFindingTrends',
      summary: 'Finding counts at the start and end of a window, per environment and finding type',
      description:
        '`environments` (required, repeatable), `start` (default `end` − 1 year), `end` (default now). Computed from the ' +
        "findings' lifetimes: open at start / end, created (increase) and closed (decrease) within (start, end]; " +
        '`composite_risk`, `impact_count`, `exposure_count` from the newest analysis at or before `end` (0 when none). ' +
        'Environments the caller may not see count as having no findings. Numbers are never null.',
      tags: ['Attack Paths'],
      auth: 'graph/Read',
      query: z.object({ environments: z.union([z.string(), z.array(z.string())]).optional(), start: z.string().optional(), end: z.string().optional() }),
      responses: {
        200: {
          description: 'trends',
          schema: z.object({
            start: z.string(),
            end: z.string(),
            environments: z.array(z.string()),
            data: z.object({
              findings: z.array(
                z.object({
                  finding: z.string(),
                  display_title: z.string(),
                  display_type: z.string(),
                  environment_id: z.string(),
                  composite_risk: z.number(),
                  finding_count_start: z.number().int(),
                  finding_count_end: z.number().int(),
                  finding_count_increase: z.number().int(),
                  finding_count_decrease: z.number().int(),
                  exposure_count: z.number().int(),
                  impact_count: z.number().int(),
                }),
              ),
              total_finding_count_start: z.number().int(),
              total_finding_count_end: z.number().int(),
            }),
          }),
        },
      },
    },
    async (c, { query }) => {
      const envs = environmentsOf(c)
      if (envs.length === 0) throw new ApiError(400, 'environments is required (one or more environment ids)', 'query.environments')
      const end = query.end ? parseTime(query.end, 'query.end', 'end must be an RFC 3339 date-time') : c.var.now()
      const start = query.start ? parseTime(query.start, 'query.start', 'start must be an RFC 3339 date-time') : new Date(end.getTime() - YEAR_MS)
      if (end.getTime() < start.getTime()) throw new ApiError(400, 'end must not be before start', 'query.end')
      const visible = envs.filter((e) => canSeeEnvironment(c.var.principal.environmentAccess, e))
      const rows = visible.length ? await findingTrends(c.env.DB, visible, rfc3339(start), rfc3339(end)) : []
      const catalog = rows.length ? await loadKindCatalog(c.env.DB) : null
      const findings = rows.map((r) => {
        const def = catalog ? findFindingDef(r.finding, catalog) : null
        return {
          finding: r.finding,
          display_title: def?.title ?? r.finding,
          display_type: def?.shape ?? 'relationship',
          environment_id: r.environment_id,
          composite_risk: r.composite_risk ?? 0,
          finding_count_start: r.count_start ?? 0,
          finding_count_end: r.count_end ?? 0,
          finding_count_increase: r.increase ?? 0,
          finding_count_decrease: r.decrease ?? 0,
          exposure_count: r.exposure_count ?? 0,
          impact_count: r.impact_count ?? 0,
        }
      })
      return c.json({
        start: rfc3339(start),
        end: rfc3339(end),
        environments: envs,
        data: {
          findings,
          total_finding_count_start: findings.reduce((n, f) => n + f.finding_count_start, 0),
          total_finding_count_end: findings.reduce((n, f) => n + f.finding_count_end, 0),
        },
      })
    },
  ),
  defineRoute(
    {
      method: 'get',
      path: '/api/v2/posture-history/:data_type',
      operationId: 'PostureHistoryForEnvironments',
      summary: 'Posture over time: one point per day (the day\'s last analysis run) for the given environments',
      description:
        '`data_type`: `findings` (open findings), `attack-paths` (finding types with open findings), `assets` (Tier Zero ' +
        'nodes) or `exposure` (exposure index, 0..1). `environments` (required, repeatable or comma-separated), `start` ' +
        '(inclusive, default `end` − 30 days), `end` (exclusive, default now). Per UTC day with at least one analysis ' +
        'run in the window, `date` is that day at 00:00 UTC and `value` aggregates each environment\'s last run of the ' +
        'day: counts are summed, exposure is the largest. Days without a run have no point (no value is carried ' +
        'forward). Environments the caller may not see count as having no runs. docs/findings.md "Posture history".',
      tags: ['Attack Paths'],
      auth: 'graph/Read',
      params: z.object({
        data_type: z.enum(POSTURE_HISTORY_TYPES, { error: `data_type must be one of ${POSTURE_HISTORY_TYPES.join(', ')}` }),
      }),
      query: z.object({ environments: z.union([z.string(), z.array(z.string())]).optional(), start: z.string().optional(), end: z.string().optional() }),
      responses: {
        200: {
          description: 'the points, oldest first',
          schema: z.object({
            start: z.string(),
            end: z.string(),
            environments: z.array(z.string()),
            data_type: z.enum(POSTURE_HISTORY_TYPES),
            data: z.array(z.object({ date: z.string(), value: z.number() })),
          }),
        },
      },
    },
    async (c, { params, query }) => {
      const envs = environmentsOf(c)
      if (envs.length === 0) throw new ApiError(400, 'environments is required (one or more environment ids)', 'query.environments')
      const end = query.end ? parseTime(query.end, 'query.end', 'end must be an RFC 3339 date-time') : c.var.now()
      const start = query.start ? parseTime(query.start, 'query.start', 'start must be an RFC 3339 date-time') : new Date(end.getTime() - 30 * DAY_MS)
      if (end.getTime() < start.getTime()) throw new ApiError(400, 'end must not be before start', 'query.end')
      // Same rule as finding trends: an environment the caller may not see is indistinguishable from one
      // that never had a run (no points), so the answer is no existence oracle.
      const visible = envs.filter((e) => canSeeEnvironment(c.var.principal.environmentAccess, e))
      const days = Math.floor(end.getTime() / DAY_MS) - Math.floor(start.getTime() / DAY_MS) + 1
      if (envs.length * days > POSTURE_HISTORY_BUDGET)
        throw overBudget(400, {
          context: 'query.start',
          what: `${envs.length} environment(s) × ${days} day(s)`,
          budget: 'environment-days per posture history',
          limit: POSTURE_HISTORY_BUDGET,
          narrow: 'ask a shorter window (start/end) or fewer environments per request',
        })
      const rows = visible.length ? await postureHistory(c.env.DB, visible, rfc3339(start), rfc3339(end)) : []
      const pick = { findings: 'findings', 'attack-paths': 'attack_paths', assets: 'assets', exposure: 'exposure' } as const
      return c.json({
        start: rfc3339(start),
        end: rfc3339(end),
        environments: envs,
        data_type: params.data_type,
        data: rows.map((r) => ({ date: `${r.day}T00:00:00.000Z`, value: Number(r[pick[params.data_type]] ?? 0) })),
      })
    },
  ),
]
