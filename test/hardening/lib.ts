/**
 * Shared machinery of the hardening suites. Everything here is derived from the route table (`ROUTES`
 * in src/app.ts): a route added later is enumerated, sampled, fuzzed and put through the auth matrix
 * without anyone touching these files.
 *
 * - `routeInfo()` describes every route: method, concrete sample path, body kind and limit, the zod
 *   schemas, the permission it needs.
 * - zod introspection (`acceptedTypes`, `objectParts`, `sample`) works on zod 4's public `_zod.def`, and is
 *   deliberately conservative: whenever a schema could accept anything (transform, preprocess, custom,
 *   coerce, lazy) it says so, and the suites then only assert "no 5xx", never "must be rejected".
 * - `dbDigest()` hashes every row of every table, so "the database is unchanged" is a single comparison.
 * - `hfetch()` runs the real app (createApp(ROUTES)) with generous rate limits, so a fuzz run measures
 *   validation, not the rate limiter (which has its own suite with the production settings).
 */
import { env } from 'cloudflare:workers'
import { createExecutionContext, waitOnExecutionContext } from 'cloudflare:test'
import { expect } from 'vitest'
import type { z } from 'zod'
import { createApp, ROUTES } from '../../src/app'
import { DEFAULT_MAX_BODY, pathMatcher, type RouteDef } from '../../src/http/route'
import { ROLE_PERMISSIONS, type Role } from '../../src/auth/permissions'
import { EdgeHoundClient, type Credentials } from '../../src/client'
import { BUILTIN_FINDINGS } from '../../src/findings/catalogue'
import { BASE } from '../helpers'
import { NEW_ID_SQL } from '../../src/graph/ids'
import { runAnalysisDirect } from '../fixtures/findings/helpers'

export { env, ROUTES }

// ---- running the app -----------------------------------------------------------------------------

/** Same bindings as the worker, with rate limits far above what a fuzz run can spend. */
export const HARD_ENV = {
  ...env,
  RATE_LIMIT_PER_SECOND: '1000000',
  RATE_LIMIT_BURST: '1000000',
  RATE_LIMIT_PER_IP_PER_SECOND: '1000000',
  RATE_LIMIT_PER_IP_BURST: '1000000',
} as unknown as Env

let app: ReturnType<typeof createApp> | undefined
let ipSeq = 0

/**
 * A new documentation-range client IP. Every distinct IP is a rate-limiter Durable Object with its own
 * SQLite storage, so the suites do not use one per request (thousands of objects slow workerd down
 * for every later test): HARD_ENV's budgets are unlimited, one IP serves everything except logins and
 * SAML callbacks (whose budget, 1/s burst 5, is fixed), and the matrix rotates through IP_POOL (256 addresses: at burst 20 + 10/s each, far more than the ~3 800 failing matrix requests can spend even on a fast machine).
 */
export function freshIp(): string {
  ipSeq++
  return `198.18.${(ipSeq >> 8) & 255}.${ipSeq & 255}`
}
const HARD_IP = '198.19.0.1'
let loginIp = freshIp()
let loginUses = 0
/** Routes that spend the fixed login budget (`publicLimit: 'login'`: password login, the SAML assertion consumer). */
const LOGIN_LIMITED = ROUTES.filter((r) => r.def.auth === 'public' && r.def.publicLimit === 'login').map((r) => ({
  method: r.def.method.toUpperCase(),
  path: pathMatcher(r.def.path),
}))
const loginLimited = (req: Request) => LOGIN_LIMITED.some((r) => r.method === req.method && r.path.test(new URL(req.url).pathname))

/** A pool of client IPs for requests under production limits (per-IP burst 20, 10/s). */
export const IP_POOL = Array.from({ length: 256 }, (_, i) => `198.19.${1 + (i >> 8)}.${i & 255}`)
let poolSeq = 0
export function poolIp(): string {
  return IP_POOL[poolSeq++ % IP_POOL.length]
}

/** Upper bound for any single request of the hardening suites: a slower answer counts as a hang. */
export const REQUEST_TIMEOUT_MS = 10_000

