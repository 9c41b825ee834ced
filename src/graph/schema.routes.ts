/**
 * What kinds the graph knows: `GET /api/v2/graphs/kinds`, `GET /api/v2/graphs/source-kinds` and
 * `GET /api/v2/graph-schema/edges` (BloodHound's kinds handlers and ListEdgeTypes). HTTP only: the kinds
 * come from the kind catalogue (src/extensions), the built-in table (kinds.ts) and, for callers who see
 * every environment, the primary kinds of the stored nodes (graph.store.ts `nodeKindsInData`).
 */
import { z } from 'zod'
import { defineRoute, type RouteEntry } from '../http/route'
import { loadKindCatalog } from '../extensions/catalog'
import { listRelationshipKinds } from '../extensions/extensions.store'
import { BUILTIN_NODE_KINDS, BUILTIN_RELATIONSHIP_SCHEMAS, graphKinds, sourceKindList } from './kinds'
import { nodeKindsInData } from './graph.store'
import { parseColumnFilters, type ColumnFilter } from './column-filters'

/** Kinds BloodHound counts as node kinds without a display kind: asset-group tags and its meta kinds. */
function isExtendedNodeKind(k: string): boolean {
  return k.startsWith('Tag_') || k === 'Meta' || k === 'MetaDetail' || k === 'MigrationData'
}

export { BUILTIN_SOURCE_KINDS } from './kinds'

const FilterValues = z.union([z.string(), z.array(z.string())]).optional()

const KindsSchema = z.object({ kinds: z.array(z.string()) }).meta({ id: 'GraphKinds' })
const SourceKindSchema = z.object({ id: z.number().int(), name: z.string(), active: z.boolean() }).meta({ id: 'SourceKind' })
const EdgeTypeSchema = z
  .object({
    id: z.number().int().describe('position in the unfiltered listing (built-in kinds first); the name is the key'),
    name: z.string(),
    description: z.string(),
    is_traversable: z.boolean(),
    schema_name: z.string().describe('`ad` or `az` for the built-in kinds, else the extension name'),
    is_builtin: z.boolean(),
  })
  .meta({ id: 'EdgeType' })

/** `eq:x` keeps x, `neq:x` removes it; several filters of one column: any of them (BloodHound's OR). */
function matches(filters: ColumnFilter[] | undefined, value: string): boolean {
  if (!filters || filters.length === 0) return true
  return filters.some((f) => (f.op === 'eq' ? f.value === value : f.value !== value))
}

export const schemaRoutes: RouteEntry[] = [
  defineRoute(
    {
      method: 'get',
      path: '/api/v2/graphs/kinds',
      operationId: 'ListKinds',
      summary: 'Node and relationship kinds the graph knows',
      description:
        'Every kind, sorted: the built-in Active Directory and Azure node and relationship kinds, those of the installed ' +
        'extensions and, for a caller who sees every environment, the primary kinds of the stored nodes. ' +
        '`type=eq:node` / `type=eq:edge` (or `neq:`) keeps node or relationship kinds only. A relationship kind that ' +
        'appears only in uploaded data and is declared nowhere is not listed (docs/graph.md).',
      tags: ['Graph'],
      auth: 'graph/Read',
      query: z.object({ type: FilterValues.describe('`eq:node`, `eq:edge`, `neq:node`, `neq:edge` (repeatable: any of them)') }),
      responses: { 200: { description: 'the kinds, sorted', schema: z.object({ data: KindsSchema }) } },
    },
    async (c) => {
      const filters = parseColumnFilters(c.req.queries(), { type: ['eq', 'neq'] })
      const catalog = await loadKindCatalog(c.env.DB)
      const kinds = graphKinds(catalog)
      const nodeKinds = new Set<string>([...BUILTIN_NODE_KINDS, ...catalog.nodeKinds])
      // Kinds found only in the data could come from an environment a restricted caller may not see.
      if (c.get('principal').environmentAccess.all) for (const k of await nodeKindsInData(c.env.DB)) nodeKinds.add(k)
      const all = new Set<string>([...nodeKinds, ...kinds.relationships.keys()])
      const isNode = (k: string) => nodeKinds.has(k) || isExtendedNodeKind(k)
      const typeFilters = filters.get('type')
      const list = [...all]
        .filter((k) => matches(typeFilters, isNode(k) ? 'node' : 'edge'))
        .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
      return c.json({ data: { kinds: list } })
    },
  ),
  defineRoute(
    {
      method: 'get',
      path: '/api/v2/graphs/source-kinds',
      operationId: 'ListSourceKinds',
      summary: 'Source kinds (the collectors data comes from)',
      description:
        '`Base` (SharpHound) and `AZBase` (AzureHound), then the source kinds the installed extensions declare for their ' +
        'environments, by name, then `Sourceless` (id 0: data of no source kind), as BloodHound lists them for ' +
        '`POST /api/v2/clear-database`. Ids are positions in this list; the name identifies a source kind.',
      tags: ['Graph'],
      auth: 'graph/Read',
      responses: { 200: { description: 'the source kinds', schema: z.object({ data: z.object({ kinds: z.array(SourceKindSchema) }) }) } },
    },
    async (c) => {
      const catalog = await loadKindCatalog(c.env.DB)
      const kinds = [...sourceKindList(catalog).map((k) => ({ ...k, active: true })), { id: 0, name: 'Sourceless', active: true }]
      return c.json({ data: { kinds } })
    },
  ),
  defineRoute(
    {
      method: 'get',
      path: '/api/v2/graph-schema/edges',
      operationId: 'ListEdgeTypes',
      summary: 'Relationship kinds of the graph schema',
      description:
        'Every relationship kind with its description and whether paths traverse it: the built-in ones (schema `ad` or ' +
        '`az`), then those of the installed extensions. Filters: `schema_names=eq:<name>` (repeatable: any of them; ' +
        '`neq:` excludes) and `is_traversable=eq:true|false`.',
      tags: ['Graph'],
      auth: 'graph/Read',
      query: z.object({
        schema_names: FilterValues.describe('`eq:<schema name>` or `neq:<schema name>`, repeatable'),
        is_traversable: FilterValues.describe('`eq:true`, `eq:false`, `neq:…`'),
      }),
      responses: { 200: { description: 'the relationship kinds', schema: z.object({ data: z.array(EdgeTypeSchema) }) } },
    },
    async (c) => {
      const filters = parseColumnFilters(c.req.queries(), { schema_names: ['eq', 'neq'], is_traversable: ['eq', 'neq'] })
      const rows = [
        ...BUILTIN_RELATIONSHIP_SCHEMAS.flatMap((s) =>
          s.kinds.map(([name, traversable]) => ({ name, description: '', is_traversable: traversable, schema_name: s.schema, is_builtin: true })),
        ),
        ...(await listRelationshipKinds(c.env.DB)),
      ].map((r, i) => ({ id: i + 1, ...r }))
      const schemas = filters.get('schema_names')
      const traversable = filters.get('is_traversable')
      const data = rows.filter((r) => {
        if (schemas && !schemas.every((f) => f.op === 'neq' ? f.value !== r.schema_name : true)) return false
        if (schemas && schemas.some((f) => f.op === 'eq') && !schemas.some((f) => f.op === 'eq' && f.value === r.schema_name)) return false
        return matches(traversable, String(r.is_traversable))
      })
      return c.json({ data })
    },
  ),
]
