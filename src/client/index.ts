/**
 * Typed EdgeHound client. Signs requests exactly as the service verifies them (src/auth/signature.ts):
 * HMAC chain over METHOD + raw target, RequestDate[:13], raw body. Runs anywhere `fetch` and
 * SubtleCrypto exist (workerd, Node ≥ 20, browsers). Tests, the CLI, the benchmarks and the example
 * connector use it; endpoint wrappers are added as endpoints land.
 */
import { computeSignature } from '../auth/signature'
import { toBase64 } from '../auth/encoding'

/**
 * A signed one-use mutation (src/auth/replay.ts; every mutation with SIGNED_MUTATIONS_ONCE=on) is accepted
 * once: its signature covers only the method, target, date hour and body, so two identical bodiless POSTs
 * in one hour would be one request to the service. Wrappers of mutations that are legitimately repeated with no
 * body (start an ingest job, run the analysis) add this signed, ignored query parameter to tell them apart.
 */
export function repeatable(path: string): string {
  return `${path}${path.includes('?') ? '&' : '?'}nonce=${crypto.randomUUID()}`
}

/**
 * Read-your-writes across requests (src/http/d1-session.ts): every response that touched the database
 * carries `X-D1-Bookmark`; a request that sends one back is served by a database copy at least that new.
 * The client remembers the newest bookmark it has received and sends it on every later request, so a read
 * after the client's own write (a token created then used, an upload then the job's status, an analysis
 * request then the findings) sees that write even when reads are served by replicas. Bookmarks order as
 * strings: D1's own session (workerd's D1 binding) keeps the greater of two in the same way, and so does this.
 * One memory is shared by a client and the clients derived from it (`withCredentials`), so an
 * administrator's client that creates a token hands the bookmark on to the client that uses the token.
 */
export const BOOKMARK_HEADER = 'X-D1-Bookmark'

export class BookmarkMemory {
  /** the newest bookmark received (undefined: none yet) */
  value: string | undefined

  constructor(initial?: string) {
    this.value = initial || undefined
  }

  /** Keep the response's bookmark if it is newer than the one held. */
  note(res: Response): void {
    const b = res.headers.get(BOOKMARK_HEADER)?.trim()
    if (b && (this.value === undefined || this.value < b)) this.value = b
  }
}

export type Credentials =
  | { kind: 'token'; tokenId: string; tokenKey: string; scheme?: 'svcsignature' | 'bhesignature' }
  | { kind: 'bearer'; jwt: string }
  /**
   * A browser session (the console): the browser sends the HttpOnly `token` cookie by itself; changes carry
   * the session's CSRF proof, read by `csrf` (in a browser, from the `csrf_token` cookie). See src/auth/csrf.ts.
   */
  | { kind: 'cookie'; csrf: () => string | null }
  | { kind: 'none' }

export interface ClientOptions {
  baseUrl: string
  credentials?: Credentials
  /** defaults to global fetch; tests pass the worker's fetch */
  fetch?: (req: Request) => Promise<Response>
  /** clock for RequestDate (tests shift it to probe skew) */
  now?: () => Date
  /** format of RequestDate; default RFC 3339 UTC with milliseconds */
  formatDate?: (d: Date) => string
  /**
   * Where the newest `X-D1-Bookmark` is kept (shared with derived clients); `false` sends none and keeps
   * none (every request may then be served by any replica).
   */
  bookmarks?: BookmarkMemory | false
  /** Wait out a busy server instead of failing (off by default; the CLI turns it on). See {@link BusyRetry}. */
  busyRetry?: BusyRetry
}

/**
 * Waiting out "server busy" answers. A 429 (the caller's rate limit) is answered before the route runs, so
 * nothing happened and the request may be sent again, whatever its method. A 503 is retried only for reads
 * (GET, HEAD): the service's 503s are refusals before admission too, but a read is safe whatever the cause.
 * Each retry builds and signs the request again (a new RequestDate and, for a mutation, a new nonce: a signed
 * mutation is accepted once). The wait is the answer's Retry-After (1 s when absent), capped at `maxWaitSeconds`.
 */
export interface BusyRetry {
  retries: number
  maxWaitSeconds: number
  sleep: (ms: number) => Promise<void>
  /** told before each wait (for a progress line) */
  onWait?: (status: number, seconds: number, attempt: number) => void
}

export interface ErrorEnvelope {
  http_status: number
  timestamp: string
  request_id: string
  errors: { context: string; message: string }[]
}

/**
 * How the refused request authenticated, so that a 401 can be explained: `password` a log-in with a user
 * name and password, `token` a signed request (token id and key), `bearer` a session, `none` nothing.
 */
