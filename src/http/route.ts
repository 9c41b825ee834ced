import type { Context, MiddlewareHandler } from 'hono'
import { bodyLimit } from 'hono/body-limit'
import { zValidator } from '@hono/zod-validator'
import { z } from 'zod'
import type { AppEnv } from '../env'
import type { Permission } from '../auth/permissions'
import { authenticate, authenticateIfPresent, permit } from '../auth/authenticate'
import { ApiError } from './errors'
import { zodDetails } from './zod-errors'
import { AuditScope, failureMessage, resolveAction, type AuditDecl } from '../audit/audit'
import { writeAuditRow } from '../audit/audit.store'
import { replayClassError, type ReplayDecl } from '../auth/replay'
import { clientScope } from '../auth/client-scope'

/**
 * One declaration per route: method, path, who may call it, what it accepts and what it answers.
 * `defineRoute` turns it into Hono middleware in the house order (body limit → authenticate + rate limit
 * → permission → content type → validation → handler), and the same declaration feeds the OpenAPI
 * document (src/http/openapi.ts) and the 405 matcher. A route therefore cannot exist without being
 * documented, authenticated and validated.
 */
export type AuthRequirement = 'public' | 'authenticated' | Permission

export type BodySpec =
  | { kind: 'json'; schema: z.ZodType; maxBytes?: number; required?: boolean }
  | {
      kind: 'form'
      schema: z.ZodType
      maxBytes: number
      /**
       * A JSON body is accepted too (Content-Type application/json), validated by this schema. The handler then
       * gets `{ json }` instead of `{ form }` and decides which it takes (one BloodHound route, PATCH of an SSO
       * provider, is multipart for SAML providers and JSON for OIDC ones).
       */
      json?: z.ZodType
    }
  | {
      kind: 'raw'
      contentTypes: string[]
      maxBytes: number
      description?: string
      /** appended to the 413 message: how to send the content in smaller requests */
      tooLarge?: string
      /** a request without Content-Type is read as the first of contentTypes (AzureHound's ingest sends none) */
      missingTypeIs?: string
    }

export interface ResponseSpec {
  description: string
  schema?: z.ZodType
  /** default application/json */
  contentType?: string
  headers?: Record<string, string>
}

export interface RouteDef<
  P extends z.ZodType = z.ZodType,
  Q extends z.ZodType = z.ZodType,
  B extends BodySpec | undefined = BodySpec | undefined,
> {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete'
  /** Hono syntax, e.g. `/api/v2/tokens/:id` */
  path: string
  operationId: string
  summary: string
  description?: string
  tags: string[]
  deprecated?: boolean
  auth: AuthRequirement
  params?: P
  query?: Q
  body?: B
  /** success responses; the standard error responses are added automatically */
  responses: Record<number, ResponseSpec>
  /**
   * Rate-limit weight of one request (src/ratelimit/cost.ts): tokens taken from the caller's bucket on
   * admission, default 1. A function (`of`, with `doc` saying how for the OpenAPI document) when the cost
   * is known from the request before the work (the `type` asked for, an upload's Content-Length). Requests weighing more than 1 also take a slot among
   * their user's weighted requests in flight. Declare it next to the route, and keep README's table
   * ("Rate limits and cost") in step.
   */
  cost?: number | { of: (c: Context<AppEnv>) => number; doc: string }
  /** which bucket unauthenticated callers spend; default `ip` */
  publicLimit?: 'ip' | 'login'
  /**
   * Only with `auth: 'public'`: the route also recognises a signed-in caller (authenticateIfPresent in
   * src/auth/authenticate.ts), so that it may answer more to one holding this permission; the handler checks
   * it (`c.var.principal`). Without credentials it is a public route; a bad Authorization header is a 401; a
   * stale session cookie is treated as none. The OpenAPI document lists the permission as
   * `x-permission-for-more`.
   */
  recognises?: Permission
  /** extra headers set on every response of this route (e.g. Deprecation) */
  responseHeaders?: Record<string, string>
  /** hide from the OpenAPI document (only for aliases that are documented elsewhere) */
  hidden?: boolean
  /**
   * Audit entries of this route (src/audit/audit.ts). Every non-GET route must declare one (a test walks
   * the route table); `{ exempt: reason }` for a non-GET route that changes nothing.
   */
  audit?: AuditDecl
  /**
   * A non-GET route that changes nothing (today only POST /api/v2/graphs/cypher, which refuses updating
   * clauses). It is charged for its time like a GET (src/auth/authenticate.ts) and must be declared
   * `replay: { repeatable }`. Only allowed together with `audit: { exempt }` (checked by defineRoute), so a
   * route that writes cannot opt in.
   */
  readOnly?: true
  /**
   * What a copy of one of this route's signed requests may gain (SECURITY.md rule 3, src/auth/replay.ts).
   * Required on every non-GET route that accepts signed requests (the type of defineRoute's argument demands
   * it, ReplayRequirement; defineRoute refuses a declaration without it at run time, and
   * test/unit/route-replay.test.ts walks the route table), each with a one-line reason:
   * - `{ once: reason }`: identity and access changes and anything that answers with a secret. A signed
   *   request is admitted once; a copy (or an honest repeat) within the window is refused with 401.
   * - `{ repeatable: reason }`: data-plane operations whose effect is idempotent or bounded by the rate
   *   limit. The same signed request may be admitted again within the signature's window, as BloodHound
   *   serves it. The `SIGNED_MUTATIONS_ONCE=on` setting makes these one-use too.
   */
  replay?: ReplayDecl
}

