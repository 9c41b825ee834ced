import { auditedBatch } from '../audit/audit.store'
import type { AuditWrite } from '../audit/audit'
import type { EnvironmentAccess, Role } from './permissions'

export interface User {
  id: string
  principal_name: string
  email: string | null
  roles: Role[]
  is_disabled: boolean
  environment_access: EnvironmentAccess
  /** the SSO provider the user signs in through, or null (password / API tokens only) */
  sso_provider_id: number | null
  /**
   * When the password stops being accepted as is (null: never): past it, login answers auth_expired and the
   * user must set a new one (migration 0038). Only meaningful for users with a password.
   */
  secret_expires_at: string | null
  created_at: string
  updated_at: string
}

interface UserRow {
  id: string
  principal_name: string
  email: string | null
  password_hash: string | null
  roles: string
  is_disabled: number
  all_environments: number
  environment_ids: string
  /** absent from column lists that predate it (treated as null) */
  sso_provider_id?: number | null
  /** absent from column lists that predate it (treated as null) */
  secret_expires_at?: string | null
  created_at: string
  updated_at: string
}

export function toUser(r: UserRow): User {
  return {
    id: r.id,
    principal_name: r.principal_name,
    email: r.email,
    roles: JSON.parse(r.roles) as Role[],
    is_disabled: r.is_disabled === 1,
    environment_access: r.all_environments === 1 ? { all: true } : { all: false, ids: JSON.parse(r.environment_ids) as string[] },
    sso_provider_id: r.sso_provider_id ?? null,
    secret_expires_at: r.secret_expires_at ?? null,
    created_at: r.created_at,
    updated_at: r.updated_at,
  }
}

const COLUMNS = 'id, principal_name, email, password_hash, roles, is_disabled, all_environments, environment_ids, sso_provider_id, secret_expires_at, created_at, updated_at'

export async function countUsers(db: D1Database): Promise<number> {
  const r = await db.prepare('SELECT count(*) AS n FROM users').first<{ n: number }>()
  return r?.n ?? 0
}

/**
 * Collector clients' service users (src/clients/) are not people: they are absent from the user routes (not
 * listed, read, changed, deleted or given tokens there), so their role and environment access change only
 * through the client routes.
 */
const NOT_A_CLIENT = 'NOT EXISTS (SELECT 1 FROM clients WHERE clients.user_id = users.id)'

export async function getUser(db: D1Database, id: string): Promise<User | null> {
  const r = await db.prepare(`SELECT ${COLUMNS} FROM users WHERE id = ? AND ${NOT_A_CLIENT}`).bind(id).first<UserRow>()
  return r ? toUser(r) : null
}

/** A user with their password hash (for the password-change checks; never answered). */
export async function findUserById(db: D1Database, id: string): Promise<(User & { password_hash: string | null }) | null> {
  const r = await db.prepare(`SELECT ${COLUMNS} FROM users WHERE id = ?`).bind(id).first<UserRow>()
  return r ? { ...toUser(r), password_hash: r.password_hash } : null
}

/** Login lookup: principal name (case-insensitive) or email (case-insensitive). */
export async function findUserForLogin(db: D1Database, username: string): Promise<(User & { password_hash: string | null }) | null> {
  const r = await db
    .prepare(`SELECT ${COLUMNS} FROM users WHERE principal_name = ?1 COLLATE NOCASE OR email = ?1 COLLATE NOCASE LIMIT 1`)
    .bind(username)
    .first<UserRow>()
  return r ? { ...toUser(r), password_hash: r.password_hash } : null
}

export async function listUsers(db: D1Database): Promise<User[]> {
  const { results } = await db.prepare(`SELECT ${COLUMNS} FROM users WHERE ${NOT_A_CLIENT} ORDER BY principal_name COLLATE NOCASE, id`).all<UserRow>()
  return results.map(toUser)
}

export interface NewUser {
  id: string
  principal_name: string
  email: string | null
  password_hash: string | null
  roles: Role[]
  environment_access: EnvironmentAccess
  sso_provider_id?: number | null
  /** the password must be changed at first sign-in from this time (null / absent: it does not expire) */
  secret_expires_at?: string | null
  now: string
}

function insertStatement(db: D1Database, u: NewUser): D1PreparedStatement {
  return db
    .prepare(
      `INSERT INTO users (id, principal_name, email, password_hash, roles, is_disabled, all_environments, environment_ids, sso_provider_id, secret_expires_at, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, 0, ?, ?, ?, ?, ?, ?)`,
    )
    .bind(
      u.id,
      u.principal_name,
      u.email,
      u.password_hash,
      JSON.stringify(u.roles),
      u.environment_access.all ? 1 : 0,
      JSON.stringify(u.environment_access.all ? [] : u.environment_access.ids),
      u.sso_provider_id ?? null,
      u.secret_expires_at ?? null,
      u.now,
      u.now,
    )
}

