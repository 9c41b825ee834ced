/**
 * Issue 18 item 6: how repeated uploads merge into stored nodes and edges.
 * - an element repeated inside one upload (or one zip) is applied once, so the same file twice changes nothing;
 * - a node's kinds are unioned across uploads (as BloodHound does) but bounded;
 * - a node stops being an environment when written again after its extension stopped declaring the kind.
 */
import { beforeAll, describe, expect, it } from 'vitest'
import { strToU8, zipSync } from 'fflate'
import { adminToken, env } from '../helpers'
import { availableDomains, endUploadJob, startUploadJob, uploadFile, type OpenGraphPayload } from '../../src/client/graph'
import { deleteExtension, extensionIdByName, upsertExtension } from '../../src/client/extensions'
import type { EdgeHoundClient } from '../../src/client'
import { MAX_STORED_KINDS } from '../../src/graph/ingest.store'

const db = () => (env as unknown as { DB: D1Database }).DB

async function node(objectid: string) {
  return db().prepare('SELECT * FROM nodes WHERE objectid = ?').bind(objectid).first<{
    kind: string
    kinds: string
    properties: string
    environment_id: string | null
    environment_kind: string | null
    updated_at: string
  }>()
}

async function edge(start: string, kind: string, end: string) {
  return db()
    .prepare(
      `SELECT e.properties, e.updated_at FROM edges e JOIN nodes s ON s.id = e.start_id JOIN nodes t ON t.id = e.end_id
       WHERE s.objectid = ? AND e.kind = ? AND t.objectid = ?`,
    )
    .bind(start, kind, end)
    .first<{ properties: string; updated_at: string }>()
}

let admin: EdgeHoundClient

async function upload(body: OpenGraphPayload | Uint8Array, contentType?: string) {
  const job = (await startUploadJob(admin)).data
  if (body instanceof Uint8Array) {
    const res = await admin.raw('POST', `/api/v2/file-upload/${job.id}`, body, { contentType })
    expect(res.status).toBe(202)
    const file = ((await res.json()) as { data: Record<string, unknown> }).data
    await endUploadJob(admin, job.id)
    return file
  }
  const file = (await uploadFile(admin, job.id, body, { fileName: 'rep.json' })).data
  await endUploadJob(admin, job.id)
  return file as unknown as Record<string, unknown>
}

beforeAll(async () => {
  admin = await adminToken()
})

describe('an element repeated within one upload', () => {
  const payload: OpenGraphPayload = {
    graph: {
      nodes: [
        { id: 'REP-A', kinds: ['User', 'Base'], properties: { name: 'REP A', title: 'first', a: 1 } },
        { id: 'REP-B', kinds: ['Person'], properties: { name: 'REP B' } },
        { id: 'REP-A', kinds: ['Person'], properties: { title: 'second', b: [1, 2], flag: true } },
      ],
      edges: [
        { start: { value: 'REP-A' }, end: { value: 'REP-B' }, kind: 'Knows', properties: { since: 2001, note: 'x' } },
        { start: { value: 'REP-A' }, end: { value: 'REP-B' }, kind: 'Knows', properties: { since: 2002, extra: false } },
        { start: { value: 'REP-A' }, end: { value: 'REP-MISSING' }, kind: 'Knows' },
        { start: { value: 'REP-A' }, end: { value: 'REP-MISSING' }, kind: 'Knows', properties: { again: true } },
      ],
    },
  }

  it('is applied once, merged in order; the same file again changes nothing, updated_at included', async () => {
    const first = await upload(payload)
    expect(first).toMatchObject({ nodes: 3, edges: 4, nodes_changed: 2, edges_changed: 1, unmatched_edges: 1 })
    // a repeated unmatched edge is reported once, at its first occurrence
    expect(first.errors).toEqual([{ file: 'rep.json', context: 'graph.edges[2]', message: 'edge end not found: no node with id "REP-MISSING"' }])
    const a = await node('REP-A')
    expect(a!.kind).toBe('Person')
    expect(JSON.parse(a!.kinds)).toEqual(['Person', 'User', 'Base'])
    expect(JSON.parse(a!.properties)).toEqual({ name: 'REP A', title: 'second', a: 1, b: [1, 2], flag: true })
    const e = await edge('REP-A', 'Knows', 'REP-B')
    expect(JSON.parse(e!.properties)).toEqual({ since: 2002, note: 'x', extra: false })

    for (let i = 0; i < 2; i++) {
      const again = await upload(payload)
      expect(again).toMatchObject({ nodes_changed: 0, edges_changed: 0, unmatched_edges: 1 })
      expect(await node('REP-A')).toEqual(a)
      expect(await edge('REP-A', 'Knows', 'REP-B')).toEqual(e)
    }
  })

  it('across the members of one zip as well', async () => {
    const zip = zipSync({
      'one.json': strToU8(JSON.stringify({ graph: { nodes: [{ id: 'REPZ-1', kinds: ['Person'], properties: { v: 1, only1: 'x' } }] } })),
      'two.json': strToU8(
        JSON.stringify({
          graph: {
            nodes: [{ id: 'REPZ-1', kinds: ['Robot'], properties: { v: 2 } }, { id: 'REPZ-2', kinds: ['Person'] }],
            edges: [
              { start: { value: 'REPZ-1' }, end: { value: 'REPZ-2' }, kind: 'Knows', properties: { w: 1 } },
              { start: { value: 'REPZ-1' }, end: { value: 'REPZ-2' }, kind: 'Knows', properties: { w: 2 } },
            ],
          },
        }),
      ),
    })
    expect(await upload(zip, 'application/zip')).toMatchObject({ files: 2, nodes_changed: 2, edges_changed: 1 })
    const stored = await node('REPZ-1')
    expect(JSON.parse(stored!.properties)).toEqual({ v: 2, only1: 'x' })
    expect(JSON.parse(stored!.kinds)).toEqual(['Robot', 'Person'])
    expect(await upload(zip, 'application/zip')).toMatchObject({ nodes_changed: 0, edges_changed: 0 })
    expect(await node('REPZ-1')).toEqual(stored)
  })
})

