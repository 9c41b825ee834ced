/**
 * The memory budget's default and its accounting (src/cypher/budget.ts). The default is a measured bound:
 * the engine's byte count is an estimate, and under a V8 heap cap on the 1 M-edge benchmark graph
 * (`npm run bench:cypher -- --heap-cap N`), with the records walks hold made smaller (cb5694f), every
 * hostile and near-limit query stopped at the 64 MiB estimate survives an 80 MiB cap alone and a 96 MiB cap
 * three at once (the pool of 64 MiB shared): at least 32 MiB under the Workers limit. Before the records were
 * made smaller, a 48 MiB estimate needed 112–128 MiB. Queries running at the same time share the isolate's pool.
 */
import { describe, expect, it } from 'vitest'
import { Budget, BytePool, DEFAULT_LIMITS, ISOLATE_MAX_BYTES, ISOLATE_POOL, STALE_AFTER_MS, SharedMemoryLimit, withPooledBudget } from '../../src/cypher/budget'
import { CypherError } from '../../src/cypher/parse'
import { withoutProperties } from '../../src/cypher/source'

describe('memory budget', () => {
  it('defaults to 64 MiB of estimated graph data, and the isolate pool to as much (raising them needs a new heap-cap measurement)', () => {
    expect(DEFAULT_LIMITS.maxBytes).toBe(64 * 1024 * 1024)
    expect(ISOLATE_MAX_BYTES).toBe(64 * 1024 * 1024)
  })

  it('refuses the byte that crosses the limit with a 400 naming it and the limit in MiB', () => {
    const b = new Budget(DEFAULT_LIMITS)
    b.chargeBytes(DEFAULT_LIMITS.maxBytes)
    let err: unknown
    try {
      b.chargeBytes(1)
    } catch (e) {
      err = e
    }
    expect(err).toBeInstanceOf(CypherError)
    expect((err as Error).message).toBe(
      `the query was stopped: it would hold more than ${DEFAULT_LIMITS.maxBytes / 1024 / 1024} MiB of graph data in memory (memory limit); narrow the pattern or add a LIMIT`,
    )
  })

  it('bounds what is held at one time: bytes given back can be charged again', () => {
    const b = new Budget(DEFAULT_LIMITS)
    for (let i = 0; i < 10; i++) {
      b.chargeBytes(DEFAULT_LIMITS.maxBytes)
      b.releaseBytes(DEFAULT_LIMITS.maxBytes)
    }
    expect(b.used.bytes).toBe(0)
    expect(() => b.chargeBytes(DEFAULT_LIMITS.maxBytes + 1)).toThrow(/memory limit/)
  })
})

