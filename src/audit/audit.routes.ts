import { z } from 'zod'
import { defineRoute, type RouteEntry } from '../http/route'
import { pageInt } from '../http/paging'
import { ApiError, rfc3339 } from '../http/errors'
import { parseTime, splitOp } from '../findings/query'
import { visibleFields } from './visibility'
import { inlineFieldsMax } from './fields'
import { listAuditLogs, type AuditColumn, type AuditFilter, type AuditOp, type AuditSort } from './audit.store'

/**
 * GET /api/v2/audit (docs/audit.md), as BloodHound's ListAuditLogs: `skip`, `limit` (default 1000),
 * `sort_by` (repeatable or comma-separated, `-` for descending; `id` is always the last key so pages are
 * stable), `before` (default now, exclusive) and `after` (default before − 365 days, inclusive) as RFC 3339
 * with any offset (XSOAR sends `%2B00%3A00`; a raw `+` decoded to a space is repaired), and BloodHound's
 * filters `column=<op>:<value>` on the columns and operators its model allows.
 */
export const AUDIT_DEFAULT_LIMIT = 1000
export const AUDIT_MAX_LIMIT = 10000

const LogSchema = z.object({
  id: z.number().int(),
  created_at: z.string(),
  actor_id: z.string(),
  actor_name: z.string(),
  actor_email: z.string(),
  action: z.string(),
  fields: z.record(z.string(), z.unknown()),
  request_id: z.string(),
  source_ip_address: z.string(),
  status: z.enum(['intent', 'success', 'failure']),
  commit_id: z.string(),
})

const FILTERS: Record<string, { column: AuditColumn; ops: AuditOp[]; int?: boolean }> = {
  id: { column: 'id', ops: ['eq', 'neq', 'gt', 'gte', 'lt', 'lte'], int: true },
  actor_id: { column: 'actor_id', ops: ['eq', 'neq'] },
  actor_name: { column: 'actor_name', ops: ['eq', 'neq'] },
  actor_email: { column: 'actor_email', ops: ['eq', 'neq'] },
  action: { column: 'action', ops: ['eq', 'neq'] },
  request_id: { column: 'request_id', ops: ['eq', 'neq'] },
  source_ip_address: { column: 'source_ip_address', ops: ['eq', 'neq'] },
  status: { column: 'status', ops: ['eq', 'neq'] },
}
const SORTABLE = ['id', 'created_at', 'actor_name', 'actor_email', 'action', 'source_ip_address', 'status'] as const

const str = z.string().optional()
const Query = z.object({
  skip: str,
  limit: str,
  sort_by: str,
  before: str,
  after: str,
  ...Object.fromEntries(Object.keys(FILTERS).map((k) => [k, str])),
})

/** skip and limit: the shared paging parser (at most PAGE_INT_MAX; a larger value is a 400, never a 500). */
function intParam(raw: string | undefined, name: string, def: number): number {
  return pageInt(raw, name, { def })
}

