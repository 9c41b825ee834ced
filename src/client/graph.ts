/**
 * Typed wrappers for the graph endpoints (ingest jobs, environments, search, paths, entities).
 * Functions take an EdgeHoundClient so that src/client/index.ts stays small.
 */
import type { EdgeHoundClient } from './index'

export interface IngestJobJson {
  id: number
  user_id: string
  user_email_address: string | null
  status: number
  status_message: string
  start_time: string
  end_time: string | null
  last_ingest: string | null
  total_files: number
  failed_files: number
  nodes_received: number
  edges_received: number
  nodes_changed: number
  edges_changed: number
  unmatched_edges: number
  error_count: number
  errors: { file: string; context: string; message: string }[]
  created_at: string
  updated_at: string
}

export interface FileResultJson {
  job_id: number
  file_name: string
  files: number
  nodes: number
  edges: number
  nodes_changed: number
  edges_changed: number
  unmatched_edges: number
  errors: { file: string; context: string; message: string }[]
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

export function endUploadJob(c: EdgeHoundClient, jobId: number | string) {
  return c.call<{ data: IngestJobJson }>('POST', `/api/v2/file-upload/${jobId}/end`)
}

export function listUploadJobs(c: EdgeHoundClient, q: { skip?: number; limit?: number; sort_by?: string } = {}) {
  return c.call<Page<IngestJobJson>>('GET', `/api/v2/file-upload${qs(q)}`)
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
