/**
 * The ingest store and post-processing (migrations/0013): an edge post-processing derived becomes an
 * ingested edge when a file carries it, so the next run, which replaces every derived edge, keeps it.
 * At the store level (no analysis runs in between, which would replace derived edges themselves).
 */
import { env } from 'cloudflare:test'
import { expect, it } from 'vitest'
import { validateUpload, writeUpload } from '../../src/graph/ingest'
import { uploadParts } from '../../src/graph/upload'
import { testAudit } from '../fixtures/audit'
import { NEW_ID_SQL } from '../../src/graph/ids'

const db = (env as unknown as { DB: D1Database }).DB
const NOW = '2026-03-01T00:00:00.000Z'
const ctx = { environmentTypes: new Map<string, string>() }

async function write(payload: unknown) {
  const job = await db
    .prepare(`INSERT INTO ingest_jobs (user_id, status, start_time, created_at, updated_at) VALUES ('u', 1, ?1, ?1, ?1) RETURNING id`)
    .bind(NOW)
    .first<{ id: number }>()
  const parts = uploadParts(new TextEncoder().encode(JSON.stringify(payload)), 'application/json', 'd.json')
  const checked = validateUpload(parts, ctx)
  return writeUpload(db, { jobId: job!.id, parts, ctx, now: NOW, environments: checked.environments, repeated: checked.repeated, audit: testAudit('AppendFileUploadJob') })
}

it('an ingested edge is never left marked derived', async () => {
  await write({ graph: { nodes: [{ id: 'DER-1', kinds: ['User'] }, { id: 'DER-2', kinds: ['Computer'] }] } })
  // as src/collectors/postprocess.store.ts writes a derived edge
  await db
    .prepare(
      `INSERT INTO edges (start_id, end_id, kind, properties, created_at, updated_at, derived, id)
       SELECT s.id, t.id, 'AdminTo', '{}', ?1, ?1, 1, ${NEW_ID_SQL} FROM nodes s, nodes t WHERE s.objectid = 'DER-1' AND t.objectid = 'DER-2'`,
    )
    .bind(NOW)
    .run()
  const payload = { graph: { edges: [{ start: { value: 'DER-1' }, end: { value: 'DER-2' }, kind: 'AdminTo' }] } }
  expect(await write(payload)).toMatchObject({ edgesChanged: 1 })
  await db.prepare(`DELETE FROM edges WHERE derived = 1`).run() // what the next post-processing run starts with
  expect(await db.prepare(`SELECT count(*) AS n FROM edges WHERE kind = 'AdminTo'`).first('n')).toBe(1)
  expect(await write(payload)).toMatchObject({ edgesChanged: 0 })
})
