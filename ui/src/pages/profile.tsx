// Profile: who you are, your API tokens, your password, sign out.
import { useState } from 'preact/hooks'
import type { UserJson } from '../../../src/client/index'
import { client } from '../api'
import { attempt } from '../lib/attempt'
import { ErrorLine, Tokens } from './admin/common'
import { can } from './admin/model'

export function ChangePassword({ me, forced, onChanged }: { me: UserJson; forced?: boolean; onChanged: () => void }) {
  const [error, setError] = useState('')
  const [done, setDone] = useState(false)
  async function submit(ev: Event) {
    ev.preventDefault()
    const form = ev.currentTarget as HTMLFormElement
    const f = new FormData(form)
    const secret = String(f.get('new') ?? '')
    if (secret !== String(f.get('repeat') ?? '')) return setError('the two new passwords differ')
    const r = await attempt(() => client.setUserSecret(me.id, { current_secret: String(f.get('current') ?? ''), secret }), setError)
    if (r) (form.reset(), setDone(true), onChanged())
  }
  return (
    <form onSubmit={submit} class="card form" aria-label="Change password">
      <h2>{forced ? 'Choose a new password' : 'Change password'}</h2>
      {forced && <p>Your password was set by an administrator or has expired: choose your own before you go on.</p>}
      <label>Current password<input name="current" type="password" required autocomplete="current-password" /></label>
      <label>New password<input name="new" type="password" required minLength={12} autocomplete="new-password" /></label>
      <label>Repeat the new password<input name="repeat" type="password" required minLength={12} autocomplete="new-password" /></label>
      <ErrorLine error={error} />
      {done && !forced && <p role="status">Password changed. Your other sessions have ended.</p>}
      <button type="submit">Change password</button>
    </form>
  )
}

export default function Profile({ me, onSignOut }: { me: UserJson; onSignOut: () => void }) {
  return (
    <main class="page profile">
      <h1>Profile</h1>
      <dl class="facts" aria-label="Your account">
        <dt>Username</dt><dd>{me.principal_name}</dd>
        <dt>Email</dt><dd>{me.email_address ?? '—'}</dd>
        <dt>Roles</dt><dd>{me.roles.join(', ')}</dd>
        <dt>Environments</dt><dd>{me.all_environments ? 'all' : me.environment_access.join(', ') || 'none'}</dd>
        <dt>Sign-in</dt><dd>{me.sso_provider_id !== null ? 'SSO' : 'password'}</dd>
      </dl>
      {can(me, 'auth/CreateToken') && <Tokens title="Your API tokens" />}
      {me.sso_provider_id === null && <ChangePassword me={me} onChanged={() => {}} />}
      <p><button class="secondary" onClick={onSignOut}>Sign out</button></p>
    </main>
  )
}
