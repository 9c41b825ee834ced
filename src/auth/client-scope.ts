/**
 * What a collector client's token may do: the collector's routes, and nothing else.
 *
 * Reasoning: a client token is an ordinary API token of a service user whose only role is CLIENT_ROLE
 * (src/auth/permissions.ts), so every route that declares a permission already refuses it (403) unless the
 * permission is `clients/Collect`. Routes open to any authenticated caller (`auth: 'authenticated'`, e.g.
 * GET /api/version) would still admit it; this check closes them too, so the rule does not depend on each
 * route's declaration: a principal holding CLIENT_ROLE passes only routes declaring `clients/Collect`.
 * It runs right after authentication, before any handler. A collector stolen from its host therefore
 * reaches its own jobs and ingest only (test/hardening/client-scope.test.ts walks the route table).
 */
import type { MiddlewareHandler } from 'hono'
import type { AppEnv } from '../env'
import { ApiError } from '../http/errors'
import { CLIENT_ROLE } from './permissions'
import type { Principal } from './principal'

export function isClientPrincipal(p: Principal | undefined): boolean {
  return !!p && (p.roles as string[]).includes(CLIENT_ROLE)
}

/** Refuses a client's token on a route that is not one of the collector's (403, before the handler). */
export function clientScope(routeAuth: string): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    if (routeAuth !== 'clients/Collect' && isClientPrincipal(c.get('principal')))
      throw new ApiError(403, 'not authorized: a collector client token may only call the collector routes (check-in, jobs, ingest)', 'auth')
    return next()
  }
}
