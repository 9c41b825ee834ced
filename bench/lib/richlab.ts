/**
 * Made-up SharpHound CE v6 and AzureHound data for the query-library run (bench/cypher-library.ts), written
 * for EdgeHound: one domain, RICHLAB.LOCAL (S-1-5-21-8000-8001-8002), and one tenant, Fabrikam, whose
 * objects carry the properties and relationships BloodHound's hygiene questions look at (stale passwords
 * and logons, delegation, AdminSDHolder, dsHeuristics, DNS and Public Key Services containers, SID history,
 * circular groups, foreign service principals, external and disabled Entra users, …), so that most of
 * those questions have something to find. Times are relative to now (`OLD` = 400 days ago).
 */
type Json = Record<string, unknown>
export const R = 'S-1-5-21-8000-8001-8002'
/** bob of the test fixture TESTLAB.LOCAL (test/fixtures/sharphound/testlab.ts), loaded next to this domain: a session across the trust */
const TESTLAB_BOB = 'S-1-5-21-1000-2000-3000-1102'
const DN = 'RICHLAB.LOCAL'
const now = Math.floor(Date.now() / 1000)
const OLD = now - 400 * 86400
const RECENT = now - 5 * 86400
const ace = (sid: string, type: string, right: string): Json => ({ PrincipalSID: sid, PrincipalType: type, RightName: right, IsInherited: false })
const tp = (id: string, type: string): Json => ({ ObjectIdentifier: id, ObjectType: type })
const api = (results: unknown[]): Json => ({ Collected: true, FailureReason: null, Results: results })
const base = (id: string, props: Json, extra: Json = {}): Json => ({ ObjectIdentifier: id, Properties: props, Aces: [], IsDeleted: false, IsACLProtected: false, ContainedBy: null, ...extra })
const dp = (name: string, extra: Json = {}): Json => ({ name: `${name}@${DN}`, domain: DN, domainsid: R, ...extra })
const dc = (name: string, extra: Json = {}): Json => ({ name, domain: DN, domainsid: R, ...extra })
const file = (type: string, data: unknown[]): Json => ({ data, meta: { methods: 46067, type, count: data.length, version: 6 } })

export const S = {
  domain: R,
  admin: `${R}-500`, guest: `${R}-501`, krbtgt: `${R}-502`,
  carol: `${R}-1101`, dan: `${R}-1102`, msol: `${R}-1103`, gmsa: `${R}-1104`, smart: `${R}-1105`, sso: `${R}-1106`,
  da: `${R}-512`, du: `${R}-513`, dcomp: `${R}-515`, dcs: `${R}-516`, schema: `${R}-518`, ea: `${R}-519`, pu: `${R}-525`, eka: `${R}-527`, rodc: `${R}-571`,
  pre2k: `${DN}-S-1-5-32-554`, auth: `${DN}-S-1-5-11`, everyone: `${DN}-S-1-1-0`,
  helpdesk: `${R}-1200`, dnsadmins: `${R}-1201`, exch: `${R}-1202`, mig: `${R}-1203`, loop1: `${R}-1204`, loop2: `${R}-1205`, partners: `${R}-1206`, tier0ops: `${R}-1207`,
  dc1: `${R}-1000`, oldsrv: `${R}-1001`, ws10: `${R}-1002`, ssoacc: `${R}-1003`,
  ou: 'B0000000-0000-0000-0000-00000000000A', users: 'B0000000-0000-0000-0000-00000000000B', sdholder: 'B0000000-0000-0000-0000-00000000000C',
  dns: 'B0000000-0000-0000-0000-00000000000D', pks: 'B0000000-0000-0000-0000-00000000000E', gpo: '{B0000000-0000-0000-0000-00000000000F}',
}

