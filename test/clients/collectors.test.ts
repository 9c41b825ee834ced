/**
 * Collectors running as services (issue 26) against EdgeHound, request for request, as their sources send them:
 *
 *  - AzureHound `start` (SpecterOps/AzureHound cmd/start.go, client/bloodhound/client.go): `bhesignature`,
 *    PUT clients/update, the orphaned-job check on its answer (`current_job.status` 1 → POST jobs/end failed),
 *    GET jobs/available every 5 s, POST jobs/start {"id"}, POST ingest with a gzip body of
 *    {"meta":{"type":"azure"},"data":[…]} (json.Encoder's trailing newline; Content-Encoding gzip, NO
 *    Content-Type) answered 202 or it counts as an error, GET jobs/current as its check-in, POST jobs/end
 *    {"status":"COMPLETE","message":"Collection completed successfully"}.
 *  - OpenHound (SpecterOps/OpenHound core/clients/bloodhound.py + bloodhound_enterprise.py): Python's RequestDate
 *    (microseconds, +00:00), Content-Type application/json on every request, PUT clients/update
 *    {"Address","Hostname","Version"}, GET jobs/available (takes data[0]), POST jobs/start, POST ingest gzip of
 *    {"graph":{"nodes","edges"},"metadata":{"source_kind"}} (any of 200/201/202), POST jobs/end
 *    {"status":"complete","message":…}; it validates every answer with its pydantic models (fields checked here).
 *
 * Each sequence runs twice within the hour (identical check-in and end bodies, the same signature hour).
 */
import { env } from 'cloudflare:workers'
import { beforeAll, describe, expect, it } from 'vitest'
import { adminSession, client, expectEnvelope } from '../helpers'
import type { EdgeHoundClient } from '../../src/client'
import { items as azureItems, T as TENANT } from '../fixtures/azurehound/tenant'
import { sweepSilentClients, CLIENT_CHECKIN_TIMEOUT_MS } from '../../src/clients/timeout'

const db = env.DB

async function gzip(text: string): Promise<Uint8Array> {
  const s = new Blob([text]).stream().pipeThrough(new CompressionStream('gzip'))
  return new Uint8Array(await new Response(s).arrayBuffer())
}

/** Go's time.Now().Format(time.RFC3339) on a UTC host */
const goDate = (d: Date) => d.toISOString().replace(/\.\d{3}Z$/, 'Z')
/** Python's datetime.now(UTC).astimezone().isoformat('T') on a UTC host */
const pythonDate = (d: Date) => d.toISOString().replace(/\.(\d{3})Z$/, '.$1456+00:00')

interface CreatedClient {
  id: string
  token: { id: string; key: string }
}

async function createClient(admin: EdgeHoundClient, type: string, environment: string, name = `c-${crypto.randomUUID()}`): Promise<CreatedClient> {
  const r = await admin.raw('POST', '/api/v2/clients', { name, type, environment_id: environment })
  expect(r.status).toBe(201)
  return ((await r.json()) as { data: CreatedClient }).data
}

async function runNow(admin: EdgeHoundClient, clientId: string, body: Record<string, boolean> = {}): Promise<number> {
  const r = await admin.raw('POST', `/api/v2/clients/${clientId}/jobs`, body)
  expect(r.status).toBe(201)
  return ((await r.json()) as { data: { id: number } }).data.id
}

async function jobOf(admin: EdgeHoundClient, id: number) {
  const r = await admin.raw('GET', `/api/v2/jobs/${id}`)
  expect(r.status).toBe(200)
  return ((await r.json()) as { data: { status: number; status_message: string; posts: number; log: { message: string }[]; ingest_job_id: number | null } }).data
}

async function nodesIn(environment: string): Promise<number> {
  return (await db.prepare('SELECT count(*) AS n FROM nodes WHERE environment_id = ?').bind(environment).first<{ n: number }>())!.n
}

