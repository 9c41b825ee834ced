/**
 * A ~20 MiB upload written through a recording D1 wrapper: every statement stays within D1's limits
 * (≤ 100 bound parameters, ≤ 100 KB of SQL plus parameters), staging batches stay small and the upload
 * is applied by exactly one commit batch. And the other side of that design: a database failure at any
 * point of an upload leaves the graph and the job exactly as they were.
 */
import { env } from 'cloudflare:test'
import { describe, expect, it } from 'vitest'
import { validateUpload, writeUpload, CHUNK_BYTES, BATCH_STATEMENTS } from '../../src/graph/ingest'
import { uploadParts } from '../../src/graph/upload'
import { JobNotRunningError } from '../../src/graph/ingest.store'
import { testAudit } from '../fixtures/audit'

const real = (env as unknown as { DB: D1Database }).DB

/** A running job for the commit to record the upload in (the commit refuses a job that is not running). */
async function runningJob(): Promise<number> {
  const now = new Date().toISOString()
  const r = await real
    .prepare(`INSERT INTO ingest_jobs (user_id, status, start_time, created_at, updated_at) VALUES ('u', 1, ?1, ?1, ?1) RETURNING id`)
    .bind(now)
    .first<{ id: number }>()
  return r!.id
}

interface Seen {
  sqlBytes: number
  params: number
  paramBytes: number
}

function recording(db: D1Database) {
  const statements: Seen[] = []
  const batches: number[] = []
  /** bytes bound in each db.batch (what one D1 request carries) */
  const batchBytes: number[] = []
  const seenOf = new WeakMap<object, Seen>()
  const enc = new TextEncoder()
  const wrap = (sql: string) => {
    const stmt = db.prepare(sql)
    const seen: Seen = { sqlBytes: enc.encode(sql).length, params: 0, paramBytes: 0 }
    statements.push(seen)
    const bind = stmt.bind.bind(stmt)
    stmt.bind = (...values: unknown[]) => {
      seen.params = values.length
      seen.paramBytes = values.reduce<number>((n, v) => n + (typeof v === 'string' ? enc.encode(v).length : 8), 0)
      const bound = bind(...values)
      seenOf.set(bound, seen)
      return bound
    }
    return stmt
  }
  const proxy = {
    prepare: wrap,
    batch: (s: D1PreparedStatement[]) => {
      batches.push(s.length)
      batchBytes.push(s.reduce((n, x) => n + (seenOf.get(x)?.paramBytes ?? 0), 0))
      return db.batch(s)
    },
  } as unknown as D1Database
  return { db: proxy, statements, batches, batchBytes }
}

it('every statement of a 20 MiB ingest stays within D1 limits', async () => {
  const pad = 'é'.repeat(160) // multi-byte text: chunk budgets are in bytes, not characters
  const nodes = Array.from({ length: 40_000 }, (_, i) => ({ id: `L-${i}`, kinds: ['Person'], properties: { name: `L ${i}`, pad } }))
  const edges = Array.from({ length: 40_000 }, (_, i) => ({ start: { value: `L-${i}` }, end: { value: `L ${(i * 7) % 40_000}`, match_by: 'name' }, kind: 'Knows' }))
  const bytes = new TextEncoder().encode(JSON.stringify({ graph: { nodes, edges } }))
  expect(bytes.length).toBeGreaterThan(18 * 1024 * 1024)
  expect(bytes.length).toBeLessThanOrEqual(20 * 1024 * 1024)

  const ctx = { environmentTypes: new Map<string, string>() }
  const parts = uploadParts(bytes, 'application/json', 'big.json')
  const checked = validateUpload(parts, ctx)
  expect(checked).toMatchObject({ nodes: 40_000, edges: 40_000 })

  const jobId = await runningJob()
  const rec = recording(real)
  const result = await writeUpload(rec.db, { jobId, parts, ctx, now: new Date().toISOString(), environments: checked.environments, audit: testAudit('AppendFileUploadJob') })
  expect(result).toMatchObject({ nodes: 40_000, edges: 40_000, nodesChanged: 40_000, edgesChanged: 40_000, unmatched: 0 })

  expect(rec.statements.length).toBeGreaterThan(200)
  for (const s of rec.statements) {
    expect(s.params).toBeLessThanOrEqual(100)
    expect(s.sqlBytes + s.paramBytes).toBeLessThan(100_000)
  }
  expect(Math.max(...rec.statements.map((s) => s.paramBytes))).toBeLessThanOrEqual(CHUNK_BYTES + 200)
  // staging batches of at most BATCH_STATEMENTS chunks, then the one commit batch
  expect(Math.max(...rec.batches.slice(0, -1))).toBeLessThanOrEqual(BATCH_STATEMENTS)
  expect(rec.batches.filter((n) => n > BATCH_STATEMENTS)).toHaveLength(1)
  // each staging request is one chunk, so the D1 client's serialised request (~1.3× once escaped) stays
  // under V8's 128 KiB large-object threshold and is freed by the scavenger (the upload's heap budget)
  expect(BATCH_STATEMENTS).toBe(1)
  expect(Math.max(...rec.batchBytes.slice(0, -1)) * 1.3).toBeLessThan(128 * 1024)
  expect(await real.prepare('SELECT count(*) AS n FROM ingest_staging').first('n')).toBe(0)
  const stored = await real.prepare("SELECT count(*) AS n FROM edges WHERE kind = 'Knows'").first<{ n: number }>()
  expect(stored!.n).toBe(40_000)
}, 240_000)

