/**
 * BloodHound's asset group tags and their selectors (privilege-zone rules): `/api/v2/asset-group-tags…`
 * (cmd/api/src/api/v2/assetgrouptags.go, `asset-isolation.asset-group-tags*.yaml`). A tag is an asset group
 * (id 1 Tier Zero, id 2 Owned, then created groups); a selector names objects by object id (seed type 1) or by a
 * Cypher rule (seed type 2). The same selectors back the older asset-groups API (one store: selectors.store.ts).
 * docs/asset-groups.md, "Selectors and Cypher rules".
 */
import type { Context } from 'hono'
import { z } from 'zod'
import type { AppEnv } from '../env'
import { requireSelectorAccess } from './access'
import { ApiError, rfc3339 } from '../http/errors'
import { defineRoute, type RouteEntry } from '../http/route'
import { NullTime } from '../http/null-types'
import { auditOf, type AuditInput } from '../audit/audit'
import { environmentsOfObjects } from '../audit/audit.store'
import { Limit, NumericId, OptionalBool, Skip } from '../graph/params'
import {
  createTag,
  deleteGroup,
  listGroups,
  listTagMembers,
  selectorCountsByTag,
  updateTag,
  visibleObjectIds,
  type GroupRow,
  type TagMemberSortKey,
} from './assetgroups.store'
import { SYSTEM_GROUP_DELETE } from './assetgroups.routes'
import {
  createTagSelector,
  deleteTagSelector,
  getTagSelector,
  listSelectorMembers,
  listTagSelectors,
  selectorFailures,
  selectorMemberCounts,
  tagFailures,
  updateTagSelector,
  type RuleFailure,
  type MemberFilterOp,
  type SelectorFilter,
  type SelectorFilterColumn,
  type SelectorFilterOp,
  type SelectorMemberFilters,
  type SelectorMemberSortKey,
  SEED_CYPHER,
  SEED_OBJECT_ID,
  type SelectorPatch,
  type Seed,
  type TagSelector,
} from './selectors.store'
import { validateSeeds } from './seeds'

const NullString = z.object({ string: z.string(), valid: z.boolean() })
const NOT_SET_TIME = { time: '0001-01-01T00:00:00Z', valid: false }
const nullTime = (t: string | null) => (t ? { time: t, valid: true } : NOT_SET_TIME)
const nullString = (s: string | null) => (s === null ? { string: '', valid: false } : { string: s, valid: true })

/** BloodHound's tag types. */
export const TYPE_TIER = 1
export const TYPE_LABEL = 2
export const TYPE_OWNED = 3

/**
 * EdgeHound: a Cypher rule's evaluation that failed in the last analysis run (src/assetgroups/rules.ts). The rule
 * keeps that evaluation's last good selection; the failure shows who is affected and since when.
 */
export const RuleFailureSchema = z
  .object({
    selector_id: z.number().int(),
    environment_id: z.string().nullable().describe('the environment whose evaluation failed; null: the whole-graph evaluation (matches across environments)'),
    error: z.string().describe('why it failed (a budget crossed, a refusal)'),
    failing_since: z.string().describe('commit time of the first analysis run of this series of failures'),
    kept_from: z.string().nullable().describe('commit time of the run whose selection is kept; null: it never succeeded and selects nothing'),
    kept_members: z.number().int().describe('nodes the kept selection adds'),
  })
  .meta({ id: 'AssetGroupTagRuleFailure' })

export const AssetGroupTagSchema = z
  .object({
    id: z.number().int(),
    type: z.number().int().describe('1 tier (Tier Zero), 2 label (a created group), 3 owned'),
    kind_id: z.number().int(),
    name: z.string(),
    description: z.string(),
    created_at: z.string(),
    created_by: z.string(),
    updated_at: z.string(),
    updated_by: z.string(),
    deleted_at: NullTime,
    deleted_by: NullString,
    position: z.object({ int32: z.number().int(), valid: z.boolean() }),
    require_certify: z.object({ bool: z.boolean(), valid: z.boolean() }),
    analysis_enabled: z.object({ bool: z.boolean(), valid: z.boolean() }),
    rule_failures: z
      .array(RuleFailureSchema)
      .describe(
        'EdgeHound: the tag\u2019s Cypher rules whose evaluation failed in the last analysis run for an environment the caller reads ' +
          '(the whole-graph evaluation only for callers who read every environment); each keeps its last good selection',
      ),
  })
  .meta({ id: 'AssetGroupTag' })

const SeedSchema = z.object({ type: z.number().int().describe('1 object id, 2 Cypher'), value: z.string() })

export const AssetGroupTagSelectorSchema = z
  .object({
    id: z.number().int(),
    asset_group_tag_id: z.number().int(),
    name: z.string(),
    description: z.string(),
    created_at: z.string(),
    created_by: z.string().describe("the author's user id"),
    updated_at: z.string(),
    updated_by: z.string(),
    disabled_at: NullTime.describe('valid: the selector is disabled (analysis ignores it)'),
    disabled_by: NullString,
    auto_certify: z.number().int(),
    is_default: z.boolean(),
    allow_disable: z.boolean(),
    seeds: z.array(SeedSchema),
    counts: z.object({ members: z.number().int() }).optional().describe('with `counts=true`: the nodes the last analysis run selected'),
    evaluation: z
      .object({
        evaluated_at: z.string().nullable(),
        members: z.number().int().nullable(),
        error: z.string().nullable(),
        failures: z.array(RuleFailureSchema).describe('a Cypher rule\u2019s evaluations (per environment, whole graph) that failed; each keeps its last good selection'),
      })
      .describe('EdgeHound: the last complete analysis run\'s evaluation (null fields: not evaluated yet, or disabled)'),
  })
  .meta({ id: 'AssetGroupTagSelector' })

export const tagType = (id: number) => (id === 1 ? TYPE_TIER : id === 2 ? TYPE_OWNED : TYPE_LABEL)
const TIER_ZERO_DESCRIPTION = 'Tier Zero: the objects whose control means control of the environment'

