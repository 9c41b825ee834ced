import type { AuditFields, AuditWrite } from './audit'
import { tooLargeForPage } from './fields'

/** Audit log storage (migrations/0017_audit_logs.sql). User text never becomes SQL: columns come from fixed lists. */

export interface AuditRowInput {
  created_at: string
  actor_id: string
  actor_name: string
  action: string
  fields: string
  request_id: string
  source_ip_address: string
  status: 'intent' | 'success' | 'failure'
  commit_id: string
  /** the environments the row concerns (src/audit/visibility.ts `environmentsColumn`); absent: NULL, decided by action */
  environments?: string
}

/**
 * The INSERT of one row; the actor's e-mail is read inside the same statement (no extra round trip).
 * `ifChanged`: the row is inserted only when the statement just before it in the batch changed a row
 * (SQLite's changes(); a D1 batch runs its statements in order on one connection, in one transaction), so
 * a DELETE or UPDATE that matched nothing leaves no success entry.
 */
export function auditInsert(db: D1Database, r: AuditRowInput, ifChanged = false, computed: Record<string, string> = {}): D1PreparedStatement {
  // `computed`: field name -> SQL scalar expression, set into the fields JSON inside the statement (e.g. the id
  // the change's INSERT just assigned). Only fixed text from *.store.ts reaches here; names are checked anyway.
  let fields = '?5'
  for (const [k, expr] of Object.entries(computed)) {
    if (!/^[a-z_]{1,40}$/.test(k)) throw new Error(`audit: bad computed field name ${k}`)
    fields = `json_set(${fields}, '$.${k}', (${expr}))`
  }
  return db
    .prepare(
      `INSERT INTO audit_logs (created_at, actor_id, actor_name, actor_email, action, fields, request_id, source_ip_address, status, commit_id, environments)
       SELECT ?1, ?2, ?3, COALESCE((SELECT email FROM users WHERE id = ?2), ''), ?4, ${fields}, ?6, ?7, ?8, ?9, ?10${ifChanged ? ' WHERE changes() > 0' : ''}`,
    )
    .bind(r.created_at, r.actor_id, r.actor_name, r.action, r.fields, r.request_id, r.source_ip_address, r.status, r.commit_id, r.environments ?? null)
}

/**
 * THE way an audited change is written: the change's statements and the request's success row in one
 * db.batch (one D1 transaction). Returns the results of the change's statements, in their order.
 * `ifChanged: i` puts the row right after statement i and writes it only if that statement changed a
 * row (see auditInsert); `audit.committed` then tells whether it was written. `fields` adds fields known
 * only to the store, `computed` fields evaluated in SQL inside the batch (see auditInsert).
 */
export async function auditedBatch(
  db: D1Database,
  statements: D1PreparedStatement[],
  audit: AuditWrite,
  opts: { ifChanged?: number; fields?: AuditFields; computed?: Record<string, string> } = {},
): Promise<D1Result[]> {
  const at = opts.ifChanged === undefined ? statements.length : opts.ifChanged + 1
  const all = [...statements.slice(0, at), audit.statement(db, opts.ifChanged !== undefined, opts.fields, opts.computed), ...statements.slice(at)]
  const results = await db.batch(all)
  audit.committed = results[at].meta.changes > 0
  return [...results.slice(0, at), ...results.slice(at + 1)]
}

export async function writeAuditRow(stmt: D1PreparedStatement): Promise<void> {
  await stmt.run()
}

export interface AuditLogRow {
  id: number
  created_at: string
  actor_id: string
  actor_name: string
  actor_email: string
  action: string
  fields: Record<string, unknown>
  request_id: string
  source_ip_address: string
  status: 'intent' | 'success' | 'failure'
  commit_id: string
  /** the stored environments column (never served as such; src/audit/visibility.ts reads it) */
  environments: string | null
}

export type AuditColumn = 'id' | 'created_at' | 'actor_id' | 'actor_name' | 'actor_email' | 'action' | 'request_id' | 'source_ip_address' | 'status'
export type AuditOp = 'eq' | 'neq' | 'gt' | 'gte' | 'lt' | 'lte'
export interface AuditFilter {
  column: AuditColumn
  op: AuditOp
  value: string | number
}
export interface AuditSort {
  column: 'id' | 'created_at' | 'actor_name' | 'actor_email' | 'action' | 'source_ip_address' | 'status'
  desc: boolean
}

