/**
 * Administration › Configuration's pure logic (BloodHound's "Early Access Features" and configuration pages):
 * which flags and parameters the user may change, and what a parameter's form sends. Tested in
 * test/unit/console-admin.test.ts. The API decides (app/WriteAppConfig, user_updatable, its validation); the
 * page only avoids offering what would be refused.
 */
import type { ConfigParameterJson, FeatureFlagJson } from '../../../../src/client/appcfg'

export interface FlagView {
  id: number
  name: string
  description: string
  enabled: boolean
  /** a toggle is offered: the flag is user-updatable and the user may write the configuration */
  toggle: boolean
  /** why not, when not */
  note: string
}

export function flagViews(flags: readonly FeatureFlagJson[], canWrite: boolean): FlagView[] {
  return flags.map((f) => ({
    id: f.id,
    name: f.name,
    description: f.description,
    enabled: f.enabled,
    toggle: f.user_updatable && canWrite,
    note: !f.user_updatable ? 'fixed in EdgeHound' : canWrite ? '' : 'read-only for your role',
  }))
}

/** How a parameter is edited: the two the API accepts in a PUT, by their value's shape; the rest shown read-only. */
export type ParameterView =
  | { key: string; name: string; description: string; kind: 'duration'; value: string; editable: boolean }
  | { key: string; name: string; description: string; kind: 'boolean'; value: boolean; editable: boolean }
  | { key: string; name: string; description: string; kind: 'readonly'; value: string; editable: false }

/** The parameters a PUT accepts (src/appcfg/parameters.ts: the others are read-only there too). */
const WRITABLE: Record<string, 'duration' | 'boolean'> = {
  'auth.password_expiration_window': 'duration',
  'analysis.citrix_rdp_support': 'boolean',
}

export function parameterViews(params: readonly ConfigParameterJson[], canWrite: boolean): ParameterView[] {
  return params.map((p) => {
    const base = { key: p.key, name: p.name, description: p.description }
    const kind = WRITABLE[p.key]
    if (kind === 'duration' && typeof p.value.duration === 'string') return { ...base, kind, value: p.value.duration, editable: canWrite }
    if (kind === 'boolean' && typeof p.value.enabled === 'boolean') return { ...base, kind, value: p.value.enabled, editable: canWrite }
    return { ...base, kind: 'readonly', value: Object.entries(p.value).map(([k, v]) => `${k}: ${String(v)}`).join(', '), editable: false }
  })
}

/** The `value` of PUT /api/v2/config for an edited parameter. */
export function parameterValue(v: ParameterView, input: string | boolean): Record<string, unknown> | null {
  if (v.kind === 'duration') return { duration: String(input).trim().toUpperCase() }
  if (v.kind === 'boolean') return { enabled: Boolean(input) }
  return null
}

/** "P90D" → "90 days" (days, weeks, hours only; anything else as written). */
export function durationText(iso: string): string {
  const m = /^P(?:(\d+)W)?(?:(\d+)D)?(?:T(\d+)H)?$/i.exec(iso.trim())
  if (!m || (!m[1] && !m[2] && !m[3])) return iso
  const parts: string[] = []
  const unit = (n: string | undefined, one: string) => n && parts.push(`${Number(n)} ${one}${Number(n) === 1 ? '' : 's'}`)
  unit(m[1], 'week')
  unit(m[2], 'day')
  unit(m[3], 'hour')
  return parts.join(' ')
}
