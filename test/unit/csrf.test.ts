import { describe, expect, it } from 'vitest'
import { clearedCookies, csrfProblem, csrfToken, originProblem, readCookie, sessionCookies } from '../../src/auth/csrf'

const KEY = 'k'.repeat(40)
const req = (o: Partial<Parameters<typeof csrfProblem>[0]> = {}) => ({
  method: 'POST',
  url: 'https://eh.example/api/v2/tokens',
  origin: 'https://eh.example',
  secFetchSite: 'same-origin',
  csrfHeader: null,
  ...o,
})

describe('CSRF proof (src/auth/csrf.ts)', () => {
  it('is bound to the session and the key, base64url of a SHA-256 HMAC', async () => {
    const a = await csrfToken(KEY, 's1')
    expect(a).toMatch(/^[\w-]{43}$/)
    expect(await csrfToken(KEY, 's1')).toBe(a)
    expect(await csrfToken(KEY, 's2')).not.toBe(a)
    expect(await csrfToken('other'.repeat(8), 's1')).not.toBe(a)
  })
  it('reads need no proof; changes need the right one', async () => {
    expect(await csrfProblem(req({ method: 'GET' }), KEY, 's1')).toBeNull()
    expect(await csrfProblem(req(), KEY, 's1')).toMatch(/missing X-CSRF-Token/)
    expect(await csrfProblem(req({ csrfHeader: await csrfToken(KEY, 's2') }), KEY, 's1')).toMatch(/does not match/)
    expect(await csrfProblem(req({ csrfHeader: 'short' }), KEY, 's1')).toMatch(/does not match/)
    expect(await csrfProblem(req({ csrfHeader: await csrfToken(KEY, 's1') }), KEY, 's1')).toBeNull()
    for (const method of ['PUT', 'PATCH', 'DELETE', 'post']) expect(await csrfProblem(req({ method }), KEY, 's1')).not.toBeNull()
  })
  it('origin: own origin or PUBLIC_BASE_URL; no Origin is allowed (the proof still applies); cross-site fetch metadata refused', () => {
    expect(originProblem(req())).toBeNull()
    expect(originProblem(req({ origin: null, secFetchSite: null }))).toBeNull()
    expect(originProblem(req({ origin: 'https://evil.example' }))).toMatch(/Origin/)
    expect(originProblem(req({ origin: 'https://eh.example.evil.example' }))).toMatch(/Origin/)
    expect(originProblem(req({ origin: 'http://eh.example' }))).toMatch(/Origin/)
    expect(originProblem(req({ origin: 'https://console.example', publicBaseUrl: 'https://console.example/base' }))).toBeNull()
    expect(originProblem(req({ secFetchSite: 'same-site' }))).toMatch(/Sec-Fetch-Site/)
    expect(originProblem(req({ secFetchSite: 'cross-site' }))).toMatch(/Sec-Fetch-Site/)
    expect(originProblem(req({ secFetchSite: 'none' }))).toBeNull()
  })
  it('cookies: session HttpOnly, proof readable; both cleared on logout', () => {
    expect(sessionCookies('j.w.t', 'p', 60, true)).toEqual(['token=j.w.t; Path=/; Max-Age=60; SameSite=Lax; Secure; HttpOnly', 'csrf_token=p; Path=/; Max-Age=60; SameSite=Lax; Secure'])
    expect(clearedCookies(false)).toEqual(['token=; Path=/; Max-Age=0; SameSite=Lax; HttpOnly', 'csrf_token=; Path=/; Max-Age=0; SameSite=Lax'])
    expect(readCookie('a=1; csrf_token=x; token=y', 'token')).toBe('y')
    expect(readCookie('xtoken=1', 'token')).toBeNull()
    expect(readCookie(null, 'token')).toBeNull()
  })
})
