/** Query-parameter schemas shared by the graph routes (zod; failures become the 400 envelope). */
import { z } from 'zod'

/** Paging parameters: the one parser of src/http/paging.ts (re-exported for the graph routes). */
export { Limit, Skip, SkipUpTo } from '../http/paging'

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
