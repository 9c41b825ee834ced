// Explore › Cypher: the editor (CodeMirror, loaded on first use) with Run; the user's saved queries and those
// shared with them or public (run, save, rename, update, delete, share publicly); the pre-built queries grouped
// by category. Every call goes through the typed client; a refused call shows the envelope's message here.
import { useEffect, useRef, useState } from 'preact/hooks'
import {
  createSavedQuery,
  cypherQuery,
  deleteSavedQuery,
  listSavedQueries,
  shareSavedQuery,
  updateSavedQuery,
  type SavedQueryJson,
} from '../../../../src/client/cypher'
import { EdgeHoundError } from '../../../../src/client/index'
import { client } from '../../api'
import { attempt } from '../../lib/attempt'
import { fromGraphAnswer, type ConsoleGraph, type GraphAnswer } from './graph-model'
import { filterPrebuilt } from './prebuilt-queries'
import type { CypherEditorHandle } from './cypher-editor'

/** A raw response's failure as an error the usual way (the envelope's message). */
async function ok(res: Response): Promise<Response> {
  if (!res.ok) throw EdgeHoundError.of(res, await res.text())
  return res
}

export default function CypherPanel({ onResult, userId }: { onResult: (g: ConsoleGraph, note: string) => void; userId: string | null }) {
  const holder = useRef<HTMLDivElement>(null)
  const editor = useRef<CypherEditorHandle | null>(null)
  const text = useRef('MATCH (n:User) RETURN n LIMIT 25')
  const [error, setError] = useState('')
  const [loaded, setLoaded] = useState(false)
  const [busy, setBusy] = useState(false)
  const runRef = useRef<() => void>(() => {})

  async function run() {
    setBusy(true)
    try {
      setError('')
      const r = await cypherQuery(client, text.current)
      const g = fromGraphAnswer(r.data as unknown as GraphAnswer)
      onResult(g, `${g.nodes.length} nodes, ${g.edges.length} relationships`)
    } catch (e) {
      // nothing found is BloodHound's 404 "resource not found": an empty answer, not a failure
      if (e instanceof EdgeHoundError && e.status === 404) onResult({ nodes: [], edges: [] }, 'No results')
      else await attempt(() => Promise.reject(e), setError)
    } finally {
      setBusy(false)
    }
  }
  runRef.current = run
  function load(query: string, andRun: boolean) {
    text.current = query
    editor.current?.set(query)
    if (andRun) run()
  }

  useEffect(() => {
    let live = true
    import('./cypher-editor').then(({ mountCypherEditor }) => {
      if (!live || !holder.current) return
      editor.current = mountCypherEditor(holder.current, text.current, (t) => (text.current = t), () => runRef.current())
      setLoaded(true)
    })
    return () => {
      live = false
      editor.current?.destroy()
      editor.current = null
    }
  }, [])

  return (
    <div class="cypher">
      <p class="label" id="cypher-label">Cypher query</p>
      <div ref={holder} class="editor">{!loaded && <p class="muted">Loading the editor…</p>}</div>
      <div class="row">
        <button onClick={run} disabled={busy}>Run</button>
      </div>
      {error && <p role="alert" class="error">{error}</p>}
      <SavedQueries userId={userId} current={() => text.current} onLoad={load} />
      <Prebuilt onLoad={load} />
    </div>
  )
}