/**
 * Fetch through the real app (all ROUTES, all middleware: exactly the worker's default export) with
 * HARD_ENV, or with the worker's own bindings when given `env`; fails on a hang.
 *
 * Why not `exports.default.fetch` (test/helpers.ts workerFetch): measured in this pool (vpw 0.15.1),
 * every call through it makes the next one slower within a test file — 150 requests to an unknown
 * route took 1.2 s, then 7 s, then 15 s — while the same 150 through app.fetch take ~50 ms each
 * time. The hardening suites send thousands of requests per file, so they call the app directly.
 */
export async function hfetch(req: Request, bindings: Env = HARD_ENV): Promise<Response> {
  app ??= createApp(ROUTES)
  if (!req.headers.has('cf-connecting-ip')) {
    const h = new Headers(req.headers)
    let ip = HARD_IP
    if (loginLimited(req)) {
      if (++loginUses > 4) (loginIp = freshIp()), (loginUses = 1)
      ip = loginIp
    }
    h.set('CF-Connecting-IP', ip)
    req = new Request(req, { headers: h })
  }
  const ctx = createExecutionContext()
  let timer: ReturnType<typeof setTimeout> | undefined
  const hang = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`hang: ${req.method} ${req.url.slice(0, 200)} took more than ${REQUEST_TIMEOUT_MS} ms`)), REQUEST_TIMEOUT_MS)
  })
  try {
    const res = await Promise.race([Promise.resolve(app.fetch(req, bindings, ctx)), hang])
    await Promise.race([waitOnExecutionContext(ctx), hang])
    return res
  } finally {
    clearTimeout(timer)
  }
}

/** Any promise, failed as a hang after REQUEST_TIMEOUT_MS. */
export async function withTimeout<T>(p: Promise<T>, what: string, ms = REQUEST_TIMEOUT_MS): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined
  try {
    return await Promise.race([p, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`hang: ${what} took more than ${ms} ms`)), ms)))])
  } finally {
    clearTimeout(timer)
  }
}

export function hclient(credentials: Credentials = { kind: 'none' }, opts: { now?: () => Date } = {}) {
  return new EdgeHoundClient({ baseUrl: BASE, credentials, fetch: (r) => hfetch(r), ...opts })
}

export async function hAdminSession(): Promise<{ client: EdgeHoundClient; jwt: string }> {
  const r = await hclient().login('admin', 'test-admin-password')
  return { client: hclient({ kind: 'bearer', jwt: r.data.session_token }), jwt: r.data.session_token }
}

// ---- database digest -----------------------------------------------------------------------------

/**
 * Columns that change legitimately while a request is refused: the alarm of a token's limiter object
 * writes `api_tokens.last_access` (at most every 30 s) whatever the request's outcome. Rate-limit state
 * itself lives in Durable Object storage, not in D1, so it never enters the digest.
 */
export const VOLATILE_COLUMNS: Record<string, string[]> = {
  api_tokens: ['last_access'],
  // a collector client's sign of life, noted on any of its requests before the request's own checks (src/clients/clients.store.ts touchCheckin)
  clients: ['last_checkin', 'updated_at'],
}

export interface Digest {
  hash: string
  tables: Record<string, { rows: number; hash: string }>
}

async function sha256Hex(text: string): Promise<string> {
  const d = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text))
  return [...new Uint8Array(d)].map((b) => b.toString(16).padStart(2, '0')).join('')
}

/**
 * Every table of the schema except D1's own (`d1_migrations`, `_cf_*`) and full-text indexes: a virtual
 * table and its shadow tables (`<name>_data`, `_idx`, …) only mirror columns of a real table that is
 * hashed anyway. `sqlite_sequence` is kept on purpose: an insert that is undone by a compensating delete
 * (instead of never happening) still moves it, and the suites want to see that.
 */
export async function userTables(db: D1Database = env.DB): Promise<string[]> {
  const { results } = await db
    .prepare(`SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name <> 'd1_migrations' AND name NOT LIKE '\\_cf\\_%' ESCAPE '\\' ORDER BY name`)
    .all<{ name: string; sql: string | null }>()
  const virtual = results.filter((r) => /^\s*CREATE\s+VIRTUAL\s+TABLE/i.test(r.sql ?? '')).map((r) => r.name)
  return results.map((r) => r.name).filter((n) => !virtual.some((v) => n === v || n.startsWith(`${v}_`)))
}

