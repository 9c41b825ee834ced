/**
 * SQL of the analysis: run records, the keyset-paged graph loader, staging and the atomic commit.
 * Reads of findings for the HTTP endpoints live in findings.store.ts.
 *
 * Atomicity: a run writes its whole reconciliation plan into the staging tables (many batches, invisible
 * to readers), then `commitRun` applies it with ONE `db.batch` — D1's unit of atomicity — which updates,
 * closes and inserts findings set-based from the staging rows, appends the sparkline rows, marks the run
 * complete and empties the staging tables. Readers therefore see either the previous run or this one.
 */
import type { NodeInput } from './graph'
import type { AnalysisStats, FindingResult, SparklineResult } from './engine'
import type { OpenFinding, ReconcilePlan } from './reconcile'

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
): Promise<{ run: RunRecord; liveAttemptSince: string | null }> {
  const res = await db.batch([
    db
      .prepare(`UPDATE analysis_runs SET reasons = json_insert(reasons, '$[#]', ?1) WHERE status = 'pending' AND json_array_length(reasons) < ?2`)
      .bind(reason, MAX_REASONS),
    db
      .prepare(
        `INSERT INTO analysis_runs (status, reasons, requested_at) SELECT 'pending', json_array(?1), ?2
         WHERE NOT EXISTS (SELECT 1 FROM analysis_runs WHERE status = 'pending')`,
      )
      .bind(reason, now),
    db.prepare(`SELECT * FROM analysis_runs WHERE status = 'pending'`),
    db.prepare(`SELECT attempt_started_at FROM analysis_runs WHERE status = 'running'`),
  ])
  const run = (res[2].results as RunRow[])[0]
  const running = (res[3].results as { attempt_started_at: string | null }[])[0]
  return { run: toRun(run), liveAttemptSince: running?.attempt_started_at ?? null }
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

type NodeRaw = [number, string, string, string, string | null, unknown, unknown, unknown, unknown, unknown, unknown, unknown, string | null]

function parseKinds(kinds: string, kind: string): string[] {
  try {
    const v = JSON.parse(kinds)
    if (Array.isArray(v)) {
      const out = v.filter((k): k is string => typeof k === 'string' && k !== '')
      if (out.length > 0) return out
    }
  } catch {
    /* fall back to the primary kind */
  }
  return [kind]
}

/**
 * One page of nodes after `afterId`, with only the facts the rules need: properties are reduced in SQL
 * (json_extract), so a node's (possibly large) property object never reaches the isolate.
 */
export async function loadNodesPage(db: D1Database, afterId: number, limit: number): Promise<NodeInput[]> {
  const rows = await db
    .prepare(
      `SELECT id, objectid, kind, kinds, environment_id,
              json_extract(properties, '$.system_tags'), json_extract(properties, '$.isTierZero'),
              json_extract(properties, '$.istierzero'), json_extract(properties, '$.enabled'),
              json_extract(properties, '$.hasspn'), json_extract(properties, '$.dontreqpreauth'),
              json_extract(properties, '$.templateid'), environment_kind
       FROM nodes WHERE id > ?1 ORDER BY id LIMIT ?2`,
    )
    .bind(afterId, limit)
    .raw<NodeRaw>()
  return rows.map((r) => ({
    id: r[0],
    objectid: r[1],
    kind: r[2],
    kinds: parseKinds(r[3], r[2]),
    environmentId: r[4] || null,
    systemTags: r[5],
    isTierZero: r[6] === 1 || r[6] === true ? r[6] : r[7],
    enabled: r[8],
    hasspn: r[9],
    dontreqpreauth: r[10],
    templateid: r[11],
    environmentKind: r[12],
  }))
}

/** One page of edges after `afterId`, limited to the given kinds (one JSON parameter). */
export async function loadEdgesPage(db: D1Database, afterId: number, limit: number, kindsJson: string): Promise<[number, number, number, string][]> {
  return db
    .prepare(
      `SELECT id, start_id, end_id, kind FROM edges
       WHERE id > ?1 AND kind IN (SELECT value FROM json_each(?3)) ORDER BY id LIMIT ?2`,
    )
    .bind(afterId, limit, kindsJson)
    .raw<[number, number, number, string]>()
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
}

/**
 * The one atomic step: applies the staged plan, appends the sparkline rows, marks the run complete and
 * clears the staging tables — a single `db.batch`, so it all happens or none of it does.
 */
export async function commitRun(db: D1Database, runId: number, now: string, c: CommitCounts): Promise<void> {
  await db.batch([
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
  ])
}
