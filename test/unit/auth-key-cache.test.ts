import { describe, expect, it } from 'vitest'
import { env } from 'cloudflare:workers'
import { forgetTokenKey, tokenKey } from '../../src/auth/authenticate'
import { computeSignature, verifySignature } from '../../src/auth/signature'
import { newTokenKey, sealTokenKey } from '../../src/auth/token-crypto'

/**
 * The isolate's token-key cache in front of D1 (src/auth/authenticate.ts `tokenKey`): single flight for
 * cold tokens, nothing cached on failure or for unknown ids, revocation (forgetTokenKey) wins over a load
 * in flight. The DB here is a fake that counts `getSealedKey` reads and lets the test decide when they end.
 */
const SECRET = env.TOKEN_ENCRYPTION_KEY

type Row = { user_id: string; key_sealed: string } | null
function fakeDb(answer: () => Promise<Row>) {
  const db = {
    reads: 0,
    prepare(sql: string) {
      expect(sql).toContain('FROM api_tokens WHERE id = ?')
      return { bind: () => ({ first: () => (db.reads++, answer()) }) }
    },
  }
  return db
}
function gate() {
  let open!: () => void
  const opened = new Promise<void>((r) => (open = r))
  return { open, opened }
}
async function sealed(id: string) {
  const key = newTokenKey()
  return { key, row: { user_id: 'u', key_sealed: await sealTokenKey(SECRET, id, key) } }
}
const asEnv = (db: ReturnType<typeof fakeDb>) => ({ DB: db as unknown as D1Database })

describe('token key cache (single flight)', () => {
  it('N concurrent requests of a cold token cause one D1 read, then none while warm', async () => {
    const id = crypto.randomUUID()
    const { key, row } = await sealed(id)
    const g = gate()
    const db = fakeDb(async () => (await g.opened, row))
    const loads = Array.from({ length: 25 }, () => tokenKey(asEnv(db), SECRET, id))
    g.open()
    const keys = await Promise.all(loads)
    expect(db.reads).toBe(1)
    expect(new Set(keys).size).toBe(1)
    // the shared key is the token's key: it verifies what the key text signed
    const date = '2026-01-01T00:00:00Z'
    const sig = await computeSignature(key, 'GET', '/api/version', date, new Uint8Array())
    expect(await verifySignature(keys[0]!, 'GET', '/api/version', date, new Uint8Array(), sig)).toBe(true)
    expect(await tokenKey(asEnv(db), SECRET, id)).toBe(keys[0])
    expect(db.reads).toBe(1)
    forgetTokenKey(id)
    await tokenKey(asEnv(db), SECRET, id)
    expect(db.reads).toBe(2)
    forgetTokenKey(id)
  })

  it('a failed read fails every waiter and is not cached: the next request reads again', async () => {
    const id = crypto.randomUUID()
    const { row } = await sealed(id)
    const g = gate()
    let fail = true
    const db = fakeDb(async () => {
      await g.opened
      if (fail) throw new Error('D1 unavailable')
      return row
    })
    const loads = Array.from({ length: 10 }, () => tokenKey(asEnv(db), SECRET, id))
    g.open()
    const settled = await Promise.allSettled(loads)
    expect(settled.every((s) => s.status === 'rejected')).toBe(true)
    expect(db.reads).toBe(1)
    fail = false
    expect(await tokenKey(asEnv(db), SECRET, id)).not.toBeNull()
    expect(db.reads).toBe(2)
    forgetTokenKey(id)
  })

  it('unknown ids are shared while in flight but never cached (floods of random ids cannot fill the cache)', async () => {
    const id = crypto.randomUUID()
    const db = fakeDb(async () => null)
    expect(await Promise.all([tokenKey(asEnv(db), SECRET, id), tokenKey(asEnv(db), SECRET, id)])).toEqual([null, null])
    expect(db.reads).toBe(1)
    expect(await tokenKey(asEnv(db), SECRET, id)).toBeNull()
    expect(db.reads).toBe(2)
  })

  it('a key sealed for another token id does not open (the load fails, nothing is cached)', async () => {
    const id = crypto.randomUUID()
    const { row } = await sealed(crypto.randomUUID())
    const db = fakeDb(async () => row)
    await expect(tokenKey(asEnv(db), SECRET, id)).rejects.toThrow()
    await expect(tokenKey(asEnv(db), SECRET, id)).rejects.toThrow()
    expect(db.reads).toBe(2)
  })

  it('revocation during a load wins: the key loaded before it is not cached', async () => {
    const id = crypto.randomUUID()
    const { row } = await sealed(id)
    const g = gate()
    const db = fakeDb(async () => (await g.opened, row))
    const inFlight = tokenKey(asEnv(db), SECRET, id)
    forgetTokenKey(id) // the token is revoked while its row is being read
    g.open()
    await inFlight
    // the next request does not get the key loaded before the revocation from the cache: it reads D1
    const after = fakeDb(async () => null)
    expect(await tokenKey(asEnv(after), SECRET, id)).toBeNull()
    expect(after.reads).toBe(1)
  })
})
