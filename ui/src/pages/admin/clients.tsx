// Collector clients (enterprise collection, docs/collectors.md "Running collectors as services"): register a
// SharpHound, AzureHound or OpenHound client (its token shown once), replace its token, edit, delete; per client,
// run a job now, recurring schedules (create, edit, delete), and the job history with its log and cancel. Refreshed every 2 s while a
// job is waiting or running, so a collector's check-in and its job's end appear by themselves.
import { useEffect, useState } from 'preact/hooks'
import {
  cancelClientJob,
  createClient,
  createSchedule,
  deleteClient,
  deleteSchedule,
  listClientJobs,
  listClients,
  listSchedules,
  regenerateClientToken,
  runClientJob,
  updateClient,
  updateSchedule,
  type ClientJobJson,
  type ClientJson,
  type ClientTokenJson,
  type ScheduleJson,
} from '../../../../src/client/clients'
import { availableDomains, type EnvironmentJson } from '../../../../src/client/graph'
import { client } from '../../api'
import { attempt } from '../../lib/attempt'
import { Confirm, ErrorLine, when } from './common'
import { Pager } from './ingest'
import {
  CLIENT_TYPE_CHOICES,
  checkinAge,
  chosenOptions,
  clientBody,
  clientJobStatusName,
  clientTypeLabel,
  collectionOptionsFor,
  defaultOptions,
  describeRrule,
  environmentLabel,
  jobCancellable,
  jobDuration,
  nextWholeHour,
  optionsBody,
  optionsSummary,
  scheduleFields,
  scheduleRrule,
  type Frequency,
} from './model'

/** The collection options a client type takes, as boxes (a note for the types that take none). */
function OptionsPicker({ type, value, onChange, name }: { type: string; value: Set<string>; onChange: (v: Set<string>) => void; name: string }) {
  const options = collectionOptionsFor(type)
  if (options.length === 0) return <p class="muted">{clientTypeLabel(type)} collects what its own configuration names: its jobs take no collection option.</p>
  return (
    <fieldset>
      <legend>Collection options</legend>
      <div role="group" aria-label={`Collection options for ${name}`}>
        {options.map((o) => (
          <label class="inline" key={o.key}>
            <input
              type="checkbox"
              checked={value.has(o.key)}
              onChange={(e) => {
                const next = new Set(value)
                if ((e.target as HTMLInputElement).checked) next.add(o.key)
                else next.delete(o.key)
                onChange(next)
              }}
            />{' '}
            {o.label}
          </label>
        ))}
      </div>
    </fieldset>
  )
}

/** The environments with data, offered in the environment fields (any id may be typed). */
function EnvironmentList({ envs }: { envs: EnvironmentJson[] }) {
  return (
    <datalist id="client-environments">
      {envs.map((e) => (
        <option key={e.id} value={e.id}>{`${e.name} (${e.type})`}</option>
      ))}
    </datalist>
  )
}

/** A client's token key, shown once, with copy buttons and the warning. */
function TokenOnce({ shown, onClose }: { shown: { name: string; token: ClientTokenJson; regenerated: boolean }; onClose: () => void }) {
  const [copied, setCopied] = useState('')
  async function copy(what: string, text: string) {
    try {
      await navigator.clipboard.writeText(text)
      setCopied(`${what} copied to the clipboard.`)
    } catch {
      setCopied(`The browser did not allow copying: select the ${what.toLowerCase()} and copy it.`)
    }
  }
  return (
    <div role="status" class="warning key-once" aria-label="New client token">
      <p>
        <strong>{shown.regenerated ? `A new token for “${shown.name}”.` : `Client “${shown.name}” created.`}</strong> Copy its token now: the key is not shown
        again. Configure the collector with the token ID and key{shown.regenerated ? '; the previous token no longer works' : ''}.
      </p>
      <dl>
        <dt>Token ID</dt>
        <dd><code aria-label="Client token ID">{shown.token.id}</code></dd>
        <dt>Key</dt>
        <dd><code aria-label="Client token key">{shown.token.key}</code></dd>
      </dl>
      <button class="secondary" onClick={() => copy('Token ID', shown.token.id)}>Copy token ID</button>{' '}
      <button class="secondary" onClick={() => copy('Key', shown.token.key)}>Copy key</button>{' '}
      <button class="secondary" onClick={onClose}>I have copied the key</button>
      {copied && <p>{copied}</p>}
    </div>
  )
}

