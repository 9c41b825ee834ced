/**
 * Issue 18 item 6: a file-upload job that is never ended times out (BloodHound: 20 minutes without ingest
 * activity, status 4), by the worker's scheduled handler, off the request path.
 */
import { createExecutionContext, createScheduledController, waitOnExecutionContext } from 'cloudflare:test'
import { beforeAll, describe, expect, it } from 'vitest'
import worker from '../../src/index'
import { adminToken, expectEnvelope, env } from '../helpers'
import { listUploadJobs, startUploadJob, uploadFile } from '../../src/client/graph'
import type { EdgeHoundClient } from '../../src/client'
import { JOB_INACTIVITY_MS, TIMED_OUT_MESSAGE } from '../../src/graph/job-timeout'

const db = () => (env as unknown as { DB: D1Database }).DB

/** Runs the cron handler as the runtime would at `atMs`. */
async function cron(atMs: number) {
  const ctx = createExecutionContext()
  worker.scheduled(createScheduledController({ scheduledTime: atMs, cron: '*/5 * * * *' }), env as unknown as Env, ctx)
  await waitOnExecutionContext(ctx)
}

async function job(c: EdgeHoundClient, id: number) {
  return (await listUploadJobs(c, { limit: 1000 })).data.find((j) => j.id === id)!
}

let admin: EdgeHoundClient

beforeAll(async () => {
  admin = await adminToken()
})

describe('a job that is never ended', () => {
  it('times out 20 minutes after its last upload: status 4, a message, an end time; its data stays', async () => {
    const idle = (await startUploadJob(admin)).data
    await uploadFile(admin, idle.id, { graph: { nodes: [{ id: 'TIMEOUT-1', kinds: ['Person'], properties: { domainsid: 'S-1-5-21-960' } }] } })
    const empty = (await startUploadJob(admin)).data
    const lastActivity = Date.parse((await job(admin, idle.id)).last_ingest!)

    // not yet: 19 minutes after the last activity
    await cron(lastActivity + JOB_INACTIVITY_MS - 60_000)
    expect((await job(admin, idle.id)).status).toBe(1)

    const at = lastActivity + JOB_INACTIVITY_MS + 60_000
    await cron(at)
    for (const id of [idle.id, empty.id]) {
      const timedOut = await job(admin, id)
      expect(timedOut).toMatchObject({ status: 4, status_message: TIMED_OUT_MESSAGE, end_time: new Date(at).toISOString() })
    }
    expect(TIMED_OUT_MESSAGE).toContain('20 minutes')
    // the file it received stays; no collection time is recorded for an upload never declared complete
    expect(await db().prepare(`SELECT count(*) AS n FROM nodes WHERE objectid = 'TIMEOUT-1'`).first('n')).toBe(1)
    expect(await db().prepare(`SELECT count(*) AS n FROM environment_collections WHERE job_id = ?`).bind(idle.id).first('n')).toBe(0)
    // an analysis is requested for the job that wrote data
    const run = await db().prepare(`SELECT count(*) AS n FROM analysis_runs WHERE reasons LIKE ?`).bind(`%ingest job ${idle.id} timed out%`).first('n')
    expect(run).toBe(1)

    // the job is final: no more files, no end
    await expectEnvelope(
      await admin.raw('POST', `/api/v2/file-upload/${idle.id}`, JSON.stringify({ graph: { nodes: [] } }), { contentType: 'application/json' }),
      400,
      'job must be in running status to attach files',
    )
    await expectEnvelope(await admin.raw('POST', `/api/v2/file-upload/${idle.id}/end`), 400, 'job must be in running status to end')
  })

  it('a job in use is left alone, and an ended job is never touched', async () => {
    const active = (await startUploadJob(admin)).data
    const ended = (await startUploadJob(admin)).data
    await admin.raw('POST', `/api/v2/file-upload/${ended.id}/end`)
    const before = await job(admin, ended.id)
    await cron(Date.parse(active.start_time) + JOB_INACTIVITY_MS - 1_000)
    expect((await job(admin, active.id)).status).toBe(1)
    await cron(Date.parse(active.start_time) + 10 * JOB_INACTIVITY_MS)
    expect(await job(admin, ended.id)).toEqual(before)
    expect((await job(admin, active.id)).status).toBe(4)
  })
})
