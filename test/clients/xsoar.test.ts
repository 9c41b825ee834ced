/**
 * Cortex XSOAR / XSIAM "BloodHoundEnterprise" integration against EdgeHound, request for request (issue 15).
 * Source read: demisto/content, Packs/BloodHoundEnterprise/Integrations/BloodHoundEnterprise/BloodHoundEnterprise.py.
 *
 * It reads the audit log only: `GET /api/v2/audit` with its query built by `urllib.parse.urlencode` from the
 * dict {limit, sort_by, after, before, skip} (None values removed; so `:` → %3A and `+` → %2B) and signed in
 * that encoded form; `bhesignature`, Python's RequestDate (local time, microseconds, `+00:00`), `Content-Type:
 * application/json`. Replayed here: test-module (`limit=1&sort_by=created_at`), fetch-events (first run from
 * now − 1 minute; pages of 50 with `skip` until an empty page or the fetch limit; the next run resumes from
 * the last event's `created_at` and drops ids ≤ the last id; a run that hit its limit resumes with `skip`), and
 * the `bloodhound-get-events` command. Every field it reads (`data.logs[].id` as an int compared with `>`,
 * `created_at` parsed for `_time`) is asserted present, non-null and typed.
 */
import { beforeAll, describe, expect, it } from 'vitest'
import { adminToken, client, userWithRole } from '../helpers'
import type { EdgeHoundClient } from '../../src/client'
import { createAssetGroup } from '../../src/client/assetgroups'

