import { describe, expect, it } from 'vitest'
import { crossProduct, replicationHolders } from '../../src/collectors/postprocess'
import { citrixCanRdp } from '../../src/collectors/postprocess'
import type { ReplicationRow } from '../../src/collectors/postprocess.store'

describe('post-processing set arithmetic (DCSync, SyncLAPSPassword)', () => {
  const parents = (pairs: [number, number][]) => {
    const m = new Map<number, Set<number>>()
    for (const [child, parent] of pairs) m.set(child, new Set([...(m.get(child) ?? []), parent]))
    return m
  }

  it('a group holding both rights gets the relationship, its members do not', () => {
    // group 10 holds both; 11 is its member; 12 is a member of 11
    expect(crossProduct(new Set([10, 11, 12]), new Set([10, 11, 12]), parents([[11, 10], [12, 11]]))).toEqual([10])
  })

  it('a principal holding the rights through two different groups gets it itself', () => {
    // 20 holds A, 21 holds B, user 5 is a member of both
    expect(crossProduct(new Set([20, 5]), new Set([21, 5]), parents([[5, 20], [5, 21]]))).toEqual([5])
  })

  it('one right only: nothing; membership cycles terminate', () => {
    expect(crossProduct(new Set([1]), new Set([2]), new Map())).toEqual([])
    expect(crossProduct(new Set([1, 2]), new Set([1, 2]), parents([[1, 2], [2, 1]]))).toEqual([])
  })

  it('groups rows per domain and right', () => {
    const rows: ReplicationRow[] = [
      { domain: 1, domainsid: 'S-1', right: 'GetChanges', id: 7, parent: null },
      { domain: 1, domainsid: 'S-1', right: 'GetChangesAll', id: 7, parent: null },
      { domain: 1, domainsid: 'S-1', right: 'GetChangesInFilteredSet', id: 8, parent: null },
      { domain: 1, domainsid: 'S-1', right: 'GetChanges', id: 8, parent: null },
      { domain: 2, domainsid: 'S-2', right: 'GetChangesAll', id: 7, parent: null },
    ]
    expect(replicationHolders(rows)).toEqual([
      { domain: 1, domainsid: 'S-1', dcsync: [7], lapsSyncers: [8] },
      { domain: 2, domainsid: 'S-2', dcsync: [], lapsSyncers: [] },
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
