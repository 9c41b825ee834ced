/// <reference types="node" />
import { createReadStream } from 'node:fs'
import { open, readdir, readFile, stat } from 'node:fs/promises'
import path from 'node:path'
import { EdgeHoundClient, EdgeHoundError, type ErrorEnvelope } from '../../client'
import { endIngestJob, ingestFilePath, startIngestJob } from '../../client/cli-endpoints'
import type { Command, Context } from '../command'
import { CliError, UsageError } from '../errors'
import { formatBytes, formatDuration, LiveLine, renderBar } from '../progress'
import { halve, partBody, readLayout, splitParts, SplitError, type ChunkSource, type Part } from '../split'
import { listZip, readMember, ZipError, type ZipMember } from '../zip-read'

export interface IngestFile {
  path: string
  name: string
  size: number
}

const INGESTIBLE = /\.(json|zip)$/i

/** Files named on the command line, plus every .json/.zip file under the named directories (sorted). */
export async function collectFiles(cwd: string, inputs: string[]): Promise<IngestFile[]> {
  const out: IngestFile[] = []
  const seen = new Set<string>()
  const add = (p: string, size: number) => {
    if (seen.has(p)) return
    seen.add(p)
    out.push({ path: p, name: path.basename(p), size })
  }
  async function walk(dir: string) {
    const entries = (await readdir(dir, { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name))
    for (const e of entries) {
      if (e.name.startsWith('.')) continue
      const p = path.join(dir, e.name)
      if (e.isDirectory()) await walk(p)
      else if (e.isFile() && INGESTIBLE.test(e.name)) add(p, (await stat(p)).size)
    }
  }
  for (const input of inputs) {
    const p = path.resolve(cwd, input)
    let st
    try {
      st = await stat(p)
    } catch {
      throw new CliError(`no such file or directory: ${input}`)
    }
    if (st.isDirectory()) await walk(p)
    else add(p, st.size)
  }
  return out
}

/** zip by its magic number, JSON otherwise (the two types the file-upload endpoint accepts). */
export function ingestContentType(bytes: Uint8Array): 'application/zip' | 'application/json' {
  return bytes[0] === 0x50 && bytes[1] === 0x4b && (bytes[2] === 0x03 || bytes[2] === 0x05) ? 'application/zip' : 'application/json'
}

const CHUNK = 64 * 1024

/**
 * Sends one file with a streamed body so that the progress bar follows the bytes the HTTP stack
 * actually pulls. The signature covers the same bytes: the request is built and signed by the client
 * first, then re-issued with an identical body delivered in chunks.
 */
async function uploadStreamed(
  ctx: Context,
  client: EdgeHoundClient,
  jobId: string | number,
  name: string,
  bytes: Uint8Array,
  onProgress: (sent: number) => void,
): Promise<Response> {
  const signed = await client.buildRequest('POST', ingestFilePath(jobId), bytes, {
    contentType: ingestContentType(bytes),
    headers: { 'X-File-Upload-Name': name },
  })
  let offset = 0
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (offset >= bytes.length) {
        controller.close()
        return
      }
      const end = Math.min(offset + CHUNK, bytes.length)
      controller.enqueue(bytes.subarray(offset, end))
      offset = end
      onProgress(offset)
    },
  })
  const headers = new Headers(signed.headers)
  headers.set('Content-Length', String(bytes.length))
  return client.noteResponse(await ctx.io.fetch(new Request(signed.url, { method: 'POST', headers, body, duplex: 'half' } as RequestInit)))
}

async function envelopeOf(res: Response): Promise<ErrorEnvelope | null> {
  try {
    return (await res.json()) as ErrorEnvelope
  } catch {
    return null
  }
}

interface FileResult {
  file: string
  /** set when the file was split: which part of it this upload carried */
  part?: { index: number; array: string; first: number; count: number }
  bytes: number
  status: number | null
  accepted: boolean
  /** what the server reports for an accepted file (nodes, edges, unmatched_edges, ...) */
  result?: Record<string, unknown>
  error?: string
  request_id?: string
  duration_ms: number
}

