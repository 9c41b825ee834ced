// Privilege zones: the tags (Tier Zero, Owned, custom labels); a tag's selectors (object ids and Cypher seeds)
// with create / edit / delete for users allowed to (graph/ManageAssetGroups over every environment:
// canEditSelectors in lib/permissions.ts), and its members, paged.
import { useEffect, useState } from 'preact/hooks'
import {
  createTagSelector,
  deleteTagSelector,
  listAssetGroupTags,
  listTagMembers,
  listTagSelectors,
  updateTagSelector,
  type AssetGroupTagJson,
  type AssetGroupTagMemberJson,
  type AssetGroupTagSelectorJson,
} from '../../../src/client/assetgroups'
import { client } from '../api'
import { Pager } from '../components/pager'
import { attempt } from '../lib/attempt'
import { parseSeeds } from '../lib/seeds'
import { canEditSelectors, useMe } from '../lib/session'

const TAG_TYPES: Record<number, string> = { 1: 'Tier', 2: 'Label', 3: 'Owned' }
const SEED_TYPES: Record<number, string> = { 1: 'Object ID', 2: 'Cypher' }
const MEMBERS_PAGE = 25

export default function Zones() {
  const [tags, setTags] = useState<AssetGroupTagJson[] | null>(null)
  const [tagId, setTagId] = useState<number | null>(null)
  const [error, setError] = useState('')
  const load = () =>
    attempt(() => listAssetGroupTags(client, { counts: true }), setError).then((r) => {
      if (!r) return
      setTags(r.data.tags)
      setTagId((id) => id ?? r.data.tags[0]?.id ?? null)
    })
  useEffect(() => {
    load()
  }, [])
  const tag = tags?.find((t) => t.id === tagId) ?? null
  return (
    <main class="page">
      <h1>Privilege zones</h1>
      {error && <p role="alert" class="error">{error}</p>}
      {tags && (
        <table aria-label="Privilege zones" class="list">
          <thead><tr><th scope="col">Name</th><th scope="col">Type</th><th scope="col">Selectors</th><th scope="col">Members</th><th scope="col">Description</th><th scope="col">Details</th></tr></thead>
          <tbody>
            {tags.map((t) => (
              <tr key={t.id} aria-selected={t.id === tagId}>
                <td>{t.name}</td>
                <td>{TAG_TYPES[t.type] ?? String(t.type)}</td>
                <td>{t.counts?.selectors ?? ''}</td>
                <td>{t.counts?.members ?? ''}</td>
                <td>{t.description}</td>
                <td><button class="link" onClick={() => setTagId(t.id)} aria-label={`Open ${t.name}`}>Open</button></td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {tag && <TagView tag={tag} key={tag.id} onChanged={load} />}
    </main>
  )
}

function TagView({ tag, onChanged }: { tag: AssetGroupTagJson; onChanged: () => void }) {
  return (
    <section aria-label={tag.name} class="zone">
      <h2>{tag.name}</h2>
      <Selectors tag={tag} onChanged={onChanged} />
      <Members tag={tag} />
    </section>
  )
}

function Selectors({ tag, onChanged }: { tag: AssetGroupTagJson; onChanged: () => void }) {
  const me = useMe()
  const mayEdit = canEditSelectors(me)
  const [rows, setRows] = useState<AssetGroupTagSelectorJson[] | null>(null)
  const [editing, setEditing] = useState<AssetGroupTagSelectorJson | 'new' | null>(null)
  const [error, setError] = useState('')
  const load = () => attempt(() => listTagSelectors(client, tag.id, { limit: 200 }), setError).then((r) => r && setRows(r.data.selectors))
  useEffect(() => {
    load()
  }, [])
  async function remove(s: AssetGroupTagSelectorJson) {
    if (!confirm(`Delete the selector "${s.name}"? The next analysis no longer applies it.`)) return
    const ok = await attempt(() => deleteTagSelector(client, tag.id, s.id).then(() => true), setError)
    if (ok) (load(), onChanged())
  }
  return (
    <div>
      <h3>Selectors</h3>
      {error && <p role="alert" class="error">{error}</p>}
      {rows && rows.length === 0 && <p class="muted">No selectors.</p>}
      {rows && rows.length > 0 && (
        <table aria-label={`${tag.name} selectors`} class="list">
          <thead><tr><th scope="col">Name</th><th scope="col">Seeds</th><th scope="col">Members</th><th scope="col">Status</th>{mayEdit && <th scope="col">Actions</th>}</tr></thead>
          <tbody>
            {rows.map((s) => (
              <tr key={s.id}>
                <td>{s.name}{s.description && <div class="muted small">{s.description}</div>}</td>
                <td>
                  <ul class="seeds">{s.seeds.map((seed, i) => <li key={i}><span class="kind">{SEED_TYPES[seed.type] ?? seed.type}</span> <code>{seed.value}</code></li>)}</ul>
                </td>
                <td>{s.evaluation.members ?? '—'}</td>
                <td>{s.disabled_at.valid ? 'disabled' : s.evaluation.error ? `failing: ${s.evaluation.error}` : 'active'}</td>
                {mayEdit && (
                  <td class="actions">
                    <button class="secondary small" onClick={() => setEditing(s)} aria-label={`Edit ${s.name}`}>Edit</button>
                    {!s.is_default && <button class="secondary small" onClick={() => remove(s)} aria-label={`Delete ${s.name}`}>Delete</button>}
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {mayEdit && editing === null && <button onClick={() => setEditing('new')}>New selector</button>}
      {mayEdit && editing !== null && (
        <SelectorForm
          tag={tag}
          selector={editing === 'new' ? null : editing}
          onDone={(changed) => {
            setEditing(null)
            if (changed) (load(), onChanged())
          }}
        />
      )}
    </div>
  )
}

function SelectorForm({ tag, selector, onDone }: { tag: AssetGroupTagJson; selector: AssetGroupTagSelectorJson | null; onDone: (changed: boolean) => void }) {
  const first = selector?.seeds[0]?.type ?? 1
  const [seedType, setSeedType] = useState<1 | 2>(first)
  const [error, setError] = useState('')
  const [busy, setBusy] = useState(false)
  async function submit(ev: Event) {
    ev.preventDefault()
    const f = new FormData(ev.currentTarget as HTMLFormElement)
    const input = { name: String(f.get('name') ?? '').trim(), description: String(f.get('description') ?? ''), seeds: parseSeeds(seedType, String(f.get('seeds') ?? '')) }
    setBusy(true)
    const r = await attempt(() => (selector ? updateTagSelector(client, tag.id, selector.id, input) : createTagSelector(client, tag.id, input)), setError)
    setBusy(false)
    if (r) onDone(true)
  }
  const verb = selector ? 'Save selector' : 'Create selector'
  return (
    <form class="card form" onSubmit={submit} aria-label={selector ? `Edit selector ${selector.name}` : `New selector of ${tag.name}`}>
      <label>Name<input name="name" required defaultValue={selector?.name ?? ''} /></label>
      <label>Description<input name="description" defaultValue={selector?.description ?? ''} /></label>
      <label>
        Seed type
        <select value={String(seedType)} onChange={(e) => setSeedType(Number((e.target as HTMLSelectElement).value) as 1 | 2)}>
          <option value="1">Object IDs (one per line)</option>
          <option value="2">Cypher query</option>
        </select>
      </label>
      <label>
        Seeds
        <textarea name="seeds" rows={4} required defaultValue={selector?.seeds.map((s) => s.value).join('\n') ?? ''} />
      </label>
      {error && <p role="alert" class="error">{error}</p>}
      <div class="row">
        <button type="submit" disabled={busy}>{verb}</button>
        <button type="button" class="secondary" onClick={() => onDone(false)}>Cancel</button>
      </div>
    </form>
  )
}

function Members({ tag }: { tag: AssetGroupTagJson }) {
  const [skip, setSkip] = useState(0)
  const [page, setPage] = useState<{ count: number; members: AssetGroupTagMemberJson[] } | null>(null)
  const [error, setError] = useState('')
  useEffect(() => {
    attempt(() => listTagMembers(client, tag.id, { skip, limit: MEMBERS_PAGE, sort_by: 'name' }), setError).then((r) => r && setPage({ count: r.count, members: r.data.members }))
  }, [skip])
  return (
    <div>
      <h3>Members</h3>
      {error && <p role="alert" class="error">{error}</p>}
      {page && page.count === 0 && <p class="muted">No members (members are selected by the analysis).</p>}
      {page && page.count > 0 && (
        <>
          <table aria-label={`${tag.name} members`} class="list">
            <thead><tr><th scope="col">Name</th><th scope="col">Kind</th><th scope="col">Object ID</th></tr></thead>
            <tbody>{page.members.map((m) => <tr key={m.id}><td>{m.name}</td><td>{m.primary_kind}</td><td>{m.object_id}</td></tr>)}</tbody>
          </table>
          <Pager skip={skip} limit={MEMBERS_PAGE} length={page.members.length} count={page.count} label="members" onSkip={setSkip} />
        </>
      )}
    </div>
  )
}
