/// <reference types="node" />
/**
 * Cypher benchmark (issue 14): the generated benchmark graph (bench/lib/generate.ts) ingested through
 * the public API, then library-shaped queries (EdgeHound's own, with their LIMITs) and hostile ones
 * through POST /api/v2/graphs/cypher, each several times: p50 / p95 latency and the statuses seen.
 *
 *   tsx --experimental-websocket bench/cypher.ts [--edges 200000] [--runs 5] [--stress 20]
 *
 * Reads the isolate's heap through workerd's inspector (as the main bench does) after every query:
 * `heapMiB` is the live heap + ArrayBuffers then (what the isolate still holds; the 128 MB limit is on
 * it), and the heap after a full collection at the start and at the end. `--stress N` then sends the
 * hostile and near-limit queries N times in a row and checks the worker still answers a plain query.
 *
 * Not part of `npm run bench` (it would add an ingest per size); run it on its own.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { BenchApi } from './lib/api'
import { createTokens, login, benchIp } from './lib/credentials'
import { generateGraph, openGraphPayloads } from './lib/generate'
import { Inspector } from './lib/inspector'
import { adminCredentials, buildBundle, freePort, startMiniflare } from './lib/worker-host'

/** [name, query] — the shapes of the public query library, written for this benchmark. */
const LIBRARY: [string, string][] = [
  ['domain admins (var-length to -512)', "MATCH p = (n:Base)-[:MemberOf*1..]->(g:Group) WHERE g.objectid ENDS WITH '-512' RETURN p LIMIT 1000"],
  ['kerberoastable users', 'MATCH (u:User) WHERE u.hasspn = true AND u.enabled = true RETURN u LIMIT 100'],
  ['Tier Zero (Sentinel)', "MATCH (n) WHERE (n:Tag_Tier_Zero) OR coalesce(n.system_tags, '') CONTAINS 'admin_tier_0' RETURN n"],
  ['sessions of Tier Zero users', 'MATCH p = (c:Computer)-[:HasSession]->(u:User) WHERE u:Tag_Tier_Zero RETURN p LIMIT 1000'],
  ['old passwords', 'MATCH (u:User) WHERE u.enabled = true AND u.pwdlastset < (datetime().epochseconds - (365 * 86400)) RETURN u LIMIT 100'],
  ['name regex', "MATCH (n:Base) WHERE n.name =~ '(?i)svc0001.*' RETURN n LIMIT 100"],
  ['shortest paths to Tier Zero from one user', "MATCH (u:User) WITH u LIMIT 1 MATCH p = shortestPath((u)-[:AD_ATTACK_PATHS*1..]->(t:Tag_Tier_Zero)) RETURN p LIMIT 10"],
  ['all shortest paths to Domain Admins', "MATCH p = allShortestPaths((u:User)-[:MemberOf|AdminTo|HasSession*1..]->(g:Group)) WHERE g.objectid ENDS WITH '-512' AND u.name STARTS WITH 'SVC00001' RETURN p LIMIT 100"],
  ['admin rights of a group', "MATCH p = (g:Group)-[:AdminTo]->(c:Computer) RETURN p LIMIT 500"],
  ['largest groups', 'MATCH (g:Group)<-[:MemberOf]-(m) WITH g, count(m) AS c RETURN g.name, c ORDER BY c DESC LIMIT 10'],
  ['users without groups', 'MATCH (u:User) WHERE NOT (u)-[:MemberOf]->() RETURN u LIMIT 100'],
  ['Azure attack paths', 'MATCH p = (:AZUser)-[:AZ_ATTACK_PATHS*1..2]->(:AZBase) RETURN p LIMIT 100'],
  ['optional sessions', 'MATCH (c:Computer) OPTIONAL MATCH (c)-[:HasSession]->(u:User) RETURN c.name, count(u) LIMIT 100'],
  ['ACL edges to Tier Zero', 'MATCH p = (n)-[:GenericAll|GenericWrite|WriteDacl|WriteOwner|Owns]->(t:Tag_Tier_Zero) RETURN p LIMIT 500'],
]

const HOSTILE: [string, string][] = [
  ['unbounded [*] over everything', 'MATCH p = (a)-[*]-(b) RETURN p'],
  ['5-way cartesian product', 'MATCH (a), (b), (c), (d), (e) RETURN count(*)'],
  ['catastrophic regex', "MATCH (n) WHERE n.name =~ '(a+)+$' RETURN n"],
  ['5,000 nested parentheses', `RETURN ${'('.repeat(5_000)}1${')'.repeat(5_000)}`],
  ['200 KB query', `MATCH (n) WHERE n.name = '${'x'.repeat(200_000)}' RETURN n`],
]

