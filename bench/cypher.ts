/// <reference types="node" />
/**
 * Cypher benchmark (issue 14): the generated benchmark graph (bench/lib/generate.ts) ingested through
 * the public API, then library-shaped queries (EdgeHound's own, with their LIMITs) and hostile ones
 * through POST /api/v2/graphs/cypher, each several times: p50 / p95 latency and the statuses seen.
 *
 *   npm run bench:cypher                      # the 100 k-node / 1 M-edge graph (the goal's size), 5 runs
 *   npm run bench:cypher -- --edges 50000     # develop at a small size first
 *
 * Flags:
 *   --edges N      relationships of the generated graph (nodes ≈ N / 10); default 1000000
 *   --runs N       repetitions of each library query (hostile ones: --hostile-runs, default 2); default 5
 *   --only A,B     only the queries whose name contains one of these
 *   --stress N     afterwards, N rounds of the hostile and near-limit queries (with and without
 *                  include_properties), then one plain query that must still answer
 *   --state DIR    keep the ingested database in DIR and reuse it when DIR already holds the same size
 *                  (saves the ingest while profiling; a fresh temporary directory otherwise)
 *   --profile A,B  CPU profiles (worker isolate and D1) of the first run of the matching queries, under
 *                  bench/results/profiles/ (open them in Chrome DevTools → Performance)
 *   --end-job      end the upload job (which requests an analysis run) and wait for that run before the
 *                  queries. Off by default: every uploaded file is committed whole when it is received, so
 *                  the graph is complete without it, and the run would share the worker's isolate and D1
 *                  with the queries (at 1 M edges it held both for over 10 minutes on 2026-11-26, see
 *                  BENCHMARKS.md). Nothing the queries read depends on analysis: Tier Zero is decided
 *                  per node (src/findings/tierzero.ts), there are no asset-group selectors.
 *
 * The queries run in a fresh isolate (the worker is restarted on the ingested database), sequentially.
 * Per query: wall time (send to last byte), `cpuMs` = CPU time of the workerd process during the query
 * (the isolate's JavaScript AND Miniflare's in-process SQLite: an upper bound on what the Workers CPU
 * limit counts, which excludes waiting on D1), and `heapMiB` = the isolate's live heap + ArrayBuffers
 * read through workerd's inspector right after the answer, without a collection (garbage included; the
 * 128 MB limit is on the isolate's memory). Heap after a full collection at the start and at the end.
 *
 * Floors: the shortest-path queries are also answered by breadth-first search in plain JavaScript over
 * the same generated graph in this process (same sources, targets, relationship kinds and LIMIT;
 * adjacency built before the clock starts), and the report gives service ÷ floor.
 *
 * Not part of `npm run bench` (it would add an ingest per size); run it on its own. Writes the JSON
 * report to stdout and to bench/results/cypher-<edges>-<time>.json; progress goes to stderr.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { ApiCallError, BenchApi, type Timed } from './lib/api'
import { createTokens, login, benchIp, type TokenCred } from './lib/credentials'
import { generateGraph, openGraphPayloads, type GenGraph } from './lib/generate'
import { captureProfiles, Inspector, loadSourceMap, type ProfileSummary } from './lib/inspector'
import { cpuSeconds } from './lib/proc'
import { adminCredentials, buildBundle, freePort, ROOT, startMiniflare, type HostedWorker } from './lib/worker-host'
import { relationshipKinds } from '../src/cypher/labels'
import { isTierZero } from '../src/findings/tierzero'

/** [name, query] — the shapes of the public query library, written for this benchmark. */
const LIBRARY: [string, string][] = [
  ['domain admins (var-length to -512)', "MATCH p = (n:Base)-[:MemberOf*1..]->(g:Group) WHERE g.objectid ENDS WITH '-512' RETURN p LIMIT 1000"],
  ['kerberoastable users', 'MATCH (u:User) WHERE u.hasspn = true AND u.enabled = true RETURN u LIMIT 100'],
  ['Tier Zero (Sentinel)', "MATCH (n) WHERE (n:Tag_Tier_Zero) OR coalesce(n.system_tags, '') CONTAINS 'admin_tier_0' RETURN n"],
  ['sessions of Tier Zero users', 'MATCH p = (c:Computer)-[:HasSession]->(u:User) WHERE u:Tag_Tier_Zero RETURN p LIMIT 1000'],
  ['old passwords', 'MATCH (u:User) WHERE u.enabled = true AND u.pwdlastset < (datetime().epochseconds - (365 * 86400)) RETURN u LIMIT 100'],
  ['name regex', "MATCH (n:Base) WHERE n.name =~ '(?i)svc0001.*' RETURN n LIMIT 100"],
  ['shortest paths to Tier Zero from one user', 'MATCH (u:User) WITH u LIMIT 1 MATCH p = shortestPath((u)-[:AD_ATTACK_PATHS*1..]->(t:Tag_Tier_Zero)) RETURN p LIMIT 10'],
  ['all shortest paths to Domain Admins', "MATCH p = allShortestPaths((u:User)-[:AD_ATTACK_PATHS*1..]->(g:Group)) WHERE g.objectid ENDS WITH '-512' AND u.name STARTS WITH 'USER00000' RETURN p LIMIT 100"],
  ['admin rights of a group', 'MATCH p = (g:Group)-[:AdminTo]->(c:Computer) RETURN p LIMIT 500'],
  ['largest groups', 'MATCH (g:Group)<-[:MemberOf]-(m) WITH g, count(m) AS c RETURN g.name, c ORDER BY c DESC LIMIT 10'],
  ['users without groups', 'MATCH (u:User) WHERE NOT (u)-[:MemberOf]->() RETURN u LIMIT 100'],
  ['Azure attack paths', 'MATCH p = (:AZUser)-[:AZ_ATTACK_PATHS*1..2]->(:AZBase) RETURN p LIMIT 100'],
  ['optional sessions', 'MATCH (c:Computer) OPTIONAL MATCH (c)-[:HasSession]->(u:User) RETURN c.name, count(u) LIMIT 100'],
  ['ACL edges to Tier Zero', 'MATCH p = (n)-[:GenericAll|GenericWrite|WriteDacl|WriteOwner|Owns]->(t:Tag_Tier_Zero) RETURN p LIMIT 500'],
]

