/**
 * The Administration and Profile pages' pure logic: what a user's roles let them see, the file-upload job
 * statuses, which dropped files are accepted, the audit log filter, and the collector clients' forms (types,
 * collection options, recurrences). Tested in test/unit/console-admin.test.ts and console-clients.test.ts.
 *
 * Showing only what a role may do is a courtesy, not the protection: every route checks its own permission
 * (src/auth/permissions.ts is the one table both read, through ui/src/lib/permissions.ts).
 */
import type { Permission } from '../../../../src/auth/permissions'
import type { AuditQuery } from '../../../../src/client/audit'
import type { ClearDatabaseOptions } from '../../../../src/client/graph'
import type { ClientType, CollectionOption, CollectionOptions } from '../../../../src/client/clients'
import { can } from '../../lib/permissions'

// the console's one permission helper (ui/src/lib/permissions.ts), re-exported for the Administration pages
export { can }

export interface Me {
  roles: readonly string[]
  all_environments?: boolean
}

export interface Section {
  id: string
  label: string
  group: string
}

/**
 * The Administration sections, in order, each with the permission that shows it (and `allEnvironments` when the
 * API also refuses a caller restricted to some environments).
 */
const SECTIONS: (Section & { perm: Permission; allEnvironments?: true })[] = [
  { id: 'file-ingest', label: 'File ingest', group: 'Data collection', perm: 'graph/Ingest' },
  { id: 'data-pipeline', label: 'Data pipeline', group: 'Data collection', perm: 'graph/Read' },
  // POST /api/v2/clear-database: db/Wipe and access to every environment (src/system/wipe.routes.ts)
  { id: 'database-management', label: 'Database management', group: 'Data collection', perm: 'db/Wipe', allEnvironments: true },
  // the routes of src/clients/ (clients, their jobs and schedules) all declare clients/Manage
  { id: 'clients', label: 'Collector clients', group: 'Data collection', perm: 'clients/Manage' },
  { id: 'users', label: 'Users', group: 'Access', perm: 'auth/ManageUsers' },
  { id: 'sso', label: 'SSO providers', group: 'Access', perm: 'auth/ManageProviders' },
  { id: 'extensions', label: 'Graph extensions', group: 'Configuration', perm: 'graph/ManageExtensions' },
  // feature flags and parameters: read with app/ReadAppConfig, changed with app/WriteAppConfig (src/appcfg)
  { id: 'configuration', label: 'Configuration', group: 'Configuration', perm: 'app/ReadAppConfig' },
  { id: 'audit', label: 'Audit log', group: 'Configuration', perm: 'audit/Read' },
]

export function adminSections(me: Me): Section[] {
  return SECTIONS.filter((s) => can(me, s.perm) && (!s.allEnvironments || me.all_environments === true)).map(({ perm: _perm, allEnvironments: _all, ...s }) => s)
}

/** The main navigation entries a user may use: the graph pages need graph/Read, Administration any section. */
export function mainPages(me: Me, all: readonly { label: string; href: string }[]): { label: string; href: string }[] {
  return all.filter((p) => (p.href === '/ui/administration' ? adminSections(me).length > 0 : can(me, 'graph/Read')))
}

/** Where a user lands after sign-in or at /ui: Explore, or their first Administration section (Upload-Only: ingest). */
export function homePath(me: Me): string {
  if (can(me, 'graph/Read')) return '/ui/explore'
  const first = adminSections(me)[0]
  return first ? `/ui/administration/${first.id}` : '/ui/profile'
}

// ---- file ingest ------------------------------------------------------------------------------------

/** BloodHound's file-upload job status numbers and their names (FileUploadJobStatus). */
const JOB_STATUS_NAMES: Record<number, string> = {
  [-1]: 'Invalid',
  0: 'Ready',
  1: 'Running',
  2: 'Complete',
  3: 'Canceled',
  4: 'Timed out',
  5: 'Failed',
  6: 'Ingesting',
  7: 'Analyzing',
  8: 'Partially complete',
}

export function jobStatusName(status: number): string {
  return JOB_STATUS_NAMES[status] ?? `Status ${status}`
}

/** A job still accepting files or being processed: the history is refreshed while one is. */
export function jobActive(status: number): boolean {
  return status === 0 || status === 1 || status === 6 || status === 7
}

