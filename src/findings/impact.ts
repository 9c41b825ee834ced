/**
 * CONTRACT between src/graph (caller: available-domains `impactValue`) and src/findings (implementer).
 * Returns, per environment id, its highest CompositeRisk in the latest completed analysis run, rounded to
 * the nearest integer (CompositeRisk is 0..100). Environments without data are absent (callers use 0).
 */
import { compositeRisksOf, compositeRisksStatement } from './findings.store'

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
