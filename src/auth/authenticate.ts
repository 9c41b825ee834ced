import type { Context, MiddlewareHandler } from 'hono'
import type { AppEnv } from '../env'
import { ApiError } from '../http/errors'
import { rateLimitHeaders, type RateLimitOutcome } from '../ratelimit/headers'
import { admitUser, authorizeSubject, consumeIp, LimiterUnavailable, outcome, releaseSlot } from '../ratelimit/limiter.client'
import { admit } from '../ratelimit/admission'
import { measuredExtra } from '../ratelimit/cost'
import { fromBase64Strict, toBase64 } from './encoding'
import { verifySession } from './jwt'
import { CSRF_HEADER, csrfProblem, readCookie, SESSION_COOKIE } from './csrf'
import { permissionsOf, type Permission } from './permissions'
import type { Principal } from './principal'
import { offsetRangeError } from './request-date'
import { isOneUse, type ReplayClass } from './replay'
import { importTokenKey, parseRfc3339WithOffset, requestTarget, skewError } from './signature'
import { verifyRequestSignature } from './signature-verify'
import type { LimitResult, PrincipalSnapshot, SignedRequestFacts } from '../ratelimit/limiter.do'
import { openTokenKey } from './token-crypto'
import { getSealedKey } from './tokens.store'
import { primaryDb } from '../http/d1-session'

/**
 * Authentication + rate limiting, in one middleware so that the budget spent depends on the outcome:
 *  - a credential that verifies spends its own token's (or session's) bucket, in the same Durable Object
 *    round-trip that checks revocation and the user's state;
 *  - no credential, a bad one, or a public route spends the client IP's bucket instead, so forged
 *    requests naming somebody's token id cannot exhaust that token's budget.
 * Every failure is a 401 envelope whose message names the cause (the spec: failed authentication → 401).
 */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/**
 * Isolate-local cache of token keys, by token id, as imported non-extractable HMAC keys (the first link of
 * the signature chain), so a warm token costs neither a D1 read, an AES-GCM open nor a key import.
 * Safe: revocation is decided by the token's limiter object (on every request, or at every lease renewal,
 * so within LIMITER_LEASE_MS: ratelimit/lease.ts), not here, so a key cached
 * in an isolate that never heard of the revocation still cannot get a request admitted; a token's key never
 * changes (a new key is a new token id). Bounded: the oldest entry goes first beyond KEY_CACHE_MAX.
 * Unknown ids (null) are not cached, so floods of random ids cannot fill it; errors are not cached either.
 */
const keyCache = new Map<string, CryptoKey>()
const KEY_CACHE_MAX = 5000
/**
 * Loads in flight, by token id (single flight): concurrent requests of a cold token share one D1 read and
 * one key open instead of each reading D1. Holds only pending loads, so it is bounded by concurrency.
 */
const keyLoads = new Map<string, Promise<CryptoKey | null>>()

/** Isolate-local note of IPs known to be over their limit, to answer floods without any I/O. */
const blockedIps = new Map<string, { untilMs: number; o: RateLimitOutcome }>()

export function clientIp(c: Context): string {
  return c.req.header('cf-connecting-ip') ?? c.req.header('x-real-ip') ?? 'unknown'
}

function applyLimitHeaders(c: Context<AppEnv>, o: RateLimitOutcome) {
  c.set('rateLimit', o)
  for (const [k, v] of Object.entries(rateLimitHeaders(o))) c.header(k, v)
}

function tooMany(o: RateLimitOutcome): ApiError {
  return new ApiError(429, 'Too many requests. Please try again later.', 'middleware', rateLimitHeaders(o))
}

/** 429 for a caller whose in-flight slots are all taken: retry when one of its requests has finished. */
function busy(o: RateLimitOutcome, who: string, cap: number): ApiError {
  return new ApiError(429, `too many requests in flight for this ${who}: at most ${cap} at a time; retry when one has finished`, 'middleware', {
    ...rateLimitHeaders(o),
    'Retry-After': '1',
  })
}

