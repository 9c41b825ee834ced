/// <reference types="node" />
/**
 * EdgeHound benchmarks. `npm run bench` (full) or `npm run bench:smoke` (tiny sizes, short runs; CI).
 *
 *   tsx bench/run.ts [--smoke] [--sizes 10k,100k,1m] [--duration S] [--rounds N] [--connections N]
 *                    [--http-only | --graph-only | --scale-only [--scale-case exactness]] [--no-scale] [--no-wrangler-dev] [--profile] [--large-file MIB] [--out DIR] [--update-doc]
 *
 * Writes bench/results/<timestamp>.json, bench/results/latest.json and bench/results/latest.md, and
 * prints the Markdown table. Exit status: 0 when the harness ran (goals met or not, endpoints present or
 * "not available"); 1 when the harness itself failed (worker did not start, credentials rejected, load
 * generator crashed, generator self-check failed, …).
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { profileHttpCases, runHttpCases, type HttpRun } from './lib/http-cases'
import type { ProfileSummary } from './lib/inspector'
import { runGraphBench, type GraphRun } from './lib/graph-cases'
import { describeMachine, type Machine } from './lib/machine'
import { runScaleBench, type ScaleRun } from './lib/scale-cases'
import { renderMarkdown, evaluateGoals, type Goal } from './lib/report'
import { adminCredentials, buildBundle, freePort, ROOT, startMiniflare, startWranglerDev } from './lib/worker-host'

export interface BenchConfig {
  mode: 'full' | 'smoke'
  durationSeconds: number
  warmupSeconds: number
  /** HTTP cases are measured once per round, interleaved */
  rounds: number
  connections: number
  probeCount: number
  poolSize: number
  sizes: number[]
  wranglerDev: boolean
  http: boolean
  graph: boolean
  /** issue 17's lease cases (bench/lib/scale-cases.ts) */
  scale: boolean
  /** `--scale-case exactness`: only the scale bench's exactness case (leases on and off) */
  scaleExactnessOnly?: boolean
  profile: boolean
  /** graph latency sample sizes */
  pairs: number
  unreachablePairs: number
  queries: number
  /** the one-large-file ingest case: file size limit in MiB (20 in a full run, 1 in smoke; 0 skips it) */
  largeFileMiB: number
  /** replace the results section of BENCHMARKS.md (between its markers) with this run's report */
  updateDoc: boolean
}

export interface BenchResults {
  version: 1
  startedAt: string
  finishedAt?: string
  elapsedSeconds?: number
  config: BenchConfig
  machine: Machine
  http?: HttpRun
  /** CPU profiles of HTTP cases whose goal was missed (or all with --profile), from a separate instance */
  httpProfiles?: Record<string, ProfileSummary[]>
  wranglerDev?: HttpRun & { error?: string }
  graph?: GraphRun
  scale?: ScaleRun
  goals?: Goal[]
  harnessFailure?: string
}

function parseSize(s: string): number {
  const m = /^(\d+(?:\.\d+)?)([km]?)$/i.exec(s.trim())
  if (!m) throw new Error(`bad size "${s}": use e.g. 10k, 100k, 1m or a number of edges`)
  return Math.round(Number(m[1]) * (m[2].toLowerCase() === 'k' ? 1e3 : m[2].toLowerCase() === 'm' ? 1e6 : 1))
}

