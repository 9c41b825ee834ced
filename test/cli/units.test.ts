import { describe, expect, it } from 'vitest'
import { interpretAnalysis } from '../../src/cli/analysis-state'
import { resolveSettings, jwtExpiry, type ConfigFile } from '../../src/cli/config'
import { formatBytes, renderBar, LiveLine } from '../../src/cli/progress'
import { findingSummary } from '../../src/cli/findings-format'
import { formatTable } from '../../src/cli/output'
import { contentTypeFor } from '../../src/cli/commands/request'
import { ingestContentType, uploadCounts, uploadWarnings } from '../../src/cli/commands/ingest'
import { extensionRows } from '../../src/cli/commands/admin'
import { pickEnvironment } from '../../src/cli/commands/findings'
import { UsageError } from '../../src/cli/errors'

const ID_A = '11111111-1111-4111-8111-111111111111'
const ID_B = '22222222-2222-4222-8222-222222222222'

describe('resolveSettings: flags > environment > profile, keys never crossed between tokens', () => {
  const file: ConfigFile = {
    profiles: {
      default: { url: 'https://prof.example/', token_id: ID_A, token_key: 'profile-key' },
      ci: { url: 'https://ci.example', session_token: 'jwt-ci', username: 'ci' },
    },
  }
  it('profile alone: URL (trailing slash cut) and the profile token', () => {
    const s = resolveSettings({}, {}, file, '/cfg')
    expect(s.url).toBe('https://prof.example')
    expect(s.credentials).toEqual({ kind: 'token', tokenId: ID_A, tokenKey: 'profile-key' })
    expect(s.profileName).toBe('default')
  })
  it('flags beat the environment, which beats the profile', () => {
    expect(resolveSettings({ url: 'http://flag' }, { EDGEHOUND_URL: 'http://env' }, file, '/c').url).toBe('http://flag')
    expect(resolveSettings({}, { EDGEHOUND_URL: 'http://env' }, file, '/c').url).toBe('http://env')
    const s = resolveSettings({}, { EDGEHOUND_TOKEN_ID: ID_B, EDGEHOUND_TOKEN_KEY: 'env-key' }, file, '/c')
    expect(s.credentials).toEqual({ kind: 'token', tokenId: ID_B, tokenKey: 'env-key' })
    const f = resolveSettings({ 'token-id': ID_A }, { EDGEHOUND_TOKEN_ID: ID_B, EDGEHOUND_TOKEN_KEY: 'env-key' }, file, '/c')
    expect(f.credentials).toMatchObject({ tokenId: ID_A, tokenKey: 'env-key' })
  })
  it("a profile's key is never sent with another token id", () => {
    expect(() => resolveSettings({ 'token-id': ID_B }, {}, file, '/c')).toThrow(UsageError)
    expect(() => resolveSettings({ 'token-id': ID_B }, {}, file, '/c')).toThrow(/no key for token/)
    // same id as the profile: the profile's key is fine
    expect(resolveSettings({ 'token-id': ID_A }, {}, file, '/c').credentials).toMatchObject({ tokenKey: 'profile-key' })
  })
  it('a key file wins over the environment key; a key without any id is an error', () => {
    const s = resolveSettings({ 'token-id': ID_B }, { EDGEHOUND_TOKEN_KEY: 'env-key' }, file, '/c', 'file-key')
    expect(s.credentials).toMatchObject({ tokenId: ID_B, tokenKey: 'file-key' })
    expect(() => resolveSettings({}, { EDGEHOUND_TOKEN_KEY: 'k' }, { profiles: {} }, '/c')).toThrow(/without a token id/)
  })
  it('sessions: EDGEHOUND_SESSION, then a profile session; --profile / EDGEHOUND_PROFILE pick the profile', () => {
    expect(resolveSettings({ profile: 'ci' }, {}, file, '/c').credentials).toEqual({ kind: 'bearer', jwt: 'jwt-ci' })
    expect(resolveSettings({}, { EDGEHOUND_PROFILE: 'ci' }, file, '/c').url).toBe('https://ci.example')
    expect(resolveSettings({}, { EDGEHOUND_SESSION: 'jwt-env' }, { profiles: {} }, '/c').credentials).toEqual({ kind: 'bearer', jwt: 'jwt-env' })
    expect(resolveSettings({}, {}, { profiles: {} }, '/c').credentials).toEqual({ kind: 'none' })
  })
  it('rejects a URL that is not http(s)', () => {
    expect(() => resolveSettings({ url: 'ftp://x' }, {}, { profiles: {} }, '/c')).toThrow(/http:\/\/ or https:\/\//)
  })
  it('jwtExpiry reads exp without verifying', () => {
    const payload = Buffer.from(JSON.stringify({ exp: 1_900_000_000 })).toString('base64url')
    expect(jwtExpiry(`h.${payload}.s`)?.toISOString()).toBe(new Date(1_900_000_000_000).toISOString())
    expect(jwtExpiry('garbage')).toBeNull()
  })
})

describe('interpretAnalysis', () => {
  it.each([
    [{ data: { status: 'queued' } }, 'running'],
    [{ data: { status: 'running', progress: 0.25 } }, 'running'],
    [{ data: { state: 'Analyzing' } }, 'running'],
    [{ data: { status: 'complete' } }, 'complete'],
    [{ data: { status: 'idle' } }, 'complete'],
    [{ data: { run: { status: 'failed', message: 'boom' } } }, 'failed'],
    [{ data: { latest: { status: 'succeeded' } } }, 'complete'],
    [{ status: 'timed-out' }, 'failed'],
    [{ data: { status: 'weird' } }, 'unknown'],
    [undefined, 'unknown'],
    [{ data: [] }, 'none'],
    [{ count: 2, data: [{ id: 9, status: 'pending' }, { id: 8, status: 'complete' }] }, 'running'],
    [{ count: 1, data: [{ id: 8, status: 'complete' }] }, 'complete'],
  ])('%j → %s', (body, phase) => {
    expect(interpretAnalysis(body).phase).toBe(phase)
  })
  it('progress in 0..1, 0..100 or steps; complete is 1; ids and messages', () => {
    expect(interpretAnalysis({ data: { status: 'running', percent: 40 } }).progress).toBeCloseTo(0.4)
    expect(interpretAnalysis({ data: { status: 'running', completed_steps: 3, total_steps: 4 } }).progress).toBeCloseTo(0.75)
    expect(interpretAnalysis({ data: { status: 'running' } }).progress).toBeNull()
    expect(interpretAnalysis({ data: { status: 'done' } }).progress).toBe(1)
    const s = interpretAnalysis({ data: { id: 7, status: 'failed', status_message: 'no graph' } })
    expect(s).toMatchObject({ phase: 'failed', status: 'failed', progress: null, runId: '7', message: 'no graph' })
    // the service's run shape: error message and counts
    const done = interpretAnalysis({ data: { id: 3, status: 'complete', error: null, finding_count: 5, new_count: 1, changed_count: 0, closed_count: 2, duration_ms: 99 } })
    expect(done).toEqual({ phase: 'complete', status: 'complete', progress: 1, runId: '3', message: null, counts: { findings: 5, new: 1, changed: 0, closed: 2, duration_ms: 99 } })
    expect(interpretAnalysis({ data: { id: 4, status: 'failed', error: 'boom' } }).message).toBe('boom')
  })
})

describe('small formatting helpers', () => {
  it('renderBar and formatBytes', () => {
    expect(renderBar(0, 100, 10)).toBe('[----------]   0%')
    expect(renderBar(50, 100, 10)).toBe('[#####-----]  50%')
    expect(renderBar(200, 100, 10)).toBe('[##########] 100%')
    expect(renderBar(0, 0, 4)).toBe('[----]   0%')
    expect(formatBytes(512)).toBe('512 B')
    expect(formatBytes(1536)).toBe('1.5 KiB')
    expect(formatBytes(50 * 1024 * 1024)).toBe('50 MiB')
  })
  it('LiveLine writes only on a terminal, and clears before permanent lines', () => {
    let tty = ''
    const live = new LiveLine({ write: (s: string) => (tty += s), isTTY: true, columns: 20 })
    live.update('a very long progress line that is cut', true)
    live.clear()
    expect(tty).toBe('\r\x1b[Ka very long progres\r\x1b[K') // cut to columns - 1
    let pipe = ''
    const quiet = new LiveLine({ write: (s: string) => (pipe += s) })
    quiet.update('x', true)
    quiet.clear()
    expect(pipe).toBe('')
  })
  it('formatTable aligns columns', () => {
    expect(formatTable([{ a: 'x', b: 1 }, { a: 'longer', b: null }], ['a', 'b'])).toEqual(['A       B', 'x       1', 'longer'])
  })
  it('findingSummary covers relationship and list findings', () => {
    expect(findingSummary({ FromPrincipalName: 'BOB', ToPrincipalProps: { name: 'DA' }, Severity: 'high', ImpactPercentage: 0.425, created_at: 't' })).toEqual({
      severity: 'high',
      impact: '43%',
      subject: 'BOB -> DA',
      created_at: 't',
    })
    expect(findingSummary({ Principal: 'S-1', Props: { name: 'SVC' } }).subject).toBe('SVC')
    expect(findingSummary({ Principal: 'S-1' })).toMatchObject({ subject: 'S-1', severity: '-', impact: '-' })
  })
  it('content types by extension or magic number', () => {
    const zip = new Uint8Array([0x50, 0x4b, 0x03, 0x04])
    expect(contentTypeFor('x.zip', new Uint8Array())).toBe('application/zip')
    expect(contentTypeFor(undefined, zip)).toBe('application/zip')
    expect(contentTypeFor('m.xml', new Uint8Array())).toBe('application/xml')
    expect(contentTypeFor('a.json', new Uint8Array())).toBe('application/json')
    expect(ingestContentType(zip)).toBe('application/zip')
    expect(ingestContentType(new TextEncoder().encode('{}'))).toBe('application/json')
  })
  it('extensionRows and pickEnvironment', () => {
    expect(extensionRows({ data: [{ id: 1 }] })).toEqual([{ id: 1 }])
    expect(extensionRows({ data: { extensions: [{ id: 2 }] } })).toEqual([{ id: 2 }])
    expect(extensionRows({ data: {} })).toEqual([])
    const envs = [
      { id: 'S-1', name: 'CORP.LOCAL' },
      { id: 'T-2', name: 'Tenant' },
    ]
    expect(pickEnvironment(envs, 'corp.local')?.id).toBe('S-1')
    expect(pickEnvironment(envs, 'T-2')?.name).toBe('Tenant')
    expect(pickEnvironment(envs, 'nope')).toBeUndefined()
    const twins = [...envs, { id: 'S-9', name: 'corp.local' }]
    expect(() => pickEnvironment(twins, 'CORP.LOCAL')).toThrow('several environments are named "CORP.LOCAL": S-1, S-9; give the id instead')
    expect(pickEnvironment(twins, 'S-9')?.id).toBe('S-9')
  })
})

describe('uploadCounts', () => {
  it('names unmatched edges and refused nodes only when there are some', () => {
    expect(uploadCounts({ nodes: 3, edges: 4, unmatched_edges: 0, refused_nodes: 0 })).toBe('3 nodes, 4 edges')
    expect(uploadCounts({ nodes: 3, edges: 4, unmatched_edges: 1, refused_nodes: 2 })).toBe(
      '3 nodes, 4 edges, 1 unmatched edges, 2 nodes refused (outside your environments)',
    )
  })
})

describe('uploadWarnings', () => {
  it("prints an accepted upload's warnings with their context, at most 10", () => {
    expect(uploadWarnings({ nodes: 1 })).toEqual([])
    expect(uploadWarnings({ warnings: [{ file: 'd.json', context: 'meta.count', message: 'meta.count is 5 but data holds 1 element(s)' }] })).toEqual([
      'meta.count: meta.count is 5 but data holds 1 element(s)',
    ])
    const many = Array.from({ length: 12 }, (_, i) => ({ file: 'z', context: `m${i}.json: meta.count`, message: 'x' }))
    expect(uploadWarnings({ warnings: many })).toHaveLength(11)
    expect(uploadWarnings({ warnings: many })[10]).toBe("(2 more in the job's warnings)")
  })
})
