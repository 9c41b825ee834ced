/**
 * Starting a session, the one way: a sessions row (the JWT's jti) and an HS256 JWT with the configured
 * lifetime. Password login (auth.routes.ts) and SAML sign-in (saml/sso.routes.ts) both use this, so an
 * SSO session is revoked, expires and is checked exactly like a password session.
 */
import type { Config } from '../config'
import { rfc3339 } from '../http/errors'
import { signSession } from './jwt'
import { insertSession } from './sessions.store'
import type { AuditWrite } from '../audit/audit'

export async function startSession(
  db: D1Database,
  cfg: Config,
  userId: string,
  now: Date,
  /** the sign-in's audit success row (LoginAttempt), written in the session's batch */
  audit: AuditWrite,
  /** an upper bound on the session's end (SAML's SessionNotOnOrAfter); never lengthens the configured lifetime */
  notAfter?: Date,
): Promise<{ token: string; sessionId: string; ttlSeconds: number }> {
  const sessionId = crypto.randomUUID()
  const iat = Math.floor(now.getTime() / 1000)
  const cap = notAfter === undefined ? Infinity : Math.floor(notAfter.getTime() / 1000)
  const exp = Math.max(iat + 1, Math.min(iat + cfg.SESSION_TTL_HOURS * 3600, cap))
  const ttlSeconds = exp - iat
  await insertSession(db, { id: sessionId, user_id: userId, created_at: rfc3339(now), expires_at: rfc3339(exp * 1000) }, audit)
  const token = await signSession({ jti: sessionId, sub: userId, iat, exp }, cfg.JWT_SIGNING_KEY)
  return { token, sessionId, ttlSeconds }
}
