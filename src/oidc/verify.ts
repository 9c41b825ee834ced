/**
 * OIDC ID-token verification (OpenID Connect Core 1.0 §3.1.3.7). Security-critical: this decides who signs
 * in. Pure except for the clock, which is passed in; the JWKS is passed in too (fetching and caching it is
 * discovery.ts's job), so every rule here is unit-tested without a network (test/unit/oidc-verify.test.ts).
 *
 * The JWS work is done by `jose` (a maintained library made for Web-interoperable runtimes; WebCrypto only).
 * What this module adds is the policy, each line a decision:
 *
 * - Algorithms: an allow-list of asymmetric algorithms (RS256/384/512, PS256/384/512, ES256/384/512, EdDSA).
 *   `none` is never accepted, and neither is any HMAC algorithm: HS256 with the client secret is legal in OIDC,
 *   but a verifier that accepts HS* next to RS* is the classic algorithm-confusion hole (an attacker signs with
 *   the public key as an HMAC secret). The key is only ever taken from the issuer's JWKS, never from the token
 *   (`jwk`, `jku`, `x5u`, `x5c` headers are ignored: createLocalJWKSet selects by `kid` and `alg` only), and a
 *   JWK whose own `alg`/`kty`/`use` does not fit the token's alg is not selected.
 * - Key choice: by `kid` among the JWKS keys usable for the token's alg. No matching key, or several matching
 *   keys without a `kid` to tell them apart, is a refusal (`unknown_kid`); the caller may refetch the JWKS once
 *   (key rotation) and try again.
 * - `iss` must equal the configured issuer exactly (no normalisation: the issuer is an identifier, §2).
 * - `aud` must contain the client id; when it has several values, `azp` must be present and equal the client
 *   id (§3.1.3.7 items 3-5), so a token minted for another client of the same IdP is refused.
 * - `exp` and `iat` are required; `exp` must be in the future and `iat` not in the future, each with
 *   CLOCK_SKEW_SECONDS of tolerance; `iat` no older than MAX_TOKEN_AGE_SECONDS (the token answers a sign-in
 *   this service started at most ten minutes ago, so an older one is a replay or a broken clock).
 * - `nonce` must be present and equal the nonce this service put in the authorization request (bound to the
 *   browser's login-state row), compared in constant time; this ties the token to this sign-in attempt.
 * - `sub` must be present (the stable subject identifier; logged, and used for nothing else yet).
 *
 * Every refusal is an OidcTokenError with a short machine reason (for the sign-in log) and a precise message;
 * the browser only ever sees the generic sign-in failure message.
 */
import { createLocalJWKSet, errors, jwtVerify, type JSONWebKeySet, type JWTPayload } from 'jose'

export const CLOCK_SKEW_SECONDS = 60
export const MAX_TOKEN_AGE_SECONDS = 10 * 60
export const ALLOWED_ALGS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'] as const

export type OidcTokenReason =
  | 'malformed'
  | 'alg'
  | 'unknown_kid'
  | 'bad_signature'
  | 'iss'
  | 'aud'
  | 'azp'
  | 'expired'
  | 'iat'
  | 'nonce'
  | 'claims'

export class OidcTokenError extends Error {
  constructor(
    readonly reason: OidcTokenReason,
    message: string,
  ) {
    super(message)
    this.name = 'OidcTokenError'
  }
}

export interface IdTokenExpectations {
  issuer: string
  clientId: string
  /** the nonce sent in the authorization request */
  nonce: string
  jwks: JSONWebKeySet
  now: Date
}

export interface VerifiedIdToken {
  sub: string
  email: string | null
  emailVerified: boolean | null
  givenName: string | null
  familyName: string | null
  name: string | null
  /** the `roles` / `groups` claim values (strings only), for role mapping */
  roles: string[]
  /** seconds since the epoch */
  exp: number
  claims: JWTPayload
}

/** Constant-time string equality (length is not secret here: both sides are ours or fixed-size). */
export function timingSafeEqual(a: string, b: string): boolean {
  const x = new TextEncoder().encode(a)
  const y = new TextEncoder().encode(b)
  if (x.length !== y.length) return false
  let d = 0
  for (let i = 0; i < x.length; i++) d |= x[i] ^ y[i]
  return d === 0
}

const str = (v: unknown): string | null => (typeof v === 'string' && v.length > 0 ? v : null)
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : typeof v === 'string' ? [v] : [])

/** Reads the protected header without trusting it (only to refuse a disallowed alg with a precise reason). */
function headerOf(token: string): Record<string, unknown> {
  const part = token.split('.')[0] ?? ''
  try {
    const json = atob(part.replace(/-/g, '+').replace(/_/g, '/'))
    const h = JSON.parse(json) as unknown
    if (!h || typeof h !== 'object' || Array.isArray(h)) throw new Error('not an object')
    return h as Record<string, unknown>
  } catch {
    throw new OidcTokenError('malformed', 'the ID token is not a compact JWS (unreadable protected header)')
  }
}

