/**
 * Typed wrapper for the audit log (BloodHound's GET /api/v2/audit; docs/audit.md).
 */
import type { EdgeHoundClient } from './index'
import type { AuditLogRow } from '../audit/audit.store'

/** One entry as the API answers it: the store's row (src/audit/audit.store.ts). */
export type AuditLogJson = Omit<AuditLogRow, 'environments'>

export interface AuditQuery {
  skip?: number
  limit?: number
  /** e.g. `created_at` or `-id` */
  sort_by?: string
  before?: string | Date
  after?: string | Date
  /** BloodHound filters, e.g. `{ action: 'eq:CreateAuthToken', status: 'eq:success' }` */
  filters?: Partial<Record<'id' | 'actor_id' | 'actor_name' | 'actor_email' | 'action' | 'request_id' | 'source_ip_address' | 'status', string>>
}

export function auditQueryString(q: AuditQuery = {}): string {
  const p = new URLSearchParams()
  if (q.skip !== undefined) p.set('skip', String(q.skip))
  if (q.limit !== undefined) p.set('limit', String(q.limit))
  if (q.sort_by) p.set('sort_by', q.sort_by)
  const d = (v: string | Date) => (v instanceof Date ? v.toISOString() : v)
  if (q.before !== undefined) p.set('before', d(q.before))
  if (q.after !== undefined) p.set('after', d(q.after))
  for (const [k, v] of Object.entries(q.filters ?? {})) if (v !== undefined) p.set(k, v)
  const s = p.toString()
  return s ? `?${s}` : ''
}

/** One page of the audit log; past the end `data.logs` is `[]`. */
export function listAuditLogs(c: EdgeHoundClient, q: AuditQuery = {}) {
  return c.call<{ count: number; skip: number; limit: number; data: { logs: AuditLogJson[] } }>('GET', `/api/v2/audit${auditQueryString(q)}`)
}
