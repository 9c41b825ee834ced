/**
 * Issue 18 item 2: a writer restricted to some environments treats every node outside them as absent.
 * It can neither pull a hidden node into view (re-home it), nor merge into it, nor learn from the answer
 * whether a hidden id or name exists; callers with access to all environments keep the old behaviour.
 */
import { beforeAll, describe, expect, it } from 'vitest'
import { adminToken, expectEnvelope, userWithRole, env } from '../helpers'
import { endUploadJob, ingest, startUploadJob, uploadFile, type OpenGraphPayload } from '../../src/client/graph'
import type { EdgeHoundClient } from '../../src/client'

const db = () => (env as unknown as { DB: D1Database }).DB

const CORP = 'S-1-5-21-910'
const DEV = 'S-1-5-21-920'
const EA = `${DEV}-519`

async function node(objectid: string) {
  return db().prepare('SELECT * FROM nodes WHERE objectid = ?').bind(objectid).first<Record<string, unknown>>()
}

async function edgeCount(startId: string): Promise<number> {
  const r = await db()
    .prepare('SELECT count(*) AS n FROM edges WHERE start_id = (SELECT id FROM nodes WHERE objectid = ?)')
    .bind(startId)
    .first<{ n: number }>()
  return r!.n
}

let admin: EdgeHoundClient
let corpUser: EdgeHoundClient
let corpUploader: EdgeHoundClient
let devReader: EdgeHoundClient

async function upload(c: EdgeHoundClient, payload: OpenGraphPayload) {
  const job = (await startUploadJob(c)).data
  const file = (await uploadFile(c, job.id, payload, { fileName: 'probe.json' })).data
  return { job, file }
}

beforeAll(async () => {
  admin = await adminToken()
  await ingest(admin, {
    graph: {
      nodes: [
        { id: CORP, kinds: ['Domain', 'Base'], properties: { name: 'CORP.EXAMPLE', domainsid: CORP } },
        { id: DEV, kinds: ['Domain', 'Base'], properties: { name: 'DEV.EXAMPLE', domainsid: DEV } },
        { id: `${CORP}-1101`, kinds: ['User', 'Base'], properties: { name: 'ALICE@CORP.EXAMPLE', domainsid: CORP } },
        { id: `${CORP}-1200`, kinds: ['Group', 'Base'], properties: { name: 'SHARED NAME', domainsid: CORP } },
        { id: EA, kinds: ['Group', 'Base'], properties: { name: 'ENTERPRISE ADMINS@DEV.EXAMPLE', domainsid: DEV, secret: 'dev only' } },
        { id: `${DEV}-1200`, kinds: ['Group', 'Base'], properties: { name: 'SHARED NAME', domainsid: DEV } },
        { id: 'NO-ENV-1', kinds: ['Person'], properties: { name: 'NOBODY IN PARTICULAR' } },
      ],
    },
  })
  corpUser = (await userWithRole('User', { all_environments: false, environment_access: [CORP] })).client
  corpUploader = (await userWithRole('Upload-Only', { all_environments: false, environment_access: [CORP] })).client
  devReader = (await userWithRole('Read-Only', { all_environments: false, environment_access: [DEV] })).client
})