function CreateClient({ envs, onCreated }: { envs: EnvironmentJson[]; onCreated: (c: ClientJson, token: ClientTokenJson) => void }) {
  const [error, setError] = useState('')
  const [type, setType] = useState('sharphound')
  async function submit(ev: Event) {
    ev.preventDefault()
    const form = ev.currentTarget as HTMLFormElement
    const f = new FormData(form)
    const body = clientBody({ name: String(f.get('name') ?? ''), type, environment: String(f.get('environment') ?? ''), domainController: String(f.get('dc') ?? '') })
    const r = await attempt(() => createClient(client, body), setError)
    if (r) {
      form.reset()
      setType('sharphound') // the select's state follows the reset form
      const { token, ...created } = r.data
      onCreated(created, token)
    }
  }
  return (
    <form onSubmit={submit} class="card form" aria-label="Create client">
      <h3>Create client</h3>
      <label>
        Type
        <select name="type" value={type} onChange={(e) => setType((e.target as HTMLSelectElement).value)}>
          {CLIENT_TYPE_CHOICES.map((t) => <option key={t.value} value={t.value}>{t.label}</option>)}
        </select>
      </label>
      <label>Name<input name="name" required maxLength={200} autocomplete="off" /></label>
      <label>
        {environmentLabel(type)} (the only environment its data may write)
        <input name="environment" required maxLength={255} list="client-environments" autocomplete="off" placeholder={CLIENT_TYPE_CHOICES.find((t) => t.value === type)?.placeholder} />
      </label>
      {type === 'sharphound' && <label>Domain controller (optional)<input name="dc" maxLength={255} autocomplete="off" placeholder="dc01.corp.example" /></label>}
      <EnvironmentList envs={envs} />
      <ErrorLine error={error} />
      <button type="submit">Create client</button>
    </form>
  )
}

function EditClient({ c, onDone }: { c: ClientJson; onDone: (changed: boolean) => void }) {
  const [error, setError] = useState('')
  async function save(ev: Event) {
    ev.preventDefault()
    const f = new FormData(ev.currentTarget as HTMLFormElement)
    const b = clientBody({ name: String(f.get('name') ?? ''), type: c.type, environment: String(f.get('environment') ?? ''), domainController: String(f.get('dc') ?? '') })
    const r = await attempt(() => updateClient(client, c.id, c.type === 'sharphound' ? { name: b.name, environment_id: b.environment_id, domain_controller: b.domain_controller } : { name: b.name, environment_id: b.environment_id }), setError)
    if (r) onDone(true)
  }
  return (
    <form onSubmit={save} class="card form" aria-label={`Edit ${c.name}`}>
      <h3>Edit {c.name}</h3>
      <label>Name<input name="name" required maxLength={200} defaultValue={c.name} autocomplete="off" /></label>
      <label>{environmentLabel(c.type)}<input name="environment" required maxLength={255} defaultValue={c.environment_id} list="client-environments" autocomplete="off" /></label>
      {c.type === 'sharphound' && <label>Domain controller<input name="dc" maxLength={255} defaultValue={c.domain_controller ?? ''} autocomplete="off" /></label>}
      <ErrorLine error={error} />
      <button type="submit">Save</button> <button type="button" class="secondary" onClick={() => onDone(false)}>Cancel</button>
    </form>
  )
}

