import { z } from 'zod'
import type { Context } from 'hono'
import type { AppEnv } from '../env'
import { defineRoute, type RouteEntry } from '../http/route'
import { ApiError } from '../http/errors'
import { overBudget } from '../http/budget'
import { WEIGHT } from '../ratelimit/cost'
import { canSeeEnvironment } from '../auth/permissions'
import { AD_ENTITY_TYPES, AZ_ENTITY_TYPES, AZ_RELATED, azEntityType, traverses, type AdEntityType, type Plan } from './entities'
import {
  accessParam,
  countRelated,
  countRelatedByKind,
  getNodeByObjectId,
  graphNodesByIds,
  listRelated,
  relatedGraphEdges,
  type Entity,
  type RelatedCount,
  type WalkBudget,
} from './graph.store'
import { adListItem, azureNode, GraphEdgeSchema, GraphNodeSchema, graphJson, props, type NodeRecord } from './present'
import { Limit, OptionalBool, SkipUpTo } from './params'

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

/**
 * `type` of a related-entity request: `list` (default) or `graph`, with BloodHound's message for
 * anything else (the AD handlers and the Azure handler word it differently).
 */
const ReturnType = (message: string) =>
  z
    .enum(['list', 'graph'], { error: message })
    .optional()
    .transform((v) => v ?? 'list')
    .describe('`list` (default): a page of entities; `graph`: the relationships leading to them, un-wrapped (no `data`)')
const AD_BAD_TYPE = 'there are errors in the query parameters: unsupported result type for this query'
const AD_GRAPH_UNSUPPORTED = "there are errors in the query parameters: type 'graph' is not supported for this endpoint"
const AZ_BAD_TYPE = 'query parameter "type" is malformed: invalid return type requested for related entities'

/**
 * Budgets of a `type=graph` answer (docs/budgets.md): relationships in the answer (its nodes are their
 * ends, so at most twice as many), and rows each step of the walk may visit — enforced inside the SQL
 * (a LIMIT in every recursive step), so a closure over a huge graph is cut, not built and then measured.
 * Past either: the over-budget 400 (`type=list` pages through any number of entities).
 */
export const RELATED_GRAPH_MAX_EDGES = 5_000
export const RELATED_GRAPH_MAX_STEP_ROWS = 20_000
/** Deepest related-list page (docs/budgets.md). */
export const RELATED_MAX_SKIP = 100_000

/**
 * Budgets of the walk behind a related list (`type=list`) and an entity's counts (docs/budgets.md),
 * enforced inside the SQL as for graphs: a traversal step visits at most `stepRows` nodes (the same
 * budget as a graph's), an `environment` step (a domain's users, ...: an index range scan, no walk)
 * reads at most `environmentRows`, as many as the deepest page can reach. Over it, a list is refused
 * with the over-budget 400 (a page of a cut walk would not be the exact page); a count is reported
 * capped (see `countsOf`), because connectors read counts of every entity they fetch and one large
 * group must not make the entity unreadable.
 */
export const RELATED_WALK: WalkBudget = { stepRows: RELATED_GRAPH_MAX_STEP_ROWS, environmentRows: RELATED_MAX_SKIP }
/** Response header naming the counts of an entity detail that were capped (comma-separated keys). */
export const CAPPED_COUNTS_HEADER = 'X-Capped-Counts'

const LIST_BUDGET_DOC =
  `Budget (docs/budgets.md): a walk step that visits ${RELATED_WALK.stepRows} nodes (a domain's own nodes: ${RELATED_WALK.environmentRows}) → 400 over budget.`

/** A page of a related list, or the over-budget 400 when its walk reached a budget. */
export async function relatedPage(db: D1Database, e: Entity, plan: Plan, skip: number, limit: number, budget: WalkBudget = RELATED_WALK) {
  const page = await listRelated(db, e, plan, skip, limit, budget)
  if (page.over)
    throw overBudget(400, {
      context: 'object_id',
      what: 'the walk to the related entities',
      budget: 'nodes visited per step',
      limit: budget.stepRows,
      narrow:
        `list the entities related to a narrower object (a nested group, an OU, a subscription), or query with POST /api/v2/graphs/cypher and a LIMIT ` +
        `(a domain's own users, groups, computers, OUs or GPOs are listed up to ${budget.environmentRows})`,
    })
  return page
}

/**
 * An entity's counts, each from a walk bounded by `RELATED_WALK`. A count whose walk reached the budget
 * is the number of related entities found before the cut: a lower bound, never more than the exact
 * count, and still a number (BloodHound clients read counts as integers); its key is named in the
 * `X-Capped-Counts` header so a client can tell.
 */
