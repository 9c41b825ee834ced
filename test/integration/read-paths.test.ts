/**
 * The connector's read paths stay cheap (issues 5/6/7 benchmark misses):
 *  - the kind catalogue costs one tiny statement while the isolate's copy is current (none where a route
 *    folds the version into its own batch), and is refreshed when another isolate changes the extensions;
 *  - details are one D1 round trip; available-domains one small statement while its isolate copy is current;
 *  - their query plans (workerd's SQLite) stay on the indexes that keep them flat in graph size and skip.
 * Every D1 call is observed through a recording wrapper around env.DB.
 */
import { env } from 'cloudflare:workers'
import { beforeAll, describe, expect, it } from 'vitest'
import { adminToken, BASE, expectEnvelope } from '../helpers'
import { EdgeHoundClient } from '../../src/client'
import { endUploadJob, startUploadJob, uploadFile } from '../../src/client/graph'
import { createApp } from '../../src/app'
import { kindCatalogAt, loadKindCatalog } from '../../src/extensions/catalog'
import { upsertExtension as storeUpsert } from '../../src/extensions/extensions.store'
import { testAudit } from '../fixtures/audit'
import { environmentsStampStatement, environmentsStatement } from '../../src/graph/graph.store'
import { CATALOG_VERSION_SQL } from '../../src/extensions/catalog'
import { IMPACT_STAMP_SQL } from '../../src/findings/impact'
import { listDetails } from '../../src/findings/findings.store'
import { DEFAULT_SORT } from '../../src/findings/query'
import { smallDoc } from '../fixtures/extensions/docs'
import { NEW_ID_SQL } from '../../src/graph/ids'
import { settleRuns } from '../fixtures/findings/helpers'

const ctx = { waitUntil() {}, passThroughOnException() {}, props: {} } as unknown as ExecutionContext
const VERSION_SQL = 'SELECT version FROM extension_catalog_version WHERE id = 1'
const STAMP = /^SELECT \(SELECT version FROM extension_catalog_version WHERE id = 1\) \|\| '\|' \|\| .* AS stamp$/

interface Call {
  via: 'first' | 'all' | 'run' | 'raw' | 'batch'
  sql: string[]
}

/**
 * env.DB with every call recorded: the method and the SQL of each statement it sends. The request's D1
 * session (http/d1-session.ts: `withSession`, which every request now runs its statements in) is recorded
 * into the same list, so the counts are the round trips the route really makes.
 */
function recording(db: D1Database, calls: Call[] = []): { db: D1Database; calls: Call[] } {
  const SQL = Symbol('sql')
  const wrap = (stmt: D1PreparedStatement, sql: string): D1PreparedStatement =>
    new Proxy(stmt, {
      get(t, p) {
        if (p === SQL) return sql
        const v = Reflect.get(t, p, t)
        if (typeof v !== 'function') return v
        if (p === 'bind') return (...args: unknown[]) => wrap(v.apply(t, args), sql)
        if (p === 'first' || p === 'all' || p === 'run' || p === 'raw')
          return (...args: unknown[]) => (calls.push({ via: p, sql: [sql] }), v.apply(t, args))
        return v.bind(t)
      },
    })
  const proxy = new Proxy(db, {
    get(t, p) {
      if (p === 'prepare') return (sql: string) => wrap(t.prepare(sql), sql)
      if (p === 'batch')
        return (stmts: D1PreparedStatement[]) => {
          calls.push({ via: 'batch', sql: stmts.map((s) => (s as unknown as Record<symbol, string>)[SQL]) })
          return t.batch(stmts)
        }
      if (p === 'withSession')
        return (arg?: string) => recording((t as D1Database).withSession(arg) as unknown as D1Database, calls).db
      const v = Reflect.get(t, p, t)
      return typeof v === 'function' ? v.bind(t) : v
    },
  })
  return { db: proxy, calls }
}

/** Authentication's own reads (token, user), which depend on its caches, not on the route. */
const AUTH_SQL = /\b(api_tokens|users|sessions)\b/

/** Sends a signed request through the app with a recording DB; returns the response and the route's D1 calls. */
async function viaRecordingDb(c: EdgeHoundClient, target: string, rec = recording(env.DB)): Promise<{ res: Response; calls: Call[] }> {
  const from = rec.calls.length
  const req = await c.buildRequest('GET', target)
  req.headers.set('CF-Connecting-IP', '10.77.0.1')
  const res = await createApp().fetch(req, { ...env, DB: rec.db } as unknown as Env, ctx)
  return { res, calls: rec.calls.slice(from).filter((k) => !k.sql.every((s) => AUTH_SQL.test(s))) }
}

