/**
 * Ingesting one uploaded file (a JSON payload or a zip of them) into the graph.
 *
 *   pass 1  validate every payload completely (nothing is written if any violation is found)
 *   pass 2  stage the nodes of every payload, then the edges of every payload, in chunks of ~80 KB of
 *           JSON and a few chunks per round trip (memory stays at the upload plus one batch), then commit
 *           the whole upload in one db.batch: nodes, then edges (so an edge may refer to a node from
 *           another file of the same zip), then the job's record. D1 runs a batch as one transaction,
 *           so a file is written completely or not at all (src/graph/ingest.store.ts).
 *
 * Edges whose start or end matches no node (or, by name, several) are not written; they are counted
 * and reported (job errors and the upload's response), never dropped silently. So are the nodes a
 * writer restricted to some environments may not write (docs/permissions.md).
 *
 * Elements that may occur more than once in the upload (same node id, same edge as written; found in
 * pass 1 by src/graph/repeats.ts) are staged apart and folded by the commit into one upsert per key.
 */
import { ApiError, type ErrorDetail } from '../http/errors'
import { overBudget } from '../http/budget'
import { JsonSyntaxError } from './json-scan'
import { PayloadReader, type EdgeRow, type PayloadContext, type Violation } from './opengraph'
import { openGraphPayload } from '../collectors/detect'
import type { GraphPayload } from '../collectors/payload'
import { JsonArrayChunker, type UploadPart } from './upload'
import { commitUpload, discardUpload, REPEAT_SEQ_BASE, runStaging, stageChunk, stagedEdge, type StagePart } from './ingest.store'
import { MAX_JOB_ERRORS, type JobErrorEntry } from './jobs.store'
import { edgeKey, KeyHashes, NO_REPEATS, type RepeatedKeys } from './repeats'
import type { EnvironmentAccess } from '../auth/permissions'
import type { AuditWrite } from '../audit/audit'

/** JSON bytes per statement parameter: D1 allows 100 KB per statement, SQL text included. */
export const CHUNK_BYTES = 80_000
/**
 * Staging statements per D1 request: one. Memory, not round trips, decides it (issue 19's heap budget,
 * docs/budgets.md): the D1 binding serialises a request's statements into one JSON text. One chunk
 * (≤ CHUNK_BYTES, ~100 KB once escaped) stays under V8's large-object threshold (128 KiB), so the text is
 * an ordinary young-generation string the scavenger frees soon after the request; twelve chunks made a
 * ~1.2 MB text in large-object space, which only a full collection frees, and a 20 MiB upload left ~20
 * of them behind: measured (npm run bench:cost, fresh isolate) 122 MiB committed heap with 12 per
 * request, 68 MiB with 1. The statement count is the same either way.
 */
export const BATCH_STATEMENTS = 1
/** staging requests sent before the oldest is awaited (memory: this many chunks), so D1 writes while the isolate encodes */
export const STAGING_IN_FLIGHT = 3
/** violations reported in one 400 */
export const MAX_VIOLATIONS = 100

/**
 * Nodes plus edges per upload (all payloads of a zip together): decided in pass 1, before anything is
 * written. A realistic 20 MiB OpenGraph file holds about 140 k.
 */
export const MAX_ELEMENTS = 200_000
/**
 * Staging statements per upload. With the commit batch (at most 24 statements), the job and catalogue reads and the
 * clean-up of a failed attempt, an upload stays under 450 D1 statements, well under D1's 1,000 queries
 * per Worker invocation (our budget: 500 for any request). The upload caps (inflated bytes, elements)
 * keep realistic files far below it (a 20 MiB file stages about 215 chunks); a file made of tiny
 * elements spread over many zip members could still reach it, so staging counts its statements and
 * refuses the upload the moment the next one would pass the budget: nothing is committed, and the staging
 * rows written so far are deleted.
 */
export const MAX_STAGING_STATEMENTS = 400

const SPLIT_UPLOAD = 'split the data into several uploads to the same job'

