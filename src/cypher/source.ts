/**
 * What the engine needs from the graph. The D1 implementation is cypher.store.ts; tests use an
 * in-memory one. Every method applies the caller's environment access itself: a node outside it is
 * never returned, and no relationship leading to one is (so it is never traversed either).
 */
import type { NodeRecord } from '../graph/present'

export type { NodeRecord }

export interface EdgeRecord {
  id: number
  start: number
  end: number
  kind: string
  properties: Record<string, unknown>
  updated_at: string
}

export interface NodeScan {
  /** keep nodes having at least one of these stored kinds (null: any node) */
  kinds: string[] | null
  /** exact object id (null: any) */
  objectid: string | null
  /** exact name (null: any) */
  name: string | null
}

export interface GraphSource {
  /** visible nodes matching `scan` with id > afterId, by id, at most `limit` */
  scanNodes(scan: NodeScan, afterId: number, limit: number): Promise<NodeRecord[]>
  /** the visible nodes among `ids` (any order) */
  nodesByIds(ids: number[]): Promise<NodeRecord[]>
  /**
   * Relationships touching `ids`: `out` those starting there, `in` those ending there, `both` either.
   * `kinds` null: any kind. Only relationships whose other end is visible.
   */
  expand(ids: number[], direction: 'out' | 'in' | 'both', kinds: string[] | null): Promise<EdgeRecord[]>
}
