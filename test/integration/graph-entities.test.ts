import { beforeAll, describe, expect, it } from 'vitest'
import { adminToken, env, expectEnvelope, userWithRole } from '../helpers'
import type { EdgeHoundClient } from '../../src/client'
import {
  adEntity,
  adRelated,
  adRelatedGraph,
  azureEntity,
  azureRelated,
  azureRelatedGraph,
  ingest,
  search,
  type PathGraphJson,
} from '../../src/client/graph'
import { AD_ENTITY_TYPES, AZ_RELATED, traverses } from '../../src/graph/entities'
import { RELATED_GRAPH_MAX_EDGES, RELATED_GRAPH_MAX_STEP_ROWS, RELATED_MAX_SKIP } from '../../src/graph/entity.routes'
import { compilePlan, getNodeByObjectId, relatedGraphEdges } from '../../src/graph/graph.store'
import { adPayload, azurePayload, CORP, ID, LAB, TENANT } from '../fixtures/graph/corp'

let admin: EdgeHoundClient
let corpOnly: EdgeHoundClient

beforeAll(async () => {
  admin = await adminToken()
  await ingest(admin, adPayload, azurePayload)
  corpOnly = (await userWithRole('Read-Only', { all_environments: false, environment_access: [CORP] })).client
})

const names = (page: { data: { name: string }[] }) => page.data.map((d) => d.name).sort()

describe('AD entities: users', () => {
  it('properties and BloodHound count keys', async () => {
    const r = await adEntity(admin, 'users', ID.alice)
    expect(r.data.props).toMatchObject({ objectid: ID.alice, name: 'ALICE@CORP.LOCAL', domainsid: CORP, enabled: true })
    expect(r.data).toMatchObject({
      sessions: 0,
      groupMembership: 1,
      adminRights: 1, // WS1 through HELPDESK
      rdpRights: 0,
      dcomRights: 0,
      psRemoteRights: 0,
      backupRights: 0,
      sqlAdmin: 0,
      constrainedDelegation: 0,
      controllables: 0,
      controllers: 1, // carol (GenericWrite)
      gpos: 0,
    })
    const bob = await adEntity(admin, 'users', ID.bob)
    expect(bob.data).toMatchObject({ sessions: 1, groupMembership: 1, controllables: 1, adminRights: 1 })
  })

  it('counts=false answers the properties only', async () => {
    const r = await adEntity(admin, 'users', ID.alice, { counts: false })
    expect(Object.keys(r.data)).toEqual(['props'])
    await expectEnvelope(await admin.raw('GET', `/api/v2/users/${ID.alice}?counts=maybe`), 400, 'counts must be true or false')
  })

  it('related lists are paginated {count, skip, limit, data} of {objectID, name, label}', async () => {
    const m = await adRelated(admin, 'users', ID.alice, 'memberships')
    expect(m).toEqual({ count: 1, skip: 0, limit: 100, data: [{ objectID: ID.helpdesk, name: 'HELPDESK@CORP.LOCAL', label: 'Group' }] })
    expect(names(await adRelated(admin, 'users', ID.alice, 'admin-rights'))).toEqual(['WS1.CORP.LOCAL'])
    expect(names(await adRelated(admin, 'users', ID.alice, 'controllers'))).toEqual(['CAROL@CORP.LOCAL'])
    expect(names(await adRelated(admin, 'users', ID.carol, 'controllables'))).toEqual(['ALICE@CORP.LOCAL'])
    expect(names(await adRelated(admin, 'users', ID.bob, 'sessions'))).toEqual(['WS1.CORP.LOCAL'])
    const empty = await adRelated(admin, 'users', ID.alice, 'sessions', { skip: 5 })
    expect(empty).toEqual({ count: 0, skip: 5, limit: 100, data: [] })
  })

  it('404 for unknown objects and objects of another kind; 400 for bad paging', async () => {
    await expectEnvelope(await admin.raw('GET', '/api/v2/users/S-1-5-21-100-9999'), 404, 'node not found')
    await expectEnvelope(await admin.raw('GET', `/api/v2/users/${ID.ws1}`), 404, 'node not found')
    await expectEnvelope(await admin.raw('GET', `/api/v2/users/${ID.ws1}/sessions`), 404)
    await expectEnvelope(await admin.raw('GET', `/api/v2/users/${ID.alice}/memberships?limit=0`), 400, 'limit must be at least 1')
    await expectEnvelope(
      await admin.raw('GET', `/api/v2/users/${ID.alice}/memberships?type=count`),
      400,
      'there are errors in the query parameters: unsupported result type for this query',
    )
    await expectEnvelope(await admin.raw('GET', `/api/v2/users/${ID.alice}/not-a-list`), 404)
  })
})

