/// <reference types="node" />
/**
 * The load generator: runs in its OWN process (spawned by bench/lib/load.ts), never in the process that
 * hosts the worker, so that the two compete only for the machine, not for one event loop.
 *
 * Input: one LoadSpec JSON per stdin line. Output on stdout: `@measure-start` / `@measure-end` around the
 * measured window (the parent reads the server's CPU time at each), then `@result <LoadResult JSON>`.
 *  1. warm-up: autocannon for `warmupSeconds` (discarded) — JIT, connection setup, token-key caches;
 *  2. measurement: autocannon, fixed `connections` and `durationSeconds`, cycling through `requests`;
 *  3. latency probe: `probeCount` requests one at a time on one keep-alive connection, timed with
 *     process.hrtime in microseconds. autocannon's histogram has 1 ms resolution, too coarse to check a
 *     "≤ 1 ms overhead" goal; the probe is the unloaded service time at µs resolution.
 */
import http from 'node:http'
import { createRequire } from 'node:module'

export interface LoadRequest {
  method: string
  path: string
  headers: Record<string, string>
  body?: string
}

export interface LoadSpec {
  url: string
  connections: number
  durationSeconds: number
  warmupSeconds: number
  probeCount: number
  requests: LoadRequest[]
  /** open loop: at most this many requests per second over all connections (autocannon overallRate) */
  overallRate?: number
}

export interface LoadResult {
  rps: number
  total: number
  /** requests sent during the warm-up (not measured; counted for per-request D1 statements) */
  warmupTotal: number
  latencyMs: { p50: number; p90: number; p99: number; mean: number; max: number }
  statuses: Record<string, number>
  errors: number
  timeouts: number
  probe: { count: number; p50us: number; p90us: number; p99us: number; statuses: Record<string, number> }
}

interface AutocannonResult {
  start: Date | string
  finish: Date | string
  errors: number
  timeouts: number
  statusCodeStats: Record<string, { count: number }>
  latency: { p50: number; p90: number; p99: number; mean: number; max: number }
  requests: { total: number }
}
type Autocannon = (opts: Record<string, unknown>) => Promise<AutocannonResult>
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))
  return sorted[i]
}

async function run(spec: LoadSpec, seconds: number): Promise<AutocannonResult> {
  return autocannon({
    url: spec.url,
    connections: spec.connections,
    duration: seconds,
    requests: spec.requests.map((r) => ({ method: r.method, path: r.path, headers: r.headers, body: r.body })),
    timeout: 30,
    ...(spec.overallRate ? { overallRate: spec.overallRate } : {}),
  })
}

async function probe(spec: LoadSpec) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
  const base = new URL(spec.url)
  const times: number[] = []
  const statuses: Record<string, number> = {}
  for (let i = 0; i < spec.probeCount; i++) {
    const r = spec.requests[i % spec.requests.length]
    const t0 = process.hrtime.bigint()
    const status = await new Promise<number>((resolve, reject) => {
      const req = http.request(
        { host: base.hostname, port: base.port, method: r.method, path: r.path, headers: r.headers, agent },
        (res) => {
          res.resume()
          res.on('end', () => resolve(res.statusCode ?? 0))
          res.on('error', reject)
        },
      )
      req.on('error', reject)
      req.end(r.body)
    })
    times.push(Number(process.hrtime.bigint() - t0) / 1000)
    statuses[status] = (statuses[status] ?? 0) + 1
  }
  agent.destroy()
  times.sort((a, b) => a - b)
  return { count: times.length, p50us: percentile(times, 50), p90us: percentile(times, 90), p99us: percentile(times, 99), statuses }
}

/** One measurement: warm-up, measured window (between phase markers), probe. */
async function measure(spec: LoadSpec): Promise<LoadResult> {
  const warm = spec.warmupSeconds > 0 ? await run(spec, spec.warmupSeconds) : null
  // Phase markers: the parent samples the server's CPU time exactly around the measured window.
  process.stdout.write('@measure-start\n')
  const r = await run(spec, spec.durationSeconds)
  process.stdout.write('@measure-end\n')
  const seconds = (new Date(r.finish).getTime() - new Date(r.start).getTime()) / 1000
  const statuses: Record<string, number> = {}
  for (const [code, v] of Object.entries(r.statusCodeStats)) statuses[code] = v.count
  return {
    rps: r.requests.total / seconds,
    total: r.requests.total,
    warmupTotal: warm?.requests.total ?? 0,
    latencyMs: { p50: r.latency.p50, p90: r.latency.p90, p99: r.latency.p99, mean: r.latency.mean, max: r.latency.max },
    statuses,
    errors: r.errors,
    timeouts: r.timeouts,
    probe: spec.probeCount > 0 ? await probe(spec) : { count: 0, p50us: NaN, p90us: NaN, p99us: NaN, statuses: {} },
  }
}

/**
 * The process stays up for the whole run (starting Node with the TypeScript loader costs about a second
 * on a busy machine): one LoadSpec per stdin line in, one `@result <json>` (or `@error <text>`) line out.
 */
async function main() {
  let buf = ''
  let chain = Promise.resolve()
  process.stdin.setEncoding('utf8')
  process.stdin.on('data', (d: string) => {
    buf += d
    let nl: number
    while ((nl = buf.indexOf('\n')) !== -1) {
      const line = buf.slice(0, nl)
      buf = buf.slice(nl + 1)
      if (!line.trim()) continue
      chain = chain.then(async () => {
        try {
          const result = await measure(JSON.parse(line) as LoadSpec)
          process.stdout.write(`@result ${JSON.stringify(result)}\n`)
        } catch (e) {
          process.stdout.write(`@error ${JSON.stringify(String((e as Error)?.stack ?? e))}\n`)
        }
      })
    }
  })
  process.stdin.on('end', () => void chain.then(() => process.exit(0)))
}

main().catch((e) => {
  process.stderr.write(String(e?.stack ?? e) + '\n')
  process.exit(1)
})