function config(): { cfg: BenchConfig; out: string } {
  const { values } = parseArgs({
    options: {
      smoke: { type: 'boolean', default: false },
      sizes: { type: 'string' },
      duration: { type: 'string' },
      rounds: { type: 'string' },
      connections: { type: 'string' },
      'http-only': { type: 'boolean', default: false },
      'graph-only': { type: 'boolean', default: false },
      'scale-only': { type: 'boolean', default: false },
      'scale-case': { type: 'string' },
      'no-scale': { type: 'boolean', default: false },
      'no-wrangler-dev': { type: 'boolean', default: false },
      profile: { type: 'boolean', default: false },
      'large-file': { type: 'string' },
      out: { type: 'string' },
      'update-doc': { type: 'boolean', default: false },
    },
  })
  const smoke = values.smoke === true
  const cfg: BenchConfig = {
    mode: smoke ? 'smoke' : 'full',
    durationSeconds: Number(values.duration ?? (smoke ? 1 : 5)),
    warmupSeconds: smoke ? 0.3 : 1,
    rounds: Number(values.rounds ?? (smoke ? 1 : 3)),
    connections: Number(values.connections ?? (smoke ? 8 : 16)),
    probeCount: smoke ? 30 : 400,
    poolSize: smoke ? 6 : 64,
    sizes: (values.sizes ?? (smoke ? '2k' : '10k,100k,1m')).split(',').map(parseSize),
    wranglerDev: values['no-wrangler-dev'] !== true && values['graph-only'] !== true && values['scale-only'] !== true,
    http: values['graph-only'] !== true && values['scale-only'] !== true,
    graph: values['http-only'] !== true && values['scale-only'] !== true,
    scaleExactnessOnly: values['scale-case'] === 'exactness',
    scale: values['graph-only'] !== true && values['http-only'] !== true && values['no-scale'] !== true,
    profile: values.profile === true,
    pairs: smoke ? 10 : 100,
    unreachablePairs: smoke ? 5 : 30,
    queries: smoke ? 10 : 50,
    largeFileMiB: Number(values['large-file'] ?? (smoke ? 1 : 20)),
    updateDoc: values['update-doc'] === true,
  }
  return { cfg, out: path.resolve(values.out ?? path.join(ROOT, 'bench', 'results')) }
}

