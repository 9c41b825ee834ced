import { auditedBatch } from '../audit/audit.store'
import type { AuditWrite } from '../audit/audit'

/** SQL for file-upload (ingest) jobs and environment collection times. */

export const JOB_STATUS = {
  running: 1,
  complete: 2,
  /** BloodHound's status for a job without activity for too long (src/graph/job-timeout.ts) */
  timedOut: 4,
  failed: 5,
  partiallyComplete: 8,
} as const

export interface JobErrorEntry {
  file: string
  context: string
  message: string
}

export interface JobRecord {
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
  errors: JobErrorEntry[]
  /** accepted files' suspicious points (a collector's meta.count that disagrees with its data); first 100 */
  warnings: JobErrorEntry[]
  created_at: string
  updated_at: string
}

/** Errors kept per job; `error_count` keeps the full number. */
export const MAX_JOB_ERRORS = 100

type Row = Omit<JobRecord, 'errors' | 'warnings'> & { errors: string; warnings: string }

function toRecord(r: Row): JobRecord {
  return { ...r, errors: JSON.parse(r.errors) as JobErrorEntry[], warnings: JSON.parse(r.warnings) as JobErrorEntry[] }
}

const COLUMNS = `id, user_id, user_email_address, status, status_message, start_time, end_time, last_ingest, total_files, failed_files,
  nodes_received, edges_received, nodes_changed, edges_changed, unmatched_edges, error_count, errors, warnings, created_at, updated_at`

/** Creates a running job; its audit success row (CreateFileUploadJob, naming the new job's id) is in the same batch. */
export async function createJob(db: D1Database, userId: string, now: string, audit: AuditWrite): Promise<JobRecord> {
  const [r] = await auditedBatch(
    db,
    [
      db
        .prepare(
          `INSERT INTO ingest_jobs (user_id, user_email_address, status, status_message, start_time, created_at, updated_at)
           VALUES (?1, (SELECT email FROM users WHERE id = ?1), ?2, 'running', ?3, ?3, ?3)
           RETURNING ${COLUMNS}`,
        )
        .bind(userId, JOB_STATUS.running, now),
    ],
    audit,
    { computed: { id: 'last_insert_rowid()' } },
  )
  return toRecord(r.results[0] as Row)
}

export async function getJob(db: D1Database, id: number): Promise<JobRecord | null> {
  const row = await db.prepare(`SELECT ${COLUMNS} FROM ingest_jobs WHERE id = ?`).bind(id).first<Row>()
  return row ? toRecord(row) : null
}

export interface JobListQuery {
  /** null = every user's jobs */
  userId: string | null
  skip: number
  limit: number
  orderBy: 'id' | 'start_time' | 'end_time' | 'status'
  descending: boolean
}

export async function listJobs(db: D1Database, q: JobListQuery): Promise<{ count: number; jobs: JobRecord[] }> {
  const where = q.userId === null ? '' : 'WHERE user_id = ?1'
  const dir = q.descending ? 'DESC' : 'ASC'
  const [count, rows] = await db.batch([
    db.prepare(`SELECT count(*) AS n FROM ingest_jobs ${where}`).bind(...(q.userId === null ? [] : [q.userId])),
    db
      .prepare(`SELECT ${COLUMNS} FROM ingest_jobs ${where} ORDER BY ${q.orderBy} ${dir}, id ${dir} LIMIT ?2 OFFSET ?3`)
      .bind(q.userId ?? '', q.limit, q.skip),
  ])
  return { count: (count.results[0] as { n: number }).n, jobs: (rows.results as Row[]).map(toRecord) }
}

/**
 * SET clause appending entries to a job's JSON array column (`errors` or `warnings`), keeping the first
 * MAX_JOB_ERRORS. `entries` is an SQL expression giving a JSON array of {file, context, message} (a bound
 * parameter or a subquery).
 */
function appendTo(column: 'errors' | 'warnings', entries: string): string {
  return `${column} = CASE WHEN json_array_length(${column}) >= ${MAX_JOB_ERRORS} THEN ${column} ELSE (
    SELECT json_group_array(json(v)) FROM (
      SELECT v FROM (SELECT 0 AS src, key AS k, value AS v FROM json_each(${column})
                     UNION ALL SELECT 1, key, value FROM json_each(${entries}))
      ORDER BY src, k LIMIT ${MAX_JOB_ERRORS})) END`
}