/** Every row of every table (minus VOLATILE_COLUMNS), in a stable order, hashed per table and overall. */
export async function dbDigest(db: D1Database = env.DB): Promise<Digest> {
  const names = await userTables(db)
  const q = (n: string) => `"${n.replace(/"/g, '""')}"`
  const rows = await db.batch(names.map((n) => db.prepare(`SELECT * FROM ${q(n)}`)))
  const tables: Digest['tables'] = {}
  for (let i = 0; i < names.length; i++) {
    const skip = new Set(VOLATILE_COLUMNS[names[i]] ?? [])
    const lines = (rows[i].results as Record<string, unknown>[]).map((r) =>
      JSON.stringify(
        Object.keys(r)
          .filter((k) => !skip.has(k))
          .sort()
          .map((k) => [k, r[k] instanceof ArrayBuffer ? [...new Uint8Array(r[k] as ArrayBuffer)] : r[k]]),
      ),
    )
    lines.sort()
    tables[names[i]] = { rows: lines.length, hash: await sha256Hex(lines.join('\n')) }
    if (names[i] === 'audit_logs') {
      const claims = lines.filter((l) => l.includes('["status","success"]'))
      tables[AUDIT_SUCCESS] = { rows: claims.length, hash: await sha256Hex(claims.join('\n')) }
    }
  }
  return { hash: await sha256Hex(JSON.stringify(tables)), tables }
}

/**
 * The audit log records refused requests on purpose (intent and failure rows, docs/audit.md), and its
 * AUTOINCREMENT id moves sqlite_sequence; what it must never gain on a refusal is a success row, a claim of a change
 * that did not happen. So "the database is unchanged" compares every table but those two, plus the success rows.
 */
const AUDIT_SUCCESS = 'audit_logs (success rows)'
const REFUSAL_TRAIL = new Set(['audit_logs', 'sqlite_sequence'])

/** Names of the tables whose content differs between two digests (for readable failures). */
export function changedTables(a: Digest, b: Digest): string[] {
  const names = new Set([...Object.keys(a.tables), ...Object.keys(b.tables)])
  return [...names]
    .filter((n) => !REFUSAL_TRAIL.has(n) && a.tables[n]?.hash !== b.tables[n]?.hash)
    .map((n) => `${n} (${a.tables[n]?.rows ?? 0} -> ${b.tables[n]?.rows ?? 0} rows)`)
}

export function expectSameDigest(before: Digest, after: Digest, what: string) {
  expect(changedTables(before, after), `${what}: the database changed`).toEqual([])
}

// ---- envelope ------------------------------------------------------------------------------------

