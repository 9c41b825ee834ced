/// <reference types="node" />
/**
 * Asset-group rules benchmark: the time an analysis run spends evaluating one Cypher rule
 * (src/assetgroups/rules.ts evaluateRules: the whole graph, and each environment as its own scope), over the
 * same number of nodes split into 1 and into 50 environments (bench/lib/rules-graph.ts).
 *
 *   npm run bench:rules -- [--nodes 20000] [--environments 1,50] [--runs 7]
 *
 * Rules: `EA members`, the issue 24 rule (members of any Enterprise Admins group, nested), which selects in the
 * forest root and the three domains whose users are members across the trust; `DA members` (members of any Domain
 * Admins group), which selects in every domain; `DA members LIMIT` the same with a LIMIT (not monotone, so every
 * environment is evaluated on its own whatever the whole graph's answer).
 * Per rule and environment count: one warm-up evaluation, then `--runs` timed ones (wall time of the bench request
 * POST /__bench/rules that runs evaluateRules once, sent from this process; the worker runs alone), the CPU time of
 * the runtime's processes during it (the isolate and Miniflare's SQLite: less sensitive than wall time to other
 * load on the machine) and the D1 statements it sent (exact, independent of load). Reports medians and the spread.
 * Writes JSON to stdout, progress to stderr. To compare two versions, run this in each checkout alternately
 * (BENCHMARKS.md).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { cpuSeconds } from './lib/proc'
import { buildBundle, startMiniflare } from './lib/worker-host'

const RULES: [string, string][] = [
  ['EA members', "MATCH (u)-[:MemberOf*1..]->(g:Group) WHERE g.objectid ENDS WITH '-519' RETURN u"],
  ['DA members', "MATCH (u)-[:MemberOf*1..]->(g:Group) WHERE g.objectid ENDS WITH '-512' RETURN u"],
  ['DA members LIMIT', "MATCH (u)-[:MemberOf*1..]->(g:Group) WHERE g.objectid ENDS WITH '-512' RETURN u LIMIT 100000"],
]

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]

async function main() {
  const { values } = parseArgs({ options: { nodes: { type: 'string', default: '20000' }, environments: { type: 'string', default: '1,50' }, runs: { type: 'string', default: '7' } } })
  const nodes = Number(values.nodes)
  const runs = Number(values.runs)
  const counts = values.environments.split(',').map(Number)
  const log = (m: string) => console.error(`[rules] ${m}`)
  const dir = mkdtempSync(path.join(os.tmpdir(), 'edgehound-rules-'))
  const bundle = await buildBundle(path.join(dir, 'bundle'))
  const w = await startMiniflare({ bundle, persistDir: path.join(dir, 'state'), migrate: true })
  const results: { environments: number; rule: string; members: number; scopes: number; error: string | null; statements: number; ms: number[]; medianMs: number; cpuMs: number[]; medianCpuMs: number }[] = []
  try {
    for (const environments of counts) {
      const g = await fetch(`${w.url}/__bench/rules-graph?nodes=${nodes}&environments=${environments}`, { method: 'POST' })
      if (!g.ok) throw new Error(`rules-graph: ${g.status} ${await g.text()}`)
      log(`graph: ${JSON.stringify(await g.json())} in ${environments} environment(s)`)
      for (const [rule, cypher] of RULES) {
        const ms: number[] = []
        const cpuMs: number[] = []
        let answer = { members: 0, scopes: 0, error: null as string | null, statements: 0 }
        for (let i = 0; i <= runs; i++) {
          const t = performance.now()
          const c = cpuSeconds(w.pids())
          const r = await fetch(`${w.url}/__bench/rules`, { method: 'POST', body: JSON.stringify({ cypher }) })
          if (!r.ok) throw new Error(`rules: ${r.status} ${await r.text()}`)
          answer = (await r.json()) as typeof answer
          if (i > 0) {
            ms.push(Math.round(performance.now() - t))
            cpuMs.push(Math.round((cpuSeconds(w.pids()) - c) * 1000))
          }
        }
        const row = { environments, rule, ...answer, ms, medianMs: median(ms), cpuMs, medianCpuMs: median(cpuMs) }
        results.push(row)
        log(`${environments} env, ${rule}: median ${row.medianMs} ms wall (${ms.join(' ')}), ${row.medianCpuMs} ms CPU (${cpuMs.join(' ')}), ${answer.statements} D1 statements, ${answer.members} members, ${answer.scopes} scopes, error ${answer.error}`)
      }
    }
    console.log(JSON.stringify({ nodes, runs, results }, null, 2))
  } finally {
    await w.dispose()
    rmSync(dir, { recursive: true, force: true })
  }
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})