/** Python's datetime.now().astimezone().isoformat('T') on a UTC host. */
const pythonIso = (d: Date) => d.toISOString().replace(/\.(\d{3})Z$/, '.$1654+00:00')
/** urllib.parse.urlencode (quote_plus) of the values XSOAR sends: letters, digits, `-._` stay; `:` `+` are escaped. */
const urlencode = (q: Record<string, string | number | undefined | null>) =>
  Object.entries(q)
    .filter(([, v]) => v !== undefined && v !== null && v !== '') // remove_nulls_from_dictionary
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v)).replace(/%20/g, '+')}`)
    .join('&')

const PAGE_LIMIT = 50

interface Log {
  id: number
  created_at: string
  [k: string]: unknown
}

/** The integration's Client._request / search_events, recording each request target and status. */
class XsoarClient {
  calls: { uri: string; status: number }[] = []
  constructor(readonly c: EdgeHoundClient) {}

  async request(query: Record<string, string | number | undefined | null>): Promise<{ data: { logs: Log[] } }> {
    const encoded = urlencode(query)
    const uri = encoded ? `/api/v2/audit?${encoded}` : '/api/v2/audit'
    const res = await this.c.raw('GET', uri, undefined, { exactTarget: true, headers: { 'Content-Type': 'application/json' } })
    this.calls.push({ uri, status: res.status })
    expect(res.status, uri).toBe(200)
    return (await res.json()) as { data: { logs: Log[] } }
  }

  async searchEvents(limit: number, from?: string, until?: string, skip?: number): Promise<Log[]> {
    const r = await this.request({ limit, sort_by: 'created_at', after: from, before: until, skip })
    // response.get("data", {}).get("logs", []): both must be there, logs a list
    expect(typeof r.data).toBe('object')
    expect(Array.isArray(r.data.logs)).toBe(true)
    for (const l of r.data.logs) {
      expect(Number.isInteger(l.id), `id ${JSON.stringify(l.id)}`).toBe(true)
      expect(typeof l.created_at).toBe('string')
      // arg_to_datetime(created_at) → _time: an RFC 3339 date-time
      expect(Number.isNaN(Date.parse(l.created_at))).toBe(false)
    }
    return r.data.logs
  }

  /** get_events_with_pagination */
  async eventsWithPagination(start: string | undefined, end: string, maxEvents: number, lastEventId = 0, initialSkip = 0): Promise<[Log[], number]> {
    const fetched: Log[] = []
    let skip = initialSkip
    while (fetched.length < maxEvents) {
      const pageSize = Math.min(PAGE_LIMIT, maxEvents - fetched.length)
      const response = await this.searchEvents(pageSize, start, end, skip)
      if (response.length === 0) break
      skip += response.length
      fetched.push(...response.filter((e) => (e.id ?? 0) > lastEventId))
    }
    const nextSkip = fetched.length === maxEvents ? initialSkip + fetched.length : 0
    return [fetched, nextSkip]
  }

  lastRun: { last_event_created_at?: string; last_event_id?: number; skip?: number; prev_fetch_id?: number } = {}

  /** fetch_events, then demisto.setLastRun(next_run) */
  async fetchEvents(maxEventsPerFetch: number): Promise<Log[]> {
    const firstFetch = pythonIso(new Date(Date.now() - 60_000))
    const now = pythonIso(new Date())
    const from = this.lastRun.last_event_created_at ?? firstFetch
    const fromEvent = this.lastRun.last_event_id ?? 0
    const lastSkip = this.lastRun.skip ?? 0
    const [events, skip] = await this.eventsWithPagination(from, now, maxEventsPerFetch, fromEvent, lastSkip)
    const next: XsoarClient['lastRun'] = {
      last_event_created_at: events.length ? events[events.length - 1].created_at : from,
      last_event_id: events.length ? events[events.length - 1].id : fromEvent,
      prev_fetch_id: (this.lastRun.prev_fetch_id ?? 0) + 1,
    }
    if (skip) {
      next.skip = lastSkip + events.length
      next.last_event_created_at = from
    }
    this.lastRun = next
    return events
  }
}

describe('Cortex XSOAR BloodHoundEnterprise integration (audit events)', () => {
  let admin: EdgeHoundClient
  let xsoar: XsoarClient
  let groups = 0

  /** `n` changes, each writing an intent and a success audit entry (CreateAssetGroup). */
  async function changes(n: number) {
    for (let i = 0; i < n; i++) await createAssetGroup(admin, { name: `xsoar ${groups}`, tag: `xsoar_${groups++}` })
  }

  beforeAll(async () => {
    admin = await adminToken({ paced: true })
    // least privilege: an Auditor reads the audit log (BloodHound's docs ask for an administrator's token)
    const t = await userWithRole('Auditor')
    xsoar = new XsoarClient(client({ kind: 'token', tokenId: t.tokenId, tokenKey: t.tokenKey, scheme: 'bhesignature' }, { formatDate: pythonIso, paced: true }))
  })

  it('test-module: limit=1&sort_by=created_at answers 200 with data.logs', async () => {
    const r = await xsoar.request({ limit: '1', sort_by: 'created_at' })
    expect(r.data.logs.length).toBe(1)
    expect(xsoar.calls.map((c) => c.uri)).toEqual(['/api/v2/audit?limit=1&sort_by=created_at'])
  })

  it('fetch-events: every event once, in created_at order, across runs, a fetch limit and new events', async () => {
    await changes(30) // 60 entries, within the first run's "last minute"
    const seen: Log[] = []
    // run 1: fetch limit 50 — one full page, then the run stops at its limit and leaves `skip` for the next
    const run1 = await xsoar.fetchEvents(50)
    expect(run1.length).toBe(50)
    expect(xsoar.lastRun.skip).toBe(50)
    seen.push(...run1)
    // the exact encoded form XSOAR signs: after/before with %3A and %2B, skip last
    const first = xsoar.calls.find((c) => c.uri.includes('after='))!.uri
    expect(first).toMatch(/^\/api\/v2\/audit\?limit=50&sort_by=created_at&after=\d{4}-\d{2}-\d{2}T\d{2}%3A\d{2}%3A\d{2}\.\d{6}%2B00%3A00&before=[^&]+%2B00%3A00&skip=0$/)
    // run 2: same `after`, skip 50: the rest of the first minute's entries (and this file's earlier ones)
    const run2 = await xsoar.fetchEvents(250)
    seen.push(...run2)
    expect(xsoar.lastRun.skip).toBeUndefined()
    // run 3 after more changes: resumes from the last created_at (inclusive) and drops ids it has
    await changes(5)
    const run3 = await xsoar.fetchEvents(250)
    expect(run3.length).toBe(10)
    expect(run3.every((e) => e.action === 'CreateAssetGroup')).toBe(true)
    seen.push(...run3)
    // run 4: nothing new
    expect(await xsoar.fetchEvents(250)).toEqual([])

    const ids = seen.map((e) => e.id)
    expect(new Set(ids).size).toBe(ids.length) // no duplicates
    const sorted = [...seen].sort((a, b) => (a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : a.id - b.id))
    expect(seen.map((e) => e.id)).toEqual(sorted.map((e) => e.id)) // created_at order, ties by id
    // every CreateAssetGroup entry of this test arrived exactly once
    const mine = seen.filter((e) => e.action === 'CreateAssetGroup')
    expect(mine.length).toBe(2 * 35)
    expect(xsoar.calls.filter((c) => c.status !== 200)).toEqual([])
  }, 120_000)

  it('bloodhound-get-events: start and end as typed, end defaulting to now with its offset', async () => {
    const start = new Date(Date.now() - 10 * 60_000).toISOString() // "2026-11-26T09:00:00.000Z"
    const [events] = await xsoar.eventsWithPagination(start, pythonIso(new Date()), 250)
    expect(events.length).toBeGreaterThanOrEqual(70)
    const [limited] = await xsoar.eventsWithPagination(start, pythonIso(new Date()), 3)
    expect(limited.map((e) => e.id)).toEqual(events.slice(0, 3).map((e) => e.id))
  })

  it('a start typed without an offset (the command help shows 2024-07-10T08:08:46.76) is a 400 envelope, as in BloodHound', async () => {
    // BloodHound parses before/after with time.RFC3339Nano, which requires the offset; so does EdgeHound
    const uri = `/api/v2/audit?${urlencode({ limit: 50, sort_by: 'created_at', after: '2024-07-10T08:08:46.76', before: pythonIso(new Date()), skip: 0 })}`
    const res = await xsoar.c.raw('GET', uri, undefined, { exactTarget: true })
    expect(res.status).toBe(400)
    const body = (await res.json()) as { http_status: number; errors: { context: string; message: string }[] }
    expect(body.http_status).toBe(400)
    expect(body.errors[0].message).toMatch(/after/)
  })
})
