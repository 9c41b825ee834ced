// Configuration (BloodHound's "Early Access Features" and configuration pages): the feature flags, with a toggle
// for the user-updatable ones, and the configuration parameters (password expiration window, Citrix RDP support;
// the others read-only). Writing needs app/WriteAppConfig; reading app/ReadAppConfig. Logic: config-model.ts.
import { useEffect, useState } from 'preact/hooks'
import { listConfigParameters, listFeatureFlags, setConfigParameter, toggleFeatureFlag } from '../../../../src/client/appcfg'
import { client } from '../../api'
import { attempt } from '../../lib/attempt'
import { ErrorLine } from './common'
import { durationText, flagViews, parameterValue, parameterViews, type FlagView, type ParameterView } from './config-model'

function Parameter({ p, saved, setError }: { p: ParameterView; saved: (m: string) => void; setError: (m: string) => void }) {
  async function submit(ev: Event) {
    ev.preventDefault()
    const f = new FormData(ev.currentTarget as HTMLFormElement)
    const value = parameterValue(p, p.kind === 'boolean' ? f.get('value') === 'on' : String(f.get('value') ?? ''))
    if (!value) return
    const r = await attempt(() => setConfigParameter(client, p.key, value), setError)
    if (r) saved(`${p.name} saved.`)
  }
  if (p.kind === 'readonly')
    return (
      <div class="card">
        <h3>{p.name}</h3>
        <p class="muted">{p.description}</p>
        <p aria-label={p.name}><code>{p.value}</code> <span class="muted">(read-only)</span></p>
      </div>
    )
  return (
    <form onSubmit={submit} class="card form" aria-label={p.name}>
      <h3>{p.name}</h3>
      <p class="muted">{p.description}</p>
      {p.kind === 'duration' ? (
        <label>
          Duration (ISO 8601, e.g. P90D){p.value ? ` — now ${durationText(p.value)}` : ''}
          <input name="value" defaultValue={p.value} required disabled={!p.editable} pattern="[Pp].+" />
        </label>
      ) : (
        <label class="check"><input type="checkbox" name="value" defaultChecked={p.value} disabled={!p.editable} /> Enabled</label>
      )}
      {p.editable ? <button type="submit">Save</button> : <p class="muted">Read-only for your role.</p>}
    </form>
  )
}

export default function Configuration({ canWrite }: { canWrite: boolean }) {
  const [error, setError] = useState('')
  const [note, setNote] = useState('')
  const [flags, setFlags] = useState<FlagView[] | null>(null)
  const [params, setParams] = useState<ParameterView[] | null>(null)
  async function load() {
    const [f, p] = await Promise.all([attempt(() => listFeatureFlags(client), setError), attempt(() => listConfigParameters(client), setError)])
    if (f) setFlags(flagViews(f.data, canWrite))
    if (p) setParams(parameterViews(p.data, canWrite))
  }
  useEffect(() => {
    load()
  }, [])
  async function toggle(f: FlagView) {
    const r = await attempt(() => toggleFeatureFlag(client, f.id), setError)
    if (r) (setNote(`${f.name}: ${r.data.enabled ? 'on' : 'off'}.`), load())
  }
  const saved = (m: string) => (setNote(m), load())
  return (
    <section aria-label="Configuration">
      <h2>Configuration</h2>
      <ErrorLine error={error} />
      {note && <p role="status">{note}</p>}
      <h3>Early access features</h3>
      {flags && (
        <table class="list" aria-label="Feature flags">
          <thead><tr><th scope="col">Feature</th><th scope="col">Description</th><th scope="col">State</th></tr></thead>
          <tbody>
            {flags.map((f) => (
              <tr key={f.id}>
                <th scope="row">{f.name}</th>
                <td>{f.description}</td>
                <td>
                  {f.toggle ? (
                    <label class="check">
                      <input type="checkbox" role="switch" checked={f.enabled} aria-label={f.name} onChange={() => toggle(f)} /> {f.enabled ? 'On' : 'Off'}
                    </label>
                  ) : (
                    <span>{f.enabled ? 'On' : 'Off'} <span class="muted">({f.note})</span></span>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <h3>Parameters</h3>
      {params && <div class="cards">{params.map((p) => <Parameter key={`${p.key}:${String(p.value)}`} p={p} saved={saved} setError={setError} />)}</div>}
    </section>
  )
}
