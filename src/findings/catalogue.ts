/**
 * The built-in finding catalogue: every finding type the analysis produces by itself, with its title and
 * the four remediation texts, in Markdown. Extension relationship findings are added at run time from the
 * kind catalogue (`loadKindCatalog(db).relationshipFindings`): title = display_name, texts = remediation.
 * docs/findings.md documents this catalogue; a unit test checks that it lists every type.
 */
import type { KindCatalog, RelationshipFindingInfo } from '../extensions/catalog'

export type FindingShape = 'relationship' | 'list'

export interface FindingTexts {
  title: string
  short_description: string
  long_description: string
  short_remediation: string
  long_remediation: string
}

export interface FindingDef extends FindingTexts {
  /** the finding type, e.g. `T0GenericAll` */
  type: string
  shape: FindingShape
  /** relationship findings: the edge kind; list findings: undefined */
  edgeKind?: string
  /** relationship findings of extensions: the environment kind their environment must have */
  environmentKind?: string
  source: 'builtin' | 'extension'
}

/** The four texts the asset endpoints serve (long_description has no endpoint; docs list it). */
export const ASSET_NAMES = ['title', 'short_description', 'short_remediation', 'long_remediation'] as const
export type AssetName = (typeof ASSET_NAMES)[number]

interface T0Spec {
  kind: string
  label: string
  platform: 'Active Directory' | 'Microsoft Entra ID / Azure'
  /** what the privilege lets the holder do to the Tier Zero object */
  abuse: string
  /** how to remove it */
  fix: string
}

const AD = 'Active Directory' as const
const AZ = 'Microsoft Entra ID / Azure' as const

