/**
 * Cost-aware admission through the real routes: declared weights, in-flight caps per token and per user,
 * and the cap on API tokens per user. The rules themselves: test/unit/ratelimit-cost.test.ts.
 */
import { beforeAll, describe, expect, it } from 'vitest'
import { adminSession, BASE, expectEnvelope, userWithRole as testUser } from '../helpers'
import { EdgeHoundClient } from '../../src/client'
import { env, hfetch } from '../hardening/lib'
import { ingest } from '../../src/client/graph'
import { cypherComputeMs, WEIGHT } from '../../src/ratelimit/cost'
import { adPayload, CORP, ID } from '../fixtures/graph/corp'

/**
 * The worker's bindings with cost-aware admission on, as shipped (the suites' default is off), and without
 * isolate leases: a lease pre-pays tokens and forfeits what it still holds when it expires (1 s), so on a
 * loaded machine a slow request between two readings made `r=` drop by more than the weights asserted here
 * (CI: 104 where 105 was the floor). Leases have their own tests (test/unit/lease.test.ts).
 */
const COST_ENV = { ...env, RATE_LIMIT_COST: 'on', LIMITER_LEASE_MS: '0' } as unknown as Env
const client = (credentials: { kind: 'token'; tokenId: string; tokenKey: string }) =>
  new EdgeHoundClient({ baseUrl: BASE, credentials, fetch: (r) => hfetch(r, COST_ENV) })
/** A user (set up with the default bindings) whose token's requests go through COST_ENV. */
async function userWithRole(role: string) {
  const u = await testUser(role)
  return { ...u, client: client({ kind: 'token', tokenId: u.tokenId, tokenKey: u.tokenKey }) }
}

const remaining = (res: Response) => Number(/r=(-?\d+)/.exec(res.headers.get('ratelimit') ?? '')?.[1])

let admin: EdgeHoundClient

beforeAll(async () => {
  admin = await adminSession()
  await ingest(admin, adPayload)
})

describe('declared weights', () => {
  it('each route takes its declared weight from the token’s bucket (RateLimit r= after one request of a fresh token)', async () => {
    const cases: [string, number][] = [
      ['/api/version', 1],
      ['/api/v2/available-domains', 1],
      [`/api/v2/search?q=alice`, WEIGHT.search],
      [`/api/v2/graphs/shortest-path?start_node=${ID.alice}&end_node=${CORP}`, WEIGHT.path],
      [`/api/v2/users/${ID.alice}`, WEIGHT.counts],
      [`/api/v2/users/${ID.alice}?counts=false`, 1],
      [`/api/v2/users/${ID.alice}/memberships`, WEIGHT.list],
      [`/api/v2/users/${ID.alice}/memberships?type=graph`, WEIGHT.graph],
    ]
    for (const [target, weight] of cases) {
      const { client: c } = await userWithRole('Read-Only')
      const res = await c.raw('GET', target)
      expect(res.status, target).toBe(200)
      expect(remaining(res), target).toBe(110 - weight)
    }
  })

  it('an upload weighs 2 plus one per MiB of its Content-Length', async () => {
    const { client: c } = await userWithRole('User')
    const job = (await c.call<{ data: { id: number } }>('POST', '/api/v2/file-upload/start')).data.id
    // just over 1 MiB: two started MiB
    const body = JSON.stringify({ graph: { nodes: [{ id: 'W-1', kinds: ['A'] }] } }) + ' '.repeat(1024 * 1024 + 10)
    const before = remaining(await c.raw('GET', '/api/version'))
    const t0 = Date.now()
    // (a request built in-process has no Content-Length unless given; one from the network has it)
    const res = await c.raw('POST', `/api/v2/file-upload/${job}`, body, { headers: { 'Content-Length': String(new TextEncoder().encode(body).length) } })
    const refill = Math.ceil((55 * (Date.now() - t0)) / 1000)
    expect(res.status, await res.clone().text()).toBe(202)
    // the bucket refills at 55/s meanwhile
    expect(remaining(res)).toBeGreaterThanOrEqual(before - (WEIGHT.upload + 2))
    expect(remaining(res)).toBeLessThanOrEqual(before - (WEIGHT.upload + 2) + refill)
    // without a Content-Length (a streamed body) it weighs the most a body may hold: 2 + 20
    const again = await c.raw('POST', `/api/v2/file-upload/${job}`, JSON.stringify({ graph: { nodes: [{ id: 'W-2', kinds: ['A'] }] } }))
    expect(again.status).toBe(202)
    expect(remaining(again)).toBeLessThanOrEqual(remaining(res) - (WEIGHT.upload + 20) + Math.ceil((55 * (Date.now() - t0)) / 1000))
  })

  it('the OpenAPI document gives every authenticated operation its weight (x-rate-limit-cost)', async () => {
    const doc = (await (await admin.raw('GET', '/api/v2/spec')).json()) as { paths: Record<string, Record<string, { 'x-rate-limit-cost'?: unknown }>> }
    expect(doc.paths['/api/v2/graphs/shortest-path'].get['x-rate-limit-cost']).toBe(WEIGHT.path)
    expect(doc.paths['/api/v2/available-domains'].get['x-rate-limit-cost']).toBe(1)
    expect(doc.paths['/api/v2/file-upload/{id}'].post['x-rate-limit-cost']).toMatch(/plus 1 per MiB/)
    expect(doc.paths['/api/v2/users/{object_id}/memberships'].get['x-rate-limit-cost']).toMatch(/with type=graph/)
  })
})

