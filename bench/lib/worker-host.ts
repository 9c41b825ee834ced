/// <reference types="node" />
/**
 * Starting the worker under test.
 *
 *  - `buildBundle`: `wrangler deploy --dry-run --outdir` on bench/worker.ts: the same esbuild bundling
 *    (nodejs_compat, unenv) that a deploy does, of the real worker plus the bench-only paths.
 *  - `startMiniflare`: the bundle in workerd through Miniflare's API, no proxy in front: the runtime's own
 *    ceiling. Bindings come from wrangler.toml (unstable_getMiniflareWorkerOptions), secrets from
 *    .dev.vars.example (never .dev.vars, so a developer's local secrets cannot change the results),
 *    D1 and Durable Objects persisted to a temporary directory (SQLite files, as `wrangler dev` does),
 *    migrations applied through the D1 binding with wrangler's own SQL splitter. A second database,
 *    FLOOR_DB, with the same migrations, receives the raw-insert ingest floor.
 *  - `startWranglerDev`: `wrangler dev` as a developer runs it (its proxy worker in front, its request
 *    logging on), after `wrangler d1 migrations apply --local --persist-to`, to measure what it costs.
 *
 * The worker's one JSON log line per request is part of the product and stays on; Miniflare hands the
 * runtime's stdout to us and we only count the lines (the terminal would otherwise be the bottleneck).
 */
import { spawn, execFile } from 'node:child_process'
import { readFileSync, readdirSync, existsSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import net from 'node:net'
import path from 'node:path'
import { promisify } from 'node:util'
import { Miniflare } from 'miniflare'
import { unstable_getMiniflareWorkerOptions, unstable_splitSqlQuery } from 'wrangler'
import { descendantsNamed } from './proc'
import { workerdWithV8Flags } from './workerd-v8-flags'

const run = promisify(execFile)
export const ROOT = path.resolve(import.meta.dirname, '..', '..')
const WRANGLER = path.join(ROOT, 'node_modules', '.bin', 'wrangler')

/**
 * Vars every bench worker gets on top of the shipped ones (a case may override them with `vars`). The
 * bench plays many connectors with one administrator, each with its own API token (64 per throughput
 * case), so the cap on API tokens per user (25 shipped) is lifted; and cost-aware admission is off
 * (every request weighs 1, as the HTTP cases' routes do anyway), because the graph cases time queries
 * back to back with one user, which admission would rightly slow down. The worst-requests and fairness
 * cases (bench/cost.ts) run with admission on, as shipped.
 */
export const BENCH_VARS: Record<string, string> = { MAX_API_TOKENS_PER_USER: '1000000', RATE_LIMIT_COST: 'off' }

/** KEY = "value" lines of .dev.vars.example (the committed local-development values). */
export function devVarsExample(): Record<string, string> {
  const text = readFileSync(path.join(ROOT, '.dev.vars.example'), 'utf8')
  const out: Record<string, string> = {}
  for (const line of text.split('\n')) {
    const m = /^\s*([A-Z0-9_]+)\s*=\s*"?(.*?)"?\s*$/.exec(line)
    if (m) out[m[1]] = m[2]
  }
  return out
}

export function adminCredentials(): { username: string; password: string } {
  const vars = devVarsExample()
  const toml = readFileSync(path.join(ROOT, 'wrangler.toml'), 'utf8')
  const username = vars.BOOTSTRAP_ADMIN_USERNAME ?? /BOOTSTRAP_ADMIN_USERNAME\s*=\s*"([^"]*)"/.exec(toml)?.[1] ?? 'admin'
  const password = vars.BOOTSTRAP_ADMIN_PASSWORD
  if (!password) throw new Error('.dev.vars.example has no BOOTSTRAP_ADMIN_PASSWORD')
  return { username, password }
}

/** `root`: the checkout to bundle (default this one; bench/cypher.ts --baseline bundles an older checkout too). */
/**
 * The migrations a reused bench database lacks (bench/cypher.ts, bench/cypher-library.ts keep the list a database has
 * beside it): `recorded` is that list, null for a database made before lists were kept, when the migrations up to
 * number `madeWith` existed. A fresh database (`reuse` false) lacks them all.
 */
