import { auditedBatch } from '../audit/audit.store'
import type { AuditWrite } from '../audit/audit'

export interface SessionRow {
  id: string
  user_id: string
  created_at: string
  expires_at: string
  ended_at: string | null
}

export async function insertSession(db: D1Database, s: Omit<SessionRow, 'ended_at'>, audit: AuditWrite): Promise<void> {
  const stmt = db.prepare('INSERT INTO sessions (id, user_id, created_at, expires_at) VALUES (?, ?, ?, ?)').bind(s.id, s.user_id, s.created_at, s.expires_at)
  await auditedBatch(db, [stmt], audit)
}

/** Ends the given sessions in one batch with the logout's audit row; returns how many were still open. */
export async function endSessions(db: D1Database, ids: string[], now: string, audit: AuditWrite): Promise<number> {
  const rs = await auditedBatch(
    db,
    ids.map((id) => db.prepare('UPDATE sessions SET ended_at = ? WHERE id = ? AND ended_at IS NULL').bind(now, id)),
    audit,
  )
  return rs.filter((r) => r.meta.changes === 1).length
}

export async function endSession(db: D1Database, id: string, now: string): Promise<boolean> {
  const r = await db.prepare('UPDATE sessions SET ended_at = ? WHERE id = ? AND ended_at IS NULL').bind(now, id).run()
  return r.meta.changes === 1
}

/** Open sessions of a user (to invalidate their limiter objects when the user changes). */
export async function openSessionIds(db: D1Database, userId: string, now: string): Promise<string[]> {
  const { results } = await db
    .prepare('SELECT id FROM sessions WHERE user_id = ? AND expires_at > ?')
    .bind(userId, now)
    .all<{ id: string }>()
  return results.map((r) => r.id)
}

/** The user of a session that exists, has not ended and has not expired; null otherwise. */
export async function openSessionUser(db: D1Database, id: string, now: string): Promise<string | null> {
  const r = await db
    .prepare('SELECT user_id FROM sessions WHERE id = ? AND ended_at IS NULL AND expires_at > ?')
    .bind(id, now)
    .first<{ user_id: string }>()
  return r?.user_id ?? null
}
