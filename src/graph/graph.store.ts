/**
 * SQL for reading the graph: node lookups, frontier expansion for path search, name search,
 * environments, and entity/related-entity queries compiled from plans (src/graph/entities.ts).
 *
 * Environment access is applied in SQL: `?access` is NULL (every environment) or a JSON array of
 * environment ids; nodes outside it are filtered out as if they did not exist.
 */
import type { EnvironmentAccess } from '../auth/permissions'
import { chunks } from '../chunks'
import { SELECTED_TAGS_COLUMN } from '../assetgroups/assetgroups.store'
import type { Plan } from './entities'
import type { PathEdge } from './path'
import { toNodeRecord, type NodeRecord, type NodeRow } from './present'

/** the node columns toNodeRecord reads (alias `n` for nodes); the Cypher engine's store reads the same */
export const NODE_COLUMNS = `n.id, n.objectid, n.kind, n.kinds, n.name, n.environment_id, n.properties, n.updated_at, ${SELECTED_TAGS_COLUMN}`

/** JSON list of ids bound as one parameter: at most this many per statement (~80 KB). */
const IDS_PER_STATEMENT = 8_000

export function accessParam(access: EnvironmentAccess): string | null {
  return access.all ? null : JSON.stringify(access.ids)
}

/** `col` is in the environments of `param`, a bound access parameter (see accessParam: NULL sees all). */
export function visible(col: string, param: string): string {
  return `(${param} IS NULL OR ${col} IN (SELECT value FROM json_each(${param})))`
}

/**
 * A node by object id, exact match preferred, else case-insensitive. Access is checked by the caller
 * (it needs the node's environment either way).
 */
export async function getNodeByObjectId(db: D1Database, objectid: string): Promise<NodeRecord | null> {
  const row = await db
    .prepare(`SELECT ${NODE_COLUMNS} FROM nodes n WHERE n.objectid = ?1 COLLATE NOCASE ORDER BY n.objectid = ?1 DESC, n.id LIMIT 1`)
    .bind(objectid)
    .first<NodeRow>()
  return row ? toNodeRecord(row) : null
}

export async function nodesByIds(db: D1Database, ids: number[]): Promise<NodeRecord[]> {
  if (ids.length === 0) return []
  const results = await db.batch(
    chunks(ids, IDS_PER_STATEMENT).map((c) =>
      db.prepare(`SELECT ${NODE_COLUMNS} FROM json_each(?1) f JOIN nodes n ON n.id = f.value`).bind(JSON.stringify(c)),
    ),
  )
  return results.flatMap((r) => (r.results as NodeRow[]).map(toNodeRecord))
}

/**
 * Edges leaving (`out`) or entering (`in`) every node of a frontier, restricted to `kinds` and to
 * visible neighbours. One indexed lookup per frontier node: (start_id, kind) for out, (end_id, kind) for in.
 * At most `max + 1` edges (the path search's remaining budget plus the one that says it is spent): each
 * statement carries the LIMIT, and a frontier too long for one statement is read in sequence, each
 * statement limited to what is left. Kind names are interned, so each edge holds two numbers and a
 * shared string.
 */
export async function expandFrontier(
  db: D1Database,
  frontier: number[],
  direction: 'out' | 'in',
  kinds: string[],
  access: string | null,
  max = Number.MAX_SAFE_INTEGER,
): Promise<PathEdge[]> {
  const [near, far] = direction === 'out' ? ['start_id', 'end_id'] : ['end_id', 'start_id']
  const sql =
    access === null
      ? `SELECT e.start_id, e.end_id, e.kind FROM json_each(?1) f JOIN edges e ON e.${near} = f.value
         WHERE e.kind IN (SELECT value FROM json_each(?2)) LIMIT ?3`
      : `SELECT e.start_id, e.end_id, e.kind FROM json_each(?1) f JOIN edges e ON e.${near} = f.value JOIN nodes n ON n.id = e.${far}
         WHERE e.kind IN (SELECT value FROM json_each(?2)) AND ${visible('n.environment_id', '?4')} LIMIT ?3`
  const kindsJson = JSON.stringify(kinds)
  const interned = new Map(kinds.map((k) => [k, k]))
  const out: PathEdge[] = []
  for (const c of chunks(frontier, IDS_PER_STATEMENT)) {
    const left = Math.min(max + 1 - out.length, Number.MAX_SAFE_INTEGER)
    if (left <= 0) break
    const stmt = db.prepare(sql)
    const rows = await (access === null ? stmt.bind(JSON.stringify(c), kindsJson, left) : stmt.bind(JSON.stringify(c), kindsJson, left, access)).raw<
      [number, number, string]
    >()
    for (const [from, to, kind] of rows) out.push({ from, to, kind: interned.get(kind) ?? kind })
  }
  return out
}

