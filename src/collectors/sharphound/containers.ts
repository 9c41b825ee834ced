/** SharpHound `containers` → Container nodes and containment (BloodHound's convertContainerData). */
import type { Emitter } from '../payload'
import { adObject, domainSidFallback, emitAces, emitChildObjects, emitContainedBy, inheritanceHashes, nodeRow } from './common'

export function convertContainer(item: unknown, path: string, out: Emitter): void {
  const o = adObject(item, 'Container', path, out)
  if (!o) return
  domainSidFallback(o, out)
  inheritanceHashes(o, out)
  out.node(nodeRow(o))
  emitAces(o, o.aces, out)
  emitContainedBy(o, out)
  emitChildObjects(o, out)
}
