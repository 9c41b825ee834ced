import { auditedBatch } from '../audit/audit.store'
import type { AuditWrite } from '../audit/audit'
/**
 * Saved Cypher queries (BloodHound's saved_queries with their sharing rows). Plain rows in and out.
 */

export interface SavedQueryRow {
  id: number
  user_id: string
  name: string
  query: string
  description: string
  created_at: string
  updated_at: string
}

export type Scope = 'owned' | 'shared' | 'public'

export interface ListFilter {
  /** column → [operator, value]; operator eq (exact), neq or contains (case-insensitive) */
  filters: { column: 'name' | 'query' | 'description' | 'user_id'; op: 'eq' | 'neq' | 'contains'; value: string }[]
  /** ORDER BY terms, already validated column names */
  order: { column: string; descending: boolean }[]
  skip: number
  limit: number
}

const COLUMNS = 'q.id, q.user_id, q.name, q.query, q.description, q.created_at, q.updated_at'

/** Columns a list may be sorted by (BloodHound's sortable columns). */
export const SORTABLE = new Set(['id', 'user_id', 'name', 'query', 'description', 'created_at', 'updated_at', 'deleted_at'])

function scopeWhere(scope: Scope): string {
  switch (scope) {
    case 'owned':
      return 'q.user_id = ?1'
    case 'shared':
      return 'q.user_id <> ?1 AND EXISTS (SELECT 1 FROM saved_queries_permissions p WHERE p.query_id = q.id AND p.shared_to_user_id = ?1)'
    case 'public':
      // ?1 (the caller) is bound for every scope; this one does not need it
      return '?1 IS NOT NULL AND EXISTS (SELECT 1 FROM saved_queries_permissions p WHERE p.query_id = q.id AND p.public = 1)'
  }
}

/** One page of a scope's queries and the scope's total (with the filters). */
export async function listSavedQueries(db: D1Database, userId: string, scope: Scope, f: ListFilter): Promise<{ rows: SavedQueryRow[]; count: number }> {
  const params: unknown[] = [userId]
  const where = [scopeWhere(scope)]
  for (const x of f.filters) {
    params.push(x.value)
    where.push(
      x.op === 'eq' ? `q.${x.column} = ?${params.length}` : x.op === 'neq' ? `q.${x.column} <> ?${params.length}` : `instr(lower(q.${x.column}), lower(?${params.length})) > 0`,
    )
  }
  // deleted_at: BloodHound's soft-delete column, never set on a listed query (EdgeHound deletes rows): a constant
  const term = (c: string) => (c === 'deleted_at' ? 'NULL' : `q.${c}`)
  const order = f.order.length ? f.order.map((o) => `${term(o.column)}${o.descending ? ' DESC' : ''}`).join(', ') + ', q.id' : 'q.id'
  const base = `FROM saved_queries q WHERE ${where.join(' AND ')}`
  const [page, total] = await db.batch([
    db.prepare(`SELECT ${COLUMNS} ${base} ORDER BY ${order} LIMIT ?${params.length + 1} OFFSET ?${params.length + 2}`).bind(...params, f.limit, f.skip),
    db.prepare(`SELECT count(*) AS n ${base}`).bind(...params),
  ])
  return { rows: page.results as SavedQueryRow[], count: (total.results[0] as { n: number }).n }
}

export async function getSavedQuery(db: D1Database, id: number): Promise<SavedQueryRow | null> {
  return db.prepare(`SELECT ${COLUMNS} FROM saved_queries q WHERE q.id = ?1`).bind(id).first<SavedQueryRow>()
}

/** Shared with the user, or public. */
export async function isSharedWithOrPublic(db: D1Database, id: number, userId: string): Promise<boolean> {
  const r = await db
    .prepare('SELECT 1 FROM saved_queries_permissions WHERE query_id = ?1 AND (public = 1 OR shared_to_user_id = ?2) LIMIT 1')
    .bind(id, userId)
    .first()
  return r !== null
}

