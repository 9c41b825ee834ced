import { describe, expect, it } from 'vitest'
import { withMetrics, type FindingResult } from '../../src/findings/engine'
import { metricsChanged, reconcile, sparklineRows, type OpenFinding } from '../../src/findings/reconcile'
import { commitTime } from '../../src/findings/run'
import { chunkJson } from '../../src/findings/analysis.store'

const result = (from: string, to: string, impact: number, exposure = 5, principals = 10, finding = 'T0GenericAll'): FindingResult =>
  withMetrics(
    { finding, environmentId: 'D', from, to, shape: to ? 'relationship' : 'list', relKind: to ? 'GenericAll' : null },
    { impactCount: impact, exposureCount: exposure, principalCount: principals },
  )

const open = (id: number, from: string, to: string, impact: number, exposure = 5, principals = 10, finding = 'T0GenericAll'): OpenFinding => ({
  id,
  finding,
  environmentId: 'D',
  from,
  to,
  impactCount: impact,
  exposureCount: exposure,
  principalCount: principals,
})

describe('identity over time (pure reconciliation)', () => {
  it('first run: everything is new', () => {
    const plan = reconcile([], [result('a', 'b', 1), result('c', '', 2)])
    expect(plan.inserts.map((r) => r.from)).toEqual(['a', 'c'])
    expect(plan).toMatchObject({ updates: [], closes: [], unchanged: 0 })
  })

  it('unchanged keeps the row untouched; changed metrics update it; gone closes it; new inserts', () => {
    const previous = [open(1, 'a', 'b', 1), open(2, 'c', 'd', 2), open(3, 'e', 'f', 3)]
    const plan = reconcile(previous, [result('a', 'b', 1), result('c', 'd', 7), result('x', 'y', 1)])
    expect(plan.unchanged).toBe(1)
    expect(plan.updates).toEqual([{ id: 2, result: result('c', 'd', 7) }])
    expect(plan.closes).toEqual([3])
    expect(plan.inserts.map((r) => [r.from, r.to])).toEqual([['x', 'y']])
  })

  it('any of the three counts is a metric change; percentages and severity follow from them', () => {
    const base = { impactCount: 1, exposureCount: 2, principalCount: 3 }
    expect(metricsChanged(base, { ...base })).toBe(false)
    expect(metricsChanged(base, { ...base, impactCount: 2 })).toBe(true)
    expect(metricsChanged(base, { ...base, exposureCount: 3 })).toBe(true)
    // same count, more principals: the percentage changed, so the metrics did
    expect(metricsChanged(base, { ...base, principalCount: 4 })).toBe(true)
  })

  it('a finding that reappears after being closed is new: closed rows never match', () => {
    // run 2 closed id 1; run 3 finds the same key again: only open rows are passed in, so it is an insert
    const plan = reconcile([], [result('a', 'b', 1)])
    expect(plan.inserts).toHaveLength(1)
    expect(plan.updates).toHaveLength(0)
  })

  it('keys include type, environment, from and to (list findings: to = "")', () => {
    const previous = [open(1, 'u', '', 1, 1, 10, 'Kerberoasting')]
    const plan = reconcile(previous, [result('u', '', 1, 1, 10, 'ASREPRoasting')])
    expect(plan.closes).toEqual([1])
    expect(plan.inserts.map((r) => r.finding)).toEqual(['ASREPRoasting'])
    const other = reconcile([open(1, 'a', 'b', 1)], [{ ...result('a', 'b', 1), environmentId: 'E' }])
    expect(other.closes).toEqual([1])
    expect(other.inserts).toHaveLength(1)
  })

  it('two open rows with one key (never expected) keep the oldest and close the other', () => {
    const plan = reconcile([open(9, 'a', 'b', 1), open(4, 'a', 'b', 1)], [result('a', 'b', 1)])
    expect(plan.closes).toEqual([9])
    expect(plan.unchanged).toBe(1)
  })
})

describe('sparkline rows per run', () => {
  it('adds a zero row for every pair that had findings and has none now', () => {
    const current = [{ environmentId: 'D', finding: 'T0Owns', findingCount: 2, impactedAssetCount: 3, impactCount: 3, exposureCount: 4, principalCount: 10, compositeRisk: 30 }]
    const rows = sparklineRows(current, [{ environmentId: 'D', finding: 'T0Owns' }, { environmentId: 'D', finding: 'Kerberoasting' }, { environmentId: 'X', finding: 'T0Owns' }], new Map([['D', 10]]))
    expect(rows).toEqual([
      { environmentId: 'D', finding: 'Kerberoasting', findingCount: 0, impactedAssetCount: 0, impactCount: 0, exposureCount: 0, principalCount: 10, compositeRisk: 0 },
      current[0],
      { environmentId: 'X', finding: 'T0Owns', findingCount: 0, impactedAssetCount: 0, impactCount: 0, exposureCount: 0, principalCount: 0, compositeRisk: 0 },
    ])
  })
})

describe('run timestamps and staging chunks', () => {
  it('commit times are fixed-width RFC 3339 and strictly after the previous run', () => {
    const t = Date.parse('2026-11-25T10:00:00.000Z')
    expect(commitTime(t, null)).toBe('2026-11-25T10:00:00.000Z')
    expect(commitTime(t, '2026-11-25T09:00:00.000Z')).toBe('2026-11-25T10:00:00.000Z')
    expect(commitTime(t, '2026-11-25T10:00:00.000Z')).toBe('2026-11-25T10:00:00.001Z')
    expect(commitTime(t, '2026-11-25T10:00:05.000Z')).toBe('2026-11-25T10:00:05.001Z')
  })

  it('splits rows into JSON arrays below the size limit without losing or reordering any', () => {
    const rows = Array.from({ length: 1000 }, (_, i) => ['insert', null, `T0GenericAll-${i}`, 'x'.repeat(i % 50)])
    const chunks = chunkJson(rows, 2000)
    expect(chunks.length).toBeGreaterThan(10)
    for (const c of chunks) expect(c.length).toBeLessThanOrEqual(2000)
    expect(chunks.flatMap((c) => JSON.parse(c))).toEqual(rows)
    expect(chunkJson([])).toEqual([])
  })
})
