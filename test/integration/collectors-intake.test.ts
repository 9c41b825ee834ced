/**
 * Collector files whose metadata is inconsistent, uploaded through real file-upload jobs (issue 24 item 2):
 * BloodHound ingests them (its ingest model has no `meta.count`; its own v5 `domains.json` declares 5 for one
 * domain), so EdgeHound ingests them too and records the disagreement as a warning in the job. Also: a job
 * whose every file was refused ends failed without requesting an analysis run.
 * Fixtures: test/fixtures/sharphound/miscounted.ts, test/fixtures/azurehound/miscounted.ts.
 */
import { beforeAll, describe, expect, it } from 'vitest'
import { strToU8, zipSync } from 'fflate'
import { adminToken, env, expectEnvelope } from '../helpers'
import { endUploadJob, listUploadJobs, startUploadJob, uploadFile, type IngestJobJson } from '../../src/client/graph'
import type { EdgeHoundClient } from '../../src/client'
import { CONTOSO, DOMAINS_V5, EAST, GPOS_COUNT_NOT_A_NUMBER, GROUPS_COUNT_LARGER, NW, NW_SID as S, USERS_COUNT_SMALLER } from '../fixtures/sharphound/miscounted'
import { AZURE_COUNT_LARGER, MT, MT_USERS } from '../fixtures/azurehound/miscounted'
import { settleRuns } from '../fixtures/findings/helpers'

const db = () => (env as unknown as { DB: D1Database }).DB

/** The relationship start -kind-> end: its properties and whether post-processing derived it, or null. */
async function rel(start: string, kind: string, end: string): Promise<{ props: Record<string, unknown>; derived: number } | null> {
  const r = await db()
    .prepare(
      `SELECT e.properties, e.derived FROM edges e JOIN nodes s ON s.id = e.start_id JOIN nodes t ON t.id = e.end_id
       WHERE s.objectid = ?1 AND e.kind = ?2 AND t.objectid = ?3`,
    )
    .bind(start, kind, end)
    .first<{ properties: string; derived: number }>()
  return r ? { props: JSON.parse(r.properties) as Record<string, unknown>, derived: r.derived } : null
}

async function nodeKind(objectid: string): Promise<string | null> {
  return (await db().prepare('SELECT kind FROM nodes WHERE objectid = ?').bind(objectid).first<string>('kind')) ?? null
}

async function job(c: EdgeHoundClient, id: number): Promise<IngestJobJson> {
  const page = await listUploadJobs(c, { limit: 1000 })
  return page.data.find((j) => j.id === id)!
}

/** Analysis runs whose reasons name this job's end. */
async function runsRequestedBy(jobId: number): Promise<{ status: string }[]> {
  const r = await db()
    .prepare(`SELECT status FROM analysis_runs WHERE EXISTS (SELECT 1 FROM json_each(reasons) WHERE value = ?1)`)
    .bind(`ingest job ${jobId} ended`)
    .all<{ status: string }>()
  return r.results
}

function postRaw(c: EdgeHoundClient, jobId: number, body: string | Uint8Array, name: string, type = 'application/json') {
  return c.raw('POST', `/api/v2/file-upload/${jobId}`, body, { contentType: type, headers: { 'X-File-Upload-Name': name } })
}

let admin: EdgeHoundClient

beforeAll(async () => {
  admin = await adminToken()
})

