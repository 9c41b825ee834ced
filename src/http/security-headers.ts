import type { MiddlewareHandler } from 'hono'
import type { AppEnv } from '../env'

/**
 * Headers on every response: `X-Content-Type-Options: nosniff`, `Cache-Control: no-store` unless a route
 * chose otherwise (API answers are per caller and must not be cached by intermediaries),
 * `Strict-Transport-Security` when served over HTTPS, and CORS only for origins in CORS_ALLOWED_ORIGINS
 * (no CORS at all when the list is empty).
 */
export function securityHeaders(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const origin = c.req.header('origin')
    const allowed = () => {
      const list = (c.env.CORS_ALLOWED_ORIGINS ?? '').split(',').map((s) => s.trim()).filter(Boolean)
      return origin !== undefined && list.includes(origin)
    }
    if (c.req.method === 'OPTIONS' && origin && c.req.header('access-control-request-method') && allowed()) {
      return new Response(null, {
        status: 204,
        headers: {
          'Access-Control-Allow-Origin': origin,
          'Access-Control-Allow-Methods': 'GET, HEAD, POST, PUT, PATCH, DELETE',
          'Access-Control-Allow-Headers': 'Authorization, Content-Type, RequestDate, Signature, Prefer, X-D1-Bookmark',
          'Access-Control-Max-Age': '600',
          Vary: 'Origin',
          'X-Content-Type-Options': 'nosniff',
        },
      })
    }
    await next()
    const h = c.res.headers
    h.set('X-Content-Type-Options', 'nosniff')
    if (!h.has('Cache-Control')) h.set('Cache-Control', 'no-store')
    // the runtime hands over a normalised URL (lower-case scheme), so its prefix is its protocol: no parse
    if (c.req.url.startsWith('https:')) h.set('Strict-Transport-Security', 'max-age=31536000; includeSubDomains')
    if (origin && allowed()) {
      h.set('Access-Control-Allow-Origin', origin)
      h.set('Access-Control-Expose-Headers', 'RequestID, RateLimit, RateLimit-Policy, Retry-After, X-D1-Bookmark, X-Capped-Counts')
      h.append('Vary', 'Origin')
    }
  }
}