type Infer<T> = T extends z.ZodType ? z.infer<T> : undefined
type BodyOf<B> = B extends { kind: 'form'; schema: infer S; json: infer J }
  ? { form: Infer<S>; json?: never } | { json: Infer<J>; form?: never }
  : B extends { kind: 'json' | 'form'; schema: infer S }
    ? Infer<S>
    : B extends { kind: 'raw' }
      ? ArrayBuffer
      : undefined

export interface RouteInput<P, Q, B> {
  params: Infer<P>
  query: Infer<Q>
  body: BodyOf<B>
}

export type Handler<P, Q, B> = (c: Context<AppEnv>, input: RouteInput<P, Q, B>) => Response | Promise<Response>

export interface RouteEntry {
  def: RouteDef
  handlers: MiddlewareHandler<AppEnv>[]
}

export const DEFAULT_MAX_BODY = 1024 * 1024 // 1 MiB for routes that do not say otherwise

function mediaType(c: Context): string {
  return (c.req.header('content-type') ?? '').split(';')[0].trim().toLowerCase()
}

function parseOrThrow<T extends z.ZodType>(schema: T, value: unknown, prefix: string): z.infer<T> {
  const r = schema.safeParse(value)
  if (!r.success) throw ApiError.many(400, zodDetails(r.error, prefix))
  return r.data
}

/** The one validation hook: a failed zod parse becomes a 400 envelope listing every issue with its path. */
function validationHook(prefix: string) {
  return (result: { success: boolean; error?: unknown }) => {
    if (!result.success) throw ApiError.many(400, zodDetails(result.error as z.ZodError, prefix))
  }
}

const isJsonType = (mt: string) => mt === 'application/json' || /^application\/[a-z0-9.+-]*\+json$/.test(mt)

async function readBody(c: Context<AppEnv>, spec: BodySpec): Promise<unknown> {
  const mt = mediaType(c)
  if (spec.kind === 'json' || (spec.kind === 'form' && spec.json && isJsonType(mt))) {
    const required = spec.kind === 'json' ? spec.required : true
    const buf = await c.req.arrayBuffer()
    if (buf.byteLength === 0) {
      if (required === false) return undefined
      throw new ApiError(400, 'a JSON request body is required', 'body')
    }
    if (!isJsonType(mt))
      throw new ApiError(415, `unsupported content type "${mt || '(none)'}": expected application/json`, 'content-type')
    let text: string
    try {
      text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(buf)
    } catch {
      throw new ApiError(400, 'the request body is not valid UTF-8', 'body')
    }
    try {
      return JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text)
    } catch (e) {
      throw new ApiError(400, `the request body is not valid JSON: ${(e as Error).message}`, 'body')
    }
  }
  if (spec.kind === 'form') {
    if (mt !== 'multipart/form-data')
      throw new ApiError(415, `unsupported content type "${mt || '(none)'}": expected multipart/form-data${spec.json ? ' or application/json' : ''}`, 'content-type')
    let form: FormData
    try {
      form = await c.req.formData()
    } catch {
      throw new ApiError(400, 'the multipart form could not be parsed', 'body')
    }
    // Repeated keys become arrays so that schemas can insist on exactly one value.
    const out: Record<string, File | string | (File | string)[]> = Object.create(null)
    for (const key of new Set(form.keys())) {
      const all = form.getAll(key)
      out[key] = all.length === 1 ? all[0] : all
    }
    return out
  }
  if (!mt && spec.missingTypeIs) return c.req.arrayBuffer()
  if (!spec.contentTypes.includes(mt))
    throw new ApiError(415, `unsupported content type "${mt || '(none)'}": expected one of ${spec.contentTypes.join(', ')}`, 'content-type')
  return c.req.arrayBuffer()
}

