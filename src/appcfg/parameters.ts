/**
 * Application configuration parameters (BloodHound's `GET`/`PUT /api/v2/config`, its appcfg.Parameter): only
 * the parameters EdgeHound honours, each with BloodHound's key and value shape. Pure: definitions, defaults and
 * the validation of a PUT; the store keeps the values an administrator set (src/appcfg/appcfg.store.ts), and
 * the code that reads a value lives with its feature (password changes, post-processing).
 *
 * - `auth.password_expiration_window` `{"duration": "<ISO 8601 duration>"}`: a password an administrator or its
 *   user sets (without forcing a change) expires this long after it was set (login then answers
 *   `auth_expired: true`, docs/permissions.md). Default P90D, as BloodHound.
 * - `analysis.citrix_rdp_support` `{"enabled": bool}`: post-processing's Citrix rule for CanRDP on computers with a
 *   "Direct Access Users" local group (docs/collectors.md). Default on, as EdgeHound has always done.
 * - `auth.session_ttl_hours` `{"hours": n}`: read-only, as in BloodHound (a protected key there): the lifetime of a
 *   login session, from the `SESSION_TTL_HOURS` Worker variable. A PUT naming it is refused like an unknown key.
 *
 * Validation follows BloodHound's (appcfg.Parameter.Validate): `value` must be a non-empty object holding exactly
 * the parameter's fields, each of its type; messages are BloodHound's where it has one.
 */
import { ApiError } from '../http/errors'

export const PASSWORD_EXPIRATION_WINDOW = 'auth.password_expiration_window'
export const CITRIX_RDP_SUPPORT = 'analysis.citrix_rdp_support'
export const SESSION_TTL_HOURS = 'auth.session_ttl_hours'

export const DEFAULT_PASSWORD_EXPIRATION = 'P90D'

export type ParameterKey = typeof PASSWORD_EXPIRATION_WINDOW | typeof CITRIX_RDP_SUPPORT | typeof SESSION_TTL_HOURS

export interface ParameterJson {
  key: ParameterKey
  name: string
  description: string
  value: Record<string, unknown>
}

interface Definition {
  name: string
  description: string
  /** false: listed, never written through the API (BloodHound's protected keys) */
  writable: boolean
  /** the parameter's fields and their types, in order */
  fields: Record<string, 'string' | 'boolean' | 'number'>
  /** a further check of a well-typed value; returns the message of a 400, or null */
  check?: (value: Record<string, unknown>) => string | null
}

export const PARAMETERS: Readonly<Record<ParameterKey, Definition>> = {
  [PASSWORD_EXPIRATION_WINDOW]: {
    name: 'Password expiration window',
    description:
      'How long a password stays valid after it was set by its user or an administrator; then sign-in reports it expired and a new one must be chosen. An ISO 8601 duration, e.g. P90D.',
    writable: true,
    fields: { duration: 'string' },
    check: (v) => (durationMs(v.duration as string) === null ? 'duration must be an ISO 8601 duration of at least one hour and at most 100 years, e.g. P90D' : null),
  },
  [CITRIX_RDP_SUPPORT]: {
    name: 'Citrix RDP support',
    description:
      'When enabled, post-processing treats a computer with a "Direct Access Users" local group as a Citrix host: CanRDP then needs membership of both Remote Desktop Users and Direct Access Users, besides the remote logon right. Takes effect at the next analysis run.',
    writable: true,
    fields: { enabled: 'boolean' },
  },
  [SESSION_TTL_HOURS]: {
    name: 'Session lifetime (hours)',
    description: 'How long a login session lasts. Set by the SESSION_TTL_HOURS Worker variable; read-only here.',
    writable: false,
    fields: { hours: 'number' },
  },
}

export const PARAMETER_KEYS = Object.keys(PARAMETERS) as ParameterKey[]

export function isParameterKey(k: string): k is ParameterKey {
  return Object.prototype.hasOwnProperty.call(PARAMETERS, k)
}

