/** Query-parameter schemas shared by the graph routes (zod; failures become the 400 envelope). */
import { z } from 'zod'

/** `skip`: a non-negative integer, default 0. */
export const Skip = z
  .string()
  .regex(/^\d+$/, 'skip must be a non-negative integer')
  .transform(Number)
  .pipe(z.number().int().max(1_000_000_000, 'skip is too large'))
  .optional()
  .transform((v) => v ?? 0)

/**
 * `skip` with a budget (docs/budgets.md): an OFFSET costs the rows it skips, so deep pages of a search or a
 * related list are refused with the over-budget message (context `query.skip`) and how to narrow instead.
 */
export function SkipUpTo(max: number, narrow: string) {
  return z
    .string()
    .regex(/^\d+$/, 'skip must be a non-negative integer')
    .transform(Number)
    .pipe(z.number().int().max(max, `skip exceeds the skip budget of ${max}: ${narrow}`))
    .optional()
    .transform((v) => v ?? 0)
}

/** `limit`: a positive integer up to `max`, default `def`. */
export function Limit(def: number, max: number) {
  return z
    .string()
    .regex(/^\d+$/, 'limit must be a non-negative integer')
    .transform(Number)
    .pipe(z.number().int().min(1, 'limit must be at least 1').max(max, `limit must be at most ${max}`))
    .optional()
    .transform((v) => v ?? def)
}

/** BloodHound-style optional boolean (`true`/`false`, case-insensitive), default `def`. */
export function OptionalBool(def: boolean, name: string) {
  return z
    .string()
    .transform((v) => v.toLowerCase())
    .pipe(z.enum(['true', 'false'], { error: `${name} must be true or false` }))
    .transform((v) => v === 'true')
    .optional()
    .transform((v) => v ?? def)
}

/** A numeric path id (`id is malformed` otherwise, BloodHound's message). */
export const NumericId = z
  .string()
  .regex(/^\d{1,15}$/, 'id is malformed')
  .transform(Number)
