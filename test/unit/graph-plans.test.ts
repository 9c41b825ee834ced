/** Entity plans compiled to SQL, executed against D1 (workerd) on a tiny graph. */
import { env } from 'cloudflare:test'
import { beforeAll, describe, expect, it } from 'vitest'
import { AD_ENTITY_TYPES, AZ_ENTITY_TYPES, AZ_RELATED, azEntityType } from '../../src/graph/entities'
import { compilePlan, countRelated, countRelatedByKind, getNodeByObjectId, listRelated, type Entity } from '../../src/graph/graph.store'
import { relatedPage } from '../../src/graph/entity.routes'
import { ApiError } from '../../src/http/errors'
import { commitUpload, stageChunk, stagedEdge } from '../../src/graph/ingest.store'
import { testAudit } from '../fixtures/audit'

const db = (env as unknown as { DB: D1Database }).DB
const NOW = '2026-01-01T00:00:00.000Z'

async function load(nodes: { o: string; k: string; ks?: string[]; p?: Record<string, unknown>; ek?: string | null }[], edges: [string, string, string][]) {
  const uploadId = crypto.randomUUID()
  const rows = edges.map(([s, k, t], i) => stagedEdge({ s, sm: 'id', sk: null, t, tm: 'id', tk: null, k, p: {} }, i))
  await db.batch([
    stageChunk(db, uploadId, 'n', 0, 'plans.json', JSON.stringify(nodes.map((n) => ({ o: n.o, k: n.k, ks: n.ks ?? [n.k], p: n.p ?? {}, ek: n.ek ?? null }))), NOW),
    stageChunk(db, uploadId, 'e', 1, 'plans.json', JSON.stringify(rows), NOW),
  ])
  const job = await db
    .prepare(`INSERT INTO ingest_jobs (user_id, status, start_time, created_at, updated_at) VALUES ('u', 1, ?1, ?1, ?1) RETURNING id`)
    .bind(NOW)
    .first<{ id: number }>()
  const done = await commitUpload(db, {
    uploadId,
    jobId: job!.id,
    nodes: nodes.length,
    edges: rows.length,
    environments: [],
    now: NOW,
    staleBefore: NOW,
    environmentKinds: ['Domain', 'AZTenant'],
    access: null,
    audit: testAudit('AppendFileUploadJob'),
  })
  if (done.unmatched) throw new Error(JSON.stringify(done.errors))
}

/** The page of an exact (within-budget) list. */
async function page(...args: Parameters<typeof listRelated>) {
  const r = await listRelated(...args)
  if (r.over) throw new Error('over budget')
  return r
}
const ns = async (...args: Parameters<typeof countRelated>) => (await countRelated(...args)).map((c) => c.n)

async function entity(objectid: string, access: string | null = null): Promise<Entity> {
  return { node: (await getNodeByObjectId(db, objectid))!, access }
}

beforeAll(async () => {
  await load(
    [
      { o: 'DOM', k: 'Domain', ek: 'Domain', p: { name: 'DOM' } },
      { o: 'OTHER', k: 'Domain', ek: 'Domain', p: { name: 'OTHER' } },
      { o: 'U1', k: 'User', p: { name: 'U1', domainsid: 'DOM' } },
      { o: 'U2', k: 'User', p: { name: 'U2', domainsid: 'OTHER' } },
      { o: 'G1', k: 'Group', p: { name: 'G1', domainsid: 'DOM' } },
      { o: 'G2', k: 'Group', p: { name: 'G2', domainsid: 'DOM' } },
      { o: 'G3', k: 'Group', p: { name: 'G3', domainsid: 'DOM', system_tags: 'admin_tier_0' } },
      { o: 'C1', k: 'Computer', p: { name: 'C1', domainsid: 'DOM' } },
    ],
    [
      ['U1', 'MemberOf', 'G1'],
      ['G1', 'MemberOf', 'G2'],
      ['G2', 'MemberOf', 'G3'],
      ['G3', 'MemberOf', 'G1'], // a cycle
      ['U2', 'MemberOf', 'G2'],
      ['G3', 'AdminTo', 'C1'],
      ['G2', 'GenericAll', 'DOM'],
    ],
  )
})