const oneLine = (s: string) => s.replace(/\s+/g, ' ').trim()

/** EXPLAIN QUERY PLAN of a statement (parameters bound to NULL: the plan does not depend on them here). */
async function plan(sql: string, params: unknown[]): Promise<string[]> {
  const { results } = await env.DB.prepare(`EXPLAIN QUERY PLAN ${sql}`)
    .bind(...params)
    .all<{ id: number; parent: number; detail: string }>()
  // indent by depth, so that the subquery's lines can be told from the outer query's
  const depth = new Map<number, number>([[0, -1]])
  return results.map((r) => {
    const d = (depth.get(r.parent) ?? 0) + 1
    depth.set(r.id, d)
    return `${'  '.repeat(d)}${r.detail}`
  })
}

const NOW = '2026-01-01T00:00:00.000Z'
let admin: EdgeHoundClient

beforeAll(async () => {
  admin = await adminToken()
})

describe('the kind catalogue', () => {
  it('while the isolate copy is current: one statement, the version alone, and the same object', async () => {
    const before = await loadKindCatalog(env.DB)
    const rec = recording(env.DB)
    expect(await loadKindCatalog(rec.db)).toBe(before)
    expect(rec.calls).toEqual([{ via: 'first', sql: [VERSION_SQL] }])
  })

  it('another isolate installs an extension: the next read sees the new version and loads the new catalogue', async () => {
    const before = await loadKindCatalog(env.DB)
    // straight to the store, as another isolate would: this isolate's copy is not told
    await storeUpsert(env.DB, smallDoc('Elsewhere', 'EW'), NOW, testAudit())
    const rec = recording(env.DB)
    const after = await loadKindCatalog(rec.db)
    expect(rec.calls.map((k) => [k.via, k.sql.length])).toEqual([
      ['first', 1],
      ['batch', 6],
    ])
    expect(after.version).not.toBe(before.version)
    expect(after.nodeKinds.has('EW_User')).toBe(true)
    expect(after.relationshipKinds.get('EW_AdminOf')).toEqual({ traversable: true, extensionName: 'Elsewhere' })
    expect(after.relationshipFindings.map((f) => f.name)).toContain('EW_Admins')
    expect(before.nodeKinds.has('EW_User')).toBe(false) // the old copy is never mutated

    const again = recording(env.DB)
    expect(await loadKindCatalog(again.db)).toBe(after)
    expect(again.calls).toHaveLength(1)
  })

  it('a version changed by another connection alone (same contents) still replaces the copy', async () => {
    const before = await loadKindCatalog(env.DB)
    const bumped = `elsewhere-${crypto.randomUUID()}`
    await env.DB.prepare('UPDATE extension_catalog_version SET version = ?1 WHERE id = 1').bind(bumped).run()
    const after = await loadKindCatalog(env.DB)
    expect(after).not.toBe(before)
    expect(after.version).toBe(bumped)
    expect([...after.nodeKinds].sort()).toEqual([...before.nodeKinds].sort())
    expect(after.extensions).toEqual(before.extensions)
  })

  it('kindCatalogAt: no I/O for the cached version; one batch for any other', async () => {
    const current = await loadKindCatalog(env.DB)
    const rec = recording(env.DB)
    expect(await kindCatalogAt(rec.db, current.version)).toBe(current)
    expect(rec.calls).toEqual([])

    await storeUpsert(env.DB, smallDoc('Elsewhere Two', 'EX'), NOW, testAudit())
    const version = (await env.DB.prepare(VERSION_SQL).first<{ version: string }>())!.version
    const fresh = await kindCatalogAt(rec.db, version)
    expect(rec.calls.map((k) => [k.via, k.sql.length])).toEqual([['batch', 6]])
    expect(fresh.version).toBe(version)
    expect(fresh.nodeKinds.has('EX_User')).toBe(true)
  })
})

