import { describe, expect, it } from 'vitest'
import { niceMax, scale, ticks } from '../../ui/src/lib/chart'
import { byImportance, pageLabel, severityOfRisk, trendText } from '../../ui/src/lib/findings'
import { parseSeeds } from '../../ui/src/lib/seeds'
import { can, canEditSelectors } from '../../ui/src/lib/permissions'
import { can as adminCan } from '../../ui/src/pages/admin/model'
import { returnPath, ssoButtons } from '../../ui/src/lib/sso'
import { checkRelayState } from '../../src/saml/authn-request'
import { barWidths, newest, platformOf, qualityLines, shareText } from '../../ui/src/lib/data-quality'

describe('console charts: scaling (ui/src/lib/chart.ts)', () => {
  it('the y axis tops out at the nice value at or above the largest value', () => {
    expect([0, -3, NaN, 0.3, 1, 7, 10, 11, 19, 21, 240, 251, 999].map(niceMax)).toEqual([1, 1, 1, 0.5, 1, 10, 10, 20, 20, 25, 250, 500, 1000])
  })
  it('ticks split 0..max evenly, without float noise', () => {
    expect(ticks(1)).toEqual([0, 0.25, 0.5, 0.75, 1])
    expect(ticks(0.5, 5)).toEqual([0, 0.1, 0.2, 0.3, 0.4, 0.5])
  })
  it('points are placed by time (sorted), values from the bottom; the path joins them', () => {
    const s = scale(
      [
        { date: '2026-11-03T00:00:00Z', value: 20 },
        { date: '2026-11-01T00:00:00Z', value: 0 },
        { date: '2026-11-02T00:00:00Z', value: 10 },
      ],
      100,
      50,
    )
    expect(s.max).toBe(20)
    expect(s.xy.map((p) => [p.x, p.y])).toEqual([[0, 50], [50, 25], [100, 0]])
    expect(s.path).toBe('M0,50 L50,25 L100,0')
  })
  it('one point sits in the middle; no points draw nothing', () => {
    expect(scale([{ date: '2026-11-01T00:00:00Z', value: 4 }], 200, 10).xy.map((p) => [p.x, p.y])).toEqual([[100, 2]]) // axis top 5
    expect(scale([], 200, 10)).toMatchObject({ max: 1, xy: [], path: '' })
  })
})

describe('console attack paths (ui/src/lib/findings.ts)', () => {
  it('severity of a finding type from its composite risk (percent), at the thresholds of a finding', () => {
    expect([100, 95, 94.9, 80, 79.9, 40, 39.9, 0].map(severityOfRisk)).toEqual(['critical', 'critical', 'high', 'high', 'moderate', 'moderate', 'low', 'low'])
  })
  it('finding types: most severe first, then most findings, then by title', () => {
    const t = (display_title: string, composite_risk: number, finding_count_end: number) => ({ display_title, composite_risk, finding_count_end })
    const order = byImportance([t('B', 10, 1), t('A', 10, 1), t('C', 10, 5), t('D', 96, 1), t('E', 50, 9)]).map((r) => r.display_title)
    expect(order).toEqual(['D', 'E', 'C', 'A', 'B'])
  })
  it('trend and page labels', () => {
    expect(trendText(3, 1)).toBe('+2')
    expect(trendText(0, 2)).toBe('−2')
    expect(trendText(0, 0)).toBe('no change')
    expect(trendText(2, 2)).toBe('no change (+2 −2)')
    expect(pageLabel(10, 10, 25)).toBe('11–20 of 25')
    expect(pageLabel(0, 0, 0)).toBe('none')
    expect(pageLabel(30, 0, 25)).toBe('none of 25')
  })
})

describe('console privilege zones: selector seeds (ui/src/lib/seeds.ts)', () => {
  it('object ids one per line, blanks dropped; a Cypher seed is the whole text', () => {
    expect(parseSeeds(1, ' S-1-5-21-1-512 \n\n S-1-5-21-1-519\n')).toEqual([
      { type: 1, value: 'S-1-5-21-1-512' },
      { type: 1, value: 'S-1-5-21-1-519' },
    ])
    expect(parseSeeds(2, 'MATCH (n:Group)\nWHERE n.name = "X"\nRETURN n\n')).toEqual([{ type: 2, value: 'MATCH (n:Group)\nWHERE n.name = "X"\nRETURN n' }])
    expect(parseSeeds(2, '  ')).toEqual([])
  })
})

