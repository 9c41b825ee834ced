/**
 * The rest of BloodHound's asset-group-tag routes (cmd/api/src/api/v2/assetgrouptags.go): member counts per kind,
 * one member with the selectors that picked it, search, selector previews and the history of changes.
 * docs/asset-groups.md, "Counts, search, preview and history". Shapes and helpers are the tag routes' own
 * (./tags.routes.ts); the access rule is ./access.ts: member counts follow the member lists (the caller's
 * environments), everything that shows selectors or rules needs access to every environment.
 */
import { z } from 'zod'
import { ApiError } from '../http/errors'
import { defineRoute, type RouteEntry } from '../http/route'
import { Limit, Skip } from '../graph/params'
import { WEIGHT } from '../ratelimit/cost'
import { parseTimeFilter, splitOp } from '../findings/query'
import { KindCounts, kindCounts } from './assetgroups.routes'
import { listGroups, nodesByObjectIds, searchTagMembers, tagMemberByNodeId, tagMemberKindCounts } from './assetgroups.store'
import { searchTagSelectors, selectorMemberKindCounts, selectorsOfMember, SEED_OBJECT_ID } from './selectors.store'
import { validateSeeds } from './seeds'
import { previewRule } from './rules'
import { listHistory, type HistoryColumn, type HistoryFilter, type HistoryOp } from './history.store'
import {
  AssetGroupTagSchema,
  AssetGroupTagSelectorSchema,
  environmentsOf,
  failuresFor,
  requireAllEnvironments,
  selectorJson,
  SelectorIds,
  selectorOr404,
  TagId,
  tagJson,
  tagOr404,
  tagType,
  TYPE_LABEL,
  TYPE_OWNED,
  TYPE_TIER,
} from './tags.routes'

/** BloodHound's default page (AssetGroupTagDefaultLimit), also the cap of each list a search answers. */
const DEFAULT_LIMIT = 50
/** BloodHound's assetGroupTagQueryLimitMin and its message. */
const QUERY_MIN = 3
const QUERY_TOO_SHORT = 'search query must be at least 3 characters long'
const INVALID_TAG_TYPE = 'valid tag_type is required'
const NOT_SORTABLE = 'column format does not support sorting'
/** BloodHound's assetGroupPreviewSelectorDefaultLimit. */
const PREVIEW_DEFAULT_LIMIT = 200

const Environments = z.union([z.string(), z.array(z.string())]).optional()

/** A node member as BloodHound's AssetGroupMember serialises it. */
const Member = z.object({
  id: z.number().int().describe('the node id'),
  object_id: z.string(),
  environment_id: z.string(),
  primary_kind: z.string(),
  name: z.string(),
})

/** A member (node) id: random ids go up to 2^53 (src/graph/ids.ts), so 16 digits, and never 0. */
const MemberIds = z.object({
  asset_group_tag_id: TagId.shape.asset_group_tag_id,
  asset_group_tag_member_id: z
    .string()
    .regex(/^\d{1,16}$/, 'id is malformed')
    .transform(Number)
    .refine((n) => Number.isSafeInteger(n), 'id is malformed'),
})

function parseProps(text: string): Record<string, unknown> {
  try {
    const v: unknown = JSON.parse(text)
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {}
  } catch {
    return {}
  }
}

const SearchBody = z.object({
  query: z.string({ error: 'query must be a string' }).max(1_000, 'query is at most 1000 characters'),
  tag_type: z.number({ error: INVALID_TAG_TYPE }).int(INVALID_TAG_TYPE),
  asset_group_tag_id: z.number({ error: 'asset_group_tag_id must be an integer' }).int('asset_group_tag_id must be an integer').optional(),
})

