/**
 * The authentication and authorisation matrix, generated from the route table:
 *
 *   every route in ROUTES × { no credentials, malformed Authorization (9 shapes), unknown schemes,
 *   bad signatures (3 shapes), a signature replayed with another method or with its UTC offset
 *   rewritten (3 shapes), RequestDate 61 minutes old or ahead, a revoked token, a deleted user's
 *   token, a disabled user's token and session, an expired JWT, a logged-out JWT, forged JWTs (other
 *   key, alg none, unknown session), each role by token, the administrator by session }
 *
 * Expected statuses follow from `def.auth` and ROLE_PERMISSIONS alone:
 *   - public route: credentials are ignored, so every row answers what the anonymous row answers;
 *   - public route that recognises a caller (`recognises`, today GET /api/v2/sso-providers): no credential
 *     (or a blank header) answers as anonymous; any failed credential is a 401 as on an authenticated route;
 *     a role without the `recognises` permission gets exactly the anonymous answer (status and body); a
 *     role holding it neither 401, 403 nor 5xx (what each caller sees: test/integration/oidc-signin.test.ts);
 *   - any failed credential on a non-public route: 401 with the envelope and WWW-Authenticate;
 *   - a role without the route's permission: 403 with the envelope;
 *   - a role with it: neither 401 nor 403 (the placeholder input may still be a 400 or 404).
 * A 2xx where a refusal is expected fails the suite, and so does any answer carrying a token key (except
 * token creation), a password hash or internal error text.
 *
 * Then "an environment the caller may not see": every GET route that takes an environment (a path or
 * query parameter named domain_id / environment_id / …) is called by a user whose environment_access
 * excludes it. It must answer 404 exactly as for an environment that does not exist, while an
 * all-environment user gets a different answer; and no GET route may show that user anything of the
 * hidden environment.
 *
 * Matrix requests go through the app with the worker's own bindings (production rate limits); fixtures
 * are created with generous limits (HARD_ENV). Both call createApp(ROUTES).fetch in the test isolate,
 * which is what the worker's default export is (see hfetch in lib.ts for why not exports.default.fetch).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { computeSignature } from '../../src/auth/signature'
import { signSession } from '../../src/auth/jwt'
import { toBase64 } from '../../src/auth/encoding'
import { ROLE_PERMISSIONS, ROLES, type Role } from '../../src/auth/permissions'
import type { EdgeHoundClient } from '../../src/client'
import { BASE } from '../helpers'
import { NEW_ID_SQL } from '../../src/graph/ids'
import {
  count,
  env,
  envelopeProblem,
  hAdminSession,
  hclient,
  hfetch,
  internalLeaks,
  objectParts,
  poolIp,
  report,
  rolesAllowed,
  routeInfo,
  sampleQuery,
  seedCrossEnvironmentFindings,
  type RouteInfo,
} from './lib'

const ROUTES_INFO = routeInfo()
/** The failing-credential rows that send no credential at all (a blank Authorization header is none). */
const NO_CREDENTIAL = new Set(['no credentials', 'malformed: whitespace only'])
let admin: EdgeHoundClient
/** every token key this file ever saw; none may appear in any answer but token creation */
const knownKeys = new Set<string>()

interface Tok {
  id: string
  key: string
  userId: string
}

async function newUser(roles: Role[], opts: { secret?: string; environment_access?: string[] } = {}) {
  const u = await admin.createUser({
    principal_name: `matrix-${crypto.randomUUID()}`,
    roles,
    ...(opts.secret ? { secret: opts.secret } : {}),
    ...(opts.environment_access ? { all_environments: false, environment_access: opts.environment_access } : {}),
  })
  return u.data
}

async function newToken(userId: string): Promise<Tok> {
  const t = await admin.createToken(`matrix-${crypto.randomUUID()}`, userId)
  knownKeys.add(t.data.key)
  return { id: t.data.id, key: t.data.key, userId }
}

async function loginJwt(name: string, secret: string): Promise<string> {
  return (await hclient().login(name, secret)).data.session_token
}

const SECRET = 'matrix-secret-0123456789'

// ---- building requests ---------------------------------------------------------------------------

interface Placeholder {
  method: string
  target: string
  body: Uint8Array | null
  contentType?: string
}

