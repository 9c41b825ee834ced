/**
 * Response headers on every route of the table (src/http/security-headers.ts), for answers of every
 * kind the route gives: the administrator's answer, the anonymous one (401 for non-public routes), a
 * cross-origin request and a CORS preflight.
 *
 *  - `X-Content-Type-Options: nosniff` on every answer;
 *  - `Cache-Control: no-store` on every answer of a route that authenticates (success or error); a public
 *    route may choose caching (the OpenAPI document, the explorer assets) only for an answer that is the
 *    same whoever asks (compared with and without credentials);
 *  - no CORS header at all unless CORS_ALLOWED_ORIGINS lists the origin; with it, exactly that origin
 *    (never `*`, never a near-miss such as a suffix or another port), `Vary: Origin`, and preflights
 *    answered only for listed origins;
 *  - `Strict-Transport-Security` (max-age ≥ one year) over HTTPS and never over plain HTTP.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { computeSignature } from '../../src/auth/signature'
import { toBase64 } from '../../src/auth/encoding'
import { count, HARD_ENV, hAdminSession, hfetch, report, routeInfo, sampleQuery, type RouteInfo } from './lib'

const ROUTES_INFO = routeInfo()
const ALLOWED = ['https://app.example', 'https://console.example:8443']
const CORS_ENV = { ...HARD_ENV, CORS_ALLOWED_ORIGINS: ALLOWED.join(', ') } as unknown as Env
let tok = { id: '', key: '' }

beforeAll(async () => {
  const admin = await hAdminSession()
  const t = await admin.client.createToken('headers')
  tok = { id: t.data.id, key: t.data.key }
}, 60_000)

afterAll(() => report('headers'))

function body(r: RouteInfo): { bytes: Uint8Array | null; type?: string } {
  const enc = (s: string) => new TextEncoder().encode(s)
  if (r.bodyKind === 'json') return { bytes: enc('{}'), type: 'application/json' }
  if (r.bodyKind === 'form') return { bytes: enc('--b--\r\n'), type: 'multipart/form-data; boundary=b' }
  if (r.bodyKind === 'raw') return { bytes: enc('{}'), type: (r.def.body as { contentTypes: string[] }).contentTypes[0] }
  return { bytes: null }
}

async function send(r: RouteInfo, o: { signed?: boolean; origin?: string; https?: boolean; bindings?: Env } = {}) {
  const target = r.samplePath() + sampleQuery(r.def)
  const b = body(r)
  const h = new Headers()
  if (b.type) h.set('Content-Type', b.type)
  if (o.origin) h.set('Origin', o.origin)
  if (o.signed) {
    const date = new Date().toISOString()
    const sig = await computeSignature(tok.key, r.method, target, date, b.bytes ?? new Uint8Array())
    h.set('Authorization', `svcsignature ${tok.id}`)
    h.set('RequestDate', date)
    h.set('Signature', toBase64(sig))
  }
  const res = await hfetch(new Request(`${o.https ? 'https' : 'http'}://edgehound.test${target}`, { method: r.method, headers: h, body: b.bytes }), o.bindings)
  bodies.set(res, await res.text())
  count('requests')
  return res
}
const bodies = new WeakMap<Response, string>()
const strip = (t: string) => t.replace(/"(request_id|timestamp)":"[^"]*"/g, '')

async function preflight(r: RouteInfo, origin: string, bindings?: Env) {
  const res = await hfetch(
    new Request(`http://edgehound.test${r.samplePath()}`, {
      method: 'OPTIONS',
      headers: { Origin: origin, 'Access-Control-Request-Method': r.method, 'Access-Control-Request-Headers': 'authorization, content-type, requestdate, signature' },
    }),
    bindings,
  )
  await res.arrayBuffer()
  count('requests')
  return res
}

const corsHeaders = (res: Response) => [...res.headers.keys()].filter((k) => k.toLowerCase().startsWith('access-control-'))

describe('security headers on every route', () => {
  it('covers the route table', () => {
    expect(ROUTES_INFO.length).toBeGreaterThan(10)
    count('routes', ROUTES_INFO.length)
  })

  for (const r of ROUTES_INFO) {
    it(`${r.label}`, async () => {
      const problems: string[] = []
      const answers: [string, Response][] = [
        ['administrator', await send(r, { signed: true })],
        ['anonymous', await send(r)],
        ['administrator over https', await send(r, { signed: true, https: true })],
        ['anonymous over https', await send(r, { https: true })],
        ['cross-origin, CORS not configured', await send(r, { signed: true, origin: 'https://evil.example' })],
        ['listed origin, CORS not configured', await send(r, { signed: true, origin: ALLOWED[0] })],
      ]
      if (r.auth !== 'public' && answers[1][1].status !== 401) problems.push(`anonymous got ${answers[1][1].status}, expected 401`)
      for (const [what, res] of answers) {
        if (res.headers.get('x-content-type-options') !== 'nosniff') problems.push(`${what} (${res.status}): X-Content-Type-Options is ${res.headers.get('x-content-type-options')}`)
        // Every answer of an authenticated route is per caller: no-store. A public route authenticates
        // nobody; it may let caches keep its answer, provided the answer is the same whoever asks.
        const cc = res.headers.get('cache-control')
        if (r.auth !== 'public' && cc !== 'no-store') problems.push(`${what} (${res.status}): Cache-Control is ${cc}`)
        const anonymousSameUrl = what.endsWith('https') ? answers[3][1] : answers[1][1] // a cache keys on the URL, scheme included
        if (r.auth === 'public' && cc !== 'no-store' && strip(bodies.get(res) ?? '') !== strip(bodies.get(anonymousSameUrl) ?? ''))
          problems.push(`${what}: public route lets caches keep (${cc}) an answer that differs from the anonymous one`)
        const hsts = res.headers.get('strict-transport-security')
        if (what.endsWith('https')) {
          const age = Number(/max-age=(\d+)/.exec(hsts ?? '')?.[1] ?? 0)
          if (age < 31_536_000) problems.push(`${what}: Strict-Transport-Security is ${hsts}`)
        } else if (hsts) problems.push(`${what}: Strict-Transport-Security over plain HTTP`)
        if (corsHeaders(res).length) problems.push(`${what}: CORS headers without configuration: ${corsHeaders(res).join(', ')}`)
      }
      const pre = await preflight(r, 'https://evil.example')
      if (corsHeaders(pre).length) problems.push(`preflight, CORS not configured: ${corsHeaders(pre).join(', ')}`)
      const preListed = await preflight(r, ALLOWED[0])
      if (corsHeaders(preListed).length) problems.push(`preflight of a would-be-listed origin, CORS not configured: ${corsHeaders(preListed).join(', ')}`)

      // With an allow-list: exactly the listed origins, each echoed, never a wildcard or a near miss.
      for (const origin of ALLOWED) {
        const res = await send(r, { signed: true, origin, bindings: CORS_ENV })
        if (res.headers.get('access-control-allow-origin') !== origin) problems.push(`listed ${origin}: Access-Control-Allow-Origin is ${res.headers.get('access-control-allow-origin')}`)
        if (!/\borigin\b/i.test(res.headers.get('vary') ?? '')) problems.push(`listed ${origin}: Vary lacks Origin (${res.headers.get('vary')})`)
        if (res.headers.get('access-control-allow-credentials')) problems.push(`listed ${origin}: Access-Control-Allow-Credentials is set`)
        if (r.auth !== 'public' && res.headers.get('cache-control') !== 'no-store') problems.push(`listed ${origin}: Cache-Control is ${res.headers.get('cache-control')}`)
        const p = await preflight(r, origin, CORS_ENV)
        if (p.headers.get('access-control-allow-origin') !== origin) problems.push(`preflight of listed ${origin}: ${p.status} ${p.headers.get('access-control-allow-origin')}`)
        if (!(p.headers.get('access-control-allow-methods') ?? '').includes(r.method)) problems.push(`preflight of listed ${origin}: methods ${p.headers.get('access-control-allow-methods')}`)
      }
      for (const origin of ['https://evil.example', 'null', 'https://app.example.evil.example', 'http://app.example', 'https://app.example:444', 'https://APP.example ', `${ALLOWED[0]}/`]) {
        const res = await send(r, { signed: true, origin, bindings: CORS_ENV })
        if (corsHeaders(res).length) problems.push(`unlisted ${JSON.stringify(origin)}: ${corsHeaders(res).map((k) => `${k}: ${res.headers.get(k)}`).join(', ')}`)
        const p = await preflight(r, origin, CORS_ENV)
        if (corsHeaders(p).length) problems.push(`preflight of unlisted ${JSON.stringify(origin)}: ${corsHeaders(p).join(', ')}`)
      }
      count('header cases', 6 + 2 + ALLOWED.length * 2 + 7 * 2)
      expect(problems, `${r.label}:\n${problems.join('\n')}`).toEqual([])
    })
  }

  it('errors outside any route (404, 405, 413) carry the same headers', async () => {
    const cases = [
      new Request('https://edgehound.test/api/v2/does-not-exist', { headers: { Origin: 'https://evil.example' } }),
      new Request('https://edgehound.test/api/v2/tokens', { method: 'PATCH' }),
      new Request('https://edgehound.test/api/v2/login', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: 'x'.repeat(64 * 1024) }),
    ]
    for (const req of cases) {
      const res = await hfetch(req)
      count('requests')
      expect(res.status).toBeGreaterThanOrEqual(400)
      expect(res.headers.get('x-content-type-options')).toBe('nosniff')
      expect(res.headers.get('cache-control')).toBe('no-store')
      expect(res.headers.get('strict-transport-security')).toMatch(/max-age=\d+/)
      expect(corsHeaders(res)).toEqual([])
    }
  })
})
