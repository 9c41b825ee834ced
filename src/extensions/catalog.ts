/**
 * The kind catalogue: what the installed graph extensions (built-in Active Directory and Azure, plus any
 * installed through PUT /api/v2/extensions) say about node kinds, relationship kinds, environments and
 * relationship findings. Ingest, the graph reads and analysis all read it through `loadKindCatalog`,
 * which the extensions store implements with an isolate cache keyed by a version that every extension
 * write bumps: one tiny statement (the version) while the cached copy is current, one batch more when
 * it is not.
 *
 * A read that sends a statement or batch of its own can save even that statement: put the version in it
 * (`CATALOG_VERSION_SQL` as a column of a store's statement, or `catalogVersionStatement` as one more
 * statement of the batch, read with `catalogVersionOf`), then call `kindCatalogAt(db, version)`. It
 * returns the cached copy when it has that version, else loads the catalogue (that version or a newer
 * one). Do this only where the route's own rows do not depend on the catalogue, or where a catalogue at
 * least as new as those rows is right (the catalogue may be newer than the rows, never older than the
 * version read).
 *
 * The catalogue object is shared by every request of an isolate until the version changes: treat it,
 * its Sets, Maps and arrays as read-only.
 *
 * CONTRACT shared by src/extensions (implements), src/graph and src/findings (consume).
 */
export interface EnvironmentKindInfo {
  /** node kind whose nodes are environments, e.g. `Domain`, `AZTenant`, `GH_Organization` */
  environmentKind: string
  sourceKind: string
  /** node kinds counted as principals of such an environment */
  principalKinds: string[]
  extensionName: string
  /** shown as `type` in available-domains for extension environments */
  extensionDisplayName: string
  isBuiltin: boolean
}

export interface Remediation {
  short_description: string
  long_description: string
  short_remediation: string
  long_remediation: string
}

export interface RelationshipFindingInfo {
  name: string
  displayName: string
  relationshipKind: string
  environmentKind: string
  remediation: Remediation
  extensionName: string
}

/** Added by the extensions store (not part of the original contract; consumers may ignore it). */
export interface NodeKindInfo {
  extensionName: string
  /** the node kind's display_name, or its name when none was given */
  displayName: string
  isDisplayKind: boolean
  /** as given; null when absent or "" */
  icon: string | null
  color: string | null
}

/** Added by the extensions store: one installed extension. */
export interface ExtensionInfo {
  id: number
  name: string
  /** display_name, or name when none was given */
  displayName: string
  namespace: string
  version: string
  isBuiltin: boolean
}

export interface KindCatalog {
  /** every node kind of every installed extension, built-ins included */
  nodeKinds: Set<string>
  /** every relationship kind, with whether paths may traverse it */
  relationshipKinds: Map<string, { traversable: boolean; extensionName: string }>
  environments: EnvironmentKindInfo[]
  relationshipFindings: RelationshipFindingInfo[]
  /** changes whenever an extension is created, updated or deleted */
  version: string
  /** (added; always set by loadKindCatalog, optional so that hand-built test catalogues stay valid)
   *  node kind → owner and display data; same keys as `nodeKinds` */
  nodeKindInfo?: Map<string, NodeKindInfo>
  /** (added; always set by loadKindCatalog) every installed extension, built-ins first, then by name */
  extensions?: ExtensionInfo[]
}

/** What loadKindCatalog returns: a KindCatalog with the added members present. */
export type LoadedKindCatalog = KindCatalog & Required<Pick<KindCatalog, 'nodeKindInfo' | 'extensions'>>

export { loadKindCatalog, kindCatalogAt, CATALOG_VERSION_SQL, catalogVersionStatement, catalogVersionOf } from './catalog.store'
