/**
 * SQL of the data quality statistics (issue 27; docs/findings.md "Data quality"; migrations/0043).
 *
 * Written: the analysis run reads each AD domain's and Azure tenant's nodes in keyset pages (`adDataQualityPage`,
 * `azureDataQualityPage`: a bounded statement each, as the graph loader's pages are), sums them in the isolate
 * (src/findings/dataquality.ts) and appends one row per environment in its commit batch
 * (`dataQualityInsertStatements`), so a run is visible with its rows or not at all.
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

const quoted = (kinds: readonly string[]) => kinds.map((k) => `'${k}'`).join(', ')

/** The AD domains and Azure tenants of the graph (their environment nodes), by id. */
export async function dataQualityEnvironments(db: D1Database): Promise<{ id: string; platform: Platform }[]> {
  const { results } = await db
    .prepare(`SELECT objectid, environment_kind FROM nodes WHERE environment_kind IN (?1, ?2) ORDER BY objectid`)
    .bind(AD_ENVIRONMENT_KIND, AZURE_ENVIRONMENT_KIND)
    .all<{ objectid: string; environment_kind: string }>()
  return results.map((r) => ({ id: r.objectid, platform: r.environment_kind === AD_ENVIRONMENT_KIND ? 'ad' : 'azure' }))
}

/** One page of an environment's nodes: how many, the cursor, kind counts and counts of their outbound edges. */
export interface DataQualityPage {
  count: number
  lastId: number
  counts: Record<string, number>
  /** AD: candidates of the completeness fractions, JSON `[[logon seconds, 0|1 covered], …]` (null when none) */
  userLogons?: string | null
  computerLogons?: string | null
}

/**
 * One page (keyset on `nodes.id` within the environment, index `nodes_env`) of an AD domain's nodes: its kind
 * counts; relationships, ACLs and sessions that start at them (each node's outbound edges through the edges'
 * unique index); and the completeness candidates — enabled users, and enabled Windows computers (`operatingsystem`
 * containing "windows" in any case), with a numeric `lastlogontimestamp` — each with whether it has an inbound
 * `HasSession` (users) or local-group relationship (computers): one `edges_end_kind` probe per candidate.
 * `enabled = 1` is JSON true (or the number 1), as the analysis loader reads it.
 */
export async function adDataQualityPage(db: D1Database, environmentId: string, afterId: number, limit: number): Promise<DataQualityPage> {
  const r = await db
    .prepare(
      `WITH s AS MATERIALIZED (
         SELECT n.id,
           ${AD_KIND_COUNTS.map(([col, kind]) => `${hasKind(kind)} AS is_${col}`).join(',\n           ')},
           CASE WHEN (${hasKind('User')} OR ${hasKind('Computer')})
                 AND json_extract(n.properties, '$.enabled') = 1
                 AND json_type(n.properties, '$.lastlogontimestamp') IN ('integer', 'real')
                THEN json_extract(n.properties, '$.lastlogontimestamp') END AS logon,
           CASE WHEN ${hasKind('Computer')}
                THEN ifnull(instr(upper(json_extract(n.properties, '$.operatingsystem')), 'WINDOWS') > 0, 0) ELSE 0 END AS windows
         FROM nodes n WHERE n.environment_id = ?1 AND n.id > ?2 ORDER BY n.id LIMIT ?3),
       r AS (SELECT COUNT(*) AS relationships, ifnull(SUM(x.kind IN (SELECT value FROM json_each(?4))), 0) AS acls,
               ifnull(SUM(x.kind = 'HasSession' AND s.is_computers), 0) AS sessions
             FROM s JOIN edges x ON x.start_id = s.id)
       SELECT COUNT(*) AS n, MAX(s.id) AS last_id,
         ${AD_KIND_COUNTS.map(([col]) => `ifnull(SUM(is_${col}), 0) AS ${col}`).join(', ')},
         (SELECT relationships FROM r) AS relationships, (SELECT acls FROM r) AS acls, (SELECT sessions FROM r) AS sessions,
         (SELECT json_group_array(json_array(c.logon, EXISTS (SELECT 1 FROM edges x WHERE x.end_id = c.id AND x.kind = 'HasSession')))
            FROM s c WHERE c.is_users AND c.logon IS NOT NULL) AS user_logons,
         (SELECT json_group_array(json_array(c.logon, EXISTS (SELECT 1 FROM edges x WHERE x.end_id = c.id AND x.kind IN (${quoted(LOCAL_GROUP_KINDS)}))))
            FROM s c WHERE c.is_computers AND c.windows AND c.logon IS NOT NULL) AS computer_logons
       FROM s`,
    )
    .bind(environmentId, afterId, limit, JSON.stringify([...ACL_KINDS]))
    .first<Record<string, number | string | null>>()
  const row = r ?? {}
  return {
    count: Number(row.n ?? 0),
    lastId: row.last_id === null || row.last_id === undefined ? afterId : Number(row.last_id),
    counts: Object.fromEntries(AD_COUNT_COLUMNS.map((c) => [c, Number(row[c] ?? 0)])),
    userLogons: (row.user_logons as string | null) ?? null,
    computerLogons: (row.computer_logons as string | null) ?? null,
  }
}