/** AzureHound's BHEClient: bhesignature, Go's date, JSON bodies via rest.NewRequest (Content-Type application/json). */
class AzureHound {
  calls: { method: string; path: string; status: number }[] = []
  private c: EdgeHoundClient
  constructor(token: { id: string; key: string }) {
    this.c = client({ kind: 'token', tokenId: token.id, tokenKey: token.key, scheme: 'bhesignature' }, { formatDate: goDate })
  }
  private async send(method: string, path: string, body?: Uint8Array | string, headers: Record<string, string> = {}) {
    const res = await this.c.raw(method, path, typeof body === 'string' ? new TextEncoder().encode(body) : body, { exactTarget: true, headers: { 'User-Agent': 'azurehound/v2.5.0', Accept: 'application/json', ...headers } })
    this.calls.push({ method, path, status: res.status })
    return res
  }
  json(method: string, path: string, body?: unknown) {
    return this.send(method, path, body === undefined ? undefined : JSON.stringify(body), body === undefined ? {} : { 'Content-Type': 'application/json' })
  }
  /** SendRequest: anything outside 2xx (after 5xx retries) is an error */
  async ok(method: string, path: string, body?: unknown) {
    const res = await this.json(method, path, body)
    if (res.status < 200 || res.status >= 400) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`)
    return (await res.json()) as { data: Record<string, unknown> & { current_job?: { status: number }; current_job_id?: number | null } }
  }
  /** Ingest: gzip of json.Encoder output (trailing newline), Content-Encoding gzip, no Content-Type; only 202 is success */
  async ingest(data: unknown[]) {
    const res = await this.send('POST', '/api/v2/ingest', await gzip(JSON.stringify({ meta: { type: 'azure' }, data }) + '\n'), { 'Content-Encoding': 'gzip' })
    return res
  }
  /** cmd/start.go up to "waiting for jobs": update client, then end an orphaned job */
  async start() {
    const updated = await this.ok('PUT', '/api/v2/clients/update', { Address: '10.0.0.7:443', Hostname: 'collector-01', Version: 'v2.5.0' })
    if (updated.data.current_job?.status === 1)
      await this.ok('POST', '/api/v2/jobs/end', { status: 'FAILED', message: 'This job has been orphaned. Re-run collection for complete data.' })
    return updated
  }
  /** one tick with a job: available → start → ingest batches → check-in → end */
  async collect(batches: unknown[][]) {
    const jobs = (await this.ok('GET', '/api/v2/jobs/available')) as unknown as { data: { id: number; status: number; execution_time: string }[] }
    const executable = jobs.data.filter((j) => j.status === 0 && Date.parse(j.execution_time) <= Date.now())
    expect(executable.length).toBeGreaterThan(0)
    const id = executable[0].id
    await this.ok('POST', '/api/v2/jobs/start', { id })
    for (const b of batches) expect((await this.ingest(b)).status).toBe(202)
    await this.ok('GET', '/api/v2/jobs/current')
    await this.ok('POST', '/api/v2/jobs/end', { status: 'COMPLETE', message: 'Collection completed successfully' })
    return id
  }
}

/** OpenHound's BloodHoundEnterprise client */
class OpenHound {
  private c: EdgeHoundClient
  constructor(token: { id: string; key: string }) {
    this.c = client({ kind: 'token', tokenId: token.id, tokenKey: token.key, scheme: 'bhesignature' }, { formatDate: pythonDate })
  }
  /** BloodHound.request + _request: non-2xx raises */
  async request(method: string, path: string, body?: Uint8Array, extra: Record<string, string> = {}) {
    const res = await this.c.raw(method, path, body, { exactTarget: true, headers: { 'User-Agent': 'openhound/v0.4.0', 'Content-Type': 'application/json', ...extra } })
    if (res.status < 200 || res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`)
    return res
  }
  updateClientMetadata() {
    return this.request('PUT', '/api/v2/clients/update', new TextEncoder().encode(JSON.stringify({ Address: '10.0.0.8', Hostname: 'openhound-01', Version: 'v0.4.0' })))
  }
  async jobsAvailable() {
    const body = (await (await this.request('GET', '/api/v2/jobs/available')).json()) as { data: Record<string, unknown>[] }
    for (const j of body.data) expectJob(j)
    return body.data
  }
  async startJob(id: number) {
    const body = (await (await this.request('POST', '/api/v2/jobs/start', new TextEncoder().encode(JSON.stringify({ id })))).json()) as { data: Record<string, unknown> }
    expectJob(body.data)
    for (const k of ['start_time', 'end_time', 'last_ingest']) expect(Number.isNaN(Date.parse(body.data[k] as string)), k).toBe(false)
    for (const k of ['created_at', 'updated_at']) expect(typeof body.data[k]).toBe('string')
    expect(body.data.deleted_at).toEqual({ Time: expect.any(String), Valid: false })
    expect(typeof body.data.event_title).toBe('string')
    expect(body.data.log_path === null || typeof body.data.log_path === 'string').toBe(true)
    return body.data
  }
  async ingest(data: string) {
    return this.request('POST', '/api/v2/ingest', await gzip(data), { 'Content-Encoding': 'gzip', 'Content-Type': 'application/json' })
  }
  async endJob(status: 'complete' | 'failed', message: string) {
    const body = (await (await this.request('POST', '/api/v2/jobs/end', new TextEncoder().encode(JSON.stringify({ status, message })))).json()) as { data: Record<string, unknown> }
    expectJob(body.data)
    return body.data
  }
}

