/**
 * Typed wrappers for BloodHound's asset isolation groups (docs/asset-groups.md).
 */
import type { EdgeHoundClient } from './index'

export interface NullTimeJson {
  time: string
  valid: boolean
}

export interface AssetGroupSelectorJson {
  id: number
  asset_group_id: number
  name: string
  selector: string
  system_selector: boolean
  created_at: string
  updated_at: string
  deleted_at: NullTimeJson
}

export interface AssetGroupJson {
  id: number
  name: string
  tag: string
  system_group: boolean
  selectors: AssetGroupSelectorJson[]
  member_count: number
  created_at: string
  updated_at: string
  deleted_at: NullTimeJson
}

export interface AssetGroupMemberJson {
  asset_group_id: number
  object_id: string
  primary_kind: string
  kinds: string[]
  environment_id: string
  environment_kind: string
  name: string
  custom_member: boolean
}

export interface SelectorSpec {
  selector_name?: string
  /** the object id */
  sid: string
  action: 'add' | 'remove'
}

export interface MembersQuery {
  skip?: number
  limit?: number
  sort_by?: string
  object_id?: string
  primary_kind?: string
  environment_id?: string
  environment_kind?: string
  name?: string
  custom_member?: string
}

function qs(q: Record<string, string | number | undefined>): string {
  const p = new URLSearchParams()
  for (const [k, v] of Object.entries(q)) if (v !== undefined) p.set(k, String(v))
  const s = p.toString()
  return s ? `?${s}` : ''
}

export function listAssetGroups(c: EdgeHoundClient, q: { sort_by?: string } = {}) {
  return c.call<{ data: { asset_groups: AssetGroupJson[] } }>('GET', `/api/v2/asset-groups${qs(q)}`)
}

export function createAssetGroup(c: EdgeHoundClient, g: { name: string; tag: string }) {
  return c.call<{ data: AssetGroupJson }>('POST', '/api/v2/asset-groups', g)
}

export function getAssetGroup(c: EdgeHoundClient, id: number) {
  return c.call<{ data: AssetGroupJson }>('GET', `/api/v2/asset-groups/${id}`)
}

export function listAssetGroupMembers(c: EdgeHoundClient, id: number, q: MembersQuery = {}) {
  return c.call<{ count: number; skip: number; limit: number; data: { members: AssetGroupMemberJson[] } }>(
    'GET',
    `/api/v2/asset-groups/${id}/members${qs(q as Record<string, string | number | undefined>)}`,
  )
}

/** Adds or removes object-id selectors; the next analysis run applies them. */
export function updateAssetGroupSelectors(c: EdgeHoundClient, id: number, changes: SelectorSpec[]) {
  return c.call<{ data: { added_selectors: AssetGroupSelectorJson[]; removed_selectors: AssetGroupSelectorJson[] } }>(
    'PUT',
    `/api/v2/asset-groups/${id}/selectors`,
    changes,
  )
}

/** Renames a group (BloodHound's UpdateAssetGroup: the name only; the tag stays). */
export function updateAssetGroup(c: EdgeHoundClient, id: number, g: { name: string }) {
  return c.call<{ data: AssetGroupJson }>('PUT', `/api/v2/asset-groups/${id}`, g)
}

/** Deletes a group with its selectors and members (200, empty body); system groups answer 409. */
export async function deleteAssetGroup(c: EdgeHoundClient, id: number): Promise<void> {
  await c.call<undefined>('DELETE', `/api/v2/asset-groups/${id}`)
}
