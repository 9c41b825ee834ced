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
import { ErrorEnvelope } from '../http/openapi'
import { Limit, NumericId, Skip } from '../graph/params'
import {
  EXPORT_MAX_BYTES,
  EXPORT_MAX_QUERIES,
  EXPORT_SCOPES,
  IMPORT_MAX_BYTES,
  IMPORT_MAX_FILE_BYTES,
  IMPORT_MAX_FILES,
  TransferableSchema,
  ZIP_TYPES,
  attachment,
  checkExportSize,
  exportZip,
  fileBase,
  importFilesFromZip,
  parseTransferable,
  transferable,
  type ExportScope,
} from './saved-queries.transfer'
import {
  deleteSavedQuery,
  exportableQueries,
  importSavedQueries,
  getPermissions,
  getSavedQuery,
  insertSavedQuery,
  isSharedWith,
  makePublic,
  shareWithUsers,
  unshare,
  type PermissionRow,
  isPublic,
  isSharedWithOrPublic,
  listSavedQueries,
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
const NO_PERMISSIONS = 'no query permissions exist for saved query'


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

/**
 * BloodHound's saved-query filters (model/saved_queries.go ValidFilters): `column=eq:x` (also plain
 * `column=x`), `neq:x`, and for name and description `~eq:x` (contains, case-insensitive). Another
 * predicate: 400 with BloodHound's message naming the column and predicate.
 */
function Filter(column: string, predicates: readonly ('eq' | 'neq' | '~eq')[]) {
  return z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined) return undefined
      const m = /^([a-z~]+):(.*)$/s.exec(v)
      if (!m) return { op: 'eq' as const, value: v }
      const op = m[1] as 'eq' | 'neq' | '~eq'
      if (!predicates.includes(op)) {
        ctx.addIssue({ code: 'custom', message: `the specified filter predicate is not supported for this column: ${column} ${m[1]}` })
        return z.NEVER
      }
      return { op: op === '~eq' ? ('contains' as const) : op, value: m[2] }
    })
}

const ListQuery = z.object({
  skip: Skip,
  limit: Limit(10_000, 10_000),
  sort_by: z.union([z.string(), z.array(z.string())]).optional(),
  name: Filter('name', ['eq', 'neq', '~eq']),
  query: Filter('query', ['eq', 'neq']),
  description: Filter('description', ['eq', 'neq', '~eq']),
  user_id: Filter('user_id', ['eq', 'neq']),
  scope: z.string().optional(),
})

const SharingBody = z.object({
  user_ids: z.array(z.string().uuid('user_ids must be UUIDs')).max(1_000).optional().default([]),
  public: z.boolean().optional().default(false),
})

const UnshareBody = z.object({
  user_ids: z.array(z.string().uuid('user_ids must be UUIDs')).max(1_000).optional().default([]),
})

/** BloodHound's SavedQueriesPermissions. */
const PermissionSchema = z
  .object({
    id: z.number().int(),
    query_id: z.number().int(),
    shared_to_user_id: z.string().nullable().describe('null on the public row'),
    public: z.boolean(),
    created_at: z.string(),
    updated_at: z.string(),
    deleted_at: NullTime,
  })
  .meta({ id: 'SavedQueryPermission' })

