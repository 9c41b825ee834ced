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
 *                  (saves the ingest while profiling; a fresh temporary directory otherwise); a reused
 *                  database first gets the migrations added since it was made (its marker file lists them)
 *   --profile A,B  CPU profiles (worker isolate and D1) of the matching queries, each after one unmeasured
 *                  answer, under bench/results/profiles/ (open them in Chrome DevTools → Performance)
 *   --end-job      end the upload job (which requests an analysis run) and wait for that run before the
 *                  queries. Off by default: every uploaded file is committed whole when it is received, so
 *                  the graph is complete without it, and the run would share the worker's isolate and D1
 *                  with the queries (at 1 M edges it held both for over 10 minutes on 2026-11-26, see
 *                  BENCHMARKS.md). Nothing the queries read depends on analysis: Tier Zero is decided
 *                  per node (src/assetgroups/tierzero.ts), there are no asset-group selectors.
 *   --heap-cap MiB V8's heap limit for workerd (default 128, the Workers isolate limit; 0 = none), through
 *                  workerd's config field v8Flags (`--max-heap-size`, young and old generations together;
 *                  bench/lib/workerd-v8-flags.ts: Miniflare sets no V8 flags itself)
 *   --cpu-budget-ms N  the CPU budget per query compared against (default 30000: Workers' paid default)
 *   --baseline DIR before / after in the same run (issue 28): DIR is a checkout of the older code (its own
 *                  node_modules, e.g. `git worktree add --detach DIR main` and a node_modules symlink); its build
 *                  and this checkout's answer the questions that have an in-memory floor (and kerberoastable users,
 *                  old passwords) on the same database, alternating builds round by round (a fresh worker each),
 *                  each question once unmeasured first; the served floor (below) once per round after both
 *                  builds; a table of before / after / floor / served floor p50 and p95, CPU and ratios; and two
 *                  runtime probes timed the same way on both builds (GET /health without a credential, a signed
 *                  `RETURN 1`: the fixed cost of any request on this runtime). Only that comparison runs (not the
 *                  other queries); --only narrows it
 *   --concurrent N afterwards, each near-limit query sent N times at once (the isolate serves them together:
 *                  their memory adds up); each must answer 200 or 400, then one plain query 200
 *
 * The queries run in a fresh isolate (the worker is restarted on the ingested database), sequentially.
 * Memory, the 128 MB isolate limit: workerd runs with V8's heap capped as production caps the isolate
 * (`--heap-cap`), so a query whose live heap would pass the cap makes V8 abort workerd ("Reached heap
 * limit"): the connection fails, the query is marked FAIL and the worker is restarted on the same
 * database. V8 collects everything it can before it gives up, so surviving the cap is the proof that the
 * query's live JS heap stayed under it; rerunning with a lower cap brackets each query's real peak.
 * ArrayBuffers are outside V8's cap; they are in the readings below. Per query the bench also reports
 * the isolate's heap (JS heap + ArrayBuffers, through workerd's inspector) after a forced full GC before
 * it and right after the answer (not collected: garbage included), and the rise of workerd's peak RSS
 * during it (kernel VmHWM, reset before the query; the whole process: every isolate and Miniflare's
 * SQLite). The inspector cannot sample during a request: workerd answers it only between requests.
 * Per query: wall time (send to last byte), `cpuMs` = CPU time of the workerd process during the query
 * (the isolate's JavaScript AND Miniflare's in-process SQLite: an upper bound on what the Workers CPU
 * limit counts, which excludes waiting on D1), compared against `--cpu-budget-ms`.
 * Exit status: 1 when the harness fails; 2 when a query (or a stress query) killed the worker, answered
 * 5xx, read a heap over 128 MiB after its answer or used more CPU than the budget (its row says FAIL);
 * 0 otherwise. A Markdown table of the verdicts goes to stderr at the end.
 *
 * Floors: the questions of compareCases (one-hop sessions, a count, ORDER BY … LIMIT, DISTINCT, a 2-hop pattern,
 * every kerberoastable user) are also answered in plain JavaScript over the generated graph (issue 28), and
 * the shortest-path queries are also answered by breadth-first search in plain JavaScript over
 * the same generated graph in this process (same sources, targets, relationship kinds and LIMIT;
 * adjacency built before the clock starts), and the report gives service ÷ floor. These compute floors only
 * COUNT the answer (a fraction of a millisecond): no presentation, no JSON, no HTTP.
 * Served floor (bench/lib/served-floor.ts), for the questions of compareCases: the bench answers each in memory
 * from the generated graph AND builds the answer the service gives for `include_properties: false` (BloodHound's
 * graph shape, the same rows: it walks in the service's internal id order, the ids read through Cypher before
 * anything is timed, and keys its nodes by them), JSON.stringify's it and serves it from a node:http server on
 * 127.0.0.1 in this process; the bench requests it with the same client, signed request and body as the service
 * and times it the same way (send to last byte). Before it is timed, once per question, its answer is compared
 * with the service's (node object ids as a set, relationships as source / target object id + kind multiset,
 * literals in order): a difference is printed (`served floor: ANSWER DIFFERS`) and marked in the report and the
 * tables. Reported as `servedFloor` (p50 / p95, bytes of both answers, service ÷ served floor) in each row of
 * the JSON and in the tables, next to the compute floor.
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
import { cpuSeconds, peakRssBytes, resetPeakRss, rssBytes } from './lib/proc'
import { adminCredentials, buildBundle, freePort, pendingMigrations, ROOT, startMiniflare, type HostedWorker } from './lib/worker-host'
import { answerDifference, SERVED_QUESTIONS, servedFloorAnswers, startServedFloor, type FloorAnswer } from './lib/served-floor'
import { relationshipKinds } from '../src/cypher/labels'
import { isTierZero } from '../src/assetgroups/tierzero'

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
  // many sources to few targets (issue 28: refused at 1 M edges in its independent measurement)
  ['all shortest paths, every user to Domain Admins', "MATCH p = allShortestPaths((u:User)-[:AD_ATTACK_PATHS*1..]->(g:Group)) WHERE g.objectid ENDS WITH '-512' RETURN p LIMIT 1000"],
  [
    'all shortest paths, every user to one Domain Admins group (no LIMIT)',
    "MATCH p = allShortestPaths((u:User)-[:MemberOf|AdminTo|HasSession|GenericAll|GenericWrite|WriteDacl|WriteOwner|Owns|ForceChangePassword|AddMember|AllExtendedRights*1..]->(g:Group {name: 'DOMAIN ADMINS@CORP.LOCAL'})) RETURN p",
  ],
  // the console's pre-built questions (ui/src/pages/explore/prebuilt-queries.ts) of the same shape
  ['console: shortest paths to Domain Admins', "MATCH p = shortestPath((n:Base)-[*1..]->(g:Group)) WHERE g.objectid ENDS WITH '-512' AND n <> g RETURN p LIMIT 1000"],
  ['console: shortest paths from Kerberoastable users', 'MATCH p = shortestPath((u:User)-[*1..]->(t:Tag_Tier_Zero)) WHERE u.hasspn = true AND u <> t RETURN p LIMIT 1000'],
  ['console: shortest paths to Tier Zero', 'MATCH p = shortestPath((n:Base)-[*1..]->(t:Tag_Tier_Zero)) WHERE NOT n:Tag_Tier_Zero RETURN p LIMIT 1000'],
]