export async function isPublic(db: D1Database, id: number): Promise<boolean> {
  return (await db.prepare('SELECT 1 FROM saved_queries_permissions WHERE query_id = ?1 AND public = 1 LIMIT 1').bind(id).first()) !== null
}

/** The new row, or null when the user already has a query of that name. */
export async function insertSavedQuery(db: D1Database, q: Omit<SavedQueryRow, 'id'>, audit: AuditWrite): Promise<SavedQueryRow | null> {
  const stmt = db
    .prepare(
      `INSERT INTO saved_queries (user_id, name, query, description, created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
       ON CONFLICT (user_id, name) DO NOTHING
       RETURNING id, user_id, name, query, description, created_at, updated_at`,
    )
    .bind(q.user_id, q.name, q.query, q.description, q.created_at, q.updated_at)
  const [r] = await auditedBatch(db, [stmt], audit, { ifChanged: 0 })
  return (r.results[0] as SavedQueryRow | undefined) ?? null
}

/** The updated row; null when the owner already has another query of the new name (or the row is gone). */
export async function updateSavedQuery(db: D1Database, q: SavedQueryRow, audit: AuditWrite): Promise<SavedQueryRow | null> {
  const clash = await db.prepare('SELECT 1 FROM saved_queries WHERE user_id = ?1 AND name = ?2 AND id <> ?3').bind(q.user_id, q.name, q.id).first()
  if (clash) return null
  const stmt = db
    .prepare(
      `UPDATE saved_queries SET name = ?2, query = ?3, description = ?4, updated_at = ?5 WHERE id = ?1
       RETURNING id, user_id, name, query, description, created_at, updated_at`,
    )
    .bind(q.id, q.name, q.query, q.description, q.updated_at)
  const [r] = await auditedBatch(db, [stmt], audit, { ifChanged: 0 })
  return (r.results[0] as SavedQueryRow | undefined) ?? null
}

/** Deletes the query and its sharing rows in one batch; false when it did not exist. */
export async function deleteSavedQuery(db: D1Database, id: number, audit: AuditWrite): Promise<boolean> {
  const [, del] = await auditedBatch(
    db,
    [db.prepare('DELETE FROM saved_queries_permissions WHERE query_id = ?1').bind(id), db.prepare('DELETE FROM saved_queries WHERE id = ?1').bind(id)],
    audit,
    { ifChanged: 1 },
  )
  return (del.meta.changes ?? 0) > 0
}

/**
 * A sharing row as BloodHound's SavedQueriesPermissions: SQLite's rowid is its id, and a row is never
 * changed in place (a new sharing replaces the rows), so updated_at is created_at.
 */
export interface PermissionRow {
  id: number
  query_id: number
  shared_to_user_id: string | null
  public: boolean
  created_at: string
  updated_at: string
}

const PERMISSION_COLUMNS = 'rowid AS id, query_id, shared_to_user_id, public, created_at, created_at AS updated_at'

const permission = (r: Record<string, unknown>): PermissionRow => ({ ...(r as unknown as PermissionRow), public: r.public === 1 || r.public === true })

/** Every sharing row of a query, oldest first. */
export async function getPermissions(db: D1Database, id: number): Promise<PermissionRow[]> {
  const r = await db.prepare(`SELECT ${PERMISSION_COLUMNS} FROM saved_queries_permissions WHERE query_id = ?1 ORDER BY rowid`).bind(id).all()
  return r.results.map(permission)
}

/** Shared with this user by name (not through public). */
export async function isSharedWith(db: D1Database, id: number, userId: string): Promise<boolean> {
  return (await db.prepare('SELECT 1 FROM saved_queries_permissions WHERE query_id = ?1 AND shared_to_user_id = ?2 LIMIT 1').bind(id, userId).first()) !== null
}

/**
 * BloodHound's CreateSavedQueryPermissionToPublic: the public row replaces the per-user rows (one batch).
 * Returns the new row, or null when the query was already public (a concurrent request made it public
 * between the caller's check and this batch: the insert then does nothing, and the answer is BloodHound's
 * "already public" 204, never a 500).
 */
