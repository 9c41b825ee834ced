/** src/graph/composition.ts: the walks that make up a composite relationship (pure, data access injected). */
import { describe, expect, it } from 'vitest'
import { adminUnion, CompositionTooLarge, walkUnion } from '../../src/graph/composition'
import type { Expand, PathEdge } from '../../src/graph/path'

const graph = (edges: [number, string, number][]): Expand => {
  const all: PathEdge[] = edges.map(([from, kind, to]) => ({ from, kind, to }))
  return async (frontier, dir, max) => {
    const set = new Set(frontier)
    return all.filter((e) => set.has(dir === 'out' ? e.from : e.to)).slice(0, max + 1)
  }
}
const lines = (es: PathEdge[]) => es.map((e) => `${e.from} ${e.kind} ${e.to}`).sort()

describe('walkUnion', () => {
  it('keeps every relationship on a walk of at most maxLength from source to target, nothing else', async () => {
    // 1→2→3→9 (length 3), 1→4→9 (length 2), 2→5 (dead end), 6→9 (not from 1), 1→7→8→10→11→9 (length 5)
    const g = graph([
      [1, 'a', 2], [2, 'a', 3], [3, 'a', 9], [1, 'a', 4], [4, 'a', 9], [2, 'a', 5], [6, 'a', 9],
      [1, 'a', 7], [7, 'a', 8], [8, 'a', 10], [10, 'a', 11], [11, 'a', 9],
    ])
    expect(lines(await walkUnion(1, 9, g, { maxLength: 3, maxEdges: 100 }))).toEqual(['1 a 2', '1 a 4', '2 a 3', '3 a 9', '4 a 9'])
    expect(await walkUnion(1, 9, g, { maxLength: 5, maxEdges: 100 })).toHaveLength(10)
    expect(await walkUnion(1, 6, g, { maxLength: 5, maxEdges: 100 })).toEqual([])
  })

  it('stops past its budget of fetched relationships', async () => {
    const edges: [number, string, number][] = Array.from({ length: 50 }, (_, i) => [1, 'a', 100 + i])
    await expect(walkUnion(1, 9, graph(edges), { maxLength: 3, maxEdges: 20 })).rejects.toBeInstanceOf(CompositionTooLarge)
  })
})

describe('adminUnion', () => {
  it('keeps AdminTo chains that start from a computer other than the target', async () => {
    // computer 2 ∈ group 3 -AdminTo-> 9; user 4 ∈ group 3; computer 5 -AdminTo-> 9 directly; 9 ∈ group 6 -AdminTo-> 9
    const g = graph([[2, 'MemberOf', 3], [4, 'MemberOf', 3], [3, 'AdminTo', 9], [5, 'AdminTo', 9], [9, 'MemberOf', 6], [6, 'AdminTo', 9]])
    const computers = async (ids: number[]) => new Set(ids.filter((i) => [2, 5, 9].includes(i)))
    expect(lines(await adminUnion(9, g, computers, { maxLength: 6, maxEdges: 100 }))).toEqual(['2 MemberOf 3', '3 AdminTo 9', '5 AdminTo 9'])
  })
})