/** Age after which the staging rows of an interrupted upload are purged (by the next upload's commit). */
export const STALE_STAGING_MS = 60 * 60 * 1000

/** What one ingested file did (the job records the same counts and the first errors). */
export interface IngestResult {
  nodes: number
  edges: number
  nodesChanged: number
  edgesChanged: number
  /** edges not written because an end matched no single node */
  unmatched: number
  /** nodes not written because they are outside the writer's environments */
  refused: number
  /** the first MAX_JOB_ERRORS unmatched edges */
  errors: JobErrorEntry[]
  /** what pass 1 found suspicious but accepted (Checked.warnings), as recorded in the job */
  warnings: JobErrorEntry[]
  environments: string[]
}

function contextOf(part: UploadPart, path: string): string {
  return part.member ? `${part.name}: ${path}` : path
}

/** The payload reader of one file, whatever its format (OpenGraph or a collector's: src/collectors/detect.ts). */
function openPayload(part: UploadPart, ctx: PayloadContext): GraphPayload {
  try {
    return openGraphPayload(part.load(), ctx)
  } catch (e) {
    if (e instanceof JsonSyntaxError) throw new ApiError(400, `file is not valid JSON: ${e.message}`, part.member ? part.name : 'body')
    throw e
  }
}

/** Pass 1. Throws a 400 listing (up to MAX_VIOLATIONS) violations with their JSON paths. */
export interface Checked {
  nodes: number
  edges: number
  environments: Set<string>
  /** keys that may occur more than once across the upload's payloads */
  repeated: { nodes: RepeatedKeys; edges: RepeatedKeys }
  /**
   * Accepted but suspicious (a collector's meta.count that disagrees with its data), with the zip member's name
   * in the context like violations; the first MAX_JOB_ERRORS are recorded in the job by the commit.
   */
  warnings: ErrorDetail[]
}

export function validateUpload(parts: UploadPart[], ctx: PayloadContext): Checked {
  const details: ErrorDetail[] = []
  const warnings: ErrorDetail[] = []
  let truncated = false
  const total = { nodes: 0, edges: 0, environments: new Set<string>() }
  const nodeKeys = new KeyHashes()
  const edgeKeys = new KeyHashes()
  const keys = { node: (id: string) => nodeKeys.add(id), edge: (row: EdgeRow) => edgeKeys.add(edgeKey(row)) }
  for (const part of parts) {
    let reader: GraphPayload
    try {
      reader = openPayload(part, ctx)
      const summary = reader.validate((v: Violation) => {
        if (details.length >= MAX_VIOLATIONS) {
          truncated = true
          return false
        }
        details.push({ context: contextOf(part, v.context), message: v.message })
        return true
      }, keys)
      for (const w of summary.warnings ?? []) if (warnings.length < MAX_JOB_ERRORS) warnings.push({ context: contextOf(part, w.context), message: w.message })
      total.nodes += summary.nodes
      total.edges += summary.edges
      for (const e of summary.environments) total.environments.add(e)
    } catch (e) {
      if (e instanceof JsonSyntaxError) details.push({ context: part.member ? part.name : 'body', message: `file is not valid JSON: ${e.message}` })
      else if (e instanceof ApiError) {
        // The part could not be read (a zip member that does not inflate to its declared size): the
        // archive is broken, so no other member is inflated (a bomb in every member costs one member).
        details.push(...e.details)
        break
      } else throw e
    }
    if (truncated) break
    if (total.nodes + total.edges > MAX_ELEMENTS) break
  }
  if (details.length === 0 && total.nodes + total.edges > MAX_ELEMENTS)
    throw overBudget(413, {
      context: 'body',
      what: `the upload's ${total.nodes + total.edges} (or more) nodes and edges`,
      budget: 'nodes and edges per upload',
      limit: MAX_ELEMENTS,
      narrow: SPLIT_UPLOAD,
    })
  if (details.length > 0) {
    const head: ErrorDetail = {
      context: 'body',
      message: `file failed validation with ${truncated ? `more than ${MAX_VIOLATIONS}` : details.length} violation(s); nothing was written`,
    }
    const tail: ErrorDetail[] = truncated ? [{ context: 'body', message: `only the first ${MAX_VIOLATIONS} violations are listed` }] : []
    throw ApiError.many(400, [head, ...details, ...tail])
  }
  return { ...total, repeated: { nodes: nodeKeys.repeated(), edges: edgeKeys.repeated() }, warnings }
}

