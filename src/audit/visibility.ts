import { canSeeEnvironment, type EnvironmentAccess } from '../auth/permissions'
import type { AuditAction } from './actions'

/**
 * Who sees which audit entry (issue 24; docs/audit.md "Who sees which entry").
 *
 * An Auditor (or Administrator) restricted to some environments must not learn, from `GET /api/v2/audit`, the
 * object ids, rule texts or other users' environment assignments of environments it cannot see. Reasoning:
 *
 * - Every action is classified here, and the `Record` type makes a new action a compile error until it is:
 *   `global` actions record nothing of an environment (tokens, sign-ins, SSO, extensions, saved queries, the
 *   asset groups' names and tags, analysis requests); `environments` actions may (object ids, selector seeds,
 *   rule texts, findings, uploads, a user's environment access).
 * - Each row stores the environments it concerns (`audit_logs.environments`): a JSON array of environment ids,
 *   or `*` when they are not known. The route's declaration computes them before the intent row
 *   (`environments` in AuditDecl); an `environments` action whose route computed none is `*`.
 * - {@link visibleFields} decides per row and fails closed: a restricted reader sees the fields of a global
 *   action's row, and of an environment-scoped row only when the row lists its environments and every one of
 *   them is the reader's. Anything else (`*`, a hidden environment, a missing or unreadable column on an
 *   environment-scoped or unknown action) is served redacted. An unrestricted reader sees every row whole.
 * - Redacted, not hidden: the row stays in the page with its id, time, actor, action, status and commit id, and
 *   `fields` becomes {@link REDACTED}. `count`, paging with `skip` and id-based resumption therefore stay exactly
 *   those of an unrestricted reader (collectors page until an empty page), and what is withheld is said.
 */
export const ACTION_SCOPE: Record<AuditAction, 'global' | 'environments'> = {
  LoginAttempt: 'global',
  Logout: 'global',
  // a user's environment access is environment data (the route names the environments it assigns)
  CreateUser: 'environments',
  UpdateUser: 'environments',
  DeleteUser: 'global',
  // the user's id and whether the change is forced: nothing of an environment
  UpdateUserSecret: 'global',
  ExpireUserSecret: 'global',
  EnrollMFA: 'global',
  ActivateMFA: 'global',
  DisenrollMFA: 'global',
  CreateAuthToken: 'global',
  DeleteAuthToken: 'global',
  CreateSAMLIdentityProvider: 'global',
  CreateOIDCIdentityProvider: 'global',
  UpdateSAMLIdentityProvider: 'global',
  DeleteSAMLIdentityProvider: 'global',
  UpdateSSOIdentityProvider: 'global',
  DeleteSSOIdentityProvider: 'global',
  CreateGraphSchemaExtension: 'global',
  DeleteGraphSchemaExtension: 'global',
  AcceptRisk: 'environments',
  UnacceptRisk: 'environments',
  RequestAnalysis: 'global',
  CreateFileUploadJob: 'global',
  AppendFileUploadJob: 'environments',
  EndFileUploadJob: 'environments',
  CreateAssetGroup: 'global',
  UpdateAssetGroup: 'global',
  DeleteAssetGroup: 'global',
  CreateAssetGroupSelector: 'environments',
  DeleteAssetGroupSelector: 'environments',
  CreateAssetGroupTag: 'global',
  UpdateAssetGroupTag: 'global',
  DeleteAssetGroupTag: 'global',
  CreateAssetGroupTagSelector: 'environments',
  UpdateAssetGroupTagSelector: 'environments',
  DeleteAssetGroupTagSelector: 'global',
  CreateSavedQuery: 'global',
  UpdateSavedQuery: 'global',
  DeleteSavedQuery: 'global',
  UpdateSavedQueryPermissions: 'global',
  DeleteSavedQueryPermissions: 'global',
  ImportSavedQuery: 'global',
  // collector clients and their jobs (src/clients/): a client collects one environment, its rows may name it
  // or data of it; no route computes the environments, so restricted readers see them redacted (fail closed)
  CreateClient: 'environments',
  UpdateClient: 'environments',
  DeleteClient: 'environments',
  RegenerateClientToken: 'environments',
  ClientCheckin: 'environments',
  CreateClientJob: 'environments',
  StartClientJob: 'environments',
  ClientIngest: 'environments',
  EndClientJob: 'environments',
  CancelClientJob: 'environments',
  CreateClientSchedule: 'environments',
  UpdateClientSchedule: 'environments',
  DeleteClientSchedule: 'environments',
  // the options: flags, asset group ids, source kind and relationship kind names; nothing of one environment
  DeleteBloodhoundData: 'global',
  // kind names and icons: nothing of one environment
  CreateCustomNodeKind: 'global',
  UpdateCustomNodeKind: 'global',
  DeleteCustomNodeKind: 'global',
  // PATCH /api/v2/domains/{id}: the domain's object id, which is its environment's id (the route names it)
  MutateGraph: 'environments',
  // application configuration (src/appcfg/): a parameter's or a feature flag's new value, nothing of an environment
  UpdateParameter: 'global',
  ToggleEarlyAccessFeatureFlag: 'global',
}

/** The environments of an entry: their ids, or `unknown` (stored as `*`). */
export type AuditEnvironments = string[] | 'unknown'

/** The stored column of a row of `action` whose route computed `envs` (undefined: none computed). */
export function environmentsColumn(action: string, envs: AuditEnvironments | undefined): string {
  if (envs === undefined) return scopeOf(action) === 'global' ? '[]' : '*'
  if (envs === 'unknown') return '*'
  return JSON.stringify([...new Set(envs)].sort())
}

function scopeOf(action: string): 'global' | 'environments' {
  // an action not in the table (a name no longer written, or a row from elsewhere) is treated as scoped
  return Object.prototype.hasOwnProperty.call(ACTION_SCOPE, action) ? ACTION_SCOPE[action as AuditAction] : 'environments'
}

export const REDACTED = Object.freeze({ redacted: 'this entry concerns an environment outside your environment access' })

/** The `fields` a reader with `access` is served for a row (see the module comment). */
export function visibleFields(
  row: { action: string; environments: string | null },
  fields: Record<string, unknown>,
  access: EnvironmentAccess,
): Record<string, unknown> {
  if (access.all) return fields
  const envs = parseColumn(row.environments)
  if (envs === null) return scopeOf(row.action) === 'global' && row.environments === null ? fields : { ...REDACTED }
  return envs.every((e) => canSeeEnvironment(access, e)) ? fields : { ...REDACTED }
}

/** The column's ids, or null when not a list of ids ('*', NULL, anything unreadable). */
function parseColumn(col: string | null): string[] | null {
  if (col === null || col === '*') return null
  try {
    const v = JSON.parse(col)
    return Array.isArray(v) && v.every((x) => typeof x === 'string') ? v : null
  } catch {
    return null
  }
}
