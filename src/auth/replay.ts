/**
 * Which signed mutations are one-use (SECURITY.md rule 3).
 *
 * A signed request binds the method, the target, the body and the hour of its RequestDate
 * (src/auth/signature.ts). Within that window a copy of the request, taken from a log or a proxy, and an
 * honest client sending the same request again are indistinguishable: same bytes, same signature. So the
 * question per route is not "is this a copy?" but "what could a copy gain its holder that the honest
 * client's own repeat would not?":
 *
 * - `once` — identity and access changes (users, roles, passwords, environment access, tokens, SSO
 *   providers, saved-query sharing, risk acceptance) and anything that answers with a secret. A copy could
 *   re-promote a user an administrator has just demoted, re-share what its owner has just withdrawn, or
 *   hand its holder a fresh key: the request is admitted once, and the same signature is refused with 401
 *   for as long as it could verify (REPLAY_MEMORY_MS, src/auth/request-date.ts).
 * - `repeatable` — data-plane operations (upload jobs, ingest, analysis requests, extension upserts, saved
 *   queries, selectors, read-only queries). Their effect is idempotent (the same upsert, the same selector
 *   set) or additive and bounded by the caller's rate limit (another upload job, another analysis request):
 *   a copy can do nothing its token's holder could not do by repeating it, and BloodHound's clients repeat
 *   them verbatim (OpenHound's check-in and job end, an upload script's empty `file-upload/start`, an
 *   extension applied twice). They may be admitted again within the signature's window.
 *
 * The window itself (±1 h skew, offsets remembered per token) applies to both classes: a copy older than
 * the window is refused whatever the route. A deployment whose clients all vary what they sign (the CLI
 * and the typed client add a nonce) can make every mutation one-use with SIGNED_MUTATIONS_ONCE=on.
 * A read-only route (route.ts `readOnly`, e.g. Cypher) changes nothing and stays repeatable even then.
 */

export type ReplayDecl = { once: string } | { repeatable: string }
export type ReplayClass = 'once' | 'repeatable'

interface DeclaredRoute {
  method: string
  auth: string
  readOnly?: true
  replay?: ReplayDecl
}

/**
 * Why a route's declaration is not acceptable, or null. Every non-GET route that authenticates must
 * declare its class with a reason; a public route (no credentials, so nothing signed) and a GET (never
 * one-use) must not; a read-only route is repeatable.
 */
export function replayClassError(def: DeclaredRoute): string | null {
  const mutating = def.method.toLowerCase() !== 'get'
  const decl = def.replay
  if (!mutating || def.auth === 'public') {
    return decl ? 'replay is declared only on non-GET routes that authenticate (nothing else is signed and one-use)' : null
  }
  if (!decl) return 'a mutating route must declare replay: { once: reason } or { repeatable: reason } (SECURITY.md rule 3)'
  const reason = 'once' in decl ? decl.once : decl.repeatable
  if (typeof reason !== 'string' || reason.trim().length < 10) return 'the replay declaration needs a one-line reason'
  if (def.readOnly && 'once' in decl) return 'a read-only route changes nothing: declare it repeatable'
  return null
}

/** Is this signed request one-use? (Only then does the token's object remember and refuse its signature.) */
export function isOneUse(method: string, cls: ReplayClass, readOnly: boolean, everyMutationOnce: boolean): boolean {
  const m = method.toUpperCase()
  if (m === 'GET' || m === 'HEAD' || m === 'OPTIONS' || readOnly) return false
  return cls === 'once' || everyMutationOnce
}
