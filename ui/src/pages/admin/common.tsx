// Small pieces the Administration and Profile pages share: an error line, a confirmation step, a token list.
import { useEffect, useState } from 'preact/hooks'
import type { ComponentChildren } from 'preact'
import type { TokenJson } from '../../../../src/client/index'
import { client } from '../../api'
import { attempt } from '../../lib/attempt'

export function ErrorLine({ error }: { error: string }) {
  return error ? <p role="alert" class="error">{error}</p> : null
}

/** An inline confirmation: the action runs only after "Confirm". */
export function Confirm({ label, message, onConfirm, onCancel }: { label: string; message: ComponentChildren; onConfirm: () => void; onCancel: () => void }) {
  return (
    <div role="alertdialog" aria-label={label} class="confirm card">
      <p>{message}</p>
      <button onClick={onConfirm}>Confirm</button> <button class="secondary" onClick={onCancel}>Cancel</button>
    </div>
  )
}

export function when(iso: string | null | undefined): string {
  if (!iso || iso.startsWith('0001-')) return '—'
  const d = new Date(iso)
  return Number.isNaN(d.getTime()) ? iso : d.toISOString().replace('T', ' ').slice(0, 19) + ' UTC'
}

/**
 * API tokens of one user (yourself when `userId` is not given): list, create (the key is shown once) and revoke.
 */
export function Tokens({ userId, title = 'API tokens' }: { userId?: string; title?: string }) {
  const [error, setError] = useState('')
  const [tokens, setTokens] = useState<TokenJson[] | null>(null)
  const [created, setCreated] = useState<{ id: string; key: string; name: string } | null>(null)
  const [revoking, setRevoking] = useState<TokenJson | null>(null)
  const [name, setName] = useState('')
  async function load() {
    const r = await attempt(() => client.call<{ data: { tokens: TokenJson[] } }>('GET', `/api/v2/tokens${userId ? `?user_id=eq:${userId}` : ''}`), setError)
    if (r) setTokens(r.data.tokens)
  }
  useEffect(() => {
    load()
  }, [userId])
  async function create(ev: Event) {
    ev.preventDefault()
    const r = await attempt(() => client.createToken(name.trim(), userId), setError)
    if (r) {
      setCreated({ id: r.data.id, key: r.data.key, name: r.data.name })
      setName('')
      load()
    }
  }
  async function revoke(t: TokenJson) {
    setRevoking(null)
    if (await attempt(() => client.revokeToken(t.id), setError)) load()
  }
  return (
    <section aria-label={title}>
      <h2>{title}</h2>
      <ErrorLine error={error} />
      {created && (
        <div role="status" class="warning key-once" aria-label="New token key">
          <p><strong>Token “{created.name}” created.</strong> Copy its key now: it is not shown again.</p>
          <dl>
            <dt>Token ID</dt><dd><code>{created.id}</code></dd>
            <dt>Key</dt><dd><code aria-label="Token key">{created.key}</code></dd>
          </dl>
          <button class="secondary" onClick={() => setCreated(null)}>I have copied the key</button>
        </div>
      )}
      <form onSubmit={create} class="inline" aria-label="Create token">
        <label>
          Token name
          <input value={name} required maxLength={200} onInput={(e) => setName((e.target as HTMLInputElement).value)} />
        </label>
        <button type="submit">Create token</button>
      </form>
      {revoking && <Confirm label="Revoke token" message={`Revoke the token “${revoking.name}”? Requests signed with it will be refused.`} onConfirm={() => revoke(revoking)} onCancel={() => setRevoking(null)} />}
      {tokens && (
        <table class="list" aria-label={`${title} list`}>
          <thead><tr><th scope="col">Name</th><th scope="col">ID</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col"><span class="sr">Actions</span></th></tr></thead>
          <tbody>
            {tokens.length === 0 && <tr><td colSpan={5} class="muted">No tokens.</td></tr>}
            {tokens.map((t) => (
              <tr key={t.id}>
                <td>{t.name}</td><td><code>{t.id}</code></td><td>{when(t.created_at)}</td><td>{when(t.last_access)}</td>
                <td><button class="secondary" aria-label={`Revoke ${t.name}`} onClick={() => setRevoking(t)}>Revoke</button></td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  )
}
