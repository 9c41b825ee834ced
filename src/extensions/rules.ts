import type { ErrorDetail } from '../http/errors'
import type { LoadedKindCatalog } from './catalog'
import { markdownSafetyProblems } from './markdown-safety'

/**
 * The cross-member rules of a graph extension document (issue 4, BloodHound §6.3), as one pure function.
 *
 * They run on the RAW payload (whatever zod thought of its shape), reading each member only when it has
 * the right type: a member of the wrong type is already reported by the shape check, and skipping it here
 * keeps one mistake from producing a cascade of follow-up errors. Names that are strings count as declared
 * even when another member of their item is broken, for the same reason.
 *
 * The installed state (which extension owns which kind, environment and finding) comes from the kind
 * catalogue; the rules never read the database themselves.
 */

export interface ExtensionRef {
  name: string
  displayName: string
  isBuiltin: boolean
}

export interface InstalledState {
  extensions: Map<string, ExtensionRef>
  /** node and relationship kind name → owning extension */
  kindOwners: Map<string, ExtensionRef>
  /** environment kind → owning extension */
  environmentOwners: Map<string, ExtensionRef>
  /** relationship finding name → owning extension */
  findingOwners: Map<string, ExtensionRef>
  /** environment kind → the findings (of any extension) whose environment_kind it is */
  findingsByEnvironment: Map<string, { finding: string; extension: ExtensionRef }[]>
}

export const EMPTY_INSTALLED: InstalledState = {
  extensions: new Map(),
  kindOwners: new Map(),
  environmentOwners: new Map(),
  findingOwners: new Map(),
  findingsByEnvironment: new Map(),
}

export function installedState(
  catalog: Pick<LoadedKindCatalog, 'extensions' | 'nodeKindInfo' | 'relationshipKinds' | 'environments' | 'relationshipFindings'>,
): InstalledState {
  const extensions = new Map<string, ExtensionRef>()
  for (const e of catalog.extensions) extensions.set(e.name, { name: e.name, displayName: e.displayName, isBuiltin: e.isBuiltin })
  const ref = (name: string): ExtensionRef => extensions.get(name) ?? { name, displayName: name, isBuiltin: false }
  const kindOwners = new Map<string, ExtensionRef>()
  for (const [k, info] of catalog.nodeKindInfo) kindOwners.set(k, ref(info.extensionName))
  for (const [k, info] of catalog.relationshipKinds) kindOwners.set(k, ref(info.extensionName))
  const environmentOwners = new Map<string, ExtensionRef>()
  for (const e of catalog.environments) environmentOwners.set(e.environmentKind, ref(e.extensionName))
  const findingOwners = new Map<string, ExtensionRef>()
  const findingsByEnvironment = new Map<string, { finding: string; extension: ExtensionRef }[]>()
  for (const f of catalog.relationshipFindings) {
    findingOwners.set(f.name, ref(f.extensionName))
    const list = findingsByEnvironment.get(f.environmentKind) ?? []
    list.push({ finding: f.name, extension: ref(f.extensionName) })
    findingsByEnvironment.set(f.environmentKind, list)
  }
  return { extensions, kindOwners, environmentOwners, findingOwners, findingsByEnvironment }
}

