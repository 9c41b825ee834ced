/**
 * Bad input, generated from the route table: for EVERY route in ROUTES, property-based (fast-check)
 * runs of malformed path and query parameters, invalid JSON and UTF-8, wrong and missing content types,
 * bodies over the limit, schema violations (wrong types, missing members, deep nesting, huge strings and
 * arrays, `__proto__`/`constructor` keys, SQL metacharacters, odd Unicode).
 *
 * Two kinds of property:
 *  - "refused": the input is certainly invalid for the route's declared schemas. The answer must be a
 *    4xx error envelope (not 401/403/429: the caller is an administrator with unlimited budget) within
 *    the time bound, and the database digest must be the same before and after the whole run.
 *  - "survives": the input is shaped like the schema with hostile leaves and may be valid. The answer
 *    must never be a 5xx or a hang; an error must be the envelope; a refused request (4xx) must leave the
 *    database exactly as it was (digest compared around that one request).
 * The caller is the bootstrap administrator on a JWT session, so every permission check passes and the
 * input is what decides.
 */
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  changedTables,
  count,
  dbDigest,
  envelopeProblem,
  expectSameDigest,
  hAdminSession,
  hfetch,
  internalLeaks,
  objectParts,
  report,
  routeInfo,
  sampleQuery,
  type RouteInfo,
} from './lib'
import {
  hostileQuery,
  hostileSegment,
  hostileString,
  invalidBody,
  invalidJsonText,
  invalidUtf8Body,
  jsonText,
  NOT_JSON_TYPES,
  shaped,
} from './arbitraries'
import { BASE, env } from '../helpers'
import { computeSignature } from '../../src/auth/signature'
import { toBase64 } from '../../src/auth/encoding'
import { pathMatcher } from '../../src/http/route'
import { ROUTES } from '../../src/app'
import { settleRuns } from '../fixtures/findings/helpers'

/**
 * The database's digest once no analysis run is pending or running. An accepted request to an analysis route
 * (POST or PUT /api/v2/analysis, an upload job's end) starts a run in the Analyzer object that writes findings,
 * posture rows and the run itself a moment later, possibly while another route's refusal is being checked; that
 * write is not the refused request's doing, so each digest waits for the runs first.
 */
async function settledDigest() {
  await settleRuns(env.DB)
  return dbDigest()
}

/** fast-check runs per property and route; the suite's total stays within a few minutes on 2 cores. */
const RUNS = 12
const SURVIVE_RUNS = 12
const TIMEOUT = 180_000

let jwt = ''
/** Existing resources to aim hostile bodies at (so updates reach the store, not just a 404). */
const pools: Record<string, string> = {}

beforeAll(async () => {
  const admin = await hAdminSession()
  jwt = admin.jwt
  const victim = await admin.client.createUser({ principal_name: `victim-${Date.now()}`, roles: ['Read-Only'], secret: 'correct-horse-battery' })
  pools.user_id = victim.data.id
  // the collector routes (clients/Collect) take a collector client's token, which only a client holds
  const cl = await admin.client.raw('POST', '/api/v2/clients', { name: `bad-input-${Date.now()}`, type: 'azurehound', environment_id: 'T-BAD-INPUT' })
  clientToken = ((await cl.json()) as { data: { token: { id: string; key: string } } }).data.token
}, 60_000)

let clientToken: { id: string; key: string } = { id: '', key: '' }
const COLLECTOR = ROUTES.filter((r) => r.def.auth === 'clients/Collect').map((r) => ({ method: r.def.method.toUpperCase(), re: pathMatcher(r.def.path) }))

/** A collector route's request is signed with the client's token (the body read once, to be signed). */
async function asClient(method: string, target: string, body: BodyInit | null | undefined, h: Headers): Promise<BodyInit | null | undefined> {
  const path = target.split('?')[0]
  if (!COLLECTOR.some((x) => x.method === method && x.re.test(path))) return body
  const bytes = body === undefined || body === null ? new Uint8Array() : new Uint8Array(await new Response(body).arrayBuffer())
  const date = new Date().toISOString()
  // signed as the service receives it (a fragment is not sent; the URL parser normalises the rest)
  const u = new URL(BASE + target)
  const sig = await computeSignature(clientToken.key, method, u.href.slice(u.origin.length).split('#')[0], date, bytes)
  h.set('Authorization', `bhesignature ${clientToken.id}`)
  h.set('RequestDate', date)
  h.set('Signature', toBase64(sig))
  return body === undefined || body === null ? body : bytes
}

afterAll(() => report('bad-input'))

