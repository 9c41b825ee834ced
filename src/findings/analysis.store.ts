/**
 * SQL of the analysis: run records, the keyset-paged graph loader, staging and the atomic commit.
 * Reads of findings for the HTTP endpoints live in findings.store.ts.
 *
 * Atomicity: a run writes its whole reconciliation plan into the staging tables (many batches, invisible
 * to readers), then `commitRun` applies it with ONE `db.batch` — D1's unit of atomicity — which updates,
 * closes and inserts findings set-based from the staging rows, appends the sparkline rows, marks the run
 * complete and empties the staging tables. Readers therefore see either the previous run or this one.
 */
import { auditedBatch } from '../audit/audit.store'
import type { AuditWrite } from '../audit/audit'
import type { AnalysisStats, FindingResult, SparklineResult } from './engine'
import type { OpenFinding, ReconcilePlan } from './reconcile'
import type { PostureRow } from './posture'
import { NEW_ID_SQL, withIdRetry } from '../graph/ids'
import { replaceMembersStatements } from '../assetgroups/assetgroups.store'

export type RunStatus = 'pending' | 'running' | 'complete' | 'failed'

export interface RunRecord {
  id: number
  status: RunStatus
  reasons: string[]
  requested_at: string
  started_at: string | null
  attempt_started_at: string | null
  completed_at: string | null
  attempts: number
  error: string | null
  node_count: number | null
  edge_count: number | null
  traversable_edge_count: number | null
  environment_count: number | null
  principal_count: number | null
  finding_count: number | null
  new_count: number | null
  changed_count: number | null
  closed_count: number | null
  unchanged_count: number | null
  duration_ms: number | null
}

type RunRow = Omit<RunRecord, 'reasons'> & { reasons: string }

function toRun(r: RunRow): RunRecord {
  let reasons: string[] = []
  try {
    const v = JSON.parse(r.reasons)
    if (Array.isArray(v)) reasons = v.map(String)
  } catch {
    /* keep [] */
  }
  return { ...r, reasons }
}

/** Reasons kept per run (coalesced requests beyond this are counted by the run, not listed). */
export const MAX_REASONS = 50

/**
 * Records a request for a run: appends the reason to the pending run, or creates the pending run when there
 * is none — one atomic batch, and the partial unique index `analysis_runs_one_pending` guarantees a single
 * pending run even under concurrent callers. Also answers whether a run attempt is live (started recently),
 * so the caller can skip waking a busy Analyzer.
 */
export async function requestRunRecord(
  db: D1Database,
  reason: string,
  now: string,
  /** the API request's audit success row (RequestAnalysis), naming the run it joined; same batch */
  audit?: AuditWrite,
): Promise<{ run: RunRecord; liveAttemptSince: string | null }> {
  const statements = [
    ...runRequestStatements(db, reason, now),
    db.prepare(`SELECT * FROM analysis_runs WHERE status = 'pending'`),
    db.prepare(`SELECT attempt_started_at FROM analysis_runs WHERE status = 'running'`),
  ]
  const res = audit
    ? await auditedBatch(db, statements, audit, { computed: { run_id: `SELECT id FROM analysis_runs WHERE status = 'pending'` } })
    : await db.batch(statements)
  const run = (res[2].results as RunRow[])[0]
  const running = (res[3].results as { attempt_started_at: string | null }[])[0]
  return { run: toRun(run), liveAttemptSince: running?.attempt_started_at ?? null }
}

/**
 * The two statements that record a request for a run (join the pending run, or create it), for a caller that
 * records its request in a batch of its own (clear-database: the wipe, its analysis and its audit row at once).
 */
export function runRequestStatements(db: D1Database, reason: string, now: string): D1PreparedStatement[] {
  return [
    db
      .prepare(`UPDATE analysis_runs SET reasons = json_insert(reasons, '$[#]', ?1) WHERE status = 'pending' AND json_array_length(reasons) < ?2`)
      .bind(reason, MAX_REASONS),
    db
      .prepare(
        `INSERT INTO analysis_runs (status, reasons, requested_at) SELECT 'pending', json_array(?1), ?2
         WHERE NOT EXISTS (SELECT 1 FROM analysis_runs WHERE status = 'pending')`,
      )
      .bind(reason, now),
  ]
}

