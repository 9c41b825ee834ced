/**
 * The SSO flow URLs a SAML provider hands out (sp_issuer_uri, sp_sso_uri, sp_acs_uri; sp_metadata_uri is in
 * saml.routes.ts), and BloodHound's public list of sign-on endpoints. HTTP only: the AuthnRequest and the
 * bindings are in authn-request.ts, SQL in sso.store.ts. See docs/saml.md, "SSO endpoints".
 *
 *   GET  /api/v2/sso/:slug            SP metadata (the issuer URL resolves to the same document as /metadata)
 *   GET  /api/v2/sso/:slug/login      SP-initiated login: 302 to the IdP (HTTP-Redirect) or a POST form page
 *   POST /api/v2/sso/:slug/callback   assertion consumer service: verify (response.ts), sign in, 302
 *   GET  /api/v2/saml/sso             every provider's name and login URL (public, as in BloodHound)
 *   + the small pages under /ui (ui.routes.ts) the sign-in redirects to when UI_BASE_URL is not set
 */
import { csrfToken, sessionCookies } from '../auth/csrf'
import type { Context } from 'hono'
import { z } from 'zod'
import type { AppEnv } from '../env'
import { defineRoute, type RouteEntry } from '../http/route'
import { auditOf } from '../audit/audit'
import { ApiError } from '../http/errors'
import { randomBytes, toBase64 } from '../auth/encoding'
import {
  authnRequestXml,
  checkRelayState,
  chooseSsoTarget,
  cspOrigin,
  MAX_RELAY_STATE,
  newRequestId,
  normaliseEndpoint,
  postBindingPage,
  redirectBindingLocation,
} from './authn-request'
import { idpSsoServices, MetadataError, type IdpSsoServices } from './metadata'
import { legacySpUrls, spMetadataXml, spUrls, type SpUrls } from './sp'
import { getLoginTarget, listSignOnProviders, saveSsoServices, slugExists } from './sso.store'
import { rfc3339 } from '../http/errors'
import { claimResponse, getAcsProvider, recordAuthnRequest, usersForPrincipal } from './acs.store'
import { decodeSamlResponse, SamlResponseError, verifySamlResponse, type VerifiedAssertion } from './response'
import {
  assertedPrincipal,
  disabledLocation,
  failureLocation,
  MESSAGES,
  placesFor,
  provisionedRole,
  successLocation,
  bindingCookie,
  bindingCookieValues,
  clearBindingCookie,
  type Places,
} from './sign-in'
import type { AutoProvision } from './provisioning'
import { getOidcProviderBySlug, ssoProviderTypeBySlug, SSO_TYPE_OIDC } from '../oidc/oidc.store'
import { startOidcLogin } from '../oidc/oidc.routes'
import { getUser, insertUser, updateUser, type User } from '../auth/users.store'
import { startSession } from '../auth/session-start'
import { invalidateUser } from '../auth/auth.routes'

const ACS_MAX_BYTES = 1024 * 1024
/**
 * How long an AuthnRequest can be answered: ten minutes covers a password, an MFA prompt and a slow
 * network; the IdP's own assertion lifetime (usually five minutes) then applies on top.
 */
export const AUTHN_REQUEST_TTL_MS = 10 * 60 * 1000
const TAGS = ['Auth', 'Community', 'Enterprise']

function baseUrl(c: Context<AppEnv>): string {
  return c.var.config.PUBLIC_BASE_URL ?? new URL(c.req.url).origin
}

const places = (c: Context<AppEnv>): Places => placesFor(c.var.config, c.req.url)

/**
 * One structured line per sign-in attempt, beside the request line and with the same request id: the
 * precise outcome for the operator. The browser only ever sees BloodHound's generic messages.
 */
