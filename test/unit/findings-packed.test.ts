import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { EdgePage, NodePage } from '../../src/findings/analysis.store'
import type { NodeInput } from '../../src/findings/graph'
import { decodeEdgePage, NodePageDecoder, parseIntList, parseKindList, parseStringList } from '../../src/findings/packed'

describe('parseIntList', () => {
  const parse = (text: string | null, size = 16) => {
    const out = new Float64Array(size)
    const n = parseIntList(text, out)
    return [...out.subarray(0, n)]
  }

  it('reads an empty page (empty string or the null of group_concat over no rows) as no values', () => {
    expect(parse('')).toEqual([])
    expect(parse(null)).toEqual([])
    expect(parseIntList('', new Float64Array(0))).toBe(0)
  })

  it('reads one id, several ids and zero', () => {
    expect(parse('7')).toEqual([7])
    expect(parse('12,7,3,0,1000000')).toEqual([12, 7, 3, 0, 1_000_000])
  })

  it('reads random 52-bit node ids (src/graph/ids.ts) and the largest and smallest safe integers exactly', () => {
    expect(parse('2147483648,1099511627776,4504699138998271')).toEqual([2 ** 31, 2 ** 40, 2 ** 40 + 2 ** 52 - 1])
    expect(parse('9007199254740991,-9007199254740991,-1,0')).toEqual([Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER, -1, 0])
  })

  it('refuses values a double would round instead of reading them wrong', () => {
    expect(() => parse('9007199254740992')).toThrow(/out of range/)
    expect(() => parse('-9007199254740993')).toThrow(/out of range/)
    expect(() => parse('1,99999999999999999999')).toThrow(/out of range/)
  })

  it('refuses malformed lists', () => {
    for (const bad of [',', '1,', ',1', '1,,2', '-', '1-2', '--1', '1 ,2', '1.5', 'a', '1e3']) {
      expect(() => parse(bad), bad).toThrow(/packed integer list/)
    }
  })

  it('refuses more values than the buffer holds', () => {
    expect(() => parse('1,2,3', 2)).toThrow(/more than 2/)
    expect(parse('1,2', 2)).toEqual([1, 2])
  })

  it('round-trips any list of safe integers joined with commas', () => {
    fc.assert(
      fc.property(fc.array(fc.maxSafeInteger(), { maxLength: 200 }), (xs) => {
        const out = new Float64Array(xs.length)
        expect(parseIntList(xs.join(','), out)).toBe(xs.length)
        expect([...out]).toEqual(xs)
      }),
    )
  })
})

describe('parseStringList and parseKindList', () => {
  it('reads a json_group_array column of strings and nulls of the expected length', () => {
    expect(parseStringList('["a",null,"c,d \\"e\\""]', 3)).toEqual(['a', null, 'c,d "e"'])
    expect(parseStringList(null, 0)).toEqual([])
    expect(parseStringList('[]', 0)).toEqual([])
  })

  it('refuses a column that does not line up with the page or holds other values', () => {
    expect(() => parseStringList('["a"]', 2)).toThrow(/expected 2/)
    expect(() => parseStringList(null, 1)).toThrow(/expected 1/)
    expect(() => parseStringList('[1]', 1)).toThrow(/not a string/)
    expect(() => parseStringList('{"a":1}', 1)).toThrow(/expected 1/)
  })

  it('keeps the non-empty strings of a kinds array and nothing from text that is not one', () => {
    expect(parseKindList('["User","Base"]')).toEqual(['User', 'Base'])
    expect(parseKindList('["User","",3,null]')).toEqual(['User'])
    expect(parseKindList('not json')).toEqual([])
    expect(parseKindList('"User"')).toEqual([])
    expect(parseKindList(null)).toEqual([])
  })
})

function nodePage(rows: { id: number; facts: number; objectid: string; kind: string; kinds: string; env: string | null; tags?: string | null; template?: string | null; envKind?: string | null }[]): NodePage {
  return {
    count: rows.length,
    lastId: rows.length ? rows[rows.length - 1].id : 0,
    ids: rows.length ? rows.map((r) => r.id).join(',') : null,
    facts: rows.length ? rows.map((r) => r.facts).join(',') : null,
    objectids: JSON.stringify(rows.map((r) => r.objectid)),
    kinds: JSON.stringify(rows.map((r) => r.kind)),
    kindLists: JSON.stringify(rows.map((r) => r.kinds)),
    environmentIds: JSON.stringify(rows.map((r) => r.env)),
    systemTags: JSON.stringify(rows.map((r) => r.tags ?? null)),
    templateIds: JSON.stringify(rows.map((r) => r.template ?? null)),
    environmentKinds: JSON.stringify(rows.map((r) => r.envKind ?? null)),
  }
}

