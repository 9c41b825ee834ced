import { describe, expect, it } from 'vitest'
import { env } from 'cloudflare:workers'
import { computeSignature } from '../../src/auth/signature'
import { toBase64 } from '../../src/auth/encoding'
import { createApp } from '../../src/app'
import { smallDoc } from '../fixtures/extensions/docs'
import { adminSession, adminToken, BASE, expectEnvelope, workerFetch } from '../helpers'

/**
 * SECURITY.md rule 3 (src/auth/replay.ts): a legitimate client's exact repeat of a signed mutation — the same
 * method, target, body and signed hour, so the same signature — is answered on data-plane routes (as
 * BloodHound answers the collectors and scripts that repeat them) and refused on identity and access routes.
 * Each case sends the very same bytes twice, as an unmodified client does.
 */
type Tok = { id: string; key: string }
const ctx = { waitUntil() {}, passThroughOnException() {}, props: {} } as unknown as ExecutionContext

async function freshToken(): Promise<Tok> {
  const t = await adminToken()
  return { id: t.tokenId, key: t.tokenKey }
}

/** One signed request, built once: `send()` sends the same bytes each time it is called. */
async function signedRequest(tok: Tok, method: string, target: string, body = '', contentType = 'application/json') {
  const date = new Date().toISOString()
  const sig = toBase64(await computeSignature(tok.key, method, target, date, new TextEncoder().encode(body)))
  const headers: Record<string, string> = { Authorization: `bhesignature ${tok.id}`, RequestDate: date, Signature: sig }
  if (body) headers['Content-Type'] = contentType
  const make = () => new Request(BASE + target, { method, headers, body: body || undefined })
  return {
    send: () => workerFetch(make()),
    /** through an app whose deployment sets these vars (e.g. SIGNED_MUTATIONS_ONCE=on) */
    sendWith: (vars: Record<string, string>) => {
      const req = make()
      req.headers.set('CF-Connecting-IP', '10.88.0.1')
      return createApp().fetch(req, { ...env, ...vars } as unknown as Env, ctx)
    },
  }
}

describe('repeatable data-plane mutations: the same signed request twice in its hour is answered twice', () => {
  it('PUT /api/v2/extensions: the same schema applied twice answers created: true, then created: false', async () => {
    const tok = await freshToken()
    const req = await signedRequest(tok, 'PUT', '/api/v2/extensions', JSON.stringify(smallDoc('Repeat Ext', 'RPT')))
    const first = await req.send()
    expect(first.status).toBe(200)
    expect(((await first.json()) as { data: { created: boolean } }).data.created).toBe(true)
    const second = await req.send()
    expect(second.status).toBe(200)
    expect(((await second.json()) as { data: { created: boolean } }).data.created).toBe(false)
  })

  it('a wrong-content-type retry of the same body is answered 415 both times (not 401)', async () => {
    const tok = await freshToken()
    const req = await signedRequest(tok, 'PUT', '/api/v2/extensions', JSON.stringify(smallDoc('Ctype Ext', 'CTY')), 'text/plain')
    await expectEnvelope(await req.send(), 415, 'unsupported content type')
    await expectEnvelope(await req.send(), 415, 'unsupported content type')
  })

  it('POST /api/v2/file-upload/start (an empty body) starts a second job, and both jobs end', async () => {
    const tok = await freshToken()
    const start = await signedRequest(tok, 'POST', '/api/v2/file-upload/start')
    const a = await start.send()
    const b = await start.send()
    expect(a.status).toBe(201)
    expect(b.status).toBe(201)
    const idOf = async (r: Response) => ((await r.json()) as { data: { id: number } }).data.id
    const ids = [await idOf(a), await idOf(b)]
    expect(ids[0]).not.toBe(ids[1])
    for (const id of ids) {
      const end = await signedRequest(tok, 'POST', `/api/v2/file-upload/${id}/end`)
      expect((await end.send()).status).toBe(200)
      // ending an ended job again: the same request, answered (it changes nothing)
      expect((await end.send()).status).toBeLessThan(500)
      expect((await end.send()).status).not.toBe(401)
    }
  })

  it('the same selector PATCH twice (an overwrite run) is applied and answered twice', async () => {
    const admin = await adminSession()
    const created = await admin.raw('POST', '/api/v2/asset-group-tags/1/selectors', { name: `repeat-sel-${crypto.randomUUID().slice(0, 8)}`, seeds: [{ type: 1, value: 'S-1-5-21-1-1-1-5001' }] })
    expect(created.status).toBe(201)
    const sel = ((await created.json()) as { data: { id: number } }).data.id
    const tok = await freshToken()
    const patch = await signedRequest(tok, 'PATCH', `/api/v2/asset-group-tags/1/selectors/${sel}`, JSON.stringify({ description: 'kept by the collector' }))
    const first = await patch.send()
    const second = await patch.send()
    expect(first.status).toBe(200)
    expect(second.status).toBe(200)
    expect(((await second.json()) as { data: { description: string } }).data.description).toBe('kept by the collector')
  })

  it('an analysis request repeated is answered (202 both times)', async () => {
    const tok = await freshToken()
    const req = await signedRequest(tok, 'POST', '/api/v2/analysis')
    expect((await req.send()).status).toBe(202)
    expect((await req.send()).status).toBe(202)
  })
})

