// The Explore page: search, pathfinding and Cypher modes; the answer drawn as a graph (loaded on first use, with
// icons and colours per kind, extension kinds included), its table view, the selected node's or relationship's
// panel, right-click actions, layouts and the JSON export.
import { lazy, Suspense } from 'preact/compat'
import { useEffect, useMemo, useRef, useState } from 'preact/hooks'
import { listCustomNodeKinds, search, shortestPath, type SearchResultJson } from '../../../../src/client/graph'
import { getExtension, listExtensions } from '../../../../src/client/extensions'
import { listAssetGroups, updateAssetGroupSelectors, type AssetGroupJson } from '../../../../src/client/assetgroups'
import type { UserJson } from '../../../../src/client/index'
import { canEditSelectors } from '../../lib/permissions'
import { client } from '../../api'
import { attempt } from '../../lib/attempt'
import { drawMode, edgeRows, emptyGraph, fromGraphAnswer, fromSearchResult, MAX_DRAWN_NODES, type ConsoleGraph, type ConsoleNode, type GraphAnswer } from './graph-model'
import { loadStyleTable, styleTable, type ExtensionNodeKind, type KindStyle } from './kind-style'
import { prefersSequential } from './layouts'
import { exportGraph, EXPORT_FILE_NAME, mergeGraphs } from './graph-ops'
import { tablePage, type TablePage } from './table-page'
import { KindIcon } from './kind-icon'
import type { LayoutName } from './graph-canvas'
import type { MenuAction } from './context-menu'

const GraphCanvas = lazy(() => import('./graph-canvas'))
const CypherPanel = lazy(() => import('./cypher-panel'))
const NodePanel = lazy(() => import('./node-panel'))
const EdgePanel = lazy(() => import('./edge-panel'))
const ContextMenu = lazy(() => import('./context-menu'))

type Mode = 'Search' | 'Pathfinding' | 'Cypher'
type Selection = { type: 'node'; id: string } | { type: 'edge'; index: number } | null
type Picked = Pick<SearchResultJson, 'objectid' | 'name' | 'type'>

const TIER_ZERO_TAG = 'admin_tier_0'
const OWNED_TAG = 'owned'

/** Node kinds of the installed non-built-in extensions (their colours and icons). */
async function extensionKinds(): Promise<ExtensionNodeKind[]> {
  const list = await listExtensions(client)
  const docs = await Promise.all(list.data.extensions.filter((e) => !e.is_builtin).map((e) => getExtension(client, e.id).catch(() => null)))
  return docs.flatMap((d) => (d ? d.data.node_kinds.map((k) => ({ name: k.name, icon: k.icon, color: k.color })) : []))
}

function download(name: string, text: string) {
  const url = URL.createObjectURL(new Blob([text], { type: 'application/json' }))
  const a = document.createElement('a')
  a.href = url
  a.download = name
  document.body.append(a)
  a.click()
  a.remove()
  setTimeout(() => URL.revokeObjectURL(url), 10_000)
}

