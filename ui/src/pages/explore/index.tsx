// The Explore page: search, pathfinding and Cypher modes; the answer drawn as a graph (loaded on first use) with
// its table view, and the selected node's panel.
import { lazy, Suspense } from 'preact/compat'
import { useEffect, useRef, useState } from 'preact/hooks'
import { search, shortestPath, type SearchResultJson } from '../../../../src/client/graph'
import { cypherQuery } from '../../../../src/client/cypher'
import { client } from '../../api'
import { attempt } from '../../lib/attempt'
import { drawMode, edgeRows, emptyGraph, fromGraphAnswer, fromSearchResult, kindColour, MAX_DRAWN_NODES, type ConsoleGraph, type GraphAnswer } from './graph-model'

const GraphCanvas = lazy(() => import('./graph-canvas'))

type Mode = 'Search' | 'Pathfinding' | 'Cypher'

export default function Explore() {
  const [mode, setMode] = useState<Mode>('Search')
  const [graph, setGraph] = useState<ConsoleGraph>(emptyGraph())
  const [selected, setSelected] = useState<string | null>(null)
  return (
    <div class="explore">
      <aside class="side">
        <div role="tablist" aria-label="Explore mode" class="tabs">
          {(['Search', 'Pathfinding', 'Cypher'] as Mode[]).map((m) => (
            <button role="tab" aria-selected={mode === m} key={m} onClick={() => setMode(m)}>{m}</button>
          ))}
        </div>
        <div role="tabpanel" aria-label={mode}>
          {mode === 'Search' && <SearchMode onResult={(g, id) => (setGraph(g), setSelected(id))} />}
          {mode === 'Pathfinding' && <PathMode onResult={(g) => (setGraph(g), setSelected(null))} />}
          {mode === 'Cypher' && <CypherMode onResult={(g) => (setGraph(g), setSelected(null))} />}
        </div>
      </aside>
      <section class="result" aria-label="Result">
        <GraphResult graph={graph} onSelect={setSelected} />
      </section>
      {selected && <NodePanel node={graph.nodes.find((n) => n.id === selected) ?? null} onClose={() => setSelected(null)} />}
    </div>
  )
}

function useSearch(text: string, setError: (m: string) => void) {
  const [results, setResults] = useState<SearchResultJson[]>([])
  useEffect(() => {
    const q = text.trim()
    if (q.length < 2) return setResults([])
    const t = setTimeout(() => {
      attempt(() => search(client, { q, limit: 10 }), setError).then((r) => setResults(r?.data ?? []))
    }, 250)
    return () => clearTimeout(t)
  }, [text])
  return results
}

function ResultList({ results, label, onPick }: { results: SearchResultJson[]; label: string; onPick: (r: SearchResultJson) => void }) {
  if (results.length === 0) return null
  return (
    <ul class="results" aria-label={label}>
      {results.map((r) => (
        <li key={r.objectid}>
          <button class="result-item" onClick={() => onPick(r)}>
            <span class="dot" style={{ background: kindColour(r.type) }} aria-hidden="true" />
            <span class="name">{r.name || r.objectid}</span>
            <span class="kind">{r.type}</span>
          </button>
        </li>
      ))}
    </ul>
  )
}

function SearchMode({ onResult }: { onResult: (g: ConsoleGraph, id: string) => void }) {
  const [text, setText] = useState('')
  const [error, setError] = useState('')
  const results = useSearch(text, setError)
  return (
    <div>
      <label class="block">
        Search
        <input type="search" value={text} placeholder="name or object id" onInput={(e) => setText((e.target as HTMLInputElement).value)} />
      </label>
      {error && <p role="alert" class="error">{error}</p>}
      <ResultList results={results} label="Search results" onPick={(r) => onResult(fromSearchResult(r), r.objectid)} />
    </div>
  )
}

function NodePicker({ label, value, onPick }: { label: string; value: SearchResultJson | null; onPick: (r: SearchResultJson) => void }) {
  const [text, setText] = useState('')
  const [error, setError] = useState('')
  const results = useSearch(text, setError)
  return (
    <div>
      <label class="block">
        {label}
        <input type="search" value={text} onInput={(e) => setText((e.target as HTMLInputElement).value)} />
      </label>
      {value && <p class="picked">{value.name} <span class="kind">{value.type}</span></p>}
      {error && <p role="alert" class="error">{error}</p>}
      {!value || text !== value.name ? (
        <ResultList results={results} label={`${label} results`} onPick={(r) => (onPick(r), setText(r.name))} />
      ) : null}
    </div>
  )
}

function PathMode({ onResult }: { onResult: (g: ConsoleGraph) => void }) {
  const [start, setStart] = useState<SearchResultJson | null>(null)
  const [end, setEnd] = useState<SearchResultJson | null>(null)
  const [kinds, setKinds] = useState('')
  const [error, setError] = useState('')
  async function find() {
    if (!start || !end) return
    const r = await attempt(() => shortestPath(client, start.objectid, end.objectid, kinds.trim() ? `in:${kinds.trim()}` : undefined), setError)
    if (r) onResult(fromGraphAnswer(r.data as GraphAnswer))
  }
  return (
    <div>
      <NodePicker label="Start node" value={start} onPick={setStart} />
      <NodePicker label="End node" value={end} onPick={setEnd} />
      <label class="block">
        Relationship kinds (optional, comma-separated)
        <input value={kinds} onInput={(e) => setKinds((e.target as HTMLInputElement).value)} placeholder="MemberOf,AdminTo" />
      </label>
      <button onClick={find} disabled={!start || !end}>Find path</button>
      {error && <p role="alert" class="error">{error}</p>}
    </div>
  )
}

