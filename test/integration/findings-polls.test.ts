/**
 * Connectors page /details with `skip` only (Google SecOps, Sentinel, Splunk): an analysis that commits between
 * two pages must not make a finding that stays open throughout the poll go unserved, nor serve one twice
 * (issue 18, item 4; docs/findings.md, "Polls that span an analysis").
 */
import { env } from 'cloudflare:workers'
import { beforeAll, describe, expect, it } from 'vitest'
import { adminSession, adminToken, client } from '../helpers'
import type { EdgeHoundClient } from '../../src/client'
import { findingDetails, type FindingJson, type RelationshipFindingJson } from '../../src/client/findings'
import { deleteEdge, insertGraph, runAnalysisDirect } from '../fixtures/findings/helpers'

const db = env.DB
let admin: EdgeHoundClient

/** An environment whose users each hold GenericAll on its Domain Admins group: one T0GenericAll finding per user. */
function domain(env: string) {
  const da = `${env}-512`
  let next = 0
  return {
    env,
    da,
    async addUsers(n: number): Promise<string[]> {
      const users = Array.from({ length: n }, () => `${env}-${2000 + next++}`)
      await insertGraph(
        db,
        [
          { objectid: env, kinds: ['Domain'], name: `${env}.LOCAL`, environment_id: env, properties: {} },
          { objectid: da, kinds: ['Group'], name: `DA@${env}`, environment_id: env, properties: {} },
          ...users.map((u) => ({ objectid: u, kinds: ['User'], name: `U${u}`, environment_id: env, properties: {} })),
        ],
        users.map((u) => ({ start: u, end: da, kind: 'GenericAll' })),
      )
      return users
    },
    close: (user: string) => deleteEdge(db, user, 'GenericAll', da),
  }
}

async function openIds(env: string): Promise<Map<number, string>> {
  const { results } = await db
    .prepare(`SELECT id, from_objectid FROM findings WHERE environment_id = ?1 AND finding = 'T0GenericAll' AND deleted_at IS NULL`)
    .bind(env)
    .all<{ id: number; from_objectid: string }>()
  return new Map(results.map((r) => [r.id, r.from_objectid]))
}

/**
 * One poll the way the connectors page: skip only (and `limit` when given), skip += page length, stop on an
 * empty page. `between(k)` runs after page k (0-based) and before the next one.
 */
async function poll(c: EdgeHoundClient, env: string, opts: { limit?: number; between: (k: number, served: FindingJson[]) => Promise<void> }) {
  const served: FindingJson[] = []
  for (let skip = 0, k = 0; k < 200; k++) {
    const page = await findingDetails(c, env, { finding: 'T0GenericAll', skip, ...(opts.limit ? { limit: opts.limit } : {}) })
    if (page.data.length === 0) break
    served.push(...page.data)
    skip += page.data.length
    await opts.between(k, served)
  }
  return served
}

/** Every finding open before and after the poll is served exactly once; nothing is served twice. */
function expectComplete(served: FindingJson[], before: Map<number, string>, after: Map<number, string>) {
  const ids = served.map((f) => f.id)
  expect(ids.length, `served twice: ${ids.filter((id, i) => ids.indexOf(id) !== i)}`).toBe(new Set(ids).size)
  const throughout = [...before.keys()].filter((id) => after.has(id))
  const missed = throughout.filter((id) => !ids.includes(id)).map((id) => before.get(id))
  expect(missed, 'open throughout the poll, never served').toEqual([])
  // a row served as closed is closed; a row still open is served as open
  for (const f of served) if (f.deleted_at.valid) expect(after.has(f.id)).toBe(false)
  for (const f of served) if (after.has(f.id)) expect(f.deleted_at.valid).toBe(false)
}

beforeAll(async () => {
  admin = await adminToken()
})

