/**
 * Paging parameters, from the route table (issue 24): every route whose query declares `skip`, `limit` or
 * `offset` answers 400 with the envelope (context `query.<name>`) for values out of range of any length —
 * 20 digits, 40 digits, 400 digits (Infinity as a float), a 14-digit limit next to a 40-digit skip — never a 500.
 * The parser is src/http/paging.ts; a route added later with a paging parameter is picked up here.
 */
import { beforeAll, describe, expect, it } from 'vitest'
import { envelopeProblem, hAdminSession, hfetch, internalLeaks, objectParts, routeInfo, sampleQuery } from './lib'
import { PAGE_INT_MAX, PAGING_PARAMS } from '../../src/http/paging'
import { BASE } from '../helpers'

let jwt = ''
beforeAll(async () => {
  jwt = (await hAdminSession()).jwt
}, 60_000)

const HUGE = ['99999999999999999999', '9'.repeat(40), '1' + '0'.repeat(400), String(PAGE_INT_MAX + 1)]

const paged = routeInfo()
  .map((r) => ({ r, names: Object.keys((r.def.query && objectParts(r.def.query)?.shape) ?? {}).filter((k) => (PAGING_PARAMS as readonly string[]).includes(k)) }))
  .filter((x) => x.names.length > 0)

/** The route's own method: a POST whose query pages (a preview, a history search) is asked with an empty JSON body
 *  (the query is validated before the body, so the paging parameter's 400 is the answer). */
async function call(method: string, path: string) {
  const init: RequestInit =
    method === 'GET'
      ? { headers: { Authorization: `Bearer ${jwt}` } }
      : { method, headers: { Authorization: `Bearer ${jwt}`, 'Content-Type': 'application/json' }, body: '{}' }
  const res = await hfetch(new Request(BASE + path, init))
  return { res, text: await res.text() }
}

describe('huge paging values are a 400 envelope on every paged route', () => {
  it('the route table has the paged routes this suite is about', () => {
    const labels = paged.map((x) => x.r.label)
    expect(labels).toContain('GET /api/v2/audit')
    expect(labels).toContain('GET /api/v2/saved-queries')
    expect(labels).toContain('GET /api/v2/asset-groups/:asset_group_id/members')
    expect(paged.length).toBeGreaterThanOrEqual(12)
  })

  it.each(paged.map((x) => [x.r.label, x] as const))('%s', async (_label, { r, names }) => {
    const cases: Record<string, string>[] = []
    for (const n of names) for (const v of HUGE) cases.push({ [n]: v })
    if (names.includes('skip') && names.includes('limit')) cases.push({ skip: '9'.repeat(40), limit: '9'.repeat(14) })
    for (const overrides of cases) {
      const target = r.samplePath() + sampleQuery(r.def, overrides)
      const { res, text } = await call(r.def.method.toUpperCase(), target)
      const what = `${r.label} ${JSON.stringify(overrides)}: ${res.status} ${text.slice(0, 300)}`
      expect(res.status, what).toBe(400)
      expect(envelopeProblem(res, text), what).toBeNull()
      expect(internalLeaks(text, target), what).toEqual([])
      const contexts = (JSON.parse(text) as { errors: { context: string }[] }).errors.map((e) => e.context)
      expect(contexts.some((c) => Object.keys(overrides).some((n) => c === `query.${n}`)), what).toBe(true)
    }
  })
})