export function pendingMigrations(reuse: boolean, recorded: string[] | null, madeWith: number): { all: string[]; applied: string[]; missing: string[] } {
  const all = migrationFiles().map((f) => path.basename(f))
  const applied = reuse ? (recorded ?? all.filter((f) => parseInt(f, 10) <= madeWith)) : []
  return { all, applied, missing: all.filter((f) => !applied.includes(f)) }
}

export async function buildBundle(outdir: string, root: string = ROOT): Promise<string> {
  await run(WRANGLER, ['deploy', '--dry-run', '--outdir', outdir, path.join('bench', 'worker.ts')], {
    cwd: root,
    env: { ...process.env, CI: 'true', WRANGLER_SEND_METRICS: 'false' },
    maxBuffer: 64 * 1024 * 1024,
  })
  const file = path.join(outdir, 'worker.js')
  if (!existsSync(file)) throw new Error(`wrangler did not write ${file}`)
  return file
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer()
    s.on('error', reject)
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port
      s.close(() => resolve(port))
    })
  })
}

export function migrationFiles(): string[] {
  const dir = path.join(ROOT, 'migrations')
  return readdirSync(dir)
    .filter((f) => /^\d+_.*\.sql$/.test(f))
    .sort((a, b) => parseInt(a, 10) - parseInt(b, 10))
    .map((f) => path.join(dir, f))
}

/** Applies every migration, in order, through the bench worker's /__bench/migrate path (see bench/worker.ts). */
async function applyMigrations(url: string, db: 'DB' | 'FLOOR_DB', skip: readonly string[] = []): Promise<string[]> {
  const applied: string[] = []
  for (const file of migrationFiles()) {
    if (skip.includes(path.basename(file))) continue
    const statements = unstable_splitSqlQuery(await readFile(file, 'utf8'))
    const r = await fetch(`${url}/__bench/migrate?db=${db}`, { method: 'POST', body: JSON.stringify(statements) })
    if (!r.ok) throw new Error(`migration ${path.basename(file)} on ${db} failed: ${r.status} ${await r.text()}`)
    applied.push(path.basename(file))
  }
  return applied
}

export interface HostedWorker {
  url: string
  /** one URL per isolate (Miniflare with extraIsolates; otherwise just `url`) */
  isolateUrls?: string[]
  kind: 'miniflare' | 'wrangler-dev'
  inspectorPort?: number
  logLines(): number
  /** the processes serving requests (for CPU accounting) */
  pids(): number[]
  /** the last lines the runtime wrote to stderr (crash reports) */
  stderrTail(): string
  migrations: string[]
  dispose(): Promise<void>
}

export interface StartOptions {
  bundle: string
  persistDir: string
  /** enable workerd's inspector (CPU profiles, heap usage) on this port */
  inspectorPort?: number
  /** extra vars (documented in BENCHMARKS.md when used) */
  vars?: Record<string, string>
  /** apply migrations (first start on a persist dir) */
  migrate: boolean
  /** with `migrate`: migration files (names) the persisted database already has, not applied again */
  applied?: readonly string[]
  /**
   * More copies of the worker (default 0), each its own isolate with its own module state (its own
   * leases), on its own port, sharing the first one's Durable Object namespaces (one limiter object per
   * token for all of them) and D1 database: the closest the local runtime comes to several isolates of
   * one deployment. Their URLs are `isolateUrls` (the first is `url`).
   */
  extraIsolates?: number
  /** receives the runtime's stdout (the worker's console.log lines), e.g. for a D1 trace */
  onStdout?: (chunk: Buffer) => void
  /** receives the runtime's stderr (the worker's console.error lines: 5xx causes with their request_id) */
  onStderr?: (chunk: Buffer) => void
  /**
   * V8 flags for workerd (e.g. `--max-heap-size=128`, a production-like heap cap), passed through a
   * wrapper around the workerd binary (bench/lib/workerd-v8-flags.ts); its script goes in `scratchDir`.
   */
  v8Flags?: { flags: string[]; scratchDir: string }
}

