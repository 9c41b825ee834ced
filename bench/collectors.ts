/// <reference types="node" />
/**
 * Enterprise collection benchmark (issue 26), three questions, each answered as a ratio measured in one run:
 *
 *  1. Ingest pace: the same SharpHound data (bench/lib/sharphound-gen.ts) through a client job
 *     (jobs/start → POST /api/v2/ingest per file → jobs/end) and through file-upload jobs
 *     (file-upload/start → POST file-upload/{id} per file → end), one of each way per round, the order
 *     rotating, after `--warmup` rounds that are not counted (the first ingest creates the graph; every
 *     measured one re-ingests the same data). The client writes only its environment, so the goal's
 *     comparison is a file upload by a user restricted to that environment (the same access checks in the
 *     commit SQL); an administrator's upload (all environments: none of those checks) is reported beside it.
 *     Elements per second from the first post to the end's answer: a file upload commits each file in its
 *     own POST, a client job stages its posts and commits them all in the end's one transaction, so only
 *     the whole span compares. The answer is the MEDIAN of the per-round ratios (ways of the same round saw
 *     the same machine load), with each phase's wall time, workerd CPU time (/proc: the runtime with D1's
 *     SQLite) and D1 statements, so that a noisy wall clock can be told from work. Goal: client ≥ 0.8×
 *     upload. `--only ingest` stops after this part; `--trace` adds each phase's D1 wall time by statement
 *     (bench/worker.ts /__bench/d1-trace).
 *  2. An idle poll: `GET /api/v2/jobs/available` by a client with nothing to do against a signed `GET
 *     /api/version` by a user token, interleaved one at a time on one keep-alive connection (µs timing),
 *     and the server's CPU per request at the same offered rate. Goal: poll ≤ 1× the static GET. Idle polls
 *     are answered from the isolate's memory (src/clients/poll-cache.ts); the store path (a client's first
 *     poll, or every poll with CLIENT_POLL_FRESH_MS = 0) is measured too.
 *  3. Many clients: `--clients` registered clients (default 1,000) each polling every `--poll-seconds`
 *     (default 5), an open-loop load of clients/poll-seconds requests per second from a separate process;
 *     the p50 of a user's signed read and of one more client's poll, measured one at a time, without and
 *     with that load. Goal: neither p50 rises more than 2×.
 *
 *   npm run bench:collectors -- [--users 6000] [--rounds 7] [--warmup 1] [--only ingest] [--trace]
 *                               [--clients 1000] [--poll-seconds 5] [--seconds 20]
 *
 * `--users` sizes the data: 6,000 users (the default) ≈ 99,000 elements, 12 MiB in 8 files of at most 2,000
 * objects, several seconds per ingest; 2,000 ≈ 33,000 elements. A client job takes at most 200,000 elements
 * (MAX_ELEMENTS), so at most ≈ 12,000 users.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import http from 'node:http'
import os from 'node:os'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { EdgeHoundClient, EdgeHoundError } from '../src/client'
import { BenchApi, d1Census, d1Delta } from './lib/api'
import { benchIp, createTokens, login, pool, prepared, type TokenCred } from './lib/credentials'
import { LoadGenerator, type LoadRequest } from './lib/load'
import { BENCH_DOMAIN, generateSharpHound, sharpHoundFiles } from './lib/sharphound-gen'
import { cpuSeconds } from './lib/proc'
import { fmt, summarize } from './lib/stats'
import { adminCredentials, buildBundle, startMiniflare } from './lib/worker-host'

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/**
 * upload: a file upload by a user restricted to the client's environment (the same environment access rules
 * as the client's data: src/graph/ingest.store.ts SQL.restricted), the goal's comparison; uploadAll: by an
 * administrator (all environments: no access checks, placeholders written), reported beside it.
 */
