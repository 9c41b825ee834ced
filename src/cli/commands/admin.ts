/// <reference types="node" />
import { readdir, readFile, stat } from 'node:fs/promises'
import path from 'node:path'
import { createSamlProvider, deleteExtension, listExtensions, putExtension } from '../../client/cli-endpoints'
import { allTagSelectors, createTagSelector, listAssetGroupTags, updateTagSelector, type AssetGroupTagSelectorJson } from '../../client/assetgroups'
import { createSavedQuery, listSavedQueries, updateSavedQuery } from '../../client/cypher'
import { FolderProblems, planFolder, RULES_DIR, SCHEMA_FILE, SEARCHES_DIR, type FolderFile, type FolderPlan, type RuleSpec } from '../extension-folder'
import type { Command, Context } from '../command'
import { CliError } from '../errors'
import { ingestContentType } from './ingest'

async function readInput(ctx: Context, file: string): Promise<Uint8Array> {
  try {
    return new Uint8Array(await readFile(ctx.resolvePath(file)))
  } catch (e) {
    throw new CliError(`cannot read ${file}: ${(e as Error).message}`)
  }
}

export const samlCreate: Command = {
  name: 'saml create',
  summary: 'Create a SAML provider from the identity provider\'s metadata XML',
  args: 'NAME METADATA.xml',
  description: 'Posts NAME and the metadata file as multipart/form-data to POST /api/v2/sso-providers/saml and prints\nthe service-provider URLs to configure at the identity provider.',
  minArgs: 2,
  maxArgs: 2,
  async run(ctx, [name, file]) {
    const bytes = await readInput(ctx, file)
    const c = await ctx.client()
    const r = await createSamlProvider(c, name, bytes, path.basename(file))
    const p = r.data
    if (ctx.json) ctx.out.data(p)
    else
      ctx.out.keyValues([
        ['id', p.id],
        ['name', p.name],
        ['idp_issuer_uri', p.idp_issuer_uri],
        ['idp_sso_uri', p.idp_sso_uri],
        ['sp_issuer_uri', p.sp_issuer_uri],
        ['sp_acs_uri', p.sp_acs_uri],
        ['sp_metadata_uri', p.sp_metadata_uri],
        ['sp_sso_uri', p.sp_sso_uri],
      ])
    return 0
  },
}

/** The schema name of an extension document, for messages (undefined when the file is not such JSON). */
function extensionName(bytes: Uint8Array): string | undefined {
  try {
    const doc = JSON.parse(new TextDecoder().decode(bytes)) as { schema?: { name?: unknown } }
    return typeof doc?.schema?.name === 'string' ? doc.schema.name : undefined
  } catch {
    return undefined
  }
}

export const extensionsPut: Command = {
  name: 'extensions put',
  summary: 'Create or update a graph extension from a JSON file, or install an extension folder',
  args: 'FILE|DIR',
  description:
    'FILE: PUT /api/v2/extensions with the file.\n' +
    'DIR: an extension folder as OpenGraph collectors ship it: schema.json (the extension), privilege_zone_rules/*.json\n' +
    '(Cypher rules of a zone, default Tier Zero: POST/PATCH /api/v2/asset-group-tags/{id}/selectors) and\n' +
    'saved_searches/*.json (saved queries: POST/PUT /api/v2/saved-queries). Every file is checked first; a bad file is\n' +
    'reported by name and nothing is sent. Rules and saved searches are matched by name, so running it again changes\n' +
    'nothing. Rules apply from the next analysis run (edgehound analysis run).',
  minArgs: 1,
  maxArgs: 1,
  async run(ctx, [file]) {
    const st = await stat(ctx.resolvePath(file)).catch((e: Error) => {
      throw new CliError(`cannot read ${file}: ${e.message}`)
    })
    if (st.isDirectory()) return installFolder(ctx, file)
    const bytes = await readInput(ctx, file)
    const c = await ctx.client()
    const r = await putExtension(c, bytes, ingestContentType(bytes))
    const data = ((r.body as { data?: Record<string, unknown> } | undefined)?.data ?? {}) as Record<string, unknown>
    const name = typeof data.name === 'string' ? data.name : extensionName(bytes)
    // The service says `created: true|false`; a bare 201 also means created (BloodHound answers 201/200 empty).
    const verb = data.created === true || r.status === 201 ? 'created' : data.created === false ? 'updated' : 'saved'
    if (ctx.json) ctx.out.data({ status: r.status, name: name ?? null, created: verb === 'created', body: r.body ?? null })
    else
      ctx.out.line(
        `Extension ${name ? `"${name}" ` : ''}${verb}${data.id !== undefined ? ` (id ${data.id}` + (typeof data.version === 'string' ? `, version ${data.version})` : ')') : ''}.`,
      )
    return 0
  },
}

