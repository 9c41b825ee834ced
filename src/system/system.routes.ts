import { z } from 'zod'
import { defineRoute, type RouteEntry } from '../http/route'
import { buildOpenApi } from '../http/openapi'
import { ROUTES } from '../app'
import { SERVER_VERSION } from '../version'

const VersionResponse = z.object({
  data: z.object({
    API: z.object({ current_version: z.literal('v2'), deprecated_version: z.string() }),
    server_version: z.string(),
  }),
})

let specCache: { key: string; body: string } | undefined

function specHandler(path: string, operationId: string, hidden = false) {
  return defineRoute(
    {
      method: 'get',
      path,
      operationId,
      summary: 'The OpenAPI 3.1 document of this API',
      tags: ['API Info'],
      auth: 'public',
      hidden,
      responses: { 200: { description: 'OpenAPI document', schema: z.record(z.string(), z.unknown()) } },
    },
    (c) => {
      const base = c.get('config').PUBLIC_BASE_URL ?? new URL(c.req.url).origin
      if (specCache?.key !== base) specCache = { key: base, body: JSON.stringify(buildOpenApi(ROUTES, base)) }
      c.header('Content-Type', 'application/json')
      c.header('Cache-Control', 'public, max-age=300')
      return c.body(specCache.body)
    },
  )
}

export const systemRoutes: RouteEntry[] = [
  defineRoute(
    {
      method: 'get',
      path: '/',
      operationId: 'ConsoleRedirect',
      summary: 'The web console: `/` redirects to `/ui/` (the console\'s static files, wrangler.toml [assets])',
      tags: ['API Info'],
      auth: 'public',
      responses: { 302: { description: 'Location: /ui/', schema: z.string() } },
    },
    (c) => c.redirect('/ui/', 302),
  ),
  defineRoute(
    {
      method: 'get',
      path: '/health',
      operationId: 'Health',
      summary: 'Liveness check (no authentication)',
      tags: ['API Info'],
      auth: 'public',
      responses: { 200: { description: 'alive', schema: z.object({ data: z.object({ status: z.literal('ok') }) }) } },
    },
    (c) => c.json({ data: { status: 'ok' as const } }),
  ),
  defineRoute(
    {
      method: 'get',
      path: '/api/version',
      operationId: 'GetApiVersion',
      summary: 'API and server version (connectivity check used by connectors)',
      tags: ['API Info'],
      auth: 'authenticated',
      responses: { 200: { description: 'versions', schema: VersionResponse } },
    },
    (c) => c.json({ data: { API: { current_version: 'v2' as const, deprecated_version: 'none' }, server_version: SERVER_VERSION } }),
  ),
  specHandler('/api/v2/spec', 'GetApiSpec'),
  specHandler('/api/v2/swagger', 'GetApiSpecSwaggerAlias'),
]
