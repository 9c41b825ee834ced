/**
 * The sign-in page's SSO buttons, from GET /api/v2/sso-providers (readable before signing in): one per provider,
 * SAML and OIDC, each a plain link to the provider's login_uri (the browser's GET starts the sign-in; no token
 * is in any URL). Tested in test/unit/console-pages-logic.test.ts.
 */
import type { SsoProviderSignInJson } from '../../../src/client/saml'

export interface SsoButton {
  key: number
  label: string
  href: string
  type: 'SAML' | 'OIDC'
}

/**
 * Only http(s) URLs become links: the list is the service's own answer, but a link is where a `javascript:` URL
 * would run, so nothing else is trusted to be one. Entries without a name or a usable URL are left out.
 */
export function ssoButtons(list: readonly Partial<SsoProviderSignInJson>[] | null | undefined): SsoButton[] {
  const out: SsoButton[] = []
  for (const p of list ?? []) {
    if (typeof p.id !== 'number' || typeof p.name !== 'string' || !p.name.trim() || typeof p.login_uri !== 'string') continue
    let url: URL
    try {
      url = new URL(p.login_uri)
    } catch {
      continue
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') continue
    out.push({ key: p.id, label: `Sign in with ${p.name.trim()}`, href: url.href, type: p.type === 'OIDC' ? 'OIDC' : 'SAML' })
  }
  return out
}
