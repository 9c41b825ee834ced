import { env } from 'cloudflare:workers'
import { describe, expect, it } from 'vitest'
import { ROUTES, createApp } from '../../src/app'
import { routeOrder, type RouteEntry } from '../../src/http/route'

/**
 * A literal path segment always beats a parameter (routeOrder, src/http/route.ts). The walk dispatches
 * through createApp, with each route's handlers replaced by one that names the route, so what is checked is
 * which route Hono actually runs for a path, not the sort itself:
 *  - for every two routes of one method that can match a common path and differ in which positions are
 *    parameters, that path goes to the route with a literal at the first such position;
 *  - every route still answers its own paths (parameters filled with a value no literal has).
 */
const BASE = 'http://edgehound.test'
const key = (r: RouteEntry) => `${r.def.method.toUpperCase()} ${r.def.path}`
const segs = (p: string) => p.split('/').filter(Boolean)
const isParam = (s: string) => s.startsWith(':')

function stubbed(routes: RouteEntry[]): RouteEntry[] {
  return routes.map((r) => ({ def: r.def, handlers: [async (c) => c.text(key(r), 200, { 'X-Route': key(r) })] }))
}

async function answeredBy(app: ReturnType<typeof createApp>, method: string, path: string): Promise<string | null> {
  const res = await app.request(`${BASE}${path}`, { method }, env)
  return res.headers.get('X-Route')
}

/** The concrete path both routes match (literals of either, a plain value where both have parameters), or null. */
function commonPath(a: string[], b: string[]): string | null {
  if (a.length !== b.length) return null
  const out: string[] = []
  for (let i = 0; i < a.length; i++) {
    if (!isParam(a[i]) && !isParam(b[i])) {
      if (a[i] !== b[i]) return null
      out.push(a[i])
    } else out.push(isParam(a[i]) ? (isParam(b[i]) ? 'p1' : b[i]) : a[i])
  }
  return '/' + out.join('/')
}

describe('route matching: a literal segment beats a parameter', () => {
  // The table as declared, and reversed: which route wins must not depend on the order of declaration.
  it.each([
    ['as declared', ROUTES],
    ['reversed', [...ROUTES].reverse()],
  ])('every pair of overlapping routes (%s): the path goes to the route with the first literal', async (_, table) => {
    const app = createApp(stubbed(table))
    let pairs = 0
    const wrong: string[] = []
    for (const a of ROUTES)
      for (const b of ROUTES) {
        if (a === b || a.def.method !== b.def.method) continue
        const sa = segs(a.def.path)
        const sb = segs(b.def.path)
        const path = commonPath(sa, sb)
        if (!path) continue
        const first = sa.findIndex((s, i) => isParam(s) !== isParam(sb[i]))
        if (first === -1 || isParam(sa[first])) continue // a must be the one with the literal
        pairs++
        const got = await answeredBy(app, a.def.method.toUpperCase(), path)
        if (got !== key(a)) wrong.push(`${a.def.method.toUpperCase()} ${path}: answered by ${got}, expected ${key(a)} (over ${b.def.path})`)
      }
    expect(wrong).toEqual([])
    // the table has such pairs: file-upload/start, analysis/status and saved-queries/export beside a parameter
    expect(pairs).toBeGreaterThanOrEqual(3)
  })

  it('every route answers its own paths', async () => {
    const app = createApp(stubbed(ROUTES))
    const wrong: string[] = []
    for (const r of ROUTES) {
      const path = '/' + segs(r.def.path).map((s) => (isParam(s) ? 'p1' : s)).join('/')
      const got = await answeredBy(app, r.def.method.toUpperCase(), path)
      if (got !== key(r)) wrong.push(`${key(r)}: ${path} answered by ${got}`)
    }
    expect(wrong).toEqual([])
  })

  it('the order does not depend on where a route is declared', () => {
    const a = { def: { path: '/x/:id' } }
    const b = { def: { path: '/x/status' } }
    const c = { def: { path: '/x/:id/y' } }
    const d = { def: { path: '/x/z/:id' } }
    expect(routeOrder([a, b]).map((r) => r.def.path)).toEqual(['/x/status', '/x/:id'])
    expect(routeOrder([b, a]).map((r) => r.def.path)).toEqual(['/x/status', '/x/:id'])
    expect(routeOrder([c, d]).map((r) => r.def.path)).toEqual(['/x/z/:id', '/x/:id/y'])
    // same shape: declared order kept
    const e = { def: { path: '/x/:other' } }
    expect(routeOrder([e, a]).map((r) => r.def.path)).toEqual(['/x/:other', '/x/:id'])
  })
})
