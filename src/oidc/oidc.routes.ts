/**
 * OIDC single sign-on (HTTP only; token rules in verify.ts, browser binding in binding.ts, discovery and JWKS in
 * discovery.ts, SQL in oidc.store.ts). See docs/sso.md.
 *
 *   POST /api/v2/sso-providers/oidc      create (name, client_id, issuer, optional client_secret, config)
 *   GET  /api/v2/sso/:slug/login         for an OIDC provider: 302 to the IdP (code flow, PKCE S256) — sso.routes.ts dispatches here
 *   GET  /api/v2/sso/:slug/callback      the IdP's redirect back: check state, exchange the code, verify the ID token, sign in
 */
import type { Context } from 'hono'
import { z } from 'zod'
import type { AppEnv } from '../env'
import { defineRoute, type RouteEntry } from '../http/route'
import { auditOf } from '../audit/audit'
import { ApiError, rfc3339 } from '../http/errors'
import { checkName } from '../saml/names'
import { applyAutoProvision, PROVISIONING_OFF } from '../saml/provisioning'
import { takenKey, uniqueViolation } from '../saml/saml.store'
import { failureLocation, MESSAGES, placesFor, ROLE_CLAIM } from '../saml/sign-in'
import { signInPrincipal } from '../saml/sso.routes'
import { openTokenKey, sealTokenKey } from '../auth/token-crypto'
import { boundRef, clearLoginCookie, LOGIN_TTL_SECONDS, loginCookie, pkceChallenge, randomToken } from './binding'
import { discover, DiscoveryError, fetchJson } from './discovery'
import {
  consumeLoginState,
  createOidcProvider,
  getOidcProviderBySlug,
  recordLoginState,
  ssoProviderTypeBySlug,
  updateOidcProvider as storeUpdateOidcProvider,
  type OidcProviderRecord,
} from './oidc.store'
import { oidcCallbackUrl, oidcProviderJson, OidcProviderSchema } from './oidc.json'
import { OidcTokenError, timingSafeEqual, verifyIdToken, type VerifiedIdToken } from './verify'

const TAGS = ['Auth', 'Community', 'Enterprise']
const baseUrl = (c: Context<AppEnv>) => (c.var.config.PUBLIC_BASE_URL ?? new URL(c.req.url).origin).replace(/\/+$/, '')
const callbackUrl = (c: Context<AppEnv>, slug: string) => oidcCallbackUrl(baseUrl(c), slug)
const secretAad = (p: { client_id: string; issuer: string }) => `oidc-client-secret:${p.issuer}|${p.client_id}`
/** BloodHound's scopes, less the ones that are claims rather than scopes. */
const SCOPES = 'openid profile email'

const httpsIssuer = z
  .string()
  .max(2000)
  .refine((v) => {
    try {
      const u = new URL(v)
      return u.protocol === 'https:' && !u.search && !u.hash && !u.username && !u.password
    } catch {
      return false
    }
  }, 'issuer url is invalid: an https URL without query, fragment or credentials')

/** `config` of a create or update: the auto-provisioning fields, each optional (merged into the current ones). */
const ProvisioningInput = z
  .object({
    auto_provision: z
      .object({ enabled: z.boolean().optional(), default_role_id: z.number().int().optional(), role_provision: z.boolean().optional() })
      .optional(),
  })
  .optional()

const CreateBody = z.object({
  name: z.string().max(400),
  client_id: z.string().min(1, 'client_id is required').max(1000),
  issuer: httpsIssuer,
  client_secret: z.string().min(1).max(4000).optional().describe('extra: for a confidential client (client_secret_basic); sealed at rest, never returned'),
  config: ProvisioningInput,
})

/**
 * PATCH /api/v2/sso-providers/{id} for an OIDC provider (BloodHound's UpdateOIDCProviderRequest): JSON, every field
 * optional; `config.auto_provision.*` merged into the current settings; the extra `client_secret` replaces the
 * secret (null removes it: a public client).
 */
export const UpdateOidcBody = z
  .object({
    name: z.string().max(400).optional(),
    client_id: z.string().min(1, 'client_id must not be empty').max(1000).optional(),
    issuer: httpsIssuer.optional(),
    client_secret: z.string().min(1).max(4000).nullable().optional().describe('extra: a new client secret (sealed at rest), or null for none'),
    config: ProvisioningInput,
  })
  .strict()

/**
 * Applies an update to an OIDC provider, all of it or nothing (one batch with the audit entry). The sealed
 * client secret is bound to the issuer and client id (its additional data), so when either changes and no new
 * secret is given, the current one is opened and sealed again for the new pair.
 */
