import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { allShortestPaths, PathSearchTooLarge, type PathEdge } from '../../src/graph/path'
import { graphKinds, parseRelationshipKinds, environmentKindOf, BUILTIN_RELATIONSHIPS } from '../../src/graph/kinds'
import type { KindCatalog } from '../../src/extensions/catalog'

/** In-memory expansion over an edge list, counting calls. */
function memoryGraph(edges: PathEdge[]) {
  let calls = 0
  const expand = async (frontier: number[], dir: 'out' | 'in') => {
    calls++
    const set = new Set(frontier)
    return edges.filter((e) => set.has(dir === 'out' ? e.from : e.to))
  }
  return { expand, calls: () => calls }
}

const LIMITS = { maxDepth: 64, maxEdges: 1_000_000 }

/** Reference: all shortest paths by plain BFS from both ends (dist(s,v) + dist(v,t) = d, edge on a shortest path). */
function reference(edges: PathEdge[], s: number, t: number): { length: number; edges: string[] } | null {
  const bfs = (root: number, dir: 'out' | 'in') => {
    const dist = new Map([[root, 0]])
    let front = [root]
    while (front.length) {
      const next: number[] = []
      for (const v of front)
        for (const e of edges) {
          const [a, b] = dir === 'out' ? [e.from, e.to] : [e.to, e.from]
          if (a === v && !dist.has(b)) {
            dist.set(b, dist.get(v)! + 1)
            next.push(b)
          }
        }
      front = next
    }
    return dist
  }
  const ds = bfs(s, 'out')
  const dt = bfs(t, 'in')
  const d = ds.get(t)
  if (d === undefined) return null
  const on = edges.filter((e) => ds.has(e.from) && dt.has(e.to) && ds.get(e.from)! + 1 + dt.get(e.to)! === d)
  return { length: d, edges: [...new Set(on.map((e) => `${e.from}|${e.kind}|${e.to}`))].sort() }
}

describe('all shortest paths (bidirectional BFS)', () => {
  it('finds a simple chain and the union of parallel shortest paths', async () => {
    const e = (from: number, to: number, kind = 'K'): PathEdge => ({ from, to, kind })
    const g = memoryGraph([e(1, 2), e(2, 3), e(1, 4), e(4, 3), e(3, 5), e(1, 5, 'Long'), e(5, 6), e(2, 9), e(9, 3)])
    const r = (await allShortestPaths(1, 6, g.expand, LIMITS))!
    expect(r.length).toBe(2)
    expect(r.edges.map((x) => `${x.from}-${x.to}`).sort()).toEqual(['1-5', '5-6'])
    const r2 = (await allShortestPaths(1, 3, g.expand, LIMITS))!
    expect(r2.length).toBe(2)
    expect(r2.nodes.sort()).toEqual([1, 2, 3, 4])
    expect(r2.edges).toHaveLength(4)
  })

  it('no path, self path, depth limit and work limit', async () => {
    const g = memoryGraph([{ from: 1, to: 2, kind: 'K' }, { from: 3, to: 2, kind: 'K' }])
    expect(await allShortestPaths(1, 3, g.expand, LIMITS)).toBeNull()
    expect(await allShortestPaths(7, 7, g.expand, LIMITS)).toEqual({ nodes: [7], edges: [], length: 0 })
    const chain = memoryGraph(Array.from({ length: 10 }, (_, i) => ({ from: i, to: i + 1, kind: 'K' })))
    expect(await allShortestPaths(0, 10, chain.expand, { maxDepth: 9, maxEdges: 100 })).toBeNull()
    expect((await allShortestPaths(0, 10, chain.expand, { maxDepth: 10, maxEdges: 100 }))!.length).toBe(10)
    const star = memoryGraph(Array.from({ length: 50 }, (_, i) => ({ from: 0, to: i + 1, kind: 'K' })))
    await expect(allShortestPaths(0, 99, star.expand, { maxDepth: 10, maxEdges: 20 })).rejects.toBeInstanceOf(PathSearchTooLarge)
  })

  it('hands every expansion the budget left, so the store can stop in SQL', async () => {
    const budgets: number[] = []
    const chain = Array.from({ length: 6 }, (_, i) => ({ from: i, to: i + 1, kind: 'K' }))
    const expand = async (f: number[], d: 'out' | 'in', max: number) => {
      budgets.push(max)
      const set = new Set(f)
      return chain.filter((e) => set.has(d === 'out' ? e.from : e.to)).slice(0, max + 1)
    }
    expect((await allShortestPaths(0, 6, expand, { maxDepth: 10, maxEdges: 100 }))!.length).toBe(6)
    // one edge per expansion: the budget left shrinks by one each time
    expect(budgets).toEqual(budgets.map((_, i) => 100 - i))
    await expect(allShortestPaths(0, 6, expand, { maxDepth: 10, maxEdges: 3 })).rejects.toBeInstanceOf(PathSearchTooLarge)
  })

  it('expands the smaller frontier: a hub near the start does not make the search fan out from it', async () => {
    // 0 -> hub(1) -> 1000 leaves; one leaf (500) -> target 9999. Target has a single in-edge.
    const edges: PathEdge[] = [{ from: 0, to: 1, kind: 'K' }, { from: 500 + 2, to: 9999, kind: 'K' }]
    for (let i = 2; i < 1002; i++) edges.push({ from: 1, to: i, kind: 'K' })
    const g = memoryGraph(edges)
    const r = (await allShortestPaths(0, 9999, g.expand, LIMITS))!
    expect(r.length).toBe(3)
    expect(g.calls()).toBeLessThanOrEqual(3)
  })

  it('agrees with a reference BFS on random graphs (property test)', async () => {
    const edge = fc.record({ from: fc.integer({ min: 0, max: 14 }), to: fc.integer({ min: 0, max: 14 }), kind: fc.constantFrom('A', 'B') })
    await fc.assert(
      fc.asyncProperty(fc.array(edge, { maxLength: 45 }), fc.integer({ min: 0, max: 14 }), fc.integer({ min: 0, max: 14 }), async (edges, s, t) => {
        fc.pre(s !== t)
        // the store returns each stored edge once: (from, kind, to) is unique
        const unique = [...new Map(edges.map((e) => [`${e.from}|${e.kind}|${e.to}`, e])).values()]
        const got = await allShortestPaths(s, t, memoryGraph(unique).expand, LIMITS)
        const want = reference(unique, s, t)
        if (!want) expect(got).toBeNull()
        else {
          expect(got!.length).toBe(want.length)
          expect(got!.edges.map((e) => `${e.from}|${e.kind}|${e.to}`).sort()).toEqual(want.edges)
        }
      }),
      { numRuns: 400 },
    )
  })
})

