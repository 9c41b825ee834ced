/**
 * Collector-client management within the caller's environments (issue 26, security; src/clients/access.ts):
 * an Administrator restricted to CORP neither sees nor changes a client of HIDDEN, its jobs or its schedules
 * (404 as for an id that does not exist, left out of lists and counts), and creates or moves clients only into
 * CORP (403); an unrestricted Administrator does all of it. Every refusal is checked against the stored state.
 */
import { env } from 'cloudflare:workers'
import { beforeAll, describe, expect, it } from 'vitest'
import { adminToken, expectEnvelope, userWithRole } from '../helpers'
import type { EdgeHoundClient } from '../../src/client'

const CORP = 'S-1-5-21-7001'
const HIDDEN = 'S-1-5-21-7002'
const db = env.DB

let admin: EdgeHoundClient
let corpAdmin: EdgeHoundClient
let own: { id: string; job: number; schedule: number }
let hidden: { id: string; tokenId: string; job: number; finishedJob: number; schedule: number }

async function data<T>(res: Response, status = 200): Promise<T> {
  expect(res.status).toBe(status)
  return ((await res.json()) as { data: T }).data
}

async function setUp(c: EdgeHoundClient, env: string) {
  const cl = await data<{ id: string; token: { id: string } }>(await c.raw('POST', '/api/v2/clients', { name: `acl-${env}-${crypto.randomUUID()}`, type: 'sharphound', environment_id: env }), 201)
  const job = await data<{ id: number }>(await c.raw('POST', `/api/v2/clients/${cl.id}/jobs`, { session_collection: true }), 201)
  const schedule = await data<{ id: number }>(await c.raw('POST', '/api/v2/events', { client_id: cl.id, rrule: 'RRULE:FREQ=DAILY' }), 201)
  return { id: cl.id, tokenId: cl.token.id, job: job.id, schedule: schedule.id }
}

const row = (sql: string, ...binds: unknown[]) => db.prepare(sql).bind(...binds).first<Record<string, unknown>>()
const n = async (sql: string, ...binds: unknown[]) => (await row(`SELECT count(*) AS n FROM ${sql}`, ...binds))!.n as number

beforeAll(async () => {
  admin = await adminToken({ paced: true })
  corpAdmin = (await userWithRole('Administrator', { all_environments: false, environment_access: [CORP] })).client
  // HIDDEN's client by the unrestricted administrator: a ready job, a finished (canceled) one, a schedule
  const h = await setUp(admin, HIDDEN)
  const finished = await data<{ id: number }>(await admin.raw('POST', `/api/v2/clients/${h.id}/jobs`, {}), 201)
  await data(await admin.raw('PUT', `/api/v2/jobs/${finished.id}/cancel`))
  hidden = { ...h, finishedJob: finished.id }
  // CORP's client by the restricted one
  own = await setUp(corpAdmin, CORP)
})

