/**
 * BloodHound's older graph reads that answer in its legacy graph format (legacy-graph.ts):
 * `GET /api/v2/pathfinding` (all shortest paths between two object ids, BloodHound's deprecated
 * GetPathfindingResult; the same engine, environment rule and budgets as `GET /api/v2/graphs/shortest-path`)
 * and `GET /api/v2/graph-search` (nodes by exact or starting name / object id). HTTP only.
 */
import { z } from 'zod'
import { defineRoute, type RouteEntry } from '../http/route'
import { overBudget } from '../http/budget'
import { WEIGHT } from '../ratelimit/cost'
import { loadKindCatalog } from '../extensions/catalog'
import { accessParam, edgeRecords, graphSearchNodes, nodesByIds } from './graph.store'
import { legacyGraph } from './legacy-graph'
import { searchShortestPaths } from './read.routes'

/** Nodes one graph-search answer may hold (docs/budgets.md). */
export const GRAPH_SEARCH_MAX_NODES = 1_000

/** One value of a parameter BloodHound reads as a single value; `many` is its message for a repeat. */
function single(name: string, missing: string, many: string, maxLength = 1024) {
  return z
    .union([z.string(), z.array(z.string())], { error: missing })
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v === '') {
        ctx.addIssue({ code: 'custom', message: missing })
        return z.NEVER
      }
      if (Array.isArray(v)) {
        ctx.addIssue({ code: 'custom', message: many })
        return z.NEVER
      }
      if (v.length > maxLength) {
        ctx.addIssue({ code: 'custom', message: `${name} must be at most ${maxLength} characters` })
        return z.NEVER
      }
      return v
    })
}

const LegacyGraphSchema = z
  .record(z.string(), z.object({}).passthrough())
  .describe('keys: node ids (a node: data, label, fontIcon, color, …) and `rel_<relationship id>` (a relationship: data, label, id1, id2, …)')
  .meta({ id: 'LegacyGraph' })

export const pathfindingRoutes: RouteEntry[] = [
  defineRoute(
    {
      method: 'get',
      path: '/api/v2/pathfinding',
      operationId: 'GetPathfindingResult',
      cost: WEIGHT.path,
      deprecated: true,
      summary: 'All shortest paths between two nodes, in BloodHound’s older graph format',
      description:
        'BloodHound’s deprecated pathfinding (use `GET /api/v2/graphs/shortest-path`): the same search, relationship kinds ' +
        '(`relationship_kinds=in:A,B` / `nin:A,B`), environment rule and budgets, answered as one object keyed by node id and ' +
        '`rel_<relationship id>`. No path → 200 with an empty object, as BloodHound; an unknown node, or one outside the ' +
        'caller’s environments → 404.',
      tags: ['Graph'],
      auth: 'graph/Read',
      query: z.object({
        start_node: single('start_node', 'Missing query parameter: start_node', 'Expected only one start_node.'),
        end_node: single('end_node', 'Missing query parameter: end_node', 'Expected only one end_node.'),
        relationship_kinds: z.string().optional(),
      }),
      responses: { 200: { description: 'the union of all shortest paths (empty when none)', schema: z.object({ data: LegacyGraphSchema }) } },
    },
    async (c, { query }) => {
      const db = c.env.DB
      const result = await searchShortestPaths(c, query)
      if (!result) return c.json({ data: {} })
      const [nodes, edges, catalog] = await Promise.all([nodesByIds(db, result.nodes), edgeRecords(db, result.edges), loadKindCatalog(db)])
      return c.json({ data: legacyGraph(nodes, edges, catalog) })
    },
  ),
  defineRoute(
    {
      method: 'get',
      path: '/api/v2/graph-search',
      operationId: 'GetSearchResult',
      cost: WEIGHT.search,
      summary: 'Nodes by name or object id, in BloodHound’s older graph format',
      description:
        '`type=exact`: nodes whose name or object id equals `query`; any other `type` (default `fuzzy`): nodes whose name or ' +
        'object id starts with it; both case-insensitive, any node kind, only nodes of the caller’s environments. Answered ' +
        `as one object keyed by node id. Budget (docs/budgets.md): at most ${GRAPH_SEARCH_MAX_NODES} nodes, else 400 (a longer ` +
        '`query`, or `type=exact`, narrows it).',
      tags: ['Graph'],
      auth: 'graph/Read',
      query: z.object({
        query: single('query', 'Expected search parameter to be set.', 'Expected only one search value.'),
        type: z
          .union([z.string(), z.array(z.string())])
          .optional()
          .transform((v, ctx) => {
            if (Array.isArray(v)) {
              ctx.addIssue({ code: 'custom', message: 'Expected only one search type.' })
              return z.NEVER
            }
            return (v ?? 'fuzzy').toLowerCase()
          })
          .describe('`exact` or `fuzzy` (default; any other value is fuzzy, as BloodHound)'),
      }),
      responses: { 200: { description: 'the matching nodes, keyed by node id', schema: z.object({ data: LegacyGraphSchema }) } },
    },
    async (c, { query }) => {
      const db = c.env.DB
      const exact = query.type === 'exact'
      const [nodes, catalog] = await Promise.all([
        graphSearchNodes(db, query.query, exact, accessParam(c.get('principal').environmentAccess), GRAPH_SEARCH_MAX_NODES),
        loadKindCatalog(db),
      ])
      if (nodes.length > GRAPH_SEARCH_MAX_NODES)
        throw overBudget(400, {
          context: 'query.query',
          what: 'the matching nodes',
          budget: 'nodes per graph search',
          limit: GRAPH_SEARCH_MAX_NODES,
          narrow: 'search with a longer query, or with type=exact',
        })
      return c.json({ data: legacyGraph(nodes, [], catalog) })
    },
  ),
]

