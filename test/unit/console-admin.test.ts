// The Administration and Profile pages' pure logic (ui/src/pages/admin/model.ts).
import { describe, expect, it } from 'vitest'
import { durationText, flagViews, parameterValue, parameterViews } from '../../ui/src/pages/admin/config-model'
import { oidcCreateBody, oidcUpdateBody, providerSummary, samlCreateProvision, samlUpdateInput } from '../../ui/src/pages/admin/sso-model'
import type { OidcSsoProviderJson, SamlSsoProviderJson } from '../../src/client/saml'
import { adminSections, auditQuery, homePath, jobActive, jobDuration, jobStatusName, mainPages, NO_WIPE, percent, sourceKindLabel, uploadContentType, WIPE_PHRASE, wipeConfirmed, wipeOptions } from '../../ui/src/pages/admin/model'

const PAGES = [
  { label: 'Explore', href: '/ui/explore' },
  { label: 'Attack paths', href: '/ui/attack-paths' },
  { label: 'Administration', href: '/ui/administration' },
]

describe('what a role sees', () => {
  it('Administrator: every section; Explore is home', () => {
    const me = { roles: ['Administrator'] }
    expect(adminSections(me).map((s) => s.id)).toEqual(['file-ingest', 'data-pipeline', 'clients', 'users', 'sso', 'extensions', 'configuration', 'audit'])
    expect(mainPages(me, PAGES).map((p) => p.label)).toEqual(['Explore', 'Attack paths', 'Administration'])
    expect(homePath(me)).toBe('/ui/explore')
  })
  it('Upload-Only: the ingest page only, and it is home', () => {
    const me = { roles: ['Upload-Only'] }
    expect(adminSections(me).map((s) => s.id)).toEqual(['file-ingest'])
    expect(mainPages(me, PAGES).map((p) => p.label)).toEqual(['Administration'])
    expect(homePath(me)).toBe('/ui/administration/file-ingest')
  })
  it('Read-Only: graph pages and the pipeline status, no user, SSO, extension or audit section', () => {
    const me = { roles: ['Read-Only'] }
    expect(adminSections(me).map((s) => s.id)).toEqual(['data-pipeline', 'configuration'])
    expect(mainPages(me, PAGES).map((p) => p.label)).toEqual(['Explore', 'Attack paths', 'Administration'])
  })
  it('Auditor: the audit log; roles add up', () => {
    expect(adminSections({ roles: ['Auditor'] }).map((s) => s.id)).toEqual(['data-pipeline', 'configuration', 'audit'])
    expect(adminSections({ roles: ['Upload-Only', 'Auditor'] }).map((s) => s.id)).toEqual(['file-ingest', 'data-pipeline', 'configuration', 'audit'])
  })
  it('Database management: db/Wipe with access to every environment (the API refuses a restricted administrator too)', () => {
    expect(adminSections({ roles: ['Administrator'], all_environments: true }).map((s) => s.id)).toEqual([
      'file-ingest', 'data-pipeline', 'database-management', 'clients', 'users', 'sso', 'extensions', 'configuration', 'audit',
    ])
    expect(adminSections({ roles: ['Administrator'], all_environments: false }).map((s) => s.id)).not.toContain('database-management')
    for (const role of ['User', 'Read-Only', 'Upload-Only', 'Auditor'])
      expect(adminSections({ roles: [role], all_environments: true }).map((s) => s.id), role).not.toContain('database-management')
  })
  it('an unknown role shows nothing', () => {
    expect(adminSections({ roles: ['Nobody'] })).toEqual([])
    expect(mainPages({ roles: ['Nobody'] }, PAGES)).toEqual([])
    expect(homePath({ roles: ['Nobody'] })).toBe('/ui/profile')
  })
})

