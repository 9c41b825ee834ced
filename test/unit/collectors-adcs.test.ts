/**
 * ADCS post-processing rules (src/collectors/adcs.ts), relationship by relationship, on small graphs built
 * here. Expected edges are worked out by hand from the rules (BloodHound's adcs.go / esc*.go), with the
 * negative case next to each positive one.
 */
import { describe, expect, it } from 'vitest'
import { caOpenToEsc16, crossProductNodeSets, deriveAdcs, Membership, validForAdcsRelay, validForEsc16, type AdcsEdge, type AdcsNode, type AdcsResult, type Props } from '../../src/collectors/adcs'

const CRA = '1.3.6.1.4.1.311.20.2.1'
const CLIENT_AUTH = '1.3.6.1.5.5.7.3.2'
const SID = 'S-1-5-21-1-2-3'

class Graph {
  nodes: AdcsNode[] = []
  edges: AdcsEdge[] = []
  private ids = new Map<string, number>()
  node(objectid: string, kind: string, props: Props = {}): string {
    const id = this.nodes.length + 1
    this.ids.set(objectid, id)
    this.nodes.push({ id, objectid, kinds: [kind, 'Base'], props: { domainsid: SID, ...props } })
    return objectid
  }
  edge(s: string, kind: string, t: string): this {
    this.edges.push({ start: this.id(s), end: this.id(t), kind })
    return this
  }
  id(o: string): number {
    const i = this.ids.get(o)
    if (i === undefined) throw new Error(`no node ${o}`)
    return i
  }
  props(o: string): Props {
    return this.nodes[this.id(o) - 1].props
  }
  name(id: number): string {
    return this.nodes[id - 1].objectid
  }
  run(): AdcsResult {
    return deriveAdcs({ nodes: this.nodes, edges: this.edges })
  }
  /** `start->end` of every derived relationship of a kind, sorted */
  derived(kind: string, r = this.run()): string[] {
    return (r.pairs.get(kind) ?? []).map(([s, t]) => `${this.name(s)}->${this.name(t)}`).sort()
  }
  victims(kind: string, r = this.run()): string[] {
    return (r.attackerRules.find((x) => x.kind === kind)?.victims ?? []).map(([s, t]) => `${this.name(s)}->${this.name(t)}`).sort()
  }
}

/** An ESC1-vulnerable template (schema 2, no signature, no approval, authentication, enrollee supplies subject). */
const ESC1: Props = {
  requiresmanagerapproval: false,
  authenticationenabled: true,
  enrolleesuppliessubject: true,
  schemaversion: 2,
  authorizedsignatures: 0,
  subjectaltrequiredns: false,
  subjectaltrequiredomaindns: false,
  effectiveekus: [CLIENT_AUTH],
}

/**
 * A domain with a root CA (RootCAFor), an NTAuth store (NTAuthStoreFor) trusting the enterprise CA's
 * certificate, the enterprise CA (signed by the root) hosted on an enabled computer, a user U in group G,
 * Authenticated Users, and template T (ESC1 properties) published to the CA.
 */
function lab(templateProps: Props = ESC1): Graph {
  const g = new Graph()
  g.node('D', 'Domain', { domainsid: SID })
  g.node('ROOT', 'RootCA', { certthumbprint: 'R1', certchain: ['R1'] })
  g.node('STORE', 'NTAuthStore', { certthumbprints: ['E1'] })
  g.node('ECA', 'EnterpriseCA', { certthumbprint: 'E1', certchain: ['E1', 'R1'], isuserspecifiessanenabledcollected: true, isuserspecifiessanenabled: false, enrollmentagentrestrictionscollected: false })
  g.node('HOST', 'Computer', { enabled: true })
  g.node('U', 'User', { enabled: true })
  g.node('G', 'Group')
  g.node('AU', 'Group')
  g.nodes[g.id('AU') - 1].objectid = 'LAB.LOCAL-S-1-5-11'
  g.node('T', 'CertTemplate', templateProps)
  g.edge('ROOT', 'RootCAFor', 'D').edge('STORE', 'NTAuthStoreFor', 'D').edge('HOST', 'HostsCAService', 'ECA')
  g.edge('U', 'MemberOf', 'G').edge('T', 'PublishedTo', 'ECA')
  return g
}
const AU = 'LAB.LOCAL-S-1-5-11'

describe('ADCS certificate relationships and the chain to a domain', () => {
  it('IssuedSignedBy, TrustedForNTAuth, EnterpriseCAFor (root and AIA CA with the same certificate)', () => {
    const g = lab()
    g.node('AIA', 'AIACA', { certthumbprint: 'E1', certchain: ['E1', 'R1'] })
    g.node('ROOT2', 'RootCA', { certthumbprint: 'E1' })
    const r = g.run()
    expect(g.derived('IssuedSignedBy', r)).toEqual(['AIA->ROOT', 'ECA->ROOT'])
    expect(g.derived('TrustedForNTAuth', r)).toEqual(['ECA->STORE'])
    expect(g.derived('EnterpriseCAFor', r)).toEqual(['ECA->AIA', 'ECA->ROOT2'])
  })

  it('GoldenCert: the hosting computer → every domain the CA chains to', () => {
    expect(lab().derived('GoldenCert')).toEqual(['HOST->D'])
  })

  it('no chain, no ADCS relationship: CA not in the NTAuth store, root not RootCAFor, CA not hosted by an enabled computer', () => {
    const untrusted = lab()
    untrusted.props('STORE').certthumbprints = ['OTHER']
    untrusted.edge('G', 'Enroll', 'T').edge('G', 'Enroll', 'ECA')
    expect(untrusted.derived('GoldenCert')).toEqual([])
    expect(untrusted.derived('ADCSESC1')).toEqual([])

    const noRoot = lab()
    noRoot.edges = noRoot.edges.filter((e) => e.kind !== 'RootCAFor')
    expect(noRoot.derived('GoldenCert')).toEqual([])

    const disabled = lab()
    disabled.props('HOST').enabled = false
    disabled.edge('G', 'Enroll', 'T').edge('G', 'Enroll', 'ECA')
    expect(disabled.derived('GoldenCert')).toEqual([])
    expect(disabled.derived('ADCSESC1')).toEqual([])
  })

  it('the chain must be rooted: a CA that is itself RootCAFor the domain does not chain', () => {
    const g = lab()
    g.node('ECA2', 'EnterpriseCA', { certthumbprint: 'E2' })
    g.props('STORE').certthumbprints = ['E1', 'E2']
    g.node('HOST2', 'Computer', { enabled: true })
    g.edge('HOST2', 'HostsCAService', 'ECA2').edge('ECA2', 'RootCAFor', 'D')
    expect(g.derived('GoldenCert')).toEqual(['HOST->D'])
  })
})

