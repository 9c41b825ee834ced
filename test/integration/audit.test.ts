import { beforeAll, describe, expect, it, vi } from 'vitest'
import { ADMIN, adminToken, client, env, expectEnvelope, userWithRole } from '../helpers'
import type { EdgeHoundClient } from '../../src/client'
import { listAuditLogs, type AuditLogJson } from '../../src/client/audit'
import { ROUTES } from '../../src/app'
import { AUDIT_ACTIONS } from '../../src/audit/audit'
import { pruneAudit } from '../../src/audit/retention'

let admin: EdgeHoundClient & { tokenId: string; tokenKey: string }

beforeAll(async () => {
  admin = await adminToken()
})

async function rowsOfRequest(requestId: string): Promise<AuditLogJson[]> {
  const r = await listAuditLogs(admin, { filters: { request_id: `eq:${requestId}` } })
  return r.data.logs
}

describe('audit declarations', () => {
  it('every route that is not a GET declares its audit entries (or why it changes nothing)', () => {
    const missing = ROUTES.filter((r) => r.def.method !== 'get' && !r.def.audit).map((r) => `${r.def.method.toUpperCase()} ${r.def.path}`)
    expect(missing).toEqual([])
    for (const r of ROUTES) {
      const a = r.def.audit
      if (a && 'action' in a && typeof a.action === 'string') expect(AUDIT_ACTIONS).toContain(a.action)
      if (a && 'exempt' in a) expect(a.exempt.length).toBeGreaterThan(10)
    }
  })
})

