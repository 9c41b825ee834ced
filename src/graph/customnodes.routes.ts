/**
 * `/api/v2/custom-nodes`: BloodHound's custom node kinds (CreateCustomNodeKind and its neighbours), the icon and
 * colour a node kind is drawn with, as OpenGraph collectors register them. HTTP only: rules in ./customnodes.ts,
 * SQL in ./customnodes.store.ts. Which look wins when an extension also declares one: docs/extensions.md.
 *
 * Permissions: BloodHound lets any authenticated caller write them; EdgeHound asks `graph/Ingest` for writes
 * (those who may upload a kind's data may say how it is drawn; a Read-Only user or an Auditor may not change
 * what everyone sees) and serves reads to any authenticated caller, as BloodHound does.
 */
import { z } from 'zod'
import { defineRoute, type RouteEntry } from '../http/route'
import { ApiError } from '../http/errors'
import { auditOf } from '../audit/audit'
import { checkConfig, checkCreate, CreateBody, UpdateBody } from './customnodes'
import { createCustomKinds, deleteCustomKind, getCustomKind, listCustomKinds, updateCustomKind } from './customnodes.store'

const IconSchema = z.object({ type: z.literal('font-awesome'), name: z.string(), color: z.string() })
const KindSchema = z.object({ id: z.number().int(), kindName: z.string(), config: z.object({ icon: IconSchema }) }).meta({ id: 'CustomNodeKind' })
const Params = z.object({ kind_name: z.string().min(1).max(256) })
const NOT_FOUND = () => new ApiError(404, 'resource not found', 'kind_name')
const REPLAY = { repeatable: "a kind's display settings: a repeat sets the same icon again (a repeated create is a 409)" }

export const customNodeRoutes: RouteEntry[] = [
  defineRoute(
    {
      method: 'get',
      path: '/api/v2/custom-nodes',
      operationId: 'GetCustomNodeKinds',
      summary: 'Custom node kinds: the icon and colour registered for each kind',
      tags: ['Graph'],
      auth: 'authenticated',
      responses: { 200: { description: 'every registered kind, by id', schema: z.object({ data: z.array(KindSchema) }) } },
    },
    async (c) => c.json({ data: await listCustomKinds(c.env.DB) }),
  ),
  defineRoute(
    {
      method: 'get',
      path: '/api/v2/custom-nodes/:kind_name',
      operationId: 'GetCustomNodeKind',
      summary: 'One custom node kind',
      tags: ['Graph'],
      auth: 'authenticated',
      params: Params,
      responses: { 200: { description: 'the kind', schema: z.object({ data: KindSchema }) } },
    },
    async (c, { params }) => {
      const k = await getCustomKind(c.env.DB, params.kind_name)
      if (!k) throw NOT_FOUND()
      return c.json({ data: k })
    },
  ),
  defineRoute(
    {
      method: 'post',
      path: '/api/v2/custom-nodes',
      operationId: 'CreateCustomNodeKind',
      summary: 'Register the icon and colour of node kinds (`custom_types`: kind name → `{icon: {type: "font-awesome", name, color}}`)',
      description:
        'All or nothing: 201 with the created kinds, or 409 `Conflict: duplicate kind name` when one of them is registered already ' +
        '(change it with PUT). `color` is `#RGB` or `#RRGGBB`, `#FFFFFF` when empty or absent.',
      tags: ['Graph'],
      auth: 'graph/Ingest',
      replay: REPLAY,
      audit: { action: 'CreateCustomNodeKind', fields: ({ body }) => ({ kinds: Object.keys((body as { custom_types?: object })?.custom_types ?? {}) }) },
      body: { kind: 'json', schema: CreateBody, maxBytes: 256 * 1024 },
      responses: { 201: { description: 'created', schema: z.object({ data: z.array(KindSchema) }) } },
    },
    async (c, { body }) => {
      const kinds = checkCreate(body)
      let created
      try {
        created = await createCustomKinds(c.env.DB, kinds, new Date().toISOString(), auditOf(c).write())
      } catch (e) {
        // a concurrent create of the same name: the UNIQUE constraint rolled the batch back
        if (/UNIQUE constraint failed/.test(String((e as Error)?.message))) created = null
        else throw e
      }
      if (created === null) throw new ApiError(409, 'Conflict: duplicate kind name', 'custom_types')
      return c.json({ data: created }, 201)
    },
  ),
  defineRoute(
    {
      method: 'put',
      path: '/api/v2/custom-nodes/:kind_name',
      operationId: 'UpdateCustomNodeKind',
      summary: "Change a registered kind's icon and colour (`{config: {icon: {type, name, color}}}`)",
      tags: ['Graph'],
      auth: 'graph/Ingest',
      params: Params,
      replay: REPLAY,
      audit: { action: 'UpdateCustomNodeKind', fields: ({ params }) => ({ kind: (params as { kind_name: string }).kind_name }) },
      body: { kind: 'json', schema: UpdateBody, maxBytes: 16 * 1024 },
      responses: { 200: { description: 'the kind as changed', schema: z.object({ data: KindSchema }) } },
    },
    async (c, { params, body }) => {
      const icon = checkConfig(body.config, 'config')
      const k = await updateCustomKind(c.env.DB, params.kind_name, icon, new Date().toISOString(), auditOf(c).write({ icon }))
      if (!k) throw NOT_FOUND()
      return c.json({ data: k })
    },
  ),
  defineRoute(
    {
      method: 'delete',
      path: '/api/v2/custom-nodes/:kind_name',
      operationId: 'DeleteCustomNodeKind',
      summary: "Delete a kind's registered icon (the kind is drawn as its extension or the console's built-in table says again)",
      tags: ['Graph'],
      auth: 'graph/Ingest',
      params: Params,
      replay: REPLAY,
      audit: { action: 'DeleteCustomNodeKind', fields: ({ params }) => ({ kind: (params as { kind_name: string }).kind_name }) },
      responses: { 200: { description: 'deleted (no body)' } },
    },
    async (c, { params }) => {
      if (!(await deleteCustomKind(c.env.DB, params.kind_name, auditOf(c).write()))) throw NOT_FOUND()
      return c.body(null, 200)
    },
  ),
]
