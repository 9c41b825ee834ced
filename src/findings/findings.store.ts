/**
 * SQL of the findings read endpoints and of acceptance. Every query reads committed data only (open rows of
 * `findings`, rows of `finding_sparklines`), never the staging tables, so readers always see the last
 * completed run.
 *
 * Filters and sort orders arrive as typed values (src/findings/query.ts) and are turned into SQL from fixed
 * fragments; values are always bound parameters.
 */
import { CATALOG_VERSION_SQL } from '../extensions/catalog'
import type { DetailsFilters, FilterOp, SortColumn, SortKey } from './query'

export interface DetailRow {
  id: number
  finding: string
  shape: 'relationship' | 'list'
  environment_id: string
  from_objectid: string
  to_objectid: string
  rel_kind: string | null
  from_kind: string | null
  from_name: string | null
  to_kind: string | null
  to_name: string | null
  impact_count: number
  exposure_count: number
  principal_count: number
  impact_percentage: number
  exposure_percentage: number
  severity: string
  accepted: number
  accepted_until: string | null
  created_at: string
  updated_at: string
  deleted_at: string | null
  /** acceptance in force at the query's `now` (0/1) */
  accepted_now: number
  fn_kind: string | null
  fn_name: string | null
  fn_props: string | null
  fn_env: string | null
  fn_env_name: string | null
  tn_kind: string | null
  tn_name: string | null
  tn_props: string | null
  tn_env: string | null
  tn_env_name: string | null
  env_name: string | null
  edge_id: number | null
  edge_props: string | null
}

const OP_SQL: Record<FilterOp, string> = { eq: '=', neq: '<>', gt: '>', gte: '>=', lt: '<', lte: '<=' }

const SORT_SQL: Record<SortColumn, string> = {
  created_at: 'f.created_at',
  updated_at: 'f.updated_at',
  id: 'f.id',
  impact_percentage: 'f.impact_percentage',
  exposure_percentage: 'f.exposure_percentage',
  impact_count: 'f.impact_count',
  exposure_count: 'f.exposure_count',
  from_principal: 'f.from_objectid',
  to_principal: 'f.to_objectid',
  principal: 'f.from_objectid',
  accepted_until: 'f.accepted_until',
  domain_sid: 'f.environment_id',
  finding: 'f.finding',
}

/** Acceptance in force: accepted, and either without end or ending after `now`. `?N` = now. */
const acceptedExpr = (n: number) => `(f.accepted = 1 AND (f.accepted_until IS NULL OR f.accepted_until > ?${n}))`

interface Where {
  sql: string
  binds: unknown[]
}

function whereClause(environmentId: string, finding: string, filters: DetailsFilters, now: string): Where {
  // ?1 env, ?2 finding, ?3 now; filters follow.
  const binds: unknown[] = [environmentId, finding, now]
  // `?3 IS NOT NULL` keeps ?3 referenced when no filter uses it: D1 wants exactly as many bindings as the
  // highest parameter number.
  const parts = ['f.environment_id = ?1', 'f.finding = ?2', 'f.deleted_at IS NULL', '?3 IS NOT NULL']
  const add = (column: string, op: FilterOp, value: unknown) => {
    binds.push(value)
    parts.push(`${column} ${OP_SQL[op]} ?${binds.length}`)
  }
  if (filters.accepted) {
    const wantTrue = filters.accepted.op === 'eq' ? filters.accepted.value : !filters.accepted.value
    parts.push(wantTrue ? acceptedExpr(3) : `NOT ${acceptedExpr(3)}`)
  }
  if (filters.created_at) add('f.created_at', filters.created_at.op, filters.created_at.value)
  if (filters.updated_at) add('f.updated_at', filters.updated_at.op, filters.updated_at.value)
  if (filters.id) add('f.id', filters.id.op, filters.id.value)
  if (filters.from_principal) add('f.from_objectid', filters.from_principal.op, filters.from_principal.value)
  if (filters.principal) add('f.from_objectid', filters.principal.op, filters.principal.value)
  if (filters.to_principal) add('f.to_objectid', filters.to_principal.op, filters.to_principal.value)
  return { sql: parts.join(' AND '), binds }
}

