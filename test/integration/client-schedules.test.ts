/**
 * Collection schedules (issue 26 item 4): the Cron Trigger's runs turn each due occurrence into exactly one
 * ready job, even when runs overlap (concurrent runSchedules calls, as two scheduled invocations would) or
 * repeat; a schedule that fell behind gets one job for its latest occurrence; recurrence text is checked.
 */
import { env } from 'cloudflare:workers'
import { beforeAll, describe, expect, it } from 'vitest'
import { adminSession, expectEnvelope } from '../helpers'
import type { EdgeHoundClient } from '../../src/client'
import { runSchedules } from '../../src/clients/schedules'
import { latestAtOrBefore, nextAfter, parseRrule } from '../../src/clients/rrule'

let admin: EdgeHoundClient
beforeAll(async () => {
  admin = await adminSession()
})

const H = 3_600_000

describe('rrule', () => {
  it('parses start and period, refuses what it does not support', () => {
    const r = parseRrule('DTSTART:20261201T020000Z\nRRULE:FREQ=DAILY;INTERVAL=2', 0)
    expect(r).toEqual({ startMs: Date.UTC(2026, 11, 1, 2), periodMs: 48 * H })
    if (typeof r === 'string') throw new Error(r)
    expect(nextAfter(r, Date.UTC(2026, 11, 1, 2))).toBe(Date.UTC(2026, 11, 3, 2))
    expect(nextAfter(r, Date.UTC(2026, 10, 1))).toBe(Date.UTC(2026, 11, 1, 2))
    expect(latestAtOrBefore(r, Date.UTC(2026, 11, 4))).toBe(Date.UTC(2026, 11, 3, 2))
    expect(parseRrule('RRULE:FREQ=WEEKLY;BYDAY=MO', 0)).toMatch(/BYDAY is not supported/)
    expect(parseRrule('RRULE:FREQ=MINUTELY', 0)).toMatch(/FREQ must be/)
    expect(parseRrule('DTSTART:20260231T000000Z RRULE:FREQ=DAILY', 0)).toMatch(/not a valid date/)
  })
})

describe('schedules', () => {
  it('overlapping and repeated cron runs create each due occurrence once', async () => {
    const c = await admin.raw('POST', '/api/v2/clients', { name: `sched-${crypto.randomUUID()}`, type: 'sharphound', environment_id: 'S-1-5-21-777' })
    const clientId = ((await c.json()) as { data: { id: string } }).data.id
    const start = Date.UTC(2026, 0, 1, 0)
    const r = await admin.raw('POST', '/api/v2/events', { client_id: clientId, rrule: 'DTSTART:20260101T000000Z RRULE:FREQ=HOURLY;INTERVAL=1', session_collection: true, ad_structure_collection: true })
    expect(r.status).toBe(201)
    const s = ((await r.json()) as { data: { id: number; next_run: string } }).data
    // runs just after the next occurrence, overlapping: one job, for that occurrence
    const t1 = Date.parse(s.next_run) + 60_000
    const runs = await Promise.all([runSchedules(env, t1), runSchedules(env, t1), runSchedules(env, t1)])
    expect(runs.flat().filter((id) => id === s.id)).toHaveLength(1)
    await runSchedules(env, t1)
    const jobs = (await env.DB.prepare('SELECT execution_time, status, session_collection, ad_structure_collection, local_group_collection FROM client_jobs WHERE event_id = ?').bind(s.id).all()).results
    expect(jobs).toHaveLength(1)
    expect(jobs[0]).toMatchObject({ status: 0, session_collection: 1, ad_structure_collection: 1, local_group_collection: 0 })
    expect(jobs[0].execution_time).toBe(s.next_run)
    // the trigger then misses three occurrences: overlapping runs make exactly one more job, for the latest
    const t2 = t1 + 3 * H + 5 * 60_000
    await Promise.all([runSchedules(env, t2), runSchedules(env, t2 + 1000)])
    const all = (await env.DB.prepare('SELECT execution_time FROM client_jobs WHERE event_id = ? ORDER BY id').bind(s.id).all<{ execution_time: string }>()).results
    expect(all).toHaveLength(2)
    expect(Date.parse(all[1].execution_time)).toBe(start + Math.floor((t2 - start) / H) * H)
    // the job is available to its client like a run-now job
    const listed = (await (await admin.raw('GET', `/api/v2/jobs?client_id=${clientId}`)).json()) as { data: { event_id: number }[] }
    expect(listed.data.every((j) => j.event_id === s.id)).toBe(true)
  })

  it('refuses an unsupported recurrence and an unknown client with the envelope', async () => {
    await expectEnvelope(await admin.raw('POST', '/api/v2/events', { client_id: crypto.randomUUID(), rrule: 'RRULE:FREQ=DAILY;COUNT=3' }), 400, 'COUNT is not supported')
    await expectEnvelope(await admin.raw('POST', '/api/v2/events', { client_id: crypto.randomUUID(), rrule: 'RRULE:FREQ=DAILY' }), 404, 'no client')
  })
})
