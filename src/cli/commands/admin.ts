/// <reference types="node" />
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { createSamlProvider, deleteExtension, listExtensions, putExtension } from '../../client/cli-endpoints'
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
  summary: 'Create or update a graph extension from a JSON file (PUT /api/v2/extensions)',
  args: 'FILE',
  minArgs: 1,
  maxArgs: 1,
  async run(ctx, [file]) {
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