describe('AD entities: groups, computers, domains, gpos, ous, containers, base', () => {
  it('groups', async () => {
    const r = await adEntity(admin, 'groups', ID.helpdesk)
    expect(r.data).toMatchObject({ members: 2, membership: 0, adminRights: 1, sessions: 0, controllers: 0 })
    expect(names(await adRelated(admin, 'groups', ID.helpdesk, 'members'))).toEqual(['ALICE@CORP.LOCAL', 'DAVE@LAB.LOCAL'])
    const da = await adEntity(admin, 'groups', ID.da)
    expect(da.data).toMatchObject({ members: 1, sessions: 1, controllables: 1, adminRights: 1 })
    expect(names(await adRelated(admin, 'groups', ID.da, 'sessions'))).toEqual(['WS1.CORP.LOCAL'])
  })

  it('computers', async () => {
    const r = await adEntity(admin, 'computers', ID.ws1)
    expect(r.data).toMatchObject({ sessions: 1, adminUsers: 3, groupMembership: 0, controllers: 0, gpos: 1 })
    expect(names(await adRelated(admin, 'computers', ID.ws1, 'admin-users'))).toEqual(['ALICE@CORP.LOCAL', 'DAVE@LAB.LOCAL', 'HELPDESK@CORP.LOCAL'])
    expect(names(await adRelated(admin, 'computers', ID.ws1, 'sessions'))).toEqual(['BOB@CORP.LOCAL'])
    expect(names(await adRelated(admin, 'computers', ID.dc1, 'admin-users'))).toEqual(['BOB@CORP.LOCAL', 'DOMAIN ADMINS@CORP.LOCAL'])
  })

  it('domains', async () => {
    const r = await adEntity(admin, 'domains', CORP)
    expect(r.data).toMatchObject({
      users: 3,
      groups: 2,
      computers: 2,
      ous: 1,
      gpos: 1,
      foreignUsers: 1,
      foreignGroups: 0,
      foreignAdmins: 1,
      controllers: 2,
      dcsyncers: 0,
      linkedgpos: 0,
    })
    expect(names(await adRelated(admin, 'domains', CORP, 'users'))).toEqual(['ALICE@CORP.LOCAL', 'BOB@CORP.LOCAL', 'CAROL@CORP.LOCAL'])
    expect(names(await adRelated(admin, 'domains', CORP, 'foreign-users'))).toEqual(['DAVE@LAB.LOCAL'])
    expect(names(await adRelated(admin, 'domains', CORP, 'controllers'))).toEqual(['BOB@CORP.LOCAL', 'DOMAIN ADMINS@CORP.LOCAL'])
    const page = await adRelated(admin, 'domains', CORP, 'users', { skip: 1, limit: 1 })
    expect(page).toMatchObject({ count: 3, skip: 1, limit: 1, data: [{ name: 'BOB@CORP.LOCAL', label: 'User' }] })
  })

  it('gpos and ous', async () => {
    expect((await adEntity(admin, 'gpos', ID.gpo)).data).toMatchObject({ ous: 1, computers: 1, users: 0, tierzero: 0, controllers: 0 })
    expect(names(await adRelated(admin, 'gpos', ID.gpo, 'computers'))).toEqual(['WS1.CORP.LOCAL'])
    expect((await adEntity(admin, 'ous', ID.ou)).data).toMatchObject({ gpos: 1, users: 0, groups: 0, computers: 1 })
    expect(names(await adRelated(admin, 'ous', ID.ou, 'gpos'))).toEqual(['DEFAULT POLICY@CORP.LOCAL'])
  })

  it('containers and base', async () => {
    expect((await adEntity(admin, 'containers', ID.container)).data).toMatchObject({ controllers: 0 })
    expect((await adEntity(admin, 'base', ID.carol)).data).toMatchObject({ controllables: 1, props: { objectid: ID.carol } })
    // base accepts any node, Azure included
    expect((await adEntity(admin, 'base', ID.azVm)).data.props.name).toBe('VM-01')
    expect(names(await adRelated(admin, 'base', ID.alice, 'controllers'))).toEqual(['CAROL@CORP.LOCAL'])
  })

  it('AD CS objects: enterprisecas, certtemplates, rootcas, aiacas, ntauthstores', async () => {
    await ingest(admin, {
      graph: {
        nodes: [
          { id: 'ECA-1', kinds: ['EnterpriseCA', 'Base'], properties: { name: 'CORP-CA@CORP.LOCAL', domainsid: CORP } },
          { id: 'CT-1', kinds: ['CertTemplate', 'Base'], properties: { name: 'USER@CORP.LOCAL', domainsid: CORP } },
          { id: 'RCA-1', kinds: ['RootCA', 'Base'], properties: { name: 'ROOT@CORP.LOCAL', domainsid: CORP } },
          { id: 'AIA-1', kinds: ['AIACA', 'Base'], properties: { name: 'AIA@CORP.LOCAL', domainsid: CORP } },
          { id: 'NTA-1', kinds: ['NTAuthStore', 'Base'], properties: { name: 'NTAUTH@CORP.LOCAL', domainsid: CORP } },
        ],
        edges: [
          { start: { value: 'CT-1' }, end: { value: 'ECA-1' }, kind: 'PublishedTo' },
          { start: { value: ID.carol }, end: { value: 'ECA-1' }, kind: 'ManageCA' },
        ],
      },
    })
    expect((await adEntity(admin, 'enterprisecas', 'ECA-1')).data).toMatchObject({ controllers: 1, 'published-templates': 1 })
    expect(names(await adRelated(admin, 'enterprisecas', 'ECA-1', 'controllers'))).toEqual(['CAROL@CORP.LOCAL'])
    expect((await adEntity(admin, 'certtemplates', 'CT-1')).data).toMatchObject({ controllers: 0, 'published-to-cas': 1 })
    for (const [segment, id] of [['rootcas', 'RCA-1'], ['aiacas', 'AIA-1'], ['ntauthstores', 'NTA-1']] as const)
      expect((await adEntity(admin, segment, id)).data).toMatchObject({ controllers: 0, props: { objectid: id } })
    await expectEnvelope(await admin.raw('GET', '/api/v2/rootcas/ECA-1'), 404)
  })

  it('the connector flow: search, then /{type}s/{objectid}', async () => {
    const found = await search(admin, { q: ID.ws1 })
    const type = found.data[0].type
    expect(type).toBe('Computer')
    const r = await adEntity(admin, `${type.toLowerCase()}s` as 'computers', ID.ws1)
    expect(r.data.props.name).toBe('WS1.CORP.LOCAL')
  })

  it('environment access: nodes of other environments are absent, and so are related nodes', async () => {
    await expectEnvelope(await corpOnly.raw('GET', `/api/v2/users/${ID.dave}`), 404, 'node not found')
    await expectEnvelope(await corpOnly.raw('GET', `/api/v2/domains/${LAB}`), 404)
    expect(names(await adRelated(corpOnly, 'groups', ID.helpdesk, 'members'))).toEqual(['ALICE@CORP.LOCAL'])
    expect((await adEntity(corpOnly, 'groups', ID.helpdesk)).data).toMatchObject({ members: 1 })
  })
})

