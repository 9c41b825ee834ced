/**
 * The console's one client: the project's typed client (src/client), pointed at this origin. The session is the
 * HttpOnly `token` cookie the browser sends by itself; changes carry the CSRF proof read from the `csrf_token`
 * cookie (src/auth/csrf.ts). No credential is ever kept in script-readable storage.
 */
import { EdgeHoundClient, EdgeHoundError } from '../../src/client/index'

function csrfCookie(): string | null {
  const m = /(?:^|;\s*)csrf_token=([^;]+)/.exec(document.cookie)
  return m ? m[1] : null
}

export const client = new EdgeHoundClient({ baseUrl: location.origin, credentials: { kind: 'cookie', csrf: csrfCookie }, fetch: (r) => fetch(r) })

/** The message to show for a failed call: the envelope's messages, else the HTTP status. */
export function messageOf(e: unknown): string {
  if (e instanceof EdgeHoundError) return e.envelope?.errors?.map((x) => x.message).join('; ') || `request failed (HTTP ${e.status})`
  return e instanceof Error ? e.message : String(e)
}

/** An expired or ended session: back to sign-in, then back here. */
export function isSignedOut(e: unknown): boolean {
  return e instanceof EdgeHoundError && e.status === 401
}

export function goSignIn() {
  const next = location.pathname + location.search
  location.assign(`/ui/login${next.startsWith('/ui/login') ? '' : `?next=${encodeURIComponent(next)}`}`)
}