const PreviewBody = z.object({
  seeds: z
    .array(
      z.object({
        type: z.number({ error: 'seed type must be 1 (object id) or 2 (Cypher)' }).int('seed type must be 1 (object id) or 2 (Cypher)'),
        value: z.string({ error: 'seed value must be a string' }).max(64 * 1024, 'a seed value is at most 65536 characters'),
      }),
      { error: 'seeds are required' },
    )
    .max(1_000, 'at most 1000 seeds'),
  /** BloodHound's expansion methods: 0 none, 1 all, 2 children, 3 parents (EdgeHound does not expand: accepted, no effect) */
  expansion: z.number({ error: 'invalid expansion method' }).int('invalid expansion method').min(0, 'invalid expansion method').max(3, 'invalid expansion method').optional(),
})

// ---- history -------------------------------------------------------------------------------------------

const STRING_OPS: HistoryOp[] = ['eq', 'neq', 'contains']
const ORDERED_OPS: HistoryOp[] = ['eq', 'neq', 'gt', 'gte', 'lt', 'lte']
const HISTORY_FILTERS: Record<HistoryColumn, { ops: HistoryOp[]; kind: 'string' | 'time' | 'int' }> = {
  created_at: { ops: ORDERED_OPS, kind: 'time' },
  actor: { ops: STRING_OPS, kind: 'string' },
  email: { ops: STRING_OPS, kind: 'string' },
  action: { ops: STRING_OPS, kind: 'string' },
  target: { ops: STRING_OPS, kind: 'string' },
  asset_group_tag_id: { ops: ORDERED_OPS, kind: 'int' },
}
const RawFilter = z.union([z.string(), z.array(z.string())]).optional()
const HistoryQuery = z.object({
  skip: Skip,
  limit: Limit(DEFAULT_LIMIT, 1_000),
  sort_by: z.string().optional(),
  ...(Object.fromEntries(Object.keys(HISTORY_FILTERS).map((k) => [k, RawFilter])) as Record<HistoryColumn, typeof RawFilter>),
})

/** `col=<op>:<value>`, repeatable (ANDed); a bare value is `eq:`; `~eq:` is contains (case-insensitive). */
function historyFilters(q: z.infer<typeof HistoryQuery>): HistoryFilter[] {
  const out: HistoryFilter[] = []
  for (const [column, spec] of Object.entries(HISTORY_FILTERS) as [HistoryColumn, (typeof HISTORY_FILTERS)[HistoryColumn]][]) {
    const v = q[column]
    if (v === undefined) continue
    for (const raw of Array.isArray(v) ? v : [v]) {
      const context = `query.${column}`
      if (raw.startsWith('~eq:')) {
        if (!spec.ops.includes('contains')) throw new ApiError(400, `the filter predicate is not supported: ${column} ~eq`, context)
        out.push({ column, op: 'contains', value: raw.slice(4) })
        continue
      }
      const allowed = spec.ops.filter((o): o is Exclude<HistoryOp, 'contains'> => o !== 'contains')
      if (spec.kind === 'time') {
        const f = parseTimeFilter(raw, context)
        out.push({ column, op: f.op, value: f.value })
        continue
      }
      const { op, value } = splitOp(raw, context, allowed)
      if (spec.kind === 'int') {
        if (!/^\d{1,15}$/.test(value)) throw new ApiError(400, `${column} must be a non-negative integer`, context)
        out.push({ column, op, value: Number(value) })
      } else out.push({ column, op, value })
    }
  }
  return out
}

const HistoryRecord = z.object({
  id: z.number().int(),
  created_at: z.string(),
  actor: z.string().describe('the user id'),
  email: z.object({ string: z.string(), valid: z.boolean() }),
  action: z.string().describe('CreateTag, UpdateTag, DeleteTag, CreateSelector, UpdateSelector, DeleteSelector'),
  target: z.string().describe('the tag or selector named (for the older API\u2019s selector changes, the object ids)'),
  asset_group_tag_id: z.number().int(),
  environment_id: z.object({ string: z.string(), valid: z.boolean() }),
  note: z.object({ string: z.string(), valid: z.boolean() }),
})
const HistoryPage = z.object({ count: z.number().int(), skip: z.number().int(), limit: z.number().int(), data: z.object({ records: z.array(HistoryRecord) }) })
const NOT_SET = { string: '', valid: false }

