import { analysisRun, analysisRuns, requestAnalysisRun } from '../../client/cli-endpoints'
import { interpretAnalysis, type AnalysisState } from '../analysis-state'
import type { Command, Context, OptionSpec } from '../command'
import { CliError, UsageError } from '../errors'
import { formatDuration, LiveLine, renderBar } from '../progress'

const WAIT_OPTIONS: Record<string, OptionSpec> = {
  timeout: { type: 'string', value: 'SECONDS', description: 'give up waiting after this long (default 600)' },
  interval: { type: 'string', value: 'SECONDS', description: 'time between status checks (default 2)' },
}

function seconds(v: unknown, name: string, def: number): number {
  if (v === undefined) return def
  const n = Number(v)
  if (!Number.isFinite(n) || n <= 0) throw new UsageError(`--${name} must be a positive number of seconds`)
  return n
}

function describe(s: AnalysisState): string {
  return `${s.status}${s.progress !== null && s.phase === 'running' ? ` ${Math.round(s.progress * 100)}%` : ''}${s.message ? ` — ${s.message}` : ''}`
}

/**
 * Polls until the run ends: GET /api/v2/analysis/{id} when the run is known, else the latest run
 * (GET /api/v2/analysis?limit=1). When the answer names a different, finished run than the one
 * requested, that is the previous run: keep waiting for ours.
 */
async function waitForRun(
  ctx: Context,
  opts: Record<string, unknown>,
  first: AnalysisState,
  firstRaw: unknown,
  runId: string | null,
): Promise<{ state: AnalysisState; raw: unknown }> {
  const timeoutMs = seconds(opts.timeout, 'timeout', 600) * 1000
  const intervalMs = seconds(opts.interval, 'interval', 2) * 1000
  const c = await ctx.client()
  const start = ctx.io.now().getTime()
  const live = new LiveLine(ctx.io.stderr)
  let state = first
  let raw = firstRaw
  let lastPrinted = ''
  const isOurs = (s: AnalysisState) => !runId || !s.runId || s.runId === runId
  while (!(isOurs(state) && (state.phase === 'complete' || state.phase === 'failed' || state.phase === 'none'))) {
    const elapsed = ctx.io.now().getTime() - start
    if (elapsed >= timeoutMs) {
      live.clear()
      throw new CliError(`analysis still ${state.status} after ${formatDuration(elapsed)} (gave up waiting; it continues on the server)`)
    }
    const what = isOurs(state) ? describe(state) : 'queued behind the previous run'
    const line = `analysis${runId ? ` run ${runId}` : ''} ${what}  ${formatDuration(elapsed)}`
    live.update(state.progress !== null && isOurs(state) ? `${renderBar(state.progress, 1)} ${line}` : line, true)
    // Without a terminal, print each change of state once (for CI logs), not every poll.
    if (!ctx.io.stderr.isTTY && !ctx.json && what !== lastPrinted) {
      ctx.out.info(`analysis ${what}`)
      lastPrinted = what
    }
    await ctx.io.sleep(intervalMs)
    raw = runId ? await analysisRun(c, runId) : await analysisRuns(c, 1)
    state = interpretAnalysis(raw)
  }
  live.clear()
  return { state, raw }
}

function summary(s: AnalysisState): string {
  const run = s.runId ? `Analysis run ${s.runId}` : 'Analysis'
  if (s.phase === 'none') return 'No analysis has run yet.'
  if (s.phase === 'failed') return `${run} FAILED${s.message ? `: ${s.message}` : ''}.`
  if (s.phase !== 'complete') return `${run} ${describe(s)}.`
  const n = s.counts
  const counts =
    n.findings !== null
      ? `: ${n.findings} finding(s)${n.new !== null ? ` (${n.new} new, ${n.changed ?? 0} changed, ${n.closed ?? 0} closed)` : ''}`
      : ''
  return `${run} complete${counts}${n.duration_ms !== null ? ` in ${formatDuration(n.duration_ms)}` : ''}.`
}

function finish(ctx: Context, s: AnalysisState, raw: unknown): number {
  if (ctx.json) {
    const data = (raw as { data?: unknown })?.data
    const run = Array.isArray(data) ? (data[0] ?? null) : (data ?? null)
    ctx.out.data({ phase: s.phase, status: s.status, progress: s.progress, run_id: s.runId, message: s.message, run })
  } else ctx.out.line(summary(s))
  return s.phase === 'failed' ? 1 : 0
}

export const analysisRunCmd: Command = {
  name: 'analysis run',
  summary: 'Request an analysis run and wait for it with progress (--no-wait to return at once)',
  maxArgs: 0,
  options: { 'no-wait': { type: 'boolean', description: 'return as soon as the run is requested' }, ...WAIT_OPTIONS },
  async run(ctx, _args, opts) {
    const c = await ctx.client()
    const body = await requestAnalysisRun(c)
    const requested = interpretAnalysis(body)
    if (opts['no-wait']) {
      if (ctx.json) ctx.out.data({ requested: true, run_id: requested.runId, status: requested.status })
      else ctx.out.line(`Analysis requested${requested.runId ? ` (run ${requested.runId}, ${requested.status})` : ''}; follow it with \`edgehound analysis status --wait\`.`)
      return 0
    }
    // An answer without a recognisable state (for example 202 with no body) means "queued".
    const first = requested.phase === 'unknown' || requested.phase === 'none' ? { ...requested, phase: 'running' as const, status: 'requested' } : requested
    const done = await waitForRun(ctx, opts, first, body, requested.runId)
    return finish(ctx, done.state, done.raw)
  },
}

export const analysisStatusCmd: Command = {
  name: 'analysis status',
  summary: 'Show the latest analysis run (--wait to wait until it ends)',
  maxArgs: 0,
  options: { wait: { type: 'boolean', description: 'wait, with progress, until the latest run ends' }, ...WAIT_OPTIONS },
  async run(ctx, _args, opts) {
    const c = await ctx.client()
    const body = await analysisRuns(c, 1)
    const s = interpretAnalysis(body)
    if (!opts.wait) return finish(ctx, s, body)
    // Follow that very run by id, so a newer run queued meanwhile does not change what we wait for.
    const done = await waitForRun(ctx, opts, s, body, s.runId)
    return finish(ctx, done.state, done.raw)
  },
}
