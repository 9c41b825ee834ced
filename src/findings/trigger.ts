/**
 * CONTRACT between src/graph (caller) and src/findings (implementer).
 * Ask for an analysis run (after an ingest job ends, or on demand). Must return quickly: the run itself
 * happens off the request path.
 *
 * It costs one D1 batch (joining the pending run or creating it) plus, when no run attempt is live, one
 * wake-up call to the Analyzer object; it never waits for a run in progress. It never throws: an ingest job
 * must not fail because analysis could not be requested. A failed request is retried once and then logged;
 * the next job (or POST /api/v2/analysis) requests again.
 */
import { requestRun } from './analyzer.client'

export async function requestAnalysis(env: Env, reason: string): Promise<void> {
  for (let attempt = 1; attempt <= 2; attempt++) {
    try {
      await requestRun(env, reason)
      return
    } catch (e) {
      if (attempt === 2)
        console.error(JSON.stringify({ level: 'error', event: 'analysis_request_failed', reason, error: e instanceof Error ? e.message : String(e) }))
    }
  }
}