describe('a poll that spans analysis runs', () => {
  it('the reproduction: six findings, two per page, the first closes between page 1 and page 2 — the third is served', async () => {
    const d = domain('S-1-5-21-4100')
    const users = await d.addUsers(6)
    await runAnalysisDirect(db)
    const before = await openIds(d.env)
    const served = await poll(admin, d.env, {
      limit: 2,
      between: async (k) => {
        if (k !== 0) return
        await d.close(users[0])
        await runAnalysisDirect(db)
      },
    })
    const after = await openIds(d.env)
    expect(after.size).toBe(5)
    expectComplete(served, before, after)
    expect((served as RelationshipFindingJson[]).map((f) => f.FromPrincipal)).toEqual(users)
    // the next poll starts from the new state: the closed finding is gone, nothing else changed
    const next = await poll(admin, d.env, { limit: 2, between: async () => {} })
    expect(next.map((f) => f.id)).toEqual([...after.keys()].sort((a, b) => a - b))
    expect(next.every((f) => !f.deleted_at.valid)).toBe(true)
  })

  it('an analysis commits between every pair of pages, closing served and unserved findings and adding new ones', async () => {
    const d = domain('S-1-5-21-4200')
    const users = await d.addUsers(9)
    await runAnalysisDirect(db)
    const before = await openIds(d.env)
    const closed = new Set<string>()
    const served = await poll(admin, d.env, {
      limit: 2,
      between: async (k, sofar) => {
        // close the newest finding served so far, and one not served yet; a new finding appears
        const seen = (sofar as RelationshipFindingJson[]).map((f) => f.FromPrincipal).filter((u) => users.includes(u) && !closed.has(u))
        const unseen = users.filter((u) => !seen.includes(u) && !closed.has(u) && !(sofar as RelationshipFindingJson[]).some((f) => f.FromPrincipal === u))
        for (const u of [seen.at(-1), unseen.at(-1 - (k % 3))]) {
          if (!u || closed.has(u)) continue
          closed.add(u)
          await d.close(u)
        }
        if (k % 2 === 0) await d.addUsers(1)
        await runAnalysisDirect(db)
      },
    })
    const after = await openIds(d.env)
    expect(closed.size).toBeGreaterThan(4)
    expectComplete(served, before, after)
  }, 60_000)

  it('the Google SecOps shape (no limit, default page of 10) over a session, runs committing after every page', async () => {
    const d = domain('S-1-5-21-4300')
    const users = await d.addUsers(35)
    await runAnalysisDirect(db)
    const session = await adminSession()
    const before = await openIds(d.env)
    let i = 0
    const served = await poll(session, d.env, {
      between: async () => {
        // two of the first rows close each time: every later row would move two places forward
        for (const u of users.slice(i, i + 2)) await d.close(u)
        i += 2
        await runAnalysisDirect(db)
      },
    })
    expectComplete(served, before, await openIds(d.env))
  }, 60_000)

  it('what a later page shows: closed rows keep their place with deleted_at set, and count includes them', async () => {
    const d = domain('S-1-5-21-4400')
    const users = await d.addUsers(4)
    await runAnalysisDirect(db)
    const t = await admin.createToken('poll-shape')
    const c = client({ kind: 'token', tokenId: t.data.id, tokenKey: t.data.key, scheme: 'bhesignature' })
    const p1 = await findingDetails(c, d.env, { finding: 'T0GenericAll', skip: 0, limit: 2 })
    expect(p1.count).toBe(4)
    await d.close(users[0])
    await d.close(users[3])
    const run = await runAnalysisDirect(db)
    const p2 = await findingDetails(c, d.env, { finding: 'T0GenericAll', skip: 2, limit: 2 })
    expect(p2.count).toBe(4)
    expect((p2.data as RelationshipFindingJson[]).map((f) => [f.FromPrincipal, f.deleted_at])).toEqual([
      [users[2], { time: '0001-01-01T00:00:00.000Z', valid: false }],
      [users[3], { time: run.completedAt, valid: true }],
    ])
    expect((await findingDetails(c, d.env, { finding: 'T0GenericAll', skip: 4, limit: 2 })).data).toEqual([])
    // another credential (no poll of its own) and a new poll see open rows only
    const other = await findingDetails(admin, d.env, { finding: 'T0GenericAll', skip: 1, limit: 10 })
    expect(other.count).toBe(2)
    expect((other.data as RelationshipFindingJson[]).map((f) => f.FromPrincipal)).toEqual([users[2]])
    // a later page with another query (here a sort) is not the same poll: open rows only
    const sorted = await findingDetails(c, d.env, { finding: 'T0GenericAll', skip: 1, limit: 2, sort_by: '-id' })
    expect(sorted.count).toBe(2)
    expect((await findingDetails(c, d.env, { finding: 'T0GenericAll', skip: 1, limit: 2 })).count).toBe(4)
    const again = await findingDetails(c, d.env, { finding: 'T0GenericAll', skip: 0, limit: 2 })
    expect((again.data as RelationshipFindingJson[]).map((f) => f.FromPrincipal)).toEqual([users[1], users[2]])
    expect(again.count).toBe(2)
  })
})