function cappedKeys(keys: string[], counts: RelatedCount[]): string[] {
  return keys.filter((_, i) => counts[i].capped)
}

/**
 * The graph of a related-entity list: every relationship of the walks from the entity to the listed
 * nodes (group membership through nested groups, the right's edge, ...) and the nodes they join.
 * Bounded: the store reads at most one relationship more than the bound, and of the nodes only what a
 * graph shows. Invisible nodes are never traversed (the plan compiler drops them at every step).
 */
async function relatedGraph(db: D1Database, e: Entity, plan: Plan) {
  const found = await relatedGraphEdges(db, e, plan, RELATED_GRAPH_MAX_EDGES, RELATED_GRAPH_MAX_STEP_ROWS)
  if (found.over === 'steps')
    throw overBudget(400, {
      context: 'query.type',
      what: 'the walk to the related entities',
      budget: 'nodes visited per step',
      limit: RELATED_GRAPH_MAX_STEP_ROWS,
      narrow: 'use type=list to page through the entities',
    })
  if (found.over === 'edges')
    throw overBudget(400, {
      context: 'query.type',
      what: `the graph (more than ${RELATED_GRAPH_MAX_EDGES} relationships)`,
      budget: 'relationships per graph',
      limit: RELATED_GRAPH_MAX_EDGES,
      narrow: 'use type=list to page through the entities',
    })
  const edges = found.edges
  const nodes = await graphNodesByIds(db, [...new Set(edges.flatMap((x) => [x.from, x.to]))])
  return graphJson(nodes, edges)
}

/** Rate-limit weight of a related-entity request: a graph walks and joins more than a page of the list. */
const RELATED_COST = {
  of: (c: Context<AppEnv>) => (c.req.query('type') === 'graph' ? WEIGHT.graph : WEIGHT.list),
  doc: `${WEIGHT.graph} with type=graph, else ${WEIGHT.list}`,
}

const PageSchema = (item: z.ZodType) => z.object({ count: z.number().int(), skip: z.number().int(), limit: z.number().int(), data: z.array(item) })
const AdListItemSchema = z.object({ objectID: z.string(), name: z.string(), label: z.string() }).meta({ id: 'EntityListItem' })
const AzureNodeSchema = z
  .object({ kind: z.string(), kinds: z.array(z.string()), isTierZero: z.boolean(), isOwnedObject: z.boolean(), props: z.record(z.string(), z.unknown()) })
  .meta({ id: 'AzureNode' })

const RelatedGraphSchema = z
  .object({
    nodes: z.record(z.string(), GraphNodeSchema).describe('keyed by internal node id; the entity and every node of the walks'),
    edges: z.array(GraphEdgeSchema).describe(`relationships of the walks from the entity to the related entities (at most ${RELATED_GRAPH_MAX_EDGES})`),
  })
  .describe('type=graph: not wrapped in `data`')
  .meta({ id: 'RelatedEntityGraph' })

const pascal = (s: string) => s.replace(/(^|-)(\w)/g, (_, __, ch: string) => ch.toUpperCase())

