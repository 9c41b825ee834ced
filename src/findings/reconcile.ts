/**
 * Identity over time, as a pure function of the open findings of the last completed run and the results
 * of this run. The store applies the plan in one atomic batch (src/findings/analysis.store.ts).
 *
 * Rules (issue 6):
 *  - a finding is identified by (type, environment, from object id, to object id); list findings use
 *    (type, environment, principal) — stored with `to` = '';
 *  - it keeps its `id` and `created_at` for as long as every run finds it again;
 *  - `updated_at` changes only when its metrics change. Metrics are the counts (ImpactCount,
 *    ExposureCount and the environment's principal count); percentages and Severity are derived from
 *    them, so equal counts mean equal metrics, and no floating-point comparison is needed;
 *  - a finding that a run no longer finds is closed (`deleted_at` set) and stays closed;
 *  - a finding that comes back after being closed is a NEW finding: new id, new created_at. Closed rows
 *    never take part in matching, which is what makes this so.
 */
import { keyString, type FindingKey, type FindingMetrics, type FindingResult, type SparklineResult } from './engine'

export interface OpenFinding extends FindingKey, FindingMetrics {
  id: number
}

export interface ReconcilePlan {
  inserts: FindingResult[]
  updates: { id: number; result: FindingResult }[]
  closes: number[]
  unchanged: number
}

export function metricsChanged(a: FindingMetrics, b: FindingMetrics): boolean {
  return a.impactCount !== b.impactCount || a.exposureCount !== b.exposureCount || a.principalCount !== b.principalCount
}

export function reconcile(open: readonly OpenFinding[], current: readonly FindingResult[]): ReconcilePlan {
  const byKey = new Map<string, OpenFinding>()
  const closes: number[] = []
  // The store's unique index allows one open row per key; should two ever exist, keep the oldest.
  for (const o of [...open].sort((a, b) => a.id - b.id)) {
    const k = keyString(o)
    if (byKey.has(k)) closes.push(o.id)
    else byKey.set(k, o)
  }
  const inserts: FindingResult[] = []
  const updates: { id: number; result: FindingResult }[] = []
  let unchanged = 0
  const seen = new Set<string>()
  for (const r of current) {
    const k = keyString(r)
    if (seen.has(k)) continue // the engine never repeats a key; be safe anyway
    seen.add(k)
    const o = byKey.get(k)
    if (!o) inserts.push(r)
    else if (metricsChanged(o, r)) updates.push({ id: o.id, result: r })
    else unchanged++
  }
  for (const [k, o] of byKey) if (!seen.has(k)) closes.push(o.id)
  closes.sort((a, b) => a - b)
  return { inserts, updates, closes, unchanged }
}

/**
 * The sparkline rows one run stores: every (environment, type) that has findings now, plus a zero row
 * for every pair that had findings before (`historicPairs`) and has none now, so a series ends at 0
 * instead of stopping.
 */
export function sparklineRows(
  current: readonly SparklineResult[],
  historicPairs: readonly { environmentId: string; finding: string }[],
  principalCounts: ReadonlyMap<string, number>,
): SparklineResult[] {
  const out = [...current]
  const have = new Set(current.map((s) => `${s.environmentId}\u0000${s.finding}`))
  for (const p of historicPairs) {
    const k = `${p.environmentId}\u0000${p.finding}`
    if (have.has(k)) continue
    have.add(k)
    out.push({
      environmentId: p.environmentId,
      finding: p.finding,
      findingCount: 0,
      impactedAssetCount: 0,
      impactCount: 0,
      exposureCount: 0,
      principalCount: principalCounts.get(p.environmentId) ?? 0,
      compositeRisk: 0,
    })
  }
  out.sort((a, b) => (a.environmentId < b.environmentId ? -1 : a.environmentId > b.environmentId ? 1 : a.finding < b.finding ? -1 : a.finding > b.finding ? 1 : 0))
  return out
}
