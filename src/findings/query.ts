/**
 * Query parameters of the findings read endpoints, parsed into plain typed values (pure; the store turns
 * them into SQL from a fixed whitelist — user text never becomes SQL).
 *
 * BloodHound's filter syntax: `column=<op>:<value>` with op ∈ eq, neq, gt, gte, lt, lte; a bare value
 * means `eq`. Clients send `Accepted=eq:False`. Sorting: `sort_by=col` or `sort_by=-col` (descending),
 * several columns comma-separated; `id` is always appended so pages are stable.
 */
import { ApiError } from '../http/errors'
import { parseRfc3339 } from '../auth/signature'

export type FilterOp = 'eq' | 'neq' | 'gt' | 'gte' | 'lt' | 'lte'
const OPS: readonly FilterOp[] = ['eq', 'neq', 'gt', 'gte', 'lt', 'lte']

export interface Filter<T> {
  op: FilterOp
  value: T
}

export interface DetailsFilters {
  accepted?: Filter<boolean>
  created_at?: Filter<string>
  updated_at?: Filter<string>
  id?: Filter<number>
  from_principal?: Filter<string>
  to_principal?: Filter<string>
  principal?: Filter<string>
}

export type SortColumn =
  | 'created_at'
  | 'updated_at'
  | 'id'
  | 'impact_percentage'
  | 'exposure_percentage'
  | 'impact_count'
  | 'exposure_count'
  | 'from_principal'
  | 'to_principal'
  | 'principal'
  | 'accepted_until'
  | 'domain_sid'
  | 'finding'

export interface SortKey {
  column: SortColumn
  desc: boolean
}

/** Accepted spellings (BloodHound's PascalCase and snake_case) → column. */
const SORT_ALIASES: Record<string, SortColumn> = {
  created_at: 'created_at',
  updated_at: 'updated_at',
  id: 'id',
  impactpercentage: 'impact_percentage',
  impact_percentage: 'impact_percentage',
  exposurepercentage: 'exposure_percentage',
  exposure_percentage: 'exposure_percentage',
  impactcount: 'impact_count',
  impact_count: 'impact_count',
  exposurecount: 'exposure_count',
  exposure_count: 'exposure_count',
  fromprincipal: 'from_principal',
  from_principal: 'from_principal',
  toprincipal: 'to_principal',
  to_principal: 'to_principal',
  principal: 'principal',
  accepteduntil: 'accepted_until',
  accepted_until: 'accepted_until',
  domainsid: 'domain_sid',
  domain_sid: 'domain_sid',
  finding: 'finding',
}

export const DEFAULT_SORT: SortKey[] = [{ column: 'created_at', desc: false }]

export function parseSort(raw: string | undefined): SortKey[] {
  if (raw === undefined) return DEFAULT_SORT
  const parts = raw.split(',').map((s) => s.trim())
  if (parts.length === 0 || parts.every((p) => p === '')) throw new ApiError(400, 'empty sort_by parameter supplied', 'query.sort_by')
  const out: SortKey[] = []
  for (const p of parts) {
    if (!p) continue
    const desc = p.startsWith('-')
    const name = desc ? p.slice(1) : p
    const column = SORT_ALIASES[name.toLowerCase()]
    if (!column)
      throw new ApiError(400, `sort_by column "${name}" is not sortable; sortable columns: ${[...new Set(Object.values(SORT_ALIASES))].join(', ')}`, 'query.sort_by')
    out.push({ column, desc })
  }
  return out
}

export function splitOp(raw: string, context: string, allowed: readonly FilterOp[]): { op: FilterOp; value: string } {
  const m = /^([a-z]+):(.*)$/s.exec(raw)
  if (m && (OPS as readonly string[]).includes(m[1])) {
    const op = m[1] as FilterOp
    if (!allowed.includes(op)) throw new ApiError(400, `the filter predicate "${op}" is not supported for this column; supported: ${allowed.join(', ')}`, context)
    return { op, value: m[2] }
  }
  return { op: 'eq', value: raw }
}

/**
 * Hono decodes `+` in query values to a space (form encoding). A client that sends a raw offset such as
 * `2024-05-01T10:00:00+00:00` therefore arrives as `…00 00:00`; put the plus back before parsing.
 */