/** A pending run for tests and tools that need one without the Analyzer (fails if one is pending). */
export async function createRun(db: D1Database, reason: string, now: string): Promise<RunRecord> {
  const r = await db
    .prepare(`INSERT INTO analysis_runs (status, reasons, requested_at) VALUES ('pending', json_array(?1), ?2) RETURNING *`)
    .bind(reason, now)
    .first<RunRow>()
  return toRun(r!)
}

export async function getRun(db: D1Database, id: number): Promise<RunRecord | null> {
  const r = await db.prepare(`SELECT * FROM analysis_runs WHERE id = ?1`).bind(id).first<RunRow>()
  return r ? toRun(r) : null
}

/** The oldest run still waiting to start (what BloodHound calls the pending analysis request), or null. */
export async function pendingRun(db: D1Database): Promise<RunRecord | null> {
  const r = await db.prepare(`SELECT * FROM analysis_runs WHERE status = 'pending' ORDER BY id LIMIT 1`).first<RunRow>()
  return r ? toRun(r) : null
}

export async function listRuns(db: D1Database, skip: number, limit: number): Promise<{ count: number; runs: RunRecord[] }> {
  const [c, rows] = await db.batch([
    db.prepare(`SELECT COUNT(*) AS n FROM analysis_runs`),
    db.prepare(`SELECT * FROM analysis_runs ORDER BY id DESC LIMIT ?1 OFFSET ?2`).bind(limit, skip),
  ])
  return { count: (c.results[0] as { n: number }).n, runs: (rows.results as RunRow[]).map(toRun) }
}

/**
 * Claims the next attempt: the running run again if there is one (its previous attempt died), else the
 * oldest pending run. Marks it running, counts the attempt. Null when there is nothing to do.
 */
export async function claimRun(db: D1Database, now: string): Promise<RunRecord | null> {
  const r = await db
    .prepare(
      `UPDATE analysis_runs SET status = 'running', started_at = COALESCE(started_at, ?1), attempt_started_at = ?1, attempts = attempts + 1
       WHERE id = COALESCE((SELECT id FROM analysis_runs WHERE status = 'running' ORDER BY id LIMIT 1),
                           (SELECT id FROM analysis_runs WHERE status = 'pending' ORDER BY id LIMIT 1))
       RETURNING *`,
    )
    .bind(now)
    .first<RunRow>()
  return r ? toRun(r) : null
}

/** Marks one particular run as started (tests and tools that execute a run without the Analyzer). */
export async function startAttempt(db: D1Database, id: number, now: string): Promise<RunRecord | null> {
  const r = await db
    .prepare(
      `UPDATE analysis_runs SET status = 'running', started_at = COALESCE(started_at, ?2), attempt_started_at = ?2, attempts = attempts + 1
       WHERE id = ?1 AND status IN ('pending', 'running') RETURNING *`,
    )
    .bind(id, now)
    .first<RunRow>()
  return r ? toRun(r) : null
}

/** Whether a run waits or runs (the Analyzer schedules another alarm while so). */
export async function hasRunWork(db: D1Database): Promise<boolean> {
  const r = await db.prepare(`SELECT EXISTS (SELECT 1 FROM analysis_runs WHERE status IN ('pending', 'running')) AS ok`).first<{ ok: number }>()
  return r?.ok === 1
}

export async function recordAttemptError(db: D1Database, id: number, error: string): Promise<void> {
  await db.prepare(`UPDATE analysis_runs SET error = ?2 WHERE id = ?1`).bind(id, error.slice(0, 2000)).run()
}

export async function failRun(db: D1Database, id: number, error: string, now: string): Promise<void> {
  await db.batch([
    db
      .prepare(`UPDATE analysis_runs SET status = 'failed', error = ?2, completed_at = ?3 WHERE id = ?1 AND status IN ('pending', 'running')`)
      .bind(id, error.slice(0, 2000), now),
    db.prepare(`DELETE FROM analysis_staged_findings WHERE run_id = ?1`).bind(id),
    db.prepare(`DELETE FROM analysis_staged_sparklines WHERE run_id = ?1`).bind(id),
  ])
}

