// Profile: who you are, your API tokens, your password, sign out.
import { useEffect, useState } from 'preact/hooks'
import type { UserJson } from '../../../src/client/index'
import { client } from '../api'
import { attempt } from '../lib/attempt'
import { QrCode } from '../components/qr-code'
import { normaliseOtp } from '../lib/mfa'
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

type MfaStatus = 'activated' | 'pending' | 'deactivated'

/**
 * Two-step sign-in (TOTP): set up with the password (the secret is shown once, as a QR code and as text),
 * activate with a first code, turn off with the password. A pending set-up whose secret was not kept is set up
 * again (the server replaces it).
 */
export function TwoStepSignIn({ me }: { me: UserJson }) {
  const [status, setStatus] = useState<MfaStatus | null>(null)
  const [enrolment, setEnrolment] = useState<{ qr_code: string; totp_secret: string } | null>(null)
  const [error, setError] = useState('')
  const [note, setNote] = useState('')
  useEffect(() => {
    attempt(() => client.mfaStatus(me.id), setError).then((r) => r && setStatus(r.data.status))
  }, [me.id])
  async function enrol(ev: Event) {
    ev.preventDefault()
    const form = ev.currentTarget as HTMLFormElement
    const r = await attempt(() => client.enrollMfa(me.id, String(new FormData(form).get('password') ?? '')), setError)
    if (r) (form.reset(), setNote(''), setEnrolment(r.data), setStatus('pending'))
  }
  async function activate(ev: Event) {
    ev.preventDefault()
    const r = await attempt(() => client.activateMfa(me.id, normaliseOtp(String(new FormData(ev.currentTarget as HTMLFormElement).get('otp') ?? ''))), setError)
    if (r) (setEnrolment(null), setStatus('activated'), setNote('Two-step sign-in is on: from now on, signing in asks for a code from your app.'))
  }
  async function turnOff(ev: Event) {
    ev.preventDefault()
    const form = ev.currentTarget as HTMLFormElement
    const r = await attempt(() => client.disenrollMfa(me.id, String(new FormData(form).get('password') ?? '')), setError)
    if (r) (form.reset(), setStatus('deactivated'), setNote('Two-step sign-in is off.'))
  }
  return (
    <section class="card form" aria-label="Two-step sign-in">
      <h2>Two-step sign-in</h2>
      {status === null && !error && <p class="muted">Loading…</p>}
      {status === 'activated' && (
        <form onSubmit={turnOff} aria-label="Turn off two-step sign-in">
          <p>On: signing in asks for a code from your authenticator app.</p>
          <label>Password<input name="password" type="password" required autocomplete="current-password" /></label>
          <button type="submit" class="secondary">Turn off two-step sign-in</button>
        </form>
      )}
      {(status === 'deactivated' || status === 'pending') && !enrolment && (
        <form onSubmit={enrol} aria-label="Set up two-step sign-in">
          <p>{status === 'pending' ? 'A set-up was started and not finished: start it again.' : 'Off. With it on, signing in also asks for a code from an authenticator app.'}</p>
          <label>Password<input name="password" type="password" required autocomplete="current-password" /></label>
          <button type="submit">Set up two-step sign-in</button>
        </form>
      )}
      {enrolment && (
        <form onSubmit={activate} aria-label="Activate two-step sign-in">
          <p>Scan this code with your authenticator app, or type the key in. It is shown only now.</p>
          <QrCode text={enrolment.qr_code} label="QR code for your authenticator app" />
          <p>Key: <code aria-label="Key for your authenticator app">{enrolment.totp_secret}</code></p>
          <label>Code from your app<input name="otp" autocomplete="one-time-code" inputMode="numeric" required /></label>
          <button type="submit">Activate</button>
        </form>
      )}
      <ErrorLine error={error} />
      {note && <p role="status">{note}</p>}
    </section>
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
      {me.sso_provider_id === null && <TwoStepSignIn me={me} />}
      <p><button class="secondary" onClick={onSignOut}>Sign out</button></p>
    </main>
  )
}
