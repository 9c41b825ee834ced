/**
 * Typed wrappers for enterprise collection (issue 26; docs/collectors.md "Running collectors as services"):
 * the administrator's routes for collector clients, their jobs and schedules (`clients/Manage`), and the
 * collector's own routes (`clients/Collect`, signed with the client's token). Each takes an EdgeHoundClient, so
 * the same signing, bookmarks and error handling apply; failures throw EdgeHoundError with the envelope.
 * The console, the CLI and the tests use these.
 */
import type { EdgeHoundClient } from './index'
import type { CollectionOption, CollectionOptions } from '../clients/jobs.store'
import type { ClientType } from '../clients/clients.store'
import type { ScheduleRecord } from '../clients/schedules.store'
import type { clientJson, jobJson } from '../clients/present'

export type { ClientType, CollectionOption, CollectionOptions }

/** A collector job as the API answers it (src/clients/present.ts jobJson). */
export type ClientJobJson = ReturnType<typeof jobJson>
/** A collector client as administrators see it, with its check-in metadata and current job. */
export type ClientJson = ReturnType<typeof clientJson>
/** A recurring collection ("event"). */
export type ScheduleJson = ScheduleRecord

/** A client's API token: `key` appears only in the answer that creates it. */
export interface ClientTokenJson {
  id: string
  key: string
  hmac_method: 'hmac-sha2-256'
  created_at: string
}

export interface JobPage {
  count: number
  skip: number
  limit: number
  data: ClientJobJson[]
}

const id = (v: string | number) => encodeURIComponent(String(v))

function query(q: Record<string, string | number | undefined>): string {
  const p = new URLSearchParams()
  for (const [k, v] of Object.entries(q)) if (v !== undefined) p.set(k, String(v))
  const s = p.toString()
  return s ? `?${s}` : ''
}

// ---- clients (administrators) ------------------------------------------------------------------------

export function listClients(c: EdgeHoundClient) {
  return c.call<{ count: number; data: ClientJson[] }>('GET', '/api/v2/clients')
}

export function getClient(c: EdgeHoundClient, clientId: string) {
  return c.call<{ data: ClientJson }>('GET', `/api/v2/clients/${id(clientId)}`)
}

/** `type`: SharpHound, AzureHound or OpenHound (any case). The answer's `token.key` is shown only here. */
export function createClient(c: EdgeHoundClient, body: { name: string; type: string; environment_id: string; domain_controller?: string | null }) {
  return c.call<{ data: ClientJson & { token: ClientTokenJson } }>('POST', '/api/v2/clients', body)
}

export function updateClient(c: EdgeHoundClient, clientId: string, patch: { name?: string; environment_id?: string; domain_controller?: string | null }) {
  return c.call<{ data: ClientJson }>('PUT', `/api/v2/clients/${id(clientId)}`, patch)
}

/** Deletes the client: its token stops working, its unfinished jobs are canceled. */
export function deleteClient(c: EdgeHoundClient, clientId: string) {
  return c.call<{ data: { id: string; deleted: true } }>('DELETE', `/api/v2/clients/${id(clientId)}`)
}

/** A new token for the client (the old one stops working); the key is shown only in this answer. */
export function regenerateClientToken(c: EdgeHoundClient, clientId: string) {
  return c.call<{ data: ClientTokenJson }>('PUT', `/api/v2/clients/${id(clientId)}/token`)
}

// ---- jobs (administrators) ---------------------------------------------------------------------------

/** Run a job now with the collection options given (the others false). */
export function runClientJob(c: EdgeHoundClient, clientId: string, options: Partial<CollectionOptions> = {}) {
  return c.call<{ data: ClientJobJson }>('POST', `/api/v2/clients/${id(clientId)}/jobs`, options)
}

export function listClientCompletedJobs(c: EdgeHoundClient, clientId: string, q: { skip?: number; limit?: number } = {}) {
  return c.call<JobPage>('GET', `/api/v2/clients/${id(clientId)}/completed-jobs${query(q)}`)
}

/** Jobs of every client, or of `client_id`, newest first; `status` one job status number. */
export function listClientJobs(c: EdgeHoundClient, q: { client_id?: string; status?: number; skip?: number; limit?: number } = {}) {
  return c.call<JobPage>('GET', `/api/v2/jobs${query(q)}`)
}

