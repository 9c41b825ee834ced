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

// ---- asset group tags and their selectors (privilege-zone rules) ----------------------------------------

export interface AssetGroupTagJson {
  id: number
  /** 1 tier (Tier Zero), 2 label, 3 owned */
  type: number
  kind_id: number
  name: string
  description: string
  created_at: string
  created_by: string
  updated_at: string
  updated_by: string
  deleted_at: NullTimeJson
  deleted_by: { string: string; valid: boolean }
  position: { int32: number; valid: boolean }
  require_certify: { bool: boolean; valid: boolean }
  analysis_enabled: { bool: boolean; valid: boolean }
  /** EdgeHound: the tag's Cypher rules whose evaluation failed for an environment the caller reads (each keeps its last good selection) */
  rule_failures: RuleFailureJson[]
  /** with `counts=true` */
  counts?: { selectors: number; members: number }
}

/** EdgeHound: a Cypher rule's evaluation that failed in the last analysis run; it keeps its last good selection. */
export interface RuleFailureJson {
  selector_id: number
  /** the environment whose evaluation failed; null: the whole-graph evaluation (matches across environments) */
  environment_id: string | null
  error: string
  failing_since: string
  /** commit time of the run whose selection is kept; null: never succeeded, selects nothing */
  kept_from: string | null
  kept_members: number
}

/** 1 = object id, 2 = Cypher */
export interface SelectorSeedJson {
  type: 1 | 2
  value: string
}

export interface AssetGroupTagSelectorJson {
  id: number
  asset_group_tag_id: number
  name: string
  description: string
  created_at: string
  created_by: string
  updated_at: string
  updated_by: string
  disabled_at: NullTimeJson
  disabled_by: { string: string; valid: boolean }
  auto_certify: number
  is_default: boolean
  allow_disable: boolean
  seeds: SelectorSeedJson[]
  counts?: { members: number }
  /** EdgeHound: the last complete analysis run's evaluation */
  evaluation: { evaluated_at: string | null; members: number | null; error: string | null; failures: RuleFailureJson[] }
}

export interface SelectorInput {
  name: string
  description?: string
  seeds: SelectorSeedJson[]
  auto_certify?: number
  disabled?: boolean
}

export interface SelectorsQuery {
  skip?: number
  limit?: number
  /** BloodHound's filters, `<op>:<value>` (`eq`, `neq`, `~eq` on strings; `gt`, `gte`, `lt`, `lte` on times) */
  name?: string
  description?: string
  created_by?: string
  updated_by?: string
  disabled_by?: string
  created_at?: string
  updated_at?: string
  disabled_at?: string
  auto_certify?: string
  is_default?: string
  /** with `counts`: count members of these environment ids only (comma-separated) */
  environments?: string
  type?: string
  counts?: boolean
  sort_by?: string
}

/** The id of BloodHound's Tier Zero tag (type 1, position 1). */
export const TIER_ZERO_TAG_ID = 1

export interface TagsQuery {
  counts?: boolean
  /** `eq:N` / `neq:N` */
  type?: string[]
  /** `eq:x`, `neq:x`, `~eq:x` (contains) */
  name?: string[]
  description?: string[]
}

export function listAssetGroupTags(c: EdgeHoundClient, q: TagsQuery = {}) {
  const s = queryString(q)
  return c.call<{ data: { tags: AssetGroupTagJson[] } }>('GET', `/api/v2/asset-group-tags${s ? `?${s}` : ''}`)
}

export interface TagInput {
  name: string
  /** 2 (a label): the only type EdgeHound creates */
  type: number
  description?: string
}

/** Creates a tag (201). */
export function createAssetGroupTag(c: EdgeHoundClient, t: TagInput) {
  return c.call<{ data: AssetGroupTagJson }>('POST', '/api/v2/asset-group-tags', t as unknown as Record<string, unknown>)
}

export function updateAssetGroupTag(c: EdgeHoundClient, tagId: number, patch: { name?: string; description?: string }) {
  return c.call<{ data: AssetGroupTagJson }>('PATCH', `/api/v2/asset-group-tags/${tagId}`, patch as Record<string, unknown>)
}

/** Deletes a created tag with its selectors and members (204). */
export async function deleteAssetGroupTag(c: EdgeHoundClient, tagId: number): Promise<void> {
  await c.call<unknown>('DELETE', `/api/v2/asset-group-tags/${tagId}`)
}