/** "120 nodes, 300 edges, 2 unmatched edges" (and refused nodes, if any) from an upload answer, when it carries counts. */
export function uploadCounts(result: Record<string, unknown> | undefined): string {
  if (!result) return ''
  const parts: string[] = []
  for (const [k, label] of [
    ['nodes', 'nodes'],
    ['edges', 'edges'],
    ['unmatched_edges', 'unmatched edges'],
    ['refused_nodes', 'nodes refused (outside your environments)'],
  ] as const) {
    const v = result[k]
    if (typeof v === 'number' && ((k !== 'unmatched_edges' && k !== 'refused_nodes') || v > 0)) parts.push(`${v} ${label}`)
  }
  return parts.join(', ')
}

/** "meta.count: meta.count is 5 but data holds 1 element(s) ..." for each warning of an accepted upload (at most 10). */
export function uploadWarnings(result: Record<string, unknown> | undefined): string[] {
  const list = result?.warnings
  if (!Array.isArray(list)) return []
  const lines = list.slice(0, 10).map((w) => {
    const { context, message } = (w ?? {}) as { context?: unknown; message?: unknown }
    return [context, message].filter((x) => typeof x === 'string' && x !== '').join(': ')
  })
  if (list.length > 10) lines.push(`(${list.length - 10} more in the job's warnings)`)
  return lines
}

async function jsonData(res: Response): Promise<Record<string, unknown> | undefined> {
  try {
    const j = (await res.json()) as { data?: unknown }
    return j && typeof j.data === 'object' && j.data !== null && !Array.isArray(j.data) ? (j.data as Record<string, unknown>) : undefined
  } catch {
    return undefined
  }
}

/** The largest body one upload may have: the server's limit (src/graph/upload.ts MAX_UPLOAD_BYTES). */
export const UPLOAD_LIMIT = 20 * 1024 * 1024
/** Elements per part of a split file: SharpHound/AzureHound items fan out into many rows server-side. */
export const COLLECTOR_PART_ELEMENTS = 2_000
/** Elements per part of a split OpenGraph file (the server takes at most 200,000 nodes and edges per upload). */
export const OPENGRAPH_PART_ELEMENTS = 100_000

/**
 * What is sent for one input file: the file as it is (the common case), or, when it is larger than one
 * upload, its parts: a JSON file split by its `data` / `nodes` / `edges` arrays; a zip member by member
 * (each member sent as JSON, split in turn when it is larger than one upload).
 */
type Unit =
  | { kind: 'whole'; name: string; size: number; load: () => Promise<Uint8Array> }
  | { kind: 'split'; name: string; size: number; source: ChunkSource }

function fileChunks(p: string): ChunkSource {
  return () => createReadStream(p, { highWaterMark: 256 * 1024 }) as AsyncIterable<Uint8Array>
}

async function collect(source: ChunkSource): Promise<Uint8Array> {
  const parts: Uint8Array[] = []
  let n = 0
  for await (const c of source()) {
    parts.push(c.slice())
    n += c.length
  }
  const out = new Uint8Array(n)
  let o = 0
  for (const c of parts) {
    out.set(c, o)
    o += c.length
  }
  return out
}

function toMemberUnits(f: IngestFile, members: ZipMember[], limit: number): Unit[] {
  return members.map((m): Unit => {
    const source: ChunkSource = () => readMember(f.path, m)
    const name = `${f.name}/${m.name}`
    return m.size <= limit ? { kind: 'whole', name, size: m.size, load: () => collect(source) } : { kind: 'split', name, size: m.size, source }
  })
}

/** A zip's members as units (after the server refused the whole archive as over a budget). */
async function memberUnits(f: IngestFile, limit: number): Promise<Unit[]> {
  return toMemberUnits(f, await listZip(f.path), limit)
}

