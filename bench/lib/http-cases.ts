/// <reference types="node" />
/**
 * The HTTP-path cases, all measured in one run against one worker, each reported as a ratio to the bare
 * route measured in the same run. With several rounds every case (the bare route included) is measured
 * once per round, interleaved, and the rounds are combined.
 */
import { randomBytes } from 'node:crypto'
import { benchIp, createSessions, createTokens, login, prepared, type TokenCred } from './credentials'
import { d1Census, d1Delta } from './api'
import { captureProfiles, loadSourceMap, type ProfileSummary } from './inspector'
import { startMiniflare } from './worker-host'
import { LoadGenerator, type CpuUse, type LoadRequest, type MeasuredLoad } from './load'

export interface HttpOptions {
  url: string
  username: string
  password: string
  connections: number
  durationSeconds: number
  warmupSeconds: number
  probeCount: number
  /** tokens (and sessions) per throughput case */
  poolSize: number
  /** only these case ids (default: all) */
  only?: string[]
  /** processes serving the requests, for CPU per request */
  serverPids?: () => number[]
  /** every case is measured once per round (interleaved); results are combined over the rounds */
  rounds: number
  log: (msg: string) => void
}

export interface CaseResult {
  id: string
  title: string
  /** false when the endpoint does not exist yet (404 "no such endpoint" / 405) */
  available: boolean
  /** set when the case ran but answered something other than expected */
  error?: string
  note?: string
  expected: number[]
  load?: MeasuredLoad
  /** server CPU during the measured window: % of one core, and µs per request */
  serverCpuPct?: number
  serverCpuUsPerRequest?: number
  loadCpuPct?: number
  /** D1 statements per request (warm-up, measurement and probe together) */
  d1PerRequest?: number
  /** the statements behind it, by SQL (first 90 characters), most frequent first */
  d1BySql?: [string, number][]
  /** share of responses with an expected status */
  expectedShare?: number
  rpsRatio?: number
  p50Ratio?: number
}

export interface HttpRun {
  cases: CaseResult[]
  bare: { rps: number; p50ms: number; probeP50us: number }
  /** p50 (probe) of the signed no-storage route minus the no-auth pipeline route, in ms */
  authOverheadP50ms?: number
}

interface CaseDef {
  id: string
  title: string
  expected: number[]
  note?: string
  /** statuses that prove the harness itself is wrong (bad credentials), not the service */
  harnessBroken?: number[]
  requests: () => Promise<LoadRequest[]>
}

/**
 * Client IPs for the per-IP cases. Few enough that the warm-up creates every IP's limiter object (creating
 * a SQLite-backed object per request would measure object creation, a local-storage artefact), many
 * enough that each IP stays under 10/s until ~2,500 req/s.
 */
const IPS = 256

/** ~1 KB graph extension (spec: PUT /api/v2/extensions) used for the write case. */
export function extensionPayload(): string {
  const ns = 'BENCH'
  const doc = {
    schema: { name: 'bench_extension', display_name: 'Benchmark extension', version: '1.0.0', namespace: ns },
    node_kinds: [
      { name: `${ns}_Server`, display_name: 'Bench server', description: 'A server node kind used by the benchmark write case.', is_display_kind: true, icon: 'server', color: '#3366CC' },
      { name: `${ns}_Account`, display_name: 'Bench account', description: 'An account node kind used by the benchmark write case.', is_display_kind: true, icon: 'user', color: '#CC6633' },
      { name: `${ns}_Tenant`, display_name: 'Bench tenant', description: 'The environment node kind of the benchmark extension.', is_display_kind: true, icon: 'building', color: '#339966' },
    ],
    relationship_kinds: [
      { name: `${ns}_AdminOf`, description: 'The account administers the server.', is_traversable: true },
      { name: `${ns}_Contains`, description: 'The tenant contains the object.', is_traversable: true },
    ],
    environments: [{ environment_kind: `${ns}_Tenant`, source_kind: 'BenchSource', principal_kinds: [`${ns}_Account`] }],
    relationship_findings: [],
  }
  let text = JSON.stringify(doc)
  // pad the description of the first kind to land on 1 KB exactly
  const pad = 1024 - text.length
  if (pad > 0) {
    doc.node_kinds[0].description += ' ' + 'x'.repeat(pad - 1)
    text = JSON.stringify(doc)
  }
  return text
}

async function probeOnce(url: string, r: LoadRequest): Promise<{ status: number; body: string }> {
  const res = await fetch(url + r.path, { method: r.method, headers: r.headers, body: r.body })
  return { status: res.status, body: await res.text() }
}

