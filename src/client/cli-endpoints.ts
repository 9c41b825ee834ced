/**
 * Typed wrappers for the endpoints the CLI (src/cli) and the example connector (examples/) call, as
 * functions taking an EdgeHoundClient. The paths are the ones the feature issues define; response types
 * are kept loose (`Loose<...>`) where the owning feature has not fixed its shape yet, and the CLI reads
 * them defensively.
 */
import { EdgeHoundClient, EdgeHoundError } from './index'

/** Unknown members are allowed: the CLI shows what it recognises and passes the rest through. */
export type Loose<T> = T & Record<string, unknown>

export interface IngestJobJson {
  id: string | number
  status?: number | string
  status_message?: string
  total_files?: number
  failed_files?: number
}

export interface SamlProviderJson {
  id: number | string
  name: string
  display_name?: string
  idp_issuer_uri?: string
  idp_sso_uri?: string
  sp_issuer_uri?: string
  sp_sso_uri?: string
  sp_metadata_uri?: string
  sp_acs_uri?: string
}

export interface EnvironmentJson {
  id: string
  name: string
  type?: string
  collected?: boolean
  impactValue?: number
}

export interface DetailsPage {
  count: number
  skip: number
  limit: number
  data: Loose<FindingItem>[]
}

export interface FindingItem {
  id?: number | string
  Finding?: string
  DomainSID?: string
  created_at?: string
  updated_at?: string
  Severity?: string
  ImpactPercentage?: number
  ExposurePercentage?: number
  FromPrincipal?: string
  FromPrincipalName?: string
  FromPrincipalKind?: string
  ToPrincipal?: string
  ToPrincipalName?: string
  ToPrincipalKind?: string
  Principal?: string
  PrincipalName?: string
  PrincipalKind?: string
  Environment?: string
}

const enc = encodeURIComponent

// ---- ingest (file-upload jobs) --------------------------------------------------------------------
export function startIngestJob(c: EdgeHoundClient) {
  return c.call<{ data: Loose<IngestJobJson> }>('POST', '/api/v2/file-upload/start')
}

/** Path of one upload; exposed because the CLI streams the body itself to show upload progress. */
export function ingestFilePath(jobId: string | number): string {
  return `/api/v2/file-upload/${enc(String(jobId))}`
}

export function uploadIngestFile(c: EdgeHoundClient, jobId: string | number, bytes: Uint8Array, contentType: string, fileName?: string) {
  return c.call<unknown>('POST', ingestFilePath(jobId), bytes, {
    contentType,
    headers: fileName ? { 'X-File-Upload-Name': fileName } : {},
  })
}

export function endIngestJob(c: EdgeHoundClient, jobId: string | number) {
  return c.call<unknown>('POST', `/api/v2/file-upload/${enc(String(jobId))}/end`)
}

// ---- SAML ------------------------------------------------------------------------------------------
export function createSamlProvider(c: EdgeHoundClient, name: string, metadata: Uint8Array, fileName = 'metadata.xml') {
  const form = new FormData()
  form.set('name', name)
  form.set('metadata', new Blob([metadata], { type: 'application/xml' }), fileName)
  return c.call<{ data: Loose<SamlProviderJson> }>('POST', '/api/v2/sso-providers/saml', form)
}

// ---- extensions --------------------------------------------------------------------------------------
/** Upsert; returns the HTTP status (201 created / 200 updated) and the parsed body when there is one. */
export async function putExtension(c: EdgeHoundClient, body: Uint8Array, contentType = 'application/json') {
  const res = await c.raw('PUT', '/api/v2/extensions', body, { contentType })
  const text = await res.text()
  if (!res.ok) throw errorFrom(res, text)
  return { status: res.status, body: parseMaybeJson(text) }
}

export function listExtensions(c: EdgeHoundClient) {
  return c.call<unknown>('GET', '/api/v2/extensions')
}

export function deleteExtension(c: EdgeHoundClient, id: string) {
  return c.call<unknown>('DELETE', `/api/v2/extensions/${enc(id)}`)
}

// ---- analysis ----------------------------------------------------------------------------------------
export function requestAnalysisRun(c: EdgeHoundClient) {
  return c.call<unknown>('POST', '/api/v2/analysis')
}

export interface AnalysisRunJson {
  id: number
  status: 'pending' | 'running' | 'complete' | 'failed'
  requested_at?: string
  started_at?: string | null
  completed_at?: string | null
  error?: string | null
  finding_count?: number | null
  new_count?: number | null
  changed_count?: number | null
  closed_count?: number | null
  duration_ms?: number | null
}

/** The latest runs, newest first (`limit` 1 = the current state). */
export function analysisRuns(c: EdgeHoundClient, limit = 1) {
  return c.call<{ count: number; skip: number; limit: number; data: Loose<AnalysisRunJson>[] }>('GET', `/api/v2/analysis?limit=${limit}`)
}

export function analysisRun(c: EdgeHoundClient, runId: string | number) {
  return c.call<{ data: Loose<AnalysisRunJson> }>('GET', `/api/v2/analysis/${enc(String(runId))}`)
}

// ---- findings (the connector's read endpoints) ------------------------------------------------------
export function availableDomains(c: EdgeHoundClient) {
  return c.call<{ data: Loose<EnvironmentJson>[] }>('GET', '/api/v2/available-domains')
}

export function availableTypes(c: EdgeHoundClient, environmentId: string) {
  return c.call<{ data: string[] }>('GET', `/api/v2/domains/${enc(environmentId)}/available-types`)
}

export function findingDetails(c: EdgeHoundClient, environmentId: string, finding: string, skip = 0, limit?: number) {
  const q = `finding=${enc(finding)}&skip=${skip}${limit !== undefined ? `&limit=${limit}` : ''}`
  return c.call<DetailsPage>('GET', `/api/v2/domains/${enc(environmentId)}/details?${q}`)
}

export type FindingText = 'title' | 'short_description' | 'short_remediation' | 'long_remediation'

/** A finding type's text (markdown, served as text). */
export async function findingText(c: EdgeHoundClient, finding: string, which: FindingText): Promise<string> {
  const text = await c.call<unknown>('GET', `/api/v2/assets/findings/${enc(finding)}/${which}`)
  return typeof text === 'string' ? text.trim() : JSON.stringify(text)
}

// ---- helpers -------------------------------------------------------------------------------------------
function parseMaybeJson(text: string): unknown {
  if (!text) return undefined
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

function errorFrom(res: Response, text: string): EdgeHoundError {
  let env = null
  try {
    env = JSON.parse(text)
  } catch {
    /* not JSON */
  }
  return new EdgeHoundError(res.status, env, res)
}

/**
 * Every detail record of one environment and finding type, page by page, the way connectors read them:
 * `skip` advances by the page length and the loop ends on an empty page (or once `count` is reached, or
 * `max` records were returned).
 */
export async function* iterateDetails(
  c: EdgeHoundClient,
  environmentId: string,
  finding: string,
  opts: { pageSize?: number; max?: number; onCount?: (count: number) => void } = {},
): AsyncGenerator<Loose<FindingItem>> {
  let skip = 0
  let returned = 0
  const max = opts.max ?? Infinity
  for (;;) {
    const page = await findingDetails(c, environmentId, finding, skip, opts.pageSize)
    if (skip === 0 && typeof page.count === 'number') opts.onCount?.(page.count)
    const items = Array.isArray(page.data) ? page.data : []
    if (items.length === 0) return
    for (const it of items) {
      if (returned >= max) return
      returned++
      yield it
    }
    skip += items.length
    if (returned >= max) return
    if (typeof page.count === 'number' && skip >= page.count) return
  }
}