export function tagJson(g: GroupRow, failures: RuleFailure[] = []) {
  const type = tagType(g.id)
  return {
    id: g.id,
    type,
    kind_id: 0,
    // BloodHound's names; the kinds Tag_Tier_Zero and Tag_Owned are "Tag_" + the name
    name: g.id === 1 ? 'Tier Zero' : g.id === 2 ? 'Owned' : g.name,
    description: g.description !== '' ? g.description : g.id === 1 ? TIER_ZERO_DESCRIPTION : '',
    created_at: g.created_at,
    created_by: g.created_by !== '' ? g.created_by : g.system_group === 1 ? 'SYSTEM' : '',
    updated_at: g.updated_at,
    updated_by: g.updated_by !== '' ? g.updated_by : g.system_group === 1 ? 'SYSTEM' : '',
    deleted_at: NOT_SET_TIME,
    deleted_by: { string: '', valid: false },
    position: type === TYPE_TIER ? { int32: 1, valid: true } : { int32: 0, valid: false },
    require_certify: { bool: false, valid: type === TYPE_TIER },
    analysis_enabled: { bool: true, valid: type === TYPE_TIER },
    rule_failures: failures,
  }
}

/** The rule failures of `groupIds` that the caller is affected by (selectors.store.ts tagFailures). */
export async function failuresFor(c: Context<AppEnv>, groupIds: number[]): Promise<Map<number, RuleFailure[]>> {
  const access = c.var.principal.environmentAccess
  return tagFailures(c.env.DB, groupIds, access.all ? null : access.ids)
}

export function selectorJson(s: TagSelector, counts?: Map<number, number>, failures: RuleFailure[] = []) {
  return {
    id: s.id,
    asset_group_tag_id: s.asset_group_id,
    name: s.name,
    description: s.description,
    created_at: s.created_at,
    created_by: s.created_by,
    updated_at: s.updated_at,
    updated_by: s.updated_by,
    disabled_at: nullTime(s.disabled_at),
    disabled_by: nullString(s.disabled_by),
    auto_certify: s.auto_certify,
    is_default: s.is_default === 1,
    allow_disable: s.allow_disable === 1,
    seeds: s.seeds.map((d) => ({ type: d.type, value: d.value })),
    ...(counts ? { counts: { members: s.disabled_at ? 0 : (counts.get(s.id) ?? 0) } } : {}),
    evaluation: { evaluated_at: s.eval_at, members: s.eval_members, error: s.eval_error, failures: s.disabled_at ? [] : failures },
  }
}

export const TagId = z.object({ asset_group_tag_id: NumericId })
export const SelectorIds = z.object({ asset_group_tag_id: NumericId, asset_group_tag_selector_id: NumericId })

const SeedIn = z.object({
  type: z.number({ error: 'seed type must be 1 (object id) or 2 (Cypher)' }).int('seed type must be 1 (object id) or 2 (Cypher)'),
  value: z.string({ error: 'seed value must be a string' }).max(64 * 1024, 'a seed value is at most 65536 characters'),
})
/** BloodHound's auto_certify: 0 off, 1 all members, 2 seeds only (older clients send a boolean). */
const AutoCertify = z
  .union([z.number().int().min(0).max(2), z.boolean()], { error: 'auto_certify must be 0, 1, 2 or a boolean' })
  .transform((v) => (typeof v === 'boolean' ? (v ? 1 : 0) : v))
const Name = z.string({ error: 'name must be a string' }).trim().max(250, 'name is at most 250 characters')
const Description = z.string({ error: 'description must be a string' }).max(10_000, 'description is at most 10000 characters')

const CreateBody = z.object({
  name: Name.min(1, 'name is required'),
  description: Description.optional(),
  auto_certify: AutoCertify.optional(),
  seeds: z.array(SeedIn).max(1_000, 'at most 1000 seeds').optional(),
  disabled: z.boolean({ error: 'disabled must be a boolean' }).optional(),
})
const PatchBody = z.object({
  name: Name.optional(),
  description: Description.optional(),
  auto_certify: AutoCertify.optional(),
  seeds: z.array(SeedIn).max(1_000, 'at most 1000 seeds').optional(),
  disabled: z.boolean({ error: 'disabled must be a boolean' }).optional(),
})

/**
 * BloodHound's selector filters (AssetGroupTagSelector.ValidFilters): `col=<op>:<value>`, repeatable (ANDed); a bare
 * value is `eq:`. Strings `eq`/`neq`/`~eq` (contains, case-insensitive) on name and description, `eq`/`neq` on the
 * author columns; times `eq`/`neq`/`gt`/`gte`/`lt`/`lte` (RFC 3339); `auto_certify` (0–2) and `is_default` (boolean)
 * `eq`/`neq`.
 */
const TIME_OPS: SelectorFilterOp[] = ['eq', 'neq', 'gt', 'gte', 'lt', 'lte']
const SELECTOR_FILTERS: Record<SelectorFilterColumn, { ops: SelectorFilterOp[]; kind: 'string' | 'time' | 'int' | 'bool' }> = {
  name: { ops: ['eq', 'neq', 'contains'], kind: 'string' },
  description: { ops: ['eq', 'neq', 'contains'], kind: 'string' },
  created_by: { ops: ['eq', 'neq'], kind: 'string' },
  updated_by: { ops: ['eq', 'neq'], kind: 'string' },
  disabled_by: { ops: ['eq', 'neq'], kind: 'string' },
  created_at: { ops: TIME_OPS, kind: 'time' },
  updated_at: { ops: TIME_OPS, kind: 'time' },
  disabled_at: { ops: TIME_OPS, kind: 'time' },
  auto_certify: { ops: ['eq', 'neq'], kind: 'int' },
  is_default: { ops: ['eq', 'neq'], kind: 'bool' },
}
const RawFilter = z.union([z.string(), z.array(z.string())]).optional()