/** Work after the answer (slot releases): through waitUntil when there is an execution context. */
function afterwards(c: Context<AppEnv>, p: Promise<unknown>) {
  const done = p.catch(() => undefined) // best effort: a lost release expires with its lease
  try {
    c.executionCtx.waitUntil(done)
  } catch {
    /* no execution context (some tests): the promise runs on its own */
  }
}

function unavailable(cause?: unknown): ApiError {
  const err = new ApiError(503, 'the rate limiter is unavailable; retry shortly', 'middleware', { 'Retry-After': '1' })
  if (cause !== undefined) err.cause = cause // logged with the request id by app.onError, never sent
  return err
}

/**
 * The token key could not be read from D1 (overloaded, unreachable, timed out). Not the client's fault and
 * transient, so 503 with `Retry-After: 1`, like an unreachable limiter; never an admission (nothing is
 * verified without the key) and never a bare 500. The failure is not cached (tokenKey), so the next
 * request reads again.
 */
export class TokenStoreUnavailable extends Error {}

function storeUnavailable(cause: unknown): ApiError {
  const err = new ApiError(503, 'the credential store is unavailable; retry shortly', 'auth', { 'Retry-After': '1' })
  err.cause = cause
  return err
}

async function spendIp(c: Context<AppEnv>, kind: 'ip' | 'login'): Promise<RateLimitOutcome> {
  const ip = clientIp(c)
  const now = c.get('now')().getTime()
  const key = `${kind}:${ip}`
  const blocked = blockedIps.get(key)
  if (blocked && blocked.untilMs > now) return { ...blocked.o, allowed: false, remaining: 0 }
  const o = await consumeIp(c.env, c.get('config'), ip, kind, now)
  if (!o.allowed) {
    if (blockedIps.size > 10_000) blockedIps.clear()
    blockedIps.set(key, { untilMs: now + o.retryAfterSeconds * 1000, o })
  } else if (blocked) blockedIps.delete(key)
  return o
}

/** Fail authentication: the IP pays for it; 429 once the IP is over its budget, else 401. */
async function fail(c: Context<AppEnv>, message: string): Promise<never> {
  let o: RateLimitOutcome
  try {
    o = await spendIp(c, 'ip')
  } catch (e) {
    if (e instanceof LimiterUnavailable) throw unavailable(e)
    throw e
  }
  applyLimitHeaders(c, o)
  if (!o.allowed) throw tooMany(o)
  throw new ApiError(401, message, 'auth', { 'WWW-Authenticate': 'Bearer, svcsignature' })
}

/** The imported key of a token (null: no such token), from the cache or one shared load. Exported for tests. */
export function tokenKey(env: Pick<Env, 'DB'>, secret: string, tokenId: string): Promise<CryptoKey | null> {
  const hit = keyCache.get(tokenId)
  if (hit !== undefined) return Promise.resolve(hit)
  const pending = keyLoads.get(tokenId)
  if (pending) return pending
  // The callbacks below run only after `load` is assigned and registered (promise callbacks are never
  // synchronous), so the identity checks are sound even if the read fails at once.
  const load: Promise<CryptoKey | null> = openKey(env, secret, tokenId)
    .then((key) => {
      // Cache only if this load is still current: forgetTokenKey during the load (revocation) wins.
      if (key && keyLoads.get(tokenId) === load) {
        if (keyCache.size >= KEY_CACHE_MAX) keyCache.delete(keyCache.keys().next().value as string)
        keyCache.set(tokenId, key)
      }
      return key
    })
    .finally(() => {
      // Success, null or failure: the next cold request loads again (a failure is never cached).
      if (keyLoads.get(tokenId) === load) keyLoads.delete(tokenId)
    })
  keyLoads.set(tokenId, load)
  return load
}

async function openKey(env: Pick<Env, 'DB'>, secret: string, tokenId: string): Promise<CryptoKey | null> {
  // Only the D1 read is a store failure (503); a key that does not open (wrong TOKEN_ENCRYPTION_KEY)
  // stays an internal error (500), as retrying would not help.
  let row: Awaited<ReturnType<typeof getSealedKey>>
  try {
    row = await getSealedKey(env.DB, tokenId)
  } catch (e) {
    throw new TokenStoreUnavailable(String((e as Error)?.message ?? e))
  }
  if (!row) return null
  return importTokenKey(await openTokenKey(secret, tokenId, row.key_sealed))
}