const catalog = (over: Partial<KindCatalog> = {}): KindCatalog => ({
  nodeKinds: new Set(),
  relationshipKinds: new Map(),
  environments: [],
  relationshipFindings: [],
  version: `test-${Math.random()}`,
  ...over,
})

describe('kinds from the catalogue', () => {
  it('falls back to the built-in AD/Azure table; the catalogue wins where it knows a kind', () => {
    const k = graphKinds(catalog())
    expect(k.traversable).toContain('MemberOf')
    expect(k.traversable).toContain('AZMemberOf')
    expect(k.traversable).not.toContain('GetChanges')
    const c = graphKinds(
      catalog({
        relationshipKinds: new Map([
          ['MemberOf', { traversable: false, extensionName: 'AD' }],
          ['GL_MaintainerOf', { traversable: true, extensionName: 'GitLab' }],
          ['GL_ViewerOf', { traversable: false, extensionName: 'GitLab' }],
        ]),
      }),
    )
    expect(c.traversable).not.toContain('MemberOf')
    expect(c.traversable).toContain('GL_MaintainerOf')
    expect(c.relationships.get('GL_ViewerOf')).toBe(false)
    expect(c.traversable).toEqual([...c.traversable].sort())
  })

  it('environment types: AD and Azure fixed, extensions by display name', () => {
    const k = graphKinds(
      catalog({
        environments: [
          { environmentKind: 'Domain', sourceKind: 'AD', principalKinds: [], extensionName: 'AD', extensionDisplayName: 'Active Directory', isBuiltin: true },
          { environmentKind: 'GL_Instance', sourceKind: 'GitLab', principalKinds: [], extensionName: 'GitLab Graph', extensionDisplayName: 'GitLab', isBuiltin: false },
        ],
      }),
    )
    expect(Object.fromEntries(k.environmentTypes)).toEqual({ Domain: 'active-directory', AZTenant: 'azure', GL_Instance: 'GitLab' })
    expect(environmentKindOf(['Base', 'GL_Instance'], k.environmentTypes)).toBe('GL_Instance')
    expect(environmentKindOf(['User', 'Base'], k.environmentTypes)).toBeNull()
  })

  it('parses relationship_kinds in:/nin: and rejects the rest', () => {
    const k = graphKinds(catalog())
    expect(parseRelationshipKinds(undefined, k)).toEqual({ ok: true, kinds: k.traversable })
    expect(parseRelationshipKinds('in:MemberOf, AdminTo,MemberOf', k)).toEqual({ ok: true, kinds: ['AdminTo', 'MemberOf'] })
    expect(parseRelationshipKinds('in:GetChanges', k)).toEqual({ ok: true, kinds: ['GetChanges'] })
    const nin = parseRelationshipKinds('nin:MemberOf', k)
    expect(nin.ok && nin.kinds.includes('MemberOf')).toBe(false)
    expect(nin.ok && nin.kinds.length).toBe(k.traversable.length - 1)
    for (const bad of ['MemberOf', 'in:', 'in:Member-Of', 'xin:MemberOf', 'in:MemberOf,'])
      expect(parseRelationshipKinds(bad, k)).toMatchObject({ ok: false, message: expect.stringContaining('in|nin:Kind1,Kind2') })
    const unknown = parseRelationshipKinds('in:Nope', k)
    expect(unknown).toMatchObject({ ok: false, message: expect.stringContaining('unknown kind(s) Nope') })
    const all = parseRelationshipKinds(`nin:${k.traversable.join(',')}`, k)
    expect(all).toMatchObject({ ok: false, message: expect.stringContaining('empty') })
    expect(BUILTIN_RELATIONSHIPS.size).toBeGreaterThan(100)
  })
})