/**
 * What the type demands of `replay`: a GET or a public route declares none; every other route declares
 * `{ once: reason }` or `{ repeatable: reason }` (src/auth/replay.ts). A new mutating route without it does
 * not compile; defineRoute checks the same at run time (replayClassError), with the reason's length.
 */
export type ReplayRequirement = { method: 'get'; replay?: never } | { auth: 'public'; replay?: never } | { replay: ReplayDecl }

export function defineRoute<P extends z.ZodType, Q extends z.ZodType, B extends BodySpec | undefined>(
  def: RouteDef<P, Q, B> & ReplayRequirement,
  handler: Handler<P, Q, B>,
): RouteEntry {
  if (def.readOnly && !(def.audit && 'exempt' in def.audit))
    throw new Error(`route ${def.method.toUpperCase()} ${def.path}: readOnly needs audit: { exempt } (a route that changes nothing)`)
  const replayError = replayClassError(def)
  if (replayError) throw new Error(`route ${def.method.toUpperCase()} ${def.path}: ${replayError}`)
  const handlers: MiddlewareHandler<AppEnv>[] = []
  const maxBytes = def.body?.maxBytes ?? DEFAULT_MAX_BODY
  handlers.push(async (c, next) => {
    c.set('routeTemplate', def.path)
    if (def.responseHeaders) for (const [k, v] of Object.entries(def.responseHeaders)) c.header(k, v)
    await next()
  })
  handlers.push(
    bodyLimit({
      maxSize: maxBytes,
      onError: () => {
        const how = def.body?.kind === 'raw' && def.body.tooLarge ? `: ${def.body.tooLarge}` : ''
        throw new ApiError(413, `request body exceeds the limit of ${maxBytes} bytes for this route${how}`, 'body')
      },
    }),
  )
  if (def.recognises && def.auth !== 'public')
    throw new Error(`route ${def.method.toUpperCase()} ${def.path}: recognises is for public routes (an authenticated route knows its caller already)`)
  if (def.recognises && def.method !== 'get')
    throw new Error(`route ${def.method.toUpperCase()} ${def.path}: recognises is for GET routes (a change needs a declared permission)`)
  const cost = def.cost
  handlers.push(
    def.recognises ? authenticateIfPresent(def.publicLimit ?? 'ip') : authenticate(
      def.auth === 'public'
        ? { required: false, publicLimit: def.publicLimit ?? 'ip' }
        : {
            required: true,
            cost: cost === undefined ? undefined : typeof cost === 'number' ? () => cost : cost.of,
            readOnly: def.readOnly === true,
            replay: def.replay && 'once' in def.replay ? 'once' : 'repeatable',
          },
    ),
  )
  if (def.auth !== 'public') handlers.push(clientScope(def.auth))
  if (def.auth !== 'public' && def.auth !== 'authenticated') handlers.push(permit(def.auth))
  // Path and query validation through @hono/zod-validator; one hook turns failures into the envelope.
  if (def.params) handlers.push(zValidator('param', def.params, validationHook('path.')) as unknown as MiddlewareHandler<AppEnv>)
  if (def.query) handlers.push(zValidator('query', def.query, validationHook('query.')) as unknown as MiddlewareHandler<AppEnv>)
  handlers.push(async (c) => {
    const req = c.req as unknown as { valid: (t: 'param' | 'query') => unknown }
    const params = def.params ? req.valid('param') : undefined
    const query = def.query ? req.valid('query') : undefined
    let body: unknown
    if (def.body) {
      const raw = await readBody(c, def.body)
      if (def.body.kind === 'form' && def.body.json)
        body = isJsonType(mediaType(c)) ? { json: parseOrThrow(def.body.json, raw, '') } : { form: parseOrThrow(def.body.schema, raw, 'form.') }
      else body = def.body.kind === 'raw' || raw === undefined ? raw : parseOrThrow(def.body.schema, raw, def.body.kind === 'form' ? 'form.' : '')
    }
    const input = { params, query, body } as RouteInput<P, Q, B>
    const decl = def.audit
    if (!decl || 'exempt' in decl) return handler(c, input)
    return runAudited(c, decl, input, def.path, () => handler(c, input))
  })
  return { def: def as unknown as RouteDef, handlers }
}

