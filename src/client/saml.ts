/**
 * Typed wrappers for the SAML / SSO provider endpoints (src/saml/saml.routes.ts, docs/saml.md).
 * Functions over an EdgeHoundClient, so the client class itself stays small.
 */
import { EdgeHoundError, type EdgeHoundClient } from './index'

export interface SamlProviderJson {
  id: number
  created_at: string
  updated_at: string
  deleted_at: { time: string; valid: boolean }
  name: string
  display_name: string
  idp_issuer_uri: string
  idp_sso_uri: string
  principal_attribute_mappings: string[]
  sp_issuer_uri: string
  sp_sso_uri: string
  sp_metadata_uri: string
  sp_acs_uri: string
  sso_provider_id: { int32: number; valid: boolean }
  root_uri_version: number
  idp_sso_binding: 'HTTP-POST' | 'HTTP-Redirect'
  metadata_valid_until: string | null
  signing_certificates: { sha256_fingerprint: string; not_before: string; not_after: string }[]
  config: SsoConfigJson
}

/** Sign-in configuration of a provider: BloodHound's auto_provision plus this service's two switches. */
export interface SsoConfigJson {
  auto_provision: AutoProvisionJson
  allow_idp_initiated: boolean
  allow_sha1: boolean
}

export interface AutoProvisionJson {
  enabled: boolean
  default_role_id: number
  role_provision: boolean
}

export interface SamlSsoProviderJson {
  id: number
  name: string
  slug: string
  type: 'SAML'
  details: SamlProviderJson
  config: SsoConfigJson
  login_uri: string
  callback_uri: string
}

/** An OIDC provider in the SSO provider list (details: BloodHound's OIDCProvider, plus extras). */
export interface OidcSsoProviderJson {
  id: number
  name: string
  slug: string
  type: 'OIDC'
  details: { id: number; sso_provider_id: number; client_id: string; issuer: string; has_client_secret: boolean; created_at: string; updated_at: string }
  config: { auto_provision: { enabled: boolean; default_role_id: number; role_provision: boolean } }
  login_uri: string
  callback_uri: string
}

/** GET /api/v2/sso-providers lists SAML and OIDC providers; narrow on `type`. */
export type SsoProviderJson = SamlSsoProviderJson | OidcSsoProviderJson

export interface ProviderFormInput {
  name?: string
  /** metadata XML: text, bytes or a Blob */
  metadata?: string | Uint8Array | Blob
  /** file name sent with the metadata part (default metadata.xml) */
  fileName?: string
  autoProvision?: { enabled?: boolean; default_role_id?: number; role_provision?: boolean }
  /** accept IdP-initiated sign-in (default false) */
  allowIdpInitiated?: boolean
  /** accept RSA-SHA1 / SHA-1 from this IdP (default false) */
  allowSha1?: boolean
}

/** The multipart form both the create and the update endpoints take. */
export function samlProviderForm(input: ProviderFormInput): FormData {
  const form = new FormData()
  if (input.name !== undefined) form.set('name', input.name)
  if (input.metadata !== undefined) {
    const blob = input.metadata instanceof Blob ? input.metadata : new Blob([input.metadata as string | Uint8Array<ArrayBuffer>], { type: 'application/xml' })
    form.set('metadata', blob, input.fileName ?? 'metadata.xml')
  }
  const ap = input.autoProvision
  if (ap?.enabled !== undefined) form.set('config.auto_provision.enabled', String(ap.enabled))
  if (ap?.default_role_id !== undefined) form.set('config.auto_provision.default_role_id', String(ap.default_role_id))
  if (ap?.role_provision !== undefined) form.set('config.auto_provision.role_provision', String(ap.role_provision))
  if (input.allowIdpInitiated !== undefined) form.set('config.allow_idp_initiated', String(input.allowIdpInitiated))
  if (input.allowSha1 !== undefined) form.set('config.allow_sha1', String(input.allowSha1))
  return form
}

/** POST /api/v2/sso-providers/saml, or the deprecated POST /api/v2/saml/providers with `{ deprecated: true }`. */
export function createSamlProvider(c: EdgeHoundClient, input: ProviderFormInput & { name: string; metadata: string | Uint8Array | Blob }, opts: { deprecated?: boolean } = {}) {
  const path = opts.deprecated ? '/api/v2/saml/providers' : '/api/v2/sso-providers/saml'
  return c.call<{ data: SamlProviderJson }>('POST', path, samlProviderForm(input))
}