/** The stored details of path edges (for `lastSeen`): properties.lastseen, else updated_at. */
export async function edgeDetails(db: D1Database, edges: PathEdge[]): Promise<(PathEdge & { lastSeen: string })[]> {
  if (edges.length === 0) return []
  const results = await db.batch(
    chunks(edges, 2_000).map((c) =>
      db
        .prepare(
          `SELECT e.start_id AS "from", e.end_id AS "to", e.kind,
                  CASE WHEN json_type(e.properties, '$.lastseen') = 'text' THEN json_extract(e.properties, '$.lastseen') ELSE e.updated_at END AS lastSeen
           FROM json_each(?1) f
           JOIN edges e ON e.start_id = json_extract(f.value, '$[0]') AND e.kind = json_extract(f.value, '$[2]') AND e.end_id = json_extract(f.value, '$[1]')`,
        )
        .bind(JSON.stringify(c.map((e) => [e.from, e.to, e.kind]))),
    ),
  )
  return results
    .flatMap((r) => r.results as (PathEdge & { lastSeen: string })[])
    .sort((a, b) => a.from - b.from || a.to - b.to || (a.kind < b.kind ? -1 : a.kind > b.kind ? 1 : 0))
}

// ---- search ---------------------------------------------------------------------------------------------

export interface SearchQuery {
  q: string
  /** kinds (any of the node's kinds); null = all */
  types: string[] | null
  access: string | null
  skip: number
  limit: number
}

/** Trigram FTS needs at least 3 characters; shorter queries fall back to a name-prefix range scan. */
export const MIN_CONTAINS_LENGTH = 3

/**
 * Exact (case-insensitive) name or object id matches first, then names containing `q` (FTS5 trigram
 * index), each group ordered by name; skip/limit over the combined list. One statement.
 */
export async function searchNodes(db: D1Database, s: SearchQuery): Promise<NodeRecord[]> {
  // Two spellings: the first lets SQLite use both NOCASE indexes (multi-index OR); the second is the
  // same test made NULL-safe for the NOT in the contains part.
  const exact = `(n.name = ?1 COLLATE NOCASE OR n.objectid = ?1 COLLATE NOCASE)`
  const notExact = `NOT (coalesce(n.name = ?1 COLLATE NOCASE, 0) OR n.objectid = ?1 COLLATE NOCASE)`
  const filters = `(?3 IS NULL OR EXISTS (SELECT 1 FROM json_each(n.kinds) WHERE value IN (SELECT value FROM json_each(?3))))
    AND ${visible('n.environment_id', '?4')}`
  const contains =
    [...s.q].length >= MIN_CONTAINS_LENGTH
      ? `SELECT ${NODE_COLUMNS}, 1 AS rank FROM nodes_fts JOIN nodes n ON n.id = nodes_fts.rowid
         WHERE nodes_fts MATCH ?2 AND ${notExact} AND ${filters}`
      : `SELECT ${NODE_COLUMNS}, 1 AS rank FROM nodes n
         WHERE n.name >= ?1 COLLATE NOCASE AND n.name < ?2 COLLATE NOCASE AND ${notExact} AND ${filters}`
  const second = [...s.q].length >= MIN_CONTAINS_LENGTH ? `"${s.q.replace(/"/g, '""')}"` : `${s.q}\u{10FFFF}`
  const sql = `SELECT ${NODE_COLUMNS}, 0 AS rank FROM nodes n WHERE ${exact} AND ${filters}
    UNION ALL ${contains}
    ORDER BY rank, name COLLATE NOCASE, objectid LIMIT ?5 OFFSET ?6`
  const rows = await db
    .prepare(sql)
    .bind(s.q, second, s.types ? JSON.stringify(s.types) : null, s.access, s.limit, s.skip)
    .all<NodeRow>()
  return rows.results.map(toNodeRecord)
}

// ---- environments ---------------------------------------------------------------------------------------

export interface EnvironmentRow {
  objectid: string
  name: string | null
  environment_kind: string
  collected_at: string | null
}

/**
 * The environment nodes (visible ones), by name, as a statement for the caller's batch (read the result
 * with `environmentsOf`). `INDEXED BY nodes_environments`: without it SQLite walks every node in name
 * order (index nodes_name_nocase) to save sorting a handful of rows, which grows with the graph; the
 * partial index holds only the environment nodes.
 */
export function environmentsStatement(db: D1Database, access: string | null): D1PreparedStatement {
  return db
    .prepare(
      `SELECT n.objectid, n.name, n.environment_kind, c.collected_at
       FROM nodes n INDEXED BY nodes_environments LEFT JOIN environment_collections c ON c.environment_id = n.objectid
       WHERE n.environment_kind IS NOT NULL AND ${visible('n.objectid', '?1')}
       ORDER BY n.name COLLATE NOCASE, n.objectid`,
    )
    .bind(access)
}

