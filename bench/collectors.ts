/// <reference types="node" />
/**
 * Enterprise collection benchmark (issue 26), three questions, each answered as a ratio measured in one run:
 *
 *  1. Ingest pace: the same SharpHound data (bench/lib/sharphound-gen.ts) through a client job
 *     (jobs/start → POST /api/v2/ingest per file → jobs/end) and through a file-upload job
 *     (file-upload/start → POST file-upload/{id} per file → end), alternating which goes first per round.
 *     Elements per second from the first post to the end's answer (both ends commit in one transaction).
 *     Goal: client ≥ 0.8× upload.
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
 *   npm run bench:collectors -- [--users 2000] [--rounds 3] [--clients 1000] [--poll-seconds 5] [--seconds 20]
 */
import { mkdtempSync, rmSync } from 'node:fs'
import http from 'node:http'
import os from 'node:os'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { EdgeHoundClient, EdgeHoundError } from '../src/client'
import { BenchApi } from './lib/api'
import { benchIp, createTokens, login, pool, prepared, type TokenCred } from './lib/credentials'
import { LoadGenerator, type LoadRequest } from './lib/load'
import { BENCH_DOMAIN, generateSharpHound, sharpHoundFiles } from './lib/sharphound-gen'
import { fmt, summarize } from './lib/stats'
import { adminCredentials, buildBundle, startMiniflare } from './lib/worker-host'

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

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
      users: { type: 'string', default: '2000' },
      rounds: { type: 'string', default: '3' },
      clients: { type: 'string', default: '1000' },
      'poll-seconds': { type: 'string', default: '5' },
      seconds: { type: 'string', default: '20' },
      probes: { type: 'string', default: '400' },
    },
  })
  const users = Number(values.users)
  const rounds = Number(values.rounds)
  const clientCount = Number(values.clients)
  const pollSeconds = Number(values['poll-seconds'])
  const loadSeconds = Number(values.seconds)
  const probes = Number(values.probes)
  const log = (m: string) => console.error(`[collectors] ${m}`)

  const files = [...sharpHoundFiles(generateSharpHound(users, 13), 2000)]
  const bytes = files.reduce((n, [, s]) => n + s.length, 0)
  log(`${users} users: ${files.length} files, ${(bytes / 1048576).toFixed(1)} MiB`)

  const dir = mkdtempSync(path.join(os.tmpdir(), 'edgehound-collectors-'))
  const bundle = await buildBundle(path.join(dir, 'bundle'))
  const w = await startMiniflare({ bundle, persistDir: path.join(dir, 'state'), migrate: true })
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
    const viaUpload = async () => {
      const job = (await api.ok<{ data: { id: number } }>('POST', '/api/v2/file-upload/start')).body!.data.id
      const t0 = performance.now()
      for (const [name, text] of files) {
        const r = await api.timed('POST', `/api/v2/file-upload/${job}`, text, 'application/json')
        if (r.status !== 202) throw new Error(`upload ${name}: ${r.status} ${r.text.slice(0, 300)}`)
      }
      const ended = (await api.ok<{ data: { nodes_received: number; edges_received: number } }>('POST', `/api/v2/file-upload/${job}/end`)).body!.data
      const seconds = (performance.now() - t0) / 1000
      return { elements: ended.nodes_received + ended.edges_received, seconds }
    }
    const viaClient = async () => {
      await retry429(() => admin.call('POST', `/api/v2/clients/${collector.id}/jobs`, {}))
      const available = await cc.call<{ data: { id: number }[] }>('GET', '/api/v2/jobs/available')
      await cc.call('POST', '/api/v2/jobs/start', { id: available.data[0].id })
      const t0 = performance.now()
      let elements = 0
      for (const [name, text] of files) {
        const res = await cc.raw('POST', '/api/v2/ingest', new TextEncoder().encode(text), { contentType: 'application/json' })
        if (res.status !== 202) throw new Error(`ingest ${name}: ${res.status} ${(await res.text()).slice(0, 300)}`)
        const a = (await res.json()) as { data: { nodes: number; edges: number } }
        elements += a.data.nodes + a.data.edges
      }
      await cc.call('POST', '/api/v2/jobs/end', { status: 'complete', message: 'bench' })
      return { elements, seconds: (performance.now() - t0) / 1000 }
    }
    const pace: { upload: number[]; client: number[]; elements: { upload: number; client: number } } = { upload: [], client: [], elements: { upload: 0, client: 0 } }
    for (let r = 0; r < rounds; r++) {
      const order = r % 2 === 0 ? (['upload', 'client'] as const) : (['client', 'upload'] as const)
      for (const way of order) {
        const m = way === 'upload' ? await viaUpload() : await viaClient()
        await settle()
        pace[way].push(m.elements / m.seconds)
        pace.elements[way] = m.elements
        log(`round ${r + 1} ${way}: ${m.elements} elements in ${m.seconds.toFixed(2)} s = ${Math.round(m.elements / m.seconds)} elements/s`)
      }
    }
    const median = (a: number[]) => summarize(a).p50
    const paceRatio = median(pace.client) / median(pace.upload)
    log(`ingest pace: client ${Math.round(median(pace.client))} / upload ${Math.round(median(pace.upload))} elements/s (medians) = ${paceRatio.toFixed(2)}×`)

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
          ingest: {
            elements: pace.elements,
            uploadElementsPerSecond: pace.upload.map(Math.round),
            clientElementsPerSecond: pace.client.map(Math.round),
            ratio: +paceRatio.toFixed(2),
          },
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
