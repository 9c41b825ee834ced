/**
 * The Administration and Profile pages' pure logic: what a user's roles let them see, the file-upload job
 * statuses, which dropped files are accepted, and the audit log filter. Tested in test/unit/console-admin.test.ts.
 *
 * Showing only what a role may do is a courtesy, not the protection: every route checks its own permission
 * (src/auth/permissions.ts is the one table both read, through ui/src/lib/permissions.ts).
 */
import type { Permission } from '../../../../src/auth/permissions'
import type { AuditQuery } from '../../../../src/client/audit'
import type { ClearDatabaseOptions } from '../../../../src/client/graph'
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
  { id: 'users', label: 'Users', group: 'Access', perm: 'auth/ManageUsers' },
  { id: 'sso', label: 'SSO providers', group: 'Access', perm: 'auth/ManageProviders' },
  { id: 'extensions', label: 'Graph extensions', group: 'Configuration', perm: 'graph/ManageExtensions' },
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
