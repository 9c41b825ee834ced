/**
 * SQL of the data quality statistics (issue 27; docs/findings.md "Data quality"; migrations/0043).
 *
 * Written: `dataQualityStatements` are two INSERT … SELECT statements that count the graph per AD domain and per
 * Azure tenant; the analysis run puts them in its commit batch (src/findings/run.ts → commitRun), so a run is
 * visible with its rows or not at all, and the rows count the graph as the run commits it. They read the graph
 * through the environment index (`nodes_env`) and each node's outbound edges (the `edges` unique index), once per
 * platform; per active user / computer one probe of `edges_end_kind`.
 *
 * Read: the history of one environment, the per-run aggregate of a platform and the completeness of the newest
 * run. Environment access is applied in SQL: a restricted caller never counts nor sees another environment's rows.
 */
import type { EnvironmentAccess } from '../auth/permissions'
import { ACL_KINDS } from '../collectors/sharphound/common'
import { AD_ENVIRONMENT_KIND, AZURE_ENVIRONMENT_KIND } from '../graph/kinds'
import { NEW_ID_SQL } from '../graph/ids'
import { environmentKnownSql } from './findings.store'

export type Platform = 'ad' | 'azure'

/** An activity window of BloodHound's completeness: 14 days before the environment's newest logon, in seconds. */
export const ACTIVITY_WINDOW_SECONDS = 14 * 24 * 3600

/** Relationship kinds that give local-group (admin) coverage of a computer, as BloodHound's FetchLocalGroupCompleteness. */
export const LOCAL_GROUP_KINDS = ['AdminTo', 'CanRDP', 'CanPSRemote', 'ExecuteDCOM', 'CanBackup'] as const

/** [response field, node kind counted] of an AD domain row, in BloodHound's field order. */
export const AD_KIND_COUNTS = [
  ['users', 'User'],
  ['groups', 'Group'],
  ['computers', 'Computer'],
  ['ous', 'OU'],
  ['containers', 'Container'],
  ['gpos', 'GPO'],
  ['aiacas', 'AIACA'],
  ['rootcas', 'RootCA'],
  ['enterprisecas', 'EnterpriseCA'],
  ['ntauthstores', 'NTAuthStore'],
  ['certtemplates', 'CertTemplate'],
  ['issuancepolicies', 'IssuancePolicy'],
] as const

/** [response field, node kind counted] of an Azure tenant row, in BloodHound's field order. */
export const AZURE_KIND_COUNTS = [
  ['users', 'AZUser'],
  ['groups', 'AZGroup'],
  ['apps', 'AZApp'],
  ['service_principals', 'AZServicePrincipal'],
  ['devices', 'AZDevice'],
  ['management_groups', 'AZManagementGroup'],
  ['subscriptions', 'AZSubscription'],
  ['resource_groups', 'AZResourceGroup'],
  ['vms', 'AZVM'],
  ['key_vaults', 'AZKeyVault'],
  ['automation_accounts', 'AZAutomationAccount'],
  ['container_registries', 'AZContainerRegistry'],
  ['function_apps', 'AZFunctionApp'],
  ['logic_apps', 'AZLogicApp'],
  ['managed_clusters', 'AZManagedCluster'],
  ['vm_scale_sets', 'AZVMScaleSet'],
  ['web_apps', 'AZWebApp'],
] as const

export const AD_COUNT_COLUMNS = [...AD_KIND_COUNTS.map(([c]) => c), 'acls', 'sessions', 'relationships'] as const
export const AZURE_COUNT_COLUMNS = [...AZURE_KIND_COUNTS.map(([c]) => c), 'relationships'] as const

/**
 * "node has kind K": `kinds` is a JSON array of kind names that match KIND_PATTERN (no quote inside a name), so
 * the quoted name occurs in the text exactly when it is an element. The names here are constants of this file.
 */
const hasKind = (kind: string) => `(instr(n.kinds, '"${kind}"') > 0)`

/** A fraction's parts → the fraction; 0 when nothing is active (BloodHound answers 0 then). */
const fraction = (covered: string, active: string) => `CASE WHEN ${active} > 0 THEN CAST(${covered} AS REAL) / ${active} ELSE 0 END`

