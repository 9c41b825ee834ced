/**
 * Data quality (issue 27; docs/findings.md "Data quality"), as BloodHound's dataquality handlers:
 *   GET /api/v2/ad-domains/{domain_id}/data-quality-stats      GetADDataQualityStats
 *   GET /api/v2/azure-tenants/{tenant_id}/data-quality-stats   GetAzureDataQualityStats
 *   GET /api/v2/platform/{platform_id}/data-quality-stats      GetPlatformAggregateStats
 *   GET /api/v2/completeness                                   GetDatabaseCompleteness
 * The history pages answer BloodHound's envelope `{count, skip, limit, start, end, data}` with its parameters
 * (`start`, `end`: RFC 3339, default the last 30 days; `sort_by`: created_at / updated_at, `-` descending, default
 * newest first; `skip`; `limit`, default 1000). Rows are written by the analysis run (dataquality.store.ts).
 */
import { z } from 'zod'
import type { Context } from 'hono'
import type { AppEnv } from '../env'
import { PageInt } from '../http/paging'
import { ApiError, rfc3339 } from '../http/errors'
import { defineRoute, type RouteEntry } from '../http/route'
import { NullTime } from '../http/null-types'
import { canSeeEnvironment } from '../auth/permissions'
import { nullTime } from './details'
import { parseTime } from './query'
import {
  AD_COUNT_COLUMNS,
  AZURE_COUNT_COLUMNS,
  DATA_QUALITY_SORT_COLUMNS,
  environmentStats,
  latestCompleteness,
  platformAggregates,
  type DataQualityRow,
  type DataQualitySort,
  type DataQualityWindow,
  type Platform,
} from './dataquality.store'

/** BloodHound's default page (ParseLimitQueryParameter(…, 1000)); EdgeHound's cap, as posture-stats'. */
export const DATA_QUALITY_DEFAULT_LIMIT = 1000
export const DATA_QUALITY_MAX_LIMIT = 10_000
/** BloodHound's DefaultTimeRange: the 30 days before now. */
const DEFAULT_WINDOW_MS = 30 * 24 * 3600 * 1000
/** BloodHound's message for a column it cannot sort by (api.ErrorResponseDetailsNotSortable). */
const NOT_SORTABLE = 'column format does not support sorting'
export const PLATFORMS = ['ad', 'azure'] as const

const WindowQuery = z.object({
  start: z.string().optional(),
  end: z.string().optional(),
  sort_by: z.union([z.string(), z.array(z.string())]).optional(),
  skip: PageInt('skip'),
  limit: PageInt('limit', { max: DATA_QUALITY_MAX_LIMIT }),
})
type WindowQueryT = z.infer<typeof WindowQuery>

const ints = <K extends string>(keys: readonly K[]) => Object.fromEntries(keys.map((k) => [k, z.number().int()])) as Record<K, z.ZodNumber>
const serial = {
  run_id: z.string().describe('the analysis run that wrote the row (GET /api/v2/analysis)'),
  id: z.number().int(),
  created_at: z.string().describe("the run's commit time"),
  updated_at: z.string(),
  deleted_at: NullTime,
}
const completeness = {
  session_completeness: z.number().describe('0..1: share of the active enabled users with a session (docs/findings.md "Data quality")'),
  local_group_completeness: z.number().describe('0..1: share of the active enabled Windows computers with local-group (admin) data'),
}

const ADStat = z.object({ domain_sid: z.string(), ...ints(AD_COUNT_COLUMNS), ...completeness, ...serial }).meta({ id: 'ADDataQualityStat' })
const AzureStat = z.object({ tenantid: z.string(), ...ints(AZURE_COUNT_COLUMNS), ...serial }).meta({ id: 'AzureDataQualityStat' })
const ADAggregate = z.object({ domains: z.number().int(), ...ints(AD_COUNT_COLUMNS), ...completeness, ...serial }).meta({ id: 'ADDataQualityAggregation' })
const AzureAggregate = z.object({ tenants: z.number().int(), ...ints(AZURE_COUNT_COLUMNS), ...serial }).meta({ id: 'AzureDataQualityAggregation' })