describe('file ingest', () => {
  it('names job statuses and knows the active ones', () => {
    expect(jobStatusName(2)).toBe('Complete')
    expect(jobStatusName(8)).toBe('Partially complete')
    expect(jobStatusName(42)).toBe('Status 42')
    expect([0, 1, 2, 4, 5, 6, 7, 8].filter(jobActive)).toEqual([0, 1, 6, 7])
  })
  it('accepts zips and JSON by type or name, nothing else', () => {
    expect(uploadContentType('a.zip', '')).toBe('application/zip')
    expect(uploadContentType('a.bin', 'application/x-zip-compressed')).toBe('application/zip')
    expect(uploadContentType('20260101_users.JSON', '')).toBe('application/json')
    expect(uploadContentType('notes.txt', 'text/plain')).toBeNull()
    expect(uploadContentType('zip', 'application/octet-stream')).toBeNull()
  })
  it('durations and percentages', () => {
    expect(jobDuration('2026-01-01T00:00:00Z', '2026-01-01T00:00:42Z')).toBe('42 s')
    expect(jobDuration('2026-01-01T00:00:00Z', '2026-01-01T00:02:05Z')).toBe('2 min 5 s')
    expect(jobDuration('2026-01-01T00:00:00Z', '2026-01-01T03:04:00Z')).toBe('3 h 4 min')
    expect(jobDuration('2026-01-01T00:00:00Z', null, new Date('2026-01-01T00:00:07Z'))).toBe('7 s')
    expect(jobDuration(null, null)).toBe('')
    expect([percent(0, 0), percent(5, 10), percent(11, 10), percent(1, 3)]).toEqual([0, 50, 100, 33])
  })
})

describe('audit filter', () => {
  it('pages newest first; action and actor as eq filters; whole UTC days, the end day included', () => {
    expect(auditQuery({ action: '', actor: ' ', from: '', to: '', page: 2, pageSize: 25 })).toEqual({ skip: 50, limit: 25, sort_by: '-created_at', filters: {} })
    const q = auditQuery({ action: 'CreateUser', actor: 'admin', from: '2026-11-01', to: '2026-11-30', page: 0, pageSize: 10 })
    expect(q.filters).toEqual({ action: 'eq:CreateUser', actor_name: 'eq:admin' })
    expect(q.after).toBe('2026-11-01T00:00:00.000Z')
    expect(q.before).toBe('2026-12-01T00:00:00.000Z')
    expect(auditQuery({ action: '', actor: '', from: 'junk', to: '', page: 0, pageSize: 10 }).after).toBeUndefined()
  })
})

describe('database management (POST /api/v2/clear-database body)', () => {
  it('nothing chosen: no request (the API would answer 400 please select something to delete)', () => {
    expect(wipeOptions(NO_WIPE)).toBeNull()
  })
  it('each box maps to its BloodHound option', () => {
    expect(wipeOptions({ ...NO_WIPE, allGraphData: true })).toEqual({ deleteCollectedGraphData: true })
    expect(wipeOptions({ ...NO_WIPE, sourceKinds: [2, 0, 2] })).toEqual({ deleteSourceKinds: [2, 0] })
    expect(wipeOptions({ ...NO_WIPE, sessions: true })).toEqual({ deleteRelationships: ['HasSession'] })
    expect(wipeOptions({ ...NO_WIPE, fileIngestHistory: true, dataQualityHistory: true, assetGroupSelectors: [1, 2] })).toEqual({
      deleteFileIngestHistory: true,
      deleteDataQualityHistory: true,
      deleteAssetGroupSelectors: [1, 2],
    })
  })
  it('all graph data covers the source kinds: they are not sent with it (the API refuses both together)', () => {
    expect(wipeOptions({ ...NO_WIPE, allGraphData: true, sourceKinds: [1, 2], sessions: true })).toEqual({ deleteCollectedGraphData: true, deleteRelationships: ['HasSession'] })
  })
  it('the confirmation phrase must be typed (case and surrounding spaces aside)', () => {
    expect(wipeConfirmed('')).toBe(false)
    expect(wipeConfirmed('delete')).toBe(false)
    expect(wipeConfirmed(`  ${WIPE_PHRASE.toUpperCase()} `)).toBe(true)
  })
  it('source kinds are named for people', () => {
    expect(sourceKindLabel('Base')).toBe('Active Directory data (Base)')
    expect(sourceKindLabel('AZBase')).toBe('Azure data (AZBase)')
    expect(sourceKindLabel('Sourceless')).toBe('Data of no source kind (Sourceless)')
    expect(sourceKindLabel('GitHub')).toBe('GitHub data')
  })
})

