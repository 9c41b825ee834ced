/**
 * Two-step sign-in (TOTP) in the console: when the sign-in form must ask for a code, and the QR code an
 * authenticator app scans. Pure, unit-tested in test/unit/console-mfa.test.ts.
 */
import { encode } from 'uqr'
import { EdgeHoundError } from '../../../src/client/index'

/**
 * True when a login answer asks for the second factor: the API refuses a password login of a user with active
 * multi-factor authentication with a 400 whose error names the `otp` field (missing, wrong or already used code).
 */
export function asksForOtp(e: unknown): boolean {
  return e instanceof EdgeHoundError && e.status === 400 && (e.envelope?.errors ?? []).some((x) => x.context === 'otp')
}

/** A code as people type it ("123 456", "123-456") reduced to its digits; the server checks the rest. */
export function normaliseOtp(text: string): string {
  return text.replace(/[\s-]/g, '')
}

/** The QR code of `text` as one SVG path over a square of `size` modules (drawn with a 4-module quiet zone). */
export function qrPath(text: string): { size: number; d: string } {
  const { data, size } = encode(text, { ecc: 'M', border: 0 })
  return { size, d: modulesPath(data) }
}

/** One `M x y h1 v1 h-1 z` square per dark module, runs of dark modules on a row merged into one rectangle. */
export function modulesPath(rows: boolean[][]): string {
  const parts: string[] = []
  rows.forEach((row, y) => {
    for (let x = 0; x < row.length; ) {
      if (!row[x]) {
        x++
        continue
      }
      let run = 1
      while (row[x + run]) run++
      parts.push(`M${x} ${y}h${run}v1h${-run}z`)
      x += run
    }
  })
  return parts.join('')
}
