import { describe, expect, it } from 'vitest'
import { AD_ENTITY_TYPES, AZ_DESCENDENT_KINDS, AZ_ENTITY_TYPES, AZ_RELATED, traverses } from '../../src/graph/entities'
import { countOf, SECTION_TABLE, sectionsFor } from '../../ui/src/pages/explore/sections'
import { circleLayout, prefersSequential, ranks, sequentialLayout, RANK_GAP } from '../../ui/src/pages/explore/layouts'
import { exportGraph, mergeGraphs } from '../../ui/src/pages/explore/graph-ops'
import { GLYPHS, glyphForIcon, loadStyleTable, styleOf, styleTable } from '../../ui/src/pages/explore/kind-style'
import { tablePage, TABLE_PAGE_ROWS, thousands } from '../../ui/src/pages/explore/table-page'
import { SIGNALED, SYNC_GPU_COMMANDS_COMPLETE, SYNC_STATUS, unveil, whenRasterized, type FenceContext } from '../../ui/src/pages/explore/gpu-ready'
import { cameraAfterDrag, EDGE_LABELS_MAX, HIDE_EDGES_ON_MOVE_EDGES, LARGE_ANSWER_NODES, renderPlan } from '../../ui/src/pages/explore/render-plan'

describe('console node panel sections (ui/src/pages/explore/sections.ts)', () => {
  it('every AD section names a list the entity route serves, its count a key the detail returns, and draws only lists reached along relationships', () => {
    for (const [kind, t] of Object.entries(SECTION_TABLE).filter(([, t]) => t.platform === 'ad')) {
      const served = AD_ENTITY_TYPES.find((x) => x.segment === t.segment)
      expect(served, kind).toBeDefined()
      for (const s of t.sections) {
        expect(Object.keys(served!.lists), `${kind} ${s.label}`).toContain(s.list)
        if (s.count) expect(Object.keys(served!.counts), `${kind} ${s.label}`).toContain(s.count[0])
        expect(s.graph, `${kind} ${s.label}: graph`).toBe(traverses(served!.lists[s.list]))
      }
    }
  })
  it('every Azure section names a related type the route serves, and its count a key of the detail', () => {
    for (const [kind, t] of Object.entries(SECTION_TABLE).filter(([, t]) => t.platform === 'azure')) {
      const served = AZ_ENTITY_TYPES.find((x) => x.segment === t.segment)
      expect(served?.kind, kind).toBe(kind)
      for (const s of t.sections) {
        expect(Object.keys(AZ_RELATED), `${kind} ${s.label}`).toContain(s.list)
        if (!s.count) continue
        const keys = served!.counts.map((c) => c.key.join('.'))
        if (s.count[0] === 'descendents') {
          expect(keys).toContain('descendents.descendent_counts')
          expect(AZ_DESCENDENT_KINDS[s.list]).toBe(s.count[2])
        } else expect(keys, `${kind} ${s.label}`).toContain(s.count.join('.'))
      }
    }
  })
  it('a node gets its primary kind’s sections; other on-premises kinds the base object control; extension kinds none', () => {
    expect(sectionsFor(['User', 'Base'])!.segment).toBe('users')
    expect(sectionsFor(['Base', 'Group'])!.segment).toBe('groups')
    expect(sectionsFor(['AZUser', 'AZBase'])).toMatchObject({ platform: 'azure', segment: 'users' })
    expect(sectionsFor(['LocalGroup'])!.segment).toBe('base')
    expect(sectionsFor(['GH_Repository'])).toBeNull()
    const labels = sectionsFor(['User'])!.sections.map((s) => s.label)
    for (const want of ['Sessions', 'Member of', 'Local admin rights', 'Outbound object control', 'Inbound object control']) expect(labels).toContain(want)
    expect(sectionsFor(['Group'])!.sections.map((s) => s.label)).toContain('Members')
  })
  it('counts are read from the detail, nested keys included; a descendant kind absent from the counts is 0', () => {
    const user = sectionsFor(['User'])!.sections
    expect(countOf(user.find((s) => s.label === 'Member of')!, { props: {}, groupMembership: 3 })).toBe(3)
    expect(countOf(user.find((s) => s.label === 'Member of')!, { props: {} })).toBeUndefined()
    const kv = sectionsFor(['AZKeyVault'])!.sections
    expect(countOf(kv[0], { Readers: { KeyReaders: 4 } })).toBe(4)
    const tenant = sectionsFor(['AZTenant'])!.sections
    const users = tenant.find((s) => s.list === 'descendent-users')!
    expect(countOf(users, { descendents: { descendent_counts: { AZUser: 7 } } })).toBe(7)
    expect(countOf(tenant.find((s) => s.list === 'descendent-devices')!, { descendents: { descendent_counts: { AZUser: 7 } } })).toBe(0)
    expect(countOf(sectionsFor(['Base'])!.sections[1], { props: {} })).toBeUndefined()
  })
})

