// File ingest: drop or pick collector zips and JSON files, upload them into one file-upload job with progress
// (start, one request per file, end), and the job history with status and messages, refreshed while running.
import { useEffect, useRef, useState } from 'preact/hooks'
import { datapipeStatus, endUploadJob, listUploadJobs, startUploadJob, uploadFileRequest, type IngestJobJson } from '../../../../src/client/graph'
import { EdgeHoundError } from '../../../../src/client/index'
import { client, messageOf } from '../../api'
import { attempt } from '../../lib/attempt'
import { ErrorLine, when } from './common'
import { jobActive, jobDuration, jobStatusName, percent, uploadContentType } from './model'

interface Picked {
  file: File
  type: 'application/zip' | 'application/json' | null
  progress: number
  state: 'waiting' | 'uploading' | 'done' | 'failed' | 'refused'
  message: string
}

/** Sends a built request with XMLHttpRequest, reporting upload progress (fetch has none). */
function sendWithProgress(req: Request, body: ArrayBuffer, onProgress: (loaded: number, total: number) => void): Promise<Response> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest()
    xhr.open(req.method, req.url)
    req.headers.forEach((v, k) => xhr.setRequestHeader(k, v))
    xhr.upload.onprogress = (e) => onProgress(e.loaded, e.lengthComputable ? e.total : body.byteLength)
    xhr.onload = () => {
      const headers = new Headers()
      for (const line of xhr.getAllResponseHeaders().trim().split(/[\r\n]+/)) {
        const i = line.indexOf(':')
        if (i > 0) headers.append(line.slice(0, i).trim(), line.slice(i + 1).trim())
      }
      resolve(new Response(xhr.status === 204 ? null : xhr.responseText, { status: xhr.status, headers }))
    }
    xhr.onerror = () => reject(new Error('the upload was interrupted (network error)'))
    xhr.send(body)
  })
}

