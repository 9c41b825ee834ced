import { auditedBatch } from '../audit/audit.store'
import type { AuditWrite } from '../audit/audit'
import type { EnvironmentAccess } from '../auth/permissions'
import { discardJobStatements } from './clients.store'
import { inScope, scopeParam, SERVICE_SCOPE } from './access'
import { forgetClient } from './poll-cache'
import type { JobErrorEntry } from '../graph/jobs.store'

/**
 * SQL for collector clients' jobs (migrations/0040_collector_clients.sql).
 *
 * A job's life: ready (0, available to its client from execution_time) → running (1, claimed by
 * POST /jobs/start; an ingest job is created with it) → ingesting (6, POST /jobs/end claimed the end: no
 * more posts) → complete (2) when the commit batch applied every post; or canceled (3), failed (5) by the
 * client, by the check-in timeout, or by a failed commit. Posts wait in ingest_staging (client_job_posts)
 * until the end; every way out other than complete deletes them in the same batch as the status change.
 *
 * A job belongs to its client's environment: reads and writes of an administrator's request take the caller's
 * environment access (`scope`, src/clients/access.ts); the service's own work passes SERVICE_SCOPE.
 */

export const CLIENT_JOB_STATUS = {
  ready: 0,
  running: 1,
  complete: 2,
  canceled: 3,
  timedOut: 4,
  failed: 5,
  ingesting: 6,
  partiallyComplete: 8,
} as const

export const COLLECTION_OPTIONS = [
  'session_collection',
  'local_group_collection',
  'ad_structure_collection',
  'cert_services_collection',
  'ca_registry_collection',
  'dc_registry_collection',
  'all_trusted_domains',
] as const
export type CollectionOption = (typeof COLLECTION_OPTIONS)[number]
export type CollectionOptions = Record<CollectionOption, boolean>

export interface ClientJobRecord extends CollectionOptions {
  id: number
  client_id: string
  client_name: string
  event_id: number | null
  status: number
  status_message: string
  execution_time: string
  start_time: string | null
  end_time: string | null
  last_ingest: string | null
  domain_controller: string | null
  ingest_job_id: number | null
  posts: number
  elements: number
  log: { time: string; message: string }[]
  created_at: string
  updated_at: string
}

const COLUMNS = `j.id, j.client_id, c.name AS client_name, j.event_id, j.status, j.status_message, j.execution_time, j.start_time, j.end_time,
  j.last_ingest, ${COLLECTION_OPTIONS.map((o) => `j.${o}`).join(', ')}, j.domain_controller, j.ingest_job_id, j.posts, j.elements, j.log,
  j.created_at, j.updated_at`
const FROM = 'client_jobs j JOIN clients c ON c.id = j.client_id'

type Row = Omit<ClientJobRecord, CollectionOption | 'log'> & Record<CollectionOption, number> & { log: string }

function toRecord(r: Row): ClientJobRecord {
  const out = { ...r, log: JSON.parse(r.log) } as unknown as ClientJobRecord
  for (const o of COLLECTION_OPTIONS) out[o] = r[o] === 1
  return out
}

/** INSERT of a ready job of a client within `scope` (run now, or an occurrence of a schedule). */
export function jobInsert(
  db: D1Database,
  j: { clientId: string; eventId: number | null; executionTime: string; options: CollectionOptions; now: string; message: string },
  scope: EnvironmentAccess,
  orIgnore = false,
): D1PreparedStatement {
  return db
    .prepare(
      `INSERT ${orIgnore ? 'OR IGNORE ' : ''}INTO client_jobs (client_id, event_id, status, status_message, execution_time, ${COLLECTION_OPTIONS.join(', ')},
         domain_controller, log, created_at, updated_at)
       SELECT ?1, ?2, 0, 'ready', ?3, ${COLLECTION_OPTIONS.map((_, i) => `?${i + 4}`).join(', ')}, c.domain_controller,
         json_array(json_object('time', ?11, 'message', ?12)), ?11, ?11
       FROM clients c WHERE c.id = ?1 AND ${inScope('c.environment_id', '?13')}`,
    )
    .bind(j.clientId, j.eventId, j.executionTime, ...COLLECTION_OPTIONS.map((o) => (j.options[o] ? 1 : 0)), j.now, j.message, scopeParam(scope))
}

export async function createClientJob(
  db: D1Database,
  j: { clientId: string; executionTime: string; options: CollectionOptions; now: string },
  audit: AuditWrite,
  scope: EnvironmentAccess,
): Promise<ClientJobRecord | null> {
  const [ins] = await auditedBatch(db, [jobInsert(db, { ...j, eventId: null, message: 'scheduled by an administrator (run now)' }, scope)], audit, {
    ifChanged: 0,
    computed: { id: 'last_insert_rowid()' },
  })
  if (ins.meta.changes !== 1) return null
  forgetClient(j.clientId)
  return getClientJob(db, Number(ins.meta.last_row_id), scope)
}