describe('NodePageDecoder', () => {
  it('turns a packed page into the node records, facts bit by bit', () => {
    const got: NodeInput[] = []
    new NodePageDecoder().decode(
      nodePage([
        { id: 3, facts: 0, objectid: 'S-1-5-21-1-512', kind: 'Group', kinds: '["Group","Base"]', env: 'S-1-5-21-1', tags: 'admin_tier_0 owned' },
        { id: 9, facts: 1 | 2 | 4 | 8, objectid: 'u,1', kind: 'User', kinds: '["User"]', env: '', template: 'abc' },
        { id: 12, facts: 2, objectid: 'S-1-5-21-1', kind: 'Domain', kinds: 'broken', env: 'S-1-5-21-1', envKind: 'Domain', tags: '["admin_tier_0"]' },
      ]),
      (n) => got.push(n),
    )
    expect(got).toEqual([
      {
        id: 3,
        objectid: 'S-1-5-21-1-512',
        kind: 'Group',
        kinds: ['Group', 'Base'],
        environmentId: 'S-1-5-21-1',
        systemTags: 'admin_tier_0 owned',
        isTierZero: null,
        enabled: null,
        hasspn: null,
        dontreqpreauth: null,
        templateid: null,
        environmentKind: null,
      },
      {
        id: 9,
        objectid: 'u,1',
        kind: 'User',
        kinds: ['User'],
        environmentId: null, // an empty environment id is none, as before
        systemTags: null,
        isTierZero: 1,
        enabled: 1,
        hasspn: 1,
        dontreqpreauth: 1,
        templateid: 'abc',
        environmentKind: null,
      },
      {
        id: 12,
        objectid: 'S-1-5-21-1',
        kind: 'Domain',
        kinds: ['Domain'], // unusable kinds text: the primary kind alone
        environmentId: 'S-1-5-21-1',
        systemTags: '["admin_tier_0"]',
        isTierZero: null,
        enabled: 1,
        hasspn: null,
        dontreqpreauth: null,
        templateid: null,
        environmentKind: 'Domain',
      },
    ])
  })

  it('shares one kinds array between nodes with the same kinds text, across pages', () => {
    const d = new NodePageDecoder()
    const got: NodeInput[] = []
    d.decode(nodePage([{ id: 1, facts: 0, objectid: 'a', kind: 'User', kinds: '["User","Base"]', env: null }]), (n) => got.push(n))
    d.decode(nodePage([{ id: 2, facts: 0, objectid: 'b', kind: 'User', kinds: '["User","Base"]', env: null }]), (n) => got.push(n))
    expect(got[0].kinds).toEqual(['User', 'Base'])
    expect(got[1].kinds).toBe(got[0].kinds)
  })

  it('decodes an empty page to nothing and refuses columns that do not line up', () => {
    const got: NodeInput[] = []
    new NodePageDecoder().decode(nodePage([]), (n) => got.push(n))
    expect(got).toEqual([])
    const page = nodePage([{ id: 1, facts: 0, objectid: 'a', kind: 'User', kinds: '["User"]', env: null }])
    expect(() => new NodePageDecoder().decode({ ...page, ids: '1,2' }, () => undefined)).toThrow(/more than 1 values/)
    expect(() => new NodePageDecoder().decode({ ...page, facts: null }, () => undefined)).toThrow(/expected 1 ids and facts/)
    expect(() => new NodePageDecoder().decode({ ...page, objectids: '["a","b"]' }, () => undefined)).toThrow(/expected 1 items/)
  })
})

describe('decodeEdgePage', () => {
  const kinds = ['MemberOf', 'GenericAll', 'AdminTo']

  it('feeds every (start, end, kind) triple with the kind looked up in the requested list', () => {
    const got: [number, number, string][] = []
    const page: EdgePage = { count: 3, lastId: 40, triples: '1,2,0,2147483647,5,2,7,7,1' }
    decodeEdgePage(page, kinds, new Float64Array(9), (s, t, k) => got.push([s, t, k]))
    expect(got).toEqual([
      [1, 2, 'MemberOf'],
      [2_147_483_647, 5, 'AdminTo'],
      [7, 7, 'GenericAll'],
    ])
  })

  it('decodes an empty page to nothing', () => {
    const got: unknown[] = []
    decodeEdgePage({ count: 0, lastId: 0, triples: null }, kinds, new Float64Array(3), (...e) => got.push(e))
    expect(got).toEqual([])
  })

  it('refuses a page whose text does not hold count triples, or a kind index outside the list', () => {
    expect(() => decodeEdgePage({ count: 2, lastId: 1, triples: '1,2,0' }, kinds, new Float64Array(6), () => undefined)).toThrow(/expected 2 edges/)
    expect(() => decodeEdgePage({ count: 1, lastId: 1, triples: '1,2,3' }, kinds, new Float64Array(3), () => undefined)).toThrow(/kind index/)
    expect(() => decodeEdgePage({ count: 1, lastId: 1, triples: '1,2,-1' }, kinds, new Float64Array(3), () => undefined)).toThrow(/kind index/)
  })
})