/** Semantic Versioning 2.0.0 (semver.org's regular expression), with or without a leading `v`. */
const SEMVER =
  /^v?(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$/

export function isSemver(v: string): boolean {
  return SEMVER.test(v)
}

/** The namespace `tag` is reserved (BloodHound uses it for its own tag kinds): exact, any case, or `tag_…`. */
export function isReservedNamespace(ns: string): boolean {
  const l = ns.toLowerCase()
  return l === 'tag' || l.startsWith('tag_')
}

export function describeExtension(e: ExtensionRef): string {
  const shown = e.displayName && e.displayName !== e.name ? `"${e.name}" (${e.displayName})` : `"${e.name}"`
  return `${e.isBuiltin ? 'the built-in extension' : 'the installed extension'} ${shown}`
}

type Loose = Record<string, unknown>
const isObj = (v: unknown): v is Loose => typeof v === 'object' && v !== null && !Array.isArray(v)
const str = (o: unknown, k: string): string | undefined => (isObj(o) && typeof o[k] === 'string' ? (o[k] as string) : undefined)
const arr = (o: unknown, k: string): unknown[] | undefined => (isObj(o) && Array.isArray(o[k]) ? (o[k] as unknown[]) : undefined)

const REMEDIATION_KEYS = ['short_description', 'long_description', 'short_remediation', 'long_remediation'] as const

/**
 * Every rule violation of a payload. `doc` is the parsed JSON body (an object); `installed` the state of
 * the other installed extensions (this extension's own current version is ignored: the payload replaces it).
 */
export function checkRules(doc: Loose, installed: InstalledState): ErrorDetail[] {
  const out: ErrorDetail[] = []
  const add = (context: string, message: string) => out.push({ context, message })

  // ---- schema --------------------------------------------------------------------------------------
  const schema = doc.schema
  const self = str(schema, 'name')
  if (self !== undefined && installed.extensions.get(self)?.isBuiltin)
    add('schema.name', `"${self}" is a built-in extension and cannot be modified`)
  const version = str(schema, 'version')
  if (version !== undefined && version.trim() !== '' && !isSemver(version))
    add('schema.version', `"${version}" is not a semantic version: expected MAJOR.MINOR.PATCH with an optional leading "v", e.g. "v1.2.0" or "1.2.0-beta.1"`)
  const ns = str(schema, 'namespace')
  if (ns !== undefined && ns.trim() !== '' && isReservedNamespace(ns))
    add('schema.namespace', `namespace "${ns}" uses the reserved namespace "tag"`)
  const prefix = ns !== undefined && ns.trim() !== '' ? `${ns}_` : undefined

  const owner = (m: Map<string, ExtensionRef>, name: string) => {
    const o = m.get(name)
    return o && o.name !== self ? o : undefined
  }
  const checkPrefix = (path: string, what: string, name: string) => {
    if (!prefix || name === '') return
    if (!name.startsWith(prefix)) add(path, `${what} "${name}" must start with the namespace prefix "${prefix}"`)
    else if (name.length === prefix.length) add(path, `${what} "${name}" needs a name after the namespace prefix "${prefix}"`)
  }

  // ---- kinds ---------------------------------------------------------------------------------------
  /** kind name → where it was first declared */
  const nodeKinds = new Map<string, string>()
  const relKinds = new Map<string, string>()
  const kinds = (member: 'node_kinds' | 'relationship_kinds', what: string, into: Map<string, string>) => {
    const items = arr(doc, member) ?? []
    items.forEach((item, i) => {
      const name = str(item, 'name')
      if (name === undefined || name === '') return
      const path = `${member}[${i}].name`
      checkPrefix(path, what, name)
      const first = nodeKinds.get(name) ?? relKinds.get(name)
      if (first !== undefined) add(path, `duplicate kind name "${name}": already declared at ${first}`)
      else into.set(name, `${member}[${i}]`)
      const o = owner(installed.kindOwners, name)
      if (o) add(path, `kind "${name}" already belongs to ${describeExtension(o)}`)
    })
  }
  kinds('node_kinds', 'node kind', nodeKinds)
  kinds('relationship_kinds', 'relationship kind', relKinds)

  const expectNodeKind = (path: string, what: string, name: string) => {
    if (nodeKinds.has(name)) return
    if (relKinds.has(name)) add(path, `${what} "${name}" is a relationship kind; it must be a node kind declared in this extension`)
    else add(path, `${what} "${name}" is not a node kind declared in this extension`)
  }

  // ---- environments --------------------------------------------------------------------------------
  const envs = arr(doc, 'environments')
  const envKinds = new Map<string, string>()
  ;(envs ?? []).forEach((env, i) => {
    const base = `environments[${i}]`
    const ek = str(env, 'environment_kind')
    if (ek !== undefined && ek !== '') {
      expectNodeKind(`${base}.environment_kind`, 'environment kind', ek)
      const first = envKinds.get(ek)
      if (first !== undefined) add(`${base}.environment_kind`, `duplicate environment kind "${ek}": already declared at ${first}`)
      else envKinds.set(ek, base)
    }
    const sk = str(env, 'source_kind')
    if (sk !== undefined && sk.trim() !== '') {
      if (prefix && sk.startsWith(prefix))
        add(`${base}.source_kind`, `source kind "${sk}" must not start with the namespace prefix "${prefix}"`)
      else if (nodeKinds.has(sk) || relKinds.has(sk))
        add(`${base}.source_kind`, `source kind "${sk}" must not be a kind declared in this extension`)
    }
    const seen = new Set<string>()
    ;(arr(env, 'principal_kinds') ?? []).forEach((pk, j) => {
      if (typeof pk !== 'string' || pk === '') return
      const path = `${base}.principal_kinds[${j}]`
      expectNodeKind(path, 'principal kind', pk)
      if (seen.has(pk)) add(path, `duplicate principal kind "${pk}" in this environment`)
      seen.add(pk)
    })
  })

  // Environments this update removes must not be in use by another extension's findings.
  if (self !== undefined && (envs !== undefined || doc.environments === undefined || doc.environments === null)) {
    for (const [ek, o] of installed.environmentOwners) {
      if (o.name !== self || envKinds.has(ek)) continue
      for (const user of installed.findingsByEnvironment.get(ek) ?? []) {
        if (user.extension.name === self) continue
        add('environments', `environment "${ek}" cannot be removed: relationship finding "${user.finding}" of ${describeExtension(user.extension)} uses it`)
      }
    }
  }

  // ---- relationship findings -----------------------------------------------------------------------
  const findingNames = new Map<string, string>()
  ;(arr(doc, 'relationship_findings') ?? []).forEach((f, i) => {
    const base = `relationship_findings[${i}]`
    const name = str(f, 'name')
    if (name !== undefined && name !== '') {
      checkPrefix(`${base}.name`, 'relationship finding', name)
      const first = findingNames.get(name)
      if (first !== undefined) add(`${base}.name`, `duplicate relationship finding "${name}": already declared at ${first}`)
      else findingNames.set(name, base)
      const o = owner(installed.findingOwners, name)
      if (o) add(`${base}.name`, `relationship finding "${name}" already belongs to ${describeExtension(o)}`)
    }
    const rk = str(f, 'relationship_kind')
    if (rk !== undefined && rk !== '' && !relKinds.has(rk)) {
      if (nodeKinds.has(rk))
        add(`${base}.relationship_kind`, `"${rk}" is a node kind; relationship_kind must be a relationship kind declared in this extension`)
      else add(`${base}.relationship_kind`, `relationship kind "${rk}" is not declared in this extension`)
    }
    const ek = str(f, 'environment_kind')
    if (ek !== undefined && ek !== '' && !envKinds.has(ek) && !owner(installed.environmentOwners, ek))
      add(`${base}.environment_kind`, `environment kind "${ek}" is not an environment of this extension or of any installed extension`)
    const rem = isObj(f) ? f.remediation : undefined
    for (const key of REMEDIATION_KEYS) {
      const t = str(rem, key)
      if (t === undefined) continue
      for (const p of markdownSafetyProblems(t)) add(`${base}.remediation.${key}`, `unsafe Markdown: ${p.reason}`)
    }
  })

  return out
}

/** Why an installed extension cannot be deleted (findings of other extensions use its environments). */
export function deletionBlockers(extensionName: string, installed: InstalledState): string[] {
  const out: string[] = []
  for (const [ek, o] of installed.environmentOwners) {
    if (o.name !== extensionName) continue
    for (const user of installed.findingsByEnvironment.get(ek) ?? []) {
      if (user.extension.name === extensionName) continue
      out.push(`environment "${ek}" is used by relationship finding "${user.finding}" of ${describeExtension(user.extension)}`)
    }
  }
  return out
}