describe('compiled plans', () => {
  it('transitive membership terminates on cycles and never includes the entity itself', async () => {
    const u1 = await entity('U1')
    const m = await page(db, u1, AD_ENTITY_TYPES[0].lists.memberships, 0, 10)
    expect(m.nodes.map((n) => n.objectid)).toEqual(['G1', 'G2', 'G3'])
    const g1 = await entity('G1')
    expect((await page(db, g1, AD_ENTITY_TYPES[1].lists.memberships, 0, 10)).nodes.map((n) => n.objectid)).toEqual(['G2', 'G3'])
    expect((await page(db, g1, AD_ENTITY_TYPES[1].lists.members, 0, 10)).nodes.map((n) => n.objectid)).toEqual(['G2', 'G3', 'U1', 'U2'])
  })

  it('rights through nested groups, foreign members, environment access on results', async () => {
    const [adminRights] = await ns(db, await entity('U1'), [AD_ENTITY_TYPES[0].counts.adminRights])
    expect(adminRights).toBe(1)
    const domains = AD_ENTITY_TYPES.find((t) => t.segment === 'domains')!
    const dom = await entity('DOM')
    const counts = await ns(db, dom, [domains.lists.users, domains.lists.groups, domains.lists['foreign-users'], domains.lists.controllers])
    expect(counts).toEqual([1, 3, 1, 5]) // controllers: G2 and its members G1, G3, U1, U2
    const restricted = await entity('DOM', JSON.stringify(['DOM']))
    expect(await ns(db, restricted, [domains.lists.controllers, domains.lists['foreign-users']])).toEqual([4, 0])
  })

  it('tier-zero and kinds filters', async () => {
    const p = await page(db, await entity('U1'), [{ op: 'out*', edges: ['MemberOf'] }, { op: 'tierZero' }], 0, 10)
    expect(p.nodes.map((n) => n.objectid)).toEqual(['G3'])
  })

  it('every plan of every entity type compiles within D1 limits and runs', async () => {
    const plans = [
      ...AD_ENTITY_TYPES.flatMap((t) => [...Object.values(t.counts), ...Object.values(t.lists)]),
      ...Object.values(AZ_RELATED),
      ...AZ_ENTITY_TYPES.flatMap((t) => t.counts.flatMap((c) => ('plan' in c ? [c.plan] : []))),
    ]
    const e = await entity('G2')
    for (const plan of plans) {
      const { sql, params } = compilePlan(plan)
      expect(4 + params.length + 2).toBeLessThanOrEqual(100)
      expect(sql.length).toBeLessThan(100_000)
    }
    const counts = await ns(db, e, plans)
    expect(counts.every((n) => Number.isInteger(n) && n >= 0)).toBe(true)
  })

  it('walk budgets: a list whose step reaches its budget is refused with the over-budget 400; under it, exact', async () => {
    const g1 = await entity('G1')
    const members = AD_ENTITY_TYPES[1].lists.members
    // G1's transitive members step visits 5 nodes (U1, G3, G2, G1 itself through the cycle, U2): a
    // budget of 5 rows per step is reached (the walk may have been cut there), 6 is not.
    expect(await listRelated(db, g1, members, 0, 10, { stepRows: 5, environmentRows: 100 })).toEqual({ over: true })
    const exact = await listRelated(db, g1, members, 0, 10, { stepRows: 6, environmentRows: 100 })
    expect(exact.over === false && [exact.count, exact.nodes.map((n) => n.objectid)]).toEqual([4, ['G2', 'G3', 'U1', 'U2']])
    // the route's answer: the one over-budget envelope naming the budget and how to narrow
    const refused = await relatedPage(db, g1, members, 0, 10, { stepRows: 5, environmentRows: 100 }).catch((e: unknown) => e)
    expect(refused).toBeInstanceOf(ApiError)
    expect([(refused as ApiError).status, (refused as ApiError).details[0].context]).toEqual([400, 'object_id'])
    expect((refused as ApiError).message).toMatch(/^the walk to the related entities exceeds the nodes visited per step budget of 5: list the entities related to a narrower object/)
    // an environment step (a domain's groups: 3) has its own budget
    const groups = AD_ENTITY_TYPES.find((t) => t.segment === 'domains')!.lists.groups
    expect(await listRelated(db, await entity('DOM'), groups, 0, 10, { stepRows: 1, environmentRows: 3 })).toEqual({ over: true })
    expect(await listRelated(db, await entity('DOM'), groups, 0, 10, { stepRows: 1, environmentRows: 4 })).toMatchObject({ over: false, count: 3 })
    // the budget is inside the SQL: a LIMIT in the recursion of every transitive step, and on the environment scan
    expect(compilePlan(members, { stepRows: 7, environmentRows: 9 }).sql).toMatch(/UNION SELECT e\.start_id FROM s1 JOIN edges e ON e\.end_id = s1\.id AND e\.kind IN \(SELECT value FROM json_each\(\?5\)\) LIMIT 7\)/)
    expect(compilePlan(groups, { stepRows: 7, environmentRows: 9 }).sql).toMatch(/n\.kind IN \(SELECT value FROM json_each\(\?5\)\) LIMIT 9\)/)
  })

  it('walk budgets: a count whose step reaches its budget is capped (a lower bound, flagged), else exact', async () => {
    const g1 = await entity('G1')
    const { members, membership } = AD_ENTITY_TYPES[1].counts
    const [cut, whole] = await countRelated(db, g1, [members, membership], { stepRows: 3, environmentRows: 100 })
    // members: the walk stops after 3 of its 5 nodes; every node it found is a member (never more than exact)
    expect(cut.capped).toBe(true)
    expect(cut.n).toBeGreaterThan(0)
    expect(cut.n).toBeLessThanOrEqual(4)
    // memberships: G2, G3 (+ G1 itself through the cycle): 3 rows reach a budget of 3, so the count is
    // flagged although nothing was left out (reaching the budget is all the walk can tell)
    expect(whole).toEqual({ n: 2, capped: true })
    expect(await countRelated(db, g1, [members, membership], { stepRows: 6, environmentRows: 100 })).toEqual([
      { n: 4, capped: false },
      { n: 2, capped: false },
    ])
    // per-kind counts (Azure descendents) are flagged the same way
    const dom = await entity('DOM')
    const contains = [{ op: 'environment', kinds: ['User', 'Group'] }] as const
    expect(await countRelatedByKind(db, dom, contains, { stepRows: 1, environmentRows: 2 })).toMatchObject({ capped: true })
    expect(await countRelatedByKind(db, dom, contains, { stepRows: 1, environmentRows: 5 })).toEqual({ counts: { Group: 3, User: 1 }, capped: false })
  })

  it('Azure entity types by BloodHound name or by kind name', () => {
    expect(azEntityType('service-principals')?.kind).toBe('AZServicePrincipal')
    expect(azEntityType('AZUser')?.segment).toBe('users')
    expect(azEntityType('azkeyvault')?.segment).toBe('key-vaults')
    expect(azEntityType('az-base')?.kind).toBeNull()
    expect(azEntityType('unicorns')).toBeNull()
  })
})