export default function FileIngest({ canUpload }: { canUpload: boolean }) {
  const [error, setError] = useState('')
  const [picked, setPicked] = useState<Picked[]>([])
  const [busy, setBusy] = useState(false)
  const [summary, setSummary] = useState('')
  const [jobs, setJobs] = useState<IngestJobJson[] | null>(null)
  const [count, setCount] = useState(0)
  const [page, setPage] = useState(0)
  const [pipeline, setPipeline] = useState<string>('')
  const [over, setOver] = useState(false)
  const input = useRef<HTMLInputElement>(null)
  const pageSize = 10

  async function refresh() {
    const r = await attempt(() => listUploadJobs(client, { skip: page * pageSize, limit: pageSize, sort_by: '-id' }), setError)
    if (r) {
      setJobs(r.data)
      setCount(r.count)
    }
    const d = await attempt(() => datapipeStatus(client), () => {})
    if (d) setPipeline(d.data.status)
    return { active: (r?.data ?? []).some((j) => jobActive(j.status)) || d?.data.status !== 'idle' }
  }
  // refreshed every 2 s while a job runs or the pipeline is busy, every 15 s otherwise
  useEffect(() => {
    let live = true
    let timer: ReturnType<typeof setTimeout>
    const tick = async () => {
      const { active } = await refresh()
      if (live) timer = setTimeout(tick, active || busy ? 2000 : 15000)
    }
    tick()
    return () => {
      live = false
      clearTimeout(timer)
    }
  }, [page, busy])

  function add(files: FileList | File[]) {
    const next = [...files].map<Picked>((file) => {
      const type = uploadContentType(file.name, file.type)
      return { file, type, progress: 0, state: type ? 'waiting' : 'refused', message: type ? '' : 'not a zip or JSON file: it will not be uploaded' }
    })
    setPicked((p) => [...p.filter((x) => x.state === 'waiting' || x.state === 'refused'), ...next])
    setSummary('')
  }

  async function upload() {
    const todo = picked.filter((p) => p.type && p.state === 'waiting')
    if (todo.length === 0) return
    setBusy(true)
    setSummary('')
    const update = (f: File, patch: Partial<Picked>) => setPicked((all) => all.map((p) => (p.file === f ? { ...p, ...patch } : p)))
    const job = await attempt(() => startUploadJob(client), setError)
    if (!job) return setBusy(false)
    let ok = 0
    for (const p of todo) {
      update(p.file, { state: 'uploading', progress: 0 })
      try {
        const bytes = await p.file.arrayBuffer()
        const req = await uploadFileRequest(client, job.data.id, new Uint8Array(bytes), { contentType: p.type!, fileName: p.file.name })
        const res = client.noteResponse(await sendWithProgress(req, bytes, (l, t) => update(p.file, { progress: percent(l, t) })))
        const text = await res.text()
        if (!res.ok) throw EdgeHoundError.of(res, text, 'cookie')
        const data = (JSON.parse(text) as { data: { nodes: number; edges: number; errors: unknown[] } }).data
        update(p.file, { state: 'done', progress: 100, message: `${data.nodes} nodes, ${data.edges} relationships${data.errors.length ? `, ${data.errors.length} errors` : ''}` })
        ok++
      } catch (e) {
        update(p.file, { state: 'failed', message: messageOf(e) })
      }
    }
    const ended = await attempt(() => endUploadJob(client, job.data.id), setError)
    setBusy(false)
    setSummary(`${ok} of ${todo.length} file${todo.length === 1 ? '' : 's'} uploaded in job ${job.data.id}${ended ? `: ${jobStatusName(ended.data.status)}` : ''}. Analysis runs next; the history below follows it.`)
    refresh()
  }

  return (
    <section aria-label="File ingest">
      <h2>File ingest</h2>
      <p class="muted">Upload SharpHound or AzureHound collector output (zip or JSON) and OpenGraph JSON. Analysis runs when the upload ends.</p>
      <ErrorLine error={error} />
      {canUpload ? (
        <div>
          <div
            class={`dropzone${over ? ' over' : ''}`}
            onDragOver={(e) => (e.preventDefault(), setOver(true))}
            onDragLeave={() => setOver(false)}
            onDrop={(e) => {
              e.preventDefault()
              setOver(false)
              if (e.dataTransfer?.files) add(e.dataTransfer.files)
            }}
          >
            <p>Drop zip or JSON files here, or</p>
            <button class="secondary" onClick={() => input.current?.click()}>Choose files to upload</button>
            <input
              ref={input}
              type="file"
              multiple
              accept=".zip,.json,application/zip,application/json"
              aria-label="Files to upload"
              class="sr"
              onChange={(e) => {
                const t = e.target as HTMLInputElement
                if (t.files) add(t.files)
                t.value = ''
              }}
            />
          </div>
          {picked.length > 0 && (
            <ul class="upload-list" aria-label="Files">
              {picked.map((p) => (
                <li key={p.file.name + p.file.lastModified}>
                  <span class="name">{p.file.name}</span>
                  <progress max={100} value={p.progress} aria-label={`Upload progress for ${p.file.name}`} />
                  <span class={p.state === 'failed' || p.state === 'refused' ? 'error' : 'muted'}>{p.state === 'uploading' ? `${p.progress}%` : p.state}{p.message ? `: ${p.message}` : ''}</span>
                  {(p.state === 'waiting' || p.state === 'refused') && !busy && (
                    <button class="secondary" aria-label={`Remove ${p.file.name}`} onClick={() => setPicked((all) => all.filter((x) => x !== p))}>×</button>
                  )}
                </li>
              ))}
            </ul>
          )}
          <button onClick={upload} disabled={busy || !picked.some((p) => p.type && p.state === 'waiting')}>{busy ? 'Uploading…' : 'Upload'}</button>
          {summary && <p role="status">{summary}</p>}
        </div>
      ) : (
        <p class="warning">Your role may not upload data.</p>
      )}
      <p role="status" aria-label="Data pipeline status">Data pipeline: <strong>{pipeline || '…'}</strong></p>
      <h3>History</h3>
      {jobs && (
        <table class="list" aria-label="File ingest history">
          <thead>
            <tr><th scope="col">Job</th><th scope="col">User</th><th scope="col">Start</th><th scope="col">Duration</th><th scope="col">Files</th><th scope="col">Status</th><th scope="col">Message</th></tr>
          </thead>
          <tbody>
            {jobs.length === 0 && <tr><td colSpan={7} class="muted">No uploads yet.</td></tr>}
            {jobs.map((j) => (
              <tr key={j.id}>
                <td>{j.id}</td>
                <td>{j.user_email_address ?? j.user_id.slice(0, 8)}</td>
                <td>{when(j.start_time)}</td>
                <td>{jobDuration(j.start_time, j.end_time)}</td>
                <td>{j.total_files}{j.failed_files ? ` (${j.failed_files} failed)` : ''}</td>
                <td>{jobStatusName(j.status)}</td>
                <td>
                  {j.status_message}
                  {(j.errors.length > 0 || j.warnings.length > 0) && (
                    <details>
                      <summary>{j.error_count} errors, {j.warnings.length} warnings</summary>
                      <ul>{[...j.errors.map((e) => ['error', e] as const), ...j.warnings.map((w) => ['warning', w] as const)].map(([k, e], i) => <li key={i}>{k}: {e.file} {e.context}: {e.message}</li>)}</ul>
                    </details>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <Pager page={page} pageSize={pageSize} count={count} onPage={setPage} label="File ingest history pages" />
    </section>
  )
}

export function Pager({ page, pageSize, count, onPage, label }: { page: number; pageSize: number; count: number; onPage: (p: number) => void; label: string }) {
  const pages = Math.max(1, Math.ceil(count / pageSize))
  return (
    <nav aria-label={label} class="pager">
      <button class="secondary" disabled={page === 0} onClick={() => onPage(page - 1)}>Previous page</button>
      <span>Page {page + 1} of {pages} ({count})</span>
      <button class="secondary" disabled={page + 1 >= pages} onClick={() => onPage(page + 1)}>Next page</button>
    </nav>
  )
}
