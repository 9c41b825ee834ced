/**
 * BloodHound's asset isolation groups (docs/asset-groups.md): the "Admin Tier Zero" and "Owned" system
 * groups, groups administrators create, their object-id selectors and the members the last analysis run
 * computed. Shapes follow BloodHound's OpenAPI (`asset-isolation.asset-groups*.yaml`).
 */
import type { Context } from 'hono'
import { z } from 'zod'
import type { AppEnv } from '../env'
import { PageInt } from '../http/paging'
import { ApiError, rfc3339 } from '../http/errors'
import { environmentsOfObjects } from '../audit/audit.store'
import { defineRoute, type RouteEntry } from '../http/route'
import { NullTime } from '../http/null-types'
import { auditOf } from '../audit/audit'
import { canSeeEnvironment } from '../auth/permissions'
import { requireSelectorAccess, selectorsVisibleTo } from './access'
import { parseBoolFilter, parseIntFilter, parseStringFilter, parseTimeFilter, type Filter } from '../findings/query'
import {
  collectionEntries,
  getLegacySelector,
  lastCompleteRun,
  memberKindCounts,
  createGroup,
  deleteGroup,
  listGroups,
  listMembers,
  listSelectors,
  renameGroup,
  updateSelectors,
  type GroupRow,
  type MemberQuery,
  type MemberSortKey,
  type SelectorRow,
} from './assetgroups.store'

const NOT_DELETED = { time: '0001-01-01T00:00:00Z', valid: false }

export const AssetGroupSelector = z.object({
  id: z.number().int(),
  asset_group_id: z.number().int(),
  name: z.string(),
  selector: z.string().describe('the object id'),
  system_selector: z.boolean(),
  created_at: z.string(),
  updated_at: z.string(),
  deleted_at: NullTime,
})

export const AssetGroup = z.object({
  id: z.number().int(),
  name: z.string(),
  tag: z.string(),
  system_group: z.boolean(),
  selectors: z.array(AssetGroupSelector),
  member_count: z.number().int().describe('members the caller may see (its environments)'),
  created_at: z.string(),
  updated_at: z.string(),
  deleted_at: NullTime,
})

export const AssetGroupMember = z.object({
  asset_group_id: z.number().int(),
  object_id: z.string(),
  primary_kind: z.string(),
  kinds: z.array(z.string()),
  environment_id: z.string(),
  environment_kind: z.string(),
  name: z.string(),
  custom_member: z.boolean(),
})

function selectorItem(s: SelectorRow) {
  return {
    id: s.id,
    asset_group_id: s.asset_group_id,
    name: s.name,
    selector: s.selector,
    system_selector: s.system_selector === 1,
    created_at: s.created_at,
    updated_at: s.updated_at,
    deleted_at: NOT_DELETED,
  }
}

function groupItem(g: GroupRow & { member_count: number }, selectors: SelectorRow[]) {
  return {
    id: g.id,
    name: g.name,
    tag: g.tag,
    system_group: g.system_group === 1,
    selectors: selectors.filter((s) => s.asset_group_id === g.id).map(selectorItem),
    member_count: g.member_count,
    created_at: g.created_at,
    updated_at: g.updated_at,
    deleted_at: NOT_DELETED,
  }
}

const GroupId = z.object({ asset_group_id: z.string().regex(/^[1-9]\d{0,8}$/, 'asset_group_id must be a positive integer') })

async function groupOr404(c: Context<AppEnv>, id: number) {
  const [g] = await listGroups(c.env.DB, c.var.principal.environmentAccess, id)
  if (!g) throw new ApiError(404, 'asset group not found', 'asset_group_id')
  return g
}

const MEMBER_SORT: readonly MemberSortKey[] = ['object_id', 'asset_group_id', 'primary_kind', 'environment_id', 'environment_kind', 'name']
const MEMBER_FILTERS = ['object_id', 'primary_kind', 'environment_id', 'environment_kind', 'name', 'custom_member'] as const

/** BloodHound's default page size and cap for member lists. */
const MEMBERS_DEFAULT_LIMIT = 100
const MEMBERS_MAX_LIMIT = 1000