/** Forget a key in this isolate (on revocation; other isolates are covered by the token's object). */
export function forgetTokenKey(tokenId: string) {
  keyCache.delete(tokenId)
  keyLoads.delete(tokenId)
}

type Credential = { kind: 'token' | 'session'; id: string; signed?: SignedRequestFacts }

async function verifyCredential(c: Context<AppEnv>, header: string, readOnly: boolean, replay: ReplayClass): Promise<Credential> {
  const sp = header.indexOf(' ')
  const scheme = (sp === -1 ? header : header.slice(0, sp)).toLowerCase()
  const param = sp === -1 ? '' : header.slice(sp + 1).trim()
  const cfg = c.get('config')
  const now = c.get('now')()

  if (scheme === 'bearer') {
    if (!param) return fail(c, 'Authorization header has no bearer token')
    const claims = await verifySession(param, cfg.JWT_SIGNING_KEY, Math.floor(now.getTime() / 1000))
    if (typeof claims === 'string') return fail(c, `bearer ${claims}`)
    return { kind: 'session', id: claims.jti }
  }
  if (scheme !== 'svcsignature' && scheme !== 'bhesignature') {
    return fail(c, `unsupported authorization scheme "${scheme.slice(0, 32)}": use Bearer, svcsignature or bhesignature`)
  }
  if (!UUID.test(param)) return fail(c, 'token id is malformed: expected a UUID after the scheme')
  const dateText = c.req.header('requestdate')
  if (!dateText) return fail(c, 'missing RequestDate header')
  const parsed = parseRfc3339WithOffset(dateText)
  if (!parsed) return fail(c, 'malformed RequestDate header: expected an RFC 3339 date-time')
  const date = parsed.time
  const badOffset = offsetRangeError(parsed.offsetMinutes)
  if (badOffset) return fail(c, badOffset)
  const sigText = c.req.header('signature')
  if (!sigText) return fail(c, 'missing Signature header')
  const sig = fromBase64Strict(sigText.trim())
  if (!sig) return fail(c, 'malformed Signature header: expected standard base64')
  const key = await tokenKey({ DB: primaryDb(c.env.DB) }, cfg.TOKEN_ENCRYPTION_KEY, param)
  if (key === null) return fail(c, 'unknown or revoked token')
  const skew = skewError(date, now)
  if (skew) return fail(c, skew)
  const body = await c.req.arrayBuffer()
  const ok = await verifyRequestSignature(key, c.req.method, requestTarget(c.req.url), dateText, body, sig)
  if (!ok) return fail(c, 'signature digest mismatch')
  // The token's object checks the offset against the ones this token used, and a mutation against the
  // ones already admitted (auth/request-date.ts). The replay key is the signature as decoded, re-encoded
  // canonically, so two spellings of one signature are one key.
  const signed: SignedRequestFacts = { offsetMinutes: parsed.offsetMinutes, claimedMs: date.getTime() }
  // Only a one-use request (its route's replay class, src/auth/replay.ts) is remembered and refused again.
  if (isOneUse(c.req.method, replay, readOnly, cfg.SIGNED_MUTATIONS_ONCE === 'on')) signed.replayKey = toBase64(sig)
  return { kind: 'token', id: param, signed }
}

/** The session of the `token` cookie; a change also needs the session's CSRF proof and this site's Origin (403). */
async function verifyCookieSession(c: Context<AppEnv>, jwt: string): Promise<Credential> {
  const cfg = c.get('config')
  const claims = await verifySession(jwt, cfg.JWT_SIGNING_KEY, Math.floor(c.get('now')().getTime() / 1000))
  if (typeof claims === 'string') return fail(c, `session cookie ${claims}`)
  const problem = await csrfProblem(
    {
      method: c.req.method,
      url: c.req.url,
      origin: c.req.header('origin') ?? null,
      secFetchSite: c.req.header('sec-fetch-site') ?? null,
      csrfHeader: c.req.header(CSRF_HEADER) ?? null,
      publicBaseUrl: cfg.PUBLIC_BASE_URL,
    },
    cfg.JWT_SIGNING_KEY,
    claims.jti,
  )
  if (problem) throw new ApiError(403, problem, 'csrf')
  return { kind: 'session', id: claims.jti }
}

