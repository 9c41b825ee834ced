import { describe, expect, it } from 'vitest'
import { selfChangeRefusal, SELF_DISABLE, SELF_ENVIRONMENT_CHANGE, SELF_ROLE_CHANGE } from '../../src/auth/self-change'

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
