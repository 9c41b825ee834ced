import { AUDIT_ACTIONS, type AuditAction } from '../../audit/actions'
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
const STATUSES = ['intent', 'success', 'failure']
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/**
 * The server's filters (`col=eq:value`, docs/audit.md) for the command's options. `--actor` is a user id
 * (a UUID) or a name: the log records both, and which one a person has at hand differs.
 */
export function auditFilters(opts: Record<string, string | boolean | string[] | undefined>): Record<string, string> {
  const text = (k: string) => {
    const v = opts[k]
    if (v === undefined) return undefined
    const t = String(v).trim()
    if (!t) throw new UsageError(`--${k} needs a value`)
    return t
  }
  const filters: Record<string, string> = {}
  const actor = text('actor')
  if (actor) filters[UUID.test(actor) ? 'actor_id' : 'actor_name'] = `eq:${actor}`
  const email = text('actor-email')
  if (email) filters.actor_email = `eq:${email}`
  const action = text('action')
  if (action) filters.action = `eq:${auditAction(action)}`
  const status = text('status')
  if (status) {
    if (!STATUSES.includes(status.toLowerCase())) throw new UsageError(`--status must be one of ${STATUSES.join(', ')}, not "${status}"`)
    filters.status = `eq:${status.toLowerCase()}`
  }
  const requestId = text('request-id')
  if (requestId) filters.request_id = `eq:${requestId}`
  return filters
}

/**
 * `--action`: one of the log's action names (src/audit/actions.ts), in any letter case. The API, like
 * BloodHound's, takes any text and compares it exactly, so a misspelt or miscased name would print
 * "No audit entries." as if nothing had happened; the CLI refuses it instead, naming the actions.
 */
export function auditAction(raw: string): AuditAction {
  const found = AUDIT_ACTIONS.find((a) => a.toLowerCase() === raw.toLowerCase())
  if (!found) throw new UsageError(`--action "${raw}" is not an audit action; the actions (docs/audit.md says which request writes which): ${AUDIT_ACTIONS.join(', ')}`)
  return found
}

export const audit: Command = {
  name: 'audit',
  summary: 'Show the audit log (oldest first): who changed what, with intent / success / failure',
  maxArgs: 0,
  options: {
    since: { type: 'string', value: 'WHEN', description: 'entries after this: 30m, 12h, 1d (default), 2w or an RFC 3339 date-time' },
    actor: { type: 'string', value: 'WHO', description: 'only entries of this user: a user id (UUID) or a principal name' },
    'actor-email': { type: 'string', value: 'EMAIL', description: "only entries of the user with this e-mail address" },
    action: { type: 'string', value: 'ACTION', description: 'only this action, e.g. CreateAuthToken (any letter case; an unknown name is refused with the list)' },
    status: { type: 'string', value: 'STATUS', description: 'only intent, success or failure' },
    'request-id': { type: 'string', value: 'ID', description: 'only the entries of one request (the request_id an error printed)' },
  },
  async run(ctx, _args, opts) {
    const before = ctx.io.now()
    const after = sinceDate((opts.since as string | undefined) ?? '1d', before)
    const filters = auditFilters(opts)
    const c = await ctx.client()
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
