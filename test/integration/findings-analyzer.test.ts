import { env } from 'cloudflare:workers'
import { runInDurableObject } from 'cloudflare:test'
import { beforeAll, describe, expect, it } from 'vitest'
import { Analyzer, MAX_ATTEMPTS } from '../../src/findings/analyzer.do'
import { analyzerStub, requestRun, LIVE_ATTEMPT_MS } from '../../src/findings/analyzer.client'
import { createRun, getRun, listRuns } from '../../src/findings/analysis.store'
import { requestAnalysis } from '../../src/findings/trigger'
import { EXPECTED_FINDINGS } from '../fixtures/findings/known-graph'
import { insertGraph, waitForRun } from '../fixtures/findings/helpers'

const db = env.DB
const stub = () => analyzerStub(env)

async function openCount(): Promise<number> {
  return (await db.prepare('SELECT COUNT(*) AS n FROM findings WHERE deleted_at IS NULL').first<{ n: number }>())!.n
}

async function runningCount(): Promise<number> {
  return (await db.prepare(`SELECT COUNT(*) AS n FROM analysis_runs WHERE status = 'running'`).first<{ n: number }>())!.n
}

async function idle(): Promise<void> {
  for (let i = 0; i < 500; i++) {
    const s = await stub().status()
    const busy = (await db.prepare(`SELECT COUNT(*) AS n FROM analysis_runs WHERE status IN ('pending', 'running')`).first<{ n: number }>())!.n
    if (busy === 0 && !s.running && s.alarm === null) return
    await new Promise((r) => setTimeout(r, 20))
  }
  throw new Error('the Analyzer did not become idle')
}

/** What the runtime does after an eviction: deliver the alarm again. */
async function fireAlarm(): Promise<void> {
  await runInDurableObject(stub(), async (_instance: Analyzer, state) => {
    await state.storage.setAlarm(Date.now())
  })
}

beforeAll(async () => {
  // without the extension: every finding but the GH one
  await insertGraph(db)
})