function logSignIn(c: Context<AppEnv>, line: { outcome: 'signed_in' | 'refused' | 'user_disabled'; provider: string; reason?: string; detail?: string; user_id?: string; created?: boolean }) {
  const text = JSON.stringify({ type: 'saml_sign_in', level: line.outcome === 'signed_in' ? 'info' : 'warn', request_id: c.var.requestId, ...line })
  if (line.outcome === 'signed_in') console.log(text)
  else {
    console.warn(text)
    // the sign-in's audit entry (LoginAttempt) is a failure, although the answer is a redirect
    c.get('audit')?.markFailed(line.outcome === 'user_disabled' ? 'user disabled' : `refused: ${line.reason ?? 'unknown'}`)
  }
}

/** A 302 with each of `cookies` as its own Set-Cookie header. */
function redirect(location: string, cookies: string[] = []): Response {
  const headers = new Headers({ Location: location, 'Cache-Control': 'no-store' })
  for (const cookie of cookies) headers.append('Set-Cookie', cookie)
  return new Response(null, { status: 302, headers })
}

/** The callback's path (the binding cookie's Path), from the ACS URL so a PUBLIC_BASE_URL with a path prefix is honoured. */
const callbackPath = (acsUrl: string) => new URL(acsUrl).pathname

/** Whether metadata with this validUntil may be relied on at `now` (SAML metadata §2.3.2: past it, no). */
const metadataExpired = (validUntil: string | null, now: Date) => validUntil !== null && Date.parse(validUntil) <= now.getTime()

/** Slugs are `[a-z0-9-]+` (names.ts): anything else cannot name a provider, so it is simply not found. */
const isSlug = (s: string) => /^[a-z0-9-]{1,200}$/.test(s)
const notFound = () => new ApiError(404, 'resource not found: no SSO provider has this slug', 'slug')
export const slugParams = z.object({ slug: z.string().describe('the provider slug (lower case, `[a-z0-9-]`)') })

async function requireSlug(c: Context<AppEnv>, slug: string): Promise<void> {
  if (!isSlug(slug) || !(await slugExists(c.env.DB, slug))) throw notFound()
}

/**
 * The SP metadata document at one of a provider's SP URLs (issuer or /metadata; legacy.routes.ts serves the
 * same at BloodHound's legacy `/api/{version}/login/saml/{slug}/metadata`, with that URL set).
 */
export async function serveSpMetadata(c: Context<AppEnv>, slug: string, urls: SpUrls): Promise<Response> {
  await requireSlug(c, slug)
  return c.body(spMetadataXml(urls, c.var.now()), 200, { 'Content-Type': 'application/samlmetadata+xml' })
}

/**
 * SP-initiated login (GET /api/v2/sso/:slug/login, and the legacy `/api/{version}/login/saml/{slug}`):
 * `urlsOf(slug)` is the set of SP URLs of the URL family the browser came through, so the AuthnRequest's
 * Issuer and ACS URL and the binding cookie's Path all point at the matching callback.
 */