/**
 * Active users / computers of one kind and their coverage, per environment (BloodHound's Fetch…Completeness, per
 * domain): candidates are enabled and have a numeric `lastlogontimestamp` (seconds); active are those whose logon
 * is at most 14 days before the environment's newest candidate logon; covered are active ones with at least one
 * inbound relationship of `kinds`.
 */
function activeAndCovered(name: string, flag: string, kinds: readonly string[]): string {
  return `${name}_c AS (SELECT id, e, logon FROM s WHERE ${flag} AND logon IS NOT NULL),
  ${name}_m AS (SELECT e, MAX(logon) - ${ACTIVITY_WINDOW_SECONDS} AS since FROM ${name}_c GROUP BY e),
  ${name} AS (SELECT c.e, COUNT(*) AS active,
      SUM(EXISTS (SELECT 1 FROM edges x WHERE x.end_id = c.id AND x.kind IN (${kinds.map((k) => `'${k}'`).join(', ')}))) AS covered
    FROM ${name}_c c JOIN ${name}_m m ON m.e = c.e WHERE c.logon >= m.since GROUP BY c.e)`
}

/**
 * The AD statement: one row per Domain node (its object id is the environment id of its nodes). ?1 run id,
 * ?2 commit time, ?3 the ACL relationship kinds (JSON).
 */
const AD_INSERT = `WITH env(e) AS (SELECT objectid FROM nodes WHERE environment_kind = '${AD_ENVIRONMENT_KIND}'),
  s AS MATERIALIZED (
    SELECT n.id, n.environment_id AS e,
      ${AD_KIND_COUNTS.map(([col, kind]) => `${hasKind(kind)} AS is_${col}`).join(',\n      ')},
      CASE WHEN (${hasKind('User')} OR ${hasKind('Computer')})
            AND json_extract(n.properties, '$.enabled') = 1
            AND json_type(n.properties, '$.lastlogontimestamp') IN ('integer', 'real')
           THEN json_extract(n.properties, '$.lastlogontimestamp') END AS logon,
      CASE WHEN ${hasKind('Computer')} THEN ifnull(instr(upper(json_extract(n.properties, '$.operatingsystem')), 'WINDOWS') > 0, 0) ELSE 0 END AS windows
    FROM env JOIN nodes n ON n.environment_id = env.e),
  k AS (SELECT e, ${AD_KIND_COUNTS.map(([col]) => `SUM(is_${col}) AS ${col}`).join(', ')} FROM s GROUP BY e),
  r AS (SELECT s.e, COUNT(*) AS relationships,
          SUM(x.kind IN (SELECT value FROM json_each(?3))) AS acls,
          SUM(x.kind = 'HasSession' AND s.is_computers) AS sessions
        FROM s JOIN edges x ON x.start_id = s.id GROUP BY s.e),
  ${activeAndCovered('ua', 'is_users', ['HasSession'])},
  ${activeAndCovered('ca', 'is_computers AND windows', LOCAL_GROUP_KINDS)}
INSERT INTO ad_data_quality_stats (run_id, domain_sid, ${AD_COUNT_COLUMNS.join(', ')},
  session_completeness, local_group_completeness, active_users, users_with_sessions, active_computers, computers_with_admins,
  created_at, updated_at, id)
SELECT ?1, env.e, ${AD_KIND_COUNTS.map(([col]) => `ifnull(k.${col}, 0)`).join(', ')},
  ifnull(r.acls, 0), ifnull(r.sessions, 0), ifnull(r.relationships, 0),
  ${fraction('ifnull(ua.covered, 0)', 'ifnull(ua.active, 0)')}, ${fraction('ifnull(ca.covered, 0)', 'ifnull(ca.active, 0)')},
  ifnull(ua.active, 0), ifnull(ua.covered, 0), ifnull(ca.active, 0), ifnull(ca.covered, 0),
  ?2, ?2, ${NEW_ID_SQL}
FROM env LEFT JOIN k ON k.e = env.e LEFT JOIN r ON r.e = env.e LEFT JOIN ua ON ua.e = env.e LEFT JOIN ca ON ca.e = env.e
ORDER BY env.e`