describe('SSO providers section (ui/src/pages/admin/sso-model.ts)', () => {
  const OFF = { enabled: false, defaultRoleId: 0, roleProvision: false }
  const oidc: OidcSsoProviderJson = {
    id: 9,
    name: 'Entra',
    slug: 'entra',
    type: 'OIDC',
    details: { id: 1, sso_provider_id: 9, client_id: 'app-1', issuer: 'https://login.example/tenant/v2.0', has_client_secret: true, created_at: '', updated_at: '' },
    config: { auto_provision: { enabled: true, default_role_id: 3, role_provision: false } },
    login_uri: 'https://eh.example/api/v2/sso/entra/login',
    callback_uri: 'https://eh.example/api/v2/sso/entra/callback',
  }
  const fields = { name: 'Entra', issuer: 'https://login.example/tenant/v2.0', clientId: 'app-1', clientSecret: '', provision: { enabled: true, defaultRoleId: 3, roleProvision: false } }

  it('create OIDC: trimmed fields, the secret only when given, provisioning off stored as BloodHound stores it', () => {
    expect(oidcCreateBody({ name: ' Okta ', issuer: ' https://okta.example ', clientId: ' c1 ', clientSecret: '', provision: { enabled: false, defaultRoleId: 2, roleProvision: true } })).toEqual({
      ok: true,
      value: { name: 'Okta', issuer: 'https://okta.example', client_id: 'c1', config: { auto_provision: { enabled: false, default_role_id: 0, role_provision: false } } },
    })
    const withSecret = oidcCreateBody({ ...fields, clientSecret: ' s ' })
    expect(withSecret.ok && withSecret.value.client_secret).toBe(' s ')
  })
  it('create OIDC: what the API would refuse is said first, in its words', () => {
    const err = (f: Partial<typeof fields>) => {
      const r = oidcCreateBody({ ...fields, ...f })
      return r.ok ? 'accepted' : r.error
    }
    expect(err({ name: '  ' })).toBe('enter a name')
    for (const issuer of ['http://plain.example', 'https://op.example/?a=1', 'https://op.example/#x', 'https://u:p@op.example', 'op.example'])
      expect(err({ issuer }), issuer).toMatch(/^issuer url is invalid/)
    expect(err({ clientId: ' ' })).toMatch(/client id/)
    expect(err({ provision: { enabled: true, defaultRoleId: 0, roleProvision: false } })).toMatch(/choose the role/)
    expect(err({})).toBe('accepted')
  })
  it('edit OIDC: only what changed; a blank secret keeps it, "remove" sends null; nothing changed is null', () => {
    expect(oidcUpdateBody(oidc, fields)).toEqual({ ok: true, value: null })
    expect(oidcUpdateBody(oidc, { ...fields, name: 'Entra ID', clientSecret: 'new' })).toEqual({ ok: true, value: { name: 'Entra ID', client_secret: 'new' } })
    expect(oidcUpdateBody(oidc, { ...fields, removeSecret: true })).toEqual({ ok: true, value: { client_secret: null } })
    expect(oidcUpdateBody({ ...oidc, details: { ...oidc.details, has_client_secret: false } }, { ...fields, removeSecret: true })).toEqual({ ok: true, value: null })
    expect(oidcUpdateBody(oidc, { ...fields, removeSecret: true, clientSecret: 'x' })).toEqual({ ok: false, error: 'either enter a new client secret or remove it, not both' })
    expect(oidcUpdateBody(oidc, { ...fields, issuer: 'https://other.example', clientId: 'app-2', provision: OFF })).toEqual({
      ok: true,
      value: { issuer: 'https://other.example', client_id: 'app-2', config: { auto_provision: { enabled: false, default_role_id: 0, role_provision: false } } },
    })
  })
  it('edit SAML: rename, a replacement metadata file, provisioning; an empty file keeps the metadata', () => {
    const saml = { id: 4, name: 'Okta', slug: 'okta', type: 'SAML', config: { auto_provision: { enabled: false, default_role_id: 0, role_provision: false } } } as unknown as SamlSsoProviderJson
    expect(samlUpdateInput(saml, { name: 'Okta', metadata: new Blob([]), provision: OFF })).toEqual({ ok: true, value: null })
    const xml = new Blob(['<x/>'])
    expect(samlUpdateInput(saml, { name: 'Okta EU', metadata: xml, fileName: 'm.xml', provision: { enabled: true, defaultRoleId: 2, roleProvision: true } })).toEqual({
      ok: true,
      value: { name: 'Okta EU', metadata: xml, fileName: 'm.xml', autoProvision: { enabled: true, default_role_id: 2, role_provision: true } },
    })
    expect(samlCreateProvision({ enabled: true, defaultRoleId: 0, roleProvision: false }).ok).toBe(false)
  })
  it('the list says, per type, whom the provider trusts, what to register and the provisioning', () => {
    const role = (id: number) => ({ 3: 'Read-Only' })[id]
    expect(providerSummary(oidc, role)).toEqual({
      identityProvider: 'https://login.example/tenant/v2.0',
      register: 'https://eh.example/api/v2/sso/entra/callback',
      credentials: 'client id app-1; client secret stored',
      provisioning: 'On: new users get Read-Only',
    })
    const saml = {
      type: 'SAML',
      details: { idp_issuer_uri: 'http://www.okta.com/x', sp_metadata_uri: 'https://eh.example/api/v2/sso/okta/metadata', signing_certificates: [{ not_after: '2030-01-02T00:00:00Z' }, { not_after: '2029-05-01T00:00:00Z' }] },
      config: { auto_provision: { enabled: true, default_role_id: 7, role_provision: true } },
    } as unknown as SamlSsoProviderJson
    expect(providerSummary(saml, role)).toEqual({
      identityProvider: 'http://www.okta.com/x',
      register: 'https://eh.example/api/v2/sso/okta/metadata',
      credentials: '2 signing certificates, valid until 2030-01-02',
      provisioning: 'On: new users get role 7, or the role the identity provider names',
    })
  })
})

