/**
 * An extension folder as OpenGraph collectors ship it (e.g. SpecterOps/openhound-github `extension/`), checked
 * before anything is sent (pure: file texts in, a plan or every problem out):
 *
 *   schema.json                    the graph extension (PUT /api/v2/extensions; the service validates it)
 *   privilege_zone_rules/*.json    {name, description?, cypher, enabled?, zone?, allow_disable?}: a Cypher rule of
 *                                  the zone (asset group tag) named `zone`, default "Tier Zero"
 *   saved_searches/*.json          {name, query, description?}: a saved Cypher query
 *
 * Rules and searches are matched by name when installed (upsert), so installing the same folder twice
 * changes nothing the second time. A rule's Cypher is parsed with the service's own parser (src/cypher/parse.ts),
 * so a query the service would refuse is reported here, naming the file, before any request.
 */
import { CypherError, parseCypher } from '../cypher/parse'

export const SCHEMA_FILE = 'schema.json'
export const RULES_DIR = 'privilege_zone_rules'
export const SEARCHES_DIR = 'saved_searches'
export const DEFAULT_ZONE = 'Tier Zero'

export interface FolderFile {
  /** path relative to the folder, with `/` (e.g. `privilege_zone_rules/t0-owners.json`) */
  path: string
  text: string
}

export interface RuleSpec {
  file: string
  name: string
  description: string
  cypher: string
  enabled: boolean
  zone: string
}

export interface SearchSpec {
  file: string
  name: string
  query: string
  description: string
}

export interface FolderPlan {
  schema: { file: string; bytes: Uint8Array; name: string | null } | null
  rules: RuleSpec[]
  searches: SearchSpec[]
}

export class FolderProblems extends Error {
  constructor(readonly problems: string[]) {
    super(problems.join('\n'))
    this.name = 'FolderProblems'
  }
}

function parseObject(f: FolderFile, problems: string[]): Record<string, unknown> | null {
  let v: unknown
  try {
    v = JSON.parse(f.text)
  } catch (e) {
    problems.push(`${f.path}: not valid JSON (${(e as Error).message})`)
    return null
  }
  if (!v || typeof v !== 'object' || Array.isArray(v)) {
    problems.push(`${f.path}: must be a JSON object`)
    return null
  }
  return v as Record<string, unknown>
}

function str(o: Record<string, unknown>, key: string, f: FolderFile, problems: string[], required: boolean): string | undefined {
  const v = o[key]
  if (v === undefined || v === null) {
    if (required) problems.push(`${f.path}: "${key}" is required`)
    return undefined
  }
  if (typeof v !== 'string') {
    problems.push(`${f.path}: "${key}" must be a string`)
    return undefined
  }
  if (required && v.trim() === '') {
    problems.push(`${f.path}: "${key}" must not be empty`)
    return undefined
  }
  return v
}

function bool(o: Record<string, unknown>, key: string, f: FolderFile, problems: string[]): boolean | undefined {
  const v = o[key]
  if (v === undefined || v === null) return undefined
  if (typeof v !== 'boolean') {
    problems.push(`${f.path}: "${key}" must be true or false`)
    return undefined
  }
  return v
}

/**
 * Checks every file and answers the plan, or throws {@link FolderProblems} listing every problem (each naming
 * its file). `files` holds schema.json and the `*.json` files of the two folders; anything else is not read.
 */
export function planFolder(files: readonly FolderFile[]): FolderPlan {
  const problems: string[] = []
  const plan: FolderPlan = { schema: null, rules: [], searches: [] }
  const ruleNames = new Map<string, string>()
  const searchNames = new Map<string, string>()
  for (const f of [...files].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))) {
    if (f.path === SCHEMA_FILE) {
      const o = parseObject(f, problems)
      if (!o) continue
      const schema = o.schema as { name?: unknown } | undefined
      if (!schema || typeof schema !== 'object') problems.push(`${f.path}: "schema" (name, display_name, version, namespace) is required`)
      plan.schema = { file: f.path, bytes: new TextEncoder().encode(f.text), name: typeof schema?.name === 'string' ? schema.name : null }
    } else if (f.path.startsWith(`${RULES_DIR}/`)) {
      const o = parseObject(f, problems)
      if (!o) continue
      const name = str(o, 'name', f, problems, true)?.trim()
      const cypher = str(o, 'cypher', f, problems, true)
      const description = str(o, 'description', f, problems, false) ?? ''
      const enabled = bool(o, 'enabled', f, problems) ?? true
      bool(o, 'allow_disable', f, problems)
      const zone = str(o, 'zone', f, problems, false)?.trim() || DEFAULT_ZONE
      if (cypher !== undefined) {
        try {
          parseCypher(cypher)
        } catch (e) {
          if (!(e instanceof CypherError)) throw e
          problems.push(`${f.path}: "cypher" is refused: ${e.message}`)
          continue
        }
      }
      if (name === undefined || cypher === undefined) continue
      const key = `${zone}\u0000${name}`
      const other = ruleNames.get(key)
      if (other) problems.push(`${f.path}: rule name "${name}" is also used by ${other} (names are unique per zone)`)
      ruleNames.set(key, f.path)
      plan.rules.push({ file: f.path, name, description, cypher, enabled, zone })
    } else if (f.path.startsWith(`${SEARCHES_DIR}/`)) {
      const o = parseObject(f, problems)
      if (!o) continue
      const name = str(o, 'name', f, problems, true)?.trim()
      const query = str(o, 'query', f, problems, true)
      const description = str(o, 'description', f, problems, false) ?? ''
      if (name === undefined || query === undefined) continue
      const other = searchNames.get(name)
      if (other) problems.push(`${f.path}: saved search name "${name}" is also used by ${other}`)
      searchNames.set(name, f.path)
      plan.searches.push({ file: f.path, name, query, description })
    }
  }
  if (!plan.schema && plan.rules.length === 0 && plan.searches.length === 0 && problems.length === 0)
    problems.push(`nothing to install: no ${SCHEMA_FILE}, ${RULES_DIR}/*.json or ${SEARCHES_DIR}/*.json`)
  if (problems.length > 0) throw new FolderProblems(problems)
  return plan
}
