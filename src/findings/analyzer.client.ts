import type { RunRecord } from './analysis.store'

/**
 * The worker's side of the Analyzer object: the single global instance (`idFromName('global')`), so that
 * every request for a run, from any isolate, reaches the same object.
 */
export function analyzerStub(env: Env) {
  return env.ANALYZER.get(env.ANALYZER.idFromName('global'))
}

/** Records a request for an analysis run (coalesced into a pending one) and returns that run. */
export async function requestRun(env: Env, reason: string): Promise<RunRecord> {
  const r = await analyzerStub(env).request(reason.slice(0, 200))
  return r as unknown as RunRecord
}
