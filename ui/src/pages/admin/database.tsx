// Database management (BloodHound's "Clear data"): choose what to delete, confirm by typing a phrase, then
// POST /api/v2/clear-database. Shown only to callers with db/Wipe and access to every environment
// (admin/model.ts); the API checks the same and refuses anyway. The request's body is built by wipeOptions.
import { useEffect, useState } from 'preact/hooks'
import { clearDatabase, listSourceKinds, type SourceKindJson } from '../../../../src/client/graph'
import { listAssetGroups, type AssetGroupJson } from '../../../../src/client/assetgroups'
import { client } from '../../api'
import { attempt } from '../../lib/attempt'
import { ErrorLine } from './common'
import { NO_WIPE, sourceKindLabel, WIPE_PHRASE, wipeConfirmed, wipeOptions, type WipeChoice } from './model'

function Box({ label, checked, disabled, onChange }: { label: string; checked: boolean; disabled?: boolean; onChange: (v: boolean) => void }) {
  return (
    <label class="check">
      <input type="checkbox" checked={checked} disabled={disabled} onChange={(e) => onChange((e.target as HTMLInputElement).checked)} /> {label}
    </label>
  )
}

const toggle = (list: readonly number[], id: number, on: boolean) => (on ? [...list.filter((x) => x !== id), id] : list.filter((x) => x !== id))

export default function DatabaseManagement() {
  const [error, setError] = useState('')
  const [kinds, setKinds] = useState<SourceKindJson[]>([])
  const [groups, setGroups] = useState<AssetGroupJson[]>([])
  const [choice, setChoice] = useState<WipeChoice>(NO_WIPE)
  const [confirming, setConfirming] = useState(false)
  const [typed, setTyped] = useState('')
  const [note, setNote] = useState('')
  const [busy, setBusy] = useState(false)
  useEffect(() => {
    attempt(() => listSourceKinds(client), setError).then((r) => r && setKinds(r.data.kinds))
    attempt(() => listAssetGroups(client), setError).then((r) => r && setGroups(r.data.asset_groups))
  }, [])
  const set = (patch: Partial<WipeChoice>) => {
    setChoice((c) => ({ ...c, ...patch }))
    setNote('')
  }
  function start() {
    setNote('')
    if (!wipeOptions(choice)) return setError('Select something to delete.')
    setError('')
    setTyped('')
    setConfirming(true)
  }
  async function confirm(ev: Event) {
    ev.preventDefault()
    const options = wipeOptions(choice)
    if (!options || !wipeConfirmed(typed)) return
    setBusy(true)
    const done = await attempt(() => clearDatabase(client, options).then(() => true), setError)
    setBusy(false)
    setConfirming(false)
    if (done) {
      setChoice(NO_WIPE)
      setNote('Deletion requested. Graph data is deleted in the background; Data pipeline shows "purging" until it is done, then analysis runs.')
    }
  }
  return (
    <section aria-label="Database management">
      <h2>Database management</h2>
      <p class="warning">Deleting data cannot be undone. It applies to every environment and every user of this service.</p>
      <ErrorLine error={error} />
      <form
        aria-label="Data to delete"
        onSubmit={(e) => {
          e.preventDefault()
          start()
        }}
      >
        <fieldset>
          <legend>Graph data</legend>
          <Box label="All collected graph data" checked={choice.allGraphData} onChange={(v) => set({ allGraphData: v })} />
          {kinds.map((k) => (
            <Box
              key={k.id}
              label={sourceKindLabel(k.name)}
              checked={choice.allGraphData || choice.sourceKinds.includes(k.id)}
              disabled={choice.allGraphData}
              onChange={(v) => set({ sourceKinds: toggle(choice.sourceKinds, k.id, v) })}
            />
          ))}
          <Box label="Session relationships (HasSession)" checked={choice.sessions} onChange={(v) => set({ sessions: v })} />
        </fieldset>
        <fieldset>
          <legend>History and selectors</legend>
          <Box label="File ingest history" checked={choice.fileIngestHistory} onChange={(v) => set({ fileIngestHistory: v })} />
          <Box label="Data quality history" checked={choice.dataQualityHistory} onChange={(v) => set({ dataQualityHistory: v })} />
          {groups.map((g) => (
            <Box
              key={g.id}
              label={`Custom selectors of ${g.name}`}
              checked={choice.assetGroupSelectors.includes(g.id)}
              onChange={(v) => set({ assetGroupSelectors: toggle(choice.assetGroupSelectors, g.id, v) })}
            />
          ))}
        </fieldset>
        <p>
          <button type="submit" disabled={confirming}>Delete</button>
        </p>
      </form>
      {confirming && (
        <div role="alertdialog" aria-label="Confirm deletion" class="confirm card">
          <form aria-label="Confirmation" onSubmit={confirm}>
            <p>The data you selected will be deleted for everyone. This cannot be undone.</p>
            <label>
              Type “{WIPE_PHRASE}” to confirm
              <input value={typed} autoComplete="off" onInput={(e) => setTyped((e.target as HTMLInputElement).value)} />
            </label>{' '}
            <button type="submit" disabled={busy || !wipeConfirmed(typed)}>Confirm deletion</button>{' '}
            <button type="button" class="secondary" onClick={() => setConfirming(false)}>Cancel</button>
          </form>
        </div>
      )}
      {note && <p role="status">{note}</p>}
    </section>
  )
}