const CreateBody = z.object({
  name: z.string().trim().min(1, 'name is required').max(200, 'name is at most 200 characters'),
  tag: z
    .string()
    .regex(/^[a-z0-9_]{1,64}$/, 'tag must be 1 to 64 lower-case letters, digits or underscores (it becomes a system tag)'),
})

/** BloodHound's UpdateAssetGroupRequest: the name only (a `tag` in the body is ignored, as there). */
const RenameBody = z.object({
  name: z.string().trim().min(1, 'name is required').max(200, 'name is at most 200 characters'),
})

/** BloodHound's message for DeleteAssetGroup on a system group (409). */
export const SYSTEM_GROUP_DELETE = 'Cannot delete a system defined asset group.'

const SelectorSpec = z.object({
  selector_name: z.string().trim().max(200, 'selector_name is at most 200 characters').optional(),
  sid: z.string().trim().min(1, 'sid (the object id) is required').max(512, 'sid is at most 512 characters'),
  action: z.enum(['add', 'remove']),
})
const SelectorBody = z.array(SelectorSpec).min(1, 'at least one selector change is required').max(1000, 'at most 1000 selector changes per request')

/**
 * The member list's filters (`eq:` / `neq:`, a bare value is `eq:`), shared by the list and its counts. An environment
 * the caller may not see is absent (docs/permissions.md): naming it is the same 404 as naming an environment that does
 * not exist, so the answer is no existence oracle.
 */
function memberFilters(c: Context<AppEnv>, query: Partial<Record<(typeof MEMBER_FILTERS)[number], string>>): MemberQuery['filters'] {
  const filters: MemberQuery['filters'] = {}
  for (const k of MEMBER_FILTERS) {
    const raw = query[k]
    if (raw === undefined) continue
    const f = parseStringFilter(raw, `query.${k}`)
    if (k === 'custom_member' && f.value !== 'true' && f.value !== 'false') throw new ApiError(400, 'custom_member must be true or false', 'query.custom_member')
    filters[k] = { op: f.op === 'neq' ? 'neq' : 'eq', value: f.value }
  }
  const envFilter = filters.environment_id
  if (envFilter?.op === 'eq' && !canSeeEnvironment(c.var.principal.environmentAccess, envFilter.value))
    throw new ApiError(404, 'environment not found', 'query.environment_id')
  return filters
}

const MemberFilterQuery = {
  object_id: z.string().optional(),
  primary_kind: z.string().optional(),
  environment_id: z.string().optional(),
  environment_kind: z.string().optional(),
  name: z.string().optional(),
  custom_member: z.string().optional(),
}

const SelectorIds = z.object({
  asset_group_id: GroupId.shape.asset_group_id,
  asset_group_selector_id: z.string().regex(/^[1-9]\d{0,14}$/, 'asset_group_selector_id must be a positive integer'),
})

/** BloodHound's kind counts answer: `{total_count, counts: {kind: n}}`. */
export const KindCounts = z.object({ total_count: z.number().int(), counts: z.record(z.string(), z.number().int()) })
export function kindCounts(m: Map<string, number>): z.infer<typeof KindCounts> {
  const counts: Record<string, number> = {}
  let total = 0
  for (const [k, n] of m) {
    counts[k] = n
    total += n
  }
  return { total_count: total, counts }
}

const NOT_SORTABLE = 'column format does not support sorting'
const COLLECTION_SORT = ['id', 'created_at', 'updated_at', 'deleted_at'] as const

const CollectionEntry = z.object({
  object_id: z.string(),
  node_label: z.string().describe('the node\u2019s primary kind'),
  properties: z.record(z.string(), z.unknown()),
  id: z.number().int(),
  created_at: z.string(),
  updated_at: z.string(),
  deleted_at: NullTime,
})
const Collection = z.object({ id: z.number().int(), created_at: z.string(), updated_at: z.string(), deleted_at: NullTime, entries: z.array(CollectionEntry) })

function parseProps(text: string): Record<string, unknown> {
  try {
    const v: unknown = JSON.parse(text)
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {}
  } catch {
    return {}
  }
}

