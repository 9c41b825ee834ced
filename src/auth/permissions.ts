/**
 * Roles → permissions: the one table that decides who may do what (documented in docs/permissions.md).
 * Permission names follow BloodHound's `<area>/<Action>` style so its documentation maps over directly.
 *
 * Reasoning: every route declares exactly one permission (or `authenticated` / `public`); the route
 * helper checks it after authentication, so a handler never runs for a caller that lacks it. A missing
 * permission is a 403 envelope; a missing or failed credential is a 401 (checked first).
 */
export const PERMISSIONS = [
  'auth/ManageSelf', // read yourself, log out
  'auth/CreateToken', // create, list and revoke your own API tokens
  'auth/ManageUsers', // manage every user and every user's tokens
  'auth/ReadUsers', // list users by name only (GET /api/v2/bloodhound-users-minimal: whom to share a query with)
  'auth/ManageProviders', // SAML / SSO providers
  'graph/Read', // environments, search, paths, entities, findings
  'graph/Ingest', // file-upload jobs
  'graph/ManageExtensions', // graph extensions
  'analysis/Run', // start analysis runs
  'risks/ManageRisks', // accept findings
  'audit/Read', // read the audit log (auditors and administrators)
  'graph/ManageAssetGroups', // create asset groups, add and remove their selectors (Tier Zero, Owned, ...)
  'db/Wipe', // delete collected data (POST /api/v2/clear-database): administrators, BloodHound's WipeDB
  'clients/Manage', // collector clients, their tokens, jobs and schedules (enterprise collection)
  'clients/Collect', // the collector's own routes (check-in, jobs, ingest): held by client tokens only
  'app/ReadAppConfig', // read feature flags and configuration parameters (BloodHound's AppReadApplicationConfiguration)
  'app/WriteAppConfig', // toggle feature flags, set configuration parameters (BloodHound's AppWriteApplicationConfiguration)
] as const
export type Permission = (typeof PERMISSIONS)[number]

export const ROLES = ['Administrator', 'User', 'Read-Only', 'Upload-Only', 'Auditor'] as const
export type Role = (typeof ROLES)[number]

/**
 * The role of a collector client's service user (src/clients/): not one of ROLES, so no person can be given
 * it (user routes validate against ROLES), and its only permission is the collector's. No other role holds
 * `clients/Collect`, administrators included: the collector routes act on "the calling client", which only
 * a client token names (src/auth/client-scope.ts refuses client tokens everywhere else).
 */
export const CLIENT_ROLE = 'Collector'
export const CLIENT_PERMISSIONS: readonly Permission[] = ['clients/Collect']

export const ROLE_PERMISSIONS: Record<Role, readonly Permission[]> = {
  Administrator: PERMISSIONS.filter((p) => p !== 'clients/Collect'),
  User: ['auth/ManageSelf', 'auth/CreateToken', 'auth/ReadUsers', 'graph/Read', 'graph/Ingest', 'app/ReadAppConfig'],
  'Read-Only': ['auth/ManageSelf', 'auth/CreateToken', 'auth/ReadUsers', 'graph/Read', 'app/ReadAppConfig'],
  'Upload-Only': ['auth/ManageSelf', 'auth/CreateToken', 'graph/Ingest'],
  Auditor: ['auth/ManageSelf', 'auth/CreateToken', 'auth/ReadUsers', 'graph/Read', 'audit/Read', 'app/ReadAppConfig'],
}

export function permissionsOf(roles: readonly Role[]): Set<Permission> {
  const out = new Set<Permission>()
  for (const r of roles) for (const p of (r as string) === CLIENT_ROLE ? CLIENT_PERMISSIONS : (ROLE_PERMISSIONS[r] ?? [])) out.add(p)
  return out
}

/** Environment access: every environment, or a list of environment ids (object ids of Domain/AZTenant/...). */
export type EnvironmentAccess = { all: true } | { all: false; ids: string[] }

export function canSeeEnvironment(access: EnvironmentAccess, environmentId: string | null | undefined): boolean {
  if (access.all) return true
  if (!environmentId) return false
  return access.ids.includes(environmentId)
}