export function listSamlProviders(c: EdgeHoundClient) {
  return c.call<{ data: { saml_providers: SamlProviderJson[] } }>('GET', '/api/v2/saml')
}

export function getSamlProvider(c: EdgeHoundClient, samlProviderId: number) {
  return c.call<{ data: SamlProviderJson }>('GET', `/api/v2/saml/providers/${samlProviderId}`)
}

export function deleteSamlProvider(c: EdgeHoundClient, samlProviderId: number) {
  return c.call<{ data: { affected_users: unknown[] } }>('DELETE', `/api/v2/saml/providers/${samlProviderId}`)
}

/** BloodHound's OIDCProvider as POST /api/v2/sso-providers/oidc and an OIDC PATCH answer it, with this service's extras. */
export interface OidcProviderJson {
  id: number
  sso_provider_id: number
  client_id: string
  issuer: string
  created_at: string
  updated_at: string
  name: string
  slug: string
  has_client_secret: boolean
  config: { auto_provision: AutoProvisionJson }
  login_uri: string
  callback_uri: string
}

// a type rather than an interface: the client's JSON body type is a Record
export type OidcProviderInput = {
  name: string
  issuer: string
  client_id: string
  /** a confidential client's secret (sealed at rest, never returned) */
  client_secret?: string
  config?: { auto_provision?: Partial<AutoProvisionJson> }
}

/** PATCH of an OIDC provider: every field optional; `client_secret: null` removes the secret. */
export type OidcProviderUpdate = Partial<Omit<OidcProviderInput, 'client_secret'>> & { client_secret?: string | null }

/** POST /api/v2/sso-providers/oidc (JSON): 201 with the new provider. */
export function createOidcProvider(c: EdgeHoundClient, input: OidcProviderInput) {
  return c.call<{ data: OidcProviderJson }>('POST', '/api/v2/sso-providers/oidc', input)
}

/** PATCH /api/v2/sso-providers/{id} of an OIDC provider (JSON; a SAML provider takes updateSsoProvider's form). */
export function updateOidcProvider(c: EdgeHoundClient, ssoProviderId: number, input: OidcProviderUpdate) {
  return c.call<{ data: OidcProviderJson }>('PATCH', `/api/v2/sso-providers/${ssoProviderId}`, input)
}

/** GET /api/v2/sso-providers as a caller holding auth/ManageProviders: the full records. */
export function listSsoProviders(c: EdgeHoundClient) {
  return c.call<{ data: SsoProviderJson[] }>('GET', '/api/v2/sso-providers')
}

/** What GET /api/v2/sso-providers shows a caller without auth/ManageProviders (the sign-in page): nothing more. */
export interface SsoProviderSignInJson {
  id: number
  name: string
  slug: string
  type: 'SAML' | 'OIDC'
  login_uri: string
}

/**
 * GET /api/v2/sso-providers for the sign-in page (readable without signing in). A manager's answer holds more
 * fields; only these are read, so the page behaves the same for every caller.
 */
export function listSignInProviders(c: EdgeHoundClient) {
  return c.call<{ data: SsoProviderSignInJson[] }>('GET', '/api/v2/sso-providers')
}

/** PATCH /api/v2/sso-providers/{id}: every field optional. */
export function updateSsoProvider(c: EdgeHoundClient, ssoProviderId: number, input: ProviderFormInput) {
  return c.call<{ data: SamlProviderJson }>('PATCH', `/api/v2/sso-providers/${ssoProviderId}`, samlProviderForm(input))
}

export function deleteSsoProvider(c: EdgeHoundClient, ssoProviderId: number) {
  return c.call<{ data: { affected_users: unknown[] } }>('DELETE', `/api/v2/sso-providers/${ssoProviderId}`)
}

/** GET /api/v2/sso/{slug}/metadata: this service's SP metadata XML (no authentication needed). */
export async function getSpMetadata(c: EdgeHoundClient, slug: string): Promise<{ contentType: string | null; xml: string }> {
  const res = await c.raw('GET', `/api/v2/sso/${encodeURIComponent(slug)}/metadata`)
  const xml = await res.text()
  if (!res.ok) throw EdgeHoundError.of(res, xml)
  return { contentType: res.headers.get('content-type'), xml }
}

