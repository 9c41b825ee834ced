/// <reference types="node" />
/**
 * The worst requests and fairness (issue 19), as regression cases with budgets:
 *
 *   npm run bench:cost -- [--edges 20000 | --edges 1m] [--fair-seconds 10] [--only id,id] [--profile id,id]
 *                          [--state DIR] [--no-analysis]
 *
 * 1. Load: the benchmark's generated AD + Azure graph at `--edges` (bench/lib/generate.ts, as bench/run.ts)
 *    is ingested the way bench/run.ts does it (OpenGraph files of ≤ 20 000 elements through the file-upload
 *    API, then an analysis run), into a worker with admission off (so loading is not paced); the Read-Only
 *    users and tokens of the cases are created there. Then that worker is stopped.
 * 2. Each case on a FRESH worker on the same database (Miniflare, shipped limits, cost-aware admission on,
 *    as shipped: RATE_LIMIT_COST=on): one warm-up request of the same caller (GET /api/version: the bundle
 *    is loaded, the caller's token known), then the measured request, once, with
 *      - CPU: workerd's user + system time from /proc around the request. Miniflare runs the worker, its
 *        Durable Objects and D1 (SQLite) in that one process, so this is the request's CPU + D1 time
 *        (10 ms resolution). The wall time is reported beside it (it grows with the machine's load);
 *      - D1 statements: the bench worker's census (bench/worker.ts wraps the D1 binding; not in the
 *        production bundle);
 *      - committed heap of the isolate (JS heap reserved + ArrayBuffer backing stores) through the
 *        inspector, sampled every 25 ms during the request and once after it (V8 gives committed memory
 *        back lazily, so the sample after catches a peak reached inside a synchronous stretch);
 *      - the answer's bytes.
 *    Budgets (the issue's): every request < 500 D1 statements and ≤ 96 MiB committed heap; every read
 *    ≤ 1 s of CPU + D1 time and answers ≤ 10 MB (10,000,000 bytes); a zip bomb refused in ≤ 1 s of CPU.
 * 3. Fairness, on a fresh worker: a Read-Only user sends the most expensive read (a domain's controllers as a
 *    graph) at its full allowed rate and concurrency (4 in flight, its token's cap; 429 → wait Retry-After),
 *    while another user's cheap read (available-domains) is timed; its p50 must stay within 3× of its
 *    p50 without the abuser (same run, same worker).
 *
 * Diagnosis (environment): COST_HEAP_PARTS=1 logs JS heap and backing stores apart; COST_MID_GC=<ms> forces
 * a full GC (heap snapshot) that long into each request and logs what is live; COST_UPLOAD_MIB sizes the
 * realistic upload (20). Each changes what is measured: never for reported figures.
 *
 * Prints a Markdown table and the JSON; writes bench/results/cost-latest.json. Exit status: 1 when the
 * harness fails; 2 when it ran and a budget was missed (each such row is marked FAIL); 0 otherwise.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { strToU8, zipSync, Deflate } from 'fflate'
import { EdgeHoundClient } from '../src/client'
import { BenchApi, d1Census, d1Delta, type AnalysisRun } from './lib/api'
import { benchIp, createTokens, login, type TokenCred } from './lib/credentials'
import { buildCsr, generateGraph, largeFilePayload, openGraphPayloads, type Csr, type GenGraph } from './lib/generate'
import { captureProfiles, Inspector, inspectorAvailable, loadSourceMap } from './lib/inspector'
import { bfsDistances } from './lib/paths'
import { cpuSeconds } from './lib/proc'
import { adminCredentials, buildBundle, freePort, ROOT, startMiniflare, type HostedWorker } from './lib/worker-host'

/** The issue's budgets. */
export const BUDGETS = { statements: 500, committedMiB: 96, readCpuSeconds: 1, answerBytes: 10_000_000, bombCpuSeconds: 1, fairnessRatio: 3 }

type Kind = 'read' | 'upload' | 'bomb'

interface Case {
  id: string
  request: string
  kind: Kind
  caller: 'writer' | 'reader'
  method: string
  target: string
  body?: Uint8Array
  contentType?: string
}

