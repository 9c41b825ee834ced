/**
 * Posture statistics of one analysis run, per environment (issue 15; formulas in docs/findings.md "Posture").
 * Pure: computed from the run's AnalysisResult and written by commitRun in the run's commit batch.
 */
import type { AnalysisResult } from './engine'

export interface PostureRow {
  domainSid: string
  /** 0..1: the largest share of the environment's principals that one finding type lets reach Tier Zero */
  exposureIndex: number
  tierZeroCount: number
  /** the environment's findings of severity critical */
  criticalRiskCount: number
}

export function postureRows(result: Pick<AnalysisResult, 'findings' | 'sparklines' | 'principalCounts' | 'tierZeroCounts'>): PostureRow[] {
  const envs = new Set<string>([...result.principalCounts.keys(), ...result.tierZeroCounts.keys()])
  for (const s of result.sparklines) envs.add(s.environmentId)
  const exposure = new Map<string, number>()
  for (const s of result.sparklines) {
    const share = s.principalCount > 0 ? Math.min(1, s.impactedAssetCount / s.principalCount) : 0
    exposure.set(s.environmentId, Math.max(exposure.get(s.environmentId) ?? 0, share))
  }
  const critical = new Map<string, number>()
  for (const f of result.findings) if (f.severity === 'critical') critical.set(f.environmentId, (critical.get(f.environmentId) ?? 0) + 1)
  return [...envs].sort().map((e) => ({
    domainSid: e,
    exposureIndex: exposure.get(e) ?? 0,
    tierZeroCount: result.tierZeroCounts.get(e) ?? 0,
    criticalRiskCount: critical.get(e) ?? 0,
  }))
}
