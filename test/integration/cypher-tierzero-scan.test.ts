/**
 * The D1 scan of Tag_Tier_Zero nodes (cypher.store.ts, ScanCondition `tierZero`): its stored part is read
 * from the partial index nodes_tier_zero_hint (migration 0035; the expression TIER_ZERO_HINT must stay the
 * index's WHERE, else SQLite tests every node again: ~100 ms at 100 000 nodes), and it is still a superset
 * of the Tier Zero rule: every node the rule makes Tier Zero, by each of its reasons (a selector included),
 * is returned, plain nodes are not, and a restricted caller sees none outside its environments. A scan for
 * `objectid ENDS WITH '…-512'` (a Tier Zero RID suffix) reads the same index and returns what the test does.
 */
import { env } from 'cloudflare:test'
import { afterEach, describe, expect, it } from 'vitest'
import { d1GraphSource, TIER_ZERO_HINT } from '../../src/cypher/cypher.store'
import { isTierZeroNode } from '../../src/cypher/labels'
import type { NodeScan } from '../../src/cypher/source'
import { TIER_ZERO_RID_SUFFIXES } from '../../src/assetgroups/tierzero'
import { ID_CEILING } from '../../src/graph/ids'

// ids in the random-id range (src/graph/ids.ts), at its top end, away from ingested ones
const BASE = ID_CEILING - 1_000_000
const ENV = 'S-1-5-21-9100-1'
const OTHER = 'S-1-5-21-9100-2'

/** [objectid, kinds, properties, environment, Tier Zero by the rule] */
const NODES: [string, string[], Record<string, unknown>, string, boolean][] = [
  ['TZ-DOMAIN', ['Domain'], {}, ENV, true],
  ['TZ-TENANT', ['AZTenant'], {}, ENV, true],
  ['62e90394-69f5-4237-9190-012177145e10@TENANT', ['AZRole'], {}, ENV, true],
  ['TZ-TAGGED', ['User', 'Tag_Tier_Zero'], {}, ENV, true],
  [`${ENV}-512`, ['Group'], {}, ENV, true],
  [`${ENV}-519`, ['Group'], {}, ENV, true],
  ['TZ-SYSTAGS', ['Computer'], { system_tags: 'owned admin_tier_0' }, ENV, true],
  ['TZ-PROP', ['User'], { isTierZero: true }, ENV, true],
  ['TZ-PROP-LOWER', ['User'], { istierzero: true }, ENV, true],
  ['TZ-SELECTED', ['User'], { name: 'SELECTED' }, ENV, true],
  ['PLAIN-USER', ['User'], { name: 'PLAIN' }, ENV, false],
  ['PLAIN-GROUP-513', ['Group'], {}, ENV, false],
  ['LOCAL-S-1-5-32-544', ['ADLocalGroup'], {}, ENV, false],
  ['PLAIN-X512', ['Group'], {}, ENV, false],
  ['OTHER-DOMAIN', ['Domain'], {}, OTHER, true],
]

const TIER_ZERO: NodeScan = { kinds: null, objectid: null, name: null, where: [{ type: 'tierZero' }] }

async function clear(): Promise<void> {
  await env.DB.batch([
    env.DB.prepare('DELETE FROM asset_group_members WHERE objectid LIKE ?1').bind('TZ-%'),
    env.DB.prepare('DELETE FROM nodes WHERE id >= ?1 AND id < ?2').bind(BASE, BASE + 1_000),
  ])
}

afterEach(clear)

async function load(): Promise<void> {
  await clear()
  const stamp = '2026-01-01T00:00:00.000Z'
  await env.DB.batch([
    ...NODES.map(([objectid, kinds, properties, envId], i) =>
      env.DB.prepare(
        'INSERT INTO nodes (id, objectid, kind, kinds, name, environment_id, properties, created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?2, ?5, ?6, ?7, ?7)',
      ).bind(BASE + i, objectid, kinds[0], JSON.stringify(kinds), envId, JSON.stringify(properties), stamp),
    ),
    // an administrator's selector names TZ-SELECTED: a member of the Admin Tier Zero group (id 1, tag admin_tier_0)
    env.DB.prepare('INSERT INTO asset_group_members (asset_group_id, objectid, custom_member) VALUES (1, ?1, 1)').bind('TZ-SELECTED'),
  ])
}

async function scanAll(access: string | null): Promise<string[]> {
  const rows = await d1GraphSource(env.DB, access).scanNodes(TIER_ZERO, BASE - 1, 1_000)
  return rows.filter((n) => n.id >= BASE && n.id < BASE + 1_000).map((n) => n.objectid)
}

describe('Tag_Tier_Zero scan over D1', () => {
  it('reads the stored part of the superset from the partial index nodes_tier_zero_hint', async () => {
    const plan = await env.DB.prepare(`EXPLAIN QUERY PLAN SELECT t.id FROM nodes t WHERE ${TIER_ZERO_HINT}`).all<{ detail: string }>()
    expect(plan.results.map((r) => r.detail).join('\n')).toContain('USING INDEX nodes_tier_zero_hint')
  })

  it('keeps every RID suffix of the rule in the index expression', () => {
    for (const suffix of TIER_ZERO_RID_SUFFIXES) expect(TIER_ZERO_HINT).toContain(`'${suffix}'`)
  })

  it("answers objectid ENDS WITH a RID suffix exactly (through the index), and other suffixes as before", async () => {
    await load()
    const ends = async (value: string, kinds: string[] | null): Promise<string[]> => {
      const scan: NodeScan = { kinds, objectid: null, name: null, where: [{ type: 'text', column: 'objectid', op: 'endsWith', value, anyCase: false }] }
      const rows = await d1GraphSource(env.DB, null).scanNodes(scan, BASE - 1, 1_000)
      return rows.filter((n) => n.id >= BASE && n.id < BASE + 1_000).map((n) => n.objectid).sort()
    }
    const expected = (value: string, kinds: string[] | null) => NODES.filter(([o, k]) => o.endsWith(value) && (kinds === null || k.some((x) => kinds.includes(x)))).map((n) => n[0]).sort()
    for (const [value, kinds] of [['-512', ['Group']], ['-512', null], [`${ENV}-519`, null], ['-S-1-5-32-544', null], ['-544', ['ADLocalGroup']], ['512', null], ['-513', ['Group']]] as [string, string[] | null][]) {
      expect(await ends(value, kinds), `${value} ${kinds}`).toEqual(expected(value, kinds))
      expect(expected(value, kinds).length).toBeGreaterThan(0)
    }
  })

  it('returns every node the Tier Zero rule keeps (each reason, a selector included), no plain node', async () => {
    await load()
    const got = await scanAll(null)
    const expected = NODES.filter((n) => n[4]).map((n) => n[0])
    // a superset: a computer's local Administrators group has the -544 suffix, and only the engine's rule drops it
    expect([...got].sort()).toEqual([...expected, 'LOCAL-S-1-5-32-544'].sort())
    // the engine's rule, applied to the records the store gives, agrees on every node returned
    const records = await d1GraphSource(env.DB, null).nodesByIds(NODES.map((_, i) => BASE + i))
    expect(records.filter(isTierZeroNode).map((n) => n.objectid).sort()).toEqual([...expected].sort())
  })

  it('applies environment access: a restricted caller gets none of another environment', async () => {
    await load()
    const got = await scanAll(JSON.stringify([ENV]))
    expect(got).not.toContain('OTHER-DOMAIN')
    expect(got.sort()).toEqual([...NODES.filter((n) => n[4] && n[3] === ENV).map((n) => n[0]), 'LOCAL-S-1-5-32-544'].sort())
  })
})
