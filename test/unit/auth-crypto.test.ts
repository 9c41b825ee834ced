import { describe, expect, it } from 'vitest'
import { hashPassword, verifyPassword, PBKDF2_ITERATIONS } from '../../src/auth/password'
import { newTokenKey, openTokenKey, sealTokenKey } from '../../src/auth/token-crypto'
import { permissionsOf, canSeeEnvironment, ROLE_PERMISSIONS, ROLES, PERMISSIONS, type Role } from '../../src/auth/permissions'

const SECRET = 'dGVzdC10b2tlbi1lbmNyeXB0aW9uLWtleS0zMmJ5dGU='

describe('passwords', () => {
  it('hash with PBKDF2-SHA-256 at 100,000 iterations and a random salt; verify', async () => {
    const a = await hashPassword('correct horse battery staple')
    const b = await hashPassword('correct horse battery staple')
    expect(a).toMatch(new RegExp(`^pbkdf2-sha256\\$${PBKDF2_ITERATIONS}\\$[A-Za-z0-9+/]{22}==\\$[A-Za-z0-9+/]{43}=$`))
    expect(a).not.toBe(b)
    expect(await verifyPassword('correct horse battery staple', a)).toBe(true)
    expect(await verifyPassword('correct horse battery stapl', a)).toBe(false)
  })
  it('a missing or malformed hash never verifies (and still costs a derivation)', async () => {
    expect(await verifyPassword('x', null)).toBe(false)
    expect(await verifyPassword('x', 'md5$abc')).toBe(false)
    expect(await verifyPassword('', `pbkdf2-sha256$100000$AAAAAAAAAAAAAAAAAAAAAA==$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=`)).toBe(false)
  })
})

describe('token key sealing', () => {
  it('round-trips, uses a fresh IV, and is bound to the token id', async () => {
    const key = newTokenKey()
    expect(atob(key).length).toBe(40)
    const s1 = await sealTokenKey(SECRET, 'id-1', key)
    const s2 = await sealTokenKey(SECRET, 'id-1', key)
    expect(s1).not.toBe(s2)
    expect(s1).not.toContain(key)
    expect(await openTokenKey(SECRET, 'id-1', s1)).toBe(key)
    await expect(openTokenKey(SECRET, 'id-2', s1)).rejects.toThrow()
    await expect(openTokenKey('b3RoZXItb3RoZXItb3RoZXItb3RoZXItb3RoZXItMzI=', 'id-1', s1)).rejects.toThrow()
  })
})

describe('permission table', () => {
  it('administrators have every permission but the collector\'s; each role has ManageSelf; Upload-Only cannot read the graph', () => {
    expect([...permissionsOf(['Administrator'])].sort()).toEqual(PERMISSIONS.filter((p) => p !== 'clients/Collect').sort())
    // a collector client's service user holds the collector's permission and nothing else
    expect([...permissionsOf(['Collector' as Role])]).toEqual(['clients/Collect'])
    for (const r of ROLES) expect(ROLE_PERMISSIONS[r]).not.toContain('clients/Collect')
    for (const r of ROLES) expect(ROLE_PERMISSIONS[r]).toContain('auth/ManageSelf')
    expect(permissionsOf(['Upload-Only']).has('graph/Read')).toBe(false)
    expect(permissionsOf(['Read-Only']).has('graph/Ingest')).toBe(false)
    expect(permissionsOf(['Read-Only', 'Upload-Only']).has('graph/Ingest')).toBe(true)
  })
  it('environment access', () => {
    expect(canSeeEnvironment({ all: true }, 'x')).toBe(true)
    expect(canSeeEnvironment({ all: false, ids: ['a'] }, 'a')).toBe(true)
    expect(canSeeEnvironment({ all: false, ids: ['a'] }, 'b')).toBe(false)
    expect(canSeeEnvironment({ all: false, ids: ['a'] }, null)).toBe(false)
  })
})
