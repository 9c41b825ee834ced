import type { MiddlewareHandler } from 'hono'
import type { AppEnv } from '../env'

/**
 * First middleware: gives the request its id (a UUID, also sent as the `RequestID` header on every
 * response), its clock, and writes one structured JSON line when the response is ready: request id,
 * method, route template, status, duration, principal (user id and token id or session, never a key)
 * and the rate-limit outcome.
 */
export function requestLog(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const started = Date.now()
    const requestId = crypto.randomUUID()
    c.set('requestId', requestId)
    c.set('now', () => new Date())
    await next()
    c.res.headers.set('RequestID', requestId)
    const p = c.get('principal')
    const rl = c.get('rateLimit')
    console.log(
      JSON.stringify({
        type: 'request',
        request_id: requestId,
        method: c.req.method,
        route: c.get('routeTemplate') ?? null,
        status: c.res.status,
        duration_ms: Date.now() - started,
        principal: p ? { user_id: p.userId, via: p.via, token_id: p.tokenId ?? null } : null,
        rate_limit: rl ? { policy: rl.policy, allowed: rl.allowed, remaining: rl.remaining } : null,
      }),
    )
  }
}
