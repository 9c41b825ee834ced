import { describe, expect, it } from 'vitest'
import { EdgeHoundError } from '../../src/client/index'
import { asksForOtp, modulesPath, normaliseOtp, qrPath } from '../../ui/src/lib/mfa'

const refusal = (status: number, context: string) =>
  new EdgeHoundError(status, { http_status: status, timestamp: '', request_id: 'r', errors: [{ context, message: 'one time password is invalid' }] }, new Response(null, { status }))

describe('console two-step sign-in (ui/src/lib/mfa.ts)', () => {
  it('a 400 naming the otp field asks for the code; any other refusal does not', () => {
    expect(asksForOtp(refusal(400, 'otp'))).toBe(true)
    expect(asksForOtp(refusal(401, 'auth'))).toBe(false)
    expect(asksForOtp(refusal(400, 'username'))).toBe(false)
    expect(asksForOtp(refusal(429, 'otp'))).toBe(false)
    expect(asksForOtp(new Error('network'))).toBe(false)
  })

  it('a typed code keeps its digits only where people put spaces or a dash', () => {
    expect(['123 456', '123-456', ' 123456 ', '12a456'].map(normaliseOtp)).toEqual(['123456', '123456', '123456', '12a456'])
  })

  it('dark modules become one path, runs on a row merged', () => {
    expect(modulesPath([[true, true, false, true], [false, false, false, false], [false, true, true, true]])).toBe('M0 0h2v1h-2zM3 0h1v1h-1zM1 2h3v1h-3z')
    expect(modulesPath([[false]])).toBe('')
  })

  it('an otpauth URI gives a QR code of a valid size with its three finder patterns', () => {
    const uri = 'otpauth://totp/EdgeHound:alice?secret=JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP&issuer=EdgeHound&algorithm=SHA1&digits=6&period=30'
    const { size, d } = qrPath(uri)
    expect((size - 17) % 4).toBe(0)
    expect(size).toBeGreaterThanOrEqual(21)
    // a finder pattern's top row is 7 dark modules: at (0,0), (size-7,0); and row size-7 starts with one at x=0
    expect(d).toContain('M0 0h7v1h-7z')
    expect(d).toContain(`M${size - 7} 0h7v1h-7z`)
    expect(d).toContain(`M0 ${size - 7}h7v1h-7z`)
    // another text, another code
    expect(qrPath(uri.replace('alice', 'bob')).d).not.toBe(d)
  })
})