export const appendErrors = (entries: string): string => appendTo('errors', entries)
/** Warnings are kept apart from errors: a warning never counts as an error or fails a file. */
export const appendWarnings = (entries: string): string => appendTo('warnings', entries)

// ---- completed tasks (GET /api/v2/file-upload/{id}/completed-tasks): one row per uploaded file ----------------

/** A job error entry as the text of a completed task's error (BloodHound's tasks carry strings). */
export const taskErrorText = (context: string, message: string): string => `CASE WHEN ${context} = '' THEN ${message} ELSE ${context} || ': ' || ${message} END`

const entryText = (e: { context: string; message: string }): string => (e.context === '' ? e.message : `${e.context}: ${e.message}`)

/**
 * The statement recording an uploaded file as a completed task of its job, for the batch that records the file
 * in the job. `errorsSql` is an SQL expression of the errors' JSON array that may read ?5 (`errorsParam`).
 */
export function taskInsert(
  db: D1Database,
  jobId: number,
  fileName: string,
  now: string,
  errorsSql: string,
  errorsParam: string | null,
  warnings: readonly JobErrorEntry[],
): D1PreparedStatement {
  return db
    .prepare(
      `INSERT INTO ingest_job_tasks (job_id, file_name, parent_file_name, errors, warnings, created_at)
       SELECT ?1, ?2, '', ${errorsSql}, ?4, ?3 WHERE EXISTS (SELECT 1 FROM ingest_jobs WHERE id = ?1)`,
    )
    .bind(jobId, fileName, now, JSON.stringify(warnings.slice(0, MAX_JOB_ERRORS).map(entryText)), errorsParam)
}

export interface CompletedTask {
  id: number
  ingest_job_id: number
  file_name: string
  parent_file_name: string
  errors: string[]
  warnings: string[]
  created_at: string
  updated_at: string
}

/** A page of the completed tasks of a job, in the order its files were recorded, and their number. */
export async function listTasks(db: D1Database, jobId: number, skip: number, limit: number): Promise<{ count: number; tasks: CompletedTask[] }> {
  const [n, page] = await db.batch([
    db.prepare(`SELECT count(*) AS n FROM ingest_job_tasks WHERE job_id = ?1`).bind(jobId),
    db
      .prepare(`SELECT id, job_id, file_name, parent_file_name, errors, warnings, created_at FROM ingest_job_tasks WHERE job_id = ?1 ORDER BY id LIMIT ?2 OFFSET ?3`)
      .bind(jobId, limit, skip),
  ])
  const results = page.results as { id: number; job_id: number; file_name: string; parent_file_name: string; errors: string; warnings: string; created_at: string }[]
  const tasks = results.map((r) => ({
    id: r.id,
    ingest_job_id: r.job_id,
    file_name: r.file_name,
    parent_file_name: r.parent_file_name,
    errors: JSON.parse(r.errors) as string[],
    warnings: JSON.parse(r.warnings) as string[],
    created_at: r.created_at,
    updated_at: r.created_at,
  }))
  return { count: (n.results[0] as { n: number }).n, tasks }
}

/**
 * Records a failed file in its job, and as one of its completed tasks (with its errors), with the request's
 * audit failure row (AppendFileUploadJob, failure) in the same batch: the job's count of failed files, the task
 * and the log's entry for that failure go together.
 */
export async function recordFailedFile(db: D1Database, jobId: number, fileName: string, errors: JobErrorEntry[], now: string, audit: AuditWrite): Promise<void> {
  await auditedBatch(
    db,
    [
      db
        .prepare(
          `UPDATE ingest_jobs SET total_files = total_files + 1, failed_files = failed_files + 1, last_ingest = ?3, updated_at = ?3,
             error_count = error_count + ?4, ${appendErrors('?2')}
           WHERE id = ?1`,
        )
        .bind(jobId, JSON.stringify(errors.slice(0, MAX_JOB_ERRORS)), now, errors.length),
      taskInsert(db, jobId, fileName, now, '?5', JSON.stringify(errors.slice(0, MAX_JOB_ERRORS).map(entryText)), []),
    ],
    audit,
    { ifChanged: 0 },
  )
}