describe("BloodHound's v5 domains.json shape: meta.count 5 for one domain, no meta.version", () => {
  let jobId: number
  let ended: IngestJobJson
  beforeAll(async () => {
    jobId = (await startUploadJob(admin)).data.id
    const res = await postRaw(admin, jobId, DOMAINS_V5, 'northwind_domains.json')
    expect(res.status).toBe(202)
    const body = (await res.json()) as { data: { nodes: number; errors: unknown[]; warnings: { file: string; context: string; message: string }[] } }
    expect(body.data).toMatchObject({ nodes: 3, errors: [] }) // the domain and the two domains it trusts
    expect(body.data.warnings).toEqual([
      { file: 'northwind_domains.json', context: 'meta.count', message: expect.stringContaining('meta.count is 5 but data holds 1 element(s)') },
    ])
    ended = (await endUploadJob(admin, jobId)).data
    await settleRuns(db())
  })

  it('the file is accepted: the job completes with the warning in its messages, no error', async () => {
    expect(ended).toMatchObject({ status: 2, total_files: 1, failed_files: 0, error_count: 0, errors: [] })
    expect(ended.warnings).toEqual([{ file: 'northwind_domains.json', context: 'meta.count', message: expect.stringContaining('meta.count is 5 but data holds 1') }])
    // the list shows the same record
    expect((await job(admin, jobId)).warnings).toEqual(ended.warnings)
  })

  it('the domain and its relationships exist: GPLink, Owns (raw), GetChanges, GetChangesAll, trusts, Contains', async () => {
    expect(await nodeKind(NW)).toBe('Domain')
    expect(await rel(S.gpoDefault, 'GPLink', NW)).toMatchObject({ props: { enforced: true } })
    expect(await rel(S.gpoHardening, 'GPLink', NW)).toMatchObject({ props: { enforced: false } })
    expect(await rel(S.da, 'OwnsRaw', NW)).toMatchObject({ derived: 0 })
    for (const holder of [S.edc, S.builtinAdmins, S.syncUser]) expect(await rel(holder, 'GetChanges', NW), holder).toMatchObject({ props: { isacl: true } })
    for (const holder of [S.dcs, S.builtinAdmins, S.syncUser]) expect(await rel(holder, 'GetChangesAll', NW), holder).toMatchObject({ props: { isacl: true } })
    expect(await rel(S.ea, 'GenericAll', NW)).not.toBeNull()
    expect(await rel(NW, 'SameForestTrust', EAST)).toMatchObject({ props: { trusttype: 'ParentChild' } })
    expect(await rel(EAST, 'SameForestTrust', NW)).toMatchObject({ props: { trusttype: 'ParentChild' } })
    expect(await rel(CONTOSO, 'CrossForestTrust', NW)).toMatchObject({ props: { trusttype: 'External' } })
    expect(await rel(NW, 'CrossForestTrust', CONTOSO)).toBeNull() // inbound only
    for (const child of [S.ou, S.users, S.computers]) expect(await rel(NW, 'Contains', child), child).not.toBeNull()
    expect(await nodeKind(S.ou)).toBe('OU')
  })

  it('the analysis the job requested derived DCSync (both rights) and Owns', async () => {
    expect(await runsRequestedBy(jobId)).toEqual([{ status: 'complete' }])
    expect(await rel(S.syncUser, 'DCSync', NW)).toMatchObject({ derived: 1 })
    expect(await rel(S.builtinAdmins, 'DCSync', NW)).toMatchObject({ derived: 1 })
    expect(await rel(S.edc, 'DCSync', NW)).toBeNull() // GetChanges only
    expect(await rel(S.dcs, 'DCSync', NW)).toBeNull() // GetChangesAll only
    expect(await rel(S.da, 'Owns', NW)).toMatchObject({ derived: 1 })
  })
})

describe('meta.count smaller, larger, not a number; data before meta; a byte order mark', () => {
  it('every element is ingested; each file of the zip gets its warning, named by its member', async () => {
    const jobId = (await startUploadJob(admin)).data.id
    const z = zipSync({
      'northwind_users.json': strToU8(USERS_COUNT_SMALLER),
      'northwind_groups.json': strToU8(GROUPS_COUNT_LARGER),
      'northwind_gpos.json': strToU8(GPOS_COUNT_NOT_A_NUMBER),
    })
    const res = (await uploadFile(admin, jobId, z, { contentType: 'application/zip', fileName: 'northwind.zip' })).data
    expect(res).toMatchObject({ files: 3, nodes: 6, errors: [] })
    const want = [
      { file: 'northwind.zip', context: 'northwind_users.json: meta.count', message: expect.stringContaining('meta.count is 1 but data holds 3 element(s)') },
      { file: 'northwind.zip', context: 'northwind_groups.json: meta.count', message: expect.stringContaining('meta.count is 4 but data holds 1 element(s)') },
      { file: 'northwind.zip', context: 'northwind_gpos.json: meta.count', message: expect.stringContaining('meta.count "2" is not a count') },
    ]
    expect(res.warnings).toEqual(expect.arrayContaining(want))
    expect(res.warnings).toHaveLength(3)
    for (const id of [S.syncUser, S.ann, S.ben]) expect(await nodeKind(id), id).toBe('User')
    expect(await rel(S.ann, 'MemberOf', S.da)).not.toBeNull()
    expect(await nodeKind(S.gpoDefault)).toBe('GPO')
    const done = (await endUploadJob(admin, jobId)).data
    expect(done).toMatchObject({ status: 2, error_count: 0 })
    expect(done.warnings).toEqual(expect.arrayContaining(want))
    await settleRuns(db())
  })

  it('a count that agrees, or 0 ("not counted"), gives no warning', async () => {
    const jobId = (await startUploadJob(admin)).data.id
    const users = JSON.parse(USERS_COUNT_SMALLER.slice(1)) as { data: unknown[]; meta: Record<string, unknown> }
    for (const count of [3, 0]) {
      const r = (await uploadFile(admin, jobId, JSON.stringify({ ...users, meta: { ...users.meta, count } }))).data
      expect(r.warnings, `count ${count}`).toEqual([])
    }
    expect((await endUploadJob(admin, jobId)).data.warnings).toEqual([])
    await settleRuns(db())
  })

  it('AzureHound: count 9 for three items, all ingested, with the warning', async () => {
    const jobId = (await startUploadJob(admin)).data.id
    const res = await postRaw(admin, jobId, AZURE_COUNT_LARGER, 'miscounted_azure.json')
    expect(res.status).toBe(202)
    const body = (await res.json()) as { data: { nodes: number; warnings: unknown[] } }
    expect(body.data.nodes).toBe(3)
    expect(body.data.warnings).toEqual([{ file: 'miscounted_azure.json', context: 'meta.count', message: expect.stringContaining('meta.count is 9 but data holds 3') }])
    expect(await nodeKind(MT.toUpperCase())).toBe('AZTenant')
    for (const id of MT_USERS) expect(await nodeKind(id.toUpperCase())).toBe('AZUser')
    await endUploadJob(admin, jobId)
    await settleRuns(db())
  })
})

