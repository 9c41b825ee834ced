/**
 * SQL for writing graph data: an upload is staged, then committed in one batch.
 *
 *   stage   `stageChunk`: each ≤ 80 KB JSON array of node or edge rows (src/graph/upload.ts JsonArrayChunker)
 *           becomes one row of `ingest_staging`, BATCH_STATEMENTS (one) per D1 request. Nothing readers see
 *           changes, and the isolate holds at most STAGING_IN_FLIGHT requests of chunks (src/graph/ingest.ts). Elements whose
 *           key may repeat in the upload go to chunks of their own (REPEAT_SEQ_BASE).
 *   commit  `commitUpload`: ONE db.batch (one D1 transaction) checks that the job is still running (the
 *           trigger of migration 0011 aborts the batch otherwise), folds repeated elements into one row per
 *           key, records the nodes a restricted writer may not write, upserts every other staged node,
 *           records the edges whose ends match no single node, upserts the others, updates the job and
 *           deletes the staging rows (and those an interrupted upload left behind), and writes the
 *           request's audit success row. A database failure at any point before or during it leaves the
 *           graph, the job and the audit log as they were: a file is written completely or not at all.
 *
 * Environment access (docs/permissions.md): a writer restricted to some environments gets other SQL for
 * three statements (SQL.restricted, or SQL.restrictedMany beyond VISIBLE_BY_INDEX_MAX environments: the
 * same rules, another form of one test): nodes outside its environments do not exist for it (neither
 * matched as edge ends, by id or name, nor merged into), and its nodes that would end up outside them are
 * refused. Writers with access to all environments run the statements as before, with no extra join per
 * element. test/integration/graph-ingest-access.test.ts holds the rules' tests and a differential one (the
 * same data through the restricted and the unrestricted SQL stores the same).
 *
 * Every staged array is expanded with json_each in SQL, so no statement comes near D1's 100 bound
 * parameters or 100 KB, and each step is one set-based statement over the whole upload.
 *
 * Upserts only touch a row when something actually changes (the DO UPDATE ... WHERE clause), and every
 * key is upserted once per upload (repeats folded first), so ingesting the same file twice changes
 * nothing, `updated_at` included.
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
import { appendErrors, appendWarnings, MAX_JOB_ERRORS, type JobErrorEntry } from './jobs.store'
import { taskErrorText, taskInsert } from './jobs.store'
import { auditedBatch } from '../audit/audit.store'
import type { AuditWrite } from '../audit/audit'
import { NEW_EDGE_ID_SQL, NEW_ID_SQL, withIdRetry } from './ids'

/** Kinds a node keeps at most: its kinds are unioned across uploads (BloodHound does the same), then cut. */
export const MAX_STORED_KINDS = 16

/**
 * Staging `seq` ranges. Chunks of ordinary elements: 0, 1, 2, ... Chunks of elements that may repeat
 * (src/graph/ingest.ts finds them in pass 1): from REPEAT_SEQ_BASE up (negative, in upload order); the
 * commit folds them into one row per key and stages the result again from FOLDED_SEQ_OFFSET up. Every
 * statement after the fold reads `seq >= 0` only.
 */
export const REPEAT_SEQ_BASE = -1_000_000_000
const FOLDED_SEQ_OFFSET = 2_000_000_000

/** Environment id from a properties JSON expression: environmentid, then domainsid, then tenantid. */
export function envFrom(p: string): string {
  const pick = (key: string) => `nullif(CASE WHEN json_type(${p}, '$.${key}') = 'text' THEN json_extract(${p}, '$.${key}') END, '')`
  return `coalesce(${pick('environmentid')}, ${pick('domainsid')}, ${pick('tenantid')})`
}

/**
 * The environment id `envFrom(json_patch(stored, patch))` gives, computed without building the patched
 * object (json_patch parses both objects and writes a third, which envFrom then parses again per key).
 * `patch` is a staged node's properties, always a JSON object (src/graph/opengraph.ts, src/collectors/), so
 * RFC 7396 decides each key alone: a key the patch holds wins (its null deletes the key: no value), a key
 * it lacks keeps the stored value (a stored value that is not an object counts as `{}`, as json_patch does).
 * Only text values matter to envFrom, and a text value is never merged. Used where a restricted writer's
 * nodes are checked (refused); test/integration/graph-ingest-access.test.ts compares it with the json_patch form on
 * every combination of absent, null, empty, text and object values of the three keys.
 */
