/**
 * CONTRACT between src/graph (caller) and src/findings (implementer).
 * Ask for an analysis run (after an ingest job ends, or on demand). Must return quickly: the run itself
 * happens off the request path. Placeholder until the findings work lands: does nothing.
 */
export async function requestAnalysis(_env: Env, _reason: string): Promise<void> {}
