/**
 * What the assertion consumer decides once a response has verified (response.ts), as pure functions:
 * which attribute names the user, which role a just-in-time user gets, where the browser goes next and
 * the session cookie. The route (sso.routes.ts) does the storage around them. See docs/saml.md,
 * "Assertion consumer".
 */
import { ROLES, type Role } from '../auth/permissions'
import { checkRelayState } from './authn-request'
import { roleById, type AutoProvision } from './provisioning'
import type { VerifiedAssertion } from './response'

/** The attributes BloodHound reads the user's email from, after the provider's own mappings. */
export const EMAIL_ATTRIBUTES = ['urn:oid:0.9.2342.19200300.100.1.3', 'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress']
export const ROLE_CLAIM = 'http://schemas.microsoft.com/ws/2008/06/identity/claims/role'
const NAMEID_EMAIL = 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress'
/** Longest principal accepted: an email address is at most 320 characters (RFC 5321 limits). */
export const MAX_PRINCIPAL = 320

/**
 * The asserted principal: the first non-empty value of the provider's principal_attribute_mappings, else
 * of the email attributes (BloodHound's order), else — an addition, documented — the NameID when its
 * Format says it is an email address. Only values without whitespace or control characters, at most 320
 * characters, are usable; null when there is none.
 */
export function assertedPrincipal(a: Pick<VerifiedAssertion, 'attributes' | 'nameId' | 'nameIdFormat'>, mappings: string[]): string | null {
  const usable = (v: string | null | undefined) => v !== null && v !== undefined && v.length > 0 && v.length <= MAX_PRINCIPAL && !/[\s\u0000-\u001f\u007f]/.test(v)
  for (const name of [...mappings, ...EMAIL_ATTRIBUTES]) {
    const v = a.attributes.get(name)?.find((x) => x.length > 0)
    if (v !== undefined) return usable(v) ? v : null
  }
  if (a.nameIdFormat === NAMEID_EMAIL && usable(a.nameId)) return a.nameId
  return null
}

/** `bh-<role name lower-cased, spaces as ->`: bh-administrator, bh-user, bh-read-only, bh-upload-only. */
export const roleClaimName = (r: Role) => `bh-${r.toLowerCase().replace(/ /g, '-')}`

/**
 * The role of a provisioned user, as BloodHound picks it: with role_provision, the role claim's values
 * (compared lower-cased and trimmed) matched against the bh-<role> names; exactly one distinct role
 * matched picks it, none or several fall back to default_role_id. Without role_provision: the default.
 */
export function provisionedRole(cfg: AutoProvision, attributes: Map<string, string[]>): Role | null {
  const fallback = roleById(cfg.default_role_id) ?? null
  if (!cfg.role_provision) return fallback
  const claimed = new Set((attributes.get(ROLE_CLAIM) ?? []).map((v) => v.trim().toLowerCase()))
  const matched = ROLES.filter((r) => claimed.has(roleClaimName(r)))
  return matched.length === 1 ? matched[0] : fallback
}

export interface Places {
  /** PUBLIC_BASE_URL or the request origin, no trailing slash */
  base: string
  /** UI_BASE_URL, or `<base>/ui` (BloodHound's UI path, served by this service's own pages) */
  ui: string
}

/**
 * After success: the RelayState when it is a path on this site (same rules as at login: starts with one
 * "/", printable ASCII, no backslash), else the UI. Never another site: the value is appended to our
 * own base, and a value that could be read as a scheme-relative URL is not accepted.
 */
export function successLocation(p: Places, relayState: string | null): string {
  if (relayState !== null && checkRelayState(relayState).ok) return `${p.base}${relayState}`
  return p.ui
}

/** BloodHound's login URL with a message for the person, never the precise reason (that goes to the log). */
export const failureLocation = (p: Places, message: string) => `${p.ui}/login?error=${encodeURIComponent(message)}`
/** BloodHound's user-disabled page. */
export const disabledLocation = (p: Places) => `${p.ui}/user-disabled`

/** BloodHound's wording on its login page (cmd/api/src/api/v2/auth/saml.go and auth.go). */
export const MESSAGES = {
  unauthenticated: 'Your SSO was unable to authenticate your user, please contact your Administrator',
  notAllowed: 'Your user is not allowed, please contact your Administrator',
  connection: 'Your SSO Connection failed, please contact your Administrator',
} as const

/** Base and UI URLs from the settings (PUBLIC_BASE_URL, UI_BASE_URL) and the request URL. */
export function placesFor(cfg: { PUBLIC_BASE_URL?: string; UI_BASE_URL?: string }, requestUrl: string): Places {
  const base = cfg.PUBLIC_BASE_URL ?? new URL(requestUrl).origin
  return { base, ui: cfg.UI_BASE_URL ?? `${base}/ui` }
}

// ---- binding a sign-in to the browser that started it (login CSRF) -------------------------------

/**
 * The cookie that binds an SP-initiated sign-in to the browser that started it. Without it, an attacker
 * could start a sign-in, authenticate at the IdP as themselves, and make a victim's browser post that
 * (valid, signed, unused) response to the callback: the victim would be signed in as the attacker
 * (login CSRF), and their own session cookie overwritten.
 *
 * Set by GET /login, its value is the AuthnRequest's random ID (160 bits, `newRequestId`); the callback
 * requires it and refuses a response whose signed InResponseTo is not that value. An HMAC of the id would
 * add nothing: the attacker can read the id of their own request anyway (it travels to the IdP in the
 * clear) and what they lack is a way to put a cookie into the victim's browser. The value is not a
 * secret; it is the binding.
 *
 * Attributes: the IdP's POST to the callback is a cross-site top-level POST, on which browsers send only
 * `SameSite=None` cookies, and `SameSite=None` requires `Secure` (browsers treat http://localhost as a
 * secure context, so development works too). `HttpOnly`: no script needs it. `Path` = the callback path:
 * the cookie goes to nothing else. `Max-Age` = the AuthnRequest's lifetime. The callback clears it,
 * whatever the outcome.
 *
 * One cookie per provider path, so sign-ins with two providers do not disturb each other; a second
 * /login with the same provider (another tab) replaces the first, whose answer is then refused.
 */
export const BINDING_COOKIE = 'edgehound_saml_request'

export function bindingCookie(requestId: string, callbackPath: string, maxAgeSeconds: number): string {
  if (!/^_[0-9a-f]{40}$/.test(requestId)) throw new Error('binding cookie value must be a request id from newRequestId')
  return `${BINDING_COOKIE}=${requestId}; Path=${callbackPath}; Max-Age=${maxAgeSeconds}; HttpOnly; Secure; SameSite=None`
}

/** Ends the binding (sent on every callback answer: a binding is good for one attempt). */
export const clearBindingCookie = (callbackPath: string) => `${BINDING_COOKIE}=; Path=${callbackPath}; Max-Age=0; HttpOnly; Secure; SameSite=None`

/**
 * The binding cookie's values in a Cookie header (a browser may send more than one when the paths
 * differ, e.g. a stale one from an older deployment path); the callback accepts the response if any of
 * them is its InResponseTo.
 */
export function bindingCookieValues(cookieHeader: string | undefined): string[] {
  const out: string[] = []
  for (const part of (cookieHeader ?? '').split(';')) {
    const eq = part.indexOf('=')
    if (eq === -1) continue
    if (part.slice(0, eq).trim() !== BINDING_COOKIE) continue
    const v = part.slice(eq + 1).trim()
    if (/^_[0-9a-f]{40}$/.test(v)) out.push(v)
  }
  return out
}
