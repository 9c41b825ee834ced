import { analysisStatus, requestAnalysisRun } from '../../client/cli-endpoints'
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
 * Polls GET /api/v2/analysis until the run ends. When the run was just requested and the answer names
 * a different, finished run, that is the previous run: keep waiting for ours.
 */
async function waitForRun(
  ctx: Context,
  opts: Record<string, unknown>,
  first: AnalysisState,
  firstRaw: unknown,
  requestedRun: string | null,
): Promise<{ state: AnalysisState; raw: unknown }> {
  const timeoutMs = seconds(opts.timeout, 'timeout', 600) * 1000
  const intervalMs = seconds(opts.interval, 'interval', 2) * 1000
  const c = await ctx.client()
  const start = ctx.io.now().getTime()
  const live = new LiveLine(ctx.io.stderr)
  let state = first
  let raw = firstRaw
  let lastPrinted = ''
  const isOurs = (s: AnalysisState) => !requestedRun || !s.runId || s.runId === requestedRun
  while (!(isOurs(state) && (state.phase === 'complete' || state.phase === 'failed'))) {
    const elapsed = ctx.io.now().getTime() - start
    if (elapsed >= timeoutMs) {
      live.clear()
      throw new CliError(`analysis still ${state.status} after ${formatDuration(elapsed)} (gave up waiting; it continues on the server)`)
    }
    const line = `analysis ${isOurs(state) ? describe(state) : 'queued behind the previous run'}  ${formatDuration(elapsed)}`
    if (state.progress !== null && isOurs(state)) live.update(`${renderBar(state.progress, 1)} ${line}`, true)
    else live.update(line, true)
    // Without a terminal, print each change of state once (for CI logs), not every poll.
    if (!ctx.io.stderr.isTTY && !ctx.json && state.status !== lastPrinted) {
      ctx.out.info(`analysis ${describe(state)}`)
      lastPrinted = state.status
    }
    await ctx.io.sleep(intervalMs)
    raw = await analysisStatus(c)
    state = interpretAnalysis(raw)
  }
  live.clear()
  return { state, raw }
}

function finish(ctx: Context, s: AnalysisState, raw: unknown, waitedMs: number | null): number {
  if (ctx.json) ctx.out.data({ phase: s.phase, status: s.status, progress: s.progress, run_id: s.runId, message: s.message, response: raw })
  else
    ctx.out.line(
      `Analysis ${s.phase === 'complete' ? 'complete' : s.phase === 'failed' ? 'FAILED' : describe(s)}${s.runId ? ` (run ${s.runId})` : ''}` +
        `${waitedMs !== null ? ` after ${formatDuration(waitedMs)}` : ''}${s.phase !== 'running' && s.message ? `: ${s.message}` : ''}.`,
    )
  return s.phase === 'failed' ? 1 : 0
}

export const analysisRun: Command = {
  name: 'analysis run',
  summary: 'Request an analysis run and wait for it with progress (--no-wait to return at once)',
  maxArgs: 0,
  options: { 'no-wait': { type: 'boolean', description: 'return as soon as the run is requested' }, ...WAIT_OPTIONS },
  async run(ctx, _args, opts) {
    const c = await ctx.client()
    const t0 = ctx.io.now().getTime()
    const body = await requestAnalysisRun(c)
    const requested = interpretAnalysis(body)
    if (opts['no-wait']) {
      if (ctx.json) ctx.out.data({ requested: true, run_id: requested.runId, status: requested.status, response: body ?? null })
      else ctx.out.line(`Analysis requested${requested.runId ? ` (run ${requested.runId})` : ''}; follow it with \`edgehound analysis status --wait\`.`)
      return 0
    }
    // A POST answer without a recognisable state (for example 202 with no body) means "queued".
    const first = requested.phase === 'unknown' ? { ...requested, phase: 'running' as const, status: 'requested' } : requested
    const done = await waitForRun(ctx, opts, first, body, requested.runId)
    return finish(ctx, done.state, done.raw, ctx.io.now().getTime() - t0)
  },
}

export const analysisStatusCmd: Command = {
  name: 'analysis status',
  summary: 'Show the state of the analysis (--wait to wait until the current run ends)',
  maxArgs: 0,
  options: { wait: { type: 'boolean', description: 'wait, with progress, until the current run ends' }, ...WAIT_OPTIONS },
  async run(ctx, _args, opts) {
    const c = await ctx.client()
    const t0 = ctx.io.now().getTime()
    const body = await analysisStatus(c)
    const s = interpretAnalysis(body)
    if (!opts.wait) return finish(ctx, s, body, null)
    const done = await waitForRun(ctx, opts, s, body, null)
    return finish(ctx, done.state, done.raw, ctx.io.now().getTime() - t0)
  },
}