export function listFinishedClientJobs(c: EdgeHoundClient, q: { skip?: number; limit?: number } = {}) {
  return c.call<JobPage>('GET', `/api/v2/jobs/finished${query(q)}`)
}

export function getClientJob(c: EdgeHoundClient, jobId: number) {
  return c.call<{ data: ClientJobJson }>('GET', `/api/v2/jobs/${id(jobId)}`)
}

export function getClientJobLog(c: EdgeHoundClient, jobId: number) {
  return c.call<{ data: { id: number; log: { time: string; message: string }[] } }>('GET', `/api/v2/jobs/${id(jobId)}/log`)
}

/** Cancels a ready, running or ingesting job (status 3); nothing it received is written. */
export function cancelClientJob(c: EdgeHoundClient, jobId: number) {
  return c.call<{ data: ClientJobJson }>('PUT', `/api/v2/jobs/${id(jobId)}/cancel`)
}

// ---- schedules ("events", administrators) -------------------------------------------------------------

export function listSchedules(c: EdgeHoundClient, clientId?: string) {
  return c.call<{ data: ScheduleJson[] }>('GET', `/api/v2/events${query({ client_id: clientId })}`)
}

export function getSchedule(c: EdgeHoundClient, scheduleId: number) {
  return c.call<{ data: ScheduleJson }>('GET', `/api/v2/events/${id(scheduleId)}`)
}

/** `rrule`: `DTSTART:20261201T020000Z RRULE:FREQ=DAILY;INTERVAL=1` (FREQ HOURLY, DAILY or WEEKLY). */
export function createSchedule(c: EdgeHoundClient, body: { client_id: string; rrule: string } & Partial<CollectionOptions>) {
  return c.call<{ data: ScheduleJson }>('POST', '/api/v2/events', body)
}

export function updateSchedule(c: EdgeHoundClient, scheduleId: number, patch: { rrule?: string } & Partial<CollectionOptions>) {
  return c.call<{ data: ScheduleJson }>('PUT', `/api/v2/events/${id(scheduleId)}`, patch)
}

export function deleteSchedule(c: EdgeHoundClient, scheduleId: number) {
  return c.call<{ data: { id: number; deleted: true } }>('DELETE', `/api/v2/events/${id(scheduleId)}`)
}

// ---- the collector's side (a client signed with the client's own token) --------------------------------

/** The client's check-in (`PUT /api/v2/clients/update`); the answer carries its current job (an orphaned one to end). */
export function clientCheckin(c: EdgeHoundClient, meta: { address?: string; hostname?: string; version?: string }) {
  return c.call<{ data: ClientJson }>('PUT', '/api/v2/clients/update', meta)
}

/** The calling client's jobs that are ready now, oldest first; `[]` when there is nothing to do. */
export function availableJobs(c: EdgeHoundClient) {
  return c.call<{ data: ClientJobJson[] }>('GET', '/api/v2/jobs/available')
}

/** Claims a ready job (exactly one of concurrent starts wins; the others get 409). */
export function startJob(c: EdgeHoundClient, jobId: number) {
  return c.call<{ data: ClientJobJson }>('POST', '/api/v2/jobs/start', { id: jobId })
}

/** The running job; 404 (EdgeHoundError) when there is none. Also the client's check-in while it collects. */
export function currentJob(c: EdgeHoundClient) {
  return c.call<{ data: ClientJobJson }>('GET', '/api/v2/jobs/current')
}

/**
 * One post of collected data into the running job (answer 202): SharpHound, AzureHound or OpenGraph JSON, as an
 * object (sent as JSON) or bytes (with `gzip: true` for a gzip body). Held until the job ends.
 */
export function ingest(c: EdgeHoundClient, data: Record<string, unknown> | Uint8Array, opts: { gzip?: boolean } = {}) {
  return c.call<{ data: { job_id: number; post: number; nodes: number; edges: number; warnings: { file: string; context: string; message: string }[] } }>(
    'POST',
    '/api/v2/ingest',
    data,
    { contentType: 'application/json', headers: opts.gzip ? { 'Content-Encoding': 'gzip' } : undefined },
  )
}

/** Ends the running job: `complete` writes everything it received in one transaction; `failed` writes nothing. */
export function endJob(c: EdgeHoundClient, status: 'complete' | 'failed', message = '') {
  return c.call<{ data: ClientJobJson }>('POST', '/api/v2/jobs/end', { status, message })
}