/** The selector ids of a request's audit entry and the environments of the object it names (src/audit/visibility.ts). */
const selectorDeleteFields = (input: { params: unknown }) => {
  const p = input.params as { asset_group_id: string; asset_group_selector_id: string }
  return { asset_group_id: Number(p.asset_group_id), asset_group_selector_id: Number(p.asset_group_selector_id) }
}
async function selectorDeleteEnvironments(input: { params: unknown }, c: Context<AppEnv>) {
  const s = await getLegacySelector(c.env.DB, selectorDeleteFields(input).asset_group_selector_id)
  return s ? environmentsOfObjects(c.env.DB, [s.selector]) : []
}

/** RFC 9745: deprecated since BloodHound deprecated it (EdgeHound serves it from its first release of the route). */
const SELECTORS_POST_DEPRECATED = `@${Date.UTC(2026, 10, 29) / 1000}`

/**
 * PUT and BloodHound's deprecated POST of the same path (UpdateAssetGroupSelectorsDeprecated, "must be removed for API
 * V3"): one definition, one behaviour; the POST answers with a Deprecation header naming PUT as its successor.
 */
function selectorsRoute(method: 'put' | 'post'): RouteEntry {
  return defineRoute(
    {
      method,
      path: '/api/v2/asset-groups/:asset_group_id/selectors',
      operationId: method === 'put' ? 'UpdateAssetGroupSelectors' : 'UpdateAssetGroupSelectorsDeprecated',
      summary:
        method === 'put'
          ? 'Add or remove object-id selectors; the next analysis run applies them'
          : 'Add or remove object-id selectors (deprecated: use PUT, which behaves the same)',
      ...(method === 'post'
        ? { deprecated: true, responseHeaders: { Deprecation: SELECTORS_POST_DEPRECATED } }
        : {}),
      description:
        'Each item names an object id (`sid`) to `add` to or `remove` from the group. Additions already present and ' +
        'removals of absent selectors change nothing. Needs access to every environment (403 otherwise, as the newer ' +
        'API\u2019s selectors). The change takes effect at the next analysis run (POST /api/v2/analysis).',
      tags: ['Asset Isolation'],
      auth: 'graph/ManageAssetGroups',
      replay: { repeatable: 'selectors: the same selector changes applied again give the same set (collector overwrite runs repeat them)' },
      // BloodHound's actions: CreateAssetGroupSelector for a request that adds, DeleteAssetGroupSelector for one
      // that only removes (a request that does both also writes a DeleteAssetGroupSelector success row).
      audit: {
        action: ({ body }) => (Array.isArray(body) && body.some((s) => (s as { action?: unknown }).action === 'add') ? 'CreateAssetGroupSelector' : 'DeleteAssetGroupSelector'),
        fields: ({ params, body }) => ({
          asset_group_id: Number((params as { asset_group_id: string }).asset_group_id),
          add: Array.isArray(body) ? body.filter((s) => s.action === 'add').map((s) => s.sid) : [],
          remove: Array.isArray(body) ? body.filter((s) => s.action === 'remove').map((s) => s.sid) : [],
        }),
        // the environments of every object named (src/audit/visibility.ts)
        environments: ({ body }, c) => environmentsOfObjects(c.env.DB, (body as { sid: string }[]).map((s) => s.sid)),
      },
      params: GroupId,
      body: { kind: 'json', schema: SelectorBody, maxBytes: 256 * 1024 },
      responses: {
        201: {
          description: 'the selectors added and removed',
          schema: z.object({ data: z.object({ added_selectors: z.array(AssetGroupSelector), removed_selectors: z.array(AssetGroupSelector) }) }),
        },
      },
    },
    async (c, { params, body }) => {
      requireSelectorAccess(c.var.principal.environmentAccess)
      const id = Number(params.asset_group_id)
      await groupOr404(c, id)
      // Last change per object id wins (a list may add then remove the same id).
      const last = new Map<string, z.infer<typeof SelectorSpec>>()
      for (const s of body) last.set(s.sid, s)
      const add: { name: string; selector: string }[] = []
      const remove: string[] = []
      for (const s of last.values()) {
        if (s.action === 'add') add.push({ name: s.selector_name || s.sid, selector: s.sid })
        else remove.push(s.sid)
      }
      const audit = auditOf(c)
      const primary = audit.write()
      // a request that adds and removes: its removals get their own DeleteAssetGroupSelector row
      const extra =
        add.length > 0 && remove.length > 0 ? [audit.write({ asset_group_id: id, remove }, 'DeleteAssetGroupSelector').statement(c.env.DB)] : []
      const r = await updateSelectors(c.env.DB, id, { add, remove }, rfc3339(c.var.now()), c.var.principal.userId, primary, extra)
      return c.json({ data: { added_selectors: r.added.map(selectorItem), removed_selectors: r.removed.map(selectorItem) } }, 201)
    },
  )
}

