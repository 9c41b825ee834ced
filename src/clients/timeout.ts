/**
 * A client that stops checking in (crashed, host switched off) would leave its job running forever and
 * block the client's next job. BloodHound Enterprise fails such a job after its client check-in timeout
 * (OpenHound polls every 30 s "to remain below BHE's 600 s client check-in timeout"); EdgeHound does the
 * same off the request path: the Worker's scheduled handler (src/index.ts) fails every running or ingesting
 * job whose client has not been heard from (any collector request: poll, check-in, post) for
 * CLIENT_CHECKIN_TIMEOUT_MS. What the job received is deleted with it: nothing of a failed job is written.
 */
import { discardJob, staleJobs } from './jobs.store'
import { SERVICE_SCOPE } from './access'

export const CLIENT_CHECKIN_TIMEOUT_MS = 10 * 60 * 1000

export const CHECKIN_TIMEOUT_MESSAGE = `failed: the client did not check in for ${CLIENT_CHECKIN_TIMEOUT_MS / 60_000} minutes; nothing it sent was written`

export async function sweepSilentClients(env: Env, nowMs: number): Promise<number[]> {
  const now = new Date(nowMs).toISOString()
  const ids = await staleJobs(env.DB, new Date(nowMs - CLIENT_CHECKIN_TIMEOUT_MS).toISOString())
  const failed: number[] = []
  for (const id of ids) if (await discardJob(env.DB, id, 5, CHECKIN_TIMEOUT_MESSAGE, now, [1, 6], SERVICE_SCOPE)) failed.push(id)
  if (failed.length > 0) console.log(JSON.stringify({ level: 'info', event: 'client_jobs_timed_out', jobs: failed }))
  return failed
}
