/**
 * SharpHound CE v6 data for the benchmark: a made-up domain of `users` users, written as SharpHound writes
 * it (one file per type, `meta` + `data`), deterministic for a seed. Per user about a dozen relationships
 * (ACEs, primary group, containment, group memberships); computers with sessions, local groups and ACEs;
 * the domain with replication rights (DCSync after post-processing) and GPLinks.
 *
 *   users u          groups ≈ u/20        computers ≈ u/10        OUs ≈ computers/200 + 1
 *   relationships ≈ 14 × users (≈ 140 k at 10 k users, ≈ 1.4 M at 100 k)
 *
 * `files(maxObjects)` cuts each type's `data` into files of at most `maxObjects` objects (every upload
 * stays under the per-request limits), as `edgehound ingest` splits a large file.
 */
import { prng } from './generate'

export const BENCH_DOMAIN = 'S-1-5-21-1111-2222-3333'
const NAME = 'BENCHLAB.LOCAL'

type Json = Record<string, unknown>

export interface SharpHoundData {
  users: Json[]
  groups: Json[]
  computers: Json[]
  domains: Json[]
  ous: Json[]
  gpos: Json[]
  /** with `adcs`: the ADCS objects (SharpHound's certtemplates, enterprisecas, rootcas, ntauthstores files) */
  certtemplates?: Json[]
  enterprisecas?: Json[]
  rootcas?: Json[]
  ntauthstores?: Json[]
}

/**
 * `adcs`: add an ADCS environment (a root CA, an NTAuth store, an enterprise CA hosted on HOST1 that
 * Authenticated Users may enroll on, DC HOST0 with UPN mapping and a weak certificate binding) and four
 * templates: USER (DOMAIN USERS enroll: every user is expanded), ESC1 (a group), ESC4 (a helpdesk group
 * holds GenericAll), ESC9 (DOMAIN COMPUTERS enroll: every computer is a victim, its ACL holders attackers).
 */
/**
 * `ntlm`: the NTLM relay facts on every computer, chosen by index (the random stream, and so the rest of the
 * data, is the same as without): SMB signing off on odd hosts, outbound NTLM restricted on every tenth,
 * WebClient running on every third, the next host a local administrator of every fifth; DC HOST0 without
 * LDAP signing, with LDAPS and no channel binding; with `adcs`, the CA's web enrollment endpoint is HTTP.
 */
