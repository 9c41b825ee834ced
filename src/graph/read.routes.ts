import type { Context } from 'hono'
import { z } from 'zod'
import type { AppEnv } from '../env'
import { defineRoute, type RouteEntry } from '../http/route'
import { ApiError } from '../http/errors'
import { overBudget } from '../http/budget'
import { WEIGHT } from '../ratelimit/cost'
import { canSeeEnvironment } from '../auth/permissions'
import { loadKindCatalog } from '../extensions/catalog'
import { BOOKMARK_HEADER, primaryDb } from '../http/d1-session'
import { availableEnvironments, visibleTo } from './environments'
import { graphKinds, KIND_PATTERN, parseRelationshipKinds } from './kinds'
import { accessParam, edgeDetails, expandFrontier, getNodeByObjectId, nodesByIds, searchNodes } from './graph.store'
import { allShortestPaths, PathSearchTooLarge, type PathResult } from './path'
import { GraphEdgeSchema, GraphNodeSchema, pathNode, searchItem } from './present'
import { Limit, SkipUpTo } from './params'

/**
 * Path search budgets (docs/budgets.md): longest path (edges); edges the search may fetch, enforced in
 * SQL on every expansion (src/graph/graph.store.ts expandFrontier), so it never holds more than this many
 * (half the former 400 k, checked only after each level, which was measured at 154 MiB committed heap
 * with 433 k edges); and relationships in the answer, checked before any node or edge detail is read.
 */
export const PATH_LIMITS = { maxDepth: 64, maxEdges: 200_000 }
export const PATH_MAX_ANSWER_EDGES = 5_000
/** Deepest search page (docs/budgets.md). */
export const SEARCH_MAX_SKIP = 10_000
const NARROW_PATH = 'narrow the search with relationship_kinds (in:... or nin:...) or choose nearer nodes'

const EnvironmentSchema = z
  .object({
    id: z.string().describe('object id of the environment node (domain SID, tenant id, ...)'),
    name: z.string(),
    type: z.string().describe('active-directory, azure, or the extension display name'),
    collected: z.boolean().describe('an ingest job carrying its data has ended'),
    collected_at: z.string().nullable(),
    impactValue: z.number().int(),
  })
  .meta({ id: 'AvailableEnvironment' })

const SearchItemSchema = z
  .object({ objectid: z.string(), type: z.string(), name: z.string(), distinguishedname: z.string(), system_tags: z.string() })
  .meta({ id: 'SearchResult' })

const PathGraphSchema = z
  .object({ nodes: z.record(z.string(), GraphNodeSchema).describe('keyed by internal node id'), edges: z.array(GraphEdgeSchema) })
  .meta({ id: 'ShortestPathGraph' })

/** `type` may repeat or hold a comma list. */
const Types = z
  .union([z.string(), z.array(z.string())])
  .optional()
  .transform((v) => (v === undefined ? null : (Array.isArray(v) ? v : [v]).flatMap((s) => s.split(',')).map((s) => s.trim()).filter(Boolean)))
  .refine((v) => v === null || v.every((k) => KIND_PATTERN.test(k)), 'Invalid type parameter')

/**
 * All shortest paths between two object ids for the caller (shared by shortest-path and pathfinding):
 * `relationship_kinds` parsed against the kind catalogue (400), either end unknown or outside the caller's
 * environments → 404 `Path not found: no node matches …` (the same answer for both), the search within the
 * caller's environments and budgets (400 over budget). Null when no path joins them.
 */
export async function searchShortestPaths(
  c: Context<AppEnv>,
  query: { start_node: string; end_node: string; relationship_kinds?: string },
): Promise<PathResult | null> {
  const db = c.env.DB
  const kinds = graphKinds(await loadKindCatalog(db))
  const parsed = parseRelationshipKinds(query.relationship_kinds, kinds)
  if (!parsed.ok) throw new ApiError(400, parsed.message, 'query.relationship_kinds')
  const access = c.get('principal').environmentAccess
  const [start, end] = await Promise.all([getNodeByObjectId(db, query.start_node), getNodeByObjectId(db, query.end_node)])
  // Nodes outside the caller's environments are absent, exactly like nodes that do not exist.
  if (!start || !canSeeEnvironment(access, start.environment_id)) throw new ApiError(404, 'Path not found: no node matches start_node', 'query.start_node')
  if (!end || !canSeeEnvironment(access, end.environment_id)) throw new ApiError(404, 'Path not found: no node matches end_node', 'query.end_node')
  const ap = accessParam(access)
  let result: PathResult | null
  try {
    result = await allShortestPaths(start.id, end.id, (frontier, dir, max) => expandFrontier(db, frontier, dir, parsed.kinds, ap, max), PATH_LIMITS)
  } catch (e) {
    if (e instanceof PathSearchTooLarge)
      throw overBudget(400, {
        context: 'query.relationship_kinds',
        what: 'the path search',
        budget: 'relationships searched',
        limit: PATH_LIMITS.maxEdges,
        narrow: NARROW_PATH,
      })
    throw e
  }
  if (result && result.edges.length > PATH_MAX_ANSWER_EDGES)
    throw overBudget(400, {
      context: 'query.relationship_kinds',
      what: `the shortest paths (${result.edges.length} relationships of length ${result.length})`,
      budget: 'relationships per answer',
      limit: PATH_MAX_ANSWER_EDGES,
      narrow: NARROW_PATH,
    })
  return result
}