export async function updateOidcProvider(c: Context<AppEnv>, current: OidcProviderRecord, body: z.infer<typeof UpdateOidcBody>): Promise<Response> {
  let { name, slug } = current
  if (body.name !== undefined) {
    const n = checkName(body.name)
    if (!n.ok) throw new ApiError(400, n.message, 'name')
    ;({ name, slug } = n)
  }
  const cfg = applyAutoProvision(current.auto_provision, body.config?.auto_provision ?? {})
  if (!cfg.ok) throw new ApiError(400, cfg.message, cfg.context.replace(/^form\./, ''))
  const next = { client_id: body.client_id ?? current.client_id, issuer: body.issuer ?? current.issuer }
  const key = c.var.config.TOKEN_ENCRYPTION_KEY
  let sealed: string | null
  if (body.client_secret === null) sealed = null
  else if (body.client_secret !== undefined) sealed = await sealTokenKey(key, secretAad(next), body.client_secret)
  else if (current.client_secret_sealed && (next.client_id !== current.client_id || next.issuer !== current.issuer))
    sealed = await sealTokenKey(key, secretAad(next), await openTokenKey(key, secretAad(current), current.client_secret_sealed))
  else sealed = current.client_secret_sealed
  try {
    const updated = await storeUpdateOidcProvider(
      c.env.DB,
      { ssoProviderId: current.sso_provider_id, name, slug, ...next, client_secret_sealed: sealed, auto_provision: cfg.config, now: rfc3339(c.var.now()) },
      auditOf(c).write({
        name,
        slug,
        issuer: next.issuer,
        client_id: next.client_id,
        // whether the client secret changed (a field named after the secret would be dropped by the audit scrubber)
        confidential_client: body.client_secret === undefined ? 'unchanged' : body.client_secret === null ? 'removed' : 'replaced',
      }),
    )
    if (!updated) throw new ApiError(404, 'resource not found', 'sso_provider_id')
    return c.json({ data: oidcProviderJson(updated, baseUrl(c)) })
  } catch (e) {
    const violated = uniqueViolation(e)
    if (!violated) throw e
    const taken = (await takenKey(c.env.DB, name, slug, current.sso_provider_id)) ?? violated
    throw new ApiError(409, taken === 'name' ? `sso provider name must be unique: a provider named "${name}" already exists` : `sso provider name must be unique: another provider already has the slug "${slug}"`, 'name')
  }
}

/** Starts an OIDC sign-in: a login-state row, the binding cookie, 302 to the authorization endpoint. */
export async function startOidcLogin(c: Context<AppEnv>, p: OidcProviderRecord, relay: string | null): Promise<Response> {
  let config
  try {
    config = (await discover(p.issuer)).config
  } catch (e) {
    if (e instanceof DiscoveryError) throw new ApiError(502, `the OIDC provider's discovery failed: ${e.message.slice(0, 300)}`, 'oidc')
    throw e
  }
  const now = c.var.now()
  const ref = randomToken()
  const state = randomToken()
  const nonce = randomToken()
  const verifier = randomToken()
  await recordLoginState(
    c.env.DB,
    { ref, sso_provider_id: p.sso_provider_id, state, nonce, code_verifier: verifier, relay, expires_at: rfc3339(now.getTime() + LOGIN_TTL_SECONDS * 1000) },
    rfc3339(now),
  )
  const u = new URL(config.authorization_endpoint)
  u.searchParams.set('response_type', 'code')
  u.searchParams.set('client_id', p.client_id)
  u.searchParams.set('redirect_uri', callbackUrl(c, p.slug))
  u.searchParams.set('scope', SCOPES)
  u.searchParams.set('state', state)
  u.searchParams.set('nonce', nonce)
  u.searchParams.set('code_challenge', await pkceChallenge(verifier))
  u.searchParams.set('code_challenge_method', 'S256')
  const cookie = await loginCookie(c.var.config.JWT_SIGNING_KEY, ref, new URL(callbackUrl(c, p.slug)).pathname)
  return new Response(null, { status: 302, headers: { Location: u.toString(), 'Set-Cookie': cookie, 'Cache-Control': 'no-store' } })
}

function logSignIn(c: Context<AppEnv>, line: { outcome: 'signed_in' | 'refused' | 'user_disabled'; provider: string; reason?: string; detail?: string; user_id?: string; created?: boolean }) {
  const text = JSON.stringify({ type: 'oidc_sign_in', level: line.outcome === 'signed_in' ? 'info' : 'warn', request_id: c.var.requestId, ...line })
  if (line.outcome === 'signed_in') console.log(text)
  else {
    console.warn(text)
    c.get('audit')?.markFailed(line.outcome === 'user_disabled' ? 'user disabled' : `refused: ${line.reason ?? 'unknown'}`)
  }
}