function RunNow({ c, onRan }: { c: ClientJson; onRan: () => void }) {
  const [error, setError] = useState('')
  const [note, setNote] = useState('')
  const [chosen, setChosen] = useState<Set<string>>(defaultOptions(c.type))
  async function submit(ev: Event) {
    ev.preventDefault()
    setNote('')
    const r = await attempt(() => runClientJob(client, c.id, optionsBody(c.type, chosen)), setError)
    if (r) (setNote(`Job ${r.data.id} is ready: the client starts it at its next poll.`), onRan())
  }
  return (
    <form onSubmit={submit} class="card form" aria-label={`Run a job now for ${c.name}`}>
      <h4>Run a job now</h4>
      <OptionsPicker type={c.type} value={chosen} onChange={setChosen} name="the job" />
      <ErrorLine error={error} />
      {note && <p role="status">{note}</p>}
      <button type="submit">Run job now</button>
    </form>
  )
}

/** The recurrence fields of a schedule form (new or edit), starting from `start` (a stored schedule's, or the defaults). */
function RecurrenceFields({ start }: { start: { frequency: Frequency; every: string; start: string } }) {
  return (
    <>
      <label>
        Frequency
        <select name="frequency" defaultValue={start.frequency}>
          <option value="HOURLY">Hourly</option>
          <option value="DAILY">Daily</option>
          <option value="WEEKLY">Weekly</option>
        </select>
      </label>
      <label>Repeat every<input name="every" type="number" min={1} max={1000} defaultValue={start.every} required /></label>
      {/* step 1 s only for a stored start with seconds (the default step, a minute, would refuse it) */}
      <label>First run (UTC)<input name="start" type="datetime-local" step={start.start.length > 16 ? 1 : undefined} defaultValue={start.start} required /></label>
    </>
  )
}

/** A schedule's recurrence and collection options, changed in place (PUT /api/v2/events/{id}). */
function EditSchedule({ c, s, onDone }: { c: ClientJson; s: ScheduleJson; onDone: (changed: boolean) => void }) {
  const [error, setError] = useState('')
  const [chosen, setChosen] = useState<Set<string>>(chosenOptions(c.type, s))
  const fields = scheduleFields(s)
  async function save(ev: Event) {
    ev.preventDefault()
    const f = new FormData(ev.currentTarget as HTMLFormElement)
    const rule = scheduleRrule({ frequency: String(f.get('frequency')) as Frequency, every: String(f.get('every') ?? ''), start: String(f.get('start') ?? '') })
    if ('error' in rule) return setError(rule.error)
    const r = await attempt(() => updateSchedule(client, s.id, { rrule: rule.rrule, ...optionsBody(c.type, chosen) }), setError)
    if (r) onDone(true)
  }
  return (
    <form onSubmit={save} class="card form" aria-label={`Edit schedule ${s.id}`}>
      <h4>Edit schedule {s.id}</h4>
      {!fields && <p class="muted">Its recurrence “{s.rrule}” is not one this form shows: saving replaces it with the one chosen here.</p>}
      <RecurrenceFields start={fields ?? { frequency: 'DAILY', every: '1', start: nextWholeHour() }} />
      <OptionsPicker type={c.type} value={chosen} onChange={setChosen} name={`schedule ${s.id}`} />
      <ErrorLine error={error} />
      <button type="submit">Save schedule</button> <button type="button" class="secondary" onClick={() => onDone(false)}>Cancel</button>
    </form>
  )
}

