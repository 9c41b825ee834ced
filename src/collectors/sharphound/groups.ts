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
  // Members → member MemberOf group. A `DN=` member (not resolved by the collector) is kept as written, a
  // placeholder with that object id; post-processing gives the node with that distinguishedname the same
  // MemberOf (postprocess.store.ts DN_MEMBERS), as BloodHound resolves it by distinguished name.
  for (const m of principals(o.item, 'Members', path, out)) out.edge(m.id, m.kind, o.id, 'Group', 'MemberOf', rel({ isprimarygroup: false }))
  emitSidHistory(o, out)
}
