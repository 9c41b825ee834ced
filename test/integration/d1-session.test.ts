import { env } from 'cloudflare:workers'
import { createExecutionContext, waitOnExecutionContext } from 'cloudflare:test'
import { describe, expect, it } from 'vitest'
import { createApp } from '../../src/app'
import { EdgeHoundClient, type Credentials } from '../../src/client'
import { adminSession, BASE, expectEnvelope } from '../helpers'

/**
 * D1 Sessions API (src/http/d1-session.ts): the same code path as production with replicas, on the local
 * database (no replicas). The binding is wrapped to record how each request's session was started.
 */
const app = createApp()
const started: string[] = []
const spyDb = new Proxy(env.DB, {
  get(target, prop) {
    const v = Reflect.get(target, prop, target)
    if (prop === 'withSession') {
      return (arg: string) => {
        started.push(arg)
        return target.withSession(arg)
      }
    }
    return typeof v === 'function' ? v.bind(target) : v
  },
})

function client(credentials: Credentials) {
  const e = { ...env, DB: spyDb } as Env
  return new EdgeHoundClient({
    baseUrl: BASE,
    credentials,
    fetch: async (req: Request) => {
      const h = new Headers(req.headers)
      h.set('CF-Connecting-IP', `10.77.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}`)
      const ctx = createExecutionContext()
      const res = await app.fetch(new Request(req, { headers: h }), e, ctx)
      await waitOnExecutionContext(ctx)
      return res
    },
  })
}

describe('D1 sessions and bookmarks', () => {
  it('write then read: the write answers a bookmark, the read started from it sees the write (token created then used)', async () => {
    const admin = client((await adminSession()).credentials)
    started.length = 0
    const created = await admin.raw('POST', '/api/v2/tokens', { token_name: `bookmark-${crypto.randomUUID()}` })
    expect(created.status).toBe(200)
    expect(started).toEqual(['first-primary'])
    const bookmark = created.headers.get('x-d1-bookmark')
    expect(bookmark).toBeTruthy()
    const token = ((await created.json()) as { data: { id: string; key: string } }).data

    started.length = 0
    const list = await admin.raw('GET', '/api/v2/tokens', undefined, { headers: { 'X-D1-Bookmark': bookmark! } })
    expect(list.status).toBe(200)
    expect(started).toEqual([bookmark])
    const ids = ((await list.json()) as { data: { tokens: { id: string }[] } }).data.tokens.map((t) => t.id)
    expect(ids).toContain(token.id)
    // the answer carries a bookmark at least as new (bookmarks compare as strings)
    const next = list.headers.get('x-d1-bookmark')
    expect(next).toBeTruthy()
    expect(next! >= bookmark!).toBe(true)

    // the new token, used with the bookmark of its creation
    const t = client({ kind: 'token', tokenId: token.id, tokenKey: token.key })
    started.length = 0
    expect((await t.raw('GET', '/api/v2/available-domains', undefined, { headers: { 'X-D1-Bookmark': bookmark! } })).status).toBe(200)
    expect(started).toEqual([bookmark])
  })

  it('a token created a moment ago verifies without the bookmark: its key is read from the primary', async () => {
    const admin = client((await adminSession()).credentials)
    const token = ((await (await admin.raw('POST', '/api/v2/tokens', { token_name: `primary-${crypto.randomUUID()}` })).json()) as { data: { id: string; key: string } }).data
    const t = client({ kind: 'token', tokenId: token.id, tokenKey: token.key })
    // A replica that has not seen the token yet: the session answers "no such row" for everything.
    const lagging = new Proxy(env.DB, {
      get(target, prop) {
        if (prop === 'withSession')
          return () => ({
            prepare: () => {
              const none = { bind: () => none, first: async () => null, all: async () => ({ results: [], success: true, meta: {} }), run: async () => ({ results: [], success: true, meta: {} }), raw: async () => [] }
              return none
            },
            batch: async () => [],
            getBookmark: () => null,
          })
        const v = Reflect.get(target, prop, target)
        return typeof v === 'function' ? v.bind(target) : v
      },
    })
    const e = { ...env, DB: lagging } as Env
    const ctx = createExecutionContext()
    const req = await t.buildRequest('GET', '/api/version')
    const res = await app.fetch(req, e, ctx)
    await waitOnExecutionContext(ctx)
    expect(res.status).toBe(200)
  })

  it('a read without a bookmark may start on any replica; a malformed bookmark is a 400 envelope', async () => {
    const admin = client((await adminSession()).credentials)
    started.length = 0
    const res = await admin.raw('GET', '/api/v2/tokens')
    expect(res.status).toBe(200)
    expect(started).toEqual(['first-unconstrained'])
    expect(res.headers.get('x-d1-bookmark')).toBeTruthy()
    await expectEnvelope(await admin.raw('GET', '/api/v2/tokens', undefined, { headers: { 'X-D1-Bookmark': 'not a bookmark; DROP' } }), 400, 'X-D1-Bookmark')
  })
})
