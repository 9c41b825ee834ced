/** GET /api/v2/graphs/kinds, /api/v2/graphs/source-kinds and /api/v2/graph-schema/edges (BloodHound's kinds handlers). */
import { beforeAll, describe, expect, it } from 'vitest'
import { adminToken, expectEnvelope, userWithRole } from '../helpers'
import type { EdgeHoundClient } from '../../src/client'
import { upsertExtension } from '../../src/client/extensions'
import { ingest } from '../../src/client/graph'

const GITLAB = {
  schema: { name: 'GitLab Graph', display_name: 'GitLab', version: '1.0.0', namespace: 'GL' },
  node_kinds: [
    { name: 'GL_Instance', display_name: 'Instance', is_display_kind: true },
    { name: 'GL_User', display_name: 'User', is_display_kind: true },
  ],
  relationship_kinds: [
    { name: 'GL_MaintainerOf', description: 'can push and change settings', is_traversable: true },
    { name: 'GL_ViewerOf', description: 'read access', is_traversable: false },
  ],
  environments: [{ environment_kind: 'GL_Instance', source_kind: 'GitLab', principal_kinds: ['GL_User'] }],
  relationship_findings: [],
}

const CORP = 'S-1-5-21-910'
const LAB = 'S-1-5-21-920'
let admin: EdgeHoundClient
let corpOnly: EdgeHoundClient

type Kinds = { data: { kinds: string[] } }

beforeAll(async () => {
  admin = await adminToken()
  await upsertExtension(admin, GITLAB)
  // Undeclared node kinds in the data: one in each domain.
  await ingest(admin, {
    graph: {
      nodes: [
        { id: CORP, kinds: ['Domain'], properties: { name: 'CORP910.LOCAL' } },
        { id: LAB, kinds: ['Domain'], properties: { name: 'LAB920.LOCAL' } },
        { id: `${CORP}-1`, kinds: ['CorpOnlyWidget'], properties: { name: 'W1', domainsid: CORP } },
        { id: `${LAB}-1`, kinds: ['LabOnlyGadget'], properties: { name: 'G1', domainsid: LAB } },
      ],
    },
  })
  corpOnly = (await userWithRole('Read-Only', { all_environments: false, environment_access: [CORP] })).client
})

describe('GET /api/v2/graphs/kinds', () => {
  it('lists built-in, extension and stored kinds, sorted, in BloodHound shape', async () => {
    const r = await admin.call<Kinds>('GET', '/api/v2/graphs/kinds')
    const kinds = r.data.kinds
    expect(kinds).toEqual([...kinds].sort())
    expect(new Set(kinds).size).toBe(kinds.length)
    for (const k of ['User', 'Computer', 'AZUser', 'MemberOf', 'ADCSESC1', 'CoerceAndRelayNTLMToSMB', 'GL_Instance', 'GL_MaintainerOf', 'CorpOnlyWidget', 'LabOnlyGadget'])
      expect(kinds, k).toContain(k)
  })

  it('type=eq:node / eq:edge / neq: split node kinds from relationship kinds', async () => {
    const nodes = (await admin.call<Kinds>('GET', '/api/v2/graphs/kinds?type=eq:node')).data.kinds
    const edges = (await admin.call<Kinds>('GET', '/api/v2/graphs/kinds?type=eq:edge')).data.kinds
    expect(nodes).toEqual(expect.arrayContaining(['User', 'Domain', 'AZTenant', 'GL_User', 'CorpOnlyWidget']))
    expect(nodes).not.toContain('MemberOf')
    expect(edges).toEqual(expect.arrayContaining(['MemberOf', 'GL_ViewerOf', 'AZMemberOf']))
    expect(edges).not.toContain('User')
    expect((await admin.call<Kinds>('GET', '/api/v2/graphs/kinds?type=neq:node')).data.kinds).toEqual(edges)
    const both = (await admin.call<Kinds>('GET', '/api/v2/graphs/kinds?type=eq:node&type=eq:edge')).data.kinds
    expect(both).toEqual((await admin.call<Kinds>('GET', '/api/v2/graphs/kinds')).data.kinds)
    // a value without an operator is ignored, as BloodHound ignores it
    expect((await admin.call<Kinds>('GET', '/api/v2/graphs/kinds?type=node')).data.kinds).toEqual(both)
  })

  it('refuses bad filters with BloodHound messages in the envelope', async () => {
    await expectEnvelope(await admin.raw('GET', '/api/v2/graphs/kinds?type=gt:node'), 400, 'the specified filter predicate is not supported for this column: type gt')
    await expectEnvelope(await admin.raw('GET', '/api/v2/graphs/kinds?name=eq:User'), 400, 'the specified column cannot be filtered: name')
    await expectEnvelope(await admin.raw('GET', '/api/v2/graphs/kinds?type=bogus:node'), 400, 'there are errors in the query parameter filters specified')
  })

  it('a restricted caller sees no kind that only the data of a hidden environment carries', async () => {
    const kinds = (await corpOnly.call<Kinds>('GET', '/api/v2/graphs/kinds')).data.kinds
    expect(kinds).not.toContain('LabOnlyGadget')
    expect(kinds).toContain('GL_MaintainerOf')
    expect(kinds).toContain('User')
  })

  it('needs graph/Read', async () => {
    await expectEnvelope(await (await userWithRole('Upload-Only')).client.raw('GET', '/api/v2/graphs/kinds'), 403)
    expect((await (await userWithRole('Read-Only')).client.raw('GET', '/api/v2/graphs/kinds')).status).toBe(200)
  })
})