/** The newest commit time of any complete run (commit times are kept strictly increasing). */
export async function lastCompletedAt(db: D1Database): Promise<string | null> {
  const r = await db.prepare(`SELECT MAX(completed_at) AS t FROM analysis_runs WHERE status = 'complete'`).first<{ t: string | null }>()
  return r?.t ?? null
}

// ---- loader ------------------------------------------------------------------------------------------
//
// The graph reaches the isolate in packed pages: each page is ONE row whose columns are comma-separated
// integer lists (`group_concat`) and JSON string arrays (`json_group_array`), all built in one aggregate
// pass over the same rows, so item i of every column belongs to the same node or edge. A row per node or
// edge would cost a JavaScript array and its values per row (plus the binding's own conversion): at
// 1 M edges that, not the analysis, was the isolate's peak. src/findings/packed.ts parses the columns.
// Keep a page's text to a few hundred KB (D1 limits a value to 2 MB): see NODE_PAGE / EDGE_PAGE in run.ts.

/** One page of nodes, column by column; item i of every list is the same node. */
export interface NodePage {
  /** nodes in the page (0 when the graph has no node after the cursor) */
  count: number
  /** largest nodes.id of the page: the next page's cursor */
  lastId: number
  /** comma-separated nodes.id */
  ids: string | null
  /** comma-separated fact bits (NODE_FACT_* in packed.ts: 1 Tier Zero flag, 2 enabled, 4 hasspn, 8 dontreqpreauth) */
  facts: string | null
  /** JSON arrays of `count` strings (or nulls) */
  objectids: string | null
  kinds: string | null
  kindLists: string | null
  environmentIds: string | null
  /** properties.system_tags when a string, array or object (the latter two as their JSON text), else null */
  systemTags: string | null
  /** properties.templateid when a string, else null */
  templateIds: string | null
  environmentKinds: string | null
}

/**
 * One page of nodes after `afterId`, with only the facts the rules need: properties are reduced in SQL,
 * so a node's (possibly large) property object never reaches the isolate. The reductions are exactly what
 * the rules would conclude from the raw values (src/assetgroups/tierzero.ts): `x = 1` is `isTrue` (JSON true
 * and the number 1, never the string "1"); system_tags is kept only where `hasTierZeroTag` can say yes (a
 * string, or an array or object as its JSON text, `'' ||` dropping SQLite's JSON subtype so that
 * json_group_array quotes it instead of nesting it); templateid only where it is a string.
 */
export async function loadNodesPage(db: D1Database, afterId: number, limit: number): Promise<NodePage> {
  const rows = await db
    .prepare(
      `WITH page AS (
         SELECT id, objectid, kind, kinds, environment_id, environment_kind,
                (IFNULL(json_extract(properties, '$.isTierZero') = 1, 0) OR IFNULL(json_extract(properties, '$.istierzero') = 1, 0))
                  | (IFNULL(json_extract(properties, '$.enabled') = 1, 0) << 1)
                  | (IFNULL(json_extract(properties, '$.hasspn') = 1, 0) << 2)
                  | (IFNULL(json_extract(properties, '$.dontreqpreauth') = 1, 0) << 3) AS facts,
                CASE json_type(properties, '$.system_tags')
                  WHEN 'text' THEN json_extract(properties, '$.system_tags')
                  WHEN 'array' THEN '' || json_extract(properties, '$.system_tags')
                  WHEN 'object' THEN '' || json_extract(properties, '$.system_tags')
                END AS system_tags,
                CASE json_type(properties, '$.templateid') WHEN 'text' THEN json_extract(properties, '$.templateid') END AS templateid
         FROM nodes WHERE id > ?1 ORDER BY id LIMIT ?2)
       SELECT COUNT(*), MAX(id), group_concat(id, ','), group_concat(facts, ','), json_group_array(objectid),
              json_group_array(kind), json_group_array(kinds), json_group_array(environment_id),
              json_group_array(system_tags), json_group_array(templateid), json_group_array(environment_kind)
       FROM page`,
    )
    .bind(afterId, limit)
    .raw<[number, number | null, ...(string | null)[]]>()
  const r = rows[0]
  return {
    count: r[0],
    lastId: r[1] ?? afterId,
    ids: r[2],
    facts: r[3],
    objectids: r[4],
    kinds: r[5],
    kindLists: r[6],
    environmentIds: r[7],
    systemTags: r[8],
    templateIds: r[9],
    environmentKinds: r[10],
  }
}

