/**
 * Reads an analysis answer into one small state the CLI can wait on. Pure, so it is unit-tested on every
 * shape it accepts. The service answers `{data: run}` (POST /api/v2/analysis, GET /api/v2/analysis/{id})
 * and `{count, skip, limit, data: [run, ...]}` newest first (GET /api/v2/analysis); a run has `id`,
 * `status` (pending | running | complete | failed), `error`, timings and counts.
 *
 * Accepted shapes (the status object is `data`, `data[0]`, `data.run`, `data.current`, `data.latest` or the body):
 *   { status | state: "queued" | "pending" | "requested" | "running" | "analyzing" | ... }  → running
 *   { status | state: "complete" | "completed" | "succeeded" | "success" | "done" | "idle" } → complete
 *   { status | state: "failed" | "error" | "errored" | "canceled" | "cancelled" | "timed_out" } → failed
 *   BloodHound's datapipe words: "idle" (nothing to do) → complete, "ingesting"/"analyzing"/"purging" → running
 * Progress, when given: `progress` / `percent` / `percent_complete` (0–1 or 0–100), or
 * `completed_steps` / `total_steps`. `id` / `run_id` identify the run; `message` / `status_message` /
 * `error` explain it.
 */
export type AnalysisPhase = 'running' | 'complete' | 'failed' | 'unknown'

export interface AnalysisState {
  /** 'none' when the server has no run at all yet */
  phase: AnalysisPhase | 'none'
  /** the server's own word for the state */
  status: string
  /** 0..1 when the server says how far it is */
  progress: number | null
  runId: string | null
  message: string | null
  /** finding counts and duration of a finished run, when the server gives them */
  counts: { findings: number | null; new: number | null; changed: number | null; closed: number | null; duration_ms: number | null }
}

const NO_COUNTS = { findings: null, new: null, changed: null, closed: null, duration_ms: null }

const DONE = new Set(['complete', 'completed', 'succeeded', 'success', 'done', 'idle', 'finished'])
const FAILED = new Set(['failed', 'failure', 'error', 'errored', 'canceled', 'cancelled', 'timed_out', 'timedout', 'aborted'])
const RUNNING = new Set(['queued', 'pending', 'requested', 'scheduled', 'running', 'started', 'in_progress', 'analyzing', 'ingesting', 'purging', 'active'])

type Obj = Record<string, unknown>
const isObj = (v: unknown): v is Obj => !!v && typeof v === 'object' && !Array.isArray(v)

function statusObject(body: unknown): Obj | null | 'empty' {
  let data = isObj(body) && 'data' in body ? body.data : body
  if (Array.isArray(data)) {
    if (data.length === 0) return 'empty'
    data = data[0] // a list is newest first: the latest run is the current state
  }
  if (!isObj(data)) return null
  for (const k of ['run', 'current', 'latest', 'analysis']) if (isObj(data[k]) && ('status' in (data[k] as Obj) || 'state' in (data[k] as Obj))) return data[k] as Obj
  return data
}

function num(v: unknown): number | null {
  return typeof v === 'number' && Number.isFinite(v) ? v : null
}

export function interpretAnalysis(body: unknown): AnalysisState {
  const o = statusObject(body)
  if (o === 'empty') return { phase: 'none', status: 'none', progress: null, runId: null, message: null, counts: NO_COUNTS }
  if (!o) return { phase: 'unknown', status: 'unknown', progress: null, runId: null, message: null, counts: NO_COUNTS }
  const raw = o.status ?? o.state
  const status = typeof raw === 'string' ? raw : typeof raw === 'number' ? String(raw) : 'unknown'
  const word = status.toLowerCase().replace(/[\s-]+/g, '_')
  const phase: AnalysisPhase = DONE.has(word) ? 'complete' : FAILED.has(word) ? 'failed' : RUNNING.has(word) ? 'running' : 'unknown'

  let progress: number | null = null
  const p = num(o.progress) ?? num(o.percent) ?? num(o.percent_complete)
  if (p !== null) progress = p > 1 ? p / 100 : p
  else {
    const done = num(o.completed_steps)
    const total = num(o.total_steps)
    if (done !== null && total) progress = done / total
  }
  if (progress !== null) progress = Math.min(1, Math.max(0, progress))
  if (phase === 'complete') progress = 1

  const id = o.id ?? o.run_id
  const msg = o.message ?? o.status_message ?? o.error
  return {
    phase,
    status,
    progress,
    runId: typeof id === 'string' || typeof id === 'number' ? String(id) : null,
    message: typeof msg === 'string' && msg ? msg : null,
    counts: {
      findings: num(o.finding_count),
      new: num(o.new_count),
      changed: num(o.changed_count),
      closed: num(o.closed_count),
      duration_ms: num(o.duration_ms),
    },
  }
}