export async function startLogin(c: Context<AppEnv>, slug: string, relayState: string | null, urlsOf: (slug: string) => SpUrls): Promise<Response> {
  const t = isSlug(slug) ? await getLoginTarget(c.env.DB, slug) : null

  if (!t) throw notFound()
  const now = c.var.now()
  // Metadata past its validUntil must not be relied on (SAML metadata §2.3.2 / saml2int): no login with it.
  if (metadataExpired(t.metadata_valid_until, now))
    throw new ApiError(
      409,
      `the IdP metadata of this SSO provider expired at ${t.metadata_valid_until}; an administrator must upload current metadata`,
      'saml',
    )

  let services: IdpSsoServices | null = t.services
  if (!services && t.metadata_xml !== null) {
    try {
      services = idpSsoServices(t.metadata_xml)
    } catch (e) {
      if (!(e instanceof MetadataError)) throw e
      services = null // accepted once, unreadable now (stricter parser): fall back to the stored endpoint
    }
    if (services) await saveSsoServices(c.env.DB, t.saml_provider_id, t.updated_at, services)
  }
  const target = chooseSsoTarget(services, { binding: t.sso_binding, url: t.single_sign_on_uri })
  const endpoint = normaliseEndpoint(target.url)
  const urls = urlsOf(t.slug)
  const requestId = newRequestId()
  // Remembered so that the response can be checked to answer it (InResponseTo), once, within the TTL.
  if (!(await recordAuthnRequest(c.env.DB, requestId, t.slug, rfc3339(now), rfc3339(now.getTime() + AUTHN_REQUEST_TTL_MS)))) throw notFound()
  const xml = authnRequestXml({ id: requestId, issueInstant: now, destination: endpoint, acsUrl: urls.sp_acs_uri, issuer: urls.sp_issuer_uri })
  // Binds the sign-in to this browser: the callback requires this cookie to hold the InResponseTo (sign-in.ts).
  const binding = bindingCookie(requestId, callbackPath(urls.sp_acs_uri), AUTHN_REQUEST_TTL_MS / 1000)

  if (target.binding === 'HTTP-Redirect')
    return c.body(null, 302, { Location: redirectBindingLocation(endpoint, xml, relayState), 'Set-Cookie': binding, 'Cache-Control': 'no-store' })

  if (!cspOrigin(endpoint))
    throw new ApiError(409, "the IdP SSO URL of this provider has a host name that cannot be used in a login page's security policy", 'saml')
  const page = postBindingPage({ endpoint, xml, relayState, nonce: toBase64(randomBytes(16)), providerName: t.name })
  return c.body(page.html, 200, {
    'Content-Type': 'text/html; charset=utf-8',
    'Content-Security-Policy': page.csp,
    'X-Frame-Options': 'DENY',
    'Set-Cookie': binding,
    'Cache-Control': 'no-store',
  })
}

/**
 * The assertion consumer (POST /api/v2/sso/:slug/callback, and the legacy `/api/{version}/login/saml/{slug}/acs`):
 * `urls` is the URL family the response was posted to (its Destination and audience are checked against it).
 */