export interface Worst {
  id: string
  request: string
  kind: Kind
  status: number
  wallMs: number
  /** workerd's CPU seconds (worker + Durable Objects + D1) during the request */
  cpuSeconds: number
  bytes: number
  statements: number
  /** statements by SQL (first 90 characters), largest first */
  topSql: [string, number][]
  baselineCommittedMiB?: number
  peakCommittedMiB?: number
  peakUsedMiB?: number
  /** budgets missed (empty: all met) */
  missed: string[]
  /** the answer's first bytes when it is an error */
  error?: string
}

const MiB = (b: number) => Math.round((b / 2 ** 20) * 10) / 10
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

const p50 = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length ? s[Math.floor((s.length - 1) / 2)] : NaN
}

function parseSize(s: string): number {
  const m = /^(\d+(?:\.\d+)?)([km]?)$/i.exec(s.trim())
  if (!m) throw new Error(`bad --edges "${s}": use e.g. 20000, 100k or 1m`)
  return Math.round(Number(m[1]) * (m[2].toLowerCase() === 'k' ? 1e3 : m[2].toLowerCase() === 'm' ? 1e6 : 1))
}

/** A raw DEFLATE stream of `mib` MiB: one node, then spaces (~1 KB compressed per MiB). */
function deflatedPadding(mib: number): Uint8Array {
  const parts: Uint8Array[] = []
  const d = new Deflate({ level: 9 }, (c) => parts.push(c))
  d.push(strToU8('{"graph":{"nodes":[{"id":"BOMB","kinds":["A"]}]}'))
  const spaces = new Uint8Array(1024 * 1024).fill(0x20)
  for (let i = 0; i < mib; i++) d.push(spaces)
  d.push(strToU8('}'), true)
  return Buffer.concat(parts)
}

/** A zip whose members are raw DEFLATE streams, each declaring `declared` bytes (zipSync cannot lie). */
function craftedZip(members: { name: string; data: Uint8Array; declared: number }[]): Uint8Array {
  const out: Buffer[] = []
  const central: Buffer[] = []
  let offset = 0
  for (const m of members) {
    const name = Buffer.from(m.name)
    const local = Buffer.alloc(30)
    local.writeUInt32LE(0x04034b50, 0), local.writeUInt16LE(20, 4), local.writeUInt16LE(8, 8)
    local.writeUInt32LE(m.data.length, 18), local.writeUInt32LE(m.declared, 22), local.writeUInt16LE(name.length, 26)
    const cd = Buffer.alloc(46)
    cd.writeUInt32LE(0x02014b50, 0), cd.writeUInt16LE(20, 4), cd.writeUInt16LE(20, 6), cd.writeUInt16LE(8, 10)
    cd.writeUInt32LE(m.data.length, 20), cd.writeUInt32LE(m.declared, 24), cd.writeUInt16LE(name.length, 28), cd.writeUInt32LE(offset, 42)
    out.push(local, name, Buffer.from(m.data))
    central.push(cd, name)
    offset += 30 + name.length + m.data.length
  }
  const cdBytes = Buffer.concat(central)
  const eocd = Buffer.alloc(22)
  eocd.writeUInt32LE(0x06054b50, 0), eocd.writeUInt16LE(members.length, 8), eocd.writeUInt16LE(members.length, 10)
  eocd.writeUInt32LE(cdBytes.length, 12), eocd.writeUInt32LE(offset, 16)
  return Buffer.concat([...out, cdBytes, eocd])
}

/**
 * The shortest-path case "between huge unreachable components": a start whose forward reach and an end
 * whose backward reach are both as large as possible while the end is not reachable from the start, so
 * the bidirectional search exhausts one side after expanding both (all generated kinds are traversable, so
 * the generator's adjacency is the service's). Candidates: the nodes of highest out-degree (starts) and
 * in-degree (ends). Pure; deterministic for a graph.
 */
