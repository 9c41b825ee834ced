import { useEffect, useState } from 'preact/hooks'
import { client } from './api'

export function App() {
  const [version, setVersion] = useState('')
  useEffect(() => {
    client.version().then((v) => setVersion(v.data.server_version), () => setVersion(''))
  }, [])
  const path = location.pathname.replace(/\/+$/, '')
  if (path === '/ui/user-disabled')
    return (
      <main>
        <h1>Account disabled</h1>
        <p>Your account is disabled. Please contact your Administrator.</p>
      </main>
    )
  const error = path === '/ui/login' ? new URLSearchParams(location.search).get('error') : null
  return (
    <main>
      <h1>EdgeHound</h1>
      {error && <p role="alert">{error}</p>}
      <p>Console {version && <span data-testid="version">{version}</span>}</p>
    </main>
  )
}
