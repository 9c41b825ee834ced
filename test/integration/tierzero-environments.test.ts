/**
 * Issue 24: one environment's data must never change Tier Zero or findings in another. The reproduction: a User
 * restricted to environment A uploads 15 groups and 196 nested MemberOf edges into A; the next analysis pushes an
 * administrator's Cypher rule (members of an Enterprise Admins group) over its row budget. Before the fix the rule
 * then selected nothing anywhere, and environment B's Tier Zero account lost Tier Zero and its attack-path finding,
 * silently for B's readers. Now a rule is evaluated per environment and over the whole graph; a failing evaluation
 * keeps its last good selection and is shown to the readers of the environment it concerns, and only to them
 * (src/assetgroups/rules.ts, docs/asset-groups.md "Rules and environments").
 */
import { beforeAll, describe, expect, it } from 'vitest'
import { adminToken, env, userWithRole } from '../helpers'
import type { EdgeHoundClient } from '../../src/client'
import { ingest, type OpenGraphPayload } from '../../src/client/graph'
import { createTagSelector, getTagSelector, listTagSelectorMembers, updateTagSelector, type AssetGroupTagJson, type RuleFailureJson } from '../../src/client/assetgroups'
import { findingDetails, requestAnalysis } from '../../src/client/findings'
import { DEFAULT_LIMITS } from '../../src/cypher/budget'
import { runAnalysisDirect, settleRuns } from '../fixtures/findings/helpers'
import { evaluateRules, WHOLE_GRAPH } from '../../src/assetgroups/rules'

const db = () => (env as unknown as { DB: D1Database }).DB

const A = 'S-1-5-21-7100'
const B = 'S-1-5-21-7200'
const C = 'S-1-5-21-7300'
const B_EA = `${B}-519`
const B_ADMIN = `${B}-1500`
const B_HELPDESK = `${B}-1101`
/** a user of C who is a member of B's Enterprise Admins: the membership crosses a trust */
const C_ADMIN = `${C}-1600`
const A_EA = `${A}-519`
const A_GROUPS = Array.from({ length: 14 }, (_, i) => `${A}-${2001 + i}`)

const RULE = "MATCH (u)-[:MemberOf*1..]->(g:Group) WHERE g.objectid ENDS WITH '-519' RETURN u"

let admin: EdgeHoundClient
let aUser: EdgeHoundClient
let aReader: EdgeHoundClient
let bReader: EdgeHoundClient
let selectorId = 0

const node = (id: string, kinds: string[], name: string, sid: string) => ({ id, kinds: [...kinds, 'Base'], properties: { name, domainsid: sid } })
const memberOf = (s: string, t: string) => ({ start: { value: s }, end: { value: t }, kind: 'MemberOf' })

/** 15 groups and 196 nested MemberOf edges: every one of 14 groups is a member of the 13 others and of A's EA. */
function heavyA(): OpenGraphPayload {
  const edges = []
  for (const g of A_GROUPS) {
    for (const h of A_GROUPS) if (g !== h) edges.push(memberOf(g, h))
    edges.push(memberOf(g, A_EA))
  }
  return { graph: { nodes: [node(A_EA, ['Group'], 'ENTERPRISE ADMINS@A.EXAMPLE', A), ...A_GROUPS.map((g, i) => node(g, ['Group'], `NESTED ${i}@A.EXAMPLE`, A))], edges } }
}

async function analyse(): Promise<void> {
  await settleRuns(db())
  await requestAnalysis(admin)
  await settleRuns(db())
}

async function isTierZero(objectid: string): Promise<boolean> {
  const r = await admin.raw('POST', '/api/v2/graphs/cypher', { query: `MATCH (n:Tag_Tier_Zero) WHERE n.objectid = '${objectid}' RETURN n` })
  if (r.status === 404) return false // the Cypher endpoint's answer for no result
  expect(r.status).toBe(200)
  return Object.keys(((await r.json()) as { data: { nodes: Record<string, unknown> } }).data.nodes).length === 1
}

/** B's open T0GenericAll findings, as B's own reader reads them. */
async function bFindings(): Promise<{ id: number; from: string; to: string }[]> {
  const page = await findingDetails(bReader, B, { finding: 'T0GenericAll', limit: 100 })
  return (page.data as { id: number; FromPrincipal: string; ToPrincipal: string }[]).map((f) => ({ id: f.id, from: f.FromPrincipal, to: f.ToPrincipal }))
}

