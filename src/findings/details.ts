/**
 * The JSON shapes the connectors parse (clients.md §9.4 and issue 6), built from store rows. Pure.
 *
 * Rules that keep real clients from crashing:
 *  - `*Props` and `RelProps` are always objects, with at least `objectid` and `name` for node props;
 *  - percentages are always numbers, `Severity` always a string;
 *  - `deleted_at` is the spec's null.time `{time, valid}`, `ComboGraphRelationID` a null.int64
 *    `{int64, valid}`, and `AcceptedUntil` the zero time when the finding is not accepted (or is accepted
 *    without an end);
 *  - relationship items carry the From… and To… fields, list items the Principal… fields instead (clients branch on
 *    the presence of `FromPrincipalKind` / `PrincipalKind`).
 */
import type { DetailRow, SparklineRow } from './findings.store'

export const ZERO_TIME = '0001-01-01T00:00:00.000Z'

export function nullTime(t: string | null) {
  return { time: t ?? ZERO_TIME, valid: t !== null }
}

function parseObject(json: string | null): Record<string, unknown> {
  if (!json) return {}
  try {
    const v = JSON.parse(json)
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {}
  } catch {
    return {}
  }
}

/** Node properties with `objectid` and `name` always present. */
export function nodeProps(json: string | null, objectid: string, name: string): Record<string, unknown> {
  const p = parseObject(json)
  p.objectid = objectid
  if (typeof p.name !== 'string' || p.name === '') p.name = name
  return p
}

/**
 * A stable opaque hash of a finding's principals (FNV-1a, two 32-bit lanes → 16 hex digits). Computed at
 * read time from the object ids, so it is the same for the same principals in every run.
 */
export function principalHash(...parts: string[]): string {
  let h1 = 0x811c9dc5
  let h2 = 0x01000193 ^ 0x5bd1e995
  const s = parts.join('\u0000')
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    h1 = Math.imul(h1 ^ c, 0x01000193)
    h2 = Math.imul(h2 ^ c, 0x5bd1e995) ^ (h2 >>> 15)
  }
  return (h1 >>> 0).toString(16).padStart(8, '0') + (h2 >>> 0).toString(16).padStart(8, '0')
}

export function detailItem(r: DetailRow): Record<string, unknown> {
  const accepted = r.accepted_now === 1
  const common = {
    id: r.id,
    Finding: r.finding,
    DomainSID: r.environment_id,
    Environment: r.env_name ?? r.environment_id,
    created_at: r.created_at,
    updated_at: r.updated_at,
    deleted_at: nullTime(r.deleted_at),
    Accepted: accepted,
    AcceptedUntil: accepted && r.accepted_until ? r.accepted_until : ZERO_TIME,
    Severity: r.severity,
    ImpactPercentage: r.impact_percentage,
    ImpactCount: r.impact_count,
    ExposurePercentage: r.exposure_percentage,
    ExposureCount: r.exposure_count,
  }
  const fromName = r.fn_name ?? r.from_name ?? r.from_objectid
  if (r.shape === 'list') {
    return {
      ...common,
      accepted_until: common.AcceptedUntil,
      Principal: r.from_objectid,
      PrincipalKind: r.fn_kind ?? r.from_kind ?? '',
      PrincipalName: fromName,
      Props: nodeProps(r.fn_props, r.from_objectid, fromName),
      RelProps: {},
      PrincipalHash: principalHash(r.from_objectid),
      IsInherited: false,
      ComboGraphRelationID: { int64: 0, valid: false },
    }
  }
  const toName = r.tn_name ?? r.to_name ?? r.to_objectid
  const relProps = parseObject(r.edge_props)
  return {
    ...common,
    FromPrincipal: r.from_objectid,
    FromPrincipalKind: r.fn_kind ?? r.from_kind ?? '',
    FromPrincipalName: fromName,
    FromPrincipalProps: nodeProps(r.fn_props, r.from_objectid, fromName),
    FromEnvironment: r.fn_env_name ?? r.fn_env ?? '',
    FromEnvironmentID: r.fn_env ?? '',
    ToPrincipal: r.to_objectid,
    ToPrincipalKind: r.tn_kind ?? r.to_kind ?? '',
    ToPrincipalName: toName,
    ToPrincipalProps: nodeProps(r.tn_props, r.to_objectid, toName),
    ToEnvironment: r.tn_env_name ?? r.tn_env ?? '',
    ToEnvironmentID: r.tn_env ?? '',
    RelProps: relProps,
    PrincipalHash: principalHash(r.from_objectid, r.to_objectid),
    IsInherited: relProps.isinherited === true || relProps.isInherited === true,
    ComboGraphRelationID: r.edge_id !== null ? { int64: r.edge_id, valid: true } : { int64: 0, valid: false },
  }
}

export function sparklineItem(r: SparklineRow) {
  return {
    id: r.id,
    created_at: r.created_at,
    updated_at: r.updated_at,
    deleted_at: nullTime(null),
    CompositeRisk: r.composite_risk,
    FindingCount: r.finding_count,
    ImpactedAssetCount: r.impacted_asset_count,
    ImpactCount: r.impact_count,
    ExposureCount: r.exposure_count,
    DomainSID: r.environment_id,
    Finding: r.finding,
  }
}