const DETAIL_COLUMNS = `
  SELECT f.*, ${acceptedExpr(3)} AS accepted_now,
    fn.kind AS fn_kind, fn.name AS fn_name, fn.properties AS fn_props, fn.environment_id AS fn_env, fe.name AS fn_env_name,
    tn.kind AS tn_kind, tn.name AS tn_name, tn.properties AS tn_props, tn.environment_id AS tn_env, te.name AS tn_env_name,
    en.name AS env_name, e.id AS edge_id, e.properties AS edge_props`

/** The nodes and the edge a finding names; `f` is the finding row. */
const DETAIL_JOINS = `
  LEFT JOIN nodes fn ON fn.objectid = f.from_objectid
  LEFT JOIN nodes tn ON f.to_objectid <> '' AND tn.objectid = f.to_objectid
  LEFT JOIN nodes fe ON fe.objectid = fn.environment_id
  LEFT JOIN nodes te ON te.objectid = tn.environment_id
  LEFT JOIN nodes en ON en.objectid = f.environment_id
  LEFT JOIN edges e ON f.rel_kind IS NOT NULL AND e.start_id = fn.id AND e.kind = f.rel_kind AND e.end_id = tn.id`

const DETAIL_SELECT = `${DETAIL_COLUMNS} FROM findings f ${DETAIL_JOINS}`

/**
 * Whether an environment exists: the graph has nodes in it (its own node included: an environment node's
 * environment_id is its own object id), or analysis ever recorded anything for it. `p` is its parameter.
 */
const environmentKnownSql = (p: string) => `(EXISTS (SELECT 1 FROM nodes WHERE environment_id = ${p})
  OR EXISTS (SELECT 1 FROM findings WHERE environment_id = ${p})
  OR EXISTS (SELECT 1 FROM finding_sparklines WHERE environment_id = ${p}))`

/** Whether a finding row (open or closed) of type `t` ever existed in environment `e` (index findings_pairs). */
const findingTypeSeenSql = (e: string, t: string) => `EXISTS (SELECT 1 FROM findings WHERE environment_id = ${e} AND finding = ${t})`

function orderBy(sort: SortKey[]): string {
  const parts = sort.map((s) => `${SORT_SQL[s.column]} ${s.desc ? 'DESC' : 'ASC'}`)
  if (!sort.some((s) => s.column === 'id')) parts.push('f.id ASC')
  return parts.join(', ')
}

export interface DetailsPage {
  /** the environment exists (see environmentKnownSql); when false, count is 0 and rows are empty */
  environmentKnown: boolean
  /** a finding of this type, open or closed, ever existed in the environment */
  findingTypeSeen: boolean
  /** the kind catalogue version read in the same transaction (for kindCatalogAt) */
  catalogVersion: string
  count: number
  rows: DetailRow[]
}

/**
 * A page of details with everything the route checks, in one batch of two statements: (1) whether the
 * environment exists, whether the finding type was ever seen there, the catalogue version and the count;
 * (2) the page. The page is chosen on the finding rows alone (for the default order a walk of the index
 * findings_open_env, so that a deep OFFSET skips index entries, not joined rows), and only its rows are
 * joined to their nodes and edge, then put back in the same order (the order always ends with id: total).
 */
export async function listDetails(
  db: D1Database,
  q: { environmentId: string; finding: string; filters: DetailsFilters; sort: SortKey[]; skip: number; limit: number; now: string },
): Promise<DetailsPage> {
  const w = whereClause(q.environmentId, q.finding, q.filters, q.now)
  const n = w.binds.length
  const order = orderBy(q.sort)
  const [meta, rows] = await db.batch([
    db
      .prepare(
        `SELECT ${environmentKnownSql('?1')} AS env_known, ${findingTypeSeenSql('?1', '?2')} AS type_seen,
                ${CATALOG_VERSION_SQL} AS catalog_version, (SELECT COUNT(*) FROM findings f WHERE ${w.sql}) AS n`,
      )
      .bind(...w.binds),
    db
      .prepare(
        `${DETAIL_COLUMNS}
         FROM (SELECT f.id FROM findings f WHERE ${w.sql} ORDER BY ${order} LIMIT ?${n + 1} OFFSET ?${n + 2}) page
         JOIN findings f ON f.id = page.id ${DETAIL_JOINS}
         ORDER BY ${order}`,
      )
      .bind(...w.binds, q.limit === 0 ? -1 : q.limit, q.skip),
  ])
  const m = meta.results[0] as { env_known: number; type_seen: number; catalog_version: string | null; n: number }
  if (m.catalog_version === null) throw new Error('extension_catalog_version has no row: is migration 0003 applied?')
  return {
    environmentKnown: m.env_known === 1,
    findingTypeSeen: m.type_seen === 1,
    catalogVersion: m.catalog_version,
    count: m.n,
    rows: rows.results as DetailRow[],
  }
}

