import { rfc3339 } from '../http/errors'
import { pruneAuditLogs } from './audit.store'

/**
 * Audit retention, off the request path (cron trigger in src/index.ts): rows older than
 * AUDIT_RETENTION_DAYS (default 365) are deleted in bounded chunks. A bad setting falls back to the default
 * rather than deleting more than intended.
 */
export async function pruneAudit(env: Env, scheduledTime: number): Promise<number> {
  const raw = (env as unknown as { AUDIT_RETENTION_DAYS?: string | number }).AUDIT_RETENTION_DAYS
  const n = Number(raw)
  const days = raw !== undefined && raw !== '' && Number.isInteger(n) && n >= 1 ? n : 365
  try {
    return await pruneAuditLogs(env.DB, rfc3339(scheduledTime - days * 86400_000))
  } catch (e) {
    console.error(JSON.stringify({ level: 'error', job: 'audit-retention', error: String((e as Error)?.message ?? e) }))
    return 0
  }
}