export interface Envelope {
  http_status: number
  timestamp: string
  request_id: string
  errors: { context: string; message: string }[]
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

/** Null when `text` is the spec's error envelope for `res`, else a description of what is wrong. */
export function envelopeProblem(res: Response, text: string): string | null {
  if (!/^application\/json/.test(res.headers.get('content-type') ?? '')) return `content-type ${res.headers.get('content-type')}`
  let b: Envelope
  try {
    b = JSON.parse(text)
  } catch {
    return `body is not JSON: ${text.slice(0, 200)}`
  }
  if (b.http_status !== res.status) return `http_status ${b.http_status} != ${res.status}`
  if (typeof b.timestamp !== 'string' || !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/.test(b.timestamp)) return `timestamp ${b.timestamp}`
  if (typeof b.request_id !== 'string' || !UUID_RE.test(b.request_id)) return `request_id ${b.request_id}`
  if (res.headers.get('requestid') !== b.request_id) return 'RequestID header differs from request_id'
  if (!Array.isArray(b.errors) || b.errors.length === 0) return 'errors is empty'
  for (const e of b.errors) if (typeof e?.context !== 'string' || typeof e?.message !== 'string') return `bad error detail ${JSON.stringify(e)}`
  return null
}

/** Text that must never reach a client: stack frames, SQL engine errors, source paths, password hashes. */
export const INTERNAL_TEXT = /D1_ERROR|SQLITE_|no such (table|column)|syntax error|\bat \S+ \(\S*:\d+:\d+\)|\.ts:\d+|\.js:\d+|pbkdf2-sha256\$|password_hash|key_sealed|injected fault/i

/** Matches of INTERNAL_TEXT in an answer that are not simply the client's own input echoed back. */
export function internalLeaks(answer: string, sent = ''): string[] {
  const re = new RegExp(INTERNAL_TEXT.source, 'gi')
  const lower = sent.toLowerCase()
  return [...answer.matchAll(re)].map((m) => m[0]).filter((m) => !lower.includes(m.toLowerCase()))
}

// ---- zod introspection ---------------------------------------------------------------------------

export type JsonType = 'string' | 'number' | 'boolean' | 'null' | 'array' | 'object'
export const JSON_TYPES: JsonType[] = ['string', 'number', 'boolean', 'null', 'array', 'object']

type AnyZ = z.ZodType & { _zod: { def: Record<string, any>; optin?: string } }
const def = (s: unknown) => (s as AnyZ)._zod.def

function jsonTypeOf(v: unknown): JsonType {
  if (v === null) return 'null'
  if (Array.isArray(v)) return 'array'
  return typeof v as JsonType
}

/** JSON types a schema can accept, or 'any' when it cannot be known (transforms, custom, coercion). */
export function acceptedTypes(s: unknown): Set<JsonType> | 'any' {
  const d = def(s)
  switch (d.type) {
    case 'string':
      return d.coerce ? 'any' : new Set(['string'])
    case 'number':
    case 'int':
      return d.coerce ? 'any' : new Set(['number'])
    case 'bigint':
      return 'any'
    case 'boolean':
      return d.coerce ? 'any' : new Set(['boolean'])
    case 'null':
      return new Set(['null'])
    case 'literal':
      return new Set((d.values as unknown[]).map(jsonTypeOf))
    case 'enum':
      return new Set(Object.values(d.entries as Record<string, unknown>).map(jsonTypeOf))
    case 'array':
    case 'tuple':
      return new Set(['array'])
    case 'object':
    case 'record':
      return new Set(['object'])
    case 'optional':
    case 'default':
    case 'prefault':
    case 'readonly':
    case 'nonoptional':
      return acceptedTypes(d.innerType)
    case 'nullable': {
      const t = acceptedTypes(d.innerType)
      return t === 'any' ? t : new Set([...t, 'null'])
    }
    case 'union': {
      const out = new Set<JsonType>()
      for (const o of d.options as unknown[]) {
        const t = acceptedTypes(o)
        if (t === 'any') return 'any'
        t.forEach((x) => out.add(x))
      }
      return out
    }
    case 'pipe':
      return acceptedTypes(d.in)
    default:
      return 'any'
  }
}

/** Whether an object member is required (absent → zod error). Conservative: unknown means optional. */
export function isRequired(s: unknown): boolean {
  const z4 = s as AnyZ
  if (z4._zod.optin === 'optional') return false
  const d = def(s)
  if (d.type === 'optional' || d.type === 'default' || d.type === 'prefault' || d.type === 'catch') return false
  return acceptedTypes(s) !== 'any'
}

/** The object schema inside wrappers (pipe input, optional, default …), or null. */
export function objectParts(s: unknown): { shape: Record<string, unknown>; strict: boolean } | null {
  let cur = s
  for (let i = 0; i < 20 && cur; i++) {
    const d = def(cur)
    if (d.type === 'object') return { shape: d.shape as Record<string, unknown>, strict: def(d.catchall ?? { _zod: { def: {} } })?.type === 'never' }
    if (d.type === 'pipe') cur = d.in
    else if (['optional', 'default', 'prefault', 'readonly', 'nonoptional', 'nullable'].includes(d.type)) cur = d.innerType
    else return null
  }
  return null
}

function checksOf(s: unknown): Record<string, any>[] {
  return ((def(s).checks ?? []) as unknown[]).map((c) => (c as AnyZ)._zod.def)
}

/** A value the schema most likely accepts (used for path and query parameters and placeholders). */
export function sample(s: unknown, depth = 0): unknown {
  if (!s || depth > 8) return 'x'
  const d = def(s)
  switch (d.type) {
    case 'string': {
      const cs = checksOf(s)
      const fmt = cs.find((c) => c.format)?.format
      if (fmt === 'uuid' || fmt === 'guid') return crypto.randomUUID()
      if (fmt === 'email') return 'sample@example.com'
      if (fmt === 'url') return 'https://example.com/x'
      if (fmt === 'datetime') return new Date().toISOString()
      const min = cs.find((c) => c.check === 'min_length')?.minimum ?? 1
      return 'sample'.padEnd(min, 'x')
    }
    case 'number':
    case 'int': {
      const cs = checksOf(s)
      const min = cs.find((c) => c.check === 'greater_than')
      return min ? Number(min.value) + 1 : 1
    }
    case 'boolean':
      return true
    case 'null':
      return null
    case 'literal':
      return (d.values as unknown[])[0]
    case 'enum':
      return Object.values(d.entries as Record<string, unknown>)[0]
    case 'array':
      return []
    case 'object': {
      const out: Record<string, unknown> = {}
      for (const [k, v] of Object.entries(d.shape as Record<string, unknown>)) if (isRequired(v)) out[k] = sample(v, depth + 1)
      return out
    }
    case 'record':
      return {}
    case 'optional':
    case 'default':
    case 'prefault':
    case 'readonly':
    case 'nonoptional':
    case 'nullable':
    case 'catch':
      return sample(d.innerType, depth + 1)
    case 'union':
      return sample((d.options as unknown[])[0], depth + 1)
    case 'pipe':
      return def(d.in).type === 'transform' ? sample(d.out, depth + 1) : sample(d.in, depth + 1)
    default:
      return 'x'
  }
}

/**
 * Parameters whose valid values no schema can tell (the handler checks them against a catalogue):
 * sampled by name, so a placeholder request gets past them to the rule under test.
 */
export const SEMANTIC_SAMPLES: Record<string, () => string> = {
  finding: () => BUILTIN_FINDINGS[0].type,
  finding_type: () => BUILTIN_FINDINGS[0].type,
  asset: () => 'title',
  entity_type: () => 'az-base',
  // Owned (type 3), not Tier Zero: BloodHound answers an administrator 403 for Tier Zero's position and
  // analysis_enabled (a refused change, not a permission), which this harness would read as an auth failure.
  asset_group_tag_id: () => '2',
}

const CANDIDATES = ['1', '42', 'sample', 'S-1-5-21-1000-2000-3000', 'title', 'a', 'A', 'x.md', 'users', 'true', 'sample@example.com', 'https://example.com/x', '2026-01-01T00:00:00.000Z']

/** A sample the schema accepts (checked with safeParse), trying common shapes when the first guess fails. */
export function sampleValid(s: unknown): unknown {
  const schema = s as z.ZodType
  const first = sample(s)
  if (!s || schema.safeParse(first).success) return first
  for (const c of [...CANDIDATES, crypto.randomUUID(), 1, true]) if (schema.safeParse(c).success) return c
  return first
}

// ---- routes --------------------------------------------------------------------------------------

export interface RouteInfo {
  def: RouteDef
  /** e.g. `PUT /api/v2/extensions` */
  label: string
  method: string
  /** names of the path parameters, in order */
  pathParams: string[]
  bodyKind: 'json' | 'form' | 'raw' | 'none'
  maxBytes: number
  /** sample values of the path parameters, URL-encoded */
  sampleParams: () => Record<string, string>
  /** a concrete path with sample parameter values */
  samplePath: () => string
  /** the path with the given parameter values inserted verbatim (caller encodes) */
  pathWith: (values: Record<string, string>) => string
  /** permission needed, or 'public' / 'authenticated' */
  auth: RouteDef['auth']
}

const PARAM_RE = /:([A-Za-z0-9_]+)(\{[^}]*\})?(\?)?/g

