import { auditedBatch } from '../audit/audit.store'
import type { AuditWrite } from '../audit/audit'
import { CLIENT_ROLE, type EnvironmentAccess } from '../auth/permissions'
import { inScope, scopeParam } from './access'

/**
 * SQL for collector clients (migrations/0040_collector_clients.sql). Every read and write an administrator's
 * request makes takes the caller's environment access (`scope`): a client outside it is neither read nor
 * written, as if it did not exist (src/clients/access.ts).
 */

export const CLIENT_TYPES = ['sharphound', 'azurehound', 'openhound'] as const
export type ClientType = (typeof CLIENT_TYPES)[number]

export interface ClientRecord {
  id: string
  user_id: string
  name: string
  type: ClientType
  domain_controller: string | null
  environment_id: string
  token_id: string | null
  ip_address: string | null
  hostname: string | null
  version: string | null
  last_checkin: string | null
  created_at: string
  updated_at: string
}

const CLIENT_COLUMNS = 'id, user_id, name, type, domain_controller, environment_id, token_id, ip_address, hostname, version, last_checkin, created_at, updated_at'

/** The client's service user's principal name (what the audit log names as actor). */
export const clientPrincipalName = (id: string) => `client:${id}`

export interface NewClient {
  id: string
  userId: string
  name: string
  type: ClientType
  domainController: string | null
  environmentId: string
  tokenId: string
  keySealed: string
  now: string
}

function serviceUser(db: D1Database, userId: string, clientId: string, environmentId: string, now: string): D1PreparedStatement {
  return db
    .prepare(
      `INSERT INTO users (id, principal_name, email, password_hash, roles, is_disabled, all_environments, environment_ids, created_at, updated_at)
       VALUES (?1, ?2, NULL, NULL, ?3, 0, 0, ?4, ?5, ?5)`,
    )
    .bind(userId, clientPrincipalName(clientId), JSON.stringify([CLIENT_ROLE]), JSON.stringify([environmentId]), now)
}

/** The token INSERT; with `ofClient`, only when that client's current token is this one (set earlier in the batch). */
function tokenInsert(db: D1Database, tokenId: string, userId: string, name: string, keySealed: string, now: string, ofClient?: string): D1PreparedStatement {
  return db
    .prepare(
      `INSERT INTO api_tokens (id, user_id, name, key_sealed, hmac_method, created_at, updated_at, last_access)
       SELECT ?1, ?2, ?3, ?4, 'hmac-sha2-256', ?5, ?5, NULL
       WHERE ?6 IS NULL OR EXISTS (SELECT 1 FROM clients WHERE id = ?6 AND token_id = ?1)`,
    )
    .bind(tokenId, userId, name, keySealed, now, ofClient ?? null)
}

/**
 * The client, its service user and its token, with the audit success row: one batch. False when the name is
 * taken (nothing written).
 */
export async function insertClient(db: D1Database, c: NewClient, audit: AuditWrite): Promise<boolean> {
  try {
    await auditedBatch(db, [
      serviceUser(db, c.userId, c.id, c.environmentId, c.now),
      db
        .prepare(
          `INSERT INTO clients (id, user_id, name, type, domain_controller, environment_id, token_id, created_at, updated_at)
           VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?8)`,
        )
        .bind(c.id, c.userId, c.name, c.type, c.domainController, c.environmentId, c.tokenId, c.now),
      tokenInsert(db, c.tokenId, c.userId, `client ${c.name}`, c.keySealed, c.now),
    ], audit)
    return true
  } catch (e) {
    if (/UNIQUE constraint failed: clients\.name|UNIQUE constraint failed/i.test(String((e as Error).message))) return false
    throw e
  }
}

/** The client, when within `scope`. */
export async function getClient(db: D1Database, id: string, scope: EnvironmentAccess): Promise<ClientRecord | null> {
  return db.prepare(`SELECT ${CLIENT_COLUMNS} FROM clients WHERE id = ?1 AND ${inScope('environment_id', '?2')}`).bind(id, scopeParam(scope)).first<ClientRecord>()
}

export async function getClientOfUser(db: D1Database, userId: string): Promise<ClientRecord | null> {
  return db.prepare(`SELECT ${CLIENT_COLUMNS} FROM clients WHERE user_id = ?`).bind(userId).first<ClientRecord>()
}

