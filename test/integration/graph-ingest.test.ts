import { describe, expect, it, beforeAll } from 'vitest'
import { zipSync, strToU8 } from 'fflate'
import { adminSession, adminToken, userWithRole, expectEnvelope, env } from '../helpers'
import {
  acceptedUploadTypes,
  endUploadJob,
  ingest,
  listUploadJobs,
  startUploadJob,
  uploadFile,
  type OpenGraphPayload,
} from '../../src/client/graph'
import type { EdgeHoundClient } from '../../src/client'
import { EdgeHoundError } from '../../src/client'
import { adPayload, azurePayload, CORP, LAB, ID, TENANT } from '../fixtures/graph/corp'

const db = () => (env as unknown as { DB: D1Database }).DB

async function count(table: string, where = '1 = 1', ...binds: unknown[]): Promise<number> {
  const r = await db().prepare(`SELECT count(*) AS n FROM ${table} WHERE ${where}`).bind(...binds).first<{ n: number }>()
  return r!.n
}

async function snapshot() {
  const nodes = await db().prepare('SELECT * FROM nodes ORDER BY id').all()
  const edges = await db().prepare('SELECT * FROM edges ORDER BY id').all()
  return { nodes: nodes.results, edges: edges.results }
}

async function node(objectid: string) {
  return db().prepare('SELECT * FROM nodes WHERE objectid = ?').bind(objectid).first<{
    id: number
    kind: string
    kinds: string
    name: string | null
    environment_id: string | null
    environment_kind: string | null
    properties: string
    created_at: string
    updated_at: string
  }>()
}

async function rawUpload(c: EdgeHoundClient, jobId: number, body: string | Uint8Array, contentType = 'application/json') {
  return c.raw('POST', `/api/v2/file-upload/${jobId}`, body, { contentType })
}

let admin: EdgeHoundClient

beforeAll(async () => {
  admin = await adminToken()
})