/** One page of edges, packed: `triples` is "start_id,end_id,k,start_id,end_id,k,…" (k indexes the kinds list). */
export interface EdgePage {
  /** edges in the page */
  count: number
  /** largest edges.id of the page: the next page's cursor */
  lastId: number
  triples: string | null
}

/**
 * One page of edges after `afterId`, limited to the given kinds (one JSON array parameter); each edge's kind
 * comes back as its index in that array. The edges table is walked in id order (the kinds are a small
 * materialized table joined per edge; CROSS JOIN keeps the edges outermost).
 */
export async function loadEdgesPage(db: D1Database, afterId: number, limit: number, kindsJson: string): Promise<EdgePage> {
  const rows = await db
    .prepare(
      `WITH k(i, name) AS MATERIALIZED (SELECT key, value FROM json_each(?3)),
       page AS (SELECT e.id, e.start_id, e.end_id, k.i FROM edges e CROSS JOIN k ON k.name = e.kind
                WHERE e.id > ?1 ORDER BY e.id LIMIT ?2)
       SELECT COUNT(*), MAX(id), group_concat(start_id || ',' || end_id || ',' || i, ',') FROM page`,
    )
    .bind(afterId, limit, kindsJson)
    .raw<[number, number | null, string | null]>()
  const r = rows[0]
  return { count: r[0], lastId: r[1] ?? afterId, triples: r[2] }
}

export async function loadOpenFindingsPage(db: D1Database, afterId: number, limit: number): Promise<OpenFinding[]> {
  const { results } = await db
    .prepare(
      `SELECT id, finding, environment_id, from_objectid, to_objectid, impact_count, exposure_count, principal_count
       FROM findings WHERE deleted_at IS NULL AND id > ?1 ORDER BY id LIMIT ?2`,
    )
    .bind(afterId, limit)
    .all<{
      id: number
      finding: string
      environment_id: string
      from_objectid: string
      to_objectid: string
      impact_count: number
      exposure_count: number
      principal_count: number
    }>()
  return results.map((r) => ({
    id: r.id,
    finding: r.finding,
    environmentId: r.environment_id,
    from: r.from_objectid,
    to: r.to_objectid,
    impactCount: r.impact_count,
    exposureCount: r.exposure_count,
    principalCount: r.principal_count,
  }))
}

/** Every (environment, type) that has or ever had a finding. */
export async function loadHistoricPairs(db: D1Database): Promise<{ environmentId: string; finding: string }[]> {
  const { results } = await db
    .prepare(`SELECT DISTINCT environment_id, finding FROM findings`)
    .all<{ environment_id: string; finding: string }>()
  return results.map((r) => ({ environmentId: r.environment_id, finding: r.finding }))
}

// ---- staging -----------------------------------------------------------------------------------------

/** Largest JSON text passed as one parameter (D1: 100 KB per statement; stay well below). */
export const MAX_JSON_CHARS = 90_000
/** Statements per staging batch. */
const STATEMENTS_PER_BATCH = 50

/** Splits rows into JSON arrays of at most `maxChars` characters each. Pure; exported for tests. */
export function chunkJson(rows: unknown[], maxChars = MAX_JSON_CHARS): string[] {
  const out: string[] = []
  let parts: string[] = []
  let size = 2
  for (const row of rows) {
    const s = JSON.stringify(row)
    if (parts.length > 0 && size + s.length + 1 > maxChars) {
      out.push(`[${parts.join(',')}]`)
      parts = []
      size = 2
    }
    parts.push(s)
    size += s.length + 1
  }
  if (parts.length > 0) out.push(`[${parts.join(',')}]`)
  return out
}

async function runInBatches(db: D1Database, stmts: D1PreparedStatement[]): Promise<void> {
  for (let i = 0; i < stmts.length; i += STATEMENTS_PER_BATCH) await db.batch(stmts.slice(i, i + STATEMENTS_PER_BATCH))
}

