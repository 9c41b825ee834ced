/**
 * src/graph/ids.ts: the random ids of nodes, edges and posture-stats rows (issue 24 item 3).
 */
import { env } from 'cloudflare:workers'
import { describe, expect, it } from 'vitest'
import { ID_CEILING, ID_FLOOR, isIdCollision, isRandomId, NEW_ID_SQL, withIdRetry } from '../../src/graph/ids'

describe('the id range', () => {
  it('is 52 random bits above 2^40, all of it safe integers', () => {
    expect(ID_FLOOR).toBe(2 ** 40)
    expect(ID_CEILING - ID_FLOOR).toBe(2 ** 52 - 1)
    expect(Number.isSafeInteger(ID_CEILING)).toBe(true)
    expect(ID_CEILING).toBeLessThan(Number.MAX_SAFE_INTEGER)
  })

  it('isRandomId accepts exactly the range', () => {
    for (const ok of [ID_FLOOR, ID_FLOOR + 1, ID_CEILING, 3_000_000_000_000_000]) expect(isRandomId(ok), String(ok)).toBe(true)
    for (const bad of [0, 1, 52, ID_FLOOR - 1, ID_CEILING + 1, ID_FLOOR + 0.5, -ID_FLOOR, Number.NaN, String(ID_FLOOR), null, 2 ** 53])
      expect(isRandomId(bad), String(bad)).toBe(false)
  })
})

describe('NEW_ID_SQL', () => {
  it('draws a different in-range id for every row, in no order, as D1 evaluates it', async () => {
    const r = await env.DB.prepare(`WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < 2000) SELECT ${NEW_ID_SQL} AS id FROM k`).all<{ id: number }>()
    const ids = r.results.map((x) => x.id)
    expect(ids).toHaveLength(2000)
    expect(ids.every(isRandomId)).toBe(true)
    expect(new Set(ids).size).toBe(2000)
    expect(ids).not.toEqual([...ids].sort((a, b) => a - b))
    // the whole range is used: both halves, and ids far above 2^40 + 2000
    expect(ids.some((id) => id - ID_FLOOR < 2 ** 51)).toBe(true)
    expect(ids.some((id) => id - ID_FLOOR >= 2 ** 51)).toBe(true)
  })
})

describe('withIdRetry', () => {
  const collision = (table: string) => new Error(`D1_ERROR: UNIQUE constraint failed: ${table}.id: SQLITE_CONSTRAINT`)

  it('recognises a random-id collision on nodes, edges and posture_stats only', () => {
    for (const t of ['nodes', 'edges', 'posture_stats']) expect(isIdCollision(collision(t)), t).toBe(true)
    expect(isIdCollision(new Error('D1_ERROR: UNIQUE constraint failed: nodes.objectid: SQLITE_CONSTRAINT'))).toBe(false)
    expect(isIdCollision(collision('findings'))).toBe(false)
    expect(isIdCollision('UNIQUE constraint failed: nodes.id')).toBe(false)
  })

  it('runs a batch that collided again, and answers its result', async () => {
    let calls = 0
    const out = await withIdRetry(async () => {
      if (++calls < 3) throw collision('nodes')
      return 'written'
    })
    expect(out).toBe('written')
    expect(calls).toBe(3)
  })

  it('gives up after the last attempt, and never retries another error', async () => {
    let calls = 0
    await expect(withIdRetry(async () => (++calls, Promise.reject(collision('edges'))), 3)).rejects.toThrow(/edges\.id/)
    expect(calls).toBe(3)
    calls = 0
    await expect(withIdRetry(async () => (++calls, Promise.reject(new Error('edgehound: ingest job is not running'))))).rejects.toThrow(/not running/)
    expect(calls).toBe(1)
  })

  it('a real collision in D1 is rolled back whole and reported as one', async () => {
    const now = new Date().toISOString()
    const id = ID_FLOOR + 777
    const insert = (objectid: string) =>
      env.DB.prepare(`INSERT INTO nodes (id, objectid, kind, kinds, created_at, updated_at) VALUES (?1, ?2, 'User', '["User"]', ?3, ?3)`).bind(id, objectid, now)
    await insert('IDS-UNIT-1').run()
    const err = await env.DB.batch([
      env.DB.prepare(`INSERT INTO nodes (id, objectid, kind, kinds, created_at, updated_at) VALUES (${NEW_ID_SQL}, 'IDS-UNIT-3', 'User', '["User"]', ?1, ?1)`).bind(now),
      insert('IDS-UNIT-2'),
    ]).catch((e: unknown) => e)
    expect(isIdCollision(err)).toBe(true)
    const left = await env.DB.prepare(`SELECT objectid FROM nodes WHERE objectid LIKE 'IDS-UNIT-%' ORDER BY objectid`).all<{ objectid: string }>()
    expect(left.results.map((r) => r.objectid)).toEqual(['IDS-UNIT-1'])
  })
})
