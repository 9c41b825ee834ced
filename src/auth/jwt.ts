/**
 * Session JWTs: HS256 signed with JWT_SIGNING_KEY, claims jti (session id), sub (user id), iat, exp.
 * Verification pins the algorithm to HS256 (hono/jwt rejects `alg: none` and any other algorithm), checks
 * exp/iat, and the caller then asks the session's limiter object whether the session still exists and
 * has not been ended, so logout takes effect immediately even though the JWT itself is still unexpired.
 */
import { sign, verify } from 'hono/jwt'

export interface SessionClaims {
  jti: string
  sub: string
  iat: number
  exp: number
}

export async function signSession(claims: SessionClaims, key: string): Promise<string> {
  return sign({ ...claims }, key, 'HS256')
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** The claims, or an error message naming why the token is not acceptable. */
export async function verifySession(token: string, key: string, nowSec: number): Promise<SessionClaims | string> {
  try {
    const p = (await verify(token, key, 'HS256')) as Partial<SessionClaims>
    if (typeof p.jti !== 'string' || !UUID.test(p.jti) || typeof p.sub !== 'string' || typeof p.exp !== 'number')
      return 'token is missing required claims'
    if (p.exp <= nowSec) return 'token expired'
    return p as SessionClaims
  } catch (e) {
    const name = (e as Error)?.name ?? ''
    if (/Expired/i.test(name)) return 'token expired'
    return 'token is invalid'
  }
}