const HISTORY_DESCRIPTION =
  'The changes to tags and selectors of both asset-group APIs, newest first, read from the audit log (each change\u2019s ' +
  'success entry; a request that changed nothing is not a record): `action` is BloodHound\u2019s (`CreateTag`, `UpdateTag`, ' +
  '`DeleteTag`, `CreateSelector`, `UpdateSelector`, `DeleteSelector`), `actor` the user id, `target` the tag or selector ' +
  'named, `environment_id` and `note` never set (no certification). `skip`, `limit` (default 50, at most 1000); `sort_by` ' +
  '`created_at` (`-created_at`, the default, newest first; another column: 400 `column format does not support sorting`); filters ' +
  '(repeatable, ANDed): `created_at` (RFC 3339; `eq:` `neq:` `gt:` `gte:` `lt:` `lte:`), `asset_group_tag_id` (the same), ' +
  '`actor`, `email`, `action`, `target` (`eq:`, `neq:`, `~eq:` contains). BloodHound\u2019s `environment_id` and `note` filters are ' +
  'not offered: both are never set here (no certification), and an environment filter on a route only callers with every ' +
  'environment may read would filter nothing. Needs access to every environment.'

async function historyAnswer(db: D1Database, query: z.infer<typeof HistoryQuery>, search: string | null) {
  const sort = query.sort_by ?? '-created_at'
  if (sort.replace(/^-/, '') !== 'created_at') throw new ApiError(400, NOT_SORTABLE, 'query.sort_by')
  const page = await listHistory(db, { filters: historyFilters(query), search, desc: sort.startsWith('-'), skip: query.skip, limit: query.limit })
  const records = page.rows.map((r) => ({
    id: r.id,
    created_at: r.created_at,
    actor: r.actor,
    email: r.email ? { string: r.email, valid: true } : NOT_SET,
    action: r.action,
    target: r.target,
    asset_group_tag_id: r.asset_group_tag_id,
    environment_id: NOT_SET,
    note: NOT_SET,
  }))
  return { count: page.count, skip: query.skip, limit: query.limit, data: { records } }
}

