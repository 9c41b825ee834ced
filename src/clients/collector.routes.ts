import { z } from 'zod'
import type { Context } from 'hono'
import type { AppEnv } from '../env'
import { defineRoute, type RouteEntry } from '../http/route'
import { ApiError, rfc3339 } from '../http/errors'
import { overBudget } from '../http/budget'
import { auditOf } from '../audit/audit'
import { WEIGHT, weightBySize } from '../ratelimit/cost'
import { loadKindCatalog } from '../extensions/catalog'
import { requestAnalysis } from '../findings/trigger'
import { graphKinds } from '../graph/kinds'
import { MAX_UPLOAD_BYTES, uploadParts } from '../graph/upload'
import { MAX_ELEMENTS, SEQ_PER_POST, STALE_STAGING_MS, stageUpload, validateUpload } from '../graph/ingest'
import { commitUpload, JobNotRunningError } from '../graph/ingest.store'
import { auditedBatch } from '../audit/audit.store'
import { callingClient, checkedIn } from './clients.routes'
import { acceptPost, pollAvailable, claimEnd, releaseEnd, currentJob, discardJob, endStatements, getClientJob, postsOf, releasePost, reservePost, startClientJob } from './jobs.store'
import { SERVICE_SCOPE } from './access'
import { ClientJobSchema, jobJson } from './present'
import { knownIdle, rememberIdle } from './poll-cache'
import { inflateGzip } from './inflate'

/**
 * The collector's side of enterprise collection (BloodHound Enterprise's client protocol, as AzureHound
 * `start` and OpenHound speak it; docs/collectors.md "Running collectors as services"):
 *
 *   GET jobs/available → POST jobs/start {id} → POST ingest (many) → GET jobs/current (check-ins) → POST jobs/end
 *
 * Posts are validated and staged one by one (the same readers and budgets as a file upload) but become
 * visible only when the job ends: POST jobs/end commits every post of the job in ONE batch
 * (src/graph/ingest.store.ts commitUpload), so a failed, canceled or timed-out job leaves nothing of its
 * data in the graph.
 */

const COLLECT = 'clients/Collect' as const
const TAGS = ['Clients']

const StartBody = z.object({ id: z.number().int().positive('id must be a job id') })
const EndBody = z.object({
  status: z
    .string()
    .transform((v) => v.trim().toLowerCase())
    .pipe(z.enum(['complete', 'failed'], { error: 'status must be complete or failed' })),
  message: z.string().max(4096).optional().default(''),
})

const IngestAnswer = z.object({
  job_id: z.number().int(),
  post: z.number().int().describe("the post's number in its job"),
  nodes: z.number().int(),
  edges: z.number().int(),
  warnings: z.array(z.object({ file: z.string(), context: z.string(), message: z.string() })),
})

/** The calling client's running job, or 400 (the client must start one first). */
async function runningJob(c: Context<AppEnv>, clientId: string) {
  const job = await currentJob(c.env.DB, clientId)
  if (!job || job.status !== 1) throw new ApiError(400, 'no job is running for this client: start one with POST /api/v2/jobs/start', 'job')
  return job
}