export type AuthPath = 'password' | Credentials['kind']

export class EdgeHoundError extends Error {
  constructor(
    readonly status: number,
    readonly envelope: ErrorEnvelope | null,
    readonly response: Response,
    /** how the request authenticated (undefined when not known, e.g. a raw request) */
    readonly auth?: AuthPath,
  ) {
    super(envelope?.errors?.map((e) => e.message).join('; ') || `HTTP ${status}`)
    this.name = 'EdgeHoundError'
  }

  /** The error for a non-2xx answer whose body was read as `text` (its envelope when the body is JSON, else none). */
  static of(res: Response, text: string, auth?: AuthPath): EdgeHoundError {
    let envelope: ErrorEnvelope | null = null
    try {
      envelope = JSON.parse(text) as ErrorEnvelope
    } catch {
      /* not JSON */
    }
    return new EdgeHoundError(res.status, envelope, res, auth)
  }
}

export type Body = string | Uint8Array | ArrayBuffer | FormData | Record<string, unknown> | unknown[] | undefined

export interface RequestOptions {
  headers?: Record<string, string>
  /** content type for string/bytes bodies */
  contentType?: string
  /**
   * Send the target exactly as given. By default a signed mutating request (POST, PUT, PATCH, DELETE)
   * gets a `nonce=<uuid>` query parameter: the service accepts such a request once (its signature covers
   * only the method, target, date hour and body, so an identical second request in the same hour would
   * be refused as a replay; routes ignore the parameter). See README "Signing a request by hand".
   */
  exactTarget?: boolean
}

const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])

/** `target` with a fresh `nonce` query parameter (signed like the rest of the target, ignored by routes). */
export function withNonce(target: string): string {
  const hash = target.indexOf('#')
  const base = hash === -1 ? target : target.slice(0, hash)
  return `${base}${base.includes('?') ? '&' : '?'}nonce=${crypto.randomUUID()}`
}

async function encodeBody(body: Body, contentType?: string): Promise<{ bytes: Uint8Array | null; type?: string }> {
  if (body === undefined) return { bytes: null }
  if (typeof body === 'string') return { bytes: new TextEncoder().encode(body), type: contentType ?? 'application/json' }
  if (body instanceof Uint8Array) return { bytes: body, type: contentType }
  if (body instanceof ArrayBuffer) return { bytes: new Uint8Array(body), type: contentType }
  if (body instanceof FormData) {
    // Serialise the form ourselves so that the signed bytes are exactly the bytes sent.
    const r = new Response(body)
    return { bytes: new Uint8Array(await r.arrayBuffer()), type: r.headers.get('content-type') ?? undefined }
  }
  return { bytes: new TextEncoder().encode(JSON.stringify(body)), type: contentType ?? 'application/json' }
}

export class EdgeHoundClient {
  readonly baseUrl: string
  credentials: Credentials
  private readonly doFetch: (req: Request) => Promise<Response>
  private readonly now: () => Date
  private readonly formatDate: (d: Date) => string
  /** the newest bookmark received, sent on every request (null: bookmarks off) */
  readonly bookmarks: BookmarkMemory | null
  private readonly busyRetry: BusyRetry | undefined

  constructor(opts: ClientOptions) {
    this.baseUrl = opts.baseUrl.replace(/\/+$/, '')
    this.credentials = opts.credentials ?? { kind: 'none' }
    this.doFetch = opts.fetch ?? ((r) => fetch(r))
    this.now = opts.now ?? (() => new Date())
    this.formatDate = opts.formatDate ?? ((d) => d.toISOString())
    this.bookmarks = opts.bookmarks === false ? null : (opts.bookmarks ?? new BookmarkMemory())
    this.busyRetry = opts.busyRetry
  }

  /** The same server, clock and bookmark memory, with other credentials. */
  withCredentials(credentials: Credentials): EdgeHoundClient {
    return new EdgeHoundClient({
      baseUrl: this.baseUrl,
      credentials,
      fetch: this.doFetch,
      now: this.now,
      formatDate: this.formatDate,
      bookmarks: this.bookmarks ?? false,
      busyRetry: this.busyRetry,
    })
  }

  /** Note a response's bookmark (for responses to requests sent without `raw`, such as streamed uploads). */
  noteResponse(res: Response): Response {
    this.bookmarks?.note(res)
    return res
  }