function SavedQueries({ userId, current, onLoad }: { userId: string | null; current: () => string; onLoad: (q: string, run: boolean) => void }) {
  const [list, setList] = useState<SavedQueryJson[] | null>(null)
  const [error, setError] = useState('')
  const [status, setStatus] = useState('')
  const [saving, setSaving] = useState(false)
  const [renaming, setRenaming] = useState<number | null>(null)
  const [deleting, setDeleting] = useState<number | null>(null)
  const [publicIds, setPublicIds] = useState<Set<number>>(new Set())

  async function refresh() {
    const r = await attempt(() => listSavedQueries(client, 'scope=all&sort_by=name&limit=1000'), setError)
    if (!r) return
    // one query can be listed under several scopes (an own public query): keep the first, which is the owner's
    const seen = new Set<number>()
    const rows = r.data.filter((q) => (seen.has(q.id) ? false : (seen.add(q.id), true)))
    setList(rows)
    setPublicIds(new Set(r.data.filter((q) => q.scope === 'public').map((q) => q.id)))
  }
  useEffect(() => {
    refresh()
  }, [])

  async function save(ev: Event) {
    ev.preventDefault()
    const f = new FormData(ev.currentTarget as HTMLFormElement)
    const name = String(f.get('name') ?? '').trim()
    const created = await attempt(() => createSavedQuery(client, { name, query: current(), description: String(f.get('description') ?? '') }), setError)
    if (!created) return
    if (f.get('public')) await attempt(async () => ok(await shareSavedQuery(client, created.data.id, { public: true })), setError)
    setSaving(false)
    await refresh()
    setStatus(`Saved "${name}"`)
  }
  async function rename(ev: Event, q: SavedQueryJson) {
    ev.preventDefault()
    const name = String(new FormData(ev.currentTarget as HTMLFormElement).get('name') ?? '').trim()
    if (!(await attempt(() => updateSavedQuery(client, q.id, { name }), setError))) return
    setRenaming(null)
    await refresh()
    setStatus(`Renamed to "${name}"`)
  }
  async function update(q: SavedQueryJson) {
    if (!(await attempt(() => updateSavedQuery(client, q.id, { query: current() }), setError))) return
    await refresh()
    setStatus(`Updated "${q.name}" with the editor's query`)
  }
  async function remove(q: SavedQueryJson) {
    if ((await attempt(async () => ok(await deleteSavedQuery(client, q.id)), setError)) === undefined) return
    setDeleting(null)
    await refresh()
    setStatus(`Deleted "${q.name}"`)
  }
  async function share(q: SavedQueryJson, makePublic: boolean) {
    if ((await attempt(async () => ok(await shareSavedQuery(client, q.id, { public: makePublic })), setError)) === undefined) return
    await refresh()
    setStatus(makePublic ? `"${q.name}" is public` : `"${q.name}" is private`)
  }

  const mine = (q: SavedQueryJson) => q.user_id === userId
  return (
    <section class="saved" aria-label="Saved queries">
      <div class="row spread">
        <h3>Saved queries</h3>
        <button class="secondary" onClick={() => setSaving(!saving)} aria-expanded={saving}>Save query</button>
      </div>
      {saving && (
        <form class="card compact" aria-label="Save the query" onSubmit={save}>
          <label>Query name<input name="name" required maxLength={255} /></label>
          <label>Description<input name="description" maxLength={1024} /></label>
          <label class="inline"><input type="checkbox" name="public" /> Make public (everyone can run it)</label>
          <div class="row"><button type="submit">Save</button><button type="button" class="secondary" onClick={() => setSaving(false)}>Cancel</button></div>
        </form>
      )}
      {status && <p role="status" class="muted">{status}</p>}
      {error && <p role="alert" class="error">{error}</p>}
      {list && list.length === 0 && <p class="muted">No saved queries yet.</p>}
      {list && list.length > 0 && (
        <ul class="query-list" aria-label="Saved query list">
          {list.map((q) => (
            <li key={q.id}>
              {renaming === q.id ? (
                <form class="row" aria-label={`Rename ${q.name}`} onSubmit={(e) => rename(e, q)}>
                  <input name="name" aria-label={`New name for ${q.name}`} defaultValue={q.name} required maxLength={255} />
                  <button type="submit">Rename</button>
                  <button type="button" class="secondary" onClick={() => setRenaming(null)}>Cancel</button>
                </form>
              ) : (
                <div class="row">
                  <button class="link query-name" title={q.description || q.query} onClick={() => onLoad(q.query, true)}>{q.name}</button>
                  <span class="kind">{mine(q) ? (publicIds.has(q.id) ? 'mine, public' : 'mine') : q.scope === 'public' ? 'public' : 'shared'}</span>
                </div>
              )}
              {mine(q) && renaming !== q.id && (
                <div class="row actions">
                  <button class="secondary small" aria-label={`Rename ${q.name}`} onClick={() => setRenaming(q.id)}>Rename</button>
                  <button class="secondary small" aria-label={`Update ${q.name} with the editor's query`} onClick={() => update(q)}>Update</button>
                  <button class="secondary small" aria-label={publicIds.has(q.id) ? `Make ${q.name} private` : `Share ${q.name} publicly`} onClick={() => share(q, !publicIds.has(q.id))}>
                    {publicIds.has(q.id) ? 'Make private' : 'Share'}
                  </button>
                  {deleting === q.id ? (
                    <>
                      <button class="danger small" aria-label={`Confirm: delete ${q.name}`} onClick={() => remove(q)}>Confirm delete</button>
                      <button class="secondary small" onClick={() => setDeleting(null)}>Cancel</button>
                    </>
                  ) : (
                    <button class="secondary small" aria-label={`Delete ${q.name}`} onClick={() => setDeleting(q.id)}>Delete</button>
                  )}
                </div>
              )}
            </li>
          ))}
        </ul>
      )}
    </section>
  )
}

function Prebuilt({ onLoad }: { onLoad: (q: string, run: boolean) => void }) {
  const [filter, setFilter] = useState('')
  const groups = filterPrebuilt(filter)
  return (
    <section class="prebuilt" aria-label="Pre-built queries">
      <h3>Pre-built queries</h3>
      <label class="block">
        Filter queries
        <input type="search" value={filter} onInput={(e) => setFilter((e.target as HTMLInputElement).value)} />
      </label>
      {groups.map((c) => (
        <details key={c.category} open={filter.trim() !== ''}>
          <summary>{c.category} <span class="kind">{c.queries.length}</span></summary>
          <ul class="query-list" aria-label={c.category}>
            {c.queries.map((x) => (
              <li key={x.name}>
                <button class="link query-name" title={x.description} onClick={() => onLoad(x.query, true)}>{x.name}</button>
              </li>
            ))}
          </ul>
        </details>
      ))}
      {groups.length === 0 && <p class="muted">No pre-built query matches.</p>}
    </section>
  )
}