describe('isolate-wide memory pool (queries running at the same time)', () => {
  const MiB = 1024 * 1024
  const limits = { ...DEFAULT_LIMITS, maxBytes: 32 * MiB }

  it('the isolate pool is smaller than two queries at their own limit, and under the 128 MB isolate', () => {
    expect(ISOLATE_POOL.maxBytes).toBe(ISOLATE_MAX_BYTES)
    expect(ISOLATE_MAX_BYTES).toBeLessThan(2 * DEFAULT_LIMITS.maxBytes)
    expect(ISOLATE_MAX_BYTES).toBeGreaterThanOrEqual(DEFAULT_LIMITS.maxBytes)
  })

  it('refuses the second query while the first holds the pool, with the shared limit named; admits it once the first ended', () => {
    const pool = new BytePool(40 * MiB)
    const first = new Budget(limits, Date.now, pool)
    first.chargeBytes(30 * MiB)
    const second = new Budget(limits, Date.now, pool)
    second.chargeBytes(10 * MiB) // 40 MiB together: still fits
    let err: unknown
    try {
      second.chargeBytes(1)
    } catch (e) {
      err = e
    }
    expect(err).toBeInstanceOf(SharedMemoryLimit)
    expect((err as Error).message).toBe(
      'the query was stopped: together with the other queries running at the same time it would hold more than 40 MiB of graph data in memory (memory limit, shared by the queries running at the same time); try again later, narrow the pattern or add a LIMIT',
    )
    expect(second.used.bytes).toBe(10 * MiB) // the refused charge is not counted
    first.end()
    expect(pool.held).toBe(10 * MiB)
    second.chargeBytes(20 * MiB)
    second.end()
    expect(pool.held).toBe(0)
    // a query alone still has its own limit
    const third = new Budget(limits, Date.now, pool)
    expect(() => third.chargeBytes(33 * MiB)).toThrow(/\(memory limit\)/)
    third.end()
    expect(pool.held).toBe(0)
  })

  it('a query alone whose one charge would pass both its own limit and the pool is refused by its own limit, not told to try again later', () => {
    const pool = new BytePool(40 * MiB)
    const b = new Budget(limits, Date.now, pool)
    b.chargeBytes(30 * MiB)
    let err: unknown
    try {
      b.chargeBytes(11 * MiB) // 41 MiB: over the pool's 40 and the query's own 32
    } catch (e) {
      err = e
    }
    expect(err).toBeInstanceOf(CypherError)
    expect(err).not.toBeInstanceOf(SharedMemoryLimit)
    expect((err as Error).message).toBe(
      'the query was stopped: it would hold more than 32 MiB of graph data in memory (memory limit); narrow the pattern or add a LIMIT',
    )
    expect(b.used.bytes).toBe(30 * MiB) // the refused charge is not counted
    expect(pool.held).toBe(30 * MiB)
    b.end()
    expect(pool.held).toBe(0)
  })

  it('bytes given back leave the pool too; end() is idempotent', () => {
    const pool = new BytePool(40 * MiB)
    const b = new Budget(limits, Date.now, pool)
    b.chargeBytes(20 * MiB)
    b.releaseBytes(15 * MiB)
    expect(pool.held).toBe(5 * MiB)
    b.end()
    b.end()
    expect(pool.held).toBe(0)
    b.chargeBytes(MiB) // an ended budget no longer counts in the pool
    expect(pool.held).toBe(0)
  })

  it('withPooledBudget gives the bytes back however the query ends: answer, CypherError, other error', async () => {
    const pool = new BytePool(40 * MiB)
    await expect(withPooledBudget(async (b) => (b.chargeBytes(30 * MiB), 'ok'), { pool })).resolves.toBe('ok')
    expect(pool.held).toBe(0)
    await expect(withPooledBudget(async (b) => b.chargeBytes(33 * MiB), { pool, limits })).rejects.toThrow(/memory limit/)
    expect(pool.held).toBe(0)
    await expect(
      withPooledBudget(
        async (b) => {
          b.chargeBytes(30 * MiB)
          throw new Error('store failed')
        },
        { pool },
      ),
    ).rejects.toThrow('store failed')
    expect(pool.held).toBe(0)
    // two at once: the second is refused while the first holds, and succeeds after it ended
    let release!: () => void
    const held = new Promise<void>((r) => (release = r))
    const first = withPooledBudget(
      async (b) => {
        b.chargeBytes(30 * MiB)
        await held
      },
      { pool },
    )
    await expect(withPooledBudget(async (b) => b.chargeBytes(20 * MiB), { pool })).rejects.toBeInstanceOf(SharedMemoryLimit)
    release()
    await first
    await expect(withPooledBudget(async (b) => (b.chargeBytes(20 * MiB), 'ok'), { pool })).resolves.toBe('ok')
    expect(pool.held).toBe(0)
  })

  it('a query that never ended (its request cancelled) stops counting once stale, when the pool is full', () => {
    let now = 1_000_000
    const clock = () => now
    const pool = new BytePool(40 * MiB, clock)
    const lost = new Budget(limits, clock, pool)
    lost.chargeBytes(30 * MiB) // never ended
    const b = new Budget(limits, clock, pool)
    expect(() => b.chargeBytes(20 * MiB)).toThrow(SharedMemoryLimit)
    now += limits.maxMillis + STALE_AFTER_MS // still within its grace
    expect(() => b.chargeBytes(20 * MiB)).toThrow(SharedMemoryLimit)
    now += 1
    b.chargeBytes(20 * MiB)
    expect(pool.held).toBe(20 * MiB)
    lost.end() // late: nothing more to give back
    expect(pool.held).toBe(20 * MiB)
  })
})

describe('records held by walks', () => {
  it('a relationship read without properties carries no getter of its own (a closure per record cost ~450 B more than charged); reading its properties still throws', () => {
    const e = withoutProperties({ id: 7, start: 1, end: 2, kind: 'MemberOf', updated_at: '2026-11-26T00:00:00Z', bytes: 200 })
    expect(Object.getOwnPropertyDescriptor(e, 'properties')).toBeUndefined()
    expect(Object.getPrototypeOf(Object.getPrototypeOf(e))).toBe(Object.prototype)
    expect(() => e.properties).toThrow('properties of relationship 7 not loaded')
    expect([e.id, e.start, e.end, e.kind, e.bytes]).toEqual([7, 1, 2, 'MemberOf', 200])
  })
})