function selectorFilters(q: Record<string, string | string[] | undefined>): SelectorFilter[] {
  const out: SelectorFilter[] = []
  for (const [column, spec] of Object.entries(SELECTOR_FILTERS) as [SelectorFilterColumn, (typeof SELECTOR_FILTERS)[SelectorFilterColumn]][]) {
    const v = q[column]
    if (v === undefined) continue
    for (const raw of Array.isArray(v) ? v : [v]) {
      const m = /^(~eq|eq|neq|gte|gt|lte|lt):(.*)$/s.exec(raw)
      const op: SelectorFilterOp | null = m ? (m[1] === '~eq' ? 'contains' : (m[1] as SelectorFilterOp)) : /^[a-z~]+:/.test(raw) ? null : 'eq'
      if (op === null || !spec.ops.includes(op))
        throw new ApiError(400, `the filter predicate is not supported: ${column} ${m ? m[1] : raw.split(':')[0]}`, `query.${column}`)
      const text = m ? m[2] : raw
      let value: string | number = text
      if (spec.kind === 'time') {
        const t = Date.parse(text)
        if (!/^\d{4}-\d{2}-\d{2}T/.test(text) || !Number.isFinite(t)) throw new ApiError(400, `${column} must be an RFC 3339 date-time`, `query.${column}`)
        value = new Date(t).toISOString()
      } else if (spec.kind === 'int') {
        if (!/^[0-2]$/.test(text)) throw new ApiError(400, 'auto_certify must be an input value of 0 to 2', `query.${column}`)
        value = Number(text)
      } else if (spec.kind === 'bool') {
        if (text !== 'true' && text !== 'false') throw new ApiError(400, `${column} must be true or false`, `query.${column}`)
        value = text === 'true' ? 1 : 0
      }
      out.push({ column, op, value })
    }
  }
  return out
}
const TypeFilter = z
  .string()
  .optional()
  .transform((v, ctx) => {
    if (v === undefined) return undefined
    const m = /^(?:(eq|neq):)?([12])$/.exec(v)
    if (!m) {
      ctx.addIssue({ code: 'custom', message: 'type must be 1 (object id) or 2 (Cypher), with eq: or neq:' })
      return z.NEVER
    }
    return { op: (m[1] ?? 'eq') as 'eq' | 'neq', value: Number(m[2]) as 1 | 2 }
  })

type TagFilterOp = 'eq' | 'neq' | 'contains'
/** Repeatable tag-list filters `col=eq:x` / `neq:x` / `~eq:x` (where allowed); a bare value is `eq:`. */
function tagFilter(col: string, ops: readonly TagFilterOp[], integer = false) {
  return z
    .union([z.string(), z.array(z.string())])
    .optional()
    .transform((v, ctx) => {
      if (v === undefined) return undefined
      const out: { op: TagFilterOp; value: string }[] = []
      for (const raw of Array.isArray(v) ? v : [v]) {
        const m = /^(~eq|eq|neq):(.*)$/s.exec(raw)
        const op: TagFilterOp | null = m ? (m[1] === '~eq' ? 'contains' : (m[1] as 'eq' | 'neq')) : /^[a-z~]+:/.test(raw) ? null : 'eq'
        if (op === null || !ops.includes(op)) {
          ctx.addIssue({ code: 'custom', message: `the filter predicate is not supported: ${col} ${m ? m[1] : raw.split(':')[0]}` })
          return z.NEVER
        }
        const value = m ? m[2] : raw
        if (integer && !/^-?\d+$/.test(value)) {
          ctx.addIssue({ code: 'custom', message: `${col} must be an integer` })
          return z.NEVER
        }
        out.push({ op, value })
      }
      return out
    })
}
/** Every filter of one column holds (BloodHound ANDs the filters of the tag list). */
function matches(value: string, filters: { op: TagFilterOp; value: string }[] | undefined): boolean {
  for (const f of filters ?? []) {
    if (f.op === 'eq' && value !== f.value) return false
    if (f.op === 'neq' && value === f.value) return false
    if (f.op === 'contains' && !value.toLowerCase().includes(f.value.toLowerCase())) return false
  }
  return true
}

/** BloodHound's HasValidTagName, and its messages. */
const TAG_NAME = /^[a-zA-Z0-9 _]+$/
const INVALID_TAG_NAME = 'asset group tag name must contain only alphanumeric characters, spaces, and underscores'
const TAG_NAME_TOO_LONG = 'asset group tag name is limited to 250 characters'
const DUPLICATE_TAG = 'asset group tag name must be unique'
function checkTagName(name: string): void {
  if (name.length > 250) throw new ApiError(400, TAG_NAME_TOO_LONG, 'name')
  if (!TAG_NAME.test(name)) throw new ApiError(400, INVALID_TAG_NAME, 'name')
}
/** The system tag the members of a created tag carry (as the older API's `tag`): its name, lower case, `_` for spaces. */
const systemTagOf = (name: string) => name.trim().toLowerCase().replace(/ /g, '_')

const TagCreateBody = z.object({
  name: z.string({ error: 'name must be a string' }),
  description: z.string({ error: 'description must be a string' }).max(10_000, 'description is at most 10000 characters').optional(),
  type: z.number({ error: 'valid tag_type is required' }).int('valid tag_type is required'),
  position: z.number().int().nullable().optional(),
  require_certify: z.boolean().nullable().optional(),
  glyph: z.string().nullable().optional(),
})
const TagPatchBody = z.object({
  name: z.string({ error: 'name must be a string' }).optional(),
  description: z.string({ error: 'description must be a string' }).max(10_000, 'description is at most 10000 characters').optional(),
  position: z.number().int().nullable().optional(),
  require_certify: z.boolean().nullable().optional(),
  analysis_enabled: z.boolean().nullable().optional(),
  glyph: z.string().nullable().optional(),
})
const tagBodyFields = (input: AuditInput) => {
  const b = (input.body ?? {}) as Record<string, unknown>
  const out: Record<string, unknown> = {}
  for (const k of ['name', 'description', 'type', 'position', 'require_certify', 'analysis_enabled', 'glyph']) if (b[k] !== undefined) out[k] = b[k]
  return out
}

/** Repeatable member filters `col=eq:x` / `neq:x` (and `~eq:x`, contains, where allowed); a bare value is `eq:`. */
function memberFilter(col: string, ops: readonly MemberFilterOp[]) {
  const list = z.union([z.string(), z.array(z.string())]).optional()
  return list.transform((v, ctx) => {
    if (v === undefined) return undefined
    const out: { op: MemberFilterOp; value: string }[] = []
    for (const raw of Array.isArray(v) ? v : [v]) {
      const m = /^(~eq|eq|neq):(.*)$/s.exec(raw)
      const op: MemberFilterOp | null = m ? (m[1] === '~eq' ? 'contains' : (m[1] as 'eq' | 'neq')) : /^[a-z~]+:/.test(raw) ? null : 'eq'
      if (op === null || !ops.includes(op)) {
        ctx.addIssue({ code: 'custom', message: `the filter predicate is not supported: ${col} ${m ? m[1] : raw.split(':')[0]}` })
        return z.NEVER
      }
      out.push({ op, value: m ? m[2] : raw })
    }
    return out
  })
}
const MEMBER_SORT: Record<string, SelectorMemberSortKey> = { id: 'id', node_id: 'id', objectid: 'object_id', object_id: 'object_id', node_object_id: 'object_id', name: 'name', node_name: 'name' }

