/**
 * Reads about one relationship, named as BloodHound's UI names it (`edge_type`, `source_node`, `target_node`:
 * the kind and the two node ids of a graph answer): `GET /api/v2/graphs/edge-composition` (what a
 * post-processed relationship is made of, composition.ts), `GET /api/v2/graphs/relay-targets` (where an NTLM
 * relay relationship relays to) and `GET /api/v2/graphs/acl-inheritance` (the container or OU an inherited
 * ACE comes from). HTTP only.
 *
 * Environment access: both ends must be in the caller's environments, else the answer is exactly the one for
 * nodes that do not exist (404 `not found`); nodes of the answers are the caller's only (the walks never
 * cross other nodes, as path search).
 */
import type { Context } from 'hono'
import { z } from 'zod'
import type { AppEnv } from '../env'
import { defineRoute, type RouteEntry } from '../http/route'
import { ApiError } from '../http/errors'
import { overBudget } from '../http/budget'
import { WEIGHT } from '../ratelimit/cost'
import { canSeeEnvironment } from '../auth/permissions'
import { loadKindCatalog } from '../extensions/catalog'
import { accessParam, edgeRecords, expandFrontier, getNodeById, nodesByIds, type EdgeRecord } from './graph.store'
import { getEdge, idsWithKind, inheritanceChain, relayTargets } from './composition.store'
import { adminUnion, COMPOSITIONS, CompositionTooLarge, RELAY_KINDS, walkUnion } from './composition'
import { graphKinds } from './kinds'
import { GraphEdgeSchema, GraphNodeSchema, pathNode, props, type NodeRecord } from './present'
import type { PathEdge } from './path'

/** Budgets (docs/budgets.md): relationships a composition search may fetch; relationships per answer; walk length. */
export const COMPOSITION_LIMITS = { maxLength: 12, maxEdges: 50_000 }
export const EDGE_ANSWER_MAX = 5_000
/** Relay targets one answer may list; containers climbed looking for an ACE's origin. */
export const RELAY_TARGETS_MAX = 5_000
export const INHERITANCE_MAX_DEPTH = 64

const Param = z.union([z.string(), z.array(z.string())]).optional()
const EdgeQuery = z.object({
  edge_type: Param.describe('the relationship kind, e.g. ADCSESC1, GoldenCert, CoerceAndRelayNTLMToSMB'),
  source_node: Param.describe('node id of the relationship’s start (the ids of graph answers)'),
  target_node: Param.describe('node id of the relationship’s end'),
})

const UnifiedGraphSchema = z
  .object({
    nodes: z.record(z.string(), GraphNodeSchema.extend({ properties: z.record(z.string(), z.unknown()) })).describe('keyed by node id'),
    edges: z.array(GraphEdgeSchema.extend({ properties: z.record(z.string(), z.unknown()) })),
    literals: z.array(z.unknown()).describe('always empty (BloodHound’s member for Cypher literals)'),
  })
  .meta({ id: 'UnifiedGraph' })

const NOT_FOUND = 'not found'

/** A node id as BloodHound parses it (a decimal integer), within JavaScript's safe integers. */
function parseId(v: string): number | null {
  if (!/^-?\d{1,16}$/.test(v)) return null
  const n = Number(v)
  return Number.isSafeInteger(n) ? n : null
}

interface EdgeTarget {
  kind: string
  source: NodeRecord
  target: NodeRecord
}

/**
 * BloodHound's parameter checks, in its order and with its messages, then both ends: unknown, or outside the
 * caller's environments → 404 `not found` (one answer for both).
 */
async function edgeEnds(c: Context<AppEnv>): Promise<EdgeTarget> {
  const q = c.req.queries()
  const one = (name: string): string => {
    const v = q[name]
    if (!v) throw new ApiError(400, `Expected ${name} parameter to be set.`, `query.${name}`)
    return v[0]
  }
  const edgeType = one('edge_type')
  const sourceRaw = one('source_node')
  const targetRaw = one('target_node')
  for (const name of ['edge_type', 'source_node', 'target_node']) if (q[name].length > 1) throw new ApiError(400, `Expected only one ${name}.`, `query.${name}`)
  const kinds = graphKinds(await loadKindCatalog(c.env.DB))
  if (!kinds.relationships.has(edgeType)) throw new ApiError(400, `Invalid edge requested: ${edgeType.slice(0, 256)}`, 'query.edge_type')
  const start = parseId(sourceRaw)
  if (start === null) throw new ApiError(400, `Invalid value for startID: ${sourceRaw.slice(0, 256)}`, 'query.source_node')
  const end = parseId(targetRaw)
  if (end === null) throw new ApiError(400, `Invalid value for endID: ${targetRaw.slice(0, 256)}`, 'query.target_node')
  const access = c.get('principal').environmentAccess
  const [source, target] = await Promise.all([getNodeById(c.env.DB, start), getNodeById(c.env.DB, end)])
  if (!source || !canSeeEnvironment(access, source.environment_id)) throw new ApiError(404, NOT_FOUND, 'query.source_node')
  if (!target || !canSeeEnvironment(access, target.environment_id)) throw new ApiError(404, NOT_FOUND, 'query.target_node')
  return { kind: edgeType, source, target }
}