export async function finishSignIn(c: Context<AppEnv>, slug: string, body: ArrayBuffer, urls: SpUrls): Promise<Response> {
  if (!isSlug(slug)) throw notFound()

  const db = c.env.DB
  const cfg = c.var.config
  const place = places(c)
  // Every answer ends the browser binding: it is good for one attempt.
  const unbind = clearBindingCookie(callbackPath(urls.sp_acs_uri))
  const refuse = (reason: string, detail: string, message: string = MESSAGES.unauthenticated) => {
    logSignIn(c, { outcome: 'refused', provider: slug, reason, detail: detail.slice(0, 1000) })
    return redirect(failureLocation(place, message), [unbind])
  }

  // Decoded as the HTML form encoding browsers use (URLSearchParams: + is a space, %XX escapes).
  const form = new URLSearchParams(new TextDecoder().decode(body))
  const provider = await getAcsProvider(db, slug)
  if (!provider) {
    // an OIDC provider's callback is the IdP's redirect: GET only
    if ((await ssoProviderTypeBySlug(db, slug)) === SSO_TYPE_OIDC)
      throw new ApiError(405, 'method POST is not allowed on this path; allowed: GET (an OIDC provider: the IdP redirects the browser here)', 'route', { Allow: 'GET' })
    throw notFound()
  }
  const responses = form.getAll('SAMLResponse')
  const relays = form.getAll('RelayState')
  if (responses.length !== 1) return refuse('bad_form', `the form has ${responses.length} SAMLResponse fields; one is expected`)
  if (relays.length > 1) return refuse('bad_form', `the form has ${relays.length} RelayState fields`)

  const now = c.var.now()
  // Expired metadata is trusted nowhere: not to start a sign-in (GET /login answers 409), not to finish one.
  if (metadataExpired(provider.metadata_valid_until, now))
    return refuse('metadata_expired', `the IdP metadata of this provider expired at ${provider.metadata_valid_until}; an administrator must upload current metadata`, MESSAGES.connection)
  // Login CSRF: an SP-initiated response is accepted only from the browser that started the sign-in
  // (sign-in.ts, bindingCookie). Without any binding cookie, and no IdP-initiated sign-in allowed, the
  // response cannot be accepted whatever it says: refused before any signature is checked.
  const bound = bindingCookieValues(c.req.header('cookie'))
  if (bound.length === 0 && !provider.sign_in.allow_idp_initiated)
    return refuse('browser_binding', 'the browser posting the response did not start a sign-in with this provider (no sign-in cookie, or it expired), and IdP-initiated sign-in is not allowed for it')
  let v: VerifiedAssertion
  try {
    v = verifySamlResponse(decodeSamlResponse(responses[0]), {
      idpEntityId: provider.issuer_uri,
      certificates: provider.certificates,
      acsUrl: urls.sp_acs_uri,
      spEntityId: urls.sp_issuer_uri,
      allowSha1: provider.sign_in.allow_sha1,
      now,
    })
  } catch (e) {
    if (e instanceof SamlResponseError) return refuse(e.reason, e.message)
    throw e
  }
  if (v.inResponseTo === null && !provider.sign_in.allow_idp_initiated)
    return refuse('idp_initiated', 'the response answers no AuthnRequest (IdP-initiated sign-in), which this provider does not allow')
  if (v.inResponseTo !== null && !bound.includes(v.inResponseTo))
    return refuse(
      'browser_binding',
      `the response answers AuthnRequest ${JSON.stringify(v.inResponseTo.slice(0, 200))}, which this browser did not start (${bound.length === 0 ? 'no sign-in cookie' : "the sign-in cookie names another request"})`,
    )
  if (v.sessionNotOnOrAfter !== null && v.sessionNotOnOrAfter.getTime() <= now.getTime())
    return refuse('session_not_on_or_after', `the IdP ended this session at ${v.sessionNotOnOrAfter.toISOString()} (SessionNotOnOrAfter)`)

  // Only now, with a verified response, is anything written: the AuthnRequest is consumed and the
  // assertion ID recorded, in one transaction.
  const claim = await claimResponse(db, {
    ssoProviderId: provider.sso_provider_id,
    inResponseTo: v.inResponseTo,
    assertionId: v.assertionId,
    until: rfc3339(v.acceptableUntil),
    now: rfc3339(now),
  })
  if (!claim.fresh) return refuse('replay', `assertion ${JSON.stringify(v.assertionId.slice(0, 200))} was accepted before`)
  if (claim.request === false)
    return refuse(
      'unknown_in_response_to',
      `InResponseTo ${JSON.stringify(v.inResponseTo!.slice(0, 200))} is no AuthnRequest this service issued for this provider within ${AUTHN_REQUEST_TTL_MS / 60000} minutes, or it was answered already`,
    )

  const principal = assertedPrincipal(v, provider.principal_attribute_mappings)
  if (!principal) return refuse('no_principal', 'the assertion carries no usable email attribute (nor an emailAddress NameID)')
  return signInPrincipal(c, {
    ssoProviderId: provider.sso_provider_id,
    slug: provider.slug,
    autoProvision: provider.auto_provision,
    principal,
    roleAttributes: v.attributes,
    sessionEnd: v.sessionNotOnOrAfter,
    relay: relays[0] ?? null,
    now,
    unbind,
    refuse,
    log: (line) => logSignIn(c, line),
  })
}

/** What a verified sign-in (SAML assertion or OIDC ID token) hands to signInPrincipal. */
export interface VerifiedSignIn {
  ssoProviderId: number
  slug: string
  autoProvision: AutoProvision
  /** the asserted email (the user's principal name and email) */
  principal: string
  /** role claims under ROLE_CLAIM (sign-in.ts, provisionedRole) */
  roleAttributes: Map<string, string[]>
  /** the IdP's end of the session (SAML SessionNotOnOrAfter); null: the service's own lifetime */
  sessionEnd: Date | null
  relay: string | null
  now: Date
  /** the Set-Cookie that ends the browser binding */
  unbind: string
  refuse: (reason: string, detail: string, message?: string) => Response
  log: (line: { outcome: 'signed_in' | 'user_disabled'; provider: string; user_id?: string; created?: boolean }) => void
}

