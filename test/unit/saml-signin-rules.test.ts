/** src/saml/sign-in.ts: principal, JIT role, where the browser goes, the cookie. */
import { describe, expect, it } from 'vitest'
import { assertedPrincipal, disabledLocation, failureLocation, provisionedRole, ROLE_CLAIM, successLocation } from '../../src/saml/sign-in'

const EMAIL = 'urn:oid:0.9.2342.19200300.100.1.3'
const CLAIM = 'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress'
const EMAIL_FMT = 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress'
const a = (attrs: Record<string, string[]>, nameId: string | null = null, nameIdFormat: string | null = null) => ({
  attributes: new Map(Object.entries(attrs)),
  nameId,
  nameIdFormat,
})

describe('assertedPrincipal', () => {
  it('mappings first, then the OID, then the claim, then an emailAddress NameID', () => {
    expect(assertedPrincipal(a({ upn: ['u@x'], [EMAIL]: ['o@x'] }), ['upn'])).toBe('u@x')
    expect(assertedPrincipal(a({ [CLAIM]: ['c@x'], [EMAIL]: ['o@x'] }), [])).toBe('o@x')
    expect(assertedPrincipal(a({ [CLAIM]: ['', 'c@x'] }), [])).toBe('c@x')
    expect(assertedPrincipal(a({}, 'n@x', EMAIL_FMT), [])).toBe('n@x')
    expect(assertedPrincipal(a({}, 'n@x', 'urn:oasis:names:tc:SAML:2.0:nameid-format:persistent'), [])).toBeNull()
  })
  it('refuses values with whitespace or control characters, or longer than 320', () => {
    expect(assertedPrincipal(a({ [EMAIL]: ['a b@x'] }), [])).toBeNull()
    expect(assertedPrincipal(a({ [EMAIL]: ['a\u0000@x'] }), [])).toBeNull()
    expect(assertedPrincipal(a({ [EMAIL]: [`${'a'.repeat(320)}@x`] }), [])).toBeNull()
    // a bad first choice is not silently replaced by a later attribute
    expect(assertedPrincipal(a({ [EMAIL]: ['a b@x'], [CLAIM]: ['c@x'] }), [])).toBeNull()
  })
})

describe('provisionedRole', () => {
  const cfg = { enabled: true, default_role_id: 3, role_provision: true }
  it('one bh-<role> match picks it; none or several give the default; off gives the default', () => {
    expect(provisionedRole(cfg, new Map([[ROLE_CLAIM, ['x', ' BH-Upload-Only ']]]))).toBe('Upload-Only')
    expect(provisionedRole(cfg, new Map([[ROLE_CLAIM, ['bh-administrator', 'bh-administrator']]]))).toBe('Administrator')
    expect(provisionedRole(cfg, new Map([[ROLE_CLAIM, ['bh-administrator', 'bh-user']]]))).toBe('Read-Only')
    expect(provisionedRole(cfg, new Map())).toBe('Read-Only')
    expect(provisionedRole({ ...cfg, role_provision: false }, new Map([[ROLE_CLAIM, ['bh-administrator']]]))).toBe('Read-Only')
    expect(provisionedRole({ ...cfg, default_role_id: 0 }, new Map())).toBeNull()
  })
})

describe('redirects and cookie', () => {
  const p = { base: 'https://bh.example.com', ui: 'https://bh.example.com/ui' }
  it('RelayState only as a path on this site', () => {
    expect(successLocation(p, '/ui/explore?x=1')).toBe('https://bh.example.com/ui/explore?x=1')
    for (const bad of ['//evil.example', '/\\evil.example', 'https://evil.example', '', 'x', '/a b', '/a\nb', `/${'a'.repeat(600)}`])
      expect(successLocation(p, bad)).toBe('https://bh.example.com/ui')
    expect(successLocation(p, null)).toBe('https://bh.example.com/ui')
  })
  it('failure and disabled URLs are BloodHound’s, the message encoded', () => {
    expect(failureLocation(p, 'a b&c')).toBe('https://bh.example.com/ui/login?error=a%20b%26c')
    expect(disabledLocation(p)).toBe('https://bh.example.com/ui/user-disabled')
  })
})
