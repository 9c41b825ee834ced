/// <reference types="node" />
/** Issue 17's goals from a scale run (bench/lib/scale-cases.ts → report.ts), pure. */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { scaleGoals } from '../lib/report'
import type { FarRow, ScaleRun } from '../lib/scale-cases'
import { summarize } from '../lib/stats'

function far(mode: FarRow['mode'], leases: FarRow['leases'], delayMs: number, p50: number): FarRow {
  return { mode, leases, delayMs, latency: summarize([p50, p50, p50]), roundP50s: [p50], objectCallsPerRequest: leases === 'on' ? 0.05 : 1, statuses: { 200: 3 } }
}

function run(o: { versionRps: number; farOn30: number; admitted: number; census: number }): ScaleRun {
  const tc = (id: string, rps: number, leaseMs: number | null) => ({
    id, title: id, leaseMs, rps, ratio: rps / 1000, rounds: [rps], probeP50us: 1, statuses: { 200: 10 }, objectCallsPerRequest: 0.1, serverCpuUsPerRequest: 1e5 / rps,
  })
  return {
    throughput: [tc('bare', 1000, null), tc('health', 400, null), tc('version-on', o.versionRps, 1000), tc('version-off', 300, 0)],
    census: [{ leaseMs: 1000, paceRps: 50, requests: 500, objectCalls: o.census * 500, perRequest: o.census, statuses: { 200: 500 } }],
    far: [far('paced', 'on', 0, 10), far('paced', 'on', 30, o.farOn30), far('paced', 'off', 0, 10), far('paced', 'off', 30, 40)],
    farRequests: 200,
    farRounds: 1,
    exactness: [{ leaseMs: 1000, isolates: 4, connectionsPerIsolate: 4, seconds: 10, rate: 55, burst: 110, sent: 5000, admitted: o.admitted, bound: 660, statuses: {}, perIsolateAdmitted: [o.admitted] }],
    graph: { nodes: 200, edges: 2000 },
  }
}

describe('scale goals', () => {
  it('met when each figure is within its target', () => {
    const g = scaleGoals(run({ versionRps: 600, farOn30: 11, admitted: 650, census: 0.04 }))
    assert.deepEqual(
      g.map((x) => [x.id, x.met]),
      [['lease-version-on', true], ['lease-census', true], ['far-limiter-paced', true], ['exactness-1000', true]],
    )
    assert.match(g[0].measured, /against public \/health/)
  })

  it('missed when one is over: throughput ratio, calls per request, far p50, admitted over the bound', () => {
    const g = scaleGoals(run({ versionRps: 400, farOn30: 13, admitted: 661, census: 0.06 }))
    assert.deepEqual(g.map((x) => x.met), [false, false, false, false])
  })

  it('exactness missed when any answer is a 5xx, even within the bound', () => {
    const r = run({ versionRps: 600, farOn30: 11, admitted: 650, census: 0.04 })
    r.exactness[0].statuses = { 200: 650, 429: 4347, 500: 3 }
    const g = scaleGoals(r).find((x) => x.id === 'exactness-1000')!
    assert.equal(g.met, false)
    assert.match(g.measured, /3 × 5xx/)
  })
})
