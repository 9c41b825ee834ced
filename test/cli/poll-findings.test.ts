/// <reference types="node" />
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { mkdtemp, readFile } from 'node:fs/promises'
import { execFile } from 'node:child_process'
import os from 'node:os'
import path from 'node:path'
import { createRequire } from 'node:module'
import { pathToFileURL } from 'node:url'
import { EdgeHoundClient } from '../../src/client'
import { pollFindings } from '../../examples/poll-findings'
import { envelope, FakeServer } from './fake-server'

const TOKEN_ID = '3f1c2d4e-5a6b-4c7d-8e9f-0a1b2c3d4e5f'
const TOKEN_KEY = 'poll-test-key'
const root = path.resolve(import.meta.dirname, '../..')
/** tsx's loader by absolute URL: the script runs from a temporary directory (its state file lands there) */
const tsxLoader = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href

type Item = Record<string, unknown>
let srv: FakeServer
let findings: Record<string, Record<string, Item[]>>
let failDetailsFor: string | null

function rel(id: number, env: string, from: string, created: string): Item {
  return { id, Finding: 'T0GenericAll', DomainSID: env, FromPrincipalName: from, ToPrincipalName: 'DOMAIN ADMINS', Severity: 'critical', ImpactPercentage: 0.5, created_at: created, updated_at: created }
}

beforeEach(async () => {
  failDetailsFor = null
  findings = {
    'S-1': { T0GenericAll: [rel(1, 'S-1', 'ALICE', '2026-11-25T10:00:00.000Z'), rel(2, 'S-1', 'BOB', '2026-11-25T11:00:00.000Z')], Kerberoasting: [{ id: 3, Principal: 'S-1-1105', PrincipalName: 'SVC_SQL', Severity: 'high', created_at: '2026-11-25T09:00:00.000Z' }] },
    'S-2': { T0GenericAll: [rel(4, 'S-2', 'CAROL', '2026-11-25T08:00:00.000Z')] },
    'S-3': { T0GenericAll: [rel(5, 'S-3', 'NOT-COLLECTED', '2026-11-25T08:00:00.000Z')] },
  }
  srv = new FakeServer()
  srv.tokens.set(TOKEN_ID, TOKEN_KEY)
  srv.on('GET', '/api/v2/available-domains', () => ({
    json: { data: [{ id: 'S-1', name: 'CORP.LOCAL', type: 'active-directory', collected: true }, { id: 'S-2', name: 'LAB.LOCAL', type: 'active-directory', collected: true }, { id: 'S-3', name: 'OLD.LOCAL', collected: false }] },
  }))
  srv.on('GET', '/api/v2/domains/:id/available-types', (_r, p) => ({ json: { data: Object.keys(findings[p.id] ?? {}) } }))
  srv.on('GET', '/api/v2/assets/findings/:t/:which', (_r, p) =>
    p.t === 'T0GenericAll'
      ? { text: p.which === 'title' ? 'Generic All on Tier Zero\n' : 'Remove the GenericAll right.\nMore text.', headers: { 'Content-Type': 'text/markdown; charset=utf-8' } }
      : { status: 404, json: envelope(404, 'unknown finding type') },
  )
  srv.on('GET', '/api/v2/domains/:id/details', (r, p) => {
    if (failDetailsFor === p.id) return { status: 429, headers: { 'Retry-After': '1' }, json: envelope(429, 'Too many requests. Please try again later.', 'middleware') }
    const all = findings[p.id]?.[r.query.get('finding') ?? ''] ?? []
    const skip = Number(r.query.get('skip') ?? 0)
    const limit = Number(r.query.get('limit') ?? 10)
    return { json: { count: all.length, skip, limit, data: all.slice(skip, skip + limit) } }
  })
  await srv.start()
})
afterEach(() => srv.close())

async function poll(stateFile: string, extra: { environments?: string[] } = {}) {
  const out: string[] = []
  const warnings: string[] = []
  const client = new EdgeHoundClient({ baseUrl: srv.url, credentials: { kind: 'token', tokenId: TOKEN_ID, tokenKey: TOKEN_KEY } })
  const r = await pollFindings({ client, stateFile, print: (l) => out.push(l), warn: (l) => warnings.push(l), ...extra })
  return { ...r, out, warnings }
}

