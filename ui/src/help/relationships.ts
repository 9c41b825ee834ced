/**
 * Help text for the relationship panel of the console: for every relationship kind EdgeHound knows (the Active
 * Directory and Azure kinds of src/graph/kinds.ts, collected and derived alike) what it means, how it is abused,
 * what the abuse leaves behind (OPSEC) and where to read more. Our own words; facts as documented publicly by
 * Microsoft, MITRE ATT&CK, SpecterOps and the tools' authors.
 *
 * A separate module with no imports, loaded with the graph panel only (`import('./help/relationships')`), so its
 * text never weighs on the first load. test/unit/console-relationship-help.test.ts fails when a kind of the
 * project's list has no entry here, or a section is empty. Unknown kinds (extension kinds, kinds added by a later
 * collector) get `genericHelp`.
 */

export interface RelationshipHelp {
  kind: string
  /** false for the generic text of a kind this module does not describe */
  known: boolean
  /** what the relationship means */
  meaning: string
  /** how an attacker uses it */
  abuse: string
  /** what the abuse changes or leaves behind, and how to stay careful */
  opsec: string
  /** public documentation (plain URLs) */
  references: string[]
}

type Entry = [meaning: string, abuse: string, opsec: string, references: string[]]

// ---- shared references ------------------------------------------------------------------------------

const MS = 'https://learn.microsoft.com/en-us/'
const R = {
  acl: `${MS}windows/win32/secauthz/access-control-lists`,
  rights: `${MS}windows/win32/adschema/extended-rights`,
  ev5136: `${MS}previous-versions/windows/it-pro/windows-10/security/threat-protection/auditing/event-5136`,
  acctManip: 'https://attack.mitre.org/techniques/T1098/',
  permMod: 'https://attack.mitre.org/techniques/T1222/001/',
  delegation: `${MS}windows-server/security/kerberos/kerberos-constrained-delegation-overview`,
  s4u: 'https://attack.mitre.org/techniques/T1558/',
  kerberoast: 'https://attack.mitre.org/techniques/T1558/003/',
  shadowCreds: 'https://posts.specterops.io/shadow-credentials-abusing-key-trust-account-mapping-for-takeover-8ee1a53566ab',
  dcsync: 'https://attack.mitre.org/techniques/T1003/006/',
  laps: `${MS}windows-server/identity/laps/laps-overview`,
  gmsa: `${MS}windows-server/security/group-managed-service-accounts/group-managed-service-accounts-overview`,
  rdp: 'https://attack.mitre.org/techniques/T1021/001/',
  smb: 'https://attack.mitre.org/techniques/T1021/002/',
  dcom: 'https://attack.mitre.org/techniques/T1021/003/',
  winrm: 'https://attack.mitre.org/techniques/T1021/006/',
  creds: 'https://attack.mitre.org/techniques/T1003/001/',
  sidHistory: 'https://attack.mitre.org/techniques/T1134/005/',
  gpo: 'https://attack.mitre.org/techniques/T1484/001/',
  trusts: 'https://attack.mitre.org/techniques/T1482/',
  trustDocs: `${MS}entra/identity/domain-services/concepts-forest-trust`,
  relay: 'https://attack.mitre.org/techniques/T1557/001/',
  coerce: 'https://attack.mitre.org/techniques/T1187/',
  sql: `${MS}sql/relational-databases/system-stored-procedures/xp-cmdshell-transact-sql`,
  protected: `${MS}windows-server/identity/ad-ds/plan/security-best-practices/appendix-c--protected-accounts-and-groups-in-active-directory`,
  backup: `${MS}previous-versions/windows/it-pro/windows-10/security/threat-protection/security-policy-settings/back-up-files-and-directories`,
  restore: `${MS}previous-versions/windows/it-pro/windows-10/security/threat-protection/security-policy-settings/restore-files-and-directories`,
  adcs: 'https://specterops.io/wp-content/uploads/sites/3/2022/06/Certified_Pre-Owned.pdf',
  certAuth: 'https://support.microsoft.com/en-us/topic/kb5014754-certificate-based-authentication-changes-on-windows-domain-controllers-ad2c23b0-15d8-4340-a468-4d4f3b188f16',
  esc13: 'https://posts.specterops.io/adcs-esc13-abuse-technique-fda4272fbd53',
  certipy: 'https://github.com/ly4k/Certipy/wiki/06-%E2%80%90-Privilege-Escalation',
  entraRoles: `${MS}entra/identity/role-based-access-control/permissions-reference`,
  azRoles: `${MS}azure/role-based-access-control/built-in-roles`,
  graphPerms: `${MS}graph/permissions-reference`,
  msi: `${MS}entra/identity/managed-identities-azure-resources/overview`,
  keyVault: `${MS}azure/key-vault/general/security-features`,
  runCommand: `${MS}azure/virtual-machines/windows/run-command`,
  pim: `${MS}entra/id-governance/privileged-identity-management/pim-configure`,
  connect: `${MS}entra/identity/hybrid/connect/whatis-azure-ad-connect`,
  automation: `${MS}azure/automation/overview`,
  aks: `${MS}azure/aks/concepts-identity`,
  appService: `${MS}azure/app-service/overview-managed-identity`,
  logicApps: `${MS}azure/logic-apps/authenticate-with-managed-identity`,
  activityLog: `${MS}azure/azure-monitor/essentials/activity-log`,
  entraAudit: `${MS}entra/identity/monitoring-health/concept-audit-logs`,
  appCreds: `${MS}entra/identity-platform/certificate-credentials`,
  fic: `${MS}entra/workload-id/workload-identity-federation`,
  cloudPivot: 'https://attack.mitre.org/techniques/T1098/001/',
} as const

/** BloodHound's documentation page of an edge (its pages are named by the kind in kebab case). */
export function bloodhoundEdgePage(kind: string): string {
  const slug = kind
    .replace(/^ADCSESC/, 'ADCS-ESC')
    .replace(/_/g, '-')
    .replace(/([a-z0-9])([A-Z])/g, '$1-$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1-$2')
    .toLowerCase()
  return `https://bloodhound.specterops.io/resources/edges/${slug}`
}

// ---- shared OPSEC notes -----------------------------------------------------------------------------