const WAYS = ['upload', 'client', 'uploadAll'] as const
type Way = (typeof WAYS)[number]
interface Phase {
  seconds: number
  /** workerd's CPU (user + system, /proc), D1's SQLite included: it runs in the same process */
  cpuSeconds: number
  statements: number
  bySql: Record<string, number>
  d1Ms: Record<string, number>
}
/** One ingest of the data: the posts (from the first to the last answer) and the end (its answer). */
interface WayRun {
  elements: number
  posts: Phase
  end: Phase
}
const pace = (m: WayRun) => m.elements / (m.posts.seconds + m.end.seconds)

interface Client {
  id: string
  token: { id: string; key: string }
}

/** A call that the service may answer 429 during setup: waits its Retry-After and tries again. */
async function retry429<T>(fn: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await fn()
    } catch (e) {
      if (!(e instanceof EdgeHoundError) || e.status !== 429 || attempt > 60) throw e
      await sleep(1000 * Math.max(0.2, Math.min(5, Number(e.response.headers.get('retry-after') ?? '1'))))
    }
  }
}

/**
 * A request sent again once when the keep-alive connection it went out on was closed before any answer
 * (undici's "fetch failed" with ECONNRESET, EPIPE or "other side closed": the runtime had closed the idle
 * connection). Were the first copy
 * received after all, the job would count its elements twice: the rounds check that every ingest reports
 * the same number of elements.
 */
async function onceMore<T>(send: () => Promise<T>): Promise<T> {
  try {
    return await send()
  } catch (e) {
    if (!['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET'].includes((e as { cause?: { code?: string } }).cause?.code ?? '')) throw e
    return send()
  }
}

/** One request at a time on one keep-alive connection, µs timing (as bench/lib/load-child.ts's probe). */
class Prober {
  private agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
  constructor(private base: URL) {}
  /** One timed request; a keep-alive connection the server reset as it was reused is tried again once. */
  async once(r: LoadRequest): Promise<{ us: number; status: number }> {
    try {
      return await this.attempt(r)
    } catch (e) {
      if ((e as { code?: string }).code !== 'ECONNRESET') throw e
      return this.attempt(r)
    }
  }
  private async attempt(r: LoadRequest): Promise<{ us: number; status: number }> {
    const t0 = process.hrtime.bigint()
    const status = await new Promise<number>((resolve, reject) => {
      const req = http.request({ host: this.base.hostname, port: this.base.port, method: r.method, path: r.path, headers: r.headers, agent: this.agent }, (res) => {
        res.resume()
        res.on('end', () => resolve(res.statusCode ?? 0))
        res.on('error', reject)
      })
      req.on('error', reject)
      req.end(r.body)
    })
    return { us: Number(process.hrtime.bigint() - t0) / 1000, status }
  }
  /** `n` rounds, each sending one request of every series in turn; per-series µs, non-2xx counted */
  async interleaved(series: LoadRequest[][], n: number): Promise<{ us: number[]; bad: number }[]> {
    const out = series.map(() => ({ us: [] as number[], bad: 0 }))
    for (let i = 0; i < n; i++) {
      for (let s = 0; s < series.length; s++) {
        const r = await this.once(series[s][i % series[s].length])
        out[s].us.push(r.us)
        if (r.status < 200 || r.status > 299) out[s].bad++
      }
    }
    return out
  }
  close() {
    this.agent.destroy()
  }
}