export function getAssetGroupTag(c: EdgeHoundClient, tagId: number) {
  return c.call<{ data: { tag: AssetGroupTagJson } }>('GET', `/api/v2/asset-group-tags/${tagId}`)
}

export function listTagSelectors(c: EdgeHoundClient, tagId: number, q: SelectorsQuery = {}) {
  return c.call<{ count: number; skip: number; limit: number; data: { selectors: AssetGroupTagSelectorJson[] } }>(
    'GET',
    `/api/v2/asset-group-tags/${tagId}/selectors${qs(q as Record<string, string | number | undefined>)}`,
  )
}

/** Every selector of a tag (pages of 1000). */
export async function allTagSelectors(c: EdgeHoundClient, tagId: number): Promise<AssetGroupTagSelectorJson[]> {
  const out: AssetGroupTagSelectorJson[] = []
  for (let skip = 0; ; skip += 1000) {
    const page = await listTagSelectors(c, tagId, { skip, limit: 1000 })
    out.push(...page.data.selectors)
    if (page.data.selectors.length < 1000) return out
  }
}

export function getTagSelector(c: EdgeHoundClient, tagId: number, selectorId: number) {
  return c.call<{ data: { selector: AssetGroupTagSelectorJson } }>('GET', `/api/v2/asset-group-tags/${tagId}/selectors/${selectorId}`)
}

export function createTagSelector(c: EdgeHoundClient, tagId: number, s: SelectorInput) {
  return c.call<{ data: AssetGroupTagSelectorJson }>('POST', `/api/v2/asset-group-tags/${tagId}/selectors`, s as unknown as Record<string, unknown>)
}

export function updateTagSelector(c: EdgeHoundClient, tagId: number, selectorId: number, patch: Partial<SelectorInput>) {
  return c.call<{ data: AssetGroupTagSelectorJson }>(
    'PATCH',
    `/api/v2/asset-group-tags/${tagId}/selectors/${selectorId}`,
    patch as unknown as Record<string, unknown>,
  )
}

export async function deleteTagSelector(c: EdgeHoundClient, tagId: number, selectorId: number): Promise<void> {
  await c.call<unknown>('DELETE', `/api/v2/asset-group-tags/${tagId}/selectors/${selectorId}`)
}

export interface AssetGroupTagMemberJson {
  /** the node's id */
  id: number
  object_id: string
  primary_kind: string
  name: string
  /** 1: a seed (EdgeHound selects members directly) */
  source: number
  /** EdgeHound: named by a selector of the tag */
  custom_member: boolean
}

export function listTagMembers(
  c: EdgeHoundClient,
  tagId: number,
  q: { skip?: number; limit?: number; sort_by?: string; environments?: string[]; name?: string[]; object_id?: string[]; primary_kind?: string[] } = {},
) {
  const s = queryString(q)
  return c.call<{ count: number; skip: number; limit: number; data: { members: AssetGroupTagMemberJson[] } }>(
    'GET',
    `/api/v2/asset-group-tags/${tagId}/members${s ? `?${s}` : ''}`,
  )
}

export interface AssetGroupTagSelectorMemberJson {
  /** the node's id */
  id: number
  object_id: string
  environment_id: string
  primary_kind: string
  name: string
  /** BloodHound's source: 1 seed, 2 child, 3 parent (EdgeHound: always 1) */
  source: number
  asset_group_tag_id: number
}

export interface SelectorMembersQuery {
  skip?: number
  limit?: number
  sort_by?: string
  environments?: string[]
  /** `eq:x`, `neq:x`, `~eq:x`; several values are ORed */
  name?: string[]
  object_id?: string[]
  primary_kind?: string[]
}

/** The members of a tag that one selector picked in the last analysis run. */
export function listTagSelectorMembers(c: EdgeHoundClient, tagId: number, selectorId: number, q: SelectorMembersQuery = {}) {
  const s = queryString(q)
  return c.call<{ count: number; skip: number; limit: number; data: { members: AssetGroupTagSelectorMemberJson[] } }>(
    'GET',
    `/api/v2/asset-group-tags/${tagId}/selectors/${selectorId}/members${s ? `?${s}` : ''}`,
  )
}

/** A list's query string: arrays repeat their parameter, undefined values are left out. */
function queryString(q: object): string {
  const p = new URLSearchParams()
  for (const [k, v] of Object.entries(q) as [string, unknown][]) {
    if (v === undefined) continue
    if (Array.isArray(v)) for (const e of v) p.append(k, String(e))
    else p.set(k, String(v))
  }
  return p.toString()
}