/** The units of one file. Throws SplitError / ZipError / CliError when it can be neither sent nor split. */
export async function unitsOf(f: IngestFile, limit: number): Promise<Unit[]> {
  const head = new Uint8Array(4)
  const fh = await open(f.path, 'r')
  try {
    await fh.read(head, 0, 4, 0)
  } finally {
    await fh.close()
  }
  if (ingestContentType(head) === 'application/zip') {
    let members: ZipMember[] | null = null
    try {
      members = await listZip(f.path)
    } catch (e) {
      // not readable here: a small one goes as it is and the server says what is wrong with it
      if (f.size <= limit) return [{ kind: 'whole', name: f.name, size: f.size, load: () => readFile(f.path).then((b) => new Uint8Array(b)) }]
      throw e
    }
    const inflated = members.reduce((n, m) => n + m.size, 0)
    if (f.size <= limit && inflated <= limit && members.length <= 100)
      return [{ kind: 'whole', name: f.name, size: f.size, load: () => readFile(f.path).then((b) => new Uint8Array(b)) }]
    return toMemberUnits(f, members, limit)
  }
  if (f.size <= limit) return [{ kind: 'whole', name: f.name, size: f.size, load: () => readFile(f.path).then((b) => new Uint8Array(b)) }]
  return [{ kind: 'split', name: f.name, size: f.size, source: fileChunks(f.path) }]
}

function partLabel(p: Part): string {
  const array = p.array === 'data' ? 'data' : `graph.${p.array}`
  return `${array}[${p.first}..${p.first + p.elements.length - 1}]`
}