function placeholder(r: RouteInfo, target = r.samplePath() + sampleQuery(r.def)): Placeholder {
  const enc = (s: string) => new TextEncoder().encode(s)
  if (r.bodyKind === 'json') return { method: r.method, target, body: enc('{}'), contentType: 'application/json' }
  if (r.bodyKind === 'form')
    return {
      method: r.method,
      target,
      body: enc('--b\r\nContent-Disposition: form-data; name="x"\r\n\r\nx\r\n--b--\r\n'),
      contentType: 'multipart/form-data; boundary=b',
    }
  if (r.bodyKind === 'raw') return { method: r.method, target, body: enc('{}'), contentType: (r.def.body as { contentTypes: string[] }).contentTypes[0] }
  return { method: r.method, target, body: null }
}

function request(p: Placeholder, headers: Record<string, string>): Request {
  const h = new Headers(headers)
  if (p.contentType) h.set('Content-Type', p.contentType)
  // production limits through the real worker, from a small pool of client IPs (see poolIp)
  h.set('CF-Connecting-IP', poolIp())
  return new Request(BASE + p.target, { method: p.method, headers: h, body: p.body })
}

async function signedHeaders(
  p: Placeholder,
  tok: { id: string; key: string },
  o: { date?: Date; signMethod?: string; signTarget?: string; key?: string; scheme?: string; rewriteOffset?: number } = {},
): Promise<Record<string, string>> {
  const date = (o.date ?? new Date()).toISOString()
  const sig = await computeSignature(o.key ?? tok.key, o.signMethod ?? p.method, o.signTarget ?? p.target, date, p.body ?? new Uint8Array())
  const sent = o.rewriteOffset === undefined ? date : rewriteOffset(date, o.rewriteOffset)
  return { Authorization: `${o.scheme ?? 'svcsignature'} ${tok.id}`, RequestDate: sent, Signature: toBase64(sig) }
}

/**
 * A replayer's copy of a captured RequestDate (issue 18 item 3): the same signed "YYYY-MM-DDTHH", the offset
 * replaced by `offMin` minutes, and the minutes chosen to bring the claimed instant as close to now as possible.
 */
function rewriteOffset(signed: string, offMin: number): string {
  const hour = Date.parse(`${signed.slice(0, 13)}:00:00Z`)
  const m = Math.min(Math.max(Date.now() + offMin * 60_000 - hour, 0), 3_599_999)
  const pad = (n: number) => String(n).padStart(2, '0')
  const off = `${offMin < 0 ? '-' : '+'}${pad(Math.floor(Math.abs(offMin) / 60))}:${pad(Math.abs(offMin) % 60)}`
  return new Date(hour + m).toISOString().replace('Z', '') + off
}

