/**
 * The asset group rules (src/assetgroups/tierzero.ts: selectors, the Tag_Tier_Zero kind, Owned) and the members
 * an analysis run records (src/assetgroups/members.ts).
 */
import { describe, expect, it } from 'vitest'
import { isOwned, isTierZero, tierZeroReason, tagsOf } from '../../src/assetgroups/tierzero'
import { memberRows } from '../../src/assetgroups/members'
import { GraphBuilder } from '../../src/findings/graph'

const user = { objectid: 'S-1-5-21-9-1105', kind: 'User', kinds: ['User', 'Base'] }

describe('Tier Zero and Owned rules with asset group selectors', () => {
  it('a Tier Zero selector makes any node Tier Zero; other groups\' tags do not', () => {
    expect(isTierZero(user)).toBe(false)
    expect(tierZeroReason({ ...user, selectedTags: ['admin_tier_0'] })).toBe('selector')
    expect(isTierZero({ ...user, selectedTags: ['owned', 'crown'] })).toBe(false)
    expect(isTierZero({ ...user, selectedTags: ['admin_tier_0_candidate'] })).toBe(false)
  })

  it('BloodHound\'s Tag_Tier_Zero kind counts as Tier Zero', () => {
    expect(tierZeroReason({ ...user, kinds: ['User', 'Base', 'Tag_Tier_Zero'] })).toBe('system_tags')
  })

  it('Owned: the Tag_Owned kind, the whole tag owned, or an Owned selector', () => {
    expect(isOwned(user)).toBe(false)
    expect(isOwned({ ...user, kinds: ['User', 'Tag_Owned'] })).toBe(true)
    expect(isOwned({ ...user, systemTags: 'admin_tier_0 owned' })).toBe(true)
    expect(isOwned({ ...user, systemTags: '["owned"]' })).toBe(true)
    expect(isOwned({ ...user, systemTags: 'owned_by_someone' })).toBe(false)
    expect(isOwned({ ...user, selectedTags: ['owned'] })).toBe(true)
    expect(tagsOf(' a  b ')).toEqual(['a', 'b'])
  })
})

describe('memberRows', () => {
  it('lists Tier Zero, Owned and custom-group members, custom_member when a selector names the node', () => {
    const b = new GraphBuilder({ isTraversable: () => true, findingKinds: new Set() })
    b.addNode({ id: 1, objectid: 'D', kind: 'Domain', kinds: ['Domain'], environmentId: 'D' })
    b.addNode({ id: 2, objectid: 'U1', kind: 'User', kinds: ['User'], environmentId: 'D', selectedTags: ['admin_tier_0', 'crown'] })
    b.addNode({ id: 3, objectid: 'U2', kind: 'User', kinds: ['User'], environmentId: 'D', systemTags: 'owned' })
    b.addNode({ id: 4, objectid: 'U3', kind: 'User', kinds: ['User'], environmentId: 'D', selectedTags: ['gone'] })
    b.addNode({ id: 5, objectid: 'U4', kind: 'User', kinds: ['User'], environmentId: 'D' })
    const groups = [
      { id: 1, tag: 'admin_tier_0' },
      { id: 2, tag: 'owned' },
      { id: 7, tag: 'crown' },
    ]
    expect(memberRows(b.build(), groups)).toEqual([
      [1, 'D', 0],
      [1, 'U1', 1],
      [7, 'U1', 1],
      [2, 'U2', 0],
    ])
  })
})
