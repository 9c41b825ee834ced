/**
 * Typed wrapper for the Cypher endpoint (BloodHound's POST /api/v2/graphs/cypher).
 */
import type { EdgeHoundClient } from './index'
import type { CypherResult } from '../cypher/present'

export type CypherResultJson = CypherResult

/** Runs a read-only Cypher query; throws EdgeHoundError on 4xx (404 when nothing was found). */
export function cypherQuery(c: EdgeHoundClient, query: string, includeProperties = false) {
  return c.call<{ data: CypherResultJson }>('POST', '/api/v2/graphs/cypher', { query, include_properties: includeProperties })
}

export interface SavedQueryJson {
  id: number
  user_id: string
  name: string
  query: string
  description: string
  created_at: string
  updated_at: string
  deleted_at: { time: string; valid: boolean }
  scope?: 'owned' | 'shared' | 'public'
}

export function listSavedQueries(c: EdgeHoundClient, params = '') {
  return c.call<{ count: number; skip: number; limit: number; data: SavedQueryJson[] }>('GET', `/api/v2/saved-queries${params ? `?${params}` : ''}`)
}

export function createSavedQuery(c: EdgeHoundClient, q: { name: string; query: string; description?: string }) {
  return c.call<{ data: SavedQueryJson }>('POST', '/api/v2/saved-queries', q)
}

export function getSavedQuery(c: EdgeHoundClient, id: number) {
  return c.call<{ data: SavedQueryJson }>('GET', `/api/v2/saved-queries/${id}`)
}

export function updateSavedQuery(c: EdgeHoundClient, id: number, q: { name?: string; query?: string; description?: string }) {
  return c.call<{ data: SavedQueryJson }>('PUT', `/api/v2/saved-queries/${id}`, q)
}

export function deleteSavedQuery(c: EdgeHoundClient, id: number) {
  return c.raw('DELETE', `/api/v2/saved-queries/${id}`)
}

export interface SavedQueryPermissionJson {
  id: number
  query_id: number
  shared_to_user_id: string | null
  public: boolean
  created_at: string
  updated_at: string
  deleted_at: { time: string; valid: boolean }
}

/**
 * BloodHound's ShareSavedQuery: `{user_ids}` replaces who the query is shared with, `{public: true}` makes it
 * public, `{}` private. The raw response: 201 with `{data: SavedQueryPermissionJson[]}`, or 204.
 */
export function shareSavedQuery(c: EdgeHoundClient, id: number, sharing: { user_ids?: string[]; public?: boolean }) {
  return c.raw('PUT', `/api/v2/saved-queries/${id}/permissions`, sharing)
}

/** Who the query is shared with (owner, administrator, or anyone when it is public). */
export function getSavedQueryPermissions(c: EdgeHoundClient, id: number) {
  return c.call<{ data: { query_id: number; public: boolean; shared_to_user_ids: string[] } }>('GET', `/api/v2/saved-queries/${id}/permissions`)
}

/** Stops sharing the query with these users (none: with everyone, public included). The raw response (204). */
export function unshareSavedQuery(c: EdgeHoundClient, id: number, userIds: string[]) {
  return c.raw('DELETE', `/api/v2/saved-queries/${id}/permissions`, { user_ids: userIds })
}

/**
 * The saved queries the caller can run that are named exactly `name` (BloodHound's `name=eq:` filter): their
 * own, those shared with them and public ones (each with its `scope`). A name is unique among one user's
 * queries, not across users, so several may come back; the caller's own is listed first.
 */
export async function savedQueriesNamed(c: EdgeHoundClient, name: string): Promise<SavedQueryJson[]> {
  const r = await listSavedQueries(c, `scope=all&name=${encodeURIComponent(`eq:${name}`)}`)
  const rank = (q: SavedQueryJson) => (q.scope === 'owned' || q.scope === undefined ? 0 : q.scope === 'shared' ? 1 : 2)
  return [...r.data].sort((a, b) => rank(a) - rank(b))
}
