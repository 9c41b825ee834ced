import { useEffect, useState } from 'preact/hooks'
import { listSignInProviders } from '../../../src/client/saml'
import { client, messageOf } from '../api'
import { asksForOtp, normaliseOtp } from '../lib/mfa'
import { navigate } from '../lib/navigate'
import { returnPath, ssoButtons, type SsoButton } from '../lib/sso'

export function SignIn() {
  const params = new URLSearchParams(location.search)
  const [error, setError] = useState(params.get('error') ?? '')
  const [busy, setBusy] = useState(false)
  // shown once the server asked for the second factor (a user with two-step sign-in)
  const [needOtp, setNeedOtp] = useState(false)
  // every SSO provider, SAML and OIDC (GET /api/v2/sso-providers is readable before signing in)
  const [providers, setProviders] = useState<SsoButton[]>([])
  useEffect(() => {
    listSignInProviders(client).then((r) => setProviders(ssoButtons(r.data, params.get('next'))), () => setProviders([]))
  }, [])
  async function submit(ev: Event) {
    ev.preventDefault()
    const form = new FormData(ev.currentTarget as HTMLFormElement)
    setBusy(true)
    try {
      setError('')
      const otp = needOtp ? normaliseOtp(String(form.get('otp') ?? '')) : undefined
      await client.loginWithCookie(String(form.get('username') ?? ''), String(form.get('password') ?? ''), otp)
      navigate(returnPath(params.get('next')) ?? '/ui/explore')
    } catch (e) {
      // the first refusal only asks for the code: show the field, not "one time password is invalid"
      if (asksForOtp(e) && !needOtp) {
        setNeedOtp(true)
        setError('')
      } else setError(messageOf(e))
    } finally {
      setBusy(false)
    }
  }
  return (
    <main class="center signin">
      <h1 class="brand">EdgeHound</h1>
      <p class="muted">Attack paths, at the edge.</p>
      <form onSubmit={submit} class="card" aria-label="Sign in">
        <label>
          Username
          <input name="username" autocomplete="username" required autofocus />
        </label>
        <label>
          Password
          <input name="password" type="password" autocomplete="current-password" required />
        </label>
        {needOtp && (
          <>
            <label>
              One-time password
              <input name="otp" autocomplete="one-time-code" inputMode="numeric" required autofocus aria-describedby="otp-hint" />
            </label>
            <p id="otp-hint" class="muted">Two-step sign-in is on for this account: enter the code your authenticator app shows.</p>
          </>
        )}
        {error && <p role="alert" class="error">{error}</p>}
        <button type="submit" disabled={busy}>{busy ? 'Signing in…' : 'Sign in'}</button>
        {providers.length > 0 && (
          <div class="sso">
            <p class="muted">or</p>
            {providers.map((p) => (
              <a class="button secondary" role="button" href={p.href} key={p.key} data-sso-type={p.type}>
                {p.label}
              </a>
            ))}
          </div>
        )}
      </form>
    </main>
  )
}

export function UserDisabled() {
  return (
    <main class="center">
      <h1>Account disabled</h1>
      <p>Your account is disabled. Please contact your Administrator.</p>
      <p><a href="/ui/login">Back to sign in</a></p>
    </main>
  )
}
