/// <reference types="node" />
/**
 * Credentials for the load: sessions and API tokens created through the public API (login, POST
 * /api/v2/tokens) with the typed client, and requests signed ahead of time with it
 * (EdgeHoundClient.buildRequest). A signed request stays valid while its RequestDate is within an hour of
 * server time, far longer than any case runs, so the load generator can replay the same bytes.
 *
 * Rate limits are the shipped ones (55/s, burst 110 per token or session). Throughput cases spread their
 * load over a pool of tokens (or sessions) large enough that no bucket empties; each case gets its own
 * pool so one case's spending never carries into the next. Logins spend a per-IP budget (1/s, burst 5),
 * so each login of the session pool comes from its own CF-Connecting-IP.
 */
import { EdgeHoundClient, EdgeHoundError, type Credentials } from '../../src/client'
import type { LoadRequest } from './load'

export interface TokenCred {
  tokenId: string
  tokenKey: string
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** 10.x.y.z addresses derived from a counter: distinct, deterministic client IPs. */
export function benchIp(i: number, prefix = 10): string {
  return `${prefix}.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`
}

/** Retries a call that the service answers with 429, honouring Retry-After (the setup must never fail on it). */
async function with429Retry<T>(fn: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await fn()
    } catch (e) {
      if (!(e instanceof EdgeHoundError) || e.status !== 429 || attempt > 30) throw e
      const wait = Number(e.response.headers.get('retry-after') ?? '1')
      await sleep(Math.max(200, Math.min(5, wait) * 1000))
    }
  }
}

export async function login(baseUrl: string, username: string, password: string, ip: string): Promise<string> {
  const anon = new EdgeHoundClient({ baseUrl })
  const r = await with429Retry(() =>
    anon.call<{ data: { session_token: string } }>(
      'POST',
      '/api/v2/login',
      { login_method: 'secret', username, secret: password },
      { headers: { 'CF-Connecting-IP': ip } },
    ),
  )
  return r.data.session_token
}

/** Runs `fn` over `items` with at most `limit` in flight. */
export async function pool<T, R>(items: T[], limit: number, fn: (item: T, i: number) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length)
  let next = 0
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const i = next++
        out[i] = await fn(items[i], i)
      }
    }),
  )
  return out
}

export async function createTokens(baseUrl: string, jwt: string, count: number, label: string): Promise<TokenCred[]> {
  const admin = new EdgeHoundClient({ baseUrl, credentials: { kind: 'bearer', jwt } })
  return pool(Array.from({ length: count }, (_, i) => i), 4, async (i) => {
    const t = await with429Retry(() => admin.createToken(`bench-${label}-${i}`))
    return { tokenId: t.data.id, tokenKey: t.data.key }
  })
}

export async function createSessions(baseUrl: string, username: string, password: string, count: number, ipBase: number): Promise<string[]> {
  return pool(Array.from({ length: count }, (_, i) => i), 4, (i) => login(baseUrl, username, password, benchIp(ipBase + i, 172)))
}

/** A request as the load generator replays it: signed (or not) now, path = the exact signed target. */
export async function prepared(
  baseUrl: string,
  credentials: Credentials,
  method: string,
  target: string,
  body?: string,
  headers: Record<string, string> = {},
): Promise<LoadRequest> {
  const c = new EdgeHoundClient({ baseUrl, credentials })
  const req = await c.buildRequest(method, target, body, { headers, exactTarget: true })
  const h: Record<string, string> = {}
  req.headers.forEach((v, k) => (h[k] = v))
  return { method, path: target, headers: h, body }
}