describe('GET /api/v2/graphs/source-kinds', () => {
  it('Base and AZBase, the extensions’ source kinds, then Sourceless (id 0)', async () => {
    const r = await admin.call<{ data: { kinds: { id: number; name: string; active: boolean }[] } }>('GET', '/api/v2/graphs/source-kinds')
    expect(r.data.kinds).toEqual([
      { id: 1, name: 'Base', active: true },
      { id: 2, name: 'AZBase', active: true },
      { id: 3, name: 'GitLab', active: true },
      { id: 0, name: 'Sourceless', active: true },
    ])
  })

  it('needs graph/Read', async () => {
    await expectEnvelope(await (await userWithRole('Upload-Only')).client.raw('GET', '/api/v2/graphs/source-kinds'), 403)
  })
})

describe('GET /api/v2/graph-schema/edges', () => {
  type Edge = { id: number; name: string; description: string; is_traversable: boolean; schema_name: string; is_builtin: boolean }
  it('lists built-in (ad, az) and extension relationship kinds with description and traversability', async () => {
    const all = (await admin.call<{ data: Edge[] }>('GET', '/api/v2/graph-schema/edges')).data
    expect(all.find((e) => e.name === 'MemberOf')).toMatchObject({ schema_name: 'ad', is_traversable: true, is_builtin: true })
    expect(all.find((e) => e.name === 'AZMemberOf')).toMatchObject({ schema_name: 'az', is_builtin: true })
    expect(all.find((e) => e.name === 'GL_ViewerOf')).toMatchObject({
      description: 'read access',
      is_traversable: false,
      schema_name: 'GitLab Graph',
      is_builtin: false,
    })
    expect(new Set(all.map((e) => e.id)).size).toBe(all.length)
  })

  it('filters by schema_names and is_traversable', async () => {
    const gl = (await admin.call<{ data: Edge[] }>('GET', '/api/v2/graph-schema/edges?schema_names=eq:GitLab%20Graph')).data
    expect(gl.map((e) => e.name)).toEqual(['GL_MaintainerOf', 'GL_ViewerOf'])
    const trav = (await admin.call<{ data: Edge[] }>('GET', '/api/v2/graph-schema/edges?schema_names=eq:GitLab%20Graph&is_traversable=eq:true')).data
    expect(trav.map((e) => e.name)).toEqual(['GL_MaintainerOf'])
    const two = (await admin.call<{ data: Edge[] }>('GET', '/api/v2/graph-schema/edges?schema_names=eq:az&schema_names=eq:GitLab%20Graph')).data
    expect(new Set(two.map((e) => e.schema_name))).toEqual(new Set(['az', 'GitLab Graph']))
    const notAd = (await admin.call<{ data: Edge[] }>('GET', '/api/v2/graph-schema/edges?schema_names=neq:ad')).data
    expect(notAd.some((e) => e.schema_name === 'ad')).toBe(false)
    expect(notAd.some((e) => e.schema_name === 'az')).toBe(true)
  })

  it('refuses bad filters with BloodHound messages in the envelope', async () => {
    await expectEnvelope(await admin.raw('GET', '/api/v2/graph-schema/edges?badqueryparam=eq:bad'), 400, 'the specified column cannot be filtered: badqueryparam')
    await expectEnvelope(await admin.raw('GET', '/api/v2/graph-schema/edges?is_traversable=gt:true'), 400, 'the specified filter predicate is not supported for this column: is_traversable gt')
    await expectEnvelope(await admin.raw('GET', '/api/v2/graph-schema/edges?badqueryparam=unknown:bad'), 400, 'there are errors in the query parameter filters specified')
  })

  it('needs graph/Read', async () => {
    await expectEnvelope(await (await userWithRole('Upload-Only')).client.raw('GET', '/api/v2/graph-schema/edges'), 403)
  })
})