/**
 * The part of a sign-in after the IdP's answer verified, shared by SAML and OIDC (BloodHound's
 * CreateSSOSession with its JIT user creation): find the user by principal (it must belong to this provider),
 * create it when auto provisioning is on, apply the role claim, start the session, redirect.
 */
export async function signInPrincipal(c: Context<AppEnv>, s: VerifiedSignIn): Promise<Response> {
  const db = c.env.DB
  const cfg = c.var.config
  const place = places(c)
  const { principal, now, unbind, refuse } = s
  const logSignIn = (_c: unknown, line: Parameters<VerifiedSignIn['log']>[0]) => s.log(line)
  const found = await usersForPrincipal(db, principal)
  if (found.length > 1) return refuse('ambiguous_user', `${JSON.stringify(principal)} is one user's name and another user's email`, MESSAGES.notAllowed)
  let user: User | null = found[0] ?? null
  let created = false
  // Never a local password account, never another provider's user: whoever controls an IdP can assert any email.
  if (user && user.sso_provider_id !== s.ssoProviderId)
    return refuse(
      'user_not_of_provider',
      `user ${user.id} (${JSON.stringify(principal)}) ${user.sso_provider_id === null ? 'is not linked to an SSO provider' : `belongs to SSO provider ${user.sso_provider_id}`}`,
      MESSAGES.notAllowed,
    )
  // A refused sign-in changes nothing: a disabled user is turned away before the role claim is applied.
  if (user?.is_disabled) {
    logSignIn(c, { outcome: 'user_disabled', provider: s.slug, user_id: user.id })
    return redirect(disabledLocation(place), [unbind])
  }
  const ap = s.autoProvision
  if (!user) {
    if (!ap.enabled) return refuse('not_provisioned', `no user is named ${JSON.stringify(principal)} and auto provisioning is off`, MESSAGES.notAllowed)
    const role = provisionedRole(ap, s.roleAttributes)
    if (!role) return refuse('no_role', `auto provisioning has no valid default role (${ap.default_role_id})`, MESSAGES.connection)
    const id = crypto.randomUUID()
    const ok = await insertUser(
      db,
      {
        id,
        principal_name: principal,
        email: principal,
        password_hash: null,
        roles: [role],
        environment_access: { all: true },
        sso_provider_id: s.ssoProviderId,
        now: rfc3339(now),
      },
      auditOf(c).write({ id, principal_name: principal, roles: [role], sso_provider_id: s.ssoProviderId }, 'CreateUser'),
    )
    if (ok) {
      user = await getUser(db, id)
      created = true
    } else {
      // A concurrent first sign-in of the same person created it a moment ago: use it if it is theirs.
      const again = await usersForPrincipal(db, principal)
      user = again.length === 1 && again[0].sso_provider_id === s.ssoProviderId ? again[0] : null
    }
    if (!user) return refuse('provision_conflict', `could not create user ${JSON.stringify(principal)}: the name or email is taken`, MESSAGES.notAllowed)
  } else if (ap.enabled && ap.role_provision) {
    // Roles managed by the IdP: the role claim decides on every sign-in, as at creation.
    const role = provisionedRole(ap, s.roleAttributes)
    if (role && (user.roles.length !== 1 || user.roles[0] !== role)) {
      const nowIso = rfc3339(now)
      const r = await updateUser(db, user.id, { roles: [role] }, nowIso, auditOf(c).write({ id: user.id, roles: [role] }, 'UpdateUser'))
      if (r && r !== 'conflict') {
        user = r
        await invalidateUser(c.env, user.id, nowIso)
      }
    }
  }
  if (user.is_disabled) {
    // only a user created disabled by a concurrent change could get here
    logSignIn(c, { outcome: 'user_disabled', provider: s.slug, user_id: user.id })
    return redirect(disabledLocation(place), [unbind])
  }
  auditOf(c).setActor({ id: user.id, name: user.principal_name })
  // The IdP's SessionNotOnOrAfter bounds the session (and its cookie), never lengthens it.
  const session = await startSession(db, cfg, user.id, now, auditOf(c).write({ provider: s.slug }), s.sessionEnd ?? undefined)
  logSignIn(c, { outcome: 'signed_in', provider: s.slug, user_id: user.id, created })
  // the console's browser session: HttpOnly `token` and its CSRF proof (auth/csrf.ts)
  const csrf = await csrfToken(cfg.JWT_SIGNING_KEY, session.sessionId)
  return redirect(successLocation(place, s.relay), [unbind, ...sessionCookies(session.token, csrf, session.ttlSeconds, place.base.startsWith('https:'))])
}

