import type { JobRecord } from '../graph/jobs.store'
/**
 * Typed wrappers for the graph endpoints (ingest jobs, environments, search, paths, entities).
 * Functions take an EdgeHoundClient so that src/client/index.ts stays small.
 */
import type { EdgeHoundClient } from './index'

/** An ingest job as the API returns it (the server's own record type). */
export type IngestJobJson = JobRecord

export interface FileResultJson {
  job_id: number
  file_name: string
  files: number
  nodes: number
  edges: number
  nodes_changed: number
  edges_changed: number
  unmatched_edges: number
  /** nodes outside the environments of a caller restricted to some; not written */
  refused_nodes: number
  errors: { file: string; context: string; message: string }[]
  /** accepted but suspicious, e.g. a collector's meta.count that disagrees with its data; also in the job */
  warnings: { file: string; context: string; message: string }[]
}

export interface Page<T> {
  count: number
  skip: number
  limit: number
  data: T[]
}

export interface OpenGraphPayload {
  metadata?: { source_kind?: string | null }
  graph: {
    nodes?: { id: string; kinds: string[]; properties?: Record<string, unknown> | null }[]
    edges?: {
      start: { value: string; match_by?: 'id' | 'name'; kind?: string }
      end: { value: string; match_by?: 'id' | 'name'; kind?: string }
      kind: string
      properties?: Record<string, unknown> | null
    }[]
  }
}

function qs(params: Record<string, string | number | boolean | string[] | undefined>): string {
  const parts: string[] = []
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined) continue
    for (const one of Array.isArray(v) ? v : [v]) parts.push(`${encodeURIComponent(k)}=${encodeURIComponent(String(one))}`)
  }
  return parts.length ? `?${parts.join('&')}` : ''
}

// ---- ingest -----------------------------------------------------------------------------------------

export function startUploadJob(c: EdgeHoundClient) {
  return c.call<{ data: IngestJobJson }>('POST', '/api/v2/file-upload/start')
}

/** Uploads a payload (object → JSON) or raw bytes (`contentType` required, e.g. application/zip). */
export function uploadFile(
  c: EdgeHoundClient,
  jobId: number | string,
  file: OpenGraphPayload | Uint8Array | string,
  opts: { contentType?: string; fileName?: string } = {},
) {
  const body = file instanceof Uint8Array || typeof file === 'string' ? file : JSON.stringify(file)
  const headers: Record<string, string> = {}
  if (opts.fileName) headers['X-File-Upload-Name'] = opts.fileName
  return c.call<{ data: FileResultJson }>('POST', `/api/v2/file-upload/${jobId}`, body, {
    contentType: opts.contentType ?? 'application/json',
    headers,
  })
}

/**
 * The request `uploadFile` would send, signed or carrying the session's CSRF proof, for callers that send it
 * themselves: the console sends it with XMLHttpRequest to report upload progress (fetch has no upload
 * progress events). Pass the answer's `X-D1-Bookmark` to `c.noteResponse` to keep read-your-writes.
 */
export function uploadFileRequest(c: EdgeHoundClient, jobId: number | string, bytes: Uint8Array, opts: { contentType: string; fileName?: string }) {
  const headers: Record<string, string> = {}
  if (opts.fileName) headers['X-File-Upload-Name'] = opts.fileName
  return c.buildRequest('POST', `/api/v2/file-upload/${jobId}`, bytes, { contentType: opts.contentType, headers })
}

export function endUploadJob(c: EdgeHoundClient, jobId: number | string) {
  return c.call<{ data: IngestJobJson }>('POST', `/api/v2/file-upload/${jobId}/end`)
}

export function listUploadJobs(c: EdgeHoundClient, q: { skip?: number; limit?: number; sort_by?: string } = {}) {
  return c.call<Page<IngestJobJson>>('GET', `/api/v2/file-upload${qs(q)}`)
}

/** GET /api/v2/datapipe/status: idle, ingesting (a file-upload job is open), analyzing (a run is pending or running) or purging (clear-database is deleting graph data). */
export function datapipeStatus(c: EdgeHoundClient) {
  return c.call<{ data: { status: 'idle' | 'ingesting' | 'analyzing' | 'purging'; updated_at: string; last_complete_analysis_at: string; last_analysis_run_at: string } }>(
    'GET',
    '/api/v2/datapipe/status',
  )
}