interface Sent {
  res: Response
  text: string
  /** what was sent (target and body as text), to tell echoed input from leaked internals */
  sent: string
}

async function send(method: string, target: string, body?: BodyInit | null, headers: Record<string, string> = {}): Promise<Sent> {
  const h = new Headers(headers)
  if (!h.has('authorization')) body = await asClient(method, target, body, h)
  if (!h.has('authorization')) h.set('Authorization', `Bearer ${jwt}`)
  const init: RequestInit & { duplex?: string } = { method, headers: h }
  if (body !== undefined && body !== null && method !== 'GET' && method !== 'HEAD') {
    init.body = body
    if (body instanceof ReadableStream) init.duplex = 'half'
  }
  const res = await hfetch(new Request(BASE + target, init))
  const text = await res.text()
  count('requests')
  const bodyText = typeof body === 'string' ? body : body instanceof Uint8Array ? new TextDecoder().decode(body) : ''
  return { res, text, sent: `${decodeURIComponentSafe(target)}\n${target}\n${bodyText}` }
}

function decodeURIComponentSafe(s: string): string {
  try {
    return decodeURIComponent(s)
  } catch {
    return s
  }
}

function describeCase(r: RouteInfo, what: string, detail: string) {
  return `${r.label} [${what}] ${detail.length > 300 ? `${detail.slice(0, 300)}… (${detail.length} chars)` : detail}`
}

/** The checks every error answer must pass. */
function checkError(s: Sent, where: string) {
  const p = envelopeProblem(s.res, s.text)
  expect(p, `${where}: not the error envelope (${s.res.status}): ${p}`).toBeNull()
  expect(internalLeaks(s.text, s.sent), `${where}: internal text in the answer ${s.text.slice(0, 300)}`).toEqual([])
  const env = JSON.parse(s.text) as { errors: { message: string; context: string }[] }
  for (const e of env.errors) {
    expect(e.message.length, `${where}: an error message echoes ${e.message.length} characters`).toBeLessThanOrEqual(2_000)
    expect(e.context.length, `${where}: an error context of ${e.context.length} characters`).toBeLessThanOrEqual(2_000)
  }
}

/** Refused: a 4xx envelope, never 401/403/429 for the administrator. */
function expectRefused(s: Sent, where: string, allowed: number[] = [400, 404, 405, 409, 413, 415, 422]) {
  expect(allowed, `${where}: answered ${s.res.status} ${s.text.slice(0, 300)}`).toContain(s.res.status)
  checkError(s, where)
  count('refused')
}

/** Survives: no 5xx, no hang; errors are envelopes; a refusal leaves the database untouched. */
async function expectSurvives(r: RouteInfo, run: () => Promise<Sent>, where: string) {
  const before = await settledDigest()
  const s = await run()
  // a public route's own refusals may be 401/403 (a wrong password at login); a route that recognises
  // callers verifies the administrator's JWT, so it must not refuse the administrator
  const publicRoute = r.auth === 'public' && !r.def.recognises
  expect(s.res.status, `${where}: ${s.res.status} ${s.text.slice(0, 300)}`).toBeLessThan(500)
  // no route redirects, except one that declares a redirect (GET /: the console), and then only as declared
  const declared = Object.keys(r.def.responses).map(Number).filter((n) => n >= 300 && n < 400)
  if (s.res.status >= 300 && s.res.status < 400) expect(declared, `${where}: redirect ${s.res.status}`).toContain(s.res.status)
  if (s.res.status >= 400) {
    if (!publicRoute) expect([401, 403, 429], `${where}: ${s.res.status} ${s.text.slice(0, 300)}`).not.toContain(s.res.status)
    checkError(s, where)
    const after = await settledDigest()
    expect(changedTables(before, after), `${where}: refused (${s.res.status}) but the database changed`).toEqual([])
    count('survived-refused')
  } else {
    count('survived-accepted')
  }
}

function targetOf(r: RouteInfo, path = r.samplePath(), query = sampleQuery(r.def)) {
  return path + query
}

/** A body the route certainly refuses (for cases where something else is under test). */
function refusedBody(r: RouteInfo): { body: BodyInit; headers: Record<string, string> } | null {
  if (r.bodyKind === 'json') return { body: '"not an object"', headers: { 'Content-Type': 'application/json' } }
  if (r.bodyKind === 'form' || r.bodyKind === 'raw') return { body: 'x', headers: { 'Content-Type': 'application/x-hardening-nonsense' } }
  return null
}

