import { z } from 'zod'
import { defineRoute, type RouteEntry } from '../http/route'
import { ApiError, rfc3339 } from '../http/errors'
import { WEIGHT, weightBySize } from '../ratelimit/cost'
import { loadKindCatalog } from '../extensions/catalog'
import { requestAnalysis } from '../findings/trigger'
import { auditOf } from '../audit/audit'
import { graphKinds } from './kinds'
import { ACCEPTED_TYPES, MAX_UPLOAD_BYTES, uploadParts } from './upload'
import { validateUpload, writeUpload } from './ingest'
import { canActOnJob, seesAllJobs } from './job-access'
import { createJob, endJob, getJob, jobEnvironments, JOB_STATUS, listJobs, listTasks, recordFailedFile, type JobRecord } from './jobs.store'
import { JobNotRunningError } from './ingest.store'
import { Limit, NumericId, Skip } from './params'
import type { Context } from 'hono'
import type { AppEnv } from '../env'

const JobErrorSchema = z.object({ file: z.string(), context: z.string(), message: z.string() })

export const IngestJobSchema = z
  .object({
    id: z.number().int(),
    user_id: z.string(),
    user_email_address: z.string().nullable(),
    status: z.number().int().describe('1 running, 2 complete, 4 timed out (no upload for 20 minutes and not ended), 5 failed, 8 partially complete'),
    status_message: z.string(),
    start_time: z.string(),
    end_time: z.string().nullable(),
    last_ingest: z.string().nullable(),
    total_files: z.number().int(),
    failed_files: z.number().int(),
    nodes_received: z.number().int(),
    edges_received: z.number().int(),
    nodes_changed: z.number().int(),
    edges_changed: z.number().int(),
    unmatched_edges: z.number().int(),
    error_count: z.number().int(),
    errors: z.array(JobErrorSchema).describe('the first 100 errors'),
    warnings: z
      .array(JobErrorSchema)
      .describe("the first 100 warnings: accepted files' suspicious points, e.g. a collector's meta.count that disagrees with its data (docs/collectors.md)"),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: 'IngestJob' })

const FileResultSchema = z.object({
  job_id: z.number().int(),
  file_name: z.string(),
  files: z.number().int().describe('payloads in the upload (zip members, or 1)'),
  nodes: z.number().int(),
  edges: z.number().int(),
  nodes_changed: z.number().int(),
  edges_changed: z.number().int(),
  unmatched_edges: z.number().int(),
  refused_nodes: z.number().int().describe('nodes not written because they are outside the environments of a caller restricted to some (docs/permissions.md)'),
  errors: z.array(JobErrorSchema).describe('refused nodes and unmatched edges (first 100)'),
  warnings: z.array(JobErrorSchema).describe('accepted but suspicious, e.g. a meta.count that disagrees with data (first 100); also recorded in the job'),
})

const JobParams = z.object({ id: NumericId })

const CompletedTaskSchema = z
  .object({
    id: z.number().int(),
    ingest_job_id: z.number().int(),
    file_name: z.string(),
    parent_file_name: z.string(),
    errors: z.array(z.string()),
    warnings: z.array(z.string()),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: 'CompletedTask' })

/** The job, if it exists and the caller may act on it; otherwise a 404 (another user's job is absent). */
async function jobFor(c: Context<AppEnv>, id: number): Promise<JobRecord> {
  const job = await getJob(c.env.DB, id)
  if (!job || !canActOnJob(c.var.principal, job)) throw new ApiError(404, 'no file upload job with this id', 'path.id')
  return job
}

function mediaType(c: Context): string {
  return (c.req.header('content-type') ?? '').split(';')[0].trim().toLowerCase()
}

