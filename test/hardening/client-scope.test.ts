/**
 * A collector client's token can do what a collector does and nothing else (issue 26), checked on the whole
 * route table: every route that is not a collector route (`auth: 'clients/Collect'`) refuses a valid client
 * token with the 403 envelope, whatever it declares (a permission, or any authenticated caller, such as
 * GET /api/version), and no refused request changes the database; every collector route admits it (neither
 * 401 nor 403). Public routes ignore credentials and are left out. A route added later is covered as is.
 */
import { beforeAll, describe, expect, it } from 'vitest'
import { computeSignature } from '../../src/auth/signature'
import { toBase64 } from '../../src/auth/encoding'
import { BASE } from '../helpers'
import { envelopeProblem, hAdminSession, hfetch, routeInfo, sampleQuery, type RouteInfo } from './lib'

const ROUTES_INFO = routeInfo()
let token: { id: string; key: string }

async function callAsClient(r: RouteInfo): Promise<{ status: number; text: string }> {
  const target = r.samplePath() + sampleQuery(r.def)
  const body = r.bodyKind === 'none' ? null : new TextEncoder().encode('{}')
  const contentType =
    r.bodyKind === 'json' ? 'application/json' : r.bodyKind === 'form' ? 'multipart/form-data; boundary=b' : r.bodyKind === 'raw' ? (r.def.body as { contentTypes: string[] }).contentTypes[0] : null
  const date = new Date().toISOString()
  const sig = await computeSignature(token.key, r.method, target, date, body ?? new Uint8Array())
  const h = new Headers({ Authorization: `bhesignature ${token.id}`, RequestDate: date, Signature: toBase64(sig) })
  if (contentType) h.set('Content-Type', contentType)
  const res = await hfetch(new Request(BASE + target, { method: r.method, headers: h, body }))
  const text = await res.text()
  const problem = res.status >= 400 ? envelopeProblem(res, text) : null
  if (problem) throw new Error(`${r.label}: ${problem}`)
  return { status: res.status, text }
}

beforeAll(async () => {
  const { client: admin } = await hAdminSession()
  const r = await admin.raw('POST', '/api/v2/clients', { name: `scope-${crypto.randomUUID()}`, type: 'azurehound', environment_id: 'T-SCOPE' })
  expect(r.status).toBe(201)
  token = ((await r.json()) as { data: { token: { id: string; key: string } } }).data.token
}, 60_000)

describe('a client token outside the collector routes', () => {
  const others = ROUTES_INFO.filter((r) => r.auth !== 'public' && r.auth !== 'clients/Collect')
  const collector = ROUTES_INFO.filter((r) => r.auth === 'clients/Collect')

  it('the route table has collector routes and others to walk', () => {
    expect(collector.map((r) => r.label).sort()).toEqual(
      ['GET /api/v2/jobs/available', 'GET /api/v2/jobs/current', 'POST /api/v2/ingest', 'POST /api/v2/jobs/end', 'POST /api/v2/jobs/start', 'PUT /api/v2/clients/update'].sort(),
    )
    expect(others.length).toBeGreaterThan(100)
  })

  it('is refused with 403 by every other route', { timeout: 300_000 }, async () => {
    const wrong: string[] = []
    for (const r of others) {
      const a = await callAsClient(r)
      if (a.status !== 403) wrong.push(`${r.label}: ${a.status} ${a.text.slice(0, 120)}`)
    }
    expect(wrong).toEqual([])
  })

  it('is admitted by every collector route', { timeout: 60_000 }, async () => {
    const wrong: string[] = []
    for (const r of collector) {
      const a = await callAsClient(r)
      if (a.status === 401 || a.status === 403) wrong.push(`${r.label}: ${a.status} ${a.text.slice(0, 120)}`)
    }
    expect(wrong).toEqual([])
  })
})
