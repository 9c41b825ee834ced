import { describe, expect, it } from 'vitest'
import { selfChangeRefusal, SELF_DISABLE, SELF_ENVIRONMENT_CHANGE, SELF_ROLE_CHANGE } from '../../src/auth/self-change'
import { accessWithin, GRANT_ALL_ENVIRONMENTS, requireGrantWithin, requireUserWithin, USER_BEYOND_CALLER } from '../../src/auth/user-scope'
import { ApiError } from '../../src/http/errors'

const current = { roles: ['Administrator'] as const, environment_access: { all: false as const, ids: ['A', 'B'] } }

describe('selfChangeRefusal', () => {
  it('refuses a change of your own roles, in any direction; the same set in any order is no change', () => {
    expect(selfChangeRefusal({ current, roles: ['Administrator', 'Auditor'] })).toEqual({ context: 'roles', message: SELF_ROLE_CHANGE })
    expect(selfChangeRefusal({ current, roles: ['Read-Only'] })).toMatchObject({ message: SELF_ROLE_CHANGE })
    expect(selfChangeRefusal({ current, roles: [] })).toMatchObject({ message: SELF_ROLE_CHANGE })
    expect(selfChangeRefusal({ current, roles: ['Administrator', 'Administrator'] })).toBeNull()
    expect(selfChangeRefusal({ current: { ...current, roles: ['Auditor', 'User'] }, roles: ['User', 'Auditor'] })).toBeNull()
  })
  it('refuses a change of your own environment access (lifting the restriction included); the same access is no change', () => {
    expect(selfChangeRefusal({ current, environment_access: { all: true } })).toEqual({ context: 'environment_access', message: SELF_ENVIRONMENT_CHANGE })
    expect(selfChangeRefusal({ current, environment_access: { all: false, ids: ['A', 'B', 'C'] } })).toMatchObject({ message: SELF_ENVIRONMENT_CHANGE })
    expect(selfChangeRefusal({ current, environment_access: { all: false, ids: ['A'] } })).toMatchObject({ message: SELF_ENVIRONMENT_CHANGE })
    expect(selfChangeRefusal({ current, environment_access: { all: false, ids: ['B', 'A'] } })).toBeNull()
    const all = { ...current, environment_access: { all: true as const } }
    expect(selfChangeRefusal({ current: all, environment_access: { all: true } })).toBeNull()
    expect(selfChangeRefusal({ current: all, environment_access: { all: false, ids: [] } })).toMatchObject({ message: SELF_ENVIRONMENT_CHANGE })
  })
  it('refuses disabling yourself; allows everything else (nothing sent, enabling)', () => {
    expect(selfChangeRefusal({ current, is_disabled: true })).toEqual({ context: 'is_disabled', message: SELF_DISABLE })
    expect(selfChangeRefusal({ current, is_disabled: false })).toBeNull()
    expect(selfChangeRefusal({ current })).toBeNull()
  })
})

describe('user-scope: a restricted caller acts only on users within its environments, grants only those', () => {
  const caller = { all: false as const, ids: ['A', 'B'] }
  const refusal = (f: () => void) => {
    try {
      f()
    } catch (e) {
      expect(e).toBeInstanceOf(ApiError)
      return { status: (e as ApiError).status, ...(e as ApiError).details[0] }
    }
    return null
  }
  it('a subset (the empty list included) is within; every environment or one outside is beyond', () => {
    expect(accessWithin({ all: false, ids: ['B'] }, caller)).toBe(true)
    expect(accessWithin({ all: false, ids: [] }, caller)).toBe(true)
    expect(accessWithin({ all: false, ids: ['A', 'B'] }, caller)).toBe(true)
    expect(accessWithin({ all: true }, caller)).toBe(false)
    expect(accessWithin({ all: false, ids: ['A', 'C'] }, caller)).toBe(false)
    expect(accessWithin({ all: false, ids: ['A'] }, { all: false, ids: [] })).toBe(false)
    // an unrestricted caller: everything is within
    expect(accessWithin({ all: true }, { all: true })).toBe(true)
    expect(refusal(() => requireUserWithin(caller, { all: true }))).toEqual({ status: 403, context: 'user_id', message: USER_BEYOND_CALLER })
    expect(refusal(() => requireUserWithin({ all: true }, { all: true }))).toBeNull()
  })
  it('grants: all_environments and outside environments refused with their field; unrestricted callers grant anything', () => {
    expect(refusal(() => requireGrantWithin(caller, { all: true }))).toEqual({ status: 403, context: 'all_environments', message: GRANT_ALL_ENVIRONMENTS })
    expect(refusal(() => requireGrantWithin(caller, { all: false, ids: ['A', 'C'] }))).toEqual({
      status: 403,
      context: 'environment_access',
      message: 'environment_access "C" is outside the environments you may access',
    })
    expect(refusal(() => requireGrantWithin(caller, { all: false, ids: ['B'] }))).toBeNull()
    expect(refusal(() => requireGrantWithin({ all: true }, { all: true }))).toBeNull()
  })
})
