/**
 * OpenGraph files exactly as real collectors ship them (issue 13): a top-level `$schema` is accepted and
 * ignored, other unknown top-level members too (as BloodHound), but a typo inside `graph`, a node or an
 * edge, a mis-cased `graph`/`metadata`, and a file mixing `meta`/`data` with `graph` are refused.
 */
import { beforeAll, describe, expect, it } from 'vitest'
import { adminToken, expectEnvelope, env } from '../helpers'
import type { EdgeHoundClient } from '../../src/client'
import { upsertExtension } from '../../src/client/extensions'
import { availableDomains, endUploadJob, startUploadJob } from '../../src/client/graph'
import { emptyShippedFile, ORG, SHIPPED_EXTENSION, SHIPPED_SCHEMA_URL, shippedFile } from '../fixtures/graph/shipped'

const db = () => (env as unknown as { DB: D1Database }).DB
let admin: EdgeHoundClient

async function upload(jobId: number, body: unknown) {
  const raw = typeof body === 'string' || body instanceof Uint8Array ? body : JSON.stringify(body)
  return admin.raw('POST', `/api/v2/file-upload/${jobId}`, raw, { contentType: 'application/json' })
}

beforeAll(async () => {
  admin = await adminToken()
  await upsertExtension(admin, SHIPPED_EXTENSION)
})

describe('OpenGraph as shipped', () => {
  it('ingests a collector file with $schema unmodified, every node and edge accounted for', async () => {
    const job = (await startUploadJob(admin)).data
    const res = await upload(job.id, shippedFile)
    expect(res.status).toBe(202)
    const r = ((await res.json()) as { data: Record<string, unknown> & { errors: { context: string; message: string }[] } }).data
    // 4 nodes; 6 edges: 3 relationships written (one sent twice), 2 unmatched and reported, none dropped silently
    expect(r).toMatchObject({ nodes: 4, nodes_changed: 4, edges: 6, edges_changed: 3, unmatched_edges: 2 })
    expect(r.errors.map((e) => [e.context, e.message])).toEqual([
      ['graph.edges[4]', 'edge start not found: no node with id "D1B8D1241EEFC632BA41A4D0"'],
      ['graph.edges[5]', 'edge end not found: no node with name "alice@example.invalid" of kind OtherIdP_User'],
    ])
    const rows = await db()
      .prepare(
        `SELECT s.objectid AS s, e.kind, t.objectid AS t, e.properties FROM edges e JOIN nodes s ON s.id = e.start_id JOIN nodes t ON t.id = e.end_id
         WHERE e.kind LIKE 'XH_%' ORDER BY e.kind`,
      )
      .all<{ s: string; kind: string; t: string; properties: string }>()
    expect(rows.results.map((x) => [x.s, x.kind, x.t, JSON.parse(x.properties)])).toEqual([
      ['T_kgOPS', 'XH_AdminTo', 'R_kgREPO1', { traversable: true }],
      [ORG, 'XH_Contains', 'R_kgREPO1', { traversable: false }],
      ['U_kgALICE', 'XH_MemberOf', 'T_kgOPS', { traversable: true }],
    ])
    // ids keep their case (docs/graph.md: why OpenGraph ids are not upper-cased); $schema is not stored
    const org = await db().prepare('SELECT kinds, environment_kind, properties FROM nodes WHERE objectid = ?').bind(ORG).first<{ kinds: string; environment_kind: string; properties: string }>()
    expect(JSON.parse(org!.kinds)).toEqual(['XH_Organization', 'ShippedHub'])
    expect(org!.environment_kind).toBe('XH_Organization')
    expect(JSON.stringify(org)).not.toContain(SHIPPED_SCHEMA_URL)

    const empty = await upload(job.id, emptyShippedFile)
    expect(empty.status).toBe(202)
    expect(((await empty.json()) as { data: unknown }).data).toMatchObject({ nodes: 0, edges: 0, unmatched_edges: 0 })
    expect((await endUploadJob(admin, job.id)).data).toMatchObject({ status: 2, total_files: 2, failed_files: 0 })
    const env = (await availableDomains(admin)).data.find((d) => d.id === ORG)
    expect(env).toMatchObject({ name: 'ShippedOrg', type: 'Shipped Hub', collected: true })
  })

  it('ignores other unknown top-level members, as BloodHound does', async () => {
    const job = (await startUploadJob(admin)).data
    const res = await upload(job.id, { $id: 'x', collector: { name: 'acme', version: 3 }, generated: '2026-01-01', graph: { nodes: [{ id: 'TOP-1', kinds: ['XH_User'] }] } })
    expect(res.status).toBe(202)
    expect(((await res.json()) as { data: unknown }).data).toMatchObject({ nodes: 1 })
  })

  it('still reports typos that would lose data, and writes nothing of such a file', async () => {
    const job = (await startUploadJob(admin)).data
    const cases: [unknown, string, string][] = [
      [{ $schema: SHIPPED_SCHEMA_URL, graph: { nodes: [{ id: 'TYPO-1', kinds: ['XH_User'], propertes: { name: 'x' } }] } }, 'graph.nodes[0].propertes', 'unknown member "propertes"'],
      [{ graph: { nodes: [], edgse: [] } }, 'graph.edgse', 'unknown member "edgse"'],
      [{ graph: { edges: [{ start: { value: 'a', matchby: 'name' }, end: { value: 'b' }, kind: 'K' }] } }, 'graph.edges[0].start.matchby', 'unknown member "matchby"'],
      [{ metadata: { sourcekind: 'X' }, graph: { nodes: [] } }, 'metadata.sourcekind', 'unknown member "sourcekind"'],
      [{ Metadata: { source_kind: 'X' }, graph: { nodes: [{ id: 'TYPO-2', kinds: ['XH_User'] }] } }, 'Metadata', 'unknown member "Metadata" (did you mean "metadata"?)'],
      [{ meta: { type: 'azure' }, graph: { nodes: [{ id: 'TYPO-3', kinds: ['XH_User'] }] } }, 'meta', 'cannot be mixed with OpenGraph "graph"'],
    ]
    for (const [body, context, message] of cases) {
      const env = await expectEnvelope(await upload(job.id, body), 400, message)
      expect(env.errors.map((e) => e.context)).toContain(context)
    }
    const written = await db().prepare(`SELECT count(*) AS n FROM nodes WHERE objectid LIKE 'TYPO-%'`).first<{ n: number }>()
    expect(written!.n).toBe(0)
  })

  it('a body over 20 MiB is a 413 that says how to split it', async () => {
    const job = (await startUploadJob(admin)).data
    const big = new Uint8Array(20 * 1024 * 1024 + 1).fill(0x20)
    const body = await expectEnvelope(await upload(job.id, big), 413, 'request body exceeds the limit of 20971520 bytes for this route: split the file into several uploads to the same job')
    expect(body.errors[0].message).toContain('`edgehound ingest` does this for files of any size')
  })
})