describe('console layouts (ui/src/pages/explore/layouts.ts)', () => {
  it('a path is laid out left to right, one column per step', () => {
    const pos = sequentialLayout(['c', 'a', 'b'], [{ source: 'a', target: 'b' }, { source: 'b', target: 'c' }])
    expect(pos.get('a')).toEqual({ x: 0, y: 0 })
    expect(pos.get('b')).toEqual({ x: RANK_GAP, y: 0 })
    expect(pos.get('c')).toEqual({ x: 2 * RANK_GAP, y: 0 })
  })
  it('rank is the longest distance from a root; a cycle does not loop and every node gets a position', () => {
    const r = ranks(['a', 'b', 'c', 'd'], [{ source: 'a', target: 'b' }, { source: 'b', target: 'c' }, { source: 'a', target: 'c' }, { source: 'c', target: 'b' }, { source: 'd', target: 'd' }])
    expect(r.get('a')).toBe(0)
    expect(r.get('d')).toBe(0)
    expect(r.get('c')! > r.get('b')! || r.get('b')! > r.get('c')!).toBe(true)
    const pos = sequentialLayout(['x', 'y'], [{ source: 'x', target: 'y' }, { source: 'y', target: 'x' }])
    expect(pos.size).toBe(2)
    expect(new Set([...pos.values()].map((p) => p.x)).size).toBe(2)
  })
  it('nodes of one column do not overlap, and are ordered after their predecessors (fewer crossings)', () => {
    const edges = [
      { source: 'r', target: 'p1' }, { source: 'r', target: 'p2' },
      { source: 'p2', target: 'q2' }, { source: 'p1', target: 'q1' },
    ]
    const pos = sequentialLayout(['r', 'p1', 'p2', 'q2', 'q1'], edges)
    expect(pos.get('p1')!.y).not.toBe(pos.get('p2')!.y)
    expect(Math.sign(pos.get('q1')!.y - pos.get('q2')!.y)).toBe(Math.sign(pos.get('p1')!.y - pos.get('p2')!.y))
  })
  it('paths prefer the sequential layout; large or dense answers and answers without edges do not', () => {
    expect(prefersSequential(3, [{ source: 'a', target: 'b' }])).toBe(true)
    expect(prefersSequential(3, [])).toBe(false)
    expect(prefersSequential(301, [{ source: 'a', target: 'b' }])).toBe(false)
    const star = Array.from({ length: 20 }, (_, i) => ({ source: 'hub', target: `n${i}` }))
    expect(prefersSequential(21, star)).toBe(false)
    expect(circleLayout(['a', 'b']).get('b')!.x).toBeCloseTo(-100)
  })
})

describe('console graph operations (ui/src/pages/explore/graph-ops.ts)', () => {
  const n = (id: string, objectId: string, name = objectId) => ({ id, name, kind: 'User', objectId })
  it('merging a section walk keeps objects once (same object id, whatever the answer keyed them by) and drops repeated edges', () => {
    const a = { nodes: [n('S-1', 'S-1'), n('2', 'S-2')], edges: [{ source: 'S-1', target: '2', kind: 'MemberOf' }] }
    const b = { nodes: [n('10', 'S-1'), n('11', 'S-2'), n('2', 'S-3')], edges: [{ source: '10', target: '11', kind: 'MemberOf' }, { source: '11', target: '2', kind: 'AdminTo' }] }
    const m = mergeGraphs(a, b)
    expect(m.nodes.map((x) => [x.id, x.objectId])).toEqual([['S-1', 'S-1'], ['2', 'S-2'], ['obj:S-3', 'S-3']])
    expect(m.edges).toEqual([{ source: 'S-1', target: '2', kind: 'MemberOf' }, { source: '2', target: 'obj:S-3', kind: 'AdminTo' }])
  })
  it('the JSON export lists the drawn nodes and relationships by object id', () => {
    const doc = JSON.parse(exportGraph({ nodes: [n('1', 'S-1', 'ANN'), n('2', 'S-2', 'BOB')], edges: [{ source: '1', target: '2', kind: 'AdminTo' }] }, new Date('2026-11-29T00:00:00Z')))
    expect(doc).toEqual({
      exported_at: '2026-11-29T00:00:00.000Z',
      nodes: [{ id: '1', name: 'ANN', kind: 'User', object_id: 'S-1' }, { id: '2', name: 'BOB', kind: 'User', object_id: 'S-2' }],
      edges: [{ source: 'S-1', target: 'S-2', kind: 'AdminTo' }],
    })
  })
})

