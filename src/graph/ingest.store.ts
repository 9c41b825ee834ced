/**
 * SQL for writing graph data: an upload is staged, then committed in one batch.
 *
 *   stage   `stageChunk`: each ≤ 80 KB JSON array of node or edge rows (src/graph/upload.ts JsonArrayChunker)
 *           becomes one row of `ingest_staging`, a few per round trip. Nothing readers see changes, and the
 *           isolate never holds more than one batch of chunks.
 *   commit  `commitUpload`: ONE db.batch (one D1 transaction) upserts every staged node, records the edges
 *           whose ends match no single node, upserts the others, updates the job and deletes the staging
 *           rows. A database failure at any point before or during it leaves the graph and the job as they
 *           were: a file is written completely or not at all.
 *
 * Every staged array is expanded with json_each in SQL, so no statement comes near D1's 100 bound
 * parameters or 100 KB, and each step is one set-based statement over the whole upload.
 *
 * Upserts only touch a row when something actually changes (the DO UPDATE ... WHERE clause), so
 * ingesting the same file twice changes nothing, `updated_at` included.
 *
 * Counting changes: SQLite's `changes()` is the number of rows the most recently completed INSERT,
 * UPDATE or DELETE on the connection inserted or changed, NOT counting rows written by triggers (the
 * FTS triggers on `nodes`) and not counting conflicting rows the upsert's WHERE skipped. A batch runs
 * its statements in order on one connection, so `SELECT changes()` (and `changes()` inside the job
 * UPDATE that follows it; a SELECT does not reset it) reads the count of the upsert just before. Tested
 * in test/integration/graph-ingest*.test.ts; D1's `meta.changes` cannot be used (it counts trigger rows).
 * This replaces `RETURNING` one row per changed element, which cost a JavaScript object per edge.
 */
import { appendErrors, MAX_JOB_ERRORS } from './jobs.store'

/** Environment id from a properties JSON expression: environmentid, then domainsid, then tenantid. */
function envFrom(p: string): string {
  const pick = (key: string) => `nullif(CASE WHEN json_type(${p}, '$.${key}') = 'text' THEN json_extract(${p}, '$.${key}') END, '')`
  return `coalesce(${pick('environmentid')}, ${pick('domainsid')}, ${pick('tenantid')})`
}

function nameFrom(p: string): string {
  return `CASE WHEN json_type(${p}, '$.name') = 'text' THEN json_extract(${p}, '$.name') END`
}

const MERGED = 'json_patch(nodes.properties, excluded.properties)'
const KINDS_UNION = `(SELECT json_group_array(v) FROM (
    SELECT value AS v FROM json_each(excluded.kinds)
    UNION ALL
    SELECT value FROM json_each(nodes.kinds) WHERE value NOT IN (SELECT value FROM json_each(excluded.kinds))))`
const ENV_KIND = 'coalesce(excluded.environment_kind, nodes.environment_kind)'

/** Node row JSON fields, from staging: ?1 = upload id. Chunks in order, elements in order (later wins). */
const STAGED_NODES = `
  SELECT json_extract(j.value, '$.o') AS o, json_extract(j.value, '$.k') AS k, json_extract(j.value, '$.ks') AS ks,
         json_extract(j.value, '$.p') AS p, json_extract(j.value, '$.ek') AS ek
  FROM ingest_staging s, json_each(s.rows) AS j
  WHERE s.upload_id = ?1 AND s.part = 'n'
  ORDER BY s.seq, j.key`

/**
 * Every staged node (NodeRow {o, k, ks, p, ek}); ?2 = now.
 * New nodes are inserted; existing ones get kinds unioned (new first), properties merged
 * (json_patch), name and environment re-derived from the merged properties.
 */
const NODE_UPSERT = `
INSERT INTO nodes (objectid, kind, kinds, name, environment_id, environment_kind, properties, created_at, updated_at)
SELECT r.o, r.k, r.ks, ${nameFrom('r.p')}, CASE WHEN r.ek IS NOT NULL THEN r.o ELSE ${envFrom('r.p')} END, r.ek, r.p, ?2, ?2
FROM (${STAGED_NODES}) AS r
WHERE true
ON CONFLICT (objectid) DO UPDATE SET
  kind = excluded.kind,
  kinds = ${KINDS_UNION},
  properties = ${MERGED},
  name = ${nameFrom(MERGED)},
  environment_kind = ${ENV_KIND},
  environment_id = CASE WHEN ${ENV_KIND} IS NOT NULL THEN nodes.objectid ELSE ${envFrom(MERGED)} END,
  updated_at = excluded.updated_at
WHERE nodes.kind IS NOT excluded.kind
   OR nodes.kinds IS NOT ${KINDS_UNION}
   OR nodes.properties IS NOT ${MERGED}
   OR nodes.environment_kind IS NOT ${ENV_KIND}`