export function acceptedUploadTypes(c: EdgeHoundClient) {
  return c.call<{ data: string[] }>('GET', '/api/v2/file-upload/accepted-types')
}

/** Start a job, upload each payload, end the job. Returns the ended job. */
export async function ingest(c: EdgeHoundClient, ...payloads: OpenGraphPayload[]) {
  const job = await startUploadJob(c)
  const files: FileResultJson[] = []
  for (const p of payloads) files.push((await uploadFile(c, job.data.id, p)).data)
  const ended = await endUploadJob(c, job.data.id)
  return { job: ended.data, files }
}

// ---- reads ------------------------------------------------------------------------------------------

export interface EnvironmentJson {
  id: string
  name: string
  type: string
  collected: boolean
  collected_at: string | null
  impactValue: number
}

export function availableDomains(c: EdgeHoundClient) {
  return c.call<{ data: EnvironmentJson[] }>('GET', '/api/v2/available-domains')
}

export interface SearchResultJson {
  objectid: string
  type: string
  name: string
  distinguishedname: string
  system_tags: string
}

export function search(c: EdgeHoundClient, q: { q: string; type?: string[]; skip?: number; limit?: number }) {
  return c.call<{ data: SearchResultJson[] }>('GET', `/api/v2/search${qs(q)}`)
}

export interface PathGraphJson {
  nodes: Record<string, { label: string; kind: string; kinds: string[]; objectId: string; isTierZero: boolean; isOwnedObject: boolean; lastSeen: string }>
  edges: { source: string; target: string; label: string; kind: string; lastSeen: string }[]
}

export function shortestPath(c: EdgeHoundClient, startNode: string, endNode: string, relationshipKinds?: string) {
  return c.call<{ data: PathGraphJson }>(
    'GET',
    `/api/v2/graphs/shortest-path${qs({ start_node: startNode, end_node: endNode, relationship_kinds: relationshipKinds })}`,
  )
}

// ---- entities ---------------------------------------------------------------------------------------

export type AdEntitySegment =
  | 'users'
  | 'computers'
  | 'groups'
  | 'domains'
  | 'gpos'
  | 'ous'
  | 'containers'
  | 'aiacas'
  | 'rootcas'
  | 'enterprisecas'
  | 'ntauthstores'
  | 'certtemplates'
  | 'base'

export function adEntity(c: EdgeHoundClient, segment: AdEntitySegment, objectId: string, opts: { counts?: boolean } = {}) {
  return c.call<{ data: { props: Record<string, unknown> } & Record<string, unknown> }>(
    'GET',
    `/api/v2/${segment}/${encodeURIComponent(objectId)}${qs({ counts: opts.counts })}`,
  )
}

export interface EntityListItemJson {
  objectID: string
  name: string
  label: string
}

export function adRelated(c: EdgeHoundClient, segment: AdEntitySegment, objectId: string, related: string, page: { skip?: number; limit?: number } = {}) {
  return c.call<Page<EntityListItemJson>>('GET', `/api/v2/${segment}/${encodeURIComponent(objectId)}/${related}${qs(page)}`)
}

/**
 * `type=graph` of an AD related-entity list: the relationships of the walks from the entity to the
 * related entities and the nodes they join, in the shortest-path shape, not wrapped in `data`.
 */
export function adRelatedGraph(c: EdgeHoundClient, segment: AdEntitySegment, objectId: string, related: string) {
  return c.call<PathGraphJson>('GET', `/api/v2/${segment}/${encodeURIComponent(objectId)}/${related}${qs({ type: 'graph' })}`)
}

export interface AzureNodeJson {
  kind: string
  kinds: string[]
  isTierZero: boolean
  isOwnedObject: boolean
  props: Record<string, unknown>
}

export function azureEntity(c: EdgeHoundClient, entityType: string, objectId: string, opts: { counts?: boolean } = {}) {
  return c.call<{ data: AzureNodeJson & Record<string, unknown> }>('GET', `/api/v2/azure/${entityType}${qs({ object_id: objectId, counts: opts.counts })}`)
}

