import type { Context, MiddlewareHandler } from 'hono'
import type { AppEnv } from '../env'

/**
 * First middleware: gives the request its id (a UUID, also sent as the `RequestID` header on every
 * response), its clock, and writes exactly one structured JSON line when the response is ready:
 *
 *   {"type":"request","level":"info","request_id":"…","method":"GET","route":"/api/v2/tokens/:token_id",
 *    "status":200,"duration_ms":12,"principal":{"user_id":"…","via":"token","token_id":"…"},
 *    "rate_limit":{"policy":"token","allowed":true,"remaining":109},"cf_ray":"…"}
 *
 * What is logged, and why (docs/deploy.md explains how to query it in Workers Logs):
 * - `route` is the route template, never the concrete path or query string: paths carry object ids and
 *   query strings search terms, and templates keep the number of distinct values small for grouping.
 *   Only a request that matched no route logs its `path` (cut to 200 characters), to see what was probed.
 * - `principal` names the user id and the token id (or `via: "session"`); never a key, a signature, a JWT,
 *   a password or any request header or body.
 * - `rate_limit` is the outcome of the bucket that was spent (token, session, ip or login); null when
 *   none was (the limiter was unreachable: the answer is then a 503).
 * - `level` is "error" for 5xx (written with console.error, so Workers Logs' level filter finds them),
 *   "warn" for 4xx and "info" otherwise.
 * - A request whose handler threw something Hono did not turn into a response still gets its line
 *   (status 500) before the error travels on.
 */
export interface RequestLogLine {
  type: 'request'
  level: 'info' | 'warn' | 'error'
  request_id: string
  method: string
  route: string | null
  path?: string
  status: number
  duration_ms: number
  principal: { user_id: string; via: 'token' | 'session'; token_id: string | null } | null
  rate_limit: { policy: string; allowed: boolean; remaining: number } | null
  cf_ray: string | null
}

export function logLine(c: Context<AppEnv>, requestId: string, status: number, durationMs: number): RequestLogLine {
  const p = c.get('principal')
  const rl = c.get('rateLimit')
  const route = c.get('routeTemplate') ?? null
  return {
    type: 'request',
    level: status >= 500 ? 'error' : status >= 400 ? 'warn' : 'info',
    request_id: requestId,
    method: c.req.method,
    route,
    ...(route === null ? { path: c.req.path.slice(0, 200) } : {}),
    status,
    duration_ms: durationMs,
    principal: p ? { user_id: p.userId, via: p.via, token_id: p.tokenId ?? null } : null,
    rate_limit: rl ? { policy: rl.policy, allowed: rl.allowed, remaining: rl.remaining } : null,
    cf_ray: c.req.header('cf-ray') ?? null,
  }
}

function write(line: RequestLogLine) {
  const text = JSON.stringify(line)
  if (line.level === 'error') console.error(text)
  else if (line.level === 'warn') console.warn(text)
  else console.log(text)
}

/** `now`: the request's clock (`c.var.now`), the wall clock unless the app was created with another (createApp). */
export function requestLog(now: () => Date = () => new Date()): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const started = Date.now()
    const requestId = crypto.randomUUID()
    c.set('requestId', requestId)
    c.set('now', now)
    try {
      await next()
    } catch (e) {
      write(logLine(c, requestId, 500, Date.now() - started))
      throw e
    }
    c.res.headers.set('RequestID', requestId)
    write(logLine(c, requestId, c.res.status, Date.now() - started))
  }
}