export const ingest: Command = {
  name: 'ingest',
  summary: 'Upload collector output (.json or .zip files, or directories of them) as one ingest job',
  args: 'FILE|DIR...',
  description:
    'Starts a file-upload job, uploads every file with a progress bar, ends the job and prints a summary.\n' +
    'SharpHound, AzureHound and OpenGraph files (and zips of them) larger than one upload (20 MiB) are split\n' +
    'into several uploads of the same job by their data / nodes / edges arrays, read as streams (a large zip is\n' +
    'never held whole); OpenGraph nodes are sent before edges. A part the server refuses as over one of its\n' +
    'per-upload budgets (413) is halved and sent again.\n' +
    'A rejected file does not stop the others; the exit status is 1 when any file was rejected.\n' +
    'After the job ends the server analyses the new data; follow it with `edgehound analysis status --wait`.',
  minArgs: 1,
  options: {
    retries: { type: 'string', value: 'N', description: 'retries of a file answered 429 or 503, after Retry-After (default 3)' },
    'max-upload-bytes': { type: 'string', value: 'N', description: 'split files larger than N bytes (default and maximum 20971520, the server limit)' },
  },
  async run(ctx, inputs, opts) {
    const retries = opts.retries === undefined ? 3 : Number(opts.retries)
    if (!Number.isInteger(retries) || retries < 0 || retries > 20) throw new UsageError('--retries must be an integer from 0 to 20')
    const limit = opts['max-upload-bytes'] === undefined ? UPLOAD_LIMIT : Number(opts['max-upload-bytes'])
    if (!Number.isInteger(limit) || limit < 1024 || limit > UPLOAD_LIMIT) throw new UsageError(`--max-upload-bytes must be an integer from 1024 to ${UPLOAD_LIMIT}`)
    const files = await collectFiles(ctx.io.cwd, inputs)
    if (files.length === 0) throw new CliError(`no .json or .zip files found in ${inputs.join(', ')}`)
    const client = await ctx.client()
    const total = files.reduce((n, f) => n + f.size, 0)
    const started = ctx.io.now().getTime()

    const job = await startIngestJob(client)
    const jobId = job.data.id
    if (!ctx.json) ctx.out.info(`Ingest job ${jobId}: ${files.length} file(s), ${formatBytes(total)}`)

    const live = new LiveLine(ctx.io.stderr)
    const results: FileResult[] = []
    const nameWidth = Math.min(40, Math.max(...files.map((f) => f.name.length)))
    let fatal: EdgeHoundError | null = null
    let attempted = 0
    const fileOk = new Map<number, boolean>()

    /** One upload (with 429/503 retries), its result line, and the result record. */
    /** `retry413`: what the caller does instead when the server refuses the upload as too large (413). */
    const send = async (i: number, f: IngestFile, name: string, label: string, bytes: Uint8Array, part?: FileResult['part'], retry413?: string): Promise<FileResult> => {
      const t0 = ctx.io.now().getTime()
      let res: Response | null = null
      let error: string | undefined
      let requestId: string | undefined
      for (let attempt = 0; ; attempt++) {
        live.update(`${label} ${renderBar(0, bytes.length)} 0 B/${formatBytes(bytes.length)}`, true)
        try {
          res = await uploadStreamed(ctx, client, jobId, name, bytes, (sent) =>
            live.update(`${label} ${renderBar(sent, bytes.length)} ${formatBytes(sent)}/${formatBytes(bytes.length)}`, sent === bytes.length),
          )
        } catch (e) {
          res = null
          error = `upload failed: ${(e as Error).message}`
          break
        }
        if ((res.status === 429 || res.status === 503) && attempt < retries) {
          const wait = Math.min(60, Number(res.headers.get('retry-after')) || 1)
          await res.body?.cancel()
          live.update(`${label} server busy (HTTP ${res.status}); retrying in ${wait} s`, true)
          await ctx.io.sleep(wait * 1000)
          continue
        }
        break
      }
      if (res && !res.ok) {
        const env = await envelopeOf(res)
        error = env?.errors?.map((e) => e.message).join('; ') || `HTTP ${res.status}`
        requestId = env?.request_id
        // Credentials or permission problems fail every file the same way: stop here.
        if (res.status === 401 || res.status === 403) fatal = new EdgeHoundError(res.status, env, res)
      }
      const result = res?.ok ? await jsonData(res) : undefined
      const r: FileResult = {
        file: path.relative(ctx.io.cwd, f.path) || f.name,
        ...(part ? { part } : {}),
        bytes: bytes.length,
        status: res?.status ?? null,
        accepted: !!res?.ok,
        ...(result ? { result } : {}),
        ...(error ? { error } : {}),
        ...(requestId ? { request_id: requestId } : {}),
        duration_ms: ctx.io.now().getTime() - t0,
      }
      live.clear()
      if (retry413 && r.status === 413) {
        // not a result: the caller sends the content again in smaller uploads
        if (!ctx.json) ctx.out.info(`... ${label} refused as over a per-upload budget (${r.error}); ${retry413}`)
        return r
      }
      results.push(r)
      fileOk.set(i, (fileOk.get(i) ?? true) && r.accepted)
      if (!ctx.json) {
        const mark = r.accepted ? 'ok ' : 'ERR'
        ctx.out.info(
          `${mark} ${label} ${formatBytes(r.bytes).padStart(9)}  ${
            r.accepted ? [`HTTP ${r.status}`, uploadCounts(r.result), formatDuration(r.duration_ms)].filter(Boolean).join(', ') : r.error
          }`,
        )
        for (const w of uploadWarnings(r.result)) ctx.out.info(`    warning: ${w}`)
      }
      return r
    }

    /** A file (or member) that could not be sent or split: recorded as rejected, nothing uploaded for it. */
    const refuse = (i: number, f: IngestFile, label: string, message: string) => {
      results.push({ file: path.relative(ctx.io.cwd, f.path) || f.name, bytes: 0, status: null, accepted: false, error: message, duration_ms: 0 })
      fileOk.set(i, false)
      live.clear()
      if (!ctx.json) ctx.out.info(`ERR ${label} ${message}`)
    }

    for (const [i, f] of files.entries()) {
      attempted++
      const label = `${String(i + 1).padStart(String(files.length).length)}/${files.length} ${f.name.padEnd(nameWidth)}`
      let units: Unit[]
      try {
        units = await unitsOf(f, limit)
      } catch (e) {
        if (!(e instanceof ZipError || e instanceof SplitError)) throw e
        refuse(i, f, label, `cannot be split into uploads of ${formatBytes(limit)}: ${e.message}`)
        continue
      }
      for (let k = 0; k < units.length; k++) {
        const u = units[k]
        const uLabel = u.name === f.name ? label : `${label} ${u.name.slice(f.name.length + 1)}`
        if (u.kind === 'whole') {
          let bytes: Uint8Array
          try {
            bytes = await u.load()
          } catch (e) {
            if (!(e instanceof ZipError)) throw e
            refuse(i, f, uLabel, e.message)
            continue
          }
          // within the byte limit but over another per-upload budget (a collector file whose items become
          // more than 200,000 rows, a zip of too many files): sent again split, or member by member
          const isZip = ingestContentType(bytes) === 'application/zip'
          const r = await send(i, f, u.name, uLabel, bytes, undefined, isZip ? 'sending its files one by one' : 'splitting it')
          if (r.status === 413 && !fatal) {
            if (isZip) {
              try {
                units.splice(k + 1, 0, ...(await memberUnits(f, limit)))
              } catch (e) {
                if (!(e instanceof ZipError)) throw e
                refuse(i, f, uLabel, `refused as over a per-upload budget, and its files cannot be read one by one: ${e.message}`)
              }
            }
            else units.splice(k + 1, 0, { kind: 'split', name: u.name, size: bytes.length, source: async function* () { yield bytes } })
          }
        } else {
          // a file larger than one upload: scanned once for its layout, then sent part by part
          try {
            live.update(`${uLabel} reading ${formatBytes(u.size)} to split it`, true)
            const layout = await readLayout(u.source)
            const maxElements = layout.format === 'collector' ? COLLECTOR_PART_ELEMENTS : OPENGRAPH_PART_ELEMENTS
            let index = 0
            for await (const part of splitParts(u.source, layout, { maxBytes: limit, maxElements })) {
              // a part the server refuses as over a per-upload budget (413) is halved and sent again
              const queue: Part[] = [part]
              while (queue.length) {
                const p = queue.shift()!
                index++
                const meta = { index, array: p.array, first: p.first, count: p.elements.length }
                const pLabel = `${uLabel} part ${index} ${partLabel(p)} (${formatBytes(p.consumed)}/${formatBytes(u.size)})`
                const halvable = p.elements.length > 1
                const r = await send(i, f, u.name, pLabel, partBody(layout, p), meta, halvable ? 'sending it in two halves' : undefined)
                if (fatal) break
                if (halvable && r.status === 413) {
                  queue.unshift(...halve(p))
                  index--
                }
              }
              if (fatal) break
            }
          } catch (e) {
            if (!(e instanceof ZipError || e instanceof SplitError)) throw e
            refuse(i, f, uLabel, `cannot be split into uploads of ${formatBytes(limit)}: ${e.message}`)
          }
        }
        if (fatal) break
      }
      if (fatal) break
    }

    let ended = false
    let endError: string | undefined
    if (!fatal) {
      try {
        await endIngestJob(client, jobId)
        ended = true
      } catch (e) {
        endError = e instanceof EdgeHoundError || e instanceof Error ? e.message : String(e)
      }
    }
    const accepted = results.filter((r) => r.accepted)
    const rejected = results.filter((r) => !r.accepted)
    const filesAccepted = [...fileOk.values()].filter(Boolean).length
    const sumOf = (k: string) => accepted.reduce((n, r) => n + (typeof r.result?.[k] === 'number' ? (r.result[k] as number) : 0), 0)
    const summary = {
      job_id: jobId,
      nodes: sumOf('nodes'),
      edges: sumOf('edges'),
      files: results,
      accepted: accepted.length,
      rejected: rejected.length,
      skipped: files.length - attempted,
      bytes: accepted.reduce((n, r) => n + r.bytes, 0),
      duration_ms: ctx.io.now().getTime() - started,
      ended,
      ...(endError ? { end_error: endError } : {}),
    }
    if (ctx.json) ctx.out.data(summary)
    else {
      const uploads = results.length !== attempted ? ` in ${results.length} uploads` : ''
      ctx.out.line(
        `Job ${jobId}: ${filesAccepted} of ${files.length} file(s) accepted${uploads} (${formatBytes(summary.bytes)} in ${formatDuration(summary.duration_ms)}` +
          `${summary.nodes || summary.edges ? `; ${summary.nodes} nodes, ${summary.edges} edges` : ''})` +
          (rejected.length ? `, ${rejected.length} rejected` : '') +
          (summary.skipped ? `, ${summary.skipped} not sent` : '') +
          (ended ? '; job ended, analysis follows.' : '.'),
      )
      for (const r of rejected) ctx.out.line(`  ${r.file}${r.part ? ` part ${r.part.index}` : ''}: ${r.error}${r.request_id ? ` (request id ${r.request_id})` : ''}`)
      if (endError) ctx.out.line(`  ending the job failed: ${endError}`)
    }
    if (fatal) throw fatal
    return rejected.length || !ended ? 1 : 0
  },
}