describe('a database failure never leaves part of an upload written', () => {
  const ctx = { environmentTypes: new Map<string, string>() }
  const NOW = '2026-03-01T00:00:00.000Z'

  async function job(): Promise<number> {
    const r = await real
      .prepare(`INSERT INTO ingest_jobs (user_id, status, start_time, created_at, updated_at) VALUES ('u', 1, ?1, ?1, ?1) RETURNING id`)
      .bind(NOW)
      .first<{ id: number }>()
    return r!.id
  }

  async function state(jobId: number, prefix: string) {
    const count = async (sql: string) => (await real.prepare(sql).first<{ n: number }>())!.n
    return {
      nodes: await count(`SELECT count(*) AS n FROM nodes WHERE objectid LIKE '${prefix}-%'`),
      edges: await count(`SELECT count(*) AS n FROM edges e JOIN nodes n ON n.id = e.start_id WHERE n.objectid LIKE '${prefix}-%'`),
      staging: await count(`SELECT count(*) AS n FROM ingest_staging`),
      unmatched: await count(`SELECT count(*) AS n FROM ingest_unmatched`),
      job: await real
        .prepare(`SELECT total_files, nodes_received, edges_received, nodes_changed, edges_changed, unmatched_edges, error_count FROM ingest_jobs WHERE id = ?1`)
        .bind(jobId)
        .first(),
      environments: await count(`SELECT count(*) AS n FROM ingest_job_environments WHERE job_id = ${jobId}`),
    }
  }

  // ~2 MB: more than one staging batch, so failures can strike between round trips.
  function upload(prefix: string) {
    const pad = 'x'.repeat(300)
    const nodes = Array.from({ length: 5_000 }, (_, i) => ({ id: `${prefix}-${i}`, kinds: ['User'], properties: { name: `${prefix} ${i}`, domainsid: `${prefix}-DOM`, pad } }))
    const edges = Array.from({ length: 5_000 }, (_, i) => ({ start: { value: `${prefix}-${i}` }, end: { value: `${prefix}-${(i + 1) % 5_000}` }, kind: 'MemberOf' }))
    edges.push({ start: { value: `${prefix}-0` }, end: { value: `${prefix}-missing` }, kind: 'MemberOf' })
    const parts = uploadParts(new TextEncoder().encode(JSON.stringify({ graph: { nodes, edges } })), 'application/json', 'atom.json')
    return { parts, checked: validateUpload(parts, ctx) }
  }

  /** The real database, except that the `failAt`-th batch fails: before it runs, or (commit) inside it. */
  function failing(failAt: number, inside: boolean) {
    let n = 0
    const proxy = {
      prepare: (sql: string) => real.prepare(sql),
      batch: (s: D1PreparedStatement[]) => {
        n++
        if (n !== failAt) return real.batch(s)
        // A statement that fails at run time, after the others of the batch have run: D1 rolls back the batch.
        if (inside) return real.batch([...s, real.prepare('SELECT * FROM table_that_does_not_exist')])
        return Promise.reject(new Error('D1_ERROR: network connection lost'))
      },
    } as unknown as D1Database
    return { db: proxy, batches: () => n }
  }

  it('fails each batch of an upload in turn (inside the batch), until the upload goes through whole', async () => {
    const { parts, checked } = upload('ATOM')
    for (let failAt = 1; ; failAt++) {
      const jobId = await job()
      const db = failing(failAt, true)
      const attempt = writeUpload(db.db, { jobId, parts, ctx, now: NOW, environments: checked.environments, audit: testAudit('AppendFileUploadJob') })
      const ok = await attempt.then(
        () => true,
        () => false,
      )
      if (ok) {
        // Every batch has been failed once before this point; now the upload went through completely.
        expect(failAt).toBeGreaterThan(3)
        expect(await state(jobId, 'ATOM')).toMatchObject({
          nodes: 5_000,
          edges: 5_000,
          staging: 0,
          unmatched: 0,
          job: { total_files: 1, nodes_received: 5_000, edges_received: 5_001, nodes_changed: 5_000, edges_changed: 5_000, unmatched_edges: 1, error_count: 1 },
          environments: 1,
        })
        break
      }
      const after = await state(jobId, 'ATOM')
      expect(after, `failure in batch ${failAt}`).toEqual({
        nodes: 0,
        edges: 0,
        staging: 0,
        unmatched: 0,
        job: { total_files: 0, nodes_received: 0, edges_received: 0, nodes_changed: 0, edges_changed: 0, unmatched_edges: 0, error_count: 0 },
        environments: 0,
      })
    }
  }, 240_000)

  it('a connection lost between staging round trips writes nothing either', async () => {
    const { parts, checked } = upload('LOST')
    const jobId = await job()
    const db = failing(2, false)
    await expect(writeUpload(db.db, { jobId, parts, ctx, now: NOW, environments: checked.environments, audit: testAudit('AppendFileUploadJob') })).rejects.toThrow('network connection lost')
    expect(await state(jobId, 'LOST')).toMatchObject({ nodes: 0, edges: 0, staging: 0, job: { total_files: 0 } })
  })

  it('a job ended while the file is being staged receives nothing: the commit re-checks it in its transaction', async () => {
    const { parts, checked } = upload('RACE')
    const jobId = await job()
    // The real database, except that the job is ended (as POST .../end would) just before the commit batch.
    const proxy = {
      prepare: (sql: string) => real.prepare(sql),
      batch: async (s: D1PreparedStatement[]) => {
        if (s.length > BATCH_STATEMENTS) await real.prepare(`UPDATE ingest_jobs SET status = 2, end_time = ?2 WHERE id = ?1`).bind(jobId, NOW).run()
        return real.batch(s)
      },
    } as unknown as D1Database
    await expect(writeUpload(proxy, { jobId, parts, ctx, now: NOW, environments: checked.environments, audit: testAudit('AppendFileUploadJob') })).rejects.toBeInstanceOf(JobNotRunningError)
    expect(await state(jobId, 'RACE')).toEqual({
      nodes: 0,
      edges: 0,
      staging: 0,
      unmatched: 0,
      job: { total_files: 0, nodes_received: 0, edges_received: 0, nodes_changed: 0, edges_changed: 0, unmatched_edges: 0, error_count: 0 },
      environments: 0,
    })
    expect(await real.prepare(`SELECT count(*) AS n FROM ingest_fold`).first('n')).toBe(0)
  })

  it('an upload interrupted so badly that it could not clean up is purged by the next one after an hour', async () => {
    const old = '2026-02-28T22:00:00.000Z'
    await real.prepare(`INSERT INTO ingest_staging (upload_id, part, seq, file, created_at, rows) VALUES ('lost', 'n', 0, 'f', ?1, '[]')`).bind(old).run()
    await real.prepare(`INSERT INTO ingest_staging (upload_id, part, seq, file, created_at, rows) VALUES ('recent', 'n', 0, 'f', ?1, '[]')`).bind('2026-02-28T23:30:00.000Z').run()
    const parts = uploadParts(new TextEncoder().encode(JSON.stringify({ graph: { nodes: [{ id: 'ATOM-P', kinds: ['User'] }] } })), 'application/json', 'p.json')
    await writeUpload(real, { jobId: await job(), parts, ctx, now: NOW, environments: new Set(), audit: testAudit('AppendFileUploadJob') })
    const left = await real.prepare(`SELECT upload_id FROM ingest_staging ORDER BY upload_id`).all<{ upload_id: string }>()
    expect(left.results.map((r) => r.upload_id)).toEqual(['recent'])
  })
})