describe('audit entries of changes', () => {
  it('creating a token writes intent then success with one commit id, the response RequestID, and never the key', async () => {
    const res = await admin.raw('POST', '/api/v2/tokens', { token_name: 'audited-token' })
    expect(res.status).toBe(200)
    const requestId = res.headers.get('requestid')!
    const body = (await res.json()) as { data: { id: string; key: string } }
    const rows = await rowsOfRequest(requestId)
    expect(rows.map((r) => [r.action, r.status])).toEqual([
      ['CreateAuthToken', 'intent'],
      ['CreateAuthToken', 'success'],
    ])
    const [intent, success] = rows
    expect(intent.commit_id).toBe(success.commit_id)
    expect(success.commit_id).toMatch(/^[0-9a-f-]{36}$/)
    expect(success.fields).toMatchObject({ token_name: 'audited-token', id: body.data.id })
    expect(Number.isInteger(success.id)).toBe(true)
    expect(success.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)
    expect(success.actor_name).toBe(ADMIN.username)
    expect(success.actor_id).toMatch(/^[0-9a-f-]{36}$/)
    expect(typeof success.actor_email).toBe('string')
    expect(success.source_ip_address).toMatch(/^10\./)
    expect(JSON.stringify(rows)).not.toContain(body.data.key)
  })

  it('a change whose batch fails leaves no success row and no change, and records the failure', async () => {
    const before = (await env.DB.prepare('SELECT count(*) AS n FROM api_tokens').first<{ n: number }>())!.n
    // Make the audit INSERT itself fail inside the batch: the token INSERT in the same batch must roll back.
    await env.DB.prepare(
      "CREATE TRIGGER audit_fault BEFORE INSERT ON audit_logs WHEN NEW.status = 'success' BEGIN SELECT RAISE(ABORT, 'injected'); END",
    ).run()
    const err = vi.spyOn(console, 'error').mockImplementation(() => {})
    try {
      const res = await admin.raw('POST', '/api/v2/tokens', { token_name: 'never-stored' })
      await expectEnvelope(res, 500)
      const rows = await rowsOfRequest(res.headers.get('requestid')!)
      expect(rows.map((r) => r.status)).toEqual(['intent', 'failure'])
      expect(rows[1].fields.error).toBe('internal error')
    } finally {
      await env.DB.prepare('DROP TRIGGER audit_fault').run()
      err.mockRestore()
    }
    expect((await env.DB.prepare('SELECT count(*) AS n FROM api_tokens').first<{ n: number }>())!.n).toBe(before)
  })

  it('deleting a token that does not exist records intent and failure, never success', async () => {
    const res = await admin.raw('DELETE', `/api/v2/tokens/${crypto.randomUUID()}`)
    await expectEnvelope(res, 404)
    const rows = await rowsOfRequest(res.headers.get('requestid')!)
    expect(rows.map((r) => [r.action, r.status])).toEqual([
      ['DeleteAuthToken', 'intent'],
      ['DeleteAuthToken', 'failure'],
    ])
    expect(rows[1].fields.error).toBe('resource not found')
  })

  it('logins: a failed one is a LoginAttempt failure without the secret; a good one a success naming the user', async () => {
    const bad = await client().raw('POST', '/api/v2/login', { login_method: 'secret', username: ADMIN.username, secret: 'wrong-secret-xyz' })
    expect(bad.status).toBe(401)
    const badRows = await rowsOfRequest(bad.headers.get('requestid')!)
    expect(badRows.map((r) => [r.action, r.status])).toEqual([['LoginAttempt', 'failure']])
    expect(badRows[0].fields).toMatchObject({ username: ADMIN.username, login_method: 'secret' })
    expect(badRows[0].actor_name).toBe(ADMIN.username)
    expect(JSON.stringify(badRows)).not.toContain('wrong-secret-xyz')

    const good = await client().raw('POST', '/api/v2/login', { login_method: 'secret', username: ADMIN.username, secret: ADMIN.password })
    expect(good.status).toBe(200)
    const jwt = ((await good.json()) as { data: { session_token: string } }).data.session_token
    const goodRows = await rowsOfRequest(good.headers.get('requestid')!)
    expect(goodRows.map((r) => [r.action, r.status])).toEqual([['LoginAttempt', 'success']])
    expect(JSON.stringify(goodRows)).not.toContain(jwt)

    const out = await client({ kind: 'bearer', jwt }).raw('POST', '/api/v2/logout')
    expect(out.status).toBe(200)
    expect((await rowsOfRequest(out.headers.get('requestid')!)).map((r) => [r.action, r.status])).toEqual([
      ['Logout', 'intent'],
      ['Logout', 'success'],
    ])
  })

  it('user create, update (secret only as "changed") and delete write their entries', async () => {
    const name = `audited-${Date.now()}`
    const c = await admin.raw('POST', '/api/v2/bloodhound-users', { principal_name: name, roles: ['User'], secret: 'secret-value-123456' })
    expect(c.status).toBe(200)
    const id = ((await c.json()) as { data: { id: string } }).data.id
    const u = await admin.raw('PATCH', `/api/v2/bloodhound-users/${id}`, { secret: 'other-secret-7654321', roles: ['Read-Only'] })
    expect(u.status).toBe(200)
    const d = await admin.raw('DELETE', `/api/v2/bloodhound-users/${id}`)
    expect(d.status).toBe(200)
    const all = [
      ...(await rowsOfRequest(c.headers.get('requestid')!)),
      ...(await rowsOfRequest(u.headers.get('requestid')!)),
      ...(await rowsOfRequest(d.headers.get('requestid')!)),
    ]
    expect(all.map((r) => [r.action, r.status])).toEqual([
      ['CreateUser', 'intent'],
      ['CreateUser', 'success'],
      ['UpdateUser', 'intent'],
      ['UpdateUser', 'success'],
      ['DeleteUser', 'intent'],
      ['DeleteUser', 'success'],
    ])
    expect(all[1].fields).toMatchObject({ id, principal_name: name, roles: ['User'] })
    expect(all[3].fields).toMatchObject({ id, roles: ['Read-Only'], changed: ['secret'] })
    const text = JSON.stringify(all)
    expect(text).not.toContain('secret-value-123456')
    expect(text).not.toContain('other-secret-7654321')
  })
})

