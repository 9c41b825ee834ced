/**
 * The JSON shapes the connectors parse (clients.md §9.4 and issue 6), built from store rows. Pure.
 *
 * Rules that keep real clients from crashing:
 *  - `*Props` and `RelProps` are always objects, with at least `objectid` and `name` for node props;
 *  - percentages are always numbers, `Severity` always a string;
 *  - `deleted_at` is the spec's null.time `{time, valid}` (valid only for a finding closed since the first page
 *    of the caller's poll, served in its place: docs/findings.md), `ComboGraphRelationID` a null.int64
 *    `{int64, valid}`, and `AcceptedUntil` the zero time when the finding is not accepted (or is accepted
 *    without an end);
 *  - relationship items carry the From… and To… fields, list items the Principal… fields instead (clients branch on
 *    the presence of `FromPrincipalKind` / `PrincipalKind`).
 */
import type { EnvironmentAccess } from '../auth/permissions'
import type { DetailRow, SparklineRow } from './findings.store'
import { endVisible, HIDDEN_END } from './visibility'

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

/** Everything of one end of a finding that is served: its object id, kind, name, properties and environment. */
interface End {
  id: string
  kind: string
  name: string
  props: Record<string, unknown>
  envId: string
  envName: string
}

const OPAQUE: End = { id: HIDDEN_END, kind: HIDDEN_END, name: HIDDEN_END, props: { objectid: HIDDEN_END, name: HIDDEN_END }, envId: HIDDEN_END, envName: HIDDEN_END }

function end(visible: boolean, objectid: string, kind: string | null, snapshotKind: string | null, name: string | null, snapshotName: string | null, props: string | null, envId: string | null, envName: string | null): End {
  if (!visible) return { ...OPAQUE, props: { ...OPAQUE.props } }
  const n = name ?? snapshotName ?? objectid
  return { id: objectid, kind: kind ?? snapshotKind ?? '', name: n, props: nodeProps(props, objectid, n), envId: envId ?? '', envName: envName ?? envId ?? '' }
}

/**
 * One details item as `access` may see it (src/findings/visibility.ts: a hidden end is opaque). Callers with
 * access to every environment get every field.
 */
export function detailItem(r: DetailRow, access: EnvironmentAccess): Record<string, unknown> {
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
  const list = r.shape === 'list'
  // A list finding's principal is its anchor; a relationship finding's source is not (visibility.ts).
  const fromVisible = endVisible(access, { exists: r.fn_kind !== null, environmentId: r.fn_env }, list)
  const from = end(fromVisible, r.from_objectid, r.fn_kind, r.from_kind, r.fn_name, r.from_name, r.fn_props, r.fn_env, r.fn_env_name)
  if (list) {
    return {
      ...common,
      accepted_until: common.AcceptedUntil,
      Principal: from.id,
      PrincipalKind: from.kind,
      PrincipalName: from.name,
      Props: from.props,
      RelProps: {},
      PrincipalHash: fromVisible ? principalHash(r.from_objectid) : hiddenHash(r),
      IsInherited: false,
      ComboGraphRelationID: { int64: 0, valid: false },
    }
  }
  const toVisible = endVisible(access, { exists: r.tn_kind !== null, environmentId: r.tn_env }, true)
  const to = end(toVisible, r.to_objectid, r.tn_kind, r.to_kind, r.tn_name, r.to_name, r.tn_props, r.tn_env, r.tn_env_name)
  // The edge belongs to both ends; when one is hidden, nothing of it is shown (its properties may come from
  // the hidden environment's own collection).
  const edgeShown = fromVisible && toVisible
  const relProps = edgeShown ? parseObject(r.edge_props) : {}
  return {
    ...common,
    FromPrincipal: from.id,
    FromPrincipalKind: from.kind,
    FromPrincipalName: from.name,
    FromPrincipalProps: from.props,
    FromEnvironment: from.envName,
    FromEnvironmentID: from.envId,
    ToPrincipal: to.id,
    ToPrincipalKind: to.kind,
    ToPrincipalName: to.name,
    ToPrincipalProps: to.props,
    ToEnvironment: to.envName,
    ToEnvironmentID: to.envId,
    RelProps: relProps,
    PrincipalHash: edgeShown ? principalHash(r.from_objectid, r.to_objectid) : hiddenHash(r),
    IsInherited: relProps.isinherited === true || relProps.isInherited === true,
    ComboGraphRelationID: edgeShown && r.edge_id !== null ? { int64: r.edge_id, valid: true } : { int64: 0, valid: false },
  }
}

/**
 * PrincipalHash of a finding with a hidden end: derived from the finding's id, never from the hidden object id
 * (the hash is unkeyed, so a hash of a guessable id could be recomputed and compared: an existence oracle).
 * Stable for the finding's life, distinct between findings.
 */
function hiddenHash(r: DetailRow): string {
  return principalHash('\u0001hidden finding', String(r.id))
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