export function parseAuditQuery(url: URL, now: Date) {
  const q = url.searchParams
  const skip = intParam(q.get('skip') ?? undefined, 'skip', 0)
  // BloodHound (ListAuditLogs → ParseLimitQueryParameter → database.Paginate) takes any limit ≥ 0, with 0
  // meaning "no limit", and answers 400 only for a negative or non-integer one. Legacy connectors rely on that
  // (the Go Sentinel connector sends limit=500000). EdgeHound bounds the cost of one page instead of refusing:
  // a limit of 0 or above the cap is clamped to AUDIT_MAX_LIMIT and the response's `limit` states the
  // effective value, so a client that pages with `skip` until an empty page still sees every entry.
  const asked = intParam(q.get('limit') ?? undefined, 'limit', AUDIT_DEFAULT_LIMIT)
  const limit = asked === 0 || asked > AUDIT_MAX_LIMIT ? AUDIT_MAX_LIMIT : asked
  const b = q.get('before')
  const before = b ? parseTime(b, 'query.before', 'before is not an RFC 3339 date-time') : now
  const a = q.get('after')
  const after = a ? parseTime(a, 'query.after', 'after is not an RFC 3339 date-time') : new Date(before.getTime() - 365 * 86400_000)
  const sort: AuditSort[] = []
  for (const raw of q.getAll('sort_by').flatMap((v) => v.split(','))) {
    const t = raw.trim()
    if (!t) continue
    const desc = t.startsWith('-')
    const col = desc ? t.slice(1) : t
    if (!(SORTABLE as readonly string[]).includes(col))
      throw new ApiError(400, `sort_by column "${col}" is not sortable; sortable columns: ${SORTABLE.join(', ')}`, 'query.sort_by')
    sort.push({ column: col as AuditSort['column'], desc })
  }
  if (sort.length === 0) sort.push({ column: 'created_at', desc: false })
  const filters: AuditFilter[] = []
  for (const [name, spec] of Object.entries(FILTERS)) {
    for (const raw of q.getAll(name)) {
      const { op, value } = splitOp(raw, `query.${name}`, spec.ops)
      if (spec.int) {
        if (!/^-?\d+$/.test(value.trim())) throw new ApiError(400, `${name} must be an integer`, `query.${name}`)
        filters.push({ column: spec.column, op, value: Number(value.trim()) })
      } else filters.push({ column: spec.column, op, value })
    }
  }
  return { skip, limit, before, after, sort, filters }
}

export const auditRoutes: RouteEntry[] = [
  defineRoute(
    {
      method: 'get',
      path: '/api/v2/audit',
      operationId: 'ListAuditLogs',
      summary: 'The audit log: every change made through the API (intent, then success or failure)',
      description:
        'Paged with `skip`/`limit` (default 1000; 0 or more than 10000 is answered with 10000 entries at most, and the response\'s `limit` ' +
        'says so; either above 1000000000 is 400); past the end `logs` is `[]`. `before` (default now, exclusive) and `after` ' +
        '(default before − 1 year, inclusive) take RFC 3339 date-times with any offset. Filters `column=<op>:<value>` on id (eq, neq, gt, gte, lt, lte), ' +
        'actor_id, actor_name, actor_email, action, request_id, source_ip_address, status (eq, neq). `sort_by` on id, created_at, actor_name, ' +
        'actor_email, action, source_ip_address, status (`-` for descending; default created_at; id breaks ties). ' +
        'A caller restricted to some environments is served every entry, but an entry about an environment outside its access ' +
        '(object ids, selector seeds and rules, findings, uploads, other users\' environment access) has its `fields` replaced by ' +
        '`{"redacted": "…"}`. Fields are stored whole (never cut); a page serves at most 8 MiB of fields, so an entry larger than ' +
        'its share of that (8 MiB / limit) is served as `{"omitted": true, "chars": n, "reason": "…"}`: `?id=eq:<id>&limit=1` serves it whole.',
      tags: ['Audit'],
      auth: 'audit/Read',
      query: Query,
      responses: {
        200: {
          description: 'a page of audit entries',
          schema: z.object({ count: z.number().int(), skip: z.number().int(), limit: z.number().int(), data: z.object({ logs: z.array(LogSchema) }) }),
        },
      },
    },
    async (c) => {
      const p = parseAuditQuery(new URL(c.req.url), c.var.now())
      const { count, rows } = await listAuditLogs(c.env.DB, {
        after: rfc3339(p.after),
        before: rfc3339(p.before),
        filters: p.filters,
        sort: p.sort,
        skip: p.skip,
        limit: p.limit,
        inlineMax: inlineFieldsMax(p.limit),
      })
      // a reader restricted to some environments gets entries about others redacted (src/audit/visibility.ts)
      const access = c.var.principal.environmentAccess
      const logs = rows.map(({ environments, fields, ...r }) => ({ ...r, fields: visibleFields({ action: r.action, environments }, fields, access) }))
      return c.json({ count, skip: p.skip, limit: p.limit, data: { logs } })
    },
  ),
]