/**
 * The node an edge end refers to: its id; NULL when no node matches; -1 when several do (by name).
 * `v` value, `m` match_by ('id' | 'name'), `k` optional kind the node must have.
 */
function resolveEnd(v: string, m: string, k: string): string {
  const kind = `(${k} IS NULL OR EXISTS (SELECT 1 FROM json_each(n.kinds) WHERE value = ${k}))`
  return `CASE WHEN ${m} = 'name'
    THEN (SELECT CASE count(*) WHEN 0 THEN NULL WHEN 1 THEN min(x.id) ELSE -1 END
          FROM (SELECT n.id FROM nodes n WHERE n.name = ${v} COLLATE NOCASE AND n.name = ${v} AND ${kind} LIMIT 2) AS x)
    ELSE (SELECT n.id FROM nodes n WHERE n.objectid = ${v} AND ${kind}) END`
}

/**
 * Every staged edge (EdgeRow {i, s, sm, sk, t, tm, tk, k, p}) with its ends resolved: sid/tid = node id,
 * NULL (no match) or -1 (several by name). ?1 = upload id. `LIMIT -1` keeps SQLite from flattening this
 * subquery into the statement using it, which would evaluate the resolving subqueries once per reference.
 */
const RESOLVED_EDGES = `
  SELECT e.file, e.i, e.s, e.sm, e.sk, e.t, e.tm, e.tk, e.k, e.p,
         ${resolveEnd('e.s', 'e.sm', 'e.sk')} AS sid, ${resolveEnd('e.t', 'e.tm', 'e.tk')} AS tid
  FROM (SELECT s.seq, s.file, j.key AS ord, json_extract(j.value, '$.i') AS i,
               json_extract(j.value, '$.s') AS s, json_extract(j.value, '$.sm') AS sm, json_extract(j.value, '$.sk') AS sk,
               json_extract(j.value, '$.t') AS t, json_extract(j.value, '$.tm') AS tm, json_extract(j.value, '$.tk') AS tk,
               json_extract(j.value, '$.k') AS k, json_extract(j.value, '$.p') AS p
        FROM ingest_staging s, json_each(s.rows) AS j
        WHERE s.upload_id = ?1 AND s.part = 'e') AS e
  ORDER BY e.seq, e.ord
  LIMIT -1`

function unmatchedEnd(end: 'start' | 'end', id: string, v: string, m: string, k: string): string {
  return `CASE WHEN ${id} IS NULL OR ${id} < 0 THEN
      CASE WHEN ${id} IS NULL THEN 'edge ${end} not found: no node with ' ELSE 'edge ${end} is ambiguous: several nodes have ' END
      || CASE WHEN ${m} = 'name' THEN 'name' ELSE 'id' END || ' "' || ${v} || '"'
      || CASE WHEN ${k} IS NOT NULL THEN ' of kind ' || ${k} ELSE '' END
    END`
}

/** Records the staged edges that cannot be written, with the reason (see docs/graph.md). ?1 = upload id. */
const UNMATCHED_INSERT = `
INSERT INTO ingest_unmatched (upload_id, file, context, message)
SELECT ?1, r.file, 'graph.edges[' || r.i || ']',
       coalesce(r.sm1 || '; ' || r.tm1, r.sm1, r.tm1)
FROM (SELECT file, i, ${unmatchedEnd('start', 'sid', 's', 'sm', 'sk')} AS sm1, ${unmatchedEnd('end', 'tid', 't', 'tm', 'tk')} AS tm1
      FROM (${RESOLVED_EDGES})
      WHERE sid IS NULL OR sid < 0 OR tid IS NULL OR tid < 0) AS r
WHERE true`

/**
 * Every staged edge whose ends resolved to one node each, upserted by (start, kind, end); properties
 * merge (json_patch). ?1 = upload id, ?2 = now.
 */
const EDGE_UPSERT = `
INSERT INTO edges (start_id, end_id, kind, properties, created_at, updated_at)
SELECT r.sid, r.tid, r.k, r.p, ?2, ?2
FROM (${RESOLVED_EDGES}) AS r
WHERE r.sid > 0 AND r.tid > 0
ON CONFLICT (start_id, kind, end_id) DO UPDATE SET
  properties = json_patch(edges.properties, excluded.properties),
  updated_at = excluded.updated_at
WHERE edges.properties IS NOT json_patch(edges.properties, excluded.properties)`

export type StagePart = 'n' | 'e'

