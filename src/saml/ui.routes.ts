/**
 * The three small pages SAML sign-in redirects to when UI_BASE_URL is not set, at BloodHound's UI paths
 * (this service has no UI of its own yet):
 *
 *   GET /ui                 who is signed in (from the `token` cookie) and how to use the API from here
 *   GET /ui/login           the sign-in failure message (`error`) and every provider's sign-in link
 *   GET /ui/user-disabled   "your account is disabled"
 *
 * Static HTML, every value escaped, no script, no style, no form: `default-src 'none'`.
 */
import type { Context } from 'hono'
import { z } from 'zod'
import type { AppEnv } from '../env'
import { defineRoute, type RouteEntry } from '../http/route'
import { rfc3339 } from '../http/errors'
import { htmlEscape } from './authn-request'
import { verifySession } from '../auth/jwt'
import { openSessionUser } from '../auth/sessions.store'
import { getUser, type User } from '../auth/users.store'
import { listSignOnProviders } from './sso.store'
import { spUrls } from './sp'
import { placesFor } from './sign-in'

const TAGS = ['Auth']
const CSP = "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

function page(c: Context<AppEnv>, title: string, body: string, status: 200 = 200): Response {
  const html = `<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">` +
    `<title>${htmlEscape(title)} · EdgeHound</title></head><body><h1>${htmlEscape(title)}</h1>\n${body}\n</body></html>\n`
  return c.body(html, status, {
    'Content-Type': 'text/html; charset=utf-8',
    'Content-Security-Policy': CSP,
    'X-Frame-Options': 'DENY',
    'Referrer-Policy': 'no-referrer',
  })
}

/** The `token` cookie's user, if its session is open and the user enabled. */
async function cookieUser(c: Context<AppEnv>): Promise<User | null> {
  const m = /(?:^|;\s*)token=([^;]+)/.exec(c.req.header('cookie') ?? '')
  if (!m) return null
  const now = c.var.now()
  const claims = await verifySession(m[1], c.var.config.JWT_SIGNING_KEY, Math.floor(now.getTime() / 1000))
  if (typeof claims === 'string') return null
  const userId = await openSessionUser(c.env.DB, claims.jti, rfc3339(now))
  if (userId !== claims.sub) return null
  const u = await getUser(c.env.DB, userId)
  return u && !u.is_disabled ? u : null
}

async function signOnLinks(c: Context<AppEnv>): Promise<string> {
  const base = placesFor(c.var.config, c.req.url).base
  const rows = await listSignOnProviders(c.env.DB)
  if (rows.length === 0) return '<p>No single sign-on provider is configured.</p>'
  return `<p>Sign in with:</p><ul>${rows.map((r) => `<li><a href="${htmlEscape(spUrls(base, r.slug).sp_sso_uri)}">${htmlEscape(r.name)}</a></li>`).join('')}</ul>`
}

const htmlResponse = (description: string) => ({ 200: { description, contentType: 'text/html', schema: z.string() } })

export const uiRoutes: RouteEntry[] = [
  defineRoute(
    {
      method: 'get',
      path: '/ui',
      operationId: 'SignedInPage',
      summary: 'After SAML sign-in (when UI_BASE_URL is not set): who is signed in, and how to use the API',
      tags: TAGS,
      auth: 'public',
      responses: htmlResponse('an HTML page; reads the `token` cookie set by the sign-in'),
    },
    async (c) => {
      const u = await cookieUser(c)
      if (!u)
        return page(c, 'Not signed in', `<p>No open session in this browser.</p>${await signOnLinks(c)}`)
      return page(
        c,
        'Signed in',
        `<p>You are signed in as <strong>${htmlEscape(u.principal_name)}</strong> (${htmlEscape(u.roles.join(', '))}).</p>` +
          `<p>EdgeHound has no web interface yet. Your session token (a JWT) is in this site's <code>token</code> cookie; ` +
          `send it as <code>Authorization: Bearer &lt;token&gt;</code> to the API, for example to create a long-lived API token: ` +
          `<code>POST /api/v2/tokens</code> with <code>{"token_name": "my laptop"}</code>. Its <code>id</code> and <code>key</code> sign ` +
          `requests (the <code>edgehound</code> command line and BloodHound connectors use them). The session ends after the configured time or with ` +
          `<code>POST /api/v2/logout</code>.</p>`,
      )
    },
  ),
  defineRoute(
    {
      method: 'get',
      path: '/ui/login',
      operationId: 'SignInFailedPage',
      summary: 'Where a failed SAML sign-in lands (when UI_BASE_URL is not set): the message and the sign-in links',
      tags: TAGS,
      auth: 'public',
      query: z.object({ error: z.string().max(500).optional().describe('the message to show') }),
      responses: htmlResponse('an HTML page'),
    },
    async (c, { query }) =>
      page(c, 'Sign in', `${query.error ? `<p role="alert">${htmlEscape(query.error)}</p>` : ''}${await signOnLinks(c)}`),
  ),
  defineRoute(
    {
      method: 'get',
      path: '/ui/user-disabled',
      operationId: 'UserDisabledPage',
      summary: 'Where the SAML sign-in of a disabled user lands (when UI_BASE_URL is not set)',
      tags: TAGS,
      auth: 'public',
      responses: htmlResponse('an HTML page'),
    },
    (c) => page(c, 'Account disabled', '<p>Your account is disabled. Please contact your Administrator.</p>'),
  ),
]