/** Deletes every staging row (only one run is ever in progress; leftovers come from interrupted attempts). */
export async function clearStaging(db: D1Database): Promise<void> {
  await db.batch([db.prepare(`DELETE FROM analysis_staged_findings`), db.prepare(`DELETE FROM analysis_staged_sparklines`)])
}

function stagedRow(op: 'insert' | 'update', id: number | null, r: FindingResult): unknown[] {
  return [
    op,
    id,
    r.finding,
    r.shape,
    r.environmentId,
    r.from,
    r.to,
    r.relKind,
    r.impactCount,
    r.exposureCount,
    r.principalCount,
    r.impactPercentage,
    r.exposurePercentage,
    r.severity,
  ]
}

export async function stagePlan(db: D1Database, runId: number, plan: ReconcilePlan, sparklines: SparklineResult[]): Promise<void> {
  const rows: unknown[] = [
    ...plan.inserts.map((r) => stagedRow('insert', null, r)),
    ...plan.updates.map((u) => stagedRow('update', u.id, u.result)),
    ...plan.closes.map((id) => ['close', id]),
  ]
  const stmts: D1PreparedStatement[] = []
  for (const json of chunkJson(rows)) {
    stmts.push(
      db
        .prepare(
          `INSERT INTO analysis_staged_findings (run_id, op, finding_id, finding, shape, environment_id, from_objectid,
             to_objectid, rel_kind, impact_count, exposure_count, principal_count, impact_percentage, exposure_percentage, severity)
           SELECT ?1, json_extract(j.value, '$[0]'), json_extract(j.value, '$[1]'), json_extract(j.value, '$[2]'),
             json_extract(j.value, '$[3]'), json_extract(j.value, '$[4]'), json_extract(j.value, '$[5]'),
             json_extract(j.value, '$[6]'), json_extract(j.value, '$[7]'), json_extract(j.value, '$[8]'),
             json_extract(j.value, '$[9]'), json_extract(j.value, '$[10]'), json_extract(j.value, '$[11]'),
             json_extract(j.value, '$[12]'), json_extract(j.value, '$[13]')
           FROM json_each(?2) j ORDER BY j.key`,
        )
        .bind(runId, json),
    )
  }
  const sparkRows = sparklines.map((s) => [
    s.environmentId,
    s.finding,
    s.findingCount,
    s.impactedAssetCount,
    s.impactCount,
    s.exposureCount,
    s.principalCount,
    s.compositeRisk,
  ])
  for (const json of chunkJson(sparkRows)) {
    stmts.push(
      db
        .prepare(
          `INSERT INTO analysis_staged_sparklines (run_id, environment_id, finding, finding_count, impacted_asset_count,
             impact_count, exposure_count, principal_count, composite_risk)
           SELECT ?1, json_extract(j.value, '$[0]'), json_extract(j.value, '$[1]'), json_extract(j.value, '$[2]'),
             json_extract(j.value, '$[3]'), json_extract(j.value, '$[4]'), json_extract(j.value, '$[5]'),
             json_extract(j.value, '$[6]'), json_extract(j.value, '$[7]')
           FROM json_each(?2) j ORDER BY j.key`,
        )
        .bind(runId, json),
    )
  }
  await runInBatches(db, stmts)
}

export interface CommitCounts {
  stats: AnalysisStats
  plan: { inserts: number; updates: number; closes: number; unchanged: number }
  durationMs: number
  /** one posture row per environment, appended in the commit batch */
  posture?: PostureRow[]
}

/**
 * The one atomic step: applies the staged plan, appends the sparkline rows, marks the run complete and
 * clears the staging tables — a single `db.batch`, so it all happens or none of it does.
 */
