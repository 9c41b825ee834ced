// Data pipeline: what ingest and analysis are doing, the analysis runs, and (with analysis/Run) a new run.
import { useEffect, useState } from 'preact/hooks'
import { datapipeStatus } from '../../../../src/client/graph'
import { listAnalysisRuns, requestAnalysis, type AnalysisRunJson } from '../../../../src/client/findings'
import { client } from '../../api'
import { attempt } from '../../lib/attempt'
import { ErrorLine, when } from './common'

export default function DataPipeline({ canRun }: { canRun: boolean }) {
  const [error, setError] = useState('')
  const [status, setStatus] = useState<Awaited<ReturnType<typeof datapipeStatus>>['data'] | null>(null)
  const [runs, setRuns] = useState<AnalysisRunJson[] | null>(null)
  const [note, setNote] = useState('')
  async function load() {
    const s = await attempt(() => datapipeStatus(client), setError)
    if (s) setStatus(s.data)
    if (canRun) {
      const r = await attempt(() => listAnalysisRuns(client, { limit: 10 }), setError)
      if (r) setRuns(r.data)
    }
    return s?.data.status !== 'idle'
  }
  useEffect(() => {
    let live = true
    let t: ReturnType<typeof setTimeout>
    const tick = async () => {
      const busy = await load()
      if (live) t = setTimeout(tick, busy ? 2000 : 15000)
    }
    tick()
    return () => ((live = false), clearTimeout(t))
  }, [])
  async function run() {
    const r = await attempt(() => requestAnalysis(client), setError)
    if (r) setNote('Analysis requested.')
    load()
  }
  return (
    <section aria-label="Data pipeline">
      <h2>Data pipeline</h2>
      <ErrorLine error={error} />
      {status && (
        <dl class="facts" aria-label="Pipeline status">
          <dt>Status</dt><dd>{status.status}</dd>
          <dt>Last complete analysis</dt><dd>{when(status.last_complete_analysis_at)}</dd>
          <dt>Last analysis started</dt><dd>{when(status.last_analysis_run_at)}</dd>
          <dt>Last change</dt><dd>{when(status.updated_at)}</dd>
        </dl>
      )}
      {canRun && (
        <p>
          <button onClick={run}>Run analysis now</button> {note && <span role="status">{note}</span>}
        </p>
      )}
      {runs && (
        <table class="list" aria-label="Analysis runs">
          <thead><tr><th scope="col">Run</th><th scope="col">Status</th><th scope="col">Requested</th><th scope="col">Completed</th><th scope="col">Findings</th><th scope="col">New / closed</th><th scope="col">Error</th></tr></thead>
          <tbody>
            {runs.length === 0 && <tr><td colSpan={7} class="muted">No analysis has run yet.</td></tr>}
            {runs.map((r) => (
              <tr key={r.id}>
                <td>{r.id}</td><td>{r.status}</td><td>{when(r.requested_at)}</td><td>{when(r.completed_at)}</td>
                <td>{r.finding_count ?? ''}</td><td>{r.new_count ?? ''} / {r.closed_count ?? ''}</td><td>{r.error ?? ''}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  )
}