describe('available-domains', () => {
  const TENANT = 'RP-TENANT-1'

  beforeAll(async () => {
    await storeUpsert(env.DB, smallDoc('ReadPaths', 'RP'), NOW, testAudit())
    // an environment node of the extension's environment kind (graph storage contract, migrations/0004)
    await env.DB.prepare(
      `INSERT INTO nodes (objectid, kind, kinds, name, environment_id, environment_kind, properties, created_at, updated_at, id)
       VALUES (?1, 'RP_Tenant', '["RP_Tenant"]', 'RP ONE', ?1, 'RP_Tenant', '{}', ?2, ?2, ${NEW_ID_SQL})`,
    )
      .bind(TENANT, NOW)
      .run()
  })

  // Each recording wrapper is a binding of its own, so its first request finds no copy (the copy is kept per
  // binding: src/graph/environments.ts); the same wrapper again is the warm path.
  it('reads the list once, in one batch with its stamp; then, while nothing changed, the stamp alone (one statement)', async () => {
    await loadKindCatalog(env.DB) // current
    const rec = recording(env.DB)
    const first = await viaRecordingDb(admin, '/api/v2/available-domains', rec)
    expect(first.res.status).toBe(200)
    expect(first.calls).toHaveLength(1)
    expect(first.calls[0].via).toBe('batch')
    expect(first.calls[0].sql.map(oneLine)).toEqual([
      expect.stringMatching(STAMP),
      VERSION_SQL,
      expect.stringMatching(/^SELECT n\.objectid, .* FROM nodes n INDEXED BY nodes_environments /),
      expect.stringMatching(/FROM finding_sparklines/),
    ])
    const body = (await first.res.json()) as { data: { id: string; type: string }[] }
    expect(body.data.find((d) => d.id === TENANT)).toMatchObject({ name: 'RP ONE', type: 'ReadPaths display', collected: false, impactValue: 0 })

    const again = await viaRecordingDb(admin, '/api/v2/available-domains', rec)
    expect(again.res.status).toBe(200)
    expect(again.calls.map((k) => [k.via, k.sql.map(oneLine)])).toEqual([['all', [expect.stringMatching(STAMP)]]])
    expect(await again.res.json()).toEqual(body)
  })

  it('names an extension environment by what its extension says now, also right after another isolate renamed it', async () => {
    await loadKindCatalog(env.DB)
    const rec = recording(env.DB)
    expect((await viaRecordingDb(admin, '/api/v2/available-domains', rec)).res.status).toBe(200) // copy made
    const renamed = smallDoc('ReadPaths', 'RP', '1.1.0')
    renamed.schema.display_name = 'Read Paths Renamed'
    await storeUpsert(env.DB, renamed, NOW, testAudit()) // another isolate: this one's copies are now stale
    const { res, calls } = await viaRecordingDb(admin, '/api/v2/available-domains', rec)
    expect(res.status).toBe(200)
    expect(calls.map((k) => [k.via, k.sql.length])).toEqual([
      ['all', 1], // the stamp: the catalogue version in it changed
      ['batch', 4],
      ['batch', 6], // the catalogue refresh the version in the batch called for
    ])
    const body = (await res.json()) as { data: { id: string; type: string }[] }
    expect(body.data.find((d) => d.id === TENANT)?.type).toBe('Read Paths Renamed')
  })

  it('the stamp reads indexes only: no scan of nodes, edges or findings', async () => {
    const rec = recording(env.DB)
    await environmentsStampStatement(rec.db, CATALOG_VERSION_SQL, IMPACT_STAMP_SQL).all()
    const p = (await plan(rec.calls[0].sql[0], [])).join('\n')
    expect(p).toMatch(/nodes USING (COVERING )?INDEX nodes_environments/)
    expect(p).toMatch(/analysis_runs USING (COVERING )?INDEX analysis_runs_status/)
    expect(p).toMatch(/ingest_jobs USING INDEX ingest_jobs_running/)
    expect(p).not.toMatch(/edges|finding/)
    expect(p).not.toMatch(/SCAN nodes(?! USING)/)
  })

  it('reads only the environment nodes (partial index nodes_environments), never every node in name order', async () => {
    const rec = recording(env.DB)
    await environmentsStatement(rec.db, null).all()
    const p = await plan(rec.calls[0].sql[0], [null])
    expect(p.join('\n')).toMatch(/(SCAN|SEARCH) n USING INDEX nodes_environments/)
    expect(p.join('\n')).not.toMatch(/nodes_name_nocase/)
  })
})