/** OpenHound's pydantic Job model */
function expectJob(j: Record<string, unknown>) {
  expect(Number.isInteger(j.id)).toBe(true)
  expect(typeof j.client_id).toBe('string')
  expect(typeof j.client_name).toBe('string')
  expect(j.event_id === null || Number.isInteger(j.event_id)).toBe(true)
  expect(Number.isNaN(Date.parse(j.execution_time as string))).toBe(false)
  expect(Number.isInteger(j.status)).toBe(true)
  expect(typeof j.status_message).toBe('string')
  for (const k of ['session_collection', 'local_group_collection', 'ad_structure_collection', 'cert_services_collection', 'ca_registry_collection', 'dc_registry_collection', 'all_trusted_domains'])
    expect(typeof j[k], k).toBe('boolean')
  expect(j.domain_controller === null || typeof j.domain_controller === 'string').toBe(true)
}

let admin: EdgeHoundClient
beforeAll(async () => {
  admin = await adminSession()
})

describe('AzureHound start', () => {
  it('runs its sequence twice within the hour: data lands in its tenant once each job ends', async () => {
    const env_ = TENANT.toUpperCase()
    const cl = await createClient(admin, 'AzureHound', env_)
    const az = new AzureHound(cl.token)
    for (let run = 1; run <= 2; run++) {
      const jobId = await runNow(admin, cl.id)
      await az.start()
      const half = Math.ceil(azureItems.length / 2)
      const id = await az.collect([azureItems.slice(0, half), azureItems.slice(half)])
      expect(id).toBe(jobId)
      const job = await jobOf(admin, jobId)
      expect(job.status).toBe(2)
      expect(job.posts).toBe(2)
      expect(await nodesIn(env_)).toBeGreaterThan(5)
    }
    expect(az.calls.every((c) => c.status < 300)).toBe(true)
    // check-in metadata shown to administrators
    const r = (await (await admin.raw('GET', `/api/v2/clients/${cl.id}`)).json()) as { data: Record<string, unknown> }
    expect(r.data).toMatchObject({ hostname: 'collector-01', version: 'v2.5.0', ip_address: '10.0.0.7:443', current_job_id: null })
    expect(typeof r.data.last_checkin).toBe('string')
  })

  it('orphaned job: a restart ends the running job as failed and nothing it posted is written', async () => {
    const envId = 'A0A0A0A0-0000-4000-8000-00000000ORPH'
    const cl = await createClient(admin, 'azurehound', envId)
    const az = new AzureHound(cl.token)
    const jobId = await runNow(admin, cl.id)
    await az.start()
    await az.ok('POST', '/api/v2/jobs/start', { id: jobId })
    const post = await az.ingest([{ kind: 'AZTenant', data: { tenantId: envId, displayName: 'orphan tenant', verifiedDomains: [] } }])
    expect(post.status).toBe(202)
    // the service restarts
    const updated = await az.start()
    expect(updated.data.current_job_id).toBe(jobId)
    expect(updated.data.current_job?.status).toBe(1)
    const job = await jobOf(admin, jobId)
    expect(job.status).toBe(5)
    expect(job.status_message).toContain('orphaned')
    expect(await nodesIn(envId)).toBe(0)
    expect((await db.prepare('SELECT count(*) AS n FROM client_job_posts WHERE job_id = ?').bind(jobId).first<{ n: number }>())!.n).toBe(0)
  })
})

