import { env } from 'cloudflare:workers'
import { beforeAll, describe, expect, it } from 'vitest'
import { adminToken, client, expectEnvelope, userWithRole } from '../helpers'
import type { EdgeHoundClient } from '../../src/client'
import {
  availableFindingTypes,
  findingAsset,
  findingDetails,
  findingSparkline,
  isListFinding,
  pageAllDetails,
  setFindingAcceptance,
  type FindingJson,
} from '../../src/client/findings'
import { BUILTIN_FINDINGS } from '../../src/findings/catalogue'
import { DETAILS_MAX_ROWS } from '../../src/findings/findings.routes'
import { ZERO_TIME } from '../../src/findings/details'
import { FROM_MALFORMED, TO_BEFORE_FROM, TO_MALFORMED } from '../../src/findings/query'
import { D, ID, T } from '../fixtures/findings/known-graph'
import { insertGraph, runAnalysisDirect } from '../fixtures/findings/helpers'

const db = env.DB
/** A second domain with 25 T0GenericAll findings, for paging. */
const P = 'S-1-5-21-2000'
const PAGED = 25
let admin: EdgeHoundClient
let completedAt: string

const base = (path: string) => `/api/v2/domains/${encodeURIComponent(D)}${path}`

beforeAll(async () => {
  // content tests with many requests from one token: back off on 429 as a connector does
  admin = await adminToken({ paced: true })
  await insertGraph(db)
  const users = Array.from({ length: PAGED }, (_, i) => ({
    objectid: `${P}-${3000 + i}`,
    kinds: ['User', 'Base'],
    name: `PUSER${i}@PAGE.LOCAL`,
    environment_id: P,
    properties: { name: `PUSER${i}@PAGE.LOCAL`, enabled: true },
  }))
  await insertGraph(
    db,
    [
      { objectid: P, kinds: ['Domain'], name: 'PAGE.LOCAL', environment_id: P, properties: { name: 'PAGE.LOCAL' } },
      { objectid: `${P}-512`, kinds: ['Group'], name: 'DOMAIN ADMINS@PAGE.LOCAL', environment_id: P, properties: {} },
      ...users,
    ],
    users.map((u) => ({ start: u.objectid, end: `${P}-512`, kind: 'GenericAll' })),
  )
  completedAt = (await runAnalysisDirect(db)).completedAt
})