export function environmentsOf(result: D1Result): EnvironmentRow[] {
  return result.results as EnvironmentRow[]
}

/**
 * A stamp of everything available-domains' answer is made of, read in one statement of a few index
 * lookups (no scan of nodes, edges or findings), for the isolate cache of src/graph/environments.ts.
 * Equal stamps ⇒ equal answers, because of where those rows are written (reasoning kept here, next to the
 * SQL it depends on; test/integration/available-domains-cache.test.ts checks each writer, and
 * test/unit/available-domains-writers.test.ts fails on a write to these tables by a writer it does not list):
 *  - `nodes` rows (environment names, kinds) are written only by an upload's commit batch
 *    (ingest.store.ts commitUpload), which the commit guard admits only while its job is running and which
 *    always adds 1 to that job's `total_files` and sets its `updated_at`. So: a job created since the last
 *    stamp changes `last_job` (ids are AUTOINCREMENT, never reused); a commit into a job that was running
 *    then changes `running` (its total_files and updated_at); a job that stopped running changes the
 *    running count.
 *  - `environment_collections` is written only when a job ends (jobs.store.ts endJob), which takes the job
 *    out of the running set; its own count, latest time and job ids are in `collections` as well.
 *  - The only other writer of `nodes`, collector post-processing inside an analysis run
 *    (src/collectors/wellknown.store.ts), changes an existing node's name only where it was NULL
 *    (RunDomainAssociations), and adds kinds or non-environment nodes: the count of environment nodes
 *    without a name is in the stamp (with their count and highest id, read through the partial index
 *    nodes_environments: one row per environment, not per node). A new writer of environment nodes'
 *    names or kinds, or of environment_collections, must be reflected here.
 *  - impactValue is the latest complete run's (`run`); the `type` names come from the kind catalogue,
 *    whose random version is `catalog`.
 * Timestamps ride along with the ids so that a database restored to an earlier point (ids reused with
 * other contents) does not match a stamp read before the restore.
 */
export function environmentsStampStatement(db: D1Database, catalogVersionSql: string, latestRunSql: string): D1PreparedStatement {
  return db.prepare(
    `SELECT ${catalogVersionSql} || '|' ||
       coalesce(${latestRunSql}, '-') || '|' ||
       coalesce((SELECT id || ':' || updated_at FROM ingest_jobs ORDER BY id DESC LIMIT 1), '-') || '|' ||
       (SELECT count(*) || ':' || total(total_files) || ':' || coalesce(max(updated_at), '-') FROM ingest_jobs WHERE status = 1) || '|' ||
       (SELECT count(*) || ':' || coalesce(max(id), 0) || ':' || total(name IS NULL) FROM nodes INDEXED BY nodes_environments WHERE environment_kind IS NOT NULL) || '|' ||
       (SELECT count(*) || ':' || coalesce(max(collected_at), '-') || ':' || total(job_id) FROM environment_collections)
       AS stamp`,
  )
}

export function environmentsStampOf(result: D1Result): string {
  const stamp = (result.results[0] as { stamp: string | null } | undefined)?.stamp
  if (typeof stamp !== 'string') throw new Error('available-domains stamp: no row (is every migration applied?)')
  return stamp
}

// ---- related entities -------------------------------------------------------------------------------------

/** A traversal step: the edge column it leaves from (`near`) and the one it arrives at (`far`). */
function ends(op: 'out' | 'in' | 'out*' | 'in*'): [near: string, far: string] {
  return op === 'out' || op === 'out*' ? ['start_id', 'end_id'] : ['end_id', 'start_id']
}

/**
 * Compiles a plan into CTEs. Parameters: ?1 entity node id, ?2 entity object id, ?3 entity environment
 * id, ?4 access; kind lists follow as ?5, ?6, ... (JSON arrays). The CTE `s<i>` holds the nodes after
 * step i; the final CTE `result(id)` holds the related nodes (never the entity itself), visible ones only.
 *
 * `restricted` (the caller may not see every environment): every traversal step also keeps only
 * visible nodes, so an invisible node is never traversed (it is absent, as for path search). Without
 * it the steps skip that join.
 *
 * `paths`: also the edges of the walks that lead from the entity to the result, as CTE
 * `pe(src, dst, kind)` (distinct). Computed backwards: `t<i>` are the nodes after step i that lead to a
 * result node; one-hop steps keep the edges from `s<i-1>` into `t<i>`; transitive steps close `t<i>`
 * backwards inside the step's nodes (`b<i>`) and keep the edges into it; filters pass `t<i>` through; an
 * `environment` step has no edges and ends the walk (the environment's nodes are its start).
 */