export function routeInfo(): RouteInfo[] {
  return ROUTES.map(({ def: d }) => {
    const pathParams = [...d.path.matchAll(PARAM_RE)].map((m) => m[1])
    const shape = d.params ? (objectParts(d.params)?.shape ?? {}) : {}
    const pathWith = (values: Record<string, string>) => d.path.replace(PARAM_RE, (_m, name: string) => values[name] ?? 'x')
    const sampleParams = () =>
      Object.fromEntries(pathParams.map((p) => [p, encodeURIComponent(SEMANTIC_SAMPLES[p]?.() ?? String(sampleValid(shape[p]) ?? 'x'))]))
    const samplePath = () => pathWith(sampleParams())
    return {
      def: d,
      label: `${d.method.toUpperCase()} ${d.path}`,
      method: d.method.toUpperCase(),
      pathParams,
      bodyKind: d.body?.kind ?? 'none',
      maxBytes: d.body?.maxBytes ?? DEFAULT_MAX_BODY,
      sampleParams,
      samplePath,
      pathWith,
      auth: d.auth,
    }
  })
}

/** Query string of sample values for the route's required (and SEMANTIC_SAMPLES) query parameters ('' when none). */
export function sampleQuery(d: RouteDef, overrides: Record<string, string> = {}): string {
  const parts = d.query ? objectParts(d.query) : null
  const out = new URLSearchParams()
  if (parts)
    for (const [k, v] of Object.entries(parts.shape))
      if (isRequired(v) || k in overrides || SEMANTIC_SAMPLES[k]) out.set(k, overrides[k] ?? SEMANTIC_SAMPLES[k]?.() ?? String(sampleValid(v)))
  for (const [k, v] of Object.entries(overrides)) if (!out.has(k)) out.set(k, v)
  const s = out.toString()
  return s ? `?${s}` : ''
}