/** The job, when its client is within `scope`. */
export async function getClientJob(db: D1Database, id: number, scope: EnvironmentAccess): Promise<ClientJobRecord | null> {
  const r = await db.prepare(`SELECT ${COLUMNS} FROM ${FROM} WHERE j.id = ?1 AND ${inScope('c.environment_id', '?2')}`).bind(id, scopeParam(scope)).first<Row>()
  return r ? toRecord(r) : null
}

export interface ClientJobQuery {
  clientId?: string
  /** statuses to keep (none: all) */
  statuses?: number[]
  skip: number
  limit: number
  /** jobs of the clients within it only (count included) */
  scope: EnvironmentAccess
}

export async function listClientJobs(db: D1Database, q: ClientJobQuery): Promise<{ count: number; jobs: ClientJobRecord[] }> {
  const where = ['(?1 IS NULL OR j.client_id = ?1)', `(?2 IS NULL OR j.status IN (SELECT value FROM json_each(?2)))`, inScope('c.environment_id', '?5')]
  const binds = [q.clientId ?? null, q.statuses ? JSON.stringify(q.statuses) : null]
  const [count, rows] = await db.batch([
    db.prepare(`SELECT count(*) AS n FROM ${FROM} WHERE ${where.join(' AND ')}`).bind(...binds, null, null, scopeParam(q.scope)),
    db.prepare(`SELECT ${COLUMNS} FROM ${FROM} WHERE ${where.join(' AND ')} ORDER BY j.id DESC LIMIT ?3 OFFSET ?4`).bind(...binds, q.limit, q.skip, scopeParam(q.scope)),
  ])
  return { count: (count.results[0] as { n: number }).n, jobs: (rows.results as Row[]).map(toRecord) }
}

/**
 * An idle poll in one statement (GET /api/v2/jobs/available is what every client sends every few seconds):
 * the calling service user's client id and its ready jobs; a client without ready jobs gives one row whose
 * job columns are NULL. null: the user is no client. (bench:collectors, "idle poll": a batch of two reads
 * cost more server CPU than this one.)
 */
export async function pollAvailable(db: D1Database, userId: string, now: string): Promise<{ clientId: string; jobs: ClientJobRecord[]; nextExecution: string | null } | null> {
  const r = await db
    .prepare(
      `SELECT c.id AS calling_client, (SELECT min(p.execution_time) FROM client_jobs p WHERE p.client_id = c.id AND p.status = 0) AS next_execution,
              ${COLUMNS} FROM clients c
       LEFT JOIN client_jobs j ON j.client_id = c.id AND j.status = 0 AND j.execution_time <= ?2
       WHERE c.user_id = ?1 ORDER BY j.execution_time, j.id LIMIT 100`,
    )
    .bind(userId, now)
    .all<Row & { calling_client: string; next_execution: string | null }>()
  const rows = r.results
  if (rows.length === 0) return null
  return {
    clientId: rows[0].calling_client,
    nextExecution: rows[0].next_execution,
    jobs: rows.filter((x) => x.id !== null).map(({ calling_client: _c, next_execution: _n, ...x }) => toRecord(x as Row)),
  }
}

/** The client's running (or ingesting) job, if any. */
export async function currentJob(db: D1Database, clientId: string): Promise<ClientJobRecord | null> {
  const r = await db.prepare(`SELECT ${COLUMNS} FROM ${FROM} WHERE j.client_id = ?1 AND j.status IN (1, 6) ORDER BY j.id DESC LIMIT 1`).bind(clientId).first<Row>()
  return r ? toRecord(r) : null
}

export type StartOutcome = { job: ClientJobRecord } | { refused: 'not-found' | 'not-ready' | 'busy' }

/**
 * Claims a ready job of the client (exactly one concurrent start wins: the UPDATE's `status = 0` is checked
 * and changed by one statement, and the unique index client_jobs_one_running refuses a second running job
 * of the same client) and creates, in the same batch, the ingest job its data will be committed through.
 */