export function envFromPatched(stored: string, patch: string): string {
  const pick = (key: string) =>
    `nullif(CASE WHEN json_type(${patch}, '$.${key}') IS NULL
      THEN (CASE WHEN json_type(${stored}, '$.${key}') = 'text' THEN json_extract(${stored}, '$.${key}') END)
      WHEN json_type(${patch}, '$.${key}') = 'text' THEN json_extract(${patch}, '$.${key}') END, '')`
  return `coalesce(${pick('environmentid')}, ${pick('domainsid')}, ${pick('tenantid')})`
}

function nameFrom(p: string): string {
  return `CASE WHEN json_type(${p}, '$.name') = 'text' THEN json_extract(${p}, '$.name') END`
}

/**
 * Kinds after an upsert: the new element's kinds first (the first becomes `kind`), then the stored ones
 * it does not repeat, at most MAX_STORED_KINDS (the kinds stated least recently are dropped first).
 * Applying the same kinds again gives the same array, so re-ingesting changes nothing.
 */
function kindsUnion(newer: string, older: string): string {
  return `(SELECT json_group_array(v) FROM (
    SELECT value AS v FROM json_each(${newer})
    UNION ALL
    SELECT value FROM json_each(${older}) WHERE value NOT IN (SELECT value FROM json_each(${newer}))
    LIMIT ${MAX_STORED_KINDS}))`
}

/**
 * Environment kind of a node after an upsert, with `envKinds` the JSON array of the environment kinds
 * declared NOW (built-ins and installed extensions): the element's own environment kind (decided from
 * its kinds and the current catalogue in src/graph/opengraph.ts) if it has one; else the stored one if
 * it is still declared; else the first stored kind that is declared now; else none. So a node stops
 * being an environment when it is written again after its extension stopped declaring the kind (as in
 * BloodHound, where environments are whatever nodes carry a currently declared environment kind). The
 * common case (neither the element nor the stored node is an environment) costs two NULL tests.
 */
function mergedEnvKind(newEk: string, old: string, envKinds: string): string {
  return `(CASE WHEN ${newEk} IS NOT NULL THEN ${newEk}
    WHEN ${old}.environment_kind IS NULL THEN NULL
    WHEN ${old}.environment_kind IN (SELECT value FROM json_each(${envKinds})) THEN ${old}.environment_kind
    ELSE (SELECT value FROM json_each(${old}.kinds) WHERE value IN (SELECT value FROM json_each(${envKinds})) ORDER BY key LIMIT 1) END)`
}

/**
 * Environment access of a restricted writer (docs/permissions.md). `access` is the bound parameter holding
 * the JSON array of the environment ids the caller may see; a node without environment (NULL) is outside
 * every list, as for reads (src/auth/permissions.ts canSeeEnvironment).
 */
function visible(envId: string, access: string): string {
  return `coalesce(${envId} IN (SELECT value FROM json_each(${access})), 0)`
}

/**
 * `visible` for a node known by its id (an edge end joined on objectid), answered from the index
 * nodes_env (environment_id, id) alone: the same test, since the row `vis` found is that node, present
 * exactly when its environment is one of `access` (a node without environment matches none). The row form
 * reads the node's table row for its environment, for every edge end, twice per commit (unmatched check and
 * upsert); the index is a small fraction of the table (no properties) and stays in the page cache. One
 * index search per environment of the writer, so it is used only for writers of at most
 * VISIBLE_BY_INDEX_MAX environments (SQL.restricted; SQL.restrictedMany keeps the row form).
 */
function visibleById(id: string, access: string): string {
  return `EXISTS (SELECT 1 FROM nodes vis INDEXED BY nodes_env WHERE vis.environment_id IN (SELECT value FROM json_each(${access})) AND vis.id = ${id})`
}
export const VISIBLE_BY_INDEX_MAX = 4