const T0_SPECS: T0Spec[] = [
  {
    kind: 'GenericAll',
    label: 'Generic All',
    platform: AD,
    abuse: 'take full control of the object: reset its password, add members, write any attribute or take it over entirely',
    fix: 'Remove the access control entry granting `GenericAll` (Full Control) on the Tier Zero object, or make the principal itself Tier Zero if it is administered as such.',
  },
  {
    kind: 'GenericWrite',
    label: 'Generic Write',
    platform: AD,
    abuse: 'write to any non-protected attribute of the object, for example a logon script, a service principal name (targeted Kerberoasting) or shadow credentials',
    fix: 'Remove the access control entry granting `GenericWrite` on the Tier Zero object.',
  },
  {
    kind: 'WriteDacl',
    label: 'Write DACL',
    platform: AD,
    abuse: 'rewrite the object’s access control list and grant themselves any right, including full control',
    fix: 'Remove the access control entry granting `WriteDacl` (Modify permissions) on the Tier Zero object.',
  },
  {
    kind: 'WriteOwner',
    label: 'Write Owner',
    platform: AD,
    abuse: 'make themselves the owner of the object, after which they can rewrite its access control list',
    fix: 'Remove the access control entry granting `WriteOwner` (Modify owner) on the Tier Zero object.',
  },
  {
    kind: 'Owns',
    label: 'Owns',
    platform: AD,
    abuse: 'as the object’s owner, implicitly rewrite its access control list and grant themselves full control',
    fix: 'Change the owner of the Tier Zero object to a Tier Zero principal (for example Domain Admins).',
  },
  {
    kind: 'AddMember',
    label: 'Add Member',
    platform: AD,
    abuse: 'add any principal, including themselves, to the Tier Zero group and inherit its privileges',
    fix: 'Remove the access control entry that allows writing the `member` attribute of the Tier Zero group.',
  },
  {
    kind: 'ForceChangePassword',
    label: 'Force Change Password',
    platform: AD,
    abuse: 'reset the password of the Tier Zero account without knowing the current one, and log on as it',
    fix: 'Remove the access control entry granting the `User-Force-Change-Password` extended right on the Tier Zero account.',
  },
  {
    kind: 'AllExtendedRights',
    label: 'All Extended Rights',
    platform: AD,
    abuse: 'use every extended right on the object: reset passwords, read LAPS passwords and, on a domain, replicate secrets (DCSync)',
    fix: 'Remove the access control entry granting `All Extended Rights` on the Tier Zero object.',
  },
  {
    kind: 'DCSync',
    label: 'DCSync',
    platform: AD,
    abuse: 'replicate directory secrets from a domain controller (DCSync), which yields the password hashes of every account including `krbtgt`',
    fix: 'Remove the `Replicating Directory Changes` and `Replicating Directory Changes All` rights from the principal on the domain object; only domain controllers need them.',
  },
  {
    kind: 'AdminTo',
    label: 'Admin To',
    platform: AD,
    abuse: 'log on as a local administrator of the Tier Zero computer (for example a domain controller) and take over every credential on it',
    fix: 'Remove the principal from the local Administrators group of the Tier Zero computer (directly, through a group or through a Group Policy).',
  },
  {
    kind: 'GoldenCert',
    label: 'Golden Certificate',
    platform: AD,
    abuse: 'hold the private key of an enterprise certification authority trusted for authentication in the domain, and so forge a certificate that signs in as any account of the domain, including domain administrators, for as long as the CA certificate is valid',
    fix: 'Manage the enterprise CA host as Tier Zero (tag it `admin_tier_0`) and remove every administrator of that computer who is not Tier Zero; if the CA key may have been exposed, revoke and reissue the CA certificate.',
  },
  {
    kind: 'ADCSESC1',
    label: 'ADCS ESC1',
    platform: AD,
    abuse: 'enroll in a certificate template that lets the requester name the subject and allows client authentication, published by a CA trusted for authentication, and so obtain a certificate for any account of the domain (ESC1)',
    fix: 'On the template, clear “Supply in the request” (`CT_FLAG_ENROLLEE_SUPPLIES_SUBJECT`), require manager approval or authorized signatures, or remove the enrollment right of principals outside Tier Zero; unpublish templates nobody needs.',
  },
  {
    kind: 'ADCSESC3',
    label: 'ADCS ESC3',
    platform: AD,
    abuse: 'enroll as an enrollment agent and then request certificates on behalf of other accounts through a template that allows it, signing in as them (ESC3)',
    fix: 'Restrict enrollment agents on the CA to named agents and templates, require manager approval on the enrollment-agent template, and remove the enrollment right of principals outside Tier Zero.',
  },
  {
    kind: 'ADCSESC4',
    label: 'ADCS ESC4',
    platform: AD,
    abuse: 'change a certificate template it controls (write access to the template object) into one that lets the requester name the subject, then enroll and sign in as any account (ESC4)',
    fix: 'Remove write, owner and full-control rights on certificate templates from principals outside Tier Zero; only PKI administrators managed as Tier Zero should edit templates.',
  },
  {
    kind: 'ADCSESC6a',
    label: 'ADCS ESC6a',
    platform: AD,
    abuse: 'enroll in a client-authentication template on a CA that accepts a subject alternative name from any request (`EDITF_ATTRIBUTESUBJECTALTNAME2`) while domain controllers map certificates weakly, and sign in as any account (ESC6a)',
    fix: 'Clear the `EDITF_ATTRIBUTESUBJECTALTNAME2` flag on the CA (`certutil -setreg policy\\EditFlags -EDITF_ATTRIBUTESUBJECTALTNAME2`, then restart the service) and enforce strong certificate binding on the domain controllers.',
  },
  {
    kind: 'ADCSESC6b',
    label: 'ADCS ESC6b',
    platform: AD,
    abuse: 'enroll in a client-authentication template on a CA that accepts a subject alternative name from any request (`EDITF_ATTRIBUTESUBJECTALTNAME2`) while domain controllers accept UPN mapping without the SID extension, and sign in as any account (ESC6b)',
    fix: 'Clear the `EDITF_ATTRIBUTESUBJECTALTNAME2` flag on the CA and enforce strong certificate binding (`StrongCertificateBindingEnforcement = 2`) on the domain controllers.',
  },
  {
    kind: 'ADCSESC9a',
    label: 'ADCS ESC9a',
    platform: AD,
    abuse: 'take control of an account that may enroll in a template without the security extension, change its user principal name to a Tier Zero account’s, enroll, and sign in as that account (ESC9a)',
    fix: 'Remove `CT_FLAG_NO_SECURITY_EXTENSION` from the template, enforce strong certificate binding on the domain controllers, and remove the control the principal has over accounts that may enroll.',
  },
  {
    kind: 'ADCSESC9b',
    label: 'ADCS ESC9b',
    platform: AD,
    abuse: 'take control of a computer that may enroll in a template without the security extension, change its DNS host name to a Tier Zero computer’s, enroll, and sign in as that computer (ESC9b)',
    fix: 'Remove `CT_FLAG_NO_SECURITY_EXTENSION` from the template, enforce strong certificate binding on the domain controllers, and remove the control the principal has over computers that may enroll.',
  },
  {
    kind: 'ADCSESC10a',
    label: 'ADCS ESC10a',
    platform: AD,
    abuse: 'take control of an account that may enroll in a client-authentication template, change its user principal name, and sign in as a Tier Zero account where domain controllers map certificates by UPN only (ESC10a)',
    fix: 'Set the Schannel `CertificateMappingMethods` on the domain controllers to exclude UPN mapping (no `0x4`) and remove the control the principal has over accounts that may enroll.',
  },
  {
    kind: 'ADCSESC10b',
    label: 'ADCS ESC10b',
    platform: AD,
    abuse: 'take control of a computer that may enroll in a client-authentication template, change its DNS host name, and sign in as a Tier Zero computer where domain controllers map certificates by UPN (ESC10b)',
    fix: 'Set the Schannel `CertificateMappingMethods` on the domain controllers to exclude UPN mapping (no `0x4`) and remove the control the principal has over computers that may enroll.',
  },
  {
    kind: 'ADCSESC13',
    label: 'ADCS ESC13',
    platform: AD,
    abuse: 'enroll in a template whose issuance policy is linked to a group, and so act with that group’s rights when signing in with the certificate (ESC13)',
    fix: 'Unlink the group from the issuance policy (`msDS-OIDToGroupLink`), or remove the enrollment right of principals outside Tier Zero from templates carrying that policy.',
  },
  {
    kind: 'ADCSESC16',
    label: 'ADCS ESC16',
    platform: AD,
    abuse: 'enroll in a client-authentication template on a CA that leaves the SID security extension out of every certificate, and sign in as another account after changing a controlled account’s name (ESC16)',
    fix: 'Remove `1.3.6.1.4.1.311.25.2` from the CA’s `DisableExtensionList` so certificates carry the SID extension again, and enforce strong certificate binding on the domain controllers.',
  },
  {
    kind: 'CoerceAndRelayNTLMToSMB',
    label: 'Coerce and Relay NTLM to SMB',
    platform: AD,
    abuse: 'coerce a computer to authenticate and relay its NTLM authentication to the Tier Zero computer over SMB, where signing is not required, gaining the relayed computer’s administrative access to it',
    fix: 'Require SMB signing on the Tier Zero computer (Group Policy “Microsoft network server: Digitally sign communications (always)”), and remove computer accounts from its local Administrators group.',
  },
  {
    kind: 'CoerceAndRelayNTLMToLDAP',
    label: 'Coerce and Relay NTLM to LDAP',
    platform: AD,
    abuse: 'coerce the Tier Zero computer to authenticate and relay its NTLM authentication to a domain controller’s LDAP service, which does not require signing, and then change the computer object (for example resource-based constrained delegation or shadow credentials)',
    fix: 'Require LDAP signing on every domain controller (“Domain controller: LDAP server signing requirements” = Require signing) and stop the WebClient service where it is not needed.',
  },
  {
    kind: 'CoerceAndRelayNTLMToLDAPS',
    label: 'Coerce and Relay NTLM to LDAPS',
    platform: AD,
    abuse: 'coerce the Tier Zero computer to authenticate and relay its NTLM authentication to a domain controller’s LDAPS service, which does not enforce channel binding, and then change the computer object',
    fix: 'Enforce LDAPS channel binding on every domain controller (“Domain controller: LDAP server channel binding token requirements” = Always) and stop the WebClient service where it is not needed.',
  },
  {
    kind: 'CoerceAndRelayNTLMToADCS',
    label: 'Coerce and Relay NTLM to ADCS',
    platform: AD,
    abuse: 'coerce the Tier Zero computer to authenticate and relay its NTLM authentication to a certification authority’s web enrollment endpoint, obtaining a certificate that signs in as the computer (ESC8)',
    fix: 'Require HTTPS with Extended Protection for Authentication on the CA’s web enrollment and enrollment services, or disable NTLM on them; remove the web enrollment role where it is not used.',
  },
  {
    kind: 'AZOwns',
    label: 'Owns',
    platform: AZ,
    abuse: 'as an owner, manage the Tier Zero object: add credentials to it, change its members or assign it roles',
    fix: 'Remove the principal from the owners of the Tier Zero object.',
  },
  {
    kind: 'AZAddSecret',
    label: 'Add Secret',
    platform: AZ,
    abuse: 'add a client secret or certificate to the Tier Zero application or service principal and authenticate as it',
    fix: 'Remove the role assignment or ownership that lets the principal manage credentials of the Tier Zero application.',
  },
  {
    kind: 'AZAddOwner',
    label: 'Add Owner',
    platform: AZ,
    abuse: 'add themselves as an owner of the Tier Zero object and then manage it fully',
    fix: 'Remove the role assignment that lets the principal add owners to the Tier Zero object.',
  },
  {
    kind: 'AZResetPassword',
    label: 'Reset Password',
    platform: AZ,
    abuse: 'reset the password of the Tier Zero user and sign in as it',
    fix: 'Remove the administrative role that lets the principal reset the Tier Zero user’s password, or scope it with an administrative unit that excludes Tier Zero users.',
  },
  {
    kind: 'AZAddMembers',
    label: 'Add Members',
    platform: AZ,
    abuse: 'add any principal, including themselves, to the Tier Zero group and inherit its role assignments',
    fix: 'Remove the role assignment or ownership that lets the principal change the membership of the Tier Zero group, or make the group role-assignable and manage it as Tier Zero.',
  },
]

