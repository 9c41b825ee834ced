/**
 * OIDC providers as the API answers them (a leaf module: the SSO provider list in saml.routes.ts and the OIDC
 * routes both use it, with no import cycle at module evaluation).
 *
 * - POST /api/v2/sso-providers/oidc answers BloodHound's OIDCProvider (`id`, `client_id`, `issuer`,
 *   `sso_provider_id`, `created_at`, `updated_at`) plus extras: `name`, `slug`, `config`, the login and callback
 *   URLs, and `has_client_secret` (the secret itself is never returned).
 * - GET /api/v2/sso-providers lists it as BloodHound's AuthProvider of type "OIDC" with that object as `details`.
 */
import { z } from 'zod'
import type { OidcProviderRecord } from './oidc.store'

const AutoProvision = z.object({ enabled: z.boolean(), default_role_id: z.number().int(), role_provision: z.boolean() })

export const OidcProviderSchema = z
  .object({
    id: z.number().int(),
    sso_provider_id: z.number().int(),
    client_id: z.string(),
    issuer: z.string(),
    created_at: z.string(),
    updated_at: z.string(),
    name: z.string().describe('extra: the SSO provider name'),
    slug: z.string().describe('extra: the SSO provider slug (in its login and callback URLs)'),
    has_client_secret: z.boolean().describe('extra: a client secret is stored (sealed; never returned)'),
    config: z.object({ auto_provision: AutoProvision }).describe('extra: as the SSO provider list shows it'),
    login_uri: z.string().describe('extra: where a browser starts a sign-in'),
    callback_uri: z.string().describe('extra: the redirect URI to register at the IdP'),
  })
  .meta({ id: 'OidcProvider' })

export const OidcSsoProviderSchema = z
  .object({
    id: z.number().int(),
    name: z.string(),
    slug: z.string(),
    type: z.literal('OIDC'),
    details: OidcProviderSchema,
    config: z.object({ auto_provision: AutoProvision }),
    login_uri: z.string(),
    callback_uri: z.string(),
  })
  .meta({ id: 'OidcSsoProvider' })

const root = (base: string) => base.replace(/\/+$/, '')
export const oidcCallbackUrl = (base: string, slug: string) => `${root(base)}/api/v2/sso/${slug}/callback`
export const oidcLoginUrl = (base: string, slug: string) => `${root(base)}/api/v2/sso/${slug}/login`

export function oidcProviderJson(p: OidcProviderRecord, base: string): z.infer<typeof OidcProviderSchema> {
  return {
    id: p.id,
    sso_provider_id: p.sso_provider_id,
    client_id: p.client_id,
    issuer: p.issuer,
    created_at: p.created_at,
    updated_at: p.updated_at,
    name: p.name,
    slug: p.slug,
    has_client_secret: p.client_secret_sealed !== null,
    config: { auto_provision: { ...p.auto_provision } },
    login_uri: oidcLoginUrl(base, p.slug),
    callback_uri: oidcCallbackUrl(base, p.slug),
  }
}

export function oidcSsoProviderJson(p: OidcProviderRecord, base: string): z.infer<typeof OidcSsoProviderSchema> {
  const details = oidcProviderJson(p, base)
  return {
    id: p.sso_provider_id,
    name: p.name,
    slug: p.slug,
    type: 'OIDC',
    details,
    config: details.config,
    login_uri: details.login_uri,
    callback_uri: details.callback_uri,
  }
}
