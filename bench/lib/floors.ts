/// <reference types="node" />
/**
 * Floors: what the hardware and storage allow for the same work, measured in the same run.
 *
 *  - Ingest floor (D1): the same rows our ingest writes (nodes with kinds/name/environment/properties,
 *    edges by internal id), sent to the bench worker's /__bench/floor-insert and written with batched
 *    `INSERT … SELECT FROM json_each(?)` into FLOOR_DB (same migrations, so the same indexes and triggers).
 *    No validation, no object-id resolution, no upsert: raw inserts through the same runtime and storage.
 *  - Ingest floor (native SQLite): the same rows through the `sqlite3` command-line shell into a file with
 *    the same schema, one transaction, multi-row INSERTs — SQLite itself with no runtime in between.
 *    Reported when `sqlite3` is installed; otherwise "not available".
 *  - Shortest-path floor: breadth-first search in plain JavaScript over the same graph in memory
 *    (bench/lib/generate.ts `bfsPath`), timed per pair in this process.
 */
import { execFile, spawn } from 'node:child_process'
import { readdirSync, readFileSync, writeFileSync, createWriteStream } from 'node:fs'
import path from 'node:path'
import { promisify } from 'node:util'
import { bfsPath, type Csr, type GenGraph } from './generate'
import { ROOT } from './worker-host'
import { ID_FLOOR } from '../../src/graph/ids'

const run = promisify(execFile)

export function environmentOf(n: GenGraph['nodes'][number]): string | null {
  const p = n.properties
  return typeof p.domainsid === 'string' ? p.domainsid : typeof p.tenantid === 'string' ? p.tenantid.toUpperCase() : null
}

/** Row shapes shared by both ingest floors: [id, objectid, kind, kinds, name, environment_id, properties]. */
function nodeRow(g: GenGraph, i: number): (string | number | null)[] {
  const n = g.nodes[i]
  return [i + 1, n.objectid, n.kinds[0], JSON.stringify(n.kinds), String(n.properties.name ?? ''), environmentOf(n), JSON.stringify(n.properties)]
}

function edgeRow(g: GenGraph, i: number): (string | number)[] {
  return [g.edgeStart[i] + 1, g.edgeEnd[i] + 1, g.edgeKinds[g.edgeKind[i]], '{}']
}

export interface FloorResult {
  available: boolean
  seconds?: number
  elementsPerSecond?: number
  error?: string
}

export async function d1InsertFloor(url: string, g: GenGraph, rowsPerRequest = 20_000): Promise<FloorResult> {
  const reset = await fetch(`${url}/__bench/floor-reset`, { method: 'POST' })
  if (!reset.ok) return { available: false, error: `floor reset: ${reset.status} ${await reset.text()}` }
  // Serialise before the clock starts: the floor measures inserting, not building JSON in Node.
  const bodies: { table: string; body: string }[] = []
  for (let i = 0; i < g.nodes.length; i += rowsPerRequest) {
    const rows = []
    for (let j = i; j < Math.min(g.nodes.length, i + rowsPerRequest); j++) rows.push(nodeRow(g, j))
    bodies.push({ table: 'nodes', body: JSON.stringify(rows) })
  }
  for (let i = 0; i < g.edgeCount; i += rowsPerRequest) {
    const rows = []
    for (let j = i; j < Math.min(g.edgeCount, i + rowsPerRequest); j++) rows.push(edgeRow(g, j))
    bodies.push({ table: 'edges', body: JSON.stringify(rows) })
  }
  const t0 = performance.now()
  for (const b of bodies) {
    const r = await fetch(`${url}/__bench/floor-insert?table=${b.table}`, { method: 'POST', body: b.body, headers: { 'content-type': 'application/json' } })
    if (!r.ok) return { available: false, error: `floor insert ${b.table}: ${r.status} ${(await r.text()).slice(0, 300)}` }
    await r.arrayBuffer()
  }
  const seconds = (performance.now() - t0) / 1000
  return { available: true, seconds, elementsPerSecond: (g.nodes.length + g.edgeCount) / seconds }
}

async function hasSqlite3(): Promise<boolean> {
  try {
    await run('sqlite3', ['-version'])
    return true
  } catch {
    return false
  }
}

