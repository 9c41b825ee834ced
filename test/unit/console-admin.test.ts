// The Administration and Profile pages' pure logic (ui/src/pages/admin/model.ts).
import { describe, expect, it } from 'vitest'
import { adminSections, auditQuery, homePath, jobActive, jobDuration, jobStatusName, mainPages, NO_WIPE, percent, sourceKindLabel, uploadContentType, WIPE_PHRASE, wipeConfirmed, wipeOptions } from '../../ui/src/pages/admin/model'

const PAGES = [
  { label: 'Explore', href: '/ui/explore' },
  { label: 'Attack paths', href: '/ui/attack-paths' },
  { label: 'Administration', href: '/ui/administration' },
]

describe('what a role sees', () => {
  it('Administrator: every section; Explore is home', () => {
    const me = { roles: ['Administrator'] }
    expect(adminSections(me).map((s) => s.id)).toEqual(['file-ingest', 'data-pipeline', 'clients', 'users', 'sso', 'extensions', 'audit'])
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
    expect(adminSections(me).map((s) => s.id)).toEqual(['data-pipeline'])
    expect(mainPages(me, PAGES).map((p) => p.label)).toEqual(['Explore', 'Attack paths', 'Administration'])
  })
  it('Auditor: the audit log; roles add up', () => {
    expect(adminSections({ roles: ['Auditor'] }).map((s) => s.id)).toEqual(['data-pipeline', 'audit'])
    expect(adminSections({ roles: ['Upload-Only', 'Auditor'] }).map((s) => s.id)).toEqual(['file-ingest', 'data-pipeline', 'audit'])
  })
  it('Database management: db/Wipe with access to every environment (the API refuses a restricted administrator too)', () => {
    expect(adminSections({ roles: ['Administrator'], all_environments: true }).map((s) => s.id)).toEqual([
      'file-ingest', 'data-pipeline', 'database-management', 'clients', 'users', 'sso', 'extensions', 'audit',
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