/**
 * Node row JSON fields from staging: ?1 = upload id. Chunks in order, elements in order. `ph` marks a
 * placeholder row (collector payloads, src/collectors/payload.ts; PLACEHOLDER_UPSERT).
 */
function stagedNodes(extra = ''): string {
  return `
  SELECT json_extract(j.value, '$.o') AS o, json_extract(j.value, '$.k') AS k, json_extract(j.value, '$.ks') AS ks,
         json_extract(j.value, '$.p') AS p, json_extract(j.value, '$.ek') AS ek, json_extract(j.value, '$.ph') AS ph${extra}
  FROM ingest_staging s, json_each(s.rows) AS j
  WHERE s.upload_id = ?1 AND s.part = 'n' AND s.seq >= 0
  ORDER BY s.seq, j.key`
}

/**
 * Whether a restricted writer may write staged node `r` (LEFT JOINed to its stored row `n`, if any). It may
 * not when the stored node is outside its environments (such a node is absent to it: never matched,
 * merged or moved), nor when the node would end up outside them (a new node must name one of its
 * environments; a visible node may not be moved to an environment it cannot see, or to none). The
 * resulting environment is computed exactly as NODE_UPSERT computes it.
 */
function refused(r: string, n: string, access: string, envKinds: string): string {
  const ek = mergedEnvKind(`${r}.ek`, n, envKinds)
  const resulting = `CASE WHEN ${n}.id IS NULL THEN (CASE WHEN ${r}.ek IS NOT NULL THEN ${r}.o ELSE ${envFrom(`${r}.p`)} END)
    ELSE (CASE WHEN ${ek} IS NOT NULL THEN ${n}.objectid ELSE ${envFromPatched(`${n}.properties`, `${r}.p`)} END) END`
  return `((${n}.id IS NOT NULL AND NOT ${visible(`${n}.environment_id`, access)}) OR NOT ${visible(resulting, access)})`
}

/**
 * Staged nodes a restricted writer may not write, recorded with the reason; ?1 = upload id, ?2 = access
 * (NULL: all environments, then nothing is scanned: the constant test is made once), ?3 = environment
 * kinds. The message is the same whether the id is unused, used in an environment the writer cannot
 * see, or the node would move out of its environments: it reveals nothing the writer did not send.
 */
const REFUSED_INSERT = `
INSERT INTO ingest_unmatched (upload_id, file, context, message)
SELECT ?1, r.file, CASE WHEN r.i IS NULL THEN 'node ' || r.o ELSE 'graph.nodes[' || r.i || ']' END,
       'node not written: "' || r.o || '" is outside the environments you may write to'
FROM (${stagedNodes(`, s.file AS file, json_extract(j.value, '$.i') AS i`)}) AS r
LEFT JOIN nodes n ON n.objectid = r.o
WHERE ?2 IS NOT NULL AND r.ph IS NULL AND ${refused('r', 'n', '?2', '?3')}`

/**
 * Every staged node (NodeRow {o, k, ks, p, ek, i}); ?1 = upload id, ?2 = now, ?3 = environment kinds,
 * and for a restricted writer ?4 = access (its refused nodes are skipped; REFUSED_INSERT reported them).
 * New nodes are inserted; existing ones get kinds unioned (new first), properties merged (json_patch),
 * name, environment kind and environment re-derived. A row is only rewritten when something changes.
 */
function nodeUpsert(restricted: boolean): string {
  const ENV_KIND = mergedEnvKind('excluded.environment_kind', 'nodes', '?3')
  const KINDS = kindsUnion('excluded.kinds', 'nodes.kinds')
  const MERGED = 'json_patch(nodes.properties, excluded.properties)'
  return `
INSERT INTO nodes (objectid, kind, kinds, name, environment_id, environment_kind, properties, created_at, updated_at, id)
SELECT r.o, r.k, r.ks, ${nameFrom('r.p')}, CASE WHEN r.ek IS NOT NULL THEN r.o ELSE ${envFrom('r.p')} END, r.ek, r.p, ?2, ?2, ${NEW_ID_SQL}
FROM (${stagedNodes()}) AS r
${restricted ? `LEFT JOIN nodes n ON n.objectid = r.o WHERE r.ph IS NULL AND NOT ${refused('r', 'n', '?4', '?3')}` : 'WHERE r.ph IS NULL'}
ON CONFLICT (objectid) DO UPDATE SET
  kind = excluded.kind,
  kinds = ${KINDS},
  properties = ${MERGED},
  name = ${nameFrom(MERGED)},
  environment_kind = ${ENV_KIND},
  environment_id = CASE WHEN ${ENV_KIND} IS NOT NULL THEN nodes.objectid ELSE ${envFrom(MERGED)} END,
  updated_at = excluded.updated_at
WHERE nodes.kind IS NOT excluded.kind
   OR nodes.kinds IS NOT ${KINDS}
   OR nodes.properties IS NOT ${MERGED}
   OR nodes.environment_kind IS NOT ${ENV_KIND}`
}