export async function makePublic(db: D1Database, id: number, now: string, audit: AuditWrite): Promise<PermissionRow | null> {
  const [, ins] = await auditedBatch(db, [
    db.prepare('DELETE FROM saved_queries_permissions WHERE query_id = ?1 AND public = 0').bind(id),
    db
      .prepare(
        `INSERT INTO saved_queries_permissions (query_id, shared_to_user_id, public, created_at) VALUES (?1, NULL, 1, ?2)
         ON CONFLICT DO NOTHING RETURNING ${PERMISSION_COLUMNS}`,
      )
      .bind(id, now),
  ], audit)
  const row = ins.results[0] as Record<string, unknown> | undefined
  return row ? permission(row) : null
}

/**
 * BloodHound's CreateSavedQueryPermissionsToUsers: these users replace the users the query was shared
 * with (one batch; the caller has checked that the query is not public). Returns the new rows.
 */
export async function shareWithUsers(db: D1Database, id: number, userIds: string[], now: string, audit: AuditWrite): Promise<PermissionRow[]> {
  const [, ins] = await auditedBatch(db, [
    db.prepare('DELETE FROM saved_queries_permissions WHERE query_id = ?1 AND public = 0').bind(id),
    db
      .prepare(
        `INSERT INTO saved_queries_permissions (query_id, shared_to_user_id, public, created_at)
         SELECT ?1, value, 0, ?3 FROM (SELECT DISTINCT value FROM json_each(?2)) WHERE true ORDER BY value
         ON CONFLICT DO NOTHING RETURNING ${PERMISSION_COLUMNS}`,
      )
      .bind(id, JSON.stringify(userIds), now),
  ], audit)
  return ins.results.map((r) => permission(r as Record<string, unknown>))
}

/**
 * BloodHound's DeleteSavedQueryPermissionsForUsers: the rows of these users, or with no users every
 * sharing row (public included). Audited when a row goes.
 */
export async function unshare(db: D1Database, id: number, userIds: string[], audit: AuditWrite): Promise<void> {
  const stmt =
    userIds.length === 0
      ? db.prepare('DELETE FROM saved_queries_permissions WHERE query_id = ?1').bind(id)
      : db.prepare('DELETE FROM saved_queries_permissions WHERE query_id = ?1 AND shared_to_user_id IN (SELECT value FROM json_each(?2))').bind(id, JSON.stringify(userIds))
  await auditedBatch(db, [stmt], audit, { ifChanged: 0 })
}

/** Queries an export of `scope` holds for the caller (`all`: owned, shared with them and public), oldest first. */
export async function exportableQueries(db: D1Database, userId: string, scope: Scope | 'all', limit: number): Promise<SavedQueryRow[]> {
  const where = scope === 'all' ? `(${scopeWhere('owned')}) OR (${scopeWhere('shared')}) OR (${scopeWhere('public')})` : scopeWhere(scope)
  const { results } = await db.prepare(`SELECT ${COLUMNS} FROM saved_queries q WHERE ${where} ORDER BY q.id LIMIT ?2`).bind(userId, limit).all<SavedQueryRow>()
  return results
}

/**
 * Inserts the queries as the caller's, all in one batch with the audit row: the count, or null when a name is
 * already the caller's (the unique constraint fails the batch, so nothing is imported).
 */
export async function importSavedQueries(
  db: D1Database,
  userId: string,
  queries: { name: string; query: string; description: string }[],
  now: string,
  audit: AuditWrite,
): Promise<number | null> {
  const insert = db.prepare(`INSERT INTO saved_queries (user_id, name, query, description, created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?5)`)
  try {
    await auditedBatch(db, queries.map((q) => insert.bind(userId, q.name, q.query, q.description, now)), audit, { fields: { count: queries.length, names: queries.map((q) => q.name) } })
  } catch (e) {
    if (/UNIQUE constraint failed/i.test(String((e as Error)?.message))) return null
    throw e
  }
  return queries.length
}