/** 404 with the router's own "no such endpoint", or 405: the route is not there (yet). */
function notAvailable(status: number, body: string): boolean {
  if (status === 405) return true
  if (status !== 404) return false
  try {
    const env = JSON.parse(body) as { errors?: { context: string; message: string }[] }
    return env.errors?.some((e) => e.context === 'route' && /no such endpoint/.test(e.message)) ?? false
  } catch {
    return false
  }
}

/** The cases, with their credentials created lazily (each case's own pool) when its requests are built. */
function buildCases(url: string, jwt: string, o: Pick<HttpOptions, 'poolSize' | 'username' | 'password'>): CaseDef[] {
  const tokens = async (label: string) => (await createTokens(url, jwt, o.poolSize, label)) as TokenCred[]
  const signedAll = async (creds: TokenCred[], method: string, target: string, body?: string) =>
    Promise.all(creds.map((t) => prepared(url, { kind: 'token', ...t }, method, target, body)))

  const cases: CaseDef[] = [
    {
      id: 'bare',
      title: 'bare route (no Hono, no auth, no storage): the runtime ceiling',
      expected: [200],
      requests: async () => [{ method: 'GET', path: '/__bench/bare', headers: {} }],
    },
    {
      id: 'pipeline',
      title: 'global middleware only (request id + log line, headers, config), no auth',
      expected: [200],
      requests: async () => [{ method: 'GET', path: '/__bench/pipeline', headers: {} }],
    },
    {
      id: 'health',
      title: 'public GET /health (per-IP bucket: one Durable Object call), 256 client IPs',
      expected: [200],
      requests: async () =>
        Array.from({ length: IPS }, (_, i) => ({ method: 'GET', path: '/health', headers: { 'cf-connecting-ip': benchIp(i, 100) } })),
    },
    {
      id: 'version-signed',
      title: 'signed GET /api/version (authentication + rate limit, no storage)',
      expected: [200],
      harnessBroken: [401, 403],
      requests: async () => signedAll(await tokens('version'), 'GET', '/api/version'),
    },
    {
      id: 'domains-signed',
      title: 'signed GET /api/v2/available-domains',
      expected: [200],
      harnessBroken: [401, 403],
      requests: async () => signedAll(await tokens('domains'), 'GET', '/api/v2/available-domains'),
    },
    {
      id: 'domains-jwt',
      title: 'GET /api/v2/available-domains with a JWT (Bearer)',
      expected: [200],
      harnessBroken: [401, 403],
      requests: async () => {
        const sessions = await createSessions(url, o.username, o.password, o.poolSize, 1000)
        return Promise.all(sessions.map((s) => prepared(url, { kind: 'bearer', jwt: s }, 'GET', '/api/v2/available-domains')))
      },
    },
    {
      id: 'extensions-put',
      // With a JWT: a signed mutation is accepted once (SECURITY.md), and the load generator replays bytes.
      title: 'PUT /api/v2/extensions with a JWT, 1 KB body (upsert: a D1 write per request)',
      expected: [200, 201],
      harnessBroken: [401, 403],
      requests: async () => {
        const sessions = await createSessions(url, o.username, o.password, o.poolSize, 2000)
        const body = extensionPayload()
        return Promise.all(sessions.map((s) => prepared(url, { kind: 'bearer', jwt: s }, 'PUT', '/api/v2/extensions', body)))
      },
    },
    {
      id: 'over-limit',
      title: 'one token over its limit (429 path), signed GET /api/version',
      expected: [429],
      note: 'one token, 55/s, burst 110: after the first ~110 requests nearly every answer is 429',
      requests: async () => signedAll(await createTokens(url, jwt, 1, 'over'), 'GET', '/api/version'),
    },
    {
      id: 'forged-one-ip',
      title: 'forged signatures, one client IP (401, then 429 from the isolate-local block list)',
      expected: [401, 429],
      requests: async () => {
        const [victim] = await createTokens(url, jwt, 1, 'victim1')
        return [forged(victim.tokenId, '203.0.113.7')]
      },
    },
    {
      id: 'forged-many-ips',
      title: 'forged signatures from 256 client IPs (401 path: HMAC check + per-IP bucket)',
      expected: [401],
      note: 'each IP stays under its budget (10/s, burst 20) up to ~2,500 req/s, so requests take the full failed-authentication path',
      requests: async () => {
        const [victim] = await createTokens(url, jwt, 1, 'victim2')
        return Array.from({ length: IPS }, (_, i) => forged(victim.tokenId, benchIp(i, 198)))
      },
    },
  ]
  return cases
}

