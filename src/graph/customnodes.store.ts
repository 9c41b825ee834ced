/** SQL of the custom node kinds (migrations/0044_custom_node_kinds.sql). */
import { auditedBatch } from '../audit/audit.store'
import type { AuditWrite } from '../audit/audit'
import type { IconConfig } from './customnodes'

export interface CustomNodeKind {
  id: number
  kindName: string
  config: { icon: IconConfig }
}

interface Row {
  id: number
  kind_name: string
  icon_type: string
  icon_name: string
  icon_color: string
}

const toKind = (r: Row): CustomNodeKind => ({ id: r.id, kindName: r.kind_name, config: { icon: { type: r.icon_type, name: r.icon_name, color: r.icon_color } } })
const COLS = 'id, kind_name, icon_type, icon_name, icon_color'

export async function listCustomKinds(db: D1Database): Promise<CustomNodeKind[]> {
  return (await db.prepare(`SELECT ${COLS} FROM custom_node_kinds ORDER BY id`).all<Row>()).results.map(toKind)
}

export async function getCustomKind(db: D1Database, kind: string): Promise<CustomNodeKind | null> {
  const r = await db.prepare(`SELECT ${COLS} FROM custom_node_kinds WHERE kind_name = ?1`).bind(kind).first<Row>()
  return r ? toKind(r) : null
}

/**
 * Creates every kind in one batch with the audit row, or none: null when one of them exists already (the
 * first statement counts them; the INSERT runs only when that count is 0, so a concurrent duplicate fails the
 * UNIQUE constraint instead and the batch rolls back — see the route).
 */
export async function createCustomKinds(
  db: D1Database,
  kinds: { kind: string; icon: IconConfig }[],
  now: string,
  audit: AuditWrite,
): Promise<CustomNodeKind[] | null> {
  const json = JSON.stringify(kinds.map((k) => [k.kind, k.icon.type, k.icon.name, k.icon.color]))
  const res = await auditedBatch(
    db,
    [
      db
        .prepare(
          `INSERT INTO custom_node_kinds (kind_name, icon_type, icon_name, icon_color, created_at, updated_at)
           SELECT j.value ->> '$[0]', j.value ->> '$[1]', j.value ->> '$[2]', j.value ->> '$[3]', ?2, ?2 FROM json_each(?1) j
           WHERE NOT EXISTS (SELECT 1 FROM custom_node_kinds c WHERE c.kind_name IN (SELECT value ->> '$[0]' FROM json_each(?1)))
           ORDER BY j.key
           RETURNING ${COLS}`,
        )
        .bind(json, now),
    ],
    audit,
    { ifChanged: 0 },
  )
  if (res[0].meta.changes === 0 && kinds.length > 0) return null
  return (res[0].results as Row[]).map(toKind)
}

export async function updateCustomKind(db: D1Database, kind: string, icon: IconConfig, now: string, audit: AuditWrite): Promise<CustomNodeKind | null> {
  const [r] = await auditedBatch(
    db,
    [
      db
        .prepare(`UPDATE custom_node_kinds SET icon_type = ?2, icon_name = ?3, icon_color = ?4, updated_at = ?5 WHERE kind_name = ?1 RETURNING ${COLS}`)
        .bind(kind, icon.type, icon.name, icon.color, now),
    ],
    audit,
    { ifChanged: 0 },
  )
  const row = (r.results as Row[])[0]
  return row ? toKind(row) : null
}

export async function deleteCustomKind(db: D1Database, kind: string, audit: AuditWrite): Promise<boolean> {
  const [r] = await auditedBatch(db, [db.prepare(`DELETE FROM custom_node_kinds WHERE kind_name = ?1`).bind(kind)], audit, { ifChanged: 0 })
  return r.meta.changes > 0
}
