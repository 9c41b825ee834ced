import { DurableObject } from 'cloudflare:workers'
import { addRunReason, createRun, failRun, getRun, recordAttemptError, startAttempt, type RunRecord } from './analysis.store'
import { executeRun } from './run'

/**
 * Runs attack-path analysis off the request path. One instance (`idFromName('global')`), so one run at a
 * time everywhere.
 *
 * Why a Durable Object alarm (and not a Queue consumer or a Workflow):
 *  - one object is a global mutex for free: two runs can never overlap, and requests that arrive during a
 *    run are simply remembered;
 *  - alarms are durable and retried by the runtime (with backoff) when the handler throws or the object is
 *    evicted mid-run, which is exactly "resumes after an interruption";
 *  - the run is one CPU-heavy in-memory computation (the whole graph in typed arrays); splitting it into
 *    Workflow steps would mean serialising the graph between steps, and a Queue adds a second moving part
 *    (plus its own retry and concurrency settings) for what one object already guarantees.
 *
 * State (the object's own SQLite KV, written synchronously):
 *  - `pending`: id of the run requested but not started. Further requests are coalesced into it (their
 *    reasons are appended), so a burst of ingest jobs causes one more run, not one per job;
 *  - `current`: id of the run being executed. Set before the first attempt and cleared after the commit;
 *    if the object dies in between, the next alarm finds it set and runs the same run again (attempts + 1).
 *    After MAX_ATTEMPTS the run is marked failed and the next pending run goes ahead.
 */
export const MAX_ATTEMPTS = 5

export class Analyzer extends DurableObject<Env> {
  /** true while alarm() executes in this instance */
  private running = false
  /** serialises request() calls, which await D1 between reading and writing `pending` */
  private queue: Promise<unknown> = Promise.resolve()
  /** Test seam (set through runInDurableObject): runs between staging and commit of every run. */
  beforeCommit: (() => Promise<void>) | undefined

  /** Records a request for a run and makes sure an alarm will pick it up. Returns the run it joined. */
  async request(reason: string): Promise<RunRecord> {
    const next = this.queue.then(() => this.doRequest(reason))
    this.queue = next.catch(() => undefined)
    return next
  }

  private async doRequest(reason: string): Promise<RunRecord> {
    const db = this.env.DB
    const kv = this.ctx.storage.kv
    const pending = kv.get<number>('pending')
    if (pending !== undefined) {
      const run = await addRunReason(db, pending, reason)
      if (run && run.status === 'pending') {
        await this.ensureAlarm()
        return run
      }
      kv.delete('pending')
    }
    const run = await createRun(db, reason, new Date().toISOString())
    kv.put('pending', run.id)
    await this.ensureAlarm()
    return run
  }

  /** Latest state of a run, as this object sees it (used by tests and the routes). */
  async status(): Promise<{ pending: number | null; current: number | null; running: boolean }> {
    const kv = this.ctx.storage.kv
    return { pending: kv.get<number>('pending') ?? null, current: kv.get<number>('current') ?? null, running: this.running }
  }

  private async ensureAlarm(): Promise<void> {
    // A running alarm schedules the next one itself when it finishes.
    if (this.running) return
    if ((await this.ctx.storage.getAlarm()) === null) await this.ctx.storage.setAlarm(Date.now())
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
    if (this.ctx.storage.kv.get<number>('pending') !== undefined || this.ctx.storage.kv.get<number>('current') !== undefined) {
      await this.ctx.storage.setAlarm(Date.now())
    }
  }

  /** One run (resumed or next pending). Returns an error to rethrow so that the runtime retries the alarm. */
  private async step(): Promise<unknown> {
    const db = this.env.DB
    const kv = this.ctx.storage.kv
    let current = kv.get<number>('current')
    if (current === undefined) {
      const pending = kv.get<number>('pending')
      if (pending === undefined) return null
      kv.put('current', pending)
      kv.delete('pending')
      current = pending
    }
    const run = await startAttempt(db, current, new Date().toISOString())
    if (!run) {
      // already complete or failed (e.g. the object died after the commit): nothing to resume
      kv.delete('current')
      return null
    }
    if (run.attempts > MAX_ATTEMPTS) {
      await failRun(db, current, `gave up after ${MAX_ATTEMPTS} attempts: ${run.error ?? 'interrupted'}`, new Date().toISOString())
      kv.delete('current')
      return null
    }
    try {
      await executeRun(db, current, { beforeCommit: this.beforeCommit })
      kv.delete('current')
      return null
    } catch (e) {
      const message = e instanceof Error ? e.message : String(e)
      console.error(JSON.stringify({ level: 'error', analysis_run: current, attempt: run.attempts, error: message }))
      try {
        if (run.attempts >= MAX_ATTEMPTS) {
          await failRun(db, current, message, new Date().toISOString())
          kv.delete('current')
          return null
        }
        await recordAttemptError(db, current, message)
      } catch {
        /* D1 unreachable: the retry will find `current` set and try again */
      }
      return e
    }
  }

  /** For operators and tests: the run record of `current` or `pending`. */
  async currentRun(): Promise<RunRecord | null> {
    const kv = this.ctx.storage.kv
    const id = kv.get<number>('current') ?? kv.get<number>('pending')
    return id === undefined ? null : getRun(this.env.DB, id)
  }
}