/** One chunk of rows into staging. */
export function stageChunk(db: D1Database, uploadId: string, part: StagePart, seq: number, file: string, rowsJson: string, now: string): D1PreparedStatement {
  return db
    .prepare(`INSERT INTO ingest_staging (upload_id, part, seq, file, created_at, rows) VALUES (?1, ?2, ?3, ?4, ?5, ?6)`)
    .bind(uploadId, part, seq, file, now, rowsJson)
}

export async function runStaging(db: D1Database, statements: D1PreparedStatement[]): Promise<void> {
  if (statements.length > 0) await db.batch(statements)
}

/** Deletes the staging rows of one upload (an upload that failed before its commit). */
export async function discardUpload(db: D1Database, uploadId: string): Promise<void> {
  await db.batch([
    db.prepare(`DELETE FROM ingest_staging WHERE upload_id = ?1`).bind(uploadId),
    db.prepare(`DELETE FROM ingest_unmatched WHERE upload_id = ?1`).bind(uploadId),
  ])
}

/** Deletes staging rows older than `before` (uploads interrupted so hard that they could not clean up). */
export async function purgeStaleStaging(db: D1Database, before: string): Promise<void> {
  await db.prepare(`DELETE FROM ingest_staging WHERE created_at < ?1`).bind(before).run()
}

export interface CommitInput {
  uploadId: string
  jobId: number
  /** node and edge elements received (validated) */
  nodes: number
  edges: number
  environments: string[]
  now: string
}

export interface CommitResult {
  nodesChanged: number
  edgesChanged: number
  unmatched: number
  /** the first MAX_JOB_ERRORS unmatched edges */
  errors: { file: string; context: string; message: string }[]
}

/** The first MAX_JOB_ERRORS unmatched edges of the upload as a JSON array of job error entries. */
const UNMATCHED_JSON = `(SELECT json_group_array(json_object('file', file, 'context', context, 'message', message))
  FROM (SELECT file, context, message FROM ingest_unmatched WHERE upload_id = ?1 ORDER BY id LIMIT ${MAX_JOB_ERRORS}))`

/**
 * Applies a staged upload and records it in its job, as one transaction. The order of the statements
 * matters: each `changes()` reads the statement just before it (see the top of this file).
 */
export async function commitUpload(db: D1Database, u: CommitInput): Promise<CommitResult> {
  const results = await db.batch([
    /* 0 */ db.prepare(NODE_UPSERT).bind(u.uploadId, u.now),
    /* 1 */ db.prepare(`SELECT changes() AS n`),
    /* 2 */ db
      .prepare(
        `UPDATE ingest_jobs SET nodes_changed = nodes_changed + changes(), total_files = total_files + 1,
           nodes_received = nodes_received + ?3, edges_received = edges_received + ?4, last_ingest = ?2, updated_at = ?2
         WHERE id = ?1`,
      )
      .bind(u.jobId, u.now, u.nodes, u.edges),
    /* 3 */ db.prepare(UNMATCHED_INSERT).bind(u.uploadId),
    /* 4 */ db.prepare(`SELECT changes() AS n`),
    /* 5 */ db
      .prepare(
        `UPDATE ingest_jobs SET unmatched_edges = unmatched_edges + changes(), error_count = error_count + changes(),
           ${appendErrors(UNMATCHED_JSON)}
         WHERE id = ?2`,
      )
      .bind(u.uploadId, u.jobId),
    /* 6 */ db.prepare(EDGE_UPSERT).bind(u.uploadId, u.now),
    /* 7 */ db.prepare(`SELECT changes() AS n`),
    /* 8 */ db.prepare(`UPDATE ingest_jobs SET edges_changed = edges_changed + changes() WHERE id = ?1`).bind(u.jobId),
    /* 9 */ db.prepare(`SELECT file, context, message FROM ingest_unmatched WHERE upload_id = ?1 ORDER BY id LIMIT ${MAX_JOB_ERRORS}`).bind(u.uploadId),
    /* 10 */ db.prepare(`DELETE FROM ingest_unmatched WHERE upload_id = ?1`).bind(u.uploadId),
    /* 11 */ db.prepare(`DELETE FROM ingest_staging WHERE upload_id = ?1`).bind(u.uploadId),
    /* 12 */ db
      .prepare(`INSERT OR IGNORE INTO ingest_job_environments (job_id, environment_id) SELECT ?1, value FROM json_each(?2)`)
      .bind(u.jobId, JSON.stringify(u.environments)),
  ])
  const n = (i: number) => (results[i].results[0] as { n: number }).n
  return {
    nodesChanged: n(1),
    unmatched: n(4),
    edgesChanged: n(7),
    errors: results[9].results as CommitResult['errors'],
  }
}