describe('available-domains within AVAILABLE_DOMAINS_FRESH_MS (the default 1000; the suites run with 0)', () => {
  const FRESH = 'S-1-5-21-4242'

  /** A token client whose requests go through the app on `rec`'s binding with these vars; no bookmarks unless sent. */
  function through(rec: ReturnType<typeof recording>, vars: Record<string, string>) {
    const fetchVia = async (req: Request) => {
      req.headers.set('CF-Connecting-IP', '10.77.0.2')
      return createApp().fetch(req, { ...env, DB: rec.db, ...vars } as unknown as Env, ctx)
    }
    const c = new EdgeHoundClient({ baseUrl: BASE, credentials: admin.credentials, bookmarks: false, fetch: fetchVia })
    /** GET available-domains: the response, its ids, and the route's D1 calls (authentication's left out) */
    const read = async (bookmark?: string) => {
      const from = rec.calls.length
      const res = await c.raw('GET', '/api/v2/available-domains', undefined, bookmark ? { headers: { 'X-D1-Bookmark': bookmark } } : {})
      expect(res.status).toBe(200)
      const ids = ((await res.json()) as { data: { id: string }[] }).data.map((d) => d.id)
      const calls = rec.calls.slice(from).filter((k) => !k.sql.every((q) => AUTH_SQL.test(q)))
      return { res, ids, calls: calls.map((k) => [k.via, k.sql.length]) }
    }
    return { c, read }
  }

  it('answers again within the window with no D1 statement; a request with a bookmark validates in its session', async () => {
    const rec = recording(env.DB)
    // a window far longer than the test: "within the window" must not depend on how fast a loaded machine answers
    const { read } = through(rec, { AVAILABLE_DOMAINS_FRESH_MS: '60000' })
    const first = await read()
    expect(first.calls).toEqual([['batch', 4]]) // no copy yet: read with its stamp
    const again = await read()
    expect(again.calls).toEqual([]) // fresh: not one statement
    expect(again.ids).toEqual(first.ids)

    // another isolate writes an environment: without a bookmark the fresh copy may answer (bounded staleness) ...
    await env.DB.prepare(
      `INSERT INTO nodes (objectid, kind, kinds, name, environment_id, environment_kind, properties, created_at, updated_at, id)
       VALUES (?1, 'Domain', '["Domain","Base"]', 'ELSEWHERE.LOCAL', ?1, 'Domain', '{}', ?2, ?2, ${NEW_ID_SQL})`,
    )
      .bind('S-1-5-21-4343', NOW)
      .run()
    expect((await read()).calls).toEqual([])
    // ... a client that sends a bookmark asked for read-your-writes: the stamp is read in its session, and misses
    const bookmark = first.res.headers.get('X-D1-Bookmark')
    expect(bookmark).toBeTruthy()
    const validated = await read(bookmark!)
    expect(validated.calls).toEqual([['all', 1], ['batch', 4]])
    expect(validated.ids).toContain('S-1-5-21-4343')
    // the bookmark's validation refreshed the copy; with an unchanged stamp a bookmarked read is the stamp alone
    expect((await read(bookmark!)).calls).toEqual([['all', 1]])
  })

  it("a write through this isolate (an upload) is seen by the very next read, without waiting for the window", async () => {
    const rec = recording(env.DB)
    const { c, read } = through(rec, { AVAILABLE_DOMAINS_FRESH_MS: '60000' })
    expect((await read()).ids).not.toContain(FRESH)
    expect((await read()).calls).toEqual([]) // warm and fresh
    const job = (await startUploadJob(c)).data
    await uploadFile(c, job.id, {
      graph: { nodes: [{ id: FRESH, kinds: ['Domain', 'Base'], properties: { name: 'FRESH.LOCAL', domainsid: FRESH } }], edges: [] },
    })
    const after = await read()
    expect(after.calls).toEqual([['all', 1], ['batch', 4]]) // validated: the stamp moved, the list read again
    expect(after.ids).toContain(FRESH)
    expect((await read()).calls).toEqual([]) // fresh again
    await endUploadJob(c, job.id)
    expect((await read()).calls).toEqual([['all', 1], ['batch', 4]]) // the job's end (a write here) too
    // the job's end requested an analysis run: let it finish here, or it commits over the findings the tests
    // below insert (a slow run on a loaded machine closed three of them between two pages of a poll)
    await settleRuns(env.DB, 120_000)
  })

  it('validates again once the window has passed', async () => {
    const rec = recording(env.DB)
    // 3 s: two reads in a row fit in it even on a loaded machine (150 ms did not)
    const { read } = through(rec, { AVAILABLE_DOMAINS_FRESH_MS: '3000' })
    expect((await read()).calls).toEqual([['batch', 4]])
    expect((await read()).calls).toEqual([])
    await new Promise((r) => setTimeout(r, 3100))
    // validated: the stamp alone (nothing changed)
    expect((await read()).calls).toEqual([['all', 1]])
    expect((await read()).calls).toEqual([]) // fresh again
  })

  it('0 is the stamp on every request', async () => {
    const rec = recording(env.DB)
    const { read } = through(rec, { AVAILABLE_DOMAINS_FRESH_MS: '0' })
    expect((await read()).calls).toEqual([['batch', 4]])
    expect((await read()).calls).toEqual([['all', 1]])
    expect((await read()).calls).toEqual([['all', 1]])
  })
})

