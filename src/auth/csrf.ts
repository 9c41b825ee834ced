/**
 * The browser session (the console): the session JWT in a cookie the page's script cannot read, and the proof
 * that a cookie-authenticated mutation was sent by this site's own page (cross-site request forgery).
 *
 * Cookies (set by `POST /api/v2/login` when asked for with `X-EdgeHound-Session: cookie`, and by SAML sign-in):
 *  - `token`: the session JWT. HttpOnly (no script, so no XSS, can read it), Path=/, Max-Age = the session's
 *    lifetime, Secure whenever the site is https. SameSite=Lax rather than Strict: SAML sign-in sets it on the
 *    answer to the identity provider's cross-site POST, and a Strict cookie would be withheld from the
 *    redirect that follows (the console would open signed out). Lax still withholds it from cross-site POST,
 *    PUT, PATCH, DELETE and from cross-site subrequests; only top-level GET navigations carry it, and GETs
 *    change nothing. The CSRF proof below does not rely on SameSite at all.
 *  - `csrf_token`: readable by the page (not HttpOnly), same attributes otherwise. Its value is
 *    HMAC-SHA256(key, "edgehound-csrf-v1:" + session id), base64url, with a key derived from JWT_SIGNING_KEY
 *    for this purpose only. It is not a credential: without the `token` cookie it authenticates nothing.
 *
 * A request authenticated by the cookie (no Authorization header) that may change something (POST, PUT, PATCH,
 * DELETE) is accepted only when
 *  1. its `X-CSRF-Token` header equals the HMAC for the cookie's session (compared in constant time). Another
 *     site can make the browser send the cookie, but cannot read this site's cookies nor set a custom header
 *     on a cross-origin request without a CORS preflight, which this service never grants with credentials.
 *     Bound to the session by the HMAC, so a value planted by a sibling subdomain (cookie tossing) or copied
 *     from another session is useless: this is the "signed double submit" pattern, not the naive one.
 *  2. its `Origin` (when the browser sends one, as every current browser does on such requests) is this
 *     service's own origin (the request URL's, or PUBLIC_BASE_URL's), and `Sec-Fetch-Site`, when present, is
 *     `same-origin` (or `none`: typed by the user). Defence in depth behind (1).
 * Bearer and signed requests never look at cookies, so they behave exactly as before.
 */
import { timingSafeEqual } from './encoding'

export const SESSION_COOKIE = 'token'
export const CSRF_COOKIE = 'csrf_token'
export const CSRF_HEADER = 'X-CSRF-Token'
/** the request header by which a browser login asks for the cookies instead of a token in the body */
export const COOKIE_LOGIN_HEADER = 'X-EdgeHound-Session'

const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])

function b64url(bytes: ArrayBuffer): string {
  let s = ''
  for (const b of new Uint8Array(bytes)) s += String.fromCharCode(b)
  return btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')
}

async function hmac(key: string, message: string): Promise<ArrayBuffer> {
  const k = await crypto.subtle.importKey('raw', new TextEncoder().encode(key), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign'])
  return crypto.subtle.sign('HMAC', k, new TextEncoder().encode(message))
}

/** The CSRF proof of one session: HMAC under a key derived from the signing key for this purpose alone. */
export async function csrfToken(signingKey: string, sessionId: string): Promise<string> {
  const derived = b64url(await hmac(signingKey, 'edgehound-csrf-key-v1'))
  return b64url(await hmac(derived, `edgehound-csrf-v1:${sessionId}`))
}

/** One cookie's value from a Cookie header (the first of that name), or null. */
export function readCookie(header: string | null | undefined, name: string): string | null {
  if (!header) return null
  for (const part of header.split(';')) {
    const eq = part.indexOf('=')
    if (eq === -1) continue
    if (part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim() || null
  }
  return null
}

/** The two Set-Cookie values of a browser session. */
export function sessionCookies(jwt: string, csrf: string, maxAgeSeconds: number, secure: boolean): string[] {
  const attrs = `Path=/; Max-Age=${maxAgeSeconds}; SameSite=Lax${secure ? '; Secure' : ''}`
  return [`${SESSION_COOKIE}=${jwt}; ${attrs}; HttpOnly`, `${CSRF_COOKIE}=${csrf}; ${attrs}`]
}

/** Set-Cookie values that remove both cookies (logout). */
export function clearedCookies(secure: boolean): string[] {
  const attrs = `Path=/; Max-Age=0; SameSite=Lax${secure ? '; Secure' : ''}`
  return [`${SESSION_COOKIE}=; ${attrs}; HttpOnly`, `${CSRF_COOKIE}=; ${attrs}`]
}

export interface CsrfRequest {
  method: string
  url: string
  origin: string | null
  secFetchSite: string | null
  csrfHeader: string | null
  publicBaseUrl?: string
}

/** Whether the request comes from this service's own page: Origin and Sec-Fetch-Site. Null when it does. */
export function originProblem(r: Pick<CsrfRequest, 'url' | 'origin' | 'secFetchSite' | 'publicBaseUrl'>): string | null {
  if (r.secFetchSite && r.secFetchSite !== 'same-origin' && r.secFetchSite !== 'none')
    return `cross-site request refused (Sec-Fetch-Site: ${r.secFetchSite.slice(0, 20)})`
  if (r.origin !== null) {
    const own = new Set([new URL(r.url).origin])
    if (r.publicBaseUrl) own.add(new URL(r.publicBaseUrl).origin)
    if (!own.has(r.origin)) return 'cross-origin request refused: Origin is not this service'
  }
  return null
}

/**
 * The CSRF decision for a cookie-authenticated request of session `sessionId`: null when it may proceed,
 * else the reason (answered 403). Reads never need the proof (they change nothing).
 */
export async function csrfProblem(r: CsrfRequest, signingKey: string, sessionId: string): Promise<string | null> {
  if (!MUTATING.has(r.method.toUpperCase())) return null
  const bad = originProblem(r)
  if (bad) return bad
  if (!r.csrfHeader) return `missing ${CSRF_HEADER} header: a cookie-authenticated change needs the session's CSRF token`
  const expected = new TextEncoder().encode(await csrfToken(signingKey, sessionId))
  const got = new TextEncoder().encode(r.csrfHeader.trim())
  if (got.length !== expected.length || !timingSafeEqual(got, expected)) return `${CSRF_HEADER} does not match this session`
  return null
}
