import { auditedBatch } from '../audit/audit.store'
import type { AuditWrite } from '../audit/audit'
import { COLLECTION_OPTIONS, jobInsert, type CollectionOption, type CollectionOptions } from './jobs.store'
import { forgetClient } from './poll-cache'
import type { EnvironmentAccess } from '../auth/permissions'
import { inScope, scopeParam, SERVICE_SCOPE } from './access'

/**
 * SQL for collection schedules (BloodHound's "events"; migrations/0040_collector_clients.sql). A schedule belongs
 * to its client's environment: an administrator's reads and writes take the caller's environment access (`scope`,
 * src/clients/access.ts); the Cron Trigger passes SERVICE_SCOPE.
 */

export interface ScheduleRecord extends CollectionOptions {
  id: number
  client_id: string
  client_name: string
  rrule: string
  next_run: string
  created_at: string
  updated_at: string
}

const COLUMNS = `s.id, s.client_id, c.name AS client_name, s.rrule, s.next_run, ${COLLECTION_OPTIONS.map((o) => `s.${o}`).join(', ')}, s.created_at, s.updated_at`
const FROM = 'client_schedules s JOIN clients c ON c.id = s.client_id'
type Row = Omit<ScheduleRecord, CollectionOption> & Record<CollectionOption, number>

function toRecord(r: Row): ScheduleRecord {
  const out = { ...r } as unknown as ScheduleRecord
  for (const o of COLLECTION_OPTIONS) out[o] = r[o] === 1
  return out
}

export async function insertSchedule(
  db: D1Database,
  s: { clientId: string; rrule: string; nextRun: string; options: CollectionOptions; now: string },
  audit: AuditWrite,
  scope: EnvironmentAccess,
): Promise<ScheduleRecord | null> {
  const [r] = await auditedBatch(
    db,
    [
      db
        .prepare(
          `INSERT INTO client_schedules (client_id, rrule, next_run, ${COLLECTION_OPTIONS.join(', ')}, created_at, updated_at)
           SELECT ?1, ?2, ?3, ${COLLECTION_OPTIONS.map((_, i) => `?${i + 4}`).join(', ')}, ?11, ?11
           WHERE EXISTS (SELECT 1 FROM clients WHERE id = ?1 AND ${inScope('environment_id', '?12')})`,
        )
        .bind(s.clientId, s.rrule, s.nextRun, ...COLLECTION_OPTIONS.map((o) => (s.options[o] ? 1 : 0)), s.now, scopeParam(scope)),
    ],
    audit,
    { ifChanged: 0, computed: { id: 'last_insert_rowid()' } },
  )
  if (r.meta.changes !== 1) return null
  return getSchedule(db, Number(r.meta.last_row_id), scope)
}

/** The schedule, when its client is within `scope`. */
export async function getSchedule(db: D1Database, id: number, scope: EnvironmentAccess): Promise<ScheduleRecord | null> {
  const r = await db.prepare(`SELECT ${COLUMNS} FROM ${FROM} WHERE s.id = ?1 AND ${inScope('c.environment_id', '?2')}`).bind(id, scopeParam(scope)).first<Row>()
  return r ? toRecord(r) : null
}

/** The schedules of the clients within `scope` (of one client: clientId). */
export async function listSchedules(db: D1Database, clientId: string | undefined, scope: EnvironmentAccess): Promise<ScheduleRecord[]> {
  const r = await db
    .prepare(`SELECT ${COLUMNS} FROM ${FROM} WHERE (?1 IS NULL OR s.client_id = ?1) AND ${inScope('c.environment_id', '?2')} ORDER BY s.id`)
    .bind(clientId ?? null, scopeParam(scope))
    .all<Row>()
  return r.results.map(toRecord)
}

/** SQL: the schedule's client (column `client_id` of client_schedules) is within the scope bound at `param`. */
const scheduleInScope = (param: string) => `client_id IN (SELECT id FROM clients WHERE ${inScope('environment_id', param)})`

export async function updateSchedule(
  db: D1Database,
  id: number,
  p: { rrule?: string; nextRun?: string; options: Partial<CollectionOptions>; now: string },
  audit: AuditWrite,
  scope: EnvironmentAccess,
): Promise<ScheduleRecord | null> {
  const sets = ['updated_at = ?3']
  const binds: unknown[] = [id, scopeParam(scope), p.now]
  if (p.rrule !== undefined) {
    binds.push(p.rrule, p.nextRun)
    sets.push(`rrule = ?${binds.length - 1}`, `next_run = ?${binds.length}`)
  }
  for (const o of COLLECTION_OPTIONS)
    if (p.options[o] !== undefined) {
      binds.push(p.options[o] ? 1 : 0)
      sets.push(`${o} = ?${binds.length}`)
    }
  const [r] = await auditedBatch(db, [db.prepare(`UPDATE client_schedules SET ${sets.join(', ')} WHERE id = ?1 AND ${scheduleInScope('?2')}`).bind(...binds)], audit, { ifChanged: 0 })
  return r.meta.changes === 1 ? getSchedule(db, id, scope) : null
}

export async function deleteSchedule(db: D1Database, id: number, audit: AuditWrite, scope: EnvironmentAccess): Promise<boolean> {
  const [r] = await auditedBatch(db, [db.prepare(`DELETE FROM client_schedules WHERE id = ?1 AND ${scheduleInScope('?2')}`).bind(id, scopeParam(scope))], audit, { ifChanged: 0 })
  return r.meta.changes === 1
}

export async function dueSchedules(db: D1Database, now: string): Promise<ScheduleRecord[]> {
  const r = await db.prepare(`SELECT ${COLUMNS} FROM ${FROM} WHERE s.next_run <= ?1 ORDER BY s.next_run LIMIT 500`).bind(now).all<Row>()
  return r.results.map(toRecord)
}

/**
 * Turns one due occurrence into a ready job, exactly once: the job INSERT is OR IGNORE on the unique index
 * (event_id, execution_time) (client_jobs_occurrence), so a second cron run that sees the same occurrence,
 * concurrently or later, inserts nothing; the schedule moves on to `nextRun` only from the `seenNextRun` it
 * was read with. One batch. True when this call created the job.
 */
export async function materialize(db: D1Database, s: ScheduleRecord, occurrence: string, seenNextRun: string, nextRun: string, now: string): Promise<boolean> {
  const [ins] = await db.batch([
    jobInsert(db, { clientId: s.client_id, eventId: s.id, executionTime: occurrence, options: s, now, message: `scheduled by schedule ${s.id}` }, SERVICE_SCOPE, true),
    db.prepare('UPDATE client_schedules SET next_run = ?3 WHERE id = ?1 AND next_run = ?2').bind(s.id, seenNextRun, nextRun),
  ])
  if (ins.meta.changes !== 1) return false
  forgetClient(s.client_id)
  return true
}