function Schedules({ c }: { c: ClientJson }) {
  const [error, setError] = useState('')
  const [formError, setFormError] = useState('')
  const [rows, setRows] = useState<ScheduleJson[] | null>(null)
  const [chosen, setChosen] = useState<Set<string>>(defaultOptions(c.type))
  const [deleting, setDeleting] = useState<ScheduleJson | null>(null)
  const [editing, setEditing] = useState<ScheduleJson | null>(null)
  const [note, setNote] = useState('')
  async function load() {
    const r = await attempt(() => listSchedules(client, c.id), setError)
    if (r) setRows(r.data)
  }
  useEffect(() => {
    load()
  }, [c.id])
  async function submit(ev: Event) {
    ev.preventDefault()
    const form = ev.currentTarget as HTMLFormElement
    const f = new FormData(form)
    const rule = scheduleRrule({ frequency: String(f.get('frequency')) as Frequency, every: String(f.get('every') ?? ''), start: String(f.get('start') ?? '') })
    if ('error' in rule) return setFormError(rule.error)
    const r = await attempt(() => createSchedule(client, { client_id: c.id, rrule: rule.rrule, ...optionsBody(c.type, chosen) }), setFormError)
    if (r) load()
  }
  async function remove(s: ScheduleJson) {
    setDeleting(null)
    setNote('')
    if (await attempt(() => deleteSchedule(client, s.id), setError)) load()
  }
  return (
    <section aria-label={`Schedules of ${c.name}`}>
      <h4>Schedules</h4>
      <ErrorLine error={error} />
      {note && <p role="status">{note}</p>}
      {deleting && (
        <Confirm label="Delete schedule" message={`Delete the schedule “${describeRrule(deleting.rrule)}”? The jobs it already created stay.`} onConfirm={() => remove(deleting)} onCancel={() => setDeleting(null)} />
      )}
      {rows && (
        <table class="list" aria-label={`Schedules of ${c.name} list`}>
          <thead><tr><th scope="col">Recurrence</th><th scope="col">Options</th><th scope="col">Next run</th><th scope="col"><span class="sr">Actions</span></th></tr></thead>
          <tbody>
            {rows.length === 0 && <tr><td colSpan={4} class="muted">No schedule.</td></tr>}
            {rows.map((s) => (
              <tr key={s.id}>
                <td>{describeRrule(s.rrule)}</td>
                <td>{optionsSummary(s)}</td>
                <td>{when(s.next_run)}</td>
                <td>
                  <div class="actions">
                    <button class="secondary" aria-label={`Edit schedule ${s.id}`} onClick={() => (setNote(''), setEditing(s))}>Edit</button>
                    <button class="secondary danger" aria-label={`Delete schedule ${s.id}`} onClick={() => setDeleting(s)}>Delete</button>
                  </div>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {editing && (
        <EditSchedule
          key={`edit-${editing.id}`}
          c={c}
          s={editing}
          onDone={(changed) => {
            setEditing(null)
            if (changed) (setNote(`Schedule ${editing.id} updated.`), load())
          }}
        />
      )}
      <form onSubmit={submit} class="card form" aria-label={`Schedule a collection for ${c.name}`}>
        <h4>New schedule</h4>
        <RecurrenceFields start={{ frequency: 'DAILY', every: '1', start: nextWholeHour() }} />
        <OptionsPicker type={c.type} value={chosen} onChange={setChosen} name="the schedule" />
        <ErrorLine error={formError} />
        <button type="submit">Create schedule</button>
      </form>
    </section>
  )
}

function JobHistory({ c, tick, onActive }: { c: ClientJson; tick: number; onActive: (active: boolean) => void }) {
  const [error, setError] = useState('')
  const [jobs, setJobs] = useState<ClientJobJson[] | null>(null)
  const [count, setCount] = useState(0)
  const [page, setPage] = useState(0)
  const pageSize = 10
  async function load() {
    const r = await attempt(() => listClientJobs(client, { client_id: c.id, skip: page * pageSize, limit: pageSize }), setError)
    if (r) {
      setJobs(r.data)
      setCount(r.count)
      onActive(r.data.some((j) => jobCancellable(j.status)))
    }
  }
  useEffect(() => {
    load()
  }, [c.id, tick, page])
  async function cancel(j: ClientJobJson) {
    if (await attempt(() => cancelClientJob(client, j.id), setError)) load()
  }
  return (
    <section aria-label={`Job history of ${c.name}`}>
      <h4>Job history</h4>
      <ErrorLine error={error} />
      {jobs && (
        <table class="list" aria-label={`Jobs of ${c.name}`}>
          <thead>
            <tr><th scope="col">Job</th><th scope="col">From</th><th scope="col">Status</th><th scope="col">Execution time</th><th scope="col">Started</th><th scope="col">Ended</th><th scope="col">Duration</th><th scope="col">Data</th><th scope="col">Message</th><th scope="col"><span class="sr">Actions</span></th></tr>
          </thead>
          <tbody>
            {jobs.length === 0 && <tr><td colSpan={10} class="muted">No job yet.</td></tr>}
            {jobs.map((j) => {
              const started = j.start_time.startsWith('0001-') ? null : j.start_time
              const ended = j.end_time.startsWith('0001-') ? null : j.end_time
              return (
                <tr key={j.id}>
                  <td>{j.id}</td>
                  <td>{j.event_id === null ? 'Run now' : `Schedule ${j.event_id}`}</td>
                  <td>{clientJobStatusName(j.status)}</td>
                  <td>{when(j.execution_time)}</td>
                  <td>{when(started)}</td>
                  <td>{when(ended)}</td>
                  <td>{jobDuration(started, ended)}</td>
                  <td>{j.posts} post{j.posts === 1 ? '' : 's'}, {j.elements} nodes and relationships</td>
                  <td>
                    {j.status_message}
                    {j.log.length > 0 && (
                      <details>
                        <summary aria-label={`Log of job ${j.id}`}>Log ({j.log.length})</summary>
                        <ul>{j.log.map((l, i) => <li key={i}>{when(l.time)}: {l.message}</li>)}</ul>
                      </details>
                    )}
                  </td>
                  <td>{jobCancellable(j.status) && <button class="secondary danger" aria-label={`Cancel job ${j.id}`} onClick={() => cancel(j)}>Cancel</button>}</td>
                </tr>
              )
            })}
          </tbody>
        </table>
      )}
      <Pager page={page} pageSize={pageSize} count={count} onPage={setPage} label={`Jobs of ${c.name} pages`} />
    </section>
  )
}

type Action = { kind: 'edit' | 'delete' | 'token'; c: ClientJson } | null

export default function Clients() {
  const [error, setError] = useState('')
  const [note, setNote] = useState('')
  const [clients, setClients] = useState<ClientJson[] | null>(null)
  const [envs, setEnvs] = useState<EnvironmentJson[]>([])
  const [shown, setShown] = useState<{ name: string; token: ClientTokenJson; regenerated: boolean } | null>(null)
  const [action, setAction] = useState<Action>(null)
  const [openId, setOpenId] = useState<string | null>(null)
  const [tick, setTick] = useState(0)
  const [jobsActive, setJobsActive] = useState(false)

  async function load() {
    const r = await attempt(() => listClients(client), setError)
    if (r) setClients(r.data)
    return r?.data ?? []
  }
  // every 2 s while a job of the open client waits or runs (or any client runs one), every 15 s otherwise
  useEffect(() => {
    let live = true
    let timer: ReturnType<typeof setTimeout>
    const step = async () => {
      const list = await load()
      if (!live) return
      setTick((t) => t + 1)
      timer = setTimeout(step, jobsActive || list.some((c) => c.current_job_id !== null) ? 2000 : 15000)
    }
    timer = setTimeout(step, jobsActive ? 2000 : 15000)
    return () => {
      live = false
      clearTimeout(timer)
    }
  }, [jobsActive, openId])
  useEffect(() => {
    load()
    attempt(() => availableDomains(client), () => {}).then((r) => r && setEnvs(r.data as EnvironmentJson[]))
  }, [])

  async function run(kind: 'delete' | 'token', c: ClientJson) {
    setAction(null)
    setShown(null)
    if (kind === 'delete') {
      if (await attempt(() => deleteClient(client, c.id), setError)) {
        if (openId === c.id) setOpenId(null)
        setNote(`${c.name} deleted; its token no longer works.`)
        load()
      }
    } else {
      const r = await attempt(() => regenerateClientToken(client, c.id), setError)
      if (r) (setShown({ name: c.name, token: r.data, regenerated: true }), load())
    }
  }
  const open = clients?.find((c) => c.id === openId) ?? null

  return (
    <section aria-label="Collector clients">
      <h2>Collector clients</h2>
      <p class="muted">
        Collectors that run as services (SharpHound, AzureHound, OpenHound) poll for jobs with their own token and post what they collect; the data
        is written when the job ends. Run a job now or schedule recurring ones per client.
      </p>
      <ErrorLine error={error} />
      {note && <p role="status">{note}</p>}
      {shown && <TokenOnce shown={shown} onClose={() => setShown(null)} />}
      <CreateClient
        envs={envs}
        onCreated={(c, token) => {
          setNote('')
          setShown({ name: c.name, token, regenerated: false })
          setOpenId(c.id)
          load()
        }}
      />
      {action?.kind === 'edit' && (
        <EditClient
          c={action.c}
          onDone={(changed) => {
            setAction(null)
            if (changed) (setNote(`${action.c.name} updated.`), load())
          }}
        />
      )}
      {(action?.kind === 'delete' || action?.kind === 'token') && (
        <Confirm
          label={action.kind === 'delete' ? 'Delete client' : 'Replace client token'}
          message={
            action.kind === 'delete'
              ? `Delete ${action.c.name}? Its token stops working at once, its unfinished jobs are canceled (nothing they received is written) and its job history goes with it.`
              : `Replace the token of ${action.c.name}? The current token stops working at once: the collector needs the new one.`
          }
          onConfirm={() => run(action.kind as 'delete' | 'token', action.c)}
          onCancel={() => setAction(null)}
        />
      )}
      {clients && (
        <table class="list" aria-label="Clients list">
          <thead>
            <tr><th scope="col">Name</th><th scope="col">Type</th><th scope="col">Environment</th><th scope="col">Last check-in</th><th scope="col">Host</th><th scope="col">Current job</th><th scope="col">Actions</th></tr>
          </thead>
          <tbody>
            {clients.length === 0 && <tr><td colSpan={7} class="muted">No client yet.</td></tr>}
            {clients.map((c) => {
              const age = checkinAge(c.last_checkin)
              const env = envs.find((e) => e.id === c.environment_id)
              return (
                <tr key={c.id} aria-current={c.id === openId ? 'true' : undefined}>
                  <td>{c.name}</td>
                  <td>{clientTypeLabel(c.type)}</td>
                  <td>{env ? `${env.name} ` : ''}<code>{c.environment_id}</code></td>
                  <td title={c.last_checkin ?? undefined}>{c.last_checkin ? `${when(c.last_checkin)} (${age.text})` : 'never'}{c.last_checkin && age.stale ? ' — not heard from' : ''}</td>
                  <td>{[c.hostname, c.ip_address, c.version].filter(Boolean).join(' · ') || '—'}</td>
                  <td>{c.current_job ? `Job ${c.current_job.id}: ${clientJobStatusName(c.current_job.status)}` : 'none'}</td>
                  <td>
                    <div class="actions">
                      <button class="secondary" aria-label={`Jobs and schedules of ${c.name}`} aria-expanded={c.id === openId} onClick={() => setOpenId(c.id === openId ? null : c.id)}>Jobs</button>
                      <button class="secondary" aria-label={`Edit ${c.name}`} onClick={() => setAction({ kind: 'edit', c })}>Edit</button>
                      <button class="secondary" aria-label={`New token for ${c.name}`} onClick={() => setAction({ kind: 'token', c })}>New token</button>
                      <button class="secondary danger" aria-label={`Delete ${c.name}`} onClick={() => setAction({ kind: 'delete', c })}>Delete</button>
                    </div>
                  </td>
                </tr>
              )
            })}
          </tbody>
        </table>
      )}
      {open && (
        <section aria-label={`Client ${open.name}`} class="card">
          <h3>{open.name} <span class="kind">{clientTypeLabel(open.type)}</span></h3>
          <p class="muted">
            Collects <code>{open.environment_id}</code>
            {open.domain_controller ? <> through <code>{open.domain_controller}</code></> : null}. Token ID <code>{open.token_id ?? '—'}</code>.
          </p>
          <RunNow key={`run-${open.id}`} c={open} onRan={() => (setJobsActive(true), setTick((t) => t + 1))} />
          <JobHistory key={`jobs-${open.id}`} c={open} tick={tick} onActive={setJobsActive} />
          <Schedules key={`sched-${open.id}`} c={open} />
        </section>
      )}
    </section>
  )
}