describe('console kind styles (ui/src/pages/explore/kind-style.ts)', () => {
  it('built-in kinds have their own colour and glyph; the primary kind wins; unknown kinds a stable colour and the generic glyph', () => {
    expect(styleOf('User').glyph).toBe('user')
    expect(styleOf(['Computer', 'Base']).glyph).toBe('computer')
    expect(styleOf(['Base', 'Computer']).glyph).toBe('computer')
    expect(styleOf('GH_Repo')).toEqual(styleOf('GH_Repo'))
    expect(styleOf('GH_Repo').glyph).toBe('generic')
    expect(styleOf('GH_Repo').colour).not.toBe(styleOf('GH_User').colour)
    for (const path of Object.values(GLYPHS)) expect(path).toMatch(/^M[\d. ,a-zA-Z-]+$/)
  })
  it('extension node kinds bring their colour and icon (matched to a glyph by name); a bad colour falls back', () => {
    const t = styleTable([
      { name: 'GH_User', icon: 'user-astronaut', color: '#123abc' },
      { name: 'GH_Org', icon: 'building-columns', color: 'red' },
      { name: 'GH_Team', icon: 'people-group', color: '' },
      { name: 'User', icon: 'robot', color: '#000' },
    ])
    expect(styleOf('GH_User', t)).toEqual({ colour: '#123abc', glyph: 'user' })
    expect(styleOf('GH_Org', t).glyph).toBe('certificate')
    expect(styleOf('GH_Org', t).colour).toMatch(/^hsl/)
    expect(styleOf('GH_Team', t).glyph).toBe('group')
    expect(styleOf('User', t)).toEqual({ colour: '#000', glyph: 'robot' })
    expect(glyphForIcon('zzz')).toBe('generic')
    expect(glyphForIcon(null)).toBe('generic')
  })
  it('custom node kinds (/api/v2/custom-nodes) win over the extension and the built-in look of the same kind', () => {
    const ext = [{ name: 'GH_User', icon: 'user', color: '#111111' }]
    const t = styleTable(ext, [
      { name: 'GH_User', icon: 'server', color: '#222222' },
      { name: 'Computer', icon: 'cloud', color: '#333' },
    ])
    expect(styleOf('GH_User', t)).toEqual({ colour: '#222222', glyph: 'server' })
    expect(styleOf('Computer', t)).toEqual({ colour: '#333', glyph: 'cloud' })
    // without the custom kind the extension's look is back
    expect(styleOf('GH_User', styleTable(ext))).toEqual({ colour: '#111111', glyph: 'user' })
  })
  it("Explore's table from its sources: GET /api/v2/custom-nodes answers over the extensions' kinds over the built-ins; a failing source leaves the other's", async () => {
    const ext = async () => [
      { name: 'GH_User', icon: 'user', color: '#111111' },
      { name: 'Computer', icon: 'robot', color: '#444444' },
    ]
    // the route's answer shape (src/client/graph.ts CustomNodeKindJson)
    const custom = async () => ({
      data: [
        { id: 1, kindName: 'GH_User', config: { icon: { type: 'font-awesome' as const, name: 'server', color: '#222222' } } },
        { id: 2, kindName: 'User', config: { icon: { type: 'font-awesome' as const, name: 'cloud', color: '#333333' } } },
      ],
    })
    const t = await loadStyleTable({ extensionKinds: ext, customNodeKinds: custom })
    expect(styleOf('GH_User', t)).toEqual({ colour: '#222222', glyph: 'server' }) // custom over extension
    expect(styleOf('User', t)).toEqual({ colour: '#333333', glyph: 'cloud' }) // custom over built-in
    expect(styleOf('Computer', t)).toEqual({ colour: '#444444', glyph: 'robot' }) // extension over built-in
    expect(styleOf('Group', t)).toEqual(styleOf('Group')) // untouched built-in
    const failing = async () => {
      throw new Error('404 no such endpoint')
    }
    const noCustom = await loadStyleTable({ extensionKinds: ext, customNodeKinds: failing })
    expect(styleOf('GH_User', noCustom)).toEqual({ colour: '#111111', glyph: 'user' })
    expect(styleOf('User', noCustom)).toEqual(styleOf('User'))
    const noExt = await loadStyleTable({ extensionKinds: failing, customNodeKinds: custom })
    expect(styleOf('GH_User', noExt)).toEqual({ colour: '#222222', glyph: 'server' })
    expect(styleOf('Computer', noExt)).toEqual(styleOf('Computer'))
  })
})

