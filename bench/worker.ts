/**
 * The benchmark's worker entry: the real worker (src/index.ts) unchanged, plus three bench-only paths that
 * exist ONLY in this bundle (it is never deployed; wrangler.toml's `main` stays src/index.ts):
 *
 *   GET  /__bench/bare      a static response from the fetch handler itself: no Hono, no auth, no storage.
 *                           The runtime's ceiling on this machine; every HTTP case is reported as a ratio to it.
 *   GET  /__bench/pipeline  the service's global middleware (request id + log line, security headers,
 *                           config) and a JSON answer, but no authentication, rate limit or storage, so
 *                           "signed request − pipeline" isolates the cost of authentication + rate limiting.
 *   POST /__bench/floor-insert?table=nodes|edges
 *                           the ingest floor inside the runtime: the request body is a JSON array of rows
 *                           in the shape of the `nodes`/`edges` tables, written with the cheapest D1 method
 *                           we know (one batch of `INSERT … SELECT … FROM json_each(?)` statements, each
 *                           under D1's 100 KB statement limit) into a separate database `FLOOR_DB`.
 *   POST /__bench/floor-reset  empties FLOOR_DB's graph tables.
 *   GET  /__bench/d1-stats  statements sent to D1 so far (see the census below).
 *   POST /__bench/d1-trace?on=1|0  logs (console.log) the start and the end, with its wall time, of every D1
 *                           statement and batch from now on: a statement that holds D1 shows as started, not ended.
 *   POST /__bench/postprocess  runs collector post-processing (src/collectors/postprocess.ts) once, alone,
 *                           and answers its summary (bench/sharphound.ts times it).
 *   GET  /__bench/limiter-stats  limiter calls so far: admission's census (src/ratelimit/admission.ts: object
 *                           calls, lease and direct admissions) and every call that went through the limiter
 *                           binding (the wrapper below), with the delay in force.
 *   POST /__bench/limiter-delay?ms=N  from now on, every call to a limiter object waits N ms first: the
 *                           "far limiter" (an object on another continent). Exists only in this bundle.
 *   POST /__bench/vars      JSON object of vars (e.g. {"LIMITER_LEASE_MS":"0"}) laid over the configured ones
 *                           for the requests that follow ({} restores them), so leases on and off are measured
 *                           on one worker in one run; this isolate's leases are dropped at each change.
 *   POST /__bench/rules-graph?nodes=N&environments=E  replaces DB's graph by bench/lib/rules-graph.ts's (N nodes
 *                           over E domains) and empties the rules' kept selections (bench/rules.ts).
 *   POST /__bench/rules     evaluates the asset-group rule in the body ({"cypher": …}) once, as an analysis run
 *                           does (src/assetgroups/rules.ts evaluateRules), and answers what it selected and how
 *                           many D1 statements it sent.
 *   POST /__bench/migrate?db=DB|FLOOR_DB  runs a JSON array of SQL statements (the migrations, split by
 *                           wrangler's splitter in the harness) on that database. Miniflare's Node-side
 *                           D1 proxy cannot be used under tsx (its synchronous fetcher trips over the
 *                           loader's worker-thread messages), so the harness applies migrations through here.
 *
 * SQL here is deliberate: this file is the storage floor the ingest is measured against, not product code.
 */
import worker, { Analyzer as BaseAnalyzer, RateLimiter as BaseRateLimiter } from '../src/index'
import { createApp } from '../src/app'
import { postProcess } from '../src/collectors/postprocess'
import { ID_FLOOR, NEW_EDGE_ID_SQL, NEW_ID_SQL } from '../src/graph/ids'
import { census, dropAllLeases } from '../src/ratelimit/admission'
import { evaluateRules } from '../src/assetgroups/rules'
import { rulesGraph } from './lib/rules-graph'

type BenchEnv = Env & { FLOOR_DB?: D1Database }

/**
 * D1 census: how many statements the service sends to D1, per request, whichever code sends them (the
 * fetch handler or a Durable Object: they share this isolate and so these counters). `DB` is wrapped in a
 * counting proxy before the real code sees it; the Durable Object classes are the real ones, subclassed only
 * to hand them the same wrapped binding. GET /__bench/d1-stats reads the counters.
 */