/** Fills path parameters from the resource pools when possible, else with sample values. */
function pooledPath(r: RouteInfo): string {
  const values = r.sampleParams()
  for (const p of r.pathParams) if (pools[p]) values[p] = encodeURIComponent(pools[p])
  return r.pathWith(values)
}

/** Path and query values tried on every run before the random ones. */
const SEGMENT_EXAMPLES = ['x'.repeat(5000), '%', '%ZZ', '%00', '__proto__', "'%20OR%201%3D1--", '%F0%9F%98%80', '..']

const ROUTES_INFO = routeInfo()

describe('bad input on every route', () => {
  it('the route table is not empty and every route is covered below', () => {
    expect(ROUTES_INFO.length).toBeGreaterThan(10)
    count('routes', ROUTES_INFO.length)
  })

  for (const r of ROUTES_INFO) {
    describe(r.label, () => {
      if (r.pathParams.length > 0) {
        it('malformed path parameters: 4xx envelope, nothing stored', { timeout: TIMEOUT }, async () => {
          const before = await settledDigest()
          const bad = refusedBody(r)
          await fc.assert(
            fc.asyncProperty(fc.constantFrom(...r.pathParams), hostileSegment, fc.boolean(), async (param, seg, all) => {
              const values = r.sampleParams()
              for (const p of r.pathParams) if (all || p === param) values[p] = seg
              const target = r.pathWith(values) + sampleQuery(r.def)
              // A dot segment (`%2e%2e`) is resolved by the URL parser before the Worker sees the request, which
              // is then for another, shorter path: /api/v2/saved-queries/%2e%2e/permissions is GET
              // /api/v2/permissions, a route of its own. Such a case must survive (no 5xx, envelopes, nothing
              // changed by a refusal), not be refused: it no longer addresses this route.
              const moved = new URL(BASE + target).pathname.split('/').length !== target.split('?')[0].split('/').length
              if (moved) return expectSurvives(r, () => send(r.method, target, bad?.body, bad?.headers), describeCase(r, 'path', target))
              const s = await send(r.method, target, bad?.body, bad?.headers)
              expectRefused(s, describeCase(r, 'path', target))
            }),
            // the classics run every time (fast-check's examples), the random ones on top
            { numRuns: RUNS, examples: r.pathParams.flatMap((p) => SEGMENT_EXAMPLES.map((seg) => [p, seg, false] as [string, string, boolean])) },
          )
          expectSameDigest(before, await settledDigest(), r.label)
        })
      }

      if (r.def.query || r.method === 'GET') {
        it('malformed and hostile query strings: never 5xx, refusals change nothing', { timeout: TIMEOUT }, async () => {
          const keys = r.def.query ? Object.keys(objectParts(r.def.query)?.shape ?? {}) : []
          const bad = refusedBody(r)
          await fc.assert(
            fc.asyncProperty(hostileQuery(keys), async (q) => {
              const target = `${r.samplePath()}?${q}`
              await expectSurvives(r, () => send(r.method, target, bad?.body, bad?.headers), describeCase(r, 'query', target))
            }),
            { numRuns: SURVIVE_RUNS, examples: keys.flatMap((k) => SEGMENT_EXAMPLES.map((v) => [`${k}=${v}`] as [string])) },
          )
        })
      }

      if (r.method !== 'GET') {
        it('bodies over the limit: 413 before anything is read (with and without Content-Length)', { timeout: TIMEOUT }, async () => {
          const before = await settledDigest()
          const ct = r.bodyKind === 'form' ? 'multipart/form-data; boundary=b' : r.bodyKind === 'raw' ? ((r.def.body as { contentTypes: string[] }).contentTypes[0] ?? 'application/octet-stream') : 'application/json'
          const target = targetOf(r)
          for (const size of [r.maxBytes + 1, Math.min(r.maxBytes * 2, r.maxBytes + 4 * 1024 * 1024)]) {
            const bytes = new Uint8Array(size).fill(0x20)
            bytes[0] = 0x5b // '[' so that a JSON route sees "JSON" if it ever reads it
            expectRefused(await send(r.method, target, bytes, { 'Content-Type': ct }), describeCase(r, 'oversize', `${size} bytes`), [413])
          }
          const chunk = new Uint8Array(64 * 1024).fill(0x20)
          let sent = 0
          const stream = new ReadableStream<Uint8Array>({
            pull(ctrl) {
              if (sent > r.maxBytes + chunk.length) return ctrl.close()
              sent += chunk.length
              ctrl.enqueue(chunk)
            },
          })
          expectRefused(await send(r.method, target, stream, { 'Content-Type': ct }), describeCase(r, 'oversize', 'streamed, no Content-Length'), [413])
          expectSameDigest(before, await settledDigest(), r.label)
        })
      }

      if (r.bodyKind === 'json') {
        const schema = (r.def.body as { schema: unknown }).schema
        it('invalid JSON text and invalid UTF-8: 400', { timeout: TIMEOUT }, async () => {
          const before = await settledDigest()
          const target = targetOf(r, pooledPath(r))
          await fc.assert(
            fc.asyncProperty(invalidJsonText, async (text) => {
              expectRefused(await send(r.method, target, text, { 'Content-Type': 'application/json' }), describeCase(r, 'invalid JSON', JSON.stringify(text)), [400, 413])
            }),
            { numRuns: RUNS },
          )
          await fc.assert(
            fc.asyncProperty(invalidUtf8Body, async (bytes) => {
              expectRefused(await send(r.method, target, bytes, { 'Content-Type': 'application/json' }), describeCase(r, 'invalid UTF-8', [...bytes].join(',')), [400])
            }),
            { numRuns: RUNS },
          )
          expectSameDigest(before, await settledDigest(), r.label)
        })

        it('wrong and missing content types: 415', { timeout: TIMEOUT }, async () => {
          const before = await settledDigest()
          const target = targetOf(r, pooledPath(r))
          await fc.assert(
            fc.asyncProperty(fc.constantFrom(...NOT_JSON_TYPES, null), async (ct) => {
              const bytes = new TextEncoder().encode('{}')
              const s = await send(r.method, target, bytes, ct === null ? {} : { 'Content-Type': ct })
              expectRefused(s, describeCase(r, 'content type', String(ct)), [415])
            }),
            { numRuns: Math.min(RUNS, NOT_JSON_TYPES.length + 1) },
          )
          expectSameDigest(before, await settledDigest(), r.label)
        })

        const invalid = invalidBody(schema)
        if (invalid) {
          it('schema violations (wrong types, missing members, deep nesting, huge arrays, __proto__ keys): 4xx', { timeout: TIMEOUT }, async () => {
            const before = await settledDigest()
            const target = targetOf(r, pooledPath(r))
            await fc.assert(
              fc.asyncProperty(invalid, async (v) => {
                const text = jsonText(v)
                expectRefused(await send(r.method, target, text, { 'Content-Type': 'application/json' }), describeCase(r, 'schema violation', text), [400, 404, 413])
              }),
              { numRuns: RUNS * 2 },
            )
            expectSameDigest(before, await settledDigest(), r.label)
          })
        }

        it('schema-shaped hostile values (SQL metacharacters, odd Unicode, huge strings): never 5xx', { timeout: TIMEOUT }, async () => {
          const target = targetOf(r, pooledPath(r))
          await fc.assert(
            fc.asyncProperty(shaped(schema), async (v) => {
              const text = jsonText(v)
              await expectSurvives(r, () => send(r.method, target, text, { 'Content-Type': 'application/json' }), describeCase(r, 'hostile values', text))
            }),
            { numRuns: SURVIVE_RUNS },
          )
        })
      }

      if (r.bodyKind === 'form') {
        const schema = (r.def.body as { schema: unknown }).schema
        const shape = objectParts(schema)?.shape ?? {}
        const keys = Object.keys(shape)
        it('wrong content types and malformed multipart: 4xx, nothing stored', { timeout: TIMEOUT }, async () => {
          const before = await settledDigest()
          const target = targetOf(r, pooledPath(r))
          const cases: { ct: string | null; body: string; expect: number[] }[] = [
            // a form route that also takes JSON (`json` in its body spec: PATCH of an SSO provider, JSON for OIDC ones)
            // validates it instead: 400 (these values), 404 (no such resource) or 415 (this resource takes the form)
            { ct: 'application/json', body: JSON.stringify(Object.fromEntries(keys.map((k) => [k, 'x']))), expect: (r.def.body as { json?: unknown }).json ? [400, 404, 415] : [415] },
            { ct: null, body: 'name=x', expect: [415] },
            { ct: 'application/x-www-form-urlencoded', body: keys.map((k) => `${k}=x`).join('&'), expect: [415] },
            { ct: 'text/xml', body: '<x/>', expect: [415] },
            { ct: 'multipart/form-data', body: '--x\r\nContent-Disposition: form-data; name="name"\r\n\r\nx\r\n--x--\r\n', expect: [400] },
            { ct: 'multipart/form-data; boundary=x', body: 'garbage without any boundary', expect: [400] },
            { ct: 'multipart/form-data; boundary=x', body: '--x\r\nContent-Disposition: form-data; name="name"\r\n\r\nunterminated', expect: [400] },
            // well-formed but empty / only a hostile key: 400, or 404 when every field is optional (an update
            // of a resource that does not exist)
            { ct: 'multipart/form-data; boundary=x', body: '--x--\r\n', expect: [400, 404] },
            { ct: 'multipart/form-data; boundary=x', body: '--x\r\nContent-Disposition: form-data; name="__proto__"\r\n\r\n{"polluted":1}\r\n--x--\r\n', expect: [400, 404] },
          ]
          for (const c of cases) {
            const s = await send(r.method, target, new TextEncoder().encode(c.body), c.ct === null ? {} : { 'Content-Type': c.ct })
            expectRefused(s, describeCase(r, 'multipart', `${c.ct}: ${c.body}`), c.expect)
          }
          expectSameDigest(before, await settledDigest(), r.label)
        })

        it('forms with hostile, missing, duplicated and extra fields: never 5xx, refusals change nothing', { timeout: TIMEOUT }, async () => {
          const target = targetOf(r, pooledPath(r))
          const field = fc.oneof(
            hostileString.map((s) => ({ kind: 'text' as const, value: s })),
            fc.uint8Array({ maxLength: 2048 }).map((b) => ({ kind: 'file' as const, value: b })),
            hostileString.map((s) => ({ kind: 'file' as const, value: new TextEncoder().encode(s) })),
          )
          const entry = fc.tuple(fc.oneof(fc.constantFrom(...(keys.length ? keys : ['x'])), fc.constantFrom('__proto__', 'constructor', 'name[]', '', "'")), field)
          await fc.assert(
            fc.asyncProperty(fc.array(entry, { maxLength: 6 }), async (entries) => {
              const form = new FormData()
              for (const [k, f] of entries) {
                if (f.kind === 'text') form.append(k, f.value.replace(/[\ud800-\udfff]/g, '?'))
                else form.append(k, new File([f.value], 'metadata.xml', { type: 'text/xml' }))
              }
              const res = new Response(form)
              const bytes = new Uint8Array(await res.arrayBuffer())
              const ct = res.headers.get('content-type') ?? ''
              await expectSurvives(r, () => send(r.method, target, bytes, { 'Content-Type': ct }), describeCase(r, 'form', entries.map(([k]) => k).join(',')))
            }),
            { numRuns: SURVIVE_RUNS },
          )
        })
      }

      if (r.bodyKind === 'raw') {
        const types = (r.def.body as { contentTypes: string[] }).contentTypes
        it('raw body: wrong content types 415; hostile bytes never 5xx', { timeout: TIMEOUT }, async () => {
          const before = await settledDigest()
          const target = targetOf(r, pooledPath(r))
          // a route reading a body without Content-Type as JSON (POST /api/v2/ingest: AzureHound sends none) is not asked to refuse it
          const missingOk = !!(r.def.body as { missingTypeIs?: string }).missingTypeIs
          for (const ct of ['text/plain', 'application/x-hardening', 'multipart/form-data; boundary=x', null].filter((t) => (t === null ? !missingOk : !types.includes(t)))) {
            const s = await send(r.method, target, new TextEncoder().encode('{}'), ct === null ? {} : { 'Content-Type': ct })
            expectRefused(s, describeCase(r, 'raw content type', String(ct)), [415])
          }
          expectSameDigest(before, await settledDigest(), r.label)
          await fc.assert(
            fc.asyncProperty(
              fc.constantFrom(...types),
              fc.oneof(
                fc.uint8Array({ maxLength: 4096 }),
                invalidJsonText.map((t) => new TextEncoder().encode(t)),
                invalidUtf8Body,
                shaped(undefined).map((v) => new TextEncoder().encode(jsonText(v))),
              ),
              async (ct, bytes) => {
                await expectSurvives(r, () => send(r.method, target, bytes, { 'Content-Type': ct }), describeCase(r, 'raw bytes', `${ct} ${bytes.length} bytes`))
              },
            ),
            { numRuns: SURVIVE_RUNS },
          )
        })
      }
    })
  }

  // Runs last (tests run in declaration order): every body above carried `__proto__` / `constructor`
  // payloads through JSON.parse, zod and the handlers of this very isolate.
  it('no prototype pollution after all of the above', () => {
    const probe = {} as Record<string, unknown>
    for (const k of ['polluted', 'isAdmin', 'roles']) {
      expect(probe[k], `Object.prototype.${k}`).toBeUndefined()
      expect(Object.prototype.hasOwnProperty.call(Object.prototype, k)).toBe(false)
    }
  })
})