export function azureRelated(
  c: EdgeHoundClient,
  entityType: string,
  objectId: string,
  relatedEntityType: string,
  page: { skip?: number; limit?: number } = {},
) {
  return c.call<Page<AzureNodeJson>>(
    'GET',
    `/api/v2/azure/${entityType}${qs({ object_id: objectId, related_entity_type: relatedEntityType, ...page })}`,
  )
}

/** `type=graph` of an Azure related-entity list (see `adRelatedGraph`). */
export function azureRelatedGraph(c: EdgeHoundClient, entityType: string, objectId: string, relatedEntityType: string) {
  return c.call<PathGraphJson>('GET', `/api/v2/azure/${entityType}${qs({ object_id: objectId, related_entity_type: relatedEntityType, type: 'graph' })}`)
}

/**
 * The node a person means by `text`, resolved as the API's search resolves it: an exact (case-insensitive)
 * object id or name match. The search lists those first (GET /api/v2/search), so the first page holds them
 * all unless more than `limit` nodes share the name. `exact`: the nodes matching exactly (an object id match
 * alone when there is one, since object ids are unique); `others`: the rest of the page (names containing
 * `text`), for suggestions. Nodes outside the caller's environments are not found, as everywhere.
 */
export async function resolveNode(c: EdgeHoundClient, text: string, limit = 20): Promise<{ exact: SearchResultJson[]; others: SearchResultJson[] }> {
  const page = (await search(c, { q: text, limit })).data ?? []
  const t = text.trim().toLowerCase()
  const byId = page.filter((n) => n.objectid.toLowerCase() === t)
  const exact = byId.length ? byId : page.filter((n) => n.name.toLowerCase() === t)
  return { exact, others: page.filter((n) => !exact.includes(n)) }
}

/** A source kind as GET /api/v2/graphs/source-kinds lists it (its id is what clear-database's deleteSourceKinds takes). */
export interface SourceKindJson {
  id: number
  name: string
  active: boolean
}

export function listSourceKinds(c: EdgeHoundClient) {
  return c.call<{ data: { kinds: SourceKindJson[] } }>('GET', '/api/v2/graphs/source-kinds')
}

/** BloodHound's clear-database options (docs/graph.md "Clearing collected data"); at least one must be chosen. */
export interface ClearDatabaseOptions {
  deleteCollectedGraphData?: boolean
  /** source kind ids: 1 Base (AD), 2 AZBase (Azure), 0 sourceless; not together with deleteCollectedGraphData */
  deleteSourceKinds?: number[]
  deleteRelationships?: string[]
  deleteFileIngestHistory?: boolean
  deleteDataQualityHistory?: boolean
  /** asset group ids whose custom selectors are deleted */
  deleteAssetGroupSelectors?: number[]
}

/** POST /api/v2/clear-database: 204 once recorded; graph data is deleted in the background (datapipe status `purging`). */
export async function clearDatabase(c: EdgeHoundClient, options: ClearDatabaseOptions): Promise<void> {
  await c.call('POST', '/api/v2/clear-database', options as Record<string, unknown>)
}

/** A custom node kind (BloodHound's `/api/v2/custom-nodes`): the Font Awesome icon and colour a kind is drawn with. */
export interface CustomNodeKindJson {
  id: number
  kindName: string
  config: { icon: { type: 'font-awesome'; name: string; color: string } }
}

export function listCustomNodeKinds(c: EdgeHoundClient) {
  return c.call<{ data: CustomNodeKindJson[] }>('GET', '/api/v2/custom-nodes')
}

/** Registers kinds' icons (all or nothing; 409 when one is registered already). */
export function createCustomNodeKinds(c: EdgeHoundClient, kinds: Record<string, { icon: { type: 'font-awesome'; name: string; color?: string } }>) {
  return c.call<{ data: CustomNodeKindJson[] }>('POST', '/api/v2/custom-nodes', { custom_types: kinds })
}

export function updateCustomNodeKind(c: EdgeHoundClient, kind: string, icon: { type: 'font-awesome'; name: string; color?: string }) {
  return c.call<{ data: CustomNodeKindJson }>('PUT', `/api/v2/custom-nodes/${encodeURIComponent(kind)}`, { config: { icon } })
}

export async function deleteCustomNodeKind(c: EdgeHoundClient, kind: string): Promise<void> {
  await c.call('DELETE', `/api/v2/custom-nodes/${encodeURIComponent(kind)}`)
}
