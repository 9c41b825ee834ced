import { describe, expect, it } from 'vitest'
import { adminSession, adminToken, client, expectEnvelope, workerFetch, BASE } from '../helpers'

describe('platform smoke', () => {
  it('health answers without auth, with RequestID and security headers', async () => {
    const res = await workerFetch(new Request(`${BASE}/health`))
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ data: { status: 'ok' } })
    expect(res.headers.get('requestid')).toMatch(/^[0-9a-f-]{36}$/)
    expect(res.headers.get('x-content-type-options')).toBe('nosniff')
  })

  it('version with a JWT and with a signed request', async () => {
    const admin = await adminSession()
    expect((await admin.version()).data.API.current_version).toBe('v2')
    const tok = await adminToken()
    const v = await tok.version()
    expect(v.data).toMatchObject({ API: { current_version: 'v2', deprecated_version: 'none' } })
  })

  it('unknown route is a 404 envelope, wrong method a 405 with Allow', async () => {
    await expectEnvelope(await workerFetch(new Request(`${BASE}/nope`)), 404)
    const r = await workerFetch(new Request(`${BASE}/api/version`, { method: 'DELETE' }))
    expect(r.headers.get('allow')).toContain('GET')
    await expectEnvelope(r, 405)
  })

  it('no credentials is a 401 envelope', async () => {
    await expectEnvelope(await client().raw('GET', '/api/version'), 401, 'no Authorization header')
  })
})