export async function verifyIdToken(token: string, e: IdTokenExpectations): Promise<VerifiedIdToken> {
  if (typeof token !== 'string' || token.length > 16 * 1024 || token.split('.').length !== 3)
    throw new OidcTokenError('malformed', 'the ID token is not a compact JWS of three parts (or is over 16 KiB)')
  const header = headerOf(token)
  if (typeof header.alg !== 'string' || !(ALLOWED_ALGS as readonly string[]).includes(header.alg))
    throw new OidcTokenError('alg', `the ID token's alg ${JSON.stringify(header.alg)} is not accepted (asymmetric algorithms only; never none or HMAC)`)

  let payload: JWTPayload
  try {
    const r = await jwtVerify(token, createLocalJWKSet(e.jwks), {
      algorithms: [...ALLOWED_ALGS],
      issuer: e.issuer,
      audience: e.clientId,
      currentDate: e.now,
      clockTolerance: CLOCK_SKEW_SECONDS,
      maxTokenAge: MAX_TOKEN_AGE_SECONDS,
      requiredClaims: ['iss', 'aud', 'exp', 'iat', 'sub', 'nonce'],
    })
    payload = r.payload
  } catch (err) {
    throw translate(err)
  }
  // jose checks iat only for age; a token issued in the future (beyond the skew) is refused here.
  if (typeof payload.iat !== 'number' || payload.iat > e.now.getTime() / 1000 + CLOCK_SKEW_SECONDS)
    throw new OidcTokenError('iat', `the ID token was issued in the future (iat ${String(payload.iat)})`)
  const aud = strings(payload.aud)
  if (aud.length > 1 && payload.azp !== e.clientId)
    throw new OidcTokenError('azp', 'the ID token has several audiences and its azp is not this client')
  if (payload.azp !== undefined && payload.azp !== e.clientId)
    throw new OidcTokenError('azp', 'the ID token was issued to another client (azp)')
  if (typeof payload.nonce !== 'string' || !timingSafeEqual(payload.nonce, e.nonce))
    throw new OidcTokenError('nonce', "the ID token's nonce is not the one this sign-in sent")
  const sub = str(payload.sub)
  if (!sub) throw new OidcTokenError('claims', 'the ID token has no sub')
  return {
    sub,
    email: str(payload.email),
    emailVerified: typeof payload.email_verified === 'boolean' ? payload.email_verified : null,
    givenName: str(payload.given_name),
    familyName: str(payload.family_name),
    name: str(payload.name),
    roles: [...strings(payload.roles), ...strings(payload.groups)],
    exp: payload.exp as number,
    claims: payload,
  }
}

function translate(err: unknown): OidcTokenError {
  if (err instanceof errors.JWKSNoMatchingKey || err instanceof errors.JWKSMultipleMatchingKeys)
    return new OidcTokenError('unknown_kid', `no single key of the issuer's JWKS matches the ID token (kid/alg): ${err.message}`)
  if (err instanceof errors.JWSSignatureVerificationFailed) return new OidcTokenError('bad_signature', 'the ID token signature does not verify')
  if (err instanceof errors.JOSEAlgNotAllowed) return new OidcTokenError('alg', err.message)
  if (err instanceof errors.JWTExpired)
    // jose reports an iat older than maxTokenAge as JWTExpired with claim "iat"
    return err.claim === 'iat' ? new OidcTokenError('iat', `the ID token was issued too long ago (${err.message})`) : new OidcTokenError('expired', `the ID token has expired (${err.message})`)
  if (err instanceof errors.JWTClaimValidationFailed) {
    const claim = err.claim
    // a required claim that is absent (iss, aud, exp, iat, sub, nonce) is one reason, whichever it is
    if (err.reason === 'missing') return new OidcTokenError('claims', `the ID token has no ${claim} claim`)
    if (claim === 'iss') return new OidcTokenError('iss', 'the ID token was issued by another issuer (iss)')
    if (claim === 'aud') return new OidcTokenError('aud', 'the ID token is for another audience (aud)')
    if (claim === 'iat') return new OidcTokenError('iat', `the ID token's iat is unacceptable (${err.message})`)
    if (claim === 'nbf') return new OidcTokenError('iat', `the ID token is not valid yet (${err.message})`)
    return new OidcTokenError('claims', `ID token claim ${claim}: ${err.message}`)
  }
  if (err instanceof errors.JOSEError) return new OidcTokenError('malformed', `the ID token is not acceptable: ${err.message}`)
  // Fail closed: whatever else went wrong while verifying (a key jose could not import, a runtime error on a
  // hostile input), the token is not accepted; the sign-in is refused like any other bad token, never a 500.
  return new OidcTokenError('malformed', `the ID token could not be verified: ${err instanceof Error ? err.message.slice(0, 200) : 'unknown error'}`)
}
