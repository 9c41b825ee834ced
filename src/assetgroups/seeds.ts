/**
 * Validation of a selector's seeds (pure), with BloodHound's messages (`validateSelectorSeeds` in
 * cmd/api/src/api/v2/assetgrouptags.go): at least one seed, all of one type, type 1 (object id) or 2 (Cypher),
 * and a Cypher seed must be a query the Cypher engine accepts (parsed here with the engine's own parser and
 * refusals: no updating clauses, no parameters, no procedure calls, within the complexity limits).
 */
import { ApiError } from '../http/errors'
import { CypherError, parseCypher } from '../cypher/parse'
import { SEED_CYPHER, SEED_OBJECT_ID, type Seed } from './selectors.store'

/** Longest object id accepted in a seed. */
export const MAX_OBJECT_ID = 512

export function validateSeeds(seeds: readonly { type: number; value: string }[] | undefined): Seed[] {
  if (!seeds || seeds.length === 0) throw new ApiError(400, 'seeds are required', 'seeds')
  const type = seeds[0].type
  if (type !== SEED_OBJECT_ID && type !== SEED_CYPHER) throw new ApiError(400, `invalid seed type ${type}`, 'seeds[0].type')
  const out: Seed[] = []
  seeds.forEach((s, i) => {
    if (s.type !== type) throw new ApiError(400, 'all seeds must be of the same type', `seeds[${i}].type`)
    if (type === SEED_OBJECT_ID) {
      const v = s.value.trim()
      if (!v) throw new ApiError(400, 'an object id seed needs a value (the object id)', `seeds[${i}].value`)
      if (v.length > MAX_OBJECT_ID) throw new ApiError(400, `an object id is at most ${MAX_OBJECT_ID} characters`, `seeds[${i}].value`)
      out.push({ type, value: v })
    } else {
      try {
        parseCypher(s.value)
      } catch (e) {
        if (e instanceof CypherError) throw new ApiError(400, `cypher is invalid: ${e.message}`, `seeds[${i}].value`)
        throw e
      }
      out.push({ type, value: s.value })
    }
  })
  return out
}