const ONE_TO_ONE = 'shortest path from a user to Domain Admins'

/** --baseline: the fixed cost of a request on this runtime, timed with the questions (no floor; CPU not read) */
const PROBES: [string, string][] = [
  ['runtime: GET /health (no credential, no D1)', ''],
  ['runtime: RETURN 1 (signed Cypher request, no D1)', 'RETURN 1 AS x'],
]

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

/** The Workers isolate memory limit (128 MB; compared here as MiB, V8's unit, so 4.9 % more lenient). */
const HEAP_LIMIT_MIB = 128
/**
 * The Workers CPU budget per request compared against: the paid plan's default `limits.cpu_ms` (30 s;
 * wrangler.toml sets none). The figure compared is the CPU time of the whole workerd process during the
 * query (isolate + Miniflare's SQLite), an upper bound of what Workers counts (it excludes waiting on D1).
 */
const CPU_BUDGET_MS = 30_000

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

/** Inbound adjacency (reversed relationships) of some kinds (null: every kind). */
function reverseCsr(g: GenGraph, kinds: string[] | null): KindCsr {
  const want = new Uint8Array(g.edgeKinds.length)
  g.edgeKinds.forEach((k, i) => (want[i] = kinds === null || kinds.includes(k) ? 1 : 0))
  const n = g.nodes.length
  const offsets = new Int32Array(n + 1)
  for (let i = 0; i < g.edgeCount; i++) if (want[g.edgeKind[i]]) offsets[g.edgeEnd[i] + 1]++
  for (let i = 0; i < n; i++) offsets[i + 1] += offsets[i]
  const fill = offsets.slice(0, n)
  const targets = new Int32Array(offsets[n])
  for (let i = 0; i < g.edgeCount; i++) if (want[g.edgeKind[i]]) targets[fill[g.edgeEnd[i]]++] = g.edgeStart[i]
  return { offsets, targets }
}

/**
 * Many sources, few targets: one backward breadth-first search per target over `rev` (the reversed
 * relationships), in lockstep level by level (as the engine does), counting per level the shortest paths
 * (`all`: every one, by path counts; else one per reached source) from each source reached; stops once
 * `limit` paths exist. Returns the number of paths found.
 */
