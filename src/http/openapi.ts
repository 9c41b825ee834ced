import { z } from 'zod'
import { openApiPath, type RouteEntry } from './route'

/**
 * OpenAPI 3.1 document built from the route declarations: the zod schemas that validate requests are
 * converted with zod's own JSON Schema generator (draft 2020-12, which OpenAPI 3.1 uses). Every
 * authenticated route gets both security schemes and its permission (`x-permission`); every route gets
 * the standard error responses with the error envelope.
 */
export const ErrorEnvelope = z
  .object({
    http_status: z.number().int().min(100).max(600),
    timestamp: z.string().describe('RFC 3339 time at which the error response was sent'),
    request_id: z.string().uuid(),
    errors: z.array(z.object({ context: z.string(), message: z.string() })).min(1),
  })
  .meta({ id: 'ErrorEnvelope' })

const ERROR_TEXT: Record<number, string> = {
  400: 'Bad Request: payload, path or query parameters missing, malformed or of the wrong type',
  401: 'Unauthorized: missing, invalid or expired credentials',
  403: 'Forbidden: the caller lacks the permission this operation needs',
  404: 'Not Found',
  405: 'Method Not Allowed',
  409: 'Conflict',
  413: 'Payload Too Large',
  415: 'Unsupported Media Type',
  429: 'Too Many Requests (RateLimit, RateLimit-Policy and Retry-After headers)',
  500: 'Internal Server Error',
  503: 'Service Unavailable (the rate limiter or the credential store could not be reached; retry after Retry-After)',
}

type Json = Record<string, unknown>

/** Every `$ref` string in `node` (deeply) passed through `map`; returns a new value. */
function mapRefs(node: unknown, map: (ref: string) => string): unknown {
  if (Array.isArray(node)) return node.map((n) => mapRefs(n, map))
  if (!node || typeof node !== 'object') return node
  const out: Json = {}
  for (const [k, v] of Object.entries(node)) out[k] = k === '$ref' && typeof v === 'string' ? map(v) : mapRefs(v, map)
  return out
}

const COMPONENT = '#/components/schemas/'

/**
 * The document's named schemas (issue 18 item 5). zod's JSON Schema output puts the schemas that carry a
 * `.meta({ id })` under a local `$defs` and points at them with `#/$defs/<id>` (and at the root of the
 * converted schema with `#`). Inside an OpenAPI document those pointers resolve against the document root,
 * where nothing is, so standard tools failed on every one. Each converted schema is passed through `add`:
 * its `$defs` move to `components/schemas` and every pointer is rewritten to `#/components/schemas/<id>`.
 * One id converted twice with different content (zod's input and output forms differ when a schema has
 * defaults or transforms) keeps its id for the first and gets `<id>Input` / `<id>Output` (then a number)
 * for the others, so no component is ever silently replaced.
 */
class SchemaComponents {
  readonly schemas: Record<string, Json> = {}
  private recursive = 0

  add(schema: z.ZodType, io: 'input' | 'output'): Json {
    const raw = z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'any' }) as Json
    delete raw.$schema
    const defs = (raw.$defs ?? {}) as Record<string, Json>
    delete raw.$defs
    let root: Json = raw
    // A schema that refers to its own root ("#") becomes a component itself, so "#" has a target.
    let rootName: string | undefined
    if (JSON.stringify(raw).includes('"$ref":"#"')) rootName = `Recursive${++this.recursive}`
    const names = new Map<string, string>(Object.keys(defs).map((n) => [n, n]))
    const rewrite = (v: unknown) =>
      mapRefs(v, (ref) => {
        if (ref === '#' && rootName) return COMPONENT + rootName
        if (ref.startsWith('#/$defs/')) return COMPONENT + (names.get(ref.slice(8)) ?? ref.slice(8))
        return ref
      }) as Json
    // Choose final names: a def whose content differs from an existing component of that name is renamed.
    // Renaming one def changes the pointers in others, so repeat until the choice is stable.
    for (let pass = 0; pass < 10; pass++) {
      let changed = false
      for (const [orig, def] of Object.entries(defs)) {
        const name = names.get(orig)!
        const existing = this.schemas[name]
        if (!existing || JSON.stringify(existing) === JSON.stringify(rewrite(def))) continue
        names.set(orig, this.freeName(orig, io, rewrite(def)))
        changed = true
      }
      if (!changed) break
    }
    for (const [orig, def] of Object.entries(defs)) this.schemas[names.get(orig)!] = rewrite(def)
    root = rewrite(root)
    if (rootName) {
      this.schemas[rootName] = root
      return { $ref: COMPONENT + rootName }
    }
    return root
  }

  private freeName(id: string, io: 'input' | 'output', content: Json): string {
    const base = `${id}${io === 'input' ? 'Input' : 'Output'}`
    for (let i = 1; ; i++) {
      const name = i === 1 ? base : `${base}${i}`
      const existing = this.schemas[name]
      if (!existing || JSON.stringify(existing) === JSON.stringify(content)) return name
    }
  }
}

export function errorStatuses(r: RouteEntry): number[] {
  const d = r.def
  const out = new Set<number>([400, 429, 500])
  if (d.auth !== 'public' || d.recognises) out.add(401).add(503)
  if (d.auth !== 'public' && d.auth !== 'authenticated') out.add(403)
  if (d.params) out.add(404)
  if (d.body) out.add(413).add(415)
  for (const s of Object.keys(d.responses)) if (Number(s) >= 400) out.delete(Number(s))
  return [...out].sort()
}