export function generateSharpHound(users: number, seed = 13, opts: { adcs?: boolean; ntlm?: boolean } = {}): SharpHoundData {
  const rnd = prng(seed)
  const pick = <T>(a: T[]): T => a[Math.floor(rnd() * a.length)]
  const D = BENCH_DOMAIN
  const sid = (rid: number) => `${D}-${rid}`
  const groupCount = Math.max(10, Math.floor(users / 20))
  const computerCount = Math.max(5, Math.floor(users / 10))
  const ouCount = Math.floor(computerCount / 200) + 1
  const userIds = Array.from({ length: users }, (_, i) => sid(10_000 + i))
  const groupIds = Array.from({ length: groupCount }, (_, i) => sid(5_000 + i))
  const computerIds = Array.from({ length: computerCount }, (_, i) => sid(200_000 + i))
  const ouIds = Array.from({ length: ouCount }, (_, i) => `0B000000-0000-0000-0000-${String(i).padStart(12, '0')}`)
  const gpo = '0C000000-0000-0000-0000-000000000001'
  const usersContainer = '0D000000-0000-0000-0000-000000000001'
  const admins = `${NAME}-S-1-5-32-544`
  const ace = (p: string, t: string, r: string, inh = false) => ({ PrincipalSID: p, PrincipalType: t, RightName: r, IsInherited: inh })
  const tp = (id: string, t: string) => ({ ObjectIdentifier: id, ObjectType: t })
  const api = (results: unknown[]) => ({ Collected: true, FailureReason: null, Results: results })
  const standardAces = (owner: string) => [
    ace(sid(512), 'Group', 'Owns'),
    ace(sid(512), 'Group', 'GenericAll', true),
    ace(sid(519), 'Group', 'GenericAll', true),
    ace(admins, 'Group', 'WriteDacl', true),
    ace(admins, 'Group', 'WriteOwner', true),
    ace(sid(548), 'Group', 'GenericAll', true),
    ace(owner, 'Group', 'GenericWrite', true),
  ]
  const helpdesk = groupIds.slice(0, Math.min(20, groupIds.length))

  const members = new Map<string, Json[]>(groupIds.map((g) => [g, []]))
  const userData = userIds.map((id, i) => {
    for (let k = 0; k < 3; k++) members.get(pick(groupIds))!.push(tp(id, 'User'))
    return {
      ObjectIdentifier: id,
      Properties: {
        name: `USER${i}@${NAME}`,
        domain: NAME,
        domainsid: D,
        enabled: rnd() < 0.95,
        hasspn: rnd() < 0.01,
        dontreqpreauth: rnd() < 0.005,
        description: null,
        samaccountname: `user${i}`,
        distinguishedname: `CN=USER${i},CN=USERS,DC=BENCHLAB,DC=LOCAL`,
      },
      Aces: [...standardAces(pick(helpdesk)), ace(pick(helpdesk), 'Group', 'ForceChangePassword', true)],
      PrimaryGroupSID: sid(513),
      ContainedBy: tp(usersContainer, 'Container'),
      AllowedToDelegate: [],
      SPNTargets: [],
      HasSIDHistory: [],
      DomainSID: D,
      UnconstrainedDelegation: false,
      IsDeleted: false,
      IsACLProtected: false,
    }
  })
  members.get(groupIds[0])!.push(tp(groupIds[1], 'Group'))
  const groupData = [
    ...groupIds.map((id, i) => ({
      ObjectIdentifier: id,
      Properties: { name: `GROUP${i}@${NAME}`, domain: NAME, domainsid: D, admincount: false },
      Aces: standardAces(pick(helpdesk)),
      Members: members.get(id),
      HasSIDHistory: [],
      ContainedBy: tp(usersContainer, 'Container'),
      IsDeleted: false,
      IsACLProtected: false,
    })),
    ...[[512, 'DOMAIN ADMINS'], [513, 'DOMAIN USERS'], [516, 'DOMAIN CONTROLLERS'], [519, 'ENTERPRISE ADMINS'], [548, 'ACCOUNT OPERATORS']].map(([rid, n]) => ({
      ObjectIdentifier: sid(rid as number),
      Properties: { name: `${n}@${NAME}`, domain: NAME, domainsid: D },
      Aces: standardAces(sid(512)),
      Members: rid === 512 ? [tp(userIds[0], 'User')] : rid === 516 ? [tp(computerIds[0], 'Computer')] : [],
      HasSIDHistory: [],
      IsDeleted: false,
      IsACLProtected: false,
    })),
    { ObjectIdentifier: admins, Properties: { name: `ADMINISTRATORS@${NAME}`, domain: NAME, domainsid: D }, Aces: [], Members: [tp(sid(512), 'Group'), tp(sid(519), 'Group')], HasSIDHistory: [] },
  ]
  const computerData = computerIds.map((id, i) => ({
    ObjectIdentifier: id,
    Properties: { name: `HOST${i}.${NAME}`, domain: NAME, domainsid: D, enabled: true, haslaps: rnd() < 0.5, unconstraineddelegation: i === 0, ...(opts.ntlm && i === 0 ? { isdc: true, ldapsigning: false, ldapenabled: true, ldapsenabled: true, ldapsepa: false } : {}) },
    Aces: standardAces(pick(helpdesk)),
    PrimaryGroupSID: i === 0 ? sid(516) : sid(515),
    ContainedBy: tp(ouIds[i % ouCount], 'OU'),
    AllowedToDelegate: [],
    AllowedToAct: [],
    HasSIDHistory: [],
    DumpSMSAPassword: [],
    Sessions: api([{ UserSID: pick(userIds), ComputerSID: id }, { UserSID: pick(userIds), ComputerSID: id }]),
    PrivilegedSessions: api([]),
    RegistrySessions: api([]),
    LocalGroups: [
      {
        ...api([tp(sid(512), 'Group'), tp(pick(helpdesk), 'Group'), ...(opts.ntlm && i % 5 === 0 ? [tp(computerIds[(i + 1) % computerCount], 'Computer')] : [])]),
        ObjectIdentifier: `${id}-544`,
        Name: `ADMINISTRATORS@HOST${i}`,
        LocalNames: [],
      },
      { ...api([tp(pick(groupIds), 'Group')]), ObjectIdentifier: `${id}-555`, Name: `REMOTE DESKTOP USERS@HOST${i}`, LocalNames: [] },
    ],
    UserRights: [],
    IsDC: i === 0,
    DomainSID: D,
    UnconstrainedDelegation: i === 0,
    Status: null,
    IsDeleted: false,
    IsACLProtected: false,
    ...(opts.ntlm ? ntlmFacts(i) : {}),
  }))
  const ouData = ouIds.map((id, i) => ({
    ObjectIdentifier: id,
    Properties: { name: `SERVERS${i}@${NAME}`, domain: NAME, domainsid: D, blocksinheritance: false },
    Aces: standardAces(sid(512)),
    Links: [{ IsEnforced: false, GUID: gpo }],
    ChildObjects: computerIds.filter((_, j) => j % ouCount === i).map((c) => tp(c, 'Computer')),
    ContainedBy: tp(D, 'Domain'),
    GPOChanges: { AffectedComputers: [], LocalAdmins: [], RemoteDesktopUsers: [], DcomUsers: [], PSRemoteUsers: [] },
    IsDeleted: false,
    IsACLProtected: false,
  }))
  const domainData = [
    {
      ObjectIdentifier: D,
      Properties: { name: NAME, domain: NAME, domainsid: D, functionallevel: '2016', collected: true },
      Aces: [
        ...standardAces(sid(512)),
        ace(admins, 'Group', 'GetChanges'), ace(admins, 'Group', 'GetChangesAll'),
        ace(sid(516), 'Group', 'GetChanges'), ace(sid(516), 'Group', 'GetChangesAll'),
        ace(groupIds[2], 'Group', 'GetChanges'), ace(groupIds[2], 'Group', 'GetChangesAll'),
      ],
      ChildObjects: [...ouIds.map((o) => tp(o, 'OU')), tp(usersContainer, 'Container')],
      Links: [{ IsEnforced: true, GUID: gpo }],
      Trusts: [],
      GPOChanges: { AffectedComputers: [], LocalAdmins: [], RemoteDesktopUsers: [], DcomUsers: [], PSRemoteUsers: [] },
    },
  ]
  const gpoData = [{ ObjectIdentifier: gpo, Properties: { name: `DEFAULT DOMAIN POLICY@${NAME}`, domain: NAME, domainsid: D }, Aces: standardAces(sid(512)) }]
  const data: SharpHoundData = { users: userData, groups: groupData, computers: computerData, domains: domainData, ous: ouData, gpos: gpoData }
  if (opts.adcs) {
    const au = `${NAME}-S-1-5-11`
    groupData.push({ ObjectIdentifier: au, Properties: { name: `AUTHENTICATED USERS@${NAME}`, domain: NAME, domainsid: D }, Aces: [], Members: [], HasSIDHistory: [] })
    ;(computerData[0] as Json).DCRegistryData = {
      CertificateMappingMethods: { Collected: true, FailureReason: null, Value: 4 },
      StrongCertificateBindingEnforcement: { Collected: true, FailureReason: null, Value: 1 },
    }
    const obj = (n: number) => `0E000000-0000-0000-0000-${String(n).padStart(12, '0')}`
    const props = (name: string, extra: Json = {}) => ({ name: `${name}@${NAME}`, domain: NAME, domainsid: D, ...extra })
    const template = (n: number, name: string, extra: Json, aces: Json[]) => ({
      ObjectIdentifier: obj(n),
      Properties: props(name, {
        schemaversion: 2, authorizedsignatures: 0, requiresmanagerapproval: false, enrolleesuppliessubject: false, authenticationenabled: true,
        nosecurityextension: false, subjectaltrequireupn: false, subjectaltrequirespn: false, subjectaltrequiredns: false, subjectaltrequiredomaindns: false,
        effectiveekus: ['1.3.6.1.5.5.7.3.2'], certificatepolicy: [], applicationpolicies: [], ...extra,
      }),
      Aces: [...standardAces(sid(512)), ...aces],
      DomainSID: D,
    })
    data.certtemplates = [
      template(10, 'USER', {}, [ace(sid(513), 'Group', 'Enroll')]),
      template(11, 'ESC1', { enrolleesuppliessubject: true }, [ace(groupIds[3], 'Group', 'Enroll')]),
      template(12, 'ESC4', { requiresmanagerapproval: true }, [ace(helpdesk[0], 'Group', 'GenericAll')]),
      template(13, 'ESC9', { nosecurityextension: true, subjectaltrequireupn: true }, [ace(sid(515), 'Group', 'Enroll')]),
    ]
    data.rootcas = [{ ObjectIdentifier: obj(1), Properties: props('BENCH-ROOT', { certthumbprint: 'AA', certchain: ['AA'] }), Aces: [], DomainSID: D }]
    data.ntauthstores = [{ ObjectIdentifier: obj(2), Properties: props('NTAUTHCERTIFICATES', { certthumbprints: ['BB'] }), Aces: [], DomainSID: D }]
    data.enterprisecas = [
      {
        ObjectIdentifier: obj(3),
        Properties: props('BENCH-CA', { certthumbprint: 'BB', certchain: ['BB', 'AA'], casecuritycollected: true, enrollmentagentrestrictionscollected: true, isuserspecifiessanenabledcollected: true }),
        Aces: standardAces(sid(512)),
        DomainSID: D,
        HostingComputer: computerIds[1],
        EnabledCertTemplates: data.certtemplates.map((t) => tp(t.ObjectIdentifier as string, 'CertTemplate')),
        CARegistryData: {
          CASecurity: { Collected: true, FailureReason: null, Data: [ace(au, 'Group', 'Enroll')] },
          EnrollmentAgentRestrictions: { Collected: true, FailureReason: null, Restrictions: [] },
          IsUserSpecifiesSanEnabled: { Collected: true, FailureReason: null, Value: false },
        },
        HttpEnrollmentEndpoints: opts.ntlm
          ? [{ Collected: true, FailureReason: null, Result: { Url: 'http://host1/certsrv/', ADCSWebEnrollmentHTTP: true, ADCSWebEnrollmentHTTPS: false, ADCSWebEnrollmentEPA: false } }]
          : [],
      },
    ]
  }
  return data
}

/** The NTLM relay facts of computer `i` (see `ntlm` above), as SharpHound writes them. */
function ntlmFacts(i: number): Json {
  const collected = (result: unknown) => ({ Collected: true, FailureReason: null, Result: result })
  return {
    SmbInfo: collected({ SigningEnabled: i % 2 === 0 }),
    NTLMRegistryData: collected({ RestrictSendingNtlmTraffic: i % 10 === 7 ? 2 : 0 }),
    IsWebClientRunning: collected(i % 3 === 0),
  }
}

/** The data as SharpHound files of at most `maxObjects` objects each: [file name, JSON text]. */
export function* sharpHoundFiles(d: SharpHoundData, maxObjects: number): Generator<[string, string]> {
  for (const [type, data] of Object.entries(d).filter(([, v]) => v !== undefined) as [string, Json[]][]) {
    for (let i = 0; i < data.length; i += maxObjects) {
      const part = data.slice(i, i + maxObjects)
      yield [`bench_${type}_${i / maxObjects}.json`, JSON.stringify({ data: part, meta: { methods: 46067, type, count: part.length, version: 6 } })]
    }
  }
}
