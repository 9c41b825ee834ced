/**
 * SQL for writing graph data: an upload is staged, then committed in one batch.
 *
 *   stage   `stageChunk`: each ≤ 80 KB JSON array of node or edge rows (src/graph/upload.ts JsonArrayChunker)
 *           becomes one row of `ingest_staging`, a few per round trip. Nothing readers see changes, and the
 *           isolate holds at most STAGING_IN_FLIGHT batches of chunks (src/graph/ingest.ts).
 *   commit  `commitUpload`: ONE db.batch (one D1 transaction) upserts every staged node, records the edges
 *           whose ends match no single node, upserts the others, updates the job and deletes the staging
 *           rows (and those an interrupted upload left behind). A database failure at any point before or during it leaves the graph and the job as they
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
 * in test/integration/graph-ingest.test.ts and test/unit/graph-ingest-limits.test.ts; D1's `meta.changes`
 * cannot be used (it counts trigger rows).
 * This replaces `RETURNING` one row per changed element, which cost a JavaScript object per edge.
 */
import { appendErrors, MAX_JOB_ERRORS, type JobErrorEntry } from './jobs.store'

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
         json_extract(j.value, '$.p') AS p, json_extract(j.value, '$.ek') AS ek, json_extract(j.value, '$.ph') AS ph
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
WHERE r.ph IS NULL
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

/** Kinds of a placeholder that the existing node lacks, appended after the node's own (its own stay first). */
const PLACEHOLDER_KINDS = `(SELECT json_group_array(v) FROM (
    SELECT value AS v FROM json_each(nodes.kinds)
    UNION ALL
    SELECT value FROM json_each(excluded.kinds) WHERE value NOT IN (SELECT value FROM json_each(nodes.kinds))))`

/**
 * Placeholder nodes (collector payloads, src/collectors/payload.ts): an object a relationship refers to
 * that the upload does not describe. Runs after NODE_UPSERT, so a real node of the same upload always
 * wins. A new object id gets a node with the placeholder's kinds and no properties (BloodHound's
 * behaviour: the relationship is kept, the node is filled in when the object arrives). An existing node
 * keeps its kind, properties and environment; it only gains kinds it lacks, and a `Base`-only node
 * takes the placeholder's more specific primary kind. ?1 = upload id, ?2 = now.
 */
const PLACEHOLDER_UPSERT = `
INSERT INTO nodes (objectid, kind, kinds, name, environment_id, environment_kind, properties, created_at, updated_at)
SELECT r.o, r.k, r.ks, NULL, NULL, NULL, '{}', ?2, ?2
FROM (${STAGED_NODES}) AS r
WHERE r.ph IS NOT NULL
ON CONFLICT (objectid) DO UPDATE SET
  kind = CASE WHEN nodes.kind = 'Base' THEN excluded.kind ELSE nodes.kind END,
  kinds = ${PLACEHOLDER_KINDS},
  updated_at = excluded.updated_at
WHERE EXISTS (SELECT 1 FROM json_each(excluded.kinds) WHERE value NOT IN (SELECT value FROM json_each(nodes.kinds)))`

/**
 * The node an edge end refers to: its id; NULL when no node matches; -1 when several do (by name).
 * `v` value, `m` match_by ('id' | 'name'), `k` optional kind the node must have; `byId` is the alias of
 * the node LEFT JOINed on `objectid = v` (the common case, a join being much cheaper than a correlated
 * subquery per end).
 */
function resolveEnd(v: string, m: string, k: string, byId: string): string {
  const kind = (n: string) => `(${k} IS NULL OR EXISTS (SELECT 1 FROM json_each(${n}.kinds) WHERE value = ${k}))`
  return `CASE WHEN ${m} = 'name'
    THEN (SELECT CASE count(*) WHEN 0 THEN NULL WHEN 1 THEN min(x.id) ELSE -1 END
          FROM (SELECT n.id FROM nodes n WHERE n.name = ${v} COLLATE NOCASE AND n.name = ${v} AND ${kind('n')} LIMIT 2) AS x)
    WHEN ${byId}.id IS NOT NULL AND ${kind(byId)} THEN ${byId}.id END`
}