/** The clients within `scope`, by name. */
export async function listClients(db: D1Database, scope: EnvironmentAccess): Promise<ClientRecord[]> {
  return (
    await db
      .prepare(`SELECT ${CLIENT_COLUMNS} FROM clients WHERE ${inScope('environment_id', '?1')} ORDER BY name COLLATE NOCASE, id`)
      .bind(scopeParam(scope))
      .all<ClientRecord>()
  ).results
}

export interface ClientPatch {
  name?: string
  domain_controller?: string | null
  environment_id?: string
}

/**
 * Applies a change (the service user's environment access follows environment_id); null: no such client within
 * `scope`; 'conflict': name taken. The new environment_id is the route's to check (requireClientEnvironment).
 */
export async function updateClient(db: D1Database, id: string, p: ClientPatch, now: string, audit: AuditWrite, scope: EnvironmentAccess): Promise<ClientRecord | null | 'conflict'> {
  try {
    const [r] = await auditedBatch(
      db,
      [
        db
          .prepare(
            `UPDATE clients SET name = coalesce(?2, name),
               domain_controller = CASE WHEN ?3 = 1 THEN ?4 ELSE domain_controller END,
               environment_id = coalesce(?5, environment_id), updated_at = ?6
             WHERE id = ?1 AND ${inScope('environment_id', '?7')} RETURNING ${CLIENT_COLUMNS}`,
          )
          .bind(id, p.name ?? null, p.domain_controller !== undefined ? 1 : 0, p.domain_controller ?? null, p.environment_id ?? null, now, scopeParam(scope)),
        // only when the change above was written: the client's environment is then the new one (?2)
        db
          .prepare(`UPDATE users SET environment_ids = json_array(?2), updated_at = ?3 WHERE id = (SELECT user_id FROM clients WHERE id = ?1 AND environment_id = ?2 AND updated_at = ?3) AND ?2 IS NOT NULL`)
          .bind(id, p.environment_id ?? null, now),
      ],
      audit,
      { ifChanged: 0 },
    )
    return (r.results[0] as ClientRecord | undefined) ?? null
  } catch (e) {
    if (/UNIQUE constraint failed/i.test(String((e as Error).message))) return 'conflict'
    throw e
  }
}

/** Statements that drop what a client's unfinished jobs staged and fail them (deleting the client, cancelling). */
export function discardJobStatements(db: D1Database, jobFilter: string, binds: unknown[], now: string, message: string, status: number): D1PreparedStatement[] {
  return [
    db
      .prepare(`DELETE FROM ingest_staging WHERE upload_id IN (SELECT upload_id FROM client_job_posts WHERE job_id IN (SELECT id FROM client_jobs WHERE ${jobFilter}))`)
      .bind(...binds),
    db.prepare(`DELETE FROM client_job_posts WHERE job_id IN (SELECT id FROM client_jobs WHERE ${jobFilter})`).bind(...binds),
    db
      .prepare(
        `UPDATE ingest_jobs SET status = 5, status_message = ?${binds.length + 1}, end_time = ?${binds.length + 2}, updated_at = ?${binds.length + 2}
         WHERE status = 1 AND id IN (SELECT ingest_job_id FROM client_jobs WHERE ${jobFilter} AND ingest_job_id IS NOT NULL)`,
      )
      .bind(...binds, message, now),
    db
      .prepare(
        `UPDATE client_jobs SET status = ?${binds.length + 3}, status_message = ?${binds.length + 1}, end_time = ?${binds.length + 2}, updated_at = ?${binds.length + 2},
           log = json_insert(log, '$[#]', json_object('time', ?${binds.length + 2}, 'message', ?${binds.length + 1}))
         WHERE ${jobFilter}`,
      )
      .bind(...binds, message, now, status),
  ]
}

/**
 * Deletes the client: what its running job staged, the client (its jobs and schedules cascade), its service
 * user and so its token (cascade). Returns the token ids that were revoked, or null when there was no such client
 * within `scope`. Every statement is guarded by the scope, so a client moved out of it meanwhile keeps everything.
 */