const sqlText = (v: string | number | null) => (v === null ? 'NULL' : typeof v === 'number' ? String(v) : `'${v.replace(/'/g, "''")}'`)

export async function sqliteInsertFloor(g: GenGraph, dir: string): Promise<FloorResult> {
  if (!(await hasSqlite3())) return { available: false, error: 'the sqlite3 command-line shell is not installed' }
  const db = path.join(dir, 'floor.sqlite')
  const schema = readdirSync(path.join(ROOT, 'migrations'))
    .filter((f) => /^\d+_.*\.sql$/.test(f))
    .sort((a, b) => parseInt(a, 10) - parseInt(b, 10))
    .map((f) => readFileSync(path.join(ROOT, 'migrations', f), 'utf8'))
    .join('\n;\n')
  writeFileSync(path.join(dir, 'schema.sql'), schema)
  try {
    await run('sqlite3', [db, `.read ${path.join(dir, 'schema.sql')}`])
  } catch (e) {
    return { available: false, error: `the migrations do not load into the sqlite3 shell: ${String((e as Error).message).slice(0, 300)}` }
  }
  // The insert script, written before the clock starts.
  const file = path.join(dir, 'inserts.sql')
  const out = createWriteStream(file)
  const now = `'${new Date().toISOString()}'`
  out.write('PRAGMA journal_mode=WAL;\nBEGIN;\n')
  const emit = (table: string, cols: string, count: number, row: (i: number) => (string | number | null)[]) => {
    for (let i = 0; i < count; i += 500) {
      const vals: string[] = []
      for (let j = i; j < Math.min(count, i + 500); j++) vals.push(`(${row(j).map(sqlText).join(',')},${now},${now})`)
      out.write(`INSERT INTO ${table} (${cols}) VALUES ${vals.join(',')};\n`)
    }
  }
  // stored ids start at ID_FLOOR (src/graph/ids.ts; migration 0039's triggers refuse smaller ones)
  const stored = (r: (string | number | null)[], ...at: number[]) => r.map((v, k) => (at.includes(k) ? ID_FLOOR + (v as number) : v))
  emit('nodes', 'id, objectid, kind, kinds, name, environment_id, properties, created_at, updated_at', g.nodes.length, (i) => stored(nodeRow(g, i), 0))
  emit('edges', 'id, start_id, end_id, kind, properties, created_at, updated_at', g.edgeCount, (i) => [ID_FLOOR + i + 1, ...stored(edgeRow(g, i), 0, 1)])
  out.write('COMMIT;\n')
  await new Promise<void>((resolve, reject) => out.end((e?: Error | null) => (e ? reject(e) : resolve())))
  const t0 = performance.now()
  await new Promise<void>((resolve, reject) => {
    const child = spawn('sqlite3', [db, `.read ${file}`], { stdio: ['ignore', 'ignore', 'pipe'] })
    let err = ''
    child.stderr.on('data', (d) => (err += d))
    child.on('error', reject)
    child.on('exit', (code) => (code === 0 && !err.trim() ? resolve() : reject(new Error(`sqlite3 exited ${code}: ${err.slice(0, 300)}`))))
  })
  const seconds = (performance.now() - t0) / 1000
  return { available: true, seconds, elementsPerSecond: (g.nodes.length + g.edgeCount) / seconds }
}

/** BFS floor per pair (ms); also returns each pair's hop count for checking the service's answers. */
export function bfsFloor(csr: Csr, pairs: [number, number][]): { ms: number[]; hops: (number | null)[] } {
  const prev = new Int32Array(csr.n)
  const queue = new Int32Array(csr.n)
  // one untimed pass to let V8 optimise bfsPath, as the service has had its warm-up too
  for (const [s, t] of pairs.slice(0, 5)) bfsPath(csr, s, t, prev, queue)
  const ms: number[] = []
  const hops: (number | null)[] = []
  for (const [s, t] of pairs) {
    const t0 = performance.now()
    const p = bfsPath(csr, s, t, prev, queue)
    ms.push(performance.now() - t0)
    hops.push(p ? p.length - 1 : null)
  }
  return { ms, hops }
}