/** How long a job took (or has taken by `now`), as "1 min 5 s"; empty without a start. */
export function jobDuration(start: string | null, end: string | null, now: Date = new Date()): string {
  if (!start) return ''
  const ms = (end ? Date.parse(end) : now.getTime()) - Date.parse(start)
  if (!Number.isFinite(ms) || ms < 0) return ''
  const s = Math.round(ms / 1000)
  if (s < 60) return `${s} s`
  const m = Math.floor(s / 60)
  return m < 60 ? `${m} min ${s % 60} s` : `${Math.floor(m / 60)} h ${m % 60} min`
}

/**
 * The content type to upload a dropped file with, or null when it is neither a zip nor JSON (the file is then
 * listed with an error and not sent). Browsers give zips several types (application/zip,
 * application/x-zip-compressed, none), so the name decides when the type does not.
 */
export function uploadContentType(name: string, type: string): 'application/zip' | 'application/json' | null {
  const t = type.toLowerCase()
  const n = name.toLowerCase()
  if (t === 'application/json' || n.endsWith('.json')) return 'application/json'
  if (t === 'application/zip' || t === 'application/x-zip-compressed' || t === 'application/x-zip' || n.endsWith('.zip')) return 'application/zip'
  return null
}

export function percent(loaded: number, total: number): number {
  if (total <= 0) return 0
  return Math.max(0, Math.min(100, Math.round((loaded / total) * 100)))
}

// ---- audit log --------------------------------------------------------------------------------------

export interface AuditFilter {
  action: string
  actor: string
  /** yyyy-mm-dd (a date input's value), inclusive */
  from: string
  to: string
  page: number
  pageSize: number
}

/**
 * The audit log query for a filter: the newest first, one page; `from`/`to` are whole UTC days, `to`
 * included (so its end is the start of the next day).
 */
export function auditQuery(f: AuditFilter): AuditQuery {
  const q: AuditQuery = { skip: f.page * f.pageSize, limit: f.pageSize, sort_by: '-created_at', filters: {} }
  if (f.action) q.filters!.action = `eq:${f.action}`
  if (f.actor.trim()) q.filters!.actor_name = `eq:${f.actor.trim()}`
  if (/^\d{4}-\d{2}-\d{2}$/.test(f.from)) q.after = `${f.from}T00:00:00.000Z`
  if (/^\d{4}-\d{2}-\d{2}$/.test(f.to)) {
    const next = new Date(`${f.to}T00:00:00.000Z`)
    next.setUTCDate(next.getUTCDate() + 1)
    q.before = next.toISOString()
  }
  return q
}

// ---- database management -----------------------------------------------------------------------------

/** What the Database management page's boxes say to delete. */
export interface WipeChoice {
  /** every node and edge */
  allGraphData: boolean
  /** ids of GET /api/v2/graphs/source-kinds (ignored when allGraphData: it covers them, and the API refuses both) */
  sourceKinds: readonly number[]
  /** the HasSession relationships */
  sessions: boolean
  fileIngestHistory: boolean
  dataQualityHistory: boolean
  /** asset group ids whose custom selectors are deleted */
  assetGroupSelectors: readonly number[]
}

export const NO_WIPE: WipeChoice = { allGraphData: false, sourceKinds: [], sessions: false, fileIngestHistory: false, dataQualityHistory: false, assetGroupSelectors: [] }

/** The body of POST /api/v2/clear-database for a choice, or null when nothing is chosen (the API would answer 400). */
export function wipeOptions(c: WipeChoice): ClearDatabaseOptions | null {
  const o: ClearDatabaseOptions = {}
  if (c.allGraphData) o.deleteCollectedGraphData = true
  else if (c.sourceKinds.length) o.deleteSourceKinds = [...new Set(c.sourceKinds)]
  if (c.sessions) o.deleteRelationships = ['HasSession']
  if (c.fileIngestHistory) o.deleteFileIngestHistory = true
  if (c.dataQualityHistory) o.deleteDataQualityHistory = true
  if (c.assetGroupSelectors.length) o.deleteAssetGroupSelectors = [...new Set(c.assetGroupSelectors)]
  return Object.keys(o).length ? o : null
}

