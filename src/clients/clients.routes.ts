import { z } from 'zod'
import type { Context } from 'hono'
import type { AppEnv } from '../env'
import { defineRoute, type RouteEntry } from '../http/route'
import { ApiError, rfc3339 } from '../http/errors'
import { auditOf } from '../audit/audit'
import { invalidateSubject } from '../ratelimit/limiter.client'
import { forgetTokenKey } from '../auth/authenticate'
import { newTokenKey, sealTokenKey } from '../auth/token-crypto'
import { Limit, NumericId, Skip } from '../graph/params'
import {
  CLIENT_TYPES,
  deleteClient,
  getClient,
  getClientOfUser,
  insertClient,
  listClients,
  recordCheckin,
  replaceClientToken,
  touchCheckin,
  updateClient,
  type ClientRecord,
} from './clients.store'
import { COLLECTION_OPTIONS, createClientJob, currentJob, discardJob, getClientJob, listClientJobs, type CollectionOptions } from './jobs.store'
import { ClientJobSchema, ClientSchema, clientJson, jobJson } from './present'
import { requireClientEnvironment, scopeOf } from './access'

const ClientParams = z.object({ id: z.string().uuid('id is malformed: expected a UUID') })
const JobParams = z.object({ id: NumericId })

/** BloodHound's type names, any case; OpenHound's OpenGraph collectors as `openhound` (or `opengraph`). */
const ClientType = z
  .string()
  .transform((v) => v.trim().toLowerCase())
  .transform((v) => (v === 'opengraph' || v === 'openhound-opengraph' ? 'openhound' : v))
  .pipe(z.enum(CLIENT_TYPES, { error: 'type must be one of SharpHound, AzureHound, OpenHound (OpenGraph collectors)' }))

const Text = (name: string, max: number) => z.string().trim().min(1, `${name} must not be blank`).max(max, `${name} is longer than ${max} characters`)

const CreateClientBody = z.object({
  name: Text('name', 200),
  type: ClientType,
  domain_controller: z.string().trim().max(255).nullable().optional(),
  environment_id: Text('environment_id', 255).describe('the environment the client collects (domain SID, tenant id, OpenGraph environment id): its data may write nothing else'),
})

const UpdateClientBody = z
  .object({
    name: Text('name', 200).optional(),
    domain_controller: z.string().trim().max(255).nullable().optional(),
    environment_id: Text('environment_id', 255).optional(),
  })
  .strict()

/** OpenHound sends `Address`, `Hostname`, `Version`; the names are read in any case (Go's JSON decoding does the same). */
const CheckinBody = z.preprocess(
  (v) => (v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k.toLowerCase(), x])) : v),
  z.object({
    address: z.string().max(255).optional(),
    hostname: z.string().max(255).optional(),
    version: z.string().max(255).optional(),
  }),
)

const RunNowBody = z.object(Object.fromEntries(COLLECTION_OPTIONS.map((o) => [o, z.boolean().optional()])) as Record<(typeof COLLECTION_OPTIONS)[number], z.ZodOptional<z.ZodBoolean>>).strict()

const TokenAnswer = z.object({
  id: z.string().uuid(),
  key: z.string().describe('the token key; shown once'),
  hmac_method: z.literal('hmac-sha2-256'),
  created_at: z.string(),
})

/** The client of this id within the caller's environments, or 404 (a client outside them is absent). */
async function clientFor(c: Context<AppEnv>, id: string): Promise<ClientRecord> {
  const client = await getClient(c.env.DB, id, scopeOf(c))
  if (!client) throw new ApiError(404, 'no client with this id', 'path.id')
  return client
}

/** The client calling a collector route (its token's service user), noting its check-in. */
export async function callingClient(c: Context<AppEnv>): Promise<ClientRecord> {
  const client = await getClientOfUser(c.env.DB, c.var.principal.userId)
  await checkedIn(c, client?.id ?? null)
  return client!
}

