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

/** The longest RelayState the SSO login route takes (MAX_RELAY_STATE in src/saml/authn-request.ts). */
const MAX_RETURN_PATH = 512

/**
 * The console page to return to after signing in (the sign-in page's `next`, set when a session ended), or null:
 * only a console path (`/ui`, `/ui/…`, `/ui?…`) other than the sign-in page itself, in printable ASCII without "\"
 * and at most 512 characters — what the SSO login route accepts as RelayState (checkRelayState), so an SSO button
 * can carry it and a password sign-in goes to the same places. Anything else (another site, `//x`, a script URL)
 * gives null: the caller goes to its default page.
 */
export function returnPath(next: string | null | undefined): string | null {
  if (typeof next !== 'string' || next.length > MAX_RETURN_PATH) return null
  if (!/^\/ui(?:[/?#]|$)/.test(next) || /^\/ui\/login(?:[/?#]|$)/.test(next)) return null
  if (!/^[\x21-\x7e]*$/.test(next) || next.includes('\\')) return null
  return next
}

/**
 * Only http(s) URLs become links: the list is the service's own answer, but a link is where a `javascript:` URL
 * would run, so nothing else is trusted to be one. Entries without a name or a usable URL are left out. With a
 * page to return to (`returnPath`), each link carries it as RelayState: the login route passes it through the
 * identity provider (SAML) or keeps it server-side (OIDC) and sends the browser there once signed in.
 */
export function ssoButtons(list: readonly Partial<SsoProviderSignInJson>[] | null | undefined, next?: string | null): SsoButton[] {
  const back = returnPath(next)
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
    if (back) url.searchParams.set('RelayState', back)
    out.push({ key: p.id, label: `Sign in with ${p.name.trim()}`, href: url.href, type: p.type === 'OIDC' ? 'OIDC' : 'SAML' })
  }
  return out
}