export const ingestRoutes: RouteEntry[] = [
  defineRoute(
    {
      method: 'get',
      path: '/api/v2/file-upload/accepted-types',
      operationId: 'ListAcceptedFileUploadTypes',
      summary: 'Content types accepted by file uploads',
      tags: ['Graph'],
      auth: 'graph/Ingest',
      responses: { 200: { description: 'accepted content types', schema: z.object({ data: z.array(z.string()) }) } },
    },
    (c) => c.json({ data: ACCEPTED_TYPES }),
  ),
  defineRoute(
    {
      method: 'post',
      path: '/api/v2/file-upload/start',
      operationId: 'CreateFileUploadJob',
      audit: { action: 'CreateFileUploadJob' },
      summary: 'Start a file-upload (ingest) job',
      tags: ['Graph'],
      auth: 'graph/Ingest',
      replay: { repeatable: 'data plane: another upload job, as upload scripts start one per run (empty body, so every start is the same request); bounded by the rate limit' },
      responses: { 201: { description: 'the new job, status 1 (running)', schema: z.object({ data: IngestJobSchema }) } },
    },
    async (c) => {
      const job = await createJob(c.env.DB, c.var.principal.userId, rfc3339(c.var.now()), auditOf(c).write())
      return c.json({ data: job }, 201)
    },
  ),
  defineRoute(
    {
      method: 'get',
      path: '/api/v2/file-upload',
      operationId: 'ListFileUploadJobs',
      summary: 'List file-upload jobs (your own; administrators see all)',
      tags: ['Graph'],
      auth: 'graph/Ingest',
      query: z.object({
        skip: Skip,
        limit: Limit(100, 1000),
        sort_by: z
          .enum(['id', '-id', 'start_time', '-start_time', 'end_time', '-end_time', 'status', '-status'], {
            error: 'sort_by must be one of id, start_time, end_time, status (prefix - for descending)',
          })
          .optional(),
      }),
      responses: {
        200: {
          description: 'a page of jobs, newest first by default',
          schema: z.object({ count: z.number().int(), skip: z.number().int(), limit: z.number().int(), data: z.array(IngestJobSchema) }),
        },
      },
    },
    async (c, { query }) => {
      const sort = query.sort_by ?? '-id'
      const { count, jobs } = await listJobs(c.env.DB, {
        userId: seesAllJobs(c.var.principal) ? null : c.var.principal.userId,
        skip: query.skip,
        limit: query.limit,
        orderBy: sort.replace(/^-/, '') as 'id',
        descending: sort.startsWith('-'),
      })
      return c.json({ count, skip: query.skip, limit: query.limit, data: jobs })
    },
  ),
  defineRoute(
    {
      method: 'post',
      path: '/api/v2/file-upload/:id',
      operationId: 'UploadFileToJob',
      cost: {
        of: (c) => weightBySize(WEIGHT.upload, c.req.header('content-length'), MAX_UPLOAD_BYTES),
        doc: `${WEIGHT.upload} plus 1 per MiB of Content-Length (the most a body may hold when it has none)`,
      },
      audit: { action: 'AppendFileUploadJob', fields: ({ params }) => ({ ...(params as object) }) },
      summary: 'Upload one OpenGraph or collector (SharpHound, AzureHound) JSON file, or a zip of them, into a running job',
      description:
        'The body is the file; its format is detected by content (`graph`: OpenGraph; `meta` + `data`: collector output, ' +
        'converted as BloodHound converts it, see docs/collectors.md). Every payload is validated completely before anything is written: any violation answers 400 ' +
        'listing them (with JSON paths) and changes nothing. Nodes upsert by object id (properties merged), edges by ' +
        '(start, kind, end); an element repeated in the upload is applied once, merged. Edges whose start or end matches no node ' +
        'are not written and are reported. A caller restricted to some environments writes only inside them: nodes outside ' +
        'them do not exist for its upload (edges to them are unmatched), and its nodes that would be outside them are not ' +
        'written and are reported (`refused_nodes`; docs/permissions.md). Optional header ' +
        '`X-File-Upload-Name` names the file in errors. Budgets (413, nothing written; docs/budgets.md): body 20 MiB; a zip ' +
        'holds at most 100 files inflating to at most 20 MiB in all; 200,000 nodes and edges; 400 staging statements.',
      tags: ['Graph'],
      auth: 'graph/Ingest',
      replay: { repeatable: 'data plane: the same file into the same open job; bounded by the job\'s budgets and the rate limit' },
      params: JobParams,
      body: {
        kind: 'raw',
        contentTypes: ACCEPTED_TYPES,
        maxBytes: MAX_UPLOAD_BYTES,
        description: 'OpenGraph or collector JSON, or a zip of such files',
        tooLarge:
          'split the file into several uploads to the same job (SharpHound / AzureHound files by their "data" array, ' +
          'OpenGraph files by "graph.nodes" then "graph.edges"); `edgehound ingest` does this for files of any size',
      },
      responses: { 202: { description: 'the file was ingested', schema: z.object({ data: FileResultSchema }) } },
    },
    async (c, { params, body }) => {
      const db = c.env.DB
      const job = await jobFor(c, params.id)
      if (job.status !== 1) throw new ApiError(400, 'job must be in running status to attach files', 'path.id')
      const type = mediaType(c)
      const fileName = (c.req.header('x-file-upload-name') ?? '').trim().slice(0, 255) || (type === 'application/json' ? 'UnknownFileName.json' : 'UnknownFileName.zip')
      const kinds = graphKinds(await loadKindCatalog(db))
      const ctx = { environmentTypes: kinds.environmentTypes }
      const bytes = new Uint8Array(body)
      let parts
      let checked
      try {
        parts = uploadParts(bytes, type, fileName)
        checked = validateUpload(parts, ctx)
      } catch (e) {
        if (e instanceof ApiError && e.status < 500) {
          const errors = e.details.map((d) => ({ file: fileName, context: d.context, message: d.message }))
          // the job's failed-file count and the audit failure row: one batch
          await recordFailedFile(db, job.id, fileName, errors, rfc3339(c.var.now()), auditOf(c).writeFailure(e, { file_name: fileName }))
        }
        throw e
      }
      let written
      try {
        written = await writeUpload(db, {
          jobId: job.id,
          parts,
          ctx,
          now: rfc3339(c.var.now()),
          environments: checked.environments,
          repeated: checked.repeated,
          warnings: checked.warnings.map((d) => ({ file: fileName, context: d.context, message: d.message })),
          fileName,
          access: c.var.principal.environmentAccess,
          // the success row is written by the upload's commit batch, the one that makes the file visible
          audit: auditOf(c).write({ file_name: fileName, files: parts.length }),
        })
      } catch (e) {
        // The job was ended (or timed out) while the file was being staged: the commit re-checks it in its
        // own transaction and wrote nothing. The job is final, so nothing is recorded in it either.
        if (e instanceof JobNotRunningError) throw new ApiError(400, 'job must be in running status to attach files', 'path.id')
        // The upload's one commit batch did not run (or was rolled back): nothing of the file is in the graph.
        // Record the failure (best effort: the same database failure may prevent that too). A client error
        // here is a budget met while staging (src/graph/ingest.ts): recorded with its own message.
        const errors =
          e instanceof ApiError && e.status < 500
            ? e.details.map((d) => ({ file: fileName, context: d.context, message: d.message }))
            : [{ file: fileName, context: 'body', message: 'an internal error interrupted writing this file; nothing of it was written' }]
        // With its audit failure row in the same batch; if that batch fails too, defineRoute writes the failure row.
        await recordFailedFile(db, job.id, fileName, errors, rfc3339(c.var.now()), auditOf(c).writeFailure(e, { file_name: fileName })).catch(() => undefined)
        throw e
      }
      return c.json(
        {
          data: {
            job_id: job.id,
            file_name: fileName,
            files: parts.length,
            nodes: written.nodes,
            edges: written.edges,
            nodes_changed: written.nodesChanged,
            edges_changed: written.edgesChanged,
            unmatched_edges: written.unmatched,
            refused_nodes: written.refused,
            errors: written.errors.slice(0, 100),
            warnings: written.warnings.slice(0, 100),
          },
        },
        202,
      )
    },
  ),
  defineRoute(
    {
      method: 'get',
      path: '/api/v2/file-upload/:id/completed-tasks',
      operationId: 'GetCompletedTasks',
      summary: "The files of an upload job, accepted or refused, each with its errors and warnings (BloodHound's completed tasks)",
      description:
        'One task per `POST /api/v2/file-upload/{id}` request, recorded with the file in its job: `file_name` (the ' +
        '`X-File-Upload-Name` header), `errors` (a refused file\'s reasons; an accepted file\'s refused nodes and unmatched ' +
        'edges; first 100) and `warnings` (first 100), as texts. A zip is one task (`parent_file_name` is empty: its members ' +
        'are not recorded apart). Your own jobs; administrators see all (another user\'s job: 404). At most `limit` ' +
        '(default and most 1000) tasks from `skip` (EdgeHound\'s addition, bounding the answer); `count` is the job\'s number of tasks.',
      tags: ['Graph'],
      auth: 'graph/Ingest',
      params: JobParams,
      query: z.object({ skip: Skip, limit: Limit(1000, 1000) }),
      responses: {
        200: {
          description: 'the tasks, in upload order',
          schema: z.object({ count: z.number().int(), skip: z.number().int(), limit: z.number().int(), data: z.array(CompletedTaskSchema) }),
        },
      },
    },
    async (c, { params, query }) => {
      const job = await jobFor(c, params.id)
      const { count, tasks } = await listTasks(c.env.DB, job.id, query.skip, query.limit)
      return c.json({ count, skip: query.skip, limit: query.limit, data: tasks })
    },
  ),
  defineRoute(
    {
      method: 'post',
      path: '/api/v2/file-upload/:id/end',
      operationId: 'EndFileUploadJob',
      cost: WEIGHT.analysis,
      audit: {
        action: 'EndFileUploadJob',
        fields: ({ params }) => ({ ...(params as object) }),
        // the environments the job wrote to, whose collection times it records (src/audit/visibility.ts)
        environments: ({ params }, c) => jobEnvironments(c.env.DB, Number((params as { id: string }).id)),
      },
      summary: 'End a job: records collection times of its environments and requests an analysis run (unless every file of it was refused)',
      tags: ['Graph'],
      auth: 'graph/Ingest',
      replay: { repeatable: 'data plane: ending an ended job again changes nothing' },
      params: JobParams,
      responses: { 200: { description: 'the ended job', schema: z.object({ data: IngestJobSchema }) } },
    },
    async (c, { params }) => {
      const job = await jobFor(c, params.id)
      if (job.status !== 1) throw new ApiError(400, 'job must be in running status to end', 'path.id')
      const ended = await endJob(c.env.DB, job.id, rfc3339(c.var.now()), auditOf(c).write())
      if (!ended) throw new ApiError(400, 'job must be in running status to end', 'path.id')
      // A consequence of the ended job, not a change of its own: the run records why it was requested
      // (`reasons`), and a failure to request it never fails the job (src/findings/trigger.ts). A job whose
      // every file was refused (status 5, BloodHound's "failed") wrote nothing and asks for none. A job that
      // received no file still does: ending a job is how a client asks for the analysis of what is there.
      if (ended.job.status !== JOB_STATUS.failed) await requestAnalysis(c.env, `ingest job ${job.id} ended`)
      return c.json({ data: ended.job })
    },
  ),
]
