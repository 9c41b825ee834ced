/**
 * SharpHound `computers` → Computer nodes and their relationships (BloodHound's convertComputerData,
 * ParseComputerMiscData, ConvertLocalGroup, ParseUserRightData). Local groups become ADLocalGroup nodes
 * joined to the computer; AdminTo / CanRDP / CanPSRemote / ExecuteDCOM are derived from them after
 * ingest (src/collectors/postprocess.ts). Older output's LocalAdmins / RemoteDesktopUsers / DcomUsers /
 * PSRemoteUsers lists are turned into the same local groups (`<computer SID>-<RID>`).
 */
import type { Emitter, PropertyValue } from '../payload'
import {
  adObject, bool, domainSidFallback, emitAces, emitContainedBy, emitLocalGroup, emitPrimaryGroup, emitSidHistory, get, isObject, list, nodeRow, obj,
  principal, principals, rel, str, type AdObject, type Principal,
} from './common'

/** An API result `{Collected, FailureReason, Results}`; null when absent or not collected. */
function collected(o: AdObject, key: string, out: Emitter): { res: unknown[]; path: string; v: Record<string, unknown> } | null {
  const v = obj(o.item, key, o.path, out)
  if (!v || get(v, 'Collected') !== true) return null
  const path = `${o.path}.${key}`
  return { res: list(v, 'Results', path, out), path, v }
}

function emitSessions(o: AdObject, key: string, out: Emitter): void {
  const c = collected(o, key, out)
  if (!c) return
  c.res.forEach((s, i) => {
    const p = `${c.path}.Results[${i}]`
    if (!isObject(s)) return out.violation(p, 'a session must be an object {UserSID, ComputerSID}')
    const user = get(s, 'UserSID')
    const computer = get(s, 'ComputerSID') ?? o.id
    if (typeof user !== 'string') return out.violation(`${p}.UserSID`, 'UserSID is required and must be a string')
    if (typeof computer !== 'string') return out.violation(`${p}.ComputerSID`, 'ComputerSID must be a string')
    out.edge(computer, 'Computer', user, 'User', 'HasSession', rel())
  })
}

const OLD_LOCAL_GROUPS: [string, string][] = [['LocalAdmins', '544'], ['RemoteDesktopUsers', '555'], ['DcomUsers', '562'], ['PSRemoteUsers', '580']]

function emitLocalGroups(o: AdObject, out: Emitter): void {
  list(o.item, 'LocalGroups', o.path, out).forEach((g, i) => {
    const p = `${o.path}.LocalGroups[${i}]`
    if (!isObject(g)) return out.violation(p, 'a local group must be an object {ObjectIdentifier, Name, Collected, Results}')
    if (get(g, 'Collected') !== true) return
    const name = str(g, 'Name', p, out)
    const members = principals(g, 'Results', p, out)
    if (members.length === 0 && !name.toUpperCase().startsWith('DIRECT ACCESS USERS')) return
    const id = get(g, 'ObjectIdentifier')
    if (typeof id !== 'string' || id === '') return out.violation(`${p}.ObjectIdentifier`, 'ObjectIdentifier is required and must be a non-empty string')
    emitLocalGroup(id, name || null, members, o.id, out)
    list(g, 'LocalNames', p, out).forEach((n, j) => {
      const np = `${p}.LocalNames[${j}]`
      if (!isObject(n)) return out.violation(np, 'must be an object {ObjectIdentifier, PrincipalName}')
      const nid = get(n, 'ObjectIdentifier')
      if (typeof nid !== 'string' || nid === '') return out.violation(`${np}.ObjectIdentifier`, 'ObjectIdentifier is required and must be a non-empty string')
      const pn = get(n, 'PrincipalName')
      out.node({ o: nid, k: 'Base', ks: ['Base'], p: typeof pn === 'string' ? { name: pn } : {}, ek: null })
    })
  })
  // Older output: one list per well-known local group.
  for (const [key, rid] of OLD_LOCAL_GROUPS) {
    const v = get(o.item, key)
    if (v === undefined || v === null) continue
    const path = `${o.path}.${key}`
    let entries: unknown[]
    if (Array.isArray(v)) entries = v // oldest shape: a bare list of principals
    else if (isObject(v)) {
      if (get(v, 'Collected') === false) continue
      entries = list(v, 'Results', path, out)
    } else {
      out.violation(path, `${key} must be an object {Collected, Results} or an array`)
      continue
    }
    const members: Principal[] = []
    entries.forEach((e, i) => {
      const m = principal(e, `${path}${Array.isArray(v) ? '' : '.Results'}[${i}]`, out)
      if (m) members.push(m)
    })
    if (members.length > 0) emitLocalGroup(`${o.id}-${rid}`, null, members, o.id, out)
  }
}