describe('a writer restricted to some environments', () => {
  it('cannot pull a hidden node into its environment (the reproduction of issue 18)', async () => {
    const before = await node(EA)
    const { file } = await upload(corpUser, {
      graph: { nodes: [{ id: EA, kinds: ['Group', 'Base'], properties: { environmentid: CORP, name: 'mine now' } }] },
    })
    expect(file).toMatchObject({ nodes: 1, nodes_changed: 0, refused_nodes: 1 })
    expect(file.errors).toEqual([
      { file: 'probe.json', context: 'graph.nodes[0]', message: `node not written: "${EA}" is outside the environments you may write to` },
    ])
    // nothing of the hidden node changed, and it stays where its own readers see it
    expect(await node(EA)).toEqual(before)
    await expectEnvelope(await corpUser.raw('GET', `/api/v2/base/${EA}`), 404)
    expect((await devReader.raw('GET', `/api/v2/base/${EA}`)).status).toBe(200)
  })

  it('gets the same answer for a hidden id as for an unused id in a hidden environment', async () => {
    const { file } = await upload(corpUploader, {
      graph: {
        nodes: [
          { id: EA, kinds: ['Group'], properties: { domainsid: DEV } },
          { id: `${DEV}-9999`, kinds: ['Group'], properties: { domainsid: DEV } },
          { id: 'NO-ENV-1', kinds: ['Person'], properties: { name: 'x' } },
          { id: 'NO-ENV-2', kinds: ['Person'], properties: { name: 'y' } },
        ],
      },
    })
    const messages = file.errors.map((e) => e.message.replace(/"[^"]*"/, '"<id>"'))
    expect(file).toMatchObject({ nodes_changed: 0, refused_nodes: 4 })
    expect(new Set(messages)).toEqual(new Set(['node not written: "<id>" is outside the environments you may write to']))
    expect(await node(`${DEV}-9999`)).toBeNull()
    expect(await node('NO-ENV-2')).toBeNull()
  })

  it('sees edge ends outside its environments as missing, by id and by name, and writes no edge to them', async () => {
    const alice = `${CORP}-1101`
    const { file } = await upload(corpUser, {
      graph: {
        edges: [
          { start: { value: alice }, end: { value: EA }, kind: 'MemberOf' },
          { start: { value: alice }, end: { value: `${DEV}-4242` }, kind: 'MemberOf' },
          { start: { value: alice }, end: { value: 'ENTERPRISE ADMINS@DEV.EXAMPLE', match_by: 'name' }, kind: 'MemberOf' },
          { start: { value: alice }, end: { value: 'NO SUCH NAME', match_by: 'name' }, kind: 'MemberOf' },
          { start: { value: EA }, end: { value: alice }, kind: 'GenericAll' },
          // the same name exists in CORP and DEV: for this writer only the CORP node exists, so it is not ambiguous
          { start: { value: alice }, end: { value: 'SHARED NAME', match_by: 'name' }, kind: 'MemberOf' },
          { start: { value: alice }, end: { value: CORP }, kind: 'MemberOf' },
        ],
      },
    })
    expect(file).toMatchObject({ edges: 7, edges_changed: 2, unmatched_edges: 5 })
    expect(file.errors).toEqual([
      { file: 'probe.json', context: 'graph.edges[0]', message: `edge end not found: no node with id "${EA}"` },
      { file: 'probe.json', context: 'graph.edges[1]', message: `edge end not found: no node with id "${DEV}-4242"` },
      { file: 'probe.json', context: 'graph.edges[2]', message: 'edge end not found: no node with name "ENTERPRISE ADMINS@DEV.EXAMPLE"' },
      { file: 'probe.json', context: 'graph.edges[3]', message: 'edge end not found: no node with name "NO SUCH NAME"' },
      { file: 'probe.json', context: 'graph.edges[4]', message: `edge start not found: no node with id "${EA}"` },
    ])
    expect(await edgeCount(EA)).toBe(0)
    const targets = await db()
      .prepare('SELECT t.objectid FROM edges e JOIN nodes s ON s.id = e.start_id JOIN nodes t ON t.id = e.end_id WHERE s.objectid = ? ORDER BY 1')
      .bind(alice)
      .all<{ objectid: string }>()
    expect(targets.results.map((r) => r.objectid)).toEqual([CORP, `${CORP}-1200`])
  })

  it('cannot move one of its nodes out of its environments, but writes inside them as before', async () => {
    const alice = `${CORP}-1101`
    const { file, job } = await upload(corpUser, {
      graph: {
        nodes: [
          { id: alice, kinds: ['User', 'Base'], properties: { environmentid: DEV } },
          { id: `${CORP}-1300`, kinds: ['User', 'Base'], properties: { name: 'NEW@CORP.EXAMPLE', domainsid: CORP } },
          { id: `${CORP}-1200`, kinds: ['Group', 'Base'], properties: { description: 'helpdesk' } },
        ],
      },
    })
    expect(file).toMatchObject({ nodes: 3, nodes_changed: 2, refused_nodes: 1 })
    expect(file.errors.map((e) => e.context)).toEqual(['graph.nodes[0]'])
    expect(await node(alice)).toMatchObject({ environment_id: CORP })
    expect(JSON.parse((await node(alice))!.properties as string)).not.toHaveProperty('environmentid')
    expect(await node(`${CORP}-1300`)).toMatchObject({ environment_id: CORP })
    expect(JSON.parse((await node(`${CORP}-1200`))!.properties as string)).toMatchObject({ description: 'helpdesk', name: 'SHARED NAME' })
    // the job records only the caller's environments as collected, and counts the refused node as an error
    const ended = await endUploadJob(corpUser, job.id)
    expect(ended.data).toMatchObject({ status: 2, error_count: 1, nodes_changed: 2 })
    const envs = await db().prepare('SELECT environment_id FROM ingest_job_environments WHERE job_id = ?').bind(job.id).all<{ environment_id: string }>()
    expect(envs.results.map((r) => r.environment_id)).toEqual([CORP])
  })

  it('cannot mark a hidden environment collected, nor create an environment it may not see', async () => {
    const { file, job } = await upload(corpUser, {
      graph: {
        nodes: [
          { id: 'S-1-5-21-930', kinds: ['Domain'], properties: { name: 'NEW.EXAMPLE' } },
          { id: `${DEV}-1500`, kinds: ['User'], properties: { domainsid: DEV } },
        ],
      },
    })
    expect(file).toMatchObject({ nodes_changed: 0, refused_nodes: 2 })
    await endUploadJob(corpUser, job.id)
    expect(await db().prepare('SELECT count(*) AS n FROM environment_collections WHERE job_id = ?').bind(job.id).first('n')).toBe(0)
    expect(await node('S-1-5-21-930')).toBeNull()
  })
})

describe('a restricted writer of collector (SharpHound) files', () => {
  it('writes no placeholders: relationships to hidden or absent objects are unmatched, hidden nodes untouched', async () => {
    const before = await node(EA)
    const group = {
      ObjectIdentifier: `${CORP}-512`,
      Properties: { name: 'DOMAIN ADMINS@CORP.EXAMPLE', domain: 'CORP.EXAMPLE', domainsid: CORP },
      Members: [
        { ObjectIdentifier: EA, ObjectType: 'Computer' },
        { ObjectIdentifier: `${CORP}-7777`, ObjectType: 'User' },
        { ObjectIdentifier: `${CORP}-1101`, ObjectType: 'User' },
      ],
      Aces: [],
      IsDeleted: false,
      IsACLProtected: false,
      ContainedBy: null,
    }
    const hidden = { ...group, ObjectIdentifier: `${DEV}-1200`, Properties: { name: 'X', domain: 'DEV.EXAMPLE', domainsid: DEV }, Members: [] }
    const job = (await startUploadJob(corpUser)).data
    const res = await corpUser.raw('POST', `/api/v2/file-upload/${job.id}`, JSON.stringify({ data: [group, hidden], meta: { methods: 0, type: 'groups', count: 2, version: 6 } }), {
      contentType: 'application/json',
    })
    expect(res.status).toBe(202)
    const file = ((await res.json()) as { data: { nodes: number; edges_changed: number; unmatched_edges: number; refused_nodes: number; errors: { context: string; message: string }[] } }).data
    expect(file).toMatchObject({ nodes: 2, refused_nodes: 1, edges_changed: 1, unmatched_edges: 2 })
    expect(file.errors.map((e) => `${e.context}: ${e.message}`).sort()).toEqual([
      `graph.edges[0]: edge start not found: no node with id "${EA}"`,
      `graph.edges[1]: edge start not found: no node with id "${CORP}-7777"`,
      `node ${DEV}-1200: node not written: "${DEV}-1200" is outside the environments you may write to`,
    ])
    expect(await node(EA)).toEqual(before) // no kind added to the hidden node
    expect(await node(`${CORP}-7777`)).toBeNull() // no placeholder without an environment
    expect(await node(`${CORP}-512`)).toMatchObject({ environment_id: CORP })
  })
})

describe('a writer with access to every environment', () => {
  it('keeps the old behaviour: matches, merges and moves any node', async () => {
    const { file } = await upload(admin, {
      graph: {
        nodes: [{ id: `${DEV}-1200`, kinds: ['Group', 'Base'], properties: { environmentid: CORP } }],
        edges: [{ start: { value: 'NOBODY IN PARTICULAR', match_by: 'name' }, end: { value: EA }, kind: 'Knows' }],
      },
    })
    expect(file).toMatchObject({ nodes_changed: 1, refused_nodes: 0, edges_changed: 1, unmatched_edges: 0, errors: [] })
    expect(await node(`${DEV}-1200`)).toMatchObject({ environment_id: CORP })
  })
})
