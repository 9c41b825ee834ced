import { auditedBatch } from '../audit/audit.store'
import type { AuditWrite } from '../audit/audit'

export interface TokenRecord {
  id: string
  user_id: string
  name: string
  hmac_method: string
  created_at: string
  updated_at: string
  last_access: string | null
}

const COLUMNS = 'id, user_id, name, hmac_method, created_at, updated_at, last_access'

/**
 * Inserts a token unless its user already holds `maxPerUser` (the count and the insert are one statement,
 * so concurrent creations cannot pass the cap), with its audit success row in the same batch (written only
 * if the token was). False: the user is at the cap, nothing was written.
 */
export async function insertToken(db: D1Database, t: TokenRecord & { key_sealed: string }, audit: AuditWrite, maxPerUser = Number.MAX_SAFE_INTEGER): Promise<boolean> {
  const stmt = db
    .prepare(
      `INSERT INTO api_tokens (id, user_id, name, key_sealed, hmac_method, created_at, updated_at, last_access)
       SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8 WHERE (SELECT count(*) FROM api_tokens WHERE user_id = ?2) < ?9`,
    )
    .bind(t.id, t.user_id, t.name, t.key_sealed, t.hmac_method, t.created_at, t.updated_at, t.last_access, maxPerUser)
  const [r] = await auditedBatch(db, [stmt], audit, { ifChanged: 0 })
  return r.meta.changes === 1
}

export async function getToken(db: D1Database, id: string): Promise<TokenRecord | null> {
  return db.prepare(`SELECT ${COLUMNS} FROM api_tokens WHERE id = ?`).bind(id).first<TokenRecord>()
}

/** The sealed key of a token whose user exists (for signature verification). */
export async function getSealedKey(db: D1Database, id: string): Promise<{ user_id: string; key_sealed: string } | null> {
  return db.prepare('SELECT user_id, key_sealed FROM api_tokens WHERE id = ?').bind(id).first()
}

export async function listTokens(db: D1Database, userId: string | null): Promise<TokenRecord[]> {
  const q = userId
    ? db.prepare(`SELECT ${COLUMNS} FROM api_tokens WHERE user_id = ? ORDER BY created_at, id`).bind(userId)
    : db.prepare(`SELECT ${COLUMNS} FROM api_tokens ORDER BY created_at, id`)
  return (await q.all<TokenRecord>()).results
}

export async function tokenIdsOfUser(db: D1Database, userId: string): Promise<string[]> {
  const { results } = await db.prepare('SELECT id FROM api_tokens WHERE user_id = ?').bind(userId).all<{ id: string }>()
  return results.map((r) => r.id)
}

export async function deleteToken(db: D1Database, id: string, audit: AuditWrite): Promise<boolean> {
  const [r] = await auditedBatch(db, [db.prepare('DELETE FROM api_tokens WHERE id = ?').bind(id)], audit, { ifChanged: 0 })
  return r.meta.changes === 1
}

export async function touchLastAccess(db: D1Database, id: string, at: string): Promise<void> {
  await db.prepare('UPDATE api_tokens SET last_access = ? WHERE id = ? AND (last_access IS NULL OR last_access < ?)').bind(at, id, at).run()
}