const d1 = { statements: 0, batches: 0, bySql: {} as Record<string, number> }
/**
 * D1 trace (POST /__bench/d1-trace?on=1|0): each statement or batch logged (console.log, the runtime's stdout)
 * when it starts and, with its wall time, when it ends, so a statement that holds D1 shows in the log as
 * started and not ended. Off by default.
 */
let traceD1 = false
let traceSeq = 0
async function traced<T>(what: string, call: () => Promise<T>): Promise<T> {
  if (!traceD1) return call()
  const n = ++traceSeq
  const t0 = Date.now()
  console.log(`d1-trace start #${n} ${what}`)
  try {
    return await call()
  } finally {
    console.log(`d1-trace end #${n} ${Date.now() - t0} ms`)
  }
}
const short = (sql: string) => sql.replace(/\s+/g, ' ').trim().slice(0, 300)
const noteSql = (sql: string) => {
  const k = sql.replace(/\s+/g, ' ').trim().slice(0, 90)
  if (d1.bySql[k] !== undefined || Object.keys(d1.bySql).length < 200) d1.bySql[k] = (d1.bySql[k] ?? 0) + 1
}
const wrapped = new WeakMap<object, D1Database>()
function countingDb(db: D1Database): D1Database {
  const hit = wrapped.get(db)
  if (hit) return hit
  const proxy = new Proxy(db, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver)
      if (typeof v !== 'function') return v
      if (prop === 'prepare')
        return (sql: string) => countingStatement(target.prepare(sql), sql)
      if (prop === 'batch')
        return (stmts: D1PreparedStatement[]) => {
          d1.batches++
          const raw = stmts.map((x) => (x as unknown as { [RAW]?: D1PreparedStatement })[RAW] ?? x)
          return traced(`batch of ${stmts.length}: ${stmts.map((x) => short((x as unknown as { [SQL]?: string })[SQL] ?? '?')).join(' ;; ')}`, () => target.batch(raw))
        }
      // Every request runs in a D1 session (src/http/d1-session.ts): count the session's statements too.
      if (prop === 'withSession')
        return (...args: unknown[]) => countingDb((v as (...a: unknown[]) => D1Database).apply(target, args))
      if (prop === 'exec')
        return (sql: string) => {
          d1.statements++
          noteSql(sql)
          return target.exec(sql)
        }
      return v.bind(target)
    },
  })
  wrapped.set(db, proxy)
  return proxy
}
const RAW = Symbol('raw statement')
const SQL = Symbol('statement text')
function countingStatement(stmt: D1PreparedStatement, sql: string): D1PreparedStatement {
  return new Proxy(stmt, {
    get(target, prop) {
      if (prop === SQL) return sql
      if (prop === RAW) {
        d1.statements++ // executed as part of a batch
        noteSql(sql)
        return target
      }
      const v = Reflect.get(target, prop, target)
      if (typeof v !== 'function') return v
      if (prop === 'bind') return (...args: unknown[]) => countingStatement(target.bind(...args), sql)
      if (prop === 'run' || prop === 'all' || prop === 'first' || prop === 'raw')
        return (...args: unknown[]) => {
          d1.statements++
          noteSql(sql)
          return traced(`${String(prop)}: ${short(sql)}`, () => (v as (...a: unknown[]) => Promise<unknown>).apply(target, args))
        }
      return v.bind(target)
    },
  })
}
/**
 * The far limiter: the limiter binding wrapped so that every call to an object (authorize, lease, consume,
 * release, …) first waits `limiter.delayMs`, and is counted. The real objects answer; only the distance is
 * simulated. With delay 0 the wrapper adds one promise hop per call and nothing else.
 */