describe('OpenHound', () => {
  it('runs its sequence twice within the hour', async () => {
    const envId = `GH-ORG-${crypto.randomUUID().slice(0, 8).toUpperCase()}`
    const cl = await createClient(admin, 'OpenHound', envId)
    const oh = new OpenHound(cl.token)
    for (let run = 1; run <= 2; run++) {
      const jobId = await runNow(admin, cl.id)
      await oh.updateClientMetadata()
      const jobs = await oh.jobsAvailable()
      expect(jobs[0].id).toBe(jobId)
      await oh.startJob(jobId)
      const graph = {
        graph: {
          nodes: [
            { id: envId, kinds: ['GHOrganization'], properties: { name: 'org', environmentid: envId } },
            { id: `${envId}-U${run}`, kinds: ['GHUser'], properties: { name: `user${run}`, environmentid: envId } },
          ],
          edges: [{ start: { value: `${envId}-U${run}` }, end: { value: envId }, kind: 'GHMemberOf', properties: {} }],
        },
        metadata: { source_kind: 'GHBase' },
      }
      const res = await oh.ingest(JSON.stringify(graph))
      expect([200, 201, 202]).toContain(res.status)
      const ended = await oh.endJob('complete', 'Collection completed successfully')
      expect(ended.status).toBe(2)
      expect(await nodesIn(envId)).toBe(run + 1)
    }
  })
})

describe('jobs', () => {
  it('concurrent starts of one job: exactly one wins', async () => {
    const cl = await createClient(admin, 'sharphound', 'S-1-5-21-9000')
    const jobId = await runNow(admin, cl.id, { session_collection: true })
    const az = new AzureHound(cl.token)
    const results = await Promise.all(Array.from({ length: 4 }, () => az.json('POST', '/api/v2/jobs/start', { id: jobId })))
    const statuses = results.map((r) => r.status).sort()
    expect(statuses).toEqual([200, 409, 409, 409])
    const job = await jobOf(admin, jobId)
    expect(job.status).toBe(1)
    expect((await db.prepare('SELECT count(*) AS n FROM ingest_jobs WHERE id = ?').bind(job.ingest_job_id).first<{ n: number }>())!.n).toBe(1)
  })

  it('a job for environment A cannot write B', async () => {
    const a = 'OG-ENV-A-' + crypto.randomUUID().slice(0, 6)
    const b = 'OG-ENV-B-' + crypto.randomUUID().slice(0, 6)
    const cl = await createClient(admin, 'openhound', a)
    const oh = new OpenHound(cl.token)
    const jobId = await runNow(admin, cl.id)
    await oh.startJob(jobId)
    await oh.ingest(
      JSON.stringify({
        graph: {
          nodes: [
            { id: `${a}-N`, kinds: ['GHUser'], properties: { environmentid: a } },
            { id: `${b}-N`, kinds: ['GHUser'], properties: { environmentid: b } },
          ],
        },
      }),
    )
    await oh.endJob('complete', 'done')
    expect(await nodesIn(a)).toBe(1)
    expect(await nodesIn(b)).toBe(0)
  })

  it('a canceled job and a timed-out job leave nothing written or staged', async () => {
    const envId = 'OG-KILL-' + crypto.randomUUID().slice(0, 6)
    const cl = await createClient(admin, 'openhound', envId)
    const oh = new OpenHound(cl.token)
    const node = (n: number) => JSON.stringify({ graph: { nodes: [{ id: `${envId}-${n}`, kinds: ['GHUser'], properties: { environmentid: envId } }] } })
    // canceled by an administrator mid-job
    const j1 = await runNow(admin, cl.id)
    await oh.startJob(j1)
    await oh.ingest(node(1))
    const cancel = await admin.raw('PUT', `/api/v2/jobs/${j1}/cancel`)
    expect(cancel.status).toBe(200)
    expect((await jobOf(admin, j1)).status).toBe(3)
    await expect(oh.ingest(node(2))).rejects.toThrow(/400/)
    await expect(oh.endJob('complete', 'x')).rejects.toThrow(/400/)
    // killed: the client stops checking in; the cron sweep fails the job
    const j2 = await runNow(admin, cl.id)
    await oh.startJob(j2)
    await oh.ingest(node(3))
    expect(await sweepSilentClients(env, Date.now())).not.toContain(j2)
    const failed = await sweepSilentClients(env, Date.now() + CLIENT_CHECKIN_TIMEOUT_MS + 120_000)
    expect(failed).toContain(j2)
    expect((await jobOf(admin, j2)).status).toBe(5)
    expect(await nodesIn(envId)).toBe(0)
    const staged = await db
      .prepare(`SELECT count(*) AS n FROM ingest_staging WHERE rows LIKE ?`)
      .bind(`%${envId}%`)
      .first<{ n: number }>()
    expect(staged!.n).toBe(0)
  })

  it('GET jobs/current answers 404 when the client runs no job; jobs/available lists only the caller\'s jobs', async () => {
    const c1 = await createClient(admin, 'openhound', 'OG-X1')
    const c2 = await createClient(admin, 'openhound', 'OG-X2')
    await runNow(admin, c1.id)
    const oh2 = client({ kind: 'token', tokenId: c2.token.id, tokenKey: c2.token.key })
    await expectEnvelope(await oh2.raw('GET', '/api/v2/jobs/current'), 404, 'no job is running')
    const avail = (await (await oh2.raw('GET', '/api/v2/jobs/available')).json()) as { data: unknown[] }
    expect(avail.data).toEqual([])
  })
})

