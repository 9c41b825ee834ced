import type { EnvironmentKindInfo, ExtensionInfo, LoadedKindCatalog, NodeKindInfo, RelationshipFindingInfo } from './catalog'

/**
 * loadKindCatalog: the kind catalogue, cached per isolate; one tiny statement while the cache is current.
 *
 * Every extension write sets a new random value in `extension_catalog_version` in the same batch as the
 * write (extensions.store.ts). A read first asks for that value alone (a primary-key lookup): when it is the
 * cached copy's version, the cached copy is the answer. Only when it differs (another isolate, or this one,
 * changed the extensions) does one db.batch() read the version together with the catalogue rows. Each row
 * query carries `WHERE <current version> IS NOT <cached version>`, so that a copy refreshed meanwhile by a
 * concurrent request costs no rows. A batch is one transaction, so the version and the rows always belong
 * together.
 *
 * Routes that send a statement or batch of their own anyway fold the version into it instead
 * (`CATALOG_VERSION_SQL` as a column, or `catalogVersionStatement` as one more statement of the batch) and
 * call `kindCatalogAt(db, version)`: while the cache is current, no statement of its own at all.
 *
 * The version is random (not a counter) so that two databases can never share a version with different
 * contents (tests run one database per file in one isolate); the only shared value is the migration's
 * initial one, and it names identical contents (the built-ins).
 */

let cached: LoadedKindCatalog | null = null

/** The current catalogue version as a scalar subquery, to fold into a statement of the caller's own. */
export const CATALOG_VERSION_SQL = '(SELECT version FROM extension_catalog_version WHERE id = 1)'

const CHANGED = `${CATALOG_VERSION_SQL} IS NOT ?1`

const NO_VERSION = 'extension_catalog_version has no row: is migration 0003 applied?'

/** The version alone, one row `{ version }`: for a batch of the caller's own; read it with `catalogVersionOf`. */
export function catalogVersionStatement(db: D1Database): D1PreparedStatement {
  return db.prepare('SELECT version FROM extension_catalog_version WHERE id = 1')
}

/** The version in the result of `catalogVersionStatement`. */
export function catalogVersionOf(result: D1Result): string {
  const version = (result.results[0] as { version: string } | undefined)?.version
  if (version === undefined) throw new Error(NO_VERSION)
  return version
}

export async function loadKindCatalog(db: D1Database): Promise<LoadedKindCatalog> {
  const row = await catalogVersionStatement(db).first<{ version: string }>()
  if (!row) throw new Error(NO_VERSION)
  return kindCatalogAt(db, row.version)
}

/**
 * The catalogue, given a version the caller has just read from the database (in a statement or batch of its
 * own): the isolate's copy when it has that version (no I/O), else the catalogue loaded now, which is that
 * version or a newer one if an extension write came in between.
 */
export async function kindCatalogAt(db: D1Database, version: string): Promise<LoadedKindCatalog> {
  const current = cached
  if (current && current.version === version) return current
  return refresh(db)
}

interface ExtRow {
  id: number
  name: string
  display_name: string | null
  namespace: string
  version: string
  is_builtin: number
}
interface KindRow {
  name: string
  class: 'node' | 'relationship'
  display_name: string | null
  is_display_kind: number | null
  icon: string | null
  color: string | null
  is_traversable: number | null
  extension_name: string
}
interface EnvRow {
  environment_kind: string
  source_kind: string
  extension_name: string
  extension_display_name: string
  is_builtin: number
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
  extension_name: string
}