/** The query of both member lists (a tag's, a selector's): paging, BloodHound's member sort keys, `environments`
 *  and the name / object_id / primary_kind filters. A fresh schema per route, as each route had its own. */
function memberQuery() {
  return z.object({
    skip: Skip,
    limit: Limit(50, 1_000),
    sort_by: z
      .string()
      .optional()
      .refine((v) => v === undefined || MEMBER_SORT[v.replace(/^-/, '')] !== undefined, 'column format does not support sorting'),
    environments: z.union([z.string(), z.array(z.string())]).optional(),
    name: memberFilter('name', ['eq', 'neq', 'contains']),
    object_id: memberFilter('object_id', ['eq', 'neq', 'contains']),
    primary_kind: memberFilter('primary_kind', ['eq', 'neq']),
  })
}
/** The 200 body of both member lists: one page `{count, skip, limit, data: {members}}` of the given member shape. */
function memberPage<T extends z.ZodRawShape>(member: T) {
  return z.object({
    count: z.number().int(),
    skip: z.number().int(),
    limit: z.number().int(),
    data: z.object({ members: z.array(z.object(member)) }),
  })
}
export const environmentsOf = (v: string | string[] | undefined): string[] | null =>
  v === undefined ? null : (Array.isArray(v) ? v : [v]).flatMap((e) => e.split(',')).filter(Boolean)

/** Selector routes and tag writes need access to every environment: the one rule of ./access.ts (both APIs). */
export function requireAllEnvironments(c: Context<AppEnv>): void {
  requireSelectorAccess(c.var.principal.environmentAccess)
}

export async function tagOr404(c: Context<AppEnv>, id: number): Promise<GroupRow> {
  const [g] = await listGroups(c.env.DB, c.var.principal.environmentAccess, id)
  if (!g) throw new ApiError(404, 'asset group tag not found', 'asset_group_tag_id')
  return g
}

export async function selectorOr404(c: Context<AppEnv>, tagId: number, selectorId: number): Promise<TagSelector> {
  await tagOr404(c, tagId)
  const s = await getTagSelector(c.env.DB, selectorId)
  if (!s) throw new ApiError(404, 'selector not found', 'asset_group_tag_selector_id')
  if (s.asset_group_id !== tagId) throw new ApiError(404, 'selector is not part of asset group tag', 'asset_group_tag_selector_id')
  return s
}

const DUPLICATE = 'asset group tag selector name must be unique'

const ids = (input: AuditInput) => {
  const p = input.params as { asset_group_tag_id?: unknown; asset_group_tag_selector_id?: unknown }
  return {
    asset_group_tag_id: Number(p.asset_group_tag_id),
    ...(p.asset_group_tag_selector_id !== undefined ? { asset_group_tag_selector_id: Number(p.asset_group_tag_selector_id) } : {}),
  }
}
/**
 * The environments a selector change's entry concerns (src/audit/visibility.ts): those of the object-id seeds its
 * fields name. A Cypher seed can select anything, so its entry is `unknown` (served whole only to readers of every
 * environment). An update that replaces seeds also names the seeds it removes (`seeds_removed`), so the current
 * seeds count too; an update without seeds names none.
 */
const seedsOf = (input: AuditInput): Seed[] | undefined => (input.body as { seeds?: Seed[] } | undefined)?.seeds
async function seedEnvironments(seeds: Seed[], c: Context<AppEnv>): Promise<string[] | 'unknown'> {
  if (seeds.some((s) => s.type !== SEED_OBJECT_ID)) return 'unknown'
  return environmentsOfObjects(c.env.DB, seeds.map((s) => s.value))
}
const createEnvironments = (input: AuditInput, c: Context<AppEnv>) => seedEnvironments(seedsOf(input) ?? [], c)
const updateEnvironments = async (input: AuditInput, c: Context<AppEnv>) => {
  const seeds = seedsOf(input)
  if (!seeds || seeds.length === 0) return []
  const current = await getTagSelector(c.env.DB, Number((input.params as { asset_group_tag_selector_id: unknown }).asset_group_tag_selector_id))
  return seedEnvironments([...seeds, ...(current?.seeds ?? [])], c)
}
/**
 * What replacing a selector's seeds changed, for its success entry: the seeds added and removed, whole, so that the
 * entry identifies the change without the previous entry (issue 24: a removal among many seeds).
 */
function seedChange(before: Seed[], after: Seed[]): { seeds_added: Seed[]; seeds_removed: Seed[] } {
  const key = (s: Seed) => `${s.type}\u0000${s.value}`
  const had = new Set(before.map(key))
  const has = new Set(after.map(key))
  return { seeds_added: after.filter((s) => !had.has(key(s))), seeds_removed: before.filter((s) => !has.has(key(s))) }
}
/** The entry's fields: what the request set, whole (seed values and rule texts are never cut; src/audit/fields.ts). */
const bodyFields = (input: AuditInput) => {
  const b = (input.body ?? {}) as Record<string, unknown>
  const out: Record<string, unknown> = {}
  for (const k of ['name', 'description', 'auto_certify', 'disabled', 'seeds']) if (b[k] !== undefined) out[k] = b[k]
  return out
}