function backwardFloor(rev: KindCsr, n: number, targets: number[], isSource: Uint8Array, all: boolean, limit: number): number {
  const searches = targets.map((t) => {
    const depth = new Int32Array(n).fill(-1)
    const ways = new Float64Array(n)
    depth[t] = 0
    ways[t] = 1
    return { t, depth, ways, frontier: [t] }
  })
  let found = 0
  for (let d = 1; found < limit && searches.some((s) => s.frontier.length); d++)
    for (const s of searches) {
      const next: number[] = []
      for (const u of s.frontier)
        for (let j = rev.offsets[u], e = rev.offsets[u + 1]; j < e; j++) {
          const v = rev.targets[j]
          if (s.depth[v] === -1) {
            s.depth[v] = d
            next.push(v)
          }
          if (s.depth[v] === d) s.ways[v] += s.ways[u]
        }
      for (const v of next) if (isSource[v] && v !== s.t) found += all ? s.ways[v] : 1
      s.frontier = next
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
  // Tier Zero by the service's one rule (src/assetgroups/tierzero.ts); the generated graph has no selectors
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
  // many sources to few targets: backward searches from the targets
  const adBack = reverseCsr(g, relationshipKinds(['AD_ATTACK_PATHS']))
  const anyBack = reverseCsr(g, null)
  const isUser = Uint8Array.from(g.nodes, (x) => (x.kinds.includes('User') ? 1 : 0))
  const isBase = Uint8Array.from(g.nodes, (x) => (x.kinds.includes('Base') ? 1 : 0))
  const t0List = [...t0]
  const dasList = [...das]
  out.push({ name: 'all shortest paths, every user to Domain Admins', run: () => backwardFloor(adBack, g.nodes.length, dasList, isUser, true, 1000) })
  out.push({ name: 'console: shortest paths to Domain Admins', run: () => backwardFloor(anyBack, g.nodes.length, dasList, isBase, false, 1000) })
  const roastable = Uint8Array.from(g.nodes, (x, i) => (isUser[i] && x.properties.hasspn === true ? 1 : 0))
  out.push({ name: 'console: shortest paths from Kerberoastable users', run: () => backwardFloor(anyBack, g.nodes.length, t0List, roastable, false, 1000) })
  const notT0 = Uint8Array.from(g.nodes, (x, i) => (isBase[i] && !t0.has(i) ? 1 : 0))
  out.push({ name: 'console: shortest paths to Tier Zero', run: () => backwardFloor(anyBack, g.nodes.length, t0List, notT0, false, 1000) })
  return out
}

/**
 * Same-run comparison (issue 28): library-shaped questions, each with its in-memory floor — the same question
 * answered in plain JavaScript over the generated graph in this process (node arrays and per-kind adjacency
 * built before the clock starts, as for the shortest-path floors), so the report gives service ÷ floor per
 * question. `floor` returns the size of its answer (rows, or paths), printed next to the service's.
 * allShortestPaths from a set of users is LIBRARY's 'all shortest paths to Domain Admins' (floorCases).
 */
interface CompareCase {
  name: string
  query: string
  floor: () => number
}

function compareCases(g: GenGraph): CompareCase[] {
  const has = (kind: string) => Uint8Array.from(g.nodes, (x) => (x.kinds.includes(kind) ? 1 : 0))
  const isUser = has('User')
  const isComputer = has('Computer')
  const isGroup = has('Group')
  const users = g.nodes.flatMap((x, i) => (isUser[i] ? [i] : []))
  const computers = g.nodes.flatMap((x, i) => (isComputer[i] ? [i] : []))
  const prop = (i: number, k: string) => g.nodes[i].properties[k]
  const sessions = kindCsr(g, ['HasSession'])
  const memberOf = kindCsr(g, ['MemberOf'])
  const adminTo = kindCsr(g, ['AdminTo'])
  return [
    {
      name: 'one-hop sessions',
      query: 'MATCH p = (c:Computer)-[:HasSession]->(u:User) RETURN p LIMIT 1000',
      floor: () => {
        let found = 0
        for (const c of computers)
          for (let j = sessions.offsets[c]; j < sessions.offsets[c + 1]; j++) if (isUser[sessions.targets[j]] && ++found === 1000) return found
        return found
      },
    },
    {
      name: 'count of enabled users',
      query: 'MATCH (u:User) WHERE u.enabled = true RETURN count(u)',
      floor: () => {
        let c = 0
        for (const u of users) if (prop(u, 'enabled') === true) c++
        return c
      },
    },
    {
      name: 'ORDER BY … LIMIT (oldest passwords)',
      query: 'MATCH (u:User) WHERE u.enabled = true RETURN u.name, u.pwdlastset ORDER BY u.pwdlastset LIMIT 10',
      floor: () => {
        // top 10 by insertion into a sorted array of at most 10
        const top: [number, string][] = []
        for (const u of users) {
          if (prop(u, 'enabled') !== true) continue
          const t = prop(u, 'pwdlastset')
          if (typeof t !== 'number' || (top.length === 10 && t >= top[9][0])) continue
          let k = top.length
          while (k > 0 && top[k - 1][0] > t) k--
          top.splice(k, 0, [t, String(prop(u, 'name'))])
          if (top.length > 10) top.pop()
        }
        return top.length
      },
    },
    {
      name: 'DISTINCT operating systems',
      query: 'MATCH (c:Computer) RETURN DISTINCT c.operatingsystem',
      floor: () => new Set(computers.map((c) => prop(c, 'operatingsystem') ?? null)).size,
    },
    {
      name: '2-hop: user → group → computer',
      query: 'MATCH p = (u:User)-[:MemberOf]->(g:Group)-[:AdminTo]->(c:Computer) RETURN p LIMIT 100',
      floor: () => {
        let found = 0
        for (const u of users)
          for (let j = memberOf.offsets[u]; j < memberOf.offsets[u + 1]; j++) {
            const gr = memberOf.targets[j]
            if (!isGroup[gr]) continue
            for (let k = adminTo.offsets[gr]; k < adminTo.offsets[gr + 1]; k++) if (isComputer[adminTo.targets[k]] && ++found === 100) return found
          }
        return found
      },
    },
    {
      name: 'kerberoastable users, every one',
      query: 'MATCH (u:User) WHERE u.hasspn = true AND u.enabled = true RETURN u',
      floor: () => {
        let c = 0
        for (const u of users) if (prop(u, 'hasspn') === true && prop(u, 'enabled') === true) c++
        return c
      },
    },
  ]
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

/**
 * The service's internal id of every node, by object id, read through Cypher a page at a time (SKIP / LIMIT over
 * a label-free scan, which walks nodes in id order; a page past the end is BloodHound's 404 for an empty result),
 * untimed: the served floor walks in the service's order.
 */
async function serviceIds(api: BenchApi, expected: number, log: (m: string) => void): Promise<Map<string, number>> {
  const ids = new Map<string, number>()
  const page = 5000
  for (let skip = 0; ; skip += page) {
    const query = `MATCH (n) RETURN id(n) AS id, n.objectid AS objectid SKIP ${skip} LIMIT ${page}`
    const r = await api.timed<CypherBody>('POST', '/api/v2/graphs/cypher', JSON.stringify({ query, include_properties: false }), 'application/json')
    if (r.status === 404) break // BloodHound's answer to an empty result
    if (r.status !== 200) throw new ApiCallError('POST', '/api/v2/graphs/cypher', r)
    const lits = r.body!.data!.literals
    for (let i = 0; i + 1 < lits.length; i += 2) ids.set(String(lits[i + 1].value), Number(lits[i].value))
    if (lits.length < 2 * page) break
  }
  if (ids.size !== expected) log(`served floor: the service has ${ids.size} nodes, the generated graph ${expected}`)
  return ids
}

type CypherBody = {
  data?: { nodes: Record<string, { objectId: string; lastSeen: string }>; edges: { source: string; target: string; kind: string }[]; literals: { key: string; value: unknown }[] }
  errors?: { message: string }[]
}

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
      'heap-cap': { type: 'string', default: String(HEAP_LIMIT_MIB) },
      'cpu-budget-ms': { type: 'string', default: String(CPU_BUDGET_MS) },
      concurrent: { type: 'string', default: '0' },
      baseline: { type: 'string' },
    },
  })
  const wantedName = (n: string) => !values.only || values.only.split(',').some((o) => n.includes(o))
  const heapCap = Number(values['heap-cap'])
  const cpuBudgetMs = Number(values['cpu-budget-ms'])
  /**
   * What a query (all its runs) breached: the worker dying (under the heap cap: its heap would have passed
   * it), a 5xx, the heap read right after the answer over the limit (possible without a cap, or through
   * ArrayBuffers, which V8's cap does not count), workerd's CPU over the budget.
   */
  const verdicts = (statuses: Map<number | string, number>, peaks: number[], cpuMs: number[]): string[] => {
    const out: string[] = []
    if (statuses.get('died')) out.push(`worker died ${statuses.get('died')}×`)
    const fives = [...statuses].filter(([s]) => typeof s === 'number' && s >= 500)
    if (fives.length) out.push(`answered ${fives.map(([s, n]) => `${s} ×${n}`).join(', ')}`)
    if (peaks.length && Math.max(...peaks) > HEAP_LIMIT_MIB) out.push(`heap after the answer ${Math.max(...peaks)} MiB > ${HEAP_LIMIT_MIB}`)
    if (cpuMs.length && Math.max(...cpuMs) > cpuBudgetMs) out.push(`workerd CPU ${Math.round(Math.max(...cpuMs))} ms > ${cpuBudgetMs}`)
    return out
  }
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
  const compare = compareCases(g)
  LIBRARY.push(...compare.map((c): [string, string] => [c.name, c.query]))
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'edgehound-cypher-'))
  const stateDir = values.state ? path.resolve(values.state) : path.join(tmp, 'state')
  const marker = path.join(stateDir, 'edgehound-cypher-bench.json')
  const saved = existsSync(marker) ? (JSON.parse(readFileSync(marker, 'utf8')) as { edges: number; migrations?: string[] }) : null
  const reuse = saved?.edges === edges
  if (values.state && !reuse) rmSync(stateDir, { recursive: true, force: true })
  // A reused database gets the migrations added since it was made (e.g. an index): the marker lists those it has.
  // A marker without the list was written before it was kept (2026-11-29), when migrations 0001–0047 existed.
  const { all: allMigrations, applied, missing } = pendingMigrations(reuse, saved?.migrations ?? null, 47)
  if (reuse && missing.length) log(`applying to the reused database the migrations it lacks: ${missing.join(', ')}`)
  const bundle = await buildBundle(path.join(tmp, 'bundle'))
  const sourceMap = loadSourceMap(`${bundle}.map`)
  const inspectorPort = await freePort()
  // The production-like heap cap: V8 aborts workerd when the isolate's heap would pass it (reported as
  // FAIL below, then the worker is restarted). Every isolate of the process gets it (the flag is global).
  // --trace-gc (to workerd's stdout) tells which isolate an abort came from: V8 prefixes each line with the
  // isolate's address, and only the worker's isolate gets the heap snapshots of `measured` (reason "heap
  // profiler"); the abort's "Last few GCs" lines carry the dying isolate's address.
  const v8Flags = heapCap > 0 ? { flags: [`--max-heap-size=${heapCap}`, '--trace-gc'], scratchDir: tmp } : undefined
  const workerIsolates = new Set<string>()
  let gcTail = ''
  const onStdout = (d: Buffer) => {
    const text = gcTail + d.toString('utf8')
    const lines = text.split('\n')
    gcTail = lines.pop() ?? ''
    for (const l of lines) {
      const m = /^\[\d+:(0x[0-9a-f]+)\].*heap profiler/.exec(l)
      if (m) workerIsolates.add(m[1])
    }
  }
  log(heapCap > 0 ? `workerd runs with V8 flags ${v8Flags!.flags.join(' ')}` : 'no heap cap (--heap-cap 0)')
  const started0 = performance.now()
  let w: HostedWorker = await startMiniflare({ bundle, persistDir: stateDir, migrate: !reuse || missing.length > 0, applied, inspectorPort, v8Flags, onStdout })
  if (reuse && missing.length) {
    writeFileSync(marker, JSON.stringify({ edges, migrations: allMigrations }))
    log(`started and migrated in ${((performance.now() - started0) / 1000).toFixed(1)} s`)
  }
  let insp: Inspector | null = null
  // Miniflare's D1 runs in its own isolate of the same workerd (its heap gets the same cap, production's
  // D1 is elsewhere): read too, to tell which isolate a heap-cap abort came from.
  let d1Insp: Inspector | null = null
  const mib = (b: number) => Math.round((b / 1024 / 1024) * 10) / 10
  const heapGc = async () => {
    try {
      return insp ? mib((await insp.heapBytesAfterGc(60_000)).used) : null
    } catch (e) {
      log(`no heap-after-GC figure: ${(e as Error).message}`)
      return null
    }
  }
  let servedServer: { url: string; close: () => Promise<void> } | null = null
  let servedApi: BenchApi | null = null
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
      writeFileSync(marker, JSON.stringify({ edges, migrations: allMigrations }))
    } else {
      tokens = JSON.parse(readFileSync(path.join(stateDir, 'tokens.json'), 'utf8')) as TokenCred[]
      log(`reusing the ingested database in ${stateDir}`)
    }
    // A fresh isolate on the ingested database: the queries should not inherit the ingest's heap.
    if (!reuse) {
      await w.dispose()
      w = await startMiniflare({ bundle, persistDir: stateDir, migrate: false, inspectorPort, v8Flags, onStdout })
    }
    // The served floor (bench/lib/served-floor.ts) of the wanted compareCases questions: the service's node ids
    // and a lastSeen read through Cypher (untimed), the answers built in memory and served from this process.
    const servedCases = compare.filter((c) => wantedName(c.name) && (SERVED_QUESTIONS as readonly string[]).includes(c.name))
    if (servedCases.length) {
      const api0 = new BenchApi(w.url, tokens)
      const ids = await serviceIds(api0, g.nodes.length, log)
      const one = await api0.ok<CypherBody>('POST', '/api/v2/graphs/cypher', JSON.stringify({ query: 'MATCH (u:User) RETURN u LIMIT 1', include_properties: false }), 'application/json')
      const lastSeen = Object.values(one.body!.data!.nodes)[0].lastSeen
      const answers = servedFloorAnswers(g, ids, lastSeen)
      servedServer = await startServedFloor(new Map(servedCases.map((c): [string, () => FloorAnswer] => [c.query, answers[c.name as keyof typeof answers]])))
      servedApi = new BenchApi(servedServer.url, tokens)
      log(`served floor at ${servedServer.url} for: ${servedCases.map((c) => c.name).join(', ')}`)
    }
    const servedSend = (query: string) => servedApi!.timed<CypherBody>('POST', '/api/v2/graphs/cypher', JSON.stringify({ query, include_properties: false }), 'application/json')
    /**
     * The served floor's answer to `query` compared with the service's answers (`bodies`, by label), before the
     * floor is timed (this request is not measured): null when every one is the same answer, else what differs.
     */
    const servedCheck = async (name: string, query: string, bodies: [string, Timed<CypherBody> | null][]) => {
      const r = await servedSend(query)
      const differences = bodies.map(([label, s]) => [label, s?.status !== 200 ? `the service answered ${s?.status ?? 'nothing'}` : r.status !== 200 ? `the served floor answered ${r.status}: ${r.text.slice(0, 160)}` : answerDifference(s.body, r.body)] as const).filter(([, d]) => d !== null)
      const bytes = Buffer.byteLength(r.text)
      const serviceBytes = bodies.map(([label, s]) => `${label} ${s ? Buffer.byteLength(s.text) : '–'}`).join(', ')
      if (differences.length)
        for (const [label, d] of differences) log(`served floor: ANSWER DIFFERS from the service's (${label}) for '${name}': ${d}`)
      else log(`served floor: same answer as the service for '${name}' (${bytes} bytes; service: ${serviceBytes})`)
      return { same: differences.length === 0, difference: differences.map(([label, d]) => `${label}: ${d}`).join(' | ') || null, bytes, status: r.status }
    }
    // --baseline DIR: before / after in the same run (issue 28), the older checkout's build and this one
    // alternating on the same database (a fresh worker per build and round, the order swapped every round;
    // one unmeasured warm-up answer per question and worker), each against its in-memory floor.
    let ab: Record<string, unknown>[] | null = null
    let abTable = ''
    if (values.baseline) {
      await w.dispose()
      const baseRoot = path.resolve(values.baseline)
      const builds = [
        { label: 'before', bundle: await buildBundle(path.join(tmp, 'baseline-bundle'), baseRoot) },
        { label: 'after', bundle },
      ]
      const abFloors = new Map<string, () => number>([
        ...compare.map((c): [string, () => number] => [c.name, c.floor]),
        ...floorCases(g, null, [onePath[0], onePath[onePath.length - 1]]).map((f): [string, () => number] => [f.name, f.run]),
      ])
      const abCases = LIBRARY.filter(([name]) => abFloors.has(name) || name === 'kerberoastable users' || name === 'old passwords').filter(([n]) => wantedName(n))
      type Seen = { ms: number[]; cpu: number[]; statuses: Map<number, number>; answer: string; plan: string; last: Timed<CypherBody> | null }
      const seen = new Map<string, Seen>()
      // the served floor per question: checked once (after round 1's builds), then timed once per round
      const servedAb = new Map<string, { ms: number[]; check: Awaited<ReturnType<typeof servedCheck>> }>()
      for (let round = 0; round < runs; round++)
        for (const b of round % 2 ? [...builds].reverse() : builds) {
          const wb = await startMiniflare({ bundle: b.bundle, persistDir: stateDir, migrate: false, v8Flags, onStdout })
          try {
            const apiB = new BenchApi(wb.url, tokens)
            await apiB.ok('GET', '/api/v2/self')
            for (const [name, query] of abCases) {
              const sendB = () => apiB.timed<CypherBody>('POST', '/api/v2/graphs/cypher', JSON.stringify({ query, include_properties: false }), 'application/json')
              await sendB()
              const cpu0 = cpuSeconds(wb.pids())
              const r = await sendB()
              const cpuMs = (cpuSeconds(wb.pids()) - cpu0) * 1000
              const key = `${b.label}|${name}`
              const x: Seen = seen.get(key) ?? { ms: [], cpu: [], statuses: new Map(), answer: '', plan: '', last: null }
              x.last = r
              x.ms.push(r.ms)
              x.cpu.push(cpuMs)
              x.statuses.set(r.status, (x.statuses.get(r.status) ?? 0) + 1)
              x.answer =
                r.status === 200
                  ? `${Object.keys(r.body!.data!.nodes).length} nodes, ${r.body!.data!.edges.length} edges, ${r.body!.data!.literals.length} literals`
                  : `${r.status}: ${(r.body?.errors?.[0]?.message ?? r.text).slice(0, 100)}`
              x.plan = r.headers.get('x-cypher-plan') ?? ''
              seen.set(key, x)
            }
            // the fixed cost of any request on this runtime, measured the same way: an unauthenticated GET /health
            // (Miniflare's entry worker, routing, the IP's bucket) and a signed Cypher query reading nothing
            for (const [name, probe] of PROBES) {
              const once = async (): Promise<{ ms: number; status: number }> => {
                if (probe) return apiB.timed<CypherBody>('POST', '/api/v2/graphs/cypher', JSON.stringify({ query: probe, include_properties: false }), 'application/json')
                const t0 = performance.now()
                const res = await fetch(`${wb.url}/health`)
                await res.text()
                return { ms: performance.now() - t0, status: res.status }
              }
              await once()
              const r = await once()
              const key = `${b.label}|${name}`
              const x: Seen = seen.get(key) ?? { ms: [], cpu: [], statuses: new Map(), answer: '', plan: '', last: null }
              x.ms.push(r.ms)
              x.cpu.push(0)
              x.statuses.set(r.status, (x.statuses.get(r.status) ?? 0) + 1)
              x.answer = String(r.status)
              seen.set(key, x)
            }
          } finally {
            await wb.dispose()
          }
          log(`A/B round ${round + 1}/${runs}: ${b.label} done`)
          if (b === (round % 2 ? builds[0] : builds[1]))
            for (const [name, query] of abCases) {
              if (!servedCases.some((c) => c.name === name)) continue
              let x = servedAb.get(name)
              if (!x) {
                x = { ms: [], check: await servedCheck(name, query, builds.map((bb): [string, Timed<CypherBody> | null] => [bb.label, seen.get(`${bb.label}|${name}`)?.last ?? null])) }
                servedAb.set(name, x)
              }
              x.ms.push((await servedSend(query)).ms)
            }
        }
      for (const x of seen.values()) x.last = null
      const r3 = (x: number) => Math.round(x * 1000) / 1000
      const floorRaw = new Map<string, number>()
      ab = [...abCases, ...PROBES].map(([name, query]) => {
        const floor = abFloors.get(name)
        let floorStats: { p50: number; p95: number; answer: number } | null = null
        if (floor) {
          for (let i = 0; i < 3; i++) floor()
          const ms: number[] = []
          let answer = 0
          for (let i = 0; i < Math.max(runs, 5); i++) {
            const t0 = performance.now()
            answer = floor()
            ms.push(performance.now() - t0)
          }
          floorRaw.set(name, pct(ms, 50))
          floorStats = { p50: r3(pct(ms, 50)), p95: r3(pct(ms, 95)), answer }
        }
        const side = (label: string) => {
          const x = seen.get(`${label}|${name}`)!
          return { p50: Math.round(pct(x.ms, 50)), p95: Math.round(pct(x.ms, 95)), cpuMsP50: Math.round(pct(x.cpu, 50)), statuses: Object.fromEntries(x.statuses), answer: x.answer, plan: x.plan.slice(0, 300), ratioP50: floorStats ? Math.round(pct(x.ms, 50) / Math.max(floorRaw.get(name)!, 0.001)) : null }
        }
        const sv = servedAb.get(name)
        const servedFloor = sv
          ? {
              p50: r3(pct(sv.ms, 50)),
              p95: r3(pct(sv.ms, 95)),
              bytes: sv.check.bytes,
              answer: sv.check.same ? 'same as the service' : `DIFFERS: ${sv.check.difference}`,
              ratioP50Before: Math.round((pct(seen.get(`before|${name}`)!.ms, 50) / pct(sv.ms, 50)) * 10) / 10,
              ratioP50After: Math.round((pct(seen.get(`after|${name}`)!.ms, 50) / pct(sv.ms, 50)) * 10) / 10,
            }
          : null
        return { name, query, before: side('before'), after: side('after'), floor: floorStats, servedFloor }
      })
      type Side = { p50: number; p95: number; cpuMsP50: number; answer: string; ratioP50: number | null; plan: string }
      type Served = { p50: number; p95: number; answer: string; ratioP50Before: number; ratioP50After: number } | null
      abTable = [
        `before = ${baseRoot}, after = this checkout; ${runs} rounds, alternating; ms = wall time, CPU = workerd process CPU; floor = the same question in plain JavaScript in the bench process (counts the answer); served floor = the same answer built in memory, JSON.stringify'd and served over HTTP by the bench process (same client and request; once per round)`,
        '',
        '| question | before p50 / p95 ms | after p50 / p95 ms | CPU ms p50 before / after | floor p50 / p95 ms | ÷ floor before / after | served floor p50 / p95 ms | ÷ served floor before / after | answer before / after (floor) | plan after |',
        '|---|---:|---:|---:|---:|---:|---:|---:|---|---|',
        ...ab.map((x) => {
          const b = x.before as Side
          const a = x.after as Side
          const f = x.floor as { p50: number; p95: number; answer: number } | null
          const sf = x.servedFloor as Served
          const sfDiffers = sf && sf.answer !== 'same as the service' ? ' (ANSWER DIFFERS)' : ''
          return `| ${x.name} | ${b.p50} / ${b.p95} | ${a.p50} / ${a.p95} | ${b.cpuMsP50} / ${a.cpuMsP50} | ${f ? `${f.p50} / ${f.p95}` : '–'} | ${f ? `${b.ratioP50} / ${a.ratioP50}` : '–'} | ${sf ? `${sf.p50} / ${sf.p95}` : '–'} | ${sf ? `${sf.ratioP50Before} / ${sf.ratioP50After}${sfDiffers}` : '–'} | ${b.answer} / ${a.answer === b.answer ? 'same' : a.answer}${f ? ` (${f.answer})` : ''} | ${a.plan.slice(0, 120).replace(/\|/g, '\\|')} |`
        }),
      ].join('\n')
      log(`A/B comparison:\n${abTable}`)
      w = await startMiniflare({ bundle, persistDir: stateDir, migrate: false, inspectorPort, v8Flags, onStdout })
    }
    let api = new BenchApi(w.url, tokens)
    await api.ok('GET', '/api/v2/self')
    try {
      insp = await Inspector.connect(inspectorPort, 'core:user:edgehound')
      d1Insp = await Inspector.connect(inspectorPort, 'd1:db').catch(() => null)
    } catch (e) {
      log(`no heap figures: ${(e as Error).message}`)
    }
    const heapStart = await heapGc()
    log(`heap after GC before the queries: ${heapStart} MiB`)
    const send = (query: string, include = false) =>
      api.timed<CypherBody>('POST', '/api/v2/graphs/cypher', JSON.stringify({ query, include_properties: include }), 'application/json')
    const crashes: { query: string; stderr: string }[] = []
    /**
     * One query, measured. Before it: a full GC (a heap snapshot; the reading after starts from live data)
     * and workerd's peak RSS reset. After it: the isolate's heap (`used` = JS heap + ArrayBuffers, not
     * collected: garbage included) and `committed` (reserved heap + ArrayBuffers; V8 gives it back
     * lazily) read through the inspector, and workerd's peak RSS during the query from the kernel (VmHWM:
     * the whole process, every isolate, Miniflare's SQLite included). The inspector cannot sample DURING
     * a request: workerd answers its commands only between requests (polling every 5 ms gave exactly one
     * sample before and one after each query, whatever its length), so the isolate's own peak is bounded
     * by the heap cap instead (`--heap-cap`). A connection that fails is the worker dying (under the cap:
     * V8's "heap out of memory" abort): reported, and the worker restarted on the same database.
     */
    const measured = async (query: string, include = false, copies = 1) => {
      const base = insp ? await insp.heapBytesAfterGc(60_000).catch(() => null) : null
      const rss0 = rssBytes(w.pids())
      const rssReset = resetPeakRss(w.pids())
      const cpu0 = cpuSeconds(w.pids())
      let r: Timed<CypherBody> | null = null
      let rs: Timed<CypherBody>[] = []
      let died: string | null = null
      try {
        // `copies` > 1: the same query sent that many times at once (requests served concurrently by the isolate)
        rs = await Promise.all(Array.from({ length: copies }, () => send(query, include)))
        r = rs[0]
      } catch (e) {
        const code = (e as { cause?: { code?: string } }).cause?.code
        died = `${(e as Error).message}${code ? ` (${code})` : ''}`
      }
      const cpuMs = (cpuSeconds(w.pids()) - cpu0) * 1000
      const rssPeak = rssReset ? peakRssBytes(w.pids()) : NaN
      const after = !died && insp ? await insp.heapBytes().catch(() => null) : null
      const d1After = !died && d1Insp ? await d1Insp.heapBytes().catch(() => null) : null
      if (died) {
        const stderr = w.stderrTail()
        const oom = /heap out of memory|Reached heap limit/i.test(stderr)
        const lastGcs = stderr.slice(stderr.lastIndexOf('Last few GCs'))
        const dying = /\[\d+:(0x[0-9a-f]+)\]/.exec(lastGcs)?.[1]
        const which = !dying ? '' : workerIsolates.has(dying) ? ' in the worker\'s isolate' : workerIsolates.size ? ` in another isolate (${dying}: Miniflare's, e.g. its D1)` : ''
        died = oom ? `worker died: V8 heap limit (${heapCap} MiB) reached${which}` : `worker stopped answering: ${died}`
        crashes.push({ query, stderr: stderr.slice(-1500) })
        log(`${died}; runtime stderr: ${stderr.slice(-600)}`)
        insp?.close()
        insp = null
        await w.dispose().catch(() => undefined)
        w = await startMiniflare({ bundle, persistDir: stateDir, migrate: false, inspectorPort, v8Flags, onStdout })
        api = new BenchApi(w.url, tokens)
        await api.ok('GET', '/api/v2/self')
        insp = await Inspector.connect(inspectorPort, 'core:user:edgehound').catch(() => null)
        d1Insp?.close()
        d1Insp = await Inspector.connect(inspectorPort, 'd1:db').catch(() => null)
        log('worker restarted on the same database')
      }
      return {
        r,
        rs,
        died,
        cpuMs,
        baseMiB: base ? mib(base.used) : null,
        afterMiB: after ? mib(after.used) : null,
        committedMiB: after ? mib(after.committed) : null,
        d1HeapAfterMiB: d1After ? mib(d1After.used) : null,
        rssPeakMiB: Number.isFinite(rssPeak) ? mib(rssPeak) : null,
        rssRiseMiB: Number.isFinite(rssPeak) && Number.isFinite(rss0) ? mib(rssPeak - rss0) : null,
      }
    }
    const describe = (r: Timed<CypherBody>) =>
      r.status === 200
        ? `${Object.keys(r.body!.data!.nodes).length} nodes, ${r.body!.data!.edges.length} edges, ${r.body!.data!.literals.length} literals`
        : (r.body?.errors?.[0]?.message ?? r.text).slice(0, 140)

    // The floor's input read from the service (untimed): the first user by internal id.
    const first = await send('MATCH (u:User) RETURN u LIMIT 1')
    const firstUser = first.status === 200 ? Object.values(first.body!.data!.nodes)[0].objectId : null
    log(`floor input: first user ${firstUser}`)
    const floors = new Map(floorCases(g, firstUser, [onePath[0], onePath[onePath.length - 1]]).map((f) => [f.name, f]))
    for (const c of compare) floors.set(c.name, { name: c.name, run: c.floor })

    const wanted = wantedName
    const profiled = (n: string) => values.profile !== undefined && values.profile.split(',').some((o) => n.includes(o))
    const results: Record<string, unknown>[] = []
    const profiles: Record<string, ProfileSummary[]> = {}
    // with --baseline the run is the A/B comparison above only
    for (const [name, query] of (ab ? [] : [...LIBRARY, ...HOSTILE]).filter(([n]) => wanted(n))) {
      const hostile = HOSTILE.some(([n]) => n === name)
      const times: number[] = []
      const cpu: number[] = []
      const heaps: number[] = []
      const committed: number[] = []
      const bases: number[] = []
      const rssRise: number[] = []
      const perRun: Record<string, unknown>[] = []
      const statuses = new Map<number | string, number>()
      let detail = ''
      let plan = ''
      let lastOk: Timed<CypherBody> | null = null
      for (let i = 0; i < (hostile ? Number(values['hostile-runs']) : runs); i++) {
        if (i === 0 && profiled(name)) {
          // Profiled runs are not measured (the profilers change time and heap); one more run replaces it. One
          // unmeasured answer first: a profile of the query's first run showed its code's first compilation
          // (20 of the 2-hop chain's ~40 ms of CPU at 100 k edges were in one frame, gone on later runs).
          try {
            await send(query)
            profiles[name] = await captureProfiles(inspectorPort, `cypher-${edges}-${name.replace(/[^a-z0-9]+/gi, '-')}`, () => send(query), path.join(ROOT, 'bench', 'results'), sourceMap, insp ?? undefined, { d1: d1Insp ?? undefined })
          } catch (e) {
            log(`${name}: profiled run failed: ${(e as Error).message}`)
          }
        }
        const m = await measured(query)
        cpu.push(m.cpuMs)
        if (m.afterMiB !== null) heaps.push(m.afterMiB)
        if (m.committedMiB !== null) committed.push(m.committedMiB)
        if (m.baseMiB !== null) bases.push(m.baseMiB)
        if (m.rssRiseMiB !== null) rssRise.push(m.rssRiseMiB)
        perRun.push({ status: m.r?.status ?? 'died', ms: m.r ? Math.round(m.r.ms) : null, cpuMs: Math.round(m.cpuMs), heapBeforeMiB: m.baseMiB, heapAfterMiB: m.afterMiB, d1HeapAfterMiB: m.d1HeapAfterMiB, rssRiseMiB: m.rssRiseMiB })
        if (m.died || !m.r) {
          statuses.set('died', (statuses.get('died') ?? 0) + 1)
          detail = m.died ?? 'no answer'
          continue
        }
        times.push(m.r.ms)
        statuses.set(m.r.status, (statuses.get(m.r.status) ?? 0) + 1)
        detail = describe(m.r)
        plan = m.r.headers.get('x-cypher-plan') ?? ''
        if (m.r.status === 200) lastOk = m.r
      }
      const breaches = verdicts(statuses, heaps, cpu)
      const row: Record<string, unknown> = {
        name,
        hostile,
        p50: times.length ? Math.round(pct(times, 50)) : null,
        p95: times.length ? Math.round(pct(times, 95)) : null,
        max: times.length ? Math.round(Math.max(...times)) : null,
        cpuMsP50: Math.round(pct(cpu, 50)),
        cpuMsMax: Math.round(Math.max(...cpu)),
        statuses: Object.fromEntries(statuses),
        heapBeforeMiB: bases.length ? Math.max(...bases) : null,
        heapAfterMiB: heaps.length ? Math.max(...heaps) : null,
        committedAfterMiB: committed.length ? Math.max(...committed) : null,
        rssRiseMiB: rssRise.length ? Math.max(...rssRise) : null,
        verdict: breaches.length ? `FAIL: ${breaches.join('; ')}` : 'ok',
        answer: detail,
        plan: plan.slice(0, 400),
        runs: perRun,
      }
      const floor = floors.get(name)
      if (floor && times.length) {
        for (let i = 0; i < 3; i++) floor.run() // warm-up, as the service has had its first run
        const ms: number[] = []
        let paths = 0
        for (let i = 0; i < runs; i++) {
          const t0 = performance.now()
          paths = floor.run()
          ms.push(performance.now() - t0)
        }
        row.floor = { p50: Math.round(pct(ms, 50) * 100) / 100, p95: Math.round(pct(ms, 95) * 100) / 100, paths, ratioP50: Math.round((pct(times, 50) / pct(ms, 50)) * 10) / 10 }
      }
      // the served floor: checked against the service's last answer (that request unmeasured), then timed `runs` times
      if (times.length && servedCases.some((c) => c.name === name)) {
        const check = await servedCheck(name, query, [['service', lastOk]])
        const ms: number[] = []
        for (let i = 0; i < runs; i++) ms.push((await servedSend(query)).ms)
        row.servedFloor = {
          p50: Math.round(pct(ms, 50) * 100) / 100,
          p95: Math.round(pct(ms, 95) * 100) / 100,
          bytes: check.bytes,
          serviceBytes: lastOk ? Buffer.byteLength(lastOk.text) : null,
          answer: check.same ? 'same as the service' : `DIFFERS: ${check.difference}`,
          ratioP50: Math.round((pct(times, 50) / pct(ms, 50)) * 10) / 10,
        }
      }
      log(JSON.stringify(row))
      results.push(row)
    }
    const stress: Record<string, unknown>[] = []
    for (let round = 0; round < Number(values.stress); round++)
      for (const [name, query] of [...NEAR_LIMIT, ...HOSTILE.slice(0, 3)])
        for (const include of [false, true]) {
          const m = await measured(query, include)
          const r = m.r
          const status: number | string = r ? r.status : 'died'
          const breaches = verdicts(new Map([[status, 1]]), m.afterMiB === null ? [] : [m.afterMiB], [m.cpuMs])
          const entry = {
            round,
            name,
            include_properties: include,
            status,
            ms: r ? Math.round(r.ms) : null,
            cpuMs: Math.round(m.cpuMs),
            heapAfterMiB: m.afterMiB,
            committedAfterMiB: m.committedMiB,
            rssRiseMiB: m.rssRiseMiB,
            d1HeapAfterMiB: m.d1HeapAfterMiB,
            verdict: breaches.length ? `FAIL: ${breaches.join('; ')}` : 'ok',
            answer: !r ? m.died : r.status === 200 ? 'ok' : (r.body?.errors?.[0]?.message ?? r.text).slice(0, 90),
          }
          log(JSON.stringify(entry))
          stress.push(entry)
        }
    // --concurrent N: each near-limit query sent N times at once; the isolate serves them together, so
    // their memory adds up (src/cypher/budget.ts ISOLATE_POOL bounds the total): each must answer 200 or
    // 400, never a 5xx nor a dead worker.
    const copies = Number(values.concurrent)
    if (copies > 1)
      for (const [name, query] of NEAR_LIMIT) {
        const m = await measured(query, false, copies)
        const statuses = m.died ? ['died'] : m.rs.map((x) => x.status)
        const bad = m.died ? [`worker died (${m.died})`] : statuses.some((x) => typeof x === 'number' && x >= 500) ? ['a 5xx'] : []
        const entry = {
          round: 'concurrent',
          name: `${copies} at once: ${name}`,
          include_properties: false,
          status: statuses.join('/'),
          ms: m.rs.length ? Math.round(Math.max(...m.rs.map((x) => x.ms))) : null,
          cpuMs: Math.round(m.cpuMs),
          heapAfterMiB: m.afterMiB,
          committedAfterMiB: m.committedMiB,
          rssRiseMiB: m.rssRiseMiB,
          d1HeapAfterMiB: m.d1HeapAfterMiB,
          verdict: bad.length ? `FAIL: ${bad.join('; ')}` : 'ok',
          answer: m.died ?? m.rs.map((x) => (x.status === 200 ? 'ok' : (x.body?.errors?.[0]?.message ?? x.text).slice(0, 70))).join(' | '),
        }
        log(JSON.stringify(entry))
        stress.push(entry)
      }
    if (stress.length) {
      const alive = await send('MATCH (u:User) RETURN u LIMIT 1')
      log(`after ${stress.length} stress queries: max heap after ${Math.max(...stress.map((x) => (x.heapAfterMiB as number) ?? 0))} MiB, max ms ${Math.max(...stress.map((x) => (x.ms as number) ?? 0))}, statuses ${JSON.stringify(stress.reduce<Record<string, number>>((a, x) => ((a[String(x.status)] = (a[String(x.status)] ?? 0) + 1), a), {}))}, then a plain query: ${alive.status}`)
      stress.push({ name: 'plain query after the stress rounds', status: alive.status, verdict: alive.status === 200 ? 'ok' : `FAIL: answered ${alive.status}` })
    }
    const heapEnd = await heapGc()
    log(`heap after GC at the end: ${heapEnd} MiB`)
    const lib = results.filter((r) => !r.hostile && r.p50 !== null)
    const summary = lib.length
      ? { libraryP50OfP50s: pct(lib.map((r) => r.p50 as number), 50), worstP50: Math.max(...lib.map((r) => r.p50 as number)), worstP95: Math.max(...lib.map((r) => r.p95 as number)) }
      : {}
    const failed = [...results, ...stress].filter((r) => String(r.verdict).startsWith('FAIL')).length
    const method = `${heapCap > 0 ? `workerd with V8 --max-heap-size=${heapCap} (a query whose heap would pass it kills the worker: FAIL)` : 'workerd without a heap cap'}; heap = isolate's JS heap + ArrayBuffers after a forced GC before the query and right after the answer (not collected); RSS rise = workerd's peak RSS during the query (kernel VmHWM, whole process) minus its RSS before; max over runs`
    const table = [
      `${method}; budgets: ${HEAP_LIMIT_MIB} MiB, ${cpuBudgetMs} ms workerd CPU per query`,
      '',
      '| query | statuses | p50 ms | CPU ms max | heap before MiB | heap after MiB | committed after MiB | RSS rise MiB | floor p50 ms (÷) | served floor p50 / p95 ms | ÷ served floor | verdict |',
      '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|',
      ...results.map((r) => {
        const f = r.floor as { p50: number; ratioP50: number } | undefined
        const sf = r.servedFloor as { p50: number; p95: number; ratioP50: number; answer: string } | undefined
        return `| ${r.hostile ? 'hostile: ' : ''}${r.name} | ${Object.entries(r.statuses as Record<string, number>).map(([k, n]) => `${k} ×${n}`).join(', ')} | ${r.p50 ?? '–'} | ${r.cpuMsMax} | ${r.heapBeforeMiB ?? '–'} | ${r.heapAfterMiB ?? '–'} | ${r.committedAfterMiB ?? '–'} | ${r.rssRiseMiB ?? '–'} | ${f ? `${f.p50} (${f.ratioP50})` : '–'} | ${sf ? `${sf.p50} / ${sf.p95}` : '–'} | ${sf ? `${sf.ratioP50}${sf.answer.startsWith('DIFFERS') ? ' (ANSWER DIFFERS)' : ''}` : '–'} | ${r.verdict} |`
      }),
      ...(stress.length
        ? [
            `| stress (${stress.length - 1} queries) | ${Object.entries(stress.filter((x) => x.round !== undefined).reduce<Record<string, number>>((a, x) => ((a[String(x.status)] = (a[String(x.status)] ?? 0) + 1), a), {})).map(([k, n]) => `${k} ×${n}`).join(', ')} | – | ${Math.max(...stress.map((x) => (x.cpuMs as number) ?? 0))} | – | ${Math.max(...stress.map((x) => (x.heapAfterMiB as number) ?? 0))} | ${Math.max(...stress.map((x) => (x.committedAfterMiB as number) ?? 0))} | ${Math.max(...stress.map((x) => (x.rssRiseMiB as number) ?? 0))} | – | – | – | ${stress.some((x) => String(x.verdict).startsWith('FAIL')) ? 'FAIL' : 'ok'} |`,
          ]
        : []),
    ].join('\n')
    const report = {
      command: `npm run bench:cypher -- ${process.argv.slice(2).join(' ')}`.trim(),
      started: started.toISOString(),
      finished: new Date().toISOString(),
      loadAverage: { start: loadStart, end: load() },
      cores: os.cpus().length,
      nodes: g.nodes.length,
      edges: g.edgeCount,
      runs,
      heapCapMiB: heapCap > 0 ? heapCap : null,
      cpuBudgetMs,
      heapMethod: method,
      failed,
      crashes,
      heapStart,
      heapEnd,
      summary,
      results,
      profiles,
      stress,
      ab,
    }
    log(`load average at the end: ${report.loadAverage.end.join(' ')}; ${JSON.stringify(summary)}`)
    const outDir = path.join(ROOT, 'bench', 'results')
    mkdirSync(outDir, { recursive: true })
    writeFileSync(path.join(outDir, `cypher-${edges}-${started.toISOString().replace(/[:.]/g, '-')}.json`), JSON.stringify(report, null, 2))
    console.log(JSON.stringify(report, null, 2))
    console.error(`\n${table}\n${abTable ? `\n${abTable}\n` : ''}`)
    log(failed ? `${failed} FAILED (worker died, 5xx, heap over ${HEAP_LIMIT_MIB} MiB or CPU over budget)` : 'every query within the heap and CPU budgets')
    return failed ? 2 : 0
  } finally {
    insp?.close()
    d1Insp?.close()
    await servedServer?.close()
    await w.dispose()
    rmSync(tmp, { recursive: true, force: true })
  }
}

main().then(
  (code) => process.exit(code),
  (e) => {
    console.error(e)
    process.exit(1)
  },
)