export default function Explore() {
  const [mode, setMode] = useState<Mode>('Search')
  const [graph, setGraph] = useState<ConsoleGraph>(emptyGraph())
  const [selection, setSelection] = useState<Selection>(null)
  const [layout, setLayout] = useState<LayoutName>('force')
  const [start, setStart] = useState<Picked | null>(null)
  const [end, setEnd] = useState<Picked | null>(null)
  const [pathRun, setPathRun] = useState(0)
  const [menu, setMenu] = useState<{ node: ConsoleNode; x: number; y: number } | null>(null)
  const [status, setStatus] = useState('')
  const [error, setError] = useState('')
  const [me, setMe] = useState<UserJson | null>(null)
  const [styles, setStyles] = useState<Map<string, KindStyle>>(() => styleTable())
  const [groups, setGroups] = useState<AssetGroupJson[] | null>(null)

  // the drawing's module, and a sigma for a large answer made while the page is idle (graph-canvas.tsx, prepareSpare):
  // so that neither is paid for between Run and the drawn answer
  const resultArea = useRef<HTMLElement>(null)
  useEffect(() => {
    let open = true
    const ready = import('./graph-canvas').then((m) => (open && resultArea.current && m.prepareSpare(resultArea.current), m))
    return () => {
      open = false
      void ready.then((m) => m.dropSpare())
    }
  }, [])
  useEffect(() => {
    client.self().then((r) => setMe(r.data), () => {})
    // extension kinds under the custom node kinds (GET /api/v2/custom-nodes); each source on its own
    loadStyleTable({ extensionKinds, customNodeKinds: () => listCustomNodeKinds(client) }).then(setStyles, () => {})
  }, [])
  // Add to / Remove from Tier Zero change selectors: only with graph/ManageAssetGroups over every environment
  const mayTag = canEditSelectors(me)
  useEffect(() => {
    if (mayTag) listAssetGroups(client).then((r) => setGroups(r.data.asset_groups), () => {})
  }, [mayTag])

  /** A new answer: drawn in the layout it reads best in (paths left to right), nothing selected. */
  function show(g: ConsoleGraph, select: Selection = null, note = '') {
    setGraph(g)
    setSelection(select)
    setLayout(prefersSequential(g.nodes.length, g.edges) ? 'sequential' : 'force')
    setStatus(note)
  }
  function expand(g: ConsoleGraph) {
    setGraph((cur) => mergeGraphs(cur, g))
  }

  function actionsFor(node: ConsoleNode): MenuAction[] {
    const picked: Picked = { objectid: node.objectId, name: node.name, type: node.kind }
    const out: MenuAction[] = [
      { label: 'Set as starting node', run: () => (setStart(picked), setMode('Pathfinding'), setPathRun((n) => n + 1)) },
      { label: 'Set as ending node', run: () => (setEnd(picked), setMode('Pathfinding'), setPathRun((n) => n + 1)) },
    ]
    if (!mayTag || !groups) return out
    const group = (tag: string) => groups.find((g) => g.tag === tag)
    const selected = (g: AssetGroupJson | undefined) => !!g?.selectors.some((s) => s.selector === node.objectId)
    const change = async (g: AssetGroupJson | undefined, action: 'add' | 'remove', what: string) => {
      if (!g) return setError(`no asset group tagged ${what}`)
      const r = await attempt(() => updateAssetGroupSelectors(client, g.id, [{ selector_name: node.name, sid: node.objectId, action }]), setError)
      if (!r) return
      setStatus(`${node.name} ${action === 'add' ? 'added to' : 'removed from'} ${g.name}; the next analysis run applies it.`)
      listAssetGroups(client).then((x) => setGroups(x.data.asset_groups), () => {})
    }
    const owned = group(OWNED_TAG)
    const tierZero = group(TIER_ZERO_TAG)
    out.push(selected(owned) ? { label: 'Remove from Owned', run: () => change(owned, 'remove', OWNED_TAG) } : { label: 'Mark as owned', run: () => change(owned, 'add', OWNED_TAG) })
    out.push(
      selected(tierZero)
        ? { label: 'Remove from Tier Zero', run: () => change(tierZero, 'remove', TIER_ZERO_TAG) }
        : { label: 'Add to Tier Zero', run: () => change(tierZero, 'add', TIER_ZERO_TAG) },
    )
    return out
  }
  const openMenu = (id: string, x: number, y: number) => {
    const node = graph.nodes.find((n) => n.id === id)
    if (node) setMenu({ node, x, y })
  }

  const selectedNode = selection?.type === 'node' ? graph.nodes.find((n) => n.id === selection.id) : undefined
  const selectedEdge = selection?.type === 'edge' ? graph.edges[selection.index] : undefined
  return (
    <div class="explore">
      <aside class="side" aria-label="Explore controls">
        <div role="tablist" aria-label="Explore mode" class="tabs">
          {(['Search', 'Pathfinding', 'Cypher'] as Mode[]).map((m) => (
            <button role="tab" aria-selected={mode === m} key={m} onClick={() => setMode(m)}>{m}</button>
          ))}
        </div>
        <div role="tabpanel" aria-label={mode}>
          {mode === 'Search' && <SearchMode styles={styles} onResult={(g, id) => show(g, { type: 'node', id })} />}
          {mode === 'Pathfinding' && (
            <PathMode styles={styles} start={start} end={end} setStart={setStart} setEnd={setEnd} runToken={pathRun} onResult={(g) => show(g, null, `${g.nodes.length} nodes, ${g.edges.length} relationships`)} />
          )}
          {mode === 'Cypher' && (
            <Suspense fallback={<p class="muted">Loading…</p>}>
              <CypherPanel userId={me?.id ?? null} onResult={(g, note) => show(g, null, note)} />
            </Suspense>
          )}
        </div>
      </aside>
      <section class="result" aria-label="Result" ref={resultArea}>
        {status && <p role="status" class="note">{status}</p>}
        {error && <p role="alert" class="error">{error}</p>}
        <GraphResult
          graph={graph}
          styles={styles}
          layout={layout}
          setLayout={setLayout}
          onSelectNode={(id) => setSelection({ type: 'node', id })}
          onSelectEdge={(index) => setSelection({ type: 'edge', index })}
          onContextNode={openMenu}
        />
      </section>
      <Suspense fallback={null}>
        {selectedNode && <NodePanel key={selectedNode.objectId} node={selectedNode} styles={styles} onExpand={expand} onClose={() => setSelection(null)} />}
        {selectedEdge && (
          <EdgePanel
            edge={selectedEdge}
            source={graph.nodes.find((n) => n.id === selectedEdge.source)}
            target={graph.nodes.find((n) => n.id === selectedEdge.target)}
            onClose={() => setSelection(null)}
          />
        )}
        {menu && <ContextMenu node={menu.node} x={menu.x} y={menu.y} actions={actionsFor(menu.node)} onClose={() => setMenu(null)} />}
      </Suspense>
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

function ResultList({ results, label, styles, onPick }: { results: SearchResultJson[]; label: string; styles: Map<string, KindStyle>; onPick: (r: SearchResultJson) => void }) {
  if (results.length === 0) return null
  return (
    <ul class="results" aria-label={label}>
      {results.map((r) => (
        <li key={r.objectid}>
          <button class="result-item" onClick={() => onPick(r)}>
            <KindIcon kinds={r.type} table={styles} />
            <span class="name">{r.name || r.objectid}</span>
            <span class="kind">{r.type}</span>
          </button>
        </li>
      ))}
    </ul>
  )
}

function SearchMode({ styles, onResult }: { styles: Map<string, KindStyle>; onResult: (g: ConsoleGraph, id: string) => void }) {
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
      <ResultList results={results} styles={styles} label="Search results" onPick={(r) => onResult(fromSearchResult(r), r.objectid)} />
    </div>
  )
}

function NodePicker({ label, value, styles, onPick }: { label: string; value: Picked | null; styles: Map<string, KindStyle>; onPick: (r: Picked) => void }) {
  const [text, setText] = useState(value?.name ?? '')
  const [error, setError] = useState('')
  const results = useSearch(text, setError)
  useEffect(() => {
    if (value) setText(value.name)
  }, [value?.objectid])
  return (
    <div>
      <label class="block">
        {label}
        <input type="search" value={text} onInput={(e) => setText((e.target as HTMLInputElement).value)} />
      </label>
      {value && <p class="picked"><KindIcon kinds={value.type} table={styles} size={14} /> {value.name} <span class="kind">{value.type}</span></p>}
      {error && <p role="alert" class="error">{error}</p>}
      {!value || text !== value.name ? <ResultList results={results} styles={styles} label={`${label} results`} onPick={(r) => (onPick(r), setText(r.name))} /> : null}
    </div>
  )
}

function PathMode(p: {
  styles: Map<string, KindStyle>
  start: Picked | null
  end: Picked | null
  setStart: (r: Picked) => void
  setEnd: (r: Picked) => void
  runToken: number
  onResult: (g: ConsoleGraph) => void
}) {
  const [kinds, setKinds] = useState('')
  const [error, setError] = useState('')
  async function find() {
    if (!p.start || !p.end) return
    const r = await attempt(() => shortestPath(client, p.start!.objectid, p.end!.objectid, kinds.trim() ? `in:${kinds.trim()}` : undefined), setError)
    if (r) p.onResult(fromGraphAnswer(r.data as GraphAnswer))
  }
  // set from a node's menu: search as soon as both ends are known
  useEffect(() => {
    if (p.runToken > 0 && p.start && p.end) find()
  }, [p.runToken])
  return (
    <div>
      <NodePicker label="Start node" value={p.start} styles={p.styles} onPick={p.setStart} />
      <NodePicker label="End node" value={p.end} styles={p.styles} onPick={p.setEnd} />
      <label class="block">
        Relationship kinds (optional, comma-separated)
        <input value={kinds} onInput={(e) => setKinds((e.target as HTMLInputElement).value)} placeholder="MemberOf,AdminTo" />
      </label>
      <button onClick={find} disabled={!p.start || !p.end}>Find path</button>
      {error && <p role="alert" class="error">{error}</p>}
    </div>
  )
}

function GraphResult(p: {
  graph: ConsoleGraph
  styles: Map<string, KindStyle>
  layout: LayoutName
  setLayout: (l: LayoutName) => void
  onSelectNode: (id: string) => void
  onSelectEdge: (index: number) => void
  onContextNode: (id: string, x: number, y: number) => void
}) {
  const { graph } = p
  const mode = drawMode(graph)
  const rows = useMemo(() => edgeRows(graph), [graph])
  // the table is shown a page at a time (table-page.ts); a new answer starts at the first pages
  const [at, setAt] = useState({ graph, nodes: 0, edges: 0 })
  const pages = at.graph === graph ? at : { graph, nodes: 0, edges: 0 }
  const nodePage = tablePage(graph.nodes.length, pages.nodes)
  const edgePage = tablePage(rows.length, pages.edges)
  const turn = (which: 'nodes' | 'edges', by: number) => setAt({ ...pages, [which]: pages[which] + by })
  if (mode === 'empty') return <p class="muted empty">Search for an object, find a path, or run a Cypher query: the answer is drawn here.</p>
  const menuFromRow = (id: string) => (e: MouseEvent) => {
    e.preventDefault()
    const r = (e.currentTarget as HTMLElement).getBoundingClientRect()
    p.onContextNode(id, e.clientX || r.left + 20, e.clientY || r.bottom)
  }
  return (
    <div>
      <div class="toolbar" role="toolbar" aria-label="Graph controls">
        <fieldset class="layouts" disabled={mode !== 'graph'}>
          <legend>Layout</legend>
          {(
            [
              ['sequential', 'Sequential'],
              ['force', 'Force-directed'],
            ] as [LayoutName, string][]
          ).map(([v, label]) => (
            <label class="inline" key={v}>
              <input type="radio" name="layout" checked={p.layout === v} onChange={() => p.setLayout(v)} /> {label}
            </label>
          ))}
        </fieldset>
        <button class="secondary" onClick={() => download(EXPORT_FILE_NAME, exportGraph(graph))}>Export graph as JSON</button>
      </div>
      {mode === 'table-only' ? (
        <p role="status" class="warning">
          {graph.nodes.length.toLocaleString('en')} nodes: more than {MAX_DRAWN_NODES.toLocaleString('en')} are listed in the table only, not drawn.
        </p>
      ) : (
        <Suspense fallback={<div class="canvas muted">Loading the graph…</div>}>
          <GraphCanvas graph={graph} styles={p.styles} layout={p.layout} onSelectNode={p.onSelectNode} onSelectEdge={p.onSelectEdge} onContextNode={p.onContextNode} />
        </Suspense>
      )}
      <table aria-label="Graph as table" class="graph-table">
        <thead>
          <tr><th scope="col">Name</th><th scope="col">Kind</th><th scope="col">Object ID</th></tr>
        </thead>
        <tbody>
          {graph.nodes.slice(nodePage.start, nodePage.end).map((n) => (
            <tr key={n.id} onContextMenu={menuFromRow(n.id)}>
              <td><button class="link" onClick={() => p.onSelectNode(n.id)}>{n.name}</button></td>
              <td><KindIcon kinds={n.kinds?.length ? n.kinds : n.kind} table={p.styles} size={14} /> {n.kind}</td>
              <td>{n.objectId}</td>
            </tr>
          ))}
          {nodePage.pages > 1 && <Pager what="nodes" label="Nodes" at={nodePage} turn={(by) => turn('nodes', by)} />}
          {rows.length > 0 && <tr><th colSpan={3} scope="rowgroup">Relationships</th></tr>}
          {rows.slice(edgePage.start, edgePage.end).map((r, i) => (
            <tr key={`e${edgePage.start + i}`} class="edge-row">
              <td>{r.from}</td>
              <td><button class="link" aria-label={`${r.kind} from ${r.from} to ${r.to}`} onClick={() => p.onSelectEdge(edgePage.start + i)}>{r.kind}</button></td>
              <td>{r.to}</td>
            </tr>
          ))}
          {edgePage.pages > 1 && <Pager what="relationships" label="Relationships" at={edgePage} turn={(by) => turn('edges', by)} />}
        </tbody>
      </table>
    </div>
  )
}

/** A row of the table view with the page's range and its Previous / Next page buttons (named for what they page). */
function Pager({ what, label, at, turn }: { what: string; label: string; at: TablePage; turn: (by: number) => void }) {
  return (
    <tr class="more">
      <td colSpan={3}>
        <span aria-live="polite">{label} {at.range}</span>{' '}
        <button class="link" aria-label={`Previous page of ${what}`} disabled={!at.hasPrevious} onClick={() => turn(-1)}>Previous page</button>{' '}
        <button class="link" aria-label={`Next page of ${what}`} disabled={!at.hasNext} onClick={() => turn(1)}>Next page</button>
      </td>
    </tr>
  )
}
