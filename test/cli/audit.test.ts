/// <reference types="node" />
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { run } from '../../src/cli/main'
import { sinceDate } from '../../src/cli/commands/audit'
import { UsageError } from '../../src/cli/errors'
import { AUDIT_ACTIONS } from '../../src/audit/actions'
import { FakeServer, testIO, startFakeServer } from './fake-server'

const TOKEN_ID = '3f1c2d4e-5a6b-4c7d-8e9f-0a1b2c3d4e5f'
const TOKEN_KEY = 'audit-test-key'

let srv: FakeServer
beforeEach(async () => {
  srv = await startFakeServer(TOKEN_ID, TOKEN_KEY)
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

  it('--actor (a name or a user id), --actor-email, --action, --status and --request-id become the server filters', async () => {
    srv.on('GET', '/api/v2/audit', () => ({ status: 200, json: { count: 0, skip: 0, limit: 1000, data: { logs: [] } } }))
    const io = await testIO(env())
    expect(await run(['audit', '--actor', 'alice', '--action', 'CreateAuthToken', '--status', 'Failure', '--request-id', 'req-1'], io)).toBe(0)
    const q = srv.requests.at(-1)!.query
    expect(Object.fromEntries([...q].filter(([k]) => !['after', 'before', 'skip', 'limit', 'sort_by'].includes(k)))).toEqual({
      actor_name: 'eq:alice',
      action: 'eq:CreateAuthToken',
      status: 'eq:failure',
      request_id: 'eq:req-1',
    })
    expect(io.out()).toContain('No audit entries.')
    const uuid = '0b9c7f1e-2d3a-4b5c-8d6e-7f8091a2b3c4'
    expect(await run(['audit', '--actor', uuid, '--actor-email', 'alice@corp.example'], await testIO(env()))).toBe(0)
    const q2 = srv.requests.at(-1)!.query
    expect(q2.get('actor_id')).toBe(`eq:${uuid}`)
    expect(q2.get('actor_email')).toBe('eq:alice@corp.example')
    expect(q2.get('actor_name')).toBeNull()
  })

  it('an unknown --status or an empty filter is a usage error (exit 2), and nothing is asked of the server', async () => {
    const io = await testIO(env())
    expect(await run(['audit', '--status', 'done'], io)).toBe(2)
    expect(io.err()).toContain('--status must be one of intent, success, failure')
    expect(await run(['audit', '--actor', ' '], await testIO(env()))).toBe(2)
    expect(srv.requests.filter((r) => r.path === '/api/v2/audit')).toEqual([])
  })

  it('--action takes an audit action name in any letter case (sent as the log spells it); an unknown one is a usage error naming the actions, and nothing is asked of the server', async () => {
    srv.on('GET', '/api/v2/audit', () => ({ status: 200, json: { count: 0, skip: 0, limit: 1000, data: { logs: [] } } }))
    expect(await run(['audit', '--action', 'createauthtoken'], await testIO(env()))).toBe(0)
    expect(srv.requests.at(-1)!.query.get('action')).toBe('eq:CreateAuthToken')
    const asked = srv.requests.length
    const io = await testIO(env())
    expect(await run(['audit', '--action', 'CreateToken'], io)).toBe(2)
    expect(io.err()).toContain('--action "CreateToken" is not an audit action')
    for (const a of AUDIT_ACTIONS) expect(io.err()).toContain(a)
    expect(srv.requests.length).toBe(asked)
  })

  it('reads every page of the window (same after/before on each) and prints all entries; --json prints them as an array', async () => {
    srv.on('GET', '/api/v2/audit', (req) => {
      const skip = Number(req.query.get('skip'))
      const n = skip === 0 ? 1000 : 2
      return { status: 200, json: { count: 1002, skip, limit: 1000, data: { logs: Array.from({ length: n }, (_, i) => entry(skip + i + 1)) } } }
    })
    const io = await testIO(env())
    expect(await run(['audit', '--since', '2w', '--json'], io)).toBe(0)
    const asked = srv.requests.filter((r) => r.path === '/api/v2/audit').map((r) => r.query)
    expect(asked.map((q) => q.get('skip'))).toEqual(['0', '1000'])
    expect(new Set(asked.map((q) => `${q.get('after')} ${q.get('before')}`)).size).toBe(1)
    const printed = JSON.parse(io.out()) as { id: number }[]
    expect(printed.map((e) => e.id)).toEqual(Array.from({ length: 1002 }, (_, i) => i + 1))
  })
})
