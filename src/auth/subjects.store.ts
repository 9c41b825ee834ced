import { toUser, type User } from './users.store'

/** What the limiter object of a token or session needs to know about its subject, read in one query. */
export interface Subject {
  user: User
  /** sessions only: ISO time after which the session is over */
  expiresAt?: string
  ended?: boolean
}

const USER_COLS =
  'u.id, u.principal_name, u.email, u.password_hash, u.roles, u.is_disabled, u.all_environments, u.environment_ids, u.created_at, u.updated_at'

export async function loadTokenSubject(db: D1Database, tokenId: string): Promise<Subject | null> {
  const r = await db
    .prepare(`SELECT ${USER_COLS} FROM api_tokens t JOIN users u ON u.id = t.user_id WHERE t.id = ?`)
    .bind(tokenId)
    .first()
  return r ? { user: toUser(r as never) } : null
}

export async function loadSessionSubject(db: D1Database, sessionId: string): Promise<Subject | null> {
  const r = await db
    .prepare(`SELECT ${USER_COLS}, s.expires_at AS s_expires_at, s.ended_at AS s_ended_at FROM sessions s JOIN users u ON u.id = s.user_id WHERE s.id = ?`)
    .bind(sessionId)
    .first<Record<string, unknown>>()
  return r ? { user: toUser(r as never), expiresAt: r.s_expires_at as string, ended: r.s_ended_at !== null } : null
}