async function requireEdge(db: D1Database, e: EdgeTarget): Promise<EdgeRecord> {
  const edge = await getEdge(db, e.source.id, e.target.id, e.kind)
  if (!edge) throw new ApiError(404, `Could not find edge matching criteria: ${NOT_FOUND}`, 'query')
  return edge
}

function lastSeen(p: Record<string, unknown>, fallback: string): string {
  return typeof p.lastseen === 'string' && p.lastseen !== '' ? p.lastseen : fallback
}

/** BloodHound's UnifiedGraph with properties: nodes keyed by id, relationships between those keys. */
function unifiedGraph(nodes: NodeRecord[], edges: EdgeRecord[]) {
  const byId = new Map(nodes.map((n) => [n.id, n]))
  return {
    nodes: Object.fromEntries(nodes.map((n) => [String(n.id), { ...pathNode(n), properties: props(n) }])),
    edges: edges
      .filter((e) => byId.has(e.from) && byId.has(e.to))
      .map((e) => ({
        source: String(e.from),
        target: String(e.to),
        label: e.kind,
        kind: e.kind,
        lastSeen: lastSeen(e.properties, e.updated_at),
        properties: e.properties,
      })),
    literals: [] as unknown[],
  }
}

async function graphOf(db: D1Database, edges: PathEdge[], extraNodes: number[] = []) {
  if (edges.length > EDGE_ANSWER_MAX)
    throw overBudget(400, { context: 'query', what: `the answer (${edges.length} relationships)`, budget: 'relationships per answer', limit: EDGE_ANSWER_MAX, narrow: 'ask about a narrower relationship' })
  const ids = [...new Set([...edges.flatMap((e) => [e.from, e.to]), ...extraNodes])]
  const [nodes, records] = await Promise.all([nodesByIds(db, ids), edgeRecords(db, edges)])
  return unifiedGraph(nodes, records)
}

const EMPTY = { nodes: {}, edges: [], literals: [] }