/** Queries that run up to a budget (steps, rows, time or memory), sent again and again by --stress. */
const NEAR_LIMIT: [string, string][] = [
  ['unbounded walk, count', 'MATCH p = (a)-[*1..]->(b) RETURN count(p)'],
  ['every path, returned', 'MATCH p = (a)-[*]-(b) RETURN p'],
  ['walk reading relationship properties', 'MATCH p = (a)-[r*1..]->(b) WHERE ALL(x IN r WHERE x.isacl IS NULL OR x.isacl <> 1) RETURN count(p)'],
  ['everything with properties', 'MATCH (a)-[r]->(b) RETURN a, r, b'],
  ['shortest paths, every user to Tier Zero', 'MATCH p = shortestPath((u:User)-[:AD_ATTACK_PATHS*1..]->(t:Tag_Tier_Zero)) RETURN p'],
  ['shortest paths to Tier Zero from one user', "MATCH (u:User) WITH u LIMIT 1 MATCH p = shortestPath((u)-[:AD_ATTACK_PATHS*1..]->(t:Tag_Tier_Zero)) RETURN p LIMIT 10"],
]

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]
}

async function main() {
  const { values } = parseArgs({
    options: { edges: { type: 'string', default: '200000' }, runs: { type: 'string', default: '5' }, only: { type: 'string' }, stress: { type: 'string', default: '0' } },
  })
  const edges = Number(values.edges)
  const runs = Number(values.runs)
  const log = (m: string) => console.error(`[cypher ${edges}] ${m}`)
  const g = generateGraph({ edges })
  log(`generated ${g.nodes.length} nodes / ${g.edgeCount} edges`)
  const dir = mkdtempSync(path.join(os.tmpdir(), 'edgehound-cypher-'))
  const bundle = await buildBundle(path.join(dir, 'bundle'))
  const w = await startMiniflare({ bundle, persistDir: path.join(dir, 'state'), migrate: true, inspectorPort: await freePort() })
  let insp: Inspector | null = null
  const mib = (b: number) => Math.round((b / 1024 / 1024) * 10) / 10
  const heap = async () => (insp ? mib((await insp.heapBytes()).used) : null)
  const heapGc = async () => (insp ? mib((await insp.heapBytesAfterGc()).used) : null)
  try {
    const { username, password } = adminCredentials()
    const jwt = await login(w.url, username, password, benchIp(11, 172))
    const api = new BenchApi(w.url, await createTokens(w.url, jwt, 2, 'cypher'))
    const job = (await api.ok<{ data: { id: number } }>('POST', '/api/v2/file-upload/start')).body!.data.id
    let t = performance.now()
    for (const p of openGraphPayloads(g, 20_000)) {
      const r = await api.timed('POST', `/api/v2/file-upload/${job}`, p.text, 'application/json')
      if (r.status !== 202 && r.status !== 200) throw new Error(`upload: ${r.status} ${r.text.slice(0, 300)}`)
    }
    await api.ok('POST', `/api/v2/file-upload/${job}/end`)
    log(`ingested in ${((performance.now() - t) / 1000).toFixed(1)} s`)
    try {
      insp = await Inspector.connect(w.inspectorPort!, 'core:user:edgehound')
    } catch (e) {
      log(`no heap figures: ${(e as Error).message}`)
    }
    const heapStart = await heapGc()
    log(`heap after GC before the queries: ${heapStart} MiB`)
    const send = (query: string, include = false) =>
      api.timed<{ data?: { nodes: object; edges: unknown[]; literals: unknown[] }; errors?: { message: string }[] }>(
        'POST',
        '/api/v2/graphs/cypher',
        JSON.stringify({ query, include_properties: include }),
        'application/json',
      )

    const results: Record<string, unknown>[] = []
    for (const [name, query] of [...LIBRARY, ...HOSTILE].filter(([n]) => !values.only || values.only!.split(',').some((o) => n.includes(o)))) {
      const times: number[] = []
      const heaps: number[] = []
      const statuses = new Map<number, number>()
      let detail = ''
      for (let i = 0; i < (HOSTILE.some(([n]) => n === name) ? 2 : runs); i++) {
        let r
        try {
          r = await send(query)
        } catch (e) {
          throw new Error(`${name}: the worker stopped answering (${(e as Error).message}); runtime stderr: ${w.stderrTail().slice(-1500)}`)
        }
        times.push(r.ms)
        const h = await heap()
        if (h !== null) heaps.push(h)
        statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1)
        detail =
          r.status === 200
            ? `${Object.keys(r.body!.data!.nodes).length} nodes, ${r.body!.data!.edges.length} edges, ${r.body!.data!.literals.length} literals`
            : (r.body?.errors?.[0]?.message ?? r.text).slice(0, 120)
      }
      const row = { name, p50: Math.round(pct(times, 50)), p95: Math.round(pct(times, 95)), statuses: Object.fromEntries(statuses), heapMiB: heaps.length ? Math.max(...heaps) : null, answer: detail }
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
    console.log(JSON.stringify({ nodes: g.nodes.length, edges: g.edgeCount, runs, heapStart, heapEnd, results, stress }, null, 2))
  } finally {
    insp?.close()
    await w.dispose()
    rmSync(dir, { recursive: true, force: true })
  }
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})