describe('details: paging the way the connectors do', () => {
  it('defaults to 10 rows, reports count/skip/limit, and answers [] past the end', async () => {
    const first = await findingDetails(admin, P, { finding: 'T0GenericAll' })
    expect(first).toMatchObject({ count: PAGED, skip: 0, limit: 10 })
    expect(first.data).toHaveLength(10)
    const last = await findingDetails(admin, P, { finding: 'T0GenericAll', skip: 20 })
    expect(last).toMatchObject({ count: PAGED, skip: 20, limit: 10 })
    expect(last.data).toHaveLength(5)
    for (const skip of [25, 26, 1000]) {
      const past = await findingDetails(admin, P, { finding: 'T0GenericAll', skip })
      expect(past).toEqual({ count: PAGED, skip, limit: 10, data: [] })
    }
  })

  it(`budget: a page of more than ${DETAILS_MAX_ROWS} rows (limit=0 included) is refused with 400; pages within it are answered`, async () => {
    const Q = 'S-1-5-21-2001'
    await insertGraph(db, [{ objectid: Q, kinds: ['Domain'], name: 'BUDGET.LOCAL', environment_id: Q, properties: { name: 'BUDGET.LOCAL' } }], [])
    // DETAILS_MAX_ROWS + 1 open findings, copied from one the analysis produced
    await db
      .prepare(
        `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?2)
         INSERT INTO findings (finding, shape, environment_id, from_objectid, to_objectid, rel_kind, from_kind, from_name, to_kind, to_name,
           impact_count, exposure_count, principal_count, impact_percentage, exposure_percentage, severity, created_at, updated_at, created_run_id, updated_run_id)
         SELECT f.finding, f.shape, ?1, ?1 || '-' || n.i, f.to_objectid, f.rel_kind, f.from_kind, f.from_name, f.to_kind, f.to_name,
           f.impact_count, f.exposure_count, f.principal_count, f.impact_percentage, f.exposure_percentage, f.severity, f.created_at, f.updated_at, f.created_run_id, f.updated_run_id
         FROM n, (SELECT * FROM findings WHERE environment_id = ?3 AND finding = 'T0GenericAll' AND deleted_at IS NULL LIMIT 1) f`,
      )
      .bind(Q, DETAILS_MAX_ROWS + 1, P)
      .run()
    const path = (q: string) => `/api/v2/domains/${Q}/details?finding=T0GenericAll&${q}`
    for (const q of ['limit=0', `limit=${DETAILS_MAX_ROWS + 1}`, 'limit=999999999']) {
      const body = await expectEnvelope(await admin.raw('GET', path(q)), 400)
      expect(body.errors).toEqual([
        {
          context: 'query.limit',
          message: `the page (${DETAILS_MAX_ROWS + 1} findings from skip 0) exceeds the findings per page budget of ${DETAILS_MAX_ROWS}: page through them with skip and a limit of at most ${DETAILS_MAX_ROWS}`,
        },
      ])
    }
    // within the budget: the largest page, and limit=0 once the rest fits
    expect((await findingDetails(admin, Q, { finding: 'T0GenericAll', limit: DETAILS_MAX_ROWS })).data).toHaveLength(DETAILS_MAX_ROWS)
    const rest = await findingDetails(admin, Q, { finding: 'T0GenericAll', skip: 1, limit: 0 })
    expect([rest.count, rest.data.length]).toEqual([DETAILS_MAX_ROWS + 1, DETAILS_MAX_ROWS])
  })

  it('limit=0 returns every row; the default order is created_at then id, so pages are stable', async () => {
    const all = await findingDetails(admin, P, { finding: 'T0GenericAll', skip: 0, limit: 0, Accepted: 'eq:False' })
    expect(all).toMatchObject({ count: PAGED, limit: 0 })
    expect(all.data).toHaveLength(PAGED)
    const ids = all.data.map((f) => f.id)
    expect(ids).toEqual([...ids].sort((a, b) => a - b))
    const paged: number[] = []
    for (let skip = 0; skip < PAGED; skip += 7) paged.push(...(await findingDetails(admin, P, { finding: 'T0GenericAll', skip, limit: 7 })).data.map((f) => f.id))
    expect(paged).toEqual(ids)
  })

  it('skip-only paging until an empty page ends with exactly one extra request', async () => {
    const { items, requests } = await pageAllDetails(admin, P, 'T0GenericAll')
    expect(items).toHaveLength(PAGED)
    expect(requests).toBe(Math.ceil(PAGED / 10) + 1)
  })

  it('sort_by with a leading minus sorts descending; id breaks ties', async () => {
    const desc = await findingDetails(admin, P, { finding: 'T0GenericAll', limit: 0, sort_by: '-id' })
    const ids = desc.data.map((f) => f.id)
    expect(ids).toEqual([...ids].sort((a, b) => b - a))
    const byPrincipal = await findingDetails(admin, P, { finding: 'T0GenericAll', limit: 0, sort_by: 'FromPrincipal' })
    const from = byPrincipal.data.map((f) => (isListFinding(f) ? '' : f.FromPrincipal))
    expect(from).toEqual([...from].sort())
  })

  it('filters on created_at: a second poll asking for newer findings gets none', async () => {
    expect((await findingDetails(admin, P, { finding: 'T0GenericAll', created_at: `gt:${completedAt}` })).count).toBe(0)
    expect((await findingDetails(admin, P, { finding: 'T0GenericAll', created_at: `gte:${completedAt}` })).count).toBe(PAGED)
    const one = (await findingDetails(admin, P, { finding: 'T0GenericAll', limit: 1 })).data[0] as FindingJson & { FromPrincipal: string }
    expect((await findingDetails(admin, P, { finding: 'T0GenericAll', FromPrincipal: one.FromPrincipal })).data.map((f) => f.id)).toEqual([one.id])
  })
})

