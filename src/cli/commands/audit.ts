import { listAuditLogs, type AuditLogJson } from '../../client/audit'
import type { Command } from '../command'
import { UsageError } from '../errors'

/** `--since 1d` / `12h` / `30m` / `2w`, or an RFC 3339 date-time. */
export function sinceDate(raw: string, now: Date): Date {
  const m = /^(\d+)([mhdw])$/.exec(raw.trim())
  if (m) {
    const unit = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 }[m[2] as 'm' | 'h' | 'd' | 'w']
    return new Date(now.getTime() - Number(m[1]) * unit)
  }
  const d = new Date(raw)
  if (/^\d{4}-\d{2}-\d{2}T/.test(raw) && !Number.isNaN(d.getTime())) return d
  throw new UsageError(`--since must be a duration such as 30m, 12h, 1d, 2w or an RFC 3339 date-time, not "${raw}"`)
}

const PAGE = 1000

export const audit: Command = {
  name: 'audit',
  summary: 'Show the audit log (oldest first): who changed what, with intent / success / failure',
  maxArgs: 0,
  options: {
    since: { type: 'string', value: 'WHEN', description: 'entries after this: 30m, 12h, 1d (default), 2w or an RFC 3339 date-time' },
    action: { type: 'string', value: 'ACTION', description: 'only this action, e.g. CreateAuthToken' },
    status: { type: 'string', value: 'STATUS', description: 'only intent, success or failure' },
  },
  async run(ctx, _args, opts) {
    const before = ctx.io.now()
    const after = sinceDate((opts.since as string | undefined) ?? '1d', before)
    const c = await ctx.client()
    const filters: Record<string, string> = {}
    if (opts.action) filters.action = `eq:${opts.action}`
    if (opts.status) filters.status = `eq:${opts.status}`
    const logs: AuditLogJson[] = []
    for (let skip = 0; ; skip += PAGE) {
      const r = await listAuditLogs(c, { after, before, skip, limit: PAGE, sort_by: 'created_at', filters })
      logs.push(...r.data.logs)
      if (r.data.logs.length < PAGE) break
    }
    if (ctx.json) ctx.out.data(logs)
    else if (logs.length === 0) ctx.out.line('No audit entries.')
    else
      ctx.out.table(
        logs.map((l) => ({ ...l, actor: l.actor_name || l.actor_id })) as unknown as Record<string, unknown>[],
        ['id', 'created_at', 'actor', 'action', 'status', 'source_ip_address', 'fields'],
      )
    return 0
  },
}
