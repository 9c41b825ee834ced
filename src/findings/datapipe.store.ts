/** What GET /api/v2/datapipe/status reads (docs/findings.md "Datapipe status"): one statement, small tables. */

export interface DatapipeRow {
  /** analysis runs pending or running */
  runs_active: number
  /** database wipes not finished (POST /api/v2/clear-database) */
  wipes_active: number
  /** file-upload jobs still running (status 1) */
  jobs_active: number
  /** commit time of the newest complete run */
  last_complete: string | null
  /** start of the newest run's latest attempt */
  last_run: string | null
  /** the newest change of any run or job */
  last_change: string | null
}

export async function datapipeState(db: D1Database): Promise<DatapipeRow> {
  const r = await db
    .prepare(
      `SELECT
         (SELECT COUNT(*) FROM analysis_runs WHERE status IN ('pending', 'running')) AS runs_active,
         (SELECT COUNT(*) FROM ingest_jobs WHERE status = 1) AS jobs_active,
         (SELECT COUNT(*) FROM database_wipes WHERE status IN ('pending', 'running')) AS wipes_active,
         (SELECT MAX(completed_at) FROM analysis_runs WHERE status = 'complete') AS last_complete,
         (SELECT MAX(COALESCE(attempt_started_at, started_at)) FROM analysis_runs) AS last_run,
         max(COALESCE((SELECT MAX(COALESCE(completed_at, attempt_started_at, requested_at)) FROM analysis_runs), ''),
             COALESCE((SELECT MAX(updated_at) FROM ingest_jobs), '')) AS last_change`,
    )
    .first<DatapipeRow>()
  return { runs_active: r?.runs_active ?? 0, wipes_active: r?.wipes_active ?? 0, jobs_active: r?.jobs_active ?? 0, last_complete: r?.last_complete ?? null, last_run: r?.last_run ?? null, last_change: r?.last_change || null }
}