describe('acceptance', () => {
  let target: FindingJson

  beforeAll(async () => {
    target = (await findingDetails(admin, P, { finding: 'T0GenericAll', limit: 1 })).data[0]
  })

  it('accepting without an end: Accepted true, AcceptedUntil the zero time, updated_at unchanged', async () => {
    const r = await setFindingAcceptance(admin, target.id, { accepted: true })
    expect(r.data).toMatchObject({ id: target.id, Accepted: true, AcceptedUntil: ZERO_TIME, updated_at: target.updated_at, created_at: target.created_at })
    const row = await db.prepare('SELECT accepted, accepted_until, updated_at FROM findings WHERE id = ?1').bind(target.id).first()
    expect(row).toEqual({ accepted: 1, accepted_until: null, updated_at: target.updated_at })
    const open = await findingDetails(admin, P, { finding: 'T0GenericAll', limit: 0, Accepted: 'eq:False' })
    expect(open.count).toBe(PAGED - 1)
    expect(open.data.some((f) => f.id === target.id)).toBe(false)
    const accepted = await findingDetails(admin, P, { finding: 'T0GenericAll', limit: 0, Accepted: 'eq:True' })
    expect(accepted.data.map((f) => f.id)).toEqual([target.id])
  })

  it('accepting until a time: AcceptedUntil is that time (normalised); it lapses once the time has passed', async () => {
    const until = new Date(Math.floor(Date.now() / 1000) * 1000 + 86_400_000)
    // sent with seconds precision and a numeric offset, as Python clients format times
    const sent = until.toISOString().replace('.000Z', '+00:00')
    const r = await setFindingAcceptance(admin, target.id, { accepted: true, accepted_until: sent })
    expect(r.data).toMatchObject({ Accepted: true, AcceptedUntil: until.toISOString() })
    // let it lapse (the store compares accepted_until with the request time)
    await db.prepare(`UPDATE findings SET accepted_until = '2000-01-01T00:00:00.000Z' WHERE id = ?1`).bind(target.id).run()
    const page = await findingDetails(admin, P, { finding: 'T0GenericAll', limit: 0, Accepted: 'eq:False' })
    expect(page.count).toBe(PAGED)
    expect(page.data.find((f) => f.id === target.id)).toMatchObject({ Accepted: false, AcceptedUntil: ZERO_TIME })
  })

  it('un-accepting clears it', async () => {
    await setFindingAcceptance(admin, target.id, { accepted: true })
    const r = await setFindingAcceptance(admin, target.id, { accepted: false })
    expect(r.data).toMatchObject({ Accepted: false, AcceptedUntil: ZERO_TIME })
    expect(await db.prepare('SELECT accepted, accepted_until FROM findings WHERE id = ?1').bind(target.id).first()).toEqual({ accepted: 0, accepted_until: null })
    // audit: each change is an intent and a success row (AcceptRisk / UnacceptRisk) naming the finding
    const audit = await db
      .prepare(`SELECT action, status FROM audit_logs WHERE action IN ('AcceptRisk', 'UnacceptRisk') AND json_extract(fields, '$.id') = ?1 ORDER BY id DESC LIMIT 4`)
      .bind(target.id)
      .all()
    expect(audit.results.reverse()).toEqual([
      { action: 'AcceptRisk', status: 'intent' },
      { action: 'AcceptRisk', status: 'success' },
      { action: 'UnacceptRisk', status: 'intent' },
      { action: 'UnacceptRisk', status: 'success' },
    ])
  })

  it('rejects bad input with 400 envelopes and unknown findings with 404', async () => {
    const put = (id: string | number, body: unknown) => admin.raw('PUT', `/api/v2/attack-paths/${id}/acceptance`, body as Record<string, unknown>)
    await expectEnvelope(await put(target.id, {}), 400, 'accepted must be a boolean')
    await expectEnvelope(await put(target.id, { accepted: 'yes' }), 400, 'accepted must be a boolean')
    await expectEnvelope(await put(target.id, { accepted: true, accepted_until: 'tomorrow' }), 400, 'accepted_until must be an RFC 3339 date-time')
    await expectEnvelope(await put(target.id, { accepted: true, accepted_until: '2001-01-01T00:00:00Z' }), 400, 'accepted_until must be in the future')
    await expectEnvelope(await put(target.id, { accepted: false, accepted_until: '2999-01-01T00:00:00Z' }), 400, 'only allowed when accepted is true')
    await expectEnvelope(await put('abc', { accepted: true }), 400, 'id is malformed')
    await expectEnvelope(await put(999999, { accepted: true }), 404, 'finding not found')
    await expectEnvelope(await admin.raw('PUT', `/api/v2/attack-paths/${target.id}/acceptance`, '{not json', { contentType: 'application/json' }), 400, 'not valid JSON')
    // nothing changed
    expect(await db.prepare('SELECT accepted FROM findings WHERE id = ?1').bind(target.id).first()).toEqual({ accepted: 0 })
  })

  it('a closed finding cannot be accepted (404)', async () => {
    const other = (await findingDetails(admin, P, { finding: 'T0GenericAll', limit: 1, skip: 1 })).data[0]
    await db.prepare(`UPDATE findings SET deleted_at = ?2 WHERE id = ?1`).bind(other.id, completedAt).run()
    await expectEnvelope(await admin.raw('PUT', `/api/v2/attack-paths/${other.id}/acceptance`, { accepted: true }), 404, 'finding not found')
    await db.prepare(`UPDATE findings SET deleted_at = NULL WHERE id = ?1`).bind(other.id).run()
  })
})