describe('cross product of first-degree rights (CalculateCrossProductNodeSets)', () => {
  const m = (g: Graph) => new Membership(new Map(g.nodes.map((n) => [n.id, n])), g.edges)
  const names = (g: Graph, s: Set<number>) => [...s].map((i) => g.name(i)).sort()

  it('a group holding both is reported, not its members; a member holding them through two groups is reported itself', () => {
    const g = lab()
    g.node('G2', 'Group')
    g.edge('U', 'MemberOf', 'G2')
    expect(names(g, crossProductNodeSets(m(g), [[g.id('G')], [g.id('G')]]))).toEqual(['G'])
    expect(names(g, crossProductNodeSets(m(g), [[g.id('G')], [g.id('G2')]]))).toEqual(['U'])
  })

  it('nested groups: the innermost group holding the other right is reported', () => {
    const g = lab()
    g.node('OUTER', 'Group')
    g.edge('G', 'MemberOf', 'OUTER')
    expect(names(g, crossProductNodeSets(m(g), [[g.id('OUTER')], [g.id('G')]]))).toEqual(['G'])
  })

  it('Authenticated Users stands for everyone: the other set is the result; both: the union', () => {
    const g = lab()
    expect(names(g, crossProductNodeSets(m(g), [[g.id('U')], [g.id('AU')]]))).toEqual(['U'])
    expect(names(g, crossProductNodeSets(m(g), [[g.id('AU')], [g.id('AU')]]))).toEqual([AU])
    // a group that has Authenticated Users as a member counts as it
    g.node('WIDE', 'Group')
    g.edge('AU', 'MemberOf', 'WIDE')
    expect(names(g, crossProductNodeSets(m(g), [[g.id('G')], [g.id('WIDE')]]))).toEqual(['G'])
  })
})

describe('ADCSESC1', () => {
  it('enrollment on the template and the CA: the group holding both, a user holding them through different ways', () => {
    const g = lab()
    g.edge('G', 'Enroll', 'T').edge('G', 'Enroll', 'ECA')
    expect(g.derived('ADCSESC1')).toEqual(['G->D'])
    const h = lab()
    h.edge('U', 'GenericAll', 'T').edge('G', 'Enroll', 'ECA')
    expect(h.derived('ADCSESC1')).toEqual(['U->D'])
  })

  it('AllExtendedRights on the template counts; Authenticated Users on the CA leaves the template enrollers', () => {
    const g = lab()
    g.edge('U', 'AllExtendedRights', 'T').edge('AU', 'Enroll', 'ECA')
    expect(g.derived('ADCSESC1')).toEqual(['U->D'])
  })

  it.each([
    ['manager approval on', { requiresmanagerapproval: true }],
    ['no authentication EKU', { authenticationenabled: false }],
    ['enrollee does not supply the subject', { enrolleesuppliessubject: false }],
    ['schema 2 with an authorized signature', { authorizedsignatures: 1 }],
    ['a property missing', { enrolleesuppliessubject: undefined }],
  ])('not with %s', (_, over) => {
    const g = lab({ ...ESC1, ...over })
    g.edge('G', 'Enroll', 'T').edge('G', 'Enroll', 'ECA')
    expect(g.derived('ADCSESC1')).toEqual([])
  })

  it('schema 1 ignores authorized signatures; an unpublished template or enrollment on one side only gives nothing', () => {
    const v1 = lab({ ...ESC1, schemaversion: 1, authorizedsignatures: 1 })
    v1.edge('G', 'Enroll', 'T').edge('G', 'Enroll', 'ECA')
    expect(v1.derived('ADCSESC1')).toEqual(['G->D'])
    const unpublished = lab()
    unpublished.edges = unpublished.edges.filter((e) => e.kind !== 'PublishedTo')
    unpublished.edge('G', 'Enroll', 'T').edge('G', 'Enroll', 'ECA')
    expect(unpublished.derived('ADCSESC1')).toEqual([])
    const oneSide = lab()
    oneSide.edge('G', 'Enroll', 'T')
    expect(oneSide.derived('ADCSESC1')).toEqual([])
  })
})

describe('EnrollOnBehalfOf and ADCSESC3', () => {
  /** AGENT: a schema 2 enrollment agent template; TARGET: a schema 2 template requiring the agent's signature. */
  function agentLab(): Graph {
    const g = lab()
    g.node('AGENT', 'CertTemplate', { requiresmanagerapproval: false, schemaversion: 2, authorizedsignatures: 0, effectiveekus: [CRA], subjectaltrequiredns: false, subjectaltrequiredomaindns: false })
    g.node('TARGET', 'CertTemplate', {
      requiresmanagerapproval: false, authenticationenabled: true, schemaversion: 2, authorizedsignatures: 1, applicationpolicies: [CRA], effectiveekus: [CLIENT_AUTH],
    })
    g.edge('AGENT', 'PublishedTo', 'ECA').edge('TARGET', 'PublishedTo', 'ECA')
    g.edge('G', 'Enroll', 'AGENT').edge('G', 'Enroll', 'TARGET').edge('G', 'Enroll', 'ECA')
    return g
  }

  it('schema 2: agent template → template requiring one agent signature with the agent application policy', () => {
    const g = agentLab()
    expect(g.derived('EnrollOnBehalfOf')).toEqual(['AGENT->TARGET'])
    expect(g.derived('ADCSESC3')).toEqual(['G->D'])
  })

  it('schema 1: an agent (or any purpose, or no EKU) template → every schema 1 template linked to the domain', () => {
    const g = lab({ ...ESC1, schemaversion: 1 })
    g.node('ANY', 'CertTemplate', { schemaversion: 2, authorizedsignatures: 0, effectiveekus: [] })
    g.edge('ANY', 'PublishedTo', 'ECA')
    // T itself (client authentication only) is no agent template
    expect(g.derived('EnrollOnBehalfOf')).toEqual(['ANY->T'])
    g.props('T').effectiveekus = [CRA]
    expect(g.derived('EnrollOnBehalfOf')).toEqual(['ANY->T', 'T->T'])
  })

  it('not: an any-purpose agent for schema 2, no signature required, enrollment missing on the agent template', () => {
    const anyPurpose = agentLab()
    anyPurpose.props('AGENT').effectiveekus = [CRA, '2.5.29.37.0']
    expect(anyPurpose.derived('EnrollOnBehalfOf')).toEqual([])
    const noSig = agentLab()
    noSig.props('TARGET').authorizedsignatures = 0
    expect(noSig.derived('EnrollOnBehalfOf')).toEqual([])
    const noEnroll = agentLab()
    noEnroll.edges = noEnroll.edges.filter((e) => !(e.kind === 'Enroll' && noEnroll.name(e.end) === 'AGENT'))
    expect(noEnroll.derived('ADCSESC3')).toEqual([])
  })

  it('enrollment agent restrictions on the CA: only delegated agents', () => {
    const g = agentLab()
    Object.assign(g.props('ECA'), { enrollmentagentrestrictionscollected: true, hasenrollmentagentrestrictions: true })
    expect(g.derived('ADCSESC3')).toEqual([])
    g.edge('U', 'DelegatedEnrollmentAgent', 'TARGET')
    expect(g.derived('ADCSESC3')).toEqual(['U->D'])
    const unknown = agentLab()
    delete unknown.props('ECA').enrollmentagentrestrictionscollected
    expect(unknown.derived('ADCSESC3')).toEqual([])
  })

  it('the agent template requiring a DNS name drops plain users', () => {
    const g = agentLab()
    g.edges = g.edges.filter((e) => e.kind !== 'Enroll')
    g.edge('U', 'Enroll', 'AGENT').edge('U', 'Enroll', 'TARGET').edge('U', 'Enroll', 'ECA')
    expect(g.derived('ADCSESC3')).toEqual(['U->D'])
    g.props('AGENT').subjectaltrequiredns = true
    expect(g.derived('ADCSESC3')).toEqual([])
  })
})

