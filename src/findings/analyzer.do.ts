import { DurableObject } from 'cloudflare:workers'
import { claimRun, failRun, hasRunWork, recordAttemptError } from './analysis.store'
import { executeRun } from './run'
import { hasWipeWork, nextWipe, recordWipeError, startWipe, wipeStep } from '../system/wipe.store'
import { noteLocalWrite } from '../graph/environments'

/**
 * Runs attack-path analysis off the request path. One instance (`idFromName('global')`), so one run at a
 * time everywhere.
 *
 * Why a Durable Object alarm (and not a Queue consumer or a Workflow):
 *  - one object executes one run at a time, and requests that arrive during a run are simply remembered;
 *  - alarms are durable and retried by the runtime (with backoff) when the handler throws or the object is
 *    evicted mid-run, which is exactly "resumes after an interruption";
 *  - the run is one CPU-heavy in-memory computation (the whole graph in typed arrays); splitting it into
 *    Workflow steps would mean serialising the graph between steps, and a Queue adds a second moving part
 *    (plus its own retry and concurrency settings) for what one object already guarantees.
 *
 * State lives in D1 (`analysis_runs`), not in the object, so that recording a request never has to wait
 * for the object (which may be busy computing a large run):
 *  - a caller records its request with one atomic batch (`requestRunRecord`): it joins the pending run or
 *    creates it (a partial unique index allows one pending and one running run). Then it calls `wake()`
 *    unless a run attempt started less than two minutes ago — that attempt will see the pending run when
 *    it finishes;
 *  - the alarm claims the running run (an earlier attempt died: resume it, attempts + 1) or else the oldest
 *    pending one, executes it, and schedules another alarm while runs wait or run;
 *  - a failed attempt records its error and rethrows, so the runtime retries the alarm; after MAX_ATTEMPTS
 *    the run is marked failed and the next pending run goes ahead.
 * An attempt is idempotent (staging is cleared first; nothing is visible before the final commit), so
 * resuming a run means executing it again.
 */
export const MAX_ATTEMPTS = 5

/**
 * Database wipes (POST /api/v2/clear-database, src/system/wipe.store.ts) come before runs: while one is open
 * the object works on it in chunks for at most this long per alarm, then schedules the next alarm, so a wipe
 * of millions of rows spans many invocations and no invocation nears the platform's limits. The run the
 * wipe's request recorded is claimed only once no wipe is open, so it analyses what the wipe left.
 */
export const WIPE_SLICE_MS = 10_000

export class Analyzer extends DurableObject<Env> {
  /** true while alarm() executes in this instance */
  private running = false
  /** Test seam (set through runInDurableObject): runs between staging and commit of every run. */
  beforeCommit: (() => Promise<void>) | undefined

  /** Makes sure an alarm will look at the runs table. Cheap when the object is idle. */
  async wake(): Promise<void> {
    // A running alarm schedules the next one itself when it finishes.
    if (this.running) return
    if ((await this.ctx.storage.getAlarm()) === null) await this.ctx.storage.setAlarm(Date.now())
  }

  /** For operators and tests. */
  async status(): Promise<{ running: boolean; alarm: number | null }> {
    return { running: this.running, alarm: await this.ctx.storage.getAlarm() }
  }

  async alarm(): Promise<void> {
    this.running = true
    let rethrow: unknown = null
    try {
      rethrow = await this.step()
    } finally {
      this.running = false
    }
    if (rethrow !== null) throw rethrow
    if ((await hasWipeWork(this.env.DB)) || (await hasRunWork(this.env.DB))) await this.ctx.storage.setAlarm(Date.now())
  }

  /** A slice of the oldest open wipe; null when none is open. Returns an error to rethrow (retry), or 'done'. */
  private async wipeSlice(): Promise<unknown> {
    const db = this.env.DB
    let w = await nextWipe(db)
    if (!w) return null
    const id = w.id
    if (w.attempts >= MAX_ATTEMPTS) {
      await recordWipeError(db, id, `gave up after ${MAX_ATTEMPTS} attempts: ${w.error ?? 'interrupted'}`, true, new Date().toISOString())
      return 'done'
    }
    try {
      await startWipe(db, id, new Date().toISOString())
      noteLocalWrite()
      for (const until = Date.now() + WIPE_SLICE_MS; w && Date.now() < until; ) {
        const { more } = await wipeStep(db, w, new Date().toISOString())
        if (!more) break
        w = await nextWipe(db)
        if (w && w.id !== id) break
      }
      noteLocalWrite()
      return 'done'
    } catch (e) {
      const message = e instanceof Error ? e.message : String(e)
      console.error(JSON.stringify({ level: 'error', database_wipe: id, error: message }))
      try {
        await recordWipeError(db, id, message, false, new Date().toISOString())
      } catch {
        /* D1 unreachable: the retry finds the wipe still open */
      }
      return e
    }
  }

  /** One attempt of one run. Returns an error to rethrow so that the runtime retries the alarm. */
  private async step(): Promise<unknown> {
    const db = this.env.DB
    const wiped = await this.wipeSlice()
    if (wiped !== null) return wiped === 'done' ? null : wiped
    const run = await claimRun(db, new Date().toISOString())
    if (!run) return null
    if (run.attempts > MAX_ATTEMPTS) {
      await failRun(db, run.id, `gave up after ${MAX_ATTEMPTS} attempts: ${run.error ?? 'interrupted'}`, new Date().toISOString())
      return null
    }
    try {
      await executeRun(db, run.id, { beforeCommit: this.beforeCommit })
      return null
    } catch (e) {
      const message = e instanceof Error ? e.message : String(e)
      console.error(JSON.stringify({ level: 'error', analysis_run: run.id, attempt: run.attempts, error: message }))
      try {
        if (run.attempts >= MAX_ATTEMPTS) {
          await failRun(db, run.id, message, new Date().toISOString())
          return null
        }
        await recordAttemptError(db, run.id, message)
      } catch {
        /* D1 unreachable: the retry finds the run still running and tries again */
      }
      return e
    }
  }
}
