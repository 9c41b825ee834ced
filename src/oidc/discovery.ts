/**
 * OIDC discovery and the issuer's JWKS (OpenID Connect Discovery 1.0 §4), fetched through an injectable fetch
 * (tests replace it: inside workerd a test cannot open a port for a test provider) and cached per isolate with
 * a bound: at most MAX_ENTRIES issuers, each for CACHE_TTL_MS. Outbound answers are size-capped and time-limited;
 * anything unexpected is a DiscoveryError (the sign-in is refused; nothing is written).
 *
 * The discovered `issuer` must equal the configured issuer exactly (§4.3: otherwise a document served at one
 * issuer's URL could name another), and the three endpoints must be https URLs.
 */
import type { JSONWebKeySet } from 'jose'

export const CACHE_TTL_MS = 10 * 60 * 1000
const MAX_ENTRIES = 64
const MAX_BYTES = 256 * 1024
const TIMEOUT_MS = 5000

type Fetch = (input: string, init?: RequestInit) => Promise<Response>
let outbound: Fetch = (input, init) => fetch(input, init)

/** Tests only: route the OIDC module's outbound requests (discovery, JWKS, token endpoint) to `f`; also empties the cache. */
export function setOidcFetch(f: Fetch | null): void {
  outbound = f ?? ((input, init) => fetch(input, init))
  cache.clear()
}

export class DiscoveryError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'DiscoveryError'
  }
}

export interface IssuerConfig {
  issuer: string
  authorization_endpoint: string
  token_endpoint: string
  jwks_uri: string
}

interface Entry {
  config: IssuerConfig
  jwks: JSONWebKeySet
  fetchedAt: number
}
const cache = new Map<string, Entry>()

/** A request through the injectable fetch with a timeout and a body-size cap; returns the parsed JSON. */
export async function fetchJson(url: string, init: RequestInit = {}): Promise<{ status: number; json: unknown }> {
  let res: Response
  try {
    res = await outbound(url, { ...init, redirect: 'manual', signal: AbortSignal.timeout(TIMEOUT_MS) })
  } catch (e) {
    throw new DiscoveryError(`${url}: request failed (${e instanceof Error ? e.message : String(e)})`)
  }
  const text = await res.text()
  if (text.length > MAX_BYTES) throw new DiscoveryError(`${url}: answer over ${MAX_BYTES} bytes`)
  try {
    return { status: res.status, json: JSON.parse(text) as unknown }
  } catch {
    return { status: res.status, json: null }
  }
}

const httpsUrl = (v: unknown): v is string => {
  if (typeof v !== 'string') return false
  try {
    return new URL(v).protocol === 'https:'
  } catch {
    return false
  }
}

async function load(issuer: string): Promise<Entry> {
  const url = `${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`
  const d = await fetchJson(url, { headers: { Accept: 'application/json' } })
  const j = d.json as Record<string, unknown> | null
  if (d.status !== 200 || !j || typeof j !== 'object') throw new DiscoveryError(`${url}: HTTP ${d.status}, not a discovery document`)
  if (j.issuer !== issuer) throw new DiscoveryError(`${url}: the document names issuer ${JSON.stringify(j.issuer)}, not ${JSON.stringify(issuer)}`)
  for (const k of ['authorization_endpoint', 'token_endpoint', 'jwks_uri'] as const)
    if (!httpsUrl(j[k])) throw new DiscoveryError(`${url}: ${k} is missing or not an https URL`)
  const config = { issuer, authorization_endpoint: j.authorization_endpoint as string, token_endpoint: j.token_endpoint as string, jwks_uri: j.jwks_uri as string }
  const k = await fetchJson(config.jwks_uri, { headers: { Accept: 'application/json' } })
  const keys = (k.json as { keys?: unknown } | null)?.keys
  if (k.status !== 200 || !Array.isArray(keys)) throw new DiscoveryError(`${config.jwks_uri}: HTTP ${k.status}, not a JWK set`)
  return { config, jwks: { keys: keys as JSONWebKeySet['keys'] }, fetchedAt: Date.now() }
}

/**
 * The issuer's configuration and JWKS, from the cache when fresh. `refresh` forces a new fetch (used once when
 * an ID token names a key the cached JWKS does not have: the issuer may have rotated its keys).
 */
export async function discover(issuer: string, refresh = false): Promise<{ config: IssuerConfig; jwks: JSONWebKeySet }> {
  const hit = cache.get(issuer)
  if (hit && !refresh && Date.now() - hit.fetchedAt < CACHE_TTL_MS) return hit
  const e = await load(issuer)
  cache.delete(issuer)
  if (cache.size >= MAX_ENTRIES) cache.delete(cache.keys().next().value as string) // oldest first
  cache.set(issuer, e)
  return e
}
