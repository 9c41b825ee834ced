/**
 * Signed requests (spec "Authentication", scheme `svcsignature`, BloodHound alias `bhesignature`).
 *
 *   d1 = HMAC-SHA256(key = UTF-8 bytes of the token key text, msg = METHOD + request target)
 *   d2 = HMAC-SHA256(key = d1, msg = first 13 characters of the RequestDate header, "YYYY-MM-DDTHH")
 *   d3 = HMAC-SHA256(key = d2, msg = the raw body bytes; empty for GET)
 *   Signature = base64(d3)
 *
 * Reasoning, kept next to the code on purpose:
 * - The request target is the path plus the raw query string exactly as the worker received it
 *   (`pathname + search` of request.url, which keeps percent-escapes and parameter order). It is never
 *   rebuilt from parsed parameters, because clients sign what they send.
 * - The date part is the client's own text, not a re-formatted time: the client signs the hour in its own
 *   offset, and BloodHound's server does the same (it re-formats in the client's offset).
 * - The last step uses `crypto.subtle.verify`, which compares in constant time; so does the fallback
 *   `timingSafeEqual`. Nothing here branches on secret bytes.
 * - Skew is checked against server time in absolute terms (±1 hour, as BloodHound), separately from the
 *   hour truncation. The offset is not signed, so that check alone would let a replayer rewrite it and
 *   stretch the validity to about a day; request-date.ts and the token's limiter object bound it to
 *   2 h 5 min (and mutations to one use).
 */
import { utf8 } from './encoding'

const RFC3339 =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|([+-])(\d{2}):(\d{2}))$/

/** Parses an RFC 3339 date-time (fractional seconds and any offset allowed). Null when malformed. */
export function parseRfc3339(s: string): Date | null {
  return parseRfc3339WithOffset(s)?.time ?? null
}

/**
 * As parseRfc3339, also giving the offset in minutes east of UTC ("Z" and "-00:00" are 0). The offset is
 * not signed: see request-date.ts for what the service does about that.
 */
export function parseRfc3339WithOffset(s: string): { time: Date; offsetMinutes: number } | null {
  const m = RFC3339.exec(s)
  if (!m) return null
  const [, y, mo, d, h, mi, se, frac, , sign, oh, om] = m
  const year = +y, month = +mo, day = +d, hour = +h, minute = +mi, second = +se
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 60) return null
  const dim = new Date(Date.UTC(year, month, 0)).getUTCDate()
  if (day > dim) return null
  if (oh !== undefined && (+oh > 23 || +om > 59)) return null
  const ms = frac ? Math.floor(Number(`0${frac}`) * 1000) : 0
  let t = Date.UTC(year, month - 1, day, hour, minute, Math.min(second, 59), ms)
  const offsetMinutes = sign ? (sign === '+' ? 1 : -1) * (+oh * 60 + +om) || 0 : 0
  t -= offsetMinutes * 60_000
  return { time: new Date(t), offsetMinutes }
}

async function hmacKey(raw: Uint8Array | ArrayBuffer, usage: ('sign' | 'verify')[] = ['sign']): Promise<CryptoKey> {
  return crypto.subtle.importKey('raw', raw as BufferSource, { name: 'HMAC', hash: 'SHA-256' }, false, usage)
}

async function hmac(key: Uint8Array | ArrayBuffer | CryptoKey, msg: Uint8Array | ArrayBuffer): Promise<ArrayBuffer> {
  // raw bytes are imported; a CryptoKey (the cached first link) is used as it is
  const k = key instanceof ArrayBuffer || ArrayBuffer.isView(key) ? await hmacKey(key) : key
  return crypto.subtle.sign('HMAC', k, msg as BufferSource)
}

/**
 * The token key imported once as a non-extractable HMAC key (the first link of the chain), for callers
 * that verify many requests of the same token. Only this first import can be reused: the later links are
 * keyed by d1 and d2, which change with the method, target, hour and body. Holding the CryptoKey (instead
 * of the key text) means the cached form cannot be read back out of the isolate.
 */
export function importTokenKey(tokenKey: string): Promise<CryptoKey> {
  return hmacKey(utf8.encode(tokenKey))
}

/** d2 of the chain: depends on the key, method, target and date hour, not on the body. */
async function chainKey(tokenKey: string | CryptoKey, method: string, target: string, requestDate: string): Promise<ArrayBuffer> {
  const d1 = await hmac(typeof tokenKey === 'string' ? utf8.encode(tokenKey) : tokenKey, utf8.encode(method + target))
  return hmac(d1, utf8.encode(requestDate.slice(0, 13)))
}

export async function computeSignature(
  tokenKey: string | CryptoKey,
  method: string,
  target: string,
  requestDate: string,
  body: Uint8Array | ArrayBuffer,
): Promise<Uint8Array> {
  const d2 = await chainKey(tokenKey, method, target, requestDate)
  return new Uint8Array(await hmac(d2, body))
}

/**
 * Constant-time verification of a received signature (already base64-decoded). `tokenKey` is the key
 * text or its `importTokenKey` form; both give the same result.
 */
export async function verifySignature(
  tokenKey: string | CryptoKey,
  method: string,
  target: string,
  requestDate: string,
  body: Uint8Array | ArrayBuffer,
  signature: Uint8Array,
): Promise<boolean> {
  const d2 = await chainKey(tokenKey, method, target, requestDate)
  const key = await hmacKey(d2, ['verify'])
  return crypto.subtle.verify('HMAC', key, signature as BufferSource, body as BufferSource)
}

export const MAX_CLOCK_SKEW_MS = 60 * 60 * 1000

/** Null when within ±1 h; otherwise a message giving the skew beyond the allowance. */
export function skewError(requestTime: Date, now: Date): string | null {
  const diff = requestTime.getTime() - now.getTime()
  if (Math.abs(diff) <= MAX_CLOCK_SKEW_MS) return null
  const beyond = ((Math.abs(diff) - MAX_CLOCK_SKEW_MS) / 60_000).toFixed(2)
  const minutes = (Math.abs(diff) / 60_000).toFixed(2)
  return `RequestDate is ${minutes} minutes ${diff > 0 ? 'ahead of' : 'behind'} server time (${beyond} minutes beyond the allowed 60); server time is ${now.toISOString()}`
}

/** The signed request target: path plus raw query string, exactly as received. */
export function requestTarget(url: string): string {
  // Cut the origin off the URL text itself rather than re-serialising a parsed URL, so that a bare
  // trailing "?" and every escape survive exactly as the runtime handed them over.
  const start = url.indexOf('/', url.indexOf('//') + 2)
  const target = start === -1 ? '/' : url.slice(start)
  const hash = target.indexOf('#')
  return hash === -1 ? target : target.slice(0, hash)
}
