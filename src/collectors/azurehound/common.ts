/**
 * What every AzureHound kind's converter shares: reading AzureHound's JSON the way BloodHound's Go
 * decoder reads it, the AZ node row, and the relationship helpers. One file per group of kinds uses these
 * (identity.ts, membership.ts, resources.ts, rbac.ts); index.ts maps each AzureHound `kind` to its converter.
 *
 * Reading rules (BloodHound unmarshals each item into AzureHound's Go models with encoding/json):
 *  - member names match case-insensitively, an exact match first (Go does the same);
 *  - an absent or null member is the zero value ("" / false / empty list);
 *  - a member of the wrong JSON type makes Go's Unmarshal fail, and BloodHound then drops the whole item
 *    with a log line. We report it instead, as a violation with its JSON path, and the file is refused
 *    (issue 13: a malformed item is a 400 naming the file and the path, never a silent loss).
 *
 * Object ids are upper-cased, as BloodHound's Azure conversion does (packages/go/ein/azure.go), so that
 * the same object converted from different kinds (a user, its group membership, its role assignment)
 * is one node whatever case AzureHound wrote.
 *
 * Pure: values in, rows and violations out (through an AzureEmitter).
 */
import type { NodeRow, PropertyValue } from '../../graph/opengraph'

/**
 * Where a converter writes what one `data` item becomes. Structurally the collectors' `Emitter`
 * (src/collectors/payload.ts): `edge` names each end's kind so that an end missing from the data becomes
 * a placeholder node of that kind (BloodHound's behaviour).
 */
export interface AzureEmitter {
  node(row: NodeRow): void
  edge(start: string, startKind: string, end: string, endKind: string, kind: string, props: Record<string, PropertyValue>): void
  violation(context: string, message: string): void
}

export type AzureConverter = (data: Reader, out: AzureEmitter) => void

export type Obj = Record<string, unknown>

