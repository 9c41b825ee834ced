/**
 * The Administration › SSO providers section's pure logic: what the create and edit forms send for a SAML or an
 * OIDC provider, and how a provider is summarised in the list. Tested in test/unit/console-admin.test.ts.
 *
 * The API validates everything again (issuer rules, role ids, unique names); checking here only lets the form
 * say what is wrong before a round trip, in the same words.
 */
import type { AutoProvisionJson, OidcProviderInput, OidcProviderUpdate, OidcSsoProviderJson, ProviderFormInput, SamlSsoProviderJson, SsoProviderJson } from '../../../../src/client/saml'

/** The auto-provisioning part of both forms (checkboxes and a role select). */
export interface ProvisionFields {
  enabled: boolean
  /** a role id of GET /api/v2/roles; 0: none chosen */
  defaultRoleId: number
  roleProvision: boolean
}

export interface OidcFields {
  name: string
  issuer: string
  clientId: string
  /** blank: none on create, unchanged on edit */
  clientSecret: string
  /** edit only: remove the stored secret (a public client) */
  removeSecret?: boolean
  provision: ProvisionFields
}

export interface SamlEditFields {
  name: string
  /** a replacement metadata file, or null to keep the current one */
  metadata: Blob | null
  fileName?: string
  provision: ProvisionFields
}

type Result<T> = { ok: true; value: T } | { ok: false; error: string }

/** Same rule as the API (src/oidc/oidc.routes.ts): an https URL without query, fragment or credentials. */
export function issuerProblem(issuer: string): string | null {
  let u: URL
  try {
    u = new URL(issuer.trim())
  } catch {
    return 'issuer url is invalid: enter the https URL of the OpenID provider (its discovery document is read from it)'
  }
  if (u.protocol !== 'https:' || u.search || u.hash || u.username || u.password) return 'issuer url is invalid: an https URL without query, fragment or credentials'
  return null
}

/** What the API stores: provisioning off is always `{false, 0, false}` (BloodHound's form), so edits compare on that. */
export function provisionConfig(p: ProvisionFields): AutoProvisionJson {
  return p.enabled ? { enabled: true, default_role_id: p.defaultRoleId, role_provision: p.roleProvision } : { enabled: false, default_role_id: 0, role_provision: false }
}

/** The form's starting values for a provider (or for a new one). */
export function provisionFields(c: AutoProvisionJson | undefined): ProvisionFields {
  return { enabled: c?.enabled ?? false, defaultRoleId: c?.default_role_id ?? 0, roleProvision: c?.role_provision ?? false }
}

function provisionProblem(p: ProvisionFields): string | null {
  return p.enabled && !(p.defaultRoleId > 0) ? 'choose the role new users get (auto-provisioning is on)' : null
}

/** POST /api/v2/sso-providers/oidc's body, or what is wrong with the form. */
export function oidcCreateBody(f: OidcFields): Result<OidcProviderInput> {
  const name = f.name.trim()
  if (!name) return { ok: false, error: 'enter a name' }
  const problem = issuerProblem(f.issuer) ?? (!f.clientId.trim() ? 'enter the client id the OpenID provider gave EdgeHound' : null) ?? provisionProblem(f.provision)
  if (problem) return { ok: false, error: problem }
  return {
    ok: true,
    value: {
      name,
      issuer: f.issuer.trim(),
      client_id: f.clientId.trim(),
      ...(f.clientSecret ? { client_secret: f.clientSecret } : {}),
      config: { auto_provision: provisionConfig(f.provision) },
    },
  }
}

const sameProvision = (a: AutoProvisionJson, b: AutoProvisionJson) => a.enabled === b.enabled && a.default_role_id === b.default_role_id && a.role_provision === b.role_provision

/**
 * The PATCH body of an OIDC provider's edit: only what changed (null: nothing did). A blank secret field keeps the
 * stored secret; "remove" sends `client_secret: null`.
 */
export function oidcUpdateBody(current: OidcSsoProviderJson, f: OidcFields): Result<OidcProviderUpdate | null> {
  const name = f.name.trim()
  if (!name) return { ok: false, error: 'enter a name' }
  const problem = issuerProblem(f.issuer) ?? (!f.clientId.trim() ? 'the client id must not be empty' : null) ?? provisionProblem(f.provision)
  if (problem) return { ok: false, error: problem }
  if (f.removeSecret && f.clientSecret) return { ok: false, error: 'either enter a new client secret or remove it, not both' }
  const body: OidcProviderUpdate = {}
  if (name !== current.name) body.name = name
  if (f.issuer.trim() !== current.details.issuer) body.issuer = f.issuer.trim()
  if (f.clientId.trim() !== current.details.client_id) body.client_id = f.clientId.trim()
  if (f.clientSecret) body.client_secret = f.clientSecret
  else if (f.removeSecret && current.details.has_client_secret) body.client_secret = null
  const next = provisionConfig(f.provision)
  if (!sameProvision(next, current.config.auto_provision)) body.config = { auto_provision: next }
  return { ok: true, value: Object.keys(body).length ? body : null }
}

/** The multipart fields of a SAML provider's edit: only what changed (null: nothing did). */
export function samlUpdateInput(current: SamlSsoProviderJson, f: SamlEditFields): Result<ProviderFormInput | null> {
  const name = f.name.trim()
  if (!name) return { ok: false, error: 'enter a name' }
  const problem = provisionProblem(f.provision)
  if (problem) return { ok: false, error: problem }
  const input: ProviderFormInput = {}
  if (name !== current.name) input.name = name
  if (f.metadata && f.metadata.size > 0) (input.metadata = f.metadata), (input.fileName = f.fileName)
  const next = provisionConfig(f.provision)
  if (!sameProvision(next, current.config.auto_provision)) input.autoProvision = next
  return { ok: true, value: Object.keys(input).length ? input : null }
}

/** The SAML create form's provisioning fields, as the multipart create takes them. */
export function samlCreateProvision(p: ProvisionFields): Result<ProviderFormInput['autoProvision']> {
  const problem = provisionProblem(p)
  return problem ? { ok: false, error: problem } : { ok: true, value: provisionConfig(p) }
}

export interface ProviderSummary {
  /** who the provider trusts: the IdP entity id (SAML) or the issuer (OIDC) */
  identityProvider: string
  /** what to register at the IdP: the SP metadata URL (SAML) or the redirect URI (OIDC) */
  register: string
  /** SAML: the certificate expiry; OIDC: client id and whether a secret is stored */
  credentials: string
  provisioning: string
}

/** One line per provider in the list, whatever its type. */
export function providerSummary(p: SsoProviderJson, roleName: (id: number) => string | undefined): ProviderSummary {
  const ap = p.config.auto_provision
  const provisioning = ap.enabled
    ? `On: new users get ${roleName(ap.default_role_id) ?? `role ${ap.default_role_id}`}${ap.role_provision ? ', or the role the identity provider names' : ''}`
    : 'Off'
  if (p.type === 'OIDC')
    return {
      identityProvider: p.details.issuer,
      register: p.callback_uri,
      credentials: `client id ${p.details.client_id}; ${p.details.has_client_secret ? 'client secret stored' : 'no client secret (public client)'}`,
      provisioning,
    }
  const certs = p.details.signing_certificates ?? []
  const last = certs.map((c) => c.not_after).sort().at(-1)
  return {
    identityProvider: p.details.idp_issuer_uri,
    register: p.details.sp_metadata_uri,
    credentials: certs.length ? `${certs.length} signing certificate${certs.length > 1 ? 's' : ''}, valid until ${last?.slice(0, 10)}` : 'no signing certificate',
    provisioning,
  }
}