async function main() {
  const { values } = parseArgs({
    options: {
      users: { type: 'string', default: '6000' },
      rounds: { type: 'string', default: '7' },
      warmup: { type: 'string', default: '1' },
      only: { type: 'string' },
      trace: { type: 'boolean', default: false },
      clients: { type: 'string', default: '1000' },
      'poll-seconds': { type: 'string', default: '5' },
      seconds: { type: 'string', default: '20' },
      probes: { type: 'string', default: '400' },
    },
  })
  const users = Number(values.users)
  const rounds = Number(values.rounds)
  const warmup = Number(values.warmup)
  if (values.only !== undefined && values.only !== 'ingest') throw new Error('--only takes "ingest"')
  const onlyIngest = values.only === 'ingest'
  const clientCount = Number(values.clients)
  const pollSeconds = Number(values['poll-seconds'])
  const loadSeconds = Number(values.seconds)
  const probes = Number(values.probes)
  const log = (m: string) => console.error(`[collectors] ${m}`)

  const files = [...sharpHoundFiles(generateSharpHound(users, 13), 2000)]
  const bytes = files.reduce((n, [, s]) => n + s.length, 0)
  log(`${users} users: ${files.length} files, ${(bytes / 1048576).toFixed(1)} MiB; load average ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`)

  const dir = mkdtempSync(path.join(os.tmpdir(), 'edgehound-collectors-'))
  const bundle = await buildBundle(path.join(dir, 'bundle'))
  // --trace: every D1 call's wall time (bench/worker.ts /__bench/d1-trace), summed by statement per phase
  const trace = { open: new Map<number, string>(), ms: {} as Record<string, number>, partial: '' }
  const onStdout = (d: Buffer) => {
    const lines = (trace.partial + d.toString('utf8')).split('\n')
    trace.partial = lines.pop() ?? ''
    for (const line of lines) {
      const start = /d1-trace start #(\d+) (.*)$/.exec(line)
      if (start) trace.open.set(Number(start[1]), start[2].replace(/^(batch of \d+): (.{0,60}).*$/, '$1: $2').replace(/^(\w+: .{0,70}).*$/, '$1'))
      const end = /d1-trace end #(\d+) (\d+) ms/.exec(line)
      if (end) {
        const what = trace.open.get(Number(end[1])) ?? '?'
        trace.open.delete(Number(end[1]))
        trace.ms[what] = (trace.ms[what] ?? 0) + Number(end[2])
      }
    }
  }
  const w = await startMiniflare({ bundle, persistDir: path.join(dir, 'state'), migrate: true, onStdout: values.trace ? onStdout : undefined })
  const load = new LoadGenerator()
  try {
    const { username, password } = adminCredentials()
    const jwt = await login(w.url, username, password, benchIp(11, 172))
    const admin = new EdgeHoundClient({ baseUrl: w.url, credentials: { kind: 'bearer', jwt } })
    const userTokens = await createTokens(w.url, jwt, 20, 'collectors')
    const api = new BenchApi(w.url, userTokens.slice(0, 2))
    const newClient = (name: string, environment = BENCH_DOMAIN) =>
      retry429(() => admin.call<{ data: Client }>('POST', '/api/v2/clients', { name, type: 'sharphound', environment_id: environment })).then((r) => r.data)
    const settle = async () => {
      for (const until = Date.now() + 10 * 60_000; Date.now() < until; ) {
        // a keep-alive connection the server closed as it was reused ("other side closed") is tried again
        const runs = await api.ok<{ data: { status: string }[] }>('GET', '/api/v2/analysis').catch(() => sleep(500).then(() => api.ok<{ data: { status: string }[] }>('GET', '/api/v2/analysis')))
        if (!runs.body!.data.some((r) => r.status === 'pending' || r.status === 'running')) return
        await sleep(250)
      }
      throw new Error('analysis did not settle within 10 minutes')
    }

    // 1. ingest pace
    const collector = await newClient('bench-collector')
    const cc = new EdgeHoundClient({ baseUrl: w.url, credentials: { kind: 'token', tokenId: collector.token.id, tokenKey: collector.token.key } })
    const encoded = files.map(([name, text]) => [name, text, new TextEncoder().encode(text)] as const)
    /** the clock, the workerd CPU and the D1 census at one instant */
    const mark = async () => {
      const m = { t: performance.now(), cpu: cpuSeconds(w.pids()), census: (await d1Census(w.url)) ?? (await d1Census(w.url)), d1Ms: trace.ms }
      trace.ms = {}
      return m
    }
    const phase = (a: Awaited<ReturnType<typeof mark>>, b: Awaited<ReturnType<typeof mark>>) => ({
      seconds: (b.t - a.t) / 1000,
      cpuSeconds: b.cpu - a.cpu,
      statements: b.census && a.census ? b.census.statements - a.census.statements : NaN,
      bySql: d1Delta(a.census, b.census),
      // D1 wall time by call in the phase (--trace)
      d1Ms: b.d1Ms,
    })
    // a user of the client's one environment, as the client is (docs/permissions.md)
    const restrictedUser = await retry429(() =>
      admin.createUser({ principal_name: 'bench-uploader', roles: ['User'], secret: 'correct-horse-battery', all_environments: false, environment_access: [BENCH_DOMAIN] }),
    )
    const restrictedToken = await retry429(() => admin.createToken('bench-uploader', restrictedUser.data.id))
    const restricted = new BenchApi(w.url, [{ tokenId: restrictedToken.data.id, tokenKey: restrictedToken.data.key }])
    const viaUpload = async (api: BenchApi): Promise<WayRun> => {
      const job = (await api.ok<{ data: { id: number } }>('POST', '/api/v2/file-upload/start')).body!.data.id
      const m0 = await mark()
      for (const [name, text] of files) {
        const r = await onceMore(() => api.timed('POST', `/api/v2/file-upload/${job}`, text, 'application/json'))
        if (r.status !== 202) throw new Error(`upload ${name}: ${r.status} ${r.text.slice(0, 300)}`)
      }
      const m1 = await mark()
      const ended = (await api.ok<{ data: { nodes_received: number; edges_received: number } }>('POST', `/api/v2/file-upload/${job}/end`)).body!.data
      const m2 = await mark()
      return { elements: ended.nodes_received + ended.edges_received, posts: phase(m0, m1), end: phase(m1, m2) }
    }
    const viaClient = async (): Promise<WayRun> => {
      await retry429(() => admin.call('POST', `/api/v2/clients/${collector.id}/jobs`, {}))
      const available = await cc.call<{ data: { id: number }[] }>('GET', '/api/v2/jobs/available')
      await cc.call('POST', '/api/v2/jobs/start', { id: available.data[0].id })
      let elements = 0
      const m0 = await mark()
      for (const [name, , body] of encoded) {
        const res = await onceMore(() => cc.raw('POST', '/api/v2/ingest', body, { contentType: 'application/json' }))
        if (res.status !== 202) throw new Error(`ingest ${name}: ${res.status} ${(await res.text()).slice(0, 300)}`)
        const a = (await res.json()) as { data: { nodes: number; edges: number } }
        elements += a.data.nodes + a.data.edges
      }
      const m1 = await mark()
      await cc.call('POST', '/api/v2/jobs/end', { status: 'complete', message: 'bench' })
      const m2 = await mark()
      return { elements, posts: phase(m0, m1), end: phase(m1, m2) }
    }
    if (values.trace) await fetch(`${w.url}/__bench/d1-trace?on=1`, { method: 'POST' })
    const showTrace = (m: WayRun) => {
      for (const [ph, p] of [['posts', m.posts], ['end', m.end]] as const)
        for (const [k, v] of Object.entries(p.d1Ms).sort((a, b) => b[1] - a[1]).slice(0, 8)) log(`    ${ph} D1 ${v} ms  ${k}`)
    }
    const runWay = (way: Way) => (way === 'upload' ? viaUpload(restricted) : way === 'uploadAll' ? viaUpload(api) : viaClient())
    // Warm-up rounds (not counted): the first ingest of the data creates every node and edge, the later ones
    // find them unchanged; every measured round then re-ingests the same data on both ways (the steady state).
    let expected = NaN
    for (let r = 0; r < warmup; r++) {
      for (const way of WAYS) {
        const m = await runWay(way)
        expected = m.elements
        await settle()
        log(`warm-up ${r + 1} ${way}: ${m.elements} elements in ${fmt(m.posts.seconds + m.end.seconds, 2)} s`)
        if (values.trace) showTrace(m)
      }
    }
    const rows: Record<Way, WayRun>[] = []
    for (let r = 0; r < rounds; r++) {
      // each way first, second and third in turn; the client job and its like-for-like upload alternate order
      const order = [['upload', 'client', 'uploadAll'], ['client', 'upload', 'uploadAll'], ['uploadAll', 'upload', 'client'], ['uploadAll', 'client', 'upload'], ['upload', 'uploadAll', 'client'], ['client', 'uploadAll', 'upload']][r % 6] as Way[]
      const row: Partial<Record<Way, WayRun>> = {}
      for (const way of order) {
        const m = await runWay(way)
        await settle()
        row[way] = m
        if (Number.isNaN(expected)) expected = m.elements
        if (m.elements !== expected) throw new Error(`round ${r + 1} ${way}: ${m.elements} elements, the warm-up had ${expected}`)
        const s = m.posts.seconds + m.end.seconds
        log(
          `round ${r + 1} ${way}: ${m.elements} elements in ${fmt(s, 2)} s (posts ${fmt(m.posts.seconds, 2)} s + end ${fmt(m.end.seconds, 2)} s) = ` +
            `${Math.round(m.elements / s)} elements/s; workerd CPU ${fmt(m.posts.cpuSeconds, 2)} + ${fmt(m.end.cpuSeconds, 2)} s; D1 statements ${m.posts.statements} + ${m.end.statements}`,
        )
        if (values.trace) showTrace(m)
      }
      rows.push(row as Record<Way, WayRun>)
      log(
        `round ${r + 1}: client ÷ upload (same environment) = ${(pace(row.client!) / pace(row.upload!)).toFixed(2)}×, ` +
          `client ÷ upload (all environments) = ${(pace(row.client!) / pace(row.uploadAll!)).toFixed(2)}× (load average ${os.loadavg()[0].toFixed(1)})`,
      )
    }
    const ratios = rows.map((x) => pace(x.client) / pace(x.upload))
    const ratiosAll = rows.map((x) => pace(x.client) / pace(x.uploadAll))
    const median = (a: number[]) => summarize(a).p50
    const paceRatio = median(ratios)
    const summaryOf = (way: Way) => {
      const runs = rows.map((x) => x[way])
      const elements = runs[0].elements
      return {
        elements,
        elementsPerSecond: Math.round(median(runs.map(pace))),
        postsSeconds: +median(runs.map((m) => m.posts.seconds)).toFixed(2),
        endSeconds: +median(runs.map((m) => m.end.seconds)).toFixed(2),
        cpuUsPerElement: {
          posts: Math.round((median(runs.map((m) => m.posts.cpuSeconds)) * 1e6) / elements),
          end: Math.round((median(runs.map((m) => m.end.cpuSeconds)) * 1e6) / elements),
          total: Math.round((median(runs.map((m) => m.posts.cpuSeconds + m.end.cpuSeconds)) * 1e6) / elements),
        },
        // a census the worker did not answer is NaN: left out
        d1Statements: {
          posts: median(runs.map((m) => m.posts.statements).filter(Number.isFinite)),
          end: median(runs.map((m) => m.end.statements).filter(Number.isFinite)),
        },
        // the last round's statements by SQL (the first 90 characters), largest first
        d1BySql: Object.fromEntries(
          [
            ...Object.entries(runs[runs.length - 1].posts.bySql).map(([k, v]) => [`posts: ${k}`, v] as const),
            ...Object.entries(runs[runs.length - 1].end.bySql).map(([k, v]) => [`end: ${k}`, v] as const),
          ]
            .sort((a, b) => b[1] - a[1])
            .slice(0, 25),
        ),
      }
    }
    const ingest = { upload: summaryOf('upload'), client: summaryOf('client'), uploadAll: summaryOf('uploadAll') }
    const cpuRatio = ingest.client.cpuUsPerElement.total / ingest.upload.cpuUsPerElement.total
    const cpuRatioAll = ingest.client.cpuUsPerElement.total / ingest.uploadAll.cpuUsPerElement.total
    const paceRatioAll = median(ratiosAll)
    log(`ingest pace: client ÷ upload (same environment) per round ${ratios.map((x) => x.toFixed(2)).join(', ')}: median ${paceRatio.toFixed(2)}× (goal ≥ 0.8×)`)
    log(`             client ÷ upload (all environments) per round ${ratiosAll.map((x) => x.toFixed(2)).join(', ')}: median ${paceRatioAll.toFixed(2)}×`)
    const cpuText = (w: Way) => `${ingest[w].cpuUsPerElement.total} µs (posts ${ingest[w].cpuUsPerElement.posts} + end ${ingest[w].cpuUsPerElement.end})`
    log(`workerd CPU per element (medians): client ${cpuText('client')}, upload (same environment) ${cpuText('upload')}, upload (all) ${cpuText('uploadAll')}: ${cpuRatio.toFixed(2)}×, ${cpuRatioAll.toFixed(2)}×`)
    const ingestJson = {
      ...ingest,
      ratios: ratios.map((x) => +x.toFixed(2)),
      ratio: +paceRatio.toFixed(2),
      cpuRatio: +cpuRatio.toFixed(2),
      ratiosAllEnvironments: ratiosAll.map((x) => +x.toFixed(2)),
      ratioAllEnvironments: +paceRatioAll.toFixed(2),
      cpuRatioAllEnvironments: +cpuRatioAll.toFixed(2),
    }
    if (onlyIngest) {
      console.log(JSON.stringify({ users, rounds, warmup, loadAverage: os.loadavg().map((x) => +x.toFixed(2)), ingest: ingestJson }, null, 2))
      return
    }

    // 2. an idle poll against a signed static GET
    const idle = await pool(Array.from({ length: 20 }, (_, i) => i), 4, (i) => newClient(`bench-idle-${i}`))
    const asToken = (c: Client) => ({ kind: 'token' as const, tokenId: c.token.id, tokenKey: c.token.key })
    const polls = await Promise.all(idle.map((c) => prepared(w.url, asToken(c), 'GET', '/api/v2/jobs/available')))
    const statics = await Promise.all(userTokens.map((t: TokenCred) => prepared(w.url, { kind: 'token', ...t }, 'GET', '/api/version')))
    const prober = new Prober(new URL(w.url))
    await prober.interleaved([polls, statics], 100) // warm-up: key caches, JIT
    const [poll, stat] = await prober.interleaved([polls, statics], probes)
    const pollS = summarize(poll.us)
    const statS = summarize(stat.us)
    if (poll.bad || stat.bad) throw new Error(`idle probe: ${poll.bad} polls and ${stat.bad} static GETs failed`)
    log(`idle poll p50 ${fmt(pollS.p50 / 1000, 2)} ms, signed GET /api/version p50 ${fmt(statS.p50 / 1000, 2)} ms = ${(pollS.p50 / statS.p50).toFixed(2)}×`)
    // the server's CPU per request at the same offered rate (ABAB), read around each window
    const cpuPer = { poll: [] as number[], static: [] as number[] }
    for (let r = 0; r < 2; r++) {
      for (const [way, requests] of [['poll', polls], ['static', statics]] as const) {
        const m = await load.run({ url: w.url, connections: 8, durationSeconds: 5, warmupSeconds: 1, probeCount: 0, requests, overallRate: 300 }, () => w.pids())
        const okCount = Object.entries(m.statuses).filter(([s]) => s.startsWith('2')).reduce((n, [, v]) => n + v, 0)
        if (okCount !== m.total) throw new Error(`cpu window ${way}: statuses ${JSON.stringify(m.statuses)}`)
        cpuPer[way].push((m.cpu!.serverSeconds * 1e6) / m.total)
      }
    }
    const cpuPoll = summarize(cpuPer.poll).mean
    const cpuStatic = summarize(cpuPer.static).mean
    log(`server CPU per request at 300/s: idle poll ${Math.round(cpuPoll)} µs, signed GET /api/version ${Math.round(cpuStatic)} µs = ${(cpuPoll / cpuStatic).toFixed(2)}×`)

    // 3. many clients polling
    log(`registering ${clientCount} clients`)
    const many = await pool(Array.from({ length: clientCount }, (_, i) => i), 4, (i) => newClient(`bench-fleet-${i}`))
    const fleet = await Promise.all(many.map((c) => prepared(w.url, asToken(c), 'GET', '/api/v2/jobs/available')))
    const reads = await Promise.all(userTokens.map((t: TokenCred) => prepared(w.url, { kind: 'token', ...t }, 'GET', '/api/v2/available-domains')))
    // the store path: each fleet client's first poll finds no memory (what CLIENT_POLL_FRESH_MS = 0 costs every time)
    const firstPolls = fleet.slice(0, Math.min(probes, fleet.length))
    const [miss, stat2] = await prober.interleaved([firstPolls, statics], firstPolls.length)
    const missS = summarize(miss.us)
    const stat2S = summarize(stat2.us)
    log(`a poll read from the store (a client's first) p50 ${fmt(missS.p50 / 1000, 2)} ms, signed GET /api/version p50 ${fmt(stat2S.p50 / 1000, 2)} ms = ${(missS.p50 / stat2S.p50).toFixed(2)}×`)
    const [pollIdle, readIdle] = await prober.interleaved([polls, reads], probes)
    const rate = clientCount / pollSeconds
    const running = load.run({ url: w.url, connections: 32, durationSeconds: loadSeconds, warmupSeconds: 0, probeCount: 0, requests: fleet, overallRate: rate }, () => w.pids())
    await sleep(2000)
    const [pollBusy, readBusy] = await prober.interleaved([polls, reads], probes)
    const fleetResult = await running
    prober.close()
    const ok = Object.entries(fleetResult.statuses).filter(([s]) => s.startsWith('2')).reduce((n, [, v]) => n + v, 0)
    const pIdle = summarize(pollIdle.us).p50
    const pBusy = summarize(pollBusy.us).p50
    const rIdle = summarize(readIdle.us).p50
    const rBusy = summarize(readBusy.us).p50
    log(`${clientCount} clients every ${pollSeconds} s: ${fleetResult.rps.toFixed(0)} polls/s offered ${rate}/s, statuses ${JSON.stringify(fleetResult.statuses)}, fleet p50 ${fleetResult.latencyMs.p50} ms`)
    log(`a client's poll p50 ${fmt(pIdle / 1000, 2)} → ${fmt(pBusy / 1000, 2)} ms (${(pBusy / pIdle).toFixed(2)}×); a user's GET available-domains p50 ${fmt(rIdle / 1000, 2)} → ${fmt(rBusy / 1000, 2)} ms (${(rBusy / rIdle).toFixed(2)}×)`)

    console.log(
      JSON.stringify(
        {
          users,
          rounds,
          warmup,
          loadAverage: os.loadavg().map((x) => +x.toFixed(2)),
          ingest: ingestJson,
          idlePoll: {
            pollP50Ms: +(pollS.p50 / 1000).toFixed(3),
            staticGetP50Ms: +(statS.p50 / 1000).toFixed(3),
            ratio: +(pollS.p50 / statS.p50).toFixed(2),
            serverCpuUsPerRequest: { poll: Math.round(cpuPoll), static: Math.round(cpuStatic), ratio: +(cpuPoll / cpuStatic).toFixed(2) },
            storePath: { pollP50Ms: +(missS.p50 / 1000).toFixed(3), staticGetP50Ms: +(stat2S.p50 / 1000).toFixed(3), ratio: +(missS.p50 / stat2S.p50).toFixed(2) },
          },
          fleet: {
            clients: clientCount,
            pollSeconds,
            offeredPerSecond: rate,
            achievedPerSecond: +fleetResult.rps.toFixed(1),
            ok,
            statuses: fleetResult.statuses,
            serverCpuSeconds: fleetResult.cpu ? +fleetResult.cpu.serverSeconds.toFixed(1) : null,
            pollP50Ms: { idle: +(pIdle / 1000).toFixed(3), loaded: +(pBusy / 1000).toFixed(3), ratio: +(pBusy / pIdle).toFixed(2) },
            readP50Ms: { idle: +(rIdle / 1000).toFixed(3), loaded: +(rBusy / 1000).toFixed(3), ratio: +(rBusy / rIdle).toFixed(2) },
          },
        },
        null,
        2,
      ),
    )
  } finally {
    await load.close()
    await w.dispose()
    rmSync(dir, { recursive: true, force: true })
  }
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})
