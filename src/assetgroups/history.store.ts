/**
 * BloodHound's asset group tag history (GET / POST /api/v2/asset-group-tags-history) read from the audit log, which
 * already records every change to tags and selectors of both asset-group APIs in the change's own batch
 * (docs/audit.md): a second history table would be a second copy of the same facts, written in the same batches.
 * One record per SUCCESS row that changed something (a `changed: false` row changed nothing), with BloodHound's
 * action names (docs/asset-groups.md "History"). Only callers with access to every environment read it (the route),
 * so the rows are served whole.
 */

/** Audit action → BloodHound's history action. */
export const HISTORY_ACTIONS: Record<string, string> = {
  CreateAssetGroupTag: 'CreateTag',
  UpdateAssetGroupTag: 'UpdateTag',
  DeleteAssetGroupTag: 'DeleteTag',
  CreateAssetGroup: 'CreateTag',
  UpdateAssetGroup: 'UpdateTag',
  DeleteAssetGroup: 'DeleteTag',
  CreateAssetGroupTagSelector: 'CreateSelector',
  UpdateAssetGroupTagSelector: 'UpdateSelector',
  DeleteAssetGroupTagSelector: 'DeleteSelector',
  CreateAssetGroupSelector: 'CreateSelector',
  DeleteAssetGroupSelector: 'DeleteSelector',
}

const ACTION_SQL = `CASE a.action ${Object.entries(HISTORY_ACTIONS)
  .map(([k, v]) => `WHEN '${k}' THEN '${v}'`)
  .join(' ')} END`

/**
 * The history rows as one derived table: `target` is what the change named (a tag's or selector's name, for the older
 * API's selector changes the object ids added or removed), `asset_group_tag_id` the tag (group) it concerns.
 */
const HISTORY = `(SELECT a.id AS id, a.created_at AS created_at, a.actor_id AS actor, a.actor_email AS email, ${ACTION_SQL} AS action,
    coalesce(json_extract(a.fields, '$.name'), json_extract(a.fields, '$.selector_name'), json_extract(a.fields, '$.asset_group_name'),
             (SELECT group_concat(j.value, ', ') FROM json_each(a.fields, '$.add') j),
             (SELECT group_concat(j.value, ', ') FROM json_each(a.fields, '$.remove') j), '') AS target,
    coalesce(json_extract(a.fields, '$.asset_group_tag_id'), json_extract(a.fields, '$.asset_group_id'), 0) AS asset_group_tag_id,
    NULL AS environment_id, NULL AS note
  FROM audit_logs a
  WHERE a.status = 'success' AND a.action IN (${Object.keys(HISTORY_ACTIONS)
    .map((k) => `'${k}'`)
    .join(', ')})
    AND coalesce(json_extract(a.fields, '$.changed'), 1) <> 0) h`

/** The filterable columns (BloodHound's environment_id and note are never set here: not offered, see the route). */
export type HistoryColumn = 'created_at' | 'actor' | 'email' | 'action' | 'target' | 'asset_group_tag_id'
export type HistoryOp = 'eq' | 'neq' | 'gt' | 'gte' | 'lt' | 'lte' | 'contains'
export interface HistoryFilter {
  column: HistoryColumn
  op: HistoryOp
  value: string | number
}

export interface HistoryRow {
  id: number
  created_at: string
  actor: string
  email: string | null
  action: string
  target: string
  asset_group_tag_id: number
  environment_id: null
  note: null
}

const SQL_OP: Record<Exclude<HistoryOp, 'contains'>, string> = { eq: '=', neq: '<>', gt: '>', gte: '>=', lt: '<', lte: '<=' }

export async function listHistory(
  db: D1Database,
  q: { filters: HistoryFilter[]; search: string | null; desc: boolean; skip: number; limit: number },
): Promise<{ count: number; rows: HistoryRow[] }> {
  const binds: unknown[] = []
  const where: string[] = ['1 = 1']
  for (const f of q.filters) {
    if (f.op === 'contains') {
      binds.push(String(f.value).toLowerCase())
      where.push(`instr(lower(h.${f.column}), ?${binds.length}) > 0`)
    } else {
      binds.push(f.value)
      where.push(`h.${f.column} ${SQL_OP[f.op]} ?${binds.length}`)
    }
  }
  if (q.search !== null) {
    // BloodHound's search: the text, or the text without spaces, in actor, email, action or target (case-insensitive)
    binds.push(q.search.toLowerCase(), q.search.replace(/ /g, '').toLowerCase())
    const a = `?${binds.length - 1}`
    const b = `?${binds.length}`
    where.push(`(${['actor', 'email', 'action', 'target'].map((col) => `instr(lower(coalesce(h.${col}, '')), ${a}) > 0 OR instr(lower(coalesce(h.${col}, '')), ${b}) > 0`).join(' OR ')})`)
  }
  const from = `FROM ${HISTORY} WHERE ${where.join(' AND ')}`
  const dir = q.desc ? 'DESC' : 'ASC'
  const [count, page] = await db.batch([
    db.prepare(`SELECT COUNT(*) AS n ${from}`).bind(...binds),
    db.prepare(`SELECT h.* ${from} ORDER BY h.created_at ${dir}, h.id ${dir} LIMIT ?${binds.length + 1} OFFSET ?${binds.length + 2}`).bind(...binds, q.limit, q.skip),
  ])
  return { count: (count.results[0] as { n: number }).n, rows: page.results as HistoryRow[] }
}
