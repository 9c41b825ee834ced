import { describe, expect, it } from 'vitest'
import { hasTierZeroTag, isTierZero, tierZeroReason, type NodeFacts } from '../../src/assetgroups/tierzero'

const node = (objectid: string, kinds: string[], extra: Partial<NodeFacts> = {}): NodeFacts => ({ objectid, kind: kinds[0], kinds, ...extra })

describe('Tier Zero rules', () => {
  it('system_tags: whole tag admin_tier_0, as a space-separated string, a JSON array text or an array', () => {
    expect(tierZeroReason(node('x', ['User'], { systemTags: 'admin_tier_0' }))).toBe('system_tags')
    expect(tierZeroReason(node('x', ['User'], { systemTags: 'owned  admin_tier_0 ' }))).toBe('system_tags')
    expect(tierZeroReason(node('x', ['User'], { systemTags: '["owned","admin_tier_0"]' }))).toBe('system_tags')
    expect(tierZeroReason(node('x', ['User'], { systemTags: ['admin_tier_0'] }))).toBe('system_tags')
    expect(hasTierZeroTag('admin_tier_0_candidate')).toBe(false)
    expect(hasTierZeroTag('not_admin_tier_0')).toBe(false)
    expect(hasTierZeroTag(['admin_tier_0x'])).toBe(false)
    expect(hasTierZeroTag(null)).toBe(false)
    expect(hasTierZeroTag(1)).toBe(false)
  })

  it('isTierZero: only a real true (or SQLite 1), never a string', () => {
    expect(tierZeroReason(node('x', ['AZApp'], { isTierZero: true }))).toBe('isTierZero')
    expect(tierZeroReason(node('x', ['AZApp'], { isTierZero: 1 }))).toBe('isTierZero')
    expect(isTierZero(node('x', ['AZApp'], { isTierZero: 'true' }))).toBe(false)
    expect(isTierZero(node('x', ['AZApp'], { isTierZero: false }))).toBe(false)
    expect(isTierZero(node('x', ['AZApp'], { isTierZero: 0 }))).toBe(false)
  })

  it('primary kind Domain or AZTenant (primary only)', () => {
    expect(tierZeroReason(node('S-1-5-21-1', ['Domain', 'Base']))).toBe('primary_kind')
    expect(tierZeroReason(node('t', ['AZTenant', 'AZBase']))).toBe('primary_kind')
    expect(isTierZero(node('t', ['Base', 'Domain']))).toBe(false)
    expect(isTierZero(node('t', ['GH_Organization']))).toBe(false)
  })

  it('AD object ids ending in -512, -516, -518, -519, -544', () => {
    for (const rid of ['512', '516', '518', '519', '544']) {
      expect(tierZeroReason(node(`S-1-5-21-9-${rid}`, ['Group', 'Base']))).toBe('ad_rid')
    }
    expect(tierZeroReason(node('CORP.LOCAL-S-1-5-32-544', ['Group']))).toBe('ad_rid')
    // any AD kind counts, not only groups
    expect(tierZeroReason(node('S-1-5-21-9-512', ['Base']))).toBe('ad_rid')
    // a computer's own local groups (SharpHound: <computer SID>-544) are not the domain's
    expect(isTierZero(node('S-1-5-21-9-1201-544', ['ADLocalGroup', 'Base']))).toBe(false)
    expect(isTierZero(node('S-1-5-21-9-1201-512', ['ADLocalUser', 'Base']))).toBe(false)
    // the suffix must follow a dash
    expect(isTierZero(node('S-1-5-21-9-1512', ['User']))).toBe(false)
    expect(isTierZero(node('S-1-5-21-9-513', ['Group']))).toBe(false)
    expect(isTierZero(node('S-1-5-21-9-5120', ['Group']))).toBe(false)
    // not an AD object
    expect(isTierZero(node('GH-USER-512', ['GH_User']))).toBe(false)
    expect(isTierZero(node('x-544', ['AZGroup', 'AZBase']))).toBe(false)
  })

  it('AZRole Global Administrator / Privileged Role Administrator by template id', () => {
    const ga = '62e90394-69f5-4237-9190-012177145e10'
    const pra = 'e8611ab8-c189-46e8-94e1-60213ab1f814'
    expect(tierZeroReason(node('r1', ['AZRole'], { templateid: ga }))).toBe('az_role')
    expect(tierZeroReason(node('r2', ['AZRole'], { templateid: pra.toUpperCase() }))).toBe('az_role')
    expect(tierZeroReason(node(`${ga}@tenant`, ['AZRole', 'AZBase']))).toBe('az_role')
    expect(tierZeroReason(node(`${pra.toUpperCase()}@tenant`, ['AZRole']))).toBe('az_role')
    // another role, or the template id on something that is not an AZRole
    expect(isTierZero(node('r3', ['AZRole'], { templateid: '729827e3-9c14-49f7-bb1b-9608f156bbb8' }))).toBe(false)
    expect(isTierZero(node(`${ga}@tenant`, ['AZGroup']))).toBe(false)
    // the property wins over the object id
    expect(isTierZero(node(`${ga}@tenant`, ['AZRole'], { templateid: '729827e3-9c14-49f7-bb1b-9608f156bbb8' }))).toBe(false)
  })

  it('a plain node is not Tier Zero', () => {
    expect(tierZeroReason(node('S-1-5-21-9-1001', ['User', 'Base'], { enabled: true }))).toBeNull()
  })
})