/** The Azure statement: one row per AZTenant node. ?1 run id, ?2 commit time. */
const AZURE_INSERT = `WITH env(e) AS (SELECT objectid FROM nodes WHERE environment_kind = '${AZURE_ENVIRONMENT_KIND}'),
  s AS MATERIALIZED (
    SELECT n.id, n.environment_id AS e,
      ${AZURE_KIND_COUNTS.map(([col, kind]) => `${hasKind(kind)} AS is_${col}`).join(',\n      ')}
    FROM env JOIN nodes n ON n.environment_id = env.e),
  k AS (SELECT e, ${AZURE_KIND_COUNTS.map(([col]) => `SUM(is_${col}) AS ${col}`).join(', ')} FROM s GROUP BY e),
  r AS (SELECT s.e, COUNT(*) AS relationships FROM s JOIN edges x ON x.start_id = s.id GROUP BY s.e)
INSERT INTO azure_data_quality_stats (run_id, tenant_id, ${AZURE_COUNT_COLUMNS.join(', ')}, created_at, updated_at, id)
SELECT ?1, env.e, ${AZURE_KIND_COUNTS.map(([col]) => `ifnull(k.${col}, 0)`).join(', ')}, ifnull(r.relationships, 0),
  ?2, ?2, ${NEW_ID_SQL}
FROM env LEFT JOIN k ON k.e = env.e LEFT JOIN r ON r.e = env.e
ORDER BY env.e`

/** The two statements of a run's commit batch (two D1 statements per run, whatever the graph's size). */
export function dataQualityStatements(db: D1Database, runId: number, now: string): D1PreparedStatement[] {
  return [db.prepare(AD_INSERT).bind(runId, now, JSON.stringify([...ACL_KINDS])), db.prepare(AZURE_INSERT).bind(runId, now)]
}

/** clear-database's `deleteDataQualityHistory`: every row of both platforms (in the wipe's batch). */
export function deleteDataQualityStatements(db: D1Database): D1PreparedStatement[] {
  return [db.prepare(`DELETE FROM ad_data_quality_stats`), db.prepare(`DELETE FROM azure_data_quality_stats`)]
}

// ---- reads ---------------------------------------------------------------------------------------------

const TABLES = {
  ad: { table: 'ad_data_quality_stats', env: 'domain_sid', counts: AD_COUNT_COLUMNS },
  azure: { table: 'azure_data_quality_stats', env: 'tenant_id', counts: AZURE_COUNT_COLUMNS },
} as const

export const DATA_QUALITY_SORT_COLUMNS = ['created_at', 'updated_at'] as const
export type DataQualitySort = { column: (typeof DATA_QUALITY_SORT_COLUMNS)[number]; desc: boolean }[]

export interface DataQualityWindow {
  start: string
  end: string
  /** empty: BloodHound's default, newest first */
  sort: DataQualitySort
  skip: number
  limit: number
}

/** ORDER BY terms from the whitelisted columns only; ties by id (rows) or run id (aggregates), so the order is total. */
function orderBy(sort: DataQualitySort, tie: string): string {
  const terms = sort.length ? sort.map((s) => `${s.column} ${s.desc ? 'DESC' : 'ASC'}`) : ['created_at DESC']
  return [...terms, tie].join(', ')
}

export type DataQualityRow = Record<string, number | string | null> & {
  id: number
  run_id: number
  created_at: string
  updated_at: string
  deleted_at: string | null
}

/**
 * One environment's rows created in [start, end], and whether the environment is known at all (the graph has
 * nodes in it, analysis recorded findings for it, or it has data quality rows): the route answers 404 otherwise.
 */