describe('Configuration section (ui/src/pages/admin/config-model.ts)', () => {
  const flags = [
    { id: 1, key: 'ntlm_post_processing', name: 'NTLM post-processing', description: 'd', enabled: false, user_updatable: true },
    { id: 2, key: 'oidc_support', name: 'OIDC support', description: 'd', enabled: true, user_updatable: false },
  ]
  it('a toggle only for a user-updatable flag and a user who may write; otherwise why not', () => {
    expect(flagViews(flags, true).map((f) => [f.id, f.toggle, f.note])).toEqual([[1, true, ''], [2, false, 'fixed in EdgeHound']])
    expect(flagViews(flags, false).map((f) => [f.id, f.toggle, f.note])).toEqual([[1, false, 'read-only for your role'], [2, false, 'fixed in EdgeHound']])
  })
  const params = [
    { key: 'auth.password_expiration_window', name: 'Password expiration window', description: '', value: { duration: 'P90D' } },
    { key: 'analysis.citrix_rdp_support', name: 'Citrix RDP support', description: '', value: { enabled: true } },
    { key: 'auth.session_ttl_hours', name: 'Session lifetime (hours)', description: '', value: { hours: 8 } },
  ]
  it('the two writable parameters get their editor; the session lifetime is read-only; a reader edits nothing', () => {
    expect(parameterViews(params, true).map((p) => [p.kind, p.value, p.editable])).toEqual([
      ['duration', 'P90D', true],
      ['boolean', true, true],
      ['readonly', 'hours: 8', false],
    ])
    expect(parameterViews(params, false).every((p) => !p.editable)).toBe(true)
    // a value of an unexpected shape is shown, not edited
    expect(parameterViews([{ ...params[0], value: { duration: 5 } }], true)[0]).toMatchObject({ kind: 'readonly', editable: false })
  })
  it("what a PUT sends: the parameter's own field; a read-only one sends nothing", () => {
    const [dur, citrix, ttl] = parameterViews(params, true)
    expect(parameterValue(dur, ' p30d ')).toEqual({ duration: 'P30D' })
    expect(parameterValue(citrix, false)).toEqual({ enabled: false })
    expect(parameterValue(ttl, 'x')).toBeNull()
  })
  it('durations read as words', () => {
    expect(['P90D', 'P1D', 'P2W', 'PT12H', 'P1DT1H', 'P1Y', 'P'].map(durationText)).toEqual(['90 days', '1 day', '2 weeks', '12 hours', '1 day 1 hour', 'P1Y', 'P'])
  })
})
