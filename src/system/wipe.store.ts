/**
 * SQL of POST /api/v2/clear-database (BloodHound's database wipe; docs/graph.md "Clearing collected data").
 *
 * The request records what to delete and answers; the graph is deleted off the request path by the Analyzer
 * object (src/findings/analyzer.do.ts), which works through `database_wipes` before it claims an analysis run,
 * so the run the request also recorded analyses what is left. Why chunks, and why they are safe:
 *
 * - Workers and D1 bound what one invocation and one statement may do; a graph of millions of edges cannot go
 *   in one batch. The nodes are taken in windows of NODE_WINDOW ids (keyset on `nodes.id`, the cursor stored in
 *   the wipe's row). A window's edges go first, EDGE_CHUNK at a time (a node with 100 000 edges is many
 *   statements); then ONE batch deletes the edges still touching the window's nodes (ones written meanwhile),
 *   the nodes, and moves the cursor. An edge is therefore never left pointing at a deleted node: edges are
 *   deleted before or together with their ends, never after.
 * - Idempotent and resumable: every statement deletes what matches, so running a chunk twice deletes nothing
 *   more; the cursor moves only in the batch that deletes the window's nodes. An interrupted attempt (evicted
 *   object, failed statement) is retried by the alarm from the cursor.
 * - Relationship kinds (`deleteRelationships`) are deleted in windows of EDGE_WINDOW edge ids, each one batch
 *   with its cursor.
 */
import { deleteDataQualityStatements } from '../findings/dataquality.store'
import { auditedBatch } from '../audit/audit.store'
import type { AuditWrite } from '../audit/audit'
import { runRequestStatements } from '../findings/analysis.store'
import { JOB_STATUS } from '../graph/jobs.store'

/** nodes per window: one batch deletes them (their ids travel as one JSON parameter, ~18 characters each) */
export const NODE_WINDOW = 1_000
/** edges per DELETE statement when clearing a window's edges */
export const EDGE_CHUNK = 5_000
/** edge ids per window of a relationship-kind deletion */
export const EDGE_WINDOW = 20_000

export interface WipeRequest {
  requestedBy: string
  now: string
  deleteAll: boolean
  deleteSourceless: boolean
  sourceKinds: string[]
  /** every source kind name (GET /api/v2/graphs/source-kinds): a "sourceless" node carries none of them */
  knownSourceKinds: string[]
  relationships: string[]
  /** asset group ids whose custom (non-default) selectors go */
  selectorGroups: number[]
  fileIngestHistory: boolean
  /** every data quality row (both platforms; src/findings/dataquality.store.ts) */
  dataQualityHistory: boolean
}

export interface WipeRecorded {
  wipeId: number | null
  analysisRequested: boolean
  selectorsDeleted: number
  ingestJobsDeleted: number
}

export const wantsGraphWipe = (r: Pick<WipeRequest, 'deleteAll' | 'deleteSourceless' | 'sourceKinds' | 'relationships'>) =>
  r.deleteAll || r.deleteSourceless || r.sourceKinds.length > 0 || r.relationships.length > 0

/**
 * Records the request in ONE batch with its audit row: the wipe's row (deleted later, in chunks), the custom
 * selectors of the named asset groups (their seeds, picks and rule evaluations), the file-ingest history of
 * ended jobs (a running job keeps its row: an upload in flight must be able to end), and the analysis run that
 * follows (as BloodHound requests one after deleting graph data or selectors).
 */