export function compilePlan(
  plan: Plan,
  opts: { restricted?: boolean; paths?: boolean; stepRows?: number; environmentRows?: number; pathEdges?: number } = {},
): { sql: string; params: string[] } {
  const params: string[] = []
  const bind = (kinds: readonly string[]) => {
    params.push(JSON.stringify(kinds))
    return `?${4 + params.length}`
  }
  /** join that drops invisible nodes arriving in column `col` (nothing when the caller sees everything) */
  const arriveVisible = (col: string) => (opts.restricted ? ` JOIN nodes v ON v.id = ${col} AND ${visible('v.environment_id', '?4')}` : '')
  const ctes: string[] = ['s0(id) AS (SELECT ?1)']
  // Budgets (integers from our own constants, so inlined): `stepRows` stops every step after that many
  // rows — inside the recursion for transitive steps, so a closure is never built past it — and
  // `pathEdges` stops each step's edge set of the walks after that many (see relatedGraphEdges).
  const stepLimit = opts.stepRows !== undefined ? ` LIMIT ${Math.trunc(opts.stepRows)}` : ''
  const edgeLimit = opts.pathEdges !== undefined ? ` LIMIT ${Math.trunc(opts.pathEdges)}` : ''
  // An `environment` step is an index range scan, not a walk: it may have a budget of its own (lists).
  const envRows = opts.environmentRows ?? opts.stepRows
  const envLimit = envRows !== undefined ? ` LIMIT ${Math.trunc(envRows)}` : ''
  /** kind-list placeholder of each step (index = step), for the backward pass */
  const kindParams: string[] = []
  /** a `both*` step's inbound kind-list placeholder (its outbound one is in kindParams) */
  const bothParams: string[] = []
  plan.forEach((step, i) => {
    const prev = `s${i}`
    const cur = `s${i + 1}`
    const kindSet = (kinds: readonly string[]) => {
      kindParams[i] = bind(kinds)
      return `(SELECT value FROM json_each(${kindParams[i]}))`
    }
    switch (step.op) {
      case 'out':
      case 'in': {
        const [near, far] = ends(step.op)
        ctes.push(
          `${cur}(id) AS (SELECT DISTINCT e.${far} FROM ${prev} JOIN edges e ON e.${near} = ${prev}.id AND e.kind IN ${kindSet(step.edges)}${arriveVisible(`e.${far}`)}${stepLimit})`,
        )
        break
      }
      case 'out*':
      case 'in*': {
        const [near, far] = ends(step.op)
        const set = kindSet(step.edges)
        const base = step.self
          ? `SELECT id FROM ${prev}`
          : `SELECT e.${far} FROM ${prev} JOIN edges e ON e.${near} = ${prev}.id AND e.kind IN ${set}${arriveVisible(`e.${far}`)}`
        ctes.push(`${cur}(id) AS (${base} UNION SELECT e.${far} FROM ${cur} JOIN edges e ON e.${near} = ${cur}.id AND e.kind IN ${set}${arriveVisible(`e.${far}`)}${stepLimit})`)
        break
      }
      case 'both*': {
        // one closure per direction (o<i>: outbound, r<i>: inbound), each from the previous step's nodes; the
        // step's nodes are their union. The inbound kinds' placeholder is kept in bothParams for the backward pass.
        const outSet = kindSet(step.out)
        bothParams[i] = bind(step.in)
        const inSet = `(SELECT value FROM json_each(${bothParams[i]}))`
        const closure = (name: string, near: string, far: string, set: string) =>
          `${name}(id) AS (SELECT e.${far} FROM ${prev} JOIN edges e ON e.${near} = ${prev}.id AND e.kind IN ${set}${arriveVisible(`e.${far}`)} ` +
          `UNION SELECT e.${far} FROM ${name} JOIN edges e ON e.${near} = ${name}.id AND e.kind IN ${set}${arriveVisible(`e.${far}`)}${stepLimit})`
        ctes.push(closure(`o${i + 1}`, 'start_id', 'end_id', outSet), closure(`r${i + 1}`, 'end_id', 'start_id', inSet))
        ctes.push(`${cur}(id) AS (SELECT id FROM o${i + 1} UNION SELECT id FROM r${i + 1})`)
        break
      }
      case 'environment':
        ctes.push(`${cur}(id) AS (SELECT n.id FROM nodes n WHERE n.environment_id = ?2 AND n.kind IN ${kindSet(step.kinds)}${envLimit})`)
        break
      case 'kinds':
        ctes.push(
          `${cur}(id) AS (SELECT s.id FROM ${prev} s JOIN nodes n ON n.id = s.id
             WHERE EXISTS (SELECT 1 FROM json_each(n.kinds) k WHERE k.value IN ${kindSet(step.kinds)}))`,
        )
        break
      case 'foreign':
        ctes.push(`${cur}(id) AS (SELECT s.id FROM ${prev} s JOIN nodes n ON n.id = s.id WHERE n.environment_id IS NOT ?3)`)
        break
      case 'tierZero':
        ctes.push(
          `${cur}(id) AS (SELECT s.id FROM ${prev} s JOIN nodes n ON n.id = s.id
             WHERE instr(' ' || coalesce(json_extract(n.properties, '$.system_tags'), '') || ' ', ' admin_tier_0 ') > 0
                OR EXISTS (SELECT 1 FROM json_each(n.kinds) k WHERE k.value = 'Tag_Tier_Zero')
                OR EXISTS (SELECT 1 FROM asset_group_members m JOIN asset_groups g ON g.id = m.asset_group_id
                           WHERE g.tag = 'admin_tier_0' AND m.objectid = n.objectid))`,
        )
        break
    }
  })
  const last = `s${plan.length}`
  ctes.push(`result(id) AS (SELECT DISTINCT s.id FROM ${last} s JOIN nodes n ON n.id = s.id WHERE s.id != ?1 AND ${visible('n.environment_id', '?4')})`)
  if (opts.paths) {
    ctes.push(`t${plan.length}(id) AS (SELECT id FROM result)`)
    const edgeSets: string[] = []
    for (let i = plan.length; i >= 1; i--) {
      const step = plan[i - 1]
      const [t, prev, cur, k] = [`t${i}`, `s${i - 1}`, `s${i}`, `(SELECT value FROM json_each(${kindParams[i - 1]}))`]
      if (step.op === 'environment') break
      if (step.op === 'kinds' || step.op === 'foreign' || step.op === 'tierZero') {
        ctes.push(`t${i - 1}(id) AS (SELECT id FROM ${t})`)
        continue
      }
      if (step.op === 'both*') {
        // each direction's walk backwards inside its own closure, as a transitive step without `self`
        const halves: [string, 'out*' | 'in*', string][] = [
          ['o', 'out*', `(SELECT value FROM json_each(${kindParams[i - 1]}))`],
          ['r', 'in*', `(SELECT value FROM json_each(${bothParams[i - 1]}))`],
        ]
        for (const [h, op, kinds] of halves) {
          const [near, far] = ends(op)
          const nearCol = near === 'start_id' ? 'src' : 'dst'
          const inStep = (col: string) => `(+${col} IN (SELECT id FROM ${h}${i}) OR +${col} IN (SELECT id FROM ${prev}))`
          ctes.push(
            `b${h}${i}(id) AS (SELECT id FROM ${t} WHERE id IN (SELECT id FROM ${h}${i}) UNION SELECT e.${near} FROM b${h}${i} JOIN edges e ON e.${far} = b${h}${i}.id AND e.kind IN ${kinds} WHERE ${inStep(`e.${near}`)})`,
            `p${h}${i}(src, dst, kind) AS (SELECT e.start_id, e.end_id, e.kind FROM b${h}${i} JOIN edges e ON e.${far} = b${h}${i}.id AND e.kind IN ${kinds} WHERE ${inStep(`e.${near}`)}${edgeLimit})`,
            `t${h}${i}(id) AS (SELECT DISTINCT ${nearCol} FROM p${h}${i} WHERE ${nearCol} IN (SELECT id FROM ${prev}))`,
          )
          edgeSets.push(`SELECT src, dst, kind FROM p${h}${i}`)
        }
        ctes.push(`t${i - 1}(id) AS (SELECT id FROM to${i} UNION SELECT id FROM tr${i})`)
        continue
      }
      const [near, far] = ends(step.op)
      const nearCol = near === 'start_id' ? 'src' : 'dst'
      // The backward pass looks edges up by the end it walks from (`far`, with the kind) and only tests
      // the other end against the step's nodes. The unary `+` keeps that test out of the index choice:
      // without it SQLite drove the lookup by the IN list instead (every node of the step probed for
      // every node walked: a domain's controllers at 1 M edges took 51 s in one statement, 0.2 s with it).
      if (step.op === 'out' || step.op === 'in') {
        ctes.push(
          `p${i}(src, dst, kind) AS (SELECT e.start_id, e.end_id, e.kind FROM ${t} JOIN edges e ON e.${far} = ${t}.id AND e.kind IN ${k}
             WHERE +e.${near} IN (SELECT id FROM ${prev})${edgeLimit})`,
          `t${i - 1}(id) AS (SELECT DISTINCT ${nearCol} FROM p${i})`,
        )
      } else {
        // Inside a transitive step a walk may pass through the step's nodes (s<i>) and, without `self`,
        // start from the previous ones (s<i-1>); with `self` s<i> already contains s<i-1>.
        const self = 'self' in step && step.self === true
        const inStep = (col: string) => (self ? `+${col} IN (SELECT id FROM ${cur})` : `(+${col} IN (SELECT id FROM ${cur}) OR +${col} IN (SELECT id FROM ${prev}))`)
        ctes.push(
          `b${i}(id) AS (SELECT id FROM ${t} UNION SELECT e.${near} FROM b${i} JOIN edges e ON e.${far} = b${i}.id AND e.kind IN ${k} WHERE ${inStep(`e.${near}`)})`,
          `p${i}(src, dst, kind) AS (SELECT e.start_id, e.end_id, e.kind FROM b${i} JOIN edges e ON e.${far} = b${i}.id AND e.kind IN ${k} WHERE ${inStep(`e.${near}`)}${edgeLimit})`,
          self
            ? `t${i - 1}(id) AS (SELECT id FROM b${i} WHERE id IN (SELECT id FROM ${prev}))`
            : `t${i - 1}(id) AS (SELECT DISTINCT ${nearCol} FROM p${i} WHERE ${nearCol} IN (SELECT id FROM ${prev}))`,
        )
      }
      edgeSets.push(`SELECT src, dst, kind FROM p${i}`)
    }
    ctes.push(`pe(src, dst, kind) AS (${edgeSets.length ? edgeSets.join(' UNION ') : 'SELECT NULL, NULL, NULL WHERE 0'})`)
  }
  return { sql: `WITH RECURSIVE ${ctes.join(',\n')}`, params }
}

