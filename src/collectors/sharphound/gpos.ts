/** SharpHound `gpos` → GPO nodes and the ACEs on them (BloodHound's convertGPOData). */
import type { Emitter } from '../payload'
import { adObject, domainSidFallback, emitAces, nodeRow } from './common'

/** BloodHound's display text of a GPO's status (the `flags` SharpHound writes as `gpostatus`). */
const GPO_STATUS: Readonly<Record<string, string>> = {
  '0': 'Enabled',
  '1': 'User Configuration Disabled',
  '2': 'Computer Configuration Disabled',
  '3': 'Disabled',
}

export function convertGpo(item: unknown, path: string, out: Emitter): void {
  const o = adObject(item, 'GPO', path, out)
  if (!o) return
  domainSidFallback(o, out)
  // As BloodHound's ParseGPOData: the written status is kept as text in `gpostatusraw`, and `gpostatus`
  // becomes its display text ("GPO Status does not exist" for any other value).
  const status = o.props.gpostatus
  if (status !== undefined && status !== null && !Array.isArray(status)) {
    const raw = String(status).trim()
    o.props.gpostatusraw = raw
    o.props.gpostatus = GPO_STATUS[raw] ?? 'GPO Status does not exist'
  }
  out.node(nodeRow(o))
  emitAces(o, o.aces, out)
}
