import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { createApp, ROUTES } from '../../src/app'
import { defineRoute } from '../../src/http/route'
import { ApiError } from '../../src/http/errors'
import { adminSession, BASE, env, expectEnvelope, workerFetch } from '../helpers'

const ctx = { waitUntil() {}, passThroughOnException() {}, props: {} } as unknown as ExecutionContext

describe('error envelope everywhere', () => {
  it('404 for unknown routes, under /api too', async () => {
    await expectEnvelope(await workerFetch(new Request(`${BASE}/api/v2/does-not-exist`)), 404, 'no such endpoint')
    await expectEnvelope(await workerFetch(new Request(`${BASE}/`)), 404)
  })

  it('405 with Allow for a known path and a wrong method', async () => {
    const res = await workerFetch(new Request(`${BASE}/api/v2/tokens`, { method: 'PATCH' }))
    expect(res.headers.get('allow')).toBe('POST, GET, HEAD')
    await expectEnvelope(res, 405, 'not allowed')
    const res2 = await workerFetch(new Request(`${BASE}/api/v2/tokens/0b9d1c5e-7a37-4a4f-9a50-6d3c6f2a8f11`, { method: 'GET' }))
    expect(res2.headers.get('allow')).toBe('DELETE')
  })

  it('413 before anything buffers an oversized body (checked before authentication)', async () => {
    const big = 'x'.repeat(20 * 1024)
    const res = await workerFetch(
      new Request(`${BASE}/api/v2/login`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: big }),
    )
    await expectEnvelope(res, 413, 'exceeds the limit')
    const res2 = await workerFetch(
      new Request(`${BASE}/api/v2/tokens`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: 'x'.repeat(17 * 1024) }),
    )
    await expectEnvelope(res2, 413)
  })

  it('415 for an unsupported content type, 400 for invalid JSON, wrong types and missing fields', async () => {
    const admin = await adminSession()
    await expectEnvelope(await admin.raw('POST', '/api/v2/tokens', 'token_name=x', { contentType: 'text/plain' }), 415, 'application/json')
    await expectEnvelope(await admin.raw('POST', '/api/v2/tokens', '{"token_name": '), 400, 'not valid JSON')
    const wrong = await expectEnvelope(await admin.raw('POST', '/api/v2/tokens', { token_name: 42 }), 400)
    expect(wrong.errors[0].context).toBe('token_name')
    await expectEnvelope(await admin.raw('POST', '/api/v2/tokens'), 400, 'required')
    await expectEnvelope(await admin.raw('POST', '/api/v2/tokens', new Uint8Array([0x7b, 0xff, 0x7d]), { contentType: 'application/json' }), 400, 'UTF-8')
  })

  it('403 for a missing permission', async () => {
    const { userWithRole } = await import('../helpers')
    const u = await userWithRole('Upload-Only')
    await expectEnvelope(await u.client.raw('GET', '/api/v2/bloodhound-users'), 403, 'not authorized')
  })

  it('500 for an unexpected exception: logged with the request id, no stack or internals in the body', async () => {
    const boom = defineRoute(
      { method: 'get', path: '/boom', operationId: 'Boom', summary: 'x', tags: ['t'], auth: 'public', responses: { 200: { description: 'x' } } },
      () => {
        throw new Error('SQLITE_ERROR: near "SELECT": syntax error at /src/secret.ts:12 JWT_SIGNING_KEY=abc')
      },
    )
    const app = createApp([...ROUTES, boom])
    const res = await app.fetch(new Request(`${BASE}/boom`, { headers: { 'CF-Connecting-IP': '192.0.2.200' } }), env, ctx)
    const text = await res.clone().text()
    await expectEnvelope(res, 500, 'internal error')
    expect(text).not.toMatch(/SQLITE|secret|JWT|stack|\.ts/)
  })

  it('a missing secret in production is a 500 envelope naming the setting, not its value', async () => {
    const app = createApp()
    const res = await app.fetch(
      new Request(`${BASE}/health`),
      { ...env, ENVIRONMENT: 'production', JWT_SIGNING_KEY: undefined, TOKEN_ENCRYPTION_KEY: 'short' } as unknown as Env,
      ctx,
    )
    const body = await expectEnvelope(res, 500, 'missing required setting JWT_SIGNING_KEY')
    expect(body.errors.map((e) => e.message).join()).toContain('invalid setting TOKEN_ENCRYPTION_KEY')
    expect(JSON.stringify(body)).not.toContain('short')
  })

  it('ApiError.many keeps every detail', () => {
    const e = ApiError.many(400, [{ context: 'a', message: 'x' }, { context: 'b', message: 'y' }])
    expect(e.details).toHaveLength(2)
    expect(z.string().safeParse(e.message).success).toBe(true)
  })

  it('security headers on every response', async () => {
    const res = await workerFetch(new Request(`${BASE}/health`))
    expect(res.headers.get('x-content-type-options')).toBe('nosniff')
    expect(res.headers.get('cache-control')).toBe('no-store')
    expect(res.headers.get('access-control-allow-origin')).toBeNull()
    const https = await workerFetch(new Request('https://edgehound.test/health'))
    expect(https.headers.get('strict-transport-security')).toMatch(/max-age=\d+/)
  })
})
