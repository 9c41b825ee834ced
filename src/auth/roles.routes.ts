/**
 * BloodHound's identity lookups: roles and permissions (read from the role table in code, src/auth/roles.ts)
 * and the minimal user list (names only: whom to share a saved query with).
 */
import { z } from 'zod'
import { defineRoute, type RouteEntry } from '../http/route'
import { ApiError } from '../http/errors'
import { NumericId } from '../graph/params'
import { ROLES } from './permissions'
import { allPermissions, allRoles, permissionById, permissionJson, roleById, roleJson } from './roles'
import { listUsers } from './users.store'

const PermissionSchema = z
  .object({
    id: z.number().int(),
    authority: z.string().describe('the area, e.g. `auth`'),
    name: z.string().describe('the action, e.g. `ManageUsers`; the route declarations name a permission `<authority>/<name>`'),
  })
  .meta({ id: 'Permission' })

const RoleSchema = z
  .object({
    id: z.number().int().describe('stable: the id a user create/update may give in `roles`'),
    name: z.enum(ROLES),
    description: z.string(),
    permissions: z.array(PermissionSchema),
  })
  .meta({ id: 'Role' })

const MinimalUserSchema = z
  .object({
    id: z.string().uuid(),
    first_name: z.string().nullable().describe('always null: EdgeHound keeps no first and last names'),
    last_name: z.string().nullable().describe('always null: EdgeHound keeps no first and last names'),
    principal_name: z.string(),
    email_address: z.string().nullable(),
  })
  .meta({ id: 'MinimalUser' })

export const roleRoutes: RouteEntry[] = [
  defineRoute(
    {
      method: 'get',
      path: '/api/v2/roles',
      operationId: 'ListRoles',
      summary: 'List the roles with their permissions (stable numeric ids)',
      tags: ['Users'],
      auth: 'auth/ManageSelf',
      responses: { 200: { description: 'roles', schema: z.object({ data: z.object({ roles: z.array(RoleSchema) }) }) } },
    },
    (c) => c.json({ data: { roles: allRoles() } }),
  ),
  defineRoute(
    {
      method: 'get',
      path: '/api/v2/roles/:role_id',
      operationId: 'GetRole',
      summary: 'A role with its permissions',
      tags: ['Users'],
      auth: 'auth/ManageSelf',
      params: z.object({ role_id: NumericId }),
      responses: { 200: { description: 'the role', schema: z.object({ data: RoleSchema }) } },
    },
    (c, { params }) => {
      const r = roleById(params.role_id)
      if (!r) throw new ApiError(404, 'resource not found', 'role_id')
      return c.json({ data: roleJson(r) })
    },
  ),
  defineRoute(
    {
      method: 'get',
      path: '/api/v2/permissions',
      operationId: 'ListPermissions',
      summary: 'List the permissions (stable numeric ids)',
      tags: ['Users'],
      auth: 'auth/ManageSelf',
      responses: { 200: { description: 'permissions', schema: z.object({ data: z.object({ permissions: z.array(PermissionSchema) }) }) } },
    },
    (c) => c.json({ data: { permissions: allPermissions() } }),
  ),
  defineRoute(
    {
      method: 'get',
      path: '/api/v2/permissions/:permission_id',
      operationId: 'GetPermission',
      summary: 'A permission',
      tags: ['Users'],
      auth: 'auth/ManageSelf',
      params: z.object({ permission_id: NumericId }),
      responses: { 200: { description: 'the permission', schema: z.object({ data: PermissionSchema }) } },
    },
    (c, { params }) => {
      const p = permissionById(params.permission_id)
      if (!p) throw new ApiError(404, 'resource not found', 'permission_id')
      return c.json({ data: permissionJson(p) })
    },
  ),
  defineRoute(
    {
      method: 'get',
      path: '/api/v2/bloodhound-users-minimal',
      operationId: 'ListUsersMinimal',
      summary: 'List users by id, name and email only (no roles, access or state): whom to share a saved query with',
      tags: ['Users'],
      auth: 'auth/ReadUsers',
      responses: {
        200: { description: 'users', schema: z.object({ data: z.object({ users: z.array(MinimalUserSchema) }) }) },
      },
    },
    async (c) => {
      const users = await listUsers(c.env.DB)
      return c.json({
        data: {
          users: users.map((u) => ({ id: u.id, first_name: null, last_name: null, principal_name: u.principal_name, email_address: u.email })),
        },
      })
    },
  ),
]
