import type { Context } from 'hono'
import { z } from 'zod'
import type { AppEnv } from '../env'
import { canSeeEnvironment } from '../auth/permissions'
import { kindCatalogAt, loadKindCatalog } from '../extensions/catalog'
import { PageInt } from '../http/paging'
import { ApiError, rfc3339 } from '../http/errors'
import { ErrorEnvelope } from '../http/openapi'
import { overBudget } from '../http/budget'
import { WEIGHT } from '../ratelimit/cost'
import { defineRoute, type RouteEntry } from '../http/route'
import { NullTime } from '../http/null-types'
import { auditOf } from '../audit/audit'
import { getRun, listRuns, pendingRun } from './analysis.store'
import { requestRun } from './analyzer.client'
import { ASSET_NAMES, findFindingDef, type AssetName } from './catalogue'
import { detailItem, sparklineItem } from './details'
import {
  availableTypes,
  environmentKnown,
  findingTypeSeen,
  getOpenFinding,
  listDetails,
  listSparklines,
  setAcceptance,
  type PollKey,
} from './findings.store'
import { parseDetailsFilters, parseSort, parseTime, parseWindow, type DetailsFilters, type SortKey } from './query'

// ---- schemas (validation and the OpenAPI document) -----------------------------------------------------

const NullInt64 = z.object({ int64: z.number().int(), valid: z.boolean() })
const Props = z.record(z.string(), z.unknown()).describe('node properties; always has objectid and name (both "" for an end hidden from the caller)')
const EndId = z.string().describe('object id; "" when the end lies in an environment the caller may not see (docs/permissions.md)')

const CommonItem = {
  id: z.number().int(),
  Finding: z.string(),
  DomainSID: z.string(),
  Environment: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
  deleted_at: NullTime,
  Accepted: z.boolean(),
  AcceptedUntil: z.string().describe('0001-01-01T00:00:00.000Z when not accepted or accepted without end'),
  Severity: z.enum(['critical', 'high', 'moderate', 'low']),
  ImpactPercentage: z.number().min(0).max(1),
  ImpactCount: z.number().int(),
  ExposurePercentage: z.number().min(0).max(1),
  ExposureCount: z.number().int(),
  RelProps: z.record(z.string(), z.unknown()),
  PrincipalHash: z.string(),
  IsInherited: z.boolean(),
  ComboGraphRelationID: NullInt64,
}

export const RelationshipItem = z
  .object({
    ...CommonItem,
    FromPrincipal: EndId,
    FromPrincipalKind: z.string(),
    FromPrincipalName: z.string(),
    FromPrincipalProps: Props,
    FromEnvironment: z.string(),
    FromEnvironmentID: z.string(),
    ToPrincipal: EndId,
    ToPrincipalKind: z.string(),
    ToPrincipalName: z.string(),
    ToPrincipalProps: Props,
    ToEnvironment: z.string(),
    ToEnvironmentID: z.string(),
  })
  .meta({ id: 'RelationshipFinding' })

export const ListItem = z
  .object({
    ...CommonItem,
    accepted_until: z.string(),
    Principal: EndId,
    PrincipalKind: z.string(),
    PrincipalName: z.string(),
    Props,
  })
  .meta({ id: 'ListFinding' })

export const SparklineItem = z
  .object({
    id: z.number().int(),
    created_at: z.string(),
    updated_at: z.string(),
    deleted_at: NullTime,
    CompositeRisk: z.number(),
    FindingCount: z.number().int(),
    ImpactedAssetCount: z.number().int(),
    ImpactCount: z.number().int(),
    ExposureCount: z.number().int(),
    DomainSID: z.string(),
    Finding: z.string(),
  })
  .meta({ id: 'SparklineRecord' })