describe('console permissions (ui/src/lib/permissions.ts, one helper for every page)', () => {
  it('can() reads the server role table and is false before the user is known', () => {
    expect(can({ roles: ['Administrator'] }, 'auth/ManageUsers')).toBe(true)
    expect(can({ roles: ['Read-Only'] }, 'auth/ManageUsers')).toBe(false)
    expect(can({ roles: ['Read-Only'] }, 'graph/Read')).toBe(true)
    expect(can(null, 'graph/Read')).toBe(false)
    // the Administration pages' can() is the same function
    expect(adminCan).toBe(can)
  })
  it('selectors may be edited only with graph/ManageAssetGroups over every environment (the API refuses a restricted caller)', () => {
    expect(canEditSelectors({ roles: ['Administrator'], all_environments: true })).toBe(true)
    expect(canEditSelectors({ roles: ['Administrator'], all_environments: false })).toBe(false)
    expect(canEditSelectors({ roles: ['Administrator'] })).toBe(false)
    expect(canEditSelectors({ roles: ['Read-Only'], all_environments: true })).toBe(false)
    expect(canEditSelectors(null)).toBe(false)
  })
})

describe('console sign-in: one button per SSO provider (ui/src/lib/sso.ts)', () => {
  it('SAML and OIDC alike, in the order listed, each linking to its login_uri', () => {
    const list = [
      { id: 3, name: 'Okta', slug: 'okta', type: 'SAML' as const, login_uri: 'https://eh.example/api/v2/sso/okta/login' },
      { id: 7, name: ' Entra ID ', slug: 'entra-id', type: 'OIDC' as const, login_uri: 'https://eh.example/api/v2/sso/entra-id/login' },
    ]
    expect(ssoButtons(list)).toEqual([
      { key: 3, label: 'Sign in with Okta', href: 'https://eh.example/api/v2/sso/okta/login', type: 'SAML' },
      { key: 7, label: 'Sign in with Entra ID', href: 'https://eh.example/api/v2/sso/entra-id/login', type: 'OIDC' },
    ])
  })
  it('only http(s) URLs become links; entries without a name or URL, and a missing list, give no button', () => {
    expect(
      ssoButtons([
        { id: 1, name: 'Evil', type: 'SAML', login_uri: 'javascript:alert(1)' },
        { id: 2, name: 'Data', type: 'SAML', login_uri: 'data:text/html,x' },
        { id: 3, name: 'Relative', type: 'OIDC', login_uri: '/api/v2/sso/x/login' },
        { id: 4, name: '  ', type: 'OIDC', login_uri: 'https://eh.example/api/v2/sso/y/login' },
        { id: 5, name: 'No URL', type: 'OIDC' },
        { id: 6, name: 'Local', type: 'OIDC', login_uri: 'http://localhost:8787/api/v2/sso/local/login' },
      ]).map((b) => b.key),
    ).toEqual([6])
    expect(ssoButtons(null)).toEqual([])
  })
  it('the page to return to (next) rides on every button as RelayState, when it is a console path the login route accepts', () => {
    const list = [
      { id: 3, name: 'Okta', slug: 'okta', type: 'SAML' as const, login_uri: 'https://eh.example/api/v2/sso/okta/login' },
      { id: 7, name: 'Entra', slug: 'entra', type: 'OIDC' as const, login_uri: 'https://eh.example/api/v2/sso/entra/login' },
    ]
    expect(ssoButtons(list, '/ui/attack-paths?env=S-1-5-21-1').map((b) => b.href)).toEqual([
      'https://eh.example/api/v2/sso/okta/login?RelayState=%2Fui%2Fattack-paths%3Fenv%3DS-1-5-21-1',
      'https://eh.example/api/v2/sso/entra/login?RelayState=%2Fui%2Fattack-paths%3Fenv%3DS-1-5-21-1',
    ])
    // no next, or one that is not a console path: the plain link (the route's default, /ui)
    for (const next of [null, undefined, '', '/api/v2/self', '//evil.example/ui', 'https://evil.example/ui', '/ui/login?next=/ui', '/uix', '/ui/a\\b', '/ui/a b', `/ui/${'x'.repeat(600)}`])
      expect(ssoButtons(list, next).map((b) => b.href), String(next)).toEqual(list.map((p) => p.login_uri))
  })
  it('returnPath: a console path (not the sign-in page) the SSO login route would accept as RelayState, else null', () => {
    for (const ok of ['/ui', '/ui/', '/ui/explore', '/ui/privilege-zones?tag=1', '/ui#x']) expect(returnPath(ok), ok).toBe(ok)
    for (const bad of [null, '/', '/api/v2/self', '//ui', '/ui/login', '/ui/login?next=/ui', '/uiexplore', '/ui/\u00e9', '/ui/a\\b', `/ui/${'x'.repeat(510)}`]) expect(returnPath(bad), String(bad)).toBeNull()
    // the same check as the server's RelayState rule, at its length limit
    expect(returnPath(`/ui/${'x'.repeat(508)}`)).toHaveLength(512)
    expect(checkRelayState(`/ui/${'x'.repeat(508)}`).ok).toBe(true)
  })
})