/** One open finding with everything the detail item needs, or null. */
export async function getOpenFinding(db: D1Database, id: number, now: string): Promise<DetailRow | null> {
  return db
    .prepare(`${DETAIL_SELECT} WHERE f.id = ?1 AND f.deleted_at IS NULL`)
    .bind(id, null, now) // ?3 is `now` inside DETAIL_SELECT; ?2 is unused
    .first<DetailRow>()
}

/** Sets or clears the acceptance of an open finding. Does not touch updated_at (metrics did not change). */
export async function setAcceptance(db: D1Database, id: number, accepted: boolean, acceptedUntil: string | null): Promise<boolean> {
  const r = await db
    .prepare(`UPDATE findings SET accepted = ?2, accepted_until = ?3 WHERE id = ?1 AND deleted_at IS NULL`)
    .bind(id, accepted ? 1 : 0, accepted ? acceptedUntil : null)
    .run()
  return (r.meta.changes ?? 0) > 0
}

/** See environmentKnownSql. */
export async function environmentKnown(db: D1Database, environmentId: string): Promise<boolean> {
  const r = await db.prepare(`SELECT ${environmentKnownSql('?1')} AS ok`).bind(environmentId).first<{ ok: number }>()
  return r?.ok === 1
}

export async function availableTypes(db: D1Database, environmentId: string): Promise<string[]> {
  const { results } = await db
    .prepare(`SELECT DISTINCT finding FROM findings WHERE environment_id = ?1 AND deleted_at IS NULL ORDER BY finding`)
    .bind(environmentId)
    .all<{ finding: string }>()
  return results.map((r) => r.finding)
}

/** Whether a finding row (open or closed) of this type ever existed in the environment (index findings_pairs). */
export async function findingTypeSeen(db: D1Database, environmentId: string, finding: string): Promise<boolean> {
  const r = await db.prepare(`SELECT ${findingTypeSeenSql('?1', '?2')} AS ok`).bind(environmentId, finding).first<{ ok: number }>()
  return r?.ok === 1
}

export interface SparklineRow {
  id: number
  run_id: number
  environment_id: string
  finding: string
  finding_count: number
  impacted_asset_count: number
  impact_count: number
  exposure_count: number
  principal_count: number
  composite_risk: number
  created_at: string
  updated_at: string
}

/** Sparkline rows with `from` ≤ created_at < `to`, oldest first. */
export async function listSparklines(db: D1Database, environmentId: string, finding: string, from: string, to: string): Promise<SparklineRow[]> {
  const { results } = await db
    .prepare(
      `SELECT * FROM finding_sparklines
       WHERE environment_id = ?1 AND finding = ?2 AND created_at >= ?3 AND created_at < ?4
       ORDER BY created_at, id`,
    )
    .bind(environmentId, finding, from, to)
    .all<SparklineRow>()
  return results
}

/** Highest CompositeRisk per environment in the latest complete run, as a statement for the caller's batch. */
export function compositeRisksStatement(db: D1Database): D1PreparedStatement {
  return db.prepare(
    `SELECT environment_id, MAX(composite_risk) AS risk FROM finding_sparklines
     WHERE run_id = (SELECT id FROM analysis_runs WHERE status = 'complete' ORDER BY completed_at DESC, id DESC LIMIT 1)
     GROUP BY environment_id`,
  )
}

export function compositeRisksOf(result: D1Result): { environment_id: string; risk: number }[] {
  return result.results as { environment_id: string; risk: number }[]
}