const limiter = { delayMs: 0, calls: 0 }
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
function delayedStub<T extends object>(stub: T): T {
  return new Proxy(stub, {
    get(target, prop) {
      const v = Reflect.get(target, prop, target)
      // An RPC stub answers every property name with a callable: wrap only method names, never `then`.
      if (typeof prop !== 'string' || prop === 'then' || typeof v !== 'function') return v
      return async (...args: unknown[]) => {
        limiter.calls++
        if (limiter.delayMs > 0) await sleep(limiter.delayMs)
        // Called as a method of the stub (a detached RPC method applied to it fails to serialise the stub).
        return (target as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>)[prop](...args)
      }
    },
  })
}
const limiterWrapped = new WeakMap<object, DurableObjectNamespace>()
function delayedNamespace(ns: DurableObjectNamespace): DurableObjectNamespace {
  const hit = limiterWrapped.get(ns)
  if (hit) return hit
  const proxy = new Proxy(ns, {
    get(target, prop) {
      const v = Reflect.get(target, prop, target)
      if (prop === 'get') return (...a: Parameters<DurableObjectNamespace['get']>) => delayedStub(target.get(...a))
      return typeof v === 'function' ? v.bind(target) : v
    },
  }) as DurableObjectNamespace
  limiterWrapped.set(ns, proxy)
  return proxy
}

/** Vars laid over the configured ones (POST /__bench/vars); a new version makes new env objects. */
let overrides: Record<string, string> = {}
let overridesVersion = 0

// One wrapped env per real env (and overrides version), so that everything keyed on the env object (the
// config cache) still hits.
const envs = new WeakMap<object, { v: number; e: object }>()
function benchEnv<E extends { DB: D1Database }>(env: E): E {
  const hit = envs.get(env)
  if (hit && hit.v === overridesVersion) return hit.e as E
  const limiterNs = (env as unknown as { RATE_LIMITER?: DurableObjectNamespace }).RATE_LIMITER
  const e = { ...env, ...overrides, DB: countingDb(env.DB), ...(limiterNs ? { RATE_LIMITER: delayedNamespace(limiterNs) } : {}) } as E
  envs.set(env, { v: overridesVersion, e })
  return e
}

export class RateLimiter extends BaseRateLimiter {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, benchEnv(env))
  }
}
export class Analyzer extends BaseAnalyzer {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, benchEnv(env))
  }
}

const pipeline = createApp([])
pipeline.get('/__bench/pipeline', (c) => c.json({ data: { status: 'ok' } }))

const BARE = '{"data":{"status":"ok"}}'

/** Rows arrive as arrays (positional) to keep the floor's request small and its parse cheap. */
// The rows' node ids are small and dense; stored ids start at ID_FLOOR (the range of src/graph/ids.ts, which
// migration 0039's triggers enforce), edges get random ids as everywhere else.
const NODE_SQL =
  `INSERT INTO nodes (id, objectid, kind, kinds, name, environment_id, properties, created_at, updated_at) ` +
  `SELECT ${ID_FLOOR} + j.value->>0, j.value->>1, j.value->>2, j.value->>3, j.value->>4, j.value->>5, j.value->>6, ?2, ?2 FROM json_each(?1) AS j`
const EDGE_SQL =
  `INSERT INTO edges (start_id, end_id, kind, properties, created_at, updated_at, id) ` +
  `SELECT ${ID_FLOOR} + j.value->>0, ${ID_FLOOR} + j.value->>1, j.value->>2, j.value->>3, ?2, ?2, ${NEW_EDGE_ID_SQL} FROM json_each(?1) AS j`

/** Splits rows into JSON texts of at most ~90 KB (D1: 100 KB per statement, bound values included). */
function chunks(rows: unknown[]): string[] {
  const out: string[] = []
  let cur: string[] = []
  let size = 2
  for (const r of rows) {
    const s = JSON.stringify(r)
    if (size + s.length + 1 > 90_000 && cur.length > 0) {
      out.push(`[${cur.join(',')}]`)
      cur = []
      size = 2
    }
    cur.push(s)
    size += s.length + 1
  }
  if (cur.length > 0) out.push(`[${cur.join(',')}]`)
  return out
}

async function floorInsert(req: Request, env: BenchEnv): Promise<Response> {
  if (!env.FLOOR_DB) return new Response('no FLOOR_DB binding', { status: 501 })
  const table = new URL(req.url).searchParams.get('table')
  if (table !== 'nodes' && table !== 'edges') return new Response('table must be nodes or edges', { status: 400 })
  const rows = (await req.json()) as unknown[]
  const now = new Date().toISOString()
  const sql = table === 'nodes' ? NODE_SQL : EDGE_SQL
  const stmt = env.FLOOR_DB.prepare(sql)
  const parts = chunks(rows)
  // D1 caps a batch by its total size too; 40 statements of ≤ 90 KB stay well inside it.
  for (let i = 0; i < parts.length; i += 40) {
    await env.FLOOR_DB.batch(parts.slice(i, i + 40).map((p) => stmt.bind(p, now)))
  }
  return Response.json({ inserted: rows.length, statements: parts.length })
}

