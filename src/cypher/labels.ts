/**
 * BloodHound's kinds as Cypher sees them. The graph stores the kinds a payload gave; BloodHound's
 * queries also rely on kinds its own ingest and analysis add, which EdgeHound derives here instead
 * (ingest is not rewritten):
 *  - `Base` on every Active Directory node, `AZBase` on every Azure node (by their stored kinds);
 *  - `Tag_Tier_Zero` on every node the findings engine counts as Tier Zero (src/assetgroups/tierzero.ts,
 *    the one rule, with the asset group selectors the last analysis run applied), `Tag_Owned` on Owned nodes;
 *  - `system_tags` then contains `admin_tier_0` (resp. `owned`) for those nodes, as BloodHound writes it.
 * Pure.
 */
import { AD_NODE_KINDS, AZURE_NODE_KINDS, BUILTIN_RELATIONSHIPS } from '../graph/kinds'
import { isOwned, isTierZero, systemTagsOf } from '../graph/present'
import type { NodeRecord } from './source'

const AD_KINDS: ReadonlySet<string> = new Set(AD_NODE_KINDS)
const AZ_KINDS: ReadonlySet<string> = new Set(AZURE_NODE_KINDS)

/** Tier Zero: the findings engine's rule (src/assetgroups/tierzero.ts) through src/graph/present.ts. */
export const isTierZeroNode = isTierZero
export const isOwnedNode = isOwned
export { systemTagsOf }

export function hasLabel(n: NodeRecord, label: string): boolean {
  if (n.kinds.includes(label)) return true
  switch (label) {
    case 'Base':
      return n.kinds.some((k) => AD_KINDS.has(k))
    case 'AZBase':
      return n.kinds.some((k) => AZ_KINDS.has(k))
    case 'Tag_Tier_Zero':
      return isTierZeroNode(n)
    case 'Tag_Owned':
      return isOwnedNode(n)
    default:
      return false
  }
}

/** Stored kinds plus the derived ones, in that order. */
export function labelsOf(n: NodeRecord): string[] {
  const out = [...n.kinds]
  for (const k of ['Base', 'AZBase', 'Tag_Tier_Zero', 'Tag_Owned']) if (!out.includes(k) && hasLabel(n, k)) out.push(k)
  return out
}

/** A node property as queries see it (objectid and name from their columns, system_tags derived). */
export function nodeProperty(n: NodeRecord, key: string): unknown {
  if (key === 'objectid') return n.objectid
  if (key === 'system_tags') return systemTagsOf(n)
  const v = n.properties[key]
  return v === undefined ? null : v
}

/** Every property of a node as queries and answers see it. */
export function nodeProperties(n: NodeRecord): Record<string, unknown> {
  const out: Record<string, unknown> = { ...n.properties, objectid: n.objectid }
  const tags = systemTagsOf(n)
  if (tags !== null) out.system_tags = tags
  return out
}

/**
 * Stored kinds a scan for `label` may keep (any of them), or null when the label cannot be pushed to
 * the store (derived from properties: the engine then tests every node).
 */
export function scanKindsFor(label: string): string[] | null {
  if (label === 'Base') return [...AD_KINDS]
  if (label === 'AZBase') return [...AZ_KINDS]
  if (label === 'Tag_Tier_Zero' || label === 'Tag_Owned') return null
  return [label]
}

/**
 * Stored kinds of which a node must carry one for `label` to hold, exactly as hasLabel decides (the label
 * itself, and for Base / AZBase every AD / Azure kind), or null when the label is derived from more than
 * the kinds (Tag_Tier_Zero, Tag_Owned).
 */
export function exactKindsFor(label: string): string[] | null {
  if (label === 'Base') return ['Base', ...AD_KINDS]
  if (label === 'AZBase') return ['AZBase', ...AZ_KINDS]
  if (label === 'Tag_Tier_Zero' || label === 'Tag_Owned') return null
  return [label]
}

const TRAVERSABLE = [...BUILTIN_RELATIONSHIPS].filter(([, t]) => t).map(([k]) => k)
const isAzure = (k: string) => k.startsWith('AZ') || k === 'SyncedToADUser'

/** BloodHound's relationship-kind shortcuts: the traversable AD / Azure kinds. */
export const KIND_SHORTCUTS: ReadonlyMap<string, readonly string[]> = new Map([
  ['AD_ATTACK_PATHS', TRAVERSABLE.filter((k) => !isAzure(k)).sort()],
  ['AZ_ATTACK_PATHS', TRAVERSABLE.filter(isAzure).sort()],
])

/** Relationship types of a pattern with the shortcuts expanded; null = any type. */
export function relationshipKinds(types: string[]): string[] | null {
  if (types.length === 0) return null
  return [...new Set(types.flatMap((t) => KIND_SHORTCUTS.get(t) ?? [t]))]
}