const ONE_TO_ONE = 'shortest path from a user to Domain Admins'

/** Refused or bounded within 2 s each (issue 14). */
const HOSTILE: [string, string][] = [
  ['unbounded [*] over everything', 'MATCH p = (a)-[*]-(b) RETURN p'],
  ['5-way cartesian product', 'MATCH (a), (b), (c), (d), (e) RETURN count(*)'],
  ['catastrophic regex: nested quantifier', "MATCH (n) WHERE n.name =~ '(a+)+$' RETURN n"],
  ['catastrophic regex: quantified alternation', "MATCH (n) WHERE n.name =~ '(.|.)*!' RETURN n"],
  ['catastrophic regex: many stars', "MATCH (n) WHERE n.name =~ '.*.*.*.*.*.*.*.*.*.*!' RETURN n"],
  ['5,000 nested parentheses', `RETURN ${'('.repeat(5_000)}1${')'.repeat(5_000)}`],
  ['1 MB query', `MATCH (n) WHERE n.name = '${'x'.repeat(1_048_576)}' RETURN n`],
]

/** Queries that run up to a budget (steps, rows, time or memory), sent again and again by --stress. */
const NEAR_LIMIT: [string, string][] = [
  ['unbounded walk, count', 'MATCH p = (a)-[*1..]->(b) RETURN count(p)'],
  ['every path, returned', 'MATCH p = (a)-[*]-(b) RETURN p'],
  ['walk reading relationship properties', 'MATCH p = (a)-[r*1..]->(b) WHERE ALL(x IN r WHERE x.isacl IS NULL OR x.isacl <> 1) RETURN count(p)'],
  ['everything with properties', 'MATCH (a)-[r]->(b) RETURN a, r, b'],
  ['shortest paths, every user to Tier Zero', 'MATCH p = shortestPath((u:User)-[:AD_ATTACK_PATHS*1..]->(t:Tag_Tier_Zero)) RETURN p'],
  ['shortest paths to Tier Zero from one user', 'MATCH (u:User) WITH u LIMIT 1 MATCH p = shortestPath((u)-[:AD_ATTACK_PATHS*1..]->(t:Tag_Tier_Zero)) RETURN p LIMIT 10'],
]

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]
}

const load = () => os.loadavg().map((l) => Math.round(l * 100) / 100)

// ---- in-memory shortest-path floor ------------------------------------------------------------------------

/** Adjacency (outbound) restricted to some relationship kinds, with each edge's kind kept. */
interface KindCsr {
  offsets: Int32Array
  targets: Int32Array
}