export const assetGroupRoutes: RouteEntry[] = [
  defineRoute(
    {
      method: 'get',
      path: '/api/v2/asset-groups',
      operationId: 'ListAssetGroups',
      summary: 'List asset groups (Admin Tier Zero, Owned and the groups administrators created)',
      tags: ['Asset Isolation'],
      auth: 'graph/Read',
      description:
        'Filters (BloodHound\'s predicates): `name`, `tag` with `eq:` / `neq:`; `system_group` `eq:true|false`; ' +
        '`id`, `member_count` with `eq:`, `neq:`, `gt:`, `gte:`, `lt:`, `lte:` (a bare value means `eq:`). ' +
        'A caller restricted to some environments gets every group with `selectors: []` (selectors need access to every ' +
        'environment, as in the newer asset-group-tags API) and `member_count` of its environments.',
      query: z.object({
        sort_by: z.enum(['name', '-name', 'tag', '-tag', 'member_count', '-member_count', 'id', '-id']).optional(),
        name: z.string().optional(),
        tag: z.string().optional(),
        system_group: z.string().optional(),
        id: z.string().optional(),
        member_count: z.string().optional(),
      }),
      responses: { 200: { description: 'the groups', schema: z.object({ data: z.object({ asset_groups: z.array(AssetGroup) }) }) } },
    },
    async (c, { query }) => {
      const access = c.var.principal.environmentAccess
      const [groups, selectors] = await Promise.all([listGroups(c.env.DB, access), listSelectors(c.env.DB)])
      const tests: ((g: ReturnType<typeof groupItem>) => boolean)[] = []
      for (const k of ['name', 'tag'] as const) {
        const raw = query[k]
        if (raw !== undefined) tests.push(matches(parseStringFilter(raw, `query.${k}`), (g) => g[k]))
      }
      if (query.system_group !== undefined) tests.push(matches(parseBoolFilter(query.system_group, 'query.system_group'), (g) => g.system_group))
      for (const k of ['id', 'member_count'] as const) {
        const raw = query[k]
        if (raw !== undefined) tests.push(matches(parseIntFilter(raw, `query.${k}`), (g) => g[k]))
      }
      const items = groups.map((g) => groupItem(g, selectorsVisibleTo(access, selectors))).filter((g) => tests.every((t) => t(g)))
      if (query.sort_by) {
        const desc = query.sort_by.startsWith('-')
        const key = query.sort_by.replace(/^-/, '') as 'name' | 'tag' | 'member_count' | 'id'
        items.sort((a, b) => {
          const x = a[key]
          const y = b[key]
          const r = x < y ? -1 : x > y ? 1 : a.id - b.id
          return desc ? -r : r
        })
      }
      return c.json({ data: { asset_groups: items } })
    },
  ),
  defineRoute(
    {
      method: 'post',
      path: '/api/v2/asset-groups',
      operationId: 'CreateAssetGroup',
      summary: 'Create an asset group (members come from its selectors at the next analysis run)',
      description: 'Needs access to every environment (403 `user does not have access to this resource` otherwise, as the newer API).',
      tags: ['Asset Isolation'],
      auth: 'graph/ManageAssetGroups',
      replay: { repeatable: 'privilege-zone data: a repeat creates nothing new (names are unique) and is rate-limited' },
      audit: {
        action: 'CreateAssetGroup',
        fields: ({ body }) => ({ asset_group_name: (body as { name?: unknown }).name, asset_group_tag: (body as { tag?: unknown }).tag }),
      },
      body: { kind: 'json', schema: CreateBody, maxBytes: 4 * 1024 },
      responses: { 200: { description: 'the new group', schema: z.object({ data: AssetGroup }) } },
    },
    async (c, { body }) => {
      requireSelectorAccess(c.var.principal.environmentAccess)
      const audit = auditOf(c)
      const g = await createGroup(c.env.DB, body.name, body.tag, rfc3339(c.var.now()), audit.write())
      if (!g) throw new ApiError(409, `an asset group with the tag "${body.tag}" already exists`, 'tag')
      return c.json({ data: groupItem({ ...g, member_count: 0 }, []) })
    },
  ),
  defineRoute(
    {
      method: 'get',
      path: '/api/v2/asset-groups/:asset_group_id',
      operationId: 'GetAssetGroup',
      summary: 'One asset group with its selectors and member count',
      description: 'A caller restricted to some environments gets `selectors: []` (as the list).',
      tags: ['Asset Isolation'],
      auth: 'graph/Read',
      params: GroupId,
      responses: { 200: { description: 'the group', schema: z.object({ data: AssetGroup }) } },
    },
    async (c, { params }) => {
      const id = Number(params.asset_group_id)
      const g = await groupOr404(c, id)
      return c.json({ data: groupItem(g, selectorsVisibleTo(c.var.principal.environmentAccess, await listSelectors(c.env.DB, id))) })
    },
  ),
  defineRoute(
    {
      method: 'put',
      path: '/api/v2/asset-groups/:asset_group_id',
      operationId: 'UpdateAssetGroup',
      summary: 'Rename an asset group (its tag, which members carry, does not change)',
      description:
        'As BloodHound\'s UpdateAssetGroup: body `{"name": …}`; only the name changes (a `tag` in the body is ignored). ' +
        'System groups may be renamed too. 404 for an unknown group. Needs access to every environment (403 otherwise).',
      tags: ['Asset Isolation'],
      auth: 'graph/ManageAssetGroups',
      replay: { repeatable: 'privilege-zone data: renaming to the same name again is idempotent' },
      audit: {
        action: 'UpdateAssetGroup',
        fields: ({ params, body }) => ({
          asset_group_id: Number((params as { asset_group_id: string }).asset_group_id),
          asset_group_name: (body as { name?: unknown } | undefined)?.name,
        }),
      },
      params: GroupId,
      body: { kind: 'json', schema: RenameBody, maxBytes: 4 * 1024 },
      responses: { 200: { description: 'the renamed group', schema: z.object({ data: AssetGroup }) } },
    },
    async (c, { params, body }) => {
      requireSelectorAccess(c.var.principal.environmentAccess)
      const id = Number(params.asset_group_id)
      const g = await renameGroup(c.env.DB, id, body.name, rfc3339(c.var.now()), auditOf(c).write())
      if (!g) throw new ApiError(404, 'asset group not found', 'asset_group_id')
      const [withCount] = await listGroups(c.env.DB, c.var.principal.environmentAccess, id)
      return c.json({ data: groupItem(withCount ?? { ...g, member_count: 0 }, await listSelectors(c.env.DB, id)) })
    },
  ),
  defineRoute(
    {
      method: 'delete',
      path: '/api/v2/asset-groups/:asset_group_id',
      operationId: 'DeleteAssetGroup',
      summary: 'Delete an asset group with its selectors and members (system groups cannot be deleted)',
      description:
        'As BloodHound\'s DeleteAssetGroup: 200 with an empty body; 409 "Cannot delete a system defined asset group." for ' +
        'Admin Tier Zero and Owned; 404 for an unknown group. Its members lose its tag at the next analysis run. ' +
        'Needs access to every environment (403 otherwise).',
      tags: ['Asset Isolation'],
      auth: 'graph/ManageAssetGroups',
      replay: { repeatable: 'privilege-zone data: deleting again answers 404 and changes nothing' },
      audit: {
        action: 'DeleteAssetGroup',
        fields: ({ params }) => ({ asset_group_id: Number((params as { asset_group_id: string }).asset_group_id) }),
      },
      params: GroupId,
      responses: { 200: { description: 'deleted (empty body)' } },
    },
    async (c, { params }) => {
      requireSelectorAccess(c.var.principal.environmentAccess)
      const id = Number(params.asset_group_id)
      const g = await groupOr404(c, id)
      if (g.system_group === 1) throw new ApiError(409, SYSTEM_GROUP_DELETE, 'asset_group_id')
      const audit = auditOf(c)
      if (!(await deleteGroup(c.env.DB, id, audit.write({ asset_group_id: id, asset_group_name: g.name, asset_group_tag: g.tag }))))
        throw new ApiError(404, 'asset group not found', 'asset_group_id')
      return c.body(null, 200)
    },
  ),
  defineRoute(
    {
      method: 'get',
      path: '/api/v2/asset-groups/:asset_group_id/members',
      operationId: 'ListAssetGroupMembers',
      summary: 'Members of an asset group as the last analysis run computed them (the caller’s environments only)',
      description:
        'Filters take `eq:` / `neq:` (a bare value means `eq:`); `custom_member` is `true` or `false`. ' +
        '`sort_by` is one of object_id, asset_group_id, primary_kind, environment_id, environment_kind, name (`-` for descending).',
      tags: ['Asset Isolation'],
      auth: 'graph/Read',
      params: GroupId,
      query: z.object({
        skip: PageInt('skip'),
        limit: PageInt('limit', { min: 1, max: MEMBERS_MAX_LIMIT }),
        sort_by: z.enum([...MEMBER_SORT, ...MEMBER_SORT.map((k) => `-${k}`)] as [string, ...string[]]).optional(),
        object_id: z.string().optional(),
        primary_kind: z.string().optional(),
        environment_id: z.string().optional(),
        environment_kind: z.string().optional(),
        name: z.string().optional(),
        custom_member: z.string().optional(),
      }),
      responses: {
        200: {
          description: 'one page of members',
          schema: z.object({
            count: z.number().int(),
            skip: z.number().int(),
            limit: z.number().int(),
            data: z.object({ members: z.array(AssetGroupMember) }),
          }),
        },
      },
    },
    async (c, { params, query }) => {
      const id = Number(params.asset_group_id)
      await groupOr404(c, id)
      const filters = memberFilters(c, query)
      const sortBy = query.sort_by ?? 'object_id'
      const skip = query.skip ?? 0
      const limit = query.limit ?? MEMBERS_DEFAULT_LIMIT
      const page = await listMembers(c.env.DB, {
        groupId: id,
        access: c.var.principal.environmentAccess,
        filters,
        sort: { key: sortBy.replace(/^-/, '') as MemberSortKey, desc: sortBy.startsWith('-') },
        skip,
        limit,
      })
      const members = page.rows.map((m) => ({
        asset_group_id: m.asset_group_id,
        object_id: m.object_id,
        primary_kind: m.primary_kind,
        kinds: parseKinds(m.kinds),
        environment_id: m.environment_id ?? '',
        environment_kind: m.environment_kind ?? '',
        name: m.name ?? '',
        custom_member: m.custom_member === 1,
      }))
      return c.json({ count: page.count, skip, limit, data: { members } })
    },
  ),
  selectorsRoute('put'),
  selectorsRoute('post'),
  defineRoute(
    {
      method: 'get',
      path: '/api/v2/asset-groups/:asset_group_id/custom-selectors',
      operationId: 'GetAssetGroupCustomMemberCount',
      summary: 'How many selectors administrators added to the group (BloodHound\u2019s custom_member_count)',
      description:
        'As BloodHound\u2019s GetAssetGroupCustomMemberCount: the number of the group\u2019s selectors that are not system selectors, ' +
        'i.e. the object-id selectors `GET /api/v2/asset-groups/{id}` lists (EdgeHound has no system selectors). Needs access to ' +
        'every environment (selectors name objects of every environment; 403 `user does not have access to this resource`).',
      tags: ['Asset Isolation'],
      auth: 'graph/Read',
      params: GroupId,
      responses: { 200: { description: 'the count', schema: z.object({ data: z.object({ custom_member_count: z.number().int() }) }) } },
    },
    async (c, { params }) => {
      requireSelectorAccess(c.var.principal.environmentAccess)
      const id = Number(params.asset_group_id)
      await groupOr404(c, id)
      const selectors = await listSelectors(c.env.DB, id)
      return c.json({ data: { custom_member_count: selectors.filter((s) => s.system_selector !== 1).length } })
    },
  ),
  defineRoute(
    {
      method: 'delete',
      path: '/api/v2/asset-groups/:asset_group_id/selectors/:asset_group_selector_id',
      operationId: 'DeleteAssetGroupSelector',
      summary: 'Delete one object-id selector of the group; the next analysis run applies it',
      description:
        'The selector id is the `id` of a selector in `GET /api/v2/asset-groups/{id}` (`selectors[]`). As BloodHound\u2019s ' +
        'DeleteAssetGroupSelector: 200 with an empty body; 404 `asset group not found` / `asset group selector not found` ' +
        '(also for a selector of another group); a system selector would be 409 (EdgeHound has none). Removing the object id ' +
        'removes every object-id selector of the group naming it, as `PUT …/selectors` with `action: remove`. Needs access ' +
        'to every environment (403 otherwise).',
      tags: ['Asset Isolation'],
      auth: 'graph/ManageAssetGroups',
      replay: { repeatable: 'selectors: deleting again answers 404 and changes nothing' },
      audit: {
        action: 'DeleteAssetGroupSelector',
        fields: (input) => selectorDeleteFields(input),
        environments: (input, c) => selectorDeleteEnvironments(input, c),
      },
      params: SelectorIds,
      responses: { 200: { description: 'deleted (empty body)' } },
    },
    async (c, { params }) => {
      requireSelectorAccess(c.var.principal.environmentAccess)
      const id = Number(params.asset_group_id)
      await groupOr404(c, id)
      const s = await getLegacySelector(c.env.DB, Number(params.asset_group_selector_id))
      if (!s || s.asset_group_id !== id) throw new ApiError(404, 'asset group selector not found', 'asset_group_selector_id')
      if (s.system_selector === 1) throw new ApiError(409, 'Cannot delete a system defined asset group selector.', 'asset_group_selector_id')
      const r = await updateSelectors(c.env.DB, id, { add: [], remove: [s.selector] }, rfc3339(c.var.now()), c.var.principal.userId, auditOf(c).write({ remove: [s.selector] }))
      if (r.removed.length === 0) throw new ApiError(404, 'asset group selector not found', 'asset_group_selector_id')
      return c.body(null, 200)
    },
  ),
  defineRoute(
    {
      method: 'get',
      path: '/api/v2/asset-groups/:asset_group_id/collections',
      operationId: 'ListAssetGroupCollections',
      summary: 'The group\u2019s membership collections: the one the last complete analysis run computed',
      description:
        'BloodHound keeps one collection (a snapshot of the members) per analysis run; EdgeHound keeps the members of the last ' +
        'complete run only (docs/asset-groups.md), so the answer has at most one collection: `id` is that run\u2019s id, ' +
        '`created_at` / `updated_at` its commit time, `entries` every member with its primary kind (`node_label`) and ' +
        'properties. No run yet: `[]`. Filters (BloodHound\u2019s): `id` (`eq:`, `neq:`, `gt:`, `gte:`, `lt:`, `lte:`), `created_at`, ' +
        '`updated_at`, `deleted_at` (RFC 3339, the same operators; `deleted_at` is never set, so it matches nothing); ' +
        '`sort_by` `id`, `created_at`, `updated_at`, `deleted_at` (`-` descending; another column: 400 `column format does not ' +
        'support sorting`). Needs access to every environment (the entries span them; 403 otherwise).',
      tags: ['Asset Isolation'],
      auth: 'graph/Read',
      params: GroupId,
      query: z.object({
        sort_by: z.union([z.string(), z.array(z.string())]).optional(),
        id: z.string().optional(),
        created_at: z.string().optional(),
        updated_at: z.string().optional(),
        deleted_at: z.string().optional(),
      }),
      responses: { 200: { description: 'the collections (at most one)', schema: z.object({ data: z.array(Collection) }) } },
    },
    async (c, { params, query }) => {
      requireSelectorAccess(c.var.principal.environmentAccess)
      for (const raw of query.sort_by === undefined ? [] : Array.isArray(query.sort_by) ? query.sort_by : [query.sort_by])
        if (!(COLLECTION_SORT as readonly string[]).includes(raw.replace(/^-/, ''))) throw new ApiError(400, NOT_SORTABLE, 'query.sort_by')
      const tests: ((x: { id: number; created_at: string }) => boolean)[] = []
      if (query.id !== undefined) tests.push(matches(parseIntFilter(query.id, 'query.id'), (x: { id: number }) => x.id))
      for (const k of ['created_at', 'updated_at'] as const) {
        const raw = query[k]
        if (raw !== undefined) tests.push(matches(parseTimeFilter(raw, `query.${k}`), (x: { created_at: string }) => new Date(x.created_at).toISOString()))
      }
      if (query.deleted_at !== undefined) {
        parseTimeFilter(query.deleted_at, 'query.deleted_at')
        tests.push(() => false)
      }
      const id = Number(params.asset_group_id)
      await groupOr404(c, id)
      const run = await lastCompleteRun(c.env.DB)
      if (!run || !tests.every((t) => t({ id: run.id, created_at: run.completed_at }))) return c.json({ data: [] })
      const entries = (await collectionEntries(c.env.DB, id)).map((e, i) => ({
        object_id: e.object_id,
        node_label: e.node_label,
        properties: parseProps(e.properties),
        id: i + 1,
        created_at: run.completed_at,
        updated_at: run.completed_at,
        deleted_at: NOT_DELETED,
      }))
      return c.json({ data: [{ id: run.id, created_at: run.completed_at, updated_at: run.completed_at, deleted_at: NOT_DELETED, entries }] })
    },
  ),
  defineRoute(
    {
      method: 'get',
      path: '/api/v2/asset-groups/:asset_group_id/members/counts',
      operationId: 'ListAssetGroupMemberCountByKind',
      summary: 'The group\u2019s members counted per primary kind (the caller\u2019s environments only)',
      description:
        'The members `GET /api/v2/asset-groups/{id}/members` would list with the same filters (`object_id`, `primary_kind`, ' +
        '`environment_id`, `environment_kind`, `name`, `custom_member`; `eq:` / `neq:`), counted per primary kind: ' +
        '`{"data": {"total_count": n, "counts": {"User": n, …}}}`. A caller restricted to some environments counts the members ' +
        'of its environments, as its member list shows them (BloodHound refuses such callers; EdgeHound answers what the ' +
        'list already shows them); naming an environment it may not see with `environment_id=eq:` is 404 `environment not found`.',
      tags: ['Asset Isolation'],
      auth: 'graph/Read',
      params: GroupId,
      query: z.object(MemberFilterQuery),
      responses: { 200: { description: 'counts per primary kind', schema: z.object({ data: KindCounts }) } },
    },
    async (c, { params, query }) => {
      const id = Number(params.asset_group_id)
      await groupOr404(c, id)
      const filters = memberFilters(c, query)
      return c.json({ data: kindCounts(await memberKindCounts(c.env.DB, { groupId: id, access: c.var.principal.environmentAccess, filters })) })
    },
  ),
]

/** A parsed predicate as a test on a group's field. */
function matches<T extends string | number | boolean, G>(f: Filter<T>, get: (g: G) => T): (g: G) => boolean {
  return (g) => {
    const v = get(g)
    switch (f.op) {
      case 'eq':
        return v === f.value
      case 'neq':
        return v !== f.value
      case 'gt':
        return v > f.value
      case 'gte':
        return v >= f.value
      case 'lt':
        return v < f.value
      case 'lte':
        return v <= f.value
    }
  }
}

function parseKinds(text: string): string[] {
  try {
    const v: unknown = JSON.parse(text)
    return Array.isArray(v) ? v.filter((k): k is string => typeof k === 'string') : []
  } catch {
    return []
  }
}