/** The environments a job has written to so far (its EndFileUploadJob audit entry names them; src/audit/visibility.ts). */
export async function jobEnvironments(db: D1Database, jobId: number): Promise<string[]> {
  const { results } = await db.prepare(`SELECT environment_id FROM ingest_job_environments WHERE job_id = ?1`).bind(jobId).all<{ environment_id: string }>()
  return results.map((r) => r.environment_id)
}

/**
 * Ends a running job: sets its final status and records, for every environment that received data in
 * it, the collection time. Returns null when the job was not running (someone else ended it first).
 */
export async function endJob(db: D1Database, jobId: number, now: string, audit: AuditWrite): Promise<{ job: JobRecord; environments: string[] } | null> {
  // the audit success row (EndFileUploadJob) right after the UPDATE, written only if it ended the job
  const [updated, , envs] = await auditedBatch(db, [
    db
      .prepare(
        `UPDATE ingest_jobs SET end_time = ?2, updated_at = ?2,
           status = CASE WHEN failed_files = 0 THEN ${JOB_STATUS.complete}
                         WHEN failed_files < total_files THEN ${JOB_STATUS.partiallyComplete}
                         ELSE ${JOB_STATUS.failed} END,
           status_message = CASE WHEN failed_files = 0 THEN 'complete'
                                 WHEN failed_files < total_files THEN 'partially complete: ' || failed_files || ' of ' || total_files || ' files failed'
                                 ELSE 'failed: every file failed' END
         WHERE id = ?1 AND status = ${JOB_STATUS.running}
         RETURNING ${COLUMNS}`,
      )
      .bind(jobId, now),
    // Only when the UPDATE above ended the job (end_time = now just set by this statement).
    db
      .prepare(
        `INSERT INTO environment_collections (environment_id, collected_at, job_id)
         SELECT e.environment_id, ?2, ?1 FROM ingest_job_environments e
         WHERE e.job_id = ?1 AND EXISTS (SELECT 1 FROM ingest_jobs j WHERE j.id = ?1 AND j.end_time = ?2 AND j.status != ${JOB_STATUS.running})
         ON CONFLICT (environment_id) DO UPDATE SET collected_at = excluded.collected_at, job_id = excluded.job_id`,
      )
      .bind(jobId, now),
    db.prepare(`SELECT environment_id FROM ingest_job_environments WHERE job_id = ?1 ORDER BY environment_id`).bind(jobId),
  ], audit, { ifChanged: 0 })
  const row = updated.results[0] as Row | undefined
  if (!row) return null
  return { job: toRecord(row), environments: (envs.results as { environment_id: string }[]).map((r) => r.environment_id) }
}

/**
 * Times out every running job whose last activity (its last upload attempt, else its start) is older
 * than `idleSince`: status 4, `end_time` = now, and a status message saying so. What its files wrote stays
 * in the graph (each file was committed whole); no collection time is recorded, since the upload was
 * never declared complete. One statement; returns the jobs it timed out. `message` is the status message.
 * The ingest job behind a collector client's job is left alone: its client job's own check-in timeout ends
 * both (src/clients/jobs.store.ts), since a collector may collect for long before it posts anything.
 */
export async function timeOutIdleJobs(db: D1Database, now: string, idleSince: string, message: string): Promise<{ id: number; files_written: number }[]> {
  const r = await db
    .prepare(
      `UPDATE ingest_jobs SET status = ${JOB_STATUS.timedOut}, status_message = ?3, end_time = ?1, updated_at = ?1
       WHERE status = ${JOB_STATUS.running} AND coalesce(last_ingest, start_time) < ?2
         AND NOT EXISTS (SELECT 1 FROM client_jobs cj WHERE cj.ingest_job_id = ingest_jobs.id)
       RETURNING id, total_files - failed_files AS files_written`,
    )
    .bind(now, idleSince, message)
    .all<{ id: number; files_written: number }>()
  return r.results
}