export const RunSchema = z
  .object({
    id: z.number().int(),
    status: z.enum(['pending', 'running', 'complete', 'failed']),
    reasons: z.array(z.string()),
    requested_at: z.string(),
    started_at: z.string().nullable(),
    attempt_started_at: z.string().nullable(),
    completed_at: z.string().nullable(),
    attempts: z.number().int(),
    error: z.string().nullable(),
    node_count: z.number().int().nullable(),
    edge_count: z.number().int().nullable(),
    traversable_edge_count: z.number().int().nullable(),
    environment_count: z.number().int().nullable(),
    principal_count: z.number().int().nullable(),
    finding_count: z.number().int().nullable(),
    new_count: z.number().int().nullable(),
    changed_count: z.number().int().nullable(),
    closed_count: z.number().int().nullable(),
    unchanged_count: z.number().int().nullable(),
    duration_ms: z.number().int().nullable(),
  })
  .meta({ id: 'AnalysisRun' })

const DomainParams = z.object({ domain_id: z.string().min(1) })

const nonNegInt = (name: string) => PageInt(name)

/** Rows per details page (docs/budgets.md), including limit=0 (every row). */
export const DETAILS_MAX_ROWS = 10_000

const DetailsQuery = z.object({
  finding: z.string().optional(),
  skip: nonNegInt('skip'),
  limit: nonNegInt('limit'),
  sort_by: z.string().optional(),
  Accepted: z.string().optional(),
  accepted: z.string().optional(),
  created_at: z.string().optional(),
  updated_at: z.string().optional(),
  id: z.string().optional(),
  FromPrincipal: z.string().optional(),
  from_principal: z.string().optional(),
  ToPrincipal: z.string().optional(),
  to_principal: z.string().optional(),
  Principal: z.string().optional(),
  principal: z.string().optional(),
})

const SparklineQuery = z.object({ finding: z.string().optional(), from: z.string().optional(), to: z.string().optional() })

const AcceptanceBody = z.object({
  accepted: z.boolean({ error: 'accepted must be a boolean' }),
  accepted_until: z.string().nullable().optional(),
})

// ---- helpers -------------------------------------------------------------------------------------------

const NOT_FOUND_ENV = 'environment not found'

/**
 * The environment must exist and the caller must be allowed to see it; both failures are the same 404,
 * so that the answer does not tell a restricted caller which environments exist.
 */
async function requireEnvironment(c: Context<AppEnv>, environmentId: string): Promise<void> {
  if (!canSeeEnvironment(c.var.principal.environmentAccess, environmentId)) throw environmentNotFound()
  if (!(await environmentKnown(c.env.DB, environmentId))) throw environmentNotFound()
}

function environmentNotFound(): ApiError {
  return new ApiError(404, NOT_FOUND_ENV, 'domain_id')
}

/**
 * How long a poll of /details may last (docs/findings.md, "Polls that span an analysis"): its later pages keep
 * the findings closed since its first page in place for this long after that first page.
 */
export const POLL_TTL_MS = 6 * 60 * 60 * 1000

/**
 * The poll a details page belongs to: the credential (a token or a session), and the query that defines the
 * sequence being paged (filters and sort; not skip or limit). Null without a credential id.
 */
function pollKey(c: Context<AppEnv>, filters: DetailsFilters, sort: SortKey[]): PollKey | null {
  const p = c.var.principal
  const subject = p.via === 'token' && p.tokenId ? `token:${p.tokenId}` : p.via === 'session' && p.sessionId ? `session:${p.sessionId}` : null
  if (!subject) return null
  const now = c.var.now()
  return { subject, shape: JSON.stringify({ filters, sort }), now: rfc3339(now), expiredBefore: rfc3339(new Date(now.getTime() - POLL_TTL_MS)) }
}

/**
 * Analysis runs span the whole graph: their records carry counts over every environment and the reasons of
 * every caller's requests (user names, ingest jobs). A caller restricted to some environments is refused them,
 * whatever its role (docs/findings.md, "Permission decision").
 */
function requireAllEnvironments(c: Context<AppEnv>): void {
  if (!c.var.principal.environmentAccess.all)
    throw new ApiError(403, 'analysis runs cover every environment: they need access to all environments', 'environment_access')
}

