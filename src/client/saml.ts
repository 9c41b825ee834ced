/**
 * Typed wrappers for the SAML / SSO provider endpoints (src/saml/saml.routes.ts, docs/saml.md).
 * Functions over an EdgeHoundClient, so the client class itself stays small.
 */
import { EdgeHoundError, type EdgeHoundClient, type ErrorEnvelope } from './index'

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
}

export interface AutoProvisionJson {
  enabled: boolean
  default_role_id: number
  role_provision: boolean
}

export interface SsoProviderJson {
  id: number
  name: string
  slug: string
  type: 'SAML'
  details: SamlProviderJson
  config: { auto_provision: AutoProvisionJson }
  login_uri: string
  callback_uri: string
}

export interface ProviderFormInput {
  name?: string
  /** metadata XML: text, bytes or a Blob */
  metadata?: string | Uint8Array | Blob
  /** file name sent with the metadata part (default metadata.xml) */
  fileName?: string
  autoProvision?: { enabled?: boolean; default_role_id?: number; role_provision?: boolean }
}

/** The multipart form both the create and the update endpoints take. */
export function samlProviderForm(input: ProviderFormInput): FormData {
  const form = new FormData()
  if (input.name !== undefined) form.set('name', input.name)
  if (input.metadata !== undefined) {
    const blob = input.metadata instanceof Blob ? input.metadata : new Blob([input.metadata], { type: 'application/xml' })
    form.set('metadata', blob, input.fileName ?? 'metadata.xml')
  }
  const ap = input.autoProvision
  if (ap?.enabled !== undefined) form.set('config.auto_provision.enabled', String(ap.enabled))
  if (ap?.default_role_id !== undefined) form.set('config.auto_provision.default_role_id', String(ap.default_role_id))
  if (ap?.role_provision !== undefined) form.set('config.auto_provision.role_provision', String(ap.role_provision))
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

export function listSsoProviders(c: EdgeHoundClient) {
  return c.call<{ data: SsoProviderJson[] }>('GET', '/api/v2/sso-providers')
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
  if (!res.ok) {
    let envelope: ErrorEnvelope | null = null
    try {
      envelope = JSON.parse(xml) as ErrorEnvelope
    } catch {
      /* not JSON */
    }
    throw new EdgeHoundError(res.status, envelope, res)
  }
  return { contentType: res.headers.get('content-type'), xml }
}
