import { auditedBatch } from '../audit/audit.store'
import type { AuditWrite } from '../audit/audit'
import type { EnvironmentDoc, ExtensionDocument, NodeKindDoc, RelationshipFindingDoc, RelationshipKindDoc } from './schema'

/**
 * Storage of graph extensions (tables in migrations/0003_extensions.sql, reasoning in docs/extensions.md).
 *
 * The upsert is ONE db.batch() whose statements depend only on the payload, never on what a previous read
 * saw. D1 runs a batch as one transaction, serialised with every other write, so two concurrent PUTs of
 * the same extension end with exactly the later batch's children: the later batch removes whatever is
 * not in its payload and writes all that is, whatever the earlier one left. A statement that fails
 * (a constraint, an ownership trigger, anything) rolls the whole batch back: the previous version stays.
 */

export interface ExtensionSummary {
  id: number
  name: string
  /** display_name, or name when none was given */
  display_name: string
  namespace: string
  version: string
  is_builtin: boolean
}

/** A constraint or trigger refused the write (typically: a concurrent write took a name first). */
export class ExtensionWriteConflict extends Error {
  constructor(readonly detail: string) {
    super('the extension write conflicts with the stored extensions')
    this.name = 'ExtensionWriteConflict'
  }
}

/** JSON parameters are chunked below D1's per-value limit (2 MB) with a wide margin. */
export const CHUNK_BYTES = 256 * 1024

const EXT = '(SELECT id FROM extensions WHERE name = ?1)'

function chunks<T>(items: T[], maxBytes = CHUNK_BYTES): string[] {
  const out: string[] = []
  let cur: string[] = []
  let size = 2
  for (const it of items) {
    const s = JSON.stringify(it)
    if (cur.length > 0 && size + s.length + 1 > maxBytes) {
      out.push(`[${cur.join(',')}]`)
      cur = []
      size = 2
    }
    cur.push(s)
    size += s.length + 1
  }
  if (cur.length > 0) out.push(`[${cur.join(',')}]`)
  return out
}

const orNull = <T>(v: T | undefined): T | null => (v === undefined ? null : v)

function kindRows(doc: ExtensionDocument) {
  return [
    ...doc.node_kinds.map((k: NodeKindDoc, i) => ({
      name: k.name,
      class: 'node',
      position: i,
      display_name: orNull(k.display_name),
      description: orNull(k.description),
      is_display_kind: k.is_display_kind === undefined ? null : k.is_display_kind ? 1 : 0,
      icon: orNull(k.icon),
      color: orNull(k.color),
      is_traversable: null,
    })),
    ...doc.relationship_kinds.map((k: RelationshipKindDoc, i) => ({
      name: k.name,
      class: 'relationship',
      position: i,
      display_name: null,
      description: orNull(k.description),
      is_display_kind: null,
      icon: null,
      color: null,
      is_traversable: k.is_traversable ? 1 : 0,
    })),
  ]
}

/**
 * The statements of one upsert, in an order that keeps every foreign key satisfied after each statement:
 * stale findings go first; kinds, environments, principals and findings are upserted; only then are the
 * environments and kinds the payload no longer has deleted (nothing of this extension points at them by
 * then; a finding of ANOTHER extension that does makes the batch fail, which is the point).
 * Exported so that tests can run it with a failing statement appended.
 */
