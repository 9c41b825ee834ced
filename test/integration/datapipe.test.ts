/**
 * GET /api/v2/datapipe/status (BloodHound's GetDatapipeStatus; docs/findings.md "Datapipe status"): idle on an
 * empty service, ingesting while a file-upload job is open, analyzing while a run is pending or running, idle
 * again with the run's times once it committed. Read by BloodHound's JS client and the go-sdk (the older Go
 * Sentinel connector takes `last_complete_analysis_at` from it).
 */
import { env } from 'cloudflare:workers'
import { beforeAll, describe, expect, it } from 'vitest'
import { adminToken, client, expectEnvelope, userWithRole } from '../helpers'
import type { EdgeHoundClient } from '../../src/client'
import { endUploadJob, startUploadJob } from '../../src/client/graph'
import { createRun, getRun, listRuns, startAttempt } from '../../src/findings/analysis.store'
import { executeRun } from '../../src/findings/run'
import { waitForRun } from '../fixtures/findings/helpers'

const db = env.DB
const ZERO = '0001-01-01T00:00:00.000Z'
type Status = { data: { status: string; updated_at: string; last_complete_analysis_at: string; last_analysis_run_at: string } }

describe('GET /api/v2/datapipe/status', () => {
  let admin: EdgeHoundClient
  const status = (c: EdgeHoundClient = admin) => c.call<Status>('GET', '/api/v2/datapipe/status')

  beforeAll(async () => {
    admin = await adminToken()
  })

  it('idle with zero times before anything happened', async () => {
    expect((await status()).data).toEqual({ status: 'idle', updated_at: ZERO, last_complete_analysis_at: ZERO, last_analysis_run_at: ZERO })
  })

  it('ingesting while a file-upload job is open; idle with the run\'s times once the run its end requested committed', async () => {
    const job = (await startUploadJob(admin)).data
    const open = (await status()).data
    expect(open.status).toBe('ingesting')
    expect(open.updated_at).toBe(job.start_time)
    await endUploadJob(admin, job.id)
    const { runs } = await listRuns(db, 0, 1)
    const run = await waitForRun(db, runs[0].id)
    expect(run.status).toBe('complete')
    const done = (await status()).data
    expect(done).toMatchObject({ status: 'idle', last_complete_analysis_at: run.completed_at })
    expect(done.last_analysis_run_at).not.toBe(ZERO)
    expect(done.last_analysis_run_at <= run.completed_at!).toBe(true)
    expect(done.updated_at >= run.completed_at!).toBe(true)
  })

  it('analyzing while a run is pending and while it runs', async () => {
    const before = (await status()).data.last_complete_analysis_at
    const run = await createRun(db, 'test', new Date().toISOString())
    expect((await status()).data.status).toBe('analyzing')
    expect(await startAttempt(db, run.id, new Date().toISOString())).not.toBeNull()
    const running = (await status()).data
    expect(running.status).toBe('analyzing')
    expect(running.last_complete_analysis_at).toBe(before)
    const summary = await executeRun(db, run.id)
    expect((await getRun(db, run.id))!.status).toBe('complete')
    expect((await status()).data).toMatchObject({ status: 'idle', last_complete_analysis_at: summary.completedAt })
  })

  it('needs authentication only (any role), and answers the envelope without it', async () => {
    const uploader = (await userWithRole('Upload-Only')).client
    expect((await status(uploader)).data.status).toBe('idle')
    await expectEnvelope(await client().raw('GET', '/api/v2/datapipe/status'), 401)
  })
})
