// The audit log: filters (action, actor, date range), newest first, paged.
import { useEffect, useState } from 'preact/hooks'
import { AUDIT_ACTIONS } from '../../../../src/audit/actions'
import { listAuditLogs, type AuditLogJson } from '../../../../src/client/audit'
import { client } from '../../api'
import { attempt } from '../../lib/attempt'
import { ErrorLine, when } from './common'
import { Pager } from './ingest'
import { auditQuery, type AuditFilter } from './model'

export default function AuditLog() {
  const [error, setError] = useState('')
  const [filter, setFilter] = useState<AuditFilter>({ action: '', actor: '', from: '', to: '', page: 0, pageSize: 25 })
  const [draft, setDraft] = useState(filter)
  const [rows, setRows] = useState<AuditLogJson[] | null>(null)
  const [count, setCount] = useState(0)
  useEffect(() => {
    attempt(() => listAuditLogs(client, auditQuery(filter)), setError).then((r) => r && (setRows(r.data.logs), setCount(r.count)))
  }, [filter])
  const set = (k: keyof AuditFilter) => (e: Event) => setDraft({ ...draft, [k]: (e.target as HTMLInputElement).value })
  return (
    <section aria-label="Audit log">
      <h2>Audit log</h2>
      <form
        class="filters"
        aria-label="Audit log filters"
        onSubmit={(e) => {
          e.preventDefault()
          setFilter({ ...draft, page: 0 })
        }}
      >
        <label>Action<select value={draft.action} onChange={set('action')}><option value="">any</option>{AUDIT_ACTIONS.map((a) => <option key={a}>{a}</option>)}</select></label>
        <label>Actor<input value={draft.actor} onInput={set('actor')} placeholder="user name" /></label>
        <label>From<input type="date" value={draft.from} onInput={set('from')} /></label>
        <label>To<input type="date" value={draft.to} onInput={set('to')} /></label>
        <button type="submit">Apply filters</button>
      </form>
      <ErrorLine error={error} />
      {rows && (
        <table class="list" aria-label="Audit log entries">
          <thead><tr><th scope="col">Time</th><th scope="col">Actor</th><th scope="col">Action</th><th scope="col">Status</th><th scope="col">Fields</th><th scope="col">Source</th></tr></thead>
          <tbody>
            {rows.length === 0 && <tr><td colSpan={6} class="muted">No entries match.</td></tr>}
            {rows.map((r) => (
              <tr key={r.id}>
                <td>{when(r.created_at)}</td><td>{r.actor_name}</td><td>{r.action}</td><td>{r.status}</td>
                <td><code class="fields">{JSON.stringify(r.fields)}</code></td><td>{r.source_ip_address}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <Pager page={filter.page} pageSize={filter.pageSize} count={count} onPage={(page) => setFilter({ ...filter, page })} label="Audit log pages" />
    </section>
  )
}