/** Roles that hold the route's permission (every role for 'authenticated'). */
export function rolesAllowed(auth: RouteDef['auth']): Role[] {
  const roles = Object.keys(ROLE_PERMISSIONS) as Role[]
  if (auth === 'public' || auth === 'authenticated') return roles
  return roles.filter((r) => ROLE_PERMISSIONS[r].includes(auth))
}

// ---- bookkeeping (figures for SECURITY.md) ------------------------------------------------------

/** Case counters per suite; printed as one `HARDENING <suite> <json>` line at the end of each file. */
export const tally: Record<string, number> = {}
export function count(what: string, n = 1) {
  tally[what] = (tally[what] ?? 0) + n
}
export function report(suite: string) {
  console.log(`HARDENING ${suite} ${JSON.stringify(tally)}`)
}

// ---- cross-environment findings (issue 18) ---------------------------------------------------------

/**
 * Cross-environment edges for a graph fixture, then one analysis run, so that the suites meet findings whose
 * two ends lie in different environments (the most common kind of real finding). Each pair is [source
 * object id, Tier Zero target object id] (e.g. a user of one environment and another environment's Domain
 * node); the edge kind is that of the finding type SEMANTIC_SAMPLES names, so every sampled findings request
 * reads these rows. Pass pairs in both directions. Returns that finding type.
 */
export async function seedCrossEnvironmentFindings(pairs: [string, string][], db: D1Database = env.DB): Promise<string> {
  const type = SEMANTIC_SAMPLES.finding()
  const kind = BUILTIN_FINDINGS.find((d) => d.type === type)?.edgeKind
  if (!kind) throw new Error(`seedCrossEnvironmentFindings: ${type} is not a relationship finding`)
  const now = new Date().toISOString()
  await db.batch(
    pairs.map(([start, end]) =>
      db
        .prepare(
          `INSERT INTO edges (start_id, end_id, kind, properties, created_at, updated_at, id)
           SELECT s.id, t.id, ?3, ?4, ?5, ?5, ${NEW_ID_SQL} FROM nodes s, nodes t WHERE s.objectid = ?1 AND t.objectid = ?2
           ON CONFLICT (start_id, kind, end_id) DO NOTHING`,
        )
        .bind(start, end, kind, JSON.stringify({ isinherited: false, note: `edge ${start} -> ${end}` }), now),
    ),
  )
  const summary = await runAnalysisDirect(db)
  const { results } = await db
    .prepare(`SELECT from_objectid, to_objectid FROM findings WHERE finding = ?1 AND deleted_at IS NULL`)
    .bind(type)
    .all<{ from_objectid: string; to_objectid: string }>()
  for (const [s, t] of pairs)
    if (!results.some((r) => r.from_objectid === s && r.to_objectid === t))
      throw new Error(`seedCrossEnvironmentFindings: no ${type} finding ${s} -> ${t} after run ${JSON.stringify(summary).slice(0, 200)}`)
  return type
}