async function tagFailures(c: EdgeHoundClient): Promise<RuleFailureJson[]> {
  const one = (await c.call<{ data: { tag: AssetGroupTagJson } }>('GET', '/api/v2/asset-group-tags/1')).data.tag.rule_failures
  const listed = (await c.call<{ data: { tags: AssetGroupTagJson[] } }>('GET', '/api/v2/asset-group-tags')).data.tags.find((t) => t.id === 1)!.rule_failures
  expect(listed).toEqual(one)
  return one
}

async function lastCompleteRun(): Promise<string> {
  const r = await db().prepare(`SELECT MAX(completed_at) AS t FROM analysis_runs WHERE status = 'complete'`).first<{ t: string }>()
  return r!.t
}

beforeAll(async () => {
  admin = await adminToken()
  await ingest(admin, {
    graph: {
      nodes: [
        node(A, ['Domain'], 'A.EXAMPLE', A),
        node(B, ['Domain'], 'B.EXAMPLE', B),
        node(C, ['Domain'], 'C.EXAMPLE', C),
        node(B_EA, ['Group'], 'ENTERPRISE ADMINS@B.EXAMPLE', B),
        node(B_ADMIN, ['User'], 'B-ADMIN@B.EXAMPLE', B),
        node(B_HELPDESK, ['User'], 'HELPDESK@B.EXAMPLE', B),
        node(C_ADMIN, ['User'], 'C-ADMIN@C.EXAMPLE', C),
      ],
      edges: [memberOf(B_ADMIN, B_EA), memberOf(C_ADMIN, B_EA), { start: { value: B_HELPDESK }, end: { value: B_ADMIN }, kind: 'GenericAll' }],
    },
  })
  aUser = (await userWithRole('User', { all_environments: false, environment_access: [A] })).client
  aReader = (await userWithRole('Read-Only', { all_environments: false, environment_access: [A] })).client
  bReader = (await userWithRole('Read-Only', { all_environments: false, environment_access: [B] })).client
})