/**
 * Several rounds of loads, combined: request counts and CPU time add up, rates and percentiles are
 * averaged over the rounds (each round has the same duration).
 */
function combine(loads: MeasuredLoad[]): MeasuredLoad {
  if (loads.length === 1) return loads[0]
  const mean = (f: (l: MeasuredLoad) => number) => loads.reduce((a, l) => a + f(l), 0) / loads.length
  const sum = (f: (l: MeasuredLoad) => number) => loads.reduce((a, l) => a + f(l), 0)
  const statuses: Record<string, number> = {}
  const probeStatuses: Record<string, number> = {}
  for (const l of loads) {
    for (const [k, v] of Object.entries(l.statuses)) statuses[k] = (statuses[k] ?? 0) + v
    for (const [k, v] of Object.entries(l.probe.statuses)) probeStatuses[k] = (probeStatuses[k] ?? 0) + v
  }
  const cpus = loads.map((l) => l.cpu).filter((c): c is CpuUse => !!c)
  return {
    rps: mean((l) => l.rps),
    total: sum((l) => l.total),
    warmupTotal: sum((l) => l.warmupTotal),
    latencyMs: {
      p50: mean((l) => l.latencyMs.p50),
      p90: mean((l) => l.latencyMs.p90),
      p99: mean((l) => l.latencyMs.p99),
      mean: mean((l) => l.latencyMs.mean),
      max: Math.max(...loads.map((l) => l.latencyMs.max)),
    },
    statuses,
    errors: sum((l) => l.errors),
    timeouts: sum((l) => l.timeouts),
    probe: {
      count: sum((l) => l.probe.count),
      p50us: mean((l) => l.probe.p50us),
      p90us: mean((l) => l.probe.p90us),
      p99us: mean((l) => l.probe.p99us),
      statuses: probeStatuses,
    },
    cpu:
      cpus.length === loads.length
        ? { serverSeconds: sum((l) => l.cpu!.serverSeconds), loadSeconds: sum((l) => l.cpu!.loadSeconds), wallSeconds: sum((l) => l.cpu!.wallSeconds) }
        : undefined,
  }
}

export async function runHttpCases(o: HttpOptions): Promise<HttpRun> {
  const url = o.url
  o.log(`http: logging in and creating credentials (${o.poolSize} per throughput case)`)
  const jwt = await login(url, o.username, o.password, benchIp(1, 172))
  const want = (id: string) => !o.only || o.only.includes(id) || id === 'bare'
  const cases = buildCases(url, jwt, o)
  const results: CaseResult[] = []
  const runs = new Map<string, { def: CaseDef; res: CaseResult; requests: LoadRequest[]; loads: MeasuredLoad[]; d1: number; bySql: Record<string, number> }>()
  const gen = new LoadGenerator()
  const measure = (requests: LoadRequest[]) =>
    gen.run(
      { url, connections: o.connections, durationSeconds: o.durationSeconds, warmupSeconds: o.warmupSeconds, probeCount: o.probeCount, requests },
      o.serverPids,
    )

  try {
    // 1. credentials and availability, once per case
    for (const c of cases) {
      if (!want(c.id)) continue
      const res: CaseResult = { id: c.id, title: c.title, available: true, expected: c.expected, note: c.note }
      results.push(res)
      const requests = await c.requests()
      const first = await probeOnce(url, requests[0])
      if (notAvailable(first.status, first.body)) {
        res.available = false
        res.error = `not available: ${first.status} ${first.body.slice(0, 160)}`
        o.log(`http: ${c.id}: not available (${first.status})`)
        continue
      }
      if (c.harnessBroken?.includes(first.status))
        throw new Error(`harness failure: ${c.id} answered ${first.status} to a correctly signed request: ${first.body.slice(0, 300)}`)
      if (!c.expected.includes(first.status) && !(c.id === 'over-limit' && first.status === 200)) {
        res.error = `unexpected status ${first.status}: ${first.body.slice(0, 200)}`
        o.log(`http: ${c.id}: ${res.error} (measured anyway)`)
      }
      runs.set(c.id, { def: c, res, requests, loads: [], d1: 0, bySql: {} })
    }
    // 2. rounds: every case once per round, in the same order, so that a change in the machine's load
    //    during the run hits every case (and the baseline) alike instead of a few cases fully
    for (let round = 1; round <= o.rounds; round++) {
      for (const [id, run] of runs) {
        o.log(`http: ${id}${o.rounds > 1 ? ` (round ${round}/${o.rounds})` : ''}: ${o.durationSeconds}s at ${o.connections} connections`)
        const d1Before = await d1Census(url)
        run.loads.push(await measure(run.requests))
        const d1After = await d1Census(url)
        run.d1 += d1Before && d1After ? d1After.statements - d1Before.statements : NaN
        d1Delta(d1Before, d1After, run.bySql)
      }
    }
    // 3. combine
    for (const { def, res, loads, d1, bySql } of runs.values()) {
      const load = combine(loads)
      res.load = load
      const sent = load.warmupTotal + load.total + load.probe.count
      if (Number.isFinite(d1) && sent > 0) res.d1PerRequest = d1 / sent
      res.d1BySql = Object.entries(bySql).sort((a, b) => b[1] - a[1]).slice(0, 6)
      const total = Object.values(load.statuses).reduce((a, b) => a + b, 0)
      const ok = Object.entries(load.statuses).filter(([s]) => def.expected.includes(Number(s))).reduce((a, [, n]) => a + n, 0)
      res.expectedShare = total ? ok / total : 0
      if (load.cpu && load.cpu.wallSeconds > 0 && Number.isFinite(load.cpu.serverSeconds)) {
        res.serverCpuPct = (load.cpu.serverSeconds / load.cpu.wallSeconds) * 100
        res.serverCpuUsPerRequest = (load.cpu.serverSeconds * 1e6) / Math.max(1, load.total)
        res.loadCpuPct = (load.cpu.loadSeconds / load.cpu.wallSeconds) * 100
      }
      if (loads.length > 1) res.note = [res.note, `rounds: ${loads.map((l) => Math.round(l.rps)).join(' / ')} req/s`].filter(Boolean).join('; ')
    }
  } finally {
    await gen.close()
  }
  const bareLoad = runs.get('bare')?.res.load
  const bare = bareLoad
    ? { rps: bareLoad.rps, p50ms: bareLoad.latencyMs.p50, probeP50us: bareLoad.probe.p50us }
    : { rps: NaN, p50ms: NaN, probeP50us: NaN }
  for (const r of results) {
    if (!r.load) continue
    r.rpsRatio = r.load.rps / bare.rps
    r.p50Ratio = r.load.probe.p50us / bare.probeP50us
  }
  const v = results.find((r) => r.id === 'version-signed')?.load
  const p = results.find((r) => r.id === 'pipeline')?.load
  return { cases: results, bare, authOverheadP50ms: v && p ? (v.probe.p50us - p.probe.p50us) / 1000 : undefined }
}