export function hugeUnreachablePair(g: GenGraph, csr: Csr, rev: Csr, candidates = 40): { start: number; end: number; forward: number; backward: number } | null {
  const n = g.nodes.length
  const dist = new Int32Array(n)
  const queue = new Int32Array(n)
  const byDegree = (c: Csr) =>
    Array.from({ length: n }, (_, i) => i)
      .sort((a, b) => c.offsets[b + 1] - c.offsets[b] - (c.offsets[a + 1] - c.offsets[a]) || a - b)
      .slice(0, candidates)
  const back = byDegree(rev).map((t) => ({ t, size: bfsDistances(rev, t, dist, queue) })).sort((a, b) => b.size - a.size || a.t - b.t)
  let best: { start: number; end: number; forward: number; backward: number } | null = null
  for (const s of byDegree(csr)) {
    const forward = bfsDistances(csr, s, dist, queue)
    const end = back.find((b) => dist[b.t] === -1 && b.t !== s)
    if (!end) continue
    if (!best || Math.min(forward, end.size) > Math.min(best.forward, best.backward)) best = { start: s, end: end.t, forward, backward: end.size }
  }
  return best
}

/** the cases whose caller is a Read-Only user of their own */
const READ_CASES = [
  'controllers-graph', 'members-graph', 'controllers-list', 'members-list', 'domain-counts', 'group-counts',
  'path-domain-users', 'path-unreachable', 'path-users-domain', 'details-all', 'search-deep',
]

/** what the load leaves for the cases (kept in --state DIR/loaded.json) */
interface Loaded {
  edges: number
  upJob: number
  writer: TokenCred
  readers: Record<string, TokenCred>
}

