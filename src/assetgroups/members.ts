/**
 * Asset group membership as an analysis run computes it (docs/asset-groups.md). Pure.
 *
 * The groups are identified by their tag: `admin_tier_0` ("Admin Tier Zero") has every node the Tier Zero
 * rule accepts (src/assetgroups/tierzero.ts, which includes the group's selectors), `owned` every node
 * `isOwned` accepts, and any other group exactly the nodes its selectors name. A member is a
 * `custom_member` when one of the group's selectors names it, whatever else also makes it a member.
 */
import type { AnalysisGraph } from '../findings/graph'
import { OWNED_TAG, TIER_ZERO_TAG } from './tierzero'

export interface GroupRef {
  id: number
  tag: string
}

/** [asset_group_id, objectid, custom_member] */
export type MemberRow = [number, string, 0 | 1]

export function memberRows(g: Pick<AnalysisGraph, 'nodeCount' | 'objectids' | 'tierZero' | 'owned' | 'selected'>, groups: readonly GroupRef[]): MemberRow[] {
  const out: MemberRow[] = []
  const byTag = new Map(groups.map((x) => [x.tag, x.id]))
  const tier0 = byTag.get(TIER_ZERO_TAG)
  const owned = byTag.get(OWNED_TAG)
  for (let i = 0; i < g.nodeCount; i++) {
    const sel = g.selected.get(i)
    if (tier0 !== undefined && g.tierZero[i]) out.push([tier0, g.objectids[i], sel?.includes(TIER_ZERO_TAG) ? 1 : 0])
    if (owned !== undefined && g.owned[i]) out.push([owned, g.objectids[i], sel?.includes(OWNED_TAG) ? 1 : 0])
    if (sel)
      for (const tag of sel) {
        if (tag === TIER_ZERO_TAG || tag === OWNED_TAG) continue
        const id = byTag.get(tag)
        if (id !== undefined) out.push([id, g.objectids[i], 1])
      }
  }
  return out
}