export const edgeRoutes: RouteEntry[] = [
  defineRoute(
    {
      method: 'get',
      path: '/api/v2/graphs/edge-composition',
      operationId: 'GetEdgeComposition',
      cost: WEIGHT.graph,
      summary: 'What a post-processed relationship is made of',
      description:
        'The ingested relationships that make up a relationship derived by post-processing (GoldenCert, ADCSESC1, 3, 4, 6a, ' +
        '6b, 9a, 9b, 10a, 10b, 13, 16, CoerceAndRelayNTLMToSMB), as a graph with properties. Another kind of relationship ' +
        'has no composition: an empty graph. The relationship must exist and both ends be in the caller’s environments ' +
        `(404 otherwise). Budgets (docs/budgets.md): the search fetches at most ${COMPOSITION_LIMITS.maxEdges} relationships ` +
        `over walks of at most ${COMPOSITION_LIMITS.maxLength}; the answer holds at most ${EDGE_ANSWER_MAX}.`,
      tags: ['Graph'],
      auth: 'graph/Read',
      query: EdgeQuery,
      responses: { 200: { description: 'the composition', schema: z.object({ data: UnifiedGraphSchema }) } },
    },
    async (c) => {
      const db = c.env.DB
      const e = await edgeEnds(c)
      await requireEdge(db, e)
      const rule = COMPOSITIONS.get(e.kind)
      if (!rule) return c.json({ data: EMPTY })
      const ap = accessParam(c.get('principal').environmentAccess)
      let edges: PathEdge[]
      try {
        edges =
          rule.shape === 'walks'
            ? await walkUnion(e.source.id, e.target.id, (f, dir, max) => expandFrontier(db, f, dir, [...rule.kinds], ap, max), COMPOSITION_LIMITS)
            : await adminUnion(
                e.target.id,
                (f, dir, max) => expandFrontier(db, f, dir, ['AdminTo', 'MemberOf', 'MemberOfLocalGroup'], ap, max),
                (ids) => idsWithKind(db, ids, 'Computer'),
                COMPOSITION_LIMITS,
              )
      } catch (err) {
        if (err instanceof CompositionTooLarge)
          throw overBudget(400, {
            context: 'query',
            what: 'the composition search',
            budget: 'relationships searched',
            limit: COMPOSITION_LIMITS.maxEdges,
            narrow: 'the relationship is made of too many others to show',
          })
        throw err
      }
      if (edges.length === 0) return c.json({ data: EMPTY })
      return c.json({ data: await graphOf(db, edges) })
    },
  ),
  defineRoute(
    {
      method: 'get',
      path: '/api/v2/graphs/relay-targets',
      operationId: 'GetEdgeRelayTargets',
      cost: WEIGHT.list,
      summary: 'The computers an NTLM relay relationship relays to',
      description:
        'For CoerceAndRelayNTLMToSMB the target computer itself; for CoerceAndRelayNTLMToLDAP / LDAPS the domain controllers ' +
        'of its domain whose LDAP / LDAPS accepts relayed authentication; for CoerceAndRelayNTLMToADCS the enterprise CAs with ' +
        'a web enrollment endpoint open to relay that chain to its domain. Nodes only (`edges` empty), the caller’s ' +
        'environments only. Another relationship kind → 400.',
      tags: ['Graph'],
      auth: 'graph/Read',
      query: EdgeQuery,
      responses: { 200: { description: 'the relay targets', schema: z.object({ data: UnifiedGraphSchema }) } },
    },
    async (c) => {
      const db = c.env.DB
      const e = await edgeEnds(c)
      if (!(RELAY_KINDS as readonly string[]).includes(e.kind))
        throw new ApiError(400, `Invalid edge requested: ${e.kind} is not an NTLM relay relationship`, 'query.edge_type')
      await requireEdge(db, e)
      const nodes = await relayTargets(db, e.kind, e.target, accessParam(c.get('principal').environmentAccess), RELAY_TARGETS_MAX)
      if (nodes.length > RELAY_TARGETS_MAX)
        throw overBudget(400, { context: 'query', what: 'the relay targets', budget: 'relay targets per answer', limit: RELAY_TARGETS_MAX, narrow: 'no narrower question exists; use Cypher' })
      return c.json({ data: unifiedGraph(nodes, []) })
    },
  ),
  defineRoute(
    {
      method: 'get',
      path: '/api/v2/graphs/acl-inheritance',
      operationId: 'GetEdgeACLInheritancePath',
      cost: WEIGHT.list,
      summary: 'Where an inherited ACE comes from',
      description:
        'For a relationship collected from an inherited ACE (`isinherited` true and an `inheritancehash`), the containers ' +
        '(Contains) from the target up to the nearest domain, OU or container whose `inheritancehashes` holds the hash, ' +
        'with the relationship itself. An ACE that is not inherited, or whose origin is not in the data, answers an empty ' +
        `graph. Budget (docs/budgets.md): at most ${INHERITANCE_MAX_DEPTH} containers are climbed.`,
      tags: ['Graph'],
      auth: 'graph/Read',
      query: EdgeQuery,
      responses: { 200: { description: 'the inheritance path', schema: z.object({ data: UnifiedGraphSchema }) } },
    },
    async (c) => {
      const db = c.env.DB
      const e = await edgeEnds(c)
      const edge = await requireEdge(db, e)
      const hash = edge.properties.inheritancehash
      if (edge.properties.isinherited !== true || typeof hash !== 'string' || hash === '') return c.json({ data: EMPTY })
      const chain = await inheritanceChain(db, e.target.id, hash, accessParam(c.get('principal').environmentAccess), INHERITANCE_MAX_DEPTH)
      if (chain.length === 0) return c.json({ data: EMPTY })
      const edges: PathEdge[] = [{ from: edge.from, to: edge.to, kind: edge.kind }, ...chain.map((s) => ({ from: s.container, to: s.child, kind: 'Contains' }))]
      return c.json({ data: await graphOf(db, edges) })
    },
  ),
]