export function isObject(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

function describe(v: unknown): string {
  if (v === null) return 'null'
  if (Array.isArray(v)) return 'an array'
  return typeof v === 'object' ? 'an object' : `a ${typeof v}`
}

/** Typed, path-aware access to one JSON object of an item; type errors become violations. */
export class Reader {
  constructor(
    readonly obj: Obj,
    readonly path: string,
    readonly out: AzureEmitter,
  ) {}

  /** The raw member, matching the name case-insensitively (exact match first). */
  raw(key: string): unknown {
    if (key in this.obj) return this.obj[key]
    const lower = key.toLowerCase()
    for (const k of Object.keys(this.obj)) if (k.toLowerCase() === lower) return this.obj[k]
    return undefined
  }

  private bad(key: string, want: string, v: unknown): void {
    this.out.violation(`${this.path}.${key}`, `${key} must be ${want}, not ${describe(v)}`)
  }

  str(key: string): string {
    const v = this.raw(key)
    if (v === undefined || v === null) return ''
    if (typeof v !== 'string') {
      this.bad(key, 'a string', v)
      return ''
    }
    return v
  }

  /** A string that must be present and non-empty (an object's own id): a violation otherwise. */
  id(key: string): string {
    const v = this.raw(key)
    if (v === undefined || v === null || v === '') {
      this.out.violation(`${this.path}.${key}`, `${key} is required`)
      return ''
    }
    return this.str(key)
  }

  bool(key: string): boolean {
    const v = this.raw(key)
    if (v === undefined || v === null) return false
    if (typeof v !== 'boolean') {
      this.bad(key, 'a boolean', v)
      return false
    }
    return v
  }

  strings(key: string): string[] {
    const v = this.raw(key)
    if (v === undefined || v === null) return []
    if (!Array.isArray(v)) {
      this.bad(key, 'an array of strings', v)
      return []
    }
    const ok: string[] = []
    v.forEach((x, i) => {
      if (typeof x === 'string') ok.push(x)
      else this.out.violation(`${this.path}.${key}[${i}]`, `${key} must hold strings, not ${describe(x)}`)
    })
    return ok
  }

  /** A nested object (an empty one when absent or null). */
  obj_(key: string): Reader {
    const v = this.raw(key)
    if (v === undefined || v === null) return new Reader({}, `${this.path}.${key}`, this.out)
    if (!isObject(v)) {
      this.bad(key, 'an object', v)
      return new Reader({}, `${this.path}.${key}`, this.out)
    }
    return new Reader(v, `${this.path}.${key}`, this.out)
  }

  /** The objects of an array member (each with its path); non-objects are violations. */
  list(key: string): Reader[] {
    const v = this.raw(key)
    if (v === undefined || v === null) return []
    if (!Array.isArray(v)) {
      this.bad(key, 'an array', v)
      return []
    }
    const out: Reader[] = []
    v.forEach((x, i) => {
      if (isObject(x)) out.push(new Reader(x, `${this.path}.${key}[${i}]`, this.out))
      else this.out.violation(`${this.path}.${key}[${i}]`, `an element of ${key} must be an object, not ${describe(x)}`)
    })
    return out
  }

  /** The object values of a map member (`userAssignedIdentities`), in key order. */
  mapValues(key: string): Reader[] {
    const v = this.raw(key)
    if (v === undefined || v === null) return []
    if (!isObject(v)) {
      this.bad(key, 'an object', v)
      return []
    }
    const out: Reader[] = []
    for (const [k, x] of Object.entries(v)) {
      if (isObject(x)) out.push(new Reader(x, `${this.path}.${key}.${k}`, this.out))
      else if (x !== null) this.out.violation(`${this.path}.${key}.${k}`, `must be an object, not ${describe(x)}`)
    }
    return out
  }
}

export const up = (s: string) => s.toUpperCase()

/** BloodHound's base kind of every Azure node (graphschema azure `Entity`). */
export const AZ_BASE = 'AZBase'

/**
 * An Azure node: kinds [kind, AZBase], upper-cased id. `tenantid` (upper-cased) is what puts the node
 * in its tenant's environment (docs/graph.md Environments); the AZTenant node IS the environment.
 */
export function azNode(kind: string, id: string, props: Record<string, PropertyValue | undefined>): NodeRow {
  const p: Record<string, PropertyValue> = {}
  for (const [k, v] of Object.entries(props)) if (v !== undefined) p[k] = v
  return { o: up(id), k: kind, ks: [kind, AZ_BASE], p, ek: kind === 'AZTenant' ? 'AZTenant' : null }
}

/** `name@tenant` upper-cased, BloodHound's display name of directory objects. */
export function nameAt(name: string, tenant: string): string {
  return up(`${name}@${tenant}`)
}

/**
 * BloodHound's ParseISO8601: only the exact layout 2006-01-02T15:04:05Z parses; anything else is Go's
 * zero time there. We keep a parsed value as RFC 3339 text and leave the property out otherwise (rather
 * than writing year 1).
 */
export function iso8601(s: string): string | undefined {
  return /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/.test(s) && !Number.isNaN(Date.parse(s)) ? s : undefined
}

/** A relationship between two objects by (upper-cased) id; an empty end skips it (BloodHound's IsValid). */
export function rel(out: AzureEmitter, start: string, startKind: string, end: string, endKind: string, kind: string, props: Record<string, PropertyValue> = {}): void {
  if (start === '' || end === '' || kind === '') return
  out.edge(up(start), startKind, up(end), endKind, kind, props)
}

/** Directory object `@odata.type` → kind (ExtractTypeFromDirectoryObject); other types are skipped. */
const DIRECTORY_KINDS: Record<string, string> = {
  '#microsoft.graph.group': 'AZGroup',
  '#microsoft.graph.user': 'AZUser',
  '#microsoft.graph.servicePrincipal': 'AZServicePrincipal',
  '#microsoft.graph.device': 'AZDevice',
}

/** {id, @odata.type} → [id, kind], or null for a type BloodHound does not convert (it warns and skips). */
export function directoryObject(r: Reader): [string, string] | null {
  const id = r.str('id')
  const kind = DIRECTORY_KINDS[r.str('@odata.type')]
  return kind ? [id, kind] : null
}

/** Managed identities of a resource: system-assigned, then user-assigned ones that have a client id. */
export function managedIdentities(out: AzureEmitter, r: Reader, id: string, kind: string): void {
  const identity = r.obj_('identity')
  rel(out, id, kind, identity.str('principalId'), 'AZServicePrincipal', 'AZManagedIdentity')
  for (const u of identity.mapValues('userAssignedIdentities'))
    if (u.str('clientId') !== '') rel(out, id, kind, u.str('principalId'), 'AZServicePrincipal', 'AZManagedIdentity')
}