export interface Entity {
  node: NodeRecord
  access: string | null
}

function bound(
  db: D1Database,
  e: Entity,
  plan: Plan,
  tail: string,
  extra: unknown[] = [],
  opts: { paths?: boolean; stepRows?: number; environmentRows?: number; pathEdges?: number } = {},
): D1PreparedStatement {
  const { sql, params } = compilePlan(plan, { restricted: e.access !== null, ...opts })
  const n = 4 + params.length
  const text = `${sql}\n${tail.replace(/\?\+(\d)/g, (_, k: string) => `?${n + Number(k)}`)}`
  return db.prepare(text).bind(e.node.id, e.node.objectid, e.node.environment_id, e.access, ...params, ...extra)
}

/**
 * Budgets of a walk over the graph (docs/budgets.md): rows each traversal step may visit (`stepRows`, a
 * LIMIT inside each step, inside the recursion for transitive steps) and rows an `environment` step may
 * read (`environmentRows`, an index range scan). A step that reached its budget may have been cut there,
 * so the answer computed from the walk is then a subset of the exact one.
 */
export interface WalkBudget {
  stepRows: number
  environmentRows: number
}

const UNBOUNDED: WalkBudget = { stepRows: Number.MAX_SAFE_INTEGER, environmentRows: Number.MAX_SAFE_INTEGER }