/**
 * User rights assignments BloodHound turns into relationships (holder -kind-> computer), each also setting
 * the computer's `hasura`. None of them is traversable; CanRDP is derived from RemoteInteractiveLogonRight
 * in post-processing.
 */
const USER_RIGHT_KINDS: ReadonlyMap<string, string> = new Map([
  ['SeRemoteInteractiveLogonRight', 'RemoteInteractiveLogonRight'],
  ['SeBackupPrivilege', 'BackupPrivilege'],
  ['SeRestorePrivilege', 'RestorePrivilege'],
])

function emitUserRights(o: AdObject, out: Emitter): void {
  list(o.item, 'UserRights', o.path, out).forEach((u, i) => {
    const p = `${o.path}.UserRights[${i}]`
    if (!isObject(u)) return out.violation(p, 'a user right must be an object {Privilege, Collected, Results}')
    if (get(u, 'Collected') !== true) return
    const grants = principals(u, 'Results', p, out)
    if (grants.length === 0) return
    const privilege = str(u, 'Privilege', p, out)
    const kind = USER_RIGHT_KINDS.get(privilege)
    if (!kind) return // other privileges: nothing, as BloodHound
    for (const g of grants) out.edge(g.id, g.kind, o.id, 'Computer', kind, rel())
    o.props.hasura = true
  })
}

/** Registry-derived node properties (collected API results only). */
function computerProperties(o: AdObject, out: Emitter): void {
  const p = o.props
  const web = obj(o.item, 'IsWebClientRunning', o.path, out)
  if (web && get(web, 'Collected') === true && typeof get(web, 'Result') === 'boolean') p.webclientrunning = get(web, 'Result') as boolean
  const smb = obj(o.item, 'SmbInfo', o.path, out)
  if (smb && get(smb, 'Collected') === true) {
    const r = get(smb, 'Result')
    if (isObject(r) && typeof get(r, 'SigningEnabled') === 'boolean') p.smbsigning = get(r, 'SigningEnabled') as boolean
  }
  const ntlm = obj(o.item, 'NTLMRegistryData', o.path, out)
  if (ntlm && get(ntlm, 'Collected') === true) {
    const r = get(ntlm, 'Result')
    if (isObject(r)) {
      const n = (k: string) => (typeof get(r, k) === 'number' ? (get(r, k) as number) : null)
      const set = (k: string, v: PropertyValue | null) => {
        if (v !== null) p[k] = v
      }
      const rs = n('RestrictSendingNtlmTraffic')
      const rr = n('RestrictReceivingNTLMTraffic')
      const req = n('RequireSecuritySignature')
      const en = n('EnableSecuritySignature')
      const mid = n('UseMachineId')
      set('restrictoutboundntlm', rs === null ? null : rs === 2)
      set('restrictreceivingntlmtraffic', rr === null ? null : rr === 2)
      set('requiresecuritysignature', req === null ? null : req !== 0)
      set('enablesecuritysignature', en === null ? null : en !== 0)
      set('ntlmminclientsec', n('NtlmMinClientSec'))
      set('ntlmminserversec', n('NtlmMinServerSec'))
      set('lmcompatibilitylevel', n('LmCompatibilityLevel'))
      set('usemachineid', mid === null ? null : mid !== 0)
    }
  }
  if ('ldapenabled' in p) {
    p.ldapavailable = p.ldapenabled
    delete p.ldapenabled
  }
  if ('ldapsenabled' in p) {
    p.ldapsavailable = p.ldapsenabled
    delete p.ldapsenabled
  }
  dcRegistryProperties(p, obj(o.item, 'DCRegistryData', o.path, out))
}

/** The value of a collected DC registry entry `{Collected, Value}` when it is a number, else null. */
function registryNumber(dc: Record<string, unknown> | null, key: string): number | null {
  const r = dc ? get(dc, key) : undefined
  return isObject(r) && get(r, 'Collected') === true && typeof get(r, 'Value') === 'number' ? (get(r, 'Value') as number) : null
}