describe('ADCSESC4', () => {
  const plain: Props = { ...ESC1, enrolleesuppliessubject: false, requiresmanagerapproval: true }

  it('controllers of a published template who can enroll on the CA (Owns, GenericAll, WriteDacl, WriteOwner)', () => {
    for (const right of ['Owns', 'OwnsRaw', 'GenericAll', 'WriteDacl', 'WriteOwner']) {
      const g = lab(plain)
      g.edge('U', right, 'T').edge('U', 'Enroll', 'ECA')
      expect(g.derived('ADCSESC4'), right).toEqual(['U->D'])
    }
  })

  it('GenericWrite with Enroll; the PKI flag combinations on a valid template', () => {
    const gw = lab(plain)
    gw.edge('U', 'GenericWrite', 'T').edge('U', 'Enroll', 'T').edge('U', 'Enroll', 'ECA')
    expect(gw.derived('ADCSESC4')).toEqual(['U->D'])
    const both = lab(plain)
    both.edge('U', 'WritePKINameFlag', 'T').edge('U', 'WritePKIEnrollmentFlag', 'T').edge('U', 'Enroll', 'T').edge('U', 'Enroll', 'ECA')
    expect(both.derived('ADCSESC4')).toEqual(['U->D'])
    // name flag alone needs no manager approval; enrollment flag alone needs the enrollee to supply the subject
    const name = lab({ ...plain, requiresmanagerapproval: false })
    name.edge('U', 'WritePKINameFlag', 'T').edge('U', 'Enroll', 'T').edge('U', 'Enroll', 'ECA')
    expect(name.derived('ADCSESC4')).toEqual(['U->D'])
    const nameApproval = lab(plain)
    nameApproval.edge('U', 'WritePKINameFlag', 'T').edge('U', 'Enroll', 'T').edge('U', 'Enroll', 'ECA')
    expect(nameApproval.derived('ADCSESC4')).toEqual([])
    const enrollmentFlag = lab({ ...plain, enrolleesuppliessubject: true })
    enrollmentFlag.edge('U', 'WritePKIEnrollmentFlag', 'T').edge('U', 'Enroll', 'T').edge('U', 'Enroll', 'ECA')
    expect(enrollmentFlag.derived('ADCSESC4')).toEqual(['U->D'])
  })

  it('not: flags on a template without authentication; control without enrollment on the CA', () => {
    const noAuth = lab({ ...plain, authenticationenabled: false, requiresmanagerapproval: false })
    noAuth.edge('U', 'WritePKINameFlag', 'T').edge('U', 'Enroll', 'T').edge('U', 'Enroll', 'ECA')
    expect(noAuth.derived('ADCSESC4')).toEqual([])
    const noCa = lab(plain)
    noCa.edge('U', 'GenericAll', 'T')
    expect(noCa.derived('ADCSESC4')).toEqual([])
  })
})

describe('ADCSESC6a / ADCSESC6b', () => {
  const esc6: Props = { ...ESC1, enrolleesuppliessubject: false, nosecurityextension: true }
  function sanLab(p: Props = esc6, cmm?: number): Graph {
    const g = lab(p)
    Object.assign(g.props('ECA'), { isuserspecifiessanenabled: true })
    g.node('DC', 'Computer', cmm === undefined ? {} : { certificatemappingmethodsraw: cmm })
    g.edge('DC', 'DCFor', 'D').edge('U', 'Enroll', 'T').edge('U', 'Enroll', 'ECA')
    return g
  }

  it('6a: the CA lets the requester name the SAN, the template has no security extension', () => {
    expect(sanLab().derived('ADCSESC6a')).toEqual(['U->D'])
    expect(sanLab({ ...esc6, nosecurityextension: false }).derived('ADCSESC6a')).toEqual([])
    const off = sanLab()
    off.props('ECA').isuserspecifiessanenabled = false
    expect(off.derived('ADCSESC6a')).toEqual([])
    const notCollected = sanLab()
    notCollected.props('ECA').isuserspecifiessanenabledcollected = false
    expect(notCollected.derived('ADCSESC6a')).toEqual([])
  })

  it('6b: Schannel authentication and a DC of the forest mapping certificates by UPN', () => {
    expect(sanLab(esc6, 4).derived('ADCSESC6b')).toEqual(['U->D'])
    expect(sanLab(esc6, 0x1c).derived('ADCSESC6b')).toEqual(['U->D'])
    expect(sanLab(esc6, 3).derived('ADCSESC6b')).toEqual([])
    expect(sanLab(esc6, -1).derived('ADCSESC6b')).toEqual([])
    expect(sanLab(esc6).derived('ADCSESC6b')).toEqual([])
    // a DC of another domain of the same forest counts
    const forest = sanLab(esc6)
    forest.node('CHILD', 'Domain')
    forest.node('DC2', 'Computer', { certificatemappingmethodsraw: 4 })
    forest.edge('DC2', 'DCFor', 'CHILD').edge('CHILD', 'SameForestTrust', 'D')
    expect(forest.derived('ADCSESC6b')).toEqual(['U->D'])
    // only domains with a SameForestTrust path TO the domain count (BloodHound walks it inbound)
    const oneWay = sanLab(esc6)
    oneWay.node('OTHERD', 'Domain')
    oneWay.node('DC3', 'Computer', { certificatemappingmethodsraw: 4 })
    oneWay.edge('DC3', 'DCFor', 'OTHERD').edge('D', 'SameForestTrust', 'OTHERD')
    expect(oneWay.derived('ADCSESC6b')).toEqual([])
    // no client authentication EKU (and no schannel property): not 6b
    expect(sanLab({ ...esc6, effectiveekus: ['1.3.6.1.5.5.7.3.4'] }, 4).derived('ADCSESC6b')).toEqual([])
  })

  it('users are dropped when the template requires a DNS name; computers and gMSAs stay', () => {
    const g = sanLab({ ...esc6, subjectaltrequiredns: true })
    g.node('GMSA', 'User', { gmsa: true })
    g.node('PC', 'Computer')
    g.edge('GMSA', 'Enroll', 'T').edge('GMSA', 'Enroll', 'ECA').edge('PC', 'Enroll', 'T').edge('PC', 'Enroll', 'ECA')
    expect(g.derived('ADCSESC6a')).toEqual(['GMSA->D', 'PC->D'])
  })
})

