/**
 * How stored nodes appear in responses (BloodHound's shapes), and the schemas that document them. Pure.
 */
import { z } from 'zod'
import type { PathEdge } from './path'
import { isOwned as ownedRule, isTierZero as tierZeroRule, OWNED_TAG, tagsOf, TIER_ZERO_TAG, type NodeFacts } from '../assetgroups/tierzero'

/** A node of a graph answer (shortest path, related-entity graphs), keyed by internal node id. */
export const GraphNodeSchema = z.object({
  label: z.string(),
  kind: z.string(),
  kinds: z.array(z.string()),
  objectId: z.string(),
  isTierZero: z.boolean(),
  isOwnedObject: z.boolean(),
  lastSeen: z.string(),
})

/** A relationship of a graph answer; source and target are keys of its `nodes`. */
export const GraphEdgeSchema = z.object({ source: z.string(), target: z.string(), label: z.string(), kind: z.string(), lastSeen: z.string() })

/** A node as the read store returns it. */
export interface NodeRecord {
  id: number
  objectid: string
  kind: string
  kinds: string[]
  name: string | null
  environment_id: string | null
  properties: Record<string, unknown>
  updated_at: string
  /** tags of the asset groups whose selectors made the node a member in the last analysis run */
  selected_tags?: string[]
}

/** Raw row (JSON columns as text). */
export interface NodeRow {
  id: number
  objectid: string
  kind: string
  kinds: string
  name: string | null
  environment_id: string | null
  properties: string
  updated_at: string
  /** space-separated (SELECTED_TAGS_COLUMN, src/assetgroups/assetgroups.store.ts) */
  selected_tags?: string | null
}

export function toNodeRecord(r: NodeRow): NodeRecord {
  const { selected_tags, ...rest } = r
  return {
    ...rest,
    kinds: JSON.parse(r.kinds) as string[],
    properties: JSON.parse(r.properties) as Record<string, unknown>,
    ...(selected_tags ? { selected_tags: selected_tags.split(' ') } : {}),
  }
}

/**
 * Every stored property pathNode reads of a node: lastSeen's `lastseen` and nodeFacts' keys (the Tier Zero and
 * Owned rules). A node presented without its properties (a Cypher answer without include_properties) is the
 * same when read with only these (src/cypher/needs.ts nodeReads; a missing key may read as null):
 * test/unit/cypher-presented-keys.test.ts. A new property read here must be added to this list.
 */
export const PRESENTED_KEYS: readonly string[] = ['lastseen', 'system_tags', 'isTierZero', 'istierzero', 'templateid']

/** What the Tier Zero and Owned rules read of a node (the same facts the analysis loader extracts). */
export function nodeFacts(n: NodeRecord): NodeFacts {
  const p = n.properties
  return {
    objectid: n.objectid,
    kind: n.kind,
    kinds: n.kinds,
    systemTags: p.system_tags,
    isTierZero: p.isTierZero === true || p.isTierZero === 1 ? p.isTierZero : p.istierzero,
    templateid: p.templateid,
    selectedTags: n.selected_tags,
  }
}

const tierZeroCache = new WeakMap<NodeRecord, boolean>()

/**
 * Tier Zero as the findings engine decides it (src/assetgroups/tierzero.ts, the one rule), with the asset
 * group selectors the last analysis run applied.
 */
export function isTierZero(n: NodeRecord): boolean {
  let v = tierZeroCache.get(n)
  if (v === undefined) tierZeroCache.set(n, (v = tierZeroRule(nodeFacts(n))))
  return v
}

/** Owned: the `Tag_Owned` kind, the `owned` tag, or an Owned selector (src/assetgroups/tierzero.ts `isOwned`). */
export function isOwned(n: NodeRecord): boolean {
  return ownedRule(nodeFacts(n))
}

/**
 * `system_tags` as BloodHound stores it: the stored tags plus `admin_tier_0` when the node is Tier Zero,
 * `owned` when it is Owned, and the tags of the other asset groups whose selectors name it; null when the
 * node has none (and stored none).
 */
export function systemTagsOf(n: NodeRecord): string | null {
  const stored = n.properties.system_tags
  const tags = tagsOf(stored)
  const add = (t: string) => {
    if (!tags.includes(t)) tags.push(t)
  }
  if (isTierZero(n)) add(TIER_ZERO_TAG)
  if (isOwned(n)) add(OWNED_TAG)
  for (const t of n.selected_tags ?? []) add(t)
  if (tags.length === 0) return typeof stored === 'string' ? stored : null
  return tags.join(' ')
}

function tags(n: NodeRecord): string {
  return systemTagsOf(n) ?? ''
}

/** Properties as BloodHound shows them: the stored properties plus `objectid`, and `system_tags` as above. */
export function props(n: NodeRecord): Record<string, unknown> {
  const out: Record<string, unknown> = { ...n.properties, objectid: n.objectid }
  const t = systemTagsOf(n)
  if (t !== null) out.system_tags = t
  return out
}

function lastSeen(n: NodeRecord): string {
  const v = n.properties.lastseen
  return typeof v === 'string' && v !== '' ? v : n.updated_at
}

export function searchItem(n: NodeRecord) {
  const dn = n.properties.distinguishedname
  return {
    objectid: n.objectid,
    type: n.kind,
    name: n.name ?? n.objectid,
    distinguishedname: typeof dn === 'string' ? dn : '',
    system_tags: tags(n),
  }
}

export function pathNode(n: NodeRecord) {
  return {
    label: n.name ?? n.objectid,
    kind: n.kind,
    kinds: n.kinds,
    objectId: n.objectid,
    isTierZero: isTierZero(n),
    isOwnedObject: isOwned(n),
    lastSeen: lastSeen(n),
  }
}

/** AD related-entity list entry (BloodHound's PagedNodeListEntry). */
export function adListItem(n: NodeRecord) {
  return { objectID: n.objectid, name: n.name ?? '', label: n.kind }
}

/** Azure node (BloodHound's azure.Node): also used for related Azure lists. */
export function azureNode(n: NodeRecord) {
  return { kind: n.kind, kinds: n.kinds, isTierZero: isTierZero(n), isOwnedObject: isOwned(n), props: props(n) }
}

/**
 * A graph answer (shortest path, related-entity `type=graph`): nodes keyed by internal node id, edges
 * between those keys. `edges` carry `lastSeen` from the store.
 */
export function graphJson(nodes: NodeRecord[], edges: (PathEdge & { lastSeen: string })[]) {
  return {
    nodes: Object.fromEntries(nodes.map((n) => [String(n.id), pathNode(n)])),
    edges: edges.map((e) => ({ source: String(e.from), target: String(e.to), label: e.kind, kind: e.kind, lastSeen: e.lastSeen })),
  }
}
