/// <reference types="node" />
import { readdir, readFile, stat } from 'node:fs/promises'
import path from 'node:path'
import { EdgeHoundClient, EdgeHoundError, type ErrorEnvelope } from '../../client'
import { endIngestJob, ingestFilePath, startIngestJob } from '../../client/cli-endpoints'
import type { Command, Context } from '../command'
import { CliError, UsageError } from '../errors'
import { formatBytes, formatDuration, LiveLine, renderBar } from '../progress'

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
  file: IngestFile,
  bytes: Uint8Array,
  onProgress: (sent: number) => void,
): Promise<Response> {
  const signed = await client.buildRequest('POST', ingestFilePath(jobId), bytes, {
    contentType: ingestContentType(bytes),
    headers: { 'X-File-Upload-Name': file.name },
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
  return ctx.io.fetch(new Request(signed.url, { method: 'POST', headers, body, duplex: 'half' } as RequestInit))
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
  bytes: number
  status: number | null
  accepted: boolean
  /** what the server reports for an accepted file (nodes, edges, unmatched_edges, ...) */
  result?: Record<string, unknown>
  error?: string
  request_id?: string
  duration_ms: number
}

/** "120 nodes, 300 edges, 2 unmatched edges" from an upload answer, when it carries counts. */
export function uploadCounts(result: Record<string, unknown> | undefined): string {
  if (!result) return ''
  const parts: string[] = []
  for (const [k, label] of [
    ['nodes', 'nodes'],
    ['edges', 'edges'],
    ['unmatched_edges', 'unmatched edges'],
  ] as const) {
    const v = result[k]
    if (typeof v === 'number' && (k !== 'unmatched_edges' || v > 0)) parts.push(`${v} ${label}`)
  }
  return parts.join(', ')
}

async function jsonData(res: Response): Promise<Record<string, unknown> | undefined> {
  try {
    const j = (await res.json()) as { data?: unknown }
    return j && typeof j.data === 'object' && j.data !== null && !Array.isArray(j.data) ? (j.data as Record<string, unknown>) : undefined
  } catch {
    return undefined
  }
}

export const ingest: Command = {
  name: 'ingest',
  summary: 'Upload collector output (.json or .zip files, or directories of them) as one ingest job',
  args: 'FILE|DIR...',
  description:
    'Starts a file-upload job, uploads every file with a progress bar, ends the job and prints a summary.\n' +
    'A rejected file does not stop the others; the exit status is 1 when any file was rejected.\n' +
    'After the job ends the server analyses the new data; follow it with `edgehound analysis status --wait`.',
  minArgs: 1,
  options: {
    retries: { type: 'string', value: 'N', description: 'retries of a file answered 429 or 503, after Retry-After (default 3)' },
  },
  async run(ctx, inputs, opts) {
    const retries = opts.retries === undefined ? 3 : Number(opts.retries)
    if (!Number.isInteger(retries) || retries < 0 || retries > 20) throw new UsageError('--retries must be an integer from 0 to 20')
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
    for (const [i, f] of files.entries()) {
      const t0 = ctx.io.now().getTime()
      const label = `${String(i + 1).padStart(String(files.length).length)}/${files.length} ${f.name.padEnd(nameWidth)}`
      const bytes = new Uint8Array(await readFile(f.path))
      let res: Response | null = null
      let error: string | undefined
      let requestId: string | undefined
      for (let attempt = 0; ; attempt++) {
        live.update(`${label} ${renderBar(0, bytes.length)} 0 B/${formatBytes(bytes.length)}`, true)
        try {
          res = await uploadStreamed(ctx, client, jobId, f, bytes, (sent) =>
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
        bytes: bytes.length,
        status: res?.status ?? null,
        accepted: !!res?.ok,
        ...(result ? { result } : {}),
        ...(error ? { error } : {}),
        ...(requestId ? { request_id: requestId } : {}),
        duration_ms: ctx.io.now().getTime() - t0,
      }
      results.push(r)
      live.clear()
      if (!ctx.json) {
        const mark = r.accepted ? 'ok ' : 'ERR'
        ctx.out.info(
          `${mark} ${label} ${formatBytes(r.bytes).padStart(9)}  ${
            r.accepted ? [`HTTP ${r.status}`, uploadCounts(r.result), formatDuration(r.duration_ms)].filter(Boolean).join(', ') : r.error
          }`,
        )
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
    const sumOf = (k: string) => accepted.reduce((n, r) => n + (typeof r.result?.[k] === 'number' ? (r.result[k] as number) : 0), 0)
    const summary = {
      job_id: jobId,
      nodes: sumOf('nodes'),
      edges: sumOf('edges'),
      files: results,
      accepted: accepted.length,
      rejected: rejected.length,
      skipped: files.length - results.length,
      bytes: accepted.reduce((n, r) => n + r.bytes, 0),
      duration_ms: ctx.io.now().getTime() - started,
      ended,
      ...(endError ? { end_error: endError } : {}),
    }
    if (ctx.json) ctx.out.data(summary)
    else {
      ctx.out.line(
        `Job ${jobId}: ${accepted.length} of ${files.length} file(s) accepted (${formatBytes(summary.bytes)} in ${formatDuration(summary.duration_ms)}` +
          `${summary.nodes || summary.edges ? `; ${summary.nodes} nodes, ${summary.edges} edges` : ''})` +
          (rejected.length ? `, ${rejected.length} rejected` : '') +
          (summary.skipped ? `, ${summary.skipped} not sent` : '') +
          (ended ? '; job ended, analysis follows.' : '.'),
      )
      for (const r of rejected) ctx.out.line(`  ${r.file}: ${r.error}${r.request_id ? ` (request id ${r.request_id})` : ''}`)
      if (endError) ctx.out.line(`  ending the job failed: ${endError}`)
    }
    if (fatal) throw fatal
    return rejected.length || !ended ? 1 : 0
  },
}