/** Returns false when the principal name or email is taken. */
export async function insertUser(db: D1Database, u: NewUser, audit: AuditWrite): Promise<boolean> {
  try {
    await auditedBatch(db, [insertStatement(db, u)], audit)
    return true
  } catch (e) {
    if (/UNIQUE constraint failed/i.test(String((e as Error).message))) return false
    throw e
  }
}

/**
 * Creates the first administrator only while the table is empty (atomic: INSERT ... WHERE NOT EXISTS), with
 * its audit row (CreateUser) in the same batch, written only if the user was.
 */
export async function insertFirstUser(db: D1Database, u: NewUser, audit: AuditWrite): Promise<boolean> {
  const [r] = await auditedBatch(
    db,
    [
      db
        .prepare(
          `INSERT INTO users (id, principal_name, email, password_hash, roles, is_disabled, all_environments, environment_ids, created_at, updated_at)
           SELECT ?, ?, ?, ?, ?, 0, 1, '[]', ?, ? WHERE NOT EXISTS (SELECT 1 FROM users)`,
        )
        .bind(u.id, u.principal_name, u.email, u.password_hash, JSON.stringify(u.roles), u.now, u.now),
    ],
    audit,
    { ifChanged: 0 },
  )
  return r.meta.changes === 1
}

export interface UserPatch {
  roles?: Role[]
  is_disabled?: boolean
  environment_access?: EnvironmentAccess
  email?: string | null
  principal_name?: string
  password_hash?: string
  /** when the password expires (null: never); a new password sets it (null, or now for a forced change) */
  secret_expires_at?: string | null
  /** with password_hash: the one open session that survives the change (the caller's own), if any */
  keep_session_id?: string
  sso_provider_id?: number | null
  /**
   * End the user's sessions (all but `keep_session_id`) in the change's batch, as a password change does:
   * set when the user is linked to another SSO provider (their way of signing in changed).
   */
  end_sessions?: boolean
}

/**
 * Applies a patch in one statement; disabling a user also ends their sessions in the same batch, and so
 * does a password change or a new SSO link (all but `keep_session_id`).
 * Returns null when the user does not exist, 'conflict' on a duplicate name/email.
 */
export async function updateUser(db: D1Database, id: string, p: UserPatch, now: string, audit: AuditWrite): Promise<User | null | 'conflict'> {
  const sets: string[] = []
  const args: unknown[] = []
  if (p.roles) sets.push('roles = ?'), args.push(JSON.stringify(p.roles))
  if (p.is_disabled !== undefined) sets.push('is_disabled = ?'), args.push(p.is_disabled ? 1 : 0)
  if (p.environment_access) {
    sets.push('all_environments = ?', 'environment_ids = ?')
    args.push(p.environment_access.all ? 1 : 0, JSON.stringify(p.environment_access.all ? [] : p.environment_access.ids))
  }
  if (p.email !== undefined) sets.push('email = ?'), args.push(p.email)
  if (p.principal_name !== undefined) sets.push('principal_name = ?'), args.push(p.principal_name)
  if (p.password_hash !== undefined) sets.push('password_hash = ?'), args.push(p.password_hash)
  if (p.secret_expires_at !== undefined) sets.push('secret_expires_at = ?'), args.push(p.secret_expires_at)
  // Linking a user to an SSO provider removes their secret: they sign in through the provider only.
  if (p.sso_provider_id !== undefined) sets.push('sso_provider_id = ?'), args.push(p.sso_provider_id)
  if (p.sso_provider_id) sets.push('password_hash = NULL', 'secret_expires_at = NULL')
  sets.push('updated_at = ?')
  args.push(now)
  const stmts = [db.prepare(`UPDATE users SET ${sets.join(', ')} WHERE id = ?`).bind(...args, id)]
  if (p.is_disabled) stmts.push(db.prepare('UPDATE sessions SET ended_at = ? WHERE user_id = ? AND ended_at IS NULL').bind(now, id))
  else if (p.password_hash !== undefined || p.end_sessions)
    // A new password ends the sessions opened with the old one, in the same batch as the change, except
    // the session that made the change when it is the user's own (`id IS NOT NULL` when there is none).
    stmts.push(
      db.prepare('UPDATE sessions SET ended_at = ? WHERE user_id = ? AND ended_at IS NULL AND id IS NOT ?').bind(now, id, p.keep_session_id ?? null),
    )
  try {
    const [r] = await auditedBatch(db, stmts, audit, { ifChanged: 0 })
    if (r.meta.changes === 0) return null
  } catch (e) {
    if (/UNIQUE constraint failed/i.test(String((e as Error).message))) return 'conflict'
    throw e
  }
  return getUser(db, id)
}

export async function deleteUser(db: D1Database, id: string, audit: AuditWrite): Promise<boolean> {
  const [r] = await auditedBatch(db, [db.prepare('DELETE FROM users WHERE id = ?').bind(id)], audit, { ifChanged: 0 })
  // D1 counts rows removed by ON DELETE CASCADE in `changes` too.
  return r.meta.changes > 0
}
