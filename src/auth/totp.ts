/**
 * Time-based one-time passwords (RFC 6238 over RFC 4226's HOTP), as BloodHound's multi-factor sign-in uses
 * them: HMAC-SHA-1, 6 digits, 30-second steps from the Unix epoch, the step before and after accepted.
 * Computed with the platform's SubtleCrypto HMAC; nothing here stores or logs a secret or a code.
 *
 * Reasoning, rule by rule:
 * - SHA-1, 6 digits, 30 s: what every authenticator app assumes when the otpauth URI says so, and what
 *   BloodHound issues. (HMAC-SHA-1 is not weakened by SHA-1's collision attacks: HOTP needs only that the
 *   MAC cannot be forged without the key.)
 * - The secret is 20 random bytes (160 bits, RFC 4226's recommended length), shown to the user once in base32
 *   (RFC 4648, no padding) inside the otpauth URI; the server keeps it sealed (src/auth/mfa.ts).
 * - ±1 step: a phone's clock a little off, or a code typed at the end of its step, still signs in. Three
 *   codes are valid at a time, so one guess succeeds with probability 3/10^6; the caller rate-limits guesses.
 * - One use per step (verifyTotp's `lastUsedStep`): a code that has signed in once is refused afterwards,
 *   and so is every code of an earlier or the same step, so a code seen over a shoulder or in a log cannot be
 *   replayed within its window. The caller stores the accepted step in the same write that uses it.
 * - The comparison of the code does not stop at the first differing digit (equalDigits), so its timing does
 *   not tell how many leading digits were right.
 * - Only exactly `digits` ASCII digits are a code; anything else is refused before any HMAC is computed.
 */
import { randomBytes } from './encoding'

export const TOTP_STEP_SECONDS = 30
export const TOTP_DIGITS = 6
/** steps accepted on each side of the current one */
export const TOTP_WINDOW = 1

const B32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567'

/** RFC 4648 base32, upper case, without padding. */
export function base32Encode(bytes: Uint8Array): string {
  let out = ''
  let bits = 0
  let value = 0
  for (const b of bytes) {
    value = (value << 8) | b
    bits += 8
    while (bits >= 5) {
      out += B32[(value >>> (bits - 5)) & 31]
      bits -= 5
    }
    value &= (1 << bits) - 1
  }
  if (bits > 0) out += B32[(value << (5 - bits)) & 31]
  return out
}

/** RFC 4648 base32 (case-insensitive, padding and spaces ignored); null when it is not base32. */
export function base32Decode(text: string): Uint8Array | null {
  const clean = text.replace(/[\s=]/g, '').toUpperCase()
  const out: number[] = []
  let bits = 0
  let value = 0
  for (const ch of clean) {
    const v = B32.indexOf(ch)
    if (v < 0) return null
    value = (value << 5) | v
    bits += 5
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 0xff)
      bits -= 8
    }
    value &= (1 << bits) - 1
  }
  return new Uint8Array(out)
}

/** A new TOTP secret: 20 random bytes, in base32 (32 characters). */
export function newTotpSecret(): string {
  return base32Encode(randomBytes(20))
}

/** The HOTP value of `counter` (RFC 4226 section 5.3: dynamic truncation), as a zero-padded string. */
export async function hotp(key: Uint8Array, counter: number, digits = TOTP_DIGITS, hash: 'SHA-1' | 'SHA-256' | 'SHA-512' = 'SHA-1'): Promise<string> {
  if (!Number.isSafeInteger(counter) || counter < 0) throw new Error('HOTP counter must be a non-negative safe integer')
  const msg = new Uint8Array(8)
  const view = new DataView(msg.buffer)
  // 8-byte big-endian counter; a safe integer fits in 53 bits, so high and low 32-bit halves suffice
  view.setUint32(0, Math.floor(counter / 2 ** 32))
  view.setUint32(4, counter >>> 0)
  const k = await crypto.subtle.importKey('raw', key, { name: 'HMAC', hash }, false, ['sign'])
  const mac = new Uint8Array(await crypto.subtle.sign('HMAC', k, msg))
  const offset = mac[mac.length - 1] & 0x0f
  const bin = ((mac[offset] & 0x7f) << 24) | (mac[offset + 1] << 16) | (mac[offset + 2] << 8) | mac[offset + 3]
  return String(bin % 10 ** digits).padStart(digits, '0')
}

/** The time step of a moment (Unix ms): floor(seconds / 30). */
export function totpStep(nowMs: number, stepSeconds = TOTP_STEP_SECONDS): number {
  return Math.floor(nowMs / 1000 / stepSeconds)
}

/** The TOTP value at a moment (Unix ms). */
export function totpAt(key: Uint8Array, nowMs: number, digits = TOTP_DIGITS, hash: 'SHA-1' | 'SHA-256' | 'SHA-512' = 'SHA-1'): Promise<string> {
  return hotp(key, totpStep(nowMs), digits, hash)
}

/** Compares two equal-length digit strings without stopping early. */
function equalDigits(a: string, b: string): boolean {
  if (a.length !== b.length) return false
  let diff = 0
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i)
  return diff === 0
}

export type TotpCheck = { ok: true; step: number } | { ok: false; reason: 'malformed' | 'wrong' | 'reused' }

/**
 * Checks a code against the secret (base32) at `nowMs`. Accepts the code of the current step or of the one
 * before or after, but only for a step later than `lastUsedStep` (null: none used yet). Returns the step the
 * code belongs to, which the caller stores as the new last used step.
 */
export async function verifyTotp(secretB32: string, code: string, nowMs: number, lastUsedStep: number | null): Promise<TotpCheck> {
  if (!new RegExp(`^[0-9]{${TOTP_DIGITS}}$`).test(code)) return { ok: false, reason: 'malformed' }
  const key = base32Decode(secretB32)
  if (!key || key.length === 0) throw new Error('the stored TOTP secret is not base32')
  const now = totpStep(nowMs)
  let matched: number | null = null
  // every candidate step is computed and compared, whichever matches, so the time taken does not say which
  for (let s = now - TOTP_WINDOW; s <= now + TOTP_WINDOW; s++) {
    if (s < 0) continue
    if (equalDigits(await hotp(key, s), code) && matched === null) matched = s
  }
  if (matched === null) return { ok: false, reason: 'wrong' }
  if (lastUsedStep !== null && matched <= lastUsedStep) return { ok: false, reason: 'reused' }
  return { ok: true, step: matched }
}

/**
 * The otpauth URI an authenticator app reads (Google Authenticator's key URI format): the label
 * `issuer:account`, the secret, and the parameters spelled out so no app has to assume them.
 */
export function otpauthUri(issuer: string, account: string, secretB32: string): string {
  const label = `${encodeURIComponent(issuer)}:${encodeURIComponent(account)}`
  const q = new URLSearchParams({ secret: secretB32, issuer, algorithm: 'SHA1', digits: String(TOTP_DIGITS), period: String(TOTP_STEP_SECONDS) })
  return `otpauth://totp/${label}?${q.toString()}`
}

/** For tests and the CLI: the current code of a base32 secret. */
export async function currentCode(secretB32: string, nowMs: number): Promise<string> {
  const key = base32Decode(secretB32)
  if (!key) throw new Error('not base32')
  return totpAt(key, nowMs)
}