export interface WriteInput {
  jobId: number
  parts: UploadPart[]
  ctx: PayloadContext
  now: string
  /** from pass 1 */
  environments: Set<string>
  /** from pass 1; none when absent */
  repeated?: Checked['repeated']
  /** from pass 1 (Checked.warnings), with the file's name: recorded in the job by the commit batch */
  warnings?: JobErrorEntry[]
  /** the uploaded file's name: the commit batch records it as a completed task of the job */
  fileName?: string
  /** the writer's environment access; absent = all environments */
  access?: EnvironmentAccess
  /** MAX_STAGING_STATEMENTS unless given (tests) */
  maxStagingStatements?: number
  /** the request's audit success row, written by the commit batch (commitUpload) */
  audit: AuditWrite
}

/** The same promise, marked as handled: it is awaited later, possibly after it has already failed. */
function settledLater<T>(p: Promise<T>): Promise<T> {
  p.catch(() => undefined)
  return p
}

/** What staging one upload's rows wrote (src/graph/ingest.store.ts), before any commit. */
export interface Staged {
  nodes: number
  edges: number
  /** placeholder node rows were staged (collector payloads) */
  placeholders: boolean
  /** staging statements used */
  statements: number
}

export interface StageInput {
  uploadId: string
  parts: UploadPart[]
  ctx: PayloadContext
  now: string
  repeated?: Checked['repeated']
  maxStagingStatements?: number
  /**
   * Added to every staging `seq` (0 for a file upload). A collector job's posts each stage under their own
   * upload id and are merged into one upload when the job ends (src/clients/), so their seq ranges must not
   * overlap: post n stages from n * SEQ_PER_POST.
   */
  seqBase?: number
}

/** Width of one post's seq range (more than MAX_STAGING_STATEMENTS, the most one request can stage). */
export const SEQ_PER_POST = 1000

/**
 * Pass 2, first half: stages the rows of parts `validateUpload` accepted under `uploadId`. Nothing readers see
 * changes. On failure the staging rows written are deleted (best effort) and the error is rethrown.
 */