export default {
  async fetch(req: Request, env: BenchEnv, ctx: ExecutionContext): Promise<Response> {
    const url = req.url
    // Cheapest possible test first: the bare route must not pay for URL parsing either.
    if (url.endsWith('/__bench/bare')) return new Response(BARE, { headers: { 'content-type': 'application/json' } })
    if (url.includes('/__bench/')) {
      const path = new URL(url).pathname
      if (path === '/__bench/d1-stats') return Response.json(d1)
      if (path === '/__bench/d1-trace' && req.method === 'POST') {
        traceD1 = new URL(url).searchParams.get('on') === '1'
        return Response.json({ trace: traceD1 })
      }
      if (path === '/__bench/limiter-stats') return Response.json({ ...census, stubCalls: limiter.calls, delayMs: limiter.delayMs })
      if (path === '/__bench/limiter-delay' && req.method === 'POST') {
        limiter.delayMs = Math.max(0, Number(new URL(url).searchParams.get('ms') ?? 0) || 0)
        return Response.json({ delayMs: limiter.delayMs })
      }
      if (path === '/__bench/vars' && req.method === 'POST') {
        overrides = (await req.json()) as Record<string, string>
        overridesVersion++
        dropAllLeases()
        return Response.json({ overrides })
      }
      if (path === '/__bench/pipeline') return pipeline.fetch(req, env, ctx)
      if (path === '/__bench/floor-insert' && req.method === 'POST') return floorInsert(req, env)
      if (path === '/__bench/postprocess' && req.method === 'POST') return Response.json(await postProcess(env.DB, new Date().toISOString()))
      if (path === '/__bench/rules-graph' && req.method === 'POST') {
        const q = new URL(url).searchParams
        const g = rulesGraph(Number(q.get('nodes') ?? 20_000), Number(q.get('environments') ?? 1))
        await env.DB.batch(['edges', 'nodes', 'asset_group_rule_selections', 'asset_group_rule_scopes'].map((t) => env.DB.prepare(`DELETE FROM ${t}`)))
        const now = new Date().toISOString()
        const writes = [...chunks(g.nodes).map((c) => env.DB.prepare(NODE_SQL).bind(c, now)), ...chunks(g.edges).map((c) => env.DB.prepare(EDGE_SQL).bind(c, now))]
        for (let i = 0; i < writes.length; i += 40) await env.DB.batch(writes.slice(i, i + 40))
        return Response.json({ nodes: g.nodes.length, edges: g.edges.length })
      }
      if (path === '/__bench/rules' && req.method === 'POST') {
        const { cypher } = (await req.json()) as { cypher: string }
        const before = d1.statements
        const [r] = await evaluateRules(countingDb(env.DB), [{ selectorId: 0, seedId: 0, tag: 'admin_tier_0', cypher }])
        return Response.json({ members: r.objectids.length, scopes: r.scopes.length, error: r.error, statements: d1.statements - before })
      }
      if (path === '/__bench/migrate' && req.method === 'POST') {
        const which = new URL(url).searchParams.get('db')
        const db = which === 'DB' ? env.DB : which === 'FLOOR_DB' ? env.FLOOR_DB : undefined
        if (!db) return new Response('db must be DB or FLOOR_DB', { status: 400 })
        const statements = (await req.json()) as string[]
        for (const sql of statements) await db.prepare(sql).run()
        return Response.json({ applied: statements.length })
      }
      if (path === '/__bench/floor-reset' && req.method === 'POST') {
        if (!env.FLOOR_DB) return new Response('no FLOOR_DB binding', { status: 501 })
        await env.FLOOR_DB.batch([env.FLOOR_DB.prepare('DELETE FROM edges'), env.FLOOR_DB.prepare('DELETE FROM nodes')])
        return Response.json({ ok: true })
      }
    }
    return worker.fetch(req, benchEnv(env), ctx)
  },
} satisfies ExportedHandler<BenchEnv>