describe('a job whose every file was refused', () => {
  it('ends failed (5) and requests no analysis run; a job with one written file still requests one', async () => {
    await settleRuns(db())
    const failed = (await startUploadJob(admin)).data.id
    await expectEnvelope(await postRaw(admin, failed, '{"meta": {"type": "printers"}, "data": []}', 'printers.json'), 400, /no valid meta tag found/)
    await expectEnvelope(await postRaw(admin, failed, '{"nodes": []}', 'other.json'), 400)
    const ended = (await endUploadJob(admin, failed)).data
    expect(ended).toMatchObject({ status: 5, total_files: 2, failed_files: 2 })
    expect(await runsRequestedBy(failed)).toEqual([])
    const pending = await db().prepare(`SELECT count(*) AS n FROM analysis_runs WHERE status IN ('pending', 'running')`).first<number>('n')
    expect(pending).toBe(0)

    // the contrast: one refused file and one written file → partially complete, analysis requested
    const partial = (await startUploadJob(admin)).data.id
    await expectEnvelope(await postRaw(admin, partial, '{"meta": {"type": "printers"}, "data": []}', 'printers.json'), 400)
    expect((await postRaw(admin, partial, GROUPS_COUNT_LARGER, 'groups.json')).status).toBe(202)
    expect((await endUploadJob(admin, partial)).data).toMatchObject({ status: 8 })
    expect((await runsRequestedBy(partial)).length).toBe(1)
    await settleRuns(db())
  })
})

describe('a JSON file that is neither collector output nor OpenGraph', () => {
  it("400 naming both shapes: SharpHound / AzureHound's {meta, data} and OpenGraph's {graph: {nodes, edges}}", async () => {
    const jobId = (await startUploadJob(admin)).data.id
    const env_ = await expectEnvelope(await postRaw(admin, jobId, '{"rows": [{"name": "alice"}]}', 'export.json'), 400)
    const graph = env_.errors.find((e: { context: string }) => e.context === 'graph')!
    expect(graph.message).toContain('SharpHound / AzureHound output ({"meta": {"type"')
    expect(graph.message).toContain('"data": [...]')
    expect(graph.message).toContain('OpenGraph ({"graph": {"nodes": [...], "edges": [...]}})')
    await endUploadJob(admin, jobId)
  })
})

describe('a collector file saved as UTF-16 (Windows PowerShell 5 `Out-File`)', () => {
  /** UTF-16LE with its byte order mark */
  const utf16le = (text: string) => {
    const b = new Uint8Array(2 + text.length * 2)
    b[0] = 0xff
    b[1] = 0xfe
    for (let i = 0; i < text.length; i++) new DataView(b.buffer).setUint16(2 + i * 2, text.charCodeAt(i), true)
    return b
  }

  it('a JSON upload is re-encoded and ingested, as BloodHound does; inside a zip it is not JSON (as in BloodHound)', async () => {
    const jobId = (await startUploadJob(admin)).data.id
    const text = GROUPS_COUNT_LARGER.replace('DOMAIN ADMINS@', 'DOMÄIN ADMINS@')
    const res = await postRaw(admin, jobId, utf16le(text), 'groups-utf16.json')
    expect(res.status).toBe(202)
    expect((await res.json()) as unknown).toMatchObject({ data: { nodes: 1, errors: [] } })
    expect(await db().prepare('SELECT name FROM nodes WHERE objectid = ?').bind(S.da).first<string>('name')).toBe('DOMÄIN ADMINS@NORTHWIND.LOCAL')
    const z = zipSync({ 'groups.json': utf16le(text) })
    await expectEnvelope(await postRaw(admin, jobId, z, 'groups.zip', 'application/zip'), 400, 'file is not valid JSON')
    await endUploadJob(admin, jobId)
    await settleRuns(db())
  })
})