describe('console posture: data quality (ui/src/lib/data-quality.ts)', () => {
  const row = (id: number, created_at: string, counts: Record<string, number>) => ({ id, run_id: String(id), created_at, ...counts })
  it('environment types map to the platform routes; others have no data quality', () => {
    expect([platformOf('active-directory'), platformOf('azure'), platformOf('CW_Tenant'), platformOf(undefined)]).toEqual(['ad', 'azure', null, null])
  })
  it('the newest row wins whatever the order (ties by id); none is null', () => {
    const rows = [row(1, '2026-11-01T00:00:00Z', {}), row(3, '2026-11-03T00:00:00Z', {}), row(2, '2026-11-03T00:00:00Z', {})]
    expect(newest(rows)?.id).toBe(3)
    expect(newest([])).toBeNull()
    expect(newest(undefined)).toBeNull()
  })
  it("one line per kind in BloodHound's order, the environment beside its platform; missing figures are null", () => {
    const env = row(5, '2026-11-29T00:00:00Z', { users: 3, groups: 2, computers: 1, relationships: 40 })
    const all = row(6, '2026-11-29T00:00:00Z', { users: 10, groups: 4, computers: 2, relationships: 99, sessions: 7 })
    const lines = qualityLines('ad', env, all)
    expect(lines.slice(0, 3)).toEqual([
      { label: 'Users', environment: 3, all: 10 },
      { label: 'Groups', environment: 2, all: 4 },
      { label: 'Computers', environment: 1, all: 2 },
    ])
    expect(lines.at(-1)).toEqual({ label: 'Relationships', environment: 40, all: 99 })
    expect(lines.find((l) => l.label === 'Sessions')).toEqual({ label: 'Sessions', environment: null, all: 7 })
    expect(qualityLines('azure', null, null).map((l) => l.label)).toContain('Service principals')
    expect(qualityLines('azure', null, null).every((l) => l.environment === null && l.all === null)).toBe(true)
  })
  it('bars are relative to the largest count (a non-zero count is at least 1); shares are percentages', () => {
    expect(barWidths([{ label: 'a', environment: 40, all: null }, { label: 'b', environment: 10, all: null }, { label: 'c', environment: 0, all: null }, { label: 'd', environment: null, all: 1 }, { label: 'e', environment: 0.1, all: null }])).toEqual([100, 25, 0, 0, 1])
    expect(barWidths([{ label: 'a', environment: null, all: null }])).toEqual([0])
    expect([shareText(0.4567), shareText(1), shareText(0), shareText(null), shareText(NaN)]).toEqual(['45.7%', '100%', '0%', '—', '—'])
  })
})