function requireFindingParam(finding: string | undefined): string {
  if (finding === undefined || finding.trim() === '') throw new ApiError(400, 'missing required query parameter: finding', 'query.finding')
  return finding.trim()
}

/**
 * A finding type is valid when the catalogue knows it, or when the environment has (had) findings of it
 * (an extension that has since been uninstalled: its history stays readable).
 */
async function requireFindingType(db: D1Database, environmentId: string, finding: string): Promise<void> {
  if (findFindingDef(finding, await loadKindCatalog(db))) return
  if (await findingTypeSeen(db, environmentId, finding)) return
  throw unknownFindingType(finding)
}

function unknownFindingType(finding: string): ApiError {
  return new ApiError(400, `unknown finding type "${finding.slice(0, 100)}"`, 'query.finding')
}

// ---- routes --------------------------------------------------------------------------------------------

export const findingRoutes: RouteEntry[] = [
  defineRoute(
    {
      method: 'get',
      path: '/api/v2/domains/:domain_id/available-types',
      operationId: 'ListAvailableFindingTypes',
      summary: 'Finding types with current findings in an environment',
      tags: ['Attack Paths'],
      auth: 'graph/Read',
      params: DomainParams,
      responses: { 200: { description: 'finding types, sorted', schema: z.object({ data: z.array(z.string()) }) } },
    },
    async (c, { params }) => {
      await requireEnvironment(c, params.domain_id)
      return c.json({ data: await availableTypes(c.env.DB, params.domain_id) })
    },
  ),
  defineRoute(
    {
      method: 'get',
      path: '/api/v2/domains/:domain_id/details',
      operationId: 'ListFindingDetails',
      cost: WEIGHT.findings,
      summary: 'Current findings of one type in an environment, paged with skip/limit',
      description:
        '`finding` is required. `limit` defaults to 10; `limit=0` returns every row. Past the end `data` is `[]`. ' +
        `Budget: a page holds at most ${DETAILS_MAX_ROWS} rows; a larger page (limit=0 included) is refused with 400 (docs/budgets.md). ` +
        'Default order: created_at, then id (stable paging). Filters: `Accepted=eq:false`, `created_at=gt:<RFC 3339>`, ' +
        '`updated_at`, `id`, `FromPrincipal`, `ToPrincipal`, `Principal` (ops eq, neq, gt, gte, lt, lte). ' +
        '`sort_by=col[,-col]` (a leading `-` sorts descending). A poll is the pages one credential reads with the same ' +
        'query from `skip=0` on: its later pages keep findings closed since its first page in their place, with ' +
        '`deleted_at` set, so an analysis committing mid-poll never makes an open finding go unserved. For a caller ' +
        'restricted to some environments, an end of a finding in another environment is opaque (`""`).',
      tags: ['Attack Paths'],
      auth: 'graph/Read',
      params: DomainParams,
      query: DetailsQuery,
      responses: {
        200: {
          description: 'a page of findings',
          schema: z.object({
            count: z.number().int(),
            skip: z.number().int(),
            limit: z.number().int(),
            data: z.array(z.union([RelationshipItem, ListItem])),
          }),
        },
      },
    },
    async (c, { params, query }) => {
      const finding = requireFindingParam(query.finding)
      const filters = parseDetailsFilters(query)
      const sort = parseSort(query.sort_by)
      if (!canSeeEnvironment(c.var.principal.environmentAccess, params.domain_id)) throw environmentNotFound()
      const skip = query.skip ?? 0
      const limit = query.limit ?? 10
      // The page's budget is enforced in SQL: a page asked for beyond it (limit=0 means every row) reads
      // one row past the budget, which is enough to refuse it.
      const sqlLimit = limit === 0 || limit > DETAILS_MAX_ROWS ? DETAILS_MAX_ROWS + 1 : limit
      // One round trip: the page comes with the checks of requireEnvironment and requireFindingType and the
      // catalogue version, and is answered only when they pass (in the same order: 404, then 400).
      const page = await listDetails(c.env.DB, {
        environmentId: params.domain_id,
        finding,
        filters,
        sort,
        skip,
        limit: sqlLimit,
        now: rfc3339(c.var.now()),
        access: c.var.principal.environmentAccess,
        poll: pollKey(c, filters, sort),
      })
      if (!page.environmentKnown) throw environmentNotFound()
      if (!page.findingTypeSeen && !findFindingDef(finding, await kindCatalogAt(c.env.DB, page.catalogVersion))) throw unknownFindingType(finding)
      if (page.rows.length > DETAILS_MAX_ROWS)
        throw overBudget(400, {
          context: 'query.limit',
          what: `the page (${page.count - skip} findings from skip ${skip})`,
          budget: 'findings per page',
          limit: DETAILS_MAX_ROWS,
          narrow: `page through them with skip and a limit of at most ${DETAILS_MAX_ROWS}`,
        })
      return c.json({ count: page.count, skip, limit, data: page.rows.map((r) => detailItem(r, c.var.principal.environmentAccess)) })
    },
  ),
  defineRoute(
    {
      method: 'get',
      path: '/api/v2/domains/:domain_id/sparkline',
      operationId: 'ListFindingSparkline',
      cost: WEIGHT.findings,
      summary: 'Risk records of one finding type in an environment over a time window',
      description: '`from` is inclusive (default: 30 days before `to`), `to` exclusive (default: now); both RFC 3339.',
      tags: ['Attack Paths'],
      auth: 'graph/Read',
      params: DomainParams,
      query: SparklineQuery,
      responses: {
        200: {
          description: 'records, oldest first',
          schema: z.object({ start: z.string(), end: z.string(), data: z.array(SparklineItem) }),
        },
      },
    },
    async (c, { params, query }) => {
      const finding = requireFindingParam(query.finding)
      const window = parseWindow(query.from, query.to, c.var.now())
      await requireEnvironment(c, params.domain_id)
      await requireFindingType(c.env.DB, params.domain_id, finding)
      const rows = await listSparklines(c.env.DB, params.domain_id, finding, rfc3339(window.from), rfc3339(window.to))
      return c.json({ start: rfc3339(window.from), end: rfc3339(window.to), data: rows.map(sparklineItem) })
    },
  ),
  defineRoute(
    {
      method: 'get',
      path: '/api/v2/assets/findings/:finding_type/:asset',
      operationId: 'GetFindingAsset',
      summary: 'Title or remediation text of a finding type, as Markdown',
      description: '`asset` is one of title, short_description, short_remediation, long_remediation, with or without `.md`.',
      tags: ['Attack Paths'],
      auth: 'graph/Read',
      params: z.object({ finding_type: z.string().min(1), asset: z.string().min(1) }),
      responses: { 200: { description: 'Markdown text', contentType: 'text/markdown; charset=utf-8', schema: z.string() } },
    },
    async (c, { params }) => {
      const name = params.asset.endsWith('.md') ? params.asset.slice(0, -3) : params.asset
      if (!(ASSET_NAMES as readonly string[]).includes(name))
        throw new ApiError(404, `unknown finding asset "${params.asset.slice(0, 100)}"; available: ${ASSET_NAMES.join(', ')} (optionally with .md)`, 'asset')
      const def = findFindingDef(params.finding_type, await loadKindCatalog(c.env.DB))
      if (!def) throw new ApiError(404, `unknown finding type "${params.finding_type.slice(0, 100)}"`, 'finding_type')
      return c.body(def[name as AssetName], 200, { 'Content-Type': 'text/markdown; charset=utf-8' })
    },
  ),
  defineRoute(
    {
      method: 'put',
      path: '/api/v2/attack-paths/:id/acceptance',
      operationId: 'SetFindingAcceptance',
      audit: {
        action: ({ body }) => ((body as { accepted?: boolean }).accepted === false ? 'UnacceptRisk' : 'AcceptRisk'),
        fields: ({ params, body }) => ({ id: Number((params as { id: string }).id), ...(body as object) }),
        // the finding's environment (src/audit/visibility.ts); a finding that is not open: unknown
        environments: async ({ params }, c) => {
          const row = await getOpenFinding(c.env.DB, Number((params as { id: string }).id), rfc3339(c.var.now()))
          return row?.environment_id ? [row.environment_id] : 'unknown'
        },
      },
      summary: 'Accept (or stop accepting) the risk of a finding',
      description:
        '`accepted_until` (RFC 3339, in the future) limits the acceptance; without it the acceptance has no end. ' +
        'Acceptance does not change `updated_at` (only metric changes do).',
      tags: ['Attack Paths'],
      auth: 'risks/ManageRisks',
      replay: { once: 'risk acceptance hides a finding: a copy could re-accept a risk an administrator has just reopened' },
      params: z.object({ id: z.string().regex(/^[1-9]\d{0,15}$/, 'id is malformed') }),
      body: { kind: 'json', schema: AcceptanceBody, maxBytes: 4 * 1024 },
      responses: { 200: { description: 'the finding after the change', schema: z.object({ data: z.union([RelationshipItem, ListItem]) }) } },
    },
    async (c, { params, body }) => {
      const id = Number(params.id)
      const now = c.var.now()
      let until: string | null = null
      if (body.accepted_until !== undefined && body.accepted_until !== null && body.accepted_until !== '') {
        if (!body.accepted) throw new ApiError(400, 'accepted_until is only allowed when accepted is true', 'accepted_until')
        const d = parseTime(body.accepted_until, 'accepted_until', 'accepted_until must be an RFC 3339 date-time, e.g. 2026-12-31T00:00:00Z')
        if (d.getTime() <= now.getTime()) throw new ApiError(400, 'accepted_until must be in the future', 'accepted_until')
        until = rfc3339(d)
      }
      const nowIso = rfc3339(now)
      const row = await getOpenFinding(c.env.DB, id, nowIso)
      if (!row || !canSeeEnvironment(c.var.principal.environmentAccess, row.environment_id))
        throw new ApiError(404, 'finding not found', 'id')
      if (!(await setAcceptance(c.env.DB, id, body.accepted, until, auditOf(c).write({ accepted_until: until, environment_id: row.environment_id }))))
        throw new ApiError(404, 'finding not found', 'id')
      const after = await getOpenFinding(c.env.DB, id, nowIso)
      if (!after) throw new ApiError(404, 'finding not found', 'id')
      return c.json({ data: detailItem(after, c.var.principal.environmentAccess) })
    },
  ),
  defineRoute(
    {
      method: 'put',
      path: '/api/v2/analysis',
      operationId: 'RequestAnalysisBloodHound',
      cost: WEIGHT.analysis,
      audit: { action: 'RequestAnalysis' },
      summary: "Request an analysis run, as BloodHound's web interface does (202, no body)",
      description:
        'The same request as `POST /api/v2/analysis`, answered as BloodHound answers it: 202 with an empty body. The optional JSON ' +
        "body BloodHound reads (`analysis_step`) is accepted; EdgeHound's runs always do every step.",
      tags: ['Analysis'],
      auth: 'analysis/Run',
      replay: { repeatable: 'an analysis request: repeats coalesce into the pending run' },
      body: { kind: 'json', required: false, schema: z.object({ analysis_step: z.number().int().optional() }).passthrough() },
      responses: { 202: { description: 'requested (no body)' } },
    },
    async (c) => {
      requireAllEnvironments(c)
      await requestRun(c.env, `requested by ${c.var.principal.principalName}`, Date.now(), auditOf(c).write())
      return c.body(null, 202)
    },
  ),
  defineRoute(
    {
      method: 'post',
      path: '/api/v2/analysis',
      operationId: 'RequestAnalysis',
      cost: WEIGHT.analysis,
      audit: { action: 'RequestAnalysis' },
      summary: 'Request an analysis run (runs off the request path)',
      description: 'Answers 202 with the run the request joined: a new pending run, or the one already pending.',
      tags: ['Analysis'],
      auth: 'analysis/Run',
      replay: { repeatable: 'an analysis request: repeats coalesce into the pending run' },
      responses: { 202: { description: 'requested', schema: z.object({ data: RunSchema }) } },
    },
    async (c) => {
      requireAllEnvironments(c)
      const run = await requestRun(c.env, `requested by ${c.var.principal.principalName}`, Date.now(), auditOf(c).write())
      return c.json({ data: run }, 202)
    },
  ),
  defineRoute(
    {
      method: 'get',
      path: '/api/v2/analysis',
      operationId: 'ListAnalysisRuns',
      summary: 'Latest analysis runs, newest first, with status, timings and counts',
      tags: ['Analysis'],
      auth: 'analysis/Run',
      query: z.object({
        skip: nonNegInt('skip'),
        limit: z
          .string()
          .regex(/^\d{1,3}$/, 'limit must be an integer from 1 to 100')
          .transform(Number)
          .refine((n) => n >= 1 && n <= 100, 'limit must be an integer from 1 to 100')
          .optional(),
      }),
      responses: {
        200: {
          description: 'runs',
          schema: z.object({ count: z.number().int(), skip: z.number().int(), limit: z.number().int(), data: z.array(RunSchema) }),
        },
      },
    },
    async (c, { query }) => {
      const skip = query.skip ?? 0
      const limit = query.limit ?? 10
      // The page's budget is enforced in SQL: a page asked for beyond it (limit=0 means every row) reads
      // one row past the budget, which is enough to refuse it.
      const sqlLimit = limit === 0 || limit > DETAILS_MAX_ROWS ? DETAILS_MAX_ROWS + 1 : limit
      requireAllEnvironments(c)
      const { count, runs } = await listRuns(c.env.DB, skip, limit)
      return c.json({ count, skip, limit, data: runs })
    },
  ),
  defineRoute(
    {
      method: 'get',
      path: '/api/v2/analysis/status',
      operationId: 'GetAnalysisRequest',
      summary: "The pending analysis request, in BloodHound's shape",
      description:
        'The oldest analysis run still waiting to start: `requested_by` (why it was requested: a user, an ingest job, …), ' +
        '`request_type` (`analysis`) and `requested_at`. With none pending, BloodHound answers the empty request: empty strings ' +
        'and the zero time `0001-01-01T00:00:00Z`. `GET /api/v2/analysis` lists the runs with their status.',
      tags: ['Analysis'],
      auth: 'graph/Read',
      responses: {
        200: {
          description: 'the pending request, or the empty one',
          schema: z.object({ data: z.object({ requested_by: z.string(), request_type: z.string(), requested_at: z.string() }) }),
        },
      },
    },
    async (c) => {
      const run = await pendingRun(c.env.DB)
      const data = run
        ? { requested_by: run.reasons[0] ?? '', request_type: 'analysis', requested_at: run.requested_at }
        : { requested_by: '', request_type: '', requested_at: '0001-01-01T00:00:00Z' }
      return c.json({ data })
    },
  ),
  defineRoute(
    {
      method: 'get',
      path: '/api/v2/analysis/:run_id',
      operationId: 'GetAnalysisRun',
      summary: 'One analysis run',
      tags: ['Analysis'],
      auth: 'analysis/Run',
      params: z.object({ run_id: z.string().regex(/^[1-9]\d{0,15}$/, 'id is malformed') }),
      responses: { 200: { description: 'the run', schema: z.object({ data: RunSchema }) } },
    },
    async (c, { params }) => {
      requireAllEnvironments(c)
      const run = await getRun(c.env.DB, Number(params.run_id))
      if (!run) throw new ApiError(404, 'analysis run not found', 'run_id')
      return c.json({ data: run })
    },
  ),
]
