import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { adminSession, adminToken, BASE, client, workerFetch } from '../helpers'

/** Captures every console line the worker writes while a test runs. */
let lines: { method: 'log' | 'warn' | 'error'; text: string }[] = []
beforeEach(() => {
  lines = []
  for (const m of ['log', 'warn', 'error'] as const)
    vi.spyOn(console, m).mockImplementation((...args: unknown[]) => {
      lines.push({ method: m, text: args.map(String).join(' ') })
    })
})
afterEach(() => vi.restoreAllMocks())

type Line = Record<string, unknown> & { request_id: string }
function requestLines(): (Line & { _method: string })[] {
  const out: (Line & { _method: string })[] = []
  for (const l of lines) {
    try {
      const j = JSON.parse(l.text)
      if (j && j.type === 'request') out.push({ ...j, _method: l.method })
    } catch {
      /* not a JSON line */
    }
  }
  return out
}
function lineFor(res: Response) {
  const id = res.headers.get('requestid')
  const found = requestLines().filter((l) => l.request_id === id)
  expect(found).toHaveLength(1) // exactly one line per request
  return found[0]
}

describe('structured request log', () => {
  it('a signed request logs id, method, route template, status, duration, token principal and rate limit; never the key', async () => {
    const tok = await adminToken()
    lines = []
    const res = await tok.raw('DELETE', `/api/v2/tokens/${crypto.randomUUID()}`)
    expect(res.status).toBe(404)
    const l = lineFor(res)
    expect(l).toMatchObject({
      type: 'request',
      level: 'warn',
      method: 'DELETE',
      route: '/api/v2/tokens/:token_id',
      status: 404,
      principal: { via: 'token', token_id: tok.tokenId },
      rate_limit: { policy: 'token', allowed: true },
      cf_ray: null,
    })
    expect(typeof (l.principal as { user_id: string }).user_id).toBe('string')
    expect(typeof l.duration_ms).toBe('number')
    expect(l.duration_ms as number).toBeGreaterThanOrEqual(0)
    expect(typeof (l.rate_limit as { remaining: number }).remaining).toBe('number')
    expect(l).not.toHaveProperty('path') // a matched route logs its template only
    expect(l._method).toBe('warn')
    // nothing secret anywhere in what the worker wrote
    const all = lines.map((x) => x.text).join('\n')
    expect(all).not.toContain(tok.tokenKey)
    const sent = await tok.buildRequest('GET', '/api/version')
    expect(all).not.toContain(sent.headers.get('signature')!)
  })

  it('a session request logs via=session without the JWT; a 2xx is level info on console.log', async () => {
    const admin = await adminSession()
    const jwt = (admin.credentials as { jwt: string }).jwt
    lines = []
    const res = await admin.raw('GET', '/api/version')
    expect(res.status).toBe(200)
    const l = lineFor(res)
    expect(l).toMatchObject({ level: 'info', route: '/api/version', status: 200, principal: { via: 'session', token_id: null }, rate_limit: { policy: 'session' } })
    expect(l._method).toBe('log')
    expect(lines.map((x) => x.text).join('\n')).not.toContain(jwt)
  })

  it('public, failed-auth and unmatched requests: no principal, IP bucket, path only when no route matched', async () => {
    const health = await workerFetch(new Request(`${BASE}/health`, { headers: { 'CF-Ray': '8f00aa-AMS' } }))
    expect(lineFor(health)).toMatchObject({ route: '/health', status: 200, principal: null, rate_limit: { policy: 'ip', allowed: true }, cf_ray: '8f00aa-AMS' })

    const denied = await client().raw('GET', '/api/version')
    expect(lineFor(denied)).toMatchObject({ route: '/api/version', status: 401, principal: null, rate_limit: { policy: 'ip' } })

    const missing = await workerFetch(new Request(`${BASE}/api/v2/nothing-here?secret=1`))
    const l = lineFor(missing)
    expect(l).toMatchObject({ route: null, path: '/api/v2/nothing-here', status: 404, principal: null, rate_limit: null })
    expect(JSON.stringify(l)).not.toContain('secret=1') // never the query string
  })
})