export function upsertStatements(db: D1Database, doc: ExtensionDocument, nowIso: string, generation: string): D1PreparedStatement[] {
  const name = doc.schema.name
  const s: D1PreparedStatement[] = []
  s.push(
    db
      .prepare(
        `INSERT INTO extensions (name, display_name, version, namespace, is_builtin, generation, created_generation, created_at, updated_at)
         VALUES (?1, ?2, ?3, ?4, 0, ?5, ?5, ?6, ?6)
         ON CONFLICT (name) DO UPDATE SET display_name = excluded.display_name, version = excluded.version,
           namespace = excluded.namespace, generation = excluded.generation, updated_at = excluded.updated_at
         RETURNING id, created_generation = generation AS created`,
      )
      .bind(name, orNull(doc.schema.display_name), doc.schema.version, doc.schema.namespace, generation, nowIso),
  )
  const findingNames = JSON.stringify(doc.relationship_findings.map((f) => f.name))
  s.push(db.prepare(`DELETE FROM extension_findings WHERE extension_id = ${EXT} AND name NOT IN (SELECT value FROM json_each(?2))`).bind(name, findingNames))

  for (const part of chunks(kindRows(doc)))
    s.push(
      db
        .prepare(
          `INSERT INTO extension_kinds (name, extension_id, class, position, display_name, description, is_display_kind, icon, color, is_traversable)
           SELECT j.value ->> '$.name', ${EXT}, j.value ->> '$.class', j.value ->> '$.position', j.value ->> '$.display_name',
                  j.value ->> '$.description', j.value ->> '$.is_display_kind', j.value ->> '$.icon', j.value ->> '$.color',
                  j.value ->> '$.is_traversable'
           FROM json_each(?2) j WHERE true
           ON CONFLICT (name) DO UPDATE SET extension_id = excluded.extension_id, class = excluded.class, position = excluded.position,
             display_name = excluded.display_name, description = excluded.description, is_display_kind = excluded.is_display_kind,
             icon = excluded.icon, color = excluded.color, is_traversable = excluded.is_traversable`,
        )
        .bind(name, part),
    )

  const envRows = doc.environments.map((e: EnvironmentDoc, i) => ({ environment_kind: e.environment_kind, source_kind: e.source_kind, position: i }))
  for (const part of chunks(envRows))
    s.push(
      db
        .prepare(
          `INSERT INTO extension_environments (environment_kind, extension_id, source_kind, position)
           SELECT j.value ->> '$.environment_kind', ${EXT}, j.value ->> '$.source_kind', j.value ->> '$.position'
           FROM json_each(?2) j WHERE true
           ON CONFLICT (environment_kind) DO UPDATE SET extension_id = excluded.extension_id, source_kind = excluded.source_kind,
             position = excluded.position`,
        )
        .bind(name, part),
    )

  // Principal kinds carry nothing but their position: replacing the set is reconciling it.
  s.push(
    db
      .prepare(
        `DELETE FROM extension_environment_principals
         WHERE environment_kind IN (SELECT environment_kind FROM extension_environments WHERE extension_id = ${EXT})`,
      )
      .bind(name),
  )
  const principalRows = doc.environments.flatMap((e) => e.principal_kinds.map((p, i) => ({ environment_kind: e.environment_kind, principal_kind: p, position: i })))
  for (const part of chunks(principalRows))
    s.push(
      db
        .prepare(
          `INSERT INTO extension_environment_principals (environment_kind, principal_kind, position)
           SELECT j.value ->> '$.environment_kind', j.value ->> '$.principal_kind', j.value ->> '$.position' FROM json_each(?1) j`,
        )
        .bind(part),
    )

  const findingRows = doc.relationship_findings.map((f: RelationshipFindingDoc, i) => ({
    name: f.name,
    position: i,
    display_name: orNull(f.display_name),
    relationship_kind: f.relationship_kind,
    environment_kind: f.environment_kind,
    ...f.remediation,
  }))
  for (const part of chunks(findingRows))
    s.push(
      db
        .prepare(
          `INSERT INTO extension_findings (name, extension_id, position, display_name, relationship_kind, environment_kind,
             short_description, long_description, short_remediation, long_remediation)
           SELECT j.value ->> '$.name', ${EXT}, j.value ->> '$.position', j.value ->> '$.display_name', j.value ->> '$.relationship_kind',
                  j.value ->> '$.environment_kind', j.value ->> '$.short_description', j.value ->> '$.long_description',
                  j.value ->> '$.short_remediation', j.value ->> '$.long_remediation'
           FROM json_each(?2) j WHERE true
           ON CONFLICT (name) DO UPDATE SET extension_id = excluded.extension_id, position = excluded.position,
             display_name = excluded.display_name, relationship_kind = excluded.relationship_kind,
             environment_kind = excluded.environment_kind, short_description = excluded.short_description,
             long_description = excluded.long_description, short_remediation = excluded.short_remediation,
             long_remediation = excluded.long_remediation`,
        )
        .bind(name, part),
    )

  s.push(
    db
      .prepare(`DELETE FROM extension_environments WHERE extension_id = ${EXT} AND environment_kind NOT IN (SELECT value FROM json_each(?2))`)
      .bind(name, JSON.stringify(doc.environments.map((e) => e.environment_kind))),
  )
  s.push(
    db
      .prepare(`DELETE FROM extension_kinds WHERE extension_id = ${EXT} AND name NOT IN (SELECT value FROM json_each(?2))`)
      .bind(name, JSON.stringify([...doc.node_kinds.map((k) => k.name), ...doc.relationship_kinds.map((k) => k.name)])),
  )
  s.push(bumpVersion(db, nowIso))
  return s
}

