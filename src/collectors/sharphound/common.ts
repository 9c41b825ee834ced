/**
 * What every SharpHound object type shares: reading members the way BloodHound's Go decoder does
 * (member names match case-insensitively), typed principals, the node row of an AD object, ACEs
 * (ParseACEData), containment, GPLinks and local groups. One file per object type uses these.
 *
 * Pure: values in, rows and violations out (through an Emitter).
 */
import type { Emitter, NodeRow, PropertyValue } from '../payload'

export type Obj = Record<string, unknown>

export function isObject(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

/**
 * `obj[key]`, matching the member name case-insensitively as Go's encoding/json does (SharpHound
 * writes `ObjectIdentifier`; other tools write `objectidentifier`). An exact match wins.
 */
export function get(obj: Obj, key: string): unknown {
  if (key in obj) return obj[key]
  const lower = key.toLowerCase()
  for (const k of Object.keys(obj)) if (k.toLowerCase() === lower) return obj[k]
  return undefined
}

/** BloodHound's AD node kinds (graphschema/ad): a principal's ObjectType names one of them, else Base. */
export const AD_KINDS = [
  'Base', 'User', 'Computer', 'Group', 'GPO', 'OU', 'Container', 'Domain', 'ADLocalGroup', 'ADLocalUser',
  'AIACA', 'RootCA', 'EnterpriseCA', 'NTAuthStore', 'CertTemplate', 'IssuancePolicy',
] as const
const KIND_BY_LOWER = new Map<string, string>(AD_KINDS.map((k) => [k.toLowerCase(), k]))
KIND_BY_LOWER.set('localgroup', 'ADLocalGroup')
KIND_BY_LOWER.set('localuser', 'ADLocalUser')

/** ObjectType / PrincipalType → kind; anything unknown is `Base` (BloodHound's parseADKind). */
export function adKind(v: unknown): string {
  return typeof v === 'string' ? (KIND_BY_LOWER.get(v.toLowerCase()) ?? 'Base') : 'Base'
}

/**
 * The ACL relationship kinds BloodHound accepts from an ACE's RightName (graphschema ad
 * ACLRelationships plus the raw / limited owner kinds); any other RightName is skipped, as BloodHound does.
 */
export const ACL_KINDS: ReadonlySet<string> = new Set([
  'AllExtendedRights', 'ForceChangePassword', 'AddMember', 'AddAllowedToAct', 'GenericAll', 'WriteDacl', 'WriteOwner',
  'GenericWrite', 'ReadLAPSPassword', 'ReadGMSAPassword', 'Owns', 'AddSelf', 'WriteSPN', 'AddKeyCredentialLink',
  'GetChanges', 'GetChangesAll', 'GetChangesInFilteredSet', 'WriteAccountRestrictions', 'WriteGPLink',
  'SyncLAPSPassword', 'DCSync', 'ManageCertificates', 'ManageCA', 'Enroll', 'WritePKIEnrollmentFlag',
  'WritePKINameFlag', 'OwnsRaw', 'WriteOwnerRaw', 'OwnsLimitedRights', 'WriteOwnerLimitedRights',
])

export interface Principal {
  id: string
  kind: string
}

/** A list member: absent or null is an empty list; anything else but an array is a violation. */
export function list(obj: Obj, key: string, path: string, out: Emitter): unknown[] {
  const v = get(obj, key)
  if (v === undefined || v === null) return []
  if (!Array.isArray(v)) {
    out.violation(`${path}.${key}`, `${key} must be an array`)
    return []
  }
  return v
}

/** An optional string member ('' when absent or null). */
export function str(obj: Obj, key: string, path: string, out: Emitter): string {
  const v = get(obj, key)
  if (v === undefined || v === null) return ''
  if (typeof v !== 'string') {
    out.violation(`${path}.${key}`, `${key} must be a string`)
    return ''
  }
  return v
}

/** An optional boolean member (false when absent or null). */
export function bool(obj: Obj, key: string, path: string, out: Emitter): boolean {
  const v = get(obj, key)
  if (v === undefined || v === null) return false
  if (typeof v !== 'boolean') {
    out.violation(`${path}.${key}`, `${key} must be true or false`)
    return false
  }
  return v
}

/** An optional object member (null when absent or null). */
export function obj(o: Obj, key: string, path: string, out: Emitter): Obj | null {
  const v = get(o, key)
  if (v === undefined || v === null) return null
  if (!isObject(v)) {
    out.violation(`${path}.${key}`, `${key} must be an object`)
    return null
  }
  return v
}

/** A TypedPrincipal {ObjectIdentifier, ObjectType}; null (with a violation) when malformed. */
export function principal(v: unknown, path: string, out: Emitter): Principal | null {
  if (!isObject(v)) {
    out.violation(path, 'must be an object {ObjectIdentifier, ObjectType}')
    return null
  }
  const id = get(v, 'ObjectIdentifier')
  if (typeof id !== 'string') {
    out.violation(`${path}.ObjectIdentifier`, 'ObjectIdentifier is required and must be a string')
    return null
  }
  const t = get(v, 'ObjectType')
  if (t !== undefined && t !== null && typeof t !== 'string') {
    out.violation(`${path}.ObjectType`, 'ObjectType must be a string')
    return null
  }
  return { id, kind: adKind(t) }
}

/** Every principal of a list member, malformed entries reported. */
export function principals(o: Obj, key: string, path: string, out: Emitter): Principal[] {
  const res: Principal[] = []
  list(o, key, path, out).forEach((v, i) => {
    const p = principal(v, `${path}.${key}[${i}]`, out)
    if (p) res.push(p)
  })
  return res
}

const NOT_ACL = { isacl: false } as const

/** `isacl: false` plus extra properties (a fresh object per relationship). */
export function rel(extra?: Record<string, PropertyValue>): Record<string, PropertyValue> {
  return extra ? { ...NOT_ACL, ...extra } : { ...NOT_ACL }
}

/** One property value as stored: primitives and arrays of primitives; null and nested objects are dropped. */
function propertyValue(v: unknown): PropertyValue | undefined {
  if (typeof v === 'string' || typeof v === 'boolean') return v
  if (typeof v === 'number') return Number.isFinite(v) ? v : undefined
  if (Array.isArray(v)) {
    const items = v.filter((x) => typeof x === 'string' || typeof x === 'number' || typeof x === 'boolean')
    if (items.length === 0) return v.length === 0 ? [] : undefined
    const t = typeof items[0]
    return items.every((x) => typeof x === t) ? (items as PropertyValue) : items.map(String)
  }
  return undefined
}

/**
 * The node's properties: SharpHound's `Properties` under lower-case names (BloodHound's), null values
 * and nested objects dropped.
 */
export function properties(item: Obj, path: string, out: Emitter): Record<string, PropertyValue> {
  const p = get(item, 'Properties')
  const props: Record<string, PropertyValue> = {}
  if (p === undefined || p === null) return props
  if (!isObject(p)) {
    out.violation(`${path}.Properties`, 'Properties must be an object')
    return props
  }
  for (const [k, v] of Object.entries(p)) {
    const value = propertyValue(v)
    if (value !== undefined) props[k.toLowerCase()] = value
  }
  return props
}

export interface AdObject {
  id: string
  kind: string
  item: Obj
  path: string
  props: Record<string, PropertyValue>
  aces: Ace[]
}

export interface Ace {
  sid: string
  kind: string
  right: string
  inherited: boolean
  hash: string
}

function aces(item: Obj, path: string, out: Emitter): Ace[] {
  const res: Ace[] = []
  list(item, 'Aces', path, out).forEach((v, i) => {
    const p = `${path}.Aces[${i}]`
    if (!isObject(v)) {
      out.violation(p, 'an ACE must be an object {PrincipalSID, PrincipalType, RightName, IsInherited}')
      return
    }
    const sid = get(v, 'PrincipalSID')
    const right = get(v, 'RightName')
    const before = { n: 0 }
    if (typeof sid !== 'string' || sid === '') {
      out.violation(`${p}.PrincipalSID`, 'PrincipalSID is required and must be a non-empty string')
      before.n++
    }
    if (typeof right !== 'string' || right === '') {
      out.violation(`${p}.RightName`, 'RightName is required and must be a non-empty string')
      before.n++
    }
    const inh = get(v, 'IsInherited')
    if (inh !== undefined && inh !== null && typeof inh !== 'boolean') {
      out.violation(`${p}.IsInherited`, 'IsInherited must be true or false')
      before.n++
    }
    const pt = get(v, 'PrincipalType')
    if (pt !== undefined && pt !== null && typeof pt !== 'string') {
      out.violation(`${p}.PrincipalType`, 'PrincipalType must be a string')
      before.n++
    }
    const hash = get(v, 'InheritanceHash')
    if (before.n > 0) return
    res.push({ sid: sid as string, kind: adKind(pt), right: right as string, inherited: inh === true, hash: typeof hash === 'string' ? hash : '' })
  })
  return res
}

/**
 * The common part of every AD object: ObjectIdentifier (required), Properties, Aces. Null (with a
 * violation) when the element is not usable at all.
 */
export function adObject(item: unknown, kind: string, path: string, out: Emitter): AdObject | null {
  if (!isObject(item)) {
    out.violation(path, 'each element of data must be an object')
    return null
  }
  const id = get(item, 'ObjectIdentifier')
  if (typeof id !== 'string' || id === '') {
    out.violation(`${path}.ObjectIdentifier`, 'ObjectIdentifier is required and must be a non-empty string')
    return null
  }
  const props = properties(item, path, out)
  const a = aces(item, path, out)
  // convertOwnsEdgeToProperty: the owner's SID is also a property.
  const owner = a.find((x) => x.right === 'Owns' || x.right === 'OwnsRaw')
  if (owner) props.ownersid = owner.sid
  return { id, kind, item, path, props, aces: a }
}

/** Sets `domainsid` from the object's top-level DomainSID when Properties lack it (environments need it). */
export function domainSidFallback(o: AdObject, out: Emitter): string {
  const fromProps = o.props.domainsid
  if (typeof fromProps === 'string' && fromProps !== '') return fromProps
  const top = str(o.item, 'DomainSID', o.path, out)
  if (top !== '') o.props.domainsid = top
  return top
}

/** The node row: kinds [Kind, Base] (the first is the primary kind). */
export function nodeRow(o: AdObject, environmentKind: string | null = null): NodeRow {
  return { o: o.id, k: o.kind, ks: o.kind === 'Base' ? ['Base'] : [o.kind, 'Base'], p: o.props, ek: environmentKind }
}

const OWNER_RIGHTS = 'S-1-3-4'

/**
 * ACEs → relationships, as BloodHound's ParseACEData: one relationship per RightName from the principal
 * to the object (isacl, isinherited, inheritancehash); ACEs of the object on itself skipped; Owns and
 * WriteOwner held back and written as OwnsRaw / WriteOwnerRaw (resolved in post-processing,
 * src/collectors/postprocess.ts) or, when OWNER RIGHTS (S-1-3-4) is granted abusable rights, as
 * OwnsLimitedRights / WriteOwnerLimitedRights with the `privileges` list.
 */
export function emitAces(o: AdObject, acesIn: Ace[], out: Emitter): void {
  let owner: Ace | null = null
  const ownerLimited: string[] = []
  const writeOwnerLimited: string[] = []
  const writeOwners: Ace[] = []
  const aclProps = (a: Ace): Record<string, PropertyValue> => {
    // BloodHound writes `inheritancehash` on every ACE relationship (and WriteOwnerRaw), '' when the ACE has none.
    return { isacl: true, isinherited: a.inherited, inheritancehash: a.hash }
  }
  for (const a of acesIn) {
    if (a.sid === o.id) continue
    if (!ACL_KINDS.has(a.right)) continue
    if (a.right === 'Owns' || a.right === 'OwnsRaw') owner = a
    else if (a.right === 'WriteOwner' || a.right === 'WriteOwnerRaw') writeOwners.push(a)
    else if (a.sid.endsWith(OWNER_RIGHTS)) {
      ownerLimited.push(a.right)
      if (a.inherited) writeOwnerLimited.push(a.right)
    } else out.edge(a.sid, a.kind, o.id, o.kind, a.right, aclProps(a))
  }
  const p = o.props
  const anyInherited = p.doesanyinheritedacegrantownerrights === true
  const writeOwnerRaw = () => {
    for (const w of writeOwners) out.edge(w.sid, w.kind, o.id, o.kind, 'WriteOwnerRaw', aclProps(w))
  }
  if (ownerLimited.length > 0) {
    if (owner) out.edge(owner.sid, owner.kind, o.id, o.kind, 'OwnsLimitedRights', { isacl: true, isinherited: false, privileges: ownerLimited })
    if (writeOwnerLimited.length > 0) {
      for (const w of writeOwners)
        out.edge(w.sid, w.kind, o.id, o.kind, 'WriteOwnerLimitedRights', { ...aclProps(w), privileges: writeOwnerLimited })
    } else if (!anyInherited) writeOwnerRaw()
    return
  }
  if (p.doesanyacegrantownerrights === true) {
    if (anyInherited) return
    writeOwnerRaw()
    return
  }
  if (owner) out.edge(owner.sid, owner.kind, o.id, o.kind, 'OwnsRaw', { isacl: true, isinherited: false })
  writeOwnerRaw()
}

/** ContainedBy → container `Contains` object. */
export function emitContainedBy(o: AdObject, out: Emitter): void {
  const c = get(o.item, 'ContainedBy')
  if (c === undefined || c === null) return
  const p = principal(c, `${o.path}.ContainedBy`, out)
  if (p && p.id !== '') out.edge(p.id, p.kind, o.id, o.kind, 'Contains', rel())
}

/** ChildObjects → object `Contains` child. */
export function emitChildObjects(o: AdObject, out: Emitter): void {
  for (const c of principals(o.item, 'ChildObjects', o.path, out)) out.edge(o.id, o.kind, c.id, c.kind, 'Contains', rel())
}

/** Links → GPO `GPLink` object, with `enforced`. */
export function emitLinks(o: AdObject, out: Emitter): void {
  list(o.item, 'Links', o.path, out).forEach((v, i) => {
    const p = `${o.path}.Links[${i}]`
    if (!isObject(v)) return out.violation(p, 'a link must be an object {GUID, IsEnforced}')
    const guid = get(v, 'Guid')
    if (typeof guid !== 'string') return out.violation(`${p}.GUID`, 'GUID is required and must be a string')
    const enforced = bool(v, 'IsEnforced', p, out)
    out.edge(guid, 'GPO', o.id, o.kind, 'GPLink', rel({ enforced }))
  })
}

/** PrimaryGroupSID → object `MemberOf` group with isprimarygroup. */
export function emitPrimaryGroup(o: AdObject, out: Emitter): void {
  const g = str(o.item, 'PrimaryGroupSID', o.path, out)
  if (g !== '') out.edge(o.id, o.kind, g, 'Group', 'MemberOf', rel({ isprimarygroup: true }))
}

/** HasSIDHistory → object `HasSIDHistory` target. */
export function emitSidHistory(o: AdObject, out: Emitter): void {
  for (const t of principals(o.item, 'HasSIDHistory', o.path, out)) out.edge(o.id, o.kind, t.id, t.kind, 'HasSIDHistory', rel())
}

/** The well-known local groups by RID: the relationship post-processing derives from membership. */
export const LOCAL_GROUP_RIDS = { '544': 'AdminTo', '555': 'CanRDP', '562': 'ExecuteDCOM', '580': 'CanPSRemote' } as const

/**
 * One local group of a computer: ADLocalGroup node `<id>` (named when known), `LocalToComputer` to the
 * computer, members `MemberOfLocalGroup` it.
 */
export function emitLocalGroup(groupId: string, name: string | null, members: Principal[], computerId: string, out: Emitter): void {
  if (name !== 'IGNOREME') {
    const p: Record<string, PropertyValue> = {}
    if (name) p.name = name
    out.node({ o: groupId, k: 'ADLocalGroup', ks: ['ADLocalGroup', 'Base'], p, ek: null })
  }
  out.edge(groupId, 'ADLocalGroup', computerId, 'Computer', 'LocalToComputer', rel())
  for (const m of members) out.edge(m.id, m.kind, groupId, 'ADLocalGroup', 'MemberOfLocalGroup', rel())
}

/**
 * GPOChanges of a domain or OU (ParseGPOChanges): for every affected computer, a local group per
 * well-known RID with members (Administrators 544, Backup Operators 551, Remote Desktop Users 555,
 * Distributed COM Users 562, Remote Management Users 580).
 */
export function emitGpoChanges(o: AdObject, out: Emitter): void {
  const g = obj(o.item, 'GPOChanges', o.path, out)
  if (!g) return
  const p = `${o.path}.GPOChanges`
  const groups: [string, Principal[]][] = [
    ['544', principals(g, 'LocalAdmins', p, out)],
    ['551', principals(g, 'BackupOperators', p, out)],
    ['555', principals(g, 'RemoteDesktopUsers', p, out)],
    ['562', principals(g, 'DcomUsers', p, out)],
    ['580', principals(g, 'PSRemoteUsers', p, out)],
  ]
  for (const c of principals(g, 'AffectedComputers', p, out)) {
    for (const [rid, members] of groups) {
      if (members.length === 0) continue
      const id = `${c.id}-${rid}`
      out.node({ o: id, k: 'ADLocalGroup', ks: ['ADLocalGroup', 'Base'], p: {}, ek: null })
      out.edge(id, 'ADLocalGroup', c.id, 'Computer', 'LocalToComputer', rel())
      for (const m of members) out.edge(m.id, m.kind, id, 'ADLocalGroup', 'MemberOfLocalGroup', rel())
    }
  }
}

/** InheritanceHashes (domains, OUs, containers) → the `inheritancehashes` property. */
export function inheritanceHashes(o: AdObject, out: Emitter): void {
  const h = list(o.item, 'InheritanceHashes', o.path, out).filter((x): x is string => typeof x === 'string')
  if (h.length > 0) o.props.inheritancehashes = h
}