/**
 * SQL (over the CTEs of `compilePlan`) that is 1 when a step of the walk reached its budget. Filter
 * steps only keep rows of the step before them, so only traversal and environment steps are counted;
 * each count reads at most its step's budget of rows (the step's own LIMIT).
 */
function reachedSql(plan: Plan, b: WalkBudget): string {
  const tests = plan.flatMap((step, i) =>
    step.op === 'environment'
      ? [`(SELECT count(*) FROM s${i + 1}) >= ${Math.trunc(b.environmentRows)}`]
      : step.op === 'out' || step.op === 'in' || step.op === 'out*' || step.op === 'in*'
        ? [`(SELECT count(*) FROM s${i + 1}) >= ${Math.trunc(b.stepRows)}`]
        : step.op === 'both*'
          ? [`(SELECT count(*) FROM o${i + 1}) >= ${Math.trunc(b.stepRows)}`, `(SELECT count(*) FROM r${i + 1}) >= ${Math.trunc(b.stepRows)}`]
          : [],
  )
  return tests.length ? `(${tests.join(' OR ')})` : '0'
}

/** A count of a plan's nodes; `capped`: a step reached its budget, so `n` is a lower bound (the nodes found before the cut). */
export interface RelatedCount {
  n: number
  capped: boolean
}

/**
 * Counts of several plans in one round trip, each walk bounded by `budget` before the work is done.
 * Every node a cut walk finds is a related node (plans only add nodes along relationships and keep
 * them by filters), so a capped count never exceeds the exact one.
 */
export async function countRelated(db: D1Database, e: Entity, plans: Plan[], budget: WalkBudget = UNBOUNDED): Promise<RelatedCount[]> {
  if (plans.length === 0) return []
  const results = await db.batch(plans.map((p) => bound(db, e, p, `SELECT (SELECT count(*) FROM result) AS n, ${reachedSql(p, budget)} AS capped`, [], budget)))
  return results.map((r) => {
    const row = r.results[0] as { n: number; capped: number }
    return { n: row.n, capped: row.capped === 1 }
  })
}