describe('kinds across uploads', () => {
  it('are unioned, newest first, and bounded', async () => {
    for (let i = 0; i < 8; i++) await upload({ graph: { nodes: [{ id: 'KINDS-1', kinds: [`K${i}a`, `K${i}b`, `K${i}c`] }] } })
    const kinds = JSON.parse((await node('KINDS-1'))!.kinds) as string[]
    expect(kinds).toHaveLength(MAX_STORED_KINDS)
    expect(kinds.slice(0, 3)).toEqual(['K7a', 'K7b', 'K7c'])
    expect(kinds).not.toContain('K0a') // the kinds stated longest ago go first
    // stating kinds the node already has changes nothing
    expect(await upload({ graph: { nodes: [{ id: 'KINDS-1', kinds: ['K7a', 'K7b', 'K7c'] }] } })).toMatchObject({ nodes_changed: 0 })
  })
})

describe('environment kinds of an extension', () => {
  const ext = (environments: unknown[]) => ({
    schema: { name: 'Vault Graph', display_name: 'Vault', version: '1.0.0', namespace: 'VT' },
    node_kinds: [
      { name: 'VT_Cluster', display_name: 'Cluster', is_display_kind: true },
      { name: 'VT_Secret', display_name: 'Secret', is_display_kind: true },
    ],
    relationship_kinds: [{ name: 'VT_Reads', description: 'reads', is_traversable: true }],
    environments,
    relationship_findings: [],
  })
  const payload: OpenGraphPayload = {
    graph: {
      nodes: [
        { id: 'VT-CLUSTER', kinds: ['VT_Cluster'], properties: { name: 'vault.example' } },
        { id: 'VT-S1', kinds: ['VT_Secret'], properties: { name: 'db password', environmentid: 'VT-CLUSTER' } },
      ],
    },
  }

  it('a node stops being an environment once written again after the extension stops declaring the kind', async () => {
    await upsertExtension(admin, ext([{ environment_kind: 'VT_Cluster', source_kind: 'Vault', principal_kinds: [] }]))
    await upload(payload)
    expect(await node('VT-CLUSTER')).toMatchObject({ environment_kind: 'VT_Cluster', environment_id: 'VT-CLUSTER' })
    expect((await availableDomains(admin)).data.map((d) => d.id)).toContain('VT-CLUSTER')

    await upsertExtension(admin, ext([]))
    expect(await upload(payload)).toMatchObject({ nodes_changed: 1 })
    expect(await node('VT-CLUSTER')).toMatchObject({ environment_kind: null, environment_id: null })
    expect((await availableDomains(admin)).data.map((d) => d.id)).not.toContain('VT-CLUSTER')
    // and written again once more: nothing changes
    expect(await upload(payload)).toMatchObject({ nodes_changed: 0 })

    // declared again: the next upload makes it an environment again
    await upsertExtension(admin, ext([{ environment_kind: 'VT_Cluster', source_kind: 'Vault', principal_kinds: [] }]))
    await upload(payload)
    expect(await node('VT-CLUSTER')).toMatchObject({ environment_kind: 'VT_Cluster', environment_id: 'VT-CLUSTER' })
    const id = await extensionIdByName(admin, 'Vault Graph')
    await deleteExtension(admin, id!)
  })

  it('a Domain stays an environment when a later upload omits the Domain kind', async () => {
    await upload({ graph: { nodes: [{ id: 'S-1-5-21-950', kinds: ['Domain', 'Base'], properties: { name: 'KEEP.EXAMPLE' } }] } })
    await upload({ graph: { nodes: [{ id: 'S-1-5-21-950', kinds: ['Base'], properties: { functionallevel: '2016' } }] } })
    expect(await node('S-1-5-21-950')).toMatchObject({ environment_kind: 'Domain', environment_id: 'S-1-5-21-950' })
  })
})