/** schema.json and the `*.json` files of the two folders (other files, e.g. README.md, are not read). */
async function readFolder(ctx: Context, dir: string): Promise<FolderFile[]> {
  const root = ctx.resolvePath(dir)
  const files: FolderFile[] = []
  const read = async (rel: string) => {
    try {
      files.push({ path: rel, text: await readFile(path.join(root, rel), 'utf8') })
    } catch (e) {
      throw new CliError(`cannot read ${path.join(dir, rel)}: ${(e as Error).message}`)
    }
  }
  const top = await readdir(root, { withFileTypes: true })
  if (top.some((e) => e.name === SCHEMA_FILE && e.isFile())) await read(SCHEMA_FILE)
  for (const sub of [RULES_DIR, SEARCHES_DIR]) {
    if (!top.some((e) => e.name === sub && e.isDirectory())) continue
    for (const e of (await readdir(path.join(root, sub), { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : 1)))
      if (e.isFile() && e.name.toLowerCase().endsWith('.json')) await read(`${sub}/${e.name}`)
  }
  return files
}

type Action = 'created' | 'updated' | 'unchanged'

interface ItemResult {
  file: string
  name: string
  id: number | null
  action: Action
}

function sameRule(s: AssetGroupTagSelectorJson, r: RuleSpec): boolean {
  return (
    s.description === r.description &&
    s.disabled_at.valid === !r.enabled &&
    s.seeds.length === 1 &&
    s.seeds[0].type === 2 &&
    s.seeds[0].value === r.cypher
  )
}

async function installFolder(ctx: Context, dir: string): Promise<number> {
  let plan: FolderPlan
  try {
    plan = planFolder(await readFolder(ctx, dir))
  } catch (e) {
    if (!(e instanceof FolderProblems)) throw e
    for (const p of e.problems) ctx.out.info(`error: ${p}`)
    throw new CliError(`${dir}: ${e.problems.length} problem(s) found; nothing was installed`)
  }
  const c = await ctx.client()
  // Zones are asset group tags named by the rule files ("Tier Zero"); an unknown zone stops before any change.
  const tagByName = new Map<string, number>()
  if (plan.rules.length > 0) for (const t of (await listAssetGroupTags(c)).data.tags) tagByName.set(t.name.toLowerCase(), t.id)
  const unknown = plan.rules.filter((r) => !tagByName.has(r.zone.toLowerCase()))
  if (unknown.length > 0) {
    for (const r of unknown) ctx.out.info(`error: ${r.file}: zone "${r.zone}" does not exist on the server (zones: ${[...tagByName.keys()].join(', ')})`)
    throw new CliError(`${dir}: ${unknown.length} problem(s) found; nothing was installed`)
  }

  const report: { schema: Record<string, unknown> | null; rules: ItemResult[]; saved_searches: ItemResult[] } = { schema: null, rules: [], saved_searches: [] }
  const say = (text: string) => {
    if (!ctx.json) ctx.out.line(text)
  }
  if (plan.schema) {
    const r = await putExtension(c, plan.schema.bytes, 'application/json')
    const data = ((r.body as { data?: Record<string, unknown> } | undefined)?.data ?? {}) as Record<string, unknown>
    const verb = data.created === true || r.status === 201 ? 'created' : data.created === false ? 'updated' : 'saved'
    report.schema = { file: plan.schema.file, name: plan.schema.name, id: data.id ?? null, version: data.version ?? null, action: verb }
    say(`${plan.schema.file}: extension ${plan.schema.name ? `"${plan.schema.name}" ` : ''}${verb}${data.id !== undefined ? ` (id ${data.id})` : ''}`)
  }

  const existing = new Map<number, Map<string, AssetGroupTagSelectorJson>>()
  for (const r of plan.rules) {
    const tagId = tagByName.get(r.zone.toLowerCase())!
    let byName = existing.get(tagId)
    if (!byName) existing.set(tagId, (byName = new Map((await allTagSelectors(c, tagId)).map((s) => [s.name, s]))))
    const cur = byName.get(r.name)
    let result: ItemResult
    if (!cur) {
      const made = await createTagSelector(c, tagId, { name: r.name, description: r.description, seeds: [{ type: 2, value: r.cypher }], disabled: !r.enabled })
      result = { file: r.file, name: r.name, id: made.data.id, action: 'created' }
    } else if (sameRule(cur, r)) result = { file: r.file, name: r.name, id: cur.id, action: 'unchanged' }
    else {
      await updateTagSelector(c, tagId, cur.id, { description: r.description, seeds: [{ type: 2, value: r.cypher }], disabled: !r.enabled })
      result = { file: r.file, name: r.name, id: cur.id, action: 'updated' }
    }
    report.rules.push(result)
    say(`${r.file}: rule "${r.name}" (${r.zone}${r.enabled ? '' : ', disabled'}) ${result.action}${result.id !== null ? ` (id ${result.id})` : ''}`)
  }

  if (plan.searches.length > 0) {
    const mine = new Map((await listSavedQueries(c, 'limit=10000')).data.map((q) => [q.name, q]))
    for (const q of plan.searches) {
      const cur = mine.get(q.name)
      let result: ItemResult
      if (!cur) {
        const made = await createSavedQuery(c, { name: q.name, query: q.query, description: q.description })
        result = { file: q.file, name: q.name, id: made.data.id, action: 'created' }
      } else if (cur.query === q.query && cur.description === q.description) result = { file: q.file, name: q.name, id: cur.id, action: 'unchanged' }
      else {
        await updateSavedQuery(c, cur.id, { name: q.name, query: q.query, description: q.description })
        result = { file: q.file, name: q.name, id: cur.id, action: 'updated' }
      }
      report.saved_searches.push(result)
      say(`${q.file}: saved search "${q.name}" ${result.action} (id ${result.id})`)
    }
  }

  const count = (xs: ItemResult[]) => {
    const by = (a: Action) => xs.filter((x) => x.action === a).length
    return `${xs.length} (${by('created')} created, ${by('updated')} updated, ${by('unchanged')} unchanged)`
  }
  if (ctx.json) ctx.out.data(report)
  else {
    ctx.out.line(
      `Installed ${dir}: ${plan.schema ? 'extension, ' : ''}rules ${count(report.rules)}, saved searches ${count(report.saved_searches)}.`,
    )
    if (report.rules.some((r) => r.action !== 'unchanged')) ctx.out.line('Rules take effect at the next analysis run (edgehound analysis run).')
  }
  return 0
}

/** Finds the list in a list answer: `{data: [...]}`, `{data: {extensions: [...]}}` or a bare array. */
export function extensionRows(body: unknown): Record<string, unknown>[] {
  const data = (body as { data?: unknown })?.data ?? body
  if (Array.isArray(data)) return data as Record<string, unknown>[]
  if (data && typeof data === 'object') {
    for (const v of Object.values(data)) if (Array.isArray(v)) return v as Record<string, unknown>[]
  }
  return []
}

export const extensionsList: Command = {
  name: 'extensions list',
  summary: 'List graph extensions',
  maxArgs: 0,
  async run(ctx) {
    const c = await ctx.client()
    const body = await listExtensions(c)
    const rows = extensionRows(body)
    if (ctx.json) ctx.out.data(rows)
    else if (rows.length === 0) ctx.out.line('No extensions.')
    else {
      const flat = rows.map((r) => {
        const schema = (r.schema ?? {}) as Record<string, unknown>
        return {
          id: r.id,
          name: r.name ?? schema.name,
          display_name: r.display_name ?? schema.display_name,
          version: r.version ?? schema.version,
          namespace: r.namespace ?? schema.namespace,
          builtin: typeof r.is_builtin === 'boolean' ? (r.is_builtin ? 'yes' : 'no') : undefined,
          updated_at: r.updated_at,
        }
      })
      const cols = ['id', 'name', 'display_name', 'version', 'namespace', 'builtin', 'updated_at'].filter((k) => flat.some((r) => r[k as keyof typeof r] !== undefined))
      ctx.out.table(flat, cols)
    }
    return 0
  },
}

export const extensionsDelete: Command = {
  name: 'extensions delete',
  summary: 'Delete a graph extension',
  args: 'ID',
  minArgs: 1,
  maxArgs: 1,
  async run(ctx, [id]) {
    const c = await ctx.client()
    const body = await deleteExtension(c, id)
    if (ctx.json) ctx.out.data(body ?? { id, deleted: true })
    else ctx.out.line(`Extension ${id} deleted.`)
    return 0
  },
}