/** How a source kind is named on the page. */
export function sourceKindLabel(name: string): string {
  if (name === 'Base') return 'Active Directory data (Base)'
  if (name === 'AZBase') return 'Azure data (AZBase)'
  if (name === 'Sourceless') return 'Data of no source kind (Sourceless)'
  return `${name} data`
}

/** The phrase the user types to confirm a deletion (an irreversible change of everyone's data). */
export const WIPE_PHRASE = 'delete this data'

export function wipeConfirmed(typed: string): boolean {
  return typed.trim().toLowerCase() === WIPE_PHRASE
}

// ---- collector clients --------------------------------------------------------------------------------

export const CLIENT_TYPE_CHOICES: { value: ClientType; label: string; environment: string; placeholder: string }[] = [
  { value: 'sharphound', label: 'SharpHound', environment: 'Domain SID', placeholder: 'S-1-5-21-…' },
  { value: 'azurehound', label: 'AzureHound', environment: 'Tenant ID', placeholder: 'tenant id (upper case)' },
  { value: 'openhound', label: 'OpenHound (OpenGraph collector)', environment: 'Environment ID', placeholder: 'id of the environment node' },
]

export function clientTypeLabel(type: string): string {
  return CLIENT_TYPE_CHOICES.find((t) => t.value === type)?.label.replace(/ \(.*\)$/, '') ?? type
}

/** What the environment field means for a client type (the only environment its data may write). */
export function environmentLabel(type: string): string {
  return CLIENT_TYPE_CHOICES.find((t) => t.value === type)?.environment ?? 'Environment ID'
}

const OPTION_LABELS: Record<CollectionOption, string> = {
  session_collection: 'Sessions',
  local_group_collection: 'Local groups',
  ad_structure_collection: 'AD structure',
  cert_services_collection: 'Certificate services',
  ca_registry_collection: 'CA registry',
  dc_registry_collection: 'DC registry',
  all_trusted_domains: 'All trusted domains',
}

/**
 * The collection options a client type reads from its jobs. The job's fields are SharpHound's collection methods
 * (BloodHound Enterprise's job model); AzureHound and OpenHound collect what their own configuration names and
 * read none of them, so their jobs are offered with no option (the API stores them false).
 */
export function collectionOptionsFor(type: string): { key: CollectionOption; label: string }[] {
  if (type !== 'sharphound') return []
  return (Object.keys(OPTION_LABELS) as CollectionOption[]).map((key) => ({ key, label: OPTION_LABELS[key] }))
}

/** The options a SharpHound job starts with: everything but the all-trusted-domains sweep. */
export function defaultOptions(type: string): Set<CollectionOption> {
  return new Set(collectionOptionsFor(type).map((o) => o.key).filter((k) => k !== 'all_trusted_domains'))
}

/** The body of run-now or of a schedule: every option the type takes, true when chosen (none for the others). */
export function optionsBody(type: string, chosen: ReadonlySet<string>): Partial<CollectionOptions> {
  return Object.fromEntries(collectionOptionsFor(type).map((o) => [o.key, chosen.has(o.key)]))
}

/** The chosen options of a job or schedule, as words ("Sessions, AD structure"; "—" for none). */
export function optionsSummary(o: Partial<CollectionOptions>): string {
  const on = (Object.keys(OPTION_LABELS) as CollectionOption[]).filter((k) => o[k]).map((k) => OPTION_LABELS[k])
  return on.length ? on.join(', ') : '—'
}

/** The create form's body: trimmed; the domain controller only for SharpHound, null when blank. */
export function clientBody(f: { name: string; type: string; environment: string; domainController: string }) {
  const dc = f.type === 'sharphound' ? f.domainController.trim() : ''
  return { name: f.name.trim(), type: f.type, environment_id: f.environment.trim(), domain_controller: dc || null }
}

/** A collector job's status names: the file-upload job's (BloodHound's one JobStatus list). */
export const clientJobStatusName = jobStatusName

/** A job an administrator may still cancel (the API's rule: ready, running or ingesting). */
export function jobCancellable(status: number): boolean {
  return status === 0 || status === 1 || status === 6
}

/** The API fails a running job whose client is not heard from for 10 minutes (docs/collectors.md "Timeouts"). */
export const CHECKIN_TIMEOUT_MS = 10 * 60_000