export async function startClientJob(db: D1Database, clientId: string, userId: string, jobId: number, now: string, audit: AuditWrite): Promise<StartOutcome> {
  let results: D1Result[]
  try {
    results = await auditedBatch(
      db,
      [
        db
          .prepare(
            `UPDATE client_jobs SET status = 1, status_message = 'running', start_time = ?3, updated_at = ?3,
               log = json_insert(log, '$[#]', json_object('time', ?3, 'message', 'started by the client'))
             WHERE id = ?1 AND client_id = ?2 AND status = 0 AND execution_time <= ?3`,
          )
          .bind(jobId, clientId, now),
        db
          .prepare(
            `INSERT INTO ingest_jobs (user_id, user_email_address, status, status_message, start_time, created_at, updated_at)
             SELECT ?1, NULL, 1, 'running (collector client job ' || ?3 || ')', ?2, ?2, ?2 WHERE changes() > 0`,
          )
          .bind(userId, now, jobId),
        db.prepare(`UPDATE client_jobs SET ingest_job_id = last_insert_rowid() WHERE id = ?1 AND status = 1 AND ingest_job_id IS NULL AND changes() > 0`).bind(jobId),
      ],
      audit,
      { ifChanged: 0, fields: { id: jobId } },
    )
  } catch (e) {
    if (/UNIQUE constraint failed/i.test(String((e as Error).message))) return { refused: 'busy' }
    throw e
  }
  if (results[0].meta.changes !== 1) {
    const j = await getClientJob(db, jobId, SERVICE_SCOPE)
    return { refused: !j || j.client_id !== clientId ? 'not-found' : 'not-ready' }
  }
  return { job: (await getClientJob(db, jobId, SERVICE_SCOPE))! }
}

/**
 * Reserves the next post of a running job: its number (which places its staging rows: SEQ_PER_POST) and
 * its elements against the job's budget. Null when the job is not running or the budget would be passed
 * (`over` says which).
 */
export async function reservePost(db: D1Database, jobId: number, elements: number, maxElements: number, now: string): Promise<{ post: number } | { over: boolean }> {
  const r = await db
    .prepare(
      `UPDATE client_jobs SET posts = posts + 1, elements = elements + ?2, last_ingest = ?4, updated_at = ?4
       WHERE id = ?1 AND status = 1 AND elements + ?2 <= ?3 RETURNING posts`,
    )
    .bind(jobId, elements, maxElements, now)
    .first<{ posts: number }>()
  if (r) return { post: r.posts }
  const j = await db.prepare('SELECT status FROM client_jobs WHERE id = ?').bind(jobId).first<{ status: number }>()
  return { over: j?.status === 1 }
}

/** Gives back a reservation whose post failed. */
export async function releasePost(db: D1Database, jobId: number, elements: number): Promise<void> {
  await db.prepare('UPDATE client_jobs SET elements = max(0, elements - ?2) WHERE id = ?1').bind(jobId, elements).run()
}

export interface AcceptedPost {
  uploadId: string
  jobId: number
  nodes: number
  edges: number
  placeholders: boolean
  environments: string[]
  warnings: JobErrorEntry[]
  now: string
}

/** Records a staged post in its job, if the job still runs, with the audit success row. False: the job stopped. */
export async function acceptPost(db: D1Database, p: AcceptedPost, audit: AuditWrite): Promise<boolean> {
  const [r] = await auditedBatch(
    db,
    [
      db
        .prepare(
          `INSERT INTO client_job_posts (upload_id, job_id, nodes, edges, placeholders, environments, warnings, created_at)
           SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8 WHERE EXISTS (SELECT 1 FROM client_jobs WHERE id = ?2 AND status = 1)`,
        )
        .bind(p.uploadId, p.jobId, p.nodes, p.edges, p.placeholders ? 1 : 0, JSON.stringify(p.environments), JSON.stringify(p.warnings), p.now),
    ],
    audit,
    { ifChanged: 0, fields: { job_id: p.jobId, nodes: p.nodes, edges: p.edges } },
  )
  return r.meta.changes === 1
}

/** Claims the end of the client's running job (status 6, no more posts). Null: no running job. */
export async function claimEnd(db: D1Database, clientId: string): Promise<ClientJobRecord | null> {
  const r = await db
    .prepare(`UPDATE client_jobs SET status = 6, status_message = 'ingesting' WHERE client_id = ?1 AND status = 1 RETURNING id`)
    .bind(clientId)
    .first<{ id: number }>()
  return r ? getClientJob(db, r.id, SERVICE_SCOPE) : null
}

/**
 * Gives a claimed end back (the commit batch did not run, or rolled back): the job runs again, exactly as
 * before the claim, so the client's retry of POST /jobs/end (AzureHound retries a 5xx) can succeed.
 */
export async function releaseEnd(db: D1Database, jobId: number): Promise<void> {
  await db.prepare(`UPDATE client_jobs SET status = 1, status_message = 'running' WHERE id = ?1 AND status = 6`).bind(jobId).run()
}