describe('ADCSESC9a/9b and ADCSESC10a/10b: victims (the attackers are found in SQL)', () => {
  const esc9: Props = { ...ESC1, enrolleesuppliessubject: false, nosecurityextension: true, subjectaltrequireupn: true, subjectaltrequirespn: false }
  function victimLab(p: Props, dc: Props): Graph {
    const g = lab(p)
    g.node('DC', 'Computer', dc)
    g.node('PC', 'Computer')
    g.edge('DC', 'DCFor', 'D').edge('G', 'Enroll', 'T').edge('G', 'Enroll', 'ECA').edge('PC', 'MemberOf', 'G')
    return g
  }

  it('9a: a weak certificate binding on a DC of the forest; victims are the enrollers, groups expanded', () => {
    for (const sbe of [0, 1, -1]) expect(victimLab(esc9, { strongcertificatebindingenforcementraw: sbe }).victims('ADCSESC9a'), String(sbe)).toEqual(['PC->D', 'U->D'])
    expect(victimLab(esc9, { strongcertificatebindingenforcementraw: 2 }).victims('ADCSESC9a')).toEqual([])
    expect(victimLab({ ...esc9, nosecurityextension: false }, { strongcertificatebindingenforcementraw: 1 }).victims('ADCSESC9a')).toEqual([])
    expect(victimLab({ ...esc9, subjectaltrequireupn: false }, { strongcertificatebindingenforcementraw: 1 }).victims('ADCSESC9a')).toEqual([])
  })

  it('9b: the template requires a DNS name; only computer victims count (computersOnly)', () => {
    const g = victimLab({ ...esc9, subjectaltrequireupn: false, subjectaltrequiredns: true }, { strongcertificatebindingenforcementraw: 1 })
    const r = g.run()
    expect(g.victims('ADCSESC9b', r)).toEqual(['PC->D', 'U->D'])
    expect(r.attackerRules.find((x) => x.kind === 'ADCSESC9b')?.computersOnly).toBe(true)
    expect(g.victims('ADCSESC9a', r)).toEqual([])
  })

  it('10a / 10b: UPN certificate mapping on a DC; Schannel authentication', () => {
    const esc10: Props = { ...esc9, nosecurityextension: false }
    expect(victimLab(esc10, { certificatemappingmethodsraw: 4 }).victims('ADCSESC10a')).toEqual(['PC->D', 'U->D'])
    expect(victimLab(esc10, { certificatemappingmethodsraw: 8 }).victims('ADCSESC10a')).toEqual([])
    expect(victimLab({ ...esc10, subjectaltrequireupn: false, subjectaltrequiredns: true }, { certificatemappingmethodsraw: 4 }).victims('ADCSESC10b')).toEqual(['PC->D', 'U->D'])
    expect(victimLab({ ...esc10, enrolleesuppliessubject: true }, { certificatemappingmethodsraw: 4 }).victims('ADCSESC10a')).toEqual([])
  })

  it('Authenticated Users may enroll on the template: every enroller of the CA is a victim', () => {
    const g = lab(esc9)
    g.node('DC', 'Computer', { strongcertificatebindingenforcementraw: 1 })
    g.node('V', 'User')
    g.edge('DC', 'DCFor', 'D').edge('AU', 'Enroll', 'T').edge('V', 'Enroll', 'ECA')
    expect(g.victims('ADCSESC9a')).toEqual(['V->D'])
  })
})

describe('ExtendedByPolicy and ADCSESC13', () => {
  function policyLab(policyDomain = SID): Graph {
    const g = lab({ ...ESC1, enrolleesuppliessubject: false, certificatepolicy: ['1.2.3.4'] })
    g.node('POLICY', 'IssuancePolicy', { certtemplateoid: '1.2.3.4', domainsid: policyDomain })
    g.node('LINKED', 'Group')
    g.edge('POLICY', 'OIDGroupLink', 'LINKED').edge('G', 'Enroll', 'T').edge('G', 'Enroll', 'ECA')
    return g
  }

  it('template → issuance policy it lists (same domain); enrollers → the policy’s linked group', () => {
    const g = policyLab()
    const r = g.run()
    expect(g.derived('ExtendedByPolicy', r)).toEqual(['T->POLICY'])
    expect(g.derived('ADCSESC13', r)).toEqual(['G->LINKED'])
  })

  it('not: a policy of another domain, manager approval, no authentication', () => {
    const other = policyLab('S-1-5-21-9-9-9')
    expect(other.derived('ExtendedByPolicy')).toEqual([])
    expect(other.derived('ADCSESC13')).toEqual([])
    const approval = policyLab()
    approval.props('T').requiresmanagerapproval = true
    expect(approval.derived('ADCSESC13')).toEqual([])
    const noAuth = policyLab()
    noAuth.props('T').authenticationenabled = false
    expect(noAuth.derived('ADCSESC13')).toEqual([])
  })
})