function t0Def(s: T0Spec): FindingDef {
  const type = `T0${s.kind}`
  return {
    type,
    shape: 'relationship',
    edgeKind: s.kind,
    source: 'builtin',
    title: `Non Tier Zero Principals with ${s.label} Privileges on Tier Zero Objects`,
    short_description: `Principals outside Tier Zero hold the \`${s.kind}\` privilege on a Tier Zero object (${s.platform}).`,
    long_description: [
      `A principal that is not part of Tier Zero has the \`${s.kind}\` relationship to a Tier Zero object.`,
      '',
      `With it, the principal — and everyone who can take control of the principal — can ${s.abuse}.`,
      'Anybody who reaches such a principal therefore reaches Tier Zero, and with it the whole environment.',
      '',
      '**Impact** counts the principals of the environment that can reach the principal holding the privilege;',
      '**exposure** counts those that can reach the Tier Zero object.',
    ].join('\n'),
    short_remediation: `Remove the \`${s.kind}\` privilege from principals outside Tier Zero.`,
    long_remediation: [
      `### Remove the \`${s.kind}\` privilege`,
      '',
      s.fix,
      '',
      'Then confirm the change:',
      '',
      '1. Collect the environment again and upload the data.',
      '2. Wait for the next analysis run; the finding closes when the relationship is gone.',
      '',
      'If the principal really needs the privilege, it must be managed as Tier Zero (tag it `admin_tier_0`)',
      'and protected accordingly: only Tier Zero administrators may control it.',
    ].join('\n'),
  }
}