export function richFiles(): Record<string, Json> {
  const user = (id: string, name: string, props: Json, extra: Json = {}) =>
    base(id, dp(name, { enabled: true, hasspn: false, dontreqpreauth: false, ...props }), { PrimaryGroupSID: S.du, AllowedToDelegate: [], SPNTargets: [], HasSIDHistory: [], DomainSID: R, ...extra })
  const users = [
    user(S.admin, 'ADMINISTRATOR', { lastlogon: RECENT, lastlogontimestamp: RECENT, whencreated: OLD, pwdlastset: OLD, admincount: true }, { ContainedBy: tp(S.users, 'Container') }),
    user(S.guest, 'GUEST', { pwdlastset: 1100000000 }, { PrimaryGroupSID: `${R}-514` }),
    user(S.krbtgt, 'KRBTGT', { enabled: false, pwdlastset: OLD }),
    user(S.carol, 'CAROL', {
      email: 'carol@richlab.local', hasspn: true, serviceprincipalnames: ['MSSQLSvc/db.richlab.local:1433'], admincount: true, sensitive: false, smartcardrequired: false,
      pwdneverexpires: true, dontreqpreauth: true, pwdlastset: OLD, lastlogon: OLD, lastlogontimestamp: OLD, whencreated: OLD, adminsdholderprotected: false,
      supportedencryptiontypes: ['RC4-HMAC-MD5'], logonscript: '\\\\TESTLAB.LOCAL\\NETLOGON\\logon.bat', distinguishedname: `CN=CAROL,CN=USERS,DC=RICHLAB,DC=LOCAL`,
    }, { ContainedBy: tp(S.users, 'Container') }),
    user(S.dan, 'DAN', {
      admincount: true, unconstraineddelegation: true, encryptedtextpwdallowed: true, usedeskeyonly: true, passwordnotreqd: true, userpassword: 'hunter2',
      distinguishedname: 'CN=DAN\\0ACNF:1234,CN=USERS,DC=RICHLAB,DC=LOCAL', hasspn: true, serviceprincipalnames: ['HTTP/KEYWORD.richlab.local'], adminsdholderprotected: true,
    }, { PrimaryGroupSID: S.helpdesk, HasSIDHistory: [tp(S.carol, 'User')], UnconstrainedDelegation: true, AllowedToDelegate: [tp(S.dc1, 'Computer')], ContainedBy: tp(S.users, 'Container') }),
    user(S.msol, 'MSOL_0123456789AB', { pwdlastset: OLD }),
    user(S.gmsa, 'GMSA01$', { gmsa: true }),
    user(S.smart, 'SMARTY', { smartcardrequired: true, pwdlastset: OLD }, { ContainedBy: tp(S.users, 'Container') }),
  ]
  const group = (id: string, name: string, members: Json[], extra: Json = {}, props: Json = {}) =>
    base(id, dp(name, props), { Members: members, HasSIDHistory: [], ...extra })
  const groups = [
    group(S.da, 'DOMAIN ADMINS', [tp(S.carol, 'User'), tp(S.msol, 'User')]),
    group(S.du, 'DOMAIN USERS', [], { Aces: [] }),
    group(S.dcomp, 'DOMAIN COMPUTERS', []),
    group(S.dcs, 'DOMAIN CONTROLLERS', [tp(S.dc1, 'Computer')]),
    group(S.schema, 'SCHEMA ADMINS', [tp(S.carol, 'User'), tp(S.tier0ops, 'Group')]),
    group(S.ea, 'ENTERPRISE ADMINS', [tp(S.carol, 'User')]),
    group(S.pu, 'PROTECTED USERS', [tp(S.admin, 'User')]),
    group(S.eka, 'ENTERPRISE KEY ADMINS', []),
    group(S.rodc, 'ALLOWED RODC PASSWORD REPLICATION GROUP', [tp(S.dan, 'User')]),
    group(S.pre2k, 'PRE-WINDOWS 2000 COMPATIBLE ACCESS', [tp(S.auth, 'Group'), tp(S.everyone, 'Group'), tp(S.helpdesk, 'Group')]),
    group(S.auth, 'AUTHENTICATED USERS', []),
    group(S.everyone, 'EVERYONE', []),
    group(S.helpdesk, 'HELPDESK', []), // dan's primary group: implicit, as in AD (not in the member list)
    group(S.dnsadmins, 'DNSADMINS', [tp(S.dan, 'User')]),
    group(S.exch, 'EXCHANGE WINDOWS PERMISSIONS', []),
    group(S.mig, 'RICHLAB$$$', []),
    group(S.loop1, 'LOOP1', [tp(S.loop2, 'Group')]),
    group(S.partners, 'PARTNERS', [tp(TESTLAB_BOB, 'User')]),
    group(S.tier0ops, 'TIER0 OPS', []),
    group(S.loop2, 'LOOP2', [tp(S.loop1, 'Group'), tp(S.dnsadmins, 'Group')]),
  ]
  const comp = (id: string, name: string, props: Json, extra: Json = {}) =>
    base(id, dc(name, { enabled: true, isdc: false, isreadonlydc: false, ...props }), {
      PrimaryGroupSID: S.dcomp, AllowedToDelegate: [], AllowedToAct: [], HasSIDHistory: [], DumpSMSAPassword: [], Sessions: api([]), PrivilegedSessions: api([]),
      RegistrySessions: api([]), LocalGroups: [], UserRights: [], DomainSID: R, IsDC: false, UnconstrainedDelegation: false, Status: null, ...extra,
    })
  const computers = [
    comp(S.dc1, 'DC1.RICHLAB.LOCAL', {
      isdc: true, operatingsystem: 'Windows Server 2025 Datacenter', smbsigning: false, webclientrunning: true, ldapavailable: true, ldapsigning: false,
      strongcertificatebindingenforcementraw: 1, certificatemappingmethodsraw: 4, lmcompatibilitylevel: 2, restrictoutboundntlm: true,
      lastlogon: RECENT, lastlogontimestamp: RECENT, whencreated: OLD, pwdlastset: OLD, unconstraineddelegation: true,
    }, { IsDC: true, PrimaryGroupSID: S.dcs, UnconstrainedDelegation: true, AllowedToAct: [tp(S.dan, 'User')] }),
    comp(S.oldsrv, 'OLDSRV.RICHLAB.LOCAL', {
      operatingsystem: 'Windows Server 2008 R2 Enterprise', haslaps: true, lastlogon: OLD, lastlogontimestamp: OLD, whencreated: OLD, pwdlastset: OLD,
      serviceprincipalnames: ['MSServerClusterMgmtAPI/oldsrv'], ownersid: S.dan,
    }, { PrimaryGroupSID: S.helpdesk, Aces: [ace(S.dan, 'User', 'Owns'), ace(S.dan, 'User', 'GenericAll')], Sessions: api([{ UserSID: TESTLAB_BOB, ComputerSID: S.oldsrv }]) }),
    comp(S.ws10, 'WS10.RICHLAB.LOCAL', { operatingsystem: 'Windows 10 Pro', haslaps: false }, {
      ContainedBy: tp(S.ou, 'OU'),
      Aces: [ace(S.du, 'Group', 'ReadLAPSPassword')],
      Sessions: api([{ UserSID: S.carol, ComputerSID: S.ws10 }]),
      LocalGroups: [
        { ...api([tp(S.du, 'Group'), tp(S.auth, 'Group')]), ObjectIdentifier: `${S.ws10}-544`, Name: 'ADMINISTRATORS@WS10.RICHLAB.LOCAL', LocalNames: [] },
        { ...api([tp(S.du, 'Group')]), ObjectIdentifier: `${S.ws10}-555`, Name: 'REMOTE DESKTOP USERS@WS10.RICHLAB.LOCAL', LocalNames: [] },
      ],
      UserRights: [{ ...api([tp(`${S.ws10}-555`, 'LocalGroup')]), Privilege: 'SeRemoteInteractiveLogonRight', LocalNames: [] }],
    }),
    comp(S.ssoacc, 'AZUREADSSOACC.RICHLAB.LOCAL', { pwdlastset: OLD }),
  ]
  const domains = [
    base(R, { name: DN, domain: DN, domainsid: R, functionallevel: '2008', collected: true, machineaccountquota: '10', minpwdlength: 7, expirepasswordsonsmartcardonlyaccounts: false, dsheuristics: '0010001000000001000010' }, {
      Aces: [ace(S.eka, 'Group', 'GenericAll'), ace(S.exch, 'Group', 'WriteDacl'), ace(S.dan, 'User', 'GetChanges'), ace(S.dan, 'User', 'GetChangesAll')],
      ChildObjects: [tp(S.ou, 'OU'), tp(S.users, 'Container'), tp(S.sdholder, 'Container'), tp(S.dns, 'Container'), tp(S.pks, 'Container')],
      Links: [],
      Trusts: [{ TargetDomainSid: 'S-1-5-21-1000-2000-3000', TargetDomainName: 'TESTLAB.LOCAL', IsTransitive: true, TrustDirection: 'Bidirectional', TrustType: 'Forest', SidFilteringEnabled: true, TGTDelegationEnabled: false, TrustAttributes: 8 }],
    }),
  ]
  const ous = [base(S.ou, dp('SERVERS', { blocksinheritance: false }), { ContainedBy: tp(R, 'Domain'), Links: [{ IsEnforced: false, GUID: S.gpo }], ChildObjects: [tp(S.ws10, 'Computer')], Aces: [ace(S.dan, 'User', 'WriteDacl')] })]
  const gpos = [base(S.gpo, dp('WORKSTATION POLICY'), { Aces: [ace(S.helpdesk, 'Group', 'GenericWrite'), ace(TESTLAB_BOB, 'User', 'GenericWrite')] })]
  const containers = [
    base(S.users, dp('USERS', { distinguishedname: 'CN=USERS,DC=RICHLAB,DC=LOCAL' }), { ContainedBy: tp(R, 'Domain'), ChildObjects: [tp(S.carol, 'User'), tp(S.dan, 'User'), tp(S.smart, 'User'), tp(S.admin, 'User')] }),
    base(S.sdholder, dp('ADMINSDHOLDER', { distinguishedname: 'CN=ADMINSDHOLDER,CN=SYSTEM,DC=RICHLAB,DC=LOCAL' }), { ContainedBy: tp(R, 'Domain'), Aces: [ace(S.helpdesk, 'Group', 'GenericAll')] }),
    base(S.dns, dp('MICROSOFTDNS', { distinguishedname: 'CN=MICROSOFTDNS,CN=SYSTEM,DC=RICHLAB,DC=LOCAL' }), { ContainedBy: tp(R, 'Domain'), Aces: [ace(S.dan, 'User', 'GenericAll')] }),
    base(S.pks, dp('PUBLIC KEY SERVICES', { distinguishedname: 'CN=PUBLIC KEY SERVICES,CN=SERVICES,CN=CONFIGURATION,DC=RICHLAB,DC=LOCAL' }), { ContainedBy: tp(R, 'Domain'), ChildObjects: [tp(S.sdholder, 'Container')], Aces: [ace(S.dan, 'User', 'GenericWrite')] }),
  ]
  return {
    'rich_users.json': file('users', users), 'rich_groups.json': file('groups', groups), 'rich_computers.json': file('computers', computers),
    'rich_domains.json': file('domains', domains), 'rich_ous.json': file('ous', ous), 'rich_gpos.json': file('gpos', gpos), 'rich_containers.json': file('containers', containers),
  }
}