async function exchangeCode(c: Context<AppEnv>, p: OidcProviderRecord, tokenEndpoint: string, code: string, verifier: string): Promise<string> {
  const form = new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: callbackUrl(c, p.slug), code_verifier: verifier })
  const headers: Record<string, string> = { 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'application/json' }
  if (p.client_secret_sealed !== null) {
    const secret = await openTokenKey(c.var.config.TOKEN_ENCRYPTION_KEY, secretAad(p), p.client_secret_sealed)
    // client_secret_basic (RFC 6749 §2.3.1): both parts form-urlencoded before base64
    headers.Authorization = `Basic ${btoa(`${encodeURIComponent(p.client_id)}:${encodeURIComponent(secret)}`)}`
  } else form.set('client_id', p.client_id)
  const r = await fetchJson(tokenEndpoint, { method: 'POST', headers, body: form.toString() })
  const idToken = (r.json as { id_token?: unknown } | null)?.id_token
  if (r.status !== 200) throw new DiscoveryError(`the token endpoint answered HTTP ${r.status}${typeof (r.json as { error?: unknown })?.error === 'string' ? ` (${(r.json as { error: string }).error.slice(0, 100)})` : ''}`)
  if (typeof idToken !== 'string') throw new DiscoveryError('the token endpoint answered without an id_token')
  return idToken
}

async function callback(c: Context<AppEnv>, slug: string, query: Record<string, string | undefined>): Promise<Response> {
  const p = /^[a-z0-9-]{1,200}$/.test(slug) ? await getOidcProviderBySlug(c.env.DB, slug) : null
  if (!p) {
    // A SAML provider's callback is its assertion consumer: POST only (as before this route existed).
    if (/^[a-z0-9-]{1,200}$/.test(slug) && (await ssoProviderTypeBySlug(c.env.DB, slug)) !== null)
      throw new ApiError(405, 'method GET is not allowed on this path; allowed: POST (a SAML provider: its IdP posts the response here)', 'route', { Allow: 'POST' })
    throw new ApiError(404, 'resource not found: no SSO provider has this slug', 'slug')
  }
  const place = placesFor(c.var.config, c.req.url)
  const path = new URL(callbackUrl(c, p.slug)).pathname
  const unbind = clearLoginCookie(path)
  const refuse = (reason: string, detail: string, message: string = MESSAGES.unauthenticated) => {
    logSignIn(c, { outcome: 'refused', provider: p.slug, reason, detail: detail.slice(0, 1000) })
    return new Response(null, { status: 302, headers: { Location: failureLocation(place, message), 'Set-Cookie': unbind, 'Cache-Control': 'no-store' } })
  }
  const now = c.var.now()
  // 1. the browser binding: the MAC'd ref this browser holds, its row taken (one use), the query's state equal to it
  const ref = await boundRef(c.var.config.JWT_SIGNING_KEY, c.req.header('cookie'))
  if (!ref) return refuse('browser_binding', 'no valid sign-in cookie: this browser did not start a sign-in with this provider, or it expired')
  const st = await consumeLoginState(c.env.DB, ref, p.sso_provider_id, rfc3339(now))
  if (!st) return refuse('state', 'the sign-in this cookie names is unknown, expired or used already (replay)')
  if (typeof query.state !== 'string' || query.state.length !== st.state.length || !timingSafeEqual(query.state, st.state))
    return refuse('state', 'the state returned by the IdP is not the one this browser was sent with')
  if (query.error) return refuse('idp_error', `the IdP answered error ${JSON.stringify(query.error.slice(0, 100))}`)
  if (!query.code) return refuse('no_code', 'the IdP answered without a code')
  // 2. the code for tokens, then the ID token (a JWKS refetched once when it names an unknown key)
  let token: VerifiedIdToken
  try {
    const d = await discover(p.issuer)
    const raw = await exchangeCode(c, p, d.config.token_endpoint, query.code, st.code_verifier)
    const expect = { issuer: p.issuer, clientId: p.client_id, nonce: st.nonce, now }
    try {
      token = await verifyIdToken(raw, { ...expect, jwks: d.jwks })
    } catch (e) {
      if (!(e instanceof OidcTokenError && e.reason === 'unknown_kid')) throw e
      token = await verifyIdToken(raw, { ...expect, jwks: (await discover(p.issuer, true)).jwks })
    }
  } catch (e) {
    if (e instanceof OidcTokenError) return refuse(`id_token_${e.reason}`, e.message)
    if (e instanceof DiscoveryError) return refuse('token_endpoint', e.message, MESSAGES.connection)
    throw e
  }
  // 3. the user: by email, as SAML (an unverified email names nobody)
  const principal = token.email
  if (!principal || principal.length > 320 || /[\s\u0000-\u001f\u007f]/.test(principal)) return refuse('no_principal', 'the ID token carries no usable email claim')
  if (token.emailVerified === false) return refuse('email_unverified', 'the IdP says the email is not verified (email_verified false)', MESSAGES.notAllowed)
  return signInPrincipal(c, {
    ssoProviderId: p.sso_provider_id,
    slug: p.slug,
    autoProvision: p.auto_provision,
    principal,
    roleAttributes: new Map([[ROLE_CLAIM, token.roles]]),
    sessionEnd: null,
    relay: st.relay,
    now,
    unbind,
    refuse,
    log: (line) => logSignIn(c, line),
  })
}


