/**
 * Binding an OIDC sign-in to the browser that started it (login CSRF, state/nonce injection). Security-critical;
 * tested in test/unit/oidc-verify.test.ts and through HTTP in test/integration/oidc-signin.test.ts.
 *
 * - GET /login stores state, nonce and PKCE verifier server-side (oidc_login_states) under a random `ref`, and
 *   gives the browser only `edgehound_oidc=<ref>.<MAC>`: HttpOnly (no script reads it), Secure, SameSite=Lax (a
 *   top-level GET redirect from the IdP carries it; a cross-site POST or subresource does not), Path = the
 *   callback, ten minutes.
 * - The MAC (HMAC-SHA256 under a key derived from JWT_SIGNING_KEY, with its own label) means a cookie cannot be
 *   forged or pointed at another browser's row without the server key; the row lookup is by ref, so the query's
 *   `state` is never trusted on its own: it must equal the state stored for the ref this browser holds.
 * - The row is deleted on first use (DELETE … RETURNING) whatever the outcome: a replayed callback finds nothing.
 * - PKCE S256 (RFC 7636): the verifier never leaves the server until the token request, so an intercepted code is
 *   useless to anyone else.
 */
import { randomBytes } from '../auth/encoding'
import { timingSafeEqual } from './verify'

export const LOGIN_COOKIE = 'edgehound_oidc'
export const LOGIN_TTL_SECONDS = 600

export function b64url(bytes: ArrayBuffer | Uint8Array): string {
  const b = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes)
  let s = ''
  for (const x of b) s += String.fromCharCode(x)
  return btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')
}

/** 32 random bytes, base64url (256 bits: state, nonce, ref, PKCE verifier of 43 characters). */
export const randomToken = () => b64url(randomBytes(32))

export async function pkceChallenge(verifier: string): Promise<string> {
  return b64url(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier)))
}

async function mac(signingKey: string, ref: string): Promise<string> {
  const enc = new TextEncoder()
  const k1 = await crypto.subtle.importKey('raw', enc.encode(signingKey), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign'])
  const derived = await crypto.subtle.sign('HMAC', k1, enc.encode('edgehound-oidc-login-key-v1'))
  const k2 = await crypto.subtle.importKey('raw', derived, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign'])
  return b64url(await crypto.subtle.sign('HMAC', k2, enc.encode(`edgehound-oidc-login-v1:${ref}`)))
}

export async function loginCookie(signingKey: string, ref: string, path: string, secure = true): Promise<string> {
  return `${LOGIN_COOKIE}=${ref}.${await mac(signingKey, ref)}; Path=${path}; Max-Age=${LOGIN_TTL_SECONDS}; HttpOnly${secure ? '; Secure' : ''}; SameSite=Lax`
}

export const clearLoginCookie = (path: string, secure = true) => `${LOGIN_COOKIE}=; Path=${path}; Max-Age=0; HttpOnly${secure ? '; Secure' : ''}; SameSite=Lax`

/** The ref of the login cookie when its MAC verifies, else null (absent, malformed or forged). */
export async function boundRef(signingKey: string, cookieHeader: string | null | undefined): Promise<string | null> {
  if (!cookieHeader) return null
  for (const part of cookieHeader.split(';')) {
    const eq = part.indexOf('=')
    if (eq === -1 || part.slice(0, eq).trim() !== LOGIN_COOKIE) continue
    const m = /^([A-Za-z0-9_-]{43})\.([A-Za-z0-9_-]{43})$/.exec(part.slice(eq + 1).trim())
    if (!m) return null
    return timingSafeEqual(await mac(signingKey, m[1]), m[2]) ? m[1] : null
  }
  return null
}