/**
 * Intent row → handler → failure row if it threw before an outcome row committed with its change.
 * Every audited route writes its outcome row in its change's batch (docs/audit.md); a handler that answers
 * 2xx without having done so is a defect: the row is still written here (never a change without its
 * entry) and an error is logged, which test/hardening/audit-atomicity.test.ts treats as a failure. A request
 * that succeeded without changing anything says so (`markUnchanged`) and gets its `changed: false` row here.
 */
async function runAudited(
  c: Context<AppEnv>,
  decl: Exclude<AuditDecl, { exempt: string }>,
  input: { params: unknown; query: unknown; body: unknown },
  path: string,
  run: () => Response | Promise<Response>,
): Promise<Response> {
  const db = c.env.DB
  const scope = new AuditScope(resolveAction(decl, input), c, decl.fields ? decl.fields(input) : {})
  c.set('audit', scope)
  // the environments of the request's rows, known before its first row (src/audit/visibility.ts)
  if (decl.environments) scope.environments = await decl.environments(input, c)
  if (decl.intent !== false) await writeAuditRow(scope.row(db, 'intent'))
  let res: Response
  try {
    res = await run()
  } catch (err) {
    if (!scope.committed) {
      try {
        await writeAuditRow(scope.row(db, 'failure', { error: failureMessage(err) }))
      } catch (e) {
        console.error(JSON.stringify({ level: 'error', request_id: c.get('requestId'), error: `audit failure row not written: ${String((e as Error)?.message ?? e)}` }))
      }
    }
    throw err
  }
  if (scope.failedReason !== null && !scope.committed) {
    await writeAuditRow(scope.row(db, 'failure', { error: scope.failedReason }))
  } else if (res.status < 400 && !scope.committed && scope.unchanged) {
    await writeAuditRow(scope.row(db, 'success', { changed: false }))
  } else if (res.status < 400 && !scope.committed) {
    console.error(JSON.stringify({ level: 'error', request_id: c.get('requestId'), route: path, error: AUDIT_OUTSIDE_BATCH }))
    await writeAuditRow(scope.row(db, 'success'))
  } else if (res.status >= 400 && !scope.committed) {
    await writeAuditRow(scope.row(db, 'failure', { http_status: res.status }))
  }
  return res
}

/** Logged when a handler answered 2xx without its success row in its change's batch (a defect; see runAudited). */
export const AUDIT_OUTSIDE_BATCH = 'audit success row not written in the change batch'

/**
 * The order routes are registered in, so that a literal path segment always beats a parameter.
 *
 * Hono runs every route whose pattern matches, in registration order, and the first to answer wins; a
 * parameter route registered before a literal one beside it captures its path (`GET /api/v2/analysis/:run_id`
 * answered `/api/v2/analysis/status` with 400 "id is malformed"). Routes are therefore ordered by the shape
 * of their segments, compared left to right: at the first position where one route has a literal segment
 * and the other a parameter, the literal one comes first. Two routes that can match the same concrete path
 * have the same number of segments and agree on every literal they both have, so the first position where
 * their shapes differ decides between them, whatever the files they are declared in; routes of the same
 * shape keep their declared order (the sort is stable). Routes that can never match the same path may move
 * relative to each other, which changes nothing. test/unit/route-order.test.ts walks the route table.
 */
export function routeOrder<T extends { def: { path: string } }>(routes: readonly T[]): T[] {
  const shape = (path: string) => path.split('/').filter(Boolean).map((seg) => (seg.startsWith(':') || seg.includes('*') ? 1 : 0))
  const shapes = new Map(routes.map((r) => [r, shape(r.def.path)] as const))
  return [...routes].sort((a, b) => {
    const x = shapes.get(a)!
    const y = shapes.get(b)!
    for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i] - y[i]
    return x.length - y.length
  })
}

/** Hono path `/a/:id/b` → OpenAPI `/a/{id}/b` */
export function openApiPath(path: string): string {
  return path.replace(/:([A-Za-z0-9_]+)(\{[^}]*\})?/g, '{$1}')
}

/** A regular expression matching concrete paths of a route template (for 405 detection). */
export function pathMatcher(path: string): RegExp {
  const src = path
    .split(/(:[A-Za-z0-9_]+(?:\{[^}]*\})?)/)
    .map((part) => {
      if (!part.startsWith(':')) return part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
      const m = /\{([^}]*)\}/.exec(part)
      return m ? `(?:${m[1]})` : '[^/]+'
    })
    .join('')
  return new RegExp(`^${src}$`)
}
