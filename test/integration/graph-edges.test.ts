/** GET /api/v2/graphs/edge-composition, /relay-targets and /acl-inheritance. */
import { beforeAll, describe, expect, it } from 'vitest'
import { adminToken, expectEnvelope, userWithRole } from '../helpers'
import type { EdgeHoundClient } from '../../src/client'
import { ingest } from '../../src/client/graph'

const CORP = 'S-1-5-21-3100'
const LAB = 'S-1-5-21-3200'
let admin: EdgeHoundClient
let corpOnly: EdgeHoundClient
const ids = new Map<string, string>()

type Unified = {
  data: {
    nodes: Record<string, { objectId: string; kind: string; label: string; properties: Record<string, unknown> }>
    edges: { source: string; target: string; kind: string; label: string; properties: Record<string, unknown> }[]
    literals: unknown[]
  }
}

const n = (id: string, kind: string, props: Record<string, unknown> = {}) => ({
  id,
  kinds: [kind, 'Base'],
  properties: { name: id, domainsid: id.startsWith('LAB') ? LAB : CORP, ...props },
})
const e = (s: string, kind: string, t: string, properties: Record<string, unknown> = {}) => ({ start: { value: s }, end: { value: t }, kind, properties })

/** `a -kind-> b` lines of a graph answer, sorted. */
const chain = (g: Unified) => g.data.edges.map((x) => `${g.data.nodes[x.source].objectId} ${x.kind} ${g.data.nodes[x.target].objectId}`).sort()
const q = (kind: string, s: string, t: string) => `edge_type=${kind}&source_node=${ids.get(s)}&target_node=${ids.get(t)}`

beforeAll(async () => {
  admin = await adminToken()
  await ingest(admin, {
    graph: {
      nodes: [
        { id: CORP, kinds: ['Domain', 'Base'], properties: { name: 'CORP3100.LOCAL', domainsid: CORP } },
        { id: LAB, kinds: ['Domain', 'Base'], properties: { name: 'LAB3200.LOCAL', domainsid: LAB } },
        // ESC1 and GoldenCert
        n('ESC-USER', 'User'),
        n('ESC-GROUP', 'Group'),
        n('TEMPLATE', 'CertTemplate'),
        n('ECA', 'EnterpriseCA', { hasvulnerableendpoint: true }),
        n('ROOTCA', 'RootCA'),
        n('NTAUTH', 'NTAuthStore'),
        n('CA-HOST', 'Computer'),
        n('BYSTANDER', 'User'),
        n('OTHER-TEMPLATE', 'CertTemplate'),
        // NTLM relay
        n('AU', 'Group'),
        n('VICTIM', 'Computer'),
        n('ADMINS', 'Group'),
        n('ADMIN-USER', 'User'),
        n('TARGET', 'Computer'),
        n('DC-LDAP', 'Computer', { isdc: true, ldapsigning: false, ldapavailable: true }),
        n('DC-SIGNED', 'Computer', { isdc: true, ldapsigning: true, ldapavailable: true }),
        n('LAB-DC', 'Computer', { isdc: true, ldapsigning: false, ldapavailable: true }),
        // ACL inheritance
        n('OU-TOP', 'OU', { inheritancehashes: ['HASH-1', 'HASH-9'] }),
        n('OU-MID', 'OU', { inheritancehashes: ['HASH-2'] }),
        n('ACL-TARGET', 'User'),
        n('ACL-HOLDER', 'Group'),
        n('LAB-ATTACKER', 'User'),
      ],
      edges: [
        e('ESC-USER', 'MemberOf', 'ESC-GROUP'),
        e('ESC-GROUP', 'Enroll', 'TEMPLATE'),
        e('TEMPLATE', 'PublishedTo', 'ECA'),
        e('ESC-GROUP', 'Enroll', 'ECA'),
        e('ECA', 'IssuedSignedBy', 'ROOTCA'),
        e('ROOTCA', 'RootCAFor', CORP),
        e('ECA', 'TrustedForNTAuth', 'NTAUTH'),
        e('NTAUTH', 'NTAuthStoreFor', CORP),
        e('CA-HOST', 'HostsCAService', 'ECA'),
        e('BYSTANDER', 'Enroll', 'OTHER-TEMPLATE'),
        e('ESC-USER', 'ADCSESC1', CORP),
        e('CA-HOST', 'GoldenCert', CORP),
        e('ESC-USER', 'MemberOf', 'ADMINS'),
        // SMB: a computer member of a group holding AdminTo on the target; a user member does not count
        e('VICTIM', 'MemberOf', 'ADMINS'),
        e('ADMIN-USER', 'MemberOf', 'ADMINS'),
        e('ADMINS', 'AdminTo', 'TARGET'),
        e('AU', 'CoerceAndRelayNTLMToSMB', 'TARGET'),
        e('AU', 'CoerceAndRelayNTLMToLDAP', 'VICTIM'),
        e('AU', 'CoerceAndRelayNTLMToADCS', 'VICTIM'),
        // ACL inheritance: CORP contains OU-TOP contains OU-MID contains ACL-TARGET
        e(CORP, 'Contains', 'OU-TOP'),
        e('OU-TOP', 'Contains', 'OU-MID'),
        e('OU-MID', 'Contains', 'ACL-TARGET'),
        e('ACL-HOLDER', 'GenericAll', 'ACL-TARGET', { isacl: true, isinherited: true, inheritancehash: 'HASH-1' }),
        e('ACL-HOLDER', 'GenericWrite', 'ACL-TARGET', { isacl: true, isinherited: false, inheritancehash: '' }),
        e('ACL-HOLDER', 'WriteDacl', 'ACL-TARGET', { isacl: true, isinherited: true, inheritancehash: 'HASH-UNKNOWN' }),
        e('LAB-ATTACKER', 'GenericAll', 'ACL-TARGET', { isacl: true, isinherited: true, inheritancehash: 'HASH-1' }),
      ],
    },
  })
  for (const id of ['ESC-USER', 'CA-HOST', 'AU', 'VICTIM', 'TARGET', 'ACL-HOLDER', 'ACL-TARGET', 'LAB-ATTACKER', 'BYSTANDER', 'ESC-GROUP', CORP]) {
    const r = await admin.call<{ data: Record<string, unknown> }>('GET', `/api/v2/graph-search?query=${encodeURIComponent(id)}&type=exact`)
    ids.set(id, Object.keys(r.data)[0])
  }
  corpOnly = (await userWithRole('Read-Only', { all_environments: false, environment_access: [CORP] })).client
})

