/**
 * Password hashing: PBKDF2-SHA-256 through SubtleCrypto, 100,000 iterations (the most workerd allows),
 * a random 16-byte salt per password, 32-byte derived key. Stored as
 * `pbkdf2-sha256$<iterations>$<salt b64>$<hash b64>` so the cost can be raised later without a migration.
 * Comparison is constant-time. `verifyPassword` against a missing hash still derives a key, so an unknown
 * user and a wrong password take the same time (no user enumeration by timing).
 */
import { fromBase64Strict, randomBytes, timingSafeEqual, toBase64, utf8 } from './encoding'

export const PBKDF2_ITERATIONS = 100_000

async function derive(password: string, salt: Uint8Array, iterations: number): Promise<Uint8Array> {
  const base = await crypto.subtle.importKey('raw', utf8.encode(password), 'PBKDF2', false, ['deriveBits'])
  const bits = await crypto.subtle.deriveBits({ name: 'PBKDF2', hash: 'SHA-256', salt, iterations }, base, 256)
  return new Uint8Array(bits)
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16)
  const hash = await derive(password, salt, PBKDF2_ITERATIONS)
  return `pbkdf2-sha256$${PBKDF2_ITERATIONS}$${toBase64(salt)}$${toBase64(hash)}`
}

const DUMMY = `pbkdf2-sha256$${PBKDF2_ITERATIONS}$AAAAAAAAAAAAAAAAAAAAAA==$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=`

export async function verifyPassword(password: string, stored: string | null | undefined): Promise<boolean> {
  const parts = (stored || DUMMY).split('$')
  const iterations = Number(parts[1])
  const salt = fromBase64Strict(parts[2] ?? '')
  const expected = fromBase64Strict(parts[3] ?? '')
  if (parts[0] !== 'pbkdf2-sha256' || !salt || !expected || !(iterations > 0 && iterations <= PBKDF2_ITERATIONS)) {
    await derive(password, randomBytes(16), PBKDF2_ITERATIONS)
    return false
  }
  const actual = await derive(password, salt, iterations)
  return timingSafeEqual(actual, expected) && !!stored
}
