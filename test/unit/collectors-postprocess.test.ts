import { describe, expect, it } from 'vitest'
import { crossProduct, replicationHolders } from '../../src/collectors/postprocess'
import { crossProductSets } from '../../src/collectors/crossproduct'
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

describe('cross product of principal sets (BloodHound CalculateCrossProductNodeSets: Citrix CanRDP)', () => {
  const graph = (members: Record<number, number[]>, excluded: number[] = []) => ({
    members: new Map(Object.entries(members).map(([g, m]) => [Number(g), m])),
    groups: new Set([...Object.keys(members).map(Number), ...excluded]),
    excluded: new Set(excluded),
  })

  it('a principal in every set through different groups gets it; one missing a set does not', () => {
    // RDP 1 = {group 10 (21, 22), 23}; DAU 2 = {10, 24}; right 3 = {group 11 (21, 24)}
    const g = graph({ 1: [10, 23], 10: [21, 22], 2: [10, 24], 11: [21, 24] })
    expect(crossProductSets(g, [[1], [2], [11]])).toEqual([21])
  })

  it('nested groups both in every set: both get it, and (BloodHound XORs member sets) the inner group’s member comes back', () => {
    // first set {1}: 1 ∋ 10 ∋ {11, 22}, 11 ∋ 21; second set {2}: 2 ∋ 10. Worked out: 11 (smallest) is a
    // result and removes 21; 10 is a result and toggles {11, 21, 22}: 11 and 21 return, 22 leaves; 21 is in
    // the check set, so it is a result too.
    const g = graph({ 1: [10], 10: [11, 22], 11: [21], 2: [10] })
    expect(crossProductSets(g, [[1], [2]])).toEqual([10, 11, 21])
  })

  it('a set holding Everyone / Authenticated Users (directly or as a member of its group) constrains nothing', () => {
    const E = 99
    const g = graph({ 1: [21, 22], 2: [21], 3: [E] }, [E])
    expect(crossProductSets(g, [[1], [2], [E]])).toEqual([21]) // third set ignored
    expect(crossProductSets(g, [[1], [2], [3]])).toEqual([21]) // 3 has Everyone as a member
    expect(crossProductSets(g, [[1], [E]])).toEqual([1]) // one set left: its own entities
    expect(crossProductSets(g, [[E], [3]])).toEqual([3, E]) // none left: every entity
  })

  it('an empty set (nobody holds the right) or fewer than two sets: nothing', () => {
    const g = graph({ 1: [21], 2: [21] })
    expect(crossProductSets(g, [[1], [2], []])).toEqual([])
    expect(crossProductSets(g, [[1]])).toEqual([])
  })

  it('membership cycles terminate', () => {
    const g = graph({ 1: [2], 2: [1, 21], 3: [21] })
    expect(crossProductSets(g, [[1], [3]])).toEqual([21])
  })
})
