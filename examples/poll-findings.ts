/// <reference types="node" />
/**
 * Example connector: the six steps a security-operations connector runs against EdgeHound (the spec's
 * "Connector behaviour"), printing alerts grouped per environment and remembering, per environment, the
 * newest `created_at` it has seen in a local state file, so a second run prints nothing new.
 *
 *   EDGEHOUND_URL=https://edgehound.example.workers.dev EDGEHOUND_TOKEN_ID=… EDGEHOUND_TOKEN_KEY=… \
 *     npx tsx examples/poll-findings.ts
 *
 * Optional: EDGEHOUND_ENVIRONMENTS (comma list of environment names or ids; default every collected one),
 * EDGEHOUND_FINDING_TYPES (comma list; default every type), EDGEHOUND_POLL_STATE (state file; default
 * .edgehound/poll-state.json). Exit status 0 when every environment was read, 1 when one failed
 * (its watermark is then left alone, so the next run picks its findings up), 2 for missing settings.
 *
 * Unlike some real connectors, the watermark of an environment only moves when all of its pages were read:
 * stopping half-way on a 429 and still saving the newest `created_at` seen would lose the unread findings.
 */
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { EdgeHoundClient, EdgeHoundError } from '../src/client'
import { availableDomains, availableTypes, findingText, iterateDetails, type FindingItem, type Loose } from '../src/client/cli-endpoints'

export interface PollOptions {
  client: EdgeHoundClient
  stateFile: string
  /** names or ids; empty = every collected environment */
  environments?: string[]
  findingTypes?: string[]
  print: (line: string) => void
  warn: (line: string) => void
}

export interface PollState {
  /** environment id → newest `created_at` already turned into an alert (RFC 3339, compared as strings) */
  last_created_at: Record<string, string>
}

export interface Alert {
  environment: { id: string; name: string }
  finding: string
  title: string
  remediation: string
  severity: string
  subject: string
  created_at: string
  record: Loose<FindingItem>
}

async function loadState(file: string): Promise<PollState> {
  try {
    const j = JSON.parse(await readFile(file, 'utf8')) as Partial<PollState>
    return { last_created_at: j.last_created_at && typeof j.last_created_at === 'object' ? j.last_created_at : {} }
  } catch {
    return { last_created_at: {} }
  }
}

async function saveState(file: string, state: PollState): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true })
  const tmp = `${file}.${process.pid}.tmp`
  await writeFile(tmp, JSON.stringify(state, null, 2) + '\n')
  await rename(tmp, file)
}

function subjectOf(it: Loose<FindingItem>): string {
  const p = (k: string) => (it[k] && typeof it[k] === 'object' ? (it[k] as Record<string, unknown>) : {})
  if (it.FromPrincipal !== undefined || it.FromPrincipalName !== undefined)
    return `${it.FromPrincipalName ?? p('FromPrincipalProps').name ?? it.FromPrincipal} -> ${it.ToPrincipalName ?? p('ToPrincipalProps').name ?? it.ToPrincipal}`
  return String(it.PrincipalName ?? p('Props').name ?? it.Principal ?? '?')
}

/** What the spec tells a connector to do per status: returns true when the whole run must stop. */
function handle(e: unknown, where: string, warn: (l: string) => void): boolean {
  if (!(e instanceof EdgeHoundError)) {
    warn(`${where}: ${(e as Error).message ?? e}`)
    return false
  }
  const msg = `${where}: HTTP ${e.status}: ${e.message}${e.envelope?.request_id ? ` (request id ${e.envelope.request_id})` : ''}`
  if (e.status === 401) {
    warn(`${msg}; check the token id and key`)
    return true
  }
  if (e.status === 429) warn(`${msg}; rate limited, deferring to the next run`)
  else warn(msg)
  return false
}

