/**
 * Issue 18 item 2: a writer restricted to some environments treats every node outside them as absent.
 * It can neither pull a hidden node into view (re-home it), nor merge into it, nor learn from the answer
 * whether a hidden id or name exists; callers with access to all environments keep the old behaviour.
 */
import { beforeAll, describe, expect, it } from 'vitest'
import { adminToken, expectEnvelope, userWithRole, env } from '../helpers'
import { endUploadJob, ingest, startUploadJob, uploadFile, type OpenGraphPayload } from '../../src/client/graph'
import type { EdgeHoundClient } from '../../src/client'
import { envFrom, envFromPatched, VISIBLE_BY_INDEX_MAX } from '../../src/graph/ingest.store'

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

/**
 * Differential: the restricted commit SQL (SQL.restricted) against the unrestricted one on the same data.
 * The template below is written twice, once into environments a restricted writer may write (instance A,
 * written by that writer) and once into other environments (instance B, written by an administrator); the
 * stored state of both instances, read back with the instance's ids replaced by placeholders, must be the
 * same. A restricted commit that refused, failed to match or moved anything it should not would differ.
 */
describe('restricted and unrestricted commits of the same data (differential)', () => {
  type Inst = { d1: string; d2: string; t: string }
  const A: Inst = { d1: 'S-1-5-21-7101', d2: 'S-1-5-21-7102', t: 'ALPHA' }
  const B: Inst = { d1: 'S-1-5-21-7201', d2: 'S-1-5-21-7202', t: 'BRAVO' }
  const HIDDEN = 'S-1-5-21-7301' // an environment the restricted writer cannot see
  let writer: EdgeHoundClient
  let writerMany: EdgeHoundClient

  const seed = (i: Inst): OpenGraphPayload => ({
    graph: {
      nodes: [
        { id: i.d1, kinds: ['Domain', 'Base'], properties: { name: `${i.t}-ONE.LOCAL`, domainsid: i.d1 } },
        { id: i.d2, kinds: ['Domain', 'Base'], properties: { name: `${i.t}-TWO.LOCAL`, domainsid: i.d2 } },
        { id: `${i.d1}-1001`, kinds: ['User', 'Base'], properties: { name: `${i.t}-ALICE`, domainsid: i.d1, title: 'clerk', enabled: true } },
        { id: `${i.d1}-1002`, kinds: ['User', 'Base'], properties: { name: `${i.t}-BOB`, domainsid: i.d1 } },
        { id: `${i.d1}-512`, kinds: ['Group', 'Base'], properties: { name: `${i.t}-ADMINS`, domainsid: i.d1 } },
        { id: `${i.d2}-2001`, kinds: ['Computer', 'Base'], properties: { name: `${i.t}-PC`, domainsid: i.d2 } },
        { id: `${i.d1}-1004`, kinds: ['User', 'Base'], properties: { name: `${i.t}-ERIN`, environmentid: i.d1, domainsid: i.d2 } },
      ],
      edges: [{ start: { value: `${i.d1}-1001` }, end: { value: `${i.d1}-512` }, kind: 'MemberOf', properties: { isacl: false } }],
    },
  })
  // every node of it ends up inside the instance's two environments
  const inside = (i: Inst): OpenGraphPayload => ({
    graph: {
      nodes: [
        // merged: kinds unioned, a property changed, one deleted (null), one added
        { id: `${i.d1}-1001`, kinds: ['User', 'Tag_Probe'], properties: { domainsid: i.d1, title: null, office: 'north' } },
        // moved from one of the writer's environments to the other
        { id: `${i.d1}-1002`, kinds: ['User', 'Base'], properties: { domainsid: i.d2 } },
        // environmentid still wins over the changed domainsid: stays in d1
        { id: `${i.d1}-1004`, kinds: ['User', 'Base'], properties: { domainsid: i.d1 } },
        // new nodes, by environmentid, domainsid and tenantid
        { id: `${i.d2}-3001`, kinds: ['User', 'Base'], properties: { name: `${i.t}-NEW`, environmentid: i.d2 } },
        { id: `${i.d1}-3002`, kinds: ['Group', 'Base'], properties: { name: `${i.t}-HELPDESK`, domainsid: i.d1 } },
        { id: `${i.d2}-3003`, kinds: ['AZUser'], properties: { name: `${i.t}-CLOUD`, tenantid: i.d2 } },
        // repeated in the upload: folded into one row
        { id: `${i.d1}-3002`, kinds: ['Group'], properties: { description: 'second mention' } },
        // an environment node written again
        { id: i.d2, kinds: ['Domain', 'Base'], properties: { functionallevel: '2016' } },
      ],
      edges: [
        { start: { value: `${i.d1}-1001` }, end: { value: `${i.d1}-512` }, kind: 'MemberOf', properties: { since: 1 } },
        { start: { value: `${i.d1}-1002` }, end: { value: `${i.d2}-2001` }, kind: 'AdminTo' },
        { start: { value: `${i.t}-ALICE`, match_by: 'name' }, end: { value: `${i.t}-PC`, match_by: 'name', kind: 'Computer' }, kind: 'CanRDP' },
        { start: { value: `${i.d1}-3002` }, end: { value: `${i.d1}-512`, kind: 'Group' }, kind: 'MemberOf' },
        { start: { value: `${i.d1}-3002` }, end: { value: `${i.d1}-512`, kind: 'Group' }, kind: 'MemberOf', properties: { repeated: true } },
        // unmatched alike in both: a kind the node lacks, an id and a name nobody has
        { start: { value: `${i.d1}-1001` }, end: { value: `${i.d1}-512`, kind: 'User' }, kind: 'GenericAll' },
        { start: { value: `${i.d1}-1001` }, end: { value: `${i.d1}-9999` }, kind: 'GenericAll' },
        { start: { value: `${i.t}-NOBODY`, match_by: 'name' }, end: { value: `${i.d1}-1001` }, kind: 'GenericAll' },
      ],
    },
  })
  // what the restricted writer may not write: a hidden node, an unused id of a hidden environment, a node
  // without environment, one of its own moved out, and edges to or from a hidden node
  const outside = (i: Inst): OpenGraphPayload => ({
    graph: {
      nodes: [
        { id: `${HIDDEN}-1`, kinds: ['User'], properties: { domainsid: i.d1, name: 'taken over' } },
        { id: `${HIDDEN}-2`, kinds: ['User'], properties: { domainsid: HIDDEN } },
        { id: `${i.t}-NO-ENV`, kinds: ['Person'], properties: { name: 'nobody' } },
        { id: `${i.d1}-512`, kinds: ['Group'], properties: { domainsid: HIDDEN } },
      ],
      edges: [
        { start: { value: `${i.d1}-1001` }, end: { value: `${HIDDEN}-1` }, kind: 'MemberOf' },
        { start: { value: 'HIDDEN-USER', match_by: 'name' }, end: { value: `${i.d1}-1001` }, kind: 'GenericAll' },
      ],
    },
  })

  async function upload1(c: EdgeHoundClient, payload: OpenGraphPayload) {
    return (await upload(c, payload)).file
  }
  /** the instance's nodes and edges as stored, its ids and names replaced by placeholders */
  async function stored(i: Inst): Promise<unknown> {
    const norm = (v: unknown) =>
      JSON.parse(JSON.stringify(v).replaceAll(i.d1, '<d1>').replaceAll(i.d2, '<d2>').replaceAll(i.t, '<t>').replaceAll(HIDDEN, '<hidden>'))
    const nodes = await db()
      .prepare(
        `SELECT objectid, kind, kinds, name, environment_id, environment_kind, properties FROM nodes
         WHERE objectid LIKE ?1 || '%' OR objectid LIKE ?2 || '%' OR objectid LIKE ?3 || '%' ORDER BY objectid`,
      )
      .bind(i.d1, i.d2, i.t)
      .all()
    const edges = await db()
      .prepare(
        `SELECT s.objectid AS s, t.objectid AS t, e.kind, e.properties, e.derived FROM edges e JOIN nodes s ON s.id = e.start_id JOIN nodes t ON t.id = e.end_id
         WHERE s.objectid LIKE ?1 || '%' OR s.objectid LIKE ?2 || '%' ORDER BY 1, 2, 3`,
      )
      .bind(i.d1, i.d2)
      .all()
    return norm({ nodes: nodes.results, edges: edges.results })
  }
  const answer = (i: Inst, f: Awaited<ReturnType<typeof upload1>>) =>
    JSON.parse(JSON.stringify({ ...f, id: 0, job_id: 0 }).replaceAll(i.d1, '<d1>').replaceAll(i.d2, '<d2>').replaceAll(i.t, '<t>'))

  beforeAll(async () => {
    await ingest(admin, seed(A), seed(B), { graph: { nodes: [{ id: `${HIDDEN}-1`, kinds: ['User', 'Base'], properties: { name: 'HIDDEN-USER', domainsid: HIDDEN } }] } })
    writer = (await userWithRole('User', { all_environments: false, environment_access: [A.d1, A.d2] })).client
    // more environments than VISIBLE_BY_INDEX_MAX: the other form of the edge ends' visibility test (SQL.restrictedMany)
    const more = Array.from({ length: VISIBLE_BY_INDEX_MAX }, (_, n) => `S-1-5-21-74${n}`)
    writerMany = (await userWithRole('User', { all_environments: false, environment_access: [...more, A.d1, A.d2] })).client
  })

  it('stores the same when every node is inside the writer’s environments', async () => {
    expect(await stored(A)).toEqual(await stored(B))
    const fa = await upload1(writer, inside(A))
    const fb = await upload1(admin, inside(B))
    expect(fa).toMatchObject({ refused_nodes: 0, nodes_changed: 7, edges_changed: 4, unmatched_edges: 3 })
    expect(answer(A, fa)).toEqual(answer(B, fb))
    expect(await stored(A)).toEqual(await stored(B))
    // the same upload again changes nothing on either side
    expect(await upload1(writer, inside(A))).toMatchObject({ nodes_changed: 0, edges_changed: 0, refused_nodes: 0 })
    expect(await upload1(admin, inside(B))).toMatchObject({ nodes_changed: 0, edges_changed: 0, refused_nodes: 0 })
  })

  it('with nodes outside them: refuses exactly those, and writes the rest as an administrator writes the rest (a writer of many environments)', async () => {
    const hidden = await node(`${HIDDEN}-1`)
    const mixed = inside(A)
    mixed.graph!.nodes!.push(...outside(A).graph!.nodes!)
    mixed.graph!.edges!.push(...outside(A).graph!.edges!)
    const fa = await upload1(writerMany, mixed)
    const fb = await upload1(admin, inside(B))
    expect(fa).toMatchObject({ refused_nodes: 4, nodes_changed: fb.nodes_changed, edges_changed: fb.edges_changed, unmatched_edges: fb.unmatched_edges + 2 })
    const refused = (id: string) => `node not written: "${id}" is outside the environments you may write to`
    expect(fa.errors.filter((e) => e.message.startsWith('node not written'))).toEqual([
      { file: 'probe.json', context: 'graph.nodes[8]', message: refused(`${HIDDEN}-1`) },
      { file: 'probe.json', context: 'graph.nodes[9]', message: refused(`${HIDDEN}-2`) },
      { file: 'probe.json', context: 'graph.nodes[10]', message: refused(`${A.t}-NO-ENV`) },
      { file: 'probe.json', context: 'graph.nodes[11]', message: refused(`${A.d1}-512`) },
    ])
    expect(fa.errors.filter((e) => e.context === 'graph.edges[8]' || e.context === 'graph.edges[9]')).toEqual([
      { file: 'probe.json', context: 'graph.edges[8]', message: `edge end not found: no node with id "${HIDDEN}-1"` },
      { file: 'probe.json', context: 'graph.edges[9]', message: 'edge start not found: no node with name "HIDDEN-USER"' },
    ])
    expect(await stored(A)).toEqual(await stored(B))
    expect(await node(`${HIDDEN}-1`)).toEqual(hidden)
    expect(await node(`${HIDDEN}-2`)).toBeNull()
    expect(await node(`${A.t}-NO-ENV`)).toBeNull()
  })
})