describe('Markdown texts', () => {
  it('serves the four texts of every built-in type, with and without .md, as text/markdown', async () => {
    for (const def of BUILTIN_FINDINGS) {
      for (const asset of ['title', 'short_description', 'short_remediation', 'long_remediation'] as const) {
        for (const suffix of ['', '.md']) {
          const res = await admin.raw('GET', `/api/v2/assets/findings/${def.type}/${asset}${suffix}`)
          expect(res.status).toBe(200)
          expect(res.headers.get('content-type')).toBe('text/markdown; charset=utf-8')
          expect(await res.text()).toBe(def[asset])
        }
      }
    }
    expect(await findingAsset(admin, 'T0GenericAll', 'title', { md: true })).toBe('Non Tier Zero Principals with Generic All Privileges on Tier Zero Objects')
  })

  it('unknown type or asset is a 404 envelope', async () => {
    await expectEnvelope(await admin.raw('GET', '/api/v2/assets/findings/T0Nope/title.md'), 404, 'unknown finding type "T0Nope"')
    await expectEnvelope(await admin.raw('GET', '/api/v2/assets/findings/T0GenericAll/type.md'), 404, 'unknown finding asset "type.md"')
    await expectEnvelope(await admin.raw('GET', '/api/v2/assets/findings/T0GenericAll/long_description'), 404, 'unknown finding asset')
  })
})

