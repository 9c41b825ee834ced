import { useEffect, useState } from 'preact/hooks'
import { client } from './api'

export function App() {
  const [version, setVersion] = useState('')
  useEffect(() => {
    client.version().then((v) => setVersion(v.data.server_version), () => setVersion(''))
  }, [])
  return (
    <main>
      <h1>EdgeHound</h1>
      <p>Console {version && <span data-testid="version">{version}</span>}</p>
    </main>
  )
}