const page = <T extends z.ZodType>(row: T) =>
  z.object({ count: z.number().int(), skip: z.number().int(), limit: z.number().int(), start: z.string(), end: z.string(), data: z.array(row) })

const WINDOW_DESCRIPTION =
  '`start`/`end`: RFC 3339 (default: the 30 days before now), rows created in [start, end]; `sort_by`: `created_at` or ' +
  '`updated_at`, a leading `-` sorts descending, repeatable or comma-separated (default: newest first; ties by id); ' +
  `\`skip\`; \`limit\` (default ${DATA_QUALITY_DEFAULT_LIMIT}, at most ${DATA_QUALITY_MAX_LIMIT}).`

/** `sort_by` values (repeated or comma-separated) → whitelisted columns, or BloodHound's 400. */
function parseSort(values: string[] | undefined): DataQualitySort {
  const out: DataQualitySort = []
  for (const part of (values ?? []).flatMap((v) => v.split(','))) {
    const p = part.trim()
    if (p === '') continue
    const desc = p.startsWith('-')
    const name = (desc ? p.slice(1) : p).toLowerCase()
    if (!(DATA_QUALITY_SORT_COLUMNS as readonly string[]).includes(name)) throw new ApiError(400, NOT_SORTABLE, 'query.sort_by')
    out.push({ column: name as DataQualitySort[number]['column'], desc })
  }
  return out
}

function windowOf(c: Context<AppEnv>, q: WindowQueryT): DataQualityWindow {
  const end = q.end ? parseTime(q.end, 'query.end', 'end must be an RFC 3339 date-time, e.g. 2021-04-21T07:20:50.52Z') : c.var.now()
  const start = q.start
    ? parseTime(q.start, 'query.start', 'start must be an RFC 3339 date-time, e.g. 2021-04-21T07:20:50.52Z')
    : new Date(end.getTime() - DEFAULT_WINDOW_MS)
  if (end.getTime() < start.getTime()) throw new ApiError(400, 'end must not be before start', 'query.end')
  return {
    start: rfc3339(start),
    end: rfc3339(end),
    sort: parseSort(c.req.queries('sort_by')),
    skip: q.skip ?? 0,
    limit: q.limit ?? DATA_QUALITY_DEFAULT_LIMIT,
  }
}

const serialOf = (r: DataQualityRow) => ({
  run_id: String(r.run_id),
  id: r.id,
  created_at: r.created_at,
  updated_at: r.updated_at,
  deleted_at: nullTime(r.deleted_at),
})
const pick = (r: DataQualityRow, keys: readonly string[]) => Object.fromEntries(keys.map((k) => [k, r[k]]))

/**
 * One environment's history. The environment must be one the caller may see and one EdgeHound knows; both
 * failures are the same 404 as the other per-environment routes (findings.routes.ts requireEnvironment), so the
 * answer does not tell a restricted caller which environments exist.
 */
async function environmentPage(c: Context<AppEnv>, platform: Platform, id: string, param: string, q: WindowQueryT) {
  const w = windowOf(c, q)
  const notFound = () => new ApiError(404, 'environment not found', param)
  if (!canSeeEnvironment(c.var.principal.environmentAccess, id)) throw notFound()
  const r = await environmentStats(c.env.DB, platform, id, w)
  if (!r.known) throw notFound()
  const data = r.rows.map((row) =>
    platform === 'ad'
      ? { domain_sid: row.domain_sid, ...pick(row, [...AD_COUNT_COLUMNS, 'session_completeness', 'local_group_completeness']), ...serialOf(row) }
      : { tenantid: row.tenant_id, ...pick(row, AZURE_COUNT_COLUMNS), ...serialOf(row) },
  )
  return c.json({ count: r.count, skip: w.skip, limit: w.limit, start: w.start, end: w.end, data })
}

