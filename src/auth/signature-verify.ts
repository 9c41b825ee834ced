/**
 * The server's check of a signed request: the same chain as signature.ts (d1 = HMAC(token key, METHOD +
 * target), d2 = HMAC(d1, first 13 characters of RequestDate), d3 = HMAC(d2, body); valid when d3 equals
 * the received signature), computed more cheaply. Kept apart from signature.ts because that module is also
 * the client's (browsers, Node), and this one needs the Workers runtime's `node:crypto` (nodejs_compat).
 *
 * Reasoning, next to the code on purpose:
 * - d1 still comes from the token's cached, non-extractable CryptoKey (authenticate.ts tokenKey), so the
 *   token key text never sits in the isolate's memory.
 * - d2 and d3 are keyed by per-request bytes (d1, d2), so a CryptoKey for them would be imported and
 *   thrown away on every request: two `importKey`s and two more asynchronous SubtleCrypto calls. node:crypto's
 *   `createHmac` computes the same HMAC-SHA256 (RFC 2104; test/unit/signature-verify.test.ts compares both
 *   on many inputs) synchronously from the raw bytes, with no key object to build.
 * - The comparison is `timingSafeEqual` over the 32 bytes: constant time, as `crypto.subtle.verify` was. A
 *   signature of another length is refused before it (the length of a valid signature is public: 32).
 *   Nothing branches on secret bytes.
 */
import { createHmac, timingSafeEqual } from 'node:crypto'
import { utf8 } from './encoding'

const SHA256_BYTES = 32

export async function verifyRequestSignature(
  tokenKey: CryptoKey,
  method: string,
  target: string,
  requestDate: string,
  body: ArrayBuffer | Uint8Array,
  signature: Uint8Array,
): Promise<boolean> {
  const d1 = new Uint8Array(await crypto.subtle.sign('HMAC', tokenKey, utf8.encode(method + target)))
  const d2 = createHmac('sha256', d1).update(utf8.encode(requestDate.slice(0, 13))).digest()
  const d3 = createHmac('sha256', d2).update(body instanceof Uint8Array ? body : new Uint8Array(body)).digest()
  if (signature.byteLength !== SHA256_BYTES || d3.byteLength !== SHA256_BYTES) return false
  return timingSafeEqual(d3, signature)
}
