/** SharpHound `users` → User nodes and their relationships (BloodHound's convertUserData / ParseUserMiscData). */
import type { Emitter } from '../payload'
import { adObject, bool, domainSidFallback, emitAces, emitContainedBy, emitPrimaryGroup, emitSidHistory, get, isObject, list, nodeRow, principals, rel } from './common'

export function convertUser(item: unknown, path: string, out: Emitter): void {
  const o = adObject(item, 'User', path, out)
  if (!o) return
  const domainsid = domainSidFallback(o, out)
  out.node(nodeRow(o))
  emitAces(o, o.aces, out)
  emitContainedBy(o, out)
  // SPNTargets → an edge named by the service (SQLAdmin) to the computer, with the port.
  list(o.item, 'SPNTargets', path, out).forEach((v, i) => {
    const p = `${path}.SPNTargets[${i}]`
    if (!isObject(v)) return out.violation(p, 'an SPN target must be an object {ComputerSID, Port, Service}')
    const sid = get(v, 'ComputerSID')
    const service = get(v, 'Service')
    const port = get(v, 'Port')
    if (typeof sid !== 'string') return out.violation(`${p}.ComputerSID`, 'ComputerSID is required and must be a string')
    if (typeof service !== 'string' || !/^[A-Za-z0-9_]+$/.test(service)) return out.violation(`${p}.Service`, 'Service must be a relationship kind such as SQLAdmin')
    if (port !== undefined && port !== null && typeof port !== 'number') return out.violation(`${p}.Port`, 'Port must be a number')
    out.edge(o.id, 'User', sid, 'Computer', service, { isacl: true, port: typeof port === 'number' ? port : 0 })
  })
  emitPrimaryGroup(o, out)
  for (const t of principals(o.item, 'AllowedToDelegate', path, out)) out.edge(o.id, 'User', t.id, t.kind, 'AllowedToDelegate', rel())
  emitSidHistory(o, out)
  // Unconstrained delegation → CoerceToTGT to the domain (older output has the flag in Properties only).
  const uncon = o.props.unconstraineddelegation === true || bool(o.item, 'UnconstrainedDelegation', path, out)
  if (uncon && domainsid !== '') out.edge(o.id, 'User', domainsid, 'Domain', 'CoerceToTGT', rel())
}
