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
  503: 'Service Unavailable (the rate limiter could not be reached; retry after Retry-After)',
}

function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): Record<string, unknown> {
  const s = z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'any' }) as Record<string, unknown>
  delete s.$schema
  return s
}

export function errorStatuses(r: RouteEntry): number[] {
  const d = r.def
  const out = new Set<number>([400, 429, 500])
  if (d.auth !== 'public') out.add(401).add(503)
  if (d.auth !== 'public' && d.auth !== 'authenticated') out.add(403)
  if (d.params) out.add(404)
  if (d.body) out.add(413).add(415)
  for (const s of Object.keys(d.responses)) if (Number(s) >= 400) out.delete(Number(s))
  return [...out].sort()
}

export function buildOpenApi(routes: RouteEntry[], serverUrl?: string) {
  const paths: Record<string, Record<string, unknown>> = {}
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
    if (d.auth !== 'public') {
      for (const name of ['Authorization', 'RequestDate', 'Signature'])
        parameters.push({ $ref: `#/components/parameters/${name}` })
    }
    let requestBody: unknown
    if (d.body) {
      if (d.body.kind === 'json')
        requestBody = { required: d.body.required !== false, content: { 'application/json': { schema: jsonSchema(d.body.schema, 'input') } } }
      else if (d.body.kind === 'form')
        requestBody = { required: true, content: { 'multipart/form-data': { schema: jsonSchema(d.body.schema, 'input') } } }
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
      security: d.auth === 'public' ? [] : [{ SignedRequest: [] }, { BearerAuth: [] }],
      ...(d.auth !== 'public' ? { 'x-permission': d.auth === 'authenticated' ? null : d.auth } : {}),
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
        '(`Authorization: svcsignature <token id>` or `bhesignature <token id>`, `RequestDate`, `Signature`) or a session JWT.',
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
      schemas: { ErrorEnvelope: jsonSchema(ErrorEnvelope, 'output') },
      responses: Object.fromEntries(
        Object.entries(ERROR_TEXT).map(([s, text]) => [
          `E${s}`,
          { description: text, content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' } } } },
        ]),
      ),
    },
  }
}
