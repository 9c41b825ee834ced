/**
 * The Cron Trigger's part of schedules (wrangler.toml [triggers] crons, src/index.ts `scheduled`): every due
 * schedule becomes a ready job for its client, once per occurrence, even when cron runs overlap (two
 * invocations reading the same due schedule both try; the unique index on (event_id, execution_time) lets
 * one INSERT through: src/clients/schedules.store.ts materialize). A schedule that fell behind (the trigger
 * did not run for a while) gets one job, for its latest due occurrence, not one per missed occurrence.
 */
import { rfc3339 } from '../http/errors'
import { latestAtOrBefore, nextAfter, parseRrule } from './rrule'
import { dueSchedules, materialize } from './schedules.store'

export async function runSchedules(env: Pick<Env, 'DB'>, nowMs: number): Promise<number[]> {
  const now = rfc3339(nowMs)
  const created: number[] = []
  for (const s of await dueSchedules(env.DB, now)) {
    const r = parseRrule(s.rrule, Date.parse(s.created_at))
    if (typeof r === 'string') continue // refused at write time; never stored
    const occurrence = latestAtOrBefore(r, nowMs) ?? Date.parse(s.next_run)
    if (await materialize(env.DB, s, rfc3339(occurrence), s.next_run, rfc3339(nextAfter(r, nowMs)), now)) created.push(s.id)
  }
  return created
}