const b64url = (s: string) => btoa(s).replace(/=+$/, '').replace(/\+/g, '-').replace(/\//g, '_')

// ---- fixtures ------------------------------------------------------------------------------------

const fx = {} as {
  live: Tok // an Administrator token that works
  revoked: Tok
  deletedUser: Tok
  disabledTok: Tok
  disabledJwt: string
  expiredJwt: string
  loggedOutJwt: string
  otherKeyJwt: string
  algNoneJwt: string
  unknownSessionJwt: string
}

const roleTokens = {} as Record<Role, Tok>
const adminJwt = { name: '', jwt: '' }

type Scenario = { name: string; headers: (p: Placeholder) => Promise<Record<string, string>> | Record<string, string> }

const minutes = (m: number) => new Date(Date.now() + m * 60_000)

const FAILING: Scenario[] = [
  { name: 'no credentials', headers: () => ({}) },
  { name: 'malformed: svcsignature without token id', headers: () => ({ Authorization: 'svcsignature' }) },
  { name: 'malformed: token id is not a UUID', headers: async (p) => ({ ...(await signedHeaders(p, fx.live)), Authorization: 'svcsignature not-a-uuid' }) },
  { name: 'malformed: Bearer without token', headers: () => ({ Authorization: 'Bearer' }) },
  { name: 'malformed: Bearer garbage', headers: () => ({ Authorization: 'Bearer abc.def.ghi' }) },
  {
    name: 'malformed: missing RequestDate',
    headers: async (p) => {
      const h = await signedHeaders(p, fx.live)
      delete h.RequestDate
      return h
    },
  },
  { name: 'malformed: RequestDate not RFC 3339', headers: async (p) => ({ ...(await signedHeaders(p, fx.live)), RequestDate: new Date().toUTCString() }) },
  {
    name: 'malformed: missing Signature',
    headers: async (p) => {
      const h = await signedHeaders(p, fx.live)
      delete h.Signature
      return h
    },
  },
  { name: 'malformed: Signature not base64', headers: async (p) => ({ ...(await signedHeaders(p, fx.live)), Signature: '!!!not base64!!!' }) },
  { name: 'malformed: whitespace only', headers: () => ({ Authorization: '   ' }) },
  { name: 'unknown scheme: Basic', headers: () => ({ Authorization: `Basic ${btoa(`admin:${'test-admin-password'}`)}` }) },
  { name: 'unknown scheme: Digest', headers: () => ({ Authorization: 'Digest username="admin", realm="x", nonce="1", response="2"' }) },
  { name: 'unknown scheme: Token <valid id>', headers: async (p) => ({ ...(await signedHeaders(p, fx.live)), Authorization: `Token ${fx.live.id}` }) },
  { name: 'unknown scheme: HMAC-SHA256', headers: async (p) => ({ ...(await signedHeaders(p, fx.live)), Authorization: `HMAC-SHA256 ${fx.live.id}` }) },
  { name: 'bad signature: signed for another target', headers: (p) => signedHeaders(p, fx.live, { signTarget: `${p.target}x` }) },
  { name: 'bad signature: wrong key', headers: (p) => signedHeaders(p, fx.live, { key: fx.revoked.key }) },
  {
    name: 'bad signature: one byte flipped',
    headers: async (p) => {
      const h = await signedHeaders(p, fx.live)
      const raw = atob(h.Signature)
      h.Signature = btoa(String.fromCharCode(raw.charCodeAt(0) ^ 1) + raw.slice(1))
      return h
    },
  },
  { name: 'replay: signature made for another method', headers: (p) => signedHeaders(p, fx.live, { signMethod: p.method === 'GET' ? 'POST' : 'GET' }) },
  { name: 'RequestDate 61 minutes old', headers: (p) => signedHeaders(p, fx.live, { date: minutes(-61) }) },
  // replays whose UTC offset was rewritten (the live token signs in UTC, so the service remembers +00:00)
  { name: 'replay: signed 20 h ago, offset rewritten to -20:00', headers: (p) => signedHeaders(p, fx.live, { date: minutes(-20 * 60), rewriteOffset: -20 * 60 }) },
  { name: 'replay: signed 12 h ago, offset rewritten to -12:00', headers: (p) => signedHeaders(p, fx.live, { date: minutes(-12 * 60), rewriteOffset: -12 * 60 }) },
  { name: 'replay: signed 2 h 6 min ago, offset rewritten to -01:00', headers: (p) => signedHeaders(p, fx.live, { date: minutes(-126), rewriteOffset: -60 }) },
  { name: 'RequestDate 61 minutes ahead', headers: (p) => signedHeaders(p, fx.live, { date: minutes(61) }) },
  { name: 'revoked token', headers: (p) => signedHeaders(p, fx.revoked) },
  { name: "deleted user's token", headers: (p) => signedHeaders(p, fx.deletedUser) },
  { name: "disabled user's token", headers: (p) => signedHeaders(p, fx.disabledTok) },
  { name: "disabled user's session", headers: () => ({ Authorization: `Bearer ${fx.disabledJwt}` }) },
  { name: 'expired JWT', headers: () => ({ Authorization: `Bearer ${fx.expiredJwt}` }) },
  { name: 'logged-out JWT', headers: () => ({ Authorization: `Bearer ${fx.loggedOutJwt}` }) },
  { name: 'JWT signed with another key', headers: () => ({ Authorization: `Bearer ${fx.otherKeyJwt}` }) },
  { name: 'JWT with alg none', headers: () => ({ Authorization: `Bearer ${fx.algNoneJwt}` }) },
  { name: 'JWT of an unknown session', headers: () => ({ Authorization: `Bearer ${fx.unknownSessionJwt}` }) },
]

beforeAll(async () => {
  admin = (await hAdminSession()).client
  const adminUser = async () => newUser(['Administrator'], { secret: SECRET })

  fx.live = await newToken((await adminUser()).id)

  fx.revoked = await newToken((await adminUser()).id)
  await admin.revokeToken(fx.revoked.id)

  const gone = await adminUser()
  fx.deletedUser = await newToken(gone.id)
  await admin.deleteUser(gone.id)

  const dis = await adminUser()
  fx.disabledTok = await newToken(dis.id)
  fx.disabledJwt = await loginJwt(dis.principal_name, SECRET)
  await admin.updateUser(dis.id, { is_disabled: true })

  // An expired JWT for a session that exists and is not ended: only `exp` is wrong.
  const exp = await adminUser()
  const live = await loginJwt(exp.principal_name, SECRET)
  const claims = JSON.parse(atob(live.split('.')[1].replace(/-/g, '+').replace(/_/g, '/'))) as { jti: string; sub: string }
  const nowS = Math.floor(Date.now() / 1000)
  fx.expiredJwt = await signSession({ jti: claims.jti, sub: claims.sub, iat: nowS - 9 * 3600, exp: nowS - 3600 }, env.JWT_SIGNING_KEY)
  fx.otherKeyJwt = await signSession({ jti: claims.jti, sub: claims.sub, iat: nowS, exp: nowS + 3600 }, 'another-signing-key-0123456789abcdef0123456789')
  fx.algNoneJwt = `${b64url('{"alg":"none","typ":"JWT"}')}.${b64url(JSON.stringify({ jti: claims.jti, sub: claims.sub, iat: nowS, exp: nowS + 3600 }))}.`
  fx.unknownSessionJwt = await signSession({ jti: crypto.randomUUID(), sub: claims.sub, iat: nowS, exp: nowS + 3600 }, env.JWT_SIGNING_KEY)

  const out = await adminUser()
  fx.loggedOutJwt = await loginJwt(out.principal_name, SECRET)
  const lo = await hclient({ kind: 'bearer', jwt: fx.loggedOutJwt }).logout()
  expect(lo.data.sessions_ended).toBe(1)

  expect(fx.live.key, 'token key format changed: update KEY_SHAPE').toMatch(new RegExp(`^${KEY_SHAPE.source}$`))
  // One token per role, shared by every route (no route revokes its caller's token: the sample ids of
  // DELETE routes are random), and an administrator session.
  for (const role of ROLES) roleTokens[role] = await newToken((await newUser([role])).id)
  const sessionUser = await adminUser()
  adminJwt.name = sessionUser.principal_name
  adminJwt.jwt = await loginJwt(sessionUser.principal_name, SECRET)

  // The fixtures are what they claim: the live token works, the others do not (checked once here).
  const probe = { method: 'GET', target: '/api/version', body: null }
  expect((await hfetch(request(probe, await signedHeaders(probe, fx.live)), env as unknown as Env)).status).toBe(200)
}, 120_000)

afterAll(() => report('auth-matrix'))

// ---- checks --------------------------------------------------------------------------------------

interface Answer {
  scenario: string
  status: number
  text: string
  res: Response
}

async function call(p: Placeholder, headers: Record<string, string>, scenario: string, via: 'worker' | 'hard' = 'worker'): Promise<Answer> {
  const req = request(p, headers)
  const res = await hfetch(req, via === 'worker' ? (env as unknown as Env) : undefined)
  const text = await res.text()
  count('requests')
  return { scenario, status: res.status, text, res }
}

/**
 * Token keys are 40 random bytes in standard base64 (56 characters ending in "="): candidates are found
 * with one linear scan and looked up in the set (scanning each answer for each of hundreds of keys was
 * quadratic on the OpenAPI document). beforeAll checks that real keys have this shape.
 */
const KEY_SHAPE = /[A-Za-z0-9+/]{54}==/g

/** What no answer may ever carry. */
function leaks(r: RouteInfo, a: Answer): string[] {
  const out: string[] = []
  const tokenCreation = r.method === 'POST' && r.def.path === '/api/v2/tokens' && a.status < 300
  if (!tokenCreation) for (const k of a.text.match(KEY_SHAPE) ?? []) if (knownKeys.has(k)) out.push(`${a.scenario}: answer carries a token key`)
  if (/pbkdf2|password_hash|key_sealed/i.test(a.text)) out.push(`${a.scenario}: answer carries a password hash or sealed key`)
  const internal = internalLeaks(a.text, r.samplePath())
  if (internal.length) out.push(`${a.scenario}: internal text ${internal.join(', ')}`)
  return out
}

function expectStatus(a: Answer, expected: number, problems: string[]) {
  if (a.status !== expected) {
    problems.push(`${a.scenario}: expected ${expected}, got ${a.status}${a.status < 300 ? ' (ACCEPTED A REQUEST IT SHOULD REFUSE)' : ''}: ${a.text.slice(0, 200)}`)
    return
  }
  const e = envelopeProblem(a.res, a.text)
  if (e) problems.push(`${a.scenario}: ${expected} without the envelope: ${e}`)
  if (expected === 401 && !a.res.headers.get('www-authenticate')) problems.push(`${a.scenario}: 401 without WWW-Authenticate`)
}

describe('authentication and authorisation matrix (every route)', () => {
  it('covers every route of the table', () => {
    expect(ROUTES_INFO.length).toBeGreaterThan(10)
    count('routes', ROUTES_INFO.length)
  })

  for (const r of ROUTES_INFO) {
    it(`${r.label} (${r.auth})`, { timeout: 120_000 }, async () => {
      const problems: string[] = []
      const answers: Answer[] = []
      const p0 = placeholder(r)
      const anon = await call(p0, {}, 'no credentials (baseline)')
      answers.push(anon)

      for (const s of FAILING) {
        const p = placeholder(r)
        const a = await call(p, await s.headers(p), s.name)
        answers.push(a)
        count('credential cases')
        if (r.def.recognises) {
          // A credential sent must verify; a blank header is no credential (as everywhere).
          if (NO_CREDENTIAL.has(s.name)) {
            if (a.status !== anon.status) problems.push(`${s.name}: answered ${a.status}, anonymous got ${anon.status}`)
          } else expectStatus(a, 401, problems)
        } else if (r.auth === 'public') {
          // Credentials are not looked at on a public route: the answer is the anonymous one.
          if (a.status !== anon.status) problems.push(`${s.name}: public route answered ${a.status}, anonymous got ${anon.status}`)
        } else expectStatus(a, 401, problems)
      }

      const allowed = rolesAllowed(r.auth)
      for (const role of ROLES) {
        const tok = roleTokens[role]
        const p = placeholder(r)
        const a = await call(p, await signedHeaders(p, tok), `role ${role} (token)`)
        answers.push(a)
        count('role cases')
        if (r.def.recognises) {
          if (a.status >= 500 || a.status === 401 || a.status === 403) problems.push(`role ${role}: recognised route answered ${a.status}: ${a.text.slice(0, 200)}`)
          else if (!ROLE_PERMISSIONS[role].includes(r.def.recognises) && (a.status !== anon.status || strip(a.text) !== strip(anon.text)))
            problems.push(`role ${role}: lacks ${r.def.recognises} but its answer differs from the anonymous one: ${a.text.slice(0, 200)}`)
          continue
        }
        if (r.auth === 'public') continue
        if (allowed.includes(role)) {
          if (a.status === 401 || a.status === 403 || a.status >= 500)
            problems.push(`role ${role}: holds ${r.auth} but got ${a.status}: ${a.text.slice(0, 200)}`)
        } else expectStatus(a, 403, problems)
      }
      // The administrator on a JWT session. A route may end the caller's sessions (logout does, as the
      // last row of its test), so the session is renewed when it no longer works.
      const probe = await hfetch(new Request(`${BASE}/api/version`, { headers: { Authorization: `Bearer ${adminJwt.jwt}` } }))
      if (probe.status === 401) adminJwt.jwt = await loginJwt(adminJwt.name, SECRET)
      const a = await call(p0, { Authorization: `Bearer ${adminJwt.jwt}` }, 'role Administrator (session)')
      answers.push(a)
      count('role cases')
      // The collector routes (clients/Collect) are held by collector client tokens only, administrators
      // included (src/auth/permissions.ts CLIENT_ROLE; their own suite is client-scope.test.ts): a 403 there.
      if (r.def.recognises && (a.status === 401 || a.status === 403 || a.status >= 500)) problems.push(`Administrator session: got ${a.status}: ${a.text.slice(0, 200)}`)
      else if (r.auth !== 'public' && !allowed.includes('Administrator')) expectStatus(a, 403, problems)
      else if (r.auth !== 'public' && (a.status === 401 || a.status === 403 || a.status >= 500))
        problems.push(`Administrator session: got ${a.status}: ${a.text.slice(0, 200)}`)

      for (const x of answers) {
        if (x.status >= 500) problems.push(`${x.scenario}: ${x.status} ${x.text.slice(0, 200)}`)
        problems.push(...leaks(r, x))
      }
      expect(problems, `${r.label}:\n${problems.join('\n')}`).toEqual([])
    })
  }
})

// ---- environments the caller may not see ----------------------------------------------------------

const VISIBLE = 'S-1-5-21-1111111111-1111111111-1111111111'
const HIDDEN = 'S-1-5-21-9999999999-9999999999-9999999999'
const ABSENT = 'S-1-5-21-5555555555-5555555555-5555555555'

/** Node kinds seeded in both environments, so that every entity route finds one of its kind. */
const KINDS = [
  'User', 'Group', 'Computer', 'Domain', 'GPO', 'OU', 'Container', 'AIACA', 'RootCA', 'EnterpriseCA', 'NTAuthStore', 'CertTemplate',
  'AZUser', 'AZGroup', 'AZTenant', 'AZManagementGroup', 'AZSubscription', 'AZResourceGroup', 'AZVM', 'AZKeyVault', 'AZDevice',
  'AZServicePrincipal', 'AZRole', 'AZApp', 'AZManagedCluster', 'AZContainerRegistry', 'AZWebApp', 'AZLogicApp', 'AZAutomationAccount',
  'AZVMScaleSet', 'AZFunctionApp',
]
const objId = (envId: string, kind: string) => (kind === 'Domain' ? envId : `${envId}-${kind.toUpperCase()}`)
const objName = (envId: string, kind: string) => `${kind.toUpperCase()}@${envId === HIDDEN ? 'HIDDEN' : 'VISIBLE'}.CORP.LOCAL`
/** Everything of the hidden environment that must never reach the restricted user. */
const HIDDEN_MARKERS = [...new Set(KINDS.flatMap((k) => [objId(HIDDEN, k), objName(HIDDEN, k)]))]

const ENV_PARAM = /^(domain|environment|env|tenant)(_?id)?$/i
const OBJECT_PARAM = /^(object_?id|start_node|end_node)$/i

const queryKeys = (r: RouteInfo) => (r.def.query ? Object.keys(objectParts(r.def.query)?.shape ?? {}) : [])
function keysMatching(r: RouteInfo, re: RegExp): { path: string[]; query: string[] } {
  return { path: r.pathParams.filter((p) => re.test(p)), query: queryKeys(r).filter((q) => re.test(q)) }
}
const hasKeys = (k: { path: string[]; query: string[] }) => k.path.length + k.query.length > 0

/** The route's sample target with the given parameters (path or query, whichever they are) set. */
function targetWith(r: RouteInfo, keys: { path: string[]; query: string[] }, value: string): string {
  const values = r.sampleParams()
  for (const k of keys.path) values[k] = encodeURIComponent(value)
  return r.pathWith(values) + sampleQuery(r.def, Object.fromEntries(keys.query.map((q) => [q, value])))
}

/** Graph fixture written straight into the `nodes` contract table: one node of every kind per environment. */
async function seedEnvironments() {
  const now = new Date().toISOString()
  const stmts = [VISIBLE, HIDDEN].flatMap((envId) =>
    KINDS.map((kind) =>
      env.DB.prepare(
        `INSERT INTO nodes (objectid, kind, kinds, name, environment_id, properties, created_at, updated_at, environment_kind, id)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ${NEW_ID_SQL}) ON CONFLICT (objectid) DO NOTHING`,
      ).bind(
        objId(envId, kind),
        kind,
        JSON.stringify([kind, kind.startsWith('AZ') ? 'AZBase' : 'Base']),
        objName(envId, kind),
        envId,
        JSON.stringify({ name: objName(envId, kind), objectid: objId(envId, kind), domainsid: envId }),
        now,
        now,
        kind === 'Domain' ? 'Domain' : null,
      ),
    ),
  )
  await env.DB.batch(stmts)
  // Cross-environment edges in both directions, and the findings they make (issue 18): a hidden user holding
  // a finding's privilege on the visible Domain, and a visible user holding it on the hidden Domain.
  await seedCrossEnvironmentFindings([
    [objId(HIDDEN, 'User'), objId(VISIBLE, 'Domain')],
    [objId(VISIBLE, 'User'), objId(HIDDEN, 'Domain')],
  ])
}

const strip = (t: string) => t.replace(/"(request_id|timestamp)":"[^"]*"/g, '')

describe('an environment the caller may not see is treated as absent', () => {
  const gets = ROUTES_INFO.filter((r) => r.method === 'GET' && r.auth !== 'public')
  const envRoutes = gets.filter((r) => hasKeys(keysMatching(r, ENV_PARAM)))
  const objectRoutes = gets.filter((r) => !hasKeys(keysMatching(r, ENV_PARAM)) && hasKeys(keysMatching(r, OBJECT_PARAM)))
  let restricted: Tok
  let everything: Tok
  const undiscriminated: string[] = []

  beforeAll(async () => {
    await seedEnvironments()
    restricted = await newToken((await newUser(['Read-Only'], { environment_access: [VISIBLE] })).id)
    everything = await newToken((await newUser(['Read-Only'])).id)
  }, 60_000)

  afterAll(() => {
    count('environment routes', envRoutes.length)
    count('object routes', objectRoutes.length)
    count('object routes without a discriminating kind', undiscriminated.length)
    if (undiscriminated.length) console.log(`HARDENING object routes answering 404 to every seeded kind: ${undiscriminated.join(', ')}`)
  })

  const ask = async (r: RouteInfo, tok: Tok, target: string, label: string) => {
    const p = { method: 'GET', target, body: null }
    count('environment cases')
    return call(p, await signedHeaders(p, tok), label, 'hard')
  }

  it('routes taking an environment or an object exist (findings, graph reads)', () => {
    // New routes with such parameters join these lists automatically.
    expect(envRoutes.length).toBeGreaterThan(0)
    expect(objectRoutes.length + envRoutes.length).toBeGreaterThan(3)
  })

  for (const r of envRoutes) {
    it(`${r.label}: 404 for a hidden environment, same answer as for an absent one`, async () => {
      const keys = keysMatching(r, ENV_PARAM)
      const hidden = await ask(r, restricted, targetWith(r, keys, HIDDEN), 'restricted user, hidden environment')
      const absent = await ask(r, restricted, targetWith(r, keys, ABSENT), 'restricted user, absent environment')
      const seenByAll = await ask(r, everything, targetWith(r, keys, HIDDEN), 'all-environment user, same environment')
      const visible = await ask(r, restricted, targetWith(r, keys, VISIBLE), 'restricted user, its own environment')

      const problems: string[] = []
      expectStatus(hidden, 404, problems)
      // no existence oracle: hidden and absent answers are the same apart from request id and time
      if (hidden.status !== absent.status || strip(hidden.text) !== strip(absent.text))
        problems.push(`hidden (${hidden.status} ${hidden.text.slice(0, 200)}) differs from absent (${absent.status} ${absent.text.slice(0, 200)})`)
      // the 404 is the environment rule at work: the same request by an all-environment user differs
      if (strip(seenByAll.text) === strip(hidden.text)) problems.push(`an all-environment user gets the same answer (${seenByAll.status}): the test does not discriminate`)
      if (strip(visible.text) === strip(hidden.text)) problems.push(`the restricted user's own environment is refused as well (${visible.text.slice(0, 200)})`)
      for (const a of [hidden, absent, seenByAll, visible]) {
        if (a.status >= 500) problems.push(`${a.scenario}: ${a.status}`)
        problems.push(...leaks(r, a))
      }
      for (const m of HIDDEN_MARKERS) if (m !== HIDDEN && hidden.text.includes(m)) problems.push(`hidden answer shows ${m}`)
      // the restricted user's own environment holds findings whose other end is hidden: nothing of it shows
      for (const m of HIDDEN_MARKERS) if (visible.text.includes(m)) problems.push(`its own environment's answer shows ${m}: ${visible.text.slice(0, 300)}`)
      expect(problems, problems.join('\n')).toEqual([])
    })
  }

  for (const r of objectRoutes) {
    it(`${r.label}: an object of a hidden environment is 404, same answer as an absent object`, async () => {
      const keys = keysMatching(r, OBJECT_PARAM)
      const problems: string[] = []
      // Find a kind this route serves: the all-environment user gets something other than 404 for it.
      const seg = r.def.path.split('/')[3] ?? ''
      const order = [...KINDS].sort((a, b) => Number(seg.startsWith(b.replace(/^AZ/, '').toLowerCase())) - Number(seg.startsWith(a.replace(/^AZ/, '').toLowerCase())))
      let kind: string | null = null
      for (const k of order) {
        const a = await ask(r, everything, targetWith(r, keys, objId(HIDDEN, k)), `all-environment user, hidden ${k}`)
        if (a.status >= 500) problems.push(`${a.scenario}: ${a.status}`)
        if (a.status !== 404) {
          kind = k
          break
        }
      }
      const hidden = await ask(r, restricted, targetWith(r, keys, objId(HIDDEN, kind ?? 'User')), `restricted user, hidden ${kind ?? 'User'}`)
      const absent = await ask(r, restricted, targetWith(r, keys, `${ABSENT}-1`), 'restricted user, absent object')
      if (hidden.status !== absent.status || strip(hidden.text) !== strip(absent.text))
        problems.push(`hidden (${hidden.status} ${hidden.text.slice(0, 200)}) differs from absent (${absent.status} ${absent.text.slice(0, 200)})`)
      if (kind === null) undiscriminated.push(r.label)
      else {
        expectStatus(hidden, 404, problems)
        const visible = await ask(r, restricted, targetWith(r, keys, objId(VISIBLE, kind)), `restricted user, visible ${kind}`)
        if (visible.status === 404) problems.push(`the restricted user's own ${kind} is refused: ${visible.text.slice(0, 200)}`)
        for (const a of [visible]) problems.push(...leaks(r, a))
        for (const m of HIDDEN_MARKERS) if (visible.text.includes(m)) problems.push(`${visible.scenario}: shows ${m}: ${visible.text.slice(0, 300)}`)
      }
      for (const a of [hidden, absent]) {
        if (a.status >= 500) problems.push(`${a.scenario}: ${a.status}`)
        problems.push(...leaks(r, a))
        for (const m of HIDDEN_MARKERS) if (a.text.includes(m) && !decodeURIComponent(a === hidden ? targetWith(r, keys, objId(HIDDEN, kind ?? 'User')) : '').includes(m)) problems.push(`${a.scenario}: shows ${m}`)
      }
      expect(problems, problems.join('\n')).toEqual([])
    })
  }

  for (const r of envRoutes) {
    it(`${r.label}: in its own environment, a hidden id in any query parameter answers like an absent one`, async () => {
      // Filters such as FromPrincipal=eq:<id> must not tell a hidden object from one that does not exist.
      const keys = keysMatching(r, ENV_PARAM)
      const problems: string[] = []
      const others = queryKeys(r).filter((q) => !keys.query.includes(q))
      for (const key of others) {
        for (const kind of ['User', 'Domain']) {
          const hiddenValue = objId(HIDDEN, kind)
          const absentValue = `${ABSENT}-${kind.toUpperCase()}`
          const at = (v: string) => {
            const values = r.sampleParams()
            for (const k of keys.path) values[k] = encodeURIComponent(VISIBLE)
            return r.pathWith(values) + sampleQuery(r.def, { ...Object.fromEntries(keys.query.map((q) => [q, VISIBLE])), [key]: v })
          }
          const hidden = await ask(r, restricted, at(hiddenValue), `restricted user, own environment, ${key}=${hiddenValue}`)
          const absent = await ask(r, restricted, at(absentValue), `restricted user, own environment, ${key}=${absentValue}`)
          const norm = (t: string, v: string) => strip(t).split(v).join('<value>')
          if (hidden.status !== absent.status || norm(hidden.text, hiddenValue) !== norm(absent.text, absentValue))
            problems.push(`${key}=<hidden ${kind}> (${hidden.status} ${hidden.text.slice(0, 200)}) differs from ${key}=<absent> (${absent.status} ${absent.text.slice(0, 200)})`)
          for (const m of HIDDEN_MARKERS) if (!hiddenValue.includes(m) && hidden.text.includes(m)) problems.push(`${hidden.scenario}: shows ${m}`)
          if (hidden.status >= 500) problems.push(`${hidden.scenario}: ${hidden.status}`)
        }
      }
      expect(problems, problems.join('\n')).toEqual([])
    })
  }

  it('no GET route shows the restricted user anything of the hidden environment', { timeout: 120_000 }, async () => {
    const problems: string[] = []
    for (const r of gets) {
      const envK = keysMatching(r, ENV_PARAM)
      const objK = keysMatching(r, OBJECT_PARAM)
      // sample values; environment parameters on the hidden environment; object parameters on hidden
      // objects; then each query parameter in turn set to a hidden name or id (search, filters …)
      const variants: { path: Record<string, string>; query: Record<string, string> }[] = [{ path: {}, query: {} }]
      const base = () => ({
        path: Object.fromEntries(envK.path.map((k) => [k, HIDDEN])),
        query: Object.fromEntries(envK.query.map((k) => [k, HIDDEN])),
      })
      variants.push(base())
      for (const k of ['User', 'Domain', 'Group', 'AZUser', 'AZTenant']) {
        const b = base()
        for (const p of objK.path) b.path[p] = objId(HIDDEN, k)
        for (const q of objK.query) b.query[q] = objId(HIDDEN, k)
        if (objK.path.length + objK.query.length) variants.push(b)
      }
      for (const key of queryKeys(r)) for (const m of [HIDDEN, objName(HIDDEN, 'User'), 'HIDDEN', 'hidden.corp']) variants.push({ ...base(), query: { ...base().query, [key]: m } })
      for (const v of variants) {
        const values = r.sampleParams()
        for (const [k, x] of Object.entries(v.path)) values[k] = encodeURIComponent(x)
        const target = r.pathWith(values) + sampleQuery(r.def, v.query)
        const a = await ask(r, restricted, target, `restricted user ${target}`)
        count('environment leak probes')
        // The request itself may name a marker and an answer may echo the request (an error naming the
        // parameter), so only markers that were not sent count as a leak.
        const sent = decodeURIComponent(target)
        for (const m of HIDDEN_MARKERS) if (a.text.includes(m) && !sent.includes(m)) problems.push(`${a.scenario}: shows ${m}`)
        if (a.status >= 500) problems.push(`${a.scenario}: ${a.status}`)
      }
    }
    expect(problems, problems.join('\n')).toEqual([])
  })
})
