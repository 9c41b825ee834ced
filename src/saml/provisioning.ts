/**
 * Auto-provisioning config of an SSO provider (`config.auto_provision.*`), as BloodHound models it.
 * Pure. Role ids are those of `GET /api/v2/roles` (src/auth/roles.ts ROLE_IDS): 1 Administrator, 2 User,
 * 3 Read-Only, 4 Upload-Only (BloodHound's numbering of these built-in roles), 5 Auditor.
 */
import { ROLES } from '../auth/permissions'
import { ROLE_IDS, roleById } from '../auth/roles'

export interface AutoProvision {
  enabled: boolean
  default_role_id: number
  role_provision: boolean
}

/** Provisioning off, as BloodHound stores it whenever `enabled` is false. */
export const PROVISIONING_OFF: AutoProvision = Object.freeze({ enabled: false, default_role_id: 0, role_provision: false })

export { roleById }

export const ROLE_ID_LIST = [...ROLES].sort((a, b) => ROLE_IDS[a] - ROLE_IDS[b]).map((r) => `${ROLE_IDS[r]} ${r}`).join(', ')

/** Go's strconv.ParseBool, which BloodHound uses for these form fields. */
export function parseGoBool(v: string): boolean | null {
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(v)) return true
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(v)) return false
  return null
}

/**
 * Applies the given fields to the current config (on create the current config is PROVISIONING_OFF).
 * Enabled provisioning needs a valid default role; disabled provisioning is stored as PROVISIONING_OFF
 * whatever else was sent (BloodHound does the same, and its UI always sends all three fields).
 */
export function applyAutoProvision(
  current: AutoProvision,
  patch: Partial<AutoProvision>,
): { ok: true; config: AutoProvision } | { ok: false; context: string; message: string } {
  // A role id that was sent is checked even when provisioning ends up off: a typo should not pass silently.
  if (patch.default_role_id !== undefined && patch.default_role_id !== 0 && !roleById(patch.default_role_id))
    return {
      ok: false,
      context: 'form.config.auto_provision.default_role_id',
      message: `"config.auto_provision.default_role_id" parameter is invalid: no role has id ${patch.default_role_id} (roles: ${ROLE_ID_LIST})`,
    }
  const next: AutoProvision = { ...current, ...Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined)) }
  if (!next.enabled) return { ok: true, config: { ...PROVISIONING_OFF } }
  if (!roleById(next.default_role_id))
    return {
      ok: false,
      context: 'form.config.auto_provision.default_role_id',
      message:
        next.default_role_id === 0
          ? `"config.auto_provision.default_role_id" is required when auto provisioning is enabled (roles: ${ROLE_ID_LIST})`
          : `"config.auto_provision.default_role_id" parameter is invalid: no role has id ${next.default_role_id} (roles: ${ROLE_ID_LIST})`,
    }
  return { ok: true, config: next }
}
