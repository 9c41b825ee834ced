// SSO providers, SAML and OIDC: list (with what to register at the identity provider), create a SAML provider
// from the IdP's metadata file or an OIDC provider from its issuer and client, edit, delete (its users can no
// longer sign in through it). The forms' logic is in sso-model.ts.
import { useEffect, useState } from 'preact/hooks'
import {
  createOidcProvider,
  createSamlProvider,
  deleteSsoProvider,
  listSsoProviders,
  updateOidcProvider,
  updateSsoProvider,
  type SsoProviderJson,
} from '../../../../src/client/saml'
import type { RoleJson } from '../../../../src/client/index'
import { client } from '../../api'
import { attempt } from '../../lib/attempt'
import { Confirm, ErrorLine } from './common'
import { oidcCreateBody, oidcUpdateBody, providerSummary, provisionFields, samlCreateProvision, samlUpdateInput, type ProvisionFields } from './sso-model'

/** Auto-provisioning: create users on first sign-in, their default role, and whether the IdP's role claim wins. */
function Provisioning({ value, roles, onChange }: { value: ProvisionFields; roles: RoleJson[]; onChange: (v: ProvisionFields) => void }) {
  return (
    <fieldset>
      <legend>Auto-provisioning</legend>
      <label class="check">
        <input type="checkbox" checked={value.enabled} onChange={(e) => onChange({ ...value, enabled: (e.target as HTMLInputElement).checked })} /> Create users on first sign-in
      </label>
      {value.enabled && (
        <>
          <label>
            Default role
            <select value={String(value.defaultRoleId)} onChange={(e) => onChange({ ...value, defaultRoleId: Number((e.target as HTMLSelectElement).value) })}>
              <option value="0">Choose a role</option>
              {roles.map((r) => <option key={r.id} value={String(r.id)}>{r.name}</option>)}
            </select>
          </label>
          <label class="check">
            <input type="checkbox" checked={value.roleProvision} onChange={(e) => onChange({ ...value, roleProvision: (e.target as HTMLInputElement).checked })} /> Use the role the identity provider names
          </label>
        </>
      )}
    </fieldset>
  )
}

const OFF: ProvisionFields = { enabled: false, defaultRoleId: 0, roleProvision: false }

function CreateSaml({ roles, done, setError }: { roles: RoleJson[]; done: (m: string) => void; setError: (m: string) => void }) {
  const [provision, setProvision] = useState(OFF)
  async function submit(ev: Event) {
    ev.preventDefault()
    const form = ev.currentTarget as HTMLFormElement
    const f = new FormData(form)
    const file = f.get('metadata')
    if (!(file instanceof File) || file.size === 0) return setError('choose the identity provider’s metadata XML file')
    const ap = samlCreateProvision(provision)
    if (!ap.ok) return setError(ap.error)
    const r = await attempt(() => createSamlProvider(client, { name: String(f.get('name') ?? ''), metadata: file, fileName: file.name, autoProvision: ap.value }), setError)
    if (r) (form.reset(), setProvision(OFF), done(`Provider ${r.data.name} created.`))
  }
  return (
    <form onSubmit={submit} class="card form" aria-label="Create SAML provider">
      <h3>Create SAML provider</h3>
      <label>Name<input name="name" required maxLength={200} /></label>
      <label>Identity provider metadata (XML file)<input name="metadata" type="file" accept=".xml,application/xml,text/xml" required /></label>
      <Provisioning value={provision} roles={roles} onChange={setProvision} />
      <button type="submit">Create provider</button>
    </form>
  )
}

function CreateOidc({ roles, done, setError }: { roles: RoleJson[]; done: (m: string) => void; setError: (m: string) => void }) {
  const [provision, setProvision] = useState(OFF)
  async function submit(ev: Event) {
    ev.preventDefault()
    const form = ev.currentTarget as HTMLFormElement
    const f = new FormData(form)
    const body = oidcCreateBody({
      name: String(f.get('name') ?? ''),
      issuer: String(f.get('issuer') ?? ''),
      clientId: String(f.get('client_id') ?? ''),
      clientSecret: String(f.get('client_secret') ?? ''),
      provision,
    })
    if (!body.ok) return setError(body.error)
    const r = await attempt(() => createOidcProvider(client, body.value), setError)
    if (r) (form.reset(), setProvision(OFF), done(`Provider ${r.data.name} created. Register ${r.data.callback_uri} as its redirect URI.`))
  }
  return (
    <form onSubmit={submit} class="card form" aria-label="Create OIDC provider">
      <h3>Create OIDC provider</h3>
      <label>Name<input name="name" required maxLength={200} /></label>
      <label>Issuer URL<input name="issuer" type="url" required placeholder="https://login.example.com/" /></label>
      <label>Client ID<input name="client_id" required maxLength={1000} autocomplete="off" /></label>
      <label>Client secret (optional)<input name="client_secret" type="password" maxLength={4000} autocomplete="new-password" /></label>
      <Provisioning value={provision} roles={roles} onChange={setProvision} />
      <button type="submit">Create provider</button>
    </form>
  )
}