function bumpVersion(db: D1Database, nowIso: string): D1PreparedStatement {
  return db.prepare('UPDATE extension_catalog_version SET version = ?1, updated_at = ?2 WHERE id = 1').bind(crypto.randomUUID(), nowIso)
}

function isConstraintError(e: unknown): boolean {
  const m = String((e as Error)?.message ?? e)
  return /SQLITE_CONSTRAINT|constraint failed|edgehound:/i.test(m)
}

/** The change's batch with its audit success row (auditedBatch: one transaction, both or neither). */
async function runBatch(db: D1Database, statements: D1PreparedStatement[], audit: AuditWrite, opts: { ifChanged?: number } = {}): Promise<D1Result[]> {
  try {
    return await auditedBatch(db, statements, audit, opts)
  } catch (e) {
    if (isConstraintError(e)) throw new ExtensionWriteConflict(String((e as Error)?.message ?? e))
    throw e
  }
}

export async function upsertExtension(db: D1Database, doc: ExtensionDocument, nowIso: string, audit: AuditWrite): Promise<{ id: number; created: boolean }> {
  const results = await runBatch(db, upsertStatements(db, doc, nowIso, crypto.randomUUID()), audit)
  const row = results[0].results[0] as { id: number; created: number } | undefined
  if (!row) throw new Error('extension upsert returned no row')
  return { id: row.id, created: row.created === 1 }
}

interface ExtensionRow {
  id: number
  name: string
  display_name: string | null
  namespace: string
  version: string
  is_builtin: number
}

function summary(r: ExtensionRow): ExtensionSummary {
  return { id: r.id, name: r.name, display_name: r.display_name || r.name, namespace: r.namespace, version: r.version, is_builtin: r.is_builtin === 1 }
}

export async function listExtensions(db: D1Database): Promise<ExtensionSummary[]> {
  const { results } = await db
    .prepare("SELECT id, name, display_name, namespace, version, is_builtin FROM extensions ORDER BY COALESCE(NULLIF(display_name, ''), name) COLLATE NOCASE, name, id")
    .all<ExtensionRow>()
  return results.map(summary)
}

export async function getExtension(db: D1Database, id: number): Promise<ExtensionSummary | null> {
  const r = await db.prepare('SELECT id, name, display_name, namespace, version, is_builtin FROM extensions WHERE id = ?').bind(id).first<ExtensionRow>()
  return r ? summary(r) : null
}

interface KindRow {
  name: string
  class: 'node' | 'relationship'
  display_name: string | null
  description: string | null
  is_display_kind: number | null
  icon: string | null
  color: string | null
  is_traversable: number | null
}
interface EnvRow {
  environment_kind: string
  source_kind: string
}
interface PrincipalRow {
  environment_kind: string
  principal_kind: string
}
interface FindingRow {
  name: string
  display_name: string | null
  relationship_kind: string
  environment_kind: string
  short_description: string
  long_description: string
  short_remediation: string
  long_remediation: string
}

/** Only the members that were given: NULL columns are absent members. */
function present<T extends Record<string, unknown>>(o: T): Partial<{ [K in keyof T]: Exclude<T[K], null> }> {
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(o)) if (v !== null && v !== undefined) out[k] = v
  return out as Partial<{ [K in keyof T]: Exclude<T[K], null> }>
}