function kindCsr(g: GenGraph, kinds: string[] | null): KindCsr {
  const want = new Uint8Array(g.edgeKinds.length)
  g.edgeKinds.forEach((k, i) => (want[i] = kinds === null || kinds.includes(k) ? 1 : 0))
  const n = g.nodes.length
  const offsets = new Int32Array(n + 1)
  for (let i = 0; i < g.edgeCount; i++) if (want[g.edgeKind[i]]) offsets[g.edgeStart[i] + 1]++
  for (let i = 0; i < n; i++) offsets[i + 1] += offsets[i]
  const fill = offsets.slice(0, n)
  const targets = new Int32Array(offsets[n])
  for (let i = 0; i < g.edgeCount; i++) if (want[g.edgeKind[i]]) targets[fill[g.edgeStart[i]]++] = g.edgeEnd[i]
  return { offsets, targets }
}

/**
 * Multi-target breadth-first search from each source, levels kept whole (as the engine does), stopping
 * once `limit` paths exist or every target is reached. `all`: count every shortest path to each target
 * (allShortestPaths), else one per target (shortestPath). Returns the number of paths found.
 */
function bfsFloor(csr: KindCsr, n: number, sources: number[], targets: Set<number>, all: boolean, limit: number): number {
  const depth = new Int32Array(n)
  const ways = new Float64Array(n)
  let found = 0
  for (const s of sources) {
    depth.fill(-1)
    ways.fill(0)
    depth[s] = 0
    ways[s] = 1
    let frontier = [s]
    let left = targets.size - (targets.has(s) ? 1 : 0)
    for (let d = 1; frontier.length && left > 0 && found < limit; d++) {
      const next: number[] = []
      for (const u of frontier)
        for (let j = csr.offsets[u], e = csr.offsets[u + 1]; j < e; j++) {
          const v = csr.targets[j]
          if (depth[v] === -1) {
            depth[v] = d
            next.push(v)
          }
          if (depth[v] === d) ways[v] += ways[u]
        }
      for (const v of next)
        if (targets.has(v)) {
          left--
          found += all ? ways[v] : 1
        }
      frontier = next
    }
    if (found >= limit) return limit
  }
  return Math.min(found, limit)
}

interface FloorCase {
  /** LIBRARY name */
  name: string
  run: () => number
}

function floorCases(g: GenGraph, firstUser: string | null, one: [number, number]): FloorCase[] {
  const index = new Map(g.nodes.map((n, i) => [n.objectid, i]))
  const out: FloorCase[] = []
  const ad = kindCsr(g, relationshipKinds(['AD_ATTACK_PATHS']))
  // Tier Zero by the service's one rule (src/findings/tierzero.ts); the generated graph has no selectors
  const t0 = new Set(
    g.nodes.flatMap((n, i) =>
      isTierZero({ objectid: n.objectid, kind: n.kinds[0], kinds: n.kinds, systemTags: n.properties.system_tags, isTierZero: n.properties.isTierZero ?? n.properties.istierzero, templateid: n.properties.templateid })
        ? [i]
        : [],
    ),
  )
  if (firstUser !== null && index.has(firstUser)) {
    const s = index.get(firstUser)!
    out.push({ name: 'shortest paths to Tier Zero from one user', run: () => bfsFloor(ad, g.nodes.length, [s], t0, false, 10) })
  }
  out.push({ name: ONE_TO_ONE, run: () => bfsFloor(ad, g.nodes.length, [one[0]], new Set([one[1]]), false, 1) })
  const users = g.nodes.flatMap((n, i) => (n.kinds.includes('User') && String(n.properties.name ?? '').startsWith('USER00000') ? [i] : []))
  const das = new Set(g.nodes.flatMap((n, i) => (n.kinds.includes('Group') && n.objectid.endsWith('-512') ? [i] : [])))
  out.push({ name: 'all shortest paths to Domain Admins', run: () => bfsFloor(ad, g.nodes.length, users, das, true, 100) })
  return out
}

/**
 * The ingest's end requests an analysis run, which runs in the worker's isolate (Analyzer object): the
 * queries must not share the isolate with it. Joins that run (POST /api/v2/analysis returns the pending
 * one) and waits until it is complete or failed.
 */