describe('details', () => {
  const P = 'S-1-5-21-7000'
  const DA = `${P}-512`
  const N = 60
  /** five distinct creation times, so the default order (created_at, id) has ties to break */
  const created = (i: number) => `2026-01-0${1 + ((i * 3) % 5)}T00:00:00.000Z`
  type Row = { id: number; created_at: string; from: string; impact: number; accepted: boolean; closed: boolean }
  const rows: Row[] = []

  beforeAll(async () => {
    // no analysis run may commit over these hand-made findings while the tests page them
    await settleRuns(env.DB, 120_000)
    const nodes = [
      [P, 'Domain', '["Domain"]', 'PAGE7.LOCAL', P, 'Domain'],
      [DA, 'Group', '["Group","Base"]', 'DOMAIN ADMINS@PAGE7.LOCAL', P, null],
      ...Array.from({ length: N }, (_, i) => [`${P}-${3000 + i}`, 'User', '["User","Base"]', `U${i}@PAGE7.LOCAL`, P, null]),
    ]
    await env.DB.batch([
      env.DB.prepare(
        `INSERT INTO nodes (objectid, kind, kinds, name, environment_id, environment_kind, properties, created_at, updated_at, id)
         SELECT value ->> 0, value ->> 1, value ->> 2, value ->> 3, value ->> 4, value ->> 5, '{}', ?2, ?2, ${NEW_ID_SQL} FROM json_each(?1)`,
      ).bind(JSON.stringify(nodes), NOW),
      env.DB.prepare(
        `INSERT INTO edges (start_id, end_id, kind, properties, created_at, updated_at, id)
         SELECT n.id, (SELECT id FROM nodes WHERE objectid = ?2), 'GenericAll', '{"isinherited":true}', ?3, ?3, ${NEW_ID_SQL}
         FROM nodes n WHERE n.environment_id = ?1 AND n.kind = 'User'`,
      ).bind(P, DA, NOW),
    ])
    // findings rows straight into the table (contract of migrations/0005): ties in created_at, closed
    // rows (not listed), accepted without end, accepted until a past time (lapsed) and a future time
    const findings = Array.from({ length: N }, (_, i) => ({
      from: `${P}-${3000 + ((i * 7) % N)}`,
      created_at: created(i),
      impact: (i * 11) % 13,
      accepted: i % 4 === 1 ? 1 : 0,
      accepted_until: i % 8 === 1 ? '2000-01-01T00:00:00.000Z' : i % 8 === 5 ? '2999-01-01T00:00:00.000Z' : null,
      deleted_at: i % 9 === 4 ? NOW : null,
    }))
    await env.DB.prepare(
      `INSERT INTO findings (finding, shape, environment_id, from_objectid, to_objectid, rel_kind, impact_count, exposure_count,
         principal_count, impact_percentage, exposure_percentage, severity, accepted, accepted_until, created_at, updated_at,
         deleted_at, created_run_id, updated_run_id)
       SELECT 'T0GenericAll', 'relationship', ?2, value ->> 'from', ?3, 'GenericAll', value ->> 'impact', 1, ${N}, 0.5, 0.1, 'high',
              value ->> 'accepted', value ->> 'accepted_until', value ->> 'created_at', value ->> 'created_at', value ->> 'deleted_at', 1, 1
       FROM json_each(?1)`,
    )
      .bind(JSON.stringify(findings), P, DA)
      .run()
    const { results } = await env.DB.prepare(
      `SELECT id, created_at, from_objectid, impact_count, accepted, accepted_until, deleted_at FROM findings WHERE environment_id = ?1 ORDER BY id`,
    )
      .bind(P)
      .all<{ id: number; created_at: string; from_objectid: string; impact_count: number; accepted: number; accepted_until: string | null; deleted_at: string | null }>()
    for (const r of results)
      rows.push({
        id: r.id,
        created_at: r.created_at,
        from: r.from_objectid,
        impact: r.impact_count,
        accepted: r.accepted === 1 && (r.accepted_until === null || r.accepted_until > new Date().toISOString()),
        closed: r.deleted_at !== null,
      })
    expect(rows).toHaveLength(N)
  })

  const open = () => rows.filter((r) => !r.closed)
  const cmp = (a: string | number, b: string | number) => (a < b ? -1 : a > b ? 1 : 0)
  const byDefault = (a: Row, b: Row) => cmp(a.created_at, b.created_at) || a.id - b.id

  async function ids(query: string): Promise<{ count: number; ids: number[] }> {
    const r = (await admin.call('GET', `/api/v2/domains/${P}/details?finding=T0GenericAll&${query}`)) as { count: number; data: { id: number }[] }
    return { count: r.count, ids: r.data.map((d) => d.id) }
  }

  async function pagesOf(query: string, size: number, total: number): Promise<number[]> {
    const out: number[] = []
    for (let skip = 0; skip <= total; skip += size) out.push(...(await ids(`${query}&skip=${skip}&limit=${size}`)).ids)
    return out
  }

  it('is one D1 round trip of two statements while the catalogue copy is current', async () => {
    await loadKindCatalog(env.DB)
    const { res, calls } = await viaRecordingDb(admin, `/api/v2/domains/${P}/details?finding=T0GenericAll&skip=40&limit=10`)
    expect(res.status).toBe(200)
    expect(calls.map((k) => [k.via, k.sql.length])).toEqual([['batch', 2]])
    const body = (await res.json()) as { count: number; skip: number; limit: number; data: { id: number; ToPrincipal: string; ComboGraphRelationID: unknown }[] }
    expect(body).toMatchObject({ count: open().length, skip: 40, limit: 10 })
    expect(body.data.map((d) => d.id)).toEqual(open().sort(byDefault).slice(40, 50).map((r) => r.id))
    // the page's rows are joined to their nodes and edge
    expect(body.data[0]).toMatchObject({ ToPrincipal: DA, ToPrincipalName: 'DOMAIN ADMINS@PAGE7.LOCAL', IsInherited: true, ComboGraphRelationID: { valid: true } })
  })

  it('default order (created_at, then id) at every skip: each page is its slice of the whole list', async () => {
    const expected = open().sort(byDefault).map((r) => r.id)
    expect(await ids('limit=0')).toEqual({ count: expected.length, ids: expected })
    expect(await pagesOf('', 7, expected.length)).toEqual(expected)
  })

  it('sort_by and the Accepted filter page exactly as before', async () => {
    const byImpactDesc = open().sort((a, b) => b.impact - a.impact || a.id - b.id).map((r) => r.id)
    expect(await pagesOf('sort_by=-impact_count', 9, byImpactDesc.length)).toEqual(byImpactDesc)
    const byFromThenCreatedDesc = open()
      .sort((a, b) => cmp(a.from, b.from) || -cmp(a.created_at, b.created_at) || a.id - b.id)
      .map((r) => r.id)
    expect(await pagesOf('sort_by=from_principal,-created_at', 11, byFromThenCreatedDesc.length)).toEqual(byFromThenCreatedDesc)
    const idDesc = open().map((r) => r.id).sort((a, b) => b - a)
    expect(await pagesOf('sort_by=-id', 13, idDesc.length)).toEqual(idDesc)

    const notAccepted = open().filter((r) => !r.accepted).sort(byDefault).map((r) => r.id)
    expect(notAccepted.length).toBeLessThan(open().length)
    expect(await ids('Accepted=eq:false&limit=0')).toEqual({ count: notAccepted.length, ids: notAccepted })
    expect(await pagesOf('Accepted=eq:false', 6, notAccepted.length)).toEqual(notAccepted)
    const accepted = open().filter((r) => r.accepted).sort(byDefault).map((r) => r.id)
    expect(await ids('Accepted=eq:true&limit=0')).toEqual({ count: accepted.length, ids: accepted })
    expect((await ids('Accepted=eq:true&skip=3&limit=2')).ids).toEqual(accepted.slice(3, 5))
  })

  it('an unknown environment is 404 before an unknown finding type is 400, as before', async () => {
    await expectEnvelope(await admin.raw('GET', '/api/v2/domains/S-1-5-21-404404/details?finding=NoSuchType'), 404, 'environment not found')
    await expectEnvelope(await admin.raw('GET', `/api/v2/domains/${P}/details?finding=NoSuchType`), 400, 'unknown finding type "NoSuchType"')
  })

  it('a finding type another isolate has just installed is known at once', async () => {
    await loadKindCatalog(env.DB)
    await expectEnvelope(await admin.raw('GET', `/api/v2/domains/${P}/details?finding=RD_Admins`), 400, 'unknown finding type')
    await storeUpsert(env.DB, smallDoc('ReadDetails', 'RD'), NOW, testAudit()) // this isolate's copy is now stale
    const { res, calls } = await viaRecordingDb(admin, `/api/v2/domains/${P}/details?finding=RD_Admins`)
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ count: 0, skip: 0, limit: 10, data: [] })
    // still one round trip for the page: a first page (skip 0) also records its poll in the same batch
    // (docs/findings.md, "Polls that span an analysis")
    expect(calls.map((k) => [k.via, k.sql.length])).toEqual([
      ['batch', 4],
      ['batch', 6],
    ])
  })

  it('the count and the page are chosen on the covering index findings_open_env; only the page is joined', async () => {
    const rec = recording(env.DB)
    await listDetails(rec.db, { environmentId: P, finding: 'T0GenericAll', filters: {}, sort: DEFAULT_SORT, skip: 40, limit: 10, now: NOW, access: { all: true } })
    await listDetails(rec.db, {
      environmentId: P,
      finding: 'T0GenericAll',
      filters: { accepted: { op: 'eq', value: false } },
      sort: DEFAULT_SORT,
      skip: 40,
      limit: 10,
      now: NOW,
      access: { all: true },
    })
    for (const call of rec.calls) {
      const [meta, page] = call.sql
      const p = await plan(page, [P, 'T0GenericAll', NOW, 10, 40])
      // the subquery (indented) walks the index in (created_at, id) order, reading nothing else: OFFSET skips
      // index entries; no sort before it
      const inner = p.filter((l) => l.startsWith('  '))
      expect(inner).toEqual(['  SEARCH f USING COVERING INDEX findings_open_env (environment_id=? AND finding=?)'])
      // then the wide rows by primary key and their joins, for the page's rows only
      expect(p).toContain('SEARCH f USING INTEGER PRIMARY KEY (rowid=?)')
      const m = await plan(meta, [P, 'T0GenericAll', NOW])
      expect(m).toContain('  SEARCH f USING COVERING INDEX findings_open_env (environment_id=? AND finding=?)') // the count
    }
  })

  it('a later page of a poll merges the index walk with the rows closed since the poll began (no sort of the open rows)', async () => {
    const rec = recording(env.DB)
    const poll = { subject: 'token:plan', shape: '{}', now: NOW, expiredBefore: '2000-01-01T00:00:00.000Z' }
    await listDetails(rec.db, { environmentId: P, finding: 'T0GenericAll', filters: {}, sort: DEFAULT_SORT, skip: 40, limit: 10, now: NOW, access: { all: true }, poll })
    const [meta, page] = rec.calls[0].sql
    const params = [P, 'T0GenericAll', NOW, poll.subject, poll.shape, poll.expiredBefore, 10, 40]
    const p = (await plan(page, params)).join('\n')
    // the open arm walks the covering index in order; the closed arm is a range of findings_closed_env; the
    // two ordered arms are merged
    expect(p).toContain('SEARCH f USING COVERING INDEX findings_open_env (environment_id=? AND finding=?)')
    expect(p).toMatch(/SEARCH f USING INDEX findings_closed_env \(environment_id=\? AND finding=\? AND deleted_at>\?\)/)
    expect(p).toContain('MERGE')
    expect(p).not.toMatch(/findings_open_env[^\n]*\n[^\n]*USE TEMP B-TREE FOR ORDER BY/)
    const m = (await plan(meta, params.slice(0, 6))).join('\n')
    expect(m).toContain('findings_open_env')
    expect(m).toContain('findings_closed_env')
  })
})