/**
 * Placeholder nodes (collector payloads, src/collectors/payload.ts): an object a relationship refers to
 * that the upload does not describe. Runs after the node upsert, so a real node of the same upload always
 * wins. A new object id gets a node with the placeholder's kinds and no properties (BloodHound's
 * behaviour: the relationship is kept, the node is filled in when the object arrives). An existing node
 * keeps its kind, properties and environment; it only gains kinds it lacks (after its own, within
 * MAX_STORED_KINDS), and a `Base`-only node takes the placeholder's more specific primary kind.
 * ?1 = upload id, ?2 = now. Not run for a writer restricted to some environments: a placeholder has no
 * environment, so it would be outside them (and adding kinds to an existing node could touch a hidden one).
 */
const PLACEHOLDER_KINDS = `(SELECT json_group_array(v) FROM (
    SELECT value AS v FROM json_each(nodes.kinds)
    UNION ALL
    SELECT value FROM json_each(excluded.kinds) WHERE value NOT IN (SELECT value FROM json_each(nodes.kinds))
    LIMIT ${MAX_STORED_KINDS}))`
const PLACEHOLDER_UPSERT = `
INSERT INTO nodes (objectid, kind, kinds, name, environment_id, environment_kind, properties, created_at, updated_at, id)
SELECT r.o, r.k, r.ks, NULL, NULL, NULL, '{}', ?2, ?2, ${NEW_ID_SQL}
FROM (${stagedNodes()}) AS r
WHERE r.ph IS NOT NULL
ON CONFLICT (objectid) DO UPDATE SET
  kind = CASE WHEN nodes.kind = 'Base' THEN excluded.kind ELSE nodes.kind END,
  kinds = ${PLACEHOLDER_KINDS},
  updated_at = excluded.updated_at
WHERE nodes.kinds IS NOT ${PLACEHOLDER_KINDS}`

/**
 * Folding repeated elements (issue 18): the staged chunks from REPEAT_SEQ_BASE up hold every element whose
 * key may occur more than once in the upload. They are merged here, in upload order, into one row per key
 * exactly as consecutive upserts would merge them (properties json_patch'ed, kinds unioned newest first,
 * the latest environment kind; the first occurrence's file and index for error reports), then staged again
 * as ordinary chunks. The upsert then sees each key once, and merging the folded row into a node that
 * already holds it changes nothing, so an upload repeated verbatim changes nothing. ?1 = upload id.
 * Edge keys are the element as written without properties and index (start, end, kind, the ends' match
 * and kind), so two ends written differently that resolve to the same node are not folded.
 */
const FOLD_NODES = `
INSERT INTO ingest_fold (upload_id, part, key, file, seq, ord, row)
SELECT ?1, 'n', json_extract(j.value, '$.o'), s.file, s.seq, j.key, j.value
FROM ingest_staging s, json_each(s.rows) AS j
WHERE s.upload_id = ?1 AND s.part = 'n' AND s.seq < 0
ORDER BY s.seq, j.key
ON CONFLICT (upload_id, part, key) DO UPDATE SET row = json_set(ingest_fold.row,
  '$.k', json_extract(excluded.row, '$.k'),
  '$.ks', json(${kindsUnion("json_extract(excluded.row, '$.ks')", "json_extract(ingest_fold.row, '$.ks')")}),
  '$.p', json(json_patch(json_extract(ingest_fold.row, '$.p'), json_extract(excluded.row, '$.p'))),
  '$.ek', coalesce(json_extract(excluded.row, '$.ek'), json_extract(ingest_fold.row, '$.ek')))`

