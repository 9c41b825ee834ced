import { describe, expect, it } from 'vitest'
import { replicationHolders } from '../../src/collectors/postprocess'
import { citrixCanRdp } from '../../src/collectors/postprocess'
import type { ReplicationData } from '../../src/collectors/postprocess.store'

describe('DCSync / SyncLAPSPassword holders: BloodHound\'s cross product of the first-degree holders', () => {
  // Domain 1 (S-1-5-21-9). Groups 10, 11, 12; users 21, 22, 23; Domain Users 97, Authenticated Users 99 and
  // Everyone 98 linked as BloodHound's well-known step links them (97 -MemberOf-> 99 -MemberOf-> 98), 21 and
  // 22 members of Domain Users. Expected sets worked out by hand from the rule (docs/collectors.md).
  const node = (id: number, kinds: string[], objectid = `S-1-5-21-9-${id}`) => ({ id, objectid, kinds: JSON.stringify(kinds) })
  const nodes = [
    node(10, ['Base', 'Group']), node(11, ['Base', 'Group']), node(12, ['Base', 'Group']),
    node(21, ['Base', 'User']), node(22, ['Base', 'User']), node(23, ['Base', 'User']),
    node(97, ['Base', 'Group'], 'S-1-5-21-9-513'), node(99, ['Base', 'Group'], 'TESTLAB.LOCAL-S-1-5-11'), node(98, ['Base', 'Group'], 'TESTLAB.LOCAL-S-1-1-0'),
  ]
  const wellKnown: [number, number][] = [[97, 99], [99, 98], [21, 97], [22, 97]]
  type Right = 'GetChanges' | 'GetChangesAll' | 'GetChangesInFilteredSet'
  const data = (held: [number, Right][], membership: [number, number][]): ReplicationData => ({
    holders: held.map(([holder, right]) => ({ domain: 1, domainsid: 'S-1-5-21-9', right, holder })),
    membership: [...wellKnown, ...membership],
    nodes,
  })
  const dcsync = (held: [number, Right][], membership: [number, number][] = []) => replicationHolders(data(held, membership))[0].dcsync

  it('nested groups that both hold both rights: both get DCSync (the older rule kept only the outer one), their user does not', () => {
    // 11 is a member of 10, 21 of 11; 10 and 11 hold both rights
    expect(dcsync([[10, 'GetChanges'], [10, 'GetChangesAll'], [11, 'GetChanges'], [11, 'GetChangesAll']], [[11, 10], [21, 11]])).toEqual([10, 11])
  })

  it('a group holding both rights gets it, its members do not', () => {
    expect(dcsync([[10, 'GetChanges'], [10, 'GetChangesAll']], [[11, 10], [21, 11]])).toEqual([10])
  })

  it('Everyone holding GetChanges constrains nothing: the GetChangesAll holders get it as they are (group 12, not its member)', () => {
    // older rule: 21 and 22 (members of both sides through Domain Users) instead of 12 and 21
    expect(dcsync([[98, 'GetChanges'], [21, 'GetChangesAll'], [12, 'GetChangesAll']], [[22, 12]])).toEqual([12, 21])
  })

  it('Authenticated Users holding GetChangesAll: the GetChanges holders get it (group 10, not its member)', () => {
    expect(dcsync([[10, 'GetChanges'], [99, 'GetChangesAll']], [[21, 10]])).toEqual([10])
  })

  it('a holder group with Authenticated Users among its members counts as everyone too', () => {
    expect(dcsync([[12, 'GetChanges'], [23, 'GetChangesAll']], [[99, 12]])).toEqual([23])
  })

  it('Everyone and Authenticated Users holding one right each: both get DCSync', () => {
    expect(dcsync([[98, 'GetChanges'], [99, 'GetChangesAll']])).toEqual([98, 99])
  })

  it('Domain Users is an ordinary group here: holding both, it gets DCSync and its members do not', () => {
    expect(dcsync([[97, 'GetChanges'], [97, 'GetChangesAll']])).toEqual([97])
    expect(dcsync([[97, 'GetChanges'], [23, 'GetChangesAll']])).toEqual([]) // 23 is no Domain Users member here
  })

  it('a user holding one right directly and the other through a group gets it itself', () => {
    expect(dcsync([[21, 'GetChanges'], [12, 'GetChangesAll']], [[21, 12]])).toEqual([21])
    expect(dcsync([[12, 'GetChanges'], [21, 'GetChangesAll']], [[21, 12]])).toEqual([21])
  })

  it('a user holding the rights through two different groups gets it; a member group holding the other right gets it', () => {
    expect(dcsync([[10, 'GetChanges'], [11, 'GetChangesAll']], [[23, 10], [23, 11]])).toEqual([23])
    expect(dcsync([[10, 'GetChanges'], [11, 'GetChangesAll']], [[11, 10], [21, 11]])).toEqual([11])
  })

  it('negatives: one right only, disjoint holders, nobody', () => {
    expect(dcsync([[21, 'GetChanges']])).toEqual([])
    expect(dcsync([[10, 'GetChanges'], [11, 'GetChangesAll']], [[21, 10], [23, 11]])).toEqual([])
    expect(dcsync([[21, 'GetChanges'], [21, 'GetChangesInFilteredSet']])).toEqual([]) // that is SyncLAPSPassword
    expect(dcsync([[98, 'GetChanges']])).toEqual([]) // Everyone with one right, nobody with the other
  })

  it('SyncLAPSPassword uses the same cross product with GetChangesInFilteredSet; rows are grouped per domain', () => {
    const d = data([[98, 'GetChanges'], [12, 'GetChangesInFilteredSet'], [21, 'GetChangesAll']], [[22, 12]])
    d.holders.push({ domain: 2, domainsid: 'S-1-5-21-8', right: 'GetChangesAll', holder: 21 })
    expect(replicationHolders(d)).toEqual([
      { domain: 1, domainsid: 'S-1-5-21-9', dcsync: [21], lapsSyncers: [12] },
      { domain: 2, domainsid: 'S-1-5-21-8', dcsync: [], lapsSyncers: [] },
    ])
  })
})