describe('Azure entities', () => {
  it('users: node shape and BloodHound count keys', async () => {
    const r = await azureEntity(admin, 'users', ID.azAlice)
    expect(r.data).toMatchObject({
      kind: 'AZUser',
      kinds: ['AZUser', 'AZBase'],
      isTierZero: false,
      isOwnedObject: false,
      props: { objectid: ID.azAlice, name: 'ALICE@CONTOSO.COM', tenantid: TENANT },
      group_membership: 1,
      roles: 1,
      execution_privileges: 1,
      outbound_object_control: 1,
      inbound_object_control: 0,
    })
    const plain = await azureEntity(admin, 'users', ID.azAlice, { counts: false })
    expect(Object.keys(plain.data).sort()).toEqual(['isOwnedObject', 'isTierZero', 'kind', 'kinds', 'props'])
  })

  it('tenants, subscriptions: descendent counts per kind', async () => {
    const t = await azureEntity(admin, 'tenants', TENANT)
    expect(t.data.descendents).toEqual({ descendent_counts: { AZKeyVault: 1, AZSubscription: 1, AZUser: 1, AZVM: 1 } })
    expect(t.data.inbound_object_control).toBe(0)
    const s = await azureEntity(admin, 'subscriptions', ID.azSub)
    expect(s.data).toMatchObject({ descendents: { descendent_counts: { AZVM: 1, AZKeyVault: 1 } }, inbound_object_control: 2 })
  })

  it('groups, roles, vms, key vaults, service principals, applications', async () => {
    expect((await azureEntity(admin, 'groups', ID.azAdmins)).data).toMatchObject({ group_members: 1, roles: 1, outbound_object_control: 1 })
    expect((await azureEntity(admin, 'roles', ID.azRole)).data).toMatchObject({ active_assignments: 2, pim_assignments: 0, approvers: 0 })
    expect((await azureEntity(admin, 'vms', ID.azVm)).data).toMatchObject({ inboundExecutionPrivileges: 1, inbound_object_control: 0 })
    expect((await azureEntity(admin, 'key-vaults', ID.azKv)).data).toMatchObject({
      Readers: { KeyReaders: 0, CertificateReaders: 0, SecretReaders: 1, AllReaders: 1 },
      inbound_object_control: 0,
    })
    expect((await azureEntity(admin, 'service-principals', ID.azSp)).data).toMatchObject({
      roles: 0,
      inbound_object_control: 0,
      outbound_object_control: 0,
      'inbound-abusable-app-role-assignments': 0,
      'outbound-abusable-app-role-assignments': 0,
    })
    expect((await azureEntity(admin, 'applications', ID.azApp)).data).toMatchObject({ kind: 'AZApp', inbound_object_control: 0 })
    expect((await azureEntity(admin, 'az-base', ID.azApp)).data).toMatchObject({ kind: 'AZApp', outbound_object_control: 0 })
  })

  it('related entity lists: paginated Azure nodes; the entity segment may be a kind name', async () => {
    const r = await azureRelated(admin, 'AZUser', ID.azAlice, 'group-membership', { skip: 0, limit: 128 })
    expect(r).toMatchObject({ count: 1, skip: 0, limit: 128 })
    expect(r.data[0]).toMatchObject({ kind: 'AZGroup', props: { objectid: ID.azAdmins, name: 'ADMINS@CONTOSO.COM' } })
    const d = await azureRelated(admin, 'tenants', TENANT, 'descendent-virtual-machines')
    expect(d).toMatchObject({ count: 1, limit: 100, data: [{ kind: 'AZVM' }] })
    expect((await azureRelated(admin, 'tenants', TENANT, 'inbound-control')).count).toBe(0)
    expect((await azureRelated(admin, 'key-vaults', ID.azKv, 'secret-readers')).data.map((n) => n.props.objectid)).toEqual([ID.azSp])
    expect((await azureRelated(admin, 'roles', ID.azRole, 'active-assignments')).count).toBe(2)
  })

  it('errors: missing object_id 400, unknown entity type 400, unknown related type 404, unknown object 404', async () => {
    await expectEnvelope(await admin.raw('GET', '/api/v2/azure/users'), 400, 'query parameter object_id is required')
    await expectEnvelope(await admin.raw('GET', `/api/v2/azure/unicorns?object_id=${ID.azAlice}`), 400, 'unknown azure entity type "unicorns"')
    await expectEnvelope(
      await admin.raw('GET', `/api/v2/azure/users?object_id=${ID.azAlice}&related_entity_type=nope`),
      404,
      'no matching related entity list type for nope',
    )
    await expectEnvelope(await admin.raw('GET', '/api/v2/azure/users?object_id=NOPE'), 404, 'node not found')
    await expectEnvelope(await admin.raw('GET', `/api/v2/azure/users?object_id=${ID.azVm}`), 404, 'node not found')
    await expectEnvelope(await admin.raw('GET', `/api/v2/azure/users?object_id=${ID.azAlice}&counts=2`), 400, 'counts must be true or false')
  })

  it('environment access: a caller without the tenant gets 404', async () => {
    await expectEnvelope(await corpOnly.raw('GET', `/api/v2/azure/users?object_id=${ID.azAlice}`), 404, 'node not found')
    await expectEnvelope(await corpOnly.raw('GET', `/api/v2/azure/tenants?object_id=${TENANT}&related_entity_type=descendent-users`), 404)
  })

  it('Upload-Only may not read entities', async () => {
    const up = await userWithRole('Upload-Only')
    await expectEnvelope(await up.client.raw('GET', `/api/v2/users/${ID.alice}`), 403)
    await expectEnvelope(await up.client.raw('GET', `/api/v2/azure/users?object_id=${ID.azAlice}`), 403)
  })
})