const FOLD_EDGES = `
INSERT INTO ingest_fold (upload_id, part, key, file, seq, ord, row)
SELECT ?1, 'e', json_remove(j.value, '$[4]', '$[3]'), s.file, s.seq, j.key, j.value
FROM ingest_staging s, json_each(s.rows) AS j
WHERE s.upload_id = ?1 AND s.part = 'e' AND s.seq < 0
ORDER BY s.seq, j.key
ON CONFLICT (upload_id, part, key) DO UPDATE SET
  row = json_set(ingest_fold.row, '$[3]', json(json_patch(json_extract(ingest_fold.row, '$[3]'), json_extract(excluded.row, '$[3]'))))`

/** The folded rows as staging chunks (one per part and file), ?1 = upload id, ?2 = now. */
const FOLDED_STAGE = `
INSERT INTO ingest_staging (upload_id, part, seq, file, created_at, rows)
SELECT ?1, part, min(seq) + ${FOLDED_SEQ_OFFSET - REPEAT_SEQ_BASE}, file, ?2, json_group_array(json(row))
FROM (SELECT part, file, seq, row FROM ingest_fold WHERE upload_id = ?1 ORDER BY part, seq, ord)
GROUP BY part, file`

/**
 * The node an edge end refers to: its id; NULL when no node matches; -1 when several do (by name).
 * `v` value, `m` match_by ('id' | 'name'), `k` optional kind the node must have; `byId` is the alias of
 * the node LEFT JOINed on `objectid = v` (the common case, a join being much cheaper than a correlated
 * subquery per end). With `access` (a restricted writer), nodes outside its environments do not exist:
 * they neither match nor make a name ambiguous, so the answer is the same as for a missing node.
 */
function resolveEnd(v: string, m: string, k: string, byId: string, access: Access | null): string {
  const kind = (n: string) => `(${k} IS NULL OR EXISTS (SELECT 1 FROM json_each(${n}.kinds) WHERE value = ${k}))`
  // by name the node's row is read anyway (its name); by id only the index's id is, unless an end kind is asked
  const seen = (n: string) => (access ? ` AND ${visible(`${n}.environment_id`, access.param)}` : '')
  const seenById = (n: string) =>
    access ? ` AND ${access.byIndex ? visibleById(`${n}.id`, access.param) : visible(`${n}.environment_id`, access.param)}` : ''
  return `CASE WHEN ${m} = 'name'
    THEN (SELECT CASE count(*) WHEN 0 THEN NULL WHEN 1 THEN min(x.id) ELSE -1 END
          FROM (SELECT n.id FROM nodes n WHERE n.name = ${v} COLLATE NOCASE AND n.name = ${v} AND ${kind('n')}${seen('n')} LIMIT 2) AS x)
    WHEN ${byId}.id IS NOT NULL AND ${kind(byId)}${seenById(byId)} THEN ${byId}.id END`
}