const O = {
  dirWrite:
    'The change is written to the directory and replicated; with directory-service change auditing on, domain controllers log it (event 5136) with who made it. Note the original value and put it back afterwards.',
  dacl:
    'A changed security descriptor replicates to every domain controller and is logged as a directory change (event 5136) when auditing is on. Grant the narrowest right needed and remove the added entry when done.',
  password:
    'A forced reset locks the real owner out and is visible at their next sign-in; domain controllers log the reset (event 4724). Prefer a reversible route such as shadow credentials when it exists.',
  logon:
    'Interactive and network logons create logon events (4624) on the host and may alert EDR; tools that run code on the host are the noisiest part. Credentials touched in memory can be protected by Credential Guard.',
  read: 'Reading a protected attribute is an LDAP read that leaves little trace unless the object has a read audit entry (event 4662 with SACLs). Using the secret afterwards is what shows up in logons.',
  kerberos:
    'Ticket requests appear as Kerberos events on domain controllers (4768/4769); unusual encryption types, service names or delegation flags stand out to detection tuned for them.',
  adcs:
    'The certificate request is recorded in the CA database with the requester and the subject asked for, and CA auditing logs it (events 4886/4887). A certificate remains valid after passwords change until it expires or is revoked.',
  adcsConfig:
    'Changes to templates or CA settings are directory or CA configuration changes that CA and directory auditing record (4882, 4885, 4899, 5136). Restore the previous setting after use.',
  relay:
    'Coercion makes the target connect to a host the attacker controls; the relayed session shows as a logon from the relay host (4624, NTLM). Network monitoring for coercion RPC calls and NTLM from servers catches it.',
  structural:
    'This relationship is not an action by itself: nothing is changed by following it. Its footprint is that of the relationships used before and after it.',
  azControl:
    'Control-plane actions are recorded in the Azure activity log of the subscription with the caller\'s identity. Read-only enumeration is quieter than changes; revert what you change.',
  entraChange:
    'Directory changes appear in the Entra ID audit log (and sign-ins with new credentials in the sign-in logs). New credentials and role assignments are among the changes defenders alert on first.',
  graphApp:
    'Calls made with an application permission appear in the audit log as made by the service principal; new secrets, role grants and memberships are recorded there. Remove what was added.',
  keyVault:
    'Secret, key and certificate reads are logged by the vault\'s diagnostic settings when they are enabled; changing the access policy or role assignments is an activity-log event.',
  vmCode:
    'Run Command and extensions leave an activity-log entry and files on the VM (extension handler logs); the script runs as SYSTEM or root, which endpoint protection on the VM may flag.',
} as const

// ---- entries ----------------------------------------------------------------------------------------

const adcsEsc = (what: string, how: string, refs: string[] = []): Entry => [what, how, O.adcs, [R.adcs, R.certAuth, ...refs]]

/**
 * The four derived NTLM relay kinds all start at a domain's Authenticated Users group (any domain account can
 * do it) and end at the computer that is taken over.
 */
const coerceRelay = (how: string, effect: string): Entry => [
  `Derived: any authenticated domain account (the source, Authenticated Users) can take over the target computer: ${how}`,
  `Trigger the coercion (for example through the print spooler or EFS RPC interfaces, or over WebDAV when the WebClient service runs), relay the incoming NTLM authentication, and ${effect}`,
  O.relay,
  [R.coerce, R.relay],
]

