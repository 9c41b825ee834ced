/**
 * CONTRACT between src/graph (caller: available-domains `impactValue`) and src/findings (implementer).
 * Returns, per environment id, its highest CompositeRisk in the latest completed analysis run, rounded to
 * the nearest integer (CompositeRisk is 0..100). Environments without data are absent (callers use 0).
 */
import { compositeRisksOf, compositeRisksStatement, LATEST_COMPLETE_RUN_SQL } from './findings.store'

/**
 * SQL value naming the latest complete run (`id:completed_at`): `impactValues` changes only when it does.
 * For a caller's own statement (available-domains' isolate cache, src/graph/environments.ts).
 */
export const IMPACT_STAMP_SQL = LATEST_COMPLETE_RUN_SQL

export async function impactValues(db: D1Database): Promise<Map<string, number>> {
  return impactValuesOf(await impactValuesStatement(db).all())
}

/** The same in two halves, for a caller that sends it in a batch of its own: the statement… */
export function impactValuesStatement(db: D1Database): D1PreparedStatement {
  return compositeRisksStatement(db)
}

/** …and the values from its result. */
export function impactValuesOf(result: D1Result): Map<string, number> {
  const out = new Map<string, number>()
  for (const r of compositeRisksOf(result)) out.set(r.environment_id, Math.round(r.risk))
  return out
}