export interface PostSummary {
  uploadIds: string[]
  nodes: number
  edges: number
  placeholders: boolean
  environments: string[]
  warnings: JobErrorEntry[]
}

export async function postsOf(db: D1Database, jobId: number): Promise<PostSummary> {
  const rows = (
    await db
      .prepare('SELECT upload_id, nodes, edges, placeholders, environments, warnings FROM client_job_posts WHERE job_id = ? ORDER BY created_at, upload_id')
      .bind(jobId)
      .all<{ upload_id: string; nodes: number; edges: number; placeholders: number; environments: string; warnings: string }>()
  ).results
  const envs = new Set<string>()
  const warnings: JobErrorEntry[] = []
  for (const r of rows) {
    for (const e of JSON.parse(r.environments) as string[]) envs.add(e)
    for (const w of JSON.parse(r.warnings) as JobErrorEntry[]) if (warnings.length < 100) warnings.push(w)
  }
  return {
    uploadIds: rows.map((r) => r.upload_id),
    nodes: rows.reduce((n, r) => n + r.nodes, 0),
    edges: rows.reduce((n, r) => n + r.edges, 0),
    placeholders: rows.some((r) => r.placeholders === 1),
    environments: [...envs].sort(),
    warnings,
  }
}

/**
 * For the commit batch of an ending job (src/graph/ingest.store.ts commitUpload): `prelude` gathers every
 * post's staging rows under the commit's upload id; `epilogue` ends the ingest job (as EndFileUploadJob
 * does: collection times of its environments) and the client job, and forgets its posts. All in the commit's
 * one transaction.
 */
export function endStatements(db: D1Database, job: ClientJobRecord, uploadId: string, now: string, message: string): { prelude: D1PreparedStatement[]; epilogue: D1PreparedStatement[] } {
  return {
    prelude: [
      db.prepare(`UPDATE ingest_staging SET upload_id = ?1 WHERE upload_id IN (SELECT upload_id FROM client_job_posts WHERE job_id = ?2)`).bind(uploadId, job.id),
    ],
    epilogue: [
      db
        .prepare(`UPDATE ingest_jobs SET status = 2, status_message = 'complete', end_time = ?2, updated_at = ?2 WHERE id = ?1 AND status = 1`)
        .bind(job.ingest_job_id, now),
      db
        .prepare(
          `INSERT INTO environment_collections (environment_id, collected_at, job_id)
           SELECT environment_id, ?2, ?1 FROM ingest_job_environments WHERE job_id = ?1
           ON CONFLICT (environment_id) DO UPDATE SET collected_at = excluded.collected_at, job_id = excluded.job_id`,
        )
        .bind(job.ingest_job_id, now),
      db.prepare('DELETE FROM client_job_posts WHERE job_id = ?1').bind(job.id),
      db
        .prepare(
          `UPDATE client_jobs SET status = 2, status_message = ?3, end_time = ?2, updated_at = ?2,
             log = json_insert(log, '$[#]', json_object('time', ?2, 'message', 'ended by the client: ' || ?3))
           WHERE id = ?1 AND status = 6`,
        )
        .bind(job.id, now, message),
    ],
  }
}

/**
 * Ends a job of a client within `scope` without committing anything (failed by the client, canceled, timed out):
 * its posts are deleted.
 */
export async function discardJob(
  db: D1Database,
  jobId: number,
  status: number,
  message: string,
  now: string,
  fromStatuses: number[],
  scope: EnvironmentAccess,
  audit?: AuditWrite,
): Promise<boolean> {
  const statements = discardJobStatements(
    db,
    `id = ?1 AND status IN (SELECT value FROM json_each(?2)) AND client_id IN (SELECT id FROM clients WHERE ${inScope('environment_id', '?3')})`,
    [jobId, JSON.stringify(fromStatuses), scopeParam(scope)],
    now,
    message,
    status,
  )
  if (audit) {
    const r = await auditedBatch(db, statements, audit, { ifChanged: 3, fields: { id: jobId } })
    return r[3].meta.changes === 1
  }
  const r = await db.batch(statements)
  return r[3].meta.changes === 1
}

/** Running or ingesting jobs whose client has not been heard from since `idleSince` (check-in timeout). */
export async function staleJobs(db: D1Database, idleSince: string): Promise<number[]> {
  const r = await db
    .prepare(
      `SELECT j.id FROM client_jobs j JOIN clients c ON c.id = j.client_id
       WHERE j.status IN (1, 6) AND max(coalesce(c.last_checkin, ''), coalesce(j.last_ingest, ''), coalesce(j.start_time, ''), j.updated_at) < ?1`,
    )
    .bind(idleSince)
    .all<{ id: number }>()
  return r.results.map((x) => x.id)
}
