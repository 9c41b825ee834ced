import type { Context } from 'hono'
import { z } from 'zod'
import type { AppEnv } from '../env'
import { defineRoute, type RouteEntry } from '../http/route'
import { ASSETS, CONTENT_SECURITY_POLICY, explorerHtml, type AssetName } from './explorer/page'

/**
 * The offline API explorer: `/api/v2/docs` (HTML) and its two assets, all public and all served from the
 * worker's own bundle. The page carries a self-only Content-Security-Policy (reasoning in explorer/page.ts).
 * Assets are revalidated by ETag (content hash) and cached for a short time; the HTML is always revalidated
 * so a new deployment's asset URLs (which carry the hash) are picked up at once.
 */
const HTML = explorerHtml()

function pageHeaders(c: Context<AppEnv>) {
  c.header('Content-Security-Policy', CONTENT_SECURITY_POLICY)
  c.header('X-Frame-Options', 'DENY')
  c.header('Referrer-Policy', 'no-referrer')
}

/** `If-None-Match` holds our ETag (or `*`): the client's copy is current. */
export function matchesEtag(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false
  return ifNoneMatch
    .split(',')
    .map((t) => t.trim().replace(/^W\//, ''))
    .some((t) => t === etag || t === '*')
}

function asset(name: AssetName, operationId: string) {
  const a = ASSETS[name]
  const etag = `"${a.hash}"`
  return defineRoute(
    {
      method: 'get',
      path: `/api/v2/docs/${name}`,
      operationId,
      summary: `The API explorer's ${name.endsWith('.js') ? 'script' : 'stylesheet'} (served by the worker, no CDN)`,
      tags: ['API Info'],
      auth: 'public',
      responses: {
        200: { description: name, contentType: a.type.split(';')[0], schema: z.string() },
        304: { description: 'not modified (ETag)' },
      },
    },
    (c) => {
      c.header('ETag', etag)
      c.header('Cache-Control', 'public, max-age=300')
      pageHeaders(c)
      if (matchesEtag(c.req.header('if-none-match'), etag)) return c.body(null, 304)
      c.header('Content-Type', a.type)
      return c.body(a.body)
    },
  )
}

export const docsRoutes: RouteEntry[] = [
  defineRoute(
    {
      method: 'get',
      path: '/api/v2/docs',
      operationId: 'GetApiExplorer',
      summary: 'Interactive API explorer (HTML) for the OpenAPI document; works offline',
      tags: ['API Info'],
      auth: 'public',
      responses: { 200: { description: 'the explorer page', contentType: 'text/html', schema: z.string() } },
    },
    (c) => {
      pageHeaders(c)
      c.header('Cache-Control', 'no-cache')
      c.header('Content-Type', 'text/html; charset=utf-8')
      return c.body(HTML)
    },
  ),
  asset('explorer.js', 'GetApiExplorerScript'),
  asset('explorer.css', 'GetApiExplorerStylesheet'),
]
