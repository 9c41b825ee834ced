import { env } from 'cloudflare:workers'
import { createExecutionContext, waitOnExecutionContext } from 'cloudflare:test'
import { describe, expect, it } from 'vitest'
import { createApp } from '../../src/app'
import { BookmarkMemory, EdgeHoundClient, type Credentials } from '../../src/client'
import { adminSession, BASE } from '../helpers'

/**
 * The typed client passes `X-D1-Bookmark` on by itself (src/client/index.ts): a read after the client's own
 * write starts from the write's bookmark (read-your-writes with replicas, src/http/d1-session.ts). The DB
 * binding is wrapped to record what each request's session was started from.
 */
const app = createApp()
const started: string[] = []
const spyDb = new Proxy(env.DB, {
  get(target, prop) {
    const v = Reflect.get(target, prop, target)
    if (prop === 'withSession')
      return (arg: string) => {
        started.push(arg)
        return target.withSession(arg)
      }
    return typeof v === 'function' ? v.bind(target) : v
  },
})
const sent: (string | null)[] = []

function client(credentials: Credentials, bookmarks?: BookmarkMemory | false) {
  const e = { ...env, DB: spyDb } as Env
  return new EdgeHoundClient({
    baseUrl: BASE,
    credentials,
    bookmarks,
    fetch: async (req: Request) => {
      sent.push(req.headers.get('x-d1-bookmark'))
      const h = new Headers(req.headers)
      h.set('CF-Connecting-IP', `10.78.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}`)
      const ctx = createExecutionContext()
      const res = await app.fetch(new Request(req, { headers: h }), e, ctx)
      await waitOnExecutionContext(ctx)
      return res
    },
  })
}

describe('the client sends the newest bookmark back', () => {
  it('write then read through the client: the read starts from the write\'s bookmark and sees the write; a derived token client too', async () => {
    const admin = client((await adminSession()).credentials)
    expect(admin.bookmarks?.value).toBeUndefined()
    started.length = 0
    sent.length = 0
    const created = (await admin.createToken(`client-bookmark-${crypto.randomUUID()}`)).data
    // the first request had nothing to send; the write started on the primary and answered a bookmark
    expect(sent).toEqual([null])
    expect(started).toEqual(['first-primary'])
    const afterWrite = admin.bookmarks!.value
    expect(afterWrite).toBeTruthy()

    started.length = 0
    sent.length = 0
    const list = await admin.listTokens()
    expect(sent).toEqual([afterWrite])
    expect(started).toEqual([afterWrite]) // the session started at least as new as the write
    expect(list.data.tokens.map((t) => t.id)).toContain(created.id)
    expect(admin.bookmarks!.value! >= afterWrite!).toBe(true)

    // The token, used by a client derived from the administrator's: the same memory, so its first
    // request already carries the bookmark of the token's creation (or a newer one).
    const held = admin.bookmarks!.value
    const t = admin.withCredentials({ kind: 'token', tokenId: created.id, tokenKey: created.key })
    expect(t.bookmarks).toBe(admin.bookmarks)
    started.length = 0
    sent.length = 0
    expect((await t.raw('GET', '/api/v2/available-domains')).status).toBe(200)
    expect(sent).toEqual([held])
    expect(started).toEqual([held])
  })

  it('an older bookmark never replaces a newer one; bookmarks: false sends none', async () => {
    const m = new BookmarkMemory()
    m.note(new Response(null, { headers: { 'X-D1-Bookmark': '00000002-0000000a' } }))
    m.note(new Response(null, { headers: { 'X-D1-Bookmark': '00000001-000000ff' } }))
    m.note(new Response(null))
    expect(m.value).toBe('00000002-0000000a')
    m.note(new Response(null, { headers: { 'X-D1-Bookmark': '00000002-0000000b' } }))
    expect(m.value).toBe('00000002-0000000b')

    const plain = client((await adminSession()).credentials, false)
    expect(plain.bookmarks).toBeNull()
    started.length = 0
    sent.length = 0
    await plain.createToken(`no-bookmark-${crypto.randomUUID()}`)
    await plain.listTokens()
    expect(sent).toEqual([null, null])
    expect(started).toEqual(['first-primary', 'first-unconstrained'])
  })
})
