/**
 * BloodHound's AD CS entity routes (issue 27): PKI hierarchies of CAs, published templates, trusted CAs, published-to
 * CAs, issuance policies with controllers and linked templates, and a domain's ADCS escalations. They are entity
 * lists like the others (src/graph/entities.ts), so each is checked for its members, its count in the detail, its
 * graph, and a restricted caller's view: nodes of an environment it may not see are neither listed nor walked.
 */
import { env } from 'cloudflare:workers'
import { beforeAll, describe, expect, it } from 'vitest'
import { adminToken, expectEnvelope, userWithRole } from '../helpers'
import type { EdgeHoundClient } from '../../src/client'
import { insertGraph } from '../fixtures/findings/helpers'
import type { FixtureEdge, FixtureNode } from '../fixtures/findings/known-graph'

const D = 'S-1-5-21-7100'
const H = 'S-1-5-21-7200'
const n = (objectid: string, kind: string, env: string): FixtureNode => ({
  objectid,
  kinds: [kind, 'Base'],
  name: `${objectid}@PKI`,
  environment_id: env,
  properties: { name: `${objectid}@PKI`, objectid },
})
const NODES: FixtureNode[] = [
  n(D, 'Domain', D),
  n(H, 'Domain', H),
  n('PKI-HOST', 'Computer', D),
  n('PKI-ECA', 'EnterpriseCA', D),
  n('PKI-ROOT', 'RootCA', D),
  n('PKI-AIA', 'AIACA', D),
  n('PKI-NTAUTH', 'NTAuthStore', D),
  n('PKI-TPL', 'CertTemplate', D),
  n('PKI-POL', 'IssuancePolicy', D),
  n('PKI-GROUP', 'Group', D),
  n('PKI-OWNER', 'User', D),
  n('PKI-ESC1', 'User', D),
  n('PKI-GOLDEN', 'Computer', D),
  // the hidden domain: a CA trusted by the visible store, a principal escalating into the visible domain
  n('PKI-ECA-HIDDEN', 'EnterpriseCA', H),
  n('PKI-ESC-HIDDEN', 'User', H),
]
const e = (start: string, kind: string, end: string): FixtureEdge => ({ start, end, kind })
const EDGES: FixtureEdge[] = [
  e('PKI-HOST', 'HostsCAService', 'PKI-ECA'),
  e('PKI-ECA', 'IssuedSignedBy', 'PKI-ROOT'),
  e('PKI-ECA', 'EnterpriseCAFor', 'PKI-AIA'),
  e('PKI-ECA', 'EnterpriseCAFor', 'PKI-NTAUTH'),
  e('PKI-ECA', 'TrustedForNTAuth', 'PKI-NTAUTH'),
  e('PKI-AIA', 'IssuedSignedBy', 'PKI-ROOT'),
  e('PKI-ROOT', 'RootCAFor', D),
  e('PKI-NTAUTH', 'NTAuthStoreFor', D),
  e('PKI-TPL', 'PublishedTo', 'PKI-ECA'),
  e('PKI-TPL', 'ExtendedByPolicy', 'PKI-POL'),
  e('PKI-POL', 'OIDGroupLink', 'PKI-GROUP'),
  e('PKI-OWNER', 'GenericAll', 'PKI-POL'),
  e('PKI-ESC1', 'ADCSESC1', D),
  e('PKI-GOLDEN', 'GoldenCert', D),
  e('PKI-ECA-HIDDEN', 'TrustedForNTAuth', 'PKI-NTAUTH'),
  e('PKI-ESC-HIDDEN', 'ADCSESC3', D),
]

let admin: EdgeHoundClient
let restricted: EdgeHoundClient

beforeAll(async () => {
  admin = await adminToken({ paced: true })
  restricted = (await userWithRole('Read-Only', { all_environments: false, environment_access: [D] })).client
  await insertGraph(env.DB, NODES, EDGES)
})

