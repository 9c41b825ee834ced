/**
 * The memory budget's default and its accounting (src/cypher/budget.ts). The default is a measured bound:
 * the engine's byte count is an estimate, and under a V8 heap cap on the 1 M-edge benchmark graph
 * (`npm run bench:cypher -- --heap-cap N`) the unbounded walks stopped at a 48 MiB estimate needed
 * 112–128 MiB of isolate heap, within 16 MiB of the Workers limit; at 32 MiB they need 80–96 MiB.
 */
import { describe, expect, it } from 'vitest'
import { Budget, DEFAULT_LIMITS } from '../../src/cypher/budget'
import { CypherError } from '../../src/cypher/parse'

describe('memory budget', () => {
  it('defaults to at most 32 MiB of estimated graph data (raising it needs a new heap-cap measurement)', () => {
    expect(DEFAULT_LIMITS.maxBytes).toBeLessThanOrEqual(32 * 1024 * 1024)
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
