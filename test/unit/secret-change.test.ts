import { describe, expect, it } from 'vitest'
import { decideSecretChange, secretExpired } from '../../src/auth/secret-change'

const base = { callerId: 'a', targetId: 'a', callerManagesUsers: false, targetUsesSso: false, currentGiven: true, needsPasswordReset: false }

describe('decideSecretChange', () => {
  it('your own change: needs the current password, verifies it, never expires at once', () => {
    expect(decideSecretChange(base)).toEqual({ ok: true, self: true, mustVerifyCurrent: true, expiresNow: false })
    expect(decideSecretChange({ ...base, currentGiven: false })).toMatchObject({ ok: false, status: 400, context: 'current_secret' })
    // administrators too
    expect(decideSecretChange({ ...base, callerManagesUsers: true, currentGiven: false })).toMatchObject({ ok: false, status: 400 })
    expect(decideSecretChange({ ...base, needsPasswordReset: true })).toMatchObject({ ok: false, status: 400, context: 'needs_password_reset' })
  })
  it("another user's: 404 without auth/ManageUsers; with it, no current password and an optional forced change", () => {
    expect(decideSecretChange({ ...base, targetId: 'b' })).toMatchObject({ ok: false, status: 404, message: 'resource not found' })
    expect(decideSecretChange({ ...base, targetId: 'b', callerManagesUsers: true, currentGiven: false })).toEqual({ ok: true, self: false, mustVerifyCurrent: false, expiresNow: false })
    expect(decideSecretChange({ ...base, targetId: 'b', callerManagesUsers: true, needsPasswordReset: true })).toMatchObject({ ok: true, expiresNow: true })
  })
  it('an SSO user has no password: 400 (for managers), still 404 for others', () => {
    expect(decideSecretChange({ ...base, targetId: 'b', callerManagesUsers: true, targetUsesSso: true })).toMatchObject({ ok: false, status: 400 })
    expect(decideSecretChange({ ...base, targetId: 'b', targetUsesSso: true })).toMatchObject({ ok: false, status: 404 })
  })
})

describe('secretExpired', () => {
  it('null never expires; a time at or before now has expired', () => {
    expect(secretExpired(null, '2026-01-01T00:00:00.000Z')).toBe(false)
    expect(secretExpired('2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z')).toBe(true)
    expect(secretExpired('2026-01-01T00:00:01.000Z', '2026-01-01T00:00:00.000Z')).toBe(false)
  })
})
