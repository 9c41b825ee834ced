import type { AuditWrite } from '../audit/audit'
import { requestRunRecord, type RunRecord } from './analysis.store'

/**
 * The worker's side of the Analyzer object: the single global instance (`idFromName('global')`), so that
 * every wake-up, from any isolate, reaches the same object.
 */
export function analyzerStub(env: Env) {
  return env.ANALYZER.get(env.ANALYZER.idFromName('global'))
}

/** An attempt younger than this is taken to be alive; an older one may have died with its object. */
export const LIVE_ATTEMPT_MS = 2 * 60 * 1000

/**
 * Records a request for an analysis run (joining the pending run, if any) and returns that run. `audit`:
 * the requesting API call's success row (RequestAnalysis), written in the batch that records the request.
 *
 * The request is recorded in D1 by the caller itself, so it never waits for the Analyzer object, which may
 * be busy computing. The object is woken only when no attempt is live: a live attempt finds the pending run
 * when it finishes (it checks after its commit, and our record was written before we looked).
 */
export async function requestRun(env: Env, reason: string, nowMs = Date.now(), audit?: AuditWrite): Promise<RunRecord> {
  const { run, liveAttemptSince } = await requestRunRecord(env.DB, reason.slice(0, 200), new Date(nowMs).toISOString(), audit)
  const live = liveAttemptSince !== null && nowMs - Date.parse(liveAttemptSince) < LIVE_ATTEMPT_MS
  if (!live) await analyzerStub(env).wake()
  return run
}
