import { describe, expect, it } from 'vitest'
import { crossProduct, replicationHolders } from '../../src/collectors/postprocess'
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
