/**
 * SharpHound `domains` → Domain nodes (environments), containment, GPLinks, trusts and GPO-applied local
 * groups (BloodHound's convertDomainData, ParseDomainTrusts, ParseGPOChanges).
 */
import type { Emitter, PropertyValue } from '../payload'
import { adObject, bool, emitAces, emitChildObjects, emitGpoChanges, emitLinks, get, inheritanceHashes, isObject, list, nodeRow, rel, type AdObject } from './common'

/** Domain properties older collectors wrote as strings: converted, or dropped when unreadable. */
const INT_PROPS = ['machineaccountquota', 'minpwdlength', 'pwdproperties', 'pwdhistorylength', 'lockoutthreshold']

function fixDomainProperties(p: Record<string, PropertyValue>): void {
  for (const k of INT_PROPS) {
    const v = p[k]
    if (v === undefined || typeof v === 'number') {
      if (typeof v === 'number') p[k] = Math.trunc(v)
      continue
    }
    const n = typeof v === 'string' && /^[+-]?\d+$/.test(v.trim()) ? Number.parseInt(v, 10) : NaN
    if (Number.isFinite(n)) p[k] = n
    else delete p[k]
  }
  const b = p.expirepasswordsonsmartcardonlyaccounts
  if (b !== undefined && typeof b !== 'boolean') {
    const s = typeof b === 'string' ? b.trim().toLowerCase() : ''
    if (s === 'true' || s === '1' || s === 't') p.expirepasswordsonsmartcardonlyaccounts = true
    else if (s === 'false' || s === '0' || s === 'f') p.expirepasswordsonsmartcardonlyaccounts = false
    else delete p.expirepasswordsonsmartcardonlyaccounts
  }
}

/** Older SharpHound wrote trust direction and type as numbers. */
const DIRECTIONS = ['Disabled', 'Inbound', 'Outbound', 'Bidirectional']
const TRUST_TYPES = ['ParentChild', 'CrossLink', 'Forest', 'External', 'Unknown']
const SAME_FOREST = new Set(['ParentChild', 'TreeRoot', 'CrossLink'])

function enumName(v: unknown, names: string[]): string {
  if (typeof v === 'string') return /^\d+$/.test(v) ? (names[Number(v)] ?? v) : v
  if (typeof v === 'number') return names[v] ?? String(v)
  return ''
}

function trustAttributes(v: unknown): number | null {
  if (typeof v === 'number' && Number.isFinite(v)) return Math.trunc(v)
  if (typeof v === 'string' && /^[+-]?\d+$/.test(v.trim())) return Number.parseInt(v, 10)
  return null
}

function emitTrusts(o: AdObject, out: Emitter): void {
  list(o.item, 'Trusts', o.path, out).forEach((v, i) => {
    const p = `${o.path}.Trusts[${i}]`
    if (!isObject(v)) return out.violation(p, 'a trust must be an object {TargetDomainSid, TargetDomainName, TrustDirection, TrustType, ...}')
    const target = get(v, 'TargetDomainSid')
    if (typeof target !== 'string' || target === '') return out.violation(`${p}.TargetDomainSid`, 'TargetDomainSid is required and must be a non-empty string')
    const name = get(v, 'TargetDomainName')
    const trustType = enumName(get(v, 'TrustType'), TRUST_TYPES)
    const dir = enumName(get(v, 'TrustDirection'), DIRECTIONS)
    const transitive = bool(v, 'IsTransitive', p, out)
    const sidFiltering = bool(v, 'SidFilteringEnabled', p, out)
    const tgtDelegation = bool(v, 'TGTDelegationEnabled', p, out)
    const attrs = trustAttributes(get(v, 'TrustAttributes'))
    // The trusted domain: named and an environment, but not collected by this file (available-domains
    // lists it with collected: false until its own data arrives).
    // BloodHound writes the trusted domain's name and its `domainsid` (the target SID itself).
    const targetProps: Record<string, PropertyValue> = { domainsid: target }
    if (typeof name === 'string' && name !== '') targetProps.name = name
    out.node({ o: target, k: 'Domain', ks: ['Domain', 'Base'], p: targetProps, ek: 'Domain' }, { reference: true })
    const kind = SAME_FOREST.has(trustType) ? 'SameForestTrust' : 'CrossForestTrust'
    if (dir === 'Inbound' || dir === 'Bidirectional') {
      const props: Record<string, PropertyValue> = rel({ trusttype: trustType, transitive })
      if (attrs !== null) {
        props.trustattributesinbound = attrs
        props.tgtdelegation = tgtDelegation
      }
      out.edge(target, 'Domain', o.id, 'Domain', kind, props)
      if (kind === 'CrossForestTrust' && tgtDelegation) out.edge(target, 'Domain', o.id, 'Domain', 'AbuseTGTDelegation', rel({ trusttype: trustType }))
    }
    if (dir === 'Outbound' || dir === 'Bidirectional') {
      const props: Record<string, PropertyValue> = rel({ spoofsidhistoryblocked: sidFiltering, trusttype: trustType, transitive })
      if (attrs !== null) props.trustattributesoutbound = attrs
      out.edge(o.id, 'Domain', target, 'Domain', kind, props)
      if (kind === 'CrossForestTrust' && !sidFiltering) out.edge(target, 'Domain', o.id, 'Domain', 'SpoofSIDHistory', rel({ trusttype: trustType }))
    }
  })
}

export function convertDomain(item: unknown, path: string, out: Emitter): void {
  const o = adObject(item, 'Domain', path, out)
  if (!o) return
  fixDomainProperties(o.props)
  if (typeof o.props.domainsid !== 'string' || o.props.domainsid === '') o.props.domainsid = o.id
  inheritanceHashes(o, out)
  out.node(nodeRow(o, 'Domain'))
  emitAces(o, o.aces, out)
  emitChildObjects(o, out)
  emitLinks(o, out)
  emitTrusts(o, out)
  emitGpoChanges(o, out)
}