describe('clients (administrators)', () => {
  it('token shown once, regenerated (old one refused), delete revokes, audit rows written', async () => {
    const cl = await createClient(admin, 'azurehound', 'T-REGEN', 'regen-client')
    const old = client({ kind: 'token', tokenId: cl.token.id, tokenKey: cl.token.key })
    expect((await old.raw('GET', '/api/v2/jobs/available')).status).toBe(200)
    const listed = (await (await admin.raw('GET', '/api/v2/clients')).json()) as { data: Record<string, unknown>[] }
    expect(JSON.stringify(listed)).not.toContain(cl.token.key)
    const regen = await admin.raw('PUT', `/api/v2/clients/${cl.id}/token`)
    expect(regen.status).toBe(200)
    const t = ((await regen.json()) as { data: { id: string; key: string } }).data
    await expectEnvelope(await old.raw('GET', '/api/v2/jobs/available'), 401)
    const fresh = client({ kind: 'token', tokenId: t.id, tokenKey: t.key })
    expect((await fresh.raw('GET', '/api/v2/jobs/available')).status).toBe(200)
    // the client's service user is not a user
    const users = (await (await admin.raw('GET', '/api/v2/bloodhound-users')).json()) as { data: { users: { principal_name: string }[] } }
    expect(users.data.users.some((u) => u.principal_name.startsWith('client:'))).toBe(false)
    // a client with a job history: deleting it also deletes its jobs (cascade), and still answers 200 (it answered
    // 404 when D1 counted the cascaded rows in the DELETE's changes, and skipped dropping the token's cached keys)
    expect((await admin.raw('POST', `/api/v2/clients/${cl.id}/jobs`, {})).status).toBe(201)
    expect((await admin.raw('DELETE', `/api/v2/clients/${cl.id}`)).status).toBe(200)
    await expectEnvelope(await fresh.raw('GET', '/api/v2/jobs/available'), 401)
    await expectEnvelope(await admin.raw('GET', `/api/v2/clients/${cl.id}`), 404)
    const actions = (await db.prepare(`SELECT action FROM audit_logs WHERE status = 'success' AND action IN ('CreateClient','RegenerateClientToken','DeleteClient') AND fields LIKE ?`).bind(`%${cl.id}%`).all<{ action: string }>()).results.map((r) => r.action)
    expect(actions.sort()).toEqual(['CreateClient', 'DeleteClient', 'RegenerateClientToken'])
  })

  it('refuses a bad type and a duplicate name with the envelope', async () => {
    await expectEnvelope(await admin.raw('POST', '/api/v2/clients', { name: 'x', type: 'nmap', environment_id: 'E' }), 400, 'type must be one of')
    await createClient(admin, 'sharphound', 'S-1', 'dup-name')
    await expectEnvelope(await admin.raw('POST', '/api/v2/clients', { name: 'DUP-name', type: 'sharphound', environment_id: 'S-1' }), 409, 'exists already')
  })
})
