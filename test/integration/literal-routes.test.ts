import { beforeAll, describe, expect, it } from 'vitest'
import type { EdgeHoundClient } from '../../src/client'
import { adminToken, expectEnvelope } from '../helpers'

/**
 * Paths with a literal segment where a parameter route sits beside them are answered by their own route
 * (src/http/route.ts routeOrder; test/unit/route-order.test.ts walks the table). Before, the parameter
 * route took them: /api/v2/analysis/status was a malformed run id (400) and /api/v2/saved-queries/export a
 * malformed query id (400).
 */
let admin: EdgeHoundClient

beforeAll(async () => {
  admin = await adminToken()
})

describe('literal segments beside parameter routes', () => {
  it('GET /api/v2/analysis/status answers the pending request, not a malformed run id', async () => {
    const res = await admin.raw('GET', '/api/v2/analysis/status')
    expect(res.status).toBe(200)
    expect(Object.keys(((await res.json()) as { data: object }).data).sort()).toEqual(['request_type', 'requested_at', 'requested_by'])
    // the run route beside it is unchanged
    await expectEnvelope(await admin.raw('GET', '/api/v2/analysis/abc'), 400, 'id is malformed')
    await expectEnvelope(await admin.raw('GET', '/api/v2/analysis/999999'), 404, 'analysis run not found')
  })

  it('GET /api/v2/saved-queries/export is the export (its own scope refusal), not a malformed query id', async () => {
    await expectEnvelope(await admin.raw('GET', '/api/v2/saved-queries/export'), 400, 'scope query parameter cannot be empty')
    const res = await admin.raw('GET', '/api/v2/saved-queries/abc')
    expect(res.status).toBe(400)
  })

  it('POST /api/v2/file-upload/start still starts a job (the literal beside /file-upload/{id})', async () => {
    const res = await admin.raw('POST', '/api/v2/file-upload/start')
    expect(res.status).toBe(201)
  })
})
