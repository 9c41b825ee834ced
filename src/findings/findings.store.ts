import { auditedBatch } from '../audit/audit.store'
import type { AuditWrite } from '../audit/audit'
/**
 * SQL of the findings read endpoints and of acceptance. Every query reads committed data only (open rows of
 * `findings`, rows of `finding_sparklines`), never the staging tables, so readers always see the last
 * completed run.
 *
 * Filters and sort orders arrive as typed values (src/findings/query.ts) and are turned into SQL from fixed
 * fragments; values are always bound parameters.
 */
import { CATALOG_VERSION_SQL } from '../extensions/catalog'
import type { EnvironmentAccess } from '../auth/permissions'
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

/**
 * The object id of a finding's end as a restricted caller is served it (src/findings/visibility.ts, the one
 * rule; this is its SQL twin, and test/integration/findings-environments.test.ts checks that both agree):
 * the stored id when the end's node is in one of the caller's environments, '' when it is in another one or
 * in none; when the node is gone, the anchor end (a relationship's target, a list finding's principal) keeps
 * its id and a relationship's source is ''. `a` is the parameter holding the caller's environment ids as a
 * JSON array. One indexed lookup of `nodes.objectid` per row, and only when a principal filter or sort is used.
 */
function servedEndSql(end: 'from' | 'to', a: string): string {
  const col = end === 'from' ? 'f.from_objectid' : 'f.to_objectid'
  const anchor = end === 'from' ? `(f.shape = 'list')` : '1'
  const inCallerEnv = `(SELECT n.environment_id IS NOT NULL AND n.environment_id IN (SELECT value FROM json_each(${a})) FROM nodes n WHERE n.objectid = ${col})`
  return `(CASE WHEN COALESCE(${inCallerEnv}, ${anchor}) THEN ${col} ELSE '' END)`
}

/** Bound parameters of one details query: ?1 environment, ?2 finding type, ?3 now; more follow on demand. */
class Params {
  readonly binds: unknown[]
  private accessRef: string | null = null
  constructor(
    environmentId: string,
    finding: string,
    now: string,
    private readonly access: EnvironmentAccess,
  ) {
    this.binds = [environmentId, finding, now]
  }
  add(v: unknown): string {
    this.binds.push(v)
    return `?${this.binds.length}`
  }
  /** Whether object ids must be compared and sorted as served (the caller is restricted). */
  get restricted(): boolean {
    return !this.access.all
  }
  /** The parameter holding the caller's environment ids (added on first use). */
  accessParam(): string {
    if (this.access.all) throw new Error('accessParam: the caller sees every environment')
    this.accessRef ??= this.add(JSON.stringify(this.access.ids))
    return this.accessRef
  }
  get usesAccess(): string | null {
    return this.accessRef
  }
}

/** The SQL of a principal column: stored for callers who see everything, as served for restricted ones. */
function principalSql(p: Params, end: 'from' | 'to'): string {
  if (!p.restricted) return end === 'from' ? 'f.from_objectid' : 'f.to_objectid'
  return servedEndSql(end, p.accessParam())
}

function sortSql(p: Params, column: SortColumn): string {
  if (column === 'from_principal' || column === 'principal') return principalSql(p, 'from')
  if (column === 'to_principal') return principalSql(p, 'to')
  return SORT_SQL[column]
}

