/**
 * The one parser of paging query parameters (`skip`, `limit` and their like) for every route: a decimal integer
 * within a declared range, else the 400 envelope naming the parameter. Never a 500: a value of any length
 * (`skip=<40 digits>`) is refused here, before it could reach SQL as a float or `Infinity` (D1 refuses an OFFSET
 * or LIMIT beyond 64-bit integers with an internal error, which was GET /api/v2/audit's 500).
 *
 * Ranges: a skip is at most PAGE_INT_MAX (or a route's smaller budget, `SkipUpTo`); a limit at most the route's
 * cap. A route that clamps a large limit instead of refusing it (the audit log, for BloodHound's connectors)
 * still refuses one above PAGE_INT_MAX. test/hardening/paging.test.ts sends huge values to every paged route.
 */
import { z } from 'zod'
import { ApiError } from './errors'

/** The largest skip (or clamped limit) any route accepts. */
export const PAGE_INT_MAX = 1_000_000_000

/** Query parameter names the route-table test treats as paging parameters. */
export const PAGING_PARAMS = ['skip', 'limit', 'offset'] as const

/** The parse itself: null when `raw` is a decimal integer in [min, max], else the message for the envelope. */
export function pageIntProblem(raw: string, name: string, min: number, max: number): string | null {
  if (!/^\d+$/.test(raw)) return `${name} must be a non-negative integer`
  // beyond 15 digits a Number is inexact (and may be Infinity): out of range whatever max is
  const n = raw.length > 15 ? Number.POSITIVE_INFINITY : Number(raw)
  if (n < min) return `${name} must be at least ${min}`
  if (n > max) return `${name} must be at most ${max}`
  return null
}

/** For handlers that read the query themselves: `def` when absent or empty, else the value or a 400 (`query.<name>`). */
export function pageInt(raw: string | undefined, name: string, opts: { def: number; min?: number; max?: number }): number {
  const s = raw?.trim()
  if (s === undefined || s === '') return opts.def
  const problem = pageIntProblem(s, name, opts.min ?? 0, opts.max ?? PAGE_INT_MAX)
  if (problem) throw new ApiError(400, problem, `query.${name}`)
  return Number(s)
}

function pageIntSchema(name: string, min: number, max: number, message?: string) {
  return z.string().transform((raw, ctx) => {
    const problem = pageIntProblem(raw, name, min, max)
    if (problem) {
      ctx.addIssue({ code: 'custom', message: message && /at most/.test(problem) ? message : problem })
      return z.NEVER
    }
    return Number(raw)
  })
}

/** An optional paging integer in [min, max] (undefined when absent; the route applies its default). */
export function PageInt(name: string, opts: { min?: number; max?: number } = {}) {
  return pageIntSchema(name, opts.min ?? 0, opts.max ?? PAGE_INT_MAX).optional()
}

/** `skip`: a non-negative integer up to PAGE_INT_MAX, default 0. */
export const Skip = pageIntSchema('skip', 0, PAGE_INT_MAX)
  .optional()
  .transform((v) => v ?? 0)

/**
 * `skip` with a budget (docs/budgets.md): an OFFSET costs the rows it skips, so deep pages of a search or a
 * related list are refused with the over-budget message (context `query.skip`) and how to narrow instead.
 */
export function SkipUpTo(max: number, narrow: string) {
  return pageIntSchema('skip', 0, max, `skip exceeds the skip budget of ${max}: ${narrow}`)
    .optional()
    .transform((v) => v ?? 0)
}

/** `limit`: a positive integer up to `max`, default `def`. */
export function Limit(def: number, max: number) {
  return pageIntSchema('limit', 1, max)
    .optional()
    .transform((v) => v ?? def)
}