export const oidcRoutes: RouteEntry[] = [
  defineRoute(
    {
      method: 'post',
      path: '/api/v2/sso-providers/oidc',
      operationId: 'CreateOidcProvider',
      summary: 'Create an OIDC provider',
      description:
        'JSON `{name, client_id, issuer, client_secret?, config: {auto_provision: {enabled, default_role_id, role_provision}}}`. ' +
        'The issuer must be an https URL; its discovery document is read at sign-in. The client secret (optional: without one ' +
        'the client is public and relies on PKCE, as BloodHound) is sealed at rest and never returned. See docs/sso.md.',
      tags: TAGS,
      auth: 'auth/ManageProviders',
      replay: { once: 'SSO provider change: who may sign in, and with which role' },
      audit: { action: 'CreateOIDCIdentityProvider', fields: ({ body }) => ({ name: String((body as { name?: unknown }).name ?? '').slice(0, 100) }) },
      body: { kind: 'json', schema: CreateBody },
      responses: {
        201: { description: 'the new OIDC provider', schema: z.object({ data: OidcProviderSchema }) },
        409: { description: 'a provider with this name or slug exists' },
      },
    },
    async (c, { body }) => {
      const n = checkName(body.name)
      if (!n.ok) throw new ApiError(400, n.message, 'name')
      const ap = body.config?.auto_provision ?? {}
      const cfg = applyAutoProvision(PROVISIONING_OFF, ap)
      if (!cfg.ok) throw new ApiError(400, cfg.message, cfg.context.replace(/^form\./, ''))
      const sealed = body.client_secret === undefined ? null : await sealTokenKey(c.var.config.TOKEN_ENCRYPTION_KEY, secretAad(body), body.client_secret)
      try {
        const p = await createOidcProvider(
          c.env.DB,
          { name: n.name, slug: n.slug, client_id: body.client_id, issuer: body.issuer, client_secret_sealed: sealed, auto_provision: cfg.config, now: rfc3339(c.var.now()) },
          auditOf(c).write({ name: n.name, slug: n.slug, issuer: body.issuer, client_id: body.client_id }),
        )
        return c.json({ data: oidcProviderJson(p, baseUrl(c)) }, 201)
      } catch (e) {
        const violated = uniqueViolation(e)
        if (!violated) throw e
        const key = (await takenKey(c.env.DB, n.name, n.slug, 0)) ?? violated
        throw new ApiError(409, key === 'name' ? `sso provider name must be unique: a provider named "${n.name}" already exists` : `sso provider name must be unique: another provider already has the slug "${n.slug}"`, 'name')
      }
    },
  ),
  defineRoute(
    {
      method: 'get',
      path: '/api/v2/sso/:slug/callback',
      operationId: 'OidcCallback',
      audit: { action: 'LoginAttempt', intent: false, fields: ({ params }) => ({ login_method: 'oidc', ...(params as object) }), environments: () => [] },
      summary: "OIDC redirect URI: check the browser's state, exchange the code (PKCE), verify the ID token, sign the user in, redirect",
      description:
        'The IdP redirects the browser here with `code` and `state`. The browser must send the `edgehound_oidc` cookie GET /login gave it ' +
        '(HMAC-protected reference to the sign-in, one use, ten minutes); `state` must equal the stored one. The ID token is verified ' +
        "(issuer's JWKS signature, asymmetric algorithms only, iss, aud/azp, exp/iat with 60 s skew, nonce). Success: 302 to the UI with " +
        'the session cookies; failure: 302 to `<UI>/login?error=<message>`. See docs/sso.md.',
      tags: TAGS,
      auth: 'public',
      publicLimit: 'login',
      params: z.object({ slug: z.string() }),
      query: z.object({
        code: z.string().max(4096).optional(),
        state: z.string().max(512).optional(),
        error: z.string().max(512).optional(),
        error_description: z.string().max(2048).optional(),
      }),
      responses: {
        302: { description: 'signed in (Set-Cookie `token`), or refused (Location `<UI>/login?error=…`)', headers: { Location: 'where the browser goes next' } },
      },
    },
    async (c, { params, query }) => callback(c, params.slug, query),
  ),
]
