/// <reference types="node" />
/**
 * The served floor's answers (bench/lib/served-floor.ts): the service's shape for `include_properties: false`,
 * the service's rows (its id order), and the check that compares two answers. Pure; a hand-made graph.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { GenGraph, GenNode } from '../lib/generate'
import { answerDifference, servedFloorAnswers, type FloorAnswer } from '../lib/served-floor'

const SID = 'S-1-5-21-1-2-3'
const node = (rid: number, kinds: string[], properties: GenNode['properties']): GenNode => ({ objectid: `${SID}-${rid}`, kinds, properties: { objectid: `${SID}-${rid}`, ...properties } })

/** 0 c1, 1 c2 (Computers), 2 u1, 3 administrator (Tier Zero by its isTierZero property; no Base stored), 4 group, 5 an OU; edges by index. */
function tiny(): { g: GenGraph; ids: Map<string, number> } {
  const nodes = [
    node(1001, ['Computer', 'Base'], { name: 'C1.CORP', operatingsystem: 'Windows 11 Enterprise' }),
    node(1002, ['Computer', 'Base'], { name: 'C2.CORP' }),
    node(1003, ['User', 'Base'], { name: 'U1@CORP', enabled: true, hasspn: true, pwdlastset: 200 }),
    node(500, ['User'], { name: 'ADMINISTRATOR@CORP', enabled: true, hasspn: false, pwdlastset: 200, isTierZero: true }),
    node(1004, ['Group', 'Base'], { name: 'G@CORP' }),
    node(1005, ['OU', 'Base'], { name: 'OU@CORP' }),
  ]
  const edges: [number, string, number][] = [
    [0, 'HasSession', 2],
    [1, 'HasSession', 3],
    [0, 'HasSession', 3],
    [5, 'HasSession', 2], // not from a Computer: not a row
    [2, 'MemberOf', 4],
    [4, 'AdminTo', 1],
    [4, 'AdminTo', 5], // not to a Computer: not a row
  ]
  const edgeKinds = [...new Set(edges.map((e) => e[1]))]
  const g = {
    seed: 0,
    nodes,
    edgeCount: edges.length,
    edgeStart: Int32Array.from(edges, (e) => e[0]),
    edgeEnd: Int32Array.from(edges, (e) => e[2]),
    edgeKind: Uint8Array.from(edges, (e) => edgeKinds.indexOf(e[1])),
    edgeKinds,
    domains: [],
    tenant: { name: '', id: '', index: -1 },
    tierZero: [],
    tierZeroPaths: [],
  } satisfies GenGraph
  // the service's ids: not in the generated order (c2 before c1, the administrator before u1)
  const ids = new Map([
    [nodes[0].objectid, 2 ** 40 + 20],
    [nodes[1].objectid, 2 ** 40 + 10],
    [nodes[2].objectid, 2 ** 40 + 40],
    [nodes[3].objectid, 2 ** 40 + 30],
    [nodes[4].objectid, 2 ** 40 + 50],
    [nodes[5].objectid, 2 ** 40 + 60],
  ])
  return { g, ids }
}

const SEEN = '2026-11-29T20:00:00.000Z'
const id = (ids: Map<string, number>, rid: number) => String(ids.get(`${SID}-${rid}`))