// ---- Azure: a second tenant ---------------------------------------------------------------------------
const T2 = '7d000000-0000-4000-8000-0000000000aa'
export const Z = {
  ext: 'e0000000-0000-4000-8000-000000000001', off: 'e0000000-0000-4000-8000-000000000002',
  g1: 'e0000000-0000-4000-8000-000000000003', g2: 'e0000000-0000-4000-8000-000000000004',
  fsp: 'e0000000-0000-4000-8000-000000000005', dev: 'e0000000-0000-4000-8000-000000000006',
  ga: '62e90394-69f5-4237-9190-012177145e10', ua: 'fe930be7-5e62-47db-91af-98c3a49a38b1',
}
export function azureFile(): Json {
  const user = (o: string, t: string) => ({ id: o, '@odata.type': `#microsoft.graph.${t}` })
  const items = [
    { kind: 'AZTenant', data: { id: `/tenants/${T2}`, tenantId: T2, displayName: 'Fabrikam', tenantCategory: 'Home', defaultDomain: 'fabrikam.example', collected: true } },
    { kind: 'AZUser', data: { id: Z.ext, tenantId: T2, tenantName: 'Fabrikam', userPrincipalName: 'guest_x.com#EXT#@fabrikam.example', displayName: 'Guest', accountEnabled: true, userType: 'Guest' } },
    { kind: 'AZUser', data: { id: Z.off, tenantId: T2, tenantName: 'Fabrikam', userPrincipalName: 'off@fabrikam.example', displayName: 'Off', accountEnabled: false, userType: 'Member' } },
    { kind: 'AZGroup', data: { id: Z.g1, tenantId: T2, tenantName: 'Fabrikam', displayName: 'Loop One', securityEnabled: true } },
    { kind: 'AZGroup', data: { id: Z.g2, tenantId: T2, tenantName: 'Fabrikam', displayName: 'Loop Two', securityEnabled: true } },
    { kind: 'AZServicePrincipal', data: { id: Z.fsp, appId: 'f0000000-0000-4000-8000-00000000000f', tenantId: T2, tenantName: 'Fabrikam', displayName: 'vendor-app', accountEnabled: true, appOwnerOrganizationId: '11111111-2222-4333-8444-555555555555', servicePrincipalType: 'Application' } },
    { kind: 'AZDevice', data: { id: Z.dev, deviceId: 'd-2', tenantId: T2, tenantName: 'Fabrikam', displayName: 'OLD-LAPTOP', operatingSystem: 'Windows', operatingSystemVersion: '10.0.19044.1234', trustType: 'AzureAd' } },
    { kind: 'AZRole', data: { id: Z.ga, templateId: Z.ga, tenantId: T2, tenantName: 'Fabrikam', displayName: 'Global Administrator', isBuiltIn: true, isEnabled: true } },
    { kind: 'AZRole', data: { id: Z.ua, templateId: Z.ua, tenantId: T2, tenantName: 'Fabrikam', displayName: 'User Administrator', isBuiltIn: true, isEnabled: true } },
    { kind: 'AZGroupMember', data: { groupId: Z.g1, members: [{ groupId: Z.g1, member: user(Z.g2, 'group') }, { groupId: Z.g1, member: user(Z.fsp, 'servicePrincipal') }] } },
    { kind: 'AZGroupMember', data: { groupId: Z.g2, members: [{ groupId: Z.g2, member: user(Z.g1, 'group') }, { groupId: Z.g2, member: user(Z.ext, 'user') }] } },
    { kind: 'AZRoleAssignment', data: { roleDefinitionId: Z.ga, tenantId: T2, roleAssignments: [{ roleDefinitionId: Z.ga, principalId: Z.fsp, directoryScopeId: '/' }] } },
    { kind: 'AZRoleAssignment', data: { roleDefinitionId: Z.ua, tenantId: T2, roleAssignments: [{ roleDefinitionId: Z.ua, principalId: Z.g2, directoryScopeId: '/' }] } },
    { kind: 'AZRoleEligibilityScheduleInstance', data: { id: 'e-9', roleDefinitionId: Z.ua, principalId: Z.ext, directoryScopeId: '/', tenantId: T2 } },
    { kind: 'AZRoleManagementPolicyAssignment', data: { id: 'p-9', roleDefinitionId: Z.ua, tenantId: T2, endUserAssignmentRequiresApproval: true, endUserAssignmentUserApprovers: [Z.ext] } },
  ]
  return { meta: { type: 'azure', version: 5, count: items.length }, data: items }
}
