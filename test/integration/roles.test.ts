/**
 * BloodHound's identity lookups: GET /api/v2/roles, /roles/{id}, /permissions, /permissions/{id},
 * /bloodhound-users-minimal, and user create/update with numeric role ids.
 */
import { describe, expect, it } from 'vitest'
import { adminSession, expectEnvelope, userWithRole } from '../helpers'

describe('roles and permissions', () => {
  it('lists the roles with their permissions, reads one by id; any signed-in user may', async () => {
    const { client: ro } = await userWithRole('Read-Only')
    const all = (await ro.listRoles()).data.roles
    expect(all.map((r) => [r.id, r.name])).toEqual([
      [1, 'Administrator'],
      [2, 'User'],
      [3, 'Read-Only'],
      [4, 'Upload-Only'],
      [5, 'Auditor'],
    ])
    const user = (await ro.getRole(2)).data
    expect(user).toEqual(all[1])
    expect(user.permissions.map((p) => `${p.authority}/${p.name}`)).toContain('graph/Ingest')
    expect(user.permissions.map((p) => `${p.authority}/${p.name}`)).not.toContain('auth/ManageUsers')
    for (const p of user.permissions) expect(Object.keys(p).sort()).toEqual(['authority', 'id', 'name'])
    await expectEnvelope(await ro.raw('GET', '/api/v2/roles/99'), 404, 'resource not found')
    await expectEnvelope(await ro.raw('GET', '/api/v2/roles/admin'), 400, 'id is malformed')
  })

  it('lists the permissions and reads one by id', async () => {
    const { client: up } = await userWithRole('Upload-Only')
    const perms = (await up.listPermissions()).data.permissions
    const manageUsers = perms.find((p) => p.authority === 'auth' && p.name === 'ManageUsers')!
    expect((await up.getPermission(manageUsers.id)).data).toEqual(manageUsers)
    await expectEnvelope(await up.raw('GET', '/api/v2/permissions/0'), 404)
    await expectEnvelope(await up.raw('GET', '/api/v2/permissions/-1'), 400, 'id is malformed')
  })
})

describe('user create and update with role ids', () => {
  it("accepts BloodHound's numeric role ids as well as names; an unknown id is a 400 and nothing is created", async () => {
    const admin = await adminSession()
    const name = `roleid-${Date.now()}`
    const u = await admin.createUser({ principal_name: name, roles: [3], secret: 'role-id-password-1' })
    expect(u.data.roles).toEqual(['Read-Only'])
    const p = await admin.updateUser(u.data.id, { roles: [2, 'Auditor'] })
    expect(p.data.roles).toEqual(['User', 'Auditor'])
    await expectEnvelope(await admin.raw('PATCH', `/api/v2/bloodhound-users/${u.data.id}`, { roles: [77] }), 400, 'no role has id 77')
    expect((await admin.raw('GET', `/api/v2/bloodhound-users/${u.data.id}`)).status).toBe(200)
    const bad = `roleid-bad-${Date.now()}`
    await expectEnvelope(await admin.raw('POST', '/api/v2/bloodhound-users', { principal_name: bad, roles: [0], secret: 'role-id-password-1' }), 400)
    await expectEnvelope(await admin.raw('POST', '/api/v2/bloodhound-users', { principal_name: bad, roles: [9], secret: 'role-id-password-1' }), 400, 'no role has id 9')
    expect((await admin.listUsers()).data.users.some((x) => x.principal_name === bad)).toBe(false)
  })
})

describe('GET /api/v2/bloodhound-users-minimal', () => {
  it('answers id, names, principal name and email only; auth/ReadUsers (not Upload-Only)', async () => {
    const { client: ro, userId } = await userWithRole('Read-Only')
    const users = (await ro.listUsersMinimal()).data.users
    const me = users.find((u) => u.id === userId)!
    expect(Object.keys(me).sort()).toEqual(['email_address', 'first_name', 'id', 'last_name', 'principal_name'])
    expect(users.some((u) => u.principal_name === 'admin')).toBe(true)
    const { client: up } = await userWithRole('Upload-Only')
    await expectEnvelope(await up.raw('GET', '/api/v2/bloodhound-users-minimal'), 403)
  })
})