describe('console drawing plan by answer size (ui/src/pages/explore/render-plan.ts)', () => {
  it('a small answer keeps arrows, relationship labels, edge events, glyphs while moving and draws before its layout', () => {
    const p = renderPlan(12, 20)
    expect(p).toMatchObject({ large: false, edgeType: 'arrow', renderEdgeLabels: true, enableEdgeEvents: true, zIndex: true, hideEdgesOnMove: false, hideLabelsOnMove: false, glyphsOnlyAtRest: false, panByMovingPicture: false, layoutBeforeDrawing: false, labelRenderedSizeThreshold: 0 })
    expect(renderPlan(300, EDGE_LABELS_MAX + 1).renderEdgeLabels).toBe(false)
  })
  it('many relationships are hidden while the camera moves even when the nodes are few', () => {
    expect(renderPlan(LARGE_ANSWER_NODES, HIDE_EDGES_ON_MOVE_EDGES).hideEdgesOnMove).toBe(false)
    expect(renderPlan(LARGE_ANSWER_NODES, HIDE_EDGES_ON_MOVE_EDGES + 1)).toMatchObject({ hideEdgesOnMove: true, large: false, panByMovingPicture: false })
  })
  it('a large answer (over 1,000 nodes, e.g. 5,000 / 10,000) pans the drawn picture, is laid out before drawing, and draws cheaply', () => {
    expect(renderPlan(LARGE_ANSWER_NODES, 0).large).toBe(false)
    const p = renderPlan(5000, 10000)
    expect(p).toMatchObject({ large: true, edgeType: 'line', renderEdgeLabels: false, enableEdgeEvents: false, zIndex: false, hideEdgesOnMove: true, hideLabelsOnMove: true, glyphsOnlyAtRest: true, panByMovingPicture: true, layoutBeforeDrawing: true, layoutIterations: 100 })
    expect(p.nodeSize).toBeLessThan(renderPlan(100, 100).nodeSize)
  })
  it('after a drag the graph point under the pointer stays under it (camera moves against the drag)', () => {
    // a viewport→graph map with zoom 1/200 and the y axis flipped, as sigma's framed graph has
    const toGraph = (p: { x: number; y: number }) => ({ x: 0.5 + (p.x - 400) / 200, y: 0.5 - (p.y - 300) / 200 })
    const cam = cameraAfterDrag({ x: 0.5, y: 0.5 }, 100, -40, toGraph)
    expect(cam.x).toBeCloseTo(0.0)
    expect(cam.y).toBeCloseTo(0.3)
    const still = cameraAfterDrag({ x: 0.2, y: 0.7 }, 0, 0, toGraph)
    expect(still.x).toBeCloseTo(0.2)
    expect(still.y).toBeCloseTo(0.7)
  })
})

