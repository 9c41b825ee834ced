// The selected node's panel: its properties and the counted sections of its kind (sections.ts: members, member
// of, sessions, local admin rights, inbound/outbound object control, …) fed by the entity routes. Opening a
// section lists its objects and draws them into the graph (the walk from this node, `type=graph`), up to
// SECTION_GRAPH_LIMIT objects; a bigger section stays a list.
import { useEffect, useState } from 'preact/hooks'
import { adEntity, adRelated, adRelatedGraph, azureEntity, azureRelated, azureRelatedGraph, type AdEntitySegment } from '../../../../src/client/graph'
import { cypherQuery } from '../../../../src/client/cypher'
import { client } from '../../api'
import { attempt } from '../../lib/attempt'
import { fromGraphAnswer, type ConsoleGraph, type ConsoleNode, type GraphAnswer } from './graph-model'
import { countOf, SECTION_GRAPH_LIMIT, sectionsFor, type EntityKindSections, type Section } from './sections'
import { KindIcon } from './kind-icon'
import type { KindStyle } from './kind-style'

interface Item {
  objectId: string
  name: string
  kind: string
}

/** A page of a section's objects (the first 100). */
async function listSection(t: EntityKindSections, objectId: string, s: Section, limit = 100): Promise<{ count: number; items: Item[] }> {
  if (t.platform === 'ad') {
    const r = await adRelated(client, t.segment as AdEntitySegment, objectId, s.list, { limit })
    return { count: r.count, items: r.data.map((x) => ({ objectId: x.objectID, name: x.name || x.objectID, kind: x.label })) }
  }
  const r = await azureRelated(client, t.segment, objectId, s.list, { limit })
  return {
    count: r.count,
    items: r.data.map((x) => ({ objectId: String(x.props.objectid ?? ''), name: String(x.props.name ?? x.props.objectid ?? ''), kind: x.kind })),
  }
}

/** The section's objects as a graph: the walks from the node (type=graph), or the objects alone. */
async function sectionGraph(t: EntityKindSections, node: ConsoleNode, s: Section, items: Item[]): Promise<ConsoleGraph> {
  if (s.graph) {
    const r = t.platform === 'ad' ? await adRelatedGraph(client, t.segment as AdEntitySegment, node.objectId, s.list) : await azureRelatedGraph(client, t.segment, node.objectId, s.list)
    return fromGraphAnswer(r as GraphAnswer)
  }
  return { nodes: [node, ...items.map((i) => ({ id: i.objectId, name: i.name, kind: i.kind, objectId: i.objectId }))], edges: [] }
}

function formatValue(v: unknown): string {
  if (typeof v === 'string') return v
  if (Array.isArray(v)) return v.map((x) => (typeof x === 'string' ? x : JSON.stringify(x))).join(', ')
  return JSON.stringify(v)
}

