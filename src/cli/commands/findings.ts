import { availableDomains, availableTypes, iterateDetails, type EnvironmentJson, type FindingItem, type Loose } from '../../client/cli-endpoints'
import type { Command } from '../command'
import { CliError, UsageError } from '../errors'
import { findingSummary } from '../findings-format'

/**
 * An environment by id (exact), else by name (case-insensitive). Names need not be unique (two forests
 * can both be CORP.LOCAL): a name matching several environments is an error naming their ids.
 */
export function pickEnvironment(envs: EnvironmentJson[], wanted: string): EnvironmentJson | undefined {
  const byId = envs.find((e) => e.id === wanted)
  if (byId) return byId
  const byName = envs.filter((e) => e.name?.toLowerCase() === wanted.toLowerCase())
  if (byName.length > 1)
    throw new CliError(`several environments are named "${wanted}": ${byName.map((e) => e.id).join(', ')}; give the id instead`)
  return byName[0]
}

export const findings: Command = {
  name: 'findings',
  summary: 'List attack-path findings of an environment (by id or name), per finding type',
  args: 'ENVIRONMENT',
  description:
    'Reads the connector endpoints: available-domains, domains/{id}/available-types and\n' +
    'domains/{id}/details?finding=&skip=&limit= (paged until an empty page).',
  minArgs: 1,
  maxArgs: 1,
  options: {
    type: { type: 'string', short: 't', multiple: true, value: 'TYPE', description: 'only this finding type (comma lists allowed)' },
    limit: { type: 'string', short: 'n', value: 'N', description: 'records shown per type (default 20)' },
    all: { type: 'boolean', description: 'every record of every type' },
  },
  async run(ctx, [wanted], opts) {
    const limit = opts.all ? Infinity : opts.limit === undefined ? 20 : Number(opts.limit)
    if (!(limit === Infinity || (Number.isInteger(limit) && limit >= 0))) throw new UsageError('--limit must be a whole number')
    const c = await ctx.client()
    const envs = (await availableDomains(c)).data ?? []
    const env = pickEnvironment(envs, wanted)
    if (!env)
      throw new CliError(
        `environment "${wanted}" is not available to this caller` +
          (envs.length ? ` (available: ${envs.map((e) => `${e.name} (${e.id})`).join(', ')})` : ' (no environments are visible)'),
      )
    const available = (await availableTypes(c, env.id)).data ?? []
    const requested = ((opts.type as string[] | undefined) ?? []).flatMap((t) => t.split(',')).map((t) => t.trim()).filter(Boolean)
    const types = requested.length ? requested : available
    for (const t of requested)
      if (!available.includes(t) && !ctx.json) ctx.out.info(`note: ${t} is not among the finding types of ${env.name} (${available.join(', ') || 'none'})`)

    const result: { type: string; count: number; items: Loose<FindingItem>[] }[] = []
    for (const t of types) {
      let count = -1
      const items: Loose<FindingItem>[] = []
      const pageSize = limit === Infinity ? 100 : Math.min(100, Math.max(limit, 1))
      for await (const it of iterateDetails(c, env.id, t, { pageSize, max: Math.max(limit, 0), onCount: (n) => (count = n) })) items.push(it)
      result.push({ type: t, count: count >= 0 ? count : items.length, items })
    }

    if (ctx.json) {
      ctx.out.data({ environment: env, findings: result })
      return 0
    }
    ctx.out.line(`Environment ${env.name} (${env.id}): ${types.length} finding type(s)`)
    if (types.length === 0) ctx.out.line('No findings.')
    for (const r of result) {
      ctx.out.line()
      ctx.out.line(`${r.type}: ${r.count} finding(s)${r.items.length < r.count ? `, showing ${r.items.length}` : ''}`)
      if (r.items.length) ctx.out.table(r.items.map(findingSummary), ['severity', 'impact', 'subject', 'created_at'])
    }
    return 0
  },
}