function adRoutes(t: AdEntityType): RouteEntry[] {
  const what = t.kind ?? 'any node'
  const routes: RouteEntry[] = [
    defineRoute(
      {
        method: 'get',
        path: `/api/v2/${t.segment}/:object_id`,
        operationId: `Get${pascal(t.segment)}EntityInfo`,
        cost: { of: (c) => (c.req.query('counts')?.toLowerCase() === 'false' ? 1 : WEIGHT.counts), doc: `${WEIGHT.counts}; 1 with counts=false` },
        summary: `${what}: properties and related-entity counts`,
        description:
          `Counts (unless counts=false): ${Object.keys(t.counts).join(', ')}. Each count's walk is bounded (docs/budgets.md): a count whose walk ` +
          `reached its budget (${RELATED_WALK.stepRows} nodes per step) is a lower bound, and its key is named in the ${CAPPED_COUNTS_HEADER} response header.`,
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
          const counts = await countRelated(c.env.DB, e, keys.map((k) => t.counts[k]), RELATED_WALK)
          keys.forEach((k, i) => (data[k] = counts[i].n))
          const capped = cappedKeys(keys, counts)
          if (capped.length) c.header(CAPPED_COUNTS_HEADER, capped.join(', '))
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
          cost: RELATED_COST,
          summary: `${what}: ${name} (paginated, or type=graph)`,
          description: traverses(plan)
            ? `type=list (default): a page {count, skip, limit, data}; type=graph: the un-wrapped graph {nodes, edges} of the relationships leading to them (at most ${RELATED_GRAPH_MAX_EDGES}). ${LIST_BUDGET_DOC}`
            : `type=list only; type=graph → 400 (these nodes are not reached along relationships). ${LIST_BUDGET_DOC}`,
          tags: ['Graph entities'],
          auth: 'graph/Read',
          params: ObjectIdParams,
          query: z.object({ skip: SkipUpTo(RELATED_MAX_SKIP, 'page with a larger limit (at most 10000)'), limit: Limit(100, 10_000), type: ReturnType(AD_BAD_TYPE) }),
          responses: {
            200: {
              description: 'a page of related entities (type=list), or their graph (type=graph)',
              schema: traverses(plan) ? z.union([PageSchema(AdListItemSchema), RelatedGraphSchema]) : PageSchema(AdListItemSchema),
            },
          },
        },
        async (c, { params, query }) => {
          if (query.type === 'graph' && !traverses(plan)) throw new ApiError(400, AD_GRAPH_UNSUPPORTED, 'query.type')
          const e = await entity(c, params.object_id, t.kind)
          if (query.type === 'graph') return c.json(await relatedGraph(c.env.DB, e, plan))
          const page = await relatedPage(c.env.DB, e, plan, query.skip, query.limit)
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
    cost: {
      of: (c) =>
        c.req.query('related_entity_type') !== undefined
          ? RELATED_COST.of(c)
          : c.req.query('counts')?.toLowerCase() === 'false'
            ? 1
            : WEIGHT.counts,
      doc: `${WEIGHT.graph} with type=graph, ${WEIGHT.list} for a related list, ${WEIGHT.counts} with counts, 1 with counts=false`,
    },
    summary: 'Azure entity: properties and counts, or a page of related entities',
    description:
      `entity_type: ${AZ_SEGMENTS.join(', ')} (kind names such as AZUser are accepted too). With related_entity_type ` +
      `(${Object.keys(AZ_RELATED).join(', ')}) the answer is a page {count, skip, limit, data} (type=list, the default) ` +
      `or the un-wrapped graph {nodes, edges} of the relationships leading to them (type=graph, at most ${RELATED_GRAPH_MAX_EDGES}); ` +
      'the entity type is then not checked against the node, as in BloodHound. ' +
      `${LIST_BUDGET_DOC} Counts whose walk reached its budget are lower bounds, named (dotted keys) in the ${CAPPED_COUNTS_HEADER} response header.`,
    tags: ['Graph entities'],
    auth: 'graph/Read',
    params: z.object({ entity_type: z.string() }),
    query: z.object({
      object_id: z.string({ error: 'query parameter object_id is required' }).min(1, 'query parameter object_id is required').max(1024),
      counts: OptionalBool(true, 'counts'),
      related_entity_type: z.string().optional(),
      type: ReturnType(AZ_BAD_TYPE),
      skip: SkipUpTo(RELATED_MAX_SKIP, 'page with a larger limit (at most 10000)'),
      limit: Limit(100, 10_000),
    }),
    responses: {
      200: {
        description: 'the entity (data), a page of related entities, or their graph (type=graph)',
        schema: z.union([z.object({ data: AzureNodeSchema.catchall(z.unknown()) }), PageSchema(AzureNodeSchema), RelatedGraphSchema]),
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
      if (query.type === 'graph') return c.json(await relatedGraph(db, e, plan))
      const page = await relatedPage(db, e, plan, query.skip, query.limit)
      return c.json({ count: page.count, skip: query.skip, limit: query.limit, data: page.nodes.map((n: NodeRecord) => azureNode(n)) })
    }
    const e = await entity(c, query.object_id, type.kind)
    const data: Record<string, unknown> = azureNode(e.node)
    if (query.counts) {
      const plain = type.counts.filter((k) => 'plan' in k) as { key: string[]; plan: Plan }[]
      const [counts, descendents] = await Promise.all([
        countRelated(db, e, plain.map((k) => k.plan), RELATED_WALK),
        type.counts.some((k) => 'descendents' in k) ? countRelatedByKind(db, e, [{ op: 'out*', edges: ['AZContains'] }], RELATED_WALK) : null,
      ])
      plain.forEach((k, i) => nest(data, k.key, counts[i].n))
      const capped = cappedKeys(plain.map((k) => k.key.join('.')), counts)
      for (const k of type.counts) if ('descendents' in k) {
        nest(data, k.key, descendents?.counts)
        if (descendents?.capped) capped.push(k.key.join('.'))
      }
      if (capped.length) c.header(CAPPED_COUNTS_HEADER, capped.join(', '))
    }
    return c.json({ data })
  },
)

export const entityRoutes: RouteEntry[] = [...AD_ENTITY_TYPES.flatMap(adRoutes), azureRoute]
