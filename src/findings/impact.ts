/**
 * CONTRACT between src/graph (caller: available-domains `impactValue`) and src/findings (implementer).
 * Returns, per environment id, its highest CompositeRisk in the latest completed analysis run, rounded to
 * the nearest integer (CompositeRisk is 0..100). Environments without data are absent (callers use 0).
 */
import { compositeRisksOfLatestRun } from './findings.store'

export async function impactValues(db: D1Database): Promise<Map<string, number>> {
  const out = new Map<string, number>()
  for (const r of await compositeRisksOfLatestRun(db)) out.set(r.environment_id, Math.round(r.risk))
  return out
}