/**
 * A staged edge is a JSON array, short in the common case (both ends matched by id, no end kinds):
 *   [s, t, k, p, i]                    i ≥ 0: the edge's index in its file
 *   [s, t, k, p, -i-1, sm, sk, tm, tk] otherwise (a negative index says the four are present)
 * Every json_extract parses the element again, so the layout keeps the number of extractions per edge
 * small: the unmatched check reads s, t and the index; the upsert also k and p.
 */
export function stagedEdge(e: { s: string; sm: string; sk: string | null; t: string; tm: string; tk: string | null; k: string; p: unknown }, index: number): unknown[] {
  if (e.sm === 'id' && e.tm === 'id' && e.sk === null && e.tk === null) return [e.s, e.t, e.k, e.p, index]
  return [e.s, e.t, e.k, e.p, -index - 1, e.sm, e.sk, e.tm, e.tk]
}

/**
 * Every staged edge of upload ?1 with its ends resolved: sid/tid = node id, NULL (no match) or -1 (several
 * by name), and the columns asked for (from seq, ord, file, x, v: the index field and the element's JSON).
 * Rows come in the order of the staging index (upload, part, seq) and of each chunk's array: upload
 * order. `LIMIT -1` keeps SQLite from flattening a subquery into the statement using it, which would
 * evaluate each json_extract (the inner one) or resolution (the outer one) once per reference instead of
 * once per row.
 */
function resolvedEdges(columns: string[]): string {
  const extra = (n: number, dflt: string) => `CASE WHEN e.x < 0 THEN json_extract(e.v, '$[${n}]') ELSE ${dflt} END`
  return `
  SELECT ${columns.map((c) => `e.${c}`).join(', ')},
         ${resolveEnd('e.s', extra(5, "'id'"), extra(6, 'NULL'), 'ns')} AS sid, ${resolveEnd('e.t', extra(7, "'id'"), extra(8, 'NULL'), 'nt')} AS tid
  FROM (SELECT s.seq, s.file, j.key AS ord, j.value AS v,
               json_extract(j.value, '$[0]') AS s, json_extract(j.value, '$[1]') AS t, json_extract(j.value, '$[4]') AS x
        FROM ingest_staging s, json_each(s.rows) AS j
        WHERE s.upload_id = ?1 AND s.part = 'e'
        LIMIT -1) AS e
  LEFT JOIN nodes ns ON ns.objectid = e.s AND ${extra(5, "'id'")} = 'id'
  LEFT JOIN nodes nt ON nt.objectid = e.t AND ${extra(7, "'id'")} = 'id'
  LIMIT -1`
}

/** The reason an end did not resolve (NULL when it did); `m`/`k` are NULL for the short layout. */
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
SELECT ?1, r.file, 'graph.edges[' || CASE WHEN r.x < 0 THEN -r.x - 1 ELSE r.x END || ']',
       coalesce(r.sm1 || '; ' || r.tm1, r.sm1, r.tm1)
FROM (SELECT file, x,
             ${unmatchedEnd('start', 'sid', "json_extract(v, '$[0]')", "json_extract(v, '$[5]')", "json_extract(v, '$[6]')")} AS sm1,
             ${unmatchedEnd('end', 'tid', "json_extract(v, '$[1]')", "json_extract(v, '$[7]')", "json_extract(v, '$[8]')")} AS tm1
      FROM (${resolvedEdges(['file', 'x', 'v'])})
      WHERE sid IS NULL OR sid < 0 OR tid IS NULL OR tid < 0) AS r
WHERE true`

/**
 * Every staged edge whose ends resolved to one node each, upserted by (start, kind, end); properties
 * merge (json_patch). ?1 = upload id, ?2 = now.
 */
const EDGE_UPSERT = `
INSERT INTO edges (start_id, end_id, kind, properties, created_at, updated_at)
SELECT r.sid, r.tid, json_extract(r.v, '$[2]'), json_extract(r.v, '$[3]'), ?2, ?2
FROM (${resolvedEdges(['seq', 'ord', 'v'])}) AS r
WHERE r.sid > 0 AND r.tid > 0
ORDER BY 1, 3, 2, r.seq, r.ord
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