export function buildOpenApi(routes: RouteEntry[], serverUrl?: string) {
  const paths: Record<string, Record<string, unknown>> = {}
  const components = new SchemaComponents()
  const jsonSchema = (schema: z.ZodType, io: 'input' | 'output') => components.add(schema, io)
  const errorEnvelope = jsonSchema(ErrorEnvelope, 'output')
  for (const r of routes) {
    const d = r.def
    if (d.hidden) continue
    const path = openApiPath(d.path)
    const parameters: unknown[] = []
    for (const [where, schema] of [
      ['path', d.params],
      ['query', d.query],
    ] as const) {
      if (!schema) continue
      const js = jsonSchema(schema, 'input') as { properties?: Record<string, unknown>; required?: string[] }
      for (const [name, prop] of Object.entries(js.properties ?? {})) {
        parameters.push({
          name,
          in: where,
          required: where === 'path' || (js.required ?? []).includes(name),
          schema: prop,
          ...((prop as { description?: string }).description ? { description: (prop as { description: string }).description } : {}),
        })
      }
    }
    if (d.auth !== 'public' || d.recognises) {
      for (const name of ['Authorization', 'RequestDate', 'Signature'])
        parameters.push({ $ref: `#/components/parameters/${name}` })
    }
    let requestBody: unknown
    if (d.body) {
      if (d.body.kind === 'json')
        requestBody = { required: d.body.required !== false, content: { 'application/json': { schema: jsonSchema(d.body.schema, 'input') } } }
      else if (d.body.kind === 'form')
        requestBody = {
          required: true,
          content: {
            'multipart/form-data': { schema: jsonSchema(d.body.schema, 'input') },
            ...(d.body.json ? { 'application/json': { schema: jsonSchema(d.body.json, 'input') } } : {}),
          },
        }
      else
        requestBody = {
          required: true,
          description: d.body.description,
          content: Object.fromEntries(d.body.contentTypes.map((t) => [t, { schema: { type: 'string', contentMediaType: t } }])),
        }
    }
    const responses: Record<string, unknown> = {}
    for (const [status, spec] of Object.entries(d.responses)) {
      const ct = spec.contentType ?? 'application/json'
      responses[status] = {
        description: spec.description,
        ...(spec.schema ? { content: { [ct]: { schema: jsonSchema(spec.schema, 'output') } } } : {}),
        ...(spec.headers
          ? { headers: Object.fromEntries(Object.entries(spec.headers).map(([k, v]) => [k, { description: v, schema: { type: 'string' } }])) }
          : {}),
      }
    }
    for (const s of errorStatuses(r)) responses[String(s)] = { $ref: `#/components/responses/E${s}` }
    const op: Record<string, unknown> = {
      operationId: d.operationId,
      summary: d.summary,
      ...(d.description ? { description: d.description } : {}),
      tags: d.tags,
      ...(d.deprecated ? { deprecated: true } : {}),
      // a public route that recognises a caller: anonymous, or either scheme (OpenAPI's `{}` is "no security")
      security: d.auth === 'public' ? (d.recognises ? [{}, { SignedRequest: [] }, { BearerAuth: [] }] : []) : [{ SignedRequest: [] }, { BearerAuth: [] }],
      ...(d.recognises ? { 'x-permission-for-more': d.recognises } : {}),
      ...(d.auth !== 'public' ? { 'x-permission': d.auth === 'authenticated' ? null : d.auth } : {}),
      // rate-limit weight (src/ratelimit/cost.ts): tokens taken on admission; the measured rest is charged after
      ...(d.auth !== 'public' ? { 'x-rate-limit-cost': d.cost === undefined ? 1 : typeof d.cost === 'number' ? d.cost : d.cost.doc } : {}),
      parameters,
      ...(requestBody ? { requestBody } : {}),
      responses,
    }
    ;(paths[path] ??= {})[d.method] = op
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'EdgeHound API',
      version: 'v2',
      description:
        'Attack-path analysis API, compatible with the BloodHound API. Authenticate with signed requests ' +
        '(`Authorization: svcsignature <token id>` or `bhesignature <token id>`, `RequestDate`, `Signature`) or a session JWT. ' +
        'Every response that read or wrote the database carries `X-D1-Bookmark`; send it back on a later request ' +
        'to read at least what that response saw (read-your-writes with read replicas; docs/scale.md). ' +
        'A malformed `X-D1-Bookmark` is a 400.',
    },
    ...(serverUrl ? { servers: [{ url: serverUrl }] } : {}),
    paths,
    components: {
      securitySchemes: {
        SignedRequest: {
          type: 'apiKey',
          in: 'header',
          name: 'Authorization',
          description:
            '`svcsignature <token id>` (alias `bhesignature`) with `RequestDate` (RFC 3339) and `Signature` = base64 of ' +
            'HMAC(HMAC(HMAC(key, METHOD + path?query), RequestDate[:13]), body).',
        },
        BearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
      },
      parameters: {
        Authorization: { name: 'Authorization', in: 'header', required: false, schema: { type: 'string' }, description: '`svcsignature <token id>`, `bhesignature <token id>` or `Bearer <JWT>`' },
        RequestDate: { name: 'RequestDate', in: 'header', required: false, schema: { type: 'string' }, description: 'RFC 3339 date-time of the request (signed requests)' },
        Signature: { name: 'Signature', in: 'header', required: false, schema: { type: 'string' }, description: 'base64 HMAC-SHA-256 chain (signed requests)' },
      },
      schemas: components.schemas,
      responses: Object.fromEntries(
        Object.entries(ERROR_TEXT).map(([s, text]) => [`E${s}`, { description: text, content: { 'application/json': { schema: errorEnvelope } } }]),
      ),
    },
  }
}
