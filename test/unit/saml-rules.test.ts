import { describe, expect, it } from 'vitest'
import { DOMParser } from '@xmldom/xmldom'
import { checkName, slugify } from '../../src/saml/names'
import { applyAutoProvision, parseGoBool, PROVISIONING_OFF, roleById } from '../../src/saml/provisioning'
import { SP_NAMEID_FORMATS, spMetadataXml, spUrls, xmlEscape } from '../../src/saml/sp'

describe('provider names and slugs', () => {
  it.each([
    ['Okta', 'okta'],
    ['Corp Okta Prod', 'corp-okta-prod'],
    ['Azure AD (prod)', 'azure-ad-prod'],
    ['Société Générale', 'societe-generale'],
    ['a  b', 'a--b'],
    ['ADFS_2019', 'adfs2019'],
    ['../../etc', 'etc'],
    ['Ｆｕｌｌｗｉｄｔｈ', 'fullwidth'],
  ])('%j → %j', (name, slug) => {
    expect(slugify(name)).toBe(slug)
  })

  it('trims the name and returns it with its slug', () => {
    expect(checkName('  Corp Okta  ')).toEqual({ ok: true, name: 'Corp Okta', slug: 'corp-okta' })
  })

  it.each([
    ['', '"name" must not be blank'],
    ['   \u00a0 ', '"name" must not be blank'],
    ['x'.repeat(101), '"name" must be at most 100 characters (it has 101)'],
    ['Okta\tProd', '"name" must not contain control characters (tabs, line breaks, …)'],
    ['!!!', '"name" must contain at least one letter or digit: its URL slug is made of a-z, 0-9 and "-" (got "")'],
    ['- -', '"name" must contain at least one letter or digit: its URL slug is made of a-z, 0-9 and "-" (got "---")'],
  ])('refuses %j', (name, message) => {
    expect(checkName(name)).toEqual({ ok: false, message })
  })

  it('counts characters, not UTF-16 units: 100 emoji-free astral letters pass', () => {
    const name = 'a' + '𝒜'.repeat(99)
    expect(checkName(name)).toMatchObject({ ok: true, name })
    expect(checkName(name + '𝒜')).toMatchObject({ ok: false })
  })
})

describe('auto-provisioning config', () => {
  it('reads Go booleans', () => {
    for (const t of ['1', 't', 'T', 'TRUE', 'true', 'True']) expect(parseGoBool(t)).toBe(true)
    for (const f of ['0', 'f', 'F', 'FALSE', 'false', 'False']) expect(parseGoBool(f)).toBe(false)
    for (const x of ['', 'yes', 'tRuE', '2']) expect(parseGoBool(x)).toBeNull()
  })

  it('numbers the roles as BloodHound does', () => {
    expect([1, 2, 3, 4, 5].map(roleById)).toEqual(['Administrator', 'User', 'Read-Only', 'Upload-Only', 'Auditor'])
    expect(roleById(0)).toBeUndefined()
    expect(roleById(6)).toBeUndefined()
  })

  it('defaults to off, and stores off as all-off whatever else was sent', () => {
    expect(applyAutoProvision(PROVISIONING_OFF, {})).toEqual({ ok: true, config: PROVISIONING_OFF })
    expect(applyAutoProvision(PROVISIONING_OFF, { enabled: false, default_role_id: 3, role_provision: true })).toEqual({ ok: true, config: PROVISIONING_OFF })
  })

  it('needs a valid default role when enabled', () => {
    expect(applyAutoProvision(PROVISIONING_OFF, { enabled: true, default_role_id: 3 })).toEqual({
      ok: true,
      config: { enabled: true, default_role_id: 3, role_provision: false },
    })
    expect(applyAutoProvision(PROVISIONING_OFF, { enabled: true })).toMatchObject({
      ok: false,
      context: 'form.config.auto_provision.default_role_id',
      message: expect.stringContaining('is required when auto provisioning is enabled'),
    })
    expect(applyAutoProvision(PROVISIONING_OFF, { enabled: false, default_role_id: 9 })).toMatchObject({
      ok: false,
      message: '"config.auto_provision.default_role_id" parameter is invalid: no role has id 9 (roles: 1 Administrator, 2 User, 3 Read-Only, 4 Upload-Only, 5 Auditor)',
    })
  })

  it('merges an update into the current config', () => {
    const current = { enabled: true, default_role_id: 2, role_provision: false }
    expect(applyAutoProvision(current, { role_provision: true })).toEqual({ ok: true, config: { enabled: true, default_role_id: 2, role_provision: true } })
    expect(applyAutoProvision(current, { enabled: false })).toEqual({ ok: true, config: PROVISIONING_OFF })
  })
})

describe('service provider URLs and metadata', () => {
  it('builds the four URLs from the base and the slug', () => {
    expect(spUrls('https://bh.example.com/', 'corp-okta')).toEqual({
      sp_issuer_uri: 'https://bh.example.com/api/v2/sso/corp-okta',
      sp_sso_uri: 'https://bh.example.com/api/v2/sso/corp-okta/login',
      sp_metadata_uri: 'https://bh.example.com/api/v2/sso/corp-okta/metadata',
      sp_acs_uri: 'https://bh.example.com/api/v2/sso/corp-okta/callback',
    })
  })

  it('escapes XML special characters', () => {
    expect(xmlEscape(`a&b<c>"d'`)).toBe('a&amp;b&lt;c&gt;&quot;d&apos;')
  })

  it('writes SP metadata that parses back to entity id, ACS (HTTP-POST), NameID formats and a validUntil 48 h ahead', () => {
    const urls = spUrls('https://bh.example.com/base?x=1&y=2', 'okta')
    const now = new Date('2026-11-25T12:00:00.000Z')
    const xml = spMetadataXml(urls, now)
    const doc = new DOMParser({
      onError: (_l, m) => {
        throw new Error(m)
      },
    }).parseFromString(xml, 'application/xml')
    const root = doc.documentElement!
    const MD = 'urn:oasis:names:tc:SAML:2.0:metadata'
    expect(root.namespaceURI).toBe(MD)
    expect(root.localName).toBe('EntityDescriptor')
    expect(root.getAttribute('entityID')).toBe(urls.sp_issuer_uri)
    expect(root.getAttribute('validUntil')).toBe('2026-11-27T12:00:00.000Z')
    const sp = root.getElementsByTagNameNS(MD, 'SPSSODescriptor')[0]
    expect(sp.getAttribute('protocolSupportEnumeration')).toBe('urn:oasis:names:tc:SAML:2.0:protocol')
    const acs = sp.getElementsByTagNameNS(MD, 'AssertionConsumerService')
    expect(acs.length).toBe(1)
    expect(acs[0].getAttribute('Binding')).toBe('urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST')
    expect(acs[0].getAttribute('Location')).toBe(urls.sp_acs_uri)
    expect(Array.from(sp.getElementsByTagNameNS(MD, 'NameIDFormat'), (e) => e.textContent)).toEqual(SP_NAMEID_FORMATS)
  })
})