const KERBEROASTING: FindingDef = {
  type: 'Kerberoasting',
  shape: 'list',
  source: 'builtin',
  title: 'Kerberoastable Users',
  short_description: 'Enabled user accounts have a service principal name (SPN) and are exposed to Kerberoasting.',
  long_description: [
    'Any authenticated user can request a Kerberos service ticket for an account that has a service principal',
    'name (SPN). Part of the ticket is encrypted with a key derived from the account’s password, so the ticket',
    'can be cracked offline without any further interaction with the domain. Weak or old passwords fall quickly,',
    'and service accounts are often privileged.',
    '',
    '**Impact** and **exposure** count the principals of the domain that can reach the account.',
  ].join('\n'),
  short_remediation: 'Remove unneeded SPNs from user accounts, or give the accounts long random passwords.',
  long_remediation: [
    '### Reduce Kerberoasting exposure',
    '',
    '1. Remove service principal names that are no longer used (`setspn -D <spn> <account>`).',
    '2. Prefer group managed service accounts (gMSA), whose passwords are long, random and rotated automatically.',
    '3. Otherwise set a long (25+ characters), random password on the account and rotate it regularly.',
    '4. Allow only AES encryption for the account (`msDS-SupportedEncryptionTypes`), not RC4.',
    '5. Remove privileges the service account does not need, so that a cracked password is worth less.',
  ].join('\n'),
}

