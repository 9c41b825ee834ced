/**
 * How stored nodes appear in responses (BloodHound's shapes), and the schemas that document them. Pure.
 */
import { z } from 'zod'
import type { PathEdge } from './path'

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
}

export function toNodeRecord(r: NodeRow): NodeRecord {
  return { ...r, kinds: JSON.parse(r.kinds) as string[], properties: JSON.parse(r.properties) as Record<string, unknown> }
}

function tags(n: NodeRecord): string {
  const t = n.properties.system_tags
  return typeof t === 'string' ? t : ''
}

/** Tier zero: BloodHound's `Tag_Tier_Zero` kind, or `admin_tier_0` in system_tags. */
export function isTierZero(n: NodeRecord): boolean {
  return n.kinds.includes('Tag_Tier_Zero') || tags(n).split(/\s+/).includes('admin_tier_0')
}

export function isOwned(n: NodeRecord): boolean {
  return n.kinds.includes('Tag_Owned') || tags(n).split(/\s+/).includes('owned')
}

/** Properties as BloodHound shows them: the stored properties plus `objectid`. */
export function props(n: NodeRecord): Record<string, unknown> {
  return { ...n.properties, objectid: n.objectid }
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