export const LoginQuery = z.object({
  RelayState: z
    .string()
    .superRefine((v, ctx) => {
      const r = checkRelayState(v)
      if (!r.ok) ctx.addIssue({ code: 'custom', message: r.message })
    })
    .optional()
    .describe(`where to go after login: a path on this site starting with "/" (not "//"), printable ASCII, at most ${MAX_RELAY_STATE} characters; passed to the IdP as RelayState`),
})

const spMetadataResponse = {
  200: {
    description: 'SP metadata: entity id, ACS endpoint (HTTP-POST binding), NameID formats',
    contentType: 'application/samlmetadata+xml',
    schema: z.string(),
  },
}

const ACS_AUDIT = {
  action: 'LoginAttempt',
  intent: false,
  fields: ({ params }: { params: unknown }) => ({ login_method: 'saml', ...(params as object) }),
  // neither the sign-in nor the user it provisions or updates (id, name, role) names an environment
  environments: () => [],
} as const
const ACS_BODY = {
  kind: 'raw' as const,
  contentTypes: ['application/x-www-form-urlencoded'],
  maxBytes: ACS_MAX_BYTES,
  description: "the IdP's form (HTTP-POST binding): SAMLResponse (base64) and RelayState",
}

/** BloodHound's legacy URL versions: v1 (its root_uri_version 1 providers) and v2; anything else names nothing. */
const legacyParams = z.object({
  version: z.string().describe('`v1` or `v2` (BloodHound\'s legacy SAML URLs); anything else is 404'),
  slug: z.string().describe('the provider slug (lower case, `[a-z0-9-]`)'),
})
function legacyUrls(c: Context<AppEnv>, version: string, slug: string): SpUrls {
  if (version !== 'v1' && version !== 'v2') throw notFound()
  return legacySpUrls(baseUrl(c), version, slug)
}

/**
 * BloodHound's legacy SAML URLs, served by the same handlers as /api/v2/sso/… with the legacy URL set
 * (sp.ts, legacySpUrls): login at the entity id, the ACS at /acs, the SP metadata at /metadata.
 */