/** The workerd binary Miniflare runs by default (the `workerd` package's export). */
function realWorkerdPath(): string {
  const req = createRequire(path.join(ROOT, 'node_modules', 'miniflare', 'package.json'))
  const m = req('workerd') as string | { default: string }
  return typeof m === 'string' ? m : m.default
}

export async function startMiniflare(opts: StartOptions): Promise<HostedWorker> {
  const { workerOptions } = unstable_getMiniflareWorkerOptions(path.join(ROOT, 'wrangler.toml'))
  const secrets = devVarsExample()
  const extra = opts.extraIsolates ?? 0
  let lines = 0
  let errText = ''
  const count = (stream: NodeJS.ReadableStream) =>
    stream.on('data', (d: Buffer) => {
      for (let i = 0; i < d.length; i++) if (d[i] === 10) lines++
    })
  // Miniflare reads MINIFLARE_WORKERD_PATH when it spawns the runtime (in the constructor's start-up).
  const savedWorkerdPath = process.env.MINIFLARE_WORKERD_PATH
  if (opts.v8Flags?.flags.length)
    process.env.MINIFLARE_WORKERD_PATH = workerdWithV8Flags(opts.v8Flags.scratchDir, savedWorkerdPath ?? realWorkerdPath(), opts.v8Flags.flags)
  const mf = new Miniflare({
    host: '127.0.0.1',
    port: 0,
    inspectorPort: opts.inspectorPort,
    defaultPersistRoot: opts.persistDir,
    handleRuntimeStdio(stdout: NodeJS.ReadableStream, stderr: NodeJS.ReadableStream) {
      count(stdout)
      if (opts.onStdout) stdout.on('data', opts.onStdout)
      if (opts.onStderr) stderr.on('data', opts.onStderr)
      stderr.on('data', (d: Buffer) => {
        errText += d.toString('utf8')
        if (errText.length > 20_000) errText = errText.slice(-10_000)
        // Surface runtime crashes, not the per-request log lines (those go to stdout).
        if (/error|uncaught|exception/i.test(d.toString('utf8')) && process.env.BENCH_VERBOSE) process.stderr.write(d)
      })
    },
    workers: Array.from({ length: 1 + extra }, (_, i) => ({
      name: i === 0 ? 'edgehound' : `edgehound-${i + 1}`,
      modules: true,
      scriptPath: opts.bundle,
      modulesRoot: path.dirname(opts.bundle),
      compatibilityDate: workerOptions.compatibilityDate,
      compatibilityFlags: workerOptions.compatibilityFlags,
      bindings: { ...(workerOptions.bindings as Record<string, string>), ...secrets, ...BENCH_VARS, ...(opts.vars ?? {}) },
      d1Databases: { ...(workerOptions.d1Databases as Record<string, { id: string }>), FLOOR_DB: { id: 'bench-floor' } },
      // The copies bind the first worker's object classes: one namespace, one object per name, for all.
      durableObjects:
        i === 0
          ? workerOptions.durableObjects
          : Object.fromEntries(
              Object.entries(workerOptions.durableObjects as Record<string, { className: string }>).map(([k, d]) => [k, { ...d, scriptName: 'edgehound' }]),
            ),
      ...(extra > 0 ? { unsafeDirectSockets: [{ host: '127.0.0.1', port: 0 }] } : {}),
    })),
  } as ConstructorParameters<typeof Miniflare>[0])
  let url: string
  try {
    url = (await mf.ready).toString().replace(/\/$/, '')
  } catch (e) {
    await mf.dispose().catch(() => undefined)
    throw new Error(`workerd did not start: ${(e as Error).message}\n--- workerd stderr ---\n${errText.slice(-4000)}`)
  } finally {
    if (savedWorkerdPath === undefined) delete process.env.MINIFLARE_WORKERD_PATH
    else process.env.MINIFLARE_WORKERD_PATH = savedWorkerdPath
  }
  const isolateUrls = [url]
  for (let i = 1; i <= extra; i++) isolateUrls.push((await mf.unsafeGetDirectURL(`edgehound-${i + 1}`)).toString().replace(/\/$/, ''))
  let migrations: string[] = []
  if (opts.migrate) {
    migrations = await applyMigrations(url, 'DB', opts.applied)
    await applyMigrations(url, 'FLOOR_DB', opts.applied)
  }
  return {
    url,
    isolateUrls,
    kind: 'miniflare',
    inspectorPort: opts.inspectorPort,
    logLines: () => lines,
    // Miniflare runs workerd as our child; one instance at a time, so every workerd below us is this one.
    pids: () => descendantsNamed(process.pid, 'workerd'),
    stderrTail: () => errText.slice(-3000),
    migrations,
    dispose: () => mf.dispose(),
  }
}