describe('sparkline windows', () => {
  const F = 'T0Owns'
  beforeAll(async () => {
    // history rows at known times (the analysis writes one per run at its commit time)
    const rows = ['2026-01-01T00:00:00.000Z', '2026-01-10T00:00:00.000Z', '2026-01-20T00:00:00.000Z']
    await db.batch(
      rows.map((t, i) =>
        db
          .prepare(
            `INSERT INTO finding_sparklines (run_id, environment_id, finding, finding_count, impacted_asset_count, impact_count,
               exposure_count, principal_count, composite_risk, created_at, updated_at) VALUES (0, ?1, ?2, ?3, ?3, ?3, ?3, 20, ?4, ?5, ?5)`,
          )
          .bind(D, F, i + 1, (100 * (i + 1)) / 20, t),
      ),
    )
  })

  it('from is inclusive and to exclusive', async () => {
    const r = await findingSparkline(admin, D, { finding: F, from: '2026-01-10T00:00:00Z', to: '2026-01-20T00:00:00Z' })
    expect(r.start).toBe('2026-01-10T00:00:00.000Z')
    expect(r.end).toBe('2026-01-20T00:00:00.000Z')
    expect(r.data.map((s) => [s.created_at, s.FindingCount, s.CompositeRisk])).toEqual([['2026-01-10T00:00:00.000Z', 2, 10]])
    const all = await findingSparkline(admin, D, { finding: F, from: '2026-01-01T00:00:00Z', to: '2026-01-20T00:00:00.001Z' })
    expect(all.data.map((s) => s.FindingCount)).toEqual([1, 2, 3])
    for (const s of all.data) {
      expect(typeof s.CompositeRisk).toBe('number')
      expect(s).toMatchObject({ DomainSID: D, Finding: F, deleted_at: { time: ZERO_TIME, valid: false } })
    }
  })

  it('defaults: the 30 days before now (so old history is outside, the current run inside)', async () => {
    const r = await findingSparkline(admin, D, { finding: F })
    expect(r.data.map((s) => s.created_at)).toEqual([completedAt])
    expect(Date.parse(r.end) - Date.parse(r.start)).toBe(30 * 86_400_000)
  })

  it('accepts offsets (including a raw + that form decoding turns into a space)', async () => {
    const r = await admin.call<{ start: string; data: unknown[] }>('GET', `${base('/sparkline')}?finding=${F}&from=2026-01-10T02:00:00+02:00&to=2026-01-11T00:00:00Z`)
    expect(r.start).toBe('2026-01-10T00:00:00.000Z')
    expect(r.data).toHaveLength(1)
  })

  it('malformed dates and to before from are 400 with messages that say so', async () => {
    await expectEnvelope(await admin.raw('GET', `${base('/sparkline')}?finding=${F}&from=yesterday`), 400, FROM_MALFORMED)
    await expectEnvelope(await admin.raw('GET', `${base('/sparkline')}?finding=${F}&to=2026-02-30T00:00:00Z`), 400, TO_MALFORMED)
    await expectEnvelope(await admin.raw('GET', `${base('/sparkline')}?finding=${F}&from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z`), 400, TO_BEFORE_FROM)
    await expectEnvelope(await admin.raw('GET', `${base('/sparkline')}`), 400, 'missing required query parameter: finding')
  })
})

describe('400 and 404 envelopes of the read endpoints', () => {
  it('details: missing or unknown finding, bad skip/limit/sort/filter', async () => {
    await expectEnvelope(await admin.raw('GET', base('/details')), 400, 'missing required query parameter: finding')
    await expectEnvelope(await admin.raw('GET', `${base('/details')}?finding=`), 400, 'missing required query parameter: finding')
    await expectEnvelope(await admin.raw('GET', `${base('/details')}?finding=T0Nope`), 400, 'unknown finding type "T0Nope"')
    await expectEnvelope(await admin.raw('GET', `${base('/details')}?finding=T0GenericAll&skip=-1`), 400, 'skip must be a non-negative integer')
    await expectEnvelope(await admin.raw('GET', `${base('/details')}?finding=T0GenericAll&limit=ten`), 400, 'limit must be a non-negative integer')
    await expectEnvelope(await admin.raw('GET', `${base('/details')}?finding=T0GenericAll&sort_by=secret`), 400, 'sort_by column "secret" is not sortable')
    await expectEnvelope(await admin.raw('GET', `${base('/details')}?finding=T0GenericAll&Accepted=eq:perhaps`), 400, 'Accepted must be true or false')
    await expectEnvelope(await admin.raw('GET', `${base('/details')}?finding=T0GenericAll&created_at=lt:soon`), 400, 'created_at must be an RFC 3339 date-time')
  })

  it('a known type without findings in the environment is an empty page, not an error', async () => {
    expect(await findingDetails(admin, T, { finding: 'Kerberoasting' })).toEqual({ count: 0, skip: 0, limit: 10, data: [] })
  })

  it('unknown environments are 404 on every endpoint', async () => {
    const e = encodeURIComponent('S-1-5-21-404')
    await expectEnvelope(await admin.raw('GET', `/api/v2/domains/${e}/available-types`), 404, 'environment not found')
    await expectEnvelope(await admin.raw('GET', `/api/v2/domains/${e}/details?finding=T0GenericAll`), 404, 'environment not found')
    await expectEnvelope(await admin.raw('GET', `/api/v2/domains/${e}/sparkline?finding=T0GenericAll`), 404, 'environment not found')
  })

  it('analysis runs: bad limit is 400, unknown run 404', async () => {
    await expectEnvelope(await admin.raw('GET', '/api/v2/analysis?limit=0'), 400, 'limit must be an integer from 1 to 100')
    await expectEnvelope(await admin.raw('GET', '/api/v2/analysis/77777'), 404, 'analysis run not found')
    await expectEnvelope(await admin.raw('GET', '/api/v2/analysis/x'), 400, 'id is malformed')
  })
})

