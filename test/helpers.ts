import { env, exports } from 'cloudflare:workers'
import { expect } from 'vitest'
import { EdgeHoundClient, type Credentials } from '../src/client'

export const BASE = 'http://edgehound.test'
export const ADMIN = { username: 'admin', password: 'test-admin-password' }

function randomIp(): string {
  const b = crypto.getRandomValues(new Uint8Array(3))
  return `10.${b[0]}.${b[1]}.${b[2]}`
}

/**
 * The worker under test. Each call comes from a random client IP unless the test sets CF-Connecting-IP,
 * so per-IP budgets (login: 1/s, burst 5) do not leak between unrelated tests.
 */
export async function workerFetch(req: Request): Promise<Response> {
  if (!req.headers.has('cf-connecting-ip')) {
    const h = new Headers(req.headers)
    h.set('CF-Connecting-IP', randomIp())
    req = new Request(req, { headers: h })
  }
  return (exports as unknown as { default: { fetch: (r: Request) => Promise<Response> } }).default.fetch(req)
}

/**
 * `workerFetch` for a caller that backs off as real connectors do: a 429 is retried after its Retry-After
 * (at most 5 times). For suites that test content with many requests from one token (one token's bucket is
 * 110 requests, refilled at 55/s), never for those that test admission.
 */
export async function pacedFetch(req: Request): Promise<Response> {
  for (let attempt = 0; ; attempt++) {
    const res = await workerFetch(req.clone())
    if (res.status !== 429 || attempt >= 5) return res
    await new Promise((r) => setTimeout(r, 1000 * Math.max(1, Number(res.headers.get('retry-after') ?? 1))))
  }
}

export function client(credentials: Credentials = { kind: 'none' }, opts: { now?: () => Date; formatDate?: (d: Date) => string; paced?: boolean } = {}) {
  const { paced, ...rest } = opts
  return new EdgeHoundClient({ baseUrl: BASE, credentials, fetch: paced ? pacedFetch : workerFetch, ...rest })
}

/** A session for the bootstrap administrator (created on first login in an empty database). */
export async function adminSession(): Promise<EdgeHoundClient> {
  const r = await client().login(ADMIN.username, ADMIN.password)
  return client({ kind: 'bearer', jwt: r.data.session_token })
}

/** A signed-request client for the bootstrap administrator. */
export async function adminToken(opts: { paced?: boolean } = {}): Promise<EdgeHoundClient & { tokenId: string; tokenKey: string }> {
  const admin = await adminSession()
  const t = await admin.createToken('admin-test-token')
  const c = client({ kind: 'token', tokenId: t.data.id, tokenKey: t.data.key }, opts)
  return Object.assign(c, { tokenId: t.data.id, tokenKey: t.data.key })
}

let seq = 0
/** Creates a user with the given role(s) and returns a signed-request client for them plus their ids. */
export async function userWithRole(
  roles: string | string[],
  access: { all_environments?: boolean; environment_access?: string[] } = {},
): Promise<{ client: EdgeHoundClient; userId: string; tokenId: string; tokenKey: string; admin: EdgeHoundClient }> {
  const admin = await adminSession()
  const name = `user-${Date.now()}-${++seq}`
  const u = await admin.createUser({ principal_name: name, roles: Array.isArray(roles) ? roles : [roles], secret: 'correct-horse-battery', ...access })
  const t = await admin.createToken(`${name}-token`, u.data.id)
  return {
    client: client({ kind: 'token', tokenId: t.data.id, tokenKey: t.data.key }),
    userId: u.data.id,
    tokenId: t.data.id,
    tokenKey: t.data.key,
    admin,
  }
}

/** Asserts the spec's error envelope and returns it. */
export async function expectEnvelope(res: Response, status: number, message?: string | RegExp) {
  expect(res.status).toBe(status)
  expect(res.headers.get('content-type')).toMatch(/^application\/json/)
  const body = (await res.json()) as { http_status: number; timestamp: string; request_id: string; errors: { context: string; message: string }[] }
  expect(body.http_status).toBe(status)
  expect(body.timestamp).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/)
  expect(body.request_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/)
  expect(res.headers.get('requestid')).toBe(body.request_id)
  expect(Array.isArray(body.errors) && body.errors.length).toBeGreaterThan(0)
  for (const e of body.errors) {
    expect(typeof e.context).toBe('string')
    expect(typeof e.message).toBe('string')
  }
  if (message !== undefined) {
    const all = body.errors.map((e) => e.message).join('\n')
    if (typeof message === 'string') expect(all).toContain(message)
    else expect(all).toMatch(message)
  }
  return body
}

export { env }
