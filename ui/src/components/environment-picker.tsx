import { useEffect, useState } from 'preact/hooks'
import { availableDomains } from '../../../src/client/graph'
import { client } from '../api'
import { attempt } from '../lib/attempt'

export interface Environment {
  id: string
  name: string
  type: string
  collected: boolean
}

/**
 * The "Environment" select of the attack-paths and posture pages: the environments the caller may see
 * (GET /api/v2/available-domains), the first collected one chosen at first.
 */
export function EnvironmentPicker({ value, onChange }: { value: string; onChange: (id: string, env: Environment | undefined) => void }) {
  const [envs, setEnvs] = useState<Environment[] | null>(null)
  const [error, setError] = useState('')
  useEffect(() => {
    attempt(() => availableDomains(client), setError).then((r) => {
      if (!r) return
      const list = (r.data as unknown as Environment[]).slice().sort((a, b) => a.name.localeCompare(b.name))
      setEnvs(list)
      if (!value && list.length) {
        const first = list.find((e) => e.collected) ?? list[0]
        onChange(first.id, first)
      }
    })
  }, [])
  return (
    <div class="page-toolbar">
      <label class="field">
        Environment
        <select value={value} onChange={(e) => {
          const id = (e.target as HTMLSelectElement).value
          onChange(id, envs?.find((x) => x.id === id))
        }} disabled={!envs || envs.length === 0}>
          {envs?.map((e) => <option value={e.id} key={e.id}>{e.name} ({e.type})</option>)}
        </select>
      </label>
      {envs && envs.length === 0 && <p class="muted">No environment with collected data yet: upload collector data first.</p>}
      {error && <p role="alert" class="error">{error}</p>}
    </div>
  )
}