const HELP: Record<string, Entry> = {
  // ---- Active Directory: object control --------------------------------------------------------------
  Owns: [
    'The source is the owner of the target object. An owner may always change the object\'s security descriptor, whatever the access list says (unless owner rights are restricted).',
    'Grant yourself full control by editing the DACL, then use that right: reset a user\'s password, add a member to a group, or configure delegation on a computer.',
    O.dacl,
    [R.acl, R.permMod],
  ],
  GenericAll: [
    'Full control of the target object: every right on every attribute, including resetting passwords, writing members and changing the security descriptor.',
    'On a user: reset the password, add shadow credentials or an SPN to roast. On a group: add members. On a computer: set resource-based constrained delegation or read LAPS. On a domain: replicate secrets (DCSync).',
    O.dirWrite,
    [R.acl, R.acctManip, R.shadowCreds],
  ],
  GenericWrite: [
    'The source may write the target\'s ordinary attributes (not its security descriptor or password).',
    'Write msDS-KeyCredentialLink (shadow credentials), servicePrincipalName (targeted Kerberoasting), scriptPath on a user, or msDS-AllowedToActOnBehalfOfOtherIdentity on a computer; on a group, write its members.',
    O.dirWrite,
    [R.acl, R.shadowCreds, R.kerberoast],
  ],
  WriteOwner: [
    'The source may change the owner of the target object.',
    'Make yourself the owner, then, as owner, grant yourself full control in the DACL and abuse that right as with GenericAll.',
    O.dacl,
    [R.acl, R.permMod],
  ],
  WriteDacl: [
    'The source may change the discretionary access control list of the target object.',
    'Add an access entry giving yourself full control (or, on a domain, the replication rights) and then use it.',
    O.dacl,
    [R.acl, R.permMod],
  ],
  AllExtendedRights: [
    'The source holds every extended (control access) right on the target, such as resetting a password without knowing the old one, or the replication rights on a domain.',
    'Reset the user\'s password, read LAPS passwords on a computer whose attribute is confidential, or DCSync when the target is a domain.',
    O.password,
    [R.rights, R.acctManip],
  ],
  ForceChangePassword: [
    'The source may reset the target user\'s password without knowing the current one (the User-Force-Change-Password extended right).',
    'Set a new password for the user and sign in as them.',
    O.password,
    [R.rights, R.acctManip],
  ],
  AddMember: [
    'The source may write the member attribute of the target group.',
    'Add yourself or an account you control to the group and inherit everything the group can do (a new logon or ticket picks up the membership).',
    'Membership changes are logged on domain controllers (4728/4732/4756) and privileged group changes are widely alerted on. Remove the member afterwards.',
    [R.acctManip],
  ],
  AddSelf: [
    'The source may add itself, and only itself, to the target group (the Self-Membership validated write).',
    'Add your own account to the group, then request a new ticket to use the membership.',
    'Membership changes are logged on domain controllers (4728/4732/4756). Remove yourself afterwards.',
    [R.rights, R.acctManip],
  ],
  WriteSPN: [
    'The source may write the servicePrincipalName attribute of the target account.',
    'Add an SPN to a user and request a service ticket for it to crack the password offline (targeted Kerberoasting), then remove the SPN.',
    O.kerberos,
    [R.kerberoast],
  ],
  AddKeyCredentialLink: [
    'The source may write msDS-KeyCredentialLink of the target user or computer (Windows Hello key trust).',
    'Add a key you own (shadow credentials), authenticate with PKINIT as the target to get its TGT and NT hash, then remove the key.',
    'The attribute change is a directory change (5136) and PKINIT logons are Kerberos events (4768 with certificate details). Remove only the key you added.',
    [R.shadowCreds],
  ],
  WriteAccountRestrictions: [
    'The source may write the account-restrictions property set of the target computer, which includes msDS-AllowedToActOnBehalfOfOtherIdentity.',
    'Configure resource-based constrained delegation from an account you control to the computer, then impersonate an administrator to it with S4U.',
    O.dirWrite,
    [R.delegation, R.s4u],
  ],
  AddAllowedToAct: [
    'The source may write msDS-AllowedToActOnBehalfOfOtherIdentity on the target computer.',
    'Let an account you control delegate to the computer (resource-based constrained delegation), then request tickets to it as any non-protected user.',
    O.dirWrite,
    [R.delegation, R.s4u],
  ],
  WriteGPLink: [
    'The source may write the gPLink attribute of the target domain or OU, which decides which GPOs apply there.',
    'Link a GPO you control (or one you can make reach an attacker host) to the container so that its settings run on the users and computers below it.',
    'Linking changes policy for everything below the container at the next refresh; the change is logged (5136). Unlink promptly.',
    [R.gpo],
  ],
  WriteOwnerLimitedRights: [
    'The source may change the owner of the target, but the object carries an OWNER RIGHTS entry, so becoming owner only gives the rights that entry allows.',
    'Take ownership and use the rights granted to the owner by the OWNER RIGHTS entry (for example a write on specific attributes).',
    O.dacl,
    [R.acl],
  ],
  WriteOwnerRaw: [
    'The access list grants WriteOwner on the target, recorded as collected before analysis decided whether owner rights are restricted.',
    'Kept for analysis; the usable form is WriteOwner or WriteOwnerLimitedRights, which analysis derives from it.',
    O.dacl,
    [R.acl],
  ],
  OwnsLimitedRights: [
    'The source owns the target, but an OWNER RIGHTS entry limits what the owner may do to the rights listed there.',
    'Use the rights the OWNER RIGHTS entry grants; the implicit full-control-through-ownership route is closed.',
    O.dacl,
    [R.acl],
  ],
  OwnsRaw: [
    'The source is recorded as owner of the target as collected, before analysis decided whether owner rights are restricted.',
    'Kept for analysis; the usable form is Owns or OwnsLimitedRights, which analysis derives from it.',
    O.dacl,
    [R.acl],
  ],

  // ---- Active Directory: membership and structure ----------------------------------------------------
  MemberOf: [
    'The source is a member of the target group and holds every right granted to the group.',
    'Nothing to do: the membership is already in effect; follow the group\'s own relationships.',
    O.structural,
    [`${MS}windows-server/identity/ad-ds/manage/understand-security-groups`],
  ],
  MemberOfLocalGroup: [
    'The source is a member of a local group on a computer (such as Administrators or Remote Desktop Users).',
    'Use the rights of the local group on that computer, for example administrative logon for Administrators.',
    O.structural,
    [`${MS}windows-server/identity/ad-ds/manage/understand-security-groups`],
  ],
  LocalToComputer: [
    'The local group or local user exists on the target computer.',
    'Not abused directly; it places a local principal on its computer so paths through local groups are readable.',
    O.structural,
    [`${MS}windows/security/identity-protection/access-control/local-accounts`],
  ],
  Contains: [
    'The source container (domain, OU or container) holds the target object. Inheritable access entries on the container apply to the objects inside.',
    'With control of the container, add an inheritable full-control entry that flows down to the objects it contains, then use it on them.',
    'Inheritable entries change the effective rights of every object below; the change is logged once on the container (5136). Remove it afterwards.',
    [R.acl],
  ],
  ContainsIdentity: [
    'The source container holds the target identity, and rights inherited from the container reach it.',
    'Control of the container gives control of the identities below it through inheritance.',
    O.structural,
    [R.acl],
  ],
  PropagatesACEsTo: [
    'Access entries set on the source are inherited by the target (the target does not block inheritance).',
    'Add an inheritable entry on the source to obtain the same right on the target.',
    O.dacl,
    [R.acl],
  ],
  GPLink: [
    'The source GPO is linked to the target domain or OU, so its settings apply to the users and computers below.',
    'Whoever can edit the GPO can push scheduled tasks, scripts or group memberships to every object in scope.',
    'GPO edits change SYSVOL files and the GPO version; scheduled tasks or scripts that run show up on every affected host. Revert the GPO.',
    [R.gpo],
  ],
  GPOAppliesTo: [
    'The source GPO applies to the target user or computer (linked above it and not filtered out).',
    'Edit the GPO to run code on the target or change its local groups at the next policy refresh.',
    'Policy refresh on the target logs the applied GPOs; the payload runs on every object the GPO reaches, not only this one.',
    [R.gpo],
  ],
  CanApplyGPO: [
    'The source may change which GPOs apply to the target (for example through the link or the GPO\'s security filtering).',
    'Make a GPO you control apply to the target, then use the GPO to run code there.',
    O.dirWrite,
    [R.gpo],
  ],
  ClaimSpecialIdentity: [
    'The source obtains the target special identity (such as Authenticated Users or Everyone) simply by authenticating.',
    'Any right granted to the special identity is available to the source without any change.',
    O.structural,
    [`${MS}windows-server/identity/ad-ds/manage/understand-special-identities-groups`],
  ],
  ProtectAdminGroups: [
    'The source (AdminSDHolder) imposes its access list on the protected target account or group every hour (SDProp).',
    'Control of AdminSDHolder gives persistent control of every protected account, since SDProp copies an added entry to them.',
    'An entry added to AdminSDHolder reaches Tier Zero accounts within an hour and is a classic persistence indicator that defenders check.',
    [R.protected],
  ],

  // ---- Active Directory: sessions and remote access --------------------------------------------------
  HasSession: [
    'The target user had a logon session on the source computer when data was collected; their credentials may be in its memory.',
    'With administrative access to the computer, take the user\'s credentials or tokens from memory (LSASS) or impersonate their process.',
    'Touching LSASS is one of the most watched actions on Windows hosts; token impersonation is quieter. Sessions are a snapshot and may be gone.',
    [R.creds],
  ],
  AdminTo: [
    'The source is a local administrator of the target computer.',
    'Run code on the computer remotely (services, scheduled tasks, WMI), read its secrets and take credentials of the users logged on.',
    O.logon,
    [R.smb, R.creds],
  ],
  CanRDP: [
    'The source may sign in to the target computer through Remote Desktop.',
    'Open an interactive session; from there, escalate locally or reach what the computer can reach.',
    'An RDP logon (type 10) is logged on the target and shows a visible session to its user. Sign out cleanly.',
    [R.rdp],
  ],
  CanPSRemote: [
    'The source may open a PowerShell remoting (WinRM) session on the target computer.',
    'Run commands on the computer through WinRM as the source.',
    'WinRM logons are network logons (4624 type 3) and PowerShell logging (4103/4104) records the commands.',
    [R.winrm],
  ],
  ExecuteDCOM: [
    'The source may start and use DCOM objects on the target computer (member of Distributed COM Users or equivalent).',
    'Instantiate a DCOM application that executes commands (such as MMC20.Application) to run code on the computer.',
    'DCOM execution creates child processes of unusual parents (mmc.exe, explorer.exe) that endpoint monitoring flags.',
    [R.dcom],
  ],
  RemoteInteractiveLogonRight: [
    'The source holds the "Allow log on through Remote Desktop Services" right on the target computer.',
    'Combined with membership of Remote Desktop Users (or an equivalent), sign in over RDP.',
    'RDP logons (type 10) are logged on the target.',
    [R.rdp],
  ],
  SQLAdmin: [
    'The source is a sysadmin of a SQL Server instance running on the target computer.',
    'Run operating-system commands through xp_cmdshell or agent jobs as the SQL service account, and read linked-server credentials.',
    'Enabling xp_cmdshell is a configuration change logged by SQL Server; commands run as the service account on the host.',
    [R.sql],
  ],
  CanBackup: [
    'The source holds backup rights on the target computer (for example through Backup Operators).',
    'Copy protected files such as the registry hives or NTDS.dit, bypassing their access lists, and extract credentials offline.',
    'Backup-privilege file reads and registry saves are logged when object access auditing is on; copying NTDS.dit off a DC is a high-value alert.',
    [R.backup],
  ],
  BackupPrivilege: [
    'The source holds SeBackupPrivilege on the target computer: it may read any file regardless of its access list.',
    'Save the SAM, SYSTEM and SECURITY hives (or NTDS.dit on a domain controller) and extract secrets offline.',
    'Privilege use can be audited (4672/4674); hive saves through the registry are visible to endpoint monitoring.',
    [R.backup],
  ],
  RestorePrivilege: [
    'The source holds SeRestorePrivilege on the target computer: it may write any file or registry key regardless of its access list.',
    'Replace a service binary or a registry value that a privileged process loads, to run code as SYSTEM.',
    'Overwriting system files or service configuration is visible to file integrity monitoring and EDR; restore the originals.',
    [R.restore],
  ],

  // ---- Active Directory: Kerberos delegation ---------------------------------------------------------
  AllowedToDelegate: [
    'The source is trusted for constrained delegation to a service on the target (msDS-AllowedToDelegateTo).',
    'With the source\'s credentials, use S4U2Self and S4U2Proxy to obtain a ticket to the target as any non-protected user, such as an administrator; the service name in the ticket can often be changed.',
    O.kerberos,
    [R.delegation, R.s4u],
  ],
  AllowedToAct: [
    'The source may act on behalf of other users to the target computer (resource-based constrained delegation is configured on the target).',
    'From the source account, request a ticket to the target as an administrator with S4U2Self and S4U2Proxy.',
    O.kerberos,
    [R.delegation, R.s4u],
  ],
  CoerceToTGT: [
    'The source is trusted for unconstrained delegation: any account that authenticates to it hands over a forwardable TGT.',
    'Coerce a privileged account (for example a domain controller) to authenticate to the source and take its TGT from memory.',
    'Coercion and ticket extraction on the delegation host are watched; domain controller computer accounts used from unusual hosts stand out.',
    [R.delegation, R.coerce],
  ],
  AbuseTGTDelegation: [
    'A trust lets TGTs of the target domain be delegated to unconstrained-delegation hosts in the source domain.',
    'Coerce a domain controller of the target domain to authenticate to an unconstrained-delegation host of the source domain and reuse its TGT.',
    O.kerberos,
    [R.delegation, R.trusts],
  ],

  // ---- Active Directory: credentials and replication -------------------------------------------------
  GetChanges: [
    'The source holds the Replicating Directory Changes right on the domain.',
    'Combined with GetChangesAll, replicate password hashes from a domain controller (DCSync); with GetChangesInFilteredSet, replicate LAPS passwords (SyncLAPSPassword).',
    'Replication requests from a host that is not a domain controller are a well-known detection (4662 with the replication GUIDs, network monitoring of DRSUAPI).',
    [R.dcsync, R.rights],
  ],
  GetChangesAll: [
    'The source holds Replicating Directory Changes All on the domain, which includes secret attributes.',
    'Combined with GetChanges, run DCSync to obtain every account\'s hash, including krbtgt.',
    'Replication requests from a host that is not a domain controller are a well-known detection (4662 with the replication GUIDs).',
    [R.dcsync, R.rights],
  ],
  GetChangesInFilteredSet: [
    'The source holds Replicating Directory Changes In Filtered Set on the domain (used by read-only domain controllers).',
    'Together with GetChanges it allows replicating confidential attributes of the filtered set, such as LAPS passwords (see SyncLAPSPassword).',
    'Replication from a host that is not a domain controller is logged and watched, as for DCSync.',
    [R.dcsync, R.rights],
  ],
  DCSync: [
    'Derived: the source holds both replication rights needed to pull secrets from the domain (GetChanges and GetChangesAll, directly or through groups).',
    'Replicate the krbtgt and administrator hashes, then forge tickets or pass the hash.',
    'DCSync from a non-DC host is one of the most alerted techniques in AD monitoring (4662, DRSUAPI traffic).',
    [R.dcsync],
  ],
  ReadLAPSPassword: [
    'The source may read the local administrator password that LAPS stores on the target computer.',
    'Read the password attribute and log on to the computer as its local administrator.',
    O.read,
    [R.laps],
  ],
  SyncLAPSPassword: [
    'Derived: the source holds GetChanges and GetChangesInFilteredSet on the domain, which reveal confidential attributes such as the LAPS passwords of its computers.',
    'Replicate the LAPS attribute of a computer through DRSUAPI without read permission on it, then log on as its local administrator.',
    'Replication from a non-DC host is visible as for DCSync.',
    [R.laps, R.dcsync],
  ],
  ReadGMSAPassword: [
    'The source may retrieve the password of the target group managed service account.',
    'Read msDS-ManagedPassword, derive the account\'s hash and authenticate as the service account.',
    O.read,
    [R.gmsa],
  ],
  DumpSMSAPassword: [
    'A standalone managed service account is installed on the source computer; its password is stored there.',
    'With administrative access to the computer, extract the account\'s secret from the LSA secrets and use it.',
    'Reading LSA secrets requires SYSTEM on the host and is watched by endpoint protection.',
    [`${MS}windows-server/security/group-managed-service-accounts/group-managed-service-accounts-overview`, R.creds],
  ],
  HasSIDHistory: [
    'The source carries the SID of the target in its sIDHistory, so it is granted the target\'s access.',
    'Authenticate as the source: its tokens include the target\'s SID and its rights.',
    'Nothing changes on use; unexpected SID history on accounts is something defenders audit.',
    [R.sidHistory],
  ],

  // ---- Active Directory: trusts ----------------------------------------------------------------------
  TrustedBy: [
    'Legacy trust edge: the source domain is trusted by the target domain (authentication flows from the target\'s side).',
    'Principals of the trusted domain may be granted access in the trusting domain; follow the newer SameForestTrust or CrossForestTrust edges for the details.',
    O.structural,
    [R.trusts, R.trustDocs],
  ],
  SameForestTrust: [
    'The source and target domains are in the same forest: the trust is transitive and SID filtering does not apply between them.',
    'Control of any domain of a forest gives control of the forest, for example with a forged ticket carrying an Enterprise Admins SID in its SID history.',
    'Forged tickets with extra SIDs are detectable by ticket anomaly monitoring on domain controllers.',
    [R.trusts, R.sidHistory],
  ],
  CrossForestTrust: [
    'The source domain trusts a domain of another forest; SID filtering normally limits which SIDs cross it.',
    'Look for principals of the trusted forest granted access here, or for weakened SID filtering (SID history enabled) on the trust.',
    O.structural,
    [R.trusts, R.trustDocs],
  ],
  SpoofSIDHistory: [
    'Derived: the trust allows SIDs in SID history to cross it, so the source domain can claim membership of groups of the target domain.',
    'Forge a ticket in the source domain whose SID history holds a privileged SID of the target domain (not filtered by the trust).',
    'Inter-realm tickets with foreign privileged SIDs are unusual and monitored where trusts are watched.',
    [R.sidHistory, R.trusts],
  ],
  HasTrustKeys: [
    'The source domain holds the trust account keys of a trust with the target domain.',
    'With control of the domain, read the trust key and forge inter-realm tickets to the other domain.',
    O.kerberos,
    [R.trusts],
  ],

  // ---- Active Directory: domain controllers ----------------------------------------------------------
  DCFor: [
    'The source computer is a domain controller of the target domain.',
    'Administrative control of the computer gives control of the domain: its database holds every secret.',
    O.structural,
    [`${MS}windows-server/identity/ad-ds/get-started/virtual-dc/active-directory-domain-services-overview`],
  ],

  // ---- Active Directory Certificate Services: structure ---------------------------------------------
  RootCAFor: [
    'The source root CA certificate is stored in the target domain\'s Certification Authorities container, so the domain trusts it as a root.',
    'Not abused by itself; it is part of the chain that makes certificates issued under it valid for authentication.',
    O.structural,
    [R.adcs],
  ],
  PublishedTo: [
    'The source certificate template is published on the target enterprise CA, which issues certificates from it.',
    'Not abused by itself; an abusable template only matters on a CA that publishes it.',
    O.structural,
    [R.adcs],
  ],
  HostsCAService: [
    'The source computer runs the certification authority service of the target enterprise CA.',
    'Administrative control of the computer gives control of the CA, including its private key (GoldenCert).',
    O.structural,
    [R.adcs],
  ],
  NTAuthStoreFor: [
    'The source NTAuth store belongs to the target domain: CAs listed there may issue certificates for Kerberos and Schannel logon.',
    'Write access to the store lets an attacker add a CA of their own and authenticate with certificates it signs.',
    O.structural,
    [R.adcs, R.certAuth],
  ],
  TrustedForNTAuth: [
    'The source enterprise CA is listed in the target NTAuth store, so its certificates may be used to authenticate in the domain.',
    'Not abused by itself; it is required for the certificate-template escalations to yield a logon.',
    O.structural,
    [R.adcs],
  ],
  EnterpriseCAFor: [
    'The source enterprise CA certificate is stored in the target domain\'s Enrollment Services container.',
    'Not abused by itself; it links the CA to the domain in ADCS paths.',
    O.structural,
    [R.adcs],
  ],
  IssuedSignedBy: [
    'The source CA certificate was signed by the target CA (a step of the certificate chain).',
    'Not abused by itself; the chain decides whether certificates are trusted for logon.',
    O.structural,
    [R.adcs],
  ],
  ExtendedByPolicy: [
    'The source certificate template includes the target issuance policy.',
    'Not abused by itself; when the policy is linked to a group (OIDGroupLink) the template can grant that group\'s rights (ESC13).',
    O.structural,
    [R.esc13],
  ],
  OIDGroupLink: [
    'The source issuance policy is linked to the target group: a logon with a certificate carrying the policy receives the group in its token.',
    'Enroll in a template that includes the policy and authenticate with the certificate to gain the group\'s rights.',
    O.adcs,
    [R.esc13],
  ],

  // ---- Active Directory Certificate Services: rights ------------------------------------------------
  Enroll: [
    'The source may request certificates from the target template or enterprise CA.',
    'Needed for every template-based escalation: with a vulnerable template, enroll to obtain a certificate for a privileged identity.',
    O.adcs,
    [R.adcs],
  ],
  ManageCA: [
    'The source holds the Manage CA right on the target enterprise CA (CA administrator).',
    'Change CA settings such as the EDITF_ATTRIBUTESUBJECTALTNAME2 flag, or make yourself a certificate manager and approve pending requests.',
    O.adcsConfig,
    [R.adcs],
  ],
  ManageCertificates: [
    'The source holds the Manage Certificates right on the target enterprise CA (certificate officer).',
    'Approve pending requests that require manager approval, including requests you made for privileged subjects.',
    O.adcsConfig,
    [R.adcs],
  ],
  DelegatedEnrollmentAgent: [
    'The CA lets the source enrollment agent request certificates on behalf of others for the target template (enrollment agent restrictions).',
    'With an enrollment agent certificate, request a certificate for a privileged user from the template.',
    O.adcs,
    [R.adcs],
  ],
  EnrollOnBehalfOf: [
    'Certificates from the source template can be used as enrollment agent certificates to request the target template on behalf of other users.',
    'Obtain an agent certificate from the source template, then use it to enroll in the target template as a privileged user (ESC3).',
    O.adcs,
    [R.adcs],
  ],
  WritePKIEnrollmentFlag: [
    'The source may write msPKI-Enrollment-Flag of the target template.',
    'Remove manager approval or change enrollment behaviour to make the template exploitable (part of ESC4).',
    O.adcsConfig,
    [R.adcs],
  ],
  WritePKINameFlag: [
    'The source may write msPKI-Certificate-Name-Flag of the target template.',
    'Set the flag that lets the requester supply the subject, turning the template into an ESC1 template.',
    O.adcsConfig,
    [R.adcs],
  ],
  GoldenCert: [
    'The source computer hosts an enterprise CA whose private key signs certificates trusted for logon in the target domain.',
    'With administrative access to the CA host, export the CA key and forge certificates for any user, valid until the CA certificate expires.',
    'Forged certificates never pass through the CA, so its database shows nothing; exporting the key is the moment to catch.',
    [R.adcs],
  ],

  // ---- Active Directory Certificate Services: escalations (derived) ---------------------------------
  ADCSESC1: adcsEsc(
    'Derived: the source can enroll in a template on a CA trusted for NTAuth that allows client authentication and lets the requester supply the subject, so it can get a certificate as anyone in the target domain.',
    'Request a certificate from the template with a privileged user in the subject alternative name, then authenticate with PKINIT as that user.',
  ),
  ADCSESC3: adcsEsc(
    'Derived: the source can obtain an enrollment agent certificate and use it to enroll on behalf of other users in a template that allows authentication, gaining a certificate for a privileged identity of the target domain.',
    'Enroll in the agent template, then request an authentication certificate on behalf of a domain administrator and use it with PKINIT.',
  ),
  ADCSESC4: adcsEsc(
    'Derived: the source can modify a certificate template published on a CA trusted for NTAuth, and so can make it vulnerable (for example to ESC1) to compromise the target domain.',
    'Change the template to allow a supplied subject and client authentication, enroll as a privileged user, then restore the template.',
    [R.certipy],
  ),
  ADCSESC6a: adcsEsc(
    'Derived: the enterprise CA honours a requester-supplied subject alternative name on every request (EDITF_ATTRIBUTESUBJECTALTNAME2) and the source can enroll in an authentication template, with strong certificate mapping not enforced for this path (variant a: Kerberos).',
    'Request a certificate from a permitted template with a privileged user\'s name in the SAN attribute and authenticate as that user.',
  ),
  ADCSESC6b: adcsEsc(
    'Derived: like ESC6a, a CA accepting requester-supplied SANs lets the source obtain a certificate for another identity, here where certificate mapping is weak for Schannel (variant b).',
    'Request a certificate naming a privileged user in the SAN and use it where the weak mapping applies (for example LDAPS with Schannel).',
  ),
  ADCSESC9a: adcsEsc(
    'Derived: the source controls an account that can enroll in a template without the security extension (CT_FLAG_NO_SECURITY_EXTENSION), so the certificate maps by UPN only (variant a: user targets).',
    'Change the controlled account\'s UPN to the target\'s, enroll, restore the UPN, then authenticate with the certificate as the target.',
    [R.certipy],
  ),
  ADCSESC9b: adcsEsc(
    'Derived: as ESC9a, for targets mapped by DNS host name (variant b: computer targets).',
    'Change the controlled computer\'s dNSHostName to the target\'s, enroll, restore it, then authenticate as the target computer.',
    [R.certipy],
  ),
  ADCSESC10a: adcsEsc(
    'Derived: domain controllers use weak certificate mapping (registry settings), and the source controls an account that can enroll in an authentication template, so a certificate can be made to map to the target user (variant a).',
    'Set the controlled account\'s UPN to the target\'s, enroll, restore the UPN, and authenticate with the certificate.',
    [R.certipy],
  ),
  ADCSESC10b: adcsEsc(
    'Derived: as ESC10a, through Schannel\'s weak UPN/DNS mapping (variant b), typically against LDAPS.',
    'Make a certificate map to the target through the controlled account\'s UPN or DNS name and authenticate over Schannel.',
    [R.certipy],
  ),
  ADCSESC13: adcsEsc(
    'Derived: the source can enroll in a template whose issuance policy is linked to a group, so authenticating with the certificate adds the target group to the token.',
    'Enroll in the template and authenticate with PKINIT: the resulting ticket carries the linked group\'s SID.',
    [R.esc13],
  ),
  ADCSESC16: adcsEsc(
    'Derived: the CA is configured to leave the security extension out of every certificate it issues, so certificates map weakly and the source can obtain one that maps to the target.',
    'As with ESC9: change a controlled account\'s UPN to the target\'s, enroll, restore the UPN, and authenticate as the target.',
    [R.certipy],
  ),

  // ---- Active Directory: NTLM relay (derived) -------------------------------------------------------
  CoerceAndRelayNTLMToSMB: coerceRelay(
    'another computer that is a local administrator of the target can be coerced to authenticate, and the target does not require SMB signing.',
    'relay it to SMB on the target to act there as an administrator (run code, read secrets).',
  ),
  CoerceAndRelayNTLMToADCS: coerceRelay(
    'the target can be coerced to authenticate, and an enterprise CA offers web enrollment open to NTLM relay (ESC8).',
    'relay it to the web enrollment endpoint to obtain a certificate for the target\'s computer account, then authenticate with it.',
  ),
  CoerceAndRelayNTLMToLDAP: coerceRelay(
    'the target runs the WebClient service, so it can be coerced to authenticate over HTTP, and a domain controller does not require LDAP signing.',
    'relay it to LDAP to write the target\'s own attributes (shadow credentials or resource-based delegation) and take it over.',
  ),
  CoerceAndRelayNTLMToLDAPS: coerceRelay(
    'the target runs the WebClient service, so it can be coerced to authenticate over HTTP, and a domain controller offers LDAPS without channel binding.',
    'relay it to LDAPS to write the target\'s own attributes (shadow credentials or resource-based delegation) and take it over.',
  ),

  // ---- hybrid ---------------------------------------------------------------------------------------
  SyncedToEntraUser: [
    'The source on-premises user is synchronised to the target Entra ID user (Entra Connect); with password hash sync the same password signs in to both.',
    'Take over the AD user (for example reset its password) and sign in to Entra ID as the synchronised user after the next sync.',
    'The password change syncs within minutes and the cloud sign-in appears in Entra sign-in logs; MFA may still stand in the way.',
    [R.connect],
  ],
  SyncedToADUser: [
    'The source Entra ID user is synchronised from (or written back to) the target on-premises AD user.',
    'Control of the cloud identity may give control of the AD account where password writeback is enabled (reset in the cloud, used on premises).',
    'Password writeback events appear in Entra audit logs and as password resets on premises.',
    [R.connect],
  ],

  // ---- Azure: tenant and resource structure ----------------------------------------------------------
  AZContains: [
    'The source (tenant, management group, subscription or resource group) contains the target; Azure role assignments on the source are inherited by the target.',
    'A role such as Owner or Contributor held on the container applies to everything inside it.',
    O.structural,
    [`${MS}azure/governance/management-groups/overview`],
  ],
  AZMemberOf: [
    'The source is a member of the target Entra ID group and receives its roles and permissions.',
    'Nothing to do: the membership is in effect; follow the group\'s relationships.',
    O.structural,
    [`${MS}entra/fundamentals/concept-learn-about-groups`],
  ],
  AZHasRole: [
    'The source holds the target Entra ID role (directory role assignment).',
    'Use the permissions of the role; Global Administrator and Privileged Role Administrator control the tenant.',
    O.structural,
    [R.entraRoles],
  ],
  AZRoleEligible: [
    'The source is eligible for the target Entra ID role through Privileged Identity Management: it may activate the role when needed.',
    'Activate the role (meeting any MFA, justification or approval requirements) and use it for its activation window.',
    'Activations are logged in the PIM audit history and may notify administrators or require approval.',
    [R.pim],
  ],
  AZRoleApprover: [
    'The source approves activation requests for the target Entra ID role in Privileged Identity Management.',
    'Approve your own or an accomplice\'s activation request for the role.',
    'Approvals are recorded in PIM audit history with the approver.',
    [R.pim],
  ],
  AZScopedTo: [
    'The role assignment or permission of the source is limited to the target scope (for example an administrative unit or a single resource).',
    'Not abused by itself; it narrows where the related role applies.',
    O.structural,
    [`${MS}entra/identity/role-based-access-control/admin-units-assign-roles`],
  ],
  AZRunsAs: [
    'The source resource (for example a VM, function app or automation account) runs as the target service principal or managed identity.',
    'Run code on the resource and request tokens for its identity from the instance metadata endpoint.',
    'Token requests from the resource are ordinary; the code execution that precedes them is what is logged.',
    [R.msi],
  ],
  AZManagedIdentity: [
    'The source resource has the target managed identity assigned to it.',
    'Whoever can run code on the resource can obtain tokens as the managed identity and use its role assignments.',
    'Managed identity sign-ins appear in the service principal sign-in logs.',
    [R.msi],
  ],
  AZNodeResourceGroup: [
    'The source AKS cluster keeps its node VMs and scale sets in the target resource group.',
    'Control of the node resource group gives code execution on the cluster nodes and their managed identities.',
    O.structural,
    [R.aks],
  ],
  AZAuthenticatesTo: [
    'The source federated identity credential lets an external workload authenticate as the target application without a secret.',
    'Control the external issuer or subject named in the credential (for example a CI pipeline) to obtain tokens as the application.',
    'Token exchanges are recorded in service principal sign-in logs with the federated credential used.',
    [R.fic],
  ],

  // ---- Azure: control-plane roles --------------------------------------------------------------------
  AZOwner: [
    'The source holds the Owner role on the target Azure resource or scope: full control, including granting access to others.',
    'Assign yourself any role, run code on VMs and other compute, or read secrets from the resources in scope.',
    O.azControl,
    [R.azRoles],
  ],
  AZContributor: [
    'The source holds Contributor on the target resource or scope: it may change resources but not grant access.',
    'Run commands on VMs, change web and function app code, or read automation and key vault secrets where the resource allows it.',
    O.azControl,
    [R.azRoles],
  ],
  AZUserAccessAdministrator: [
    'The source holds User Access Administrator on the target scope: it may assign any Azure role there.',
    'Assign yourself Owner on the scope, then use it.',
    O.azControl,
    [R.azRoles],
  ],
  AZVMContributor: [
    'The source holds Virtual Machine Contributor on the target VM: it may manage it, including running commands.',
    'Use Run Command or a custom script extension to run code as SYSTEM/root and obtain the VM\'s managed identity tokens.',
    O.vmCode,
    [R.runCommand, R.azRoles],
  ],
  AZVMAdminLogin: [
    'The source may sign in to the target VM as an administrator with its Entra ID credentials.',
    'Log in (RDP or SSH with Entra ID authentication) as an administrator and take what the VM holds.',
    'Entra ID sign-ins to the VM appear in sign-in logs and on the VM.',
    [`${MS}entra/identity/devices/howto-vm-sign-in-azure-ad-windows`],
  ],
  AZAvereContributor: [
    'The source holds Avere Contributor on the target, which includes the permissions to run commands on virtual machines.',
    'Run commands on VMs in scope and obtain their managed identity tokens.',
    O.vmCode,
    [R.azRoles, R.runCommand],
  ],
  AZExecuteCommand: [
    'The source may run commands on the target Intune-managed device (for example through device management scripts).',
    'Deploy a script to the device that runs as SYSTEM.',
    'Script deployments are recorded in Intune and visible on the device.',
    [`${MS}mem/intune/apps/intune-management-extension`],
  ],
  AZAutomationContributor: [
    'The source holds Automation Contributor on the target automation account.',
    'Create or edit a runbook that runs as the account\'s managed identity or Run As account and use its access.',
    'Runbook changes and jobs are logged in the activity log and job history.',
    [R.automation, R.azRoles],
  ],
  AZKeyVaultContributor: [
    'The source holds Key Vault Contributor on the target vault: it manages the vault (including its access policies), though not its data directly.',
    'Grant yourself an access policy (on vaults using access policies) and read secrets, keys and certificates.',
    O.keyVault,
    [R.keyVault, R.azRoles],
  ],
  AZAKSContributor: [
    'The source holds Azure Kubernetes Service Contributor on the target cluster.',
    'Run commands in the cluster (for example with the run-command feature) and reach the identities of its nodes and workloads.',
    O.azControl,
    [R.aks, R.azRoles],
  ],
  AZWebsiteContributor: [
    'The source holds Website Contributor on the target web or function app.',
    'Deploy code to the app to run as its managed identity and read its configuration secrets.',
    O.azControl,
    [R.appService, R.azRoles],
  ],
  AZLogicAppContributor: [
    'The source holds Logic App Contributor on the target logic app.',
    'Change the workflow to make calls with the app\'s managed identity or read the connections it uses.',
    O.azControl,
    [R.logicApps, R.azRoles],
  ],
  AZGetKeys: [
    'The source may read keys from the target key vault.',
    'Retrieve the keys and use them wherever they protect data or sign tokens.',
    O.keyVault,
    [R.keyVault],
  ],
  AZGetSecrets: [
    'The source may read secrets from the target key vault.',
    'Retrieve the secrets: often passwords, connection strings or application credentials that open further access.',
    O.keyVault,
    [R.keyVault],
  ],
  AZGetCertificates: [
    'The source may read certificates (with their private keys, when exportable) from the target key vault.',
    'Retrieve certificates used as application credentials and authenticate as those applications.',
    O.keyVault,
    [R.keyVault, R.appCreds],
  ],

  // ---- Azure: Entra ID directory control -------------------------------------------------------------
  AZGlobalAdmin: [
    'The source is a Global Administrator of the target tenant: every directory permission.',
    'Anything in the tenant; it can also give itself User Access Administrator over all Azure subscriptions.',
    O.entraChange,
    [R.entraRoles],
  ],
  AZPrivilegedRoleAdmin: [
    'The source holds Privileged Role Administrator in the target tenant: it may assign any Entra ID role, Global Administrator included.',
    'Assign Global Administrator to an identity you control.',
    O.entraChange,
    [R.entraRoles],
  ],
  AZPrivilegedAuthAdmin: [
    'The source holds Privileged Authentication Administrator: it may reset passwords and authentication methods of any user, administrators included.',
    'Reset a Global Administrator\'s password or register a new MFA method for them and sign in.',
    O.entraChange,
    [R.entraRoles],
  ],
  AZResetPassword: [
    'The source may reset the password of the target Entra ID user.',
    'Set a new password and sign in as the user (MFA may still be required).',
    'The reset is in the Entra audit log and the user notices at their next sign-in.',
    [R.entraRoles],
  ],
  AZAddMembers: [
    'The source may add members to the target Entra ID group.',
    'Add an identity you control and use the group\'s roles and access.',
    O.entraChange,
    [R.entraRoles],
  ],
  AZAddOwner: [
    'The source may add owners to the target application or service principal.',
    'Make yourself owner, then add a credential to the application and sign in as it.',
    O.entraChange,
    [R.entraRoles, R.cloudPivot],
  ],
  AZAddSecret: [
    'The source may add credentials (secrets or certificates) to the target application or service principal.',
    'Add a new secret and authenticate as the service principal with its permissions.',
    O.entraChange,
    [R.appCreds, R.cloudPivot],
  ],
  AZOwns: [
    'The source owns the target Entra ID object (group, application or service principal).',
    'As owner, add members to a group or add credentials to an application or service principal.',
    O.entraChange,
    [`${MS}entra/identity/enterprise-apps/overview-assign-app-owners`],
  ],
  AZCloudAppAdmin: [
    'The source holds Cloud Application Administrator: it may manage every application registration and service principal (application proxy settings excepted).',
    'Add a secret to a privileged service principal and authenticate as it.',
    O.entraChange,
    [R.entraRoles],
  ],
  AZAppAdmin: [
    'The source holds Application Administrator: it may manage every application registration and service principal.',
    'Add a secret to a privileged service principal and use its permissions.',
    O.entraChange,
    [R.entraRoles],
  ],
  AZGrant: [
    'The source may grant consent or app role assignments that give the target permissions.',
    'Grant a principal you control high Microsoft Graph permissions, then use them.',
    O.graphApp,
    [R.graphPerms],
  ],
  AZGrantSelf: [
    'The source may grant itself further permissions (for example consent to its own app roles).',
    'Grant yourself a more powerful permission and use it.',
    O.graphApp,
    [R.graphPerms],
  ],
  AZCreateAppRoleAssignment: [
    'The source may create app role assignments for the target service principal.',
    'Assign a Microsoft Graph application permission (such as RoleManagement.ReadWrite.Directory) to a principal you control.',
    O.graphApp,
    [R.graphPerms],
  ],

  // ---- Azure: Microsoft Graph application permissions ----------------------------------------------
  AZMGApplication_ReadWrite_All: [
    'The source service principal holds the Graph application permission Application.ReadWrite.All over the target tenant.',
    'Add credentials to any application or service principal and authenticate as it.',
    O.graphApp,
    [R.graphPerms],
  ],
  AZMGAppRoleAssignment_ReadWrite_All: [
    'The source holds the Graph application permission AppRoleAssignment.ReadWrite.All over the target tenant.',
    'Grant yourself any other Graph permission, including RoleManagement.ReadWrite.Directory, and use it.',
    O.graphApp,
    [R.graphPerms],
  ],
  AZMGDirectory_ReadWrite_All: [
    'The source holds the Graph application permission Directory.ReadWrite.All over the target tenant.',
    'Change directory objects, for example add members to groups that are not role-assignable.',
    O.graphApp,
    [R.graphPerms],
  ],
  AZMGGroup_ReadWrite_All: [
    'The source holds the Graph application permission Group.ReadWrite.All over the target tenant.',
    'Add members or owners to groups that are not role-assignable and use their access.',
    O.graphApp,
    [R.graphPerms],
  ],
  AZMGGroupMember_ReadWrite_All: [
    'The source holds the Graph application permission GroupMember.ReadWrite.All over the target tenant.',
    'Add members to groups that are not role-assignable and use their access.',
    O.graphApp,
    [R.graphPerms],
  ],
  AZMGRoleManagement_ReadWrite_Directory: [
    'The source holds the Graph application permission RoleManagement.ReadWrite.Directory over the target tenant.',
    'Assign any Entra ID role, Global Administrator included, to a principal you control.',
    O.graphApp,
    [R.graphPerms],
  ],
  AZMGServicePrincipalEndpoint_ReadWrite_All: [
    'The source holds the Graph application permission ServicePrincipalEndpoint.ReadWrite.All over the target tenant.',
    'Change service principal endpoints, which can redirect sign-ins or data of the applications concerned.',
    O.graphApp,
    [R.graphPerms],
  ],
  AZMGAddMember: [
    'Derived: through a Graph application permission the source can add members to the target group.',
    'Add a principal you control to the group and use the group\'s access.',
    O.graphApp,
    [R.graphPerms],
  ],
  AZMGAddOwner: [
    'Derived: through a Graph application permission the source can add owners to the target object.',
    'Become owner of the group, application or service principal, then add members or credentials.',
    O.graphApp,
    [R.graphPerms],
  ],
  AZMGAddSecret: [
    'Derived: through a Graph application permission the source can add credentials to the target application or service principal.',
    'Add a secret and authenticate as the target.',
    O.graphApp,
    [R.graphPerms, R.appCreds],
  ],
  AZMGGrantAppRoles: [
    'Derived: through a Graph application permission the source can grant app roles (application permissions) to principals.',
    'Grant yourself RoleManagement.ReadWrite.Directory or another high permission and use it.',
    O.graphApp,
    [R.graphPerms],
  ],
  AZMGGrantRole: [
    'Derived: through a Graph application permission the source can assign Entra ID roles to principals.',
    'Assign Global Administrator to a principal you control.',
    O.graphApp,
    [R.graphPerms, R.entraRoles],
  ],
}

/** The kinds this module describes. */
export const DESCRIBED_KINDS: readonly string[] = Object.keys(HELP)

/** The text for a kind this module does not describe (an extension kind, or a kind added later). */
export function genericHelp(kind: string): RelationshipHelp {
  return {
    kind,
    known: false,
    meaning: `"${kind}" is a relationship kind this console has no description of, typically one defined by a graph extension or a custom collector. Its meaning is what the extension's author documented.`,
    abuse: 'Whether a path may cross it is decided by the extension\'s definition (traversable or not). Read the extension\'s documentation for how the relationship is used.',
    opsec: 'Unknown: check the documentation of the system the relationship describes before acting on it.',
    references: ['https://bloodhound.specterops.io/opengraph/overview'],
  }
}

/** The help of a relationship kind: its sections, or the generic text for an unknown kind. */
export function relationshipHelp(kind: string): RelationshipHelp {
  if (!Object.prototype.hasOwnProperty.call(HELP, kind)) return genericHelp(kind)
  const [meaning, abuse, opsec, refs] = HELP[kind]
  return { kind, known: true, meaning, abuse, opsec, references: [...refs, bloodhoundEdgePage(kind)] }
}
