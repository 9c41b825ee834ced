/**
 * Which collector clients an administrator may manage (issue 26; docs/permissions.md "Environment access",
 * docs/collectors.md "Clients"). `clients/Manage` is checked first, by the route table; this is the second check.
 *
 * The one rule: a client belongs to the environment it collects (`environment_id`). A caller may manage a client,
 * i.e. read, change or delete it, regenerate its token, run, list, read or cancel its jobs, read their logs, and
 * create, list, read, change or delete its schedules, only when its environment access covers that environment
 * (canSeeEnvironment: every environment, or the client's environment in its list). A client may be created, or
 * moved, only into an environment the caller may access.
 *
 * Reasoning:
 * - A client's token writes its environment with the rights of an uploader of that environment, and its jobs,
 *   logs and schedules describe that environment's collection (domain controller, host, errors naming objects).
 *   An administrator restricted to CORP who could create a client for ADMIN (or regenerate the token of ADMIN's
 *   client, or move a CORP client there) would hold a key that writes ADMIN: more than its own uploads may do
 *   (docs/permissions.md "Writes (ingest) by a restricted user").
 * - Outside the caller's environments a client, its jobs and its schedules are absent, exactly as nodes and
 *   findings are: 404 with the message of an id that does not exist, left out of every list and of its `count`.
 *   Nothing in the answer tells a hidden client from one that never existed.
 * - The environment a request asks for (create, or a change of `environment_id`) is the caller's own input, so
 *   refusing it reveals nothing but the caller's own access: 403, the environment quoted as sent, whether or not
 *   it exists (creating a client for an environment not collected yet is normal).
 * - The scope is applied in the SQL of every read and every write (`inScope`), not only by a read before the
 *   write: a client moved to another environment by an unrestricted administrator between a restricted caller's
 *   check and its write (a token regeneration, say) is then not written either.
 * - The service's own work (the Cron Trigger's schedules, the check-in timeout, the collector's routes, which are
 *   scoped by the calling client's token) uses {@link SERVICE_SCOPE}.
 */
import type { Context } from 'hono'
import type { AppEnv } from '../env'
import { canSeeEnvironment, type EnvironmentAccess } from '../auth/permissions'
import { ApiError } from '../http/errors'

/** The scope of an administrator's request: its environment access (the route table has checked clients/Manage). */
export function scopeOf(c: Context<AppEnv>): EnvironmentAccess {
  return c.var.principal.environmentAccess
}

/** Every client: for the service's own work, never for an administrator's request. */
export const SERVICE_SCOPE: EnvironmentAccess = Object.freeze({ all: true }) as EnvironmentAccess

/** The bound parameter of {@link inScope}: NULL (every environment) or the JSON list of environment ids. */
export function scopeParam(access: EnvironmentAccess): string | null {
  return access.all ? null : JSON.stringify(access.ids)
}

/** SQL: the environment id `col` is within the scope bound at `param` (see scopeParam). */
export function inScope(col: string, param: string): string {
  return `(${param} IS NULL OR ${col} IN (SELECT value FROM json_each(${param})))`
}

/** True when `access` may manage a client of `environmentId` (the rule above). */
export function canManageEnvironment(access: EnvironmentAccess, environmentId: string): boolean {
  return canSeeEnvironment(access, environmentId)
}

/** Throws the 403 envelope unless `access` may put a client into `environmentId` (create, change of environment). */
export function requireClientEnvironment(access: EnvironmentAccess, environmentId: string): void {
  if (!canManageEnvironment(access, environmentId))
    throw new ApiError(403, `environment_id "${environmentId}" is outside the environments you may access`, 'environment_id')
}