/** How long ago a client checked in, in words, and whether that is longer than the timeout ("never" without one). */
export function checkinAge(last: string | null, now: Date = new Date()): { text: string; stale: boolean } {
  const t = last ? Date.parse(last) : NaN
  if (!Number.isFinite(t)) return { text: 'never', stale: true }
  const s = Math.max(0, Math.round((now.getTime() - t) / 1000))
  const text = s < 60 ? `${s} s ago` : s < 3600 ? `${Math.floor(s / 60)} min ago` : s < 86_400 ? `${Math.floor(s / 3600)} h ago` : `${Math.floor(s / 86_400)} d ago`
  return { text, stale: now.getTime() - t > CHECKIN_TIMEOUT_MS }
}

export type Frequency = 'HOURLY' | 'DAILY' | 'WEEKLY'

/**
 * The recurrence text the API takes (src/clients/rrule.ts) for a form: `start` is a datetime-local value read
 * as UTC ("2026-12-01T02:00"), `every` the interval; null with the reason when the form is not usable.
 */
export function scheduleRrule(f: { frequency: Frequency; every: string; start: string }): { rrule: string } | { error: string } {
  if (!/^\d{1,4}$/.test(f.every.trim()) || +f.every < 1 || +f.every > 1000) return { error: 'Repeat every must be a whole number from 1 to 1000.' }
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?$/.exec(f.start.trim())
  if (!m) return { error: 'Choose the first run (date and time, UTC).' }
  return { rrule: `DTSTART:${m[1]}${m[2]}${m[3]}T${m[4]}${m[5]}${m[6] ?? '00'}Z RRULE:FREQ=${f.frequency};INTERVAL=${+f.every}` }
}

const UNIT: Record<string, [string, string]> = { HOURLY: ['hour', 'hours'], DAILY: ['day', 'days'], WEEKLY: ['week', 'weeks'] }

/** A schedule's recurrence in words ("Every 2 days from 2026-12-01 02:00 UTC"); the text itself when not ours. */
export function describeRrule(rrule: string): string {
  const freq = /FREQ=(HOURLY|DAILY|WEEKLY)/i.exec(rrule)?.[1]?.toUpperCase()
  if (!freq) return rrule
  const n = +(/INTERVAL=(\d+)/i.exec(rrule)?.[1] ?? '1')
  const every = n === 1 ? `Every ${UNIT[freq][0]}` : `Every ${n} ${UNIT[freq][1]}`
  const d = /DTSTART:(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})\d{2}Z/i.exec(rrule)
  return d ? `${every} from ${d[1]}-${d[2]}-${d[3]} ${d[4]}:${d[5]} UTC` : every
}

/**
 * The schedule form's fields for a stored schedule (its Edit form starts from them): frequency and interval from
 * the recurrence, the first run from its DTSTART (seconds kept only when not zero), or, without one, the
 * schedule's next run, itself an occurrence of the series. Null for a recurrence the form cannot show (not made
 * by the form or the API's FREQ HOURLY, DAILY or WEEKLY).
 */
export function scheduleFields(s: { rrule: string; next_run: string }): { frequency: Frequency; every: string; start: string } | null {
  const freq = /FREQ=(HOURLY|DAILY|WEEKLY)(?:;|\s|$)/i.exec(s.rrule)?.[1]?.toUpperCase() as Frequency | undefined
  if (!freq) return null
  const every = /INTERVAL=(\d+)/i.exec(s.rrule)?.[1] ?? '1'
  const d = /DTSTART:(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z/i.exec(s.rrule)
  const start = d ? `${d[1]}-${d[2]}-${d[3]}T${d[4]}:${d[5]}${d[6] === '00' ? '' : `:${d[6]}`}` : s.next_run.slice(0, s.next_run.slice(17, 19) === '00' ? 16 : 19)
  return { frequency: freq, every: String(+every), start }
}

/** The collection options a stored schedule (or job) has set, as the options picker's set (those of its type only). */
export function chosenOptions(type: string, o: Partial<CollectionOptions>): Set<CollectionOption> {
  return new Set(collectionOptionsFor(type).map((x) => x.key).filter((k) => o[k] === true))
}

/** Today's next whole hour as a datetime-local value in UTC: the schedule form's first-run default. */
export function nextWholeHour(now: Date = new Date()): string {
  const d = new Date(Math.ceil(now.getTime() / 3_600_000) * 3_600_000)
  return d.toISOString().slice(0, 16)
}
