/// <reference types="node" />
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { run } from '../../src/cli/main'
import { sinceDate } from '../../src/cli/commands/audit'
import { UsageError } from '../../src/cli/errors'
import { FakeServer, testIO } from './fake-server'

const TOKEN_ID = '3f1c2d4e-5a6b-4c7d-8e9f-0a1b2c3d4e5f'
const TOKEN_KEY = 'audit-test-key'

let srv: FakeServer
beforeEach(async () => {
  srv = new FakeServer()
  srv.tokens.set(TOKEN_ID, TOKEN_KEY)
  await srv.start()
})
afterEach(() => srv.close())
const env = () => ({ EDGEHOUND_URL: srv.url, EDGEHOUND_TOKEN_ID: TOKEN_ID, EDGEHOUND_TOKEN_KEY: TOKEN_KEY })

const entry = (id: number) => ({
  id,
  created_at: '2026-11-26T06:00:00.000Z',
  actor_id: 'u1',
  actor_name: 'admin',
  actor_email: '',
  action: 'CreateAuthToken',
  fields: { token_name: 't' },
  request_id: 'r',
  source_ip_address: '203.0.113.7',
  status: 'success',
  commit_id: 'c',
})

describe('edgehound audit', () => {
  it('--since 1d asks for the last day, oldest first, and prints the entries', async () => {
    srv.on('GET', '/api/v2/audit', () => ({ status: 200, json: { count: 2, skip: 0, limit: 1000, data: { logs: [entry(1), entry(2)] } } }))
    const io = await testIO(env())
    expect(await run(['audit', '--since', '1d'], io)).toBe(0)
    const q = srv.requests.find((r) => r.path === '/api/v2/audit')!.query
    expect(q.get('sort_by')).toBe('created_at')
    const after = new Date(q.get('after')!).getTime()
    const before = new Date(q.get('before')!).getTime()
    expect(before - after).toBe(86_400_000)
    expect(io.out()).toContain('CreateAuthToken')
    expect(io.out()).toContain('203.0.113.7')
  })

  it('durations and dates parse; anything else is a usage error', () => {
    const now = new Date('2026-11-26T12:00:00Z')
    expect(sinceDate('12h', now).toISOString()).toBe('2026-11-26T00:00:00.000Z')
    expect(sinceDate('2026-11-01T00:00:00Z', now).toISOString()).toBe('2026-11-01T00:00:00.000Z')
    expect(() => sinceDate('yesterday', now)).toThrow(UsageError)
  })
})