describe('saved queries', () => {
  it('create, update, share and delete each write intent + success; a duplicate name is intent + failure', async () => {
    const name = `audited-query-${Date.now()}`
    const c = await admin.raw('POST', '/api/v2/saved-queries', { name, query: 'MATCH (n) RETURN n LIMIT 1' })
    expect(c.status).toBeLessThan(300)
    const id = ((await c.json()) as { data: { id: number } }).data.id
    const dup = await admin.raw('POST', '/api/v2/saved-queries', { name, query: 'MATCH (n) RETURN n LIMIT 2' })
    expect(dup.status).toBeGreaterThanOrEqual(400)
    const d = await admin.raw('DELETE', `/api/v2/saved-queries/${id}`)
    expect(d.status).toBeLessThan(300)
    const d2 = await admin.raw('DELETE', `/api/v2/saved-queries/${id}`)
    expect(d2.status).toBe(404)
    const of = async (r: Response) => (await rowsOfRequest(r.headers.get('requestid')!)).map((x) => [x.action, x.status])
    expect(await of(c)).toEqual([
      ['CreateSavedQuery', 'intent'],
      ['CreateSavedQuery', 'success'],
    ])
    expect(await of(dup)).toEqual([
      ['CreateSavedQuery', 'intent'],
      ['CreateSavedQuery', 'failure'],
    ])
    expect(await of(d)).toEqual([
      ['DeleteSavedQuery', 'intent'],
      ['DeleteSavedQuery', 'success'],
    ])
    expect(await of(d2)).toEqual([
      ['DeleteSavedQuery', 'intent'],
      ['DeleteSavedQuery', 'failure'],
    ])
  })
})