describe('examples/poll-findings.ts', () => {
  it('prints alerts grouped per environment, remembers created_at, and a second run prints nothing', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'poll-'))
    const state = path.join(dir, '.edgehound', 'poll-state.json')
    const first = await poll(state)
    expect(first.out).toEqual([
      '== CORP.LOCAL (S-1): 3 new finding(s)',
      '[high] Kerberoasting: SVC_SQL (created 2026-11-25T09:00:00.000Z)',
      '[critical] Generic All on Tier Zero: ALICE -> DOMAIN ADMINS (created 2026-11-25T10:00:00.000Z)',
      '    remediation: Remove the GenericAll right.',
      '[critical] Generic All on Tier Zero: BOB -> DOMAIN ADMINS (created 2026-11-25T11:00:00.000Z)',
      '    remediation: Remove the GenericAll right.',
      '== LAB.LOCAL (S-2): 1 new finding(s)',
      '[critical] Generic All on Tier Zero: CAROL -> DOMAIN ADMINS (created 2026-11-25T08:00:00.000Z)',
      '    remediation: Remove the GenericAll right.',
    ])
    expect(first.failed).toEqual([])
    expect(JSON.parse(await readFile(state, 'utf8'))).toEqual({ last_created_at: { 'S-1': '2026-11-25T11:00:00.000Z', 'S-2': '2026-11-25T08:00:00.000Z' } })
    // every request was signed and verified by the fake; texts fetched once per type, not per environment
    expect(srv.requests.every((r) => r.principal === TOKEN_ID)).toBe(true)
    expect(srv.requests.filter((r) => r.path === '/api/v2/assets/findings/T0GenericAll/title')).toHaveLength(1)

    const second = await poll(state)
    expect(second.out).toEqual([])
    expect(second.alerts).toEqual([])

    // a new finding appears: only it is printed
    findings['S-2'].T0GenericAll.push(rel(6, 'S-2', 'DAVE', '2026-11-25T12:00:00.000Z'))
    const third = await poll(state)
    expect(third.out).toEqual([
      '== LAB.LOCAL (S-2): 1 new finding(s)',
      '[critical] Generic All on Tier Zero: DAVE -> DOMAIN ADMINS (created 2026-11-25T12:00:00.000Z)',
      '    remediation: Remove the GenericAll right.',
    ])
    expect(JSON.parse(await readFile(state, 'utf8')).last_created_at['S-2']).toBe('2026-11-25T12:00:00.000Z')
  })

  it('a 429 defers one environment (its watermark stays) while the others advance; a filter keeps only named environments', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'poll-'))
    const state = path.join(dir, 'state.json')
    failDetailsFor = 'S-1'
    const r = await poll(state)
    expect(r.failed).toEqual(['CORP.LOCAL'])
    expect(r.warnings[0]).toMatch(/^environment CORP\.LOCAL: HTTP 429: Too many requests\. Please try again later\. \(request id .+\); rate limited, deferring to the next run$/)
    expect(r.out[0]).toBe('== LAB.LOCAL (S-2): 1 new finding(s)')
    expect(JSON.parse(await readFile(state, 'utf8')).last_created_at).toEqual({ 'S-2': '2026-11-25T08:00:00.000Z' })
    failDetailsFor = null
    const again = await poll(state, { environments: ['corp.local', 'MISSING.LOCAL'] })
    expect(again.out[0]).toBe('== CORP.LOCAL (S-1): 3 new finding(s)')
    expect(again.out.some((l) => l.includes('LAB.LOCAL'))).toBe(false)
    expect(again.warnings).toEqual(['environment missing.local is not available to this token'])
  })

  it('runs as a script through tsx: exit 0, and 2 without settings', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'poll-'))
    const runScript = (env: Record<string, string>) =>
      new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
        execFile(process.execPath, ['--import', tsxLoader, path.join(root, 'examples/poll-findings.ts')], { cwd: dir, env: { PATH: process.env.PATH ?? '', ...env } as unknown as NodeJS.ProcessEnv }, (err, stdout, stderr) =>
          resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
        )
      })
    const ok = await runScript({ EDGEHOUND_URL: srv.url, EDGEHOUND_TOKEN_ID: TOKEN_ID, EDGEHOUND_TOKEN_KEY: TOKEN_KEY })
    expect(ok.stderr).toContain('4 new finding(s)')
    expect(ok.code).toBe(0)
    expect(ok.stdout).toContain('== CORP.LOCAL (S-1): 3 new finding(s)')
    expect(JSON.parse(await readFile(path.join(dir, '.edgehound', 'poll-state.json'), 'utf8')).last_created_at['S-1']).toBe('2026-11-25T11:00:00.000Z')
    const again = await runScript({ EDGEHOUND_URL: srv.url, EDGEHOUND_TOKEN_ID: TOKEN_ID, EDGEHOUND_TOKEN_KEY: TOKEN_KEY })
    expect(again.stdout).toBe('')
    expect(again.stderr).toContain('0 new finding(s)')
    const missing = await runScript({})
    expect(missing.code).toBe(2)
  })
})