/** One page of an Azure tenant's nodes: kind counts and the relationships that start at them. */
export async function azureDataQualityPage(db: D1Database, environmentId: string, afterId: number, limit: number): Promise<DataQualityPage> {
  const r = await db
    .prepare(
      `WITH s AS MATERIALIZED (
         SELECT n.id, ${AZURE_KIND_COUNTS.map(([col, kind]) => `${hasKind(kind)} AS is_${col}`).join(', ')}
         FROM nodes n WHERE n.environment_id = ?1 AND n.id > ?2 ORDER BY n.id LIMIT ?3)
       SELECT COUNT(*) AS n, MAX(s.id) AS last_id,
         ${AZURE_KIND_COUNTS.map(([col]) => `ifnull(SUM(is_${col}), 0) AS ${col}`).join(', ')},
         (SELECT COUNT(*) FROM s JOIN edges x ON x.start_id = s.id) AS relationships
       FROM s`,
    )
    .bind(environmentId, afterId, limit)
    .first<Record<string, number | null>>()
  const row = r ?? {}
  return {
    count: Number(row.n ?? 0),
    lastId: row.last_id === null || row.last_id === undefined ? afterId : Number(row.last_id),
    counts: Object.fromEntries(AZURE_COUNT_COLUMNS.map((c) => [c, Number(row[c] ?? 0)])),
  }
}

/** An AD domain's row as the run computed it (the fractions' parts kept, docs/findings.md "Data quality"). */
export type AdDataQualityRow = { domainSid: string } & Record<(typeof AD_COUNT_COLUMNS)[number], number> & {
    activeUsers: number
    usersWithSessions: number
    activeComputers: number
    computersWithAdmins: number
  }
export type AzureDataQualityRow = { tenantId: string } & Record<(typeof AZURE_COUNT_COLUMNS)[number], number>

const jsonField = (key: string) => `json_extract(j.value, '$.${key}')`

/**
 * The run's rows, appended in its commit batch (run.ts → commitRun): one statement per platform and JSON chunk,
 * each row a JSON object read back with json_extract. `chunks` come from chunkJson (analysis.store.ts).
 */
export function dataQualityInsertStatements(
  db: D1Database,
  runId: number,
  now: string,
  adChunks: string[],
  azureChunks: string[],
): D1PreparedStatement[] {
  const ad = adChunks.map((json) =>
    db
      .prepare(
        `INSERT INTO ad_data_quality_stats (run_id, domain_sid, ${AD_COUNT_COLUMNS.join(', ')},
           session_completeness, local_group_completeness, active_users, users_with_sessions, active_computers, computers_with_admins,
           created_at, updated_at, id)
         SELECT ?1, ${jsonField('domainSid')}, ${AD_COUNT_COLUMNS.map(jsonField).join(', ')},
           ${fraction(jsonField('usersWithSessions'), jsonField('activeUsers'))}, ${fraction(jsonField('computersWithAdmins'), jsonField('activeComputers'))},
           ${jsonField('activeUsers')}, ${jsonField('usersWithSessions')}, ${jsonField('activeComputers')}, ${jsonField('computersWithAdmins')},
           ?2, ?2, ${NEW_ID_SQL}
         FROM json_each(?3) j ORDER BY j.key`,
      )
      .bind(runId, now, json),
  )
  const azure = azureChunks.map((json) =>
    db
      .prepare(
        `INSERT INTO azure_data_quality_stats (run_id, tenant_id, ${AZURE_COUNT_COLUMNS.join(', ')}, created_at, updated_at, id)
         SELECT ?1, ${jsonField('tenantId')}, ${AZURE_COUNT_COLUMNS.map(jsonField).join(', ')}, ?2, ?2, ${NEW_ID_SQL}
         FROM json_each(?3) j ORDER BY j.key`,
      )
      .bind(runId, now, json),
  )
  return [...ad, ...azure]
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