// ---- SSO flow endpoints (src/saml/sso.routes.ts) -----------------------------------------------

export type SamlLoginStart =
  /** HTTP-Redirect binding: where the browser is sent (the IdP SSO URL with SAMLRequest and RelayState) */
  | { binding: 'HTTP-Redirect'; location: string; bindingCookie: string | null; response: Response }
  /** HTTP-POST binding: the auto-submitting form page and the Content-Security-Policy it came with */
  | { binding: 'HTTP-POST'; html: string; csp: string | null; bindingCookie: string | null; response: Response }

/**
 * The `name=value` of the cookie that binds the sign-in to the browser that started it (a browser sends it
 * back with the IdP's POST to the callback; pass it to postSamlResponse as `cookie`).
 */
function bindingCookieOf(res: Response): string | null {
  const c = res.headers.getSetCookie().find((v) => v.startsWith('edgehound_saml_request='))
  return c ? c.split(';')[0] : null
}

async function failure(res: Response): Promise<EdgeHoundError> {
  return EdgeHoundError.of(res, await res.text())
}

/**
 * GET /api/v2/sso/{slug}/login (no authentication): what a browser gets when it starts a SAML login.
 * The client's fetch must not follow redirects (pass one that uses `redirect: 'manual'`), or this sees the IdP.
 */
export async function startSamlLogin(c: EdgeHoundClient, slug: string, opts: { relayState?: string } = {}): Promise<SamlLoginStart> {
  const q = opts.relayState === undefined ? '' : `?RelayState=${encodeURIComponent(opts.relayState)}`
  const res = await c.raw('GET', `/api/v2/sso/${encodeURIComponent(slug)}/login${q}`)
  const bindingCookie = bindingCookieOf(res)
  if (res.status === 302) return { binding: 'HTTP-Redirect', location: res.headers.get('location') ?? '', bindingCookie, response: res }
  if (res.status === 200)
    return { binding: 'HTTP-POST', html: await res.text(), csp: res.headers.get('content-security-policy'), bindingCookie, response: res }
  throw await failure(res)
}

export interface SamlCallbackResult {
  /** where the browser is sent: the UI (or RelayState) after success, `<UI>/login?error=…` or `<UI>/user-disabled` otherwise */
  location: string
  /** the session JWT of the `token` cookie, when signed in */
  sessionToken: string | null
  /** the `token` Set-Cookie header, when signed in */
  setCookie: string | null
  response: Response
}

/**
 * POST /api/v2/sso/{slug}/callback as an IdP's browser form would (application/x-www-form-urlencoded).
 * Both success and refusal are a 302 (returned); anything else (404 unknown slug, 413, 429) throws
 * EdgeHoundError. The client's fetch must not follow redirects (`redirect: 'manual'`).
 */
export async function postSamlResponse(
  c: EdgeHoundClient,
  slug: string,
  samlResponse: string,
  relayState?: string,
  /** the Cookie header the browser sends: the `bindingCookie` of the startSamlLogin that began this sign-in */
  cookie?: string,
): Promise<SamlCallbackResult> {
  const form = new URLSearchParams({ SAMLResponse: samlResponse })
  if (relayState !== undefined) form.set('RelayState', relayState)
  const res = await c.raw('POST', `/api/v2/sso/${encodeURIComponent(slug)}/callback`, form.toString(), {
    contentType: 'application/x-www-form-urlencoded',
    ...(cookie ? { headers: { Cookie: cookie } } : {}),
  })
  if (res.status !== 302) throw await failure(res)
  const setCookie = res.headers.getSetCookie().find((v) => v.startsWith('token=')) ?? null
  const token = setCookie ? /^token=([^;]+)/.exec(setCookie)?.[1] ?? null : null
  return { location: res.headers.get('location') ?? '', sessionToken: token, setCookie, response: res }
}

/** GET /api/v2/saml/sso (no authentication): each provider's name and login URL. */
export function listSamlSignOnEndpoints(c: EdgeHoundClient) {
  return c.call<{ data: { endpoints: { name: string; initiation_url: string }[] } }>('GET', '/api/v2/saml/sso')
}
