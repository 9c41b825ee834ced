/**
 * Who may act on a file-upload job.
 *
 * Reasoning: a job collects the files of one upload session; letting any ingest-capable caller attach
 * files to, end, or read the errors of somebody else's job would let one integration interfere with
 * another's data and read its error details (which quote object ids and names). So a job belongs to
 * the user who started it; administrators (who may manage every user anyway: auth/ManageUsers) see and
 * act on all jobs. For everyone else another user's job is treated as absent (404), like any resource
 * the caller may not see.
 */
import type { Principal } from '../auth/principal'

export function seesAllJobs(p: Principal): boolean {
  return p.permissions.includes('auth/ManageUsers')
}

export function canActOnJob(p: Principal, job: { user_id: string }): boolean {
  return job.user_id === p.userId || seesAllJobs(p)
}