export async function environmentStats(
  db: D1Database,
  platform: Platform,
  environmentId: string,
  w: DataQualityWindow,
): Promise<{ known: boolean; count: number; rows: DataQualityRow[] }> {
  const t = TABLES[platform]
  const where = `${t.env} = ?1 AND deleted_at IS NULL AND created_at >= ?2 AND created_at <= ?3`
  const columns = [
    'id',
    'run_id',
    t.env,
    ...t.counts,
    ...(platform === 'ad' ? ['session_completeness', 'local_group_completeness'] : []),
    'created_at',
    'updated_at',
    'deleted_at',
  ]
  const [known, count, rows] = await db.batch([
    db.prepare(`SELECT (${environmentKnownSql('?1')} OR EXISTS (SELECT 1 FROM ${t.table} WHERE ${t.env} = ?1)) AS ok`).bind(environmentId),
    db.prepare(`SELECT COUNT(*) AS n FROM ${t.table} WHERE ${where}`).bind(environmentId, w.start, w.end),
    db
      .prepare(`SELECT ${columns.join(', ')} FROM ${t.table} WHERE ${where} ORDER BY ${orderBy(w.sort, 'id ASC')} LIMIT ?4 OFFSET ?5`)
      .bind(environmentId, w.start, w.end, w.limit, w.skip),
  ])
  return {
    known: (known.results[0] as { ok: number }).ok === 1,
    count: (count.results[0] as { n: number }).n,
    rows: rows.results as DataQualityRow[],
  }
}

/**
 * The platform's aggregate per analysis run created in [start, end]: one row per run over the environments the
 * caller may see, counts summed, `environments` the number of rows summed; AD completeness as the ratio of the
 * summed parts (every active user of the seen domains weighs the same).
 */
export async function platformAggregates(
  db: D1Database,
  platform: Platform,
  access: EnvironmentAccess,
  w: DataQualityWindow,
): Promise<{ count: number; rows: (DataQualityRow & { environments: number })[] }> {
  const t = TABLES[platform]
  const binds: unknown[] = [w.start, w.end]
  const where = ['deleted_at IS NULL', 'created_at >= ?1', 'created_at <= ?2']
  if (!access.all) {
    binds.push(JSON.stringify(access.ids))
    where.push(`${t.env} IN (SELECT value FROM json_each(?${binds.length}))`)
  }
  const completeness =
    platform === 'ad'
      ? `, ${fraction('SUM(users_with_sessions)', 'SUM(active_users)')} AS session_completeness,
         ${fraction('SUM(computers_with_admins)', 'SUM(active_computers)')} AS local_group_completeness`
      : ''
  const from = `FROM ${t.table} WHERE ${where.join(' AND ')}`
  const [count, rows] = await db.batch([
    db.prepare(`SELECT COUNT(DISTINCT run_id) AS n ${from}`).bind(...binds),
    db
      .prepare(
        `SELECT run_id, run_id AS id, COUNT(*) AS environments, ${t.counts.map((c) => `SUM(${c}) AS ${c}`).join(', ')}${completeness},
           MIN(created_at) AS created_at, MAX(updated_at) AS updated_at, NULL AS deleted_at
         ${from} GROUP BY run_id ORDER BY ${orderBy(w.sort, 'run_id ASC')} LIMIT ?${binds.length + 1} OFFSET ?${binds.length + 2}`,
      )
      .bind(...binds, w.limit, w.skip),
  ])
  return { count: (count.results[0] as { n: number }).n, rows: rows.results as (DataQualityRow & { environments: number })[] }
}

/**
 * Completeness of the newest analysis run over the domains the caller may see: summed parts of the rows of that
 * run (0 when there is no run, no domain or nothing active).
 */
export async function latestCompleteness(db: D1Database, access: EnvironmentAccess): Promise<{ session: number; localGroup: number }> {
  const binds: unknown[] = []
  let filter = ''
  if (!access.all) {
    binds.push(JSON.stringify(access.ids))
    filter = `AND domain_sid IN (SELECT value FROM json_each(?1))`
  }
  const r = await db
    .prepare(
      `SELECT ${fraction('ifnull(SUM(users_with_sessions), 0)', 'ifnull(SUM(active_users), 0)')} AS session,
              ${fraction('ifnull(SUM(computers_with_admins), 0)', 'ifnull(SUM(active_computers), 0)')} AS local_group
       FROM ad_data_quality_stats
       WHERE deleted_at IS NULL ${filter}
         AND created_at = (SELECT MAX(created_at) FROM ad_data_quality_stats WHERE deleted_at IS NULL)`,
    )
    .bind(...binds)
    .first<{ session: number; local_group: number }>()
  return { session: r?.session ?? 0, localGroup: r?.local_group ?? 0 }
}
