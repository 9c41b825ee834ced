/**
 * API token keys at rest. The server must recompute the HMAC chain, so it needs the key itself and
 * cannot store a hash. Keys are therefore sealed with AES-256-GCM under TOKEN_ENCRYPTION_KEY (a Worker
 * secret, never in D1): a fresh 12-byte IV per key, and the token id as additional authenticated data so
 * a ciphertext copied onto another token row does not decrypt. Stored form: base64(iv || ciphertext+tag).
 * D1 alone (a backup, a leaked export) therefore reveals no key in any encoding.
 */
import { fromBase64Strict, randomBytes, toBase64, utf8 } from './encoding'

const keyCache = new Map<string, Promise<CryptoKey>>()

function aesKey(secretB64: string): Promise<CryptoKey> {
  let k = keyCache.get(secretB64)
  if (!k) {
    const raw = fromBase64Strict(secretB64)
    if (!raw || raw.length !== 32) throw new Error('TOKEN_ENCRYPTION_KEY must be base64 of 32 bytes')
    k = crypto.subtle.importKey('raw', raw, 'AES-GCM', false, ['encrypt', 'decrypt'])
    keyCache.set(secretB64, k)
  }
  return k
}

/** A new token key: 40 random bytes as standard base64 text (56 characters), as BloodHound issues them. */
export function newTokenKey(): string {
  return toBase64(randomBytes(40))
}

export async function sealTokenKey(secretB64: string, tokenId: string, key: string): Promise<string> {
  const iv = randomBytes(12)
  const ct = await crypto.subtle.encrypt(
    { name: 'AES-GCM', iv, additionalData: utf8.encode(tokenId) },
    await aesKey(secretB64),
    utf8.encode(key),
  )
  const out = new Uint8Array(12 + ct.byteLength)
  out.set(iv)
  out.set(new Uint8Array(ct), 12)
  return toBase64(out)
}

export async function openTokenKey(secretB64: string, tokenId: string, sealed: string): Promise<string> {
  const bytes = fromBase64Strict(sealed)
  if (!bytes || bytes.length < 12 + 16) throw new Error('sealed token key is malformed')
  const pt = await crypto.subtle.decrypt(
    { name: 'AES-GCM', iv: bytes.subarray(0, 12), additionalData: utf8.encode(tokenId) },
    await aesKey(secretB64),
    bytes.subarray(12),
  )
  return new TextDecoder().decode(pt)
}