export const dataQualityRoutes: RouteEntry[] = [
  defineRoute(
    {
      method: 'get',
      path: '/api/v2/ad-domains/:domain_id/data-quality-stats',
      operationId: 'GetADDataQualityStats',
      summary: "An AD domain's data quality history: object, ACL, session and relationship counts and completeness, one row per analysis run",
      description:
        `${WINDOW_DESCRIPTION} Counts are of the domain's nodes and of the relationships that start at them ` +
        '(docs/findings.md "Data quality"). 404 for a domain EdgeHound does not know or the caller may not see.',
      tags: ['Data Quality'],
      auth: 'graph/Read',
      params: z.object({ domain_id: z.string().min(1) }),
      query: WindowQuery,
      responses: { 200: { description: 'a page of the domain\'s rows', schema: page(ADStat) } },
    },
    async (c, { params, query }) => environmentPage(c, 'ad', params.domain_id, 'domain_id', query),
  ),
  defineRoute(
    {
      method: 'get',
      path: '/api/v2/azure-tenants/:tenant_id/data-quality-stats',
      operationId: 'GetAzureDataQualityStats',
      summary: "An Azure tenant's data quality history: object and relationship counts, one row per analysis run",
      description:
        `${WINDOW_DESCRIPTION} Counts are of the tenant's nodes and of the relationships that start at them ` +
        '(docs/findings.md "Data quality"). 404 for a tenant EdgeHound does not know or the caller may not see.',
      tags: ['Data Quality'],
      auth: 'graph/Read',
      params: z.object({ tenant_id: z.string().min(1) }),
      query: WindowQuery,
      responses: { 200: { description: "a page of the tenant's rows", schema: page(AzureStat) } },
    },
    async (c, { params, query }) => environmentPage(c, 'azure', params.tenant_id, 'tenant_id', query),
  ),
  defineRoute(
    {
      method: 'get',
      path: '/api/v2/platform/:platform_id/data-quality-stats',
      operationId: 'GetPlatformAggregateStats',
      summary: 'Data quality of every AD domain (`ad`) or Azure tenant (`azure`) together, one row per analysis run',
      description:
        `${WINDOW_DESCRIPTION} Per analysis run: \`domains\` / \`tenants\` counted and every count summed over the environments the caller ` +
        'may see; AD completeness is the share over all those domains\' active users / computers together. Another platform id: 400.',
      tags: ['Data Quality'],
      auth: 'graph/Read',
      params: z.object({ platform_id: z.enum(PLATFORMS, { error: 'invalid platform id specified in url: use ad or azure' }) }),
      query: WindowQuery,
      responses: { 200: { description: 'a page of per-run aggregates', schema: page(z.union([ADAggregate, AzureAggregate])) } },
    },
    async (c, { params, query }) => {
      const w = windowOf(c, query)
      const r = await platformAggregates(c.env.DB, params.platform_id, c.var.principal.environmentAccess, w)
      const data = r.rows.map((row) =>
        params.platform_id === 'ad'
          ? { domains: row.environments, ...pick(row, [...AD_COUNT_COLUMNS, 'session_completeness', 'local_group_completeness']), ...serialOf(row) }
          : { tenants: row.environments, ...pick(row, AZURE_COUNT_COLUMNS), ...serialOf(row) },
      )
      return c.json({ count: r.count, skip: w.skip, limit: w.limit, start: w.start, end: w.end, data })
    },
  ),
  defineRoute(
    {
      method: 'get',
      path: '/api/v2/completeness',
      operationId: 'GetDatabaseCompleteness',
      summary: 'Session and local-group completeness (0..1) of the AD domains the caller may see, as of the newest analysis run',
      description:
        '`SessionCompleteness`: share of the active enabled users with at least one session; `LocalGroupCompleteness`: share of ' +
        'the active enabled Windows computers with local-group (admin) relationships; both over every domain the caller may ' +
        'see together, 0 before the first analysis run (docs/findings.md "Data quality").',
      tags: ['Data Quality'],
      auth: 'graph/Read',
      responses: {
        200: {
          description: 'the two fractions',
          schema: z.object({ data: z.object({ LocalGroupCompleteness: z.number(), SessionCompleteness: z.number() }) }),
        },
      },
    },
    async (c) => {
      const r = await latestCompleteness(c.env.DB, c.var.principal.environmentAccess)
      return c.json({ data: { LocalGroupCompleteness: r.localGroup, SessionCompleteness: r.session } })
    },
  ),
]