const ASREPROASTING: FindingDef = {
  type: 'ASREPRoasting',
  shape: 'list',
  source: 'builtin',
  title: 'AS-REP Roastable Users',
  short_description: 'Enabled user accounts do not require Kerberos pre-authentication and are exposed to AS-REP roasting.',
  long_description: [
    'When Kerberos pre-authentication is disabled for an account (`DONT_REQ_PREAUTH`), anybody who can reach a',
    'domain controller can request an authentication reply for it without knowing its password. Part of the',
    'reply is encrypted with a key derived from the password and can be cracked offline.',
    '',
    '**Impact** and **exposure** count the principals of the domain that can reach the account.',
  ].join('\n'),
  short_remediation: 'Require Kerberos pre-authentication for every user account.',
  long_remediation: [
    '### Require Kerberos pre-authentication',
    '',
    '1. In the account options of each listed user, clear **Do not require Kerberos preauthentication**',
    '   (PowerShell: `Set-ADAccountControl -Identity <user> -DoesNotRequirePreAuth $false`).',
    '2. If an application really needs it, give the account a long (25+ characters) random password and',
    '   remove every privilege it does not need.',
  ].join('\n'),
}

export const BUILTIN_FINDINGS: readonly FindingDef[] = [...T0_SPECS.map(t0Def), KERBEROASTING, ASREPROASTING]

const BUILTIN_BY_TYPE: ReadonlyMap<string, FindingDef> = new Map(BUILTIN_FINDINGS.map((d) => [d.type, d]))

export function builtinFinding(type: string): FindingDef | undefined {
  return BUILTIN_BY_TYPE.get(type)
}

export function extensionFindingDef(f: RelationshipFindingInfo): FindingDef {
  return {
    type: f.name,
    shape: 'relationship',
    edgeKind: f.relationshipKind,
    environmentKind: f.environmentKind,
    source: 'extension',
    title: f.displayName || f.name,
    short_description: f.remediation.short_description,
    long_description: f.remediation.long_description,
    short_remediation: f.remediation.short_remediation,
    long_remediation: f.remediation.long_remediation,
  }
}

/**
 * Every finding type known right now: built-ins, then extension relationship findings. A built-in wins a
 * name clash (extension names carry their namespace prefix, so a clash means a misconfigured extension).
 */
export function allFindingDefs(catalog: Pick<KindCatalog, 'relationshipFindings'>): FindingDef[] {
  const out = [...BUILTIN_FINDINGS]
  const seen = new Set(out.map((d) => d.type))
  for (const f of catalog.relationshipFindings) {
    if (seen.has(f.name)) continue
    seen.add(f.name)
    out.push(extensionFindingDef(f))
  }
  return out
}

export function findFindingDef(type: string, catalog: Pick<KindCatalog, 'relationshipFindings'>): FindingDef | undefined {
  const b = BUILTIN_BY_TYPE.get(type)
  if (b) return b
  const e = catalog.relationshipFindings.find((f) => f.name === type)
  return e ? extensionFindingDef(e) : undefined
}
