import { describe, expect, it } from 'vitest'
import { ROUTES } from '../../src/app'
import reference from '../fixtures/bloodhound/ce-routes.json'
import compatibility from '../../docs/compatibility.md?raw'
import { adminSession } from '../helpers'

/**
 * BloodHound Community Edition's route list (test/fixtures/bloodhound/ce-routes.json) against EdgeHound's route
 * table. Every reference route is either served (a route of the same method and path shape; BloodHound's "ANY"
 * routes by any method) or listed in docs/compatibility.md under "Routes not served yet" with its reason, and
 * the list holds nothing else: a route added later must leave the list, a route left out must be named there.
 * A listed route that has a route of its shape is a placeholder and must answer the envelope 404
 * "not implemented" (never the router's 404/405, never another route's answer).
 */
type Ref = { method: string; path: string; group: string }
const routes = (reference as { routes: Ref[] }).routes

/** `/api/v2/users/{user_id}` and `/api/v2/users/:id` both become `/api/v2/users/{}`; `{version}` is a parameter. */
const shape = (path: string) => path.replace(/\{[^}]+\}/g, '{}').replace(/:[A-Za-z_][A-Za-z0-9_]*/g, '{}')
const refMethod = (m: string) => m.replace(/\s*\(.*\)$/, '').trim()
const refKey = (r: Ref) => `${refMethod(r.method)} ${r.path}`

const served = new Set(ROUTES.map((r) => `${r.def.method.toUpperCase()} ${shape(r.def.path)}`))
const servedAnyMethod = new Set(ROUTES.map((r) => shape(r.def.path)))
function hasRoute(r: Ref): boolean {
  const m = refMethod(r.method)
  return m === 'ANY' ? servedAnyMethod.has(shape(r.path)) : served.has(`${m} ${shape(r.path)}`)
}

/** The docs' list: lines "- `METHOD /path`: reason" in the section "Routes not served yet". */
function listed(): Map<string, string> {
  const section = compatibility.split(/^## /m).find((s) => s.startsWith('Routes not served yet')) ?? ''
  const out = new Map<string, string>()
  for (const m of section.matchAll(/^- `([A-Z]+) (\/[^`]+)`:?\s*(.*)$/gm)) out.set(`${m[1]} ${m[2]}`, m[3].trim())
  return out
}

describe('BloodHound CE routes', () => {
  it('the reference holds the whole CE list (215 routes)', () => {
    expect(routes.length).toBe(215)
    expect(new Set(routes.map(refKey)).size).toBe(215)
  })

  it('every route is served or listed in docs/compatibility.md with a reason; the list names nothing else', () => {
    const docs = listed()
    // the section itself must be there (an empty list is a finding only when the section was not parsed)
    expect(compatibility).toMatch(/^## Routes not served yet$/m)
    const unaccounted = routes.filter((r) => !hasRoute(r) && !docs.has(refKey(r))).map(refKey)
    expect(unaccounted, 'served by nothing and not listed').toEqual([])
    const known = new Set(routes.map(refKey))
    expect([...docs.keys()].filter((k) => !known.has(k)), 'listed but not a BloodHound CE route').toEqual([])
    expect([...docs].filter(([, reason]) => reason.length < 10).map(([k]) => k), 'listed without a reason').toEqual([])
    expect(/^Served today: (\d+) of 215\./m.exec(compatibility)?.[1], 'the count docs/compatibility.md states').toBe(String(215 - docs.size))
  })

  it('a listed route that has a route of its shape is a placeholder answering 404 "not implemented"', async () => {
    const docs = listed()
    const placeholders = routes.filter((r) => docs.has(refKey(r)) && hasRoute(r))
    const admin = await adminSession()
    for (const r of placeholders) {
      const path = r.path.replace('{version}', 'v2').replace(/\{[^}]+\}/g, '1')
      const res = await admin.raw(refMethod(r.method) === 'ANY' ? 'GET' : refMethod(r.method), path)
      const body = (await res.json()) as { errors?: { message: string }[] }
      expect({ route: refKey(r), status: res.status, message: body.errors?.[0]?.message.startsWith('not implemented') }).toEqual({
        route: refKey(r),
        status: 404,
        message: true,
      })
    }
  })
})
