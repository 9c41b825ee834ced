/**
 * Typed wrappers for the data-quality routes (src/findings/dataquality.routes.ts; docs/findings.md "Data quality"):
 * the per-environment and per-platform history pages and the database completeness.
 */
import type { EdgeHoundClient } from './index'

/** One row of a history page: counts by kind (field names as BloodHound's), the run and its time. */
export type DataQualityRowJson = Record<string, number | string | unknown> & { id: number; run_id: string; created_at: string }

export interface DataQualityPage {
  count: number
  skip: number
  limit: number
  start: string
  end: string
  data: DataQualityRowJson[]
}

export interface DataQualityQuery {
  start?: Date | string
  end?: Date | string
  /** e.g. `-created_at` (newest first, the default) */
  sort_by?: string
  skip?: number
  limit?: number
}

function qs(q: DataQualityQuery): string {
  const p = new URLSearchParams()
  const d = (v: string | Date) => (v instanceof Date ? v.toISOString() : v)
  if (q.start !== undefined) p.set('start', d(q.start))
  if (q.end !== undefined) p.set('end', d(q.end))
  if (q.sort_by) p.set('sort_by', q.sort_by)
  if (q.skip !== undefined) p.set('skip', String(q.skip))
  if (q.limit !== undefined) p.set('limit', String(q.limit))
  const s = p.toString()
  return s ? `?${s}` : ''
}

/** GET /api/v2/ad-domains/{domain_id}/data-quality-stats */
export function adDataQuality(c: EdgeHoundClient, domainId: string, q: DataQualityQuery = {}) {
  return c.call<DataQualityPage>('GET', `/api/v2/ad-domains/${encodeURIComponent(domainId)}/data-quality-stats${qs(q)}`)
}

/** GET /api/v2/azure-tenants/{tenant_id}/data-quality-stats */
export function azureDataQuality(c: EdgeHoundClient, tenantId: string, q: DataQualityQuery = {}) {
  return c.call<DataQualityPage>('GET', `/api/v2/azure-tenants/${encodeURIComponent(tenantId)}/data-quality-stats${qs(q)}`)
}

/** GET /api/v2/platform/{ad|azure}/data-quality-stats: per-run aggregates over the environments the caller may see. */
export function platformDataQuality(c: EdgeHoundClient, platform: 'ad' | 'azure', q: DataQualityQuery = {}) {
  return c.call<DataQualityPage>('GET', `/api/v2/platform/${platform}/data-quality-stats${qs(q)}`)
}

/** GET /api/v2/completeness: session and local-group completeness (0..1) as of the newest analysis run. */
export function databaseCompleteness(c: EdgeHoundClient) {
  return c.call<{ data: { LocalGroupCompleteness: number; SessionCompleteness: number } }>('GET', '/api/v2/completeness')
}