  /** Builds (and signs) a request. `target` is the path plus query string, sent exactly as given. */
  async buildRequest(method: string, target: string, body?: Body, opts: RequestOptions = {}): Promise<Request> {
    const { bytes, type } = await encodeBody(body, opts.contentType)
    const headers = new Headers(opts.headers)
    if (type && !headers.has('content-type')) headers.set('Content-Type', type)
    // Not signed (the signature covers method, target, date and body), so it can be any value the caller holds.
    const bookmark = this.bookmarks?.value
    if (bookmark && !headers.has(BOOKMARK_HEADER)) headers.set(BOOKMARK_HEADER, bookmark)
    const cred = this.credentials
    const m = method.toUpperCase()
    if (cred.kind === 'token' && MUTATING.has(m) && !opts.exactTarget) target = withNonce(target)
    if (cred.kind === 'token') {
      const date = this.formatDate(this.now())
      const sig = await computeSignature(cred.tokenKey, method.toUpperCase(), target, date, bytes ?? new Uint8Array())
      headers.set('Authorization', `${cred.scheme ?? 'svcsignature'} ${cred.tokenId}`)
      headers.set('RequestDate', date)
      headers.set('Signature', toBase64(sig))
    } else if (cred.kind === 'bearer') {
      headers.set('Authorization', `Bearer ${cred.jwt}`)
    } else if (cred.kind === 'cookie' && MUTATING.has(m)) {
      const proof = cred.csrf()
      if (proof) headers.set('X-CSRF-Token', proof)
    }
    return new Request(this.baseUrl + target, { method: method.toUpperCase(), headers, body: bytes as BodyInit | null })
  }

  /** Sends a request and returns the raw response (no status check). */
  async raw(method: string, target: string, body?: Body, opts?: RequestOptions): Promise<Response> {
    const retry = this.busyRetry
    for (let attempt = 1; ; attempt++) {
      const res = this.noteResponse(await this.doFetch(await this.buildRequest(method, target, body, opts)))
      const m = method.toUpperCase()
      const busy = res.status === 429 || (res.status === 503 && (m === 'GET' || m === 'HEAD'))
      if (!retry || !busy || attempt > retry.retries) return res
      const after = Number(res.headers.get('retry-after'))
      const seconds = Math.min(retry.maxWaitSeconds, Number.isFinite(after) && after > 0 ? after : 1)
      await res.body?.cancel()
      retry.onWait?.(res.status, seconds, attempt)
      await retry.sleep(seconds * 1000)
    }
  }

  /** Sends a request; throws EdgeHoundError with the envelope on a non-2xx answer; returns parsed JSON. */
  async call<T = unknown>(method: string, target: string, body?: Body, opts?: RequestOptions): Promise<T> {
    const res = await this.raw(method, target, body, opts)
    const text = await res.text()
    if (!res.ok) throw EdgeHoundError.of(res, text, target === '/api/v2/login' ? 'password' : this.credentials.kind)
    if (!text) return undefined as T
    return (res.headers.get('content-type') ?? '').includes('json') ? (JSON.parse(text) as T) : (text as T)
  }