describe('measured time', () => {
  it('a weighted read pays for its time when it ends; a write and a cheap read do not', async () => {
    // one token per millisecond past the first 0, and a refill slow enough not to blur the figures
    const env1 = { ...COST_ENV, RATE_LIMIT_MS_PER_TOKEN: '1', RATE_LIMIT_FREE_MS: '0', RATE_LIMIT_PER_SECOND: '1' } as unknown as Env
    const u = await testUser('Read-Only')
    const c = new EdgeHoundClient({ baseUrl: BASE, credentials: { kind: 'token', tokenId: u.tokenId, tokenKey: u.tokenKey }, fetch: (r) => hfetch(r, env1) })
    const t0 = Date.now()
    const path = await c.raw('GET', `/api/v2/graphs/shortest-path?start_node=${ID.alice}&end_node=${CORP}`)
    const tookMs = Date.now() - t0
    expect(path.status).toBe(200)
    expect(remaining(path)).toBe(110 - WEIGHT.path)
    // hfetch waits for the request's waitUntil work, so the release (and its charge) has happened
    const next = await c.raw('GET', '/api/version')
    const charged = 110 - WEIGHT.path - 1 - remaining(next)
    expect(charged).toBeGreaterThan(0)
    expect(charged).toBeLessThanOrEqual(tookMs + 2)
    // a cheap read is not measured: the one after it pays 1
    const again = await c.raw('GET', '/api/version')
    expect(remaining(again)).toBeGreaterThanOrEqual(remaining(next) - 1)
  })
})