/** The edit form of one provider, by type. */
function Edit({ p, roles, done, cancel, setError }: { p: SsoProviderJson; roles: RoleJson[]; done: (m: string) => void; cancel: () => void; setError: (m: string) => void }) {
  const [provision, setProvision] = useState(provisionFields(p.config.auto_provision))
  async function submit(ev: Event) {
    ev.preventDefault()
    const f = new FormData(ev.currentTarget as HTMLFormElement)
    if (p.type === 'OIDC') {
      const body = oidcUpdateBody(p, {
        name: String(f.get('name') ?? ''),
        issuer: String(f.get('issuer') ?? ''),
        clientId: String(f.get('client_id') ?? ''),
        clientSecret: String(f.get('client_secret') ?? ''),
        removeSecret: f.get('remove_secret') === 'on',
        provision,
      })
      if (!body.ok) return setError(body.error)
      if (!body.value) return done(`Nothing changed for ${p.name}.`)
      const patch = body.value
      if (await attempt(() => updateOidcProvider(client, p.id, patch), setError)) done(`Provider ${patch.name ?? p.name} saved.`)
      return
    }
    const file = f.get('metadata')
    const input = samlUpdateInput(p, { name: String(f.get('name') ?? ''), metadata: file instanceof File ? file : null, fileName: file instanceof File ? file.name : undefined, provision })
    if (!input.ok) return setError(input.error)
    if (!input.value) return done(`Nothing changed for ${p.name}.`)
    const change = input.value
    if (await attempt(() => updateSsoProvider(client, p.id, change), setError)) done(`Provider ${change.name ?? p.name} saved.`)
  }
  return (
    <form onSubmit={submit} class="card form" aria-label={`Edit ${p.name}`}>
      <h3>Edit {p.name} ({p.type})</h3>
      <label>Name<input name="name" required maxLength={200} defaultValue={p.name} /></label>
      {p.type === 'OIDC' ? (
        <>
          <label>Issuer URL<input name="issuer" type="url" required defaultValue={p.details.issuer} /></label>
          <label>Client ID<input name="client_id" required maxLength={1000} defaultValue={p.details.client_id} autocomplete="off" /></label>
          <label>New client secret (blank: keep {p.details.has_client_secret ? 'the stored one' : 'none'})<input name="client_secret" type="password" maxLength={4000} autocomplete="new-password" /></label>
          {p.details.has_client_secret && <label class="check"><input type="checkbox" name="remove_secret" /> Remove the client secret (a public client)</label>}
        </>
      ) : (
        <label>Replace the metadata (XML file, optional)<input name="metadata" type="file" accept=".xml,application/xml,text/xml" /></label>
      )}
      <Provisioning value={provision} roles={roles} onChange={setProvision} />
      <button type="submit">Save</button> <button type="button" class="secondary" onClick={cancel}>Cancel</button>
    </form>
  )
}

export default function SsoProviders() {
  const [error, setError] = useState('')
  const [providers, setProviders] = useState<SsoProviderJson[] | null>(null)
  const [roles, setRoles] = useState<RoleJson[]>([])
  const [deleting, setDeleting] = useState<SsoProviderJson | null>(null)
  const [editing, setEditing] = useState<SsoProviderJson | null>(null)
  const [note, setNote] = useState('')
  async function load() {
    const r = await attempt(() => listSsoProviders(client), setError)
    if (r) setProviders(r.data)
  }
  useEffect(() => {
    load()
    attempt(() => client.listRoles(), setError).then((r) => r && setRoles(r.data.roles))
  }, [])
  /** after a change: the list is read again first, so that the note never stands beside a list that does not show it yet */
  async function done(message: string) {
    setError('')
    setEditing(null)
    setNote('')
    await load()
    setNote(message)
  }
  async function remove(p: SsoProviderJson) {
    setDeleting(null)
    const r = await attempt(() => deleteSsoProvider(client, p.id), setError)
    if (r) done(`Provider ${p.name} deleted; ${r.data.affected_users.length} user(s) unlinked.`)
  }
  const roleName = (id: number) => roles.find((r) => r.id === id)?.name
  return (
    <section aria-label="SSO providers">
      <h2>SSO providers</h2>
      <ErrorLine error={error} />
      {note && <p role="status">{note}</p>}
      <div class="cards">
        <CreateSaml roles={roles} done={done} setError={setError} />
        <CreateOidc roles={roles} done={done} setError={setError} />
      </div>
      {editing && <Edit key={editing.id} p={editing} roles={roles} done={done} cancel={() => setEditing(null)} setError={setError} />}
      {deleting && <Confirm label="Delete SSO provider" message={`Delete ${deleting.name}? Users who sign in through it lose access.`} onConfirm={() => remove(deleting)} onCancel={() => setDeleting(null)} />}
      {providers && (
        <table class="list" aria-label="SSO providers list">
          <thead>
            <tr>
              <th scope="col">Name</th><th scope="col">Type</th><th scope="col">Identity provider</th><th scope="col">Sign-in URL</th>
              <th scope="col">Register at the identity provider</th><th scope="col">Credentials</th><th scope="col">Auto-provisioning</th><th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {providers.length === 0 && <tr><td colSpan={8} class="muted">No SSO provider.</td></tr>}
            {providers.map((p) => {
              const s = providerSummary(p, roleName)
              return (
                <tr key={p.id}>
                  <td>{p.name}</td><td>{p.type}</td><td><code>{s.identityProvider}</code></td><td><code>{p.login_uri}</code></td>
                  <td><code>{s.register}</code></td><td>{s.credentials}</td><td>{s.provisioning}</td>
                  <td>
                    <button class="secondary" aria-label={`Edit ${p.name}`} onClick={() => (setNote(''), setEditing(p))}>Edit</button>{' '}
                    <button class="secondary danger" aria-label={`Delete ${p.name}`} onClick={() => setDeleting(p)}>Delete</button>
                  </td>
                </tr>
              )
            })}
          </tbody>
        </table>
      )}
    </section>
  )
}