export default function NodePanel({ node, styles, onExpand, onClose }: { node: ConsoleNode; styles: Map<string, KindStyle>; onExpand: (g: ConsoleGraph) => void; onClose: () => void }) {
  const kinds = node.kinds?.length ? node.kinds : [node.kind]
  const table = sectionsFor(kinds)
  const [props, setProps] = useState<Record<string, unknown> | null>(null)
  const [detail, setDetail] = useState<Record<string, unknown> | null>(null)
  const [extraCounts, setExtraCounts] = useState<Record<string, number>>({})
  const [error, setError] = useState('')

  useEffect(() => {
    setProps(null)
    setDetail(null)
    setExtraCounts({})
    let live = true
    ;(async () => {
      let d: Record<string, unknown> | null = null
      if (table) {
        try {
          d = table.platform === 'ad' ? (await adEntity(client, table.segment as AdEntitySegment, node.objectId, { counts: true })).data : (await azureEntity(client, table.segment, node.objectId, { counts: true })).data
        } catch {
          d = null // another kind than the route expects: properties from Cypher below
        }
      }
      if (!live) return
      if (d) {
        setDetail(d)
        setProps((d.props as Record<string, unknown>) ?? {})
        // sections whose count the detail does not hold: from their list's count
        const missing = table!.sections.filter((s) => countOf(s, d) === undefined)
        const got: Record<string, number> = {}
        await Promise.all(missing.map(async (s) => {
          const r = await listSection(table!, node.objectId, s, 1).catch(() => null)
          if (r) got[s.list] = r.count
        }))
        if (live) setExtraCounts(got)
        return
      }
      // properties by a one-row Cypher read (object id escaped for a string literal)
      const id = node.objectId.replace(/\\/g, '\\\\').replace(/'/g, "\\'")
      const r = await attempt(() => cypherQuery(client, `MATCH (n) WHERE n.objectid = '${id}' RETURN n LIMIT 1`, true), setError)
      const first = r ? Object.values((r.data as { nodes: Record<string, { properties?: Record<string, unknown> }> }).nodes)[0] : undefined
      if (live) setProps(first?.properties ?? {})
    })()
    return () => {
      live = false
    }
  }, [node.objectId])

  return (
    <aside class="panel" aria-label={`${node.name} properties`}>
      <header>
        <h2><KindIcon kinds={kinds} table={styles} /> {node.name}</h2>
        <button class="secondary" onClick={onClose} aria-label="Close panel">×</button>
      </header>
      <p class="muted">
        {kinds.filter((k) => k !== 'Base' && k !== 'AZBase').join(', ')}
        {node.tierZero ? ' · Tier Zero' : ''}
        {node.owned ? ' · Owned' : ''}
      </p>
      {error && <p role="alert" class="error">{error}</p>}
      {table && (detail || Object.keys(extraCounts).length > 0) && (
        <div class="sections">
          {table.sections.map((s) => (
            <SectionView key={`${node.objectId}:${s.list}`} t={table} node={node} section={s} count={countOf(s, detail) ?? extraCounts[s.list]} onExpand={onExpand} styles={styles} />
          ))}
        </div>
      )}
      <h3>Properties</h3>
      <dl>
        <dt>Object ID</dt>
        <dd>{node.objectId}</dd>
        {props &&
          Object.entries(props)
            .filter(([k]) => k !== 'objectid')
            .sort(([a], [b]) => a.localeCompare(b))
            .map(([k, v]) => [<dt key={`k${k}`}>{k}</dt>, <dd key={`v${k}`}>{formatValue(v)}</dd>])}
      </dl>
    </aside>
  )
}

function SectionView({ t, node, section, count, onExpand, styles }: { t: EntityKindSections; node: ConsoleNode; section: Section; count: number | undefined; onExpand: (g: ConsoleGraph) => void; styles: Map<string, KindStyle> }) {
  const [open, setOpen] = useState(false)
  const [items, setItems] = useState<Item[] | null>(null)
  const [total, setTotal] = useState<number | null>(null)
  const [note, setNote] = useState('')
  const [error, setError] = useState('')
  async function toggle() {
    const next = !open
    setOpen(next)
    if (!next || items) return
    const page = await attempt(() => listSection(t, node.objectId, section), setError)
    if (!page) return
    setItems(page.items)
    setTotal(page.count)
    if (page.count === 0) return
    if (page.count >= SECTION_GRAPH_LIMIT) return setNote(`${page.count.toLocaleString('en')} objects: too many to draw, listed only.`)
    const g = await attempt(() => sectionGraph(t, node, section, page.items), setError)
    if (g) {
      onExpand(g)
      setNote('Drawn into the graph.')
    }
  }
  const label = `${section.label} (${count ?? '…'})`
  return (
    <div class="section">
      <button class="section-toggle" aria-expanded={open} onClick={toggle} disabled={count === 0}>{label}</button>
      {open && (
        <div class="section-body">
          {error && <p role="alert" class="error">{error}</p>}
          {items && items.length === 0 && <p class="muted">None.</p>}
          {items && items.length > 0 && (
            <ul aria-label={`${section.label} of ${node.name}`} class="section-list">
              {items.map((i) => (
                <li key={i.objectId}><KindIcon kinds={i.kind} table={styles} size={14} /> {i.name}</li>
              ))}
            </ul>
          )}
          {total !== null && items && total > items.length && <p class="muted">First {items.length} of {total.toLocaleString('en')}.</p>}
          {note && <p class="muted" role="status">{note}</p>}
        </div>
      )}
    </div>
  )
}
