import { describe, expect, it } from 'vitest'
import { PERMISSIONS, ROLE_PERMISSIONS, ROLES } from '../../src/auth/permissions'
import { allPermissions, allRoles, PERMISSION_IDS, permissionById, resolveRoles, ROLE_IDS, roleById } from '../../src/auth/roles'

describe('role and permission ids (GET /api/v2/roles, /permissions)', () => {
  it('are pinned: a stored id keeps naming the same role or permission', () => {
    expect(ROLE_IDS).toEqual({ Administrator: 1, User: 2, 'Read-Only': 3, 'Upload-Only': 4, Auditor: 5 })
    expect(PERMISSION_IDS['auth/ManageSelf']).toBe(1)
    expect(PERMISSION_IDS['auth/ManageUsers']).toBe(3)
    expect(PERMISSION_IDS['clients/Collect']).toBe(13)
    expect(PERMISSION_IDS['auth/ReadUsers']).toBe(14)
  })

  it('every role and permission has a distinct id', () => {
    expect(new Set(ROLES.map((r) => ROLE_IDS[r])).size).toBe(ROLES.length)
    expect(new Set(PERMISSIONS.map((p) => PERMISSION_IDS[p])).size).toBe(PERMISSIONS.length)
    for (const r of ROLES) expect(roleById(ROLE_IDS[r])).toBe(r)
    for (const p of PERMISSIONS) expect(permissionById(PERMISSION_IDS[p])).toBe(p)
    expect(roleById(0)).toBeUndefined()
    expect(roleById(99)).toBeUndefined()
  })

  it("each role lists exactly ROLE_PERMISSIONS' permissions as {id, authority, name}", () => {
    for (const r of allRoles()) {
      expect(r.permissions.map((p) => `${p.authority}/${p.name}`).sort()).toEqual([...ROLE_PERMISSIONS[r.name]].sort())
      expect(r.description.length).toBeGreaterThan(10)
    }
    expect(allPermissions().map((p) => p.id)).toEqual([...allPermissions().map((p) => p.id)].sort((a, b) => a - b))
    expect(allPermissions().find((p) => p.id === 3)).toEqual({ id: 3, authority: 'auth', name: 'ManageUsers' })
  })

  it('resolveRoles takes names and ids mixed, de-duplicates, and names the first unknown entry', () => {
    expect(resolveRoles([2, 'User', 'Auditor'])).toEqual({ ok: true, roles: ['User', 'Auditor'] })
    expect(resolveRoles([1])).toEqual({ ok: true, roles: ['Administrator'] })
    expect(resolveRoles([3, 42])).toEqual({ ok: false, unknown: 42 })
    expect(resolveRoles(['Superuser'])).toEqual({ ok: false, unknown: 'Superuser' })
  })
})
