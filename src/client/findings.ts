import type { RunRecord } from '../findings/analysis.store'
/**
 * Typed wrappers for the findings and analysis endpoints (issue 6), as functions taking an EdgeHoundClient.
 * Shapes follow clients.md §9 (what the Google SecOps, Sentinel and Splunk connectors parse).
 */
import type { EdgeHoundClient } from './index'

export interface NullTime {
  time: string
  valid: boolean
}

interface FindingItemBase {
  id: number
  Finding: string
  DomainSID: string
  Environment: string
  created_at: string
  updated_at: string
  deleted_at: NullTime
  Accepted: boolean
  AcceptedUntil: string
  Severity: 'critical' | 'high' | 'moderate' | 'low'
  ImpactPercentage: number
  ImpactCount: number
  ExposurePercentage: number
  ExposureCount: number
  RelProps: Record<string, unknown>
  PrincipalHash: string
  IsInherited: boolean
  ComboGraphRelationID: { int64: number; valid: boolean }
}

export interface RelationshipFindingJson extends FindingItemBase {
  FromPrincipal: string
  FromPrincipalKind: string
  FromPrincipalName: string
  FromPrincipalProps: Record<string, unknown> & { objectid: string; name: string }
  FromEnvironment: string
  FromEnvironmentID: string
  ToPrincipal: string
  ToPrincipalKind: string
  ToPrincipalName: string
  ToPrincipalProps: Record<string, unknown> & { objectid: string; name: string }
  ToEnvironment: string
  ToEnvironmentID: string
}

export interface ListFindingJson extends FindingItemBase {
  accepted_until: string
  Principal: string
  PrincipalKind: string
  PrincipalName: string
  Props: Record<string, unknown> & { objectid: string; name: string }
}

export type FindingJson = RelationshipFindingJson | ListFindingJson

export function isListFinding(f: FindingJson): f is ListFindingJson {
  return 'Principal' in f
}

export interface DetailsPage {
  count: number
  skip: number
  limit: number
  data: FindingJson[]
}

export interface SparklineJson {
  id: number
  created_at: string
  updated_at: string
  deleted_at: NullTime
  CompositeRisk: number
  FindingCount: number
  ImpactedAssetCount: number
  ImpactCount: number
  ExposureCount: number
  DomainSID: string
  Finding: string
}

/** An analysis run as the API returns it (the server's own record type). */
export type AnalysisRunJson = RunRecord

export type FindingAsset = 'title' | 'short_description' | 'short_remediation' | 'long_remediation'

export interface DetailsQuery {
  finding: string
  skip?: number
  limit?: number
  sort_by?: string
  /** e.g. `eq:False` */
  Accepted?: string
  /** e.g. `gt:2026-11-25T10:00:00.000Z` */
  created_at?: string
  updated_at?: string
  FromPrincipal?: string
  ToPrincipal?: string
  Principal?: string
}

const enc = encodeURIComponent

function qs(params: Record<string, string | number | undefined>): string {
  const parts: string[] = []
  for (const [k, v] of Object.entries(params)) if (v !== undefined) parts.push(`${enc(k)}=${enc(String(v))}`)
  return parts.length ? `?${parts.join('&')}` : ''
}

export function availableFindingTypes(c: EdgeHoundClient, environmentId: string) {
  return c.call<{ data: string[] }>('GET', `/api/v2/domains/${enc(environmentId)}/available-types`)
}

/** One page of `/details`. Keys are sent in the order given, exactly like the connectors sign them. */
export function findingDetails(c: EdgeHoundClient, environmentId: string, q: DetailsQuery) {
  const { finding, ...rest } = q
  return c.call<DetailsPage>('GET', `/api/v2/domains/${enc(environmentId)}/details${qs({ finding, ...rest })}`)
}

export function findingSparkline(c: EdgeHoundClient, environmentId: string, q: { finding: string; from?: string; to?: string }) {
  return c.call<{ start: string; end: string; data: SparklineJson[] }>('GET', `/api/v2/domains/${enc(environmentId)}/sparkline${qs(q)}`)
}

/** A finding type's Markdown text; `md` chooses the `.md` suffix the Google SecOps connector uses. */
export function findingAsset(c: EdgeHoundClient, findingType: string, asset: FindingAsset, opts: { md?: boolean } = {}) {
  return c.call<string>('GET', `/api/v2/assets/findings/${enc(findingType)}/${asset}${opts.md ? '.md' : ''}`)
}

export function setFindingAcceptance(c: EdgeHoundClient, id: number, body: { accepted: boolean; accepted_until?: string | null }) {
  return c.call<{ data: FindingJson }>('PUT', `/api/v2/attack-paths/${id}/acceptance`, body)
}

export function requestAnalysis(c: EdgeHoundClient) {
  return c.call<{ data: AnalysisRunJson }>('POST', '/api/v2/analysis')
}

export function listAnalysisRuns(c: EdgeHoundClient, q: { skip?: number; limit?: number } = {}) {
  return c.call<{ count: number; skip: number; limit: number; data: AnalysisRunJson[] }>('GET', `/api/v2/analysis${qs(q)}`)
}

export function getAnalysisRun(c: EdgeHoundClient, id: number) {
  return c.call<{ data: AnalysisRunJson }>('GET', `/api/v2/analysis/${id}`)
}

/**
 * The Google SecOps connector's paging: `skip` only (no `limit`), `skip += page length`, stop only on an
 * empty page. Returns every item and the number of requests made (the last one returned `[]`).
 */
export async function pageAllDetails(c: EdgeHoundClient, environmentId: string, finding: string, maxRequests = 10_000) {
  const items: FindingJson[] = []
  let requests = 0
  for (let skip = 0; requests < maxRequests; ) {
    const page = await c.call<DetailsPage>('GET', `/api/v2/domains/${enc(environmentId)}/details?finding=${enc(finding)}&skip=${skip}`)
    requests++
    if (!page.data || page.data.length === 0) break
    items.push(...page.data)
    skip += page.data.length
  }
  return { items, requests }
}