/**
 * A request naming a real token id with a well-formed but wrong signature and a current date. It targets
 * /api/version (authentication fails before any handler, so the target does not matter, and this route
 * exists whatever the state of the graph work).
 */
function forged(tokenId: string, ip: string): LoadRequest {
  return {
    method: 'GET',
    path: '/api/version',
    headers: {
      authorization: `svcsignature ${tokenId}`,
      requestdate: new Date().toISOString(),
      signature: randomBytes(32).toString('base64'),
      'cf-connecting-ip': ip,
    },
  }
}

/**
 * CPU profiles of HTTP cases, taken on a separate worker instance with the inspector on (never during the
 * measured runs): `seconds` of load per case after a one-second warm-up, worker isolate and D1 service.
 */
export async function profileHttpCases(o: {
  bundle: string
  persistDir: string
  inspectorPort: number
  resultsDir: string
  username: string
  password: string
  ids: string[]
  seconds: number
  connections: number
  poolSize: number
  log: (m: string) => void
}): Promise<Record<string, ProfileSummary[]>> {
  const w = await startMiniflare({ bundle: o.bundle, persistDir: o.persistDir, migrate: true, inspectorPort: o.inspectorPort })
  const gen = new LoadGenerator()
  const out: Record<string, ProfileSummary[]> = {}
  try {
    const jwt = await login(w.url, o.username, o.password, benchIp(2, 172))
    const sourceMap = loadSourceMap(`${o.bundle}.map`)
    for (const c of buildCases(w.url, jwt, o).filter((x) => o.ids.includes(x.id))) {
      o.log(`http profile: ${c.id}`)
      const requests = await c.requests()
      await gen.run({ url: w.url, connections: o.connections, durationSeconds: 1, warmupSeconds: 0, probeCount: 0, requests })
      out[c.id] = await captureProfiles(
        o.inspectorPort,
        `http-${c.id}`,
        () => gen.run({ url: w.url, connections: o.connections, durationSeconds: o.seconds, warmupSeconds: 0, probeCount: 0, requests }),
        o.resultsDir,
        sourceMap,
      )
    }
  } finally {
    await gen.close()
    await w.dispose()
  }
  return out
}