export const assetGroupTagRoutes: RouteEntry[] = [
  defineRoute(
    {
      method: 'get',
      path: '/api/v2/asset-group-tags',
      operationId: 'GetAssetGroupTags',
      summary: 'Asset group tags: Tier Zero (type 1), Owned (type 3) and created groups (type 2)',
      description:
        '`counts=true` adds `counts: {selectors, members}` (members: the tag\u2019s members in the caller\u2019s environments, as the last ' +
        'analysis run computed them). Filters as BloodHound\u2019s: `type` (`eq:` / `neq:`, an integer), `name` and `description` ' +
        '(`eq:`, `neq:`, `~eq:` contains, case-insensitive); several values of one filter are ANDed.',
      tags: ['Asset Isolation'],
      auth: 'graph/Read',
      query: z.object({
        counts: OptionalBool(false, 'counts'),
        type: tagFilter('type', ['eq', 'neq'], true),
        name: tagFilter('name', ['eq', 'neq', 'contains']),
        description: tagFilter('description', ['eq', 'neq', 'contains']),
      }),
      responses: {
        200: {
          description: 'the tags',
          schema: z.object({
            data: z.object({
              tags: z.array(
                AssetGroupTagSchema.extend({
                  counts: z.object({ selectors: z.number().int(), members: z.number().int() }).optional().describe('with `counts=true`'),
                }),
              ),
            }),
          }),
        },
      },
    },
    async (c, { query }) => {
      const groups = await listGroups(c.env.DB, c.var.principal.environmentAccess)
      const failures = await failuresFor(
        c,
        groups.map((g) => g.id),
      )
      const tags = groups.map((g) => ({ json: tagJson(g, failures.get(g.id)), members: g.member_count }))
      const keep = tags.filter(
        ({ json }) =>
          matches(String(json.type), query.type) && matches(json.name, query.name) && matches(json.description, query.description),
      )
      const selectors = query.counts ? await selectorCountsByTag(c.env.DB) : null
      return c.json({
        data: {
          tags: keep.map(({ json, members }) => (selectors ? { ...json, counts: { selectors: selectors.get(json.id) ?? 0, members } } : json)),
        },
      })
    },
  ),
  defineRoute(
    {
      method: 'post',
      path: '/api/v2/asset-group-tags',
      operationId: 'CreateAssetGroupTag',
      summary: 'Create a tag (a label, type 2); its selectors decide its members from the next analysis run on',
      description:
        'Body `{name, type, description?}` (BloodHound Enterprise\u2019s). `name`: letters, digits, spaces and `_`, at most 250 ' +
        'characters, unique as BloodHound\u2019s kind `Tag_<name>` (409 `asset group tag name must be unique`). EdgeHound has one ' +
        'zone (Tier Zero) and one owned tag, so `type` must be 2; `position` and `require_certify` are for zones only (400), ' +
        'a `glyph` too. Members carry the tag\u2019s name in lower case (spaces as `_`) in `system_tags`. Needs access to every environment.',
      tags: ['Asset Isolation'],
      auth: 'graph/ManageAssetGroups',
      replay: { repeatable: 'privilege-zone data: a repeat creates nothing new (names are unique) and is rate-limited' },
      audit: { action: 'CreateAssetGroupTag', fields: (input) => tagBodyFields(input) },
      body: { kind: 'json', schema: TagCreateBody, maxBytes: 64 * 1024 },
      responses: { 201: { description: 'the new tag', schema: z.object({ data: AssetGroupTagSchema }) } },
    },
    async (c, { body }) => {
      requireAllEnvironments(c)
      if (![TYPE_TIER, TYPE_LABEL, TYPE_OWNED].includes(body.type)) throw new ApiError(400, 'valid tag_type is required', 'type')
      if (body.type !== TYPE_LABEL)
        throw new ApiError(400, 'EdgeHound creates labels (tag_type 2) only: Tier Zero is its one zone and Owned its one owned tag', 'type')
      if ((body.position ?? null) !== null || (body.require_certify ?? null) !== null)
        throw new ApiError(400, 'position and require_certify are only allowed for tiers', 'position')
      if (body.glyph) throw new ApiError(400, 'only zones support custom glyphs', 'glyph')
      const name = body.name.trim()
      if (name === '') throw new ApiError(400, 'name can not be empty', 'name')
      checkTagName(name)
      const now = rfc3339(c.var.now())
      const tag = await createTag(
        c.env.DB,
        { name, description: body.description ?? '', tag: systemTagOf(name) },
        c.var.principal.userId,
        now,
        auditOf(c).write(),
      )
      if (!tag) throw new ApiError(409, DUPLICATE_TAG, 'name')
      return c.json({ data: tagJson(tag) }, 201)
    },
  ),
  defineRoute(
    {
      method: 'get',
      path: '/api/v2/asset-group-tags/:asset_group_tag_id',
      operationId: 'GetAssetGroupTag',
      summary: 'One asset group tag',
      tags: ['Asset Isolation'],
      auth: 'graph/Read',
      params: TagId,
      responses: { 200: { description: 'the tag', schema: z.object({ data: z.object({ tag: AssetGroupTagSchema }) }) } },
    },
    async (c, { params }) => {
      const tag = await tagOr404(c, params.asset_group_tag_id)
      return c.json({ data: { tag: tagJson(tag, (await failuresFor(c, [tag.id])).get(tag.id)) } })
    },
  ),
  defineRoute(
    {
      method: 'patch',
      path: '/api/v2/asset-group-tags/:asset_group_tag_id',
      operationId: 'UpdateAssetGroupTag',
      summary: 'Change a tag: name, description (BloodHound\u2019s UpdateAssetGroupTag and its refusals)',
      description:
        'At least one of `name`, `description`, `position`, `require_certify`, `analysis_enabled`, `glyph` (else 400 `no valid ' +
        'fields specified`). Tier Zero and Owned cannot be renamed (400 `renaming default tags is forbidden currently`); ' +
        '`position`, `require_certify`, `analysis_enabled` and `glyph` are for zones, and Tier Zero\u2019s position, ' +
        'analysis_enabled and glyph cannot change (BloodHound\u2019s 400 / 403 messages); `require_certify` is accepted on Tier Zero ' +
        'and changes nothing (no certification, as BloodHound Community). A request that changes nothing answers the tag as it is. ' +
        'Needs access to every environment.',
      tags: ['Asset Isolation'],
      auth: 'graph/ManageAssetGroups',
      replay: { repeatable: 'privilege-zone data: the same update applied again is idempotent' },
      audit: { action: 'UpdateAssetGroupTag', fields: (input) => ({ ...ids(input), ...tagBodyFields(input) }) },
      params: TagId,
      body: { kind: 'json', schema: TagPatchBody, maxBytes: 64 * 1024 },
      responses: { 200: { description: 'the tag as changed', schema: z.object({ data: AssetGroupTagSchema }) } },
    },
    async (c, { params, body }) => {
      requireAllEnvironments(c)
      const current = await tagOr404(c, params.asset_group_tag_id)
      const type = tagType(current.id)
      const tierZero = current.id === 1
      const shown = tagJson(current)
      let fieldMatched = false
      const patch: { name?: string; description?: string } = {}
      if (body.name !== undefined) {
        fieldMatched = true
        if (body.name === '') throw new ApiError(400, 'name can not be empty', 'name')
        if (tierZero || type === TYPE_OWNED) throw new ApiError(400, 'renaming default tags is forbidden currently', 'name')
        checkTagName(body.name)
        if (body.name !== shown.name) patch.name = body.name
      }
      if (body.description !== undefined) {
        fieldMatched = true
        if (body.description !== shown.description) patch.description = body.description
      }
      if (body.require_certify != null) {
        if (type !== TYPE_TIER) throw new ApiError(400, 'only zones support modifying require_certify', 'require_certify')
        fieldMatched = true
      }
      if (body.position != null) {
        if (type !== TYPE_TIER) throw new ApiError(400, 'only zones support modifying position', 'position')
        if (tierZero) throw new ApiError(403, 'tier zero position cannot be modified', 'position')
      }
      if (body.analysis_enabled != null) {
        if (type !== TYPE_TIER) throw new ApiError(400, 'only zones support modifying analysis_enabled', 'analysis_enabled')
        if (tierZero) throw new ApiError(403, 'tier zero analysis_enabled cannot be modified', 'analysis_enabled')
      }
      if (body.glyph != null) {
        if (body.glyph !== '') {
          if (type !== TYPE_TIER) throw new ApiError(400, 'only zones support custom glyphs', 'glyph')
          if (tierZero) throw new ApiError(400, 'tier zero glyph cannot be modified', 'glyph')
        }
        fieldMatched = true
      }
      if (!fieldMatched) throw new ApiError(400, 'no valid fields specified', 'body')
      if (patch.name === undefined && patch.description === undefined) {
        auditOf(c).markUnchanged()
        return c.json({ data: shown })
      }
      const r = await updateTag(c.env.DB, current.id, patch, c.var.principal.userId, rfc3339(c.var.now()), auditOf(c).write())
      if (r === 'duplicate') throw new ApiError(409, DUPLICATE_TAG, 'name')
      if (!r) throw new ApiError(404, 'asset group tag not found', 'asset_group_tag_id')
      return c.json({ data: tagJson(r) })
    },
  ),
  defineRoute(
    {
      method: 'delete',
      path: '/api/v2/asset-group-tags/:asset_group_tag_id',
      operationId: 'DeleteAssetGroupTag',
      summary: 'Delete a created tag with its selectors and members; Tier Zero and Owned cannot be deleted',
      description:
        'Deletes the tag, its selectors (with their seeds) and its members in one batch; 204. Tier Zero and Owned: 409 `Cannot ' +
        'delete a system defined asset group.` (BloodHound\u2019s answer for its system groups). Its members lose its system tag ' +
        'at the next analysis run. Needs access to every environment.',
      tags: ['Asset Isolation'],
      auth: 'graph/ManageAssetGroups',
      replay: { repeatable: 'privilege-zone data: deleting again answers 404 and changes nothing' },
      audit: { action: 'DeleteAssetGroupTag', fields: (input) => ids(input) },
      params: TagId,
      responses: { 204: { description: 'deleted' } },
    },
    async (c, { params }) => {
      requireAllEnvironments(c)
      const current = await tagOr404(c, params.asset_group_tag_id)
      if (current.system_group === 1) throw new ApiError(409, SYSTEM_GROUP_DELETE, 'asset_group_tag_id')
      if (!(await deleteGroup(c.env.DB, current.id, auditOf(c).write({ name: tagJson(current).name }))))
        throw new ApiError(404, 'asset group tag not found', 'asset_group_tag_id')
      return c.body(null, 204)
    },
  ),
  defineRoute(
    {
      method: 'get',
      path: '/api/v2/asset-group-tags/:asset_group_tag_id/members',
      operationId: 'ListAssetGroupTagMembersById',
      summary: 'Members of a tag as the last analysis run computed them (the caller\u2019s environments only)',
      description:
        '`environments` (repeatable) narrows to those environment ids; `skip`, `limit` (default 50, at most 1000); `sort_by` ' +
        '`id`, `objectid`, `name` (BloodHound\u2019s; also `node_id`, `node_object_id`, `node_name`; `-` descending); filters `name`, ' +
        '`object_id` (`eq:`, `neq:`, `~eq:` contains) and `primary_kind` (`eq:`, `neq:`), one filter\u2019s values ORed. ' +
        '`source` is 1 (a seed: EdgeHound selects members directly, ' +
        'it does not expand them to children or parents as BloodHound\'s zones can).',
      tags: ['Asset Isolation'],
      auth: 'graph/Read',
      params: TagId,
      query: memberQuery(),
      responses: {
        200: {
          description: 'one page of members',
          schema: memberPage({
            id: z.number().int(),
            object_id: z.string(),
            primary_kind: z.string(),
            name: z.string(),
            source: z.number().int(),
            custom_member: z.boolean().describe('EdgeHound: named by a selector of the tag (object id or Cypher rule)'),
          }),
        },
      },
    },
    async (c, { params, query }) => {
      await tagOr404(c, params.asset_group_tag_id)
      const envs = environmentsOf(query.environments)
      // A restricted caller naming (eq:) an object that is not a node of its environments gets the 404 an absent
      // object gets, as for every object of a hidden environment (docs/permissions.md): no existence oracle, and
      // the same rule as the older API's environment_id filter.
      const access = c.var.principal.environmentAccess
      const named = (query.object_id ?? []).filter((f) => f.op === 'eq').map((f) => f.value)
      if (!access.all && named.length > 0) {
        const seen = await visibleObjectIds(c.env.DB, named, access)
        if (named.some((id) => !seen.has(id))) throw new ApiError(404, 'object not found', 'query.object_id')
      }
      const sort = query.sort_by ?? 'id'
      const key = ({ id: 'node_id', object_id: 'node_object_id', name: 'node_name' } as const)[MEMBER_SORT[sort.replace(/^-/, '')]] as TagMemberSortKey
      const page = await listTagMembers(c.env.DB, {
        groupId: params.asset_group_tag_id,
        access: c.var.principal.environmentAccess,
        environments: envs,
        filters: { name: query.name, object_id: query.object_id, primary_kind: query.primary_kind },
        sort: { key, desc: sort.startsWith('-') },
        skip: query.skip,
        limit: query.limit,
      })
      const members = page.rows.map((m) => ({ id: m.id, object_id: m.object_id, primary_kind: m.primary_kind, name: m.name ?? '', source: 1, custom_member: m.custom_member === 1 }))
      return c.json({ count: page.count, skip: query.skip, limit: query.limit, data: { members } })
    },
  ),
  defineRoute(
    {
      method: 'get',
      path: '/api/v2/asset-group-tags/:asset_group_tag_id/selectors',
      operationId: 'GetAssetGroupTagSelectors',
      summary: 'Selectors of a tag: object-id selectors and Cypher rules (callers with access to every environment)',
      description:
        '`skip`, `limit` (default 50, at most 1000); BloodHound\u2019s filters (repeatable, ANDed): `name`, `description` with `eq:`, `neq:` or ' +
        '`~eq:` (contains); `created_by`, `updated_by`, `disabled_by` with `eq:` / `neq:`; `created_at`, `updated_at`, `disabled_at` (RFC 3339) ' +
        'with `eq:`, `neq:`, `gt:`, `gte:`, `lt:`, `lte:`; `auto_certify` (0\u20132) and `is_default` (true/false) with `eq:` / `neq:`; the ' +
        'seed `type` `1` (object id) or `2` (Cypher) with `eq:` / `neq:`; `sort_by` `id`, `name`, `created_at`, `updated_at` (`-` descending); `counts=true` adds ' +
        '`counts.members`, the tag\u2019s members the selector picked in the last analysis run (`environments`, repeatable, narrows the count to those ids; a disabled selector counts 0). A caller restricted to some environments ' +
        'gets 403 (rules speak of the whole graph).',
      tags: ['Asset Isolation'],
      auth: 'graph/Read',
      params: TagId,
      query: z.object({
        skip: Skip,
        limit: Limit(50, 1_000),
        type: TypeFilter,
        ...(Object.fromEntries(Object.keys(SELECTOR_FILTERS).map((k) => [k, RawFilter])) as Record<SelectorFilterColumn, typeof RawFilter>),
        counts: OptionalBool(false, 'counts'),
        environments: z.union([z.string(), z.array(z.string())]).optional(),
        sort_by: z.enum(['id', '-id', 'name', '-name', 'created_at', '-created_at', 'updated_at', '-updated_at']).optional(),
      }),
      responses: {
        200: {
          description: 'one page of selectors',
          schema: z.object({
            count: z.number().int(),
            skip: z.number().int(),
            limit: z.number().int(),
            data: z.object({ selectors: z.array(AssetGroupTagSelectorSchema) }),
          }),
        },
      },
    },
    async (c, { params, query }) => {
      requireAllEnvironments(c)
      await tagOr404(c, params.asset_group_tag_id)
      const sort = query.sort_by ?? 'id'
      const page = await listTagSelectors(c.env.DB, {
        groupId: params.asset_group_tag_id,
        skip: query.skip,
        limit: query.limit,
        type: query.type,
        filters: selectorFilters(query as unknown as Record<string, string | string[] | undefined>),
        sortKey: sort.replace(/^-/, '') as 'id' | 'name' | 'created_at' | 'updated_at',
        sortDesc: sort.startsWith('-'),
      })
      const counts = query.counts
        ? await selectorMemberCounts(c.env.DB, params.asset_group_tag_id, page.rows.map((s) => s.id), environmentsOf(query.environments))
        : undefined
      const failures = await selectorFailures(
        c.env.DB,
        page.rows.map((s) => s.id),
      )
      return c.json({
        count: page.count,
        skip: query.skip,
        limit: query.limit,
        data: { selectors: page.rows.map((s) => selectorJson(s, counts, failures.get(s.id))) },
      })
    },
  ),
  defineRoute(
    {
      method: 'post',
      path: '/api/v2/asset-group-tags/:asset_group_tag_id/selectors',
      operationId: 'CreateAssetGroupTagSelector',
      summary: 'Create a selector: object ids (seed type 1) or a Cypher rule (seed type 2); the next analysis run applies it',
      description:
        'Body `{name, description?, seeds: [{type, value}], auto_certify?, disabled?}`; seeds are all of one type. A Cypher ' +
        'seed must be a query POST /api/v2/graphs/cypher accepts (`cypher is invalid: …` otherwise). A name the tag already ' +
        'has: 409. Needs access to every environment. Takes effect at the next analysis run (POST /api/v2/analysis).',
      tags: ['Asset Isolation'],
      auth: 'graph/ManageAssetGroups',
      replay: { repeatable: 'selectors: a repeat adds a selector the caller may add anyway, bounded by the rate limit (OpenHound\'s runs repeat them)' },
      audit: { action: 'CreateAssetGroupTagSelector', fields: (input) => ({ ...ids(input), ...bodyFields(input) }), environments: createEnvironments },
      params: TagId,
      body: { kind: 'json', schema: CreateBody, maxBytes: 256 * 1024 },
      responses: { 201: { description: 'the new selector', schema: z.object({ data: AssetGroupTagSelectorSchema }) } },
    },
    async (c, { params, body }) => {
      requireAllEnvironments(c)
      await tagOr404(c, params.asset_group_tag_id)
      const seeds = validateSeeds(body.seeds)
      const now = rfc3339(c.var.now())
      const s = await createTagSelector(
        c.env.DB,
        params.asset_group_tag_id,
        { name: body.name, description: body.description ?? '', autoCertify: body.auto_certify ?? 0, disabled: body.disabled ?? false, seeds },
        c.var.principal.userId,
        now,
        auditOf(c).write(),
      )
      if (!s) throw new ApiError(409, DUPLICATE, 'name')
      return c.json({ data: selectorJson(s) }, 201)
    },
  ),
  defineRoute(
    {
      method: 'get',
      path: '/api/v2/asset-group-tags/:asset_group_tag_id/selectors/:asset_group_tag_selector_id',
      operationId: 'GetAssetGroupTagSelector',
      summary: 'One selector (callers with access to every environment)',
      tags: ['Asset Isolation'],
      auth: 'graph/Read',
      params: SelectorIds,
      responses: { 200: { description: 'the selector', schema: z.object({ data: z.object({ selector: AssetGroupTagSelectorSchema }) }) } },
    },
    async (c, { params }) => {
      requireAllEnvironments(c)
      const s = await selectorOr404(c, params.asset_group_tag_id, params.asset_group_tag_selector_id)
      return c.json({ data: { selector: selectorJson(s, undefined, (await selectorFailures(c.env.DB, [s.id])).get(s.id)) } })
    },
  ),
  defineRoute(
    {
      method: 'get',
      path: '/api/v2/asset-group-tags/:asset_group_tag_id/selectors/:asset_group_tag_selector_id/members',
      operationId: 'GetAssetGroupTagSelectorMembers',
      summary: 'The members of a tag that one selector picked in the last analysis run',
      description:
        'The nodes the selector picked in the last complete analysis run (the object ids it names that are nodes, or the nodes ' +
        'its Cypher rule selected) and that are members of the tag, in the caller\u2019s environments; `environments` (repeatable) ' +
        'narrows to those ids. `skip`, `limit` (default 50, at most 1000); `sort_by` `id`, `objectid`, `name` (also `node_id`, ' +
        '`node_object_id`, `node_name`; `-` descending; default `id`); filters `name`, `object_id` (`eq:`, `neq:`, `~eq:` contains) and ' +
        '`primary_kind` (`eq:`, `neq:`), several values of one filter ORed. `source` is BloodHound\u2019s: 1 seed, 2 child, 3 parent; ' +
        'EdgeHound does not expand selections, so always 1. A disabled selector: 409 `selector is disabled`. Needs access to every environment.',
      tags: ['Asset Isolation'],
      auth: 'graph/Read',
      params: SelectorIds,
      query: memberQuery(),
      responses: {
        200: {
          description: 'one page of the selector\u2019s members',
          schema: memberPage({
            id: z.number().int(),
            object_id: z.string(),
            environment_id: z.string(),
            primary_kind: z.string(),
            name: z.string(),
            source: z.number().int().describe('1 seed, 2 child, 3 parent (EdgeHound: always 1)'),
            asset_group_tag_id: z.number().int(),
          }),
        },
      },
    },
    async (c, { params, query }) => {
      requireAllEnvironments(c)
      const s = await selectorOr404(c, params.asset_group_tag_id, params.asset_group_tag_selector_id)
      if (s.disabled_at) throw new ApiError(409, 'selector is disabled', 'asset_group_tag_selector_id')
      const sort = query.sort_by ?? 'id'
      const access = c.var.principal.environmentAccess
      const filters: SelectorMemberFilters = {
        name: query.name,
        object_id: query.object_id,
        primary_kind: query.primary_kind as { op: 'eq' | 'neq'; value: string }[] | undefined,
      }
      const page = await listSelectorMembers(c.env.DB, {
        selectorId: s.id,
        groupId: s.asset_group_id,
        access: access.all ? null : access.ids,
        environments: environmentsOf(query.environments),
        filters,
        sort: { key: MEMBER_SORT[sort.replace(/^-/, '')], desc: sort.startsWith('-') },
        skip: query.skip,
        limit: query.limit,
      })
      const members = page.rows.map((m) => ({
        id: m.id,
        object_id: m.object_id,
        environment_id: m.environment_id ?? '',
        primary_kind: m.primary_kind,
        name: m.name ?? '',
        source: m.source,
        asset_group_tag_id: s.asset_group_id,
      }))
      return c.json({ count: page.count, skip: query.skip, limit: query.limit, data: { members } })
    },
  ),
  defineRoute(
    {
      method: 'patch',
      path: '/api/v2/asset-group-tags/:asset_group_tag_id/selectors/:asset_group_tag_selector_id',
      operationId: 'UpdateAssetGroupTagSelector',
      summary: 'Change a selector: name, description, seeds (replaced as a whole), auto_certify, disabled',
      description:
        'Only the fields given change; `disabled: true` disables the selector (the next analysis run ignores it), `false` ' +
        'enables it. Seeds, when given, replace the stored ones and are validated as on create.',
      tags: ['Asset Isolation'],
      auth: 'graph/ManageAssetGroups',
      replay: { repeatable: 'selectors: the same PATCH applied again is idempotent (OpenHound\'s overwrite runs repeat it)' },
      audit: { action: 'UpdateAssetGroupTagSelector', fields: (input) => ({ ...ids(input), ...bodyFields(input) }), environments: updateEnvironments },
      params: SelectorIds,
      body: { kind: 'json', schema: PatchBody, maxBytes: 256 * 1024 },
      responses: { 200: { description: 'the selector as changed', schema: z.object({ data: AssetGroupTagSelectorSchema }) } },
    },
    async (c, { params, body }) => {
      requireAllEnvironments(c)
      const current = await selectorOr404(c, params.asset_group_tag_id, params.asset_group_tag_selector_id)
      const patch: SelectorPatch = {}
      if (body.name !== undefined && body.name !== '') patch.name = body.name
      if (body.description !== undefined) patch.description = body.description
      if (body.auto_certify !== undefined) patch.autoCertify = body.auto_certify
      if (body.disabled !== undefined) {
        if (body.disabled && current.allow_disable !== 1) throw new ApiError(403, 'this selector cannot be disabled', 'disabled')
        patch.disabled = body.disabled
      }
      if (body.seeds !== undefined && body.seeds.length > 0) patch.seeds = validateSeeds(body.seeds)
      const change = patch.seeds ? seedChange(current.seeds, patch.seeds) : {}
      // the selector's name in the success row: the history names what changed (src/assetgroups/history.store.ts)
      const r = await updateTagSelector(c.env.DB, current, patch, c.var.principal.userId, rfc3339(c.var.now()), auditOf(c).write({ ...change, selector_name: current.name }))
      if (r === 'duplicate') throw new ApiError(409, DUPLICATE, 'name')
      return c.json({ data: selectorJson(r, undefined, (await selectorFailures(c.env.DB, [r.id])).get(r.id)) })
    },
  ),
  defineRoute(
    {
      method: 'delete',
      path: '/api/v2/asset-group-tags/:asset_group_tag_id/selectors/:asset_group_tag_selector_id',
      operationId: 'DeleteAssetGroupTagSelector',
      summary: 'Delete a selector; the next analysis run no longer applies it',
      tags: ['Asset Isolation'],
      auth: 'graph/ManageAssetGroups',
      replay: { repeatable: 'selectors: deleting again answers 404 and changes nothing' },
      audit: { action: 'DeleteAssetGroupTagSelector', fields: (input) => ids(input) },
      params: SelectorIds,
      responses: { 204: { description: 'deleted' } },
    },
    async (c, { params }) => {
      requireAllEnvironments(c)
      const s = await selectorOr404(c, params.asset_group_tag_id, params.asset_group_tag_selector_id)
      if (s.is_default === 1) throw new ApiError(403, 'cannot delete a default selector', 'asset_group_tag_selector_id')
      if (!(await deleteTagSelector(c.env.DB, s.id, auditOf(c).write({ selector_name: s.name })))) throw new ApiError(404, 'selector not found', 'asset_group_tag_selector_id')
      return c.body(null, 204)
    },
  ),
]

export { SEED_CYPHER, SEED_OBJECT_ID }
