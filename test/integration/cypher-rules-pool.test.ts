/**
 * Cypher rules (Tier Zero selectors) share the isolate's memory pool with the Cypher endpoint
 * (src/assetgroups/rules.ts, src/cypher/budget.ts): a rule refused only because other queries held the pool
 * is run again, so Tier Zero does not depend on what users were querying at the time; a pool that stays
 * full is recorded as the rule's error, and the rule's bytes are always given back.
 */
import { beforeAll, describe, expect, it } from 'vitest'
import { adminToken, env } from '../helpers'
import { ingest } from '../../src/client/graph'
import { evaluateRules } from '../../src/assetgroups/rules'
import { Budget, BytePool, DEFAULT_LIMITS } from '../../src/cypher/budget'

const MiB = 1024 * 1024
const RULE = { selectorId: 1, seedId: 1, tag: 'admin_tier_0', cypher: "MATCH (n:User) WHERE n.name STARTS WITH 'POOL' RETURN n" }

beforeAll(async () => {
  const admin = await adminToken()
  await ingest(admin, { graph: { nodes: [{ id: 'S-POOL-1', kinds: ['User'], properties: { name: 'POOL USER' } }], edges: [] } })
})

describe('Cypher rules and the isolate memory pool', () => {
  it('a rule refused because other queries hold the pool is run again once they ended', async () => {
    const pool = new BytePool(MiB)
    const other = new Budget(DEFAULT_LIMITS, Date.now, pool)
    other.chargeBytes(MiB)
    setTimeout(() => other.end(), 20)
    const [r] = await evaluateRules(env.DB, [RULE], { pool, retryMs: 50 })
    expect(r.error).toBeNull()
    expect(r.objectids).toEqual(['S-POOL-1'])
    expect(pool.held).toBe(0)
  })

  it('a pool that stays full: the rule selects nothing, its error names the shared limit, nothing stays held', async () => {
    const pool = new BytePool(MiB)
    const other = new Budget(DEFAULT_LIMITS, Date.now, pool)
    other.chargeBytes(MiB)
    const [r] = await evaluateRules(env.DB, [RULE], { pool, retryMs: 5 })
    expect(r.objectids).toEqual([])
    expect(r.error).toMatch(/memory limit, shared by the queries running at the same time/)
    other.end()
    expect(pool.held).toBe(0)
  })
})
