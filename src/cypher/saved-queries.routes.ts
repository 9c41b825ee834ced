/**
 * Saved Cypher queries: BloodHound's /api/v2/saved-queries (cmd/api/src/api/v2/saved_queries.go).
 * A query belongs to its creator; others read it when it is shared with them or public. An
 * administrator may also change or delete public queries of other users (as BloodHound).
 */
import { z } from 'zod'
import type { Context } from 'hono'
import type { AppEnv } from '../env'
import { defineRoute, type RouteEntry } from '../http/route'
import { NullTime } from '../http/null-types'
import { auditOf } from '../audit/audit'
import { ApiError, rfc3339 } from '../http/errors'
import { Limit, NumericId, Skip } from '../graph/params'
import {
  deleteSavedQuery,
  getSavedQuery,
  insertSavedQuery,
  isPublic,
  isSharedWithOrPublic,
  listSavedQueries,
  setSharing,
  SORTABLE,
  updateSavedQuery,
  type ListFilter,
  type SavedQueryRow,
  type Scope,
} from './saved-queries.store'

const NOT_FOUND = 'query does not exist'
const DUPLICATE = 'duplicate name for saved query: please choose a different name'
const EMPTY = 'the name and/or query field is empty'
const NO_DELETE = 'User does not have permission to delete this query'


const SavedQuerySchema = z
  .object({
    id: z.number().int(),
    user_id: z.string(),
    name: z.string(),
    query: z.string(),
    description: z.string(),
    created_at: z.string(),
    updated_at: z.string(),
    deleted_at: NullTime,
    scope: z.enum(['owned', 'shared', 'public']).optional().describe('only when the list was asked with `scope`'),
  })
  .meta({ id: 'SavedQuery' })

function json(q: SavedQueryRow, scope?: Scope) {
  return { ...q, deleted_at: { time: '0001-01-01T00:00:00.000Z', valid: false }, ...(scope ? { scope } : {}) }
}

const Id = z.object({ id: NumericId })

const Body = z.object({
  name: z.string().max(1_000, 'name must be at most 1000 characters').optional().default(''),
  query: z.string().max(64 * 1024, 'query must be at most 65536 characters').optional().default(''),
  description: z.string().max(10_000, 'description must be at most 10000 characters').optional().default(''),
})

/** `name=eq:x` (exact, also plain `name=x`) or `name=~eq:x` (contains), as BloodHound's filter syntax. */
const Filter = z
  .string()
  .optional()
  .transform((v, ctx) => {
    if (v === undefined) return undefined
    const m = /^(~eq|eq):(.*)$/s.exec(v)
    if (!m && /^[a-z~]+:/.test(v)) {
      ctx.addIssue({ code: 'custom', message: 'filter predicate is not supported: use eq: or ~eq:' })
      return z.NEVER
    }
    return m ? { op: m[1] === 'eq' ? ('eq' as const) : ('contains' as const), value: m[2] } : { op: 'eq' as const, value: v }
  })

const ListQuery = z.object({
  skip: Skip,
  limit: Limit(10_000, 10_000),
  sort_by: z.union([z.string(), z.array(z.string())]).optional(),
  name: Filter,
  query: Filter,
  description: Filter,
  scope: z.string().optional(),
})

const SharingBody = z.object({
  user_ids: z.array(z.string().uuid('user_ids must be UUIDs')).max(1_000).optional().default([]),
  public: z.boolean().optional().default(false),
})

const isAdmin = (c: Context<AppEnv>) => c.var.principal.roles.includes('Administrator')