/**
 * `cost`: the route's declared weight for this request (src/http/route.ts, src/ratelimit/cost.ts), taken from
 * the caller's bucket on admission; the measured rest is charged when the request ends.
 */
export function authenticate(
  opts:
    | { required: true; cost?: (c: Context<AppEnv>) => number; readOnly?: boolean; replay?: ReplayClass }
    | { required: false; publicLimit: 'ip' | 'login' },
): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    let admitted: { weight: number; nowMs: number; slots: [string, string][] }
    try {
      if (!opts.required) {
        const o = await spendIp(c, opts.publicLimit)
        applyLimitHeaders(c, o)
        if (!o.allowed) throw tooMany(o)
        return next()
      }
      const header = c.req.header('authorization')
      let cred: Credential
      if (header && header.trim()) cred = await verifyCredential(c, header.trim(), opts.readOnly === true, opts.replay ?? 'once')
      else {
        // The console's browser session: the HttpOnly cookie, with the CSRF proof for changes (auth/csrf.ts).
        // Only without an Authorization header, so bearer and signed requests never depend on cookies.
        const jwt = readCookie(c.req.header('cookie'), SESSION_COOKIE)
        if (!jwt) return fail(c, 'authentication required: no Authorization header')
        cred = await verifyCookieSession(c, jwt)
      }
      const cfg = c.get('config')
      const nowMs = c.get('now')().getTime()
      const weight = cfg.RATE_LIMIT_COST === 'on' && opts.cost ? Math.max(1, Math.ceil(opts.cost(c))) : 1
      // A weighted request needs an in-flight slot in the object, so it always goes there (one call, as
      // with LIMITER_LEASE_MS = 0); a weight-1 request may be admitted from this isolate's lease
      // (ratelimit/admission.ts decides, and sends signed mutations to the object as well).
      let res: { ok: false; reason: string } | { ok: true; principal: PrincipalSnapshot; o: RateLimitOutcome; limit?: LimitResult }
      if (weight > 1) {
        const r = await authorizeSubject(c.env, cfg, cred.kind, cred.id, nowMs, cred.signed, weight)
        res = r.ok ? { ok: true, principal: r.principal, o: outcome(cred.kind, cfg.RATE_LIMIT_PER_SECOND, cfg.RATE_LIMIT_BURST, r.limit), limit: r.limit } : r
      } else {
        const r = await admit(c.env, cfg, cred.kind, cred.id, nowMs, cred.signed, (p) => afterwards(c, p))
        res = r.ok ? { ok: true, principal: r.principal, o: r.outcome } : r
      }
      if (!res.ok) return fail(c, res.reason)
      const o = res.o
      applyLimitHeaders(c, o)
      if (res.limit?.busy) throw busy(o, cred.kind === 'token' ? 'API token' : 'session', cfg.RATE_LIMIT_IN_FLIGHT_PER_TOKEN)
      if (!o.allowed) throw tooMany(o)
      const subjectName = `${cred.kind}:${cred.id}`
      const subjectLease = res.limit?.lease
      const p = res.principal
      // A weighted request also needs the user's own bucket and a slot among the user's in-flight
      // requests, so that many tokens or sessions of one user do not multiply what the user may take.
      let userLease: string | undefined
      if (weight > 1) {
        let u
        try {
          u = await admitUser(c.env, cfg, p.userId, nowMs, weight)
        } catch (e) {
          if (subjectLease) afterwards(c, releaseSlot(c.env, cfg, subjectName, subjectLease, nowMs, 0))
          throw e
        }
        if (!u.allowed) {
          if (subjectLease) afterwards(c, releaseSlot(c.env, cfg, subjectName, subjectLease, nowMs, 0))
          const uo = outcome('user', cfg.RATE_LIMIT_PER_SECOND, cfg.RATE_LIMIT_BURST, u)
          applyLimitHeaders(c, uo)
          throw u.busy ? busy(uo, 'user', cfg.RATE_LIMIT_IN_FLIGHT_PER_USER) : tooMany(uo)
        }
        userLease = u.lease
      }
      const principal: Principal = {
        userId: p.userId,
        principalName: p.principalName,
        roles: p.roles,
        permissions: [...permissionsOf(p.roles)],
        environmentAccess: p.environmentAccess,
        via: cred.kind,
        ...(cred.kind === 'token' ? { tokenId: cred.id } : { sessionId: cred.id }),
      }
      c.set('principal', principal)
      admitted = { weight, nowMs, slots: [...(subjectLease ? [[subjectName, subjectLease]] : []), ...(userLease ? [[`user:${p.userId}`, userLease]] : [])] as [string, string][] }
    } catch (e) {
      if (e instanceof LimiterUnavailable) throw unavailable(e)
      if (e instanceof TokenStoreUnavailable) throw storeUnavailable(e)
      throw e
    }
    if (admitted.slots.length === 0) return next()
    const started = Date.now()
    try {
      await next()
    } finally {
      // Free the slots and charge what a weighted read's time cost beyond its weight (after the answer): the
      // clock's time plus the computation the route estimated (the clock stands still while a Worker
      // computes; `unclockedMs`, src/ratelimit/cost.ts). A read is a GET or a route declared read-only
      // (Cypher). Writes pay their declared, size-scaled weight only: ingest is heavy by nature and bounded
      // by its budgets (docs/budgets.md); charging its time would only slow collectors down.
      const elapsed = Date.now() - started
      const cfg = c.get('config')
      const read = c.req.method === 'GET' || ('readOnly' in opts && opts.readOnly === true)
      const used = elapsed + Math.max(0, c.get('unclockedMs') ?? 0)
      const extra = read ? measuredExtra(used, cfg.RATE_LIMIT_MS_PER_TOKEN, cfg.RATE_LIMIT_FREE_MS) : 0
      for (const [name, lease] of admitted.slots) afterwards(c, releaseSlot(c.env, c.get('config'), name, lease, admitted.nowMs + elapsed, extra))
    }
  }
}

