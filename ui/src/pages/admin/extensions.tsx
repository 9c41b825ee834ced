// Graph extensions: the installed schemas, upload (create or replace) a schema JSON file, delete.
import { useEffect, useState } from 'preact/hooks'
import { deleteExtension, listExtensions, upsertExtension, type ExtensionSummaryJson } from '../../../../src/client/extensions'
import { client } from '../../api'
import { attempt } from '../../lib/attempt'
import { Confirm, ErrorLine } from './common'

export default function Extensions() {
  const [error, setError] = useState('')
  const [list, setList] = useState<ExtensionSummaryJson[] | null>(null)
  const [deleting, setDeleting] = useState<ExtensionSummaryJson | null>(null)
  const [note, setNote] = useState('')
  async function load() {
    const r = await attempt(() => listExtensions(client), setError)
    if (r) setList(r.data.extensions)
  }
  useEffect(() => {
    load()
  }, [])
  async function upload(ev: Event) {
    ev.preventDefault()
    const form = ev.currentTarget as HTMLFormElement
    const file = new FormData(form).get('schema')
    if (!(file instanceof File) || file.size === 0) return setError('choose a schema JSON file')
    const bytes = new Uint8Array(await file.arrayBuffer())
    const r = await attempt(() => upsertExtension(client, bytes), setError)
    if (r) (form.reset(), setNote(`Extension ${r.data.name} ${r.data.created ? 'installed' : 'updated'} (${r.data.node_kinds} node kinds, ${r.data.relationship_kinds} relationship kinds).`), load())
  }
  async function remove(x: ExtensionSummaryJson) {
    setDeleting(null)
    if (await attempt(() => deleteExtension(client, x.id), setError)) (setNote(`Extension ${x.name} deleted.`), load())
  }
  return (
    <section aria-label="Graph extensions">
      <h2>Graph extensions</h2>
      <ErrorLine error={error} />
      {note && <p role="status">{note}</p>}
      <form onSubmit={upload} class="card form" aria-label="Upload extension schema">
        <h3>Upload a schema</h3>
        <p class="muted">A schema with the name of an installed extension replaces it.</p>
        <label>Schema (JSON file)<input name="schema" type="file" accept=".json,application/json" required /></label>
        <button type="submit">Upload schema</button>
      </form>
      {deleting && <Confirm label="Delete extension" message={`Delete ${deleting.name}? Its kinds and findings go with it.`} onConfirm={() => remove(deleting)} onCancel={() => setDeleting(null)} />}
      {list && (
        <table class="list" aria-label="Installed extensions">
          <thead><tr><th scope="col">Name</th><th scope="col">Display name</th><th scope="col">Namespace</th><th scope="col">Version</th><th scope="col">Actions</th></tr></thead>
          <tbody>
            {list.length === 0 && <tr><td colSpan={5} class="muted">No extension installed.</td></tr>}
            {list.map((x) => (
              <tr key={x.id}>
                <td>{x.name}</td><td>{x.display_name}</td><td>{x.namespace}</td><td>{x.version}</td>
                <td>{x.is_builtin ? <span class="muted">built in</span> : <button class="secondary danger" aria-label={`Delete ${x.name}`} onClick={() => setDeleting(x)}>Delete</button>}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  )
}
