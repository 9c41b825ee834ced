/**
 * The wire shapes of clients and their jobs, as BloodHound Enterprise's collectors read them (AzureHound's
 * `start`, OpenHound's pydantic models: docs/collectors.md "Running collectors as services"). A time that is
 * not set yet is Go's zero time, as BloodHound answers, because OpenHound's JobStart model requires a
 * datetime in `end_time` and `last_ingest` even for a job that has just started.
 */
import { z } from 'zod'
import type { ClientRecord } from './clients.store'
import { COLLECTION_OPTIONS, type ClientJobRecord } from './jobs.store'

export const ZERO_TIME = '0001-01-01T00:00:00.000Z'

const optionsShape = Object.fromEntries(COLLECTION_OPTIONS.map((o) => [o, z.boolean()])) as Record<(typeof COLLECTION_OPTIONS)[number], z.ZodBoolean>

export const ClientJobSchema = z
  .object({
    id: z.number().int(),
    client_id: z.string(),
    client_name: z.string(),
    event_id: z.number().int().nullable().describe('the schedule that created it; null: run now'),
    execution_time: z.string(),
    status: z.number().int().describe('0 ready, 1 running, 2 complete, 3 canceled, 4 timed out, 5 failed, 6 ingesting, 8 partially complete'),
    status_message: z.string(),
    ...optionsShape,
    domain_controller: z.string().nullable(),
    start_time: z.string().describe('zero time (0001-01-01T00:00:00.000Z) until started'),
    end_time: z.string().describe('zero time until ended'),
    last_ingest: z.string().describe('zero time until the first ingest post'),
    created_at: z.string(),
    updated_at: z.string(),
    deleted_at: z.object({ Time: z.string(), Valid: z.boolean() }),
    log_path: z.string().nullable(),
    event_title: z.string(),
    ingest_job_id: z.number().int().nullable().describe('the file-upload job its data is committed through (GET /api/v2/file-upload)'),
    posts: z.number().int().describe('ingest posts received'),
    elements: z.number().int().describe('nodes and edges received'),
    log: z.array(z.object({ time: z.string(), message: z.string() })).describe('what happened to the job, oldest first'),
  })
  .meta({ id: 'ClientJob' })

export function jobJson(j: ClientJobRecord) {
  const options = Object.fromEntries(COLLECTION_OPTIONS.map((o) => [o, j[o]]))
  return {
    id: j.id,
    client_id: j.client_id,
    client_name: j.client_name,
    event_id: j.event_id,
    execution_time: j.execution_time,
    status: j.status,
    status_message: j.status_message,
    ...options,
    domain_controller: j.domain_controller,
    start_time: j.start_time ?? ZERO_TIME,
    end_time: j.end_time ?? ZERO_TIME,
    last_ingest: j.last_ingest ?? ZERO_TIME,
    created_at: j.created_at,
    updated_at: j.updated_at,
    deleted_at: { Time: ZERO_TIME, Valid: false },
    log_path: null,
    event_title: j.event_id === null ? '' : `schedule ${j.event_id}`,
    ingest_job_id: j.ingest_job_id,
    posts: j.posts,
    elements: j.elements,
    log: j.log,
  }
}

export const ClientSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    type: z.enum(['sharphound', 'azurehound', 'openhound']),
    domain_controller: z.string().nullable(),
    environment_id: z.string().describe('the only environment its data may write'),
    token_id: z.string().nullable().describe('its current API token (the key is shown only when created)'),
    ip_address: z.string().nullable(),
    hostname: z.string().nullable(),
    version: z.string().nullable(),
    last_checkin: z.string().nullable(),
    current_job_id: z.number().int().nullable(),
    current_job: ClientJobSchema.nullable(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: 'CollectorClient' })

export function clientJson(c: ClientRecord, current: ClientJobRecord | null) {
  return {
    id: c.id,
    name: c.name,
    type: c.type,
    domain_controller: c.domain_controller,
    environment_id: c.environment_id,
    token_id: c.token_id,
    ip_address: c.ip_address,
    hostname: c.hostname,
    version: c.version,
    last_checkin: c.last_checkin,
    current_job_id: current?.id ?? null,
    current_job: current ? jobJson(current) : null,
    created_at: c.created_at,
    updated_at: c.updated_at,
  }
}
