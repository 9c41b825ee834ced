import { z } from 'zod'
import { defineRoute, type RouteEntry } from '../http/route'
import { ApiError, rfc3339 } from '../http/errors'
import { auditOf } from '../audit/audit'
import { NumericId } from '../graph/params'
import { COLLECTION_OPTIONS, type CollectionOptions } from './jobs.store'
import { nextAfter, parseRrule } from './rrule'
import { deleteSchedule, getSchedule, insertSchedule, listSchedules, updateSchedule, type ScheduleRecord } from './schedules.store'
import { scopeOf } from './access'

/**
 * Recurring collections of a client (BloodHound Enterprise's "events"): the Cron Trigger turns them into jobs
 * (src/clients/schedules.ts). A schedule is its client's: outside the caller's environments it is absent (404,
 * left out of lists), and a schedule for a client outside them is not created (src/clients/access.ts).
 */

const optionFields = Object.fromEntries(COLLECTION_OPTIONS.map((o) => [o, z.boolean().optional()])) as Record<(typeof COLLECTION_OPTIONS)[number], z.ZodOptional<z.ZodBoolean>>
const Rrule = z.string().trim().min(1, 'rrule must not be blank').max(500).describe('DTSTART:20261201T020000Z RRULE:FREQ=DAILY;INTERVAL=1 (FREQ HOURLY, DAILY or WEEKLY)')

const CreateBody = z.object({ client_id: z.string().uuid('client_id is malformed: expected a UUID'), rrule: Rrule, ...optionFields }).strict()
const UpdateBody = z.object({ rrule: Rrule.optional(), ...optionFields }).strict()
const Params = z.object({ id: NumericId })

export const ScheduleSchema = z
  .object({
    id: z.number().int(),
    client_id: z.string(),
    client_name: z.string(),
    rrule: z.string(),
    next_run: z.string().describe('the next occurrence the Cron Trigger will turn into a job'),
    ...Object.fromEntries(COLLECTION_OPTIONS.map((o) => [o, z.boolean()])),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: 'ClientSchedule' })

const json = (s: ScheduleRecord) => s

function recurrence(text: string, nowMs: number) {
  const r = parseRrule(text, nowMs)
  if (typeof r === 'string') throw new ApiError(400, r, 'rrule')
  return r
}

const MANAGE = 'clients/Manage' as const
const TAGS = ['Clients']

export const scheduleRoutes: RouteEntry[] = [
  defineRoute(
    {
      method: 'get',
      path: '/api/v2/events',
      operationId: 'ListClientSchedules',
      summary: 'Collection schedules (of every client, or of client_id)',
      tags: TAGS,
      auth: MANAGE,
      query: z.object({ client_id: z.string().transform((v) => v.replace(/^eq:/, '')).pipe(z.string().uuid('client_id is malformed: expected a UUID')).optional() }),
      responses: { 200: { description: 'schedules', schema: z.object({ data: z.array(ScheduleSchema) }) } },
    },
    async (c, { query }) => c.json({ data: (await listSchedules(c.env.DB, query.client_id, scopeOf(c))).map(json) }),
  ),
  defineRoute(
    {
      method: 'post',
      path: '/api/v2/events',
      operationId: 'CreateClientSchedule',
      summary: 'Schedule a recurring collection for a client, with its collection options',
      tags: TAGS,
      auth: MANAGE,
      replay: { once: 'a copy would schedule the same collection twice' },
      body: { kind: 'json', schema: CreateBody, maxBytes: 16 * 1024 },
      audit: { action: 'CreateClientSchedule', fields: ({ body }) => ({ client_id: (body as { client_id?: string }).client_id, rrule: (body as { rrule?: string }).rrule }) },
      responses: { 201: { description: 'the schedule', schema: z.object({ data: ScheduleSchema }) } },
    },
    async (c, { body }) => {
      const nowMs = c.var.now().getTime()
      const r = recurrence(body.rrule, nowMs)
      const options = Object.fromEntries(COLLECTION_OPTIONS.map((o) => [o, body[o] ?? false])) as CollectionOptions
      const s = await insertSchedule(c.env.DB, { clientId: body.client_id, rrule: body.rrule, nextRun: rfc3339(nextAfter(r, nowMs - 1)), options, now: rfc3339(nowMs) }, auditOf(c).write(), scopeOf(c))
      if (!s) throw new ApiError(404, 'no client with this id', 'client_id')
      return c.json({ data: json(s) }, 201)
    },
  ),
  defineRoute(
    {
      method: 'get',
      path: '/api/v2/events/:id',
      operationId: 'GetClientSchedule',
      summary: 'A collection schedule',
      tags: TAGS,
      auth: MANAGE,
      params: Params,
      responses: { 200: { description: 'the schedule', schema: z.object({ data: ScheduleSchema }) } },
    },
    async (c, { params }) => {
      const s = await getSchedule(c.env.DB, params.id, scopeOf(c))
      if (!s) throw new ApiError(404, 'no schedule with this id', 'path.id')
      return c.json({ data: json(s) })
    },
  ),
  defineRoute(
    {
      method: 'put',
      path: '/api/v2/events/:id',
      operationId: 'UpdateClientSchedule',
      summary: "Change a schedule's recurrence or collection options",
      tags: TAGS,
      auth: MANAGE,
      replay: { repeatable: 'data plane: setting the same recurrence and options again changes nothing' },
      params: Params,
      body: { kind: 'json', schema: UpdateBody, maxBytes: 16 * 1024 },
      audit: { action: 'UpdateClientSchedule', fields: ({ params, body }) => ({ ...(params as object), ...(body as object) }) },
      responses: { 200: { description: 'the schedule', schema: z.object({ data: ScheduleSchema }) } },
    },
    async (c, { params, body }) => {
      const nowMs = c.var.now().getTime()
      const nextRun = body.rrule === undefined ? undefined : rfc3339(nextAfter(recurrence(body.rrule, nowMs), nowMs - 1))
      const { rrule, ...opts } = body
      const s = await updateSchedule(c.env.DB, params.id, { rrule, nextRun, options: opts, now: rfc3339(nowMs) }, auditOf(c).write(), scopeOf(c))
      if (!s) throw new ApiError(404, 'no schedule with this id', 'path.id')
      return c.json({ data: json(s) })
    },
  ),
  defineRoute(
    {
      method: 'delete',
      path: '/api/v2/events/:id',
      operationId: 'DeleteClientSchedule',
      summary: 'Delete a schedule (jobs it created stay)',
      tags: TAGS,
      auth: MANAGE,
      replay: { repeatable: 'data plane: deleting a deleted schedule answers 404 and changes nothing' },
      params: Params,
      audit: { action: 'DeleteClientSchedule', fields: ({ params }) => ({ ...(params as object) }) },
      responses: { 200: { description: 'deleted', schema: z.object({ data: z.object({ id: z.number().int(), deleted: z.literal(true) }) }) } },
    },
    async (c, { params }) => {
      if (!(await deleteSchedule(c.env.DB, params.id, auditOf(c).write(), scopeOf(c)))) throw new ApiError(404, 'no schedule with this id', 'path.id')
      return c.json({ data: { id: params.id, deleted: true as const } })
    },
  ),
]
