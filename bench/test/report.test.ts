/// <reference types="node" />
/** Goal evaluation, the report, statistics and profile summaries (pure code). */
import assert from 'node:assert/strict'
import { mkdtempSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { describe, it } from 'node:test'
import type { BenchResults } from '../run'
import type { CaseResult } from '../lib/http-cases'
import type { LargeFileResult, SizeResult } from '../lib/graph-cases'
import { hotFunctions, loadSourceMap, sharePct, type CpuProfile } from '../lib/inspector'
import { evaluateGoals, renderMarkdown } from '../lib/report'
import { percentile, summarize } from '../lib/stats'

function load(rps: number, probeP50us: number) {
  return {
    rps,
    total: rps * 5,
    warmupTotal: 0,
    latencyMs: { p50: 1, p90: 2, p99: 3, mean: 1, max: 4 },
    statuses: { 200: rps * 5 },
    errors: 0,
    timeouts: 0,
    probe: { count: 10, p50us: probeP50us, p90us: probeP50us, p99us: probeP50us, statuses: { 200: 10 } },
  }
}

function httpCase(id: string, rps: number, probeP50us: number, bareRps: number): CaseResult {
  return { id, title: id, available: true, expected: [200], load: load(rps, probeP50us), rpsRatio: rps / bareRps }
}

function size(edgesTarget: number, o: { sp: number; search: number; d0: number; dDeep: number; ingest: number; analysisS: number; committed: number }): SizeResult {
  const s = (p50: number) => ({ n: 10, p50, p90: p50, p99: p50, max: p50, mean: p50 })
  return {
    edgesTarget,
    nodes: edgesTarget / 10,
    edges: edgesTarget,
    generateMs: 1,
    fingerprint: 'x',
    selfCheck: { deterministic: true, exactEdges: true, tierZeroPaths: '1/1' },
    ingest: { available: true, elementsPerSecond: o.ingest, floorD1: { available: true, elementsPerSecond: o.ingest * 2 }, floorSqlite: { available: false } },
    analysis: { available: true, wallSeconds: o.analysisS, peakMiB: o.committed / 2, peakCommittedMiB: o.committed },
    shortestPath: { available: true, reachable: s(o.sp), unreachable: s(o.sp * 10), floorReachable: s(1), floorUnreachable: s(2), hopMismatches: 0 },
    search: { available: true, latency: s(o.search) },
    details: { available: true, skip0: s(o.d0), deep: s(o.dDeep), deepSkip: 900, count: 1000 },
    availableDomains: { available: false, error: 'GET /api/v2/available-domains does not exist yet' },
    profiles: {},
  }
}

function results(sizes: SizeResult[], withDomains = true): BenchResults {
  const bare = 1000
  const cases = [
    httpCase('bare', bare, 500, bare),
    httpCase('pipeline', 900, 600, bare),
    httpCase('version-signed', 700, 1400, bare),
    ...(withDomains ? [httpCase('domains-signed', 600, 2000, bare)] : [{ id: 'domains-signed', title: 'd', available: false, expected: [200], error: 'not available' } as CaseResult]),
    httpCase('over-limit', 2000, 900, bare),
    httpCase('forged-one-ip', 2500, 550, bare),
    httpCase('forged-many-ips', 500, 3000, bare),
  ]
  return {
    version: 1,
    startedAt: '2026-11-25T00:00:00.000Z',
    elapsedSeconds: 1,
    config: {
      mode: 'full', durationSeconds: 5, warmupSeconds: 1, rounds: 3, connections: 16, probeCount: 10, poolSize: 4, sizes: [],
      wranglerDev: false, http: true, graph: true, scale: false, profile: false, pairs: 1, unreachablePairs: 1, queries: 1, largeFileMiB: 20, updateDoc: false,
    },
    machine: { cpu: 'test', cores: 2, memoryGiB: 1, os: 'x', node: 'v20', workerd: '1', miniflare: '1', wrangler: '1', autocannon: '1', loadAverageStart: [1, 1, 1] },
    http: { cases, bare: { rps: bare, p50ms: 1, probeP50us: 500 }, authOverheadP50ms: 0.8 },
    graph: { sizes },
  }
}

describe('evaluateGoals', () => {
  it('judges every goal from the run: met, missed, or not measurable', () => {
    const r = results([size(1_000_000, { sp: 120, search: 25, d0: 10, dDeep: 21, ingest: 25_000, analysisS: 30, committed: 140 })])
    const g = Object.fromEntries(evaluateGoals(r).map((x) => [x.id, x.met]))
    assert.deepEqual(g, {
      'read-throughput': true, // 600 / 1000 ≥ 0.5
      'auth-overhead': true, // 0.8 ms
      'over-limit': true,
      'forged-one-ip': true,
      'forged-many-ips': false, // fewer req/s than the read and a higher p50
      'shortest-path': true,
      search: false,
      details: false, // the deep skip is over 20 ms
      ingest: true,
      analysis: false, // 140 MiB committed
      'large-file': null, // not in this run
    })
  })

  it('judges analysis memory on the fresh isolate and shows the ingest isolate beside it', () => {
    const big = size(1_000_000, { sp: 1, search: 1, d0: 1, dDeep: 1, ingest: 1, analysisS: 4, committed: 60 })
    big.analysis = { ...big.analysis, isolate: 'fresh', sameIsolate: { baselineCommittedMiB: 140, peakCommittedMiB: 150, peakMiB: 95 } }
    const a = evaluateGoals(results([big])).find((x) => x.id === 'analysis')!
    assert.equal(a.met, true, '60 MiB committed in the fresh isolate')
    assert.match(a.measured, /fresh isolate peak 60\.0 MiB committed \(30\.0 live\); in the ingest's isolate 150\.0 MiB committed/)
  })

  const MiB = 2 ** 20
  const file = (bytes: number, o: Partial<LargeFileResult> = {}): LargeFileResult => ({
    available: true, maxBytes: 20 * MiB, bytes, nodes: 17_000, edges: 119_000, status: 202, seconds: 6, elementsPerSecond: 22_000,
    baselineMiB: 5, peakMiB: 60, baselineCommittedMiB: 8, peakCommittedMiB: 100, ...o,
  })
  const largeGoal = (f?: LargeFileResult) => {
    const r = results([])
    if (f) r.graph!.largeFile = f
    return evaluateGoals(r).find((x) => x.id === 'large-file')!
  }

  it('judges the one-large-file goal on the committed peak of a ≥ 19 MiB file only', () => {
    assert.equal(largeGoal(file(20 * MiB - 100)).met, true)
    assert.match(largeGoal(file(20 * MiB - 100)).measured, /^20\.0 MiB file \(17,000 nodes, 119,000 edges\) in 6\.0 s, isolate peak 100\.0 MiB committed \(60\.0 live\)$/)
    assert.equal(largeGoal(file(20 * MiB - 100, { peakCommittedMiB: 128.1 })).met, false)
    const smoke = largeGoal(file(MiB - 100, { peakCommittedMiB: 20 }))
    assert.equal(smoke.met, null)
    assert.match(smoke.note ?? '', /not judged: a 1\.0 MiB file is below 19 MiB/)
    assert.equal(largeGoal(undefined).met, null)
    const refused = largeGoal(file(20 * MiB - 100, { available: false, status: 413, error: 'the upload answered 413' }))
    assert.equal(refused.met, false)
    assert.match(refused.measured, /answered 413/)
  })

  it('does not judge the graph goals on a smaller graph, and says which size it shows', () => {
    const goals = evaluateGoals(results([size(10_000, { sp: 1, search: 1, d0: 1, dDeep: 1, ingest: 1e6, analysisS: 1, committed: 1 })]))
    const sp = goals.find((x) => x.id === 'shortest-path')!
    assert.equal(sp.met, null)
    assert.match(sp.note ?? '', /shown at 10 k edges/)
  })

  it('reports the read goal as not measurable when available-domains does not exist, and falls back to /api/version for the cheaper-path goals', () => {
    const goals = evaluateGoals(results([], false))
    assert.equal(goals.find((x) => x.id === 'read-throughput')!.met, null)
    const over = goals.find((x) => x.id === 'over-limit')!
    assert.equal(over.met, true)
    assert.match(over.note ?? '', /api\/version/)
  })
})

describe('renderMarkdown', () => {
  it('prints the goals, the HTTP table with ratios, the graph growth table and what is not available', () => {
    const r = results([size(1_000_000, { sp: 100, search: 5, d0: 5, dDeep: 5, ingest: 30_000, analysisS: 2, committed: 50 })])
    const md = renderMarkdown({ ...r, goals: evaluateGoals(r) })
    assert.match(md, /### Goals/)
    assert.match(md, /\| shortest path p50 \(100 k nodes \/ 1 M edges\) \| ≤ 150 ms \| 100\.0 ms \| met \|/)
    assert.match(md, /\| version-signed \| 700 \| 0\.70 \|/)
    assert.match(md, /\| metric \| 1 M edges \|/)
    assert.match(md, /available-domains p50 ms \| not available \|/)
    assert.match(md, /available-domains: GET \/api\/v2\/available-domains does not exist yet/)
    assert.doesNotMatch(md, /One large file/)
  })

  it('prints the fresh and the ingest isolate figures, and the one-large-file table', () => {
    const big = size(1_000_000, { sp: 100, search: 5, d0: 5, dDeep: 5, ingest: 30_000, analysisS: 2, committed: 50 })
    big.analysis = { ...big.analysis, isolate: 'fresh', baselineMiB: 4, baselineCommittedMiB: 6, retainedMiB: 7, retainedCommittedMiB: 9, sameIsolate: { baselineCommittedMiB: 140, peakCommittedMiB: 150, baselineMiB: 90, peakMiB: 95, retainedMiB: 40, retainedCommittedMiB: 44 } }
    const r = results([big])
    r.graph!.largeFile = { available: true, maxBytes: 20 * 2 ** 20, bytes: 20 * 2 ** 20 - 146, nodes: 16_902, edges: 118_997, status: 202, seconds: 6.5, elementsPerSecond: 20_907, baselineMiB: 5, peakMiB: 61, baselineCommittedMiB: 8, peakCommittedMiB: 99, rssDeltaMiB: 120, d1Statements: 400 }
    const md = renderMarkdown({ ...r, goals: evaluateGoals(r) })
    assert.match(md, /\| analysis, fresh isolate MiB: committed at the request → peak \| 6\.0 → 50\.0 \|/)
    assert.match(md, /\| same analysis in the ingest's isolate MiB: committed at the request → peak \| 140\.0 → 150\.0 \|/)
    assert.match(md, /after ingest \+ analysis and a forced GC MiB: live \/ committed \| 40\.0 \/ 44\.0 \|/)
    assert.match(md, /### One large file/)
    assert.match(md, /\| answer \| 202, counts match \(upload and job\) \|/)
    assert.match(md, /\| isolate MiB: committed at the request → peak \| 8\.0 → 99\.0 \|/)
    assert.match(md, /\| one 20 MiB file ingested in one request within 128 MB \| ≤ 128 MiB committed \| 20\.0 MiB file .* \| met \|/)
  })
})

describe('stats', () => {
  it('nearest-rank percentiles', () => {
    const v = Array.from({ length: 100 }, (_, i) => i + 1)
    assert.equal(percentile(v, 50), 50)
    assert.equal(percentile(v, 99), 99)
    assert.equal(percentile([7], 99), 7)
    assert.ok(Number.isNaN(percentile([], 50)))
    const s = summarize([3, 1, 2])
    assert.deepEqual([s.n, s.p50, s.max, s.mean], [3, 2, 3, 2])
  })
})

describe('profile summaries', () => {
  const profile: CpuProfile = {
    nodes: [
      { id: 1, callFrame: { functionName: '(root)', url: '', lineNumber: -1, columnNumber: -1 } },
      { id: 2, callFrame: { functionName: '(idle)', url: '', lineNumber: -1, columnNumber: -1 } },
      { id: 3, callFrame: { functionName: 'hot', url: 'worker.js', lineNumber: 0, columnNumber: 4 } },
      { id: 4, callFrame: { functionName: 'hot', url: 'worker.js', lineNumber: 0, columnNumber: 4 } },
      { id: 5, callFrame: { functionName: 'cold', url: 'cloudflare-internal:d1-api', lineNumber: 9, columnNumber: 0 } },
    ],
    startTime: 0,
    endTime: 1000,
    samples: [2, 3, 4, 3, 5],
    timeDeltas: [100, 300, 300, 200, 100],
  }

  it('sums self time per function and location, largest first, mapping the bundle through its source map', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'bench-test-'))
    // one mapping: generated line 1, column 0 → source 0 ("../../src/x.ts"), line 5 (0-based 4)
    writeFileSync(path.join(dir, 'w.js.map'), JSON.stringify({ version: 3, sources: ['../../src/x.ts'], names: [], mappings: 'AAIA' }))
    const map = loadSourceMap(path.join(dir, 'w.js.map'))
    assert.ok(map)
    assert.equal(map(0, 4), 'src/x.ts:5')
    const top = hotFunctions(profile, 5, map)
    assert.deepEqual(top[0], { fn: 'hot', where: 'src/x.ts:5', selfMs: 0.8, selfPct: 80 })
    assert.deepEqual(top.map((t) => t.fn), ['hot', '(idle)', 'cold'])
    assert.equal(top[2].where, 'cloudflare-internal:d1-api:10', 'runtime modules keep their own names')
  })

  it('shares of pseudo-functions', () => {
    assert.equal(sharePct(profile, '(idle)'), 10)
    assert.equal(sharePct(profile, '(garbage collector)'), 0)
  })
})
