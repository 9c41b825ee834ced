// Users: create, edit roles and environment access, disable/enable, reset the password (optionally forcing a
// change at next sign-in), tokens, delete.
import { useEffect, useState } from 'preact/hooks'
import { ROLES } from '../../../../src/auth/permissions'
import { availableDomains, type EnvironmentJson } from '../../../../src/client/graph'
import type { UserJson } from '../../../../src/client/index'
import { client } from '../../api'
import { attempt } from '../../lib/attempt'
import { Confirm, ErrorLine, Tokens, when } from './common'

type Access = { all: boolean; ids: string[] }

function AccessPicker({ value, onChange, envs, name }: { value: Access; onChange: (a: Access) => void; envs: EnvironmentJson[]; name: string }) {
  return (
    <fieldset>
      <legend>Environment access</legend>
      <label class="check">
        <input type="checkbox" checked={value.all} onChange={(e) => onChange({ ...value, all: (e.target as HTMLInputElement).checked })} /> All environments
      </label>
      {!value.all && (
        <div role="group" aria-label={`Environments ${name} may see`}>
          {envs.length === 0 && <p class="muted">No environment has data yet.</p>}
          {envs.map((e) => (
            <label class="check" key={e.id}>
              <input
                type="checkbox"
                checked={value.ids.includes(e.id)}
                onChange={(ev) => onChange({ ...value, ids: (ev.target as HTMLInputElement).checked ? [...value.ids, e.id] : value.ids.filter((x) => x !== e.id) })}
              />{' '}
              {e.name} <span class="kind">{e.type}</span>
            </label>
          ))}
        </div>
      )}
    </fieldset>
  )
}

function CreateUser({ envs, onCreated }: { envs: EnvironmentJson[]; onCreated: () => void }) {
  const [error, setError] = useState('')
  const [access, setAccess] = useState<Access>({ all: true, ids: [] })
  async function submit(ev: Event) {
    ev.preventDefault()
    const form = ev.currentTarget as HTMLFormElement
    const f = new FormData(form)
    const email = String(f.get('email') ?? '').trim()
    const r = await attempt(
      () =>
        client.createUser({
          principal_name: String(f.get('username') ?? ''),
          email_address: email || null,
          secret: String(f.get('password') ?? ''),
          roles: [String(f.get('role'))],
          all_environments: access.all,
          environment_access: access.all ? [] : access.ids,
          needs_password_reset: f.get('must_change') === 'on',
        }),
      setError,
    )
    if (r) {
      form.reset()
      setAccess({ all: true, ids: [] })
      onCreated()
    }
  }
  return (
    <form onSubmit={submit} class="card form" aria-label="Create user">
      <h3>Create user</h3>
      <label>Username<input name="username" required maxLength={200} autocomplete="off" /></label>
      <label>Email<input name="email" type="email" autocomplete="off" /></label>
      <label>Initial password<input name="password" type="password" required minLength={12} autocomplete="new-password" /></label>
      <label class="check"><input type="checkbox" name="must_change" defaultChecked /> Must change the password at first sign-in</label>
      <label>Role<select name="role">{['User', ...ROLES.filter((r) => r !== 'User')].map((r) => <option key={r} value={r}>{r}</option>)}</select></label>
      <AccessPicker value={access} onChange={setAccess} envs={envs} name="the new user" />
      <ErrorLine error={error} />
      <button type="submit">Create user</button>
    </form>
  )
}

function EditUser({ user, envs, onDone }: { user: UserJson; envs: EnvironmentJson[]; onDone: (changed: boolean) => void }) {
  const [error, setError] = useState('')
  const [roles, setRoles] = useState<string[]>(user.roles)
  const [access, setAccess] = useState<Access>({ all: user.all_environments, ids: user.environment_access })
  async function save(ev: Event) {
    ev.preventDefault()
    const r = await attempt(() => client.updateUser(user.id, { roles, all_environments: access.all, environment_access: access.all ? [] : access.ids }), setError)
    if (r) onDone(true)
  }
  return (
    <form onSubmit={save} class="card form" aria-label={`Edit ${user.principal_name}`}>
      <h3>Edit {user.principal_name}</h3>
      <fieldset>
        <legend>Roles</legend>
        {ROLES.map((r) => (
          <label class="check" key={r}>
            <input type="checkbox" checked={roles.includes(r)} onChange={(e) => setRoles((e.target as HTMLInputElement).checked ? [...roles, r] : roles.filter((x) => x !== r))} /> {r}
          </label>
        ))}
      </fieldset>
      <AccessPicker value={access} onChange={setAccess} envs={envs} name={user.principal_name} />
      <ErrorLine error={error} />
      <button type="submit">Save</button> <button type="button" class="secondary" onClick={() => onDone(false)}>Cancel</button>
    </form>
  )
}