/** Per-kind counts of a plan's nodes (primary kind), e.g. Azure descendents; bounded as `countRelated`. */
export async function countRelatedByKind(
  db: D1Database,
  e: Entity,
  plan: Plan,
  budget: WalkBudget = UNBOUNDED,
): Promise<{ counts: Record<string, number>; capped: boolean }> {
  const [byKind, reached] = await db.batch([
    bound(db, e, plan, 'SELECT n.kind, count(*) AS c FROM result JOIN nodes n ON n.id = result.id GROUP BY n.kind ORDER BY n.kind', [], budget),
    bound(db, e, plan, `SELECT ${reachedSql(plan, budget)} AS capped`, [], budget),
  ])
  return {
    counts: Object.fromEntries((byKind.results as { kind: string; c: number }[]).map((x) => [x.kind, x.c])),
    capped: (reached.results[0] as { capped: number }).capped === 1,
  }
}

/**
 * A page of a plan's nodes ordered by name, plus the total, or `over` when a step of the walk reached
 * its budget (then no page: a page of a cut walk would not be the exact page). Both statements run over
 * the same bounded walk, in one round trip.
 */
export async function listRelated(
  db: D1Database,
  e: Entity,
  plan: Plan,
  skip: number,
  limit: number,
  budget: WalkBudget = UNBOUNDED,
): Promise<{ over: true } | { over: false; count: number; nodes: NodeRecord[] }> {
  const [count, page] = await db.batch([
    bound(db, e, plan, `SELECT (SELECT count(*) FROM result) AS n, ${reachedSql(plan, budget)} AS capped`, [], budget),
    bound(
      db,
      e,
      plan,
      `SELECT ${NODE_COLUMNS} FROM result JOIN nodes n ON n.id = result.id ORDER BY n.name COLLATE NOCASE, n.objectid LIMIT ?+1 OFFSET ?+2`,
      [limit, skip],
      budget,
    ),
  ])
  const row = count.results[0] as { n: number; capped: number }
  if (row.capped === 1) return { over: true }
  return { over: false, count: row.n, nodes: (page.results as NodeRow[]).map(toNodeRecord) }
}

/** A related-entity graph's relationship: ends (node ids), kind, and `lastSeen` (properties.lastseen, else updated_at). */
export type GraphEdge = PathEdge & { lastSeen: string }

/** What `relatedGraphEdges` found: the edges (at most `maxEdges + 1`), or that a step met its row budget. */
export type RelatedGraphEdges = { over: 'steps'; edges: [] } | { over: 'edges' | null; edges: GraphEdge[] }

/**
 * The relationships of the walks from the entity to a plan's nodes (see `compilePlan`, `paths`),
 * ordered by (from, to, kind). Bounded before the work, in SQL: every step visits at most `stepRows`
 * rows (a LIMIT inside each recursive step, so a transitive closure is never built past it) and each
 * step's edge set stops at `maxEdges + 1`. One round trip of two statements over the same bounded CTEs:
 * the first counts each step's rows (a step that reached `stepRows` may have been cut: `over: 'steps'`),
 * the second reads at most `maxEdges + 1` relationships (one more than `maxEdges` tells the caller the
 * graph is too large without ever reading the rest: `over: 'edges'`).
 */
export async function relatedGraphEdges(db: D1Database, e: Entity, plan: Plan, maxEdges: number, stepRows = Number.MAX_SAFE_INTEGER): Promise<RelatedGraphEdges> {
  const opts = { stepRows, pathEdges: maxEdges + 1 }
  const steps = plan.map((_, i) => `(SELECT count(*) FROM s${i + 1})`)
  const [count, graph] = await db.batch([
    bound(db, e, plan, `SELECT max(${steps.length ? steps.join(', ') : '0'}, 0) AS n`, [], opts),
    bound(
      db,
      e,
      plan,
      `SELECT pe.src AS "from", pe.dst AS "to", pe.kind,
            CASE WHEN json_type(e.properties, '$.lastseen') = 'text' THEN json_extract(e.properties, '$.lastseen') ELSE e.updated_at END AS lastSeen
     FROM pe JOIN edges e ON e.start_id = pe.src AND e.kind = pe.kind AND e.end_id = pe.dst
     LIMIT ?+1`,
      [maxEdges + 1],
      { ...opts, paths: true },
    ),
  ])
  if ((count.results[0] as { n: number }).n >= stepRows) return { over: 'steps', edges: [] }
  // Sorted here (at most max + 1 rows), not in SQL, so the statement never sorts an oversized set.
  const edges = (graph.results as GraphEdge[]).sort((a, b) => a.from - b.from || a.to - b.to || (a.kind < b.kind ? -1 : a.kind > b.kind ? 1 : 0))
  return { over: edges.length > maxEdges ? 'edges' : null, edges }
}

/**
 * Nodes by id with only what a graph shows (kinds, name, objectid, and of the properties only
 * `lastseen` and `system_tags`), so a large graph never pulls every node's properties into the isolate.
 */
