/**
 * CONTRACT between src/graph (caller: available-domains `impactValue`) and src/findings (implementer).
 * Returns, per environment id, its highest CompositeRisk in the latest completed analysis run, as an
 * integer. Environments without data are absent (callers use 0). Placeholder until the findings work lands.
 */
export async function impactValues(_db: D1Database): Promise<Map<string, number>> {
  return new Map()
}
