/**
 * What GET /api/v2/sso-providers shows a caller without `auth/ManageProviders` (a visitor on the sign-in
 * page, or a signed-in user of another role): the fields a sign-in button needs, and nothing else.
 *
 * Why an allow-list of keys, copied one by one, rather than deleting the sensitive ones from the full
 * record: a field added to a provider's record later (a SAML certificate detail, an OIDC client id, a
 * sealed secret's flag) stays invisible to visitors until somebody decides to add it here. `details`
 * (IdP URLs, certificates, the OIDC client id and issuer), `config` (auto-provisioning and its default role)
 * and `callback_uri` are left out: none is needed to start a sign-in, and the first two describe how the
 * service trusts an IdP. BloodHound's list shows every caller the whole record; this is narrower on purpose.
 * test/integration/oidc-signin.test.ts ("before signing in") asserts the exact key set through the route, for an
 * anonymous caller, a user without the permission and a stale session cookie, with SAML and OIDC providers.
 */
import { z } from 'zod'

export const SsoProviderSignInSchema = z
  .object({
    id: z.number().int().describe('the SSO provider id'),
    name: z.string(),
    slug: z.string(),
    type: z.enum(['SAML', 'OIDC']),
    login_uri: z.string().describe('where a browser starts a sign-in with this provider (GET)'),
  })
  .meta({ id: 'SsoProviderSignIn' })

export type SsoProviderSignIn = z.infer<typeof SsoProviderSignInSchema>

/** The keys a visitor sees, in this order. */
export const SIGN_IN_KEYS = ['id', 'name', 'slug', 'type', 'login_uri'] as const

export function signInView(p: { id: number; name: string; slug: string; type: 'SAML' | 'OIDC'; login_uri: string }): SsoProviderSignIn {
  return { id: p.id, name: p.name, slug: p.slug, type: p.type, login_uri: p.login_uri }
}
