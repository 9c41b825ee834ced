/**
 * A file-upload job that is never ended would stay running forever: its environments would never be
 * marked collected and nothing would tell its owner. BloodHound times such jobs out after 20 minutes
 * without ingest activity (status 4, "timed out"); EdgeHound does the same, off the request path: the
 * worker's scheduled handler (src/index.ts, cron every 5 minutes in wrangler.toml) calls `sweepIdleJobs`,
 * so a job times out between 20 and 25 minutes after its last upload (or its start, if it has none).
 *
 * A timed-out job keeps what its files wrote (each was committed whole) but records no collection time
 * (the upload was never declared complete); an analysis is requested when it wrote anything, so findings
 * reflect the graph. An upload racing the sweep is refused whole (the commit re-checks that the job runs).
 */
import { requestAnalysis } from '../findings/trigger'
import { timeOutIdleJobs } from './jobs.store'

/** Inactivity after which a running job times out (BloodHound: jobActivityTimeout, 20 minutes). */
export const JOB_INACTIVITY_MS = 20 * 60 * 1000

export const TIMED_OUT_MESSAGE = `timed out: no file was uploaded for ${JOB_INACTIVITY_MS / 60_000} minutes and the job was not ended; the files received before stay in the graph`

export async function sweepIdleJobs(env: Env, nowMs: number): Promise<number> {
  const now = new Date(nowMs).toISOString()
  const idleSince = new Date(nowMs - JOB_INACTIVITY_MS).toISOString()
  const jobs = await timeOutIdleJobs(env.DB, now, idleSince, TIMED_OUT_MESSAGE)
  if (jobs.length > 0) {
    console.log(JSON.stringify({ level: 'info', event: 'ingest_jobs_timed_out', jobs: jobs.map((j) => j.id) }))
    const wrote = jobs.filter((j) => j.files_written > 0).map((j) => j.id)
    if (wrote.length > 0) await requestAnalysis(env, `ingest job${wrote.length > 1 ? 's' : ''} ${wrote.join(', ')} timed out`)
  }
  return jobs.length
}