describe('served floor answers', () => {
  const { g, ids } = tiny()
  const answers = servedFloorAnswers(g, ids, SEEN)

  it("one hop: the service's shape, rows in the service's id order (near node, then far node)", () => {
    const a = answers['one-hop sessions']()
    const c1 = id(ids, 1001)
    const c2 = id(ids, 1002)
    const u1 = id(ids, 1003)
    const adm = id(ids, 500)
    assert.deepEqual(a, {
      data: {
        nodes: {
          [c2]: { label: 'C2.CORP', kind: 'Computer', kinds: ['Computer', 'Base'], objectId: `${SID}-1002`, isTierZero: false, isOwnedObject: false, lastSeen: SEEN },
          [adm]: { label: 'ADMINISTRATOR@CORP', kind: 'User', kinds: ['User', 'Base', 'Tag_Tier_Zero'], objectId: `${SID}-500`, isTierZero: true, isOwnedObject: false, lastSeen: SEEN },
          [c1]: { label: 'C1.CORP', kind: 'Computer', kinds: ['Computer', 'Base'], objectId: `${SID}-1001`, isTierZero: false, isOwnedObject: false, lastSeen: SEEN },
          [u1]: { label: 'U1@CORP', kind: 'User', kinds: ['User', 'Base'], objectId: `${SID}-1003`, isTierZero: false, isOwnedObject: false, lastSeen: SEEN },
        },
        edges: [
          { source: c2, target: adm, label: 'HasSession', kind: 'HasSession', lastSeen: SEEN },
          { source: c1, target: adm, label: 'HasSession', kind: 'HasSession', lastSeen: SEEN },
          { source: c1, target: u1, label: 'HasSession', kind: 'HasSession', lastSeen: SEEN },
        ],
        literals: [],
      },
    })
    // serialised as the service writes it: nodes in first-seen order (ids ≥ 2^40 are not array indexes)
    assert.deepEqual(Object.keys(JSON.parse(JSON.stringify(a)).data.nodes), [c2, adm, c1, u1])
  })

  it('literals: count, ORDER BY with ties broken by id, DISTINCT with null in first-node order', () => {
    assert.deepEqual(answers['count of enabled users']().data.literals, [{ key: 'count(u)', value: 2 }])
    assert.deepEqual(answers['ORDER BY … LIMIT (oldest passwords)']().data.literals, [
      { key: 'u.name', value: 'ADMINISTRATOR@CORP' },
      { key: 'u.pwdlastset', value: 200 },
      { key: 'u.name', value: 'U1@CORP' },
      { key: 'u.pwdlastset', value: 200 },
    ])
    assert.deepEqual(answers['DISTINCT operating systems']().data.literals, [
      { key: 'c.operatingsystem', value: null },
      { key: 'c.operatingsystem', value: 'Windows 11 Enterprise' },
    ])
  })

  it('2-hop and a label scan: only paths whose far ends carry the labels; nodes only', () => {
    const two = answers['2-hop: user → group → computer']()
    assert.deepEqual(two.data.edges.map((e) => [e.source, e.kind, e.target]), [
      [id(ids, 1003), 'MemberOf', id(ids, 1004)],
      [id(ids, 1004), 'AdminTo', id(ids, 1002)],
    ])
    const roast = answers['kerberoastable users, every one']()
    assert.deepEqual(Object.values(roast.data.nodes).map((n) => n.objectId), [`${SID}-1003`])
    assert.deepEqual(roast.data.edges, [])
  })
})

describe('answerDifference', () => {
  const { g, ids } = tiny()
  const floor = servedFloorAnswers(g, ids, SEEN)['one-hop sessions']()
  /** the same answer under other node ids and lastSeen, as the service would key it */
  const rekeyed = (a: FloorAnswer): FloorAnswer => {
    const key = (k: string) => `x${k}`
    return {
      data: {
        nodes: Object.fromEntries(Object.entries(a.data.nodes).map(([k, n]) => [key(k), { ...n, lastSeen: 'other' }])),
        edges: [...a.data.edges].reverse().map((e) => ({ ...e, source: key(e.source), target: key(e.target) })),
        literals: a.data.literals,
      },
    }
  }

  it('the same answer under other ids, edge order and lastSeen is the same', () => {
    assert.equal(answerDifference(rekeyed(floor), floor), null)
  })

  it('names a missing edge, a different node and literals in another order', () => {
    const service = rekeyed(floor)
    service.data.edges.pop()
    assert.match(answerDifference(service, floor) ?? '', /^edges: 2 vs 3; only the service's: 0 \(\); only the floor's: 1 \(S-1-5-21-1-2-3-1002 -HasSession-> S-1-5-21-1-2-3-500\)$/)
    const other = rekeyed(floor)
    Object.values(other.data.nodes)[0].objectId = 'S-OTHER'
    assert.match(answerDifference(other, floor) ?? '', /^nodes: 4 vs 4; only the service's: 1 \(S-OTHER\)/)
    const lits = (values: number[]): FloorAnswer => ({ data: { nodes: {}, edges: [], literals: values.map((value) => ({ key: 'x', value })) } })
    assert.match(answerDifference(lits([1, 2]), lits([2, 1])) ?? '', /^literals: 2 vs 2, first difference at #0/)
    assert.equal(answerDifference(lits([1, 2]), lits([1, 2])), null)
    assert.match(answerDifference({ data: undefined }, floor) ?? '', /the service gave no graph answer/)
  })
})
