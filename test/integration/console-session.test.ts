import { describe, expect, it } from 'vitest'
import { ADMIN, BASE, client, expectEnvelope, workerFetch } from '../helpers'

// The console's browser session (src/auth/csrf.ts): HttpOnly cookie, CSRF proof for every cookie-authenticated
// change, Origin check; bearer and signed requests unchanged.
const HTTPS = 'https://edgehound.test'

async function browserLogin(base = BASE, headers: Record<string, string> = {}) {
  const res = await workerFetch(
    new Request(`${base}/api/v2/login`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-EdgeHound-Session': 'cookie', Origin: base, ...headers },
      body: JSON.stringify({ login_method: 'secret', username: ADMIN.username, secret: ADMIN.password }),
    }),
  )
  const set = res.headers.getSetCookie()
  const jwt = /^token=([^;]+)/.exec(set.find((v) => v.startsWith('token=')) ?? '')?.[1] ?? ''
  const csrf = /^csrf_token=([^;]+)/.exec(set.find((v) => v.startsWith('csrf_token=')) ?? '')?.[1] ?? ''
  return { res, set, jwt, csrf, cookie: `token=${jwt}; csrf_token=${csrf}` }
}

function createToken(cookie: string, headers: Record<string, string> = {}, base = BASE) {
  return workerFetch(
    new Request(`${base}/api/v2/tokens`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Cookie: cookie, ...headers },
      body: JSON.stringify({ token_name: 'from-the-console' }),
    }),
  )
}

describe('browser login', () => {
  it('sets the session as an HttpOnly, SameSite=Lax cookie (Secure on https) and keeps it out of the JSON', async () => {
    const s = await browserLogin(HTTPS)
    expect(s.res.status).toBe(200)
    const body = (await s.res.json()) as { data: { session_token: string; user_id: string } }
    expect(body.data.session_token).toBe('')
    expect(body.data.user_id).toMatch(/^[0-9a-f-]{36}$/)
    expect(s.res.headers.get('cache-control')).toBe('no-store')
    expect(s.set.find((v) => v.startsWith('token='))).toMatch(/^token=[\w-]+\.[\w-]+\.[\w-]+; Path=\/; Max-Age=28800; SameSite=Lax; Secure; HttpOnly$/)
    // the CSRF proof is readable by the page (no HttpOnly), otherwise the same
    expect(s.set.find((v) => v.startsWith('csrf_token='))).toMatch(/^csrf_token=[\w-]{43}; Path=\/; Max-Age=28800; SameSite=Lax; Secure$/)
    // on plain http (local development) no Secure
    const local = await browserLogin(BASE)
    expect(local.set.find((v) => v.startsWith('token='))).not.toContain('Secure')
  })

  it('refuses a browser login from another site (login CSRF); a plain login still returns the token', async () => {
    await expectEnvelope((await browserLogin(BASE, { Origin: 'https://evil.example' })).res, 403, /Origin is not this service/)
    await expectEnvelope((await browserLogin(BASE, { 'Sec-Fetch-Site': 'cross-site' })).res, 403, /cross-site request refused/)
    const plain = await client().login(ADMIN.username, ADMIN.password)
    expect(plain.data.session_token).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/)
  })
})

describe('cookie-authenticated requests', () => {
  it('reads work with the cookie alone', async () => {
    const s = await browserLogin()
    const res = await workerFetch(new Request(`${BASE}/api/v2/self`, { headers: { Cookie: s.cookie } }))
    expect(res.status).toBe(200)
    expect(((await res.json()) as { data: { principal_name: string } }).data.principal_name).toBe(ADMIN.username)
  })

  it('a change without the CSRF proof, with a wrong one or another session\'s one is refused (403 envelope) and changes nothing', async () => {
    const s = await browserLogin()
    const other = await browserLogin()
    const before = (await client({ kind: 'bearer', jwt: s.jwt }).listTokens()).data.tokens.length
    await expectEnvelope(await createToken(s.cookie), 403, /missing X-CSRF-Token/)
    await expectEnvelope(await createToken(s.cookie, { 'X-CSRF-Token': 'x'.repeat(43) }), 403, /does not match this session/)
    await expectEnvelope(await createToken(s.cookie, { 'X-CSRF-Token': other.csrf }), 403, /does not match this session/)
    expect((await client({ kind: 'bearer', jwt: s.jwt }).listTokens()).data.tokens.length).toBe(before)
  })

  it('with the proof from the same origin the change works', async () => {
    const s = await browserLogin()
    const res = await createToken(s.cookie, { 'X-CSRF-Token': s.csrf, Origin: BASE, 'Sec-Fetch-Site': 'same-origin' })
    expect(res.status).toBe(200)
    expect(((await res.json()) as { data: { name: string } }).data.name).toBe('from-the-console')
  })

  it('a cross-origin change is refused even with the right proof', async () => {
    const s = await browserLogin()
    await expectEnvelope(await createToken(s.cookie, { 'X-CSRF-Token': s.csrf, Origin: 'https://evil.example' }), 403, /Origin is not this service/)
    await expectEnvelope(await createToken(s.cookie, { 'X-CSRF-Token': s.csrf, 'Sec-Fetch-Site': 'same-site' }), 403, /cross-site request refused/)
  })

  it('the typed client in cookie mode sends the proof', async () => {
    const s = await browserLogin()
    const c = client({ kind: 'cookie', csrf: () => s.csrf })
    const req = await c.buildRequest('POST', '/api/v2/tokens', { token_name: 'x' })
    expect(req.headers.get('x-csrf-token')).toBe(s.csrf)
    expect((await c.buildRequest('GET', '/api/v2/self')).headers.get('x-csrf-token')).toBeNull()
  })

  it('an Authorization header wins over the cookie: bearer requests behave exactly as before', async () => {
    const s = await browserLogin()
    const res = await workerFetch(new Request(`${BASE}/api/v2/self`, { headers: { Cookie: s.cookie, Authorization: 'Bearer not-a-jwt' } }))
    await expectEnvelope(res, 401)
    const plain = await client().login(ADMIN.username, ADMIN.password)
    // a bearer change needs no CSRF proof, cookie or not
    const ok = await createToken(s.cookie.replace(/token=[^;]+/, 'token=garbage'), { Authorization: `Bearer ${plain.data.session_token}` })
    expect(ok.status).toBe(200)
  })

  it('an expired or forged cookie is a 401 envelope', async () => {
    await expectEnvelope(await workerFetch(new Request(`${BASE}/api/v2/self`, { headers: { Cookie: 'token=a.b.c' } })), 401, /session cookie/)
  })

  it('logout (with the proof) ends the session and clears both cookies', async () => {
    const s = await browserLogin()
    const res = await workerFetch(new Request(`${BASE}/api/v2/logout`, { method: 'POST', headers: { Cookie: s.cookie, 'X-CSRF-Token': s.csrf, Origin: BASE } }))
    expect(res.status).toBe(200)
    expect(res.headers.getSetCookie()).toEqual(['token=; Path=/; Max-Age=0; SameSite=Lax; HttpOnly', 'csrf_token=; Path=/; Max-Age=0; SameSite=Lax'])
    await expectEnvelope(await workerFetch(new Request(`${BASE}/api/v2/self`, { headers: { Cookie: s.cookie } })), 401)
  })
})
