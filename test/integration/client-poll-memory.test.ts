/**
 * An idle client's polls answered from the isolate's memory (src/clients/poll-cache.ts, docs/collectors.md
 * "Running collectors as services"): what is remembered, what ends the memory, and its bound.
 * "Another isolate" is played by writing the job straight into D1 (jobInsert), as a run-now elsewhere would.
 */
import { env } from 'cloudflare:workers'
import { beforeAll, describe, expect, it } from 'vitest'
import { adminSession, BASE } from '../helpers'
import { EdgeHoundClient } from '../../src/client'
import { hfetch } from '../hardening/lib'
import { jobInsert } from '../../src/clients/jobs.store'
import { SERVICE_SCOPE } from '../../src/clients/access'

let admin: EdgeHoundClient

interface Created {
  id: string
  token: { id: string; key: string }
}

async function newClient(bindings?: Env) {
  const r = await admin.raw('POST', '/api/v2/clients', { name: `poll-${crypto.randomUUID()}`, type: 'SharpHound', environment_id: 'S-1-5-21-70-70-70' })
  expect(r.status).toBe(201)
  const c = ((await r.json()) as { data: Created }).data
  const collector = new EdgeHoundClient({
    baseUrl: BASE,
    credentials: { kind: 'token', tokenId: c.token.id, tokenKey: c.token.key },
    fetch: (req) => hfetch(req, bindings ?? (env as unknown as Env)),
  })
  const poll = async () => {
    const res = await collector.raw('GET', '/api/v2/jobs/available')
    expect(res.status).toBe(200)
    return ((await res.json()) as { data: { id: number; execution_time: string }[] }).data.map((j) => j.id)
  }
  return { id: c.id, poll }
}

/** a ready job written by "another isolate" (this isolate's memory is not told) */
async function jobElsewhere(clientId: string, executionTime: Date): Promise<number> {
  const now = new Date().toISOString()
  const r = await jobInsert(env.DB, { clientId, eventId: null, executionTime: executionTime.toISOString(), options: {} as never, now, message: 'test' }, SERVICE_SCOPE).run()
  return Number(r.meta.last_row_id)
}

beforeAll(async () => {
  admin = await adminSession()
})

describe('idle polls from memory', () => {
  it('after an empty answer, a job written elsewhere waits for the memory to end (at most CLIENT_POLL_FRESH_MS)', async () => {
    const c = await newClient()
    expect(await c.poll()).toEqual([])
    await jobElsewhere(c.id, new Date(Date.now() - 1000))
    // the documented staleness: this isolate said "nothing" less than 15 s ago
    expect(await c.poll()).toEqual([])
  })

  it('a run-now through this isolate ends the memory: the next poll offers the job', async () => {
    const c = await newClient()
    expect(await c.poll()).toEqual([])
    const r = await admin.raw('POST', `/api/v2/clients/${c.id}/jobs`, {})
    expect(r.status).toBe(201)
    const job = ((await r.json()) as { data: { id: number } }).data.id
    expect(await c.poll()).toEqual([job])
  })

  it("the memory never outlives the client's next pending job: a job due in 1.2 s is offered once due", async () => {
    const c = await newClient()
    const job = await jobElsewhere(c.id, new Date(Date.now() + 1200))
    expect(await c.poll()).toEqual([])
    await new Promise((r) => setTimeout(r, 1400))
    expect(await c.poll()).toEqual([job])
  })

  it('a list of jobs is never remembered: a job taken meanwhile is not offered again', async () => {
    const c = await newClient()
    const job = await jobElsewhere(c.id, new Date(Date.now() - 1000))
    expect(await c.poll()).toEqual([job])
    await env.DB.prepare('UPDATE client_jobs SET status = 3 WHERE id = ?').bind(job).run()
    expect(await c.poll()).toEqual([])
  })

  it('CLIENT_POLL_FRESH_MS = 0 reads the store on every poll', async () => {
    const c = await newClient({ ...(env as unknown as Env), CLIENT_POLL_FRESH_MS: '0' } as unknown as Env)
    expect(await c.poll()).toEqual([])
    const job = await jobElsewhere(c.id, new Date(Date.now() - 1000))
    expect(await c.poll()).toEqual([job])
  })
})
