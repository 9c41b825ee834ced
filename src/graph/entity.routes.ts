import { z } from 'zod'
import type { Context } from 'hono'
import type { AppEnv } from '../env'
import { defineRoute, type RouteEntry } from '../http/route'
import { ApiError } from '../http/errors'
import { canSeeEnvironment } from '../auth/permissions'
import { AD_ENTITY_TYPES, AZ_ENTITY_TYPES, AZ_RELATED, azEntityType, type AdEntityType, type Plan } from './entities'
import { accessParam, countRelated, countRelatedByKind, getNodeByObjectId, listRelated, type Entity } from './graph.store'
import { adListItem, azureNode, props, type NodeRecord } from './present'
import { Limit, OptionalBool, Skip } from './params'

/**
 * The entity a request names, if it exists, has the kind the endpoint is about, and lies in an
 * environment the caller may see; otherwise 404 (an invisible node is treated as absent).
 */
async function entity(c: Context<AppEnv>, objectid: string, kind: string | null): Promise<Entity> {
  const node = await getNodeByObjectId(c.env.DB, objectid)
  const access = c.var.principal.environmentAccess
  if (!node || (kind !== null && !node.kinds.includes(kind)) || !canSeeEnvironment(access, node.environment_id))
    throw new ApiError(404, 'node not found', 'object_id')
  return { node, access: accessParam(access) }
}

function nest(target: Record<string, unknown>, key: string[], value: unknown) {
  let o = target
  for (const k of key.slice(0, -1)) o = (o[k] ??= {}) as Record<string, unknown>
  o[key[key.length - 1]] = value
}

const ObjectIdParams = z.object({ object_id: z.string().min(1).max(1024) })
const ListType = z
  .enum(['list', 'graph', 'count'], { error: 'type must be list' })
  .optional()
  .refine((v) => v === undefined || v === 'list', 'only type=list is supported for related entities')

const PageSchema = (item: z.ZodType) => z.object({ count: z.number().int(), skip: z.number().int(), limit: z.number().int(), data: z.array(item) })
const AdListItemSchema = z.object({ objectID: z.string(), name: z.string(), label: z.string() }).meta({ id: 'EntityListItem' })
const AzureNodeSchema = z
  .object({ kind: z.string(), kinds: z.array(z.string()), isTierZero: z.boolean(), isOwnedObject: z.boolean(), props: z.record(z.string(), z.unknown()) })
  .meta({ id: 'AzureNode' })

const pascal = (s: string) => s.replace(/(^|-)(\w)/g, (_, __, ch: string) => ch.toUpperCase())

function adRoutes(t: AdEntityType): RouteEntry[] {
  const what = t.kind ?? 'any node'
  const routes: RouteEntry[] = [
    defineRoute(
      {
        method: 'get',
        path: `/api/v2/${t.segment}/:object_id`,
        operationId: `Get${pascal(t.segment)}EntityInfo`,
        summary: `${what}: properties and related-entity counts`,
        description: `Counts (unless counts=false): ${Object.keys(t.counts).join(', ')}.`,
        tags: ['Graph entities'],
        auth: 'graph/Read',
        params: ObjectIdParams,
        query: z.object({ counts: OptionalBool(true, 'counts') }),
        responses: {
          200: {
            description: 'the entity',
            schema: z.object({ data: z.object({ props: z.record(z.string(), z.unknown()) }).catchall(z.number().int()) }),
          },
        },
      },
      async (c, { params, query }) => {
        const e = await entity(c, params.object_id, t.kind)
        const data: Record<string, unknown> = { props: props(e.node) }
        if (query.counts) {
          const keys = Object.keys(t.counts)
          const counts = await countRelated(c.env.DB, e, keys.map((k) => t.counts[k]))
          keys.forEach((k, i) => (data[k] = counts[i]))
        }
        return c.json({ data })
      },
    ),
  ]
  for (const [name, plan] of Object.entries(t.lists))
    routes.push(
      defineRoute(
        {
          method: 'get',
          path: `/api/v2/${t.segment}/:object_id/${name}`,
          operationId: `List${pascal(t.segment)}${pascal(name)}`,
          summary: `${what}: ${name} (paginated)`,
          tags: ['Graph entities'],
          auth: 'graph/Read',
          params: ObjectIdParams,
          query: z.object({ skip: Skip, limit: Limit(100, 10_000), type: ListType }),
          responses: { 200: { description: 'a page of related entities', schema: PageSchema(AdListItemSchema) } },
        },
        async (c, { params, query }) => {
          const e = await entity(c, params.object_id, t.kind)
          const page = await listRelated(c.env.DB, e, plan, query.skip, query.limit)
          return c.json({ count: page.count, skip: query.skip, limit: query.limit, data: page.nodes.map(adListItem) })
        },
      ),
    )
  return routes
}