describe("BloodHound's own ESC1 expectations (its ADCSESC1Harness and ADCSESC1HarnessAuthUsers graphs, rebuilt here)", () => {
  /** A CA hosted on an enabled computer (BloodHound's test hands the chained CAs to PostADCSESC1 directly). */
  function hosted(g: Graph, eca: string) {
    g.node(`HOST-${eca}`, 'Computer', { enabled: true })
    g.edge(`HOST-${eca}`, 'HostsCAService', eca)
  }
  const v1: Props = { requiresmanagerapproval: false, authenticationenabled: true, enrolleesuppliessubject: true, schemaversion: 1, authorizedsignatures: 0, effectiveekus: [], subjectaltrequiredns: false, subjectaltrequiredomaindns: false }

  it('ADCSESC1Harness: 8 principals (User13, User11, Group13, Group22, Group32, Group42, Group43, Group47)', () => {
    const g = new Graph()
    // domain 1
    for (const n of ['D1', 'D2', 'D3', 'D4']) g.node(n, 'Domain')
    g.node('NT1', 'NTAuthStore'), g.node('ECA1', 'EnterpriseCA'), g.node('RCA1', 'RootCA'), g.node('CT1', 'CertTemplate', v1)
    for (const n of ['G11', 'G12', 'G13', 'G21', 'G22', 'G31', 'G32', 'G41', 'G42', 'G43', 'G44', 'G45', 'G46', 'G47']) g.node(n, 'Group')
    for (const n of ['U11', 'U12', 'U13', 'U14', 'U15']) g.node(n, 'User')
    g.edge('NT1', 'NTAuthStoreFor', 'D1').edge('RCA1', 'RootCAFor', 'D1').edge('ECA1', 'TrustedForNTAuth', 'NT1').edge('ECA1', 'EnterpriseCAFor', 'RCA1')
    g.edge('CT1', 'PublishedTo', 'ECA1').edge('G11', 'Enroll', 'CT1').edge('G12', 'Enroll', 'ECA1').edge('G13', 'Enroll', 'ECA1').edge('G13', 'Enroll', 'CT1')
    g.edge('U15', 'MemberOf', 'G11').edge('U13', 'MemberOf', 'G11').edge('U11', 'MemberOf', 'G11').edge('U13', 'MemberOf', 'G12')
    g.edge('U14', 'MemberOf', 'G12').edge('U12', 'MemberOf', 'G13').edge('U11', 'MemberOf', 'G13')
    // domain 2: ECA21 chains through ECA23 (EnterpriseCAFor the root); ECA22 is not in the NTAuth store
    g.node('RCA2', 'RootCA'), g.node('NT2', 'NTAuthStore'), g.node('ECA21', 'EnterpriseCA'), g.node('ECA22', 'EnterpriseCA'), g.node('ECA23', 'EnterpriseCA'), g.node('CT2', 'CertTemplate', v1)
    g.edge('RCA2', 'RootCAFor', 'D2').edge('NT2', 'NTAuthStoreFor', 'D2').edge('ECA21', 'IssuedSignedBy', 'ECA23').edge('ECA21', 'TrustedForNTAuth', 'NT2')
    g.edge('ECA22', 'IssuedSignedBy', 'RCA2').edge('ECA23', 'EnterpriseCAFor', 'RCA2').edge('G21', 'Enroll', 'ECA22').edge('G21', 'Enroll', 'CT2')
    g.edge('CT2', 'PublishedTo', 'ECA22').edge('CT2', 'PublishedTo', 'ECA21').edge('G22', 'Enroll', 'CT2').edge('G22', 'Enroll', 'ECA21')
    // domain 3: ECA32 has no chain to the root
    g.node('RCA3', 'RootCA'), g.node('NT3', 'NTAuthStore'), g.node('ECA31', 'EnterpriseCA'), g.node('ECA32', 'EnterpriseCA'), g.node('CT3', 'CertTemplate', v1)
    g.edge('RCA3', 'RootCAFor', 'D3').edge('NT3', 'NTAuthStoreFor', 'D3').edge('ECA31', 'TrustedForNTAuth', 'NT3').edge('ECA31', 'EnterpriseCAFor', 'RCA3')
    g.edge('ECA32', 'TrustedForNTAuth', 'NT3').edge('CT3', 'PublishedTo', 'ECA31').edge('CT3', 'PublishedTo', 'ECA32')
    g.edge('G31', 'Enroll', 'ECA32').edge('G31', 'Enroll', 'CT3').edge('G32', 'Enroll', 'CT3').edge('G32', 'Enroll', 'ECA31')
    // domain 4: six templates, two valid
    g.node('NT4', 'NTAuthStore'), g.node('RCA4', 'RootCA'), g.node('ECA4', 'EnterpriseCA')
    g.node('CT41', 'CertTemplate', { ...v1, schemaversion: 2, authorizedsignatures: 1 })
    g.node('CT42', 'CertTemplate', { ...v1, schemaversion: 2 })
    g.node('CT43', 'CertTemplate', v1)
    g.node('CT44', 'CertTemplate', { ...v1, requiresmanagerapproval: true })
    g.node('CT45', 'CertTemplate', { ...v1, authenticationenabled: false })
    g.node('CT46', 'CertTemplate', { ...v1, enrolleesuppliessubject: false, subjectaltrequireupn: true })
    g.edge('NT4', 'NTAuthStoreFor', 'D4').edge('RCA4', 'RootCAFor', 'D4').edge('ECA4', 'TrustedForNTAuth', 'NT4').edge('ECA4', 'EnterpriseCAFor', 'RCA4')
    for (const i of [1, 2, 3, 4, 5, 6]) g.edge(`G4${i}`, 'Enroll', 'ECA4').edge(`G4${i}`, 'Enroll', `CT4${i}`).edge(`CT4${i}`, 'PublishedTo', 'ECA4')
    g.edge('G47', 'Enroll', 'ECA1').edge('G47', 'Enroll', 'CT1')
    for (const eca of ['ECA1', 'ECA21', 'ECA22', 'ECA23', 'ECA31', 'ECA32', 'ECA4']) hosted(g, eca)

    const starts = [...new Set(g.derived('ADCSESC1').map((p) => p.split('->')[0]))].sort()
    expect(starts).toEqual(['G13', 'G22', 'G32', 'G42', 'G43', 'G47', 'U11', 'U13'])
  })

  it('ADCSESC1HarnessAuthUsers: Authenticated Users may enroll on the CA → only the template’s enrolling group', () => {
    const g = new Graph()
    g.node('D', 'Domain'), g.node('RCA', 'RootCA'), g.node('NT', 'NTAuthStore'), g.node('ECA', 'EnterpriseCA')
    g.node('G1', 'Group'), g.node('TEST.LOCAL-S-1-5-11', 'Group'), g.node('DU', 'Group'), g.node('U1', 'User'), g.node('CT', 'CertTemplate', v1)
    g.edge('RCA', 'RootCAFor', 'D').edge('NT', 'NTAuthStoreFor', 'D').edge('ECA', 'TrustedForNTAuth', 'NT').edge('ECA', 'EnterpriseCAFor', 'RCA')
    g.edge('CT', 'PublishedTo', 'ECA').edge('G1', 'Enroll', 'CT').edge('TEST.LOCAL-S-1-5-11', 'Enroll', 'ECA')
    g.edge('DU', 'MemberOf', 'TEST.LOCAL-S-1-5-11').edge('U1', 'MemberOf', 'DU').edge('U1', 'MemberOf', 'G1')
    hosted(g, 'ECA')
    expect(g.derived('ADCSESC1')).toEqual(['G1->D'])
  })

  it('ESC4 template harness 1: the 14 principals BloodHound expects (controllers, GenericWrite + Enroll, PKI flag combinations)', () => {
    const g = new Graph()
    g.node('D', 'Domain'), g.node('NT', 'NTAuthStore'), g.node('RCA', 'RootCA'), g.node('ECA', 'EnterpriseCA'), g.node('G0', 'Group')
    g.edge('RCA', 'RootCAFor', 'D').edge('ECA', 'IssuedSignedBy', 'RCA').edge('ECA', 'TrustedForNTAuth', 'NT').edge('NT', 'NTAuthStoreFor', 'D').edge('G0', 'Enroll', 'ECA')
    hosted(g, 'ECA')
    const templates: [string, Props][] = [
      ['CT1', { authenticationenabled: true, requiresmanagerapproval: false, schemaversion: 1, enrolleesuppliessubject: true, authorizedsignatures: 1 }],
      ['CT2', { authenticationenabled: false, requiresmanagerapproval: false, schemaversion: 1, enrolleesuppliessubject: true, authorizedsignatures: 1 }],
      ['CT3', { authenticationenabled: true, requiresmanagerapproval: false, schemaversion: 2, enrolleesuppliessubject: true, authorizedsignatures: 1 }],
      ['CT4', { authenticationenabled: true, requiresmanagerapproval: false, schemaversion: 2, enrolleesuppliessubject: true, authorizedsignatures: 0 }],
    ]
    // per template n: Gn.1 GenericAll; Gn.2 Enroll + GenericWrite; Gn.3 Enroll + WritePKINameFlag;
    // Gn.4 Enroll + WritePKIEnrollmentFlag; Gn.5 Enroll + both flags; every group a member of G0 (enrolls on the CA)
    const rights: Record<number, string[]> = { 1: ['GenericAll'], 2: ['Enroll', 'GenericWrite'], 3: ['Enroll', 'WritePKINameFlag'], 4: ['Enroll', 'WritePKIEnrollmentFlag'], 5: ['Enroll', 'WritePKIEnrollmentFlag', 'WritePKINameFlag'] }
    templates.forEach(([ct, p], i) => {
      g.node(ct, 'CertTemplate', p)
      g.edge(ct, 'PublishedTo', 'ECA')
      for (let k = 1; k <= 5; k++) {
        const grp = `G${i + 1}.${k}`
        g.node(grp, 'Group')
        g.edge(grp, 'MemberOf', 'G0')
        for (const r of rights[k]) g.edge(grp, r, ct)
      }
    })
    // the groups BloodHound's TestADCSESC4 expects for this graph
    const starts = g.derived('ADCSESC4').map((x) => x.split('->')[0]).sort()
    expect(starts).toEqual(['G1.1', 'G1.2', 'G1.3', 'G1.4', 'G1.5', 'G2.1', 'G2.2', 'G3.1', 'G3.2', 'G4.1', 'G4.2', 'G4.3', 'G4.4', 'G4.5'])
  })

  it('ESC13 with managed service accounts: a DNS-requiring template drops plain users but keeps gMSA / sMSA (BloodHound expects 3 of 4)', () => {
    const g = new Graph()
    const tpl: Props = { authenticationenabled: true, schemaversion: 1, authorizedsignatures: 0, requiresmanagerapproval: false, effectiveekus: [], applicationpolicies: [], subjectaltrequiredomaindns: false }
    g.node('D', 'Domain'), g.node('ECA', 'EnterpriseCA'), g.node('NT', 'NTAuthStore'), g.node('RCA', 'RootCA'), g.node('TARGET', 'Group'), g.node('POLICY', 'IssuancePolicy')
    g.node('DNSFREE', 'CertTemplate', { ...tpl, subjectaltrequiredns: false })
    g.node('DNS', 'CertTemplate', { ...tpl, subjectaltrequiredns: true })
    g.node('REGULAR', 'User'), g.node('DNSONLY', 'User'), g.node('GMSA', 'User', { gmsa: true }), g.node('SMSA', 'User', { msa: true })
    hosted(g, 'ECA')
    g.edge('ECA', 'TrustedForNTAuth', 'NT').edge('ECA', 'IssuedSignedBy', 'RCA').edge('NT', 'NTAuthStoreFor', 'D').edge('RCA', 'RootCAFor', 'D')
    g.edge('D', 'Contains', 'TARGET').edge('POLICY', 'OIDGroupLink', 'TARGET')
    for (const t of ['DNSFREE', 'DNS']) g.edge(t, 'PublishedTo', 'ECA').edge(t, 'ExtendedByPolicy', 'POLICY')
    for (const u of ['REGULAR', 'DNSONLY', 'GMSA', 'SMSA']) g.edge(u, 'Enroll', 'ECA').edge(u, 'Enroll', 'DNS')
    g.edge('REGULAR', 'Enroll', 'DNSFREE')
    expect(g.derived('ADCSESC13')).toEqual(['GMSA->TARGET', 'REGULAR->TARGET', 'SMSA->TARGET'])
  })

  it('ESC6a / ESC9a / ESC10a with managed service accounts (BloodHound expects gMSA, sMSA and the computer; DC values stored as strings)', () => {
    const g = new Graph()
    g.node('D', 'Domain'), g.node('ECA', 'EnterpriseCA', { isuserspecifiessanenabled: true, isuserspecifiessanenabledcollected: true }), g.node('NT', 'NTAuthStore'), g.node('RCA', 'RootCA')
    g.node('CT', 'CertTemplate', {
      authenticationenabled: true, nosecurityextension: true, schemaversion: 1, authorizedsignatures: 0, requiresmanagerapproval: false, enrolleesuppliessubject: false,
      subjectaltrequiredns: true, subjectaltrequiredomaindns: false, subjectaltrequireupn: true, subjectaltrequirespn: false, effectiveekus: [],
    })
    g.node('REGULAR', 'User'), g.node('GMSA', 'User', { gmsa: true }), g.node('SMSA', 'User', { msa: true }), g.node('PC', 'Computer')
    g.node('DC', 'Computer', { certificatemappingmethodsraw: '4', strongcertificatebindingenforcementraw: '1' })
    hosted(g, 'ECA')
    g.edge('DC', 'DCFor', 'D').edge('CT', 'PublishedTo', 'ECA').edge('ECA', 'TrustedForNTAuth', 'NT').edge('ECA', 'IssuedSignedBy', 'RCA').edge('NT', 'NTAuthStoreFor', 'D').edge('RCA', 'RootCAFor', 'D')
    for (const p of ['REGULAR', 'GMSA', 'SMSA', 'PC']) g.edge(p, 'Enroll', 'CT').edge(p, 'Enroll', 'ECA')
    const r = g.run()
    expect(g.derived('ADCSESC6a', r)).toEqual(['GMSA->D', 'PC->D', 'SMSA->D'])
    // the attacker (GenericAll on the gMSA and the sMSA) is found from these victims in SQL
    expect(g.victims('ADCSESC9a', r)).toEqual(['GMSA->D', 'PC->D', 'SMSA->D'])
    expect(g.victims('ADCSESC10a', r)).toEqual(['GMSA->D', 'PC->D', 'SMSA->D'])
  })

  /** BloodHound's ESC3 harnesses: a chained CA (ECA1) and EnrollOnBehalfOf relationships given as data. */
  function esc3Base(g: Graph, restrictions: Props) {
    g.node('D', 'Domain'), g.node('NT', 'NTAuthStore'), g.node('RCA', 'RootCA'), g.node('ECA1', 'EnterpriseCA', restrictions)
    g.edge('ECA1', 'TrustedForNTAuth', 'NT').edge('ECA1', 'IssuedSignedBy', 'RCA').edge('NT', 'NTAuthStoreFor', 'D').edge('RCA', 'RootCAFor', 'D')
    hosted(g, 'ECA1')
  }
  const t3 = (over: Props): Props => ({ requiresmanagerapproval: false, enrolleesuppliessubject: false, authorizedsignatures: 0, subjectaltrequiredns: false, subjectaltrequiredomaindns: false, ...over })

  it('ESC3 harnesses 1-3: Computer1, Group2 and User1; only the delegated agent User1; Group1', () => {
    const h1 = new Graph()
    esc3Base(h1, { enrollmentagentrestrictionscollected: true, hasenrollmentagentrestrictions: false })
    h1.node('ECA2', 'EnterpriseCA'), h1.node('C1', 'Computer'), h1.node('U1', 'User'), h1.node('U2', 'User'), h1.node('U3', 'User'), h1.node('G1', 'Group'), h1.node('G2', 'Group')
    h1.node('CT0', 'CertTemplate', t3({ authenticationenabled: true, schemaversion: 1, subjectaltrequireupn: true }))
    h1.node('CT1', 'CertTemplate', t3({ authenticationenabled: false, schemaversion: 2 }))
    h1.node('CT2', 'CertTemplate', t3({ authenticationenabled: true, schemaversion: 1, subjectaltrequireupn: true }))
    h1.node('CT3', 'CertTemplate', t3({ authenticationenabled: false, schemaversion: 1 }))
    hosted(h1, 'ECA2')
    h1.edge('C1', 'Enroll', 'CT0').edge('C1', 'Enroll', 'ECA1').edge('CT0', 'EnrollOnBehalfOf', 'CT0').edge('CT0', 'PublishedTo', 'ECA1')
    h1.edge('U3', 'Enroll', 'CT1').edge('G2', 'Enroll', 'CT1').edge('G2', 'MemberOf', 'G1').edge('U2', 'MemberOf', 'G1')
    h1.edge('U1', 'GenericAll', 'CT3').edge('U1', 'MemberOf', 'G1').edge('U1', 'Enroll', 'ECA2').edge('G1', 'Enroll', 'ECA1').edge('G1', 'AllExtendedRights', 'CT2')
    h1.edge('CT1', 'PublishedTo', 'ECA1').edge('CT1', 'EnrollOnBehalfOf', 'CT2').edge('CT2', 'PublishedTo', 'ECA1').edge('CT3', 'EnrollOnBehalfOf', 'CT2').edge('CT3', 'PublishedTo', 'ECA2')
    expect([...new Set(h1.derived('ADCSESC3').map((x) => x.split('->')[0]))].sort()).toEqual(['C1', 'G2', 'U1'])

    const h2 = new Graph()
    esc3Base(h2, { enrollmentagentrestrictionscollected: true, hasenrollmentagentrestrictions: true })
    h2.node('U1', 'User'), h2.node('U2', 'User'), h2.node('G1', 'Group')
    h2.node('CT1', 'CertTemplate', t3({ authenticationenabled: true, schemaversion: 2 }))
    h2.node('CT2', 'CertTemplate', t3({ authenticationenabled: true, schemaversion: 1, subjectaltrequireupn: true }))
    h2.edge('U2', 'MemberOf', 'G1').edge('U1', 'MemberOf', 'G1').edge('U1', 'DelegatedEnrollmentAgent', 'CT2').edge('G1', 'Enroll', 'CT1').edge('G1', 'Enroll', 'ECA1')
    h2.edge('G1', 'AllExtendedRights', 'CT2').edge('CT1', 'PublishedTo', 'ECA1').edge('CT1', 'EnrollOnBehalfOf', 'CT2').edge('CT2', 'PublishedTo', 'ECA1')
    expect(h2.derived('ADCSESC3')).toEqual(['U1->D'])

    const h3 = new Graph()
    esc3Base(h3, { enrollmentagentrestrictionscollected: false })
    h3.node('U2', 'User'), h3.node('G1', 'Group')
    h3.node('CT1', 'CertTemplate', t3({ authenticationenabled: true, schemaversion: 2 }))
    h3.node('CT2', 'CertTemplate', t3({ authenticationenabled: true, schemaversion: 1, subjectaltrequireupn: true }))
    h3.edge('U2', 'MemberOf', 'G1').edge('G1', 'Enroll', 'CT1').edge('G1', 'Enroll', 'ECA1').edge('G1', 'AllExtendedRights', 'CT2')
    h3.edge('CT1', 'PublishedTo', 'ECA1').edge('CT1', 'EnrollOnBehalfOf', 'CT2').edge('CT2', 'PublishedTo', 'ECA1')
    expect(h3.derived('ADCSESC3')).toEqual(['G1->D'])
  })
})

