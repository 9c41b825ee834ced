/** Graph data of an installed extension: its environments and traversable relationship kinds. */
import { beforeAll, describe, expect, it } from 'vitest'
import { adminToken, expectEnvelope, userWithRole } from '../helpers'
import type { EdgeHoundClient } from '../../src/client'
import { upsertExtension } from '../../src/client/extensions'
import { availableDomains, ingest, search, shortestPath } from '../../src/client/graph'

const GITLAB = {
  schema: { name: 'GitLab Graph', display_name: 'GitLab', version: '1.0.0', namespace: 'GL' },
  node_kinds: [
    { name: 'GL_Instance', display_name: 'Instance', description: 'a GitLab instance', is_display_kind: true, icon: 'server', color: '#FC6D26' },
    { name: 'GL_User', display_name: 'User', is_display_kind: true },
    { name: 'GL_Project', display_name: 'Project', is_display_kind: true },
  ],
  relationship_kinds: [
    { name: 'GL_MaintainerOf', description: 'can push and change settings', is_traversable: true },
    { name: 'GL_ViewerOf', description: 'read access', is_traversable: false },
  ],
  environments: [{ environment_kind: 'GL_Instance', source_kind: 'GitLab', principal_kinds: ['GL_User'] }],
  relationship_findings: [],
}

const INSTANCE = 'GLI-1'
let admin: EdgeHoundClient

beforeAll(async () => {
  admin = await adminToken()
  // Before the extension exists its relationship kinds are unknown to path search.
  await expectEnvelope(
    await admin.raw('GET', '/api/v2/graphs/shortest-path?start_node=a&end_node=b&relationship_kinds=in:GL_MaintainerOf'),
    400,
    'unknown kind(s) GL_MaintainerOf',
  )
  await upsertExtension(admin, GITLAB)
  await ingest(admin, {
    metadata: { source_kind: 'GitLab' },
    graph: {
      nodes: [
        { id: INSTANCE, kinds: ['GL_Instance'], properties: { name: 'gitlab.corp.local' } },
        { id: 'GLU-1', kinds: ['GL_User'], properties: { name: 'alice (gitlab)', environmentid: INSTANCE } },
        { id: 'GLP-1', kinds: ['GL_Project'], properties: { name: 'infra', environmentid: INSTANCE } },
        { id: 'GLP-2', kinds: ['GL_Project'], properties: { name: 'docs', environmentid: INSTANCE } },
      ],
      edges: [
        { start: { value: 'GLU-1' }, end: { value: 'GLP-1' }, kind: 'GL_MaintainerOf' },
        { start: { value: 'GLU-1' }, end: { value: 'GLP-2' }, kind: 'GL_ViewerOf' },
      ],
    },
  })
  // An AD group whose members maintain the project: a path that crosses AD and extension kinds.
  await ingest(admin, {
    graph: {
      nodes: [
        { id: 'S-1-5-21-700', kinds: ['Domain'], properties: { name: 'HYBRID.LOCAL' } },
        { id: 'S-1-5-21-700-1', kinds: ['User'], properties: { name: 'EVE@HYBRID.LOCAL', domainsid: 'S-1-5-21-700' } },
        { id: 'S-1-5-21-700-2', kinds: ['Group'], properties: { name: 'DEVS@HYBRID.LOCAL', domainsid: 'S-1-5-21-700' } },
      ],
      edges: [
        { start: { value: 'S-1-5-21-700-1' }, end: { value: 'S-1-5-21-700-2' }, kind: 'MemberOf' },
        { start: { value: 'S-1-5-21-700-2' }, end: { value: 'GLP-1' }, kind: 'GL_MaintainerOf' },
      ],
    },
  })
})

describe('extension environments', () => {
  it('an extension environment node is listed with the extension display name as type', async () => {
    const r = await availableDomains(admin)
    expect(r.data.find((d) => d.id === INSTANCE)).toMatchObject({ name: 'gitlab.corp.local', type: 'GitLab', collected: true, impactValue: 0 })
    expect(r.data.find((d) => d.id === 'S-1-5-21-700')).toMatchObject({ type: 'active-directory' })
  })

  it('environmentid places extension nodes in it, for environment access', async () => {
    const glOnly = await userWithRole('Read-Only', { all_environments: false, environment_access: [INSTANCE] })
    expect((await availableDomains(glOnly.client)).data.map((d) => d.id)).toEqual([INSTANCE])
    expect((await search(glOnly.client, { q: 'infra' })).data.map((d) => d.objectid)).toEqual(['GLP-1'])
    expect((await search(glOnly.client, { q: 'hybrid' })).data).toEqual([])
    expect((await search(admin, { q: 'alice (gitlab)' })).data[0]).toMatchObject({ objectid: 'GLU-1', type: 'GL_User' })
  })
})

describe('shortest path across extension kinds', () => {
  it('traverses extension relationship kinds marked is_traversable', async () => {
    const r = await shortestPath(admin, 'GLU-1', 'GLP-1')
    expect(r.data.edges.map((e) => e.kind)).toEqual(['GL_MaintainerOf'])
    const node = Object.values(r.data.nodes).find((n) => n.objectId === 'GLU-1')!
    expect(node).toMatchObject({ kind: 'GL_User', kinds: ['GL_User', 'GitLab'], label: 'alice (gitlab)' })
  })

  it('crosses from AD kinds into extension kinds', async () => {
    const r = await shortestPath(admin, 'S-1-5-21-700-1', 'GLP-1')
    expect(r.data.edges.map((e) => e.kind).sort()).toEqual(['GL_MaintainerOf', 'MemberOf'])
  })

  it('does not traverse kinds with is_traversable false unless asked with in:', async () => {
    await expectEnvelope(await admin.raw('GET', '/api/v2/graphs/shortest-path?start_node=GLU-1&end_node=GLP-2'), 404, 'Path not found')
    const r = await shortestPath(admin, 'GLU-1', 'GLP-2', 'in:GL_ViewerOf')
    expect(r.data.edges.map((e) => e.kind)).toEqual(['GL_ViewerOf'])
    await expectEnvelope(
      await admin.raw('GET', '/api/v2/graphs/shortest-path?start_node=S-1-5-21-700-1&end_node=GLP-1&relationship_kinds=nin:GL_MaintainerOf'),
      404,
      'Path not found',
    )
  })
})