const AZ_SEGMENTS = AZ_ENTITY_TYPES.map((t) => t.segment)

const azureRoute = defineRoute(
  {
    method: 'get',
    path: '/api/v2/azure/:entity_type',
    operationId: 'GetAzureEntity',
    summary: 'Azure entity: properties and counts, or a page of related entities',
    description:
      `entity_type: ${AZ_SEGMENTS.join(', ')} (kind names such as AZUser are accepted too). With related_entity_type ` +
      `(${Object.keys(AZ_RELATED).join(', ')}) the answer is a page {count, skip, limit, data}; the entity type is then ` +
      'not checked against the node, as in BloodHound.',
    tags: ['Graph entities'],
    auth: 'graph/Read',
    params: z.object({ entity_type: z.string() }),
    query: z.object({
      object_id: z.string({ error: 'query parameter object_id is required' }).min(1, 'query parameter object_id is required').max(1024),
      counts: OptionalBool(true, 'counts'),
      related_entity_type: z.string().optional(),
      type: ListType,
      skip: Skip,
      limit: Limit(100, 10_000),
    }),
    responses: {
      200: {
        description: 'the entity (data), or a page of related entities',
        schema: z.union([z.object({ data: AzureNodeSchema.catchall(z.unknown()) }), PageSchema(AzureNodeSchema)]),
      },
    },
  },
  async (c, { params, query }) => {
    const type = azEntityType(params.entity_type)
    if (!type) throw new ApiError(400, `unknown azure entity type "${params.entity_type.slice(0, 100)}"; expected one of ${AZ_SEGMENTS.join(', ')}`, 'path.entity_type')
    const db = c.env.DB
    if (query.related_entity_type !== undefined) {
      const plan: Plan | undefined = AZ_RELATED[query.related_entity_type]
      if (!plan) throw new ApiError(404, `no matching related entity list type for ${query.related_entity_type}`, 'query.related_entity_type')
      const e = await entity(c, query.object_id, null)
      const page = await listRelated(db, e, plan, query.skip, query.limit)
      return c.json({ count: page.count, skip: query.skip, limit: query.limit, data: page.nodes.map((n: NodeRecord) => azureNode(n)) })
    }
    const e = await entity(c, query.object_id, type.kind)
    const data: Record<string, unknown> = azureNode(e.node)
    if (query.counts) {
      const plain = type.counts.filter((k) => 'plan' in k) as { key: string[]; plan: Plan }[]
      const [counts, descendents] = await Promise.all([
        countRelated(db, e, plain.map((k) => k.plan)),
        type.counts.some((k) => 'descendents' in k) ? countRelatedByKind(db, e, [{ op: 'out*', edges: ['AZContains'] }]) : null,
      ])
      plain.forEach((k, i) => nest(data, k.key, counts[i]))
      for (const k of type.counts) if ('descendents' in k) nest(data, k.key, descendents)
    }
    return c.json({ data })
  },
)

export const entityRoutes: RouteEntry[] = [...AD_ENTITY_TYPES.flatMap(adRoutes), azureRoute]