describe('GET /api/v2/graphs/edge-composition', () => {
  it('ADCSESC1: the enrolment and certificate-chain relationships from the source to the domain', async () => {
    const r = await admin.call<Unified>('GET', `/api/v2/graphs/edge-composition?${q('ADCSESC1', 'ESC-USER', CORP)}`)
    expect(chain(r)).toEqual(
      [
        `ESC-USER MemberOf ESC-GROUP`,
        `ESC-GROUP Enroll TEMPLATE`,
        `ESC-GROUP Enroll ECA`,
        `TEMPLATE PublishedTo ECA`,
        `ECA IssuedSignedBy ROOTCA`,
        `ROOTCA RootCAFor ${CORP}`,
        `ECA TrustedForNTAuth NTAUTH`,
        `NTAUTH NTAuthStoreFor ${CORP}`,
      ].sort(),
    )
    expect(r.data.literals).toEqual([])
    const user = Object.values(r.data.nodes).find((x) => x.objectId === 'ESC-USER')!
    expect(user).toMatchObject({ kind: 'User', label: 'ESC-USER', properties: { objectid: 'ESC-USER', domainsid: CORP } })
    // the composite relationship itself and unrelated ones are not part of it
    expect(chain(r).some((l) => l.includes('ADCSESC1') || l.includes('BYSTANDER') || l.includes('ADMINS'))).toBe(false)
  })

  it('GoldenCert: the CA host, the CA and its chains to the domain', async () => {
    const r = await admin.call<Unified>('GET', `/api/v2/graphs/edge-composition?${q('GoldenCert', 'CA-HOST', CORP)}`)
    expect(chain(r)).toEqual(
      [`CA-HOST HostsCAService ECA`, `ECA IssuedSignedBy ROOTCA`, `ROOTCA RootCAFor ${CORP}`, `ECA TrustedForNTAuth NTAUTH`, `NTAUTH NTAuthStoreFor ${CORP}`].sort(),
    )
  })

  it('CoerceAndRelayNTLMToSMB: the computers’ AdminTo on the target (user members left out)', async () => {
    const r = await admin.call<Unified>('GET', `/api/v2/graphs/edge-composition?${q('CoerceAndRelayNTLMToSMB', 'AU', 'TARGET')}`)
    expect(chain(r)).toEqual(['ADMINS AdminTo TARGET', 'VICTIM MemberOf ADMINS'])
  })

  it('a relationship without composition answers an empty graph; a missing one 404', async () => {
    expect(await admin.call<Unified>('GET', `/api/v2/graphs/edge-composition?${q('MemberOf', 'ESC-USER', 'ESC-GROUP')}`)).toEqual({ data: { nodes: {}, edges: [], literals: [] } })
    await expectEnvelope(await admin.raw('GET', `/api/v2/graphs/edge-composition?${q('ADCSESC1', 'BYSTANDER', CORP)}`), 404, 'Could not find edge matching criteria')
  })

  it('refuses bad parameters with BloodHound’s messages, in its order', async () => {
    const bad = async (query: string, status: number, message: string) =>
      expectEnvelope(await admin.raw('GET', `/api/v2/graphs/edge-composition?${query}`), status, message)
    await bad('', 400, 'Expected edge_type parameter to be set.')
    await bad('edge_type=ADCSESC1', 400, 'Expected source_node parameter to be set.')
    await bad('edge_type=ADCSESC1&source_node=1', 400, 'Expected target_node parameter to be set.')
    await bad('edge_type=ADCSESC1&edge_type=GoldenCert&source_node=1&target_node=2', 400, 'Expected only one edge_type.')
    await bad('edge_type=ADCSESC1&source_node=1&source_node=2&target_node=2', 400, 'Expected only one source_node.')
    await bad('edge_type=ADCSESC1&source_node=1&target_node=2&target_node=3', 400, 'Expected only one target_node.')
    await bad('edge_type=LOREMIPSUM&source_node=1&target_node=2', 400, 'Invalid edge requested: LOREMIPSUM')
    await bad('edge_type=ADCSESC1&source_node=GABAGOOL&target_node=2', 400, 'Invalid value for startID: GABAGOOL')
    await bad('edge_type=ADCSESC1&source_node=1.67&target_node=2', 400, 'Invalid value for startID: 1.67')
    await bad('edge_type=ADCSESC1&source_node=1&target_node=99999999999999999999', 400, 'Invalid value for endID: 99999999999999999999')
    await bad('edge_type=ADCSESC1&source_node=1&target_node=2', 404, 'not found')
  })

  it('a restricted caller: an end in a hidden environment is absent', async () => {
    const hidden = await expectEnvelope(await corpOnly.raw('GET', `/api/v2/graphs/edge-composition?${q('GenericAll', 'LAB-ATTACKER', 'ACL-TARGET')}`), 404)
    const absent = await expectEnvelope(await corpOnly.raw('GET', `/api/v2/graphs/edge-composition?edge_type=GenericAll&source_node=12345&target_node=${ids.get('ACL-TARGET')}`), 404)
    expect(hidden.errors).toEqual(absent.errors)
    expect(chain(await corpOnly.call<Unified>('GET', `/api/v2/graphs/edge-composition?${q('ADCSESC1', 'ESC-USER', CORP)}`))).toHaveLength(8)
  })

  it('needs graph/Read', async () => {
    await expectEnvelope(await (await userWithRole('Upload-Only')).client.raw('GET', `/api/v2/graphs/edge-composition?${q('ADCSESC1', 'ESC-USER', CORP)}`), 403)
  })
})