describe('in-flight caps', () => {
  const busyToken = /too many requests in flight for this API token: at most 4 at a time/
  const busyUser = /too many requests in flight for this user: at most 8 at a time/

  it('a token may have 4 weighted requests running; the rest are refused with 429 and Retry-After: 1, charged nothing', async () => {
    const { client: c } = await userWithRole('Read-Only')
    const target = `/api/v2/graphs/shortest-path?start_node=${ID.alice}&end_node=${CORP}`
    const results = await Promise.all(Array.from({ length: 10 }, () => c.raw('GET', target)))
    const statuses = results.map((r) => r.status)
    expect(statuses.every((s) => s === 200 || s === 429)).toBe(true)
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThanOrEqual(4)
    const refused = results.filter((r) => r.status === 429)
    expect(refused.length).toBeGreaterThan(0)
    for (const r of refused) {
      expect(r.headers.get('retry-after')).toBe('1')
      await expectEnvelope(r, 429, busyToken)
    }
    // cheap requests take no slot: 20 at once all pass (a fresh token: the first one's weighted reads
    // were also charged their measured time)
    const { client: d } = await userWithRole('Read-Only')
    const cheap = await Promise.all(Array.from({ length: 20 }, () => d.raw('GET', '/api/v2/available-domains')))
    expect(cheap.map((r) => r.status)).toEqual(cheap.map(() => 200))
  })

  it('a user may have 8 weighted requests running across all their tokens and sessions', async () => {
    const u = await userWithRole('Read-Only')
    const tokens = [u.client]
    for (let i = 0; i < 3; i++) {
      const t = await u.admin.createToken(`extra-${i}`, u.userId)
      tokens.push(client({ kind: 'token', tokenId: t.data.id, tokenKey: t.data.key }))
    }
    const target = `/api/v2/graphs/shortest-path?start_node=${ID.alice}&end_node=${CORP}`
    // 4 tokens × 3 = 12 at once: within every token's cap, over the user's
    const results = await Promise.all(tokens.flatMap((t) => Array.from({ length: 3 }, () => t.raw('GET', target))))
    const refused = results.filter((r) => r.status === 429)
    expect(results.filter((r) => r.status === 200).length).toBeGreaterThanOrEqual(8)
    expect(refused.length).toBeGreaterThan(0)
    for (const r of refused) {
      const body = await expectEnvelope(r, 429, busyUser)
      expect(body.errors[0].context).toBe('middleware')
    }
  })
})

