/**
 * Ingesting one uploaded file (a JSON payload or a zip of them) into the graph.
 *
 *   pass 1  validate every payload completely (nothing is written if any violation is found)
 *   pass 2  write the nodes of every payload, then the edges of every payload (so an edge may refer to
 *           a node from another file of the same zip), in chunks of ~80 KB of JSON per statement and a
 *           few statements per db.batch; memory stays at the upload plus one batch.
 *
 * Edges whose start or end matches no node (or, by name, several) are not written; they are counted
 * and reported (job errors and the upload's response), never dropped silently.
 */
import { ApiError, type ErrorDetail } from '../http/errors'
import { JsonSyntaxError } from './json-scan'
import { PayloadReader, type EdgeRow, type PayloadContext, type Violation } from './opengraph'
import { JsonArrayChunker, type UploadPart } from './upload'
import { edgeResolve, edgeUpsert, nodeUpsert, runBatch, type ResolvedEnds } from './ingest.store'
import type { AcceptedFile } from './jobs.store'

/** JSON bytes per statement parameter: D1 allows 100 KB per statement, SQL text included. */
export const CHUNK_BYTES = 80_000
/** statements per db.batch round trip */
export const BATCH_STATEMENTS = 12
/** violations reported in one 400 */
export const MAX_VIOLATIONS = 100

/** What one ingested file did: the same record the job store keeps for it, minus its time. */
export type IngestResult = Omit<AcceptedFile, 'now'>

function contextOf(part: UploadPart, path: string): string {
  return part.member ? `${part.name}: ${path}` : path
}

function openPayload(part: UploadPart, ctx: PayloadContext): PayloadReader {
  try {
    return new PayloadReader(part.load(), ctx)
  } catch (e) {
    if (e instanceof JsonSyntaxError) throw new ApiError(400, `file is not valid JSON: ${e.message}`, part.member ? part.name : 'body')
    throw e
  }
}

/** Pass 1. Throws a 400 listing (up to MAX_VIOLATIONS) violations with their JSON paths. */
export function validateUpload(parts: UploadPart[], ctx: PayloadContext): { nodes: number; edges: number; environments: Set<string> } {
  const details: ErrorDetail[] = []
  let truncated = false
  const total = { nodes: 0, edges: 0, environments: new Set<string>() }
  for (const part of parts) {
    let reader: PayloadReader
    try {
      reader = openPayload(part, ctx)
      const summary = reader.validate((v: Violation) => {
        if (details.length >= MAX_VIOLATIONS) {
          truncated = true
          return false
        }
        details.push({ context: contextOf(part, v.context), message: v.message })
        return true
      })
      total.nodes += summary.nodes
      total.edges += summary.edges
      for (const e of summary.environments) total.environments.add(e)
    } catch (e) {
      if (e instanceof JsonSyntaxError) details.push({ context: part.member ? part.name : 'body', message: `file is not valid JSON: ${e.message}` })
      else if (e instanceof ApiError) details.push(...e.details)
      else throw e
    }
    if (truncated) break
  }
  if (details.length > 0) {
    const head: ErrorDetail = {
      context: 'body',
      message: `file failed validation with ${truncated ? `more than ${MAX_VIOLATIONS}` : details.length} violation(s); nothing was written`,
    }
    const tail: ErrorDetail[] = truncated ? [{ context: 'body', message: `only the first ${MAX_VIOLATIONS} violations are listed` }] : []
    throw ApiError.many(400, [head, ...details, ...tail])
  }
  return total
}

function describeUnmatched(id: number | null, end: 'start' | 'end', value: string, match: string, kind: string | null): string {
  const what = `${match === 'name' ? 'name' : 'id'} "${value}"${kind ? ` of kind ${kind}` : ''}`
  return id === null ? `edge ${end} not found: no node with ${what}` : `edge ${end} is ambiguous: several nodes have ${what}`
}

type EdgeMeta = EdgeRow & { part: UploadPart; index: number }

/** Pass 2. Assumes `validateUpload` accepted the same parts. */
export async function writeUpload(db: D1Database, parts: UploadPart[], ctx: PayloadContext, now: string, environments: Set<string>): Promise<IngestResult> {
  const result: IngestResult = { nodes: 0, edges: 0, nodesChanged: 0, edgesChanged: 0, unmatched: 0, errors: [], environments: [...environments].sort() }

  // Nodes: one upsert per chunk, BATCH_STATEMENTS chunks per round trip.
  let nodeBatch: D1PreparedStatement[] = []
  const flushNodes = async () => {
    for (const r of await runBatch(db, nodeBatch)) result.nodesChanged += r.results.length
    nodeBatch = []
  }
  for (const part of parts) {
    const chunker = new JsonArrayChunker(CHUNK_BYTES)
    for (const row of openPayload(part, ctx).nodeRows()) {
      result.nodes++
      const done = chunker.push(JSON.stringify(row), undefined)
      if (done) nodeBatch.push(nodeUpsert(db, done.json, now))
      if (nodeBatch.length >= BATCH_STATEMENTS) await flushNodes()
    }
    const last = chunker.flush()
    if (last) nodeBatch.push(nodeUpsert(db, last.json, now))
  }
  // Nodes must all be written before edges are matched against them.
  if (nodeBatch.length) await flushNodes()

  // Edges: resolve the ends of a batch of chunks in one round trip (each end matched once, by index),
  // then upsert the matched ones by node id in the next; unmatched ones become job errors.
  let pending: { json: string; meta: EdgeMeta[] }[] = []
  const flushEdges = async () => {
    const resolved = await runBatch(db, pending.map((c) => edgeResolve(db, c.json)))
    const upserts = new JsonArrayChunker(CHUNK_BYTES)
    const statements: D1PreparedStatement[] = []
    resolved.forEach((r, ci) => {
      const meta = pending[ci].meta
      for (const { i, sid, tid } of r.results as ResolvedEnds[]) {
        const m = meta[i]
        if (sid !== null && sid > 0 && tid !== null && tid > 0) {
          const done = upserts.push(JSON.stringify({ s: sid, t: tid, k: m.k, p: m.p }), undefined)
          if (done) statements.push(edgeUpsert(db, done.json, now))
          continue
        }
        result.unmatched++
        const problems: string[] = []
        if (sid === null || sid < 0) problems.push(describeUnmatched(sid, 'start', m.s, m.sm, m.sk))
        if (tid === null || tid < 0) problems.push(describeUnmatched(tid, 'end', m.t, m.tm, m.tk))
        result.errors.push({ file: m.part.name, context: `graph.edges[${m.index}]`, message: problems.join('; ') })
      }
    })
    const last = upserts.flush()
    if (last) statements.push(edgeUpsert(db, last.json, now))
    for (const r of await runBatch(db, statements)) result.edgesChanged += r.results.length
    pending = []
  }
  for (const part of parts) {
    const chunker = new JsonArrayChunker<EdgeMeta>(CHUNK_BYTES)
    for (const row of openPayload(part, ctx).edgeRows()) {
      result.edges++
      const { index, ...edge } = row
      const done = chunker.push(JSON.stringify(edge), { ...edge, part, index })
      if (done) pending.push(done)
      if (pending.length >= BATCH_STATEMENTS) await flushEdges()
    }
    const last = chunker.flush()
    if (last) pending.push(last)
  }
  if (pending.length) await flushEdges()
  return result
}