describe('GET /api/v2/graphs/relay-targets', () => {
  const targets = (r: Unified) => Object.values(r.data.nodes).map((x) => x.objectId).sort()

  it('SMB: the target computer; LDAP: the domain’s relayable DCs; ADCS: the vulnerable enterprise CAs', async () => {
    expect(targets(await admin.call<Unified>('GET', `/api/v2/graphs/relay-targets?${q('CoerceAndRelayNTLMToSMB', 'AU', 'TARGET')}`))).toEqual(['TARGET'])
    const ldap = await admin.call<Unified>('GET', `/api/v2/graphs/relay-targets?${q('CoerceAndRelayNTLMToLDAP', 'AU', 'VICTIM')}`)
    expect(targets(ldap)).toEqual(['DC-LDAP'])
    expect(ldap.data.edges).toEqual([])
    expect(targets(await admin.call<Unified>('GET', `/api/v2/graphs/relay-targets?${q('CoerceAndRelayNTLMToADCS', 'AU', 'VICTIM')}`))).toEqual(['ECA'])
  })

  it('refuses a relationship that is not a relay, and a missing one', async () => {
    await expectEnvelope(await admin.raw('GET', `/api/v2/graphs/relay-targets?${q('MemberOf', 'ESC-USER', 'ESC-GROUP')}`), 400, 'Invalid edge requested: MemberOf')
    await expectEnvelope(await admin.raw('GET', `/api/v2/graphs/relay-targets?${q('CoerceAndRelayNTLMToLDAPS', 'AU', 'VICTIM')}`), 404, 'Could not find edge matching criteria')
    await expectEnvelope(await admin.raw('GET', '/api/v2/graphs/relay-targets'), 400, 'Expected edge_type parameter to be set.')
    await expectEnvelope(await admin.raw('GET', '/api/v2/graphs/relay-targets?edge_type=CoerceAndRelayNTLMToSMB&source_node=x&target_node=1'), 400, 'Invalid value for startID: x')
  })

  it('a restricted caller: hidden ends are absent', async () => {
    const hidden = await expectEnvelope(await corpOnly.raw('GET', `/api/v2/graphs/relay-targets?edge_type=CoerceAndRelayNTLMToSMB&source_node=${ids.get('LAB-ATTACKER')}&target_node=${ids.get('TARGET')}`), 404)
    const absent = await expectEnvelope(await corpOnly.raw('GET', `/api/v2/graphs/relay-targets?edge_type=CoerceAndRelayNTLMToSMB&source_node=777&target_node=${ids.get('TARGET')}`), 404)
    expect(hidden.errors).toEqual(absent.errors)
    expect(targets(await corpOnly.call<Unified>('GET', `/api/v2/graphs/relay-targets?${q('CoerceAndRelayNTLMToSMB', 'AU', 'TARGET')}`))).toEqual(['TARGET'])
  })

  it('needs graph/Read', async () => {
    await expectEnvelope(await (await userWithRole('Upload-Only')).client.raw('GET', `/api/v2/graphs/relay-targets?${q('CoerceAndRelayNTLMToSMB', 'AU', 'TARGET')}`), 403)
  })
})