export function repairPlus(v: string): string {
  return v.replace(/ (\d{2}:\d{2})$/, '+$1')
}

export function parseTime(raw: string, context: string, message: string): Date {
  const d = parseRfc3339(repairPlus(raw.trim()))
  if (!d || Number.isNaN(d.getTime())) throw new ApiError(400, message, context)
  return d
}

export function parseBoolFilter(raw: string, context: string): Filter<boolean> {
  const { op, value } = splitOp(raw, context, ['eq', 'neq'])
  const v = value.trim().toLowerCase()
  if (v !== 'true' && v !== 'false') throw new ApiError(400, `${context.replace(/^query\./, '')} must be true or false`, context)
  return { op, value: v === 'true' }
}

export function parseTimeFilter(raw: string, context: string): Filter<string> {
  const { op, value } = splitOp(raw, context, OPS)
  const name = context.replace(/^query\./, '')
  return { op, value: parseTime(value, context, `${name} must be an RFC 3339 date-time, e.g. 2021-04-21T07:20:50.52Z`).toISOString() }
}

export function parseIntFilter(raw: string, context: string): Filter<number> {
  const { op, value } = splitOp(raw, context, OPS)
  if (!/^\d{1,15}$/.test(value.trim())) throw new ApiError(400, `${context.replace(/^query\./, '')} must be a non-negative integer`, context)
  return { op, value: Number(value.trim()) }
}

export function parseStringFilter(raw: string, context: string): Filter<string> {
  const { op, value } = splitOp(raw, context, ['eq', 'neq'])
  return { op, value }
}

export interface DetailsQueryInput {
  Accepted?: string
  accepted?: string
  created_at?: string
  updated_at?: string
  id?: string
  FromPrincipal?: string
  from_principal?: string
  ToPrincipal?: string
  to_principal?: string
  Principal?: string
  principal?: string
}

export function parseDetailsFilters(q: DetailsQueryInput): DetailsFilters {
  const f: DetailsFilters = {}
  const accepted = q.Accepted ?? q.accepted
  if (accepted !== undefined) f.accepted = parseBoolFilter(accepted, q.Accepted !== undefined ? 'query.Accepted' : 'query.accepted')
  if (q.created_at !== undefined) f.created_at = parseTimeFilter(q.created_at, 'query.created_at')
  if (q.updated_at !== undefined) f.updated_at = parseTimeFilter(q.updated_at, 'query.updated_at')
  if (q.id !== undefined) f.id = parseIntFilter(q.id, 'query.id')
  const from = q.FromPrincipal ?? q.from_principal
  if (from !== undefined) f.from_principal = parseStringFilter(from, 'query.from_principal')
  const to = q.ToPrincipal ?? q.to_principal
  if (to !== undefined) f.to_principal = parseStringFilter(to, 'query.to_principal')
  const principal = q.Principal ?? q.principal
  if (principal !== undefined) f.principal = parseStringFilter(principal, 'query.Principal')
  return f
}

export const FROM_MALFORMED = 'from parameter should be formatted as RFC3339 i.e 2021-04-21T07:20:50.52Z'
export const TO_MALFORMED = 'to parameter should be formatted as RFC3339 i.e 2021-04-21T07:20:50.52Z'
export const TO_BEFORE_FROM = 'to time cannot be before from time'
export const DEFAULT_WINDOW_MS = 30 * 24 * 60 * 60 * 1000

/** The sparkline window: `from` inclusive (default now − 30 days), `to` exclusive (default now). */
export function parseWindow(from: string | undefined, to: string | undefined, now: Date): { from: Date; to: Date } {
  const t = to !== undefined && to !== '' ? parseTime(to, 'query.to', TO_MALFORMED) : now
  const f = from !== undefined && from !== '' ? parseTime(from, 'query.from', FROM_MALFORMED) : new Date(t.getTime() - DEFAULT_WINDOW_MS)
  if (t.getTime() < f.getTime()) throw new ApiError(400, TO_BEFORE_FROM, 'query.to')
  return { from: f, to: t }
}