/**
 * The environment a node ends up in after a merge is computed without json_patch where a restricted
 * writer's nodes are checked (envFromPatched); it must give what envFrom(json_patch(...)) gives, which the
 * upsert itself stores. Every combination of the three keys' values on both sides, in the runtime's SQLite.
 */
describe('envFromPatched', () => {
  it('equals envFrom(json_patch(stored, patch)) for every combination of absent, null, empty, text and object values', async () => {
    const values = [null, 'null', '""', '"E1"', '{"x":"E2"}'] // null: key absent
    const keys = ['environmentid', 'domainsid', 'tenantid']
    // objects built in SQL from one value per key and side: 5^6 = 15,625 pairs
    const obj = (side: string) =>
      `json_patch('{}', '{' || rtrim(${keys
        .map((k, n) => `CASE ${side}${n}.v WHEN 'absent' THEN '' ELSE '"${k}":' || ${side}${n}.v || ',' END`)
        .join(' || ')}, ',') || '}')`
    const vals = `(SELECT column1 AS v FROM (VALUES ${values.map((v) => `('${v ?? 'absent'}')`).join(', ')}))`
    const from = ['a0', 'a1', 'a2', 'b0', 'b1', 'b2'].map((t) => `${vals} AS ${t}`).join(', ')
    const sql = `SELECT count(*) AS n, sum(CASE WHEN ${envFromPatched('a', 'b')} IS NOT ${envFrom('json_patch(a, b)')} THEN 1 ELSE 0 END) AS bad,
        sum(CASE WHEN ${envFromPatched('a', 'b')} IS NOT NULL THEN 1 ELSE 0 END) AS found
      FROM (SELECT ${obj('a')} AS a, ${obj('b')} AS b FROM ${from})`
    const r = await db().prepare(sql).first<{ n: number; bad: number; found: number }>()
    expect(r).toMatchObject({ n: 5 ** 6, bad: 0 })
    expect(r!.found).toBeGreaterThan(5_000)
    // a stored value that is not an object counts as {}, as json_patch does
    const odd = await db().prepare(`SELECT ${envFromPatched("'[1]'", `'{"tenantid":"E9"}'`)} AS a, ${envFrom(`json_patch('[1]', '{"tenantid":"E9"}')`)} AS b`).first()
    expect(odd).toEqual({ a: 'E9', b: 'E9' })
  })
})
