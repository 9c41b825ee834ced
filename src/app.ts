import { Hono } from 'hono'
import { HTTPException } from 'hono/http-exception'
import type { AppEnv } from './env'
import { loadConfig } from './config'
import { ApiError, sendError, type ErrorDetail } from './http/errors'
import { pathMatcher, routeOrder, type RouteEntry } from './http/route'
import { securityHeaders } from './http/security-headers'
import { d1Session } from './http/d1-session'
import { noteLocalWrite } from './graph/environments'
import { requestLog } from './http/request-log'
import { systemRoutes } from './system/system.routes'
import { authRoutes } from './auth/auth.routes'
import { roleRoutes } from './auth/roles.routes'
import { samlRoutes } from './saml/saml.routes'
import { oidcRoutes } from './oidc/oidc.routes'
import { extensionRoutes } from './extensions/extensions.routes'
import { graphRoutes } from './graph/graph.routes'
import { findingRoutes } from './findings/findings.routes'
import { cypherRoutes } from './cypher/cypher.routes'
import { docsRoutes } from './system/docs.routes'
import { auditRoutes } from './audit/audit.routes'
import { postureRoutes } from './findings/posture.routes'
import { datapipeRoutes } from './findings/datapipe.routes'
import { dataQualityRoutes } from './findings/dataquality.routes'
import { assetGroupRoutes } from './assetgroups/assetgroups.routes'
import { assetGroupTagRoutes } from './assetgroups/tags.routes'
import { assetGroupTagExtraRoutes } from './assetgroups/tags-extra.routes'
import { clientRoutes } from './clients/clients.routes'
import { collectorRoutes } from './clients/collector.routes'
import { scheduleRoutes } from './clients/schedules.routes'
import { wipeRoutes } from './system/wipe.routes'
import { collectorManifestRoutes } from './clients/manifest.routes'
import { customNodeRoutes } from './graph/customnodes.routes'
import { appConfigRoutes } from './appcfg/appcfg.routes'

/** Every route of the service, in one list: the app, the OpenAPI document and the tests all walk it. */
export const ROUTES: RouteEntry[] = [
  ...systemRoutes,
  ...authRoutes,
  ...roleRoutes,
  ...samlRoutes,
  ...oidcRoutes,
  ...extensionRoutes,
  ...graphRoutes,
  ...findingRoutes,
  ...postureRoutes,
  ...datapipeRoutes,
  ...dataQualityRoutes,
  ...cypherRoutes,
  ...auditRoutes,
  ...assetGroupRoutes,
  ...assetGroupTagRoutes,
  ...assetGroupTagExtraRoutes,
  ...clientRoutes,
  ...collectorRoutes,
  ...scheduleRoutes,
  ...wipeRoutes,
  ...collectorManifestRoutes,
  ...customNodeRoutes,
  ...appConfigRoutes,
  ...docsRoutes,
]

const INTERNAL = 'an internal error has occurred that is preventing the service from servicing this request'

/**
 * The worker's app. `opts.now` replaces the wall clock as every request's `c.var.now` (only code that creates
 * an app can pass it: tests drive time-dependent rules, such as a rate limit's refill, with it; the deployed
 * worker is createApp() in src/index.ts).
 */
export function createApp(routes: RouteEntry[] = ROUTES, opts: { now?: () => Date } = {}) {
  const app = new Hono<AppEnv>()
  const matchers = routes.map((r) => ({ method: r.def.method.toUpperCase(), re: pathMatcher(r.def.path) }))

  // 1. request id, clock, structured log line (every request, matched or not)
  app.use('*', requestLog(opts.now))
  // 2. security headers and CORS (every request)
  app.use('*', securityHeaders())
  // 3. configuration (a missing secret answers 500 naming the setting)
  app.use('*', async (c, next) => {
    c.set('config', loadConfig(c.env))
    await next()
  })
  // 4. D1 session: replicas for reads, read-your-writes by bookmark (http/d1-session.ts)
  app.use('*', d1Session())
  // 5. a mutating request writes through this isolate: its isolate copies that may answer without a read
  //    (available-domains: src/graph/environments.ts) are revalidated, at its start and at its end
  app.use('*', async (c, next) => {
    if (c.req.method === 'GET' || c.req.method === 'HEAD' || c.req.method === 'OPTIONS') return next()
    noteLocalWrite()
    try {
      await next()
    } finally {
      noteLocalWrite()
    }
  })

  // a literal path segment beats a parameter wherever both could match (routeOrder, src/http/route.ts)
  for (const r of routeOrder(routes)) app.on(r.def.method.toUpperCase(), [r.def.path], ...r.handlers)

  app.notFound((c) => {
    const path = c.req.path
    const allowed = [...new Set(matchers.filter((m) => m.re.test(path)).map((m) => m.method))]
    if (allowed.length > 0) {
      if (allowed.includes('GET')) allowed.push('HEAD')
      return sendError(
        c,
        405,
        [{ context: 'route', message: `method ${c.req.method} is not allowed on this path; allowed: ${allowed.join(', ')}` }],
        { Allow: allowed.join(', ') },
      )
    }
    return sendError(c, 404, [{ context: 'route', message: 'no such endpoint' }])
  })

  app.onError((err, c) => {
    const requestId = c.var.requestId ?? crypto.randomUUID()
    let status = 500
    let details: ErrorDetail[] = [{ context: '', message: INTERNAL }]
    let headers: Record<string, string> = {}
    if (err instanceof ApiError) {
      status = err.status
      details = err.details
      headers = err.headers
      if (status >= 500) {
        // the cause (a limiter or D1 failure behind a 503) is logged with the request id, never sent
        const cause = err.cause === undefined ? {} : { cause: String((err.cause as Error)?.message ?? err.cause) }
        console.error(JSON.stringify({ level: 'error', request_id: requestId, error: err.message, ...cause }))
      }
    } else if (err instanceof HTTPException && err.status < 500) {
      status = err.status
      details = [{ context: '', message: err.message || 'bad request' }]
    } else {
      // Unexpected: log everything we know with the request id; answer with nothing of it.
      console.error(
        JSON.stringify({ level: 'error', request_id: requestId, error: String(err?.message ?? err), stack: String(err?.stack ?? '') }),
      )
    }
    return sendError(c, status, details, headers)
  })

  return app
}
