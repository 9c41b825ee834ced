/**
 * `objectid` / `name` STARTS WITH in a D1 node scan (cypher.store.ts prefixRange): a prefix whose index range
 * holds at most a page of entries is read through that range, a broader one by id as before; either way the
 * scan returns exactly the nodes whose value starts with the prefix, case-sensitively (NOCASE only chooses
 * the range), page after page.
 */
import { env } from 'cloudflare:test'
import { afterEach, describe, expect, it } from 'vitest'
import { d1GraphSource, prefixRange } from '../../src/cypher/cypher.store'
import type { NodeScan } from '../../src/cypher/source'
import { ID_CEILING } from '../../src/graph/ids'

// ids in the random-id range (src/graph/ids.ts), at its top end, away from ingested ones
const BASE = ID_CEILING - 2_000_000
const NAMES = ['USER00000@CORP', 'USER000001@CORP', 'user00000@corp', 'User00000@corp', 'USER0000', 'USER00001@CORP', 'USER00000', 'USER@X', 'USERA', 'USERa', 'USER[', 'USÉR00000', 'ADMIN']

afterEach(async () => {
  await env.DB.prepare('DELETE FROM nodes WHERE id >= ?1 AND id < ?2').bind(BASE, BASE + 1_000).run()
})

async function load(): Promise<void> {
  const stamp = '2026-01-01T00:00:00.000Z'
  await env.DB.batch(
    NAMES.map((name, i) =>
      env.DB.prepare(
        "INSERT INTO nodes (id, objectid, kind, kinds, name, environment_id, properties, created_at, updated_at) VALUES (?1, ?2, 'User', '[\"User\"]', ?3, 'E', '{}', ?4, ?4)",
      ).bind(BASE + i, `SR-${name}`, name, stamp),
    ),
  )
}

/** Every page of the scan (pages of `limit`), the values of this file's nodes. */
async function scan(column: 'objectid' | 'name', prefix: string, limit: number): Promise<string[]> {
  const source = d1GraphSource(env.DB, null)
  const s: NodeScan = { kinds: ['User'], objectid: null, name: null, where: [{ type: 'text', column, op: 'startsWith', value: prefix, anyCase: false }] }
  const out: string[] = []
  let after = BASE - 1
  for (;;) {
    const page = await source.scanNodes(s, after, limit)
    for (const n of page) if (n.id >= BASE && n.id < BASE + 1_000) out.push(column === 'name' ? n.name! : n.objectid)
    if (page.length < limit) return out.sort()
    after = page[page.length - 1].id
  }
}

describe('STARTS WITH through an index range', () => {
  it('ranges: NOCASE folds the name prefix, the bound is the next character, no range for a non-ASCII last character', () => {
    expect(prefixRange('name', 'USER00000')).toEqual({ low: 'user00000', high: 'user00001' })
    expect(prefixRange('objectid', 'S-1-5-21-')).toEqual({ low: 'S-1-5-21-', high: 'S-1-5-21.' })
    expect(prefixRange('name', 'USER@')).toEqual({ low: 'user@', high: 'userA' })
    expect(prefixRange('name', 'USÉ')).toBeNull()
    expect(prefixRange('name', '')).toBeNull()
  })

  it('answers exactly, case-sensitively, whether the range is used (small) or not (broad, paged)', async () => {
    await load()
    for (const prefix of ['USER00000', 'USER0000', 'User', 'user00000', 'USER@', 'USER', 'USÉR', 'U', 'ADMIN', 'NOBODY'])
      for (const column of ['name', 'objectid'] as const) {
        const value = column === 'name' ? prefix : `SR-${prefix}`
        const expected = NAMES.map((n) => (column === 'name' ? n : `SR-${n}`))
          .filter((v) => v.startsWith(value))
          .sort()
        // 1 000 a page: every range here is small; 2 a page: most are broad, read by id page after page
        expect(await scan(column, value, 1_000), `${column} ${value}`).toEqual(expected)
        expect(await scan(column, value, 2), `${column} ${value} paged`).toEqual(expected)
      }
  })
})