describe('CanRDP on Citrix computers: the cross product of RDP members, DAU members and logon-right holders', () => {
  // node ids: computer 1, its RDP group 2, its DAU group 3; groups 10, 11; users 21…24; Everyone 99
  const node = (id: number, kinds: string[], objectid = `S-1-5-21-1-${id}`) => ({ id, objectid, kinds: JSON.stringify(kinds) })
  const base = [node(2, ['ADLocalGroup']), node(3, ['ADLocalGroup']), node(10, ['Group']), node(11, ['Group']), node(21, ['User']), node(22, ['User']), node(23, ['User']), node(24, ['User'])]
  const data = (membership: [number, number][], logonRight: number[], extra: ReturnType<typeof node>[] = []) => ({
    computers: [{ computer: 1, rdp: 2, dau: 3 }],
    logonRight: logonRight.map((h) => [1, h] as [number, number]),
    membership,
    nodes: [...base, ...extra],
  })

  it('a principal in all three sets through different groups gets it; one missing a set does not', () => {
    // RDP = {10 (21, 22), 23}; DAU = {10, 24}; right = {11 (21, 24)} → 21 only
    const d = data([[10, 2], [23, 2], [21, 10], [22, 10], [10, 3], [24, 3], [21, 11], [24, 11]], [11])
    expect(citrixCanRdp(d)).toEqual([[21, 1]])
  })

  it('a group in all three gets it, its members do not', () => {
    // RDP = {10 (21)}; DAU = {10}; right = {10} → 10
    expect(citrixCanRdp(data([[10, 2], [21, 10], [10, 3]], [10]))).toEqual([[10, 1]])
  })

  it('nested groups both in every set: both get it and (BloodHound XORs member sets) the inner group’s member comes back', () => {
    // RDP = {10}, 10 ∋ {11, 22}, 11 ∋ 21; DAU = {10}; right = {10}. The reference set is RDP's members
    // {10, 11, 21, 22}: 11 (smallest) is in DAU and the right through 10 → result, removes 21; 10 → result,
    // toggles {11, 21, 22}: 11 and 21 return, 22 leaves; 21 is in both other sets → result too.
    const d = data([[10, 2], [11, 10], [22, 10], [21, 11], [10, 3]], [10])
    expect(citrixCanRdp(d)).toEqual([[10, 1], [11, 1], [21, 1]])
  })

  it('Everyone holding the right constrains nothing; nobody holding it gives nobody', () => {
    const everyone = node(99, ['Group'], 'CTX.EXAMPLE-S-1-1-0')
    expect(citrixCanRdp(data([[21, 2], [22, 2], [21, 3]], [99], [everyone]))).toEqual([[21, 1]])
    expect(citrixCanRdp(data([[21, 2], [21, 3]], []))).toEqual([])
  })

  it('the computer itself is never given CanRDP to itself', () => {
    const d = { ...data([[1, 2], [1, 3]], [1]), nodes: [...base, node(1, ['Computer'])] }
    expect(citrixCanRdp(d)).toEqual([])
  })
})
