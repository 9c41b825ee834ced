import { z } from 'zod'
import { defineRoute, type RouteEntry } from '../http/route'
import { NullTime } from '../http/null-types'
import { auditOf } from '../audit/audit'
import { ApiError, rfc3339 } from '../http/errors'
import { overBudget } from '../http/budget'
import { invalidateSubject } from '../ratelimit/limiter.client'
import { forgetTokenKey } from './authenticate'
import { newTokenKey, sealTokenKey } from './token-crypto'
import { deleteToken, getToken, insertToken, listTokens, type TokenRecord } from './tokens.store'
import { findUserById, getUser } from './users.store'
import { requireUserWithin } from './user-scope'


export const TokenSchema = z
  .object({
    id: z.string().uuid(),
    name: z.string(),
    user_id: z.string().uuid(),
    hmac_method: z.literal('hmac-sha2-256'),
    created_at: z.string(),
    updated_at: z.string(),
    last_access: z.string().nullable(),
    deleted_at: NullTime,
  })
  .meta({ id: 'AuthToken' })

function tokenJson(t: TokenRecord) {
  return {
    id: t.id,
    name: t.name,
    user_id: t.user_id,
    hmac_method: 'hmac-sha2-256' as const,
    created_at: t.created_at,
    updated_at: t.updated_at,
    last_access: t.last_access,
    deleted_at: { time: '0001-01-01T00:00:00.000Z', valid: false },
  }
}

const CreateTokenBody = z.object({
  token_name: z.string().trim().min(1, 'token_name must not be blank').max(200),
  user_id: z.string().uuid('user_id is malformed: expected a UUID').optional().or(z.literal('').transform(() => undefined)),
})

/** `user_id=<uuid>` or BloodHound's filter form `user_id=eq:<uuid>` */
const ListQuery = z.object({
  user_id: z
    .string()
    .transform((v) => v.replace(/^eq:/, ''))
    .pipe(z.string().uuid('user_id is malformed: expected a UUID'))
    .optional(),
})

export const tokenRoutes: RouteEntry[] = [
  defineRoute(
    {
      method: 'post',
      path: '/api/v2/tokens',
      operationId: 'CreateToken',
      summary: 'Create an API token; the key appears only in this response',
      tags: ['Auth'],
      auth: 'auth/CreateToken',
      replay: { once: 'answers with a secret: a copy would hand its holder a fresh key' },
      body: { kind: 'json', schema: CreateTokenBody, maxBytes: 16 * 1024 },
      audit: { action: 'CreateAuthToken', fields: ({ body }) => ({ token_name: (body as { token_name?: string }).token_name }) },
      responses: {
        200: { description: 'created', schema: z.object({ data: TokenSchema.extend({ key: z.string().describe('the token key; shown once') }) }) },
      },
    },
    async (c, { body }) => {
      const p = c.var.principal
      const userId = body.user_id ?? p.userId
      if (userId !== p.userId) {
        if (!p.permissions.includes('auth/ManageUsers'))
          throw new ApiError(403, 'missing permission to create tokens for other users', 'user_id')
        const target = await getUser(c.env.DB, userId)
        if (!target) throw new ApiError(404, 'user not found', 'user_id')
        // a token for a user who sees more than the caller would be a key to more (src/auth/user-scope.ts)
        requireUserWithin(p.environmentAccess, target.environment_access)
      }
      const now = rfc3339(c.var.now())
      const id = crypto.randomUUID()
      const key = newTokenKey()
      const record: TokenRecord = { id, user_id: userId, name: body.token_name, hmac_method: 'hmac-sha2-256', created_at: now, updated_at: now, last_access: null }
      const max = c.var.config.MAX_API_TOKENS_PER_USER
      if (!(await insertToken(
          c.env.DB,
          { ...record, key_sealed: await sealTokenKey(c.var.config.TOKEN_ENCRYPTION_KEY, id, key) },
          auditOf(c).write({ id, user_id: userId }),
          max,
        )))
        throw overBudget(400, {
          context: 'user_id',
          what: 'a new API token',
          budget: 'API tokens per user',
          limit: max,
          narrow: 'delete tokens that are no longer used (DELETE /api/v2/tokens/{id})',
        })
      return c.json({ data: { ...tokenJson(record), key } })
    },
  ),
  defineRoute(
    {
      method: 'get',
      path: '/api/v2/tokens',
      operationId: 'ListTokens',
      summary: 'List API tokens (never their keys); administrators see everyone’s',
      tags: ['Auth'],
      auth: 'auth/CreateToken',
      query: ListQuery,
      responses: { 200: { description: 'tokens', schema: z.object({ data: z.object({ tokens: z.array(TokenSchema) }) }) } },
    },
    async (c, { query }) => {
      const p = c.var.principal
      const admin = p.permissions.includes('auth/ManageUsers')
      if (!admin && query.user_id && query.user_id !== p.userId)
        throw new ApiError(403, 'only administrators may list other users’ tokens', 'user_id')
      const rows = await listTokens(c.env.DB, admin ? (query.user_id ?? null) : p.userId)
      return c.json({ data: { tokens: rows.map(tokenJson) } })
    },
  ),
  defineRoute(
    {
      method: 'delete',
      path: '/api/v2/tokens/:token_id',
      operationId: 'DeleteToken',
      summary: 'Revoke an API token; it fails on the very next request',
      tags: ['Auth'],
      auth: 'auth/CreateToken',
      replay: { once: 'identity change: revoking a token is done once' },
      params: z.object({ token_id: z.string().uuid('id is malformed') }),
      audit: { action: 'DeleteAuthToken', fields: ({ params }) => ({ id: (params as { token_id: string }).token_id }) },
      responses: { 200: { description: 'revoked', schema: z.object({ data: z.object({ id: z.string(), revoked: z.literal(true) }) }) } },
    },
    async (c, { params }) => {
      const p = c.var.principal
      const t = await getToken(c.env.DB, params.token_id)
      // Another user's token is answered exactly like a token that does not exist (404, same message), so
      // a caller cannot learn which token ids exist; only administrators may revoke other users' tokens.
      if (!t || (t.user_id !== p.userId && !p.permissions.includes('auth/ManageUsers')))
        throw new ApiError(404, 'resource not found', 'token_id')
      if (t.user_id !== p.userId) {
        // another user's token: only a user within the caller's environments (src/auth/user-scope.ts)
        const owner = await findUserById(c.env.DB, t.user_id)
        if (owner) requireUserWithin(p.environmentAccess, owner.environment_access)
      }
      if (!(await deleteToken(c.env.DB, t.id, auditOf(c).write({ user_id: t.user_id })))) throw new ApiError(404, 'resource not found', 'token_id')
      forgetTokenKey(t.id)
      await invalidateSubject(c.env, 'token', t.id)
      return c.json({ data: { id: t.id, revoked: true as const } })
    },
  ),
]