describe('console table view pages (ui/src/pages/explore/table-page.ts)', () => {
  it('a 5,000-node answer is listed 100 rows at a time: first, a middle and the last page, with their range', () => {
    expect(TABLE_PAGE_ROWS).toBe(100)
    expect(tablePage(5000, 0)).toEqual({ page: 0, pages: 50, start: 0, end: 100, hasPrevious: false, hasNext: true, range: '1–100 of 5,000' })
    expect(tablePage(5000, 1)).toMatchObject({ start: 100, end: 200, hasPrevious: true, hasNext: true, range: '101–200 of 5,000' })
    expect(tablePage(10_001, 100)).toMatchObject({ page: 100, pages: 101, start: 10_000, end: 10_001, hasPrevious: true, hasNext: false, range: '10,001–10,001 of 10,001' })
  })
  it('a page past either end is the nearest one (a new, shorter answer never shows an empty page); small lists are one page', () => {
    expect(tablePage(250, 7)).toMatchObject({ page: 2, start: 200, end: 250, hasNext: false })
    expect(tablePage(250, -3)).toMatchObject({ page: 0, start: 0, end: 100, hasPrevious: false })
    expect(tablePage(4, 0)).toEqual({ page: 0, pages: 1, start: 0, end: 4, hasPrevious: false, hasNext: false, range: '1–4 of 4' })
    expect(tablePage(0, 3)).toEqual({ page: 0, pages: 1, start: 0, end: 0, hasPrevious: false, hasNext: false, range: '0 of 0' })
  })
  it('counts are written as in English (thousands separated)', () => {
    for (const n of [0, 7, 999, 1000, 5000, 10_000, 123_456, 1_234_567]) expect(thousands(n)).toBe(n.toLocaleString('en'))
  })
})

describe('console: a large drawing shown once rasterised (ui/src/pages/explore/gpu-ready.ts)', () => {
  /** A WebGL 2 context whose fence passes after `polls` status reads; records its calls. */
  function fakeGl(polls: number, lost = false) {
    const calls: string[] = []
    let reads = 0
    const gl: FenceContext = {
      flush: () => void calls.push('flush'),
      isContextLost: () => lost,
      fenceSync: (cond, flags) => (calls.push(`fence ${cond === SYNC_GPU_COMMANDS_COMPLETE} ${flags}`), { sync: true }),
      getSyncParameter: (_s, pname) => (expect(pname).toBe(SYNC_STATUS), ++reads > polls ? SIGNALED : 0x9118),
      deleteSync: () => void calls.push('delete'),
    }
    return { gl, calls, reads: () => reads }
  }
  it('waits, between tasks, until every context has passed a fence placed after the drawing, then deletes the fences', async () => {
    const a = fakeGl(2)
    const b = fakeGl(0)
    let waits = 0
    expect(await whenRasterized([a.gl, b.gl], async () => void waits++)).toBe(true)
    expect(waits).toBe(2)
    expect(a.calls).toEqual(['fence true 0', 'flush', 'delete'])
    expect(b.calls).toEqual(['fence true 0', 'flush', 'delete'])
  })
  it('never holds the drawing back: a WebGL 1 context (no fences), a lost context, a stop, or the time limit end the wait', async () => {
    const webgl1 = { flush: () => {}, isContextLost: () => false }
    expect(await whenRasterized([webgl1], async () => expect.fail('no wait without a fence'))).toBe(true)
    expect(await whenRasterized([fakeGl(5, true).gl], async () => expect.fail('no wait on a lost context'))).toBe(false)
    let stopped = false
    expect(await whenRasterized([fakeGl(1e9).gl], async () => void (stopped = true), { stop: () => stopped })).toBe(false)
    let t = 0
    const stuck = fakeGl(1e9)
    expect(await whenRasterized([stuck.gl], async () => void (t += 16), { limitMs: 100, now: () => t })).toBe(false)
    expect(stuck.reads()).toBeLessThanOrEqual(8)
  })
  it('shows the hidden layers one per frame, in order, and leaves shown ones alone', async () => {
    const layers = ['hidden', '', 'hidden', 'hidden'].map((visibility) => ({ style: { visibility } }))
    const seen: string[] = []
    const frames = await unveil(layers, async () => void seen.push(layers.map((l) => (l.style.visibility ? 'h' : 's')).join('')))
    expect(frames).toBe(3)
    expect(seen).toEqual(['hshh', 'sshh', 'sssh'])
    expect(layers.every((l) => l.style.visibility === '')).toBe(true)
    const rest = [{ style: { visibility: 'hidden' } }, { style: { visibility: 'hidden' } }]
    let n = 0
    expect(await unveil(rest, async () => void n++, () => n >= 1)).toBe(1)
    expect(rest.map((l) => l.style.visibility)).toEqual(['hidden', 'hidden'])
  })
})