export async function commitRun(
  db: D1Database,
  runId: number,
  now: string,
  c: CommitCounts,
  memberChunks?: string[],
  /** further statements of the run's commit (the selectors' evaluation: src/assetgroups/selectors.store.ts) */
  extra: D1PreparedStatement[] = [],
): Promise<void> {
  const posture = chunkJson((c.posture ?? []).map((p) => [p.domainSid, p.exposureIndex, p.tierZeroCount, p.criticalRiskCount])).map((json) =>
    db
      .prepare(
        `INSERT INTO posture_stats (run_id, domain_sid, exposure_index, tier_zero_count, critical_risk_count, created_at, updated_at, id)
         SELECT ?1, json_extract(j.value, '$[0]'), json_extract(j.value, '$[1]'), json_extract(j.value, '$[2]'),
           json_extract(j.value, '$[3]'), ?2, ?2, ${NEW_ID_SQL}
         FROM json_each(?3) j ORDER BY j.key`,
      )
      .bind(runId, now, json),
  )
  // a posture row's random id that meets an existing one aborts the commit (nothing written): it runs again
  await withIdRetry(() => db.batch([
    ...posture,
    // asset group members (src/assetgroups/members.ts); omitted by callers that leave them as they are
    ...(memberChunks ? replaceMembersStatements(db, memberChunks) : []),
    ...extra,
    db
      .prepare(
        `UPDATE findings SET impact_count = s.impact_count, exposure_count = s.exposure_count,
           principal_count = s.principal_count, impact_percentage = s.impact_percentage,
           exposure_percentage = s.exposure_percentage, severity = s.severity, updated_at = ?2, updated_run_id = ?1
         FROM analysis_staged_findings s
         WHERE s.run_id = ?1 AND s.op = 'update' AND findings.id = s.finding_id AND findings.deleted_at IS NULL`,
      )
      .bind(runId, now),
    db
      .prepare(
        `UPDATE findings SET deleted_at = ?2, closed_run_id = ?1
         WHERE deleted_at IS NULL AND id IN (SELECT finding_id FROM analysis_staged_findings WHERE run_id = ?1 AND op = 'close')`,
      )
      .bind(runId, now),
    db
      .prepare(
        `INSERT INTO findings (finding, shape, environment_id, from_objectid, to_objectid, rel_kind, from_kind, from_name,
           to_kind, to_name, impact_count, exposure_count, principal_count, impact_percentage, exposure_percentage, severity,
           created_at, updated_at, created_run_id, updated_run_id)
         SELECT s.finding, s.shape, s.environment_id, s.from_objectid, s.to_objectid, s.rel_kind, fn.kind, fn.name,
           tn.kind, tn.name, s.impact_count, s.exposure_count, s.principal_count, s.impact_percentage, s.exposure_percentage,
           s.severity, ?2, ?2, ?1, ?1
         FROM analysis_staged_findings s
         LEFT JOIN nodes fn ON fn.objectid = s.from_objectid
         LEFT JOIN nodes tn ON s.to_objectid <> '' AND tn.objectid = s.to_objectid
         WHERE s.run_id = ?1 AND s.op = 'insert'
         ORDER BY s.rowid`,
      )
      .bind(runId, now),
    db
      .prepare(
        `INSERT INTO finding_sparklines (run_id, environment_id, finding, finding_count, impacted_asset_count, impact_count,
           exposure_count, principal_count, composite_risk, created_at, updated_at)
         SELECT ?1, environment_id, finding, finding_count, impacted_asset_count, impact_count, exposure_count,
           principal_count, composite_risk, ?2, ?2
         FROM analysis_staged_sparklines WHERE run_id = ?1 ORDER BY rowid`,
      )
      .bind(runId, now),
    db
      .prepare(
        `UPDATE analysis_runs SET status = 'complete', completed_at = ?2, error = NULL, node_count = ?3, edge_count = ?4,
           traversable_edge_count = ?5, environment_count = ?6, principal_count = ?7, finding_count = ?8, new_count = ?9,
           changed_count = ?10, closed_count = ?11, unchanged_count = ?12, duration_ms = ?13
         WHERE id = ?1`,
      )
      .bind(
        runId,
        now,
        c.stats.nodes,
        c.stats.edges,
        c.stats.traversableEdges,
        c.stats.environments,
        c.stats.principals,
        c.stats.findings,
        c.plan.inserts,
        c.plan.updates,
        c.plan.closes,
        c.plan.unchanged,
        c.durationMs,
      ),
    db.prepare(`DELETE FROM analysis_staged_findings WHERE run_id = ?1`).bind(runId),
    db.prepare(`DELETE FROM analysis_staged_sparklines WHERE run_id = ?1`).bind(runId),
  ]))
}