interface Caller {
  cred: TokenCred
  client: (url: string) => EdgeHoundClient
}
const tokenCaller = (cred: TokenCred): Caller => ({
  cred,
  client: (url) => new EdgeHoundClient({ baseUrl: url, credentials: { kind: 'token', ...cred } }),
})

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      edges: { type: 'string', default: '20000' },
      'fair-seconds': { type: 'string', default: '10' },
      only: { type: 'string' },
      /** cases to profile (CPU and sampled allocations), on another fresh worker after their measurement */
      profile: { type: 'string' },
      /** keep the loaded database in DIR and reuse it on the next run with the same --edges */
      state: { type: 'string' },
      /**
       * leave the job open, so no analysis run is requested (the graph is committed per upload and readable):
       * for a machine too loaded to run the 1 M-edge analysis; the findings case is then not measured
       */
      'no-analysis': { type: 'boolean', default: false },
    },
  })
  const edges = parseSize(values.edges!)
  const fairSeconds = Number(values['fair-seconds'])
  const only = values.only ? new Set(values.only.split(',')) : null
  const profile = new Set(values.profile ? values.profile.split(',') : [])
  const noAnalysis = values['no-analysis'] === true
  const started = Date.now()
  const log = (m: string) => console.error(`[cost ${edges} ${((Date.now() - started) / 1000).toFixed(0).padStart(5)}s] ${m}`)
  if (!inspectorAvailable()) throw new Error('harness failure: no global WebSocket (run Node with --experimental-websocket, as the npm script does)')
  const loadStart = os.loadavg().map((l) => +l.toFixed(2))

  const g = generateGraph({ edges })
  const csr = buildCsr(g)
  const rev = buildCsr(g, true)
  const far = hugeUnreachablePair(g, csr, rev)
  if (!far) throw new Error('harness failure: the generated graph has no unreachable pair among its hubs')
  log(`generated ${g.nodes.length} nodes, ${g.edgeCount} edges; unreachable pair: forward reach ${far.forward}, backward reach ${far.backward} nodes`)

  const keep = values.state ? path.resolve(values.state) : null
  if (keep) mkdirSync(keep, { recursive: true })
  const dir = keep ?? mkdtempSync(path.join(os.tmpdir(), 'edgehound-cost-'))
  const state = path.join(dir, 'state')
  const inspectorPort = await freePort()
  let w: HostedWorker | null = null
  const worst: Worst[] = []
  try {
    const bundle = await buildBundle(path.join(dir, 'bundle'))

    // ---- 1. load (admission off: the bench's default vars), unless --state holds a loaded database --------
    const savedFile = path.join(dir, 'loaded.json')
    let loaded: Loaded | null = existsSync(savedFile) ? (JSON.parse(readFileSync(savedFile, 'utf8')) as Loaded) : null
    if (loaded && loaded.edges !== edges) throw new Error(`harness failure: ${dir} holds a graph of ${loaded.edges} edges, not ${edges}`)
    if (loaded) log(`reusing the database loaded in ${dir}`)
    else {
      w = await startMiniflare({ bundle, persistDir: state, migrate: true })
      const { username, password } = adminCredentials()
      const jwt = await login(w.url, username, password, benchIp(9, 173))
      const adminTokens = await createTokens(w.url, jwt, 4, 'cost')
      const api = new BenchApi(w.url, adminTokens)
      const admin = new EdgeHoundClient({ baseUrl: w.url, credentials: { kind: 'bearer', jwt } })
      const t0 = performance.now()
      const job = (await api.ok<{ data: { id: number } }>('POST', '/api/v2/file-upload/start')).body!.data.id
      let files = 0
      for (const p of openGraphPayloads(g, 20_000)) {
        await api.ok('POST', `/api/v2/file-upload/${job}`, p.text, 'application/json')
        files++
      }
      if (!noAnalysis) await api.ok('POST', `/api/v2/file-upload/${job}/end`)
      log(`ingested ${g.nodes.length + g.edgeCount} elements in ${files} files, ${((performance.now() - t0) / 1000).toFixed(1)} s`)
      // The job's end requested an analysis run; wait for it through the run list (a D1 read: the analyzer,
      // busy with the run, is not asked).
      for (let last = 0, failures = 0; !noAnalysis; ) {
        let runs: AnalysisRun[]
        try {
          runs = (await api.ok<{ data: AnalysisRun[] }>('GET', '/api/v2/analysis?limit=1')).body!.data
        } catch (e) {
          // a kept-alive connection the runtime closed while the run held the isolate: ask again
          if (++failures > 20) throw e
          log(`analysis: poll failed (${(e as Error).message}; ${String((e as { cause?: unknown }).cause ?? '')}), asking again`)
          await sleep(2000)
          continue
        }
        const s = runs[0]
        if (s?.status === 'failed') throw new Error(`harness failure: analysis failed: ${s.error}`)
        if (s?.status === 'complete') break
        if (performance.now() - last > 30_000) {
          log(`analysis: ${s ? `run ${s.id} ${s.status}` : 'no run yet'}`)
          last = performance.now()
        }
        await sleep(500)
      }
      log(`loaded${noAnalysis ? ' (job left open: no analysis)' : ' and analysed'} in ${((performance.now() - t0) / 1000).toFixed(1)} s`)
      const upJob = (await api.ok<{ data: { id: number } }>('POST', '/api/v2/file-upload/start')).body!.data.id
      // one Read-Only user with one API token per case: no bucket carries over from another case
      const readers: Record<string, TokenCred> = {}
      for (const name of [...READ_CASES, 'normal', 'abuser']) {
        const u = await admin.createUser({ principal_name: `cost-${name}`, roles: ['Read-Only'], secret: 'correct-horse-battery' })
        const t = await admin.createToken(name, u.data.id)
        readers[name] = { tokenId: t.data.id, tokenKey: t.data.key }
      }
      loaded = { edges, upJob, writer: adminTokens[0], readers }
      writeFileSync(savedFile, JSON.stringify(loaded))
      await w.dispose()
      w = null
    }
    const { upJob } = loaded
    const writer = tokenCaller(loaded.writer)
    const readers = new Map(Object.entries(loaded.readers).map(([k, v]) => [k, tokenCaller(v)]))

    // ---- 2. the cases (their callers are created on the load worker), each on a fresh worker -------------
    const sid = g.domains[0].sid
    const oid = (i: number) => encodeURIComponent(g.nodes[i].objectid)
    const realistic = largeFilePayload({ maxBytes: Math.round(Number(process.env.COST_UPLOAD_MIB ?? 20) * 1024 * 1024) })
    const zipOf = (n: number) => zipSync(Object.fromEntries(Array.from({ length: n }, (_, i) => [`copy${i}.json`, strToU8(realistic.text)])), { level: 6 })
    const cases: Case[] = [
      { id: 'bomb-declared', kind: 'bomb', caller: 'writer', request: 'zip of 100 members × 20 MiB declared (one node plus spaces; 2 GiB inflated)', method: 'POST', target: `/api/v2/file-upload/${upJob}`, contentType: 'application/zip' },
      { id: 'bomb-lying', kind: 'bomb', caller: 'writer', request: 'zip member declaring 1 KiB that inflates to 1 GiB', method: 'POST', target: `/api/v2/file-upload/${upJob}`, contentType: 'application/zip' },
      { id: 'zip-over', kind: 'upload', caller: 'writer', request: `zip of 6 copies of a realistic ${MiB(realistic.bytes)} MiB OpenGraph file (${realistic.nodes + realistic.edges} elements each)`, method: 'POST', target: `/api/v2/file-upload/${upJob}`, contentType: 'application/zip' },
      { id: 'json-at', kind: 'upload', caller: 'writer', request: `the same file as JSON (${realistic.bytes} bytes, at the 20 MiB body budget; accepted)`, method: 'POST', target: `/api/v2/file-upload/${upJob}`, contentType: 'application/json' },
      { id: 'zip-at', kind: 'upload', caller: 'writer', request: 'zip of 1 copy of the same file (at the 20 MiB inflated budget; accepted)', method: 'POST', target: `/api/v2/file-upload/${upJob}`, contentType: 'application/zip' },
      { id: 'controllers-graph', kind: 'read', caller: 'reader', request: 'GET /api/v2/domains/{domain}/controllers?type=graph', method: 'GET', target: `/api/v2/domains/${sid}/controllers?type=graph` },
      { id: 'members-graph', kind: 'read', caller: 'reader', request: 'GET /api/v2/groups/{Domain Users}/members?type=graph', method: 'GET', target: `/api/v2/groups/${sid}-513/members?type=graph` },
      { id: 'controllers-list', kind: 'read', caller: 'reader', request: 'GET /api/v2/domains/{domain}/controllers (list)', method: 'GET', target: `/api/v2/domains/${sid}/controllers?limit=100` },
      { id: 'members-list', kind: 'read', caller: 'reader', request: 'GET /api/v2/groups/{Domain Users}/members (list)', method: 'GET', target: `/api/v2/groups/${sid}-513/members?limit=100` },
      { id: 'domain-counts', kind: 'read', caller: 'reader', request: 'GET /api/v2/domains/{domain} (counts)', method: 'GET', target: `/api/v2/domains/${sid}` },
      { id: 'group-counts', kind: 'read', caller: 'reader', request: 'GET /api/v2/groups/{Domain Users} (counts)', method: 'GET', target: `/api/v2/groups/${sid}-513` },
      { id: 'path-domain-users', kind: 'read', caller: 'reader', request: 'GET /api/v2/graphs/shortest-path domain → Domain Users', method: 'GET', target: `/api/v2/graphs/shortest-path?start_node=${sid}&end_node=${sid}-513` },
      { id: 'path-unreachable', kind: 'read', caller: 'reader', request: `GET /api/v2/graphs/shortest-path between huge unreachable components (forward reach ${far.forward}, backward reach ${far.backward} nodes)`, method: 'GET', target: `/api/v2/graphs/shortest-path?start_node=${oid(far.start)}&end_node=${oid(far.end)}` },
      { id: 'path-users-domain', kind: 'read', caller: 'reader', request: 'GET /api/v2/graphs/shortest-path Domain Users → domain', method: 'GET', target: `/api/v2/graphs/shortest-path?start_node=${sid}-513&end_node=${sid}` },
      { id: 'details-all', kind: 'read', caller: 'reader', request: 'GET /api/v2/domains/{domain}/details?limit=0', method: 'GET', target: `/api/v2/domains/${sid}/details?finding=T0GenericAll&limit=0` },
      { id: 'search-deep', kind: 'read', caller: 'reader', request: 'GET /api/v2/search?q=user&skip=10000 (deepest page)', method: 'GET', target: `/api/v2/search?q=user&skip=10000&limit=1000` },
    ].filter((c) => (!only || only.has(c.id)) && !(noAnalysis && c.id === 'details-all')) as Case[]
    const bodies: Record<string, () => Uint8Array> = {
      'bomb-declared': () => {
        const member = deflatedPadding(20) // the same stream in every member (deflating 2 GiB would take a minute)
        return craftedZip(Array.from({ length: 100 }, (_, i) => ({ name: `m${i}.json`, data: member, declared: 20 * 1024 * 1024 })))
      },
      'bomb-lying': () => craftedZip([{ name: 'bomb.json', data: deflatedPadding(1024), declared: 1024 }]),
      'zip-over': () => zipOf(6),
      'zip-at': () => zipOf(1),
      'json-at': () => strToU8(realistic.text),
    }
    const unknown = cases.filter((c) => c.caller === 'reader' && !readers.has(c.id)).map((c) => c.id)
    if (unknown.length) throw new Error(`harness failure: no caller for ${unknown.join(', ')} (a --state made by an older script?)`)

    for (const c of cases) {
      const body = bodies[c.id]?.()
      w = await startMiniflare({ bundle, persistDir: state, migrate: false, inspectorPort, vars: { RATE_LIMIT_COST: 'on' } })
      const caller = c.caller === 'writer' ? writer : readers.get(c.id)!
      const client = caller.client(w.url)
      const warm = await client.raw('GET', '/api/version')
      await warm.arrayBuffer()
      if (warm.status !== 200) throw new Error(`harness failure: warm-up answered ${warm.status}`)
      const insp = await Inspector.connect(inspectorPort, 'core:user:edgehound')
      try {
        const h0 = await insp.heapBytes()
        let peakCommitted = h0.committed
        let peakUsed = h0.used
        let sampling = true
        const parts = { js: 0, jsUsed: 0, backing: 0 }
        const sampler = (async () => {
          while (sampling) {
            try {
              const h = await insp.heapBytes()
              peakCommitted = Math.max(peakCommitted, h.committed)
              peakUsed = Math.max(peakUsed, h.used)
              if (process.env.COST_HEAP_PARTS) {
                const r = await insp.send<Record<string, number>>('Runtime.getHeapUsage')
                parts.js = Math.max(parts.js, r.totalSize), parts.jsUsed = Math.max(parts.jsUsed, r.usedSize), parts.backing = Math.max(parts.backing, r.backingStorageSize ?? 0)
              }
            } catch {
              /* a lost sample */
            }
            await sleep(25)
          }
        })()
        const census0 = await d1Census(w.url)
        const cpu0 = cpuSeconds(w.pids())
        const t = performance.now()
        const pending = client.raw(c.method, c.target, body, c.contentType ? { contentType: c.contentType } : {})
        if (process.env.COST_MID_GC) {
          // Diagnosis: the heap after a forced full GC in the middle of the request (what it holds live).
          await sleep(Number(process.env.COST_MID_GC))
          const h = await insp.heapBytesAfterGc()
          log(`${c.id}: mid-request after a forced GC: used ${MiB(h.used)} MiB, committed ${MiB(h.committed)} MiB`)
        }
        const res = await pending
        const buf = new Uint8Array(await res.arrayBuffer())
        const wallMs = performance.now() - t
        const cpu = cpuSeconds(w.pids()) - cpu0
        sampling = false
        await sampler
        if (process.env.COST_HEAP_PARTS) log(`${c.id}: heap parts (MiB, max of samples): JS committed ${MiB(parts.js)}, JS used ${MiB(parts.jsUsed)}, backing stores ${MiB(parts.backing)}`)
        const h1 = await insp.heapBytes()
        peakCommitted = Math.max(peakCommitted, h1.committed)
        peakUsed = Math.max(peakUsed, h1.used)
        const census1 = await d1Census(w.url)
        const statements = census0 && census1 ? census1.statements - census0.statements : NaN
        const missed: string[] = []
        if (!(statements < BUDGETS.statements)) missed.push(`${statements} D1 statements ≥ ${BUDGETS.statements}`)
        if (MiB(peakCommitted) > BUDGETS.committedMiB) missed.push(`committed heap ${MiB(peakCommitted)} MiB > ${BUDGETS.committedMiB}`)
        if (c.kind === 'read' && !(cpu <= BUDGETS.readCpuSeconds)) missed.push(`CPU + D1 ${cpu.toFixed(2)} s > ${BUDGETS.readCpuSeconds}`)
        if (c.kind === 'read' && buf.byteLength > BUDGETS.answerBytes) missed.push(`answer ${buf.byteLength} bytes > ${BUDGETS.answerBytes}`)
        if (c.kind === 'bomb' && (res.status < 400 || !(cpu <= BUDGETS.bombCpuSeconds))) missed.push(`bomb ${res.status < 400 ? 'accepted' : `refused after ${cpu.toFixed(2)} s CPU`}`)
        if (res.status >= 500) missed.push(`answered ${res.status}`)
        const topSql = Object.entries(d1Delta(census0, census1))
          .sort((a, b) => b[1] - a[1])
          .slice(0, 5)
        const r: Worst = {
          id: c.id,
          request: c.request,
          kind: c.kind,
          status: res.status,
          wallMs: Math.round(wallMs),
          cpuSeconds: +cpu.toFixed(2),
          bytes: buf.byteLength,
          statements,
          topSql,
          baselineCommittedMiB: MiB(h0.committed),
          peakCommittedMiB: MiB(peakCommitted),
          peakUsedMiB: MiB(peakUsed),
          missed,
          ...(res.status >= 400 ? { error: new TextDecoder().decode(buf.subarray(0, 400)) } : {}),
        }
        worst.push(r)
        log(
          `${c.id}: ${r.status} in ${r.wallMs} ms wall, ${r.cpuSeconds} s CPU + D1, ${r.bytes} bytes, ${r.statements} statements, ` +
            `committed ${r.baselineCommittedMiB} → ${r.peakCommittedMiB} MiB${missed.length ? `  FAIL: ${missed.join('; ')}` : ''}`,
        )
      } finally {
        insp.close()
        await w.dispose()
        w = null
      }
      if (profile.has(c.id)) {
        // Diagnosis only (the profiler slows the request): the same request on another fresh worker.
        w = await startMiniflare({ bundle, persistDir: state, migrate: false, inspectorPort, vars: { RATE_LIMIT_COST: 'on' } })
        const client = caller.client(w.url)
        await (await client.raw('GET', '/api/version')).arrayBuffer()
        const summaries = await captureProfiles(
          inspectorPort,
          `cost-${c.id}`,
          async () => (await client.raw(c.method, c.target, body, c.contentType ? { contentType: c.contentType } : {})).arrayBuffer(),
          path.join(ROOT, 'bench', 'results'),
          loadSourceMap(path.join(dir, 'bundle', 'worker.js.map')),
          undefined,
          { heap: true },
        )
        for (const sm of summaries) {
          log(`profile ${c.id} ${sm.target}: ${sm.top.slice(0, 8).map((f) => `${f.fn}@${f.where} ${f.selfMs} ms`).join(', ')}`)
          if (sm.allocations) log(`allocations ${c.id}: ${sm.allocations.map((a) => `${a.fn}@${a.where} ${a.mib} MiB`).join(', ')}`)
        }
        await w.dispose()
        w = null
      }
    }

    // ---- 3. fairness ------------------------------------------------------------------------------------------
    let fairness: Record<string, unknown> | null = null
    if (!only || only.has('fairness')) {
      w = await startMiniflare({ bundle, persistDir: state, migrate: false, vars: { RATE_LIMIT_COST: 'on' } })
      const url = w.url
      const normal = readers.get('normal')!.client(url)
      const abuser = readers.get('abuser')!.client(url)
      const cheap = async (n: number) => {
        const ms: number[] = []
        for (let i = 0; i < n; i++) {
          const t = performance.now()
          const r = await normal.raw('GET', '/api/v2/available-domains')
          await r.arrayBuffer()
          if (r.status !== 200) throw new Error(`harness failure: the normal caller was answered ${r.status}`)
          ms.push(performance.now() - t)
          await sleep(20)
        }
        return ms
      }
      await cheap(10) // warm-up
      const base = p50(await cheap(60))
      let stop = false
      const sent = { ok: 0, refused: 0, other: 0 }
      const lane = async () => {
        while (!stop) {
          const r = await abuser.raw('GET', `/api/v2/domains/${sid}/controllers?type=graph`)
          await r.arrayBuffer()
          if (r.status === 429) {
            sent.refused++
            await sleep(1000 * Number(r.headers.get('retry-after') ?? '1'))
          } else if (r.status === 200) sent.ok++
          else sent.other++
        }
      }
      const lanes = Array.from({ length: 4 }, lane) // RATE_LIMIT_IN_FLIGHT_PER_TOKEN: its full concurrency
      await sleep(1000)
      const tf = performance.now()
      const under: number[] = []
      while (performance.now() - tf < fairSeconds * 1000) under.push(...(await cheap(10)))
      stop = true
      await Promise.all(lanes)
      const abused = p50(under)
      const ratio = abused / base
      fairness = {
        cheapRead: 'GET /api/v2/available-domains',
        abuse: `GET /api/v2/domains/{domain}/controllers?type=graph, 4 at a time for ${fairSeconds} s (${sent.ok} answered, ${sent.refused} refused with 429${sent.other ? `, ${sent.other} other` : ''})`,
        p50WithoutMs: +base.toFixed(2),
        p50WithMs: +abused.toFixed(2),
        ratio: +ratio.toFixed(2),
        samples: under.length,
        met: ratio <= BUDGETS.fairnessRatio,
      }
      log(`fairness: p50 ${fairness.p50WithoutMs} ms → ${fairness.p50WithMs} ms (${fairness.ratio}×)${fairness.met ? '' : '  FAIL'}`)
      await w.dispose()
      w = null
    }

    const loadEnd = os.loadavg().map((l) => +l.toFixed(2))
    const failed = worst.filter((r) => r.missed.length > 0).length + (fairness && !fairness.met ? 1 : 0)
    const result = { edges: g.edgeCount, nodes: g.nodes.length, budgets: BUDGETS, loadAverageStart: loadStart, loadAverageEnd: loadEnd, cpus: os.cpus().length, worst, fairness, failed }
    const md = [
      `| request | status | CPU + D1 s | wall ms | answer bytes | D1 statements | committed heap MiB (before → peak) | budgets |`,
      `|---|---:|---:|---:|---:|---:|---|---|`,
      ...worst.map(
        (r) =>
          `| ${r.request} | ${r.status} | ${r.cpuSeconds.toFixed(2)} | ${r.wallMs} | ${r.bytes} | ${r.statements} | ${r.baselineCommittedMiB} → ${r.peakCommittedMiB} | ${r.missed.length ? `**FAIL**: ${r.missed.join('; ')}` : 'met'} |`,
      ),
      ...(fairness
        ? [`| fairness: ${fairness.abuse}; normal caller's ${fairness.cheapRead} p50 | | | ${fairness.p50WithoutMs} → ${fairness.p50WithMs} | | | | ${fairness.met ? `met (${fairness.ratio}×, ≤ 3×)` : `**FAIL** (${fairness.ratio}× > 3×)`} |`]
        : []),
    ].join('\n')
    console.log(md)
    console.log(JSON.stringify(result, null, 2))
    log(`load average ${loadStart.join(' ')} → ${loadEnd.join(' ')} on ${os.cpus().length} CPUs; ${failed ? `${failed} FAILED` : 'every budget met'}`)
    mkdirSync(path.join(ROOT, 'bench', 'results'), { recursive: true })
    writeFileSync(path.join(ROOT, 'bench', 'results', 'cost-latest.json'), JSON.stringify({ at: new Date().toISOString(), ...result, markdown: md }, null, 2))
    return failed ? 2 : 0
  } catch (e) {
    if (w) console.error(`--- workerd stderr (last lines) ---\n${w.stderrTail()}`)
    throw e
  } finally {
    if (w) await w.dispose().catch(() => undefined)
    if (!keep) rmSync(dir, { recursive: true, force: true })
  }
}

main().then(
  (code) => process.exit(code),
  (e) => {
    console.error(e)
    process.exit(1)
  },
)