const SQL_OP: Record<AuditOp, string> = { eq: '=', neq: '<>', gt: '>', gte: '>=', lt: '<', lte: '<=' }

export async function listAuditLogs(
  db: D1Database,
  q: { after: string; before: string; filters: AuditFilter[]; sort: AuditSort[]; skip: number; limit: number; inlineMax?: number },
): Promise<{ count: number; rows: AuditLogRow[] }> {
  // `after` inclusive, `before` exclusive: consecutive windows never serve a row twice.
  const where = ['created_at >= ?', 'created_at < ?']
  const binds: (string | number)[] = [q.after, q.before]
  for (const f of q.filters) {
    where.push(`${f.column} ${SQL_OP[f.op]} ?`)
    binds.push(f.value)
  }
  const order = [...q.sort.map((s) => `${s.column}${s.desc ? ' DESC' : ''}`)]
  if (!q.sort.some((s) => s.column === 'id')) order.push('id')
  const w = where.join(' AND ')
  const [count, rows] = await db.batch([
    db.prepare(`SELECT count(*) AS n FROM audit_logs WHERE ${w}`).bind(...binds),
    db
      .prepare(
        // a row's fields larger than inlineMax characters stay in the database (only their length is read): the
        // page's size is bounded whatever the entries hold (src/audit/fields.ts `tooLargeForPage`)
        `SELECT id, created_at, actor_id, actor_name, actor_email, action,
           CASE WHEN length(fields) <= ? THEN fields END AS fields, length(fields) AS fields_chars,
           request_id, source_ip_address, status, commit_id, environments
         FROM audit_logs WHERE ${w} ORDER BY ${order.join(', ')} LIMIT ? OFFSET ?`,
      )
      .bind(q.inlineMax ?? Number.MAX_SAFE_INTEGER, ...binds, q.limit, q.skip),
  ])
  const list = (rows.results as (Omit<AuditLogRow, 'fields'> & { fields: string | null; fields_chars: number })[]).map(({ fields_chars, ...r }) => {
    if (r.fields === null) return { ...r, fields: tooLargeForPage(r.id, fields_chars) }
    let fields: Record<string, unknown> = {}
    try {
      const v = JSON.parse(r.fields)
      if (v && typeof v === 'object' && !Array.isArray(v)) fields = v
    } catch {
      /* a row is never written with invalid JSON; serve {} rather than fail the page */
    }
    return { ...r, fields }
  })
  return { count: (count.results[0] as { n: number }).n, rows: list }
}

/**
 * The environments of some graph objects, for an audit entry that names them (src/audit/visibility.ts): their
 * environment ids, or 'unknown' when one of them is no node or has no environment (its id alone could name a
 * hidden environment's object, so the entry is served only to readers of every environment).
 */
export async function environmentsOfObjects(db: D1Database, objectids: string[]): Promise<string[] | 'unknown'> {
  const ids = [...new Set(objectids)]
  if (ids.length === 0) return []
  const { results } = await db
    .prepare('SELECT objectid, environment_id FROM nodes WHERE objectid IN (SELECT value FROM json_each(?1))')
    .bind(JSON.stringify(ids))
    .all<{ objectid: string; environment_id: string | null }>()
  if (results.length < ids.length || results.some((r) => !r.environment_id)) return 'unknown'
  return [...new Set(results.map((r) => r.environment_id as string))]
}

/** Retention: deletes rows older than `cutoff` in bounded chunks (runs from the cron trigger). Returns rows deleted. */
export async function pruneAuditLogs(db: D1Database, cutoff: string, chunk = 5000, maxChunks = 20): Promise<number> {
  let total = 0
  for (let i = 0; i < maxChunks; i++) {
    const r = await db
      .prepare('DELETE FROM audit_logs WHERE id IN (SELECT id FROM audit_logs WHERE created_at < ? ORDER BY id LIMIT ?)')
      .bind(cutoff, chunk)
      .run()
    total += r.meta.changes
    if (r.meta.changes < chunk) break
  }
  return total
}