export const collectorRoutes: RouteEntry[] = [
  defineRoute(
    {
      method: 'get',
      path: '/api/v2/jobs/available',
      operationId: 'ListAvailableClientJobs',
      summary: "The calling client's jobs that are ready to run now, oldest first (collector route)",
      description: 'An empty list means nothing to do. Only the calling client\'s jobs, and only those whose execution time has come (OpenHound runs the first one it is given).',
      tags: TAGS,
      auth: COLLECT,
      responses: { 200: { description: 'ready jobs', schema: z.object({ data: z.array(ClientJobSchema) }) } },
    },
    async (c) => {
      const userId = c.var.principal.userId
      const nowMs = c.var.now().getTime()
      // an idle client's polls within CLIENT_POLL_FRESH_MS of its last empty answer: from memory (poll-cache.ts)
      const idle = knownIdle(userId, nowMs)
      if (idle) {
        await checkedIn(c, idle)
        return c.json({ data: [] })
      }
      // one statement: the client, its ready jobs and its next pending one (bench:collectors, "idle poll")
      const polled = await pollAvailable(c.env.DB, userId, rfc3339(c.var.now()))
      await checkedIn(c, polled?.clientId ?? null)
      if (polled!.jobs.length === 0) rememberIdle(userId, polled!.clientId, nowMs, c.var.config.CLIENT_POLL_FRESH_MS, polled!.nextExecution)
      return c.json({ data: polled!.jobs.map(jobJson) })
    },
  ),
  defineRoute(
    {
      method: 'post',
      path: '/api/v2/jobs/start',
      operationId: 'StartClientJob',
      summary: 'Claim a ready job of the calling client: exactly one start wins (collector route)',
      tags: TAGS,
      auth: COLLECT,
      replay: { repeatable: 'data plane: a second start of the same job is refused (409), so a copy gains nothing' },
      body: { kind: 'json', schema: StartBody, maxBytes: 4 * 1024 },
      audit: { action: 'StartClientJob', fields: ({ body }) => ({ id: (body as { id?: number }).id }) },
      responses: { 200: { description: 'the running job', schema: z.object({ data: ClientJobSchema }) } },
    },
    async (c, { body }) => {
      const client = await callingClient(c)
      const r = await startClientJob(c.env.DB, client.id, client.user_id, body.id, rfc3339(c.var.now()), auditOf(c).write())
      if ('refused' in r) {
        if (r.refused === 'not-found') throw new ApiError(404, 'no job with this id for this client', 'id')
        if (r.refused === 'busy') throw new ApiError(409, 'this client is already running a job: end it first (POST /api/v2/jobs/end)', 'id')
        throw new ApiError(409, 'job is not ready: it was started already, ended, canceled, or its execution time has not come', 'id')
      }
      return c.json({ data: jobJson(r.job) })
    },
  ),
  defineRoute(
    {
      method: 'get',
      path: '/api/v2/jobs/current',
      operationId: 'GetCurrentClientJob',
      summary: "The calling client's running job; also its check-in while it collects (collector route)",
      description: '404 when the client runs no job (OpenHound reads 404 as "no current job"; AzureHound only logs a failed check-in).',
      tags: TAGS,
      auth: COLLECT,
      responses: { 200: { description: 'the running job', schema: z.object({ data: ClientJobSchema }) } },
    },
    async (c) => {
      const client = await callingClient(c)
      const job = await currentJob(c.env.DB, client.id)
      if (!job) throw new ApiError(404, 'no job is running for this client', 'job')
      return c.json({ data: jobJson(job) })
    },
  ),
  defineRoute(
    {
      method: 'post',
      path: '/api/v2/ingest',
      operationId: 'ClientIngest',
      cost: {
        of: (c) => weightBySize(WEIGHT.upload, c.req.header('content-length'), MAX_UPLOAD_BYTES),
        doc: `${WEIGHT.upload} plus 1 per MiB of Content-Length (the most a body may hold when it has none)`,
      },
      summary: "Data of the calling client's running job: SharpHound, AzureHound or OpenGraph JSON, plain or gzip (collector route)",
      description:
        'Many posts per job. Each is validated completely (a violation answers 400 and keeps nothing of that post) and held until the ' +
        'job ends: POST /api/v2/jobs/end writes every post of the job in one transaction. Budgets (413): body 20 MiB, inflated 20 MiB, ' +
        '200,000 nodes and edges per post and per job, 400 staging statements per post. The data can write only the client\'s environment.',
      tags: TAGS,
      auth: COLLECT,
      replay: { repeatable: "data plane: the same post into the same running job; bounded by the job's budgets and the rate limit" },
      body: {
        kind: 'raw',
        contentTypes: ['application/json'],
        missingTypeIs: 'application/json',
        maxBytes: MAX_UPLOAD_BYTES,
        description: 'collector or OpenGraph JSON; `Content-Encoding: gzip` for compressed bodies',
        tooLarge: 'send the data in several posts to the same job (AzureHound and OpenHound batch it)',
      },
      audit: { action: 'ClientIngest' },
      responses: { 202: { description: 'accepted: held until the job ends', schema: z.object({ data: IngestAnswer }) } },
    },
    async (c, { body }) => {
      const db = c.env.DB
      const client = await callingClient(c)
      const job = await runningJob(c, client.id)
      const encoding = (c.req.header('content-encoding') ?? '').trim().toLowerCase()
      let bytes: Uint8Array = new Uint8Array(body)
      if (encoding === 'gzip' || encoding === 'x-gzip') bytes = await inflateGzip(bytes, MAX_UPLOAD_BYTES)
      else if (encoding && encoding !== 'identity') throw new ApiError(415, `unsupported content encoding "${encoding.slice(0, 32)}": send gzip or none`, 'content-encoding')
      const name = `ingest post (job ${job.id})`
      const kinds = graphKinds(await loadKindCatalog(db))
      const ctx = { environmentTypes: kinds.environmentTypes }
      const parts = uploadParts(bytes, 'application/json', name)
      const checked = validateUpload(parts, ctx)
      const elements = checked.nodes + checked.edges
      const now = rfc3339(c.var.now())
      const reserved = await reservePost(db, job.id, elements, MAX_ELEMENTS, now)
      if (!('post' in reserved)) {
        if (!reserved.over) throw new ApiError(400, 'no job is running for this client: start one with POST /api/v2/jobs/start', 'job')
        throw overBudget(413, {
          context: 'body',
          what: `the job's nodes and edges with this post's ${elements}`,
          budget: 'nodes and edges per collector job',
          limit: MAX_ELEMENTS,
          narrow: 'collect less per job (split the collection over several clients or jobs)',
        })
      }
      const uploadId = crypto.randomUUID()
      try {
        const staged = await stageUpload(db, { uploadId, parts, ctx, now, repeated: checked.repeated, seqBase: reserved.post * SEQ_PER_POST })
        const access = c.var.principal.environmentAccess
        const environments = [...checked.environments].filter((e) => access.all || access.ids.includes(e)).sort()
        const warnings = checked.warnings.map((d) => ({ file: name, context: d.context, message: d.message }))
        const ok = await acceptPost(
          db,
          { uploadId, jobId: job.id, nodes: staged.nodes, edges: staged.edges, placeholders: staged.placeholders, environments, warnings, now },
          auditOf(c).write(),
        )
        if (!ok) throw new ApiError(400, 'the job stopped running while this post was received: nothing of it is kept', 'job')
        return c.json({ data: { job_id: job.id, post: reserved.post, nodes: staged.nodes, edges: staged.edges, warnings: warnings.slice(0, 100) } }, 202)
      } catch (e) {
        await db.batch([db.prepare('DELETE FROM ingest_staging WHERE upload_id = ?1').bind(uploadId)]).catch(() => undefined)
        await releasePost(db, job.id, elements).catch(() => undefined)
        throw e
      }
    },
  ),
  defineRoute(
    {
      method: 'post',
      path: '/api/v2/jobs/end',
      operationId: 'EndClientJob',
      cost: WEIGHT.analysis,
      summary: "End the calling client's running job: complete writes everything it received in one transaction and requests analysis; failed writes nothing (collector route)",
      tags: TAGS,
      auth: COLLECT,
      replay: { repeatable: 'data plane: collectors send the same end for every job; a copy finds no running job (400)' },
      body: { kind: 'json', schema: EndBody, maxBytes: 16 * 1024 },
      audit: { action: 'EndClientJob', fields: ({ body }) => ({ status: (body as { status?: string }).status }) },
      responses: { 200: { description: 'the ended job', schema: z.object({ data: ClientJobSchema }) } },
    },
    async (c, { body }) => {
      const db = c.env.DB
      const client = await callingClient(c)
      const now = rfc3339(c.var.now())
      const message = body.message || (body.status === 'complete' ? 'complete' : 'failed')
      if (body.status === 'failed') {
        const job = await runningJob(c, client.id)
        const done = await discardJob(db, job.id, 5, `failed: ${message}`, now, [1], SERVICE_SCOPE, auditOf(c).write({ id: job.id }))
        if (!done) throw new ApiError(400, 'no job is running for this client', 'job')
        return c.json({ data: jobJson((await getClientJob(db, job.id, SERVICE_SCOPE))!) })
      }
      const job = await claimEnd(db, client.id)
      if (!job) throw new ApiError(400, 'no job is running for this client: start one with POST /api/v2/jobs/start', 'job')
      const posts = await postsOf(db, job.id)
      const commitId = crypto.randomUUID()
      const ends = endStatements(db, job, commitId, now, message)
      try {
        if (posts.uploadIds.length === 0) {
          await auditedBatch(db, ends.epilogue, auditOf(c).write({ id: job.id, posts: 0 }))
        } else {
          const kinds = graphKinds(await loadKindCatalog(db))
          const access = c.var.principal.environmentAccess
          await commitUpload(db, {
            uploadId: commitId,
            jobId: job.ingest_job_id!,
            nodes: posts.nodes,
            edges: posts.edges,
            environments: posts.environments,
            now,
            staleBefore: new Date(Date.parse(now) - STALE_STAGING_MS).toISOString(),
            placeholders: posts.placeholders,
            environmentKinds: [...kinds.environmentTypes.keys()],
            access: access.all ? null : access.ids,
            warnings: posts.warnings,
            audit: auditOf(c).write({ id: job.id, posts: posts.uploadIds.length }),
            prelude: ends.prelude,
            epilogue: ends.epilogue,
          })
        }
      } catch (e) {
        // Nothing of the commit happened (one transaction). Canceled meanwhile: the cancel deleted its posts.
        // Otherwise the job runs again with its posts, so that the client's retry of the end can write them.
        if (e instanceof JobNotRunningError) throw new ApiError(400, 'the job was canceled while it was being written: nothing of it was written', 'job')
        await releaseEnd(db, job.id).catch(() => undefined)
        throw e
      }
      await requestAnalysis(c.env, `collector job ${job.id} ended`)
      return c.json({ data: jobJson((await getClientJob(db, job.id, SERVICE_SCOPE))!) })
    },
  ),
]