async function main(): Promise<number> {
  const { cfg, out } = config()
  const started = Date.now()
  const log = (msg: string) => process.stderr.write(`[bench ${((Date.now() - started) / 1000).toFixed(1).padStart(6)}s] ${msg}\n`)
  const results: BenchResults = { version: 1, startedAt: new Date().toISOString(), config: cfg, machine: describeMachine() }
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'edgehound-bench-'))
  const { username, password } = adminCredentials()
  let status = 0
  try {
    log(`mode ${cfg.mode}; building bench/worker.ts (wrangler deploy --dry-run)`)
    const bundle = await buildBundle(path.join(tmp, 'build'))

    if (cfg.http) {
      log('http: starting workerd through Miniflare (no proxy)')
      const w = await startMiniflare({ bundle, persistDir: path.join(tmp, 'http-state'), migrate: true })
      try {
        results.http = await runHttpCases({ url: w.url, username, password, ...cfg, log, serverPids: w.pids })
        log(`http: the worker wrote ${w.logLines()} log lines`)
      } finally {
        await w.dispose()
      }
    }

    if (results.http) {
      // Profile what missed its goal (all cases with --profile), on another instance, after measuring.
      const missed = new Set(evaluateGoals(results).filter((g) => g.met === false).map((g) => g.id))
      const ids = cfg.profile
        ? ['version-signed', 'domains-signed', 'over-limit', 'forged-many-ips']
        : cfg.mode === 'full'
          ? [
              ...(missed.has('read-throughput') ? ['domains-signed'] : []),
              ...(missed.has('auth-overhead') ? ['version-signed'] : []),
              ...(['over-limit', 'forged-one-ip', 'forged-many-ips'] as const).filter((id) => missed.has(id)),
            ]
          : []
      if (ids.length > 0) {
        results.httpProfiles = await profileHttpCases({
          bundle, persistDir: path.join(tmp, 'http-profile-state'), inspectorPort: await freePort(), resultsDir: out,
          username, password, ids: [...new Set(ids)], seconds: 3, connections: cfg.connections, poolSize: cfg.poolSize, log,
        })
      }
    }

    if (cfg.scale) {
      results.scale = await runScaleBench({
        bundle, tmp, username, password, smoke: cfg.mode === 'smoke', log,
        connections: cfg.connections, durationSeconds: cfg.durationSeconds, warmupSeconds: cfg.warmupSeconds,
        probeCount: cfg.probeCount, poolSize: cfg.poolSize, rounds: cfg.rounds, exactnessOnly: cfg.scaleExactnessOnly,
      })
      for (const e of results.scale.exactness)
        for (const se of e.serverErrors ?? []) log(`scale: exactness (leases ${e.leaseMs ? 'on' : 'off'}) answered ${se.status}: ${se.body}${se.log ? `\n  worker log: ${se.log}` : ''}`)
    }

    if (cfg.wranglerDev) {
      log('wrangler dev: starting (proxy worker + request logging, as npm run dev)')
      try {
        const d = await startWranglerDev({ persistDir: path.join(tmp, 'wrangler-dev-state') })
        try {
          results.wranglerDev = await runHttpCases({
            url: d.url, username, password, ...cfg, log: (m) => log(`wrangler dev: ${m}`), serverPids: d.pids,
            only: cfg.mode === 'smoke' ? ['version-signed'] : ['pipeline', 'version-signed', 'domains-signed'],
          })
        } finally {
          await d.dispose()
        }
      } catch (e) {
        // wrangler dev is a comparison, not the subject: report its failure but keep the run.
        if (String((e as Error).message).startsWith('harness failure')) throw e
        results.wranglerDev = { cases: [], bare: { rps: NaN, p50ms: NaN, probeP50us: NaN }, error: String((e as Error).message).slice(0, 2000) }
        log(`wrangler dev: failed: ${(e as Error).message.split('\n')[0]}`)
      }
    }

    if (cfg.graph) {
      results.graph = await runGraphBench({
        bundle,
        tmp,
        username,
        password,
        sizes: cfg.sizes,
        pairs: cfg.pairs,
        unreachablePairs: cfg.unreachablePairs,
        queries: cfg.queries,
        profile: cfg.profile,
        smoke: cfg.mode === 'smoke',
        resultsDir: out,
        inspectorPort: await freePort(),
        largeFileBytes: Math.round(cfg.largeFileMiB * 2 ** 20),
        log,
      })
    }
  } catch (e) {
    results.harnessFailure = String((e as Error)?.stack ?? e)
    log(`HARNESS FAILURE: ${(e as Error)?.message ?? e}`)
    status = 1
  } finally {
    rmSync(tmp, { recursive: true, force: true })
  }
  results.machine.loadAverageEnd = os.loadavg().map((l) => Math.round(l * 100) / 100)
  results.finishedAt = new Date().toISOString()
  results.elapsedSeconds = Math.round((Date.now() - started) / 100) / 10
  results.goals = evaluateGoals(results)
  const md = renderMarkdown(results)
  mkdirSync(out, { recursive: true })
  const stamp = results.startedAt.replace(/[:.]/g, '-')
  writeFileSync(path.join(out, `${stamp}-${cfg.mode}.json`), JSON.stringify(results, null, 2))
  writeFileSync(path.join(out, cfg.mode === 'full' ? 'latest.json' : 'latest-smoke.json'), JSON.stringify(results, null, 2))
  writeFileSync(path.join(out, cfg.mode === 'full' ? 'latest.md' : 'latest-smoke.md'), md)
  if (cfg.updateDoc) updateBenchmarksMd(md)
  process.stdout.write(md + '\n')
  log(`results: ${path.join(out, cfg.mode === 'full' ? 'latest.json' : 'latest-smoke.json')} (${results.elapsedSeconds}s)`)
  return status
}

const START = '<!-- bench:results:start (written by npm run bench -- --update-doc) -->'
const END = '<!-- bench:results:end -->'

/** Replaces the section between the markers of BENCHMARKS.md; the prose around it is left alone. */
function updateBenchmarksMd(md: string) {
  const file = path.join(ROOT, 'BENCHMARKS.md')
  const text = readFileSync(file, 'utf8')
  const a = text.indexOf(START)
  const b = text.indexOf(END)
  if (a === -1 || b < a) throw new Error(`BENCHMARKS.md has no ${START} … ${END} section to update`)
  writeFileSync(file, text.slice(0, a + START.length) + '\n\n' + md + '\n' + text.slice(b))
}

main().then(
  (code) => process.exit(code),
  (e) => {
    process.stderr.write(`bench: ${String(e?.stack ?? e)}\n`)
    process.exit(1)
  },
)
