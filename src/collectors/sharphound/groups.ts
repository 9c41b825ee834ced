/** SharpHound `groups` → Group nodes, memberships (MemberOf), containment, ACEs (BloodHound's convertGroupData). */
import type { Emitter } from '../payload'
import { adObject, domainSidFallback, emitAces, emitContainedBy, emitSidHistory, nodeRow, principals, rel } from './common'

export function convertGroup(item: unknown, path: string, out: Emitter): void {
  const o = adObject(item, 'Group', path, out)
  if (!o) return
  domainSidFallback(o, out)
  out.node(nodeRow(o))
  emitContainedBy(o, out)
  emitAces(o, o.aces, out)
  // Members → member MemberOf group. (BloodHound resolves `DN=` members by distinguished name later;
  // here they are kept as written, a placeholder named by the DN.)
  for (const m of principals(o.item, 'Members', path, out)) out.edge(m.id, m.kind, o.id, 'Group', 'MemberOf', rel({ isprimarygroup: false }))
  emitSidHistory(o, out)
}