function CypherMode({ onResult }: { onResult: (g: ConsoleGraph) => void }) {
  const holder = useRef<HTMLDivElement>(null)
  const text = useRef('MATCH (n:User) RETURN n LIMIT 25')
  const [error, setError] = useState('')
  const [loaded, setLoaded] = useState(false)
  const [busy, setBusy] = useState(false)
  const runRef = useRef<() => void>(() => {})
  async function run() {
    setBusy(true)
    const r = await attempt(() => cypherQuery(client, text.current), setError)
    setBusy(false)
    if (r) onResult(fromGraphAnswer(r.data as unknown as GraphAnswer))
  }
  runRef.current = run
  useEffect(() => {
    let destroy: (() => void) | undefined
    let live = true
    import('./cypher-editor').then(({ mountCypherEditor }) => {
      if (!live || !holder.current) return
      destroy = mountCypherEditor(holder.current, text.current, (t) => (text.current = t), () => runRef.current())
      setLoaded(true)
    })
    return () => {
      live = false
      destroy?.()
    }
  }, [])
  return (
    <div>
      <p class="label">Cypher query</p>
      <div ref={holder} class="editor">{!loaded && <p class="muted">Loading the editor…</p>}</div>
      <button onClick={run} disabled={busy}>Run</button>
      {error && <p role="alert" class="error">{error}</p>}
    </div>
  )
}

function GraphResult({ graph, onSelect }: { graph: ConsoleGraph; onSelect: (id: string) => void }) {
  const mode = drawMode(graph)
  if (mode === 'empty') return <p class="muted empty">Search for an object, find a path, or run a Cypher query: the answer is drawn here.</p>
  const rows = edgeRows(graph)
  return (
    <div>
      {mode === 'table-only' ? (
        <p role="status" class="warning">
          {graph.nodes.length.toLocaleString('en')} nodes: more than {MAX_DRAWN_NODES.toLocaleString('en')} are listed in the table only, not drawn.
        </p>
      ) : (
        <Suspense fallback={<div class="canvas muted">Loading the graph…</div>}>
          <GraphCanvas graph={graph} onSelect={onSelect} />
        </Suspense>
      )}
      <table aria-label="Graph as table" class="graph-table">
        <thead>
          <tr><th scope="col">Name</th><th scope="col">Kind</th><th scope="col">Object ID</th></tr>
        </thead>
        <tbody>
          {graph.nodes.map((n) => (
            <tr key={n.id}>
              <td><button class="link" onClick={() => onSelect(n.id)}>{n.name}</button></td>
              <td>{n.kind}</td>
              <td>{n.objectId}</td>
            </tr>
          ))}
          {rows.length > 0 && <tr><th colSpan={3} scope="rowgroup">Relationships</th></tr>}
          {rows.map((r, i) => (
            <tr key={`e${i}`} class="edge-row">
              <td>{r.from}</td>
              <td>{r.kind}</td>
              <td>{r.to}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  )
}

function NodePanel({ node, onClose }: { node: ConsoleGraph['nodes'][number] | null; onClose: () => void }) {
  const [props, setProps] = useState<Record<string, unknown> | null>(null)
  const [error, setError] = useState('')
  useEffect(() => {
    setProps(null)
    if (!node) return
    // the object's properties, through the typed client (a Cypher read by object id, parameters escaped)
    const id = node.objectId.replace(/\\/g, '\\\\').replace(/'/g, "\\'")
    attempt(() => cypherQuery(client, `MATCH (n) WHERE n.objectid = '${id}' RETURN n LIMIT 1`, true), setError).then((r) => {
      const first = r ? Object.values((r.data as { nodes: Record<string, { properties?: Record<string, unknown> }> }).nodes)[0] : undefined
      setProps(first?.properties ?? {})
    })
  }, [node?.objectId])
  if (!node) return null
  return (
    <aside class="panel" aria-label={`${node.name} properties`}>
      <header>
        <h2>{node.name}</h2>
        <button class="secondary" onClick={onClose} aria-label="Close panel">×</button>
      </header>
      <p><span class="dot" style={{ background: kindColour(node.kind) }} aria-hidden="true" /> {node.kind}</p>
      {error && <p role="alert" class="error">{error}</p>}
      <h3>Properties</h3>
      <dl>
        <dt>Object ID</dt>
        <dd>{node.objectId}</dd>
        {props &&
          Object.entries(props)
            .filter(([k]) => k !== 'objectid')
            .sort(([a], [b]) => a.localeCompare(b))
            .map(([k, v]) => [<dt key={`k${k}`}>{k}</dt>, <dd key={`v${k}`}>{typeof v === 'string' ? v : JSON.stringify(v)}</dd>])}
      </dl>
    </aside>
  )
}