/** BloodHound's display text for a registry value SharpHound found missing (-1). */
const REGISTRY_VALUE_MISSING = 'Registry value does not exist'

/** CertificateMappingMethods bits (Schannel), in BloodHound's display text. */
const CERTIFICATE_MAPPING_BITS: readonly [number, string][] = [
  [0x01, '0x01: One-to-one (subject/issuer)'],
  [0x02, '0x02: Many-to-one (issuer certificate)'],
  [0x04, '0x04: User principal name (UPN/SAN)'],
  [0x08, '0x08: Kerberos service-for-user (S4U) certificate'],
  [0x10, '0x10: Kerberos service-for-user (S4U) explicit certificate'],
]

const STRONG_BINDING: Readonly<Record<number, string>> = { [-1]: REGISTRY_VALUE_MISSING, 0: 'Disabled', 1: 'Compatibility mode', 2: 'Full enforcement mode' }

/**
 * DC registry data as BloodHound's ParseDCRegistryData writes it on every computer: the raw values the ADCS
 * rules read (`certificatemappingmethodsraw`, `strongcertificatebindingenforcementraw`), their display
 * forms (`certificatemappingmethods`: the names of the bits set, `strongcertificatebindingenforcement`), and
 * `vulnerablenetlogonsecuritydescriptorcollected` (false when SharpHound wrote nothing) with
 * `vulnerablenetlogonsecuritydescriptor` when collected.
 */
function dcRegistryProperties(p: Record<string, PropertyValue>, dc: Record<string, unknown> | null): void {
  const mapping = registryNumber(dc, 'CertificateMappingMethods')
  if (mapping !== null) {
    p.certificatemappingmethodsraw = mapping
    p.certificatemappingmethods = mapping === -1 ? [REGISTRY_VALUE_MISSING] : CERTIFICATE_MAPPING_BITS.filter(([bit]) => (mapping & bit) !== 0).map(([, name]) => name)
  }
  const binding = registryNumber(dc, 'StrongCertificateBindingEnforcement')
  if (binding !== null) {
    p.strongcertificatebindingenforcementraw = binding
    if (STRONG_BINDING[binding] !== undefined) p.strongcertificatebindingenforcement = STRONG_BINDING[binding]
  }
  const netlogon = dc ? get(dc, 'VulnerableNetlogonSecurityDescriptor') : undefined
  const netlogonCollected = isObject(netlogon) && get(netlogon, 'Collected') === true
  p.vulnerablenetlogonsecuritydescriptorcollected = netlogonCollected
  if (netlogonCollected) {
    const v = get(netlogon, 'Value')
    if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') p.vulnerablenetlogonsecuritydescriptor = v
  }
}

export function convertComputer(item: unknown, path: string, out: Emitter): void {
  const o = adObject(item, 'Computer', path, out)
  if (!o) return
  const domainsid = domainSidFallback(o, out)
  computerProperties(o, out)
  // Emitted first so that no placeholder is staged for the computer itself; emitUserRights may still
  // set `hasura` on the same properties object (rows are serialised after the whole element).
  out.node(nodeRow(o))
  emitAces(o, o.aces, out)
  emitPrimaryGroup(o, out)
  emitContainedBy(o, out)
  for (const t of principals(o.item, 'AllowedToDelegate', path, out)) out.edge(o.id, 'Computer', t.id, t.kind, 'AllowedToDelegate', rel())
  for (const a of principals(o.item, 'AllowedToAct', path, out)) out.edge(a.id, a.kind, o.id, 'Computer', 'AllowedToAct', rel())
  for (const t of principals(o.item, 'DumpSMSAPassword', path, out)) out.edge(o.id, 'Computer', t.id, t.kind, 'DumpSMSAPassword', rel())
  emitSidHistory(o, out)
  emitSessions(o, 'Sessions', out)
  emitSessions(o, 'PrivilegedSessions', out)
  emitSessions(o, 'RegistrySessions', out)
  if (bool(o.item, 'IsDC', path, out) && domainsid !== '') out.edge(o.id, 'Computer', domainsid, 'Domain', 'DCFor', rel())
  else {
    const uncon = o.props.unconstraineddelegation === true || bool(o.item, 'UnconstrainedDelegation', path, out)
    if (uncon && domainsid !== '') out.edge(o.id, 'Computer', domainsid, 'Domain', 'CoerceToTGT', rel())
  }
  emitLocalGroups(o, out)
  emitUserRights(o, out)
}