/** The version, and the catalogue rows unless it is the cached copy's: one batch. */
async function refresh(db: D1Database): Promise<LoadedKindCatalog> {
  const before = cached
  const known = before?.version ?? null
  const [v, exts, kinds, envs, principals, findings] = await db.batch([
    catalogVersionStatement(db),
    db
      .prepare(`SELECT id, name, display_name, namespace, version, is_builtin FROM extensions WHERE ${CHANGED} ORDER BY is_builtin DESC, CASE WHEN is_builtin = 1 THEN id END, name`)
      .bind(known),
    db
      .prepare(
        `SELECT k.name, k.class, k.display_name, k.is_display_kind, k.icon, k.color, k.is_traversable, e.name AS extension_name
         FROM extension_kinds k JOIN extensions e ON e.id = k.extension_id WHERE ${CHANGED} ORDER BY e.id, k.class, k.position`,
      )
      .bind(known),
    db
      .prepare(
        `SELECT v.environment_kind, v.source_kind, e.name AS extension_name, COALESCE(NULLIF(e.display_name, ''), e.name) AS extension_display_name, e.is_builtin
         FROM extension_environments v JOIN extensions e ON e.id = v.extension_id WHERE ${CHANGED} ORDER BY e.id, v.position`,
      )
      .bind(known),
    db.prepare(`SELECT environment_kind, principal_kind FROM extension_environment_principals WHERE ${CHANGED} ORDER BY environment_kind, position`).bind(known),
    db
      .prepare(
        `SELECT f.name, f.display_name, f.relationship_kind, f.environment_kind, f.short_description, f.long_description,
                f.short_remediation, f.long_remediation, e.name AS extension_name
         FROM extension_findings f JOIN extensions e ON e.id = f.extension_id WHERE ${CHANGED} ORDER BY e.id, f.position`,
      )
      .bind(known),
  ])
  const version = catalogVersionOf(v)
  // The row queries returned nothing exactly when the version is the one they were guarded with (`known`):
  // compare with that copy, not with `cached`, which a concurrent request may have replaced meanwhile.
  if (before && before.version === version) return before

  const catalog = buildCatalog(
    version,
    exts.results as ExtRow[],
    kinds.results as KindRow[],
    envs.results as EnvRow[],
    principals.results as PrincipalRow[],
    findings.results as FindingRow[],
  )
  cached = catalog
  return catalog
}

function buildCatalog(version: string, exts: ExtRow[], kinds: KindRow[], envs: EnvRow[], principals: PrincipalRow[], findings: FindingRow[]): LoadedKindCatalog {
  const extensions: ExtensionInfo[] = exts.map((e) =>
    Object.freeze({
      id: e.id,
      name: e.name,
      displayName: e.display_name || e.name,
      namespace: e.namespace,
      version: e.version,
      isBuiltin: e.is_builtin === 1,
    }),
  )
  const nodeKinds = new Set<string>()
  const nodeKindInfo = new Map<string, NodeKindInfo>()
  const relationshipKinds = new Map<string, { traversable: boolean; extensionName: string }>()
  for (const k of kinds) {
    if (k.class === 'node') {
      nodeKinds.add(k.name)
      nodeKindInfo.set(
        k.name,
        Object.freeze({
          extensionName: k.extension_name,
          displayName: k.display_name || k.name,
          isDisplayKind: k.is_display_kind === 1,
          icon: k.icon || null,
          color: k.color || null,
        }),
      )
    } else relationshipKinds.set(k.name, Object.freeze({ traversable: k.is_traversable === 1, extensionName: k.extension_name }))
  }
  const principalsOf = new Map<string, string[]>()
  for (const p of principals) {
    const list = principalsOf.get(p.environment_kind) ?? []
    list.push(p.principal_kind)
    principalsOf.set(p.environment_kind, list)
  }
  const environments: EnvironmentKindInfo[] = envs.map((e) =>
    Object.freeze({
      environmentKind: e.environment_kind,
      sourceKind: e.source_kind,
      principalKinds: Object.freeze(principalsOf.get(e.environment_kind) ?? []) as string[],
      extensionName: e.extension_name,
      extensionDisplayName: e.extension_display_name,
      isBuiltin: e.is_builtin === 1,
    }),
  )
  const relationshipFindings: RelationshipFindingInfo[] = findings.map((f) =>
    Object.freeze({
      name: f.name,
      displayName: f.display_name || f.name,
      relationshipKind: f.relationship_kind,
      environmentKind: f.environment_kind,
      remediation: Object.freeze({
        short_description: f.short_description,
        long_description: f.long_description,
        short_remediation: f.short_remediation,
        long_remediation: f.long_remediation,
      }),
      extensionName: f.extension_name,
    }),
  )
  return {
    nodeKinds,
    relationshipKinds,
    environments: Object.freeze(environments) as EnvironmentKindInfo[],
    relationshipFindings: Object.freeze(relationshipFindings) as RelationshipFindingInfo[],
    version,
    nodeKindInfo,
    extensions: Object.freeze(extensions) as ExtensionInfo[],
  }
}
