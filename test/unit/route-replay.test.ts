import { describe, expect, it } from 'vitest'
import { ROUTES } from '../../src/app'
import { defineRoute } from '../../src/http/route'
import { isOneUse, replayClassError } from '../../src/auth/replay'

/**
 * Every mutating route declares what a signed copy may gain (src/auth/replay.ts, SECURITY.md rule 3), and
 * identity, access and secret-bearing routes are one-use. A new route cannot omit it: defineRoute refuses the
 * declaration (checked below) and this walk fails on a route whose class is wrong for its kind.
 */
const mutating = ROUTES.map((r) => r.def).filter((d) => d.method !== 'get' && d.auth !== 'public')

/** Identity and access: users, roles, passwords, environment access, tokens, SSO providers, sharing, risk acceptance. */
const MUST_BE_ONCE = [
  /^\/api\/v2\/bloodhound-users/,
  /^\/api\/v2\/tokens/,
  /^\/api\/v2\/saml/,
  /^\/api\/v2\/sso-providers/,
  /^\/api\/v2\/roles/,
  /^\/api\/v2\/logout/,
  /\/secret$/,
  /\/permissions$/,
  /\/acceptance$/,
  /\/mfa/,
  /^\/api\/v2\/clients\/[^/]+\/token$/,
]

describe('signed-request replay classes on the route table', () => {
  it('every mutating route declares once or repeatable with a one-line reason', () => {
    expect(mutating.length).toBeGreaterThan(30)
    for (const d of mutating) {
      expect(d.replay, `${d.method.toUpperCase()} ${d.path}`).toBeDefined()
      expect(replayClassError(d), `${d.method.toUpperCase()} ${d.path}`).toBeNull()
    }
  })

  it('identity, access and secret-bearing routes are one-use', () => {
    const identity = mutating.filter((d) => MUST_BE_ONCE.some((re) => re.test(d.path)))
    expect(identity.length).toBeGreaterThan(10)
    for (const d of identity) expect('once' in d.replay!, `${d.method.toUpperCase()} ${d.path} must be once`).toBe(true)
  })

  it('the data-plane routes BloodHound clients repeat verbatim are repeatable', () => {
    const repeatable = (method: string, path: string) => {
      const d = mutating.find((r) => r.method === method && r.path === path)
      expect(d, `${method} ${path}`).toBeDefined()
      return 'repeatable' in d!.replay!
    }
    expect(repeatable('put', '/api/v2/extensions')).toBe(true)
    expect(repeatable('post', '/api/v2/file-upload/start')).toBe(true)
    expect(repeatable('post', '/api/v2/file-upload/:id')).toBe(true)
    expect(repeatable('post', '/api/v2/file-upload/:id/end')).toBe(true)
    expect(repeatable('post', '/api/v2/analysis')).toBe(true)
    expect(repeatable('patch', '/api/v2/asset-group-tags/:asset_group_tag_id/selectors/:asset_group_tag_selector_id')).toBe(true)
    expect(repeatable('post', '/api/v2/graphs/cypher')).toBe(true)
  })

  it('defineRoute refuses a mutating route without a class, a bare reason, or a read-only route declared once', () => {
    const base = { path: '/x', operationId: 'X', summary: 'x', tags: [] as string[], auth: 'graph/Read' as const, responses: {}, audit: { exempt: 'test' } }
    const ok = (c: { body: (b: null) => Response }) => c.body(null)
    // @ts-expect-error the type refuses a mutating route without a class (ReplayRequirement); the run-time check too
    expect(() => defineRoute({ ...base, method: 'post' }, ok)).toThrow(/must declare replay/)
    expect(() => defineRoute({ ...base, method: 'post', replay: { once: '' } }, ok)).toThrow(/one-line reason/)
    expect(() => defineRoute({ ...base, method: 'post', readOnly: true, replay: { once: 'it changes nothing at all' } }, ok)).toThrow(/declare it repeatable/)
    expect(() => defineRoute({ ...base, method: 'get', replay: { once: 'a GET is never one-use' } }, ok)).toThrow(/only on non-GET/)
    expect(() => defineRoute({ ...base, method: 'post', replay: { repeatable: 'an idempotent upsert of test data' } }, ok)).not.toThrow()
  })

  it('isOneUse: GETs and read-only routes never; once always; repeatable only with SIGNED_MUTATIONS_ONCE=on', () => {
    expect(isOneUse('GET', 'once', false, true)).toBe(false)
    expect(isOneUse('POST', 'repeatable', true, true)).toBe(false)
    expect(isOneUse('DELETE', 'once', false, false)).toBe(true)
    expect(isOneUse('PUT', 'repeatable', false, false)).toBe(false)
    expect(isOneUse('PATCH', 'repeatable', false, true)).toBe(true)
  })
})