async function waitForAnalysis(api: BenchApi, log: (m: string) => void): Promise<void> {
  const t = performance.now()
  const seconds = () => (performance.now() - t) / 1000
  // A request may wait minutes while the run holds the database (undici gives up after 300 s): retried.
  const patiently = async <T>(call: () => Promise<T>): Promise<T> => {
    for (;;) {
      try {
        return await call()
      } catch (e) {
        if (e instanceof ApiCallError || seconds() > 30 * 60) throw e
        log(`analysis: no answer yet after ${seconds().toFixed(0)} s (${(e as Error).message}); asking again`)
      }
    }
  }
  const id = (await patiently(() => api.ok<{ data: { id: number } }>('POST', '/api/v2/analysis'))).body!.data.id
  let last = 0
  for (;;) {
    const run = (await patiently(() => api.ok<{ data: { status: string; error?: string | null } }>('GET', `/api/v2/analysis/${id}`))).body!.data
    const s = seconds()
    if (run.status === 'complete' || run.status === 'failed') {
      log(`analysis run ${id} ${run.status} after ${s.toFixed(1)} s${run.error ? `: ${run.error}` : ''}`)
      return
    }
    if (s - last > 30) {
      log(`analysis run ${id} still ${run.status} after ${s.toFixed(0)} s`)
      last = s
    }
    if (s > 30 * 60) throw new Error(`analysis run ${id} still ${run.status} after 30 minutes`)
    await new Promise((r) => setTimeout(r, 1000))
  }
}

// ---- the run ------------------------------------------------------------------------------------------------

type CypherBody = { data?: { nodes: Record<string, { objectId: string }>; edges: unknown[]; literals: unknown[] }; errors?: { message: string }[] }