export async function stageUpload(db: D1Database, w: StageInput): Promise<Staged> {
  const uploadId = w.uploadId
  const maxStaging = w.maxStagingStatements ?? MAX_STAGING_STATEMENTS
  const base = w.seqBase ?? 0
  const counts = { nodes: 0, edges: 0 }
  let placeholders = false
  // Staging batches in flight: while D1 writes one, the isolate scans the file and encodes the next.
  const inFlight: Promise<void>[] = []
  let seq = 0
  let repeatSeq = 0
  try {
    let batch: D1PreparedStatement[] = []
    const stage = async (part: StagePart, file: string, json: string, repeats: boolean) => {
      if (seq + repeatSeq >= maxStaging)
        throw overBudget(413, {
          context: 'body',
          what: "staging the upload's rows",
          budget: 'staging statements per upload',
          limit: maxStaging,
          narrow: `${SPLIT_UPLOAD} (fewer, larger files in a zip also need fewer statements)`,
        })
      batch.push(stageChunk(db, uploadId, part, repeats ? REPEAT_SEQ_BASE + base + repeatSeq++ : base + seq++, file, json, w.now))
      if (batch.length >= BATCH_STATEMENTS) {
        inFlight.push(settledLater(runStaging(db, batch)))
        batch = []
        if (inFlight.length >= STAGING_IN_FLIGHT) await inFlight.shift()
      }
    }
    const repeated = w.repeated ?? { nodes: NO_REPEATS, edges: NO_REPEATS }
    for (const part of w.parts) {
      const chunker = new JsonArrayChunker(CHUNK_BYTES)
      const repeats = new JsonArrayChunker(CHUNK_BYTES)
      let index = 0
      const reader = openPayload(part, w.ctx)
      // OpenGraph nodes carry their index in the file (error context graph.nodes[i]); a collector's are
      // reported by object id (`node <id>`), as its violations are.
      const indexed = reader instanceof PayloadReader
      for (const row of reader.nodeRows()) {
        // Placeholders are not elements of the file, and never folded (the store upserts them apart).
        if (row.ph) placeholders = true
        else counts.nodes++
        // with the node's index in its file, for error reports: {o, k, ks, p, ek, i}
        const json = row.ph || !indexed ? JSON.stringify(row) : `${JSON.stringify(row).slice(0, -1)},"i":${index++}}`
        const repeat = !row.ph && !repeated.nodes.empty && repeated.nodes.has(row.o)
        const done = (repeat ? repeats : chunker).push(json, undefined)
        if (done) await stage('n', part.name, done.json, repeat)
      }
      for (const [c, repeat] of [[chunker, false], [repeats, true]] as const) {
        const last = c.flush()
        if (last) await stage('n', part.name, last.json, repeat)
      }
    }
    for (const part of w.parts) {
      const chunker = new JsonArrayChunker(CHUNK_BYTES)
      const repeats = new JsonArrayChunker(CHUNK_BYTES)
      for (const { index, ...edge } of openPayload(part, w.ctx).edgeRows()) {
        counts.edges++
        const json = JSON.stringify(stagedEdge(edge, index))
        const repeat = !repeated.edges.empty && repeated.edges.has(edgeKey(edge))
        const done = (repeat ? repeats : chunker).push(json, undefined)
        if (done) await stage('e', part.name, done.json, repeat)
      }
      for (const [c, repeat] of [[chunker, false], [repeats, true]] as const) {
        const last = c.flush()
        if (last) await stage('e', part.name, last.json, repeat)
      }
    }
    inFlight.push(settledLater(runStaging(db, batch)))
    while (inFlight.length) await inFlight.shift()
    return { ...counts, placeholders, statements: seq + repeatSeq }
  } catch (e) {
    await Promise.allSettled(inFlight) // nothing may land after the discard
    await discardUpload(db, uploadId).catch(() => undefined)
    throw e
  }
}

/**
 * Pass 2. Assumes `validateUpload` accepted the same parts. Either the whole upload is written and
 * recorded in the job, or (the promise rejects) nothing is: staging rows of a failed attempt are
 * deleted (best effort; if even that fails, the next upload's commit purges them after STALE_STAGING_MS).
 */
export async function writeUpload(db: D1Database, w: WriteInput): Promise<IngestResult> {
  const uploadId = crypto.randomUUID()
  const staged = await stageUpload(db, { uploadId, parts: w.parts, ctx: w.ctx, now: w.now, repeated: w.repeated, maxStagingStatements: w.maxStagingStatements })
  try {
    // A restricted writer's job collects only its own environments: it may not mark another one collected.
    const access = w.access && !w.access.all ? w.access.ids : null
    const environments = [...w.environments].filter((e) => access === null || access.includes(e)).sort()
    const staleBefore = new Date(Date.parse(w.now) - STALE_STAGING_MS).toISOString()
    const done = await commitUpload(db, {
      uploadId,
      jobId: w.jobId,
      nodes: staged.nodes,
      edges: staged.edges,
      environments,
      now: w.now,
      staleBefore,
      placeholders: staged.placeholders,
      environmentKinds: [...w.ctx.environmentTypes.keys()],
      access,
      warnings: w.warnings ?? [],
      fileName: w.fileName,
      audit: w.audit,
    })
    return { nodes: staged.nodes, edges: staged.edges, ...done, warnings: w.warnings ?? [], environments }
  } catch (e) {
    await discardUpload(db, uploadId).catch(() => undefined)
    throw e
  }
}