/** The value a parameter has when no administrator set one (the session TTL always: it is the Worker variable). */
export function defaultValue(key: ParameterKey, sessionTtlHours: number): Record<string, unknown> {
  switch (key) {
    case PASSWORD_EXPIRATION_WINDOW:
      return { duration: DEFAULT_PASSWORD_EXPIRATION }
    case CITRIX_RDP_SUPPORT:
      return { enabled: true }
    case SESSION_TTL_HOURS:
      return { hours: sessionTtlHours }
  }
}

export function parameterJson(key: ParameterKey, value: Record<string, unknown>): ParameterJson {
  const d = PARAMETERS[key]
  return { key, name: d.name, description: d.description, value }
}

const notValid = (key: string) => new ApiError(400, `Configuration parameter ${key.slice(0, 100)} is not valid.`, 'key')

/**
 * A PUT body → the parameter to store, or the 400 BloodHound answers: an unknown or read-only key
 * (`Configuration parameter <key> is not valid.`), a value that is not a non-empty object (`missing or invalid
 * property: value`), one with another set of fields (`value property contains an invalid field`), a field of
 * the wrong type, or a value the parameter refuses.
 */
export function validateUpdate(body: { key: string; value?: unknown }): { key: ParameterKey; value: Record<string, unknown> } {
  const key = body.key
  if (!isParameterKey(key) || !PARAMETERS[key].writable) throw notValid(key)
  const d = PARAMETERS[key]
  const v = body.value
  if (typeof v !== 'object' || v === null || Array.isArray(v) || Object.keys(v).length === 0) throw new ApiError(400, 'missing or invalid property: value', 'value')
  const value = v as Record<string, unknown>
  const names = Object.keys(d.fields)
  if (Object.keys(value).length !== names.length || !names.every((n) => Object.prototype.hasOwnProperty.call(value, n)))
    throw new ApiError(400, 'value property contains an invalid field', 'value')
  for (const [n, t] of Object.entries(d.fields)) if (typeof value[n] !== t) throw new ApiError(400, `value.${n} must be a ${t}`, `value.${n}`)
  const problem = d.check?.(value)
  if (problem) throw new ApiError(400, problem, 'value')
  return { key, value: Object.fromEntries(names.map((n) => [n, value[n]])) }
}

const HOUR = 3_600_000
const DAY = 24 * HOUR
const MAX_MS = 100 * 365 * DAY
const DURATION = /^P(?:(\d{1,6})Y)?(?:(\d{1,6})M)?(?:(\d{1,6})W)?(?:(\d{1,6})D)?(?:T(?:(\d{1,6})H)?(?:(\d{1,6})M)?(?:(\d{1,6})S)?)?$/

/**
 * An ISO 8601 duration (`P[nY][nM][nW][nD][T[nH][nM][nS]]`, whole numbers) in milliseconds, with the
 * conversions of the library BloodHound parses it with (a year 365 days, a month 30 days); null when it is not
 * one, has no component, or lies outside one hour .. 100 years (a shorter window would expire a password
 * before its user could use it).
 */
export function durationMs(text: string): number | null {
  const m = DURATION.exec(text)
  if (!m || text === 'P' || text.endsWith('T')) return null
  const [y, mo, w, d, h, mi, s] = m.slice(1).map((x) => (x === undefined ? 0 : Number(x)))
  const ms = (((y * 365 + mo * 30 + w * 7 + d) * 24 + h) * 60 + mi) * 60_000 + s * 1000
  return ms >= HOUR && ms <= MAX_MS ? ms : null
}

/**
 * When a password set at `nowMs` expires under the window `duration` (the stored value, or null for the
 * default), as RFC 3339. A stored value that no longer parses (it was validated when set) falls back to the
 * default, as BloodHound falls back when it cannot read its parameter.
 */
export function passwordExpiresAt(nowMs: number, duration: string | null): string {
  const ms = (duration === null ? null : durationMs(duration)) ?? durationMs(DEFAULT_PASSWORD_EXPIRATION)!
  return new Date(nowMs + ms).toISOString()
}