async function waitForHttp(url: string, timeoutMs: number, child?: { exitCode: number | null }): Promise<void> {
  const deadline = Date.now() + timeoutMs
  let last = ''
  while (Date.now() < deadline) {
    if (child && child.exitCode !== null) throw new Error(`process exited with ${child.exitCode} before ${url} answered`)
    try {
      const r = await fetch(url)
      await r.arrayBuffer()
      return
    } catch (e) {
      last = String((e as Error).message)
    }
    await new Promise((r) => setTimeout(r, 250))
  }
  throw new Error(`${url} did not answer within ${timeoutMs} ms (${last})`)
}

/** `wrangler dev` exactly as `npm run dev` runs it (proxy worker, request logging), on bench/worker.ts. */
export async function startWranglerDev(opts: { persistDir: string }): Promise<HostedWorker> {
  const env = { ...process.env, CI: 'true', WRANGLER_SEND_METRICS: 'false', NO_COLOR: '1' }
  const { stdout } = await run(WRANGLER, ['d1', 'migrations', 'apply', 'DB', '--local', '--persist-to', opts.persistDir], { cwd: ROOT, env })
  const migrations = [...stdout.matchAll(/(\d{4}_[\w-]+\.sql)/g)].map((m) => m[1])
  const port = await freePort()
  const child = spawn(
    WRANGLER,
    [
      'dev', path.join('bench', 'worker.ts'),
      '--ip', '127.0.0.1', '--port', String(port),
      '--persist-to', opts.persistDir,
      '--env-file', '.dev.vars.example',
      '--inspector-port', String(await freePort()),
      '--show-interactive-dev-session=false',
      ...Object.entries(BENCH_VARS).flatMap(([k, v]) => ['--var', `${k}:${v}`]),
    ],
    { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true },
  )
  let lines = 0
  let tail = ''
  const onData = (d: Buffer) => {
    for (let i = 0; i < d.length; i++) if (d[i] === 10) lines++
    tail = (tail + d.toString('utf8')).slice(-4000)
  }
  child.stdout.on('data', onData)
  child.stderr.on('data', onData)
  const url = `http://127.0.0.1:${port}`
  try {
    await waitForHttp(`${url}/__bench/bare`, 60_000, child)
  } catch (e) {
    try {
      process.kill(-child.pid!, 'SIGTERM')
    } catch {
      /* already gone */
    }
    throw new Error(`${(e as Error).message}\n--- wrangler dev output ---\n${tail}`)
  }
  // Let its start-up work (update check, registry, first compilation) finish before anything is measured.
  await new Promise((r) => setTimeout(r, 2000))
  for (let i = 0; i < 50; i++) await (await fetch(`${url}/__bench/bare`)).arrayBuffer()
  return {
    url,
    kind: 'wrangler-dev',
    logLines: () => lines,
    // wrangler's own Node process (logging, proxy control) plus its workerd processes (proxy worker, user worker)
    pids: () => (child.pid ? [child.pid, ...descendantsNamed(child.pid, null)] : []),
    stderrTail: () => tail,
    migrations,
    async dispose() {
      if (child.exitCode !== null) return
      const gone = new Promise<void>((r) => child.once('exit', () => r()))
      // wrangler dev runs workerd as its child: signal the whole process group we created (detached).
      try {
        process.kill(-child.pid!, 'SIGTERM')
      } catch {
        /* already gone */
      }
      const t = setTimeout(() => {
        try {
          process.kill(-child.pid!, 'SIGKILL')
        } catch {
          /* gone */
        }
      }, 5000)
      await gone
      clearTimeout(t)
    },
  }
}
