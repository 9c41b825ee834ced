/** SharpHound `gpos` → GPO nodes and the ACEs on them (BloodHound's convertGPOData). */
import type { Emitter } from '../payload'
import { adObject, domainSidFallback, emitAces, nodeRow } from './common'

export function convertGpo(item: unknown, path: string, out: Emitter): void {
  const o = adObject(item, 'GPO', path, out)
  if (!o) return
  domainSidFallback(o, out)
  out.node(nodeRow(o))
  emitAces(o, o.aces, out)
}