describe('Cypher: weighted, in-flight slots, charged what it used', () => {
  const cypher = (c: EdgeHoundClient, query: string) => c.raw('POST', '/api/v2/graphs/cypher', { query })
  /** many store round trips on the corp graph: each query holds its slot for a while */
  const SLOW = 'MATCH (a)-[*1..4]-(b) RETURN count(*) AS n'

  it('a query takes its declared weight from the token’s bucket, like the other expensive reads', async () => {
    const { client: c } = await userWithRole('Read-Only')
    const res = await cypher(c, 'MATCH (n) RETURN count(n) AS n')
    expect(res.status).toBe(200)
    expect(remaining(res)).toBe(110 - WEIGHT.cypher)
    const doc = (await (await admin.raw('GET', '/api/v2/spec')).json()) as { paths: Record<string, Record<string, { 'x-rate-limit-cost'?: unknown }>> }
    expect(doc.paths['/api/v2/graphs/cypher'].post['x-rate-limit-cost']).toBe(WEIGHT.cypher)
  })

  it('concurrent queries of one token beyond its in-flight cap are refused with 429 and the envelope, while another user is answered', async () => {
    const { client: c } = await userWithRole('Read-Only')
    const { client: other } = await userWithRole('Read-Only')
    const flood = Array.from({ length: 10 }, () => cypher(c, SLOW))
    const meanwhile = [cypher(other, 'MATCH (n:User) RETURN n.name AS name'), other.raw('GET', '/api/version')]
    const [results, answered] = await Promise.all([Promise.all(flood), Promise.all(meanwhile)])
    const statuses = results.map((r) => r.status)
    expect(statuses.every((s) => s === 200 || s === 429), String(statuses)).toBe(true)
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThanOrEqual(4)
    const refused = results.filter((r) => r.status === 429)
    expect(refused.length).toBeGreaterThan(0)
    for (const r of refused) {
      expect(r.headers.get('retry-after')).toBe('1')
      await expectEnvelope(r, 429, /too many requests in flight for this API token: at most 4 at a time/)
    }
    expect(answered.map((r) => r.status)).toEqual([200, 200])
  })

  it('a heavy query is charged what it used when it ends: the next request shows the smaller budget (RateLimit)', async () => {
    // one token per millisecond, none free, a refill slow enough not to blur the figures (as 'measured time')
    const env1 = { ...COST_ENV, RATE_LIMIT_MS_PER_TOKEN: '1', RATE_LIMIT_FREE_MS: '0', RATE_LIMIT_PER_SECOND: '1' } as unknown as Env
    const u = await testUser('Read-Only')
    const c = new EdgeHoundClient({ baseUrl: BASE, credentials: { kind: 'token', tokenId: u.tokenId, tokenKey: u.tokenKey }, fetch: (r) => hfetch(r, env1) })
    // 100,000 list elements built (range and comprehension): ~50 ms of computation the clock does not see
    const t0 = Date.now()
    const heavy = await cypher(c, 'RETURN size([x IN range(1, 50000) | x]) AS n')
    const tookMs = Date.now() - t0
    expect(heavy.status).toBe(200)
    expect(remaining(heavy)).toBe(110 - WEIGHT.cypher)
    // hfetch waits for the request's waitUntil work, so the release (and its charge) has happened
    const next = await c.raw('GET', '/api/version')
    const charged = 110 - WEIGHT.cypher - 1 - remaining(next)
    const refill = Math.ceil((Date.now() - t0) / 1000) // 1 token per second meanwhile
    expect(charged).toBeGreaterThanOrEqual(Math.floor(cypherComputeMs({ values: 100_000, answerBytes: 0 })) - refill)
    expect(charged).toBeLessThanOrEqual(tookMs + cypherComputeMs({ values: 100_002, answerBytes: 1024 }) + 2)
    // a refused query has done its work too: stopped at the value limit (2,000,000), charged ~1 s of it (a
    // fresh token, 20 ms per token so that the charge stays within the bucket: RateLimit shows no debt)
    const env20 = { ...COST_ENV, RATE_LIMIT_MS_PER_TOKEN: '20', RATE_LIMIT_FREE_MS: '0', RATE_LIMIT_PER_SECOND: '1' } as unknown as Env
    const v = await testUser('Read-Only')
    const d = new EdgeHoundClient({ baseUrl: BASE, credentials: { kind: 'token', tokenId: v.tokenId, tokenKey: v.tokenKey }, fetch: (r) => hfetch(r, env20) })
    const t1 = Date.now()
    const stopped = await cypher(d, 'UNWIND range(1, 30) AS i RETURN size([x IN range(1, 100000) | x]) AS n')
    await expectEnvelope(stopped, 400, /value limit/)
    const after = remaining(await d.raw('GET', '/api/version'))
    expect(110 - WEIGHT.cypher - 1 - after).toBeGreaterThanOrEqual(Math.floor(cypherComputeMs({ values: 2_000_000, answerBytes: 0 }) / 20) - Math.ceil((Date.now() - t1) / 1000))
  })
})

describe('API tokens per user', () => {
  it('at most 25: the 26th is refused with the over-budget 400 and not created', async () => {
    const u = await userWithRole('Read-Only') // holds one
    for (let i = 1; i < 25; i++) await u.admin.createToken(`t-${i}`, u.userId)
    const res = await u.admin.raw('POST', '/api/v2/tokens', { token_name: 'one too many', user_id: u.userId })
    const body = await expectEnvelope(res, 400)
    expect(body.errors).toEqual([
      {
        context: 'user_id',
        message: 'a new API token exceeds the API tokens per user budget of 25: delete tokens that are no longer used (DELETE /api/v2/tokens/{id})',
      },
    ])
    const list = (await u.admin.call<{ data: { tokens: { user_id: string }[] } }>('GET', `/api/v2/tokens?user_id=${u.userId}`)).data.tokens
    expect(list.filter((t) => t.user_id === u.userId)).toHaveLength(25)
    // another user is not affected
    expect((await userWithRole('Read-Only')).tokenId).toMatch(/^[0-9a-f-]{36}$/)
  })
})