export interface CommitInput {
  uploadId: string
  jobId: number
  /** node and edge elements received (validated) */
  nodes: number
  edges: number
  environments: string[]
  now: string
  /** staging rows created before this belong to uploads that could not clean up: deleted too */
  staleBefore: string
  /** the upload staged placeholder node rows (collector payloads): PLACEHOLDER_UPSERT runs */
  placeholders?: boolean
}

export interface CommitResult {
  nodesChanged: number
  edgesChanged: number
  unmatched: number
  /** the first MAX_JOB_ERRORS unmatched edges */
  errors: JobErrorEntry[]
}

/** The first MAX_JOB_ERRORS unmatched edges of the upload as a JSON array of job error entries. */
const UNMATCHED_JSON = `(SELECT json_group_array(json_object('file', file, 'context', context, 'message', message))
  FROM (SELECT file, context, message FROM ingest_unmatched WHERE upload_id = ?1 ORDER BY id LIMIT ${MAX_JOB_ERRORS}))`

/**
 * Applies a staged upload and records it in its job, as one transaction. The order of the statements
 * matters: each `changes()` reads the statement just before it (see the top of this file).
 */
export async function commitUpload(db: D1Database, u: CommitInput): Promise<CommitResult> {
  // Placeholders (collector payloads only; an OpenGraph upload skips the extra scan of its staged nodes).
  const placeholders = u.placeholders
    ? [
        db.prepare(PLACEHOLDER_UPSERT).bind(u.uploadId, u.now),
        db.prepare(`SELECT changes() AS n`),
        db.prepare(`UPDATE ingest_jobs SET nodes_changed = nodes_changed + changes() WHERE id = ?1`).bind(u.jobId),
      ]
    : []
  const p = placeholders.length
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
    /* 3 .. 3+p-1: placeholders (before the edges resolve their ends) */
    ...placeholders,
    /* p+3 */ db.prepare(UNMATCHED_INSERT).bind(u.uploadId),
    /* p+4 */ db.prepare(`SELECT changes() AS n`),
    /* p+5 */ db
      .prepare(
        `UPDATE ingest_jobs SET unmatched_edges = unmatched_edges + changes(), error_count = error_count + changes(),
           ${appendErrors(UNMATCHED_JSON)}
         WHERE id = ?2`,
      )
      .bind(u.uploadId, u.jobId),
    /* p+6 */ db.prepare(EDGE_UPSERT).bind(u.uploadId, u.now),
    /* p+7 */ db.prepare(`SELECT changes() AS n`),
    /* p+8 */ db.prepare(`UPDATE ingest_jobs SET edges_changed = edges_changed + changes() WHERE id = ?1`).bind(u.jobId),
    /* p+9 */ db.prepare(`SELECT file, context, message FROM ingest_unmatched WHERE upload_id = ?1 ORDER BY id LIMIT ${MAX_JOB_ERRORS}`).bind(u.uploadId),
    /* p+10 */ db.prepare(`DELETE FROM ingest_unmatched WHERE upload_id = ?1`).bind(u.uploadId),
    /* p+11 */ db.prepare(`DELETE FROM ingest_staging WHERE upload_id = ?1 OR created_at < ?2`).bind(u.uploadId, u.staleBefore),
    /* p+12 */ db
      .prepare(`INSERT OR IGNORE INTO ingest_job_environments (job_id, environment_id) SELECT ?1, value FROM json_each(?2)`)
      .bind(u.jobId, JSON.stringify(u.environments)),
  ])
  const n = (i: number) => (results[i].results[0] as { n: number }).n
  return {
    nodesChanged: n(1) + (p ? n(4) : 0),
    unmatched: n(p + 4),
    edgesChanged: n(p + 7),
    errors: results[p + 9].results as CommitResult['errors'],
  }
}
