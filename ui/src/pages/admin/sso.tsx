// SSO providers: list (with the URLs to give the identity provider), create a SAML provider from the IdP's
// metadata file, delete (its users can no longer sign in through it).
import { useEffect, useState } from 'preact/hooks'
import { createSamlProvider, deleteSsoProvider, listSsoProviders, type SsoProviderJson } from '../../../../src/client/saml'
import { client } from '../../api'
import { attempt } from '../../lib/attempt'
import { Confirm, ErrorLine } from './common'

export default function SsoProviders() {
  const [error, setError] = useState('')
  const [providers, setProviders] = useState<SsoProviderJson[] | null>(null)
  const [deleting, setDeleting] = useState<SsoProviderJson | null>(null)
  const [note, setNote] = useState('')
  async function load() {
    const r = await attempt(() => listSsoProviders(client), setError)
    if (r) setProviders(r.data)
  }
  useEffect(() => {
    load()
  }, [])
  async function create(ev: Event) {
    ev.preventDefault()
    const form = ev.currentTarget as HTMLFormElement
    const f = new FormData(form)
    const file = f.get('metadata')
    if (!(file instanceof File) || file.size === 0) return setError('choose the identity provider’s metadata XML file')
    const r = await attempt(() => createSamlProvider(client, { name: String(f.get('name') ?? ''), metadata: file, fileName: file.name }), setError)
    if (r) (form.reset(), setNote(`Provider ${r.data.name} created.`), load())
  }
  async function remove(p: SsoProviderJson) {
    setDeleting(null)
    const r = await attempt(() => deleteSsoProvider(client, p.id), setError)
    if (r) (setNote(`Provider ${p.name} deleted; ${r.data.affected_users.length} user(s) unlinked.`), load())
  }
  return (
    <section aria-label="SSO providers">
      <h2>SSO providers</h2>
      <ErrorLine error={error} />
      {note && <p role="status">{note}</p>}
      <form onSubmit={create} class="card form" aria-label="Create SAML provider">
        <h3>Create SAML provider</h3>
        <label>Name<input name="name" required maxLength={200} /></label>
        <label>Identity provider metadata (XML file)<input name="metadata" type="file" accept=".xml,application/xml,text/xml" required /></label>
        <button type="submit">Create provider</button>
      </form>
      {deleting && <Confirm label="Delete SSO provider" message={`Delete ${deleting.name}? Users who sign in through it lose access.`} onConfirm={() => remove(deleting)} onCancel={() => setDeleting(null)} />}
      {providers && (
        <table class="list" aria-label="SSO providers list">
          <thead><tr><th scope="col">Name</th><th scope="col">Type</th><th scope="col">Sign-in URL</th><th scope="col">ACS (callback) URL</th><th scope="col">SP metadata</th><th scope="col">Actions</th></tr></thead>
          <tbody>
            {providers.length === 0 && <tr><td colSpan={6} class="muted">No SSO provider.</td></tr>}
            {providers.map((p) => (
              <tr key={p.id}>
                <td>{p.name}</td><td>{p.type}</td><td><code>{p.login_uri}</code></td><td><code>{p.callback_uri}</code></td>
                <td><code>{p.type === 'SAML' ? p.details?.sp_metadata_uri : ''}</code></td>
                <td><button class="secondary danger" aria-label={`Delete ${p.name}`} onClick={() => setDeleting(p)}>Delete</button></td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  )
}