describe('a Cypher rule and the environments (issue 24)', () => {
  it("A's data cannot switch off Tier Zero in B; the failure is shown to A's readers only; it recovers", async () => {
    // without the rule, B's account is no Tier Zero and has no finding
    await analyse()
    expect(await isTierZero(B_ADMIN)).toBe(false)
    expect(await bFindings()).toEqual([])

    // an administrator's global rule: members of any Enterprise Admins group
    selectorId = (await createTagSelector(admin, 1, { name: 'enterprise admins members', seeds: [{ type: 2, value: RULE }] })).data.id
    await analyse()
    const good = await lastCompleteRun()
    expect(await isTierZero(B_ADMIN)).toBe(true)
    // the membership that crosses a trust is found by the whole-graph evaluation
    expect(await isTierZero(C_ADMIN)).toBe(true)
    const before = await bFindings()
    expect(before).toEqual([{ id: expect.any(Number), from: B_HELPDESK, to: B_ADMIN }])
    expect((await getTagSelector(admin, 1, selectorId)).data.selector.evaluation).toMatchObject({ members: 2, error: null, failures: [] })

    // the restricted User of A uploads the nested groups into A
    const up = await ingest(aUser, heavyA())
    expect(up.files[0]).toMatchObject({ nodes: 15, edges: 196 })
    // ending the upload job requested the analysis run that first fails
    await settleRuns(db())
    const failed = await lastCompleteRun()
    expect(failed > good).toBe(true)
    await analyse()

    // B keeps Tier Zero and its finding (the same finding, never closed); C's cross-trust membership is kept too
    expect(await isTierZero(B_ADMIN)).toBe(true)
    expect(await isTierZero(C_ADMIN)).toBe(true)
    expect(await bFindings()).toEqual(before)

    // administrators see every failing evaluation on the selector: A's own and the whole graph's
    const evaluation = (await getTagSelector(admin, 1, selectorId)).data.selector.evaluation
    expect(evaluation.error).toMatch(/row limit/)
    const aFailure = { selector_id: selectorId, environment_id: A, error: expect.stringMatching(/row limit/), failing_since: failed, kept_from: good, kept_members: 0 }
    const wholeFailure = { ...aFailure, environment_id: null, kept_members: 1 }
    expect(evaluation.failures).toEqual([wholeFailure, aFailure])
    expect(await tagFailures(admin)).toEqual([wholeFailure, aFailure])
    // A's readers see that A's evaluation failed; B's readers, whose Tier Zero is intact, learn nothing of A
    expect(await tagFailures(aReader)).toEqual([aFailure])
    expect(await tagFailures(bReader)).toEqual([])

    // another failing run: still failing since the first one, still keeping the first good selection
    await analyse()
    expect(await tagFailures(aReader)).toEqual([aFailure])
    expect(await lastCompleteRun()).not.toBe(failed)

    // B's own evaluation still runs while A fails: B's data decides B's Tier Zero
    await db()
      .prepare(`DELETE FROM edges WHERE kind = 'MemberOf' AND start_id = (SELECT id FROM nodes WHERE objectid = ?1)`)
      .bind(B_ADMIN)
      .run()
    await analyse()
    expect(await isTierZero(B_ADMIN)).toBe(false)
    expect(await bFindings()).toEqual([])
    expect(await isTierZero(C_ADMIN)).toBe(true)

    // A's nested groups are flattened: every evaluation succeeds again, A's selection is computed, failures clear
    await db()
      .prepare(
        `DELETE FROM edges WHERE kind = 'MemberOf' AND start_id IN (SELECT id FROM nodes WHERE environment_id = ?1)
           AND end_id IN (SELECT id FROM nodes WHERE environment_id = ?1 AND objectid <> ?2)`,
      )
      .bind(A, A_EA)
      .run()
    await analyse()
    expect(await tagFailures(admin)).toEqual([])
    expect(await tagFailures(aReader)).toEqual([])
    const after = (await getTagSelector(admin, 1, selectorId)).data.selector.evaluation
    expect(after).toMatchObject({ members: 15, error: null, failures: [] })
    for (const g of A_GROUPS) expect(await isTierZero(g)).toBe(true)
    expect(await isTierZero(C_ADMIN)).toBe(true)
  })
  it('a changed rule keeps nothing of the old one; a disabled rule keeps and shows nothing', async () => {
    await settleRuns(db())
    const tight = { ruleLimits: { ...DEFAULT_LIMITS, maxResultRows: 5 } }
    const groups = (await createTagSelector(admin, 1, { name: 'every group', seeds: [{ type: 2, value: 'MATCH (n:Group) RETURN n' }] })).data.id
    const picked = async () => (await listTagSelectorMembers(admin, 1, groups, { limit: 100 })).data.members.map((m) => m.object_id).sort()
    const mine = async () => (await getTagSelector(admin, 1, groups)).data.selector.evaluation.failures
    const first = await runAnalysisDirect(db())
    const all = [A_EA, ...A_GROUPS, B_EA].sort()
    expect(await picked()).toEqual(all)

    // A's 15 groups cross the lowered result budget: A (and the whole graph) keep what they selected, B is evaluated
    const second = await runAnalysisDirect(db(), tight)
    expect(await picked()).toEqual(all)
    expect((await mine()).map((f) => [f.environment_id, f.kept_from, f.kept_members, f.failing_since])).toEqual([
      [null, first.completedAt, 0, second.completedAt],
      [A, first.completedAt, 15, second.completedAt],
    ])
    expect((await tagFailures(bReader)).filter((f) => f.selector_id === groups)).toEqual([])

    // the rule's Cypher changes: the new rule never succeeded in A, so A selects nothing by it
    await updateTagSelector(admin, 1, groups, { seeds: [{ type: 2, value: "MATCH (n:Group) WHERE n.name CONTAINS '@' RETURN n" }] })
    const third = await runAnalysisDirect(db(), tight)
    expect(await picked()).toEqual([B_EA])
    expect((await mine()).map((f) => [f.environment_id, f.kept_from, f.kept_members, f.failing_since])).toEqual([
      [null, null, 0, third.completedAt],
      [A, null, 0, third.completedAt],
    ])

    // disabled: no failures anywhere, and its kept rows are gone
    await updateTagSelector(admin, 1, groups, { disabled: true })
    await runAnalysisDirect(db(), tight)
    expect(await mine()).toEqual([])
    expect((await tagFailures(admin)).filter((f) => f.selector_id === groups)).toEqual([])
    const rows = await db().prepare(`SELECT (SELECT COUNT(*) FROM asset_group_rule_scopes WHERE selector_id = ?1) AS n`).bind(groups).first<{ n: number }>()
    expect(rows!.n).toBe(0)
  })

  it('a monotone rule is evaluated over the whole graph, then only in the environments its answer holds; when the whole graph fails, in every one', async () => {
    // D's user is a member of E's Enterprise Admins (across a trust); E's own admin too
    const D = 'S-1-5-21-7400'
    const E = 'S-1-5-21-7500'
    const E_EA = `${E}-519`
    const E_ADMIN = `${E}-1700`
    const D_USER = `${D}-1800`
    await settleRuns(db())
    await ingest(admin, {
      graph: {
        nodes: [node(D, ['Domain'], 'D.EXAMPLE', D), node(E, ['Domain'], 'E.EXAMPLE', E), node(E_EA, ['Group'], 'ENTERPRISE ADMINS@E.EXAMPLE', E), node(E_ADMIN, ['User'], 'E-ADMIN@E.EXAMPLE', E), node(D_USER, ['User'], 'D-USER@D.EXAMPLE', D)],
        edges: [memberOf(E_ADMIN, E_EA), memberOf(D_USER, E_EA)],
      },
    })
    await settleRuns(db())
    const everyEnvironment = [A, B, C, D, E].sort()

    /** evaluateRules over env.DB, recording the environments evaluated on their own (their bound access parameter) */
    const evaluate = async (cypher: string, limits = DEFAULT_LIMITS) => {
      const evaluated = new Set<string>()
      const recorded = new Proxy(db(), {
        get(target, key) {
          if (key !== 'prepare') return Reflect.get(target, key, target)
          return (sql: string) => {
            const stmt = target.prepare(sql)
            return new Proxy(stmt, {
              get(t, k) {
                if (k !== 'bind') return Reflect.get(t, k, t)
                return (...params: unknown[]) => {
                  for (const p of params)
                    if (typeof p === 'string' && p.startsWith('["S-1-5-21-')) for (const e of JSON.parse(p) as string[]) if (everyEnvironment.includes(e)) evaluated.add(e)
                  return t.bind(...params)
                }
              },
            })
          }
        },
      })
      const [r] = await evaluateRules(recorded, [{ selectorId: 990_001, seedId: 990_001, tag: 'admin_tier_0', cypher }], { limits, retryMs: 0 })
      return { r, evaluated: [...evaluated].sort(), scope: (s: string) => r.scopes.find((x) => x.scope === s)! }
    }

    const rule = `MATCH (u)-[:MemberOf]->(g:Group) WHERE g.objectid = '${E_EA}' RETURN u`
    const fast = await evaluate(rule)
    expect(fast.r.objectids.sort()).toEqual([D_USER, E_ADMIN].sort())
    expect(fast.r.error).toBeNull()
    // the whole graph's answer holds nodes of D and E: only they are evaluated on their own
    expect(fast.evaluated).toEqual([D, E].sort())
    // every environment has its scope, succeeded; A, B and C (not evaluated) select nothing
    expect(fast.r.scopes.map((x) => [x.scope, x.error]).sort()).toEqual([...everyEnvironment, WHOLE_GRAPH].map((x) => [x, null]).sort())
    for (const e of [A, B, C]) expect(fast.scope(e)).toMatchObject({ objectids: [], fresh: [] })
    // D's own answer does not hold D's user: its membership crosses into E, so it is the whole graph's own selection
    // (not the whole-graph answer split by environment)
    expect(fast.scope(E)).toMatchObject({ objectids: [E_ADMIN], fresh: [E_ADMIN] })
    expect(fast.scope(D)).toMatchObject({ objectids: [], fresh: [] })
    expect(fast.scope(WHOLE_GRAPH)).toMatchObject({ objectids: [D_USER], fresh: [D_USER] })

    // a rule that is not monotone (LIMIT) is evaluated in every environment, as before
    const limited = await evaluate(`${rule} LIMIT 10`)
    expect(limited.evaluated).toEqual(everyEnvironment)
    expect(limited.r.objectids.sort()).toEqual([D_USER, E_ADMIN].sort())

    // A's 14 members of its Enterprise Admins exhaust a 5-row result budget for the whole graph: every environment
    // is then evaluated on its own, A's fails alone and E's admin stays selected, whatever A holds
    const members = "MATCH (u)-[:MemberOf]->(g:Group) WHERE g.objectid ENDS WITH '-519' RETURN u"
    const tight = { ...DEFAULT_LIMITS, maxResultRows: 5 }
    expect((await evaluate(members)).r.error).toBeNull()
    const fallback = await evaluate(members, tight)
    expect(fallback.evaluated).toEqual(everyEnvironment)
    expect(fallback.r.scopes.filter((x) => x.error !== null).map((x) => x.scope).sort()).toEqual([WHOLE_GRAPH, A].sort())
    expect(fallback.r.objectids).toContain(E_ADMIN)
    expect(fallback.scope(E)).toMatchObject({ objectids: [E_ADMIN], error: null })
  })
})