describe('one-use identity and access mutations: a copy is refused', () => {
  it('POST /api/v2/tokens (answers with a secret): the copy gets 401 and creates nothing', async () => {
    const tok = await freshToken()
    const name = `once-${crypto.randomUUID().slice(0, 8)}`
    const req = await signedRequest(tok, 'POST', '/api/v2/tokens', JSON.stringify({ token_name: name }))
    expect((await req.send()).status).toBe(200)
    await expectEnvelope(await req.send(), 401, 'already accepted')
    const admin = await adminSession()
    const names = (await admin.listTokens()).data.tokens.map((t: { name: string }) => t.name)
    expect(names.filter((n: string) => n === name)).toHaveLength(1)
  })

  it('PATCH /api/v2/bloodhound-users/{id}: a copy cannot re-promote a user an administrator has just demoted', async () => {
    const admin = await adminSession()
    const name = `promo-${crypto.randomUUID().slice(0, 8)}`
    const userId = (await admin.createUser({ principal_name: name, roles: ['Read-Only'], secret: 'correct-horse-battery' })).data.id
    const tok = await freshToken()
    const promote = await signedRequest(tok, 'PATCH', `/api/v2/bloodhound-users/${userId}`, JSON.stringify({ roles: ['Administrator'] }))
    expect((await promote.send()).status).toBeLessThan(300)
    expect((await admin.raw('PATCH', `/api/v2/bloodhound-users/${userId}`, { roles: ['Read-Only'] })).status).toBeLessThan(300)
    await expectEnvelope(await promote.send(), 401, 'already accepted')
    const after = (await (await admin.raw('GET', `/api/v2/bloodhound-users/${userId}`)).json()) as { data: { roles: unknown } }
    expect(JSON.stringify(after.data.roles)).toContain('Read-Only')
    expect(JSON.stringify(after.data.roles)).not.toContain('Administrator')
  })
})

describe('SIGNED_MUTATIONS_ONCE=on: every signed mutation is one-use', () => {
  it('a repeatable route is refused on its copy; a read-only route (Cypher) still repeats', async () => {
    const tok = await freshToken()
    const vars = { SIGNED_MUTATIONS_ONCE: 'on' }
    const ext = await signedRequest(tok, 'PUT', '/api/v2/extensions', JSON.stringify(smallDoc('Strict Ext', 'STX')))
    expect((await ext.sendWith(vars)).status).toBe(200)
    await expectEnvelope(await ext.sendWith(vars), 401, 'already accepted')
    const start = await signedRequest(tok, 'POST', '/api/v2/file-upload/start')
    expect((await start.sendWith(vars)).status).toBe(201)
    await expectEnvelope(await start.sendWith(vars), 401, 'already accepted')
    const cypher = await signedRequest(tok, 'POST', '/api/v2/graphs/cypher', JSON.stringify({ query: 'MATCH (n) RETURN count(n)' }))
    expect((await cypher.sendWith(vars)).status).toBe(200)
    expect((await cypher.sendWith(vars)).status).toBe(200)
  })

  it('off (the default): the same extension request repeats', async () => {
    const tok = await freshToken()
    const ext = await signedRequest(tok, 'PUT', '/api/v2/extensions', JSON.stringify(smallDoc('Lax Ext', 'LAX')))
    expect((await ext.sendWith({ SIGNED_MUTATIONS_ONCE: 'off' })).status).toBe(200)
    expect((await ext.sendWith({ SIGNED_MUTATIONS_ONCE: 'off' })).status).toBe(200)
  })
})