export const savedQueryRoutes: RouteEntry[] = [
  defineRoute(
    {
      method: 'get',
      path: '/api/v2/saved-queries',
      operationId: 'ListSavedQueries',
      summary: "The caller's saved queries (or, with scope, also those shared with them and public ones)",
      description:
        '`scope` (comma-separated `owned`, `shared`, `public`, or `all`) adds each item\'s `scope`; without it the ' +
        'caller\'s own queries. `sort_by` a column (`-column` descending); filters `name`, `query`, `description` as ' +
        '`eq:value` or `~eq:value` (contains, case-insensitive).',
      tags: ['Cypher'],
      auth: 'graph/Read',
      query: ListQuery,
      responses: {
        200: {
          description: 'a page of saved queries',
          schema: z.object({ count: z.number().int(), skip: z.number().int(), limit: z.number().int(), data: z.array(SavedQuerySchema) }),
        },
      },
    },
    async (c, { query }) => {
      const order: ListFilter['order'] = []
      for (const raw of query.sort_by === undefined ? [] : Array.isArray(query.sort_by) ? query.sort_by : [query.sort_by]) {
        const descending = raw.startsWith('-')
        const column = descending ? raw.slice(1) : raw
        if (!SORTABLE.has(column)) throw new ApiError(400, 'the specified column cannot be sorted', 'query.sort_by')
        order.push({ column, descending })
      }
      const filters: ListFilter['filters'] = []
      for (const column of ['name', 'query', 'description'] as const) {
        const f = query[column]
        if (f) filters.push({ column, ...f })
      }
      let scopes: Scope[] | null = null
      if (query.scope !== undefined) {
        scopes = []
        for (const s of query.scope.split(',').map((x) => x.trim().toLowerCase())) {
          if (s === 'all') scopes.push('owned', 'shared', 'public')
          else if (s === 'owned' || s === 'shared' || s === 'public') scopes.push(s)
          else throw new ApiError(400, 'invalid scope param', 'query.scope')
        }
        scopes = [...new Set(scopes)]
      }
      const db = c.env.DB
      const userId = c.var.principal.userId
      const f: ListFilter = { filters, order, skip: query.skip, limit: query.limit }
      if (scopes === null) {
        const r = await listSavedQueries(db, userId, 'owned', f)
        return c.json({ count: r.count, skip: query.skip, limit: query.limit, data: r.rows.map((q) => json(q)) })
      }
      let count = 0
      const data: ReturnType<typeof json>[] = []
      for (const s of scopes) {
        const r = await listSavedQueries(db, userId, s, f)
        count += r.count
        data.push(...r.rows.map((q) => json(q, s)))
      }
      return c.json({ count, skip: query.skip, limit: query.limit, data })
    },
  ),
  defineRoute(
    {
      method: 'post',
      path: '/api/v2/saved-queries',
      operationId: 'CreateSavedQuery',
      audit: { action: 'CreateSavedQuery', fields: ({ body }) => ({ name: (body as { name?: unknown }).name }) },
      summary: 'Save a Cypher query',
      tags: ['Cypher'],
      auth: 'graph/Read',
      body: { kind: 'json', schema: Body, maxBytes: 128 * 1024 },
      responses: { 201: { description: 'the saved query', schema: z.object({ data: SavedQuerySchema }) } },
    },
    async (c, { body }) => {
      if (body.name === '' || body.query === '') throw new ApiError(400, EMPTY, 'body')
      const now = rfc3339(c.var.now())
      const row = await insertSavedQuery(c.env.DB, { user_id: c.var.principal.userId, name: body.name, query: body.query, description: body.description, created_at: now, updated_at: now }, auditOf(c).write())
      if (!row) throw new ApiError(400, DUPLICATE, 'body.name')
      return c.json({ data: json(row) }, 201)
    },
  ),
  defineRoute(
    {
      method: 'get',
      path: '/api/v2/saved-queries/:id',
      operationId: 'GetSavedQuery',
      summary: 'A saved query the caller owns, or one shared with them or public',
      tags: ['Cypher'],
      auth: 'graph/Read',
      params: Id,
      responses: { 200: { description: 'the saved query', schema: z.object({ data: SavedQuerySchema }) } },
    },
    async (c, { params }) => {
      const db = c.env.DB
      const q = await getSavedQuery(db, params.id)
      if (!q || (q.user_id !== c.var.principal.userId && !(await isSharedWithOrPublic(db, q.id, c.var.principal.userId))))
        throw new ApiError(404, NOT_FOUND, 'path.id')
      return c.json({ data: json(q) })
    },
  ),
  defineRoute(
    {
      method: 'put',
      path: '/api/v2/saved-queries/:id',
      operationId: 'UpdateSavedQuery',
      audit: { action: 'UpdateSavedQuery', fields: ({ params }) => ({ ...(params as object) }) },
      summary: 'Change a saved query (non-empty fields replace the stored ones)',
      tags: ['Cypher'],
      auth: 'graph/Read',
      params: Id,
      body: { kind: 'json', schema: Body, maxBytes: 128 * 1024 },
      responses: { 200: { description: 'the updated query', schema: z.object({ data: SavedQuerySchema }) } },
    },
    async (c, { params, body }) => {
      const db = c.env.DB
      const q = await getSavedQuery(db, params.id)
      if (!q) throw new ApiError(404, NOT_FOUND, 'path.id')
      if (q.user_id !== c.var.principal.userId && !(isAdmin(c) && (await isPublic(db, q.id)))) throw new ApiError(404, NOT_FOUND, 'path.id')
      const next: SavedQueryRow = {
        ...q,
        name: body.name || q.name,
        query: body.query || q.query,
        description: body.description || q.description,
        updated_at: rfc3339(c.var.now()),
      }
      const row = await updateSavedQuery(db, next, auditOf(c).write())
      if (!row) throw new ApiError(400, DUPLICATE, 'body.name')
      return c.json({ data: json(row) })
    },
  ),
  defineRoute(
    {
      method: 'delete',
      path: '/api/v2/saved-queries/:id',
      operationId: 'DeleteSavedQuery',
      audit: { action: 'DeleteSavedQuery', fields: ({ params }) => ({ ...(params as object) }) },
      summary: 'Delete a saved query',
      tags: ['Cypher'],
      auth: 'graph/Read',
      params: Id,
      responses: { 204: { description: 'deleted' } },
    },
    async (c, { params }) => {
      const db = c.env.DB
      const q = await getSavedQuery(db, params.id)
      if (!q) throw new ApiError(404, NOT_FOUND, 'path.id')
      if (q.user_id !== c.var.principal.userId && !(isAdmin(c) && (await isPublic(db, q.id)))) throw new ApiError(403, NO_DELETE, 'path.id')
      if (!(await deleteSavedQuery(db, q.id, auditOf(c).write()))) throw new ApiError(404, NOT_FOUND, 'path.id')
      return c.body(null, 204)
    },
  ),
  defineRoute(
    {
      method: 'put',
      path: '/api/v2/saved-queries/:id/permissions',
      operationId: 'ShareSavedQuery',
      audit: { action: 'UpdateSavedQueryPermissions', fields: ({ params, body }) => ({ ...(params as object), ...(body as object) }) },
      summary: 'Set who else may read a saved query (users and/or everyone)',
      description: 'Replaces the sharing of the query. Only its owner may share it; making it public needs the Administrator role.',
      tags: ['Cypher'],
      auth: 'graph/Read',
      params: Id,
      body: { kind: 'json', schema: SharingBody, maxBytes: 64 * 1024 },
      responses: {
        200: {
          description: 'the sharing now in force',
          schema: z.object({ data: z.object({ query_id: z.number().int(), user_ids: z.array(z.string()), public: z.boolean() }) }),
        },
      },
    },
    async (c, { params, body }) => {
      const db = c.env.DB
      const q = await getSavedQuery(db, params.id)
      if (!q || q.user_id !== c.var.principal.userId) throw new ApiError(404, NOT_FOUND, 'path.id')
      if (body.public && !isAdmin(c)) throw new ApiError(403, 'only an administrator may make a query public', 'body.public')
      const users = body.user_ids.filter((u) => u !== q.user_id)
      await setSharing(db, q.id, users, body.public, rfc3339(c.var.now()), auditOf(c).write())
      return c.json({ data: { query_id: q.id, user_ids: [...new Set(users)], public: body.public } })
    },
  ),
]