describe('clients', () => {
  it('create: a restricted administrator creates only in its environments (403, nothing written); an unrestricted one anywhere', async () => {
    const name = `acl-refused-${crypto.randomUUID()}`
    const before = await n('users')
    await expectEnvelope(await corpAdmin.raw('POST', '/api/v2/clients', { name, type: 'sharphound', environment_id: HIDDEN }), 403, `environment_id "${HIDDEN}" is outside the environments you may access`)
    expect(await n('clients WHERE name = ?1', name)).toBe(0)
    expect(await n('users')).toBe(before)
    expect(await n(`audit_logs WHERE action = 'CreateClient' AND status = 'success' AND fields LIKE ?1`, `%${name}%`)).toBe(0)
    // the environment it has is fine (own, in beforeAll); the unrestricted one created HIDDEN's client
    expect((await row('SELECT environment_id FROM clients WHERE id = ?1', own.id))!.environment_id).toBe(CORP)
    expect((await row('SELECT environment_id FROM clients WHERE id = ?1', hidden.id))!.environment_id).toBe(HIDDEN)
  })

  it("list and read: another environment's client is absent (404 like an unknown id, not listed)", async () => {
    const mine = await corpAdmin.raw('GET', '/api/v2/clients')
    const listed = (await mine.json()) as { count: number; data: { id: string }[] }
    expect(listed.data.map((c) => c.id)).toEqual([own.id])
    expect(listed.count).toBe(1)
    await expectEnvelope(await corpAdmin.raw('GET', `/api/v2/clients/${hidden.id}`), 404, 'no client with this id')
    await expectEnvelope(await corpAdmin.raw('GET', `/api/v2/clients/${crypto.randomUUID()}`), 404, 'no client with this id')
    expect((await data<{ id: string }>(await corpAdmin.raw('GET', `/api/v2/clients/${own.id}`))).id).toBe(own.id)
    const all = (await (await admin.raw('GET', '/api/v2/clients')).json()) as { data: { id: string }[] }
    expect(all.data.map((c) => c.id)).toEqual(expect.arrayContaining([own.id, hidden.id]))
    expect((await data<{ id: string }>(await admin.raw('GET', `/api/v2/clients/${hidden.id}`))).id).toBe(hidden.id)
  })

  it("update: another environment's client is 404 and unchanged; a move out of the caller's environments is 403 and not written", async () => {
    const before = await row('SELECT name, environment_id, updated_at FROM clients WHERE id = ?1', hidden.id)
    await expectEnvelope(await corpAdmin.raw('PUT', `/api/v2/clients/${hidden.id}`, { name: 'taken over' }), 404, 'no client with this id')
    // moving it into CORP is still a 404: the hidden client's existence is not revealed by a 403
    await expectEnvelope(await corpAdmin.raw('PUT', `/api/v2/clients/${hidden.id}`, { environment_id: CORP }), 404, 'no client with this id')
    expect(await row('SELECT name, environment_id, updated_at FROM clients WHERE id = ?1', hidden.id)).toEqual(before)
    // its own client into HIDDEN: refused, the client and its service user (the token's access) keep CORP
    await expectEnvelope(await corpAdmin.raw('PUT', `/api/v2/clients/${own.id}`, { environment_id: HIDDEN }), 403, `environment_id "${HIDDEN}" is outside the environments you may access`)
    expect(await row('SELECT c.environment_id, u.environment_ids FROM clients c JOIN users u ON u.id = c.user_id WHERE c.id = ?1', own.id)).toEqual({ environment_id: CORP, environment_ids: JSON.stringify([CORP]) })
    // a change within its environments is fine
    const renamed = `acl-own-${crypto.randomUUID()}`
    expect((await data<{ name: string }>(await corpAdmin.raw('PUT', `/api/v2/clients/${own.id}`, { name: renamed }))).name).toBe(renamed)
    // the unrestricted administrator changes HIDDEN's
    const dc = `dc-${crypto.randomUUID().slice(0, 8)}`
    expect((await data<{ domain_controller: string }>(await admin.raw('PUT', `/api/v2/clients/${hidden.id}`, { domain_controller: dc }))).domain_controller).toBe(dc)
  })

  it("token: another environment's client's token is not replaced (404; the old token stays)", async () => {
    await expectEnvelope(await corpAdmin.raw('PUT', `/api/v2/clients/${hidden.id}/token`), 404, 'no client with this id')
    expect((await row('SELECT token_id FROM clients WHERE id = ?1', hidden.id))!.token_id).toBe(hidden.tokenId)
    expect(await n('api_tokens WHERE id = ?1', hidden.tokenId)).toBe(1)
    // its own client's, and the unrestricted administrator HIDDEN's: replaced
    const mine = await data<{ id: string; key: string }>(await corpAdmin.raw('PUT', `/api/v2/clients/${own.id}/token`))
    expect((await row('SELECT token_id FROM clients WHERE id = ?1', own.id))!.token_id).toBe(mine.id)
    const theirs = await data<{ id: string }>(await admin.raw('PUT', `/api/v2/clients/${hidden.id}/token`))
    expect(await n('api_tokens WHERE id = ?1', hidden.tokenId)).toBe(0)
    hidden.tokenId = theirs.id
    expect((await row('SELECT token_id FROM clients WHERE id = ?1', hidden.id))!.token_id).toBe(theirs.id)
  })
})

describe('jobs', () => {
  it("run now: refused for another environment's client (404, no job written)", async () => {
    const before = await n('client_jobs WHERE client_id = ?1', hidden.id)
    await expectEnvelope(await corpAdmin.raw('POST', `/api/v2/clients/${hidden.id}/jobs`, { session_collection: true }), 404, 'no client with this id')
    expect(await n('client_jobs WHERE client_id = ?1', hidden.id)).toBe(before)
  })

  it("lists: only the jobs of the caller's clients, counts included", async () => {
    const page = (await (await corpAdmin.raw('GET', '/api/v2/jobs')).json()) as { count: number; data: { id: number; client_id: string }[] }
    expect(page.data.map((j) => j.id)).toEqual([own.job])
    expect(page.count).toBe(1)
    const filtered = (await (await corpAdmin.raw('GET', `/api/v2/jobs?client_id=${hidden.id}`)).json()) as { count: number; data: unknown[] }
    expect(filtered).toMatchObject({ count: 0, data: [] })
    const finished = (await (await corpAdmin.raw('GET', '/api/v2/jobs/finished')).json()) as { count: number; data: unknown[] }
    expect(finished).toMatchObject({ count: 0, data: [] })
    await expectEnvelope(await corpAdmin.raw('GET', `/api/v2/clients/${hidden.id}/completed-jobs`), 404, 'no client with this id')
    // the unrestricted administrator's lists have both
    const all = (await (await admin.raw('GET', '/api/v2/jobs')).json()) as { data: { id: number }[] }
    expect(all.data.map((j) => j.id)).toEqual(expect.arrayContaining([own.job, hidden.job, hidden.finishedJob]))
    const done = (await (await admin.raw('GET', `/api/v2/clients/${hidden.id}/completed-jobs`)).json()) as { data: { id: number }[] }
    expect(done.data.map((j) => j.id)).toEqual([hidden.finishedJob])
  })

  it("read, log and cancel: another environment's job is 404 and stays ready", async () => {
    await expectEnvelope(await corpAdmin.raw('GET', `/api/v2/jobs/${hidden.job}`), 404, 'no job with this id')
    await expectEnvelope(await corpAdmin.raw('GET', `/api/v2/jobs/${hidden.job}/log`), 404, 'no job with this id')
    await expectEnvelope(await corpAdmin.raw('PUT', `/api/v2/jobs/${hidden.job}/cancel`), 404, 'no job with this id')
    expect((await row('SELECT status FROM client_jobs WHERE id = ?1', hidden.job))!.status).toBe(0)
    // its own job: read, log, cancel
    expect((await data<{ id: number }>(await corpAdmin.raw('GET', `/api/v2/jobs/${own.job}`))).id).toBe(own.job)
    expect((await data<{ log: unknown[] }>(await corpAdmin.raw('GET', `/api/v2/jobs/${own.job}/log`))).log.length).toBeGreaterThan(0)
    expect((await data<{ status: number }>(await corpAdmin.raw('PUT', `/api/v2/jobs/${own.job}/cancel`))).status).toBe(3)
    // the unrestricted administrator reads HIDDEN's
    expect((await data<{ log: unknown[] }>(await admin.raw('GET', `/api/v2/jobs/${hidden.job}/log`))).log.length).toBeGreaterThan(0)
  })
})