function permissionJson(p: PermissionRow) {
  return { ...p, deleted_at: { time: '0001-01-01T00:00:00.000Z', valid: false } }
}

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
        'caller\'s own queries. `sort_by` a column (`-column` descending); filters as BloodHound: `name` and `description` ' +
        'with `eq:`, `neq:` or `~eq:` (contains, case-insensitive), `query` and `user_id` with `eq:` or `neq:`.',
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
      for (const column of ['name', 'query', 'description', 'user_id'] as const) {
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
      replay: { repeatable: 'saved queries are the caller\'s own data: a repeat adds a copy, bounded by the rate limit' },
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
      path: '/api/v2/saved-queries/export',
      operationId: 'ExportSavedQueries',
      summary: 'The saved queries of a scope as a zip of JSON files (BloodHound\'s export format)',
      description:
        '`scope`: `all` (owned, shared with the caller and public), `owned`, `shared` or `public`. One `<name>.json` per query ' +
        `holding \`{query, name, description}\`, in \`exported_queries.zip\`. At most ${EXPORT_MAX_QUERIES} queries and ` +
        `${EXPORT_MAX_BYTES / 1024 / 1024} MiB of query text per export (400 naming the limit beyond).`,
      tags: ['Cypher'],
      auth: 'graph/Read',
      query: z.object({ scope: z.string().max(32, 'scope must be all, owned, shared or public').optional() }),
      responses: { 200: { description: 'the zip', contentType: 'application/zip' } },
    },
    async (c, { query }) => {
      const scope = (query.scope ?? '').toLowerCase()
      if (scope === '') throw new ApiError(400, 'scope query parameter cannot be empty', 'query.scope')
      if (!EXPORT_SCOPES.includes(scope as ExportScope)) throw new ApiError(400, `invalid scope param: ${query.scope}`, 'query.scope')
      const rows = await exportableQueries(c.env.DB, c.var.principal.userId, scope as ExportScope, EXPORT_MAX_QUERIES + 1)
      checkExportSize(rows)
      return new Response(exportZip(rows), { headers: { 'content-type': 'application/zip', 'content-disposition': attachment('exported_queries.zip') } })
    },
  ),
  defineRoute(
    {
      method: 'post',
      path: '/api/v2/saved-queries/import',
      operationId: 'ImportSavedQueries',
      audit: { action: 'ImportSavedQuery' },
      summary: 'Import saved queries: one JSON file, or a zip of JSON files (BloodHound\'s export format)',
      description:
        'Each file holds `{query, name, description}`; the queries become the caller\'s own. All or nothing: a file that is not ' +
        'such JSON, an empty name or query, or a name the caller already uses (or used twice in the archive) refuses the whole ' +
        `import. A zip holds at most ${IMPORT_MAX_FILES} files of at most ${IMPORT_MAX_FILE_BYTES / 1024} KiB each; members under ` +
        '`__MACOSX` or whose name starts with `.` are skipped, as BloodHound does.',
      tags: ['Cypher'],
      auth: 'graph/Read',
      replay: { repeatable: "saved queries are the caller's own data: a repeat is refused as duplicate names, bounded by the rate limit" },
      body: { kind: 'raw', contentTypes: ['application/json', ...ZIP_TYPES], maxBytes: IMPORT_MAX_BYTES, description: 'a JSON file or a zip of JSON files' },
      responses: { 201: { description: 'how many were imported', schema: z.object({ data: z.string() }) } },
    },
    async (c, { body }) => {
      const bytes = new Uint8Array(body)
      const isZip = (c.req.header('content-type') ?? '').split(';')[0].trim().toLowerCase() !== 'application/json'
      const files = isZip ? importFilesFromZip(bytes) : [{ name: 'body', bytes }]
      const queries = files.map((f) => parseTransferable(f.name, f.bytes))
      const names = new Set<string>()
      for (const q of queries) {
        if (names.has(q.name)) throw new ApiError(400, DUPLICATE, 'body')
        names.add(q.name)
      }
      const now = rfc3339(c.var.now())
      const imported = await importSavedQueries(c.env.DB, c.var.principal.userId, queries, now, auditOf(c).write())
      if (imported === null) throw new ApiError(400, DUPLICATE, 'body')
      return c.json({ data: `imported ${imported} queries` }, 201)
    },
  ),
  defineRoute(
    {
      method: 'get',
      path: '/api/v2/saved-queries/:id/export',
      operationId: 'ExportSavedQuery',
      summary: 'One saved query as a JSON file `<name>.json` (BloodHound\'s export format)',
      tags: ['Cypher'],
      auth: 'graph/Read',
      params: Id,
      responses: { 200: { description: '`{query, name, description}` as an attachment', schema: TransferableSchema } },
    },
    async (c, { params }) => {
      const db = c.env.DB
      const q = await getSavedQuery(db, params.id)
      if (!q || (q.user_id !== c.var.principal.userId && !(await isSharedWithOrPublic(db, q.id, c.var.principal.userId))))
        throw new ApiError(404, NOT_FOUND, 'path.id')
      return new Response(JSON.stringify(transferable(q)), {
        headers: { 'content-type': 'application/json', 'content-disposition': attachment(`${fileBase(q.name)}.json`) },
      })
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
      // The intent row names the query and which fields were sent; the success row adds what changed (updateAudit).
      audit: {
        action: 'UpdateSavedQuery',
        fields: ({ params, body }) => ({
          ...(params as object),
          sent: (['name', 'query', 'description'] as const).filter((k) => typeof (body as Record<string, unknown> | undefined)?.[k] === 'string' && (body as Record<string, string>)[k] !== ''),
        }),
      },
      summary: 'Change a saved query (non-empty fields replace the stored ones)',
      tags: ['Cypher'],
      auth: 'graph/Read',
      replay: { repeatable: 'saved queries: the same update applied again is idempotent' },
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
      const row = await updateSavedQuery(db, next, auditOf(c).write(await updateAudit(q, next)))
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
      replay: { repeatable: 'saved queries: deleting again answers 404 and changes nothing' },
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
      method: 'get',
      path: '/api/v2/saved-queries/:id/permissions',
      operationId: 'GetSavedQueryPermissions',
      summary: 'Who a saved query is shared with, or whether it is public',
      description:
        "BloodHound's GetSavedQueryPermissions: for the query's owner, an administrator, or anyone when the query is public " +
        '(then without user ids). A query shared with nobody, or not readable this way: 404 `no query permissions exist for saved query`.',
      tags: ['Cypher'],
      auth: 'graph/Read',
      params: Id,
      responses: {
        200: {
          description: 'the sharing in force',
          schema: z.object({ data: z.object({ query_id: z.number().int(), public: z.boolean(), shared_to_user_ids: z.array(z.string()) }) }),
        },
      },
    },
    async (c, { params }) => {
      const db = c.env.DB
      const rows = await getPermissions(db, params.id)
      const pub = rows.some((r) => r.public)
      const q = rows.length === 0 ? null : await getSavedQuery(db, params.id)
      if (!q || !(pub || isAdmin(c) || q.user_id === c.var.principal.userId)) throw new ApiError(404, NO_PERMISSIONS, 'path.id')
      const users = pub ? [] : rows.flatMap((r) => (r.shared_to_user_id === null ? [] : [r.shared_to_user_id]))
      return c.json({ data: { query_id: params.id, public: pub, shared_to_user_ids: users } })
    },
  ),
  defineRoute(
    {
      method: 'put',
      path: '/api/v2/saved-queries/:id/permissions',
      operationId: 'ShareSavedQuery',
      audit: { action: 'UpdateSavedQueryPermissions', fields: ({ params, body }) => ({ ...(params as object), ...(body as object) }) },
      summary: 'Share a saved query with users, make it public, or make it private again',
      description:
        "BloodHound's ShareSavedQuery. `{user_ids}` replaces the users the query is shared with (201 with the new sharing rows); " +
        '`{public: true}` makes it public, replacing them (201 with the public row; 204 when it already was); neither (`{}` or ' +
        '`{user_ids: []}`) makes it private (204). The owner may do each while the query is not public; an administrator may make ' +
        'their own query public and make any public query private. 400: `public` together with `user_ids`, sharing with oneself, ' +
        'sharing a public query with users; 403 otherwise; 404 `Query does not exist`.',
      tags: ['Cypher'],
      auth: 'graph/Read',
      replay: { once: 'access change: a copy could re-share a query its owner has just withdrawn' },
      params: Id,
      body: { kind: 'json', schema: SharingBody, maxBytes: 64 * 1024 },
      responses: {
        201: { description: 'the sharing rows created', schema: z.object({ data: z.array(PermissionSchema) }) },
        204: { description: 'nothing to create (made private, or already public)' },
      },
    },
    async (c, { params, body }) => {
      const db = c.env.DB
      const me = c.var.principal.userId
      const users = [...new Set(body.user_ids)]
      if (body.public && users.length > 0) throw new ApiError(400, 'Public cannot be true while user_ids is populated', 'body')
      const q = await getSavedQuery(db, params.id)
      if (!q) throw new ApiError(404, 'Query does not exist', 'path.id')
      const owned = q.user_id === me
      const pub = await isPublic(db, q.id)
      const decision = sharingDecision({ admin: isAdmin(c), owned, public: pub, me, users, makePublic: body.public })
      if (decision !== 'ok') throw new ApiError(decision === 'forbidden' ? 403 : 400, decision === 'forbidden' ? 'Forbidden' : decision, 'body')
      const now = rfc3339(c.var.now())
      if (body.public) {
        if (pub) return c.body(null, 204)
        const row = await makePublic(db, q.id, now, auditOf(c).write())
        return row ? c.json({ data: [permissionJson(row)] }, 201) : c.body(null, 204)
      }
      if (users.length === 0) {
        await unshare(db, q.id, [], auditOf(c).write())
        return c.body(null, 204)
      }
      return c.json({ data: (await shareWithUsers(db, q.id, users, now, auditOf(c).write())).map(permissionJson) }, 201)
    },
  ),
  defineRoute(
    {
      method: 'delete',
      path: '/api/v2/saved-queries/:id/permissions',
      operationId: 'DeleteSavedQueryPermissions',
      audit: { action: 'DeleteSavedQueryPermissions', fields: ({ params, body }) => ({ ...(params as object), ...(body as object) }) },
      summary: 'Stop sharing a saved query with some users',
      description:
        "BloodHound's DeleteSavedQueryPermissions: the owner or an administrator removes the listed users (no users: every sharing " +
        'row, public included); a user the query is shared with may remove themselves (400 when it is not shared with them). ' +
        "Removing others from another user's query: 403 `Query does not belong to the user`; removing every row of a public " +
        'query (making it private) follows PUT\u2019s rule: an owner who is not an administrator gets 403 `Forbidden`. 204.',
      tags: ['Cypher'],
      auth: 'graph/Read',
      replay: { once: 'access change: who may read a saved query' },
      params: Id,
      body: { kind: 'json', schema: UnshareBody, maxBytes: 64 * 1024 },
      responses: { 204: { description: 'the listed users no longer have the query shared with them' } },
    },
    async (c, { params, body }) => {
      const db = c.env.DB
      const me = c.var.principal.userId
      const q = await getSavedQuery(db, params.id)
      if (!q) throw new ApiError(404, 'Query does not exist', 'path.id')
      const users = [...new Set(body.user_ids)]
      if (users.includes(me) && q.user_id !== me && !(await isSharedWith(db, q.id, me)))
        throw new ApiError(400, 'User cannot unshare a query from themselves that is not shared to them', 'body.user_ids')
      // Anyone else (or everyone, with no users) only by the owner or an administrator. Stricter than BloodHound,
      // which lets a user who lists themselves also remove the others listed.
      const others = users.length === 0 || users.some((u) => u !== me)
      if (others && q.user_id !== me && !isAdmin(c)) throw new ApiError(403, 'Query does not belong to the user', 'path.id')
      // Removing every row of a public query makes it private: the same change as PUT …/permissions with neither
      // users nor public, so the same rule decides it (BloodHound's CanUpdateSavedQueriesPermission: an owner who
      // is not an administrator may not make a public query private). BloodHound's DELETE does not check this;
      // without it the refusal of PUT is one request away.
      if (users.length === 0 && (await isPublic(db, q.id))) {
        const decision = sharingDecision({ admin: isAdmin(c), owned: q.user_id === me, public: true, me, users: [], makePublic: false })
        if (decision !== 'ok') throw new ApiError(403, 'Forbidden', 'path.id')
      }
      await unshare(db, q.id, users, auditOf(c).write())
      return c.body(null, 204)
    },
  ),
]