export async function recordWipe(db: D1Database, r: WipeRequest, audit: AuditWrite): Promise<WipeRecorded> {
  const s: D1PreparedStatement[] = []
  const graph = wantsGraphWipe(r)
  let wipeAt = -1
  if (graph) {
    wipeAt = s.length
    s.push(
      db
        .prepare(
          `INSERT INTO database_wipes (requested_by, requested_at, delete_all, delete_sourceless, source_kinds, known_source_kinds, relationships)
           VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) RETURNING id`,
        )
        .bind(
          r.requestedBy,
          r.now,
          r.deleteAll ? 1 : 0,
          r.deleteSourceless ? 1 : 0,
          JSON.stringify(r.sourceKinds),
          JSON.stringify(r.knownSourceKinds),
          JSON.stringify(r.relationships),
        ),
    )
  }
  let selectorsAt = -1
  if (r.selectorGroups.length > 0) {
    const custom = `(SELECT id FROM asset_group_tag_selectors WHERE is_default = 0 AND asset_group_id IN (SELECT value FROM json_each(?1)))`
    const groups = JSON.stringify(r.selectorGroups)
    s.push(
      db.prepare(`DELETE FROM asset_group_rule_selections WHERE seed_id IN (SELECT id FROM asset_group_tag_selector_seeds WHERE selector_id IN ${custom})`).bind(groups),
      db.prepare(`DELETE FROM asset_group_rule_scopes WHERE selector_id IN ${custom}`).bind(groups),
      db.prepare(`DELETE FROM asset_group_tag_selector_nodes WHERE selector_id IN ${custom}`).bind(groups),
      db.prepare(`DELETE FROM asset_group_tag_selector_seeds WHERE selector_id IN ${custom}`).bind(groups),
    )
    selectorsAt = s.length
    s.push(db.prepare(`DELETE FROM asset_group_tag_selectors WHERE id IN ${custom}`).bind(groups))
  }
  let jobsAt = -1
  if (r.fileIngestHistory) {
    const ended = `(SELECT id FROM ingest_jobs WHERE status != ${JOB_STATUS.running})`
    s.push(db.prepare(`DELETE FROM ingest_job_environments WHERE job_id IN ${ended}`))
    s.push(db.prepare(`DELETE FROM ingest_job_tasks WHERE job_id IN ${ended}`))
    jobsAt = s.length
    s.push(db.prepare(`DELETE FROM ingest_jobs WHERE status != ${JOB_STATUS.running}`))
  }
  if (r.dataQualityHistory) s.push(...deleteDataQualityStatements(db))
  const analysis = graph || r.selectorGroups.length > 0
  if (analysis) s.push(...runRequestStatements(db, 'clear-database', r.now))
  const res = await auditedBatch(db, s, audit, graph ? { computed: { wipe_id: 'SELECT max(id) FROM database_wipes' } } : {})
  return {
    wipeId: wipeAt >= 0 ? ((res[wipeAt].results[0] as { id: number } | undefined)?.id ?? null) : null,
    analysisRequested: analysis,
    selectorsDeleted: selectorsAt >= 0 ? res[selectorsAt].meta.changes : 0,
    ingestJobsDeleted: jobsAt >= 0 ? res[jobsAt].meta.changes : 0,
  }
}

// ---- the background part (Analyzer object) --------------------------------------------------------------

export interface WipeRow {
  id: number
  delete_all: number
  delete_sourceless: number
  source_kinds: string
  known_source_kinds: string
  relationships: string
  status: 'pending' | 'running' | 'complete' | 'failed'
  phase: 'nodes' | 'edges' | 'done'
  node_cursor: number
  edge_cursor: number
  nodes_deleted: number
  edges_deleted: number
  attempts: number
  error: string | null
}

/** The oldest wipe not finished, or null. */
export async function nextWipe(db: D1Database): Promise<WipeRow | null> {
  return db.prepare(`SELECT * FROM database_wipes WHERE status IN ('pending', 'running') ORDER BY id LIMIT 1`).first<WipeRow>()
}

export async function hasWipeWork(db: D1Database): Promise<boolean> {
  const r = await db.prepare(`SELECT EXISTS (SELECT 1 FROM database_wipes WHERE status IN ('pending', 'running')) AS ok`).first<{ ok: number }>()
  return r?.ok === 1
}

export async function startWipe(db: D1Database, id: number, now: string): Promise<void> {
  await db.prepare(`UPDATE database_wipes SET status = 'running', started_at = COALESCE(started_at, ?2) WHERE id = ?1 AND status = 'pending'`).bind(id, now).run()
}

export async function recordWipeError(db: D1Database, id: number, error: string, fail: boolean, now: string): Promise<void> {
  await db
    .prepare(
      `UPDATE database_wipes SET attempts = attempts + 1, error = ?2,
         status = CASE WHEN ?3 = 1 THEN 'failed' ELSE status END, completed_at = CASE WHEN ?3 = 1 THEN ?4 ELSE completed_at END
       WHERE id = ?1`,
    )
    .bind(id, error.slice(0, 2000), fail ? 1 : 0, now)
    .run()
}

/**
 * The nodes a wipe deletes: every node, or those carrying one of its source kinds, or (sourceless) those
 * carrying none of the source kinds known when it was requested. ?3 delete_all, ?4 delete_sourceless, ?5 source
 * kinds (JSON), ?6 the known source kinds (JSON).
 */