/**
 * A public route that also recognises a signed-in caller (`recognises` in src/http/route.ts; today only
 * GET /api/v2/sso-providers, which answers managers more than visitors). The reasoning:
 *  - No credential at all: exactly a public route (the IP's bucket, `publicLimit`), no principal.
 *  - An Authorization header: it must verify, as on any authenticated route (its own bucket, revocation,
 *    replay class `repeatable`, since only GETs use this); a bad one is the usual 401. A script whose token
 *    was revoked must hear so, not silently get the visitor's answer.
 *  - Only the browser's session cookie: verified the same way when it is good. When it is not (expired,
 *    logged out, its user disabled), the request is answered as a visitor's: the sign-in page is exactly
 *    where a browser with a stale cookie lands, and it must still see the providers. Every such failure
 *    comes from `fail` above, which has already charged the IP's bucket (or thrown 429) before the 401;
 *    so the visitor answer costs the IP one token, as an anonymous request does, never two.
 *  - Only a 401 raised before the handler ran is turned into the visitor path (`reached`): a 401 from
 *    further down, or any other error (429, 503), propagates unchanged.
 * The handler decides what the principal may see; this middleware only establishes who is calling.
 */
export function authenticateIfPresent(publicLimit: 'ip' | 'login'): MiddlewareHandler<AppEnv> {
  const visitor = authenticate({ required: false, publicLimit })
  const caller = authenticate({ required: true, replay: 'repeatable' })
  return async (c, next) => {
    if (c.req.header('authorization')?.trim()) return caller(c, next)
    if (!readCookie(c.req.header('cookie'), SESSION_COOKIE)) return visitor(c, next)
    let reached = false
    try {
      return await caller(c, async () => {
        reached = true
        await next()
      })
    } catch (e) {
      if (reached || !(e instanceof ApiError) || e.status !== 401) throw e
      return next() // no principal was set: the principal is set only once a credential verified

    }
  }
}

/** Permission check after authentication: 403 envelope when the caller's roles lack it. */
export function permit(permission: Permission): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    if (!c.get('principal')?.permissions.includes(permission))
      throw new ApiError(403, `not authorized: this operation needs the ${permission} permission`, 'auth')
    return next()
  }
}