export async function pollFindings(o: PollOptions): Promise<{ alerts: Alert[]; failed: string[] }> {
  const c = o.client
  const state = await loadState(o.stateFile)
  const alerts: Alert[] = []
  const failed: string[] = []

  // 1. environments available to this token; keep the configured ones (and only collected ones)
  const all = (await availableDomains(c)).data ?? []
  const wanted = (o.environments ?? []).map((s) => s.toLowerCase())
  const envs = all.filter((e) => e.collected !== false && (wanted.length === 0 || wanted.includes(e.id.toLowerCase()) || wanted.includes(String(e.name).toLowerCase())))
  for (const w of wanted) if (!all.some((e) => e.id.toLowerCase() === w || String(e.name).toLowerCase() === w)) o.warn(`environment ${w} is not available to this token`)

  const texts = new Map<string, { title: string; remediation: string }>()
  for (const env of envs) {
    const since = state.last_created_at[env.id] ?? ''
    let newest = since
    const envAlerts: Alert[] = []
    try {
      // 2. finding types of the environment (filtered by configuration)
      let types = (await availableTypes(c, env.id)).data ?? []
      if (o.findingTypes?.length) types = types.filter((t) => o.findingTypes!.includes(t))
      for (const t of types) {
        // 3. texts of each finding type, once per run (a missing text falls back to the type name)
        if (!texts.has(t)) {
          const get = (which: 'title' | 'short_remediation') => findingText(c, t, which).catch(() => '')
          texts.set(t, { title: (await get('title')) || t, remediation: await get('short_remediation') })
        }
        // 4. detail records, paged with skip until an empty page
        for await (const it of iterateDetails(c, env.id, t, { pageSize: 100 })) {
          const created = typeof it.created_at === 'string' ? it.created_at : ''
          // 6 (read side). only records newer than what this environment has already alerted on
          if (!created || created <= since) continue
          if (created > newest) newest = created
          const tx = texts.get(t)!
          envAlerts.push({
            environment: { id: env.id, name: env.name },
            finding: t,
            title: tx.title,
            remediation: tx.remediation,
            severity: it.Severity || 'unrated',
            subject: subjectOf(it),
            created_at: created,
            record: it,
          })
        }
      }
    } catch (e) {
      failed.push(env.name)
      if (handle(e, `environment ${env.name}`, o.warn)) break
      continue // watermark untouched: the next run reads this environment again
    }
    // 5. alerts, grouped per environment (one "case" per environment, as the connectors do)
    if (envAlerts.length) {
      envAlerts.sort((a, b) => (a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : 0))
      o.print(`== ${env.name} (${env.id}): ${envAlerts.length} new finding(s)`)
      for (const a of envAlerts) {
        o.print(`[${a.severity}] ${a.title}: ${a.subject} (created ${a.created_at})`)
        if (a.remediation) o.print(`    remediation: ${a.remediation.split('\n')[0]}`)
      }
      alerts.push(...envAlerts)
    }
    // 6. remember the newest created_at of this environment
    if (newest) state.last_created_at[env.id] = newest
  }
  await saveState(o.stateFile, state)
  return { alerts, failed }
}

async function main(): Promise<number> {
  const env = process.env
  const list = (v: string | undefined) => (v ? v.split(',').map((s) => s.trim()).filter(Boolean) : [])
  if (!env.EDGEHOUND_URL || !env.EDGEHOUND_TOKEN_ID || !env.EDGEHOUND_TOKEN_KEY) {
    console.error('set EDGEHOUND_URL, EDGEHOUND_TOKEN_ID and EDGEHOUND_TOKEN_KEY')
    return 2
  }
  const client = new EdgeHoundClient({
    baseUrl: env.EDGEHOUND_URL,
    credentials: { kind: 'token', tokenId: env.EDGEHOUND_TOKEN_ID, tokenKey: env.EDGEHOUND_TOKEN_KEY },
  })
  try {
    const r = await pollFindings({
      client,
      stateFile: path.resolve(env.EDGEHOUND_POLL_STATE ?? '.edgehound/poll-state.json'),
      environments: list(env.EDGEHOUND_ENVIRONMENTS),
      findingTypes: list(env.EDGEHOUND_FINDING_TYPES),
      print: (l) => console.log(l),
      warn: (l) => console.error(l),
    })
    console.error(`${r.alerts.length} new finding(s)${r.failed.length ? `; failed: ${r.failed.join(', ')}` : ''}`)
    return r.failed.length ? 1 : 0
  } catch (e) {
    handle(e, 'listing environments', (l) => console.error(l))
    return 1
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().then((code) => {
    process.exitCode = code
  })
}
