/**
 * The attack-paths page's own logic (pure: unit-tested in test/unit/console-findings.test.ts).
 * A finding type's severity comes from its composite risk, a percentage (100 × impacted assets ÷ principals),
 * with the thresholds a finding's Severity uses on its ImpactPercentage (docs/findings.md): ≥ 95 critical,
 * ≥ 80 high, ≥ 40 moderate, else low.
 */
export type Severity = 'critical' | 'high' | 'moderate' | 'low'

export function severityOfRisk(compositeRisk: number): Severity {
  if (compositeRisk >= 95) return 'critical'
  if (compositeRisk >= 80) return 'high'
  if (compositeRisk >= 40) return 'moderate'
  return 'low'
}

const ORDER: Record<Severity, number> = { critical: 0, high: 1, moderate: 2, low: 3 }

/** Finding types in the order the page lists them: most severe first, then most findings, then by title. */
export function byImportance<T extends { composite_risk: number; finding_count_end: number; display_title: string }>(rows: T[]): T[] {
  return [...rows].sort(
    (a, b) =>
      ORDER[severityOfRisk(a.composite_risk)] - ORDER[severityOfRisk(b.composite_risk)] ||
      b.finding_count_end - a.finding_count_end ||
      a.display_title.localeCompare(b.display_title),
  )
}

/** The change of a count over the window, as shown in the Trend column: "+3", "−2", "no change". */
export function trendText(increase: number, decrease: number): string {
  const net = increase - decrease
  if (net === 0) return increase ? `no change (+${increase} −${decrease})` : 'no change'
  return net > 0 ? `+${net}` : `−${-net}`
}

/** "11–20 of 25" for a page of `length` rows at `skip`; "none" when the count is 0. */
export function pageLabel(skip: number, length: number, count: number): string {
  if (count === 0 || length === 0) return count === 0 ? 'none' : `none of ${count}`
  return `${skip + 1}–${skip + length} of ${count}`
}