describe('who may do what', () => {
  it('an environment the caller may not see is a 404 everywhere, exactly like a missing one', async () => {
    const { client: ro } = await userWithRole('Read-Only', { all_environments: false, environment_access: [T] })
    expect((await availableFindingTypes(ro, T)).data.length).toBeGreaterThan(0)
    const d = encodeURIComponent(D)
    await expectEnvelope(await ro.raw('GET', `/api/v2/domains/${d}/available-types`), 404, 'environment not found')
    await expectEnvelope(await ro.raw('GET', `/api/v2/domains/${d}/details?finding=T0GenericAll`), 404, 'environment not found')
    await expectEnvelope(await ro.raw('GET', `/api/v2/domains/${d}/sparkline?finding=T0GenericAll`), 404, 'environment not found')
    // texts are not environment data
    expect(await findingAsset(ro, 'T0GenericAll', 'title')).toContain('Generic All')

    const { client: restrictedAdmin } = await userWithRole('Administrator', { all_environments: false, environment_access: [T] })
    const inD = (await findingDetails(admin, D, { finding: 'T0Owns' })).data[0]
    await expectEnvelope(await restrictedAdmin.raw('PUT', `/api/v2/attack-paths/${inD.id}/acceptance`, { accepted: true }), 404, 'finding not found')
    const inT = (await findingDetails(admin, T, { finding: 'T0AZOwns' })).data[0]
    expect((await setFindingAcceptance(restrictedAdmin, inT.id, { accepted: true })).data.Accepted).toBe(true)
    await setFindingAcceptance(restrictedAdmin, inT.id, { accepted: false })
  })

  it('permissions: reads need graph/Read, analysis needs analysis/Run, acceptance risks/ManageRisks', async () => {
    const { client: ro } = await userWithRole('Read-Only')
    const { client: up } = await userWithRole('Upload-Only')
    const d = encodeURIComponent(D)
    await expectEnvelope(await ro.raw('POST', '/api/v2/analysis'), 403)
    await expectEnvelope(await ro.raw('GET', '/api/v2/analysis'), 403)
    await expectEnvelope(await ro.raw('PUT', `/api/v2/attack-paths/1/acceptance`, { accepted: true }), 403)
    await expectEnvelope(await up.raw('GET', `/api/v2/domains/${d}/details?finding=T0GenericAll`), 403)
    await expectEnvelope(await up.raw('GET', `/api/v2/assets/findings/T0GenericAll/title`), 403)
    await expectEnvelope(await client().raw('GET', `/api/v2/domains/${d}/available-types`), 401)
    // Read-Only can read
    expect((await findingDetails(ro, D, { finding: 'T0Owns' })).data.map((f) => (isListFinding(f) ? '' : f.FromPrincipal))).toEqual([ID.SVC])
  })
})
