/**
 * SQL for writing graph data. Every statement binds one JSON array (≤ ~80 KB, see src/graph/upload.ts
 * JsonArrayChunker) expanded with json_each, so a statement never exceeds D1's 100 bound parameters or
 * 100 KB, and a whole chunk is one set-based upsert instead of one statement per element.
 *
 * Upserts only touch a row when something actually changes (the DO UPDATE ... WHERE clause), so
 * ingesting the same file twice changes nothing, `updated_at` included. They RETURN one tiny row per
 * inserted or changed row: that is the change count (D1's `meta.changes` also counts the rows the FTS
 * triggers write, so it cannot be used).
 */

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

/**
 * ?1 = JSON array of NodeRow {o, k, ks, p, ek}; ?2 = now.
 * New nodes are inserted; existing ones get kinds unioned (new first), properties merged
 * (json_patch), name and environment re-derived from the merged properties.
 */
const NODE_UPSERT = `
INSERT INTO nodes (objectid, kind, kinds, name, environment_id, environment_kind, properties, created_at, updated_at)
SELECT r.o, r.k, r.ks, ${nameFrom('r.p')}, CASE WHEN r.ek IS NOT NULL THEN r.o ELSE ${envFrom('r.p')} END, r.ek, r.p, ?2, ?2
FROM (
  SELECT json_extract(value, '$.o') AS o, json_extract(value, '$.k') AS k, json_extract(value, '$.ks') AS ks,
         json_extract(value, '$.p') AS p, json_extract(value, '$.ek') AS ek
  FROM json_each(?1)
) AS r
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
   OR nodes.environment_kind IS NOT ${ENV_KIND}
RETURNING 1 AS changed`

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

/** ?1 = JSON array of EdgeRow {s, sm, sk, t, tm, tk, ...}. One row per element: i, sid, tid. */
const EDGE_RESOLVE = `
SELECT j.i, ${resolveEnd('j.s', 'j.sm', 'j.sk')} AS sid, ${resolveEnd('j.t', 'j.tm', 'j.tk')} AS tid
FROM (SELECT key AS i, json_extract(value, '$.s') AS s, json_extract(value, '$.sm') AS sm, json_extract(value, '$.sk') AS sk,
             json_extract(value, '$.t') AS t, json_extract(value, '$.tm') AS tm, json_extract(value, '$.tk') AS tk
      FROM json_each(?1)) AS j`

/**
 * ?1 = JSON array of resolved edges {s: start node id, t: end node id, k: kind, p: properties}; ?2 = now.
 * Edges upsert by (start, kind, end); properties merge (json_patch).
 */
const EDGE_UPSERT = `
INSERT INTO edges (start_id, end_id, kind, properties, created_at, updated_at)
SELECT json_extract(value, '$.s'), json_extract(value, '$.t'), json_extract(value, '$.k'), json_extract(value, '$.p'), ?2, ?2
FROM json_each(?1)
WHERE true
ON CONFLICT (start_id, kind, end_id) DO UPDATE SET
  properties = json_patch(edges.properties, excluded.properties),
  updated_at = excluded.updated_at
WHERE edges.properties IS NOT json_patch(edges.properties, excluded.properties)
RETURNING 1 AS changed`

export function nodeUpsert(db: D1Database, rowsJson: string, now: string): D1PreparedStatement {
  return db.prepare(NODE_UPSERT).bind(rowsJson, now)
}

export function edgeResolve(db: D1Database, rowsJson: string): D1PreparedStatement {
  return db.prepare(EDGE_RESOLVE).bind(rowsJson)
}

export function edgeUpsert(db: D1Database, rowsJson: string, now: string): D1PreparedStatement {
  return db.prepare(EDGE_UPSERT).bind(rowsJson, now)
}

export interface ResolvedEnds {
  i: number
  /** node id; null = no match; -1 = several nodes match by name */
  sid: number | null
  tid: number | null
}

/** Runs write statements as one batch (atomic as a unit in D1). */
export async function runBatch(db: D1Database, statements: D1PreparedStatement[]): Promise<D1Result[]> {
  if (statements.length === 0) return []
  return db.batch(statements)
}