/** A graph's relationships as "start -Kind-> end" by object id, sorted; every end must be a node of the graph. */
function rels(g: PathGraphJson): string[] {
  return g.edges
    .map((e) => {
      expect(g.nodes[e.source], `source ${e.source}`).toBeDefined()
      expect(g.nodes[e.target], `target ${e.target}`).toBeDefined()
      return `${g.nodes[e.source].objectId} -${e.kind}-> ${g.nodes[e.target].objectId}`
    })
    .sort()
}
const objectIds = (g: PathGraphJson) => Object.values(g.nodes).map((n) => n.objectId).sort()

describe('related entities: type=graph', () => {
  // Runs last in this file: adds nested groups to CORP and a LAB group between CORP groups.
  //   HELPDESK -MemberOf-> IT -MemberOf-> ALL STAFF;  HELPDESK -MemberOf-> LAB OPS (LAB) -MemberOf-> SECRET (CORP)
  const IT = `${CORP}-1300`
  const STAFF = `${CORP}-1301`
  const SECRET = `${CORP}-1302`
  const LABOPS = `${LAB}-1400`
  beforeAll(async () => {
    const g = (id: string, name: string, domainsid: string) => ({ id, kinds: ['Group', 'Base'], properties: { name, domainsid } })
    const m = (a: string, b: string) => ({ start: { value: a }, end: { value: b }, kind: 'MemberOf' })
    await ingest(admin, {
      graph: {
        nodes: [g(IT, 'IT@CORP.LOCAL', CORP), g(STAFF, 'ALL STAFF@CORP.LOCAL', CORP), g(SECRET, 'SECRET@CORP.LOCAL', CORP), g(LABOPS, 'LAB OPS@LAB.LOCAL', LAB)],
        edges: [m(ID.helpdesk, IT), m(IT, STAFF), m(ID.helpdesk, LABOPS), { ...m(LABOPS, SECRET), properties: { lastseen: '2024-05-01T00:00:00.000Z' } }],
      },
    })
  })

  it('transitive list (memberships through nested groups): every MemberOf edge of the paths, un-wrapped', async () => {
    const res = await admin.raw('GET', `/api/v2/users/${ID.alice}/memberships?type=graph`)
    expect(res.status).toBe(200)
    const g = (await res.json()) as PathGraphJson & { data?: unknown }
    expect(Object.keys(g).sort()).toEqual(['edges', 'nodes']) // no `data` envelope, no paging members
    expect(rels(g)).toEqual([
      `${ID.alice} -MemberOf-> ${ID.helpdesk}`,
      `${ID.helpdesk} -MemberOf-> ${IT}`,
      `${ID.helpdesk} -MemberOf-> ${LABOPS}`,
      `${IT} -MemberOf-> ${STAFF}`,
      `${LABOPS} -MemberOf-> ${SECRET}`,
    ])
    expect(objectIds(g)).toEqual([ID.alice, ID.helpdesk, IT, STAFF, SECRET, LABOPS].sort())
    // nodes and edges in the shortest-path shape
    const alice = Object.entries(g.nodes).find(([, n]) => n.objectId === ID.alice)!
    expect(alice[1]).toEqual({
      label: 'ALICE@CORP.LOCAL',
      kind: 'User',
      kinds: ['User', 'Base'],
      objectId: ID.alice,
      isTierZero: false,
      isOwnedObject: false,
      lastSeen: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
    })
    expect(alice[0]).toMatch(/^\d+$/)
    const last = g.edges.find((e) => g.nodes[e.target].objectId === SECRET)!
    expect(last).toEqual({ source: expect.any(String), target: expect.any(String), label: 'MemberOf', kind: 'MemberOf', lastSeen: '2024-05-01T00:00:00.000Z' })
    // the list agrees with the graph's nodes
    expect((await adRelated(admin, 'users', ID.alice, 'memberships')).count).toBe(5)
  })

  it('only the edges that lead to listed entities: admin rights keep MemberOf to HELPDESK, not to IT', async () => {
    const g = await adRelatedGraph(admin, 'users', ID.alice, 'admin-rights')
    expect(rels(g)).toEqual([`${ID.alice} -MemberOf-> ${ID.helpdesk}`, `${ID.helpdesk} -AdminTo-> ${ID.ws1}`])
    // inbound with members: holders of AdminTo and their (transitive) members
    const admins = await adRelatedGraph(admin, 'computers', ID.ws1, 'admin-users')
    expect(rels(admins)).toEqual([`${ID.alice} -MemberOf-> ${ID.helpdesk}`, `${ID.dave} -MemberOf-> ${ID.helpdesk}`, `${ID.helpdesk} -AdminTo-> ${ID.ws1}`].sort())
    // members through nested groups, inbound
    const staff = await adRelatedGraph(admin, 'groups', STAFF, 'members')
    expect(rels(staff)).toEqual(
      [`${ID.alice} -MemberOf-> ${ID.helpdesk}`, `${ID.dave} -MemberOf-> ${ID.helpdesk}`, `${ID.helpdesk} -MemberOf-> ${IT}`, `${IT} -MemberOf-> ${STAFF}`].sort(),
    )
  })

  it('direct list: one relationship per related entity', async () => {
    expect(rels(await adRelatedGraph(admin, 'users', ID.bob, 'sessions'))).toEqual([`${ID.ws1} -HasSession-> ${ID.bob}`])
    expect(rels(await adRelatedGraph(admin, 'users', ID.alice, 'controllers'))).toEqual([`${ID.carol} -GenericWrite-> ${ID.alice}`])
    const g = await adRelatedGraph(admin, 'domains', CORP, 'controllers')
    expect(rels(g)).toEqual([`${ID.bob} -MemberOf-> ${ID.da}`, `${ID.da} -GenericAll-> ${CORP}`].sort())
    expect(Object.values(g.nodes).find((n) => n.objectId === ID.da)).toMatchObject({ isTierZero: true, label: 'DOMAIN ADMINS@CORP.LOCAL' })
  })

  it('empty related set: no nodes, no edges', async () => {
    const res = await admin.raw('GET', `/api/v2/users/${ID.alice}/sessions?type=graph`)
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ nodes: {}, edges: [] })
    expect(await azureRelatedGraph(admin, 'tenants', TENANT, 'inbound-control')).toEqual({ nodes: {}, edges: [] })
  })

  it('Azure: un-wrapped graph for group membership, roles, descendents and readers', async () => {
    const res = await admin.raw('GET', `/api/v2/azure/users?object_id=${ID.azAlice}&related_entity_type=group-membership&type=graph`)
    expect(res.status).toBe(200)
    const g = (await res.json()) as PathGraphJson
    expect(Object.keys(g).sort()).toEqual(['edges', 'nodes'])
    expect(rels(g)).toEqual([`${ID.azAlice} -AZMemberOf-> ${ID.azAdmins}`])
    expect(Object.values(g.nodes).find((n) => n.objectId === ID.azAdmins)).toMatchObject({ kind: 'AZGroup', kinds: ['AZGroup', 'AZBase'], label: 'ADMINS@CONTOSO.COM' })
    expect(rels(await azureRelatedGraph(admin, 'AZUser', ID.azAlice, 'roles'))).toEqual([
      `${ID.azAdmins} -AZHasRole-> ${ID.azRole}`,
      `${ID.azAlice} -AZMemberOf-> ${ID.azAdmins}`,
    ])
    expect(rels(await azureRelatedGraph(admin, 'tenants', TENANT, 'descendent-virtual-machines'))).toEqual([
      `${ID.azSub} -AZContains-> ${ID.azVm}`,
      `${TENANT} -AZContains-> ${ID.azSub}`,
    ])
    expect(rels(await azureRelatedGraph(admin, 'key-vaults', ID.azKv, 'secret-readers'))).toEqual([`${ID.azSp} -AZGetSecrets-> ${ID.azKv}`])
  })

  it('environment access: out-of-environment nodes are neither shown nor traversed (graph and list agree)', async () => {
    const g = await adRelatedGraph(corpOnly, 'users', ID.alice, 'memberships')
    // SECRET (CORP) is reachable only through LAB OPS (LAB): absent along with it
    expect(rels(g)).toEqual([`${ID.alice} -MemberOf-> ${ID.helpdesk}`, `${ID.helpdesk} -MemberOf-> ${IT}`, `${IT} -MemberOf-> ${STAFF}`])
    expect(objectIds(g)).toEqual([ID.alice, ID.helpdesk, IT, STAFF].sort())
    expect(Object.values(g.nodes).some((n) => n.objectId.startsWith(LAB))).toBe(false)
    expect(names(await adRelated(corpOnly, 'users', ID.alice, 'memberships'))).toEqual(['ALL STAFF@CORP.LOCAL', 'HELPDESK@CORP.LOCAL', 'IT@CORP.LOCAL'])
    expect((await adEntity(corpOnly, 'users', ID.alice)).data).toMatchObject({ groupMembership: 3 })
    const admins = await adRelatedGraph(corpOnly, 'computers', ID.ws1, 'admin-users')
    expect(rels(admins)).toEqual([`${ID.alice} -MemberOf-> ${ID.helpdesk}`, `${ID.helpdesk} -AdminTo-> ${ID.ws1}`])
    await expectEnvelope(await corpOnly.raw('GET', `/api/v2/users/${ID.dave}/memberships?type=graph`), 404, 'node not found')
    await expectEnvelope(await corpOnly.raw('GET', `/api/v2/azure/users?object_id=${ID.azAlice}&related_entity_type=roles&type=graph`), 404, 'node not found')
  })

  it('malformed type → 400 with BloodHound messages; graph of a list not reached along relationships → 400; unknown list → 404', async () => {
    for (const t of ['count', 'GRAPH', 'table'])
      await expectEnvelope(
        await admin.raw('GET', `/api/v2/users/${ID.alice}/memberships?type=${t}`),
        400,
        'there are errors in the query parameters: unsupported result type for this query',
      )
    await expectEnvelope(
      await admin.raw('GET', `/api/v2/azure/users?object_id=${ID.azAlice}&related_entity_type=roles&type=count`),
      400,
      'query parameter "type" is malformed: invalid return type requested for related entities',
    )
    await expectEnvelope(
      await admin.raw('GET', `/api/v2/domains/${CORP}/users?type=graph`),
      400,
      "there are errors in the query parameters: type 'graph' is not supported for this endpoint",
    )
    await expectEnvelope(await admin.raw('GET', `/api/v2/users/${ID.alice}/not-a-list?type=graph`), 404)
    await expectEnvelope(
      await admin.raw('GET', `/api/v2/azure/users?object_id=${ID.azAlice}&related_entity_type=nope&type=graph`),
      404,
      'no matching related entity list type for nope',
    )
  })

  it('type=list (explicit or default) keeps the paginated shape', async () => {
    const explicit = await adRelated(admin, 'users', ID.alice, 'memberships', { limit: 2 })
    const res = await admin.raw('GET', `/api/v2/users/${ID.alice}/memberships?type=list&limit=2`)
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual(explicit)
    expect(explicit).toEqual({
      count: 5,
      skip: 0,
      limit: 2,
      data: [
        { objectID: STAFF, name: 'ALL STAFF@CORP.LOCAL', label: 'Group' },
        { objectID: ID.helpdesk, name: 'HELPDESK@CORP.LOCAL', label: 'Group' },
      ],
    })
    const az = await admin.raw('GET', `/api/v2/azure/users?object_id=${ID.azAlice}&related_entity_type=group-membership&type=list`)
    expect(await az.json()).toMatchObject({ count: 1, skip: 0, limit: 100, data: [{ kind: 'AZGroup' }] })
  })

  it(`bounded: more than ${RELATED_GRAPH_MAX_EDGES} relationships → the over-budget 400 naming the bound; the list still pages`, async () => {
    const BIG = `${CORP}-9000`
    const members = Array.from({ length: RELATED_GRAPH_MAX_EDGES + 1 }, (_, i) => ({
      id: `${CORP}-BIG-${i}`,
      kinds: ['User', 'Base'],
      properties: { name: `MEMBER${i}@CORP.LOCAL`, domainsid: CORP },
    }))
    await ingest(admin, {
      graph: {
        nodes: [{ id: BIG, kinds: ['Group', 'Base'], properties: { name: 'EVERYONE BIG@CORP.LOCAL', domainsid: CORP } }, ...members],
        edges: members.map((u) => ({ start: { value: u.id }, end: { value: BIG }, kind: 'MemberOf' })),
      },
    })
    const body = await expectEnvelope(await admin.raw('GET', `/api/v2/groups/${BIG}/members?type=graph`), 400)
    expect(body.errors).toEqual([
      {
        context: 'query.type',
        message: `the graph (more than ${RELATED_GRAPH_MAX_EDGES} relationships) exceeds the relationships per graph budget of ${RELATED_GRAPH_MAX_EDGES}: use type=list to page through the entities`,
      },
    ])
    expect((await adRelated(admin, 'groups', BIG, 'members', { limit: 1 })).count).toBe(RELATED_GRAPH_MAX_EDGES + 1)
    // and deep pages of a list are refused by the skip budget
    const deep = await expectEnvelope(await admin.raw('GET', `/api/v2/groups/${BIG}/members?skip=${RELATED_MAX_SKIP + 1}`), 400)
    expect(deep.errors).toEqual([{ context: 'query.skip', message: `skip exceeds the skip budget of ${RELATED_MAX_SKIP}: page with a larger limit (at most 10000)` }])
    expect((await adRelated(admin, 'groups', BIG, 'members', { skip: RELATED_MAX_SKIP })).data).toEqual([])
    // the store reads one relationship past the bound, never the whole set
    const e = { node: (await getNodeByObjectId(env.DB, BIG))!, access: null }
    const membersPlan = AD_ENTITY_TYPES.find((t) => t.segment === 'groups')!.lists.members
    const few = await relatedGraphEdges(env.DB, e, membersPlan, 10)
    expect([few.over, few.edges.length]).toEqual(['edges', 11])
    // Each step of the walk is cut inside the SQL at its row budget, whatever the edge budget allows:
    // the transitive step reaches 5,001 members, so a budget of 1,000 rows per step refuses the walk
    // (after visiting 1,000), while 10,000 rows per step lets the 5,001 relationships through.
    expect(await relatedGraphEdges(env.DB, e, membersPlan, 10_000, 1_000)).toEqual({ over: 'steps', edges: [] })
    const all = await relatedGraphEdges(env.DB, e, membersPlan, 10_000, 10_000)
    expect([all.over, all.edges.length]).toEqual([null, RELATED_GRAPH_MAX_EDGES + 1])
    // the SQL itself: every transitive step carries the LIMIT inside its recursion
    const { sql } = compilePlan(membersPlan, { paths: true, stepRows: 1_000, pathEdges: 11 })
    expect(sql).toMatch(/UNION SELECT e\.start_id FROM s1 JOIN edges e ON e\.end_id = s1\.id AND e\.kind IN \(SELECT value FROM json_each\(\?5\)\) LIMIT 1000\)/)
  })

  it('the OpenAPI document gives both shapes (list page and un-wrapped graph) where type=graph is served', async () => {
    const res = await admin.raw('GET', '/api/v2/spec')
    type Op = { responses: { 200: { content: { 'application/json': { schema: { anyOf?: { $ref?: string; properties?: Record<string, unknown> }[] } } } } } }
    const doc = (await res.json()) as { paths: Record<string, { get: Op }> }
    const shapes = (path: string) => doc.paths[path].get.responses[200].content['application/json'].schema.anyOf ?? []
    for (const path of ['/api/v2/users/{object_id}/memberships', '/api/v2/azure/{entity_type}']) {
      expect(shapes(path).some((s) => s.$ref?.endsWith('/RelatedEntityGraph')), path).toBe(true)
      expect(shapes(path).some((s) => s.properties && 'count' in s.properties && 'data' in s.properties), path).toBe(true)
    }
    expect(shapes('/api/v2/domains/{object_id}/users')).toEqual([]) // list only
  })

  it('every traversing plan compiles with its paths (restricted or not) and runs', async () => {
    const plans = [...AD_ENTITY_TYPES.flatMap((t) => Object.values(t.lists)), ...Object.values(AZ_RELATED)].filter(traverses)
    expect(plans.length).toBeGreaterThan(30)
    const node = (await getNodeByObjectId(env.DB, ID.helpdesk))!
    for (const access of [null, JSON.stringify([CORP])])
      for (const plan of plans) {
        const { edges } = await relatedGraphEdges(env.DB, { node, access }, plan, 100, RELATED_GRAPH_MAX_STEP_ROWS)
        for (const x of edges) expect(x).toMatchObject({ from: expect.any(Number), to: expect.any(Number), kind: expect.any(String), lastSeen: expect.any(String) })
      }
  })

  it('the backward pass of every traversing plan looks edges up by the end it walks from, never by the step\'s node list', async () => {
    // With the node list as an index constraint SQLite probed every node of a step for every node walked:
    // a domain's controllers at 1 M edges took 51 s in one statement (npm run bench:cost), 0.2 s without.
    const plans = [...AD_ENTITY_TYPES.flatMap((t) => Object.values(t.lists)), ...Object.values(AZ_RELATED)].filter(traverses)
    for (const plan of plans) {
      const { sql, params } = compilePlan(plan, { paths: true, stepRows: RELATED_GRAPH_MAX_STEP_ROWS, pathEdges: 11 })
      const { results } = await env.DB.prepare(`EXPLAIN QUERY PLAN ${sql} SELECT src FROM pe`)
        .bind(1, 'x', 'x', null, ...params)
        .all<{ detail: string }>()
      const lookups = results.map((r) => r.detail).filter((d) => /^SEARCH e USING/.test(d))
      expect(lookups.length).toBeGreaterThan(0)
      // an edge lookup keyed on all three columns has taken a step's node list as one of them
      for (const d of lookups) expect(d, JSON.stringify(plan)).not.toMatch(/\(\w+=\? AND kind=\? AND \w+=\?\)/)
    }
  })
})