describe('CoerceAndRelayNTLMToADCS (ESC8) victims: computers enrolling through a vulnerable web endpoint', () => {
  /** An authentication template (no approval, schema 2, no signature) on a CA with a vulnerable endpoint. */
  const relayLab = (template: Props = {}, ca: Props = { hasvulnerableendpoint: true }) => {
    const g = lab({ requiresmanagerapproval: false, authenticationenabled: true, schemaversion: 2, authorizedsignatures: 0, ...template })
    Object.assign(g.props('ECA'), ca)
    g.node('C1', 'Computer', { enabled: true })
    g.node('C2', 'Computer', { enabled: true })
    g.edge('C1', 'MemberOf', 'G').edge('C2', 'MemberOf', 'G')
    return g
  }
  const victims = (g: Graph) => g.run().relayVictims.map(([v, d]) => `${g.name(v)}->${g.name(d)}`).sort()

  it('the computers among the template and CA enrollers (groups expanded; users are not victims), to each chained domain', () => {
    const g = relayLab()
    g.edge('G', 'Enroll', 'T').edge('G', 'Enroll', 'ECA')
    expect(victims(g)).toEqual(['C1->D', 'C2->D'])
  })

  it('Authenticated Users enrolling on the CA: every computer enrolling on the template; otherwise only those in both', () => {
    const special = relayLab()
    special.edge('G', 'Enroll', 'T').edge('AU', 'Enroll', 'ECA')
    expect(victims(special)).toEqual(['C1->D', 'C2->D'])
    const both = relayLab()
    both.edge('G', 'Enroll', 'T').edge('C1', 'Enroll', 'ECA')
    expect(victims(both)).toEqual(['C1->D'])
  })

  it('nothing without a vulnerable endpoint (false or missing), without template enrollers, or without a chain / enabled host', () => {
    for (const ca of [{ hasvulnerableendpoint: false }, {}]) {
      const g = relayLab({}, ca)
      g.edge('G', 'Enroll', 'T').edge('G', 'Enroll', 'ECA')
      expect(victims(g)).toEqual([])
    }
    const noTemplateEnroller = relayLab()
    noTemplateEnroller.edge('AU', 'Enroll', 'ECA')
    expect(victims(noTemplateEnroller)).toEqual([])
    const disabled = relayLab()
    disabled.props('HOST').enabled = false
    disabled.edge('G', 'Enroll', 'T').edge('G', 'Enroll', 'ECA')
    expect(victims(disabled)).toEqual([])
  })

  it('the template rule (isCertTemplateValidForADCSRelay): no approval, authentication, schema 1 or no signature, every property readable', () => {
    const ok = { requiresmanagerapproval: false, authenticationenabled: true, schemaversion: 2, authorizedsignatures: 0 }
    expect(validForAdcsRelay(ok)).toBe(true)
    expect(validForAdcsRelay({ ...ok, schemaversion: 1, authorizedsignatures: 3 })).toBe(true)
    expect(validForAdcsRelay({ ...ok, schemaversion: 1, authorizedsignatures: undefined })).toBe(true)
    expect(validForAdcsRelay({ ...ok, authorizedsignatures: 1 })).toBe(false)
    expect(validForAdcsRelay({ ...ok, authorizedsignatures: undefined })).toBe(false)
    expect(validForAdcsRelay({ ...ok, requiresmanagerapproval: true })).toBe(false)
    expect(validForAdcsRelay({ ...ok, requiresmanagerapproval: undefined })).toBe(false)
    expect(validForAdcsRelay({ ...ok, authenticationenabled: false })).toBe(false)
    expect(validForAdcsRelay({ ...ok, schemaversion: '2' })).toBe(false)
    const g = relayLab({ authorizedsignatures: 1 })
    g.edge('G', 'Enroll', 'T').edge('G', 'Enroll', 'ECA')
    expect(victims(g)).toEqual([])
  })
})