/** SHA-256 of a query's text, hex: the audit log says the text changed without holding it. */
async function queryDigest(text: string): Promise<string> {
  const d = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text))
  return [...new Uint8Array(d)].map((b) => b.toString(16).padStart(2, '0')).join('')
}

/**
 * The success row's fields of an update: `changed` (the fields whose value differs), old and new name and
 * description when they changed, and the SHA-256 of the old and new query text when it changed (the text itself
 * can be long and may hold names of the graph; the digest tells which version ran, as a query's own digest).
 */
export async function updateAudit(before: SavedQueryRow, after: SavedQueryRow): Promise<Record<string, unknown>> {
  const changed = (['name', 'description', 'query'] as const).filter((k) => before[k] !== after[k])
  const out: Record<string, unknown> = { changed }
  if (changed.includes('name')) Object.assign(out, { old_name: before.name, new_name: after.name })
  if (changed.includes('description')) Object.assign(out, { old_description: before.description, new_description: after.description })
  if (changed.includes('query'))
    Object.assign(out, { old_query_sha256: await queryDigest(before.query), new_query_sha256: await queryDigest(after.query) })
  return out
}

/**
 * Who may change a query's sharing, as BloodHound decides it (saved_queries_permissions.go
 * CanUpdateSavedQueriesPermission): 'ok', 'forbidden', or a 400 message.
 *  - An administrator may make their own query public; make private (no users, not public) their own or
 *    any public query; share their own non-public query with users.
 *  - Anyone else only their own query, and only while it is not public (an owner may also make it public).
 *  - Never with oneself; never a public query with users (it must be made private first).
 */
export function sharingDecision(s: { admin: boolean; owned: boolean; public: boolean; me: string; users: string[]; makePublic: boolean }): 'ok' | 'forbidden' | string {
  const selfShare = 'Cannot share query to self'
  const publicShare = 'Public query cannot be shared to users. You must set your query to private first'
  const sharing = s.users.length > 0 && !s.makePublic
  if (s.admin) {
    if (s.makePublic && s.owned) return 'ok'
    if (s.users.length === 0 && (s.owned || s.public)) return 'ok'
    if (sharing) {
      if (s.public) return publicShare
      if (s.owned) return s.users.includes(s.me) ? selfShare : 'ok'
    }
    return 'forbidden'
  }
  if (s.owned && !s.public) return sharing && s.users.includes(s.me) ? selfShare : 'ok'
  return 'forbidden'
}