const NODE_MATCH = `(?3 = 1
  OR (?4 = 1 AND NOT EXISTS (SELECT 1 FROM json_each(n.kinds) k WHERE k.value IN (SELECT value FROM json_each(?6))))
  OR EXISTS (SELECT 1 FROM json_each(n.kinds) k WHERE k.value IN (SELECT value FROM json_each(?5))))`

export interface StepResult {
  /** false when the wipe finished (its row is complete) */
  more: boolean
}

const deletesNodes = (w: WipeRow) => w.delete_all === 1 || w.delete_sourceless === 1 || w.source_kinds !== '[]'

/** One chunk of the wipe: a window of nodes, or a window of edges, or the finish. Safe to repeat. */
export async function wipeStep(db: D1Database, w: WipeRow, now: string): Promise<StepResult> {
  if (w.phase === 'nodes' && deletesNodes(w)) {
    const win = await db
      .prepare(`SELECT count(*) AS n, max(id) AS hi FROM (SELECT id FROM nodes WHERE id > ?1 ORDER BY id LIMIT ?2)`)
      .bind(w.node_cursor, NODE_WINDOW)
      .first<{ n: number; hi: number | null }>()
    if (!win || win.n === 0 || win.hi === null) {
      await db.prepare(`UPDATE database_wipes SET phase = 'edges' WHERE id = ?1 AND phase = 'nodes'`).bind(w.id).run()
      return { more: true }
    }
    const { results } = await db
      .prepare(`SELECT id FROM nodes n WHERE id > ?1 AND id <= ?2 AND ${NODE_MATCH}`)
      .bind(w.node_cursor, win.hi, w.delete_all, w.delete_sourceless, w.source_kinds, w.known_source_kinds)
      .all<{ id: number }>()
    const ids = JSON.stringify(results.map((r) => r.id))
    // the window's edges, a chunk at a time (each statement with its count, in its own small batch)
    for (const end of ['start_id', 'end_id'] as const) {
      for (;;) {
        const [del] = await db.batch([
          db.prepare(`DELETE FROM edges WHERE id IN (SELECT e.id FROM json_each(?1) j JOIN edges e ON e.${end} = j.value LIMIT ?2)`).bind(ids, EDGE_CHUNK),
          db.prepare(`UPDATE database_wipes SET edges_deleted = edges_deleted + changes() WHERE id = ?1`).bind(w.id),
        ])
        if (del.meta.changes < EDGE_CHUNK) break
      }
    }
    // the nodes, with any edge written to them meanwhile, and the cursor: one batch
    await db.batch([
      db.prepare(`DELETE FROM edges WHERE start_id IN (SELECT value FROM json_each(?1)) OR end_id IN (SELECT value FROM json_each(?1))`).bind(ids),
      db.prepare(`UPDATE database_wipes SET edges_deleted = edges_deleted + changes() WHERE id = ?1`).bind(w.id),
      db.prepare(`DELETE FROM nodes WHERE id IN (SELECT value FROM json_each(?1))`).bind(ids),
      db.prepare(`UPDATE database_wipes SET nodes_deleted = nodes_deleted + changes(), node_cursor = ?2 WHERE id = ?1`).bind(w.id, win.hi),
    ])
    return { more: true }
  }
  if (w.phase !== 'done' && w.relationships !== '[]') {
    const win = await db
      .prepare(`SELECT count(*) AS n, max(id) AS hi FROM (SELECT id FROM edges WHERE id > ?1 ORDER BY id LIMIT ?2)`)
      .bind(w.edge_cursor, EDGE_WINDOW)
      .first<{ n: number; hi: number | null }>()
    if (win && win.n > 0 && win.hi !== null) {
      await db.batch([
        db.prepare(`DELETE FROM edges WHERE id > ?1 AND id <= ?2 AND kind IN (SELECT value FROM json_each(?3))`).bind(w.edge_cursor, win.hi, w.relationships),
        db.prepare(`UPDATE database_wipes SET edges_deleted = edges_deleted + changes(), edge_cursor = ?2, phase = 'edges' WHERE id = ?1`).bind(w.id, win.hi),
      ])
      return { more: true }
    }
  }
  await db.prepare(`UPDATE database_wipes SET status = 'complete', phase = 'done', completed_at = ?2 WHERE id = ?1`).bind(w.id, now).run()
  return { more: false }
}

/** Wipes recorded, newest first (tests and the datapipe status). */
export async function getWipe(db: D1Database, id: number): Promise<WipeRow | null> {
  return db.prepare(`SELECT * FROM database_wipes WHERE id = ?1`).bind(id).first<WipeRow>()
}
