/**
 * Paging while an analysis commits (issue 18, item 4), generated from the route table: every GET route that
 * takes an environment and pages with `skip` is polled the way the connectors poll (skip only, skip += page
 * length, stop on an empty page), and between EVERY pair of pages an analysis run commits that closes a finding
 * already served, closes one not yet served and opens a new one. Every finding open throughout the poll must be
 * served exactly once, and nothing may be served twice. A route added later with these parameters is covered
 * without editing this file.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { EdgeHoundClient } from '../../src/client'
import { BUILTIN_FINDINGS } from '../../src/findings/catalogue'
import { deleteEdge, insertGraph, runAnalysisDirect } from '../fixtures/findings/helpers'
import { count, env, hAdminSession, objectParts, report, routeInfo, sampleQuery, SEMANTIC_SAMPLES, type RouteInfo } from './lib'

const ENV_PARAM = /^(domain|environment|env|tenant)(_?id)?$/i
const queryKeys = (r: RouteInfo) => (r.def.query ? Object.keys(objectParts(r.def.query)?.shape ?? {}) : [])
// the routes that page an environment's findings (tag 'Attack Paths'); asset-group members also page with skip
// and filter by environment, but a member list is not a finding poll
const ROUTES = routeInfo().filter(
  (r) =>
    r.method === 'GET' &&
    (r.def.tags ?? []).includes('Attack Paths') &&
    queryKeys(r).includes('skip') &&
    [...r.pathParams, ...queryKeys(r)].some((k) => ENV_PARAM.test(k)),
)

const TYPE = SEMANTIC_SAMPLES.finding()
const KIND = BUILTIN_FINDINGS.find((d) => d.type === TYPE)!.edgeKind!
let admin: EdgeHoundClient
let seq = 0

/** An environment whose users each hold KIND on its Domain node (Tier Zero): one TYPE finding per user. */
function environment() {
  const id = `S-1-5-21-7700${++seq}`
  let next = 0
  return {
    id,
    async addUsers(n: number) {
      const users = Array.from({ length: n }, () => `${id}-${1000 + next++}`)
      await insertGraph(
        env.DB,
        [
          { objectid: id, kinds: ['Domain'], name: `MIDPOLL${seq}.LOCAL`, environment_id: id, properties: {} },
          ...users.map((u) => ({ objectid: u, kinds: ['User', 'Base'], name: `U${u}`, environment_id: id, properties: {} })),
        ],
        users.map((u) => ({ start: u, end: id, kind: KIND })),
      )
      return users
    },
    close: (user: string) => deleteEdge(env.DB, user, KIND, id),
  }
}

async function open(envId: string): Promise<Map<number, string>> {
  const { results } = await env.DB.prepare(`SELECT id, from_objectid FROM findings WHERE environment_id = ?1 AND finding = ?2 AND deleted_at IS NULL`)
    .bind(envId, TYPE)
    .all<{ id: number; from_objectid: string }>()
  return new Map(results.map((r) => [r.id, r.from_objectid]))
}

beforeAll(async () => {
  admin = (await hAdminSession()).client
})
afterAll(() => report('mid-poll'))

describe('a poll with skip survives an analysis committing between every pair of pages', () => {
  it('routes that page an environment with skip exist (findings details)', () => {
    expect(ROUTES.map((r) => r.label)).toContain('GET /api/v2/domains/:domain_id/details')
    count('mid-poll routes', ROUTES.length)
  })

  for (const r of ROUTES) {
    it(`${r.label}`, { timeout: 120_000 }, async () => {
      const e = environment()
      const users = await e.addUsers(8)
      await runAnalysisDirect(env.DB)
      const before = await open(e.id)
      expect(before.size).toBe(8)
      const pathValues = r.sampleParams()
      for (const k of r.pathParams) if (ENV_PARAM.test(k)) pathValues[k] = encodeURIComponent(e.id)
      const envQuery = Object.fromEntries(queryKeys(r).filter((k) => ENV_PARAM.test(k)).map((k) => [k, e.id]))
      const limit: Record<string, string> = queryKeys(r).includes('limit') ? { limit: '2' } : {}
      const served: { id: number }[] = []
      const closed = new Set<string>()
      for (let skip = 0, k = 0; k < 50; k++) {
        const page = await admin.call<{ data: { id: number; FromPrincipal?: string }[] }>('GET', r.pathWith(pathValues) + sampleQuery(r.def, { ...envQuery, ...limit, skip: String(skip) }))
        count('mid-poll pages')
        if (!page.data?.length) break
        served.push(...page.data)
        skip += page.data.length
        // between this page and the next: close the last finding served and one not served yet; a new one opens
        const servedUsers = new Set(served.map((f) => before.get(f.id)))
        const last = before.get(page.data.at(-1)!.id)
        const unserved = users.filter((u) => !servedUsers.has(u) && !closed.has(u)).at(-1)
        for (const u of [last, unserved]) if (u && !closed.has(u)) (closed.add(u), await e.close(u))
        if (k % 2 === 0) await e.addUsers(1)
        await runAnalysisDirect(env.DB)
        count('mid-poll commits')
      }
      const after = await open(e.id)
      const ids = served.map((f) => f.id)
      const twice = ids.filter((id, i) => ids.indexOf(id) !== i)
      const missed = [...before.keys()].filter((id) => after.has(id) && !ids.includes(id)).map((id) => before.get(id))
      expect(closed.size, 'the scenario closes findings on both sides of the cursor').toBeGreaterThan(3)
      expect({ twice, missed }).toEqual({ twice: [], missed: [] })
    })
  }
})