describe('GET /api/v2/audit', () => {
  it('pages with skip until an empty page, sorted by created_at and then id, with count/skip/limit', async () => {
    for (let i = 0; i < 3; i++) await admin.createToken(`paging-${i}`)
    const all = await listAuditLogs(admin, { sort_by: 'created_at', limit: 10000 })
    expect(all.limit).toBe(10000)
    expect(all.count).toBe(all.data.logs.length)
    const keys = all.data.logs.map((r) => [r.created_at, r.id] as const)
    const sorted = [...keys].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] - b[1]))
    expect(keys).toEqual(sorted)
    const seen: number[] = []
    for (let skip = 0; ; skip += 2) {
      const page = await listAuditLogs(admin, { sort_by: 'created_at', skip, limit: 2 })
      expect(page.skip).toBe(skip)
      if (page.data.logs.length === 0) break
      seen.push(...page.data.logs.map((r) => r.id))
    }
    expect(seen).toEqual(all.data.logs.map((r) => r.id).slice(0, seen.length))
    expect(seen.length).toBeGreaterThanOrEqual(all.count)
    const def = await listAuditLogs(admin)
    expect(def.limit).toBe(1000)
    // A limit above the cap (the legacy Go Sentinel connector sends 500000) or 0 (BloodHound: no limit) is
    // clamped, not refused; the answer states the effective limit and holds every entry up to it.
    for (const asked of ['500000', '0', '1000000000']) {
      const res = await admin.raw('GET', `/api/v2/audit?limit=${asked}&sort_by=created_at`)
      expect(res.status).toBe(200)
      const big = (await res.json()) as typeof all
      expect(big.limit).toBe(10000)
      expect(big.data.logs.map((r) => r.id)).toEqual(all.data.logs.map((r) => r.id).slice(0, big.data.logs.length))
      expect(big.data.logs.length).toBeGreaterThanOrEqual(all.data.logs.length)
    }
    // beyond any integer range (BloodHound's strconv.Atoi refuses it too): 400, never a 500 (issue 24)
    for (const q of ['limit=99999999999999999999', 'limit=1000000001', 'skip=99999999999999999999', `skip=${'9'.repeat(40)}&limit=${'9'.repeat(14)}`])
      await expectEnvelope(await admin.raw('GET', `/api/v2/audit?${q}`), 400, /must be at most 1000000000/)
    const past = await admin.raw('GET', `/api/v2/audit?limit=500000&skip=${all.count + 1000}`)
    expect(past.status).toBe(200)
    expect(await past.json()).toMatchObject({ limit: 10000, data: { logs: [] } })
    const desc = await listAuditLogs(admin, { sort_by: '-id', limit: 5 })
    const ids = desc.data.logs.map((r) => r.id)
    expect(ids).toEqual([...ids].sort((a, b) => b - a))
  })

  it('filters on action, status, actor and id; unknown sort columns and bad predicates are 400 envelopes', async () => {
    const f = await listAuditLogs(admin, { filters: { action: 'eq:CreateAuthToken', status: 'eq:success' } })
    expect(f.data.logs.length).toBeGreaterThan(0)
    expect(f.data.logs.every((r) => r.action === 'CreateAuthToken' && r.status === 'success')).toBe(true)
    const n = await listAuditLogs(admin, { filters: { status: 'neq:intent' } })
    expect(n.data.logs.every((r) => r.status !== 'intent')).toBe(true)
    const first = f.data.logs[0]
    const byId = await listAuditLogs(admin, { filters: { id: `gt:${first.id}` } })
    expect(byId.data.logs.every((r) => r.id > first.id)).toBe(true)
    const byActor = await listAuditLogs(admin, { filters: { actor_id: `eq:${first.actor_id}`, actor_name: `eq:${first.actor_name}` } })
    expect(byActor.data.logs.every((r) => r.actor_id === first.actor_id)).toBe(true)
    expect(byActor.count).toBeGreaterThan(0)
    const none = await listAuditLogs(admin, { filters: { actor_email: 'eq:nobody@example.invalid' } })
    expect(none).toMatchObject({ count: 0, data: { logs: [] } })
    await expectEnvelope(await admin.raw('GET', '/api/v2/audit?sort_by=fields'), 400, /not sortable/)
    await expectEnvelope(await admin.raw('GET', '/api/v2/audit?action=gt:x'), 400, /not supported/)
    await expectEnvelope(await admin.raw('GET', '/api/v2/audit?limit=-1'), 400, 'limit must be a non-negative integer')
    await expectEnvelope(await admin.raw('GET', '/api/v2/audit?limit=ten'), 400, 'limit must be a non-negative integer')
    await expectEnvelope(await admin.raw('GET', '/api/v2/audit?before=yesterday'), 400, /before/)
  })

  it('parses XSOAR-style URL-encoded dates with offsets; after/before bound the window', async () => {
    const res = await admin.raw('POST', '/api/v2/tokens', { token_name: 'window' })
    const rid = res.headers.get('requestid')!
    const [row] = (await rowsOfRequest(rid)).filter((r) => r.status === 'success')
    const t = new Date(row.created_at).getTime()
    // 02:00 ahead of UTC, as XSOAR formats and encodes it
    const fmt = (ms: number) => {
      const d = new Date(ms + 2 * 3600_000).toISOString().slice(0, 19)
      return encodeURIComponent(`${d}.000000+02:00`)
    }
    const inWindow = (await admin.call<{ data: { logs: AuditLogJson[] } }>(
      'GET',
      `/api/v2/audit?limit=1000&sort_by=created_at&after=${fmt(t - 1000)}&before=${fmt(t + 1000)}&request_id=eq%3A${rid}`,
    )).data.logs
    expect(inWindow.map((r) => r.status)).toEqual(['intent', 'success'])
    // a raw `+` (decoded to a space by form rules) is repaired
    const raw = new Date(t + 2 * 3600_000 + 1000).toISOString().slice(0, 19) + '+02:00'
    const ok = await admin.raw('GET', `/api/v2/audit?before=${raw}&request_id=eq:${rid}`)
    expect(ok.status).toBe(200)
    const later = await admin.call<{ data: { logs: AuditLogJson[] } }>('GET', `/api/v2/audit?after=${fmt(t + 60_000)}&request_id=eq:${rid}`)
    expect(later.data.logs).toEqual([])
  })

  it('auditors and administrators may read it; other roles get 403', async () => {
    const ro = await userWithRole('Read-Only')
    await expectEnvelope(await ro.client.raw('GET', '/api/v2/audit'), 403)
    const auditor = await userWithRole('Auditor')
    expect((await auditor.client.raw('GET', '/api/v2/audit?limit=1')).status).toBe(200)
  })

  it('retention deletes entries older than AUDIT_RETENTION_DAYS, off the request path', async () => {
    await env.DB.prepare(
      `INSERT INTO audit_logs (created_at, action, request_id, status, commit_id) VALUES ('2001-01-01T00:00:00.000Z', 'CreateUser', 'old-request', 'success', 'c')`,
    ).run()
    const deleted = await pruneAudit({ ...env, AUDIT_RETENTION_DAYS: '30' } as Env, Date.now())
    expect(deleted).toBeGreaterThanOrEqual(1)
    expect(await env.DB.prepare(`SELECT 1 FROM audit_logs WHERE request_id = 'old-request'`).first()).toBeNull()
    expect((await env.DB.prepare('SELECT count(*) AS n FROM audit_logs').first<{ n: number }>())!.n).toBeGreaterThan(0)
  })
})
