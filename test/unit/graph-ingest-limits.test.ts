/**
 * A ~20 MiB upload written through a recording D1 wrapper: every statement stays within D1's limits
 * (≤ 100 bound parameters, ≤ 100 KB of SQL plus parameters), and batches stay small.
 */
import { env } from 'cloudflare:test'
import { expect, it } from 'vitest'
import { validateUpload, writeUpload, CHUNK_BYTES, BATCH_STATEMENTS } from '../../src/graph/ingest'
import { uploadParts } from '../../src/graph/upload'

const real = (env as unknown as { DB: D1Database }).DB

interface Seen {
  sqlBytes: number
  params: number
  paramBytes: number
}

function recording(db: D1Database) {
  const statements: Seen[] = []
  const batches: number[] = []
  const enc = new TextEncoder()
  const wrap = (sql: string) => {
    const stmt = db.prepare(sql)
    return {
      bind: (...values: unknown[]) => {
        statements.push({
          sqlBytes: enc.encode(sql).length,
          params: values.length,
          paramBytes: values.reduce<number>((n, v) => n + (typeof v === 'string' ? enc.encode(v).length : 8), 0),
        })
        return stmt.bind(...values)
      },
    }
  }
  const proxy = {
    prepare: wrap,
    batch: (s: D1PreparedStatement[]) => {
      batches.push(s.length)
      return db.batch(s)
    },
  } as unknown as D1Database
  return { db: proxy, statements, batches }
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

  const rec = recording(real)
  const result = await writeUpload(rec.db, parts, ctx, new Date().toISOString(), checked.environments)
  expect(result).toMatchObject({ nodes: 40_000, edges: 40_000, nodesChanged: 40_000, edgesChanged: 40_000, unmatched: 0 })

  expect(rec.statements.length).toBeGreaterThan(200)
  for (const s of rec.statements) {
    expect(s.params).toBeLessThanOrEqual(100)
    expect(s.sqlBytes + s.paramBytes).toBeLessThan(100_000)
  }
  expect(Math.max(...rec.statements.map((s) => s.paramBytes))).toBeLessThanOrEqual(CHUNK_BYTES + 64)
  expect(Math.max(...rec.batches)).toBeLessThanOrEqual(BATCH_STATEMENTS)
  const stored = await real.prepare("SELECT count(*) AS n FROM edges WHERE kind = 'Knows'").first<{ n: number }>()
  expect(stored!.n).toBe(40_000)
}, 240_000)
