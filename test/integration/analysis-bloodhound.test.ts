/**
 * BloodHound's two analysis routes beside EdgeHound's own: `PUT /api/v2/analysis` (what BloodHound's web interface
 * sends: 202 with no body) and `GET /api/v2/analysis/status` (the pending request, or BloodHound's empty request).
 */
import { beforeAll, describe, expect, it } from 'vitest'
import type { EdgeHoundClient } from '../../src/client'
import { createRun } from '../../src/findings/analysis.store'
import { BASE, adminToken, env, expectEnvelope, userWithRole, workerFetch } from '../helpers'
import { settleRuns } from '../fixtures/findings/helpers'

const db = () => (env as unknown as { DB: D1Database }).DB
let admin: EdgeHoundClient

beforeAll(async () => {
  admin = await adminToken()
})

describe('PUT /api/v2/analysis', () => {
  it('answers 202 with an empty body and requests a run, audited as RequestAnalysis', async () => {
    await settleRuns(db())
    const before = (await db().prepare('SELECT COALESCE(MAX(id), 0) AS n FROM analysis_runs').first<{ n: number }>())!.n
    const res = await admin.raw('PUT', '/api/v2/analysis')
    expect(res.status).toBe(202)
    expect(await res.text()).toBe('')
    const run = await db().prepare('SELECT reasons FROM analysis_runs WHERE id > ?1').bind(before).first<{ reasons: string }>()
    expect(JSON.parse(run!.reasons)).toEqual(['requested by admin'])
    const audit = await db().prepare(`SELECT status FROM audit_logs WHERE action = 'RequestAnalysis' ORDER BY id DESC LIMIT 1`).first<{ status: string }>()
    expect(audit?.status).toBe('success')
  })

  it("takes BloodHound's optional body; malformed JSON or a wrong type is the 400 envelope", async () => {
    expect((await admin.raw('PUT', '/api/v2/analysis', { analysis_step: 1 })).status).toBe(202)
    await expectEnvelope(await admin.raw('PUT', '/api/v2/analysis', { analysis_step: 'all' }), 400)
    const bad = await admin.raw('PUT', '/api/v2/analysis', '{"analysis_step":', { contentType: 'application/json' })
    await expectEnvelope(bad, 400)
  })

  it('needs analysis/Run: a Read-Only user is refused (403), nobody signed in 401', async () => {
    const { client } = await userWithRole('Read-Only')
    await expectEnvelope(await client.raw('PUT', '/api/v2/analysis'), 403)
    await expectEnvelope(await workerFetch(new Request(`${BASE}/api/v2/analysis`, { method: 'PUT' })), 401)
  })
})

describe('GET /api/v2/analysis/status', () => {
  it("with nothing pending: BloodHound's empty request", async () => {
    await settleRuns(db())
    const res = await admin.raw('GET', '/api/v2/analysis/status')
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ data: { requested_by: '', request_type: '', requested_at: '0001-01-01T00:00:00Z' } })
  })

  it('with a run pending: who asked, the type and when; readable with graph/Read', async () => {
    await settleRuns(db())
    const run = await createRun(db(), 'requested by someone', '2026-11-29T01:00:00.000Z')
    try {
      const { client } = await userWithRole('Read-Only')
      const res = await client.raw('GET', '/api/v2/analysis/status')
      expect(res.status).toBe(200)
      expect(await res.json()).toEqual({ data: { requested_by: 'requested by someone', request_type: 'analysis', requested_at: '2026-11-29T01:00:00.000Z' } })
    } finally {
      await db().prepare(`DELETE FROM analysis_runs WHERE id = ?1 AND status = 'pending'`).bind(run.id).run()
    }
  })
})