export async function graphNodesByIds(db: D1Database, ids: number[]): Promise<NodeRecord[]> {
  if (ids.length === 0) return []
  const results = await db.batch(
    chunks(ids, IDS_PER_STATEMENT).map((c) =>
      db
        .prepare(
          `SELECT n.id, n.objectid, n.kind, n.kinds, n.name, n.environment_id, n.updated_at, ${SELECTED_TAGS_COLUMN},
                  json_object('lastseen', json_extract(n.properties, '$.lastseen'), 'system_tags', json_extract(n.properties, '$.system_tags'),
                    'isTierZero', json_extract(n.properties, '$.isTierZero'), 'istierzero', json_extract(n.properties, '$.istierzero'),
                    'templateid', json_extract(n.properties, '$.templateid')) AS properties
           FROM json_each(?1) f JOIN nodes n ON n.id = f.value`,
        )
        .bind(JSON.stringify(c)),
    ),
  )
  return results.flatMap((r) => (r.results as NodeRow[]).map(toNodeRecord))
}

/**
 * The distinct primary kinds of the stored nodes, sorted: a loose index scan over `nodes_kind_env`
 * (one index seek per distinct kind, never a scan of the nodes), at most `max` kinds.
 */
export async function nodeKindsInData(db: D1Database, max = 10_000): Promise<string[]> {
  const { results } = await db
    .prepare(
      `WITH RECURSIVE k(kind, n) AS (
         SELECT (SELECT min(kind) FROM nodes), 1
         UNION ALL
         SELECT (SELECT min(kind) FROM nodes WHERE kind > k.kind), n + 1 FROM k WHERE k.kind IS NOT NULL AND n < ?1
       )
       SELECT kind FROM k WHERE kind IS NOT NULL`,
    )
    .bind(max)
    .all<{ kind: string }>()
  return results.map((r) => r.kind)
}

/**
 * BloodHound's graph-search (`GET /api/v2/graph-search`): nodes whose name or object id equals `q`
 * (`exact`) or starts with it (fuzzy), case-insensitively, visible ones only, by name then object id; at
 * most `max + 1` rows (one more than the budget tells the caller it was exceeded without reading the rest).
 * Both tests are range scans of the NOCASE indexes on name and object id.
 */
export async function graphSearchNodes(db: D1Database, q: string, exact: boolean, access: string | null, max: number): Promise<NodeRecord[]> {
  const test = exact
    ? `(n.name = ?1 COLLATE NOCASE OR n.objectid = ?1 COLLATE NOCASE)`
    : `((n.name >= ?1 COLLATE NOCASE AND n.name < ?2 COLLATE NOCASE) OR (n.objectid >= ?1 COLLATE NOCASE AND n.objectid < ?2 COLLATE NOCASE))`
  const { results } = await db
    .prepare(`SELECT ${NODE_COLUMNS} FROM nodes n WHERE ${test} AND ${visible('n.environment_id', '?3')} ORDER BY n.name COLLATE NOCASE, n.objectid LIMIT ?4`)
    .bind(q, `${q}\u{10FFFF}`, access, max + 1)
    .all<NodeRow>()
  return results.map(toNodeRecord)
}

/** A stored relationship with its id and properties (BloodHound's legacy graph format shows both). */
export interface EdgeRecord extends PathEdge {
  id: number
  properties: Record<string, unknown>
  updated_at: string
}

/** The stored rows of the given relationships (ends and kind), in one batch per 2,000. */
export async function edgeRecords(db: D1Database, edges: PathEdge[]): Promise<EdgeRecord[]> {
  if (edges.length === 0) return []
  const results = await db.batch(
    chunks(edges, 2_000).map((c) =>
      db
        .prepare(
          `SELECT e.id, e.start_id AS "from", e.end_id AS "to", e.kind, e.properties, e.updated_at
           FROM json_each(?1) f
           JOIN edges e ON e.start_id = json_extract(f.value, '$[0]') AND e.kind = json_extract(f.value, '$[2]') AND e.end_id = json_extract(f.value, '$[1]')`,
        )
        .bind(JSON.stringify(c.map((e) => [e.from, e.to, e.kind]))),
    ),
  )
  return results
    .flatMap((r) => r.results as (PathEdge & { id: number; properties: string; updated_at: string })[])
    .map((e) => ({ ...e, properties: JSON.parse(e.properties) as Record<string, unknown> }))
    .sort((a, b) => a.from - b.from || a.to - b.to || (a.kind < b.kind ? -1 : a.kind > b.kind ? 1 : 0))
}

/** A node by internal id (the ids graph answers show), or null. Access is checked by the caller. */
export async function getNodeById(db: D1Database, id: number): Promise<NodeRecord | null> {
  const row = await db.prepare(`SELECT ${NODE_COLUMNS} FROM nodes n WHERE n.id = ?1`).bind(id).first<NodeRow>()
  return row ? toNodeRecord(row) : null
}