describe('schedules', () => {
  it("create, list, read, change, delete: another environment's schedules are absent and unchanged", async () => {
    const before = await n('client_schedules')
    await expectEnvelope(await corpAdmin.raw('POST', '/api/v2/events', { client_id: hidden.id, rrule: 'RRULE:FREQ=HOURLY' }), 404, 'no client with this id')
    expect(await n('client_schedules')).toBe(before)
    const listed = await data<{ id: number }[]>(await corpAdmin.raw('GET', '/api/v2/events'))
    expect(listed.map((s) => s.id)).toEqual([own.schedule])
    expect(await data<unknown[]>(await corpAdmin.raw('GET', `/api/v2/events?client_id=${hidden.id}`))).toEqual([])
    await expectEnvelope(await corpAdmin.raw('GET', `/api/v2/events/${hidden.schedule}`), 404, 'no schedule with this id')
    const stored = await row('SELECT rrule, session_collection, updated_at FROM client_schedules WHERE id = ?1', hidden.schedule)
    await expectEnvelope(await corpAdmin.raw('PUT', `/api/v2/events/${hidden.schedule}`, { rrule: 'RRULE:FREQ=WEEKLY', session_collection: true }), 404, 'no schedule with this id')
    await expectEnvelope(await corpAdmin.raw('DELETE', `/api/v2/events/${hidden.schedule}`), 404, 'no schedule with this id')
    expect(await row('SELECT rrule, session_collection, updated_at FROM client_schedules WHERE id = ?1', hidden.schedule)).toEqual(stored)
    // its own schedule: changed and deleted
    expect((await data<{ rrule: string }>(await corpAdmin.raw('PUT', `/api/v2/events/${own.schedule}`, { rrule: 'RRULE:FREQ=WEEKLY' }))).rrule).toBe('RRULE:FREQ=WEEKLY')
    await data(await corpAdmin.raw('DELETE', `/api/v2/events/${own.schedule}`))
    expect(await n('client_schedules WHERE id = ?1', own.schedule)).toBe(0)
    // the unrestricted administrator lists, reads and changes HIDDEN's
    expect((await data<{ id: number }[]>(await admin.raw('GET', '/api/v2/events'))).map((s) => s.id)).toContain(hidden.schedule)
    expect((await data<{ rrule: string }>(await admin.raw('PUT', `/api/v2/events/${hidden.schedule}`, { rrule: 'RRULE:FREQ=HOURLY' }))).rrule).toBe('RRULE:FREQ=HOURLY')
  })
})

describe('delete', () => {
  it("another environment's client is not deleted (404; client, service user and token stay); an unrestricted administrator deletes it", async () => {
    await expectEnvelope(await corpAdmin.raw('DELETE', `/api/v2/clients/${hidden.id}`), 404, 'no client with this id')
    expect(await n('clients WHERE id = ?1', hidden.id)).toBe(1)
    expect(await n('api_tokens WHERE id = ?1', hidden.tokenId)).toBe(1)
    expect((await row('SELECT status FROM client_jobs WHERE id = ?1', hidden.job))!.status).toBe(0)
    await data(await admin.raw('DELETE', `/api/v2/clients/${hidden.id}`))
    expect(await n('clients WHERE id = ?1', hidden.id)).toBe(0)
    expect(await n('api_tokens WHERE id = ?1', hidden.tokenId)).toBe(0)
    // and the restricted one deletes its own
    await data(await corpAdmin.raw('DELETE', `/api/v2/clients/${own.id}`))
    expect(await n('clients WHERE id = ?1', own.id)).toBe(0)
  })
})