describe('ADCSESC16: a CA that lets the requester specify the SAN and disables the SID security extension', () => {
  const SEC_EXT = '1.3.6.1.4.1.311.25.2'
  const OPEN_CA = { isuserspecifiessanenabledcollected: true, isuserspecifiessanenabled: true, disabledextensionscollected: true, disabledextensions: [SEC_EXT] }
  const TEMPLATE: Props = { requiresmanagerapproval: false, authenticationenabled: true, schemaversion: 2, authorizedsignatures: 0, subjectaltrequiredns: false, subjectaltrequiredomaindns: false }
  const esc16Lab = (template: Props = TEMPLATE, ca: Props = OPEN_CA) => {
    const g = lab(template)
    Object.assign(g.props('ECA'), ca)
    return g
  }

  it('the cross product of the template and CA enrollers → each chained domain (the group, not its member)', () => {
    const g = esc16Lab()
    g.edge('G', 'Enroll', 'T').edge('G', 'Enroll', 'ECA')
    expect(g.derived('ADCSESC16')).toEqual(['G->D'])
    const everyone = esc16Lab()
    everyone.edge('U', 'Enroll', 'T').edge('AU', 'Enroll', 'ECA')
    expect(everyone.derived('ADCSESC16')).toEqual(['U->D'])
  })

  it('the CA side: every one of the four properties, the OID listed', () => {
    expect(caOpenToEsc16(OPEN_CA)).toBe(true)
    for (const [k, v] of [
      ['isuserspecifiessanenabledcollected', false],
      ['isuserspecifiessanenabled', false],
      ['isuserspecifiessanenabled', undefined],
      ['disabledextensionscollected', false],
      ['disabledextensions', ['1.2.3']],
      ['disabledextensions', undefined],
      ['disabledextensions', SEC_EXT],
    ] as const) {
      expect(caOpenToEsc16({ ...OPEN_CA, [k]: v }), `${k}=${JSON.stringify(v)}`).toBe(false)
      const g = esc16Lab(TEMPLATE, { ...OPEN_CA, [k]: v })
      g.edge('G', 'Enroll', 'T').edge('G', 'Enroll', 'ECA')
      expect(g.derived('ADCSESC16')).toEqual([])
    }
  })

  it('the template side (isCertTemplateValidForESC16): schema 1 exactly, or above 1 without a signature; no approval; authentication', () => {
    expect(validForEsc16(TEMPLATE)).toBe(true)
    expect(validForEsc16({ ...TEMPLATE, schemaversion: 1, authorizedsignatures: 2 })).toBe(true)
    expect(validForEsc16({ ...TEMPLATE, schemaversion: 0 })).toBe(false)
    expect(validForEsc16({ ...TEMPLATE, authorizedsignatures: 1 })).toBe(false)
    expect(validForEsc16({ ...TEMPLATE, authorizedsignatures: undefined })).toBe(false)
    expect(validForEsc16({ ...TEMPLATE, requiresmanagerapproval: true })).toBe(false)
    expect(validForEsc16({ ...TEMPLATE, authenticationenabled: false })).toBe(false)
    expect(validForEsc16({ ...TEMPLATE, authenticationenabled: undefined })).toBe(false)
  })

  it('users are dropped when the template requires a DNS name (gMSA kept), and nothing without a chain or enabled host', () => {
    const dns = esc16Lab({ ...TEMPLATE, subjectaltrequiredns: true })
    dns.node('GMSA', 'User', { gmsa: true })
    dns.edge('U', 'Enroll', 'T').edge('GMSA', 'Enroll', 'T').edge('AU', 'Enroll', 'ECA')
    expect(dns.derived('ADCSESC16')).toEqual(['GMSA->D'])
    const disabled = esc16Lab()
    disabled.props('HOST').enabled = false
    disabled.edge('G', 'Enroll', 'T').edge('G', 'Enroll', 'ECA')
    expect(disabled.derived('ADCSESC16')).toEqual([])
  })
})