async function main() {
  const { values } = parseArgs({
    options: {
      edges: { type: 'string', default: '1000000' },
      runs: { type: 'string', default: '5' },
      'hostile-runs': { type: 'string', default: '2' },
      only: { type: 'string' },
      stress: { type: 'string', default: '0' },
      state: { type: 'string' },
      profile: { type: 'string' },
      'end-job': { type: 'boolean', default: false },
    },
  })
  const edges = Number(values.edges)
  const runs = Number(values.runs)
  const started = new Date()
  const loadStart = load()
  const log = (m: string) => console.error(`[cypher ${edges}] ${m}`)
  log(`load average at the start: ${loadStart.join(' ')}`)
  const g = generateGraph({ edges })
  log(`generated ${g.nodes.length} nodes / ${g.edgeCount} edges`)
  // One to one, the library's most common shortest-path shape: a user of a deliberate Tier Zero path
  // (bench/lib/generate.ts: helpdesk member → Administrator → Domain Admins) to its Domain Admins group.
  const onePath = g.tierZeroPaths[0].nodes
  const oneSource = String(g.nodes[onePath[0]].properties.name)
  const oneTarget = g.nodes[onePath[onePath.length - 1]].objectid
  LIBRARY.splice(7, 0, [ONE_TO_ONE, `MATCH p = shortestPath((u:User)-[:AD_ATTACK_PATHS*1..]->(g:Group)) WHERE u.name = '${oneSource}' AND g.objectid = '${oneTarget}' RETURN p`])
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'edgehound-cypher-'))
  const stateDir = values.state ? path.resolve(values.state) : path.join(tmp, 'state')
  const marker = path.join(stateDir, 'edgehound-cypher-bench.json')
  const reuse = existsSync(marker) && (JSON.parse(readFileSync(marker, 'utf8')) as { edges: number }).edges === edges
  if (values.state && !reuse) rmSync(stateDir, { recursive: true, force: true })
  const bundle = await buildBundle(path.join(tmp, 'bundle'))
  const sourceMap = loadSourceMap(`${bundle}.map`)
  const inspectorPort = await freePort()
  let w: HostedWorker = await startMiniflare({ bundle, persistDir: stateDir, migrate: !reuse, inspectorPort })
  let insp: Inspector | null = null
  const mib = (b: number) => Math.round((b / 1024 / 1024) * 10) / 10
  const heap = async () => (insp ? mib((await insp.heapBytes()).used) : null)
  const heapGc = async () => {
    try {
      return insp ? mib((await insp.heapBytesAfterGc(60_000)).used) : null
    } catch (e) {
      log(`no heap-after-GC figure: ${(e as Error).message}`)
      return null
    }
  }
  try {
    const { username, password } = adminCredentials()
    let tokens: TokenCred[]
    if (!reuse) {
      const jwt = await login(w.url, username, password, benchIp(11, 172))
      tokens = await createTokens(w.url, jwt, 2, 'cypher')
      const api = new BenchApi(w.url, tokens)
      const job = (await api.ok<{ data: { id: number } }>('POST', '/api/v2/file-upload/start')).body!.data.id
      const t = performance.now()
      for (const p of openGraphPayloads(g, 20_000)) {
        const r = await api.timed('POST', `/api/v2/file-upload/${job}`, p.text, 'application/json')
        if (r.status !== 202 && r.status !== 200) throw new Error(`upload: ${r.status} ${r.text.slice(0, 300)}`)
      }
      if (values['end-job']) {
        await api.ok('POST', `/api/v2/file-upload/${job}/end`)
        log(`ingested in ${((performance.now() - t) / 1000).toFixed(1)} s`)
        await waitForAnalysis(api, log)
      } else log(`ingested in ${((performance.now() - t) / 1000).toFixed(1)} s (job ${job} left running: no analysis run)`)
      writeFileSync(path.join(stateDir, 'tokens.json'), JSON.stringify(tokens))
      writeFileSync(marker, JSON.stringify({ edges }))
    } else {
      tokens = JSON.parse(readFileSync(path.join(stateDir, 'tokens.json'), 'utf8')) as TokenCred[]
      log(`reusing the ingested database in ${stateDir}`)
    }
    // A fresh isolate on the ingested database: the queries should not inherit the ingest's heap.
    if (!reuse) {
      await w.dispose()
      w = await startMiniflare({ bundle, persistDir: stateDir, migrate: false, inspectorPort })
    }
    const api = new BenchApi(w.url, tokens)
    await api.ok('GET', '/api/v2/self')
    try {
      insp = await Inspector.connect(inspectorPort, 'core:user:edgehound')
    } catch (e) {
      log(`no heap figures: ${(e as Error).message}`)
    }
    const heapStart = await heapGc()
    log(`heap after GC before the queries: ${heapStart} MiB`)
    const send = (query: string, include = false) =>
      api.timed<CypherBody>('POST', '/api/v2/graphs/cypher', JSON.stringify({ query, include_properties: include }), 'application/json')
    const describe = (r: Timed<CypherBody>) =>
      r.status === 200
        ? `${Object.keys(r.body!.data!.nodes).length} nodes, ${r.body!.data!.edges.length} edges, ${r.body!.data!.literals.length} literals`
        : (r.body?.errors?.[0]?.message ?? r.text).slice(0, 140)

    // The floor's input read from the service (untimed): the first user by internal id.
    const first = await send('MATCH (u:User) RETURN u LIMIT 1')
    const firstUser = first.status === 200 ? Object.values(first.body!.data!.nodes)[0].objectId : null
    log(`floor input: first user ${firstUser}`)
    const floors = new Map(floorCases(g, firstUser, [onePath[0], onePath[onePath.length - 1]]).map((f) => [f.name, f]))

    const wanted = (n: string) => !values.only || values.only.split(',').some((o) => n.includes(o))
    const profiled = (n: string) => values.profile !== undefined && values.profile.split(',').some((o) => n.includes(o))
    const results: Record<string, unknown>[] = []
    const profiles: Record<string, ProfileSummary[]> = {}
    for (const [name, query] of [...LIBRARY, ...HOSTILE].filter(([n]) => wanted(n))) {
      const hostile = HOSTILE.some(([n]) => n === name)
      const times: number[] = []
      const cpu: number[] = []
      const heaps: number[] = []
      const statuses = new Map<number, number>()
      let detail = ''
      let plan = ''
      for (let i = 0; i < (hostile ? Number(values['hostile-runs']) : runs); i++) {
        let r: Timed<CypherBody> | undefined
        const cpu0 = cpuSeconds(w.pids())
        try {
          if (i === 0 && profiled(name))
            profiles[name] = await captureProfiles(inspectorPort, `cypher-${edges}-${name.replace(/[^a-z0-9]+/gi, '-')}`, async () => (r = await send(query)), path.join(ROOT, 'bench', 'results'), sourceMap, insp ?? undefined)
          else r = await send(query)
        } catch (e) {
          throw new Error(`${name}: the worker stopped answering (${(e as Error).message}); runtime stderr: ${w.stderrTail().slice(-1500)}`)
        }
        cpu.push((cpuSeconds(w.pids()) - cpu0) * 1000)
        times.push(r!.ms)
        const h = await heap()
        if (h !== null) heaps.push(h)
        statuses.set(r!.status, (statuses.get(r!.status) ?? 0) + 1)
        detail = describe(r!)
        plan = r!.headers.get('x-cypher-plan') ?? ''
      }
      const row: Record<string, unknown> = {
        name,
        hostile,
        p50: Math.round(pct(times, 50)),
        p95: Math.round(pct(times, 95)),
        max: Math.round(Math.max(...times)),
        cpuMsP50: Math.round(pct(cpu, 50)),
        cpuMsMax: Math.round(Math.max(...cpu)),
        statuses: Object.fromEntries(statuses),
        heapMiB: heaps.length ? Math.max(...heaps) : null,
        answer: detail,
        plan: plan.slice(0, 400),
      }
      const floor = floors.get(name)
      if (floor) {
        for (let i = 0; i < 3; i++) floor.run() // warm-up, as the service has had its first run
        const ms: number[] = []
        let paths = 0
        for (let i = 0; i < runs; i++) {
          const t0 = performance.now()
          paths = floor.run()
          ms.push(performance.now() - t0)
        }
        row.floor = { p50: Math.round(pct(ms, 50) * 100) / 100, paths, ratioP50: Math.round((pct(times, 50) / pct(ms, 50)) * 10) / 10 }
      }
      log(JSON.stringify(row))
      results.push(row)
    }
    const stress: Record<string, unknown>[] = []
    for (let round = 0; round < Number(values.stress); round++)
      for (const [name, query] of [...NEAR_LIMIT, ...HOSTILE.slice(0, 3)])
        for (const include of [false, true]) {
          let r
          try {
            r = await send(query, include)
          } catch (e) {
            throw new Error(`stress round ${round}, ${name}: the worker stopped answering (${(e as Error).message}); runtime stderr: ${w.stderrTail().slice(-1500)}`)
          }
          const h = await heap()
          const entry = { round, name, include_properties: include, status: r.status, ms: Math.round(r.ms), heapMiB: h, answer: r.status === 200 ? 'ok' : (r.body?.errors?.[0]?.message ?? r.text).slice(0, 90) }
          if (round === 0 || r.status >= 500) log(JSON.stringify(entry))
          stress.push(entry)
          if (r.status >= 500) throw new Error(`stress: ${name} answered ${r.status}`)
        }
    if (stress.length) {
      const alive = await send('MATCH (u:User) RETURN u LIMIT 1')
      log(`after ${stress.length} stress queries: max heap ${Math.max(...stress.map((x) => (x.heapMiB as number) ?? 0))} MiB, max ms ${Math.max(...stress.map((x) => x.ms as number))}, statuses ${JSON.stringify(stress.reduce<Record<number, number>>((a, x) => ((a[x.status as number] = (a[x.status as number] ?? 0) + 1), a), {}))}, then a plain query: ${alive.status}`)
    }
    const heapEnd = await heapGc()
    log(`heap after GC at the end: ${heapEnd} MiB`)
    const lib = results.filter((r) => !r.hostile)
    const summary = lib.length
      ? { libraryP50OfP50s: pct(lib.map((r) => r.p50 as number), 50), worstP50: Math.max(...lib.map((r) => r.p50 as number)), worstP95: Math.max(...lib.map((r) => r.p95 as number)) }
      : {}
    const report = {
      command: `npm run bench:cypher -- ${process.argv.slice(2).join(' ')}`.trim(),
      started: started.toISOString(),
      finished: new Date().toISOString(),
      loadAverage: { start: loadStart, end: load() },
      cores: os.cpus().length,
      nodes: g.nodes.length,
      edges: g.edgeCount,
      runs,
      heapStart,
      heapEnd,
      summary,
      results,
      profiles,
      stress,
    }
    log(`load average at the end: ${report.loadAverage.end.join(' ')}; ${JSON.stringify(summary)}`)
    const outDir = path.join(ROOT, 'bench', 'results')
    mkdirSync(outDir, { recursive: true })
    writeFileSync(path.join(outDir, `cypher-${edges}-${started.toISOString().replace(/[:.]/g, '-')}.json`), JSON.stringify(report, null, 2))
    console.log(JSON.stringify(report, null, 2))
  } finally {
    insp?.close()
    await w.dispose()
    rmSync(tmp, { recursive: true, force: true })
  }
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})