export const assetGroupTagExtraRoutes: RouteEntry[] = [
  defineRoute(
    {
      method: 'get',
      path: '/api/v2/asset-group-tags/:asset_group_tag_id/members/counts',
      operationId: 'ListAssetGroupTagMemberCountByKind',
      summary: 'A tag\u2019s members counted per primary kind (the caller\u2019s environments only)',
      description:
        '`{"data": {"total_count": n, "counts": {"User": n, …}}}`: the members `GET /api/v2/asset-group-tags/{id}/members` lists, ' +
        'as the last complete analysis run computed them, per primary kind; `environments` (repeatable or comma-separated) ' +
        'narrows to those environment ids. A caller restricted to some environments counts the members of its environments, as ' +
        'its member list shows them (BloodHound refuses such callers; EdgeHound answers what the list already shows).',
      tags: ['Asset Isolation'],
      auth: 'graph/Read',
      params: TagId,
      query: z.object({ environments: Environments }),
      responses: { 200: { description: 'counts per primary kind', schema: z.object({ data: KindCounts }) } },
    },
    async (c, { params, query }) => {
      await tagOr404(c, params.asset_group_tag_id)
      const counts = await tagMemberKindCounts(c.env.DB, {
        groupId: params.asset_group_tag_id,
        access: c.var.principal.environmentAccess,
        environments: environmentsOf(query.environments),
      })
      return c.json({ data: kindCounts(counts) })
    },
  ),
  defineRoute(
    {
      method: 'get',
      path: '/api/v2/asset-group-tags/:asset_group_tag_id/members/:asset_group_tag_member_id',
      operationId: 'GetAssetGroupSelectorsByMemberId',
      summary: 'One member of a tag (by node id) with its properties and the selectors that picked it',
      description:
        'The member id is the node id (`id` of the member lists). `{"data": {"member": {id, object_id, environment_id, ' +
        'primary_kind, name, properties, asset_group_tag_id, selectors: [selector]}}}`: the enabled selectors of the tag that ' +
        'picked the node in the last complete analysis run. A member that only the built-in Tier Zero or Owned rule made a ' +
        'member has `selectors: []` (BloodHound answers 404 when no selector picked it: its system selectors pick every member). ' +
        'A node that is not a member of the tag: 404 `resource not found`; a malformed id: 400 `id is malformed`. ' +
        'Needs access to every environment (the selectors are listed; 403 otherwise).',
      tags: ['Asset Isolation'],
      auth: 'graph/Read',
      params: MemberIds,
      responses: {
        200: {
          description: 'the member',
          schema: z.object({
            data: z.object({
              member: Member.extend({
                properties: z.record(z.string(), z.unknown()),
                asset_group_tag_id: z.number().int(),
                selectors: z.array(AssetGroupTagSelectorSchema),
              }),
            }),
          }),
        },
      },
    },
    async (c, { params }) => {
      requireAllEnvironments(c)
      await tagOr404(c, params.asset_group_tag_id)
      const m = await tagMemberByNodeId(c.env.DB, params.asset_group_tag_id, params.asset_group_tag_member_id)
      if (!m) throw new ApiError(404, 'resource not found', 'asset_group_tag_member_id')
      const selectors = await selectorsOfMember(c.env.DB, params.asset_group_tag_id, m.object_id)
      return c.json({
        data: {
          member: {
            id: m.id,
            object_id: m.object_id,
            environment_id: m.environment_id ?? '',
            primary_kind: m.primary_kind,
            name: m.name ?? '',
            properties: parseProps(m.properties),
            asset_group_tag_id: params.asset_group_tag_id,
            selectors: selectors.map((s) => selectorJson(s)),
          },
        },
      })
    },
  ),
  defineRoute(
    {
      method: 'get',
      path: '/api/v2/asset-group-tags/:asset_group_tag_id/selectors/:asset_group_tag_selector_id/members/counts',
      operationId: 'GetAssetGroupSelectorMemberCountsByKind',
      summary: 'The members of a tag one selector picked, counted per primary kind',
      description:
        'The members `…/selectors/{selector_id}/members` lists (the nodes the selector picked in the last complete analysis run ' +
        'that are members of the tag), per primary kind: `{"data": {"total_count": n, "counts": {…}}}`; `environments` ' +
        '(repeatable or comma-separated) narrows to those ids. A disabled selector: 409 `selector is disabled`; a selector of ' +
        'another tag: 404 `selector is not part of asset group tag`. Needs access to every environment.',
      tags: ['Asset Isolation'],
      auth: 'graph/Read',
      params: SelectorIds,
      query: z.object({ environments: Environments }),
      responses: { 200: { description: 'counts per primary kind', schema: z.object({ data: KindCounts }) } },
    },
    async (c, { params, query }) => {
      requireAllEnvironments(c)
      const s = await selectorOr404(c, params.asset_group_tag_id, params.asset_group_tag_selector_id)
      if (s.disabled_at) throw new ApiError(409, 'selector is disabled', 'asset_group_tag_selector_id')
      const counts = await selectorMemberKindCounts(c.env.DB, { selectorId: s.id, groupId: s.asset_group_id, access: null, environments: environmentsOf(query.environments) })
      return c.json({ data: kindCounts(counts) })
    },
  ),
  defineRoute(
    {
      method: 'post',
      path: '/api/v2/asset-group-tags/search',
      operationId: 'AssetGroupTagSearch',
      summary: 'Search tags and selectors by name and members by name or object id',
      description:
        'Body `{"query": text, "tag_type": 1|2|3, "asset_group_tag_id"?: id}` (BloodHound\u2019s): the tags of that type (type 2 ' +
        'includes Owned, type 3, as BloodHound\u2019s labels do), or only the one named, whose name contains the text; their ' +
        'selectors whose name contains it; and their members whose name or object id contains it (case-insensitive; each list ' +
        'at most 50; members by name, each with the first matching tag it is a member of). `query` shorter than 3 characters: ' +
        '400 `search query must be at least 3 characters long`; `tag_type` other than 1\u20133: 400 `valid tag_type is required`. ' +
        'Changes nothing. Needs access to every environment (selectors are listed; 403 otherwise).',
      tags: ['Asset Isolation'],
      auth: 'graph/Read',
      readOnly: true,
      replay: { repeatable: 'a search: it changes nothing' },
      audit: { exempt: 'read-only: a search changes nothing' },
      cost: WEIGHT.search,
      body: { kind: 'json', schema: SearchBody, maxBytes: 8 * 1024 },
      responses: {
        200: {
          description: 'what matched',
          schema: z.object({
            data: z.object({
              tags: z.array(AssetGroupTagSchema),
              selectors: z.array(AssetGroupTagSelectorSchema),
              members: z.array(Member.extend({ asset_group_tag_id: z.number().int() })),
            }),
          }),
        },
      },
    },
    async (c, { body }) => {
      requireAllEnvironments(c)
      if (![TYPE_TIER, TYPE_LABEL, TYPE_OWNED].includes(body.tag_type)) throw new ApiError(400, INVALID_TAG_TYPE, 'tag_type')
      if (body.query.length < QUERY_MIN) throw new ApiError(400, QUERY_TOO_SHORT, 'query')
      const groups = (await listGroups(c.env.DB, c.var.principal.environmentAccess)).filter((g) => {
        if (body.asset_group_tag_id !== undefined && g.id !== body.asset_group_tag_id) return false
        const t = tagType(g.id)
        return t === body.tag_type || (body.tag_type === TYPE_LABEL && t === TYPE_OWNED)
      })
      const text = body.query.toLowerCase()
      const matched = groups.filter((g) => tagJson(g).name.toLowerCase().includes(text)).slice(0, DEFAULT_LIMIT)
      const ids = groups.map((g) => g.id)
      const [failures, selectors, members] = await Promise.all([
        failuresFor(
          c,
          matched.map((g) => g.id),
        ),
        searchTagSelectors(c.env.DB, ids, body.query, DEFAULT_LIMIT),
        searchTagMembers(c.env.DB, ids, body.query, DEFAULT_LIMIT),
      ])
      return c.json({
        data: {
          tags: matched.map((g) => tagJson(g, failures.get(g.id))),
          selectors: selectors.map((s) => selectorJson(s)),
          members: members.map((m) => ({
            id: m.id,
            object_id: m.object_id,
            environment_id: m.environment_id ?? '',
            primary_kind: m.primary_kind,
            name: m.name ?? '',
            asset_group_tag_id: m.asset_group_id,
          })),
        },
      })
    },
  ),
  defineRoute(
    {
      method: 'post',
      path: '/api/v2/asset-group-tags/preview-selectors',
      operationId: 'PreviewSelectors',
      summary: 'What a selector with these seeds would pick now (a sample, nothing saved)',
      description:
        'Body `{"seeds": [{type, value}], "expansion"?: 0-3}`, validated as a selector\u2019s seeds (same messages). Object-id seeds: ' +
        'the nodes they name; a Cypher seed: the nodes its answer refers to, over the whole graph, with the Cypher endpoint\u2019s ' +
        'budgets (a rule over its budget: 400 with the reason). `limit` (default 200, at most 1000) caps the answer, by name. ' +
        '`{"data": {"members": [{id, object_id, environment_id, primary_kind, name, source}]}}`; `source` is 1 (a seed): ' +
        'EdgeHound does not expand selections to children or parents, so `expansion` is accepted and changes nothing. ' +
        'Changes nothing. Needs access to every environment (a rule sees the whole graph; 403 otherwise).',
      tags: ['Asset Isolation'],
      auth: 'graph/Read',
      readOnly: true,
      replay: { repeatable: 'a preview: it changes nothing' },
      audit: { exempt: 'read-only: a preview saves nothing' },
      cost: WEIGHT.cypher,
      query: z.object({ limit: Limit(PREVIEW_DEFAULT_LIMIT, 1_000) }),
      body: { kind: 'json', schema: PreviewBody, maxBytes: 256 * 1024 },
      responses: {
        200: {
          description: 'the nodes the seeds select',
          schema: z.object({ data: z.object({ members: z.array(Member.extend({ source: z.number().int().describe('1 seed (EdgeHound: always)') })) }) }),
        },
      },
    },
    async (c, { query, body }) => {
      requireAllEnvironments(c)
      const seeds = validateSeeds(body.seeds)
      const objectids: string[] = []
      if (seeds[0].type === SEED_OBJECT_ID) objectids.push(...seeds.map((s) => s.value))
      else
        for (const [i, s] of seeds.entries()) {
          const r = await previewRule(c.env.DB, s.value, c.var.now().getTime())
          if (!r.ok) throw new ApiError(400, r.error, `seeds[${i}].value`)
          objectids.push(...r.objectids)
        }
      const nodes = await nodesByObjectIds(c.env.DB, objectids, query.limit)
      return c.json({
        data: {
          members: nodes.map((n) => ({ id: n.id, object_id: n.object_id, environment_id: n.environment_id ?? '', primary_kind: n.primary_kind, name: n.name ?? '', source: 1 })),
        },
      })
    },
  ),
  defineRoute(
    {
      method: 'get',
      path: '/api/v2/asset-group-tags-history',
      operationId: 'GetAssetGroupTagHistory',
      summary: 'The history of changes to tags and selectors',
      description: HISTORY_DESCRIPTION,
      tags: ['Asset Isolation'],
      auth: 'graph/Read',
      query: HistoryQuery,
      responses: { 200: { description: 'one page of records', schema: HistoryPage } },
    },
    async (c, { query }) => {
      requireAllEnvironments(c)
      return c.json(await historyAnswer(c.env.DB, query, null))
    },
  ),
  defineRoute(
    {
      method: 'post',
      path: '/api/v2/asset-group-tags-history',
      operationId: 'SearchAssetGroupTagHistory',
      summary: 'Search the history of changes to tags and selectors',
      description:
        `Body \`{"query": text}\` (at least 3 characters, else 400 \`${QUERY_TOO_SHORT}\`): the records whose actor, email, action or ` +
        'target contains the text, or the text without its spaces (case-insensitive), with the query parameters of the GET. ' +
        HISTORY_DESCRIPTION,
      tags: ['Asset Isolation'],
      auth: 'graph/Read',
      readOnly: true,
      replay: { repeatable: 'a search: it changes nothing' },
      audit: { exempt: 'read-only: a search changes nothing' },
      query: HistoryQuery,
      body: { kind: 'json', schema: z.object({ query: z.string({ error: 'query must be a string' }).max(1_000, 'query is at most 1000 characters') }), maxBytes: 8 * 1024 },
      responses: { 200: { description: 'one page of records', schema: HistoryPage } },
    },
    async (c, { query, body }) => {
      requireAllEnvironments(c)
      if (body.query.length < QUERY_MIN) throw new ApiError(400, QUERY_TOO_SHORT, 'query')
      return c.json(await historyAnswer(c.env.DB, query, body.query))
    },
  ),
]