async function listed(c: EdgeHoundClient, path: string): Promise<{ count: number; ids: string[] }> {
  const res = await c.raw('GET', path)
  const text = await res.text()
  expect(res.status, text).toBe(200)
  const body = JSON.parse(text) as { count: number; data: { objectID: string }[] }
  return { count: body.count, ids: body.data.map((x) => x.objectID).sort() }
}
async function detail(c: EdgeHoundClient, path: string): Promise<Record<string, unknown>> {
  const res = await c.raw('GET', path)
  expect(res.status).toBe(200)
  return ((await res.json()) as { data: Record<string, unknown> }).data
}
const sorted = (...ids: string[]) => [...ids].sort()

describe('AD CS entity lists', () => {
  it('an enterprise CA\u2019s PKI hierarchy: up to its host, down to the roots, stores and domain (two walks, not a mixed one)', async () => {
    const all = sorted('PKI-HOST', 'PKI-ROOT', 'PKI-AIA', 'PKI-NTAUTH', D)
    expect(await listed(admin, '/api/v2/enterprisecas/PKI-ECA/pki-hierarchy')).toEqual({ count: all.length, ids: all })
    // the hidden CA trusts the same store, but is reached only by walking inbound from it: not part of this CA's hierarchy
    expect((await detail(admin, '/api/v2/enterprisecas/PKI-ECA'))['pki-hierarchy']).toBe(all.length)
  })

  it('the graph of a CA\u2019s PKI hierarchy holds the relationships of both walks', async () => {
    const res = await admin.raw('GET', '/api/v2/enterprisecas/PKI-ECA/pki-hierarchy?type=graph')
    expect(res.status).toBe(200)
    const g = (await res.json()) as { nodes: Record<string, { objectId: string }>; edges: { kind: string; source: string; target: string }[] }
    const name = (id: string) => g.nodes[id]?.objectId
    const edges = g.edges.map((x) => `${name(x.source)} ${x.kind} ${name(x.target)}`).sort()
    expect(edges).toEqual(
      [
        'PKI-HOST HostsCAService PKI-ECA',
        'PKI-ECA IssuedSignedBy PKI-ROOT',
        'PKI-ECA EnterpriseCAFor PKI-AIA',
        'PKI-ECA EnterpriseCAFor PKI-NTAUTH',
        'PKI-ECA TrustedForNTAuth PKI-NTAUTH',
        'PKI-AIA IssuedSignedBy PKI-ROOT',
        `PKI-ROOT RootCAFor ${D}`,
        `PKI-NTAUTH NTAuthStoreFor ${D}`,
      ].sort(),
    )
  })

  it('a root CA\u2019s hierarchy is what chains to it; an AIA CA\u2019s both ways', async () => {
    expect((await listed(admin, '/api/v2/rootcas/PKI-ROOT/pki-hierarchy')).ids).toEqual(sorted('PKI-ECA', 'PKI-AIA', 'PKI-HOST'))
    expect((await detail(admin, '/api/v2/rootcas/PKI-ROOT'))['pki-hierarchy']).toBe(3)
    expect((await listed(admin, '/api/v2/aiacas/PKI-AIA/pki-hierarchy')).ids).toEqual(sorted('PKI-ECA', 'PKI-HOST', 'PKI-ROOT', D))
  })

  it('published templates, published-to CAs, trusted CAs (the hidden CA only for the unrestricted caller)', async () => {
    expect((await listed(admin, '/api/v2/enterprisecas/PKI-ECA/published-templates')).ids).toEqual(['PKI-TPL'])
    expect((await listed(admin, '/api/v2/certtemplates/PKI-TPL/published-to-cas')).ids).toEqual(['PKI-ECA'])
    expect((await detail(admin, '/api/v2/certtemplates/PKI-TPL'))['published-to-cas']).toBe(1)
    expect((await listed(admin, '/api/v2/ntauthstores/PKI-NTAUTH/trusted-cas')).ids).toEqual(sorted('PKI-ECA', 'PKI-ECA-HIDDEN'))
    expect((await detail(admin, '/api/v2/ntauthstores/PKI-NTAUTH'))['trusted-cas']).toBe(2)
    expect(await listed(restricted, '/api/v2/ntauthstores/PKI-NTAUTH/trusted-cas')).toEqual({ count: 1, ids: ['PKI-ECA'] })
    expect((await detail(restricted, '/api/v2/ntauthstores/PKI-NTAUTH'))['trusted-cas']).toBe(1)
  })

  it('an issuance policy: its properties and counts, its controllers, its linked templates', async () => {
    const d = await detail(admin, '/api/v2/issuancepolicies/PKI-POL')
    expect(d).toMatchObject({ props: expect.objectContaining({ objectid: 'PKI-POL' }), controllers: 1, linkedTemplates: 1 })
    expect((await listed(admin, '/api/v2/issuancepolicies/PKI-POL/controllers')).ids).toEqual(['PKI-OWNER'])
    expect((await listed(admin, '/api/v2/issuancepolicies/PKI-POL/linkedtemplates')).ids).toEqual(['PKI-TPL'])
    const g = await admin.raw('GET', '/api/v2/issuancepolicies/PKI-POL/linkedtemplates?type=graph')
    expect(g.status).toBe(200)
    expect(((await g.json()) as { edges: { kind: string }[] }).edges.map((x) => x.kind)).toEqual(['ExtendedByPolicy'])
  })

  it('a domain\u2019s ADCS escalations: the principals with an ESC or GoldenCert relationship to it, in the caller\u2019s environments', async () => {
    expect((await listed(admin, `/api/v2/domains/${D}/adcs-escalations`)).ids).toEqual(sorted('PKI-ESC1', 'PKI-GOLDEN', 'PKI-ESC-HIDDEN'))
    expect((await detail(admin, `/api/v2/domains/${D}`))['adcs-escalations']).toBe(3)
    expect((await listed(restricted, `/api/v2/domains/${D}/adcs-escalations`)).ids).toEqual(sorted('PKI-ESC1', 'PKI-GOLDEN'))
    expect((await detail(restricted, `/api/v2/domains/${D}`))['adcs-escalations']).toBe(2)
  })

  it('refusals: unknown object, object of another kind, object of a hidden environment (404 alike); bad paging and type (400)', async () => {
    await expectEnvelope(await admin.raw('GET', '/api/v2/issuancepolicies/NOPE'), 404, 'node not found')
    await expectEnvelope(await admin.raw('GET', '/api/v2/issuancepolicies/PKI-ECA/linkedtemplates'), 404, 'node not found')
    await expectEnvelope(await admin.raw('GET', '/api/v2/rootcas/PKI-ECA/pki-hierarchy'), 404, 'node not found')
    const hidden = await restricted.raw('GET', '/api/v2/enterprisecas/PKI-ECA-HIDDEN/pki-hierarchy')
    const absent = await restricted.raw('GET', '/api/v2/enterprisecas/PKI-ECA-NONE/pki-hierarchy')
    await expectEnvelope(hidden, 404, 'node not found')
    await expectEnvelope(absent, 404, 'node not found')
    await expectEnvelope(await admin.raw('GET', '/api/v2/enterprisecas/PKI-ECA/pki-hierarchy?skip=-1'), 400)
    await expectEnvelope(await admin.raw('GET', '/api/v2/enterprisecas/PKI-ECA/pki-hierarchy?limit=0'), 400)
    await expectEnvelope(await admin.raw('GET', '/api/v2/ntauthstores/PKI-NTAUTH/trusted-cas?type=tree'), 400)
    await expectEnvelope(await admin.raw('GET', '/api/v2/issuancepolicies/PKI-POL?counts=maybe'), 400)
  })
})