describe('Analyzer Durable Object', () => {
  it('requestAnalysis (the graph contract) returns at once and a run follows off the request path', async () => {
    await requestAnalysis(env, 'ingest job 1 ended')
    const { runs } = await listRuns(db, 0, 1)
    expect(runs[0].reasons).toEqual(['ingest job 1 ended'])
    const done = await waitForRun(db, runs[0].id)
    expect(done).toMatchObject({ status: 'complete', attempts: 1, finding_count: EXPECTED_FINDINGS.length - 1 })
    expect(await openCount()).toBe(EXPECTED_FINDINGS.length - 1)
    await idle()
  })

  it('one run at a time: requests during a run are coalesced into ONE pending run that follows', async () => {
    let release!: () => void
    const gate = new Promise<void>((r) => (release = r))
    let entered!: () => void
    const inCommit = new Promise<void>((r) => (entered = r))
    await runInDurableObject(stub(), (instance: Analyzer) => {
      instance.beforeCommit = async () => {
        entered()
        await gate
      }
    })
    const first = await requestRun(env, 'a')
    await inCommit
    // run `first` is staged and waiting; two more requests arrive
    const second = await requestRun(env, 'b')
    const third = await requestRun(env, 'c')
    expect(second.id).not.toBe(first.id)
    expect(third.id).toBe(second.id)
    expect(third).toMatchObject({ status: 'pending', reasons: ['b', 'c'] })
    expect((await getRun(db, first.id))!.status).toBe('running')
    expect(await runningCount()).toBe(1)
    expect((await stub().status()).running).toBe(true)

    await runInDurableObject(stub(), (instance: Analyzer) => {
      instance.beforeCommit = async () => {
        // the follow-up run never overlaps the first one
        expect((await getRun(db, first.id))!.status).toBe('complete')
        expect(await runningCount()).toBe(1)
      }
    })
    release()
    expect((await waitForRun(db, first.id)).status).toBe('complete')
    const done = await waitForRun(db, second.id)
    expect(done).toMatchObject({ status: 'complete', reasons: ['b', 'c'], unchanged_count: EXPECTED_FINDINGS.length - 1 })
    expect(done.completed_at! > (await getRun(db, first.id))!.completed_at!).toBe(true)
    await runInDurableObject(stub(), (instance: Analyzer) => {
      instance.beforeCommit = undefined
    })
    await idle()
  })

  it('resumes an interrupted run: the same run id runs again, leftovers of the dead attempt are discarded', async () => {
    const run = await createRun(db, 'interrupted', new Date().toISOString())
    await db.batch([
      db.prepare(`UPDATE analysis_runs SET status = 'running', started_at = requested_at, attempt_started_at = requested_at, attempts = 1 WHERE id = ?1`).bind(run.id),
      // half-written staging of the attempt that died
      db.prepare(`INSERT INTO analysis_staged_findings (run_id, op, finding_id) VALUES (?1, 'close', 1), (?1, 'close', 2)`).bind(run.id),
    ])
    await fireAlarm()
    const done = await waitForRun(db, run.id)
    expect(done).toMatchObject({ status: 'complete', attempts: 2, closed_count: 0, unchanged_count: EXPECTED_FINDINGS.length - 1 })
    expect(await openCount()).toBe(EXPECTED_FINDINGS.length - 1)
    expect((await db.prepare('SELECT COUNT(*) AS n FROM analysis_staged_findings').first<{ n: number }>())!.n).toBe(0)
    await idle()
  })

  it('a request finds a dead attempt (older than the live window) and wakes the object, which resumes it first', async () => {
    const old = new Date(Date.now() - LIVE_ATTEMPT_MS - 1000).toISOString()
    const dead = await createRun(db, 'died long ago', old)
    await db.prepare(`UPDATE analysis_runs SET status = 'running', started_at = ?2, attempt_started_at = ?2, attempts = 1 WHERE id = ?1`).bind(dead.id, old).run()
    const next = await requestRun(env, 'after the death')
    expect(next.id).not.toBe(dead.id)
    expect((await waitForRun(db, dead.id)).status).toBe('complete')
    expect((await waitForRun(db, next.id)).status).toBe('complete')
    expect((await getRun(db, next.id))!.completed_at! > (await getRun(db, dead.id))!.completed_at!).toBe(true)
    await idle()
  })

  it(`gives up after ${MAX_ATTEMPTS} attempts and goes on with the pending run`, async () => {
    const stuck = await createRun(db, 'keeps dying', new Date().toISOString())
    await db.prepare(`UPDATE analysis_runs SET status = 'running', attempts = ?2, error = 'worker evicted' WHERE id = ?1`).bind(stuck.id, MAX_ATTEMPTS).run()
    const next = await createRun(db, 'next', new Date().toISOString())
    await fireAlarm()
    const failed = await waitForRun(db, stuck.id)
    expect(failed.status).toBe('failed')
    expect(failed.error).toBe(`gave up after ${MAX_ATTEMPTS} attempts: worker evicted`)
    expect((await waitForRun(db, next.id)).status).toBe('complete')
    await idle()
  })

  it('there is never more than one pending and one running run', async () => {
    await db.prepare(`INSERT INTO analysis_runs (status, requested_at) VALUES ('pending', 'x')`).run()
    await expect(db.prepare(`INSERT INTO analysis_runs (status, requested_at) VALUES ('pending', 'y')`).run()).rejects.toThrow(/UNIQUE/)
    await db.prepare(`DELETE FROM analysis_runs WHERE requested_at = 'x'`).run()
  })

  it('a failed attempt records its error, keeps the run, and the retried alarm completes it', async () => {
    // break the commit: the sparkline table is missing
    await db.prepare('ALTER TABLE finding_sparklines RENAME TO finding_sparklines_away').run()
    const run = await requestRun(env, 'retry me')
    let seen: Awaited<ReturnType<typeof getRun>> = null
    for (let i = 0; i < 500; i++) {
      seen = await getRun(db, run.id)
      if (seen?.error) break
      await new Promise((r) => setTimeout(r, 20))
    }
    expect(seen).toMatchObject({ status: 'running', attempts: 1 })
    expect(seen!.error).toMatch(/finding_sparklines/)
    // readers still see the previous complete run
    expect(await openCount()).toBe(EXPECTED_FINDINGS.length - 1)
    await db.prepare('ALTER TABLE finding_sparklines_away RENAME TO finding_sparklines').run()
    const done = await waitForRun(db, run.id, 30_000)
    expect(done).toMatchObject({ status: 'complete', error: null })
    expect(done.attempts).toBeGreaterThanOrEqual(2)
    await idle()
  }, 40_000)
})