/** The stored document of an extension, exactly as it was last PUT (see schema.ts for the normalisations). */
export async function getExtensionDocument(db: D1Database, id: number): Promise<{ summary: ExtensionSummary; doc: ExtensionDocument } | null> {
  const [ext, kinds, envs, principals, findings] = await db.batch([
    db.prepare('SELECT id, name, display_name, namespace, version, is_builtin FROM extensions WHERE id = ?1').bind(id),
    db
      .prepare(
        `SELECT name, class, display_name, description, is_display_kind, icon, color, is_traversable
         FROM extension_kinds WHERE extension_id = ?1 ORDER BY class, position`,
      )
      .bind(id),
    db.prepare('SELECT environment_kind, source_kind FROM extension_environments WHERE extension_id = ?1 ORDER BY position').bind(id),
    db
      .prepare(
        `SELECT p.environment_kind, p.principal_kind FROM extension_environment_principals p
         JOIN extension_environments e ON e.environment_kind = p.environment_kind
         WHERE e.extension_id = ?1 ORDER BY e.position, p.position`,
      )
      .bind(id),
    db
      .prepare(
        `SELECT name, display_name, relationship_kind, environment_kind, short_description, long_description, short_remediation, long_remediation
         FROM extension_findings WHERE extension_id = ?1 ORDER BY position`,
      )
      .bind(id),
  ])
  const row = ext.results[0] as ExtensionRow | undefined
  if (!row) return null
  const kindRowsRead = kinds.results as KindRow[]
  const byEnv = new Map<string, string[]>()
  for (const p of principals.results as PrincipalRow[]) {
    const list = byEnv.get(p.environment_kind) ?? []
    list.push(p.principal_kind)
    byEnv.set(p.environment_kind, list)
  }
  const doc: ExtensionDocument = {
    schema: { name: row.name, ...present({ display_name: row.display_name }), version: row.version, namespace: row.namespace },
    node_kinds: kindRowsRead
      .filter((k) => k.class === 'node')
      .map((k) => ({
        name: k.name,
        ...present({
          display_name: k.display_name,
          description: k.description,
          is_display_kind: k.is_display_kind === null ? null : k.is_display_kind === 1,
          icon: k.icon,
          color: k.color,
        }),
      })),
    relationship_kinds: kindRowsRead
      .filter((k) => k.class === 'relationship')
      .map((k) => ({ name: k.name, ...present({ description: k.description }), is_traversable: k.is_traversable === 1 })),
    environments: (envs.results as EnvRow[]).map((e) => ({
      environment_kind: e.environment_kind,
      source_kind: e.source_kind,
      principal_kinds: byEnv.get(e.environment_kind) ?? [],
    })),
    relationship_findings: (findings.results as FindingRow[]).map((f) => ({
      name: f.name,
      ...present({ display_name: f.display_name }),
      relationship_kind: f.relationship_kind,
      environment_kind: f.environment_kind,
      remediation: {
        short_description: f.short_description,
        long_description: f.long_description,
        short_remediation: f.short_remediation,
        long_remediation: f.long_remediation,
      },
    })),
  }
  return { summary: summary(row), doc }
}

/** Deletes a non-built-in extension and its children (cascade). Null when there was nothing to delete. */
export async function deleteExtension(db: D1Database, id: number, nowIso: string, audit: AuditWrite): Promise<{ id: number; name: string } | null> {
  // the success row right after the DELETE, written only if it removed the extension
  const [del] = await runBatch(
    db,
    [db.prepare('DELETE FROM extensions WHERE id = ?1 AND is_builtin = 0 RETURNING id, name').bind(id), bumpVersion(db, nowIso)],
    audit,
    { ifChanged: 0 },
  )
  return (del.results[0] as { id: number; name: string } | undefined) ?? null
}

/** A relationship kind of an installed extension, for GET /api/v2/graph-schema/edges. */
export interface RelationshipKindRow {
  name: string
  description: string
  is_traversable: boolean
  schema_name: string
  is_builtin: boolean
}

/** Every installed extension's relationship kinds: by extension id, then as the document lists them. */
export async function listRelationshipKinds(db: D1Database): Promise<RelationshipKindRow[]> {
  const { results } = await db
    .prepare(
      `SELECT k.name, coalesce(k.description, '') AS description, k.is_traversable, e.name AS schema_name, e.is_builtin
       FROM extension_kinds k JOIN extensions e ON e.id = k.extension_id
       WHERE k.class = 'relationship' ORDER BY e.id, k.position`,
    )
    .all<{ name: string; description: string; is_traversable: number | null; schema_name: string; is_builtin: number }>()
  return results.map((r) => ({ ...r, is_traversable: r.is_traversable === 1, is_builtin: r.is_builtin === 1 }))
}