  // ---- endpoint wrappers -------------------------------------------------------------------------
  /** `otp`: the current TOTP code, for a user whose multi-factor authentication is activated. */
  login(username: string, secret: string, otp?: string) {
    return this.call<{ data: { user_id: string; auth_expired: boolean; session_token: string } }>('POST', '/api/v2/login', {
      login_method: 'secret',
      username,
      secret,
      ...(otp === undefined ? {} : { otp }),
    })
  }
  /** A browser login: the session is set as the HttpOnly cookie (the answer's session_token is empty). */
  /** `otp`: the current TOTP code, for a user who activated multi-factor authentication. */
  loginWithCookie(username: string, secret: string, otp?: string) {
    return this.call<{ data: { user_id: string; auth_expired: boolean; session_token: string } }>(
      'POST',
      '/api/v2/login',
      otp ? { login_method: 'secret', username, secret, otp } : { login_method: 'secret', username, secret },
      { headers: { 'X-EdgeHound-Session': 'cookie' } },
    )
  }
  logout() {
    return this.call<{ data: { sessions_ended: number } }>('POST', '/api/v2/logout')
  }
  self() {
    return this.call<{ data: UserJson }>('GET', '/api/v2/self')
  }
  version() {
    return this.call<{ data: { API: { current_version: string; deprecated_version: string }; server_version: string } }>('GET', '/api/version')
  }
  createToken(token_name: string, user_id?: string) {
    return this.call<{ data: TokenJson & { key: string } }>('POST', '/api/v2/tokens', user_id ? { token_name, user_id } : { token_name })
  }
  listTokens() {
    return this.call<{ data: { tokens: TokenJson[] } }>('GET', '/api/v2/tokens')
  }
  revokeToken(id: string) {
    return this.call<{ data: { id: string; revoked: true } }>('DELETE', `/api/v2/tokens/${encodeURIComponent(id)}`)
  }
  listUsers() {
    return this.call<{ data: { users: UserJson[] } }>('GET', '/api/v2/bloodhound-users')
  }
  createUser(u: {
    principal_name: string
    email_address?: string | null
    secret?: string
    /** role names, or numeric role ids from listRoles() */
    roles: (string | number)[]
    all_environments?: boolean
    environment_access?: string[]
    sso_provider_id?: number | null
    /** with secret: the user must choose a new password at first sign-in */
    needs_password_reset?: boolean
  }) {
    return this.call<{ data: UserJson }>('POST', '/api/v2/bloodhound-users', u)
  }
  updateUser(id: string, patch: Record<string, unknown>) {
    return this.call<{ data: UserJson }>('PATCH', `/api/v2/bloodhound-users/${encodeURIComponent(id)}`, patch)
  }
  /** Your own password (with `current_secret`), or another user's (administrators; `needs_password_reset` forces a change at next sign-in). */
  setUserSecret(id: string, body: { secret: string; current_secret?: string; needs_password_reset?: boolean }) {
    return this.call<{ data: UserJson }>('PUT', `/api/v2/bloodhound-users/${encodeURIComponent(id)}/secret`, body)
  }
  /** Expire a user's password: their next sign-in answers auth_expired and must choose a new one. */
  expireUserSecret(id: string) {
    return this.call<{ data: UserJson }>('DELETE', `/api/v2/bloodhound-users/${encodeURIComponent(id)}/secret`)
  }
  deleteUser(id: string) {
    return this.call<{ data: { id: string; deleted: true } }>('DELETE', `/api/v2/bloodhound-users/${encodeURIComponent(id)}`)
  }
  /** Enrol in TOTP MFA with the account's password: the secret (base32) and its otpauth URI (`qr_code`), shown once. */
  enrollMfa(userId: string, secret: string) {
    return this.call<{ data: { qr_code: string; totp_secret: string } }>('POST', `/api/v2/bloodhound-users/${encodeURIComponent(userId)}/mfa`, { secret })
  }
  /** Activate a pending enrolment with a current code. */
  activateMfa(userId: string, otp: string) {
    return this.call<{ data: { status: 'activated' } }>('POST', `/api/v2/bloodhound-users/${encodeURIComponent(userId)}/mfa-activation`, { otp })
  }
  mfaStatus(userId: string) {
    return this.call<{ data: { status: 'activated' | 'pending' | 'deactivated' } }>('GET', `/api/v2/bloodhound-users/${encodeURIComponent(userId)}/mfa-activation`)
  }
  /** Remove MFA: your own with your password; another user's (administrators) with your own password. */
  disenrollMfa(userId: string, secret: string) {
    return this.call<{ data: { status: 'deactivated' } }>('DELETE', `/api/v2/bloodhound-users/${encodeURIComponent(userId)}/mfa`, { secret })
  }
  /** The roles with their permissions; ids are stable and accepted in createUser/updateUser `roles`. */
  listRoles() {
    return this.call<{ data: { roles: RoleJson[] } }>('GET', '/api/v2/roles')
  }
  getRole(id: number) {
    return this.call<{ data: RoleJson }>('GET', `/api/v2/roles/${id}`)
  }
  listPermissions() {
    return this.call<{ data: { permissions: PermissionJson[] } }>('GET', '/api/v2/permissions')
  }
  getPermission(id: number) {
    return this.call<{ data: PermissionJson }>('GET', `/api/v2/permissions/${id}`)
  }
  /** Users by id, name and email only (auth/ReadUsers). */
  listUsersMinimal() {
    return this.call<{
      data: { users: { id: string; first_name: string | null; last_name: string | null; principal_name: string; email_address: string | null }[] }
    }>('GET', '/api/v2/bloodhound-users-minimal')
  }
}

export interface PermissionJson {
  id: number
  authority: string
  name: string
}

export interface RoleJson {
  id: number
  name: string
  description: string
  permissions: PermissionJson[]
}

export interface UserJson {
  id: string
  principal_name: string
  email_address: string | null
  roles: string[]
  is_disabled: boolean
  all_environments: boolean
  environment_access: string[]
  /** the SSO provider the user signs in through, or null */
  sso_provider_id: number | null
  /** the password has expired and must be changed first (login answers auth_expired) */
  needs_password_reset: boolean
  created_at: string
  updated_at: string
}

export interface TokenJson {
  id: string
  name: string
  user_id: string
  hmac_method: 'hmac-sha2-256'
  created_at: string
  updated_at: string
  last_access: string | null
  deleted_at: { time: string; valid: boolean }
}