const legacySamlRoutes: RouteEntry[] = [
  defineRoute(
    {
      method: 'get',
      path: '/api/:version/login/saml/:slug',
      operationId: 'StartSamlLoginLegacy',
      summary: "SP-initiated SAML login at BloodHound's legacy URL (same as GET /api/v2/sso/{slug}/login, with the legacy ACS URL)",
      tags: TAGS,
      auth: 'public',
      params: legacyParams,
      query: LoginQuery,
      responses: {
        200: { description: 'HTTP-POST binding: an auto-submitting form to the IdP (strict CSP)', contentType: 'text/html', schema: z.string() },
        302: {
          description: 'HTTP-Redirect binding: to the IdP SSO endpoint',
          headers: {
            Location: 'IdP SSO URL with SAMLRequest (and RelayState); the AuthnRequest names `/api/{version}/login/saml/{slug}/acs` and issuer `/api/{version}/login/saml/{slug}`',
            'Set-Cookie': '`edgehound_saml_request=<AuthnRequest ID>; Path=/api/{version}/login/saml/{slug}/acs; Max-Age=600; HttpOnly; Secure; SameSite=None`',
          },
        },
        409: { description: "the provider's IdP metadata has expired (validUntil passed), or its SSO URL cannot be used" },
      },
    },
    async (c, { params, query }) => {
      legacyUrls(c, params.version, params.slug)
      return startLogin(c, params.slug, query.RelayState ?? null, (slug) => legacyUrls(c, params.version, slug))
    },
  ),
  defineRoute(
    {
      method: 'post',
      path: '/api/:version/login/saml/:slug/acs',
      operationId: 'SamlAssertionConsumerServiceLegacy',
      audit: ACS_AUDIT,
      summary: "SAML assertion consumer service at BloodHound's legacy URL (same checks as POST /api/v2/sso/{slug}/callback)",
      description:
        'Same as POST /api/v2/sso/{slug}/callback, except that the response must be addressed to this URL (Destination) and ' +
        'to the legacy entity id `/api/{version}/login/saml/{slug}` (Audience), and the browser binding cookie is the one ' +
        'the legacy login URL set (Path = this URL). See docs/saml.md, "Legacy URLs".',
      tags: TAGS,
      auth: 'public',
      publicLimit: 'login',
      params: legacyParams,
      body: ACS_BODY,
      responses: {
        302: {
          description: 'signed in (Set-Cookie `token`), or refused (Location `<UI>/login?error=…` or `<UI>/user-disabled`)',
          headers: { Location: 'where the browser goes next', 'Set-Cookie': 'as POST /api/v2/sso/{slug}/callback, with Path = this URL for the binding cookie' },
        },
      },
    },
    async (c, { params, body }) => finishSignIn(c, params.slug, body, legacyUrls(c, params.version, params.slug)),
  ),
  defineRoute(
    {
      method: 'get',
      path: '/api/:version/login/saml/:slug/metadata',
      operationId: 'GetSpMetadataLegacy',
      summary: "This service's SAML SP metadata at BloodHound's legacy URL (entity id and ACS of the legacy URL set)",
      tags: TAGS,
      auth: 'public',
      params: legacyParams,
      responses: spMetadataResponse,
    },
    async (c, { params }) => serveSpMetadata(c, params.slug, legacyUrls(c, params.version, params.slug)),
  ),
]