/** 403 when the caller is no client (`clientId` null); otherwise its check-in is noted after the answer. */
export async function checkedIn(c: Context<AppEnv>, clientId: string | null): Promise<string> {
  if (!clientId) throw new ApiError(403, 'not authorized: this route is for collector clients', 'auth')
  const client = { id: clientId }
  const touch = touchCheckin(c.env.DB, client.id, c.var.now().getTime()).catch(() => undefined)
  try {
    c.executionCtx.waitUntil(touch)
  } catch {
    await touch
  }
  return clientId
}

async function newKey(c: Context<AppEnv>) {
  const id = crypto.randomUUID()
  const key = newTokenKey()
  return { id, key, keySealed: await sealTokenKey(c.var.config.TOKEN_ENCRYPTION_KEY, id, key) }
}

const MANAGE = 'clients/Manage' as const
const TAGS = ['Clients']

export const clientRoutes: RouteEntry[] = [
  defineRoute(
    {
      method: 'get',
      path: '/api/v2/clients',
      operationId: 'ListClients',
      summary: 'List collector clients with their check-in metadata and current job',
      tags: TAGS,
      auth: MANAGE,
      responses: { 200: { description: 'clients, by name', schema: z.object({ count: z.number().int(), data: z.array(ClientSchema) }) } },
    },
    async (c) => {
      const clients = await listClients(c.env.DB, scopeOf(c))
      const data = await Promise.all(clients.map(async (cl) => clientJson(cl, await currentJob(c.env.DB, cl.id))))
      return c.json({ count: data.length, data })
    },
  ),
  defineRoute(
    {
      method: 'post',
      path: '/api/v2/clients',
      operationId: 'CreateClient',
      summary: 'Register a collector client; its API token key appears only in this response',
      description:
        'The client receives its own API token: it can call the collector routes (check-in, jobs, ingest) and nothing else, ' +
        'and its data can write only `environment_id` (docs/collectors.md "Running collectors as services").',
      tags: TAGS,
      auth: MANAGE,
      replay: { once: 'answers with a secret: a copy would register another client and hand over its key' },
      body: { kind: 'json', schema: CreateClientBody, maxBytes: 16 * 1024 },
      audit: { action: 'CreateClient', fields: ({ body }) => ({ name: (body as { name?: string }).name, type: (body as { type?: string }).type }) },
      responses: { 201: { description: 'created', schema: z.object({ data: ClientSchema.extend({ token: TokenAnswer }) }) } },
    },
    async (c, { body }) => {
      requireClientEnvironment(scopeOf(c), body.environment_id)
      const now = rfc3339(c.var.now())
      const id = crypto.randomUUID()
      const t = await newKey(c)
      const ok = await insertClient(
        c.env.DB,
        {
          id,
          userId: crypto.randomUUID(),
          name: body.name,
          type: body.type,
          domainController: body.domain_controller || null,
          environmentId: body.environment_id,
          tokenId: t.id,
          keySealed: t.keySealed,
          now,
        },
        auditOf(c).write({ id, environment_id: body.environment_id, token_id: t.id }),
      )
      if (!ok) throw new ApiError(409, 'a client with this name exists already', 'name')
      const client = (await getClient(c.env.DB, id, scopeOf(c)))!
      return c.json({ data: { ...clientJson(client, null), token: { id: t.id, key: t.key, hmac_method: 'hmac-sha2-256' as const, created_at: now } } }, 201)
    },
  ),
  defineRoute(
    {
      method: 'put',
      path: '/api/v2/clients/update',
      operationId: 'UpdateClientCheckin',
      summary: "The calling client's check-in: its address, hostname and version (collector route)",
      description: 'Sent by AzureHound `start` and OpenHound when they start. Answers the client with its current job (AzureHound ends an orphaned running job with it).',
      tags: TAGS,
      auth: 'clients/Collect',
      replay: { repeatable: 'data plane: collectors send the same check-in at every start; it only records metadata' },
      body: { kind: 'json', schema: CheckinBody, maxBytes: 16 * 1024 },
      audit: { action: 'ClientCheckin' },
      responses: { 200: { description: 'the client as administrators see it', schema: z.object({ data: ClientSchema }) } },
    },
    async (c, { body }) => {
      const client = await callingClient(c)
      const updated = await recordCheckin(
        c.env.DB,
        client.id,
        { address: body.address ?? null, hostname: body.hostname ?? null, version: body.version ?? null },
        rfc3339(c.var.now()),
        auditOf(c).write({ id: client.id, hostname: body.hostname, version: body.version }),
      )
      if (!updated) throw new ApiError(404, 'no client with this id', 'auth')
      return c.json({ data: clientJson(updated, await currentJob(c.env.DB, client.id)) })
    },
  ),
  defineRoute(
    {
      method: 'get',
      path: '/api/v2/clients/:id',
      operationId: 'GetClient',
      summary: 'A collector client',
      tags: TAGS,
      auth: MANAGE,
      params: ClientParams,
      responses: { 200: { description: 'the client', schema: z.object({ data: ClientSchema }) } },
    },
    async (c, { params }) => {
      const client = await clientFor(c, params.id)
      return c.json({ data: clientJson(client, await currentJob(c.env.DB, client.id)) })
    },
  ),
  defineRoute(
    {
      method: 'put',
      path: '/api/v2/clients/:id',
      operationId: 'UpdateClient',
      summary: "Change a client's name, domain controller or environment",
      tags: TAGS,
      auth: MANAGE,
      replay: { once: 'access change: the environment a client may write' },
      params: ClientParams,
      body: { kind: 'json', schema: UpdateClientBody, maxBytes: 16 * 1024 },
      audit: { action: 'UpdateClient', fields: ({ params, body }) => ({ ...(params as object), ...(body as object) }) },
      responses: { 200: { description: 'the changed client', schema: z.object({ data: ClientSchema }) } },
    },
    async (c, { params, body }) => {
      if (body.environment_id !== undefined) {
        // an unknown or hidden client is a 404 before the new environment is judged (the 403 would reveal it)
        await clientFor(c, params.id)
        requireClientEnvironment(scopeOf(c), body.environment_id)
      }
      const r = await updateClient(c.env.DB, params.id, body, rfc3339(c.var.now()), auditOf(c).write(), scopeOf(c))
      if (r === 'conflict') throw new ApiError(409, 'a client with this name exists already', 'name')
      if (!r) throw new ApiError(404, 'no client with this id', 'path.id')
      // its token's cached principal carries the environment access: dropped, so the next request reads it again
      if (body.environment_id && r.token_id) await invalidateSubject(c.env, 'token', r.token_id)
      return c.json({ data: clientJson(r, await currentJob(c.env.DB, r.id)) })
    },
  ),
  defineRoute(
    {
      method: 'delete',
      path: '/api/v2/clients/:id',
      operationId: 'DeleteClient',
      summary: 'Delete a client: its token is revoked, its unfinished jobs are canceled (nothing they received is written)',
      tags: TAGS,
      auth: MANAGE,
      replay: { once: 'identity change: revokes the client token' },
      params: ClientParams,
      audit: { action: 'DeleteClient', fields: ({ params }) => ({ ...(params as object) }) },
      responses: { 200: { description: 'deleted', schema: z.object({ data: z.object({ id: z.string(), deleted: z.literal(true) }) }) } },
    },
    async (c, { params }) => {
      const r = await deleteClient(c.env.DB, params.id, rfc3339(c.var.now()), auditOf(c).write(), scopeOf(c))
      if (!r) throw new ApiError(404, 'no client with this id', 'path.id')
      for (const t of r.tokenIds) {
        forgetTokenKey(t)
        await invalidateSubject(c.env, 'token', t)
      }
      return c.json({ data: { id: params.id, deleted: true as const } })
    },
  ),
  defineRoute(
    {
      method: 'put',
      path: '/api/v2/clients/:id/token',
      operationId: 'RegenerateClientToken',
      summary: "Replace a client's API token: the old one stops working, the new key appears only in this response",
      tags: TAGS,
      auth: MANAGE,
      replay: { once: 'answers with a secret: a copy would hand its holder a fresh key' },
      params: ClientParams,
      audit: { action: 'RegenerateClientToken', fields: ({ params }) => ({ ...(params as object) }) },
      responses: { 200: { description: 'the new token', schema: z.object({ data: TokenAnswer }) } },
    },
    async (c, { params }) => {
      const now = rfc3339(c.var.now())
      const t = await newKey(c)
      const r = await replaceClientToken(c.env.DB, params.id, { id: t.id, keySealed: t.keySealed, now }, auditOf(c).write({ token_id: t.id }), scopeOf(c))
      if (!r) throw new ApiError(404, 'no client with this id', 'path.id')
      for (const old of r.oldTokenIds) {
        forgetTokenKey(old)
        await invalidateSubject(c.env, 'token', old)
      }
      return c.json({ data: { id: t.id, key: t.key, hmac_method: 'hmac-sha2-256' as const, created_at: now } })
    },
  ),
  defineRoute(
    {
      method: 'post',
      path: '/api/v2/clients/:id/jobs',
      operationId: 'CreateClientJob',
      summary: 'Run a job now: a job available to the client at once, with the collection options given',
      tags: TAGS,
      auth: MANAGE,
      replay: { repeatable: 'data plane: another collection job for the client, as the console schedules one per click; bounded by the rate limit' },
      params: ClientParams,
      body: { kind: 'json', schema: RunNowBody, maxBytes: 16 * 1024, required: false },
      audit: { action: 'CreateClientJob', fields: ({ params }) => ({ client_id: (params as { id: string }).id }) },
      responses: { 201: { description: 'the job, status 0 (ready)', schema: z.object({ data: ClientJobSchema }) } },
    },
    async (c, { params, body }) => {
      await clientFor(c, params.id)
      const options = Object.fromEntries(COLLECTION_OPTIONS.map((o) => [o, body?.[o] ?? false])) as CollectionOptions
      const now = rfc3339(c.var.now())
      const job = await createClientJob(c.env.DB, { clientId: params.id, executionTime: now, options, now }, auditOf(c).write(), scopeOf(c))
      if (!job) throw new ApiError(404, 'no client with this id', 'path.id')
      return c.json({ data: jobJson(job) }, 201)
    },
  ),
  defineRoute(
    {
      method: 'get',
      path: '/api/v2/clients/:id/completed-jobs',
      operationId: 'ListClientCompletedJobs',
      summary: "A client's finished jobs (complete, canceled, timed out, failed), newest first",
      tags: TAGS,
      auth: MANAGE,
      params: ClientParams,
      query: z.object({ skip: Skip, limit: Limit(100, 1000) }),
      responses: { 200: { description: 'a page of jobs', schema: z.object({ count: z.number().int(), skip: z.number().int(), limit: z.number().int(), data: z.array(ClientJobSchema) }) } },
    },
    async (c, { params, query }) => {
      await clientFor(c, params.id)
      const r = await listClientJobs(c.env.DB, { clientId: params.id, statuses: [2, 3, 4, 5, 8], skip: query.skip, limit: query.limit, scope: scopeOf(c) })
      return c.json({ count: r.count, skip: query.skip, limit: query.limit, data: r.jobs.map(jobJson) })
    },
  ),
  defineRoute(
    {
      method: 'get',
      path: '/api/v2/jobs',
      operationId: 'ListClientJobs',
      summary: 'Collector jobs of every client (or of one: client_id), newest first',
      tags: TAGS,
      auth: MANAGE,
      query: z.object({
        skip: Skip,
        limit: Limit(100, 1000),
        client_id: z.string().transform((v) => v.replace(/^eq:/, '')).pipe(z.string().uuid('client_id is malformed: expected a UUID')).optional(),
        status: z
          .string()
          .transform((v) => v.replace(/^eq:/, ''))
          .pipe(z.string().regex(/^-?\d{1,2}$/, 'status must be a job status number').transform(Number))
          .optional(),
      }),
      responses: { 200: { description: 'a page of jobs', schema: z.object({ count: z.number().int(), skip: z.number().int(), limit: z.number().int(), data: z.array(ClientJobSchema) }) } },
    },
    async (c, { query }) => {
      const r = await listClientJobs(c.env.DB, {
        clientId: query.client_id,
        statuses: query.status === undefined ? undefined : [query.status],
        skip: query.skip,
        limit: query.limit,
        scope: scopeOf(c),
      })
      return c.json({ count: r.count, skip: query.skip, limit: query.limit, data: r.jobs.map(jobJson) })
    },
  ),
  defineRoute(
    {
      method: 'get',
      path: '/api/v2/jobs/finished',
      operationId: 'ListFinishedClientJobs',
      summary: 'Finished collector jobs of every client (complete, canceled, timed out, failed), newest first',
      tags: TAGS,
      auth: MANAGE,
      query: z.object({ skip: Skip, limit: Limit(100, 1000) }),
      responses: { 200: { description: 'a page of jobs', schema: z.object({ count: z.number().int(), skip: z.number().int(), limit: z.number().int(), data: z.array(ClientJobSchema) }) } },
    },
    async (c, { query }) => {
      const r = await listClientJobs(c.env.DB, { statuses: [2, 3, 4, 5, 8], skip: query.skip, limit: query.limit, scope: scopeOf(c) })
      return c.json({ count: r.count, skip: query.skip, limit: query.limit, data: r.jobs.map(jobJson) })
    },
  ),
  defineRoute(
    {
      method: 'get',
      path: '/api/v2/jobs/:id',
      operationId: 'GetClientJob',
      summary: 'A collector job, with its log',
      tags: TAGS,
      auth: MANAGE,
      params: JobParams,
      responses: { 200: { description: 'the job', schema: z.object({ data: ClientJobSchema }) } },
    },
    async (c, { params }) => {
      const job = await getClientJob(c.env.DB, params.id, scopeOf(c))
      if (!job) throw new ApiError(404, 'no job with this id', 'path.id')
      return c.json({ data: jobJson(job) })
    },
  ),
  defineRoute(
    {
      method: 'get',
      path: '/api/v2/jobs/:id/log',
      operationId: 'GetClientJobLog',
      summary: "A collector job's log: what happened to it, oldest first",
      tags: TAGS,
      auth: MANAGE,
      params: JobParams,
      responses: { 200: { description: 'the log', schema: z.object({ data: z.object({ id: z.number().int(), log: z.array(z.object({ time: z.string(), message: z.string() })) }) }) } },
    },
    async (c, { params }) => {
      const job = await getClientJob(c.env.DB, params.id, scopeOf(c))
      if (!job) throw new ApiError(404, 'no job with this id', 'path.id')
      return c.json({ data: { id: job.id, log: job.log } })
    },
  ),
  defineRoute(
    {
      method: 'put',
      path: '/api/v2/jobs/:id/cancel',
      operationId: 'CancelClientJob',
      summary: 'Cancel a ready or running job: status 3; nothing it received is written',
      tags: TAGS,
      auth: MANAGE,
      replay: { repeatable: 'data plane: cancelling a canceled job changes nothing' },
      params: JobParams,
      audit: { action: 'CancelClientJob', fields: ({ params }) => ({ ...(params as object) }) },
      responses: { 200: { description: 'the canceled job', schema: z.object({ data: ClientJobSchema }) } },
    },
    async (c, { params }) => {
      const job = await getClientJob(c.env.DB, params.id, scopeOf(c))
      if (!job) throw new ApiError(404, 'no job with this id', 'path.id')
      const done = await discardJob(c.env.DB, job.id, 3, 'canceled by an administrator', rfc3339(c.var.now()), [0, 1, 6], scopeOf(c), auditOf(c).write())
      if (!done) throw new ApiError(400, `job is not ready or running (status ${job.status}): it cannot be canceled`, 'path.id')
      const after = await getClientJob(c.env.DB, job.id, scopeOf(c))
      if (!after) throw new ApiError(404, 'no job with this id', 'path.id')
      return c.json({ data: jobJson(after) })
    },
  ),
]
