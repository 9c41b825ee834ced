import { describe, expect, it } from 'vitest'
import { drawMode, edgeRows, fromGraphAnswer, fromSearchResult, kindColour, MAX_DRAWN_NODES } from '../../ui/src/pages/explore/graph-model'

const node = (label: string, kind: string, objectId: string) => ({ label, kind, objectId, kinds: [kind], isTierZero: false, isOwnedObject: false, lastSeen: '' })

describe('console graph model (ui/src/pages/explore/graph-model.ts)', () => {
  it('builds nodes and edges from a path or Cypher answer; drops edges whose ends are missing', () => {
    const g = fromGraphAnswer({
      nodes: { '1': node('ALICE@CORP', 'User', 'S-1'), '2': node('ADMINS@CORP', 'Group', 'S-2') },
      edges: [
        { source: '1', target: '2', kind: 'MemberOf', label: 'MemberOf' },
        { source: '2', target: '9', kind: 'AdminTo', label: 'AdminTo' },
      ],
    })
    expect(g.nodes).toEqual([
      { id: '1', name: 'ALICE@CORP', kind: 'User', objectId: 'S-1', kinds: ['User'] },
      { id: '2', name: 'ADMINS@CORP', kind: 'Group', objectId: 'S-2', kinds: ['Group'] },
    ])
    expect(g.edges).toEqual([{ source: '1', target: '2', kind: 'MemberOf' }])
    expect(edgeRows(g)).toEqual([{ from: 'ALICE@CORP', kind: 'MemberOf', to: 'ADMINS@CORP' }])
  })
  it('keeps the kinds and the Tier Zero / Owned flags of an answer node', () => {
    const g = fromGraphAnswer({ nodes: { '1': { ...node('DA@CORP', 'Group', 'S-512'), kinds: ['Group', 'Base'], isTierZero: true, isOwnedObject: true } }, edges: [] })
    expect(g.nodes[0]).toMatchObject({ kinds: ['Group', 'Base'], tierZero: true, owned: true })
  })
  it('a nameless node is named by its object id; an empty answer is empty', () => {
    expect(fromGraphAnswer({ nodes: { a: node('', 'User', 'S-9') }, edges: [] }).nodes[0].name).toBe('S-9')
    expect(drawMode(fromGraphAnswer(null))).toBe('empty')
    expect(fromSearchResult({ objectid: 'S-3', name: 'BOB@CORP', type: 'User' }).nodes).toEqual([{ id: 'S-3', name: 'BOB@CORP', kind: 'User', objectId: 'S-3' }])
  })
  it('the 5,000-node rule: up to 5,000 nodes are drawn, more are a table only', () => {
    const many = (n: number) => fromGraphAnswer({ nodes: Object.fromEntries(Array.from({ length: n }, (_, i) => [String(i), node(`N${i}`, 'User', `S-${i}`)])), edges: [] })
    expect(MAX_DRAWN_NODES).toBe(5000)
    expect(drawMode(many(5000))).toBe('graph')
    expect(drawMode(many(5001))).toBe('table-only')
    expect(drawMode(many(3), 2)).toBe('table-only')
  })
  it('colours: fixed per common kind, stable and distinct for others', () => {
    expect(kindColour('User')).not.toBe(kindColour('Group'))
    expect(kindColour('MyExtensionKind')).toBe(kindColour('MyExtensionKind'))
    expect(kindColour('MyExtensionKind')).toMatch(/^hsl\(\d+, 55%, 50%\)$/)
  })
})