export const ssoFlowRoutes: RouteEntry[] = [
  defineRoute(
    {
      method: 'get',
      path: '/api/v2/sso/:slug',
      operationId: 'GetSpMetadataAtIssuer',
      summary: "This service's SAML SP metadata at the provider's issuer URL (sp_issuer_uri); same document as /metadata",
      tags: TAGS,
      auth: 'public',
      params: slugParams,
      responses: spMetadataResponse,
    },
    async (c, { params }) => serveSpMetadata(c, params.slug, spUrls(baseUrl(c), params.slug)),
  ),
  defineRoute(
    {
      method: 'get',
      path: '/api/v2/sso/:slug/login',
      operationId: 'StartSamlLogin',
      summary: 'SP-initiated SAML login: send the browser to the IdP with an AuthnRequest',
      description:
        'Builds a SAML 2.0 AuthnRequest (Destination = the IdP SSO endpoint, AssertionConsumerServiceURL = sp_acs_uri, ' +
        'ProtocolBinding HTTP-POST, Issuer = sp_issuer_uri, NameIDPolicy unspecified). When the IdP metadata lists the ' +
        'HTTP-Redirect binding: 302 to that endpoint with SAMLRequest (DEFLATE, base64) and RelayState in the query. ' +
        'Otherwise 200 with an HTML page that POSTs SAMLRequest (base64) and RelayState to the HTTP-POST endpoint.',
      tags: TAGS,
      auth: 'public',
      params: slugParams,
      query: LoginQuery,
      responses: {
        200: { description: 'HTTP-POST binding: an auto-submitting form to the IdP (strict CSP)', contentType: 'text/html', schema: z.string() },
        302: {
          description: 'HTTP-Redirect binding: to the IdP SSO endpoint',
          headers: {
            Location: 'IdP SSO URL with SAMLRequest (and RelayState)',
            'Set-Cookie': '`edgehound_saml_request=<AuthnRequest ID>; Path=<callback path>; Max-Age=600; HttpOnly; Secure; SameSite=None` (also on the 200 page)',
          },
        },
        409: { description: "the provider's IdP metadata has expired (validUntil passed), or its SSO URL cannot be used" },
      },
    },
    async (c, { params, query }) => {
      // an OIDC provider's login (BloodHound's SSOLoginHandler dispatches on the provider type the same way)
      const oidc = isSlug(params.slug) ? await getOidcProviderBySlug(c.env.DB, params.slug) : null
      if (oidc) return startOidcLogin(c, oidc, query.RelayState ?? null)
      return startLogin(c, params.slug, query.RelayState ?? null, (slug) => spUrls(baseUrl(c), slug))
    },
  ),
  defineRoute(
    {
      method: 'post',
      path: '/api/v2/sso/:slug/callback',
      operationId: 'SamlAssertionConsumerService',
      audit: ACS_AUDIT,
      summary: 'SAML assertion consumer service (sp_acs_uri): verify the IdP response, sign the user in, redirect',
      description:
        'The IdP posts `SAMLResponse` (base64) and optionally `RelayState` here (HTTP-POST binding, url-encoded form). ' +
        "The response must be signed (Response, Assertion or both; every signature must verify) with a certificate of the provider's " +
        'metadata, be addressed to this ACS URL and SP, come from the provider, be current, answer an AuthnRequest this service ' +
        'issued in the last 10 minutes (unless IdP-initiated sign-in is allowed for the provider) and not have been used before. ' +
        'The browser must send the `edgehound_saml_request` cookie GET /login gave it, holding the ID of that AuthnRequest ' +
        '(the sign-in is bound to the browser that started it); the provider metadata must not have expired (validUntil). ' +
        "The user named by the email attribute must belong to this provider (or is created when auto provisioning is on). " +
        "Success: 302 to the UI (or the same-site RelayState path) with the session JWT in the `token` cookie (ending no later than the IdP's SessionNotOnOrAfter). " +
        'Failure: 302 to `<UI>/login?error=<message>`; a disabled user: 302 to `<UI>/user-disabled`. See docs/saml.md.',
      tags: TAGS,
      auth: 'public',
      publicLimit: 'login',
      params: slugParams,
      // The HTTP-POST binding's form is a plain HTML form, so browsers send it url-encoded (SAML Bindings §3.5.4);
      // no IdP uses multipart, and a JSON body is not a SAML binding: both are 415.
      body: ACS_BODY,
      responses: {
        302: {
          description: 'signed in (Set-Cookie `token`, Location the UI or RelayState), or refused (Location `<UI>/login?error=…` or `<UI>/user-disabled`)',
          headers: {
            Location: 'where the browser goes next',
            'Set-Cookie':
              'always `edgehound_saml_request=; Path=<callback path>; Max-Age=0; HttpOnly; Secure; SameSite=None` (the binding is used up); on success also `token=<session JWT>; Path=/; Max-Age=…; SameSite=Lax[; Secure]`',
          },
        },
      },
    },
    async (c, { params, body }) => finishSignIn(c, params.slug, body, spUrls(baseUrl(c), params.slug)),
  ),
  defineRoute(
    {
      method: 'get',
      path: '/api/v2/saml/sso',
      operationId: 'ListSamlSignOnEndpoints',
      summary: 'Sign-on endpoints of every SAML provider (for a login page; no authentication)',
      tags: TAGS,
      auth: 'public',
      responses: {
        200: {
          description: 'name and login URL (sp_sso_uri) of each provider, oldest first; an empty array when there is none',
          schema: z.object({ data: z.object({ endpoints: z.array(z.object({ name: z.string(), initiation_url: z.string() })) }) }),
        },
      },
    },
    async (c) => {
      const base = baseUrl(c)
      const rows = await listSignOnProviders(c.env.DB)
      return c.json({ data: { endpoints: rows.map((r) => ({ name: r.name, initiation_url: spUrls(base, r.slug).sp_sso_uri })) } })
    },
  ),
  ...legacySamlRoutes,
]