export const readRoutes: RouteEntry[] = [
  defineRoute(
    {
      method: 'get',
      path: '/api/v2/available-domains',
      operationId: 'GetAvailableDomains',
      summary: 'Environments (domains, tenants, extension environments) the caller may see',
      tags: ['Graph'],
      auth: 'graph/Read',
      responses: { 200: { description: 'environments, by name', schema: z.object({ data: z.array(EnvironmentSchema) }) } },
    },
    async (c) => {
      // From the isolate's copy while its stamp is current (one small statement, or none while the copy
      // is fresh and no bookmark was sent), else read and kept: src/graph/environments.ts. The caller's
      // access is applied here, per request, from the principal.
      const all = await availableEnvironments(c.env.DB, primaryDb(c.env.DB), {
        freshMs: c.get('config').AVAILABLE_DOMAINS_FRESH_MS,
        bookmarked: Boolean(c.req.header(BOOKMARK_HEADER)?.trim()),
      })
      return c.json({ data: visibleTo(all, c.get('principal').environmentAccess) })
    },
  ),
  defineRoute(
    {
      method: 'get',
      path: '/api/v2/search',
      operationId: 'SearchGraph',
      cost: WEIGHT.search,
      summary: 'Search nodes by name or object id',
      description:
        'Exact (case-insensitive) name or object id matches first, then nodes whose name contains `q` (trigram index; ' +
        'for `q` shorter than 3 characters: names starting with `q`), each group by name. `type` (repeatable or ' +
        'comma-separated) keeps nodes having one of the kinds.',
      tags: ['Graph'],
      auth: 'graph/Read',
      query: z.object({
        q: z.string({ error: 'Invalid search parameter: q is required' }).trim().min(1, 'Invalid search parameter: q is required').max(256, 'q must be at most 256 characters'),
        type: Types,
        skip: SkipUpTo(SEARCH_MAX_SKIP, 'narrow the search with a longer q or with type'),
        limit: Limit(10, 1000),
      }),
      responses: { 200: { description: 'matching nodes', schema: z.object({ data: z.array(SearchItemSchema) }) } },
    },
    async (c, { query }) => {
      const nodes = await searchNodes(c.env.DB, {
        q: query.q,
        types: query.type,
        access: accessParam(c.get('principal').environmentAccess),
        skip: query.skip,
        limit: query.limit,
      })
      return c.json({ data: nodes.map(searchItem) })
    },
  ),
  defineRoute(
    {
      method: 'get',
      path: '/api/v2/graphs/shortest-path',
      operationId: 'GetShortestPath',
      cost: WEIGHT.path,
      summary: 'All shortest paths between two nodes',
      description:
        'Bidirectional breadth-first search over traversable relationship kinds (built-in AD/Azure traversable kinds plus ' +
        'extension kinds with is_traversable). `relationship_kinds=in:A,B` searches only those kinds; `nin:A,B` removes ' +
        'them from the traversable set. No path → 404 `Path not found`. Budgets (400 over budget, docs/budgets.md): the search ' +
        `touches at most ${PATH_LIMITS.maxEdges} relationships; the answer holds at most ${PATH_MAX_ANSWER_EDGES}.`,
      tags: ['Graph'],
      auth: 'graph/Read',
      query: z.object({
        start_node: z.string({ error: 'start_node is required' }).min(1, 'start_node is required').max(1024),
        end_node: z.string({ error: 'end_node is required' }).min(1, 'end_node is required').max(1024),
        relationship_kinds: z.string().optional(),
      }),
      responses: { 200: { description: 'the union of all shortest paths', schema: z.object({ data: PathGraphSchema }) } },
    },
    async (c, { query }) => {
      const db = c.env.DB
      const result = await searchShortestPaths(c, query)
      if (!result) throw new ApiError(404, 'Path not found', 'query')
      const [nodes, edges] = await Promise.all([nodesByIds(db, result.nodes), edgeDetails(db, result.edges)])
      const byId = Object.fromEntries(nodes.map((n) => [String(n.id), pathNode(n)]))
      return c.json({
        data: {
          nodes: byId,
          edges: edges.map((e) => ({ source: String(e.from), target: String(e.to), label: e.kind, kind: e.kind, lastSeen: e.lastSeen })),
        },
      })
    },
  ),
]
