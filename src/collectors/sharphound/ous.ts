/** SharpHound `ous` → OU nodes, containment, GPLinks, GPO-applied local groups (BloodHound's convertOUData). */
import type { Emitter } from '../payload'
import { adObject, domainSidFallback, emitAces, emitChildObjects, emitContainedBy, emitGpoChanges, emitLinks, inheritanceHashes, nodeRow } from './common'

export function convertOu(item: unknown, path: string, out: Emitter): void {
  const o = adObject(item, 'OU', path, out)
  if (!o) return
  domainSidFallback(o, out)
  inheritanceHashes(o, out)
  out.node(nodeRow(o))
  emitAces(o, o.aces, out)
  emitContainedBy(o, out)
  emitLinks(o, out)
  emitChildObjects(o, out)
  emitGpoChanges(o, out)
}