function ResetPassword({ user, onDone }: { user: UserJson; onDone: (changed: boolean) => void }) {
  const [error, setError] = useState('')
  async function submit(ev: Event) {
    ev.preventDefault()
    const f = new FormData(ev.currentTarget as HTMLFormElement)
    const r = await attempt(() => client.setUserSecret(user.id, { secret: String(f.get('password') ?? ''), needs_password_reset: f.get('must_change') === 'on' }), setError)
    if (r) onDone(true)
  }
  return (
    <form onSubmit={submit} class="card form" aria-label={`Reset the password of ${user.principal_name}`}>
      <h3>Reset the password of {user.principal_name}</h3>
      <label>New password<input name="password" type="password" required minLength={12} autocomplete="new-password" /></label>
      <label class="check"><input type="checkbox" name="must_change" defaultChecked /> Must change it at next sign-in</label>
      <ErrorLine error={error} />
      <button type="submit">Set password</button> <button type="button" class="secondary" onClick={() => onDone(false)}>Cancel</button>
    </form>
  )
}

type Action = { kind: 'edit' | 'password' | 'tokens' | 'delete' | 'disable'; user: UserJson } | null

export default function Users({ meId }: { meId: string }) {
  const [error, setError] = useState('')
  const [users, setUsers] = useState<UserJson[] | null>(null)
  const [envs, setEnvs] = useState<EnvironmentJson[]>([])
  const [action, setAction] = useState<Action>(null)
  const [note, setNote] = useState('')
  async function load() {
    const r = await attempt(() => client.listUsers(), setError)
    if (r) setUsers(r.data.users)
  }
  useEffect(() => {
    load()
    attempt(() => availableDomains(client), () => {}).then((r) => r && setEnvs(r.data as EnvironmentJson[]))
  }, [])
  function done(message: string) {
    return (changed: boolean) => {
      setAction(null)
      if (changed) (setNote(message), load())
    }
  }
  async function run(kind: 'delete' | 'disable', u: UserJson) {
    setAction(null)
    const r = kind === 'delete' ? await attempt(() => client.deleteUser(u.id), setError) : await attempt(() => client.updateUser(u.id, { is_disabled: !u.is_disabled }), setError)
    if (r) (setNote(kind === 'delete' ? `${u.principal_name} deleted.` : `${u.principal_name} ${u.is_disabled ? 'enabled' : 'disabled'}.`), load())
  }
  return (
    <section aria-label="Users">
      <h2>Users</h2>
      <ErrorLine error={error} />
      {note && <p role="status">{note}</p>}
      <CreateUser envs={envs} onCreated={() => (setNote('User created.'), load())} />
      {action?.kind === 'edit' && <EditUser user={action.user} envs={envs} onDone={done(`${action.user.principal_name} updated.`)} />}
      {action?.kind === 'password' && <ResetPassword user={action.user} onDone={done(`Password of ${action.user.principal_name} set.`)} />}
      {action?.kind === 'tokens' && (
        <div class="card">
          <Tokens userId={action.user.id} title={`API tokens of ${action.user.principal_name}`} />
          <button class="secondary" onClick={() => setAction(null)}>Close</button>
        </div>
      )}
      {(action?.kind === 'delete' || action?.kind === 'disable') && (
        <Confirm
          label={action.kind === 'delete' ? 'Delete user' : action.user.is_disabled ? 'Enable user' : 'Disable user'}
          message={action.kind === 'delete' ? `Delete ${action.user.principal_name}? Their tokens and sessions go with them.` : `${action.user.is_disabled ? 'Enable' : 'Disable'} ${action.user.principal_name}?`}
          onConfirm={() => run(action.kind as 'delete' | 'disable', action.user)}
          onCancel={() => setAction(null)}
        />
      )}
      {users && (
        <table class="list" aria-label="Users list">
          <thead><tr><th scope="col">Username</th><th scope="col">Email</th><th scope="col">Roles</th><th scope="col">Environments</th><th scope="col">Sign-in</th><th scope="col">Status</th><th scope="col">Created</th><th scope="col">Actions</th></tr></thead>
          <tbody>
            {users.map((u) => (
              <tr key={u.id}>
                <td>{u.principal_name}</td>
                <td>{u.email_address ?? ''}</td>
                <td>{u.roles.join(', ')}</td>
                <td>{u.all_environments ? 'all' : envs.filter((e) => u.environment_access.includes(e.id)).map((e) => e.name).join(', ') || u.environment_access.join(', ') || 'none'}</td>
                <td>{u.sso_provider_id !== null ? 'SSO' : u.needs_password_reset ? 'password (must change)' : 'password'}</td>
                <td>{u.is_disabled ? 'disabled' : 'active'}</td>
                <td>{when(u.created_at)}</td>
                <td>
                  <div class="actions">
                  <button class="secondary" aria-label={`Edit ${u.principal_name}`} onClick={() => setAction({ kind: 'edit', user: u })}>Edit</button>
                  {u.sso_provider_id === null && <button class="secondary" aria-label={`Reset password of ${u.principal_name}`} onClick={() => setAction({ kind: 'password', user: u })}>Password</button>}
                  <button class="secondary" aria-label={`Tokens of ${u.principal_name}`} onClick={() => setAction({ kind: 'tokens', user: u })}>Tokens</button>
                  {u.id !== meId && (
                    <>
                      <button class="secondary" aria-label={`${u.is_disabled ? 'Enable' : 'Disable'} ${u.principal_name}`} onClick={() => setAction({ kind: 'disable', user: u })}>{u.is_disabled ? 'Enable' : 'Disable'}</button>
                      <button class="secondary danger" aria-label={`Delete ${u.principal_name}`} onClick={() => setAction({ kind: 'delete', user: u })}>Delete</button>
                    </>
                  )}
                  </div>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  )
}