describe('file-upload jobs: happy path', () => {
  it('lists the accepted content types', async () => {
    expect((await acceptedUploadTypes(admin)).data).toEqual([
      'application/json',
      'application/zip',
      'application/x-zip-compressed',
      'application/zip-compressed',
    ])
  })

  it('start → upload → end stores nodes, edges and environments, and completes the job', async () => {
    const started = await admin.raw('POST', '/api/v2/file-upload/start')
    expect(started.status).toBe(201)
    const job = ((await started.json()) as { data: { id: number; status: number; end_time: null } }).data
    expect(job.status).toBe(1)
    expect(job.end_time).toBeNull()

    const res = await rawUpload(admin, job.id, JSON.stringify(adPayload))
    expect(res.status).toBe(202)
    const file = ((await res.json()) as { data: Record<string, unknown> }).data
    expect(file).toMatchObject({ job_id: job.id, files: 1, nodes: 13, edges: 13, nodes_changed: 13, edges_changed: 13, unmatched_edges: 0 })

    const alice = await node(ID.alice)
    expect(alice).toMatchObject({ kind: 'User', name: 'ALICE@CORP.LOCAL', environment_id: CORP, environment_kind: null })
    expect(JSON.parse(alice!.kinds)).toEqual(['User', 'Base'])
    expect(JSON.parse(alice!.properties)).toMatchObject({ name: 'ALICE@CORP.LOCAL', domainsid: CORP, enabled: true })
    expect(alice!.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
    const domain = await node(CORP)
    expect(domain).toMatchObject({ kind: 'Domain', environment_id: CORP, environment_kind: 'Domain' })
    expect(await count('edges')).toBe(13)
    const memberOf = await db()
      .prepare("SELECT e.kind FROM edges e JOIN nodes s ON s.id = e.start_id JOIN nodes t ON t.id = e.end_id WHERE s.objectid = ? AND t.objectid = ?")
      .bind(ID.alice, ID.helpdesk)
      .first<{ kind: string }>()
    expect(memberOf?.kind).toBe('MemberOf')
    // nothing collected before the job ends
    expect(await count('environment_collections', 'environment_id = ?', CORP)).toBe(0)

    const ended = await endUploadJob(admin, job.id)
    expect(ended.data).toMatchObject({ id: job.id, status: 2, status_message: 'complete', total_files: 1, failed_files: 0, nodes_received: 13, edges_received: 13 })
    expect(ended.data.end_time).toMatch(/Z$/)
    const collected = await db().prepare('SELECT * FROM environment_collections ORDER BY environment_id').all<{ environment_id: string; job_id: number }>()
    expect(collected.results.map((r) => r.environment_id)).toEqual([CORP, LAB].sort())
    expect(collected.results.every((r) => r.job_id === job.id)).toBe(true)
  })

  it('Azure data: tenant is an environment, tenantid places nodes in it', async () => {
    const { job } = await ingest(admin, azurePayload)
    expect(job.status).toBe(2)
    expect(await node(TENANT)).toMatchObject({ environment_kind: 'AZTenant', environment_id: TENANT })
    expect(await node(ID.azVm)).toMatchObject({ kind: 'AZVM', environment_id: TENANT })
    expect(await count('environment_collections', 'environment_id = ?', TENANT)).toBe(1)
  })

  it('ingesting the same file twice changes nothing (not even updated_at)', async () => {
    const before = await snapshot()
    const { files, job } = await ingest(admin, adPayload)
    expect(files[0]).toMatchObject({ nodes: 13, edges: 13, nodes_changed: 0, edges_changed: 0, unmatched_edges: 0 })
    expect(job.nodes_changed).toBe(0)
    expect(await snapshot()).toEqual(before)
  })

  it('upserts merge properties, union kinds (source kind appended) and keep created_at', async () => {
    const before = await node(ID.bob)
    const { files } = await ingest(admin, {
      metadata: { source_kind: 'CorpHound' },
      graph: {
        nodes: [{ id: ID.bob, kinds: ['User'], properties: { title: 'admin', enabled: false, ignored: null } }],
        edges: [{ start: { value: ID.bob }, end: { value: ID.da }, kind: 'MemberOf', properties: { isacl: false } }],
      },
    })
    expect(files[0]).toMatchObject({ nodes_changed: 1, edges_changed: 1 })
    const after = await node(ID.bob)
    expect(JSON.parse(after!.kinds)).toEqual(['User', 'CorpHound', 'Base'])
    expect(JSON.parse(after!.properties)).toEqual({ name: 'BOB@CORP.LOCAL', domainsid: CORP, enabled: false, title: 'admin' })
    expect(after!.name).toBe('BOB@CORP.LOCAL')
    expect(after!.environment_id).toBe(CORP)
    expect(after!.created_at).toBe(before!.created_at)
    expect(after!.updated_at >= before!.updated_at).toBe(true)
    const edge = await db()
      .prepare('SELECT properties FROM edges WHERE start_id = ? AND end_id = (SELECT id FROM nodes WHERE objectid = ?) AND kind = ?')
      .bind(after!.id, ID.da, 'MemberOf')
      .first<{ properties: string }>()
    expect(JSON.parse(edge!.properties)).toEqual({ isacl: false })
  })

  it('lists jobs newest first with counts and paging', async () => {
    const page = await listUploadJobs(admin, { limit: 2 })
    expect(page.limit).toBe(2)
    expect(page.skip).toBe(0)
    expect(page.count).toBeGreaterThanOrEqual(4)
    expect(page.data).toHaveLength(2)
    expect(page.data[0].id).toBeGreaterThan(page.data[1].id)
    const next = await listUploadJobs(admin, { skip: 2, limit: 2, sort_by: 'id' })
    expect(next.data[0].id).toBeLessThan(next.data[1].id)
    await expectEnvelope(await admin.raw('GET', '/api/v2/file-upload?limit=0'), 400, 'limit must be at least 1')
    await expectEnvelope(await admin.raw('GET', '/api/v2/file-upload?sort_by=name'), 400, 'sort_by must be one of')
  })
})

describe('file-upload: validation (nothing written)', () => {
  it('lists every violation with its JSON path and writes nothing', async () => {
    const job = (await startUploadJob(admin)).data
    const before = await snapshot()
    const bad = {
      metadata: { source_kind: 'bad kind' },
      graph: {
        nodes: [
          { id: 'NEW-1', kinds: ['User'], properties: { name: 'NEW' } },
          { id: '', kinds: [] },
          { id: 'NEW-2', kinds: ['A', 'B', 'C', 'D'], properties: { nested: { a: 1 }, mixed: [1, 'a'] } },
          { id: 'NEW-3', kinds: ['User'], extra: true },
          'not an object',
        ],
        edges: [
          { start: { value: 'NEW-1' }, end: { value: ID.alice, match_by: 'sid' }, kind: 'Has-Dash' },
          { start: {}, end: { value: ID.alice }, kind: 'MemberOf' },
        ],
      },
    }
    const res = await rawUpload(admin, job.id, JSON.stringify(bad))
    const body = await expectEnvelope(res, 400, 'nothing was written')
    const contexts = body.errors.map((e) => e.context)
    expect(contexts).toEqual(
      expect.arrayContaining([
        'metadata.source_kind',
        'graph.nodes[1].id',
        'graph.nodes[1].kinds',
        'graph.nodes[2].kinds',
        'graph.nodes[2].properties.nested',
        'graph.nodes[2].properties.mixed',
        'graph.nodes[3].extra',
        'graph.nodes[4]',
        'graph.edges[0].end.match_by',
        'graph.edges[0].kind',
        'graph.edges[1].start.value',
      ]),
    )
    expect(await snapshot()).toEqual(before)
    expect(await count('nodes', 'objectid = ?', 'NEW-1')).toBe(0)
    const stored = (await listUploadJobs(admin)).data.find((j) => j.id === job.id)!
    expect(stored).toMatchObject({ total_files: 1, failed_files: 1 })
    expect(stored.errors.some((e) => e.context === 'graph.nodes[1].id')).toBe(true)
  })

  it('rejects invalid JSON, collector files without a known meta.type, missing graph and wrong types', async () => {
    const job = (await startUploadJob(admin)).data
    await expectEnvelope(await rawUpload(admin, job.id, '{"graph": {"nodes": [ {"id": "x", "kinds": ["User"]} '), 400, 'file is not valid JSON')
    await expectEnvelope(await rawUpload(admin, job.id, '{"graph": {"nodes": [1,]}}'), 400, 'file is not valid JSON')
    await expectEnvelope(await rawUpload(admin, job.id, '[]'), 400, 'must be a JSON object')
    await expectEnvelope(await rawUpload(admin, job.id, '{"meta": {}, "data": []}'), 400, 'no valid meta tag found')
    await expectEnvelope(await rawUpload(admin, job.id, '{"metadata": {}}'), 400, 'graph is required')
    await expectEnvelope(await rawUpload(admin, job.id, '{"graph": {"nodes": {}}}'), 400, 'graph.nodes must be an array')
    await expectEnvelope(await rawUpload(admin, job.id, '{"graph": {}}'), 400, 'graph must contain nodes and/or edges')
    await expectEnvelope(await rawUpload(admin, job.id, new Uint8Array([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d])), 400)
    const stored = (await listUploadJobs(admin)).data.find((j) => j.id === job.id)!
    expect(stored).toMatchObject({ total_files: 8, failed_files: 8 })
    const ended = await endUploadJob(admin, job.id)
    expect(ended.data).toMatchObject({ status: 5, status_message: 'failed: every file failed' })
  })

  it('caps the violation list', async () => {
    const job = (await startUploadJob(admin)).data
    const nodes = Array.from({ length: 300 }, () => ({ id: '', kinds: ['User'] }))
    const body = await expectEnvelope(await rawUpload(admin, job.id, JSON.stringify({ graph: { nodes } })), 400, 'more than 100 violation')
    expect(body.errors.length).toBe(102)
    expect(body.errors[101].message).toContain('only the first 100 violations are listed')
  })

  it('answers 415 for other content types and 413 above 20 MiB', async () => {
    const job = (await startUploadJob(admin)).data
    await expectEnvelope(await rawUpload(admin, job.id, '{}', 'text/plain'), 415)
    const big = new Uint8Array(20 * 1024 * 1024 + 1).fill(0x20)
    await expectEnvelope(await rawUpload(admin, job.id, big), 413, '20971520 bytes')
  })
})

describe('file-upload: edges whose ends cannot be matched', () => {
  it('reports unmatched and ambiguous ends in the response and the job, writes the rest', async () => {
    const job = (await startUploadJob(admin)).data
    const payload: OpenGraphPayload = {
      graph: {
        nodes: [
          { id: 'DUP-1', kinds: ['Person'], properties: { name: 'SAME NAME' } },
          { id: 'DUP-2', kinds: ['Person'], properties: { name: 'SAME NAME' } },
          { id: 'UNIQ-1', kinds: ['Person'], properties: { name: 'Unique Person' } },
        ],
        edges: [
          { start: { value: 'UNIQ-1' }, end: { value: 'NOPE' }, kind: 'Knows' },
          { start: { value: 'SAME NAME', match_by: 'name' }, end: { value: 'UNIQ-1' }, kind: 'Knows' },
          { start: { value: 'Unique Person', match_by: 'name' }, end: { value: 'DUP-1' }, kind: 'Knows' },
          { start: { value: 'unique person', match_by: 'name' }, end: { value: 'DUP-2' }, kind: 'Knows' },
          { start: { value: 'UNIQ-1', kind: 'User' }, end: { value: 'DUP-2' }, kind: 'Likes' },
        ],
      },
    }
    const r = (await uploadFile(admin, job.id, payload, { fileName: 'people.json' })).data
    expect(r).toMatchObject({ file_name: 'people.json', edges: 5, edges_changed: 1, unmatched_edges: 4 })
    expect(r.errors).toEqual([
      { file: 'people.json', context: 'graph.edges[0]', message: 'edge end not found: no node with id "NOPE"' },
      { file: 'people.json', context: 'graph.edges[1]', message: 'edge start is ambiguous: several nodes have name "SAME NAME"' },
      { file: 'people.json', context: 'graph.edges[3]', message: 'edge start not found: no node with name "unique person"' },
      { file: 'people.json', context: 'graph.edges[4]', message: 'edge start not found: no node with id "UNIQ-1" of kind User' },
    ])
    const written = await db()
      .prepare('SELECT s.objectid AS s, t.objectid AS t, e.kind FROM edges e JOIN nodes s ON s.id = e.start_id JOIN nodes t ON t.id = e.end_id WHERE s.objectid LIKE ? OR t.objectid LIKE ?')
      .bind('UNIQ%', 'DUP%')
      .all()
    expect(written.results).toEqual([{ s: 'UNIQ-1', t: 'DUP-1', kind: 'Knows' }])
    const ended = await endUploadJob(admin, job.id)
    expect(ended.data).toMatchObject({ status: 2, unmatched_edges: 4, error_count: 4 })
    expect(ended.data.errors).toHaveLength(4)
  })
})

describe('file-upload: zip archives', () => {
  it('ingests every member; edges may refer to nodes of another member', async () => {
    const job = (await startUploadJob(admin)).data
    const zip = zipSync({
      'b-edges.json': strToU8(JSON.stringify({ graph: { edges: [{ start: { value: 'ZIP-A' }, end: { value: 'ZIP-B' }, kind: 'Knows' }] } })),
      'a-nodes.json': strToU8(
        JSON.stringify({ graph: { nodes: [{ id: 'ZIP-A', kinds: ['Person'] }, { id: 'ZIP-B', kinds: ['Person'], properties: { name: 'Zed' } }] } }),
      ),
      'folder/': new Uint8Array(0),
    })
    for (const type of ['application/zip', 'application/x-zip-compressed', 'application/zip-compressed']) {
      const res = await rawUpload(admin, job.id, zip, type)
      expect(res.status).toBe(202)
      const data = ((await res.json()) as { data: Record<string, unknown> }).data
      expect(data).toMatchObject({ files: 2, nodes: 2, edges: 1, unmatched_edges: 0 })
    }
    expect(await count('edges', "kind = 'Knows' AND start_id = (SELECT id FROM nodes WHERE objectid = 'ZIP-A')")).toBe(1)
    expect((await node('ZIP-B'))!.name).toBe('Zed')
  })

  it('a bad member rejects the whole archive, naming the member', async () => {
    const job = (await startUploadJob(admin)).data
    const zip = zipSync({
      'good.json': strToU8(JSON.stringify({ graph: { nodes: [{ id: 'ZIP-GOOD', kinds: ['Person'] }] } })),
      'bad.json': strToU8(JSON.stringify({ graph: { nodes: [{ id: 'ZIP-BAD', kinds: 'Person' }] } })),
    })
    const body = await expectEnvelope(await rawUpload(admin, job.id, zip, 'application/zip'), 400)
    expect(body.errors.map((e) => e.context)).toContain('bad.json: graph.nodes[0].kinds')
    expect(await count('nodes', "objectid IN ('ZIP-GOOD', 'ZIP-BAD')")).toBe(0)
    await expectEnvelope(await rawUpload(admin, job.id, strToU8('not a zip'), 'application/zip'), 400, 'not a valid zip archive')
    const nested = zipSync({ 'inner.zip': zipSync({ 'x.json': strToU8('{}') }) })
    await expectEnvelope(await rawUpload(admin, job.id, nested, 'application/zip'), 400, 'nested zip archives are not accepted')
  })
})

describe('file-upload: job lifecycle and access', () => {
  it('upload after end, end twice, unknown and malformed job ids', async () => {
    const job = (await startUploadJob(admin)).data
    await endUploadJob(admin, job.id)
    await expectEnvelope(await rawUpload(admin, job.id, JSON.stringify(adPayload)), 400, 'job must be in running status to attach files')
    await expectEnvelope(await admin.raw('POST', `/api/v2/file-upload/${job.id}/end`), 400, 'job must be in running status to end')
    await expectEnvelope(await rawUpload(admin, 999999, JSON.stringify(adPayload)), 404, 'no file upload job')
    await expectEnvelope(await admin.raw('POST', '/api/v2/file-upload/999999/end'), 404)
    await expectEnvelope(await rawUpload(admin, 'abc' as unknown as number, '{}'), 400, 'id is malformed')
  })

  it('roles: Upload-Only and User may ingest; Read-Only may not; jobs of others are absent', async () => {
    const uploader = await userWithRole('Upload-Only')
    const job = (await startUploadJob(uploader.client)).data
    expect(job.user_id).toBe(uploader.userId)
    const r = await uploadFile(uploader.client, job.id, { graph: { nodes: [{ id: 'UP-1', kinds: ['Person'] }] } })
    expect(r.data.nodes).toBe(1)
    // the uploader sees only its own jobs; the administrator sees everyone's
    const own = await listUploadJobs(uploader.client)
    expect(own.data.map((j) => j.id)).toEqual([job.id])
    expect((await listUploadJobs(admin, { limit: 1000 })).data.some((j) => j.id === job.id)).toBe(true)

    const user = await userWithRole('User')
    await expectEnvelope(await rawUpload(user.client, job.id, '{"graph":{"nodes":[]}}'), 404)
    await expectEnvelope(await user.client.raw('POST', `/api/v2/file-upload/${job.id}/end`), 404)
    expect((await startUploadJob(user.client)).data.status).toBe(1)

    const reader = await userWithRole('Read-Only')
    await expectEnvelope(await reader.client.raw('POST', '/api/v2/file-upload/start'), 403)
    await expectEnvelope(await reader.client.raw('GET', '/api/v2/file-upload'), 403)

    // an administrator may end somebody else's job
    expect((await endUploadJob(admin, job.id)).data.status).toBe(2)
  })

  it('a session (JWT) works as well as a token', async () => {
    const s = await adminSession()
    const { job } = await ingest(s, { graph: { nodes: [{ id: 'JWT-1', kinds: ['Person'] }] } })
    expect(job.status).toBe(2)
    await expect(uploadFile(s, job.id, { graph: { nodes: [] } })).rejects.toBeInstanceOf(EdgeHoundError)
  })
})

describe('file-upload: a 20 MiB file in one request', () => {
  it('is ingested in chunks within D1 limits', async () => {
    // ~19.5 MiB: 40k nodes with padding, 40k edges.
    const pad = 'x'.repeat(330)
    const nodes = Array.from({ length: 40_000 }, (_, i) => ({ id: `BIG-${i}`, kinds: ['Person'], properties: { name: `BIG PERSON ${i}`, pad, n: i } }))
    const edges = Array.from({ length: 40_000 }, (_, i) => ({ start: { value: `BIG-${i}` }, end: { value: `BIG-${(i + 1) % 40_000}` }, kind: 'Knows' }))
    const text = JSON.stringify({ metadata: { source_kind: 'Big' }, graph: { nodes, edges } })
    expect(text.length).toBeGreaterThan(18 * 1024 * 1024)
    expect(text.length).toBeLessThan(20 * 1024 * 1024)
    const job = (await startUploadJob(admin)).data
    const started = Date.now()
    const r = await uploadFile(admin, job.id, text)
    const ms = Date.now() - started
    expect(r.data).toMatchObject({ nodes: 40_000, edges: 40_000, nodes_changed: 40_000, edges_changed: 40_000, unmatched_edges: 0 })
    expect(await count('nodes', "objectid LIKE 'BIG-%'")).toBe(40_000)
    expect(await count('edges', "kind = 'Knows' AND start_id IN (SELECT id FROM nodes WHERE objectid LIKE 'BIG-%')")).toBe(40_000)
    console.log(`20 MiB ingest: ${ms} ms, ${Math.round(80_000 / (ms / 1000))} elements/s`)
  }, 240_000)
})