describe('GET /api/v2/graphs/acl-inheritance', () => {
  it('the containers from the target up to the one whose inheritancehashes hold the ACE’s hash, with the ACE', async () => {
    const r = await admin.call<Unified>('GET', `/api/v2/graphs/acl-inheritance?${q('GenericAll', 'ACL-HOLDER', 'ACL-TARGET')}`)
    expect(chain(r)).toEqual(['ACL-HOLDER GenericAll ACL-TARGET', 'OU-MID Contains ACL-TARGET', 'OU-TOP Contains OU-MID'])
    expect(r.data.edges.find((x) => x.kind === 'GenericAll')!.properties).toMatchObject({ isinherited: true, inheritancehash: 'HASH-1' })
  })

  it('an ACE that is not inherited, or whose origin is unknown, answers an empty graph', async () => {
    const empty = { data: { nodes: {}, edges: [], literals: [] } }
    expect(await admin.call<Unified>('GET', `/api/v2/graphs/acl-inheritance?${q('GenericWrite', 'ACL-HOLDER', 'ACL-TARGET')}`)).toEqual(empty)
    expect(await admin.call<Unified>('GET', `/api/v2/graphs/acl-inheritance?${q('WriteDacl', 'ACL-HOLDER', 'ACL-TARGET')}`)).toEqual(empty)
  })

  it('a restricted caller: an ACE from a hidden environment is absent', async () => {
    expect(chain(await admin.call<Unified>('GET', `/api/v2/graphs/acl-inheritance?${q('GenericAll', 'LAB-ATTACKER', 'ACL-TARGET')}`))).toHaveLength(3)
    const hidden = await expectEnvelope(await corpOnly.raw('GET', `/api/v2/graphs/acl-inheritance?${q('GenericAll', 'LAB-ATTACKER', 'ACL-TARGET')}`), 404)
    const absent = await expectEnvelope(await corpOnly.raw('GET', `/api/v2/graphs/acl-inheritance?edge_type=GenericAll&source_node=4242&target_node=${ids.get('ACL-TARGET')}`), 404)
    expect(hidden.errors).toEqual(absent.errors)
    expect(chain(await corpOnly.call<Unified>('GET', `/api/v2/graphs/acl-inheritance?${q('GenericAll', 'ACL-HOLDER', 'ACL-TARGET')}`))).toHaveLength(3)
  })

  it('needs graph/Read', async () => {
    await expectEnvelope(await (await userWithRole('Upload-Only')).client.raw('GET', `/api/v2/graphs/acl-inheritance?${q('GenericAll', 'ACL-HOLDER', 'ACL-TARGET')}`), 403)
  })
})