/** The filter conditions of a details query (without the open / closed condition), as SQL parts. */
function filterParts(p: Params, filters: DetailsFilters): string[] {
  // `?3 IS NOT NULL` keeps ?3 referenced when no filter uses it: D1 wants exactly as many bindings as the
  // highest parameter number.
  const parts = ['f.environment_id = ?1', 'f.finding = ?2', '?3 IS NOT NULL']
  const add = (column: string, op: FilterOp, value: unknown) => parts.push(`${column} ${OP_SQL[op]} ${p.add(value)}`)
  if (filters.accepted) {
    const wantTrue = filters.accepted.op === 'eq' ? filters.accepted.value : !filters.accepted.value
    parts.push(wantTrue ? acceptedExpr(3) : `NOT ${acceptedExpr(3)}`)
  }
  if (filters.created_at) add('f.created_at', filters.created_at.op, filters.created_at.value)
  if (filters.updated_at) add('f.updated_at', filters.updated_at.op, filters.updated_at.value)
  if (filters.id) add('f.id', filters.id.op, filters.id.value)
  // Principal filters compare with what the caller is served, so that a hidden id matches nothing (the same
  // answer as for an id that does not exist): no existence oracle.
  if (filters.from_principal) add(principalSql(p, 'from'), filters.from_principal.op, filters.from_principal.value)
  if (filters.principal) add(principalSql(p, 'from'), filters.principal.op, filters.principal.value)
  if (filters.to_principal) add(principalSql(p, 'to'), filters.to_principal.op, filters.to_principal.value)
  return parts
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
export const environmentKnownSql = (p: string) => `(EXISTS (SELECT 1 FROM nodes WHERE environment_id = ${p})
  OR EXISTS (SELECT 1 FROM findings WHERE environment_id = ${p})
  OR EXISTS (SELECT 1 FROM finding_sparklines WHERE environment_id = ${p}))`

/** Whether a finding row (open or closed) of type `t` ever existed in environment `e` (index findings_pairs). */
const findingTypeSeenSql = (e: string, t: string) => `EXISTS (SELECT 1 FROM findings WHERE environment_id = ${e} AND finding = ${t})`

/** The order terms of a details query; always ends with the id, so the order is total. */
function orderTerms(p: Params, sort: SortKey[]): { expr: string; dir: 'ASC' | 'DESC' }[] {
  const terms = sort.map((s) => ({ expr: sortSql(p, s.column), dir: s.desc ? ('DESC' as const) : ('ASC' as const) }))
  if (!sort.some((s) => s.column === 'id')) terms.push({ expr: 'f.id', dir: 'ASC' })
  return terms
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
/**
 * A poll of the details of one (environment, type) by one credential (docs/findings.md, "Polls that span an
 * analysis"). The first page (skip 0) records the analysis state it read; later pages keep the findings closed
 * since then in their place (served with deleted_at set), so a run committing between two pages moves no row
 * that stays open.
 */
export interface PollKey {
  /** 'token:<id>' or 'session:<id>' */
  subject: string
  /** the poll's filters and sort, normalised: a later page continues the poll only with the same query */
  shape: string
  /** the request time: recorded as the poll's start by its first page */
  now: string
  /** a poll whose first page was served before this time is over (its later pages see open rows only) */
  expiredBefore: string
}

export async function listDetails(
  db: D1Database,
  q: {
    environmentId: string
    finding: string
    filters: DetailsFilters
    sort: SortKey[]
    skip: number
    limit: number
    now: string
    /** the caller's environment access: principal filters and sorts use what it is served */
    access: EnvironmentAccess
    /** the poll this page belongs to; null: no credential to tie pages together (every page sees open rows only) */
    poll?: PollKey | null
  },
): Promise<DetailsPage> {
  const p = new Params(q.environmentId, q.finding, q.now, q.access)
  const terms = orderTerms(p, q.sort)
  const parts = filterParts(p, q.filters)
  // keep the access parameter referenced in the count statement too (the sort may be its only user)
  const a = p.usesAccess
  if (a) parts.push(`${a} IS NOT NULL`)
  const filters = parts.join(' AND ')
  const open = `${filters} AND f.deleted_at IS NULL`
  // A later page of a poll: the rows closed after the poll's first page keep their place. Without a recorded
  // poll (or after it expired) the anchor is NULL and no closed row qualifies.
  let closed: string | null = null
  if (q.poll && q.skip > 0) {
    const anchor = `(SELECT anchor FROM finding_polls WHERE subject = ${p.add(q.poll.subject)} AND environment_id = ?1 AND finding = ?2
                       AND shape = ${p.add(q.poll.shape)} AND started_at >= ${p.add(q.poll.expiredBefore)})`
    closed = `${filters} AND f.deleted_at IS NOT NULL AND f.deleted_at > ${anchor}`
  }
  const n = p.binds.length
  const order = terms.map((t) => `${t.expr} ${t.dir}`).join(', ')
  // The page is chosen on the finding rows alone. Open rows only: a walk of findings_open_env for the default
  // order. With closed rows kept in place: the same walk merged with the (few) rows closed since the poll
  // started (a compound SELECT with ORDER BY is a merge of two ordered arms in SQLite).
  const pageIds = closed
    ? `SELECT id FROM (
         SELECT f.id AS id, ${terms.map((t, i) => `${t.expr} AS k${i}`).join(', ')} FROM findings f WHERE ${open}
         UNION ALL
         SELECT f.id AS id, ${terms.map((t, i) => `${t.expr} AS k${i}`).join(', ')} FROM findings f WHERE ${closed}
         ORDER BY ${terms.map((t, i) => `k${i} ${t.dir}`).join(', ')} LIMIT ?${n + 1} OFFSET ?${n + 2})`
    : `SELECT f.id FROM findings f WHERE ${open} ORDER BY ${order} LIMIT ?${n + 1} OFFSET ?${n + 2}`
  const count = closed
    ? `(SELECT COUNT(*) FROM findings f WHERE ${open}) + (SELECT COUNT(*) FROM findings f WHERE ${closed})`
    : `(SELECT COUNT(*) FROM findings f WHERE ${open})`
  const statements = [
    db
      .prepare(
        `SELECT ${environmentKnownSql('?1')} AS env_known, ${findingTypeSeenSql('?1', '?2')} AS type_seen,
                ${CATALOG_VERSION_SQL} AS catalog_version, ${count} AS n`,
      )
      .bind(...p.binds),
    db
      .prepare(
        `${DETAIL_COLUMNS}
         FROM (${pageIds}) page
         JOIN findings f ON f.id = page.id ${DETAIL_JOINS}
         ORDER BY ${order}`,
      )
      .bind(...p.binds, q.limit === 0 ? -1 : q.limit, q.skip),
  ]
  if (q.poll && q.skip === 0) statements.push(...pollStartStatements(db, q.environmentId, q.finding, q.poll))
  const [meta, rows] = await db.batch(statements)
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

/**
 * The first page of a poll records, in the page's own transaction, the analysis state the page read: the
 * latest close time among the pair's closed rows (index findings_closed_env). A run stamps every row it closes
 * with its commit time, and commit times strictly increase, so exactly the rows closed after this page have a
 * greater deleted_at. It also prunes expired polls. Both only when the (environment, type) has
 * or had findings — a refused request (unknown environment or type) writes nothing — and a poll of a pair
 * without any finding needs no record: no row of it can close before the poll ends.
 */
function pollStartStatements(db: D1Database, environmentId: string, finding: string, poll: PollKey): D1PreparedStatement[] {
  const seen = findingTypeSeenSql('?2', '?3')
  return [
    db
      .prepare(
        `INSERT INTO finding_polls (subject, environment_id, finding, shape, anchor, started_at)
         SELECT ?1, ?2, ?3, ?4, COALESCE((SELECT MAX(deleted_at) FROM findings WHERE environment_id = ?2 AND finding = ?3 AND deleted_at IS NOT NULL), ''), ?5
         WHERE ${seen}
         ON CONFLICT (subject, environment_id, finding, shape) DO UPDATE SET anchor = excluded.anchor, started_at = excluded.started_at`,
      )
      .bind(poll.subject, environmentId, finding, poll.shape, poll.now),
    db.prepare(`DELETE FROM finding_polls WHERE started_at < ?1 AND ${findingTypeSeenSql('?2', '?3')}`).bind(poll.expiredBefore, environmentId, finding),
  ]
}

/** One open finding with everything the detail item needs, or null. */
export async function getOpenFinding(db: D1Database, id: number, now: string): Promise<DetailRow | null> {
  return db
    .prepare(`${DETAIL_SELECT} WHERE f.id = ?1 AND f.deleted_at IS NULL`)
    .bind(id, null, now) // ?3 is `now` inside DETAIL_SELECT; ?2 is unused
    .first<DetailRow>()
}

/** Sets or clears the acceptance of an open finding. Does not touch updated_at (metrics did not change). */
export async function setAcceptance(db: D1Database, id: number, accepted: boolean, acceptedUntil: string | null, audit: AuditWrite): Promise<boolean> {
  const stmt = db
    .prepare(`UPDATE findings SET accepted = ?2, accepted_until = ?3 WHERE id = ?1 AND deleted_at IS NULL`)
    .bind(id, accepted ? 1 : 0, accepted ? acceptedUntil : null)
  const [r] = await auditedBatch(db, [stmt], audit, { ifChanged: 0 })
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

/**
 * The latest complete analysis run as one value (`id:completed_at`, NULL before the first run), for a
 * caller's own statement. A run's sparklines are written in the batch that marks it complete and never
 * change afterwards, so this value names `compositeRisksStatement`'s answer. Uses analysis_runs_status.
 */
export const LATEST_COMPLETE_RUN_SQL = `(SELECT id || ':' || completed_at FROM analysis_runs WHERE status = 'complete' ORDER BY completed_at DESC, id DESC LIMIT 1)`

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
