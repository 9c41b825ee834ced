/** The one environment-access rule of both asset-group APIs (src/assetgroups/access.ts). */
import { describe, expect, it } from 'vitest'
import { ALL_ENVIRONMENTS_REQUIRED, canUseSelectors, requireSelectorAccess, selectorsVisibleTo } from '../../src/assetgroups/access'
import { ApiError } from '../../src/http/errors'
import type { EnvironmentAccess } from '../../src/auth/permissions'

const all: EnvironmentAccess = { all: true }
const one: EnvironmentAccess = { all: false, ids: ['S-1-5-21-1'] }
const none: EnvironmentAccess = { all: false, ids: [] }

describe('asset-group selector access', () => {
  it('only access to every environment reads and writes selectors', () => {
    expect(canUseSelectors(all)).toBe(true)
    expect(canUseSelectors(one)).toBe(false)
    expect(canUseSelectors(none)).toBe(false)
  })

  it('a restricted caller is refused with a 403 ApiError carrying BloodHound\u2019s message', () => {
    expect(() => requireSelectorAccess(all)).not.toThrow()
    for (const a of [one, none]) {
      let err: unknown
      try {
        requireSelectorAccess(a)
      } catch (e) {
        err = e
      }
      expect(err).toBeInstanceOf(ApiError)
      expect((err as ApiError).status).toBe(403)
      expect((err as Error).message).toBe(ALL_ENVIRONMENTS_REQUIRED)
    }
  })

  it('selectors are all or nothing: a restricted caller sees none, even of its own environment', () => {
    const sel = [{ selector: 'S-1-5-21-1-500' }, { selector: 'S-1-5-21-2-500' }]
    expect(selectorsVisibleTo(all, sel)).toEqual(sel)
    expect(selectorsVisibleTo(one, sel)).toEqual([])
  })
})