export async function deleteClient(db: D1Database, id: string, now: string, audit: AuditWrite, scope: EnvironmentAccess): Promise<{ tokenIds: string[] } | null> {
  const client = await getClient(db, id, scope)
  if (!client) return null
  const tokens = (await db.prepare('SELECT id FROM api_tokens WHERE user_id = ?').bind(client.user_id).all<{ id: string }>()).results.map((t) => t.id)
  const ours = `EXISTS (SELECT 1 FROM clients WHERE id = ?1 AND ${inScope('environment_id', '?2')})`
  const results = await auditedBatch(
    db,
    [
      ...discardJobStatements(db, `client_id = ?1 AND status IN (0, 1, 6) AND ${ours}`, [id, scopeParam(scope)], now, 'canceled: the client was deleted', 3),
      db.prepare(`DELETE FROM clients WHERE id = ?1 AND ${inScope('environment_id', '?2')}`).bind(id, scopeParam(scope)),
      // only when the client was deleted just above (the audit row between them is written exactly then)
      db.prepare('DELETE FROM users WHERE id = ?1 AND NOT EXISTS (SELECT 1 FROM clients WHERE id = ?2)').bind(client.user_id, id),
    ],
    audit,
    { ifChanged: 4 },
  )
  // `> 0`, not `=== 1`: D1 counts the rows the DELETE removed through ON DELETE CASCADE (the client's jobs and
  // schedules) in its `changes`, so a client with a job history reported more than 1 and was answered 404
  // although it was deleted (and its token's cached keys were not dropped).
  return results[4].meta.changes > 0 ? { tokenIds: tokens } : null
}

/**
 * Replaces the client's token(s) with a new one, with the audit row. Returns the old token ids, or null (no such
 * client within `scope`). The old tokens are deleted and the new one inserted only when the first statement set
 * it as the client's token, i.e. when the client was within `scope` at the write.
 */
export async function replaceClientToken(
  db: D1Database,
  clientId: string,
  t: { id: string; keySealed: string; now: string },
  audit: AuditWrite,
  scope: EnvironmentAccess,
): Promise<{ oldTokenIds: string[] } | null> {
  const client = await getClient(db, clientId, scope)
  if (!client) return null
  const old = (await db.prepare('SELECT id FROM api_tokens WHERE user_id = ?').bind(client.user_id).all<{ id: string }>()).results.map((r) => r.id)
  const [updated] = await auditedBatch(
    db,
    [
      db.prepare(`UPDATE clients SET token_id = ?2, updated_at = ?3 WHERE id = ?1 AND ${inScope('environment_id', '?4')}`).bind(clientId, t.id, t.now, scopeParam(scope)),
      db.prepare('DELETE FROM api_tokens WHERE user_id = ?1 AND EXISTS (SELECT 1 FROM clients WHERE id = ?2 AND token_id = ?3)').bind(client.user_id, clientId, t.id),
      tokenInsert(db, t.id, client.user_id, `client ${client.name}`, t.keySealed, t.now, clientId),
    ],
    audit,
    { ifChanged: 0 },
  )
  if (updated.meta.changes !== 1) return null
  return { oldTokenIds: old }
}

/** Check-in metadata from the client itself (PUT /api/v2/clients/update), with the audit row. */
export async function recordCheckin(
  db: D1Database,
  clientId: string,
  m: { address: string | null; hostname: string | null; version: string | null },
  now: string,
  audit: AuditWrite,
): Promise<ClientRecord | null> {
  const [r] = await auditedBatch(
    db,
    [
      db
        .prepare(
          `UPDATE clients SET ip_address = ?2, hostname = ?3, version = ?4, last_checkin = ?5, updated_at = ?5 WHERE id = ?1 RETURNING ${CLIENT_COLUMNS}`,
        )
        .bind(clientId, m.address, m.hostname, m.version, now),
    ],
    audit,
    { ifChanged: 0 },
  )
  return (r.results[0] as ClientRecord | undefined) ?? null
}

/**
 * Notes a sign of life of the client (a poll, a check-in, a post): last_checkin. Written at most once per
 * CHECKIN_WRITE_MS per client and isolate, so an idle client polling every 5 s costs a write a minute, not
 * one per poll; the job check-in timeout (minutes) is far coarser than that.
 */
export const CHECKIN_WRITE_MS = 60_000
const lastWritten = new Map<string, number>()

export async function touchCheckin(db: D1Database, clientId: string, nowMs: number): Promise<void> {
  const last = lastWritten.get(clientId)
  if (last !== undefined && nowMs - last < CHECKIN_WRITE_MS) return
  if (lastWritten.size > 10_000) lastWritten.clear()
  lastWritten.set(clientId, nowMs)
  const now = new Date(nowMs).toISOString()
  await db.prepare('UPDATE clients SET last_checkin = ?2 WHERE id = ?1 AND (last_checkin IS NULL OR last_checkin < ?2)').bind(clientId, now).run()
}