/** A restricted writer's environments for the edge statements: the parameter holding them, and the form of the test. */
interface Access {
  param: string
  /** at most VISIBLE_BY_INDEX_MAX environments: visibleById */
  byIndex: boolean
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
 * once per row. `access`: a restricted writer's environments (Access), or null.
 */
function resolvedEdges(columns: string[], access: Access | null): string {
  const extra = (n: number, dflt: string) => `CASE WHEN e.x < 0 THEN json_extract(e.v, '$[${n}]') ELSE ${dflt} END`
  return `
  SELECT ${columns.map((c) => `e.${c}`).join(', ')},
         ${resolveEnd('e.s', extra(5, "'id'"), extra(6, 'NULL'), 'ns', access)} AS sid, ${resolveEnd('e.t', extra(7, "'id'"), extra(8, 'NULL'), 'nt', access)} AS tid
  FROM (SELECT s.seq, s.file, j.key AS ord, j.value AS v,
               json_extract(j.value, '$[0]') AS s, json_extract(j.value, '$[1]') AS t, json_extract(j.value, '$[4]') AS x
        FROM ingest_staging s, json_each(s.rows) AS j
        WHERE s.upload_id = ?1 AND s.part = 'e' AND s.seq >= 0
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

/**
 * Records the staged edges that cannot be written, with the reason (see docs/graph.md). ?1 = upload id,
 * and for a restricted writer ?2 = access.
 */
function unmatchedInsert(restricted: false | 'few' | 'many'): string {
  return `
INSERT INTO ingest_unmatched (upload_id, file, context, message)
SELECT ?1, r.file, 'graph.edges[' || CASE WHEN r.x < 0 THEN -r.x - 1 ELSE r.x END || ']',
       coalesce(r.sm1 || '; ' || r.tm1, r.sm1, r.tm1)
FROM (SELECT file, x,
             ${unmatchedEnd('start', 'sid', "json_extract(v, '$[0]')", "json_extract(v, '$[5]')", "json_extract(v, '$[6]')")} AS sm1,
             ${unmatchedEnd('end', 'tid', "json_extract(v, '$[1]')", "json_extract(v, '$[7]')", "json_extract(v, '$[8]')")} AS tm1
      FROM (${resolvedEdges(['file', 'x', 'v'], restricted ? { param: '?2', byIndex: restricted === 'few' } : null)})
      WHERE sid IS NULL OR sid < 0 OR tid IS NULL OR tid < 0) AS r
WHERE true`
}

/**
 * Every staged edge whose ends resolved to one node each, upserted by (start, kind, end); properties
 * merge (json_patch). An edge that post-processing had derived (migrations/0013, src/collectors/postprocess.ts)
 * becomes an ingested one (`derived = 0`), so the next post-processing run, which replaces derived edges,
 * does not delete what was ingested. ?1 = upload id, ?2 = now, and for a restricted writer ?3 = access.
 */
function edgeUpsert(restricted: false | 'few' | 'many'): string {
  return `
INSERT INTO edges (start_id, end_id, kind, properties, created_at, updated_at, id)
SELECT r.sid, r.tid, json_extract(r.v, '$[2]'), json_extract(r.v, '$[3]'), ?2, ?2, ${NEW_EDGE_ID_SQL}
FROM (${resolvedEdges(['seq', 'ord', 'v'], restricted ? { param: '?3', byIndex: restricted === 'few' } : null)}) AS r
WHERE r.sid > 0 AND r.tid > 0
ORDER BY 1, 3, 2, r.seq, r.ord
ON CONFLICT (start_id, kind, end_id) DO UPDATE SET
  properties = json_patch(edges.properties, excluded.properties),
  updated_at = excluded.updated_at,
  derived = 0
WHERE edges.properties IS NOT json_patch(edges.properties, excluded.properties) OR edges.derived = 1`
}

const SQL = {
  all: { nodeUpsert: nodeUpsert(false), unmatchedInsert: unmatchedInsert(false), edgeUpsert: edgeUpsert(false) },
  /** a writer of at most VISIBLE_BY_INDEX_MAX environments */
  restricted: { nodeUpsert: nodeUpsert(true), unmatchedInsert: unmatchedInsert('few'), edgeUpsert: edgeUpsert('few') },
  restrictedMany: { nodeUpsert: nodeUpsert(true), unmatchedInsert: unmatchedInsert('many'), edgeUpsert: edgeUpsert('many') },
}

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
  /** environment kinds declared now (built-in and extensions) */
  environmentKinds: string[]
  /** the writer's environments; null = all (src/auth/permissions.ts EnvironmentAccess) */
  access: string[] | null
  /** the upload staged placeholder node rows (collector payloads): PLACEHOLDER_UPSERT runs */
  placeholders?: boolean
  /** accepted-but-suspicious findings of validation (src/graph/ingest.ts Checked.warnings), appended to the job's warnings */
  warnings?: JobErrorEntry[]
  /** the uploaded file's name: the commit records it as one of its job's completed tasks (ingest_job_tasks) */
  fileName?: string
  /**
   * The request's audit success row (AppendFileUploadJob). The upload's change is this commit batch (the
   * staging rows before it are invisible and discarded on failure), so the row is its last statement.
   */
  audit: AuditWrite
  /**
   * Statements run first in the commit's transaction (a collector job gathers its posts' staging rows under
   * `uploadId`: src/clients/jobs.store.ts), and last, before the audit row (it ends its jobs). Same batch,
   * so all of it commits or none.
   */
  prelude?: D1PreparedStatement[]
  epilogue?: D1PreparedStatement[]
}

export interface CommitResult {
  nodesChanged: number
  edgesChanged: number
  unmatched: number
  /** nodes a restricted writer may not write (outside its environments) */
  refused: number
  /** the first MAX_JOB_ERRORS refused nodes and unmatched edges */
  errors: JobErrorEntry[]
}

/** The upload's job was no longer running when its commit ran (ended, or timed out, meanwhile). */
export class JobNotRunningError extends Error {
  constructor() {
    super('ingest job is not running')
  }
}
/** Raised by the trigger of migration 0011; D1 reports it inside its own error message. */
const JOB_NOT_RUNNING = 'edgehound: ingest job is not running'

/** The first MAX_JOB_ERRORS refused nodes and unmatched edges of the upload as a JSON array of job error entries. */
const UNMATCHED_JSON = `(SELECT json_group_array(json_object('file', file, 'context', context, 'message', message))
  FROM (SELECT file, context, message FROM ingest_unmatched WHERE upload_id = ?1 ORDER BY id LIMIT ${MAX_JOB_ERRORS}))`

/** The upload's refused nodes and unmatched edges as task error texts (?5 = upload id), first MAX_JOB_ERRORS. */
const TASK_ERRORS_FROM_UNMATCHED = `(SELECT json_group_array(${taskErrorText('context', 'message')})
  FROM (SELECT context, message FROM ingest_unmatched WHERE upload_id = ?5 ORDER BY id LIMIT ${MAX_JOB_ERRORS}))`

/**
 * Applies a staged upload and records it in its job, as one transaction. The order of the statements
 * matters: each `changes()` reads the statement just before it (see the top of this file). The first
 * statement aborts the whole batch (JobNotRunningError) when the job is not running any more: checked
 * inside the transaction, so a job ended while the file was being staged never receives it.
 */
export async function commitUpload(db: D1Database, u: CommitInput): Promise<CommitResult> {
  const access = u.access === null ? null : JSON.stringify(u.access)
  const envKinds = JSON.stringify(u.environmentKinds)
  const sql = u.access === null ? SQL.all : u.access.length <= VISIBLE_BY_INDEX_MAX ? SQL.restricted : SQL.restrictedMany
  // Placeholders (collector payloads only; an OpenGraph upload skips the extra scan of its staged nodes).
  const placeholders =
    u.placeholders && access === null
      ? [
          db.prepare(PLACEHOLDER_UPSERT).bind(u.uploadId, u.now),
          db.prepare(`SELECT changes() AS n`),
          db.prepare(`UPDATE ingest_jobs SET nodes_changed = nodes_changed + changes() WHERE id = ?1`).bind(u.jobId),
        ]
      : []
  const p = placeholders.length
  const statements = [
    /* 0 */ db.prepare(`INSERT INTO ingest_commit_guard (job_id) VALUES (?1)`).bind(u.jobId),
    /* 1 */ db.prepare(FOLD_NODES).bind(u.uploadId),
    /* 2 */ db.prepare(FOLD_EDGES).bind(u.uploadId),
    /* 3 */ db.prepare(FOLDED_STAGE).bind(u.uploadId, u.now),
    /* 4 */ db.prepare(`DELETE FROM ingest_fold WHERE upload_id = ?1`).bind(u.uploadId),
    /* 5 */ db.prepare(REFUSED_INSERT).bind(u.uploadId, access, envKinds),
    /* 6 */ db.prepare(`SELECT changes() AS n`),
    /* 7 */ db.prepare(`UPDATE ingest_jobs SET error_count = error_count + changes() WHERE id = ?1`).bind(u.jobId),
    /* 8 */ access === null ? db.prepare(sql.nodeUpsert).bind(u.uploadId, u.now, envKinds) : db.prepare(sql.nodeUpsert).bind(u.uploadId, u.now, envKinds, access),
    /* 9 */ db.prepare(`SELECT changes() AS n`),
    /* 10 */ db
      .prepare(
        `UPDATE ingest_jobs SET nodes_changed = nodes_changed + changes(), total_files = total_files + 1,
           nodes_received = nodes_received + ?3, edges_received = edges_received + ?4, last_ingest = ?2, updated_at = ?2,
           ${appendWarnings('?5')}
         WHERE id = ?1`,
      )
      .bind(u.jobId, u.now, u.nodes, u.edges, JSON.stringify((u.warnings ?? []).slice(0, MAX_JOB_ERRORS))),
    /* 11 .. 11+p-1: placeholders (before the edges resolve their ends) */
    ...placeholders,
    /* p+11 */ access === null ? db.prepare(sql.unmatchedInsert).bind(u.uploadId) : db.prepare(sql.unmatchedInsert).bind(u.uploadId, access),
    /* p+12 */ db.prepare(`SELECT changes() AS n`),
    /* p+13 */ db
      .prepare(
        `UPDATE ingest_jobs SET unmatched_edges = unmatched_edges + changes(), error_count = error_count + changes(),
           ${appendErrors(UNMATCHED_JSON)}
         WHERE id = ?2`,
      )
      .bind(u.uploadId, u.jobId),
    /* p+14 */ access === null ? db.prepare(sql.edgeUpsert).bind(u.uploadId, u.now) : db.prepare(sql.edgeUpsert).bind(u.uploadId, u.now, access),
    /* p+15 */ db.prepare(`SELECT changes() AS n`),
    /* p+16 */ db.prepare(`UPDATE ingest_jobs SET edges_changed = edges_changed + changes() WHERE id = ?1`).bind(u.jobId),
    /* p+17 */ db.prepare(`SELECT file, context, message FROM ingest_unmatched WHERE upload_id = ?1 ORDER BY id LIMIT ${MAX_JOB_ERRORS}`).bind(u.uploadId),
    // the file as a completed task of its job, with its own refused nodes and unmatched edges (read before they go)
    ...(u.fileName === undefined ? [] : [taskInsert(db, u.jobId, u.fileName, u.now, TASK_ERRORS_FROM_UNMATCHED, u.uploadId, u.warnings ?? [])]),
    /* p+18 */ db.prepare(`DELETE FROM ingest_unmatched WHERE upload_id = ?1`).bind(u.uploadId),
    // Stale rows of interrupted uploads go too, except the posts a running collector job is holding until it
    // ends (client_job_posts; a job may run for hours).
    /* p+19 */ db
      .prepare(`DELETE FROM ingest_staging WHERE upload_id = ?1 OR (created_at < ?2 AND upload_id NOT IN (SELECT upload_id FROM client_job_posts))`)
      .bind(u.uploadId, u.staleBefore),
    /* p+20 */ db
      .prepare(`INSERT OR IGNORE INTO ingest_job_environments (job_id, environment_id) SELECT ?1, value FROM json_each(?2)`)
      .bind(u.jobId, JSON.stringify(u.environments)),
  ]
  let results: D1Result[]
  try {
    // appended last: the indices above are unchanged (auditedBatch returns the change's results only)
    // a new random id that meets an existing one aborts the batch (nothing written): it runs again (src/graph/ids.ts)
    const pre = u.prelude ?? []
    const all = await withIdRetry(() =>
      auditedBatch(db, [...pre, ...statements, ...(u.epilogue ?? [])], u.audit, { fields: { nodes_received: u.nodes, edges_received: u.edges } }),
    )
    results = all.slice(pre.length)
  } catch (e) {
    if (e instanceof Error && e.message.includes(JOB_NOT_RUNNING)) throw new JobNotRunningError()
    throw e
  }
  const n = (i: number) => (results[i].results[0] as { n: number }).n
  return {
    refused: n(6),
    nodesChanged: n(9) + (p ? n(12) : 0),
    unmatched: n(p + 12),
    edgesChanged: n(p + 15),
    errors: results[p + 17].results as CommitResult['errors'],
  }
}
