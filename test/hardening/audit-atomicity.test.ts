/**
 * Audit atomicity, route by route (issue 15, docs/audit.md): "the audit row is written in the same D1 batch
 * as the change it describes, so there is never a change without its entry nor an entry for a change that
 * did not happen".
 *
 * For EVERY audited route (the route table is walked: a route with an audit action and no case here fails
 * the suite), two runs of the same request:
 *
 *  - fault: a trigger makes every INSERT of a `success` audit row fail. If the success row is in the
 *    change's batch, the batch rolls back: the request fails, the database is exactly as before (every
 *    table, and the success rows of the log) and the request's entries are its intent (if any) and one
 *    failure. A route that wrote its success row after its change (the old fallback) leaves the change.
 *  - success: the request answers 2xx, the tables of its change changed, and the request's entries are
 *    exactly the expected ones, sharing one commit id; no "outside the change batch" error was logged.
 *
 * Declared exceptions, each checked as such: an upload whose commit failed records the failed file in its
 * job (the ledger), with the failure row in the same batch; a SAML sign-in consumes the assertion and the
 * AuthnRequest first (the replay guard, committed before anything else on purpose, docs/audit.md).
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import type { EdgeHoundClient } from '../../src/client'
import { upsertExtension } from '../../src/client/extensions'
import { createSamlProvider } from '../../src/client/saml'
import { endUploadJob, startUploadJob, uploadFile } from '../../src/client/graph'
import { AUDIT_OUTSIDE_BATCH } from '../../src/http/route'
import { IDP_FIXTURES } from '../fixtures/saml/corpus'
import { b64, buildResponse, idpMetadata, KEY_A, sign } from '../fixtures/saml/idp-signer'
import { smallDoc } from '../fixtures/extensions/docs'
import { TestOp } from '../fixtures/oidc/test-op'
import { base32Decode, hotp, totpStep } from '../../src/auth/totp'
import { insertGraph, runAnalysisDirect, settleRuns } from '../fixtures/findings/helpers'
import { BASE } from '../helpers'
import { computeSignature } from '../../src/auth/signature'
import { toBase64 } from '../../src/auth/encoding'
import { changedTables, count, dbDigest, env, envelopeProblem, hclient, hfetch, internalLeaks, report, ROUTES } from './lib'

const OKTA = IDP_FIXTURES['okta.xml']
let admin: EdgeHoundClient
let adminJwt = ''

afterAll(() => report('audit-atomicity'))

type Row = { id: number; action: string; status: string; commit_id: string; fields: string; actor_name: string }
const rowsOf = async (requestId: string) =>
  (await env.DB.prepare('SELECT id, action, status, commit_id, fields, actor_name FROM audit_logs WHERE request_id = ?1 ORDER BY id').bind(requestId).all<Row>()).results

const uniq = () => crypto.randomUUID().slice(0, 8)
const auth = () => ({ Authorization: `Bearer ${adminJwt}` })
const json = (method: string, path: string, body?: unknown, headers: Record<string, string> = auth()) =>
  hfetch(
    new Request(BASE + path, {
      method,
      headers: { ...headers, ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    }),
  )
async function form(method: string, path: string, f: FormData) {
  const r = new Response(f)
  return hfetch(new Request(BASE + path, { method, headers: { ...auth(), 'Content-Type': r.headers.get('content-type')! }, body: await r.arrayBuffer() }))
}
const samlForm = (name: string) => {
  const f = new FormData()
  f.set('name', name)
  f.set('metadata', new Blob([OKTA], { type: 'application/xml' }), 'metadata.xml')
  return f
}
const login = (username: string, secret: string) =>
  hfetch(new Request(`${BASE}/api/v2/login`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ login_method: 'secret', username, secret }) }))

/** Analysis runs in the background (Analyzer object) and writes its own tables: digests wait until none is live. */
const quiesce = () => settleRuns(env.DB)

const FAULT = 'audit_atomicity_fault'
async function withSuccessRowsFailing<T>(f: () => Promise<T>): Promise<T> {
  await env.DB.prepare(`CREATE TRIGGER ${FAULT} BEFORE INSERT ON audit_logs WHEN NEW.status = 'success' BEGIN SELECT RAISE(ABORT, 'injected fault'); END`).run()
  try {
    return await f()
  } finally {
    await env.DB.prepare(`DROP TRIGGER IF EXISTS ${FAULT}`).run()
  }
}

interface Case {
  name: string
  /** `METHOD /path` as in the route table */
  route: string
  prepare?: () => Promise<unknown>
  act: (prepared: unknown) => Promise<Response>
  /** the request's entries on success, in order (intent rows included) */
  rows: [string, 'intent' | 'success' | 'failure'][]
  /** tables the change must touch on success */
  changes: string[]
  /** on a failed change, tables the request may still change (a ledger, a replay guard; see the header) */
  mayChangeOnFailure?: string[]
  /**
   * a browser sign-in endpoint (an assertion consumer): success is documented as 302 to the UI with the
   * `token` cookie (docs/saml.md), not a 2xx JSON answer
   */
  signIn?: true
  /** checks on the success rows' fields */
  fields?: (success: Record<string, unknown>[], prepared: unknown) => void
}

let extSeq = 0
const extDoc = () => {
  const n = ++extSeq
  return smallDoc(`AuditAtom${n}`, `AA${n}`)
}
function ingestPayload(t: string) {
  return {
    graph: {
      nodes: [
        { id: `AA-${t}-D`, kinds: ['Domain', 'Base'], properties: { name: `AA${t}.LOCAL`, domainsid: `AA-${t}-D` } },
        { id: `AA-${t}-1`, kinds: ['User', 'Base'], properties: { name: `U@AA${t}.LOCAL`, domainsid: `AA-${t}-D` } },
      ],
      edges: [{ start: { value: `AA-${t}-1` }, end: { value: `AA-${t}-D` }, kind: 'GenericAll' }],
    },
  }
}
const intentAnd = (action: string): Case['rows'] => [
  [action, 'intent'],
  [action, 'success'],
]
async function openFindingId(): Promise<number> {
  const row = await env.DB.prepare('SELECT id FROM findings WHERE deleted_at IS NULL ORDER BY id LIMIT 1').first<{ id: number }>()
  if (row) return row.id
  await insertGraph(env.DB)
  await runAnalysisDirect(env.DB)
  return (await env.DB.prepare('SELECT id FROM findings WHERE deleted_at IS NULL ORDER BY id LIMIT 1').first<{ id: number }>())!.id
}
const faIcon = (name: string, color?: string) => ({ icon: { type: 'font-awesome', name, ...(color ? { color } : {}) } })
/** a registered custom node kind (its name) */
async function customKind(): Promise<string> {
  const kind = `AA_${uniq()}`
  expect((await json('POST', '/api/v2/custom-nodes', { custom_types: { [kind]: faIcon('user') } })).status).toBe(201)
  return kind
}
async function savedQuery(): Promise<number> {
  const r = await json('POST', '/api/v2/saved-queries', { name: `audit-${uniq()}`, query: 'MATCH (n) RETURN n LIMIT 1' })
  expect(r.status).toBeLessThan(300)
  return ((await r.json()) as { data: { id: number } }).data.id
}
async function publicSavedQuery(): Promise<number> {
  const id = await savedQuery()
  expect((await json('PUT', `/api/v2/saved-queries/${id}/permissions`, { public: true })).status).toBe(201)
  return id
}
async function assetGroup(): Promise<number> {
  const r = await json('POST', '/api/v2/asset-groups', { name: `Audit ${uniq()}`, tag: `audit_${uniq()}` })
  expect(r.status).toBe(200)
  return ((await r.json()) as { data: { id: number } }).data.id
}
async function tagSelector(): Promise<number> {
  const r = await json('POST', '/api/v2/asset-group-tags/1/selectors', { name: `audit ${uniq()}`, seeds: [{ type: 1, value: `S-1-5-21-AUDIT-${uniq()}` }] })
  expect(r.status).toBe(201)
  return ((await r.json()) as { data: { id: number } }).data.id
}
/** BloodHound answers sso_provider_id as a NullInt32 ({int32, valid}) */
const ssoId = (v: unknown) => ((v as { int32?: number }).int32 ?? v) as number
let idpSeq = 0
/** A SAML provider with auto provisioning and IdP-initiated sign-in, and a signed response for a new person. */
async function samlSignIn(legacy = false): Promise<{ slug: string; body: string }> {
  const idp = `https://audit-idp-${++idpSeq}-${uniq()}.test.example/saml/metadata`
  const { data } = await createSamlProvider(admin, {
    name: `Audit IdP ${idpSeq} ${uniq()}`,
    metadata: idpMetadata(idp, KEY_A),
    autoProvision: { enabled: true, default_role_id: 3 },
    allowIdpInitiated: true,
  })
  const slug = data.sp_issuer_uri.split('/').pop()!
  // the legacy ACS (/api/v2/login/saml/<slug>/acs) checks the response against the legacy URL set
  const sp = legacy ? `${BASE}/api/v2/login/saml/${slug}` : data.sp_issuer_uri
  const acs = legacy ? `${sp}/acs` : data.sp_acs_uri
  const xml = await sign(buildResponse({ idpEntityId: idp, acsUrl: acs, spEntityId: sp, inResponseTo: undefined, email: `p-${uniq()}@corp.example` }), 'assertion')
  return { slug, body: new URLSearchParams({ SAMLResponse: b64(xml) }).toString() }
}

/** The test OpenID provider (test/fixtures/oidc): an OIDC provider with auto provisioning, a started sign-in, an ID token for a new person. */
const OP_ISSUER = 'https://audit-op.test.example'
const OP_CLIENT = 'audit-client'
let op: TestOp
async function oidcSignIn(): Promise<{ slug: string; query: string; cookie: string }> {
  op ??= await TestOp.start(OP_ISSUER, OP_CLIENT)
  const r = await json('POST', '/api/v2/sso-providers/oidc', {
    name: `Audit OP ${uniq()}`,
    client_id: OP_CLIENT,
    issuer: OP_ISSUER,
    config: { auto_provision: { enabled: true, default_role_id: 3 } },
  })
  expect(r.status).toBe(201)
  const { slug } = ((await r.json()) as { data: { slug: string } }).data
  const started = await hfetch(new Request(`${BASE}/api/v2/sso/${slug}/login`))
  expect(started.status).toBe(302)
  const params = new URL(started.headers.get('location')!).searchParams
  op.answerWithIdToken(params.get('nonce')!, { email: `o-${uniq()}@corp.example` })
  return { slug, query: new URLSearchParams({ code: 'c', state: params.get('state')! }).toString(), cookie: started.headers.get('set-cookie')!.split(';')[0] }
}
afterAll(() => op?.stop())

// ---- collector clients (src/clients/): administrators by session, the collector's routes signed by the client's token
type Cl = { id: string; token: { id: string; key: string } }
async function newClient(): Promise<Cl> {
  const r = await json('POST', '/api/v2/clients', { name: `aa-client-${uniq()}`, type: 'openhound', environment_id: `AA-ENV-${uniq()}` })
  return ((await r.json()) as { data: Cl }).data
}
async function asClient(cl: Cl, method: string, path: string, body?: unknown): Promise<Response> {
  const bytes = body === undefined ? new Uint8Array() : new TextEncoder().encode(JSON.stringify(body))
  const date = new Date().toISOString()
  const sig = await computeSignature(cl.token.key, method, path, date, bytes)
  const headers: Record<string, string> = { Authorization: `bhesignature ${cl.token.id}`, RequestDate: date, Signature: toBase64(sig) }
  if (body !== undefined) headers['Content-Type'] = 'application/json'
  return hfetch(new Request(BASE + path, { method, headers, body: body === undefined ? undefined : bytes }))
}
async function clientJob(cl: Cl): Promise<number> {
  const r = await json('POST', `/api/v2/clients/${cl.id}/jobs`, {})
  return ((await r.json()) as { data: { id: number } }).data.id
}
async function runningClientJob(): Promise<{ cl: Cl; job: number }> {
  const cl = await newClient()
  const job = await clientJob(cl)
  expect((await asClient(cl, 'POST', '/api/v2/jobs/start', { id: job })).status).toBe(200)
  return { cl, job }
}
const clientGraph = (cl: Cl) => ({ graph: { nodes: [{ id: `AA-N-${uniq()}`, kinds: ['GHUser'], properties: { environmentid: 'x' } }] } })
async function schedule(): Promise<number> {
  const cl = await newClient()
  const r = await json('POST', '/api/v2/events', { client_id: cl.id, rrule: 'RRULE:FREQ=DAILY' })
  return ((await r.json()) as { data: { id: number } }).data.id
}

const CASES: Case[] = [
  {
    name: 'log in',
    route: 'POST /api/v2/login',
    act: () => login('admin', 'test-admin-password'),
    rows: [['LoginAttempt', 'success']],
    changes: ['sessions'],
  },
  {
    name: 'log out',
    route: 'POST /api/v2/logout',
    prepare: async () => (await hclient().login('admin', 'test-admin-password')).data.session_token,
    act: (jwt) => json('POST', '/api/v2/logout', undefined, { Authorization: `Bearer ${jwt}` }),
    rows: intentAnd('Logout'),
    changes: ['sessions'],
  },
  {
    name: 'create a token',
    route: 'POST /api/v2/tokens',
    act: () => json('POST', '/api/v2/tokens', { token_name: `audit-${uniq()}` }),
    rows: intentAnd('CreateAuthToken'),
    changes: ['api_tokens'],
  },
  {
    name: 'revoke a token',
    route: 'DELETE /api/v2/tokens/:token_id',
    prepare: async () => (await admin.createToken(`audit-${uniq()}`)).data.id,
    act: (id) => json('DELETE', `/api/v2/tokens/${id}`),
    rows: intentAnd('DeleteAuthToken'),
    changes: ['api_tokens'],
  },
  {
    name: 'create a user',
    route: 'POST /api/v2/bloodhound-users',
    act: () => json('POST', '/api/v2/bloodhound-users', { principal_name: `audit-${uniq()}`, roles: ['User'], secret: 'audit-secret-0123456789' }),
    rows: intentAnd('CreateUser'),
    changes: ['users'],
    fields: ([s]) => expect(JSON.stringify(s)).not.toContain('audit-secret-0123456789'),
  },
  {
    name: 'update a user',
    route: 'PATCH /api/v2/bloodhound-users/:user_id',
    prepare: async () => (await admin.createUser({ principal_name: `audit-${uniq()}`, roles: ['User'] })).data.id,
    act: (id) => json('PATCH', `/api/v2/bloodhound-users/${id}`, { roles: ['Read-Only'] }),
    rows: intentAnd('UpdateUser'),
    changes: ['users'],
  },
  {
    name: "set a user's password (forced change at next sign-in)",
    route: 'PUT /api/v2/bloodhound-users/:user_id/secret',
    prepare: async () => (await admin.createUser({ principal_name: `audit-${uniq()}`, roles: ['User'], secret: 'audit-secret-0123456789' })).data.id,
    act: (id) => json('PUT', `/api/v2/bloodhound-users/${id}/secret`, { secret: 'audit-new-secret-987654', needs_password_reset: true }),
    rows: intentAnd('UpdateUserSecret'),
    changes: ['users'],
    fields: ([s]) => expect(JSON.stringify(s)).not.toContain('audit-new-secret-987654'),
  },
  {
    name: "expire a user's password",
    route: 'DELETE /api/v2/bloodhound-users/:user_id/secret',
    prepare: async () => (await admin.createUser({ principal_name: `audit-${uniq()}`, roles: ['User'], secret: 'audit-secret-0123456789' })).data.id,
    act: (id) => json('DELETE', `/api/v2/bloodhound-users/${id}/secret`),
    rows: intentAnd('ExpireUserSecret'),
    changes: ['users'],
  },
  {
    name: 'enrol in MFA (administrator, with the user\'s password)',
    route: 'POST /api/v2/bloodhound-users/:user_id/mfa',
    prepare: async () => (await admin.createUser({ principal_name: `audit-${uniq()}`, roles: ['User'], secret: 'audit-secret-0123456789' })).data.id,
    act: (id) => json('POST', `/api/v2/bloodhound-users/${id}/mfa`, { secret: 'audit-secret-0123456789' }),
    rows: intentAnd('EnrollMFA'),
    changes: ['users'],
    fields: ([s]) => expect(JSON.stringify(s)).not.toContain('audit-secret-0123456789'),
  },
  {
    name: 'activate MFA with a code',
    route: 'POST /api/v2/bloodhound-users/:user_id/mfa-activation',
    prepare: async () => {
      const id = (await admin.createUser({ principal_name: `audit-${uniq()}`, roles: ['User'], secret: 'audit-secret-0123456789' })).data.id
      const e = await admin.enrollMfa(id, 'audit-secret-0123456789')
      return { id, secret: e.data.totp_secret }
    },
    act: async (p) => {
      const { id, secret } = p as { id: string; secret: string }
      return json('POST', `/api/v2/bloodhound-users/${id}/mfa-activation`, { otp: await hotp(base32Decode(secret)!, totpStep(Date.now())) })
    },
    rows: intentAnd('ActivateMFA'),
    changes: ['users'],
  },
  {
    name: "reset a user's MFA (administrator's password)",
    route: 'DELETE /api/v2/bloodhound-users/:user_id/mfa',
    prepare: async () => {
      const id = (await admin.createUser({ principal_name: `audit-${uniq()}`, roles: ['User'], secret: 'audit-secret-0123456789' })).data.id
      await admin.enrollMfa(id, 'audit-secret-0123456789')
      return id
    },
    act: (id) => json('DELETE', `/api/v2/bloodhound-users/${id}/mfa`, { secret: 'test-admin-password' }),
    rows: intentAnd('DisenrollMFA'),
    changes: ['users'],
  },
  {
    name: 'delete a user',
    route: 'DELETE /api/v2/bloodhound-users/:user_id',
    prepare: async () => (await admin.createUser({ principal_name: `audit-${uniq()}`, roles: ['User'] })).data.id,
    act: (id) => json('DELETE', `/api/v2/bloodhound-users/${id}`),
    rows: intentAnd('DeleteUser'),
    changes: ['users'],
  },
  {
    name: 'create a SAML provider (BloodHound CE path)',
    route: 'POST /api/v2/saml/providers',
    act: () => form('POST', '/api/v2/saml/providers', samlForm(`audit-${uniq()}`)),
    rows: intentAnd('CreateSAMLIdentityProvider'),
    changes: ['sso_providers'],
  },
  {
    name: 'create a SAML provider',
    route: 'POST /api/v2/sso-providers/saml',
    act: () => form('POST', '/api/v2/sso-providers/saml', samlForm(`audit-${uniq()}`)),
    rows: intentAnd('CreateSAMLIdentityProvider'),
    changes: ['sso_providers'],
  },
  {
    name: 'create an OIDC provider',
    route: 'POST /api/v2/sso-providers/oidc',
    act: () => json('POST', '/api/v2/sso-providers/oidc', { name: `audit-oidc-${uniq()}`, client_id: OP_CLIENT, issuer: OP_ISSUER, client_secret: 'audit-secret' }),
    rows: intentAnd('CreateOIDCIdentityProvider'),
    changes: ['sso_providers', 'oidc_providers'],
    fields: (success) => expect(JSON.stringify(success)).not.toContain('audit-secret'),
  },
  {
    name: 'delete a SAML provider',
    route: 'DELETE /api/v2/saml/providers/:saml_provider_id',
    prepare: async () => (await createSamlProvider(admin, { name: `audit-${uniq()}`, metadata: OKTA })).data.id,
    act: (id) => json('DELETE', `/api/v2/saml/providers/${id}`),
    rows: intentAnd('DeleteSAMLIdentityProvider'),
    changes: ['sso_providers'],
  },
  {
    name: 'update an SSO provider',
    route: 'PATCH /api/v2/sso-providers/:sso_provider_id',
    prepare: async () => ssoId((await createSamlProvider(admin, { name: `audit-${uniq()}`, metadata: OKTA })).data.sso_provider_id),
    act: (sso) => form('PATCH', `/api/v2/sso-providers/${sso}`, samlForm(`audit-${uniq()}`)),
    rows: intentAnd('UpdateSSOIdentityProvider'),
    changes: ['sso_providers'],
    fields: ([s]) => expect(s).toMatchObject({ metadata_replaced: true }),
  },
  {
    name: 'update an OIDC provider (JSON): rename and a new client secret',
    route: 'PATCH /api/v2/sso-providers/:sso_provider_id',
    prepare: async () => {
      const r = await json('POST', '/api/v2/sso-providers/oidc', { name: `audit-oidc-${uniq()}`, client_id: OP_CLIENT, issuer: OP_ISSUER })
      expect(r.status).toBe(201)
      return ((await r.json()) as { data: { sso_provider_id: number } }).data.sso_provider_id
    },
    act: (sso) => json('PATCH', `/api/v2/sso-providers/${sso}`, { name: `audit-oidc-renamed-${uniq()}`, client_secret: 'patched-secret' }),
    rows: intentAnd('UpdateSSOIdentityProvider'),
    changes: ['sso_providers', 'oidc_providers'],
    fields: (success) => {
      expect(success[0]).toMatchObject({ confidential_client: 'replaced' })
      expect(JSON.stringify(success)).not.toContain('patched-secret')
    },
  },
  {
    name: 'delete an SSO provider',
    route: 'DELETE /api/v2/sso-providers/:sso_provider_id',
    prepare: async () => ssoId((await createSamlProvider(admin, { name: `audit-${uniq()}`, metadata: OKTA })).data.sso_provider_id),
    act: (sso) => json('DELETE', `/api/v2/sso-providers/${sso}`),
    rows: intentAnd('DeleteSSOIdentityProvider'),
    changes: ['sso_providers'],
  },
  {
    name: 'SAML sign-in that provisions its user',
    route: 'POST /api/v2/sso/:slug/callback',
    signIn: true,
    prepare: samlSignIn,
    act: (p) => {
      const { slug, body } = p as { slug: string; body: string }
      return hfetch(new Request(`${BASE}/api/v2/sso/${slug}/callback`, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body }))
    },
    rows: [
      ['CreateUser', 'success'],
      ['LoginAttempt', 'success'],
    ],
    changes: ['users', 'sessions'],
    mayChangeOnFailure: ['saml_assertions_used', 'saml_authn_requests'],
  },
  {
    name: "SAML sign-in at BloodHound's legacy ACS URL",
    route: 'POST /api/:version/login/saml/:slug/acs',
    signIn: true,
    prepare: () => samlSignIn(true),
    act: (p) => {
      const { slug, body } = p as { slug: string; body: string }
      return hfetch(new Request(`${BASE}/api/v2/login/saml/${slug}/acs`, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body }))
    },
    rows: [
      ['CreateUser', 'success'],
      ['LoginAttempt', 'success'],
    ],
    changes: ['users', 'sessions'],
    mayChangeOnFailure: ['saml_assertions_used', 'saml_authn_requests'],
  },
  {
    name: 'OIDC sign-in that provisions its user',
    route: 'GET /api/v2/sso/:slug/callback',
    signIn: true,
    prepare: oidcSignIn,
    act: (p) => {
      const { slug, query, cookie } = p as { slug: string; query: string; cookie: string }
      return hfetch(new Request(`${BASE}/api/v2/sso/${slug}/callback?${query}`, { headers: { Cookie: cookie } }))
    },
    rows: [
      ['CreateUser', 'success'],
      ['LoginAttempt', 'success'],
    ],
    changes: ['users', 'sessions'],
    // the sign-in in progress is taken (one use) before anything else, whatever happens next
    mayChangeOnFailure: ['oidc_login_states'],
  },
  {
    name: 'upsert an extension',
    route: 'PUT /api/v2/extensions',
    act: () => json('PUT', '/api/v2/extensions', extDoc()),
    rows: intentAnd('CreateGraphSchemaExtension'),
    changes: ['extensions', 'extension_kinds'],
    fields: ([s]) => expect(s).toMatchObject({ name: expect.stringMatching(/^AuditAtom\d+$/), version: '1.0.0' }),
  },
  {
    name: 'delete an extension',
    route: 'DELETE /api/v2/extensions/:id',
    prepare: async () => (await upsertExtension(admin, extDoc())).data.id,
    act: (id) => json('DELETE', `/api/v2/extensions/${id}`),
    rows: intentAnd('DeleteGraphSchemaExtension'),
    changes: ['extensions', 'extension_kinds'],
    fields: ([s]) => expect(s).toMatchObject({ name: expect.stringMatching(/^AuditAtom\d+$/) }),
  },
  {
    name: 'start a file-upload job',
    route: 'POST /api/v2/file-upload/start',
    act: () => json('POST', '/api/v2/file-upload/start'),
    rows: intentAnd('CreateFileUploadJob'),
    changes: ['ingest_jobs'],
    // the new job's id, assigned by the INSERT of the same batch
    fields: ([s]) => expect(Number.isInteger(s.id) && (s.id as number) > 0, JSON.stringify(s)).toBe(true),
  },
  {
    name: 'upload a file into a job',
    route: 'POST /api/v2/file-upload/:id',
    prepare: async () => ({ job: (await startUploadJob(admin)).data.id, payload: ingestPayload(uniq()) }),
    act: (p) => json('POST', `/api/v2/file-upload/${(p as { job: number }).job}`, (p as { payload: unknown }).payload),
    rows: intentAnd('AppendFileUploadJob'),
    changes: ['nodes', 'edges', 'ingest_jobs'],
    // the commit failed: the job counts the failed file (its ledger), with the failure row in that batch
    mayChangeOnFailure: ['ingest_jobs', 'ingest_job_tasks'],
    fields: ([s]) => expect(s).toMatchObject({ file_name: 'UnknownFileName.json', files: 1, nodes_received: 2, edges_received: 1 }),
  },
  {
    name: 'end a file-upload job',
    route: 'POST /api/v2/file-upload/:id/end',
    prepare: async () => {
      const job = (await startUploadJob(admin)).data.id
      await uploadFile(admin, job, ingestPayload(uniq()))
      return job
    },
    act: (job) => json('POST', `/api/v2/file-upload/${job}/end`),
    rows: intentAnd('EndFileUploadJob'),
    changes: ['ingest_jobs', 'environment_collections'],
  },
  {
    name: 'request an analysis run',
    route: 'POST /api/v2/analysis',
    act: () => json('POST', '/api/v2/analysis'),
    rows: intentAnd('RequestAnalysis'),
    changes: ['analysis_runs'],
    fields: ([s]) => expect(Number.isInteger(s.run_id)).toBe(true),
  },
  {
    name: "request an analysis run, BloodHound's method",
    route: 'PUT /api/v2/analysis',
    act: () => json('PUT', '/api/v2/analysis'),
    rows: intentAnd('RequestAnalysis'),
    changes: ['analysis_runs'],
    fields: ([s]) => expect(Number.isInteger(s.run_id)).toBe(true),
  },
  {
    name: 'accept the risk of a finding',
    route: 'PUT /api/v2/attack-paths/:id/acceptance',
    prepare: openFindingId,
    act: (id) => json('PUT', `/api/v2/attack-paths/${id}/acceptance`, { accepted: true, accepted_until: new Date(Date.now() + 86_400_000 * (1 + Math.random())).toISOString() }),
    rows: intentAnd('AcceptRisk'),
    changes: ['findings'],
  },
  {
    name: 'create an asset group',
    route: 'POST /api/v2/asset-groups',
    act: () => json('POST', '/api/v2/asset-groups', { name: `Audit ${uniq()}`, tag: `audit_${uniq()}` }),
    rows: intentAnd('CreateAssetGroup'),
    changes: ['asset_groups'],
  },
  {
    name: 'rename an asset group',
    route: 'PUT /api/v2/asset-groups/:asset_group_id',
    prepare: assetGroup,
    act: (id) => json('PUT', `/api/v2/asset-groups/${id}`, { name: `Audit renamed ${uniq()}` }),
    rows: intentAnd('UpdateAssetGroup'),
    changes: ['asset_groups'],
  },
  {
    name: 'delete an asset group',
    route: 'DELETE /api/v2/asset-groups/:asset_group_id',
    prepare: assetGroup,
    act: (id) => json('DELETE', `/api/v2/asset-groups/${id}`),
    rows: intentAnd('DeleteAssetGroup'),
    changes: ['asset_groups'],
  },
  {
    name: 'add a selector to an asset group',
    route: 'PUT /api/v2/asset-groups/:asset_group_id/selectors',
    prepare: assetGroup,
    act: (id) => json('PUT', `/api/v2/asset-groups/${id}/selectors`, [{ action: 'add', sid: `S-1-5-21-AUDIT-${uniq()}` }]),
    rows: intentAnd('CreateAssetGroupSelector'),
    // one store for both selector APIs (migration 0022): a selector with its object-id seed
    changes: ['asset_group_tag_selectors', 'asset_group_tag_selector_seeds'],
  },
  {
    name: 'add a selector to an asset group (the deprecated POST)',
    route: 'POST /api/v2/asset-groups/:asset_group_id/selectors',
    prepare: assetGroup,
    act: (id) => json('POST', `/api/v2/asset-groups/${id}/selectors`, [{ action: 'add', sid: `S-1-5-21-AUDIT-${uniq()}` }]),
    rows: intentAnd('CreateAssetGroupSelector'),
    changes: ['asset_group_tag_selectors', 'asset_group_tag_selector_seeds'],
  },
  {
    name: 'delete one selector of an asset group',
    route: 'DELETE /api/v2/asset-groups/:asset_group_id/selectors/:asset_group_selector_id',
    prepare: async () => {
      const id = await assetGroup()
      const r = await json('PUT', `/api/v2/asset-groups/${id}/selectors`, [{ action: 'add', sid: `S-1-5-21-AUDIT-${uniq()}` }])
      expect(r.status).toBe(201)
      const sid = ((await r.json()) as { data: { added_selectors: { id: number }[] } }).data.added_selectors[0].id
      return `${id}/selectors/${sid}`
    },
    act: (path) => json('DELETE', `/api/v2/asset-groups/${path}`),
    rows: intentAnd('DeleteAssetGroupSelector'),
    changes: ['asset_group_tag_selectors', 'asset_group_tag_selector_seeds'],
  },
  {
    name: 'create an asset group tag',
    route: 'POST /api/v2/asset-group-tags',
    act: () => json('POST', '/api/v2/asset-group-tags', { name: `Audit tag ${uniq()}`, type: 2, description: 'atomic' }),
    rows: intentAnd('CreateAssetGroupTag'),
    changes: ['asset_groups'],
  },
  {
    name: 'update an asset group tag',
    route: 'PATCH /api/v2/asset-group-tags/:asset_group_tag_id',
    prepare: assetGroup,
    act: (id) => json('PATCH', `/api/v2/asset-group-tags/${id}`, { name: `Audit renamed ${uniq()}`, description: `changed ${uniq()}` }),
    rows: intentAnd('UpdateAssetGroupTag'),
    changes: ['asset_groups'],
  },
  {
    name: 'delete an asset group tag',
    route: 'DELETE /api/v2/asset-group-tags/:asset_group_tag_id',
    prepare: assetGroup,
    act: (id) => json('DELETE', `/api/v2/asset-group-tags/${id}`),
    rows: intentAnd('DeleteAssetGroupTag'),
    changes: ['asset_groups'],
  },
  {
    name: 'create an asset group tag selector (a Cypher rule)',
    route: 'POST /api/v2/asset-group-tags/:asset_group_tag_id/selectors',
    act: () => json('POST', '/api/v2/asset-group-tags/1/selectors', { name: `audit ${uniq()}`, seeds: [{ type: 2, value: 'MATCH (n:Domain) RETURN n' }] }),
    rows: intentAnd('CreateAssetGroupTagSelector'),
    changes: ['asset_group_tag_selectors', 'asset_group_tag_selector_seeds'],
  },
  {
    name: 'update an asset group tag selector',
    route: 'PATCH /api/v2/asset-group-tags/:asset_group_tag_id/selectors/:asset_group_tag_selector_id',
    prepare: tagSelector,
    act: (id) => json('PATCH', `/api/v2/asset-group-tags/1/selectors/${id}`, { description: `changed ${uniq()}`, disabled: true }),
    rows: intentAnd('UpdateAssetGroupTagSelector'),
    changes: ['asset_group_tag_selectors'],
  },
  {
    name: 'delete an asset group tag selector',
    route: 'DELETE /api/v2/asset-group-tags/:asset_group_tag_id/selectors/:asset_group_tag_selector_id',
    prepare: tagSelector,
    act: (id) => json('DELETE', `/api/v2/asset-group-tags/1/selectors/${id}`),
    rows: intentAnd('DeleteAssetGroupTagSelector'),
    changes: ['asset_group_tag_selectors', 'asset_group_tag_selector_seeds'],
  },
  {
    name: 'create a saved query',
    route: 'POST /api/v2/saved-queries',
    act: () => json('POST', '/api/v2/saved-queries', { name: `audit-${uniq()}`, query: 'MATCH (n) RETURN n LIMIT 1' }),
    rows: intentAnd('CreateSavedQuery'),
    changes: ['saved_queries'],
  },
  {
    name: 'import saved queries',
    route: 'POST /api/v2/saved-queries/import',
    act: () => json('POST', '/api/v2/saved-queries/import', { name: `audit-import-${uniq()}`, query: 'MATCH (n) RETURN n LIMIT 1', description: '' }),
    rows: intentAnd('ImportSavedQuery'),
    changes: ['saved_queries'],
  },
  {
    name: 'update a saved query',
    route: 'PUT /api/v2/saved-queries/:id',
    prepare: savedQuery,
    act: (id) => json('PUT', `/api/v2/saved-queries/${id}`, { name: `audit-renamed-${uniq()}` }),
    rows: intentAnd('UpdateSavedQuery'),
    changes: ['saved_queries'],
  },
  {
    name: 'delete a saved query',
    route: 'DELETE /api/v2/saved-queries/:id',
    prepare: savedQuery,
    act: (id) => json('DELETE', `/api/v2/saved-queries/${id}`),
    rows: intentAnd('DeleteSavedQuery'),
    changes: ['saved_queries'],
  },
  {
    name: 'share a saved query',
    route: 'PUT /api/v2/saved-queries/:id/permissions',
    prepare: savedQuery,
    act: (id) => json('PUT', `/api/v2/saved-queries/${id}/permissions`, { public: true }),
    rows: intentAnd('UpdateSavedQueryPermissions'),
    changes: ['saved_queries_permissions'],
  },
  {
    name: 'unshare a saved query',
    route: 'DELETE /api/v2/saved-queries/:id/permissions',
    prepare: publicSavedQuery,
    act: (id) => json('DELETE', `/api/v2/saved-queries/${id}/permissions`, { user_ids: [] }),
    rows: intentAnd('DeleteSavedQueryPermissions'),
    changes: ['saved_queries_permissions'],
  },
  {
    name: 'register a collector client',
    route: 'POST /api/v2/clients',
    act: () => json('POST', '/api/v2/clients', { name: `aa-client-${uniq()}`, type: 'azurehound', environment_id: 'AA-T' }),
    rows: intentAnd('CreateClient'),
    changes: ['clients', 'users', 'api_tokens'],
  },
  {
    name: 'change a client',
    route: 'PUT /api/v2/clients/:id',
    prepare: newClient,
    act: (cl) => json('PUT', `/api/v2/clients/${(cl as Cl).id}`, { name: `aa-renamed-${uniq()}` }),
    rows: intentAnd('UpdateClient'),
    changes: ['clients'],
  },
  {
    name: 'delete a client',
    route: 'DELETE /api/v2/clients/:id',
    prepare: newClient,
    act: (cl) => json('DELETE', `/api/v2/clients/${(cl as Cl).id}`),
    rows: intentAnd('DeleteClient'),
    changes: ['clients', 'users', 'api_tokens'],
  },
  {
    name: "regenerate a client's token",
    route: 'PUT /api/v2/clients/:id/token',
    prepare: newClient,
    act: (cl) => json('PUT', `/api/v2/clients/${(cl as Cl).id}/token`),
    rows: intentAnd('RegenerateClientToken'),
    changes: ['clients', 'api_tokens'],
  },
  {
    name: "a client's check-in",
    route: 'PUT /api/v2/clients/update',
    prepare: newClient,
    act: (cl) => asClient(cl as Cl, 'PUT', '/api/v2/clients/update', { Address: '10.1.1.1', Hostname: `h-${uniq()}`, Version: 'v1' }),
    rows: intentAnd('ClientCheckin'),
    changes: ['clients'],
  },
  {
    name: 'run a client job now',
    route: 'POST /api/v2/clients/:id/jobs',
    prepare: newClient,
    act: (cl) => json('POST', `/api/v2/clients/${(cl as Cl).id}/jobs`, { session_collection: true }),
    rows: intentAnd('CreateClientJob'),
    changes: ['client_jobs'],
  },
  {
    name: 'a client starts its job',
    route: 'POST /api/v2/jobs/start',
    prepare: async () => {
      const cl = await newClient()
      return { cl, job: await clientJob(cl) }
    },
    act: (p) => asClient((p as { cl: Cl }).cl, 'POST', '/api/v2/jobs/start', { id: (p as { job: number }).job }),
    rows: intentAnd('StartClientJob'),
    changes: ['client_jobs', 'ingest_jobs'],
  },
  {
    name: 'a client posts data',
    route: 'POST /api/v2/ingest',
    prepare: runningClientJob,
    act: (p) => asClient((p as { cl: Cl }).cl, 'POST', '/api/v2/ingest', clientGraph((p as { cl: Cl }).cl)),
    rows: intentAnd('ClientIngest'),
    changes: ['client_job_posts', 'ingest_staging'],
    // the job's post counter numbers the posts' staging rows: a failed post consumes its number (src/clients/jobs.store.ts reservePost)
    mayChangeOnFailure: ['client_jobs'],
  },
  {
    name: 'a client ends its job (every post written in one batch)',
    route: 'POST /api/v2/jobs/end',
    prepare: async () => {
      const p = await runningClientJob()
      const id = `AA-END-${uniq()}`
      const env_ = (await env.DB.prepare('SELECT environment_id FROM clients WHERE id = ?').bind(p.cl.id).first<{ environment_id: string }>())!.environment_id
      expect((await asClient(p.cl, 'POST', '/api/v2/ingest', { graph: { nodes: [{ id, kinds: ['GHUser'], properties: { environmentid: env_ } }] } })).status).toBe(202)
      return p
    },
    act: (p) => asClient((p as { cl: Cl }).cl, 'POST', '/api/v2/jobs/end', { status: 'complete', message: 'done' }),
    rows: intentAnd('EndClientJob'),
    changes: ['nodes', 'client_jobs', 'client_job_posts', 'ingest_jobs', 'ingest_staging'],
  },
  {
    name: 'cancel a client job',
    route: 'PUT /api/v2/jobs/:id/cancel',
    prepare: async () => clientJob(await newClient()),
    act: (job) => json('PUT', `/api/v2/jobs/${job as number}/cancel`),
    rows: intentAnd('CancelClientJob'),
    changes: ['client_jobs'],
  },
  {
    name: 'schedule a collection',
    route: 'POST /api/v2/events',
    prepare: newClient,
    act: (cl) => json('POST', '/api/v2/events', { client_id: (cl as Cl).id, rrule: 'RRULE:FREQ=WEEKLY', session_collection: true }),
    rows: intentAnd('CreateClientSchedule'),
    changes: ['client_schedules'],
  },
  {
    name: 'change a schedule',
    route: 'PUT /api/v2/events/:id',
    prepare: schedule,
    act: (id) => json('PUT', `/api/v2/events/${id as number}`, { rrule: 'RRULE:FREQ=HOURLY;INTERVAL=6' }),
    rows: intentAnd('UpdateClientSchedule'),
    changes: ['client_schedules'],
  },
  {
    name: 'delete a schedule',
    route: 'DELETE /api/v2/events/:id',
    prepare: schedule,
    act: (id) => json('DELETE', `/api/v2/events/${id as number}`),
    rows: intentAnd('DeleteClientSchedule'),
    changes: ['client_schedules'],
  },
  {
    // the request's own batch (the graph itself is deleted later, in chunks, by the Analyzer object): an ended
    // upload job's history, and custom selectors with the analysis run that follows them
    name: 'clear file-ingest history and custom selectors',
    route: 'POST /api/v2/clear-database',
    prepare: async () => {
      const job = await startUploadJob(admin)
      await endUploadJob(admin, job.data.id)
      await quiesce()
      await tagSelector()
    },
    act: () => json('POST', '/api/v2/clear-database', { deleteFileIngestHistory: true, deleteAssetGroupSelectors: [1] }),
    rows: intentAnd('DeleteBloodhoundData'),
    changes: ['ingest_jobs', 'asset_group_tag_selectors', 'asset_group_tag_selector_seeds', 'analysis_runs'],
    fields: (s) => expect(s[0].options).toMatchObject({ deleteFileIngestHistory: true, deleteAssetGroupSelectors: [1] }),
  },
  {
    name: 'register custom node kinds',
    route: 'POST /api/v2/custom-nodes',
    prepare: async () => `AA_${uniq()}`,
    act: (k) => json('POST', '/api/v2/custom-nodes', { custom_types: { [`${k as string}_A`]: faIcon('user'), [`${k as string}_B`]: faIcon('box', '#abc') } }),
    rows: intentAnd('CreateCustomNodeKind'),
    changes: ['custom_node_kinds'],
    fields: (s, k) => expect(s[0].kinds).toEqual([`${k as string}_A`, `${k as string}_B`]),
  },
  {
    name: "change a custom node kind's icon",
    route: 'PUT /api/v2/custom-nodes/:kind_name',
    prepare: customKind,
    act: (k) => json('PUT', `/api/v2/custom-nodes/${k as string}`, { config: faIcon('server', '#123456') }),
    rows: intentAnd('UpdateCustomNodeKind'),
    changes: ['custom_node_kinds'],
    fields: (s, k) => expect(s[0]).toMatchObject({ kind: k, icon: { type: 'font-awesome', name: 'server', color: '#123456' } }),
  },
  {
    name: 'delete a custom node kind',
    route: 'DELETE /api/v2/custom-nodes/:kind_name',
    prepare: customKind,
    act: (k) => json('DELETE', `/api/v2/custom-nodes/${k as string}`),
    rows: intentAnd('DeleteCustomNodeKind'),
    changes: ['custom_node_kinds'],
    fields: (s, k) => expect(s[0].kind).toBe(k),
  },
  {
    name: "set a domain's collected flag",
    route: 'PATCH /api/v2/domains/:object_id',
    prepare: async () => {
      const sid = `S-1-5-21-9${Date.now() % 100000}-${uniq().replace(/[^0-9]/g, '1')}`
      await insertGraph(env.DB, [{ objectid: sid, kinds: ['Domain'], name: `AA-${sid}.EXAMPLE`, environment_id: sid, properties: { collected: false } }], [])
      return sid
    },
    act: (sid) => json('PATCH', `/api/v2/domains/${sid as string}`, { collected: true }),
    rows: intentAnd('MutateGraph'),
    changes: ['nodes'],
    fields: ([s], sid) => expect(s).toMatchObject({ objectid: sid, collected: true }),
  },
  {
    name: 'set a configuration parameter',
    route: 'PUT /api/v2/config',
    act: () => json('PUT', '/api/v2/config', { key: 'auth.password_expiration_window', value: { duration: `P${90 + Math.floor(Math.random() * 100)}D` } }),
    rows: intentAnd('UpdateParameter'),
    changes: ['app_config_parameters'],
    fields: ([s]) => expect(s).toMatchObject({ parameter: 'auth.password_expiration_window' }),
  },
  {
    name: 'toggle a feature flag',
    route: 'PUT /api/v2/features/:feature_id/toggle',
    act: () => json('PUT', '/api/v2/features/1/toggle'),
    rows: intentAnd('ToggleEarlyAccessFeatureFlag'),
    changes: ['feature_flags'],
    fields: ([s]) => expect(s).toMatchObject({ feature_id: 1, flag: 'ntlm_post_processing' }),
  },
]

describe('the first administrator (bootstrap on the first login) is a change with its own entry', () => {
  it('a failed login batch creates no user; the successful one writes CreateUser and LoginAttempt in its batches', async () => {
    expect((await env.DB.prepare('SELECT count(*) AS n FROM users').first<{ n: number }>())!.n).toBe(0)
    const err = vi.spyOn(console, 'error').mockImplementation(() => {})
    try {
      const res = await withSuccessRowsFailing(() => login('admin', 'test-admin-password'))
      expect(res.status).toBe(500)
      expect((await env.DB.prepare('SELECT count(*) AS n FROM users').first<{ n: number }>())!.n).toBe(0)
      expect((await rowsOf(res.headers.get('requestid')!)).map((r) => [r.action, r.status])).toEqual([['LoginAttempt', 'failure']])
    } finally {
      err.mockRestore()
    }
    const ok = await login('admin', 'test-admin-password')
    expect(ok.status).toBe(200)
    const rows = await rowsOf(ok.headers.get('requestid')!)
    expect(rows.map((r) => [r.action, r.status])).toEqual([
      ['CreateUser', 'success'],
      ['LoginAttempt', 'success'],
    ])
    expect(rows[0].commit_id).toBe(rows[1].commit_id)
    expect(JSON.parse(rows[0].fields)).toMatchObject({ principal_name: 'admin', roles: ['Administrator'], bootstrap: true })
    expect(rows.map((r) => r.fields).join()).not.toContain('test-admin-password')
  })
})

describe('every audited route writes its outcome in its change’s batch', () => {
  beforeAll(async () => {
    const r = await hclient().login('admin', 'test-admin-password')
    adminJwt = r.data.session_token
    admin = hclient({ kind: 'bearer', jwt: adminJwt })
  }, 60_000)

  it('every route with an audit action has a case here (the route table is walked)', () => {
    const audited = ROUTES.filter((r) => r.def.audit && 'action' in r.def.audit).map((r) => `${r.def.method.toUpperCase()} ${r.def.path}`)
    const covered = new Set(CASES.map((c) => c.route))
    expect(audited.filter((r) => !covered.has(r))).toEqual([])
    expect([...covered].filter((r) => !audited.includes(r))).toEqual([])
    count('audit atomicity routes', covered.size)
  })

  for (const c of CASES) {
    it(`${c.name} (${c.route})`, { timeout: 60_000 }, async () => {
      const logged: string[] = []
      const err = vi.spyOn(console, 'error').mockImplementation((line: unknown) => void logged.push(String(line)))
      const warn = vi.spyOn(console, 'warn').mockImplementation(() => {})
      try {
        // 1. the success row cannot be written: nothing of the change may remain
        await quiesce()
        const prepared = c.prepare ? await c.prepare() : undefined
        await quiesce()
        const before = await dbDigest()
        const res = await withSuccessRowsFailing(() => c.act(prepared))
        const text = await res.text()
        await quiesce()
        const after = await dbDigest()
        const allowed = new Set(c.mayChangeOnFailure ?? [])
        const changed = changedTables(before, after).filter((t) => !allowed.has(t.split(' ')[0]))
        expect(changed, `${c.name}: its change (or a success row) survived the failed success row (answered ${res.status}: ${text.slice(0, 200)})`).toEqual([])
        const failedRows = await rowsOf(res.headers.get('requestid')!)
        expect(failedRows.map((r) => r.status)).toEqual(c.rows[0][1] === 'intent' ? ['intent', 'failure'] : ['failure'])
        // the request's own action (a sign-in's is LoginAttempt, its last row)
        expect(failedRows.map((r) => r.action)).toEqual(failedRows.map(() => c.rows.at(-1)![0]))
        if (res.status === 302) expect(res.headers.get('location')).toMatch(/error=/)
        else {
          expect(res.status).toBeGreaterThanOrEqual(400)
          expect(envelopeProblem(res, text), `${c.name}: ${text.slice(0, 200)}`).toBeNull()
          expect(internalLeaks(text)).toEqual([])
        }
        count('audit fault cases')

        // 2. the same request without the fault: exactly its entries, one commit id, the change made
        const prepared2 = c.prepare ? await c.prepare() : undefined
        await quiesce()
        const before2 = await dbDigest()
        const ok = await c.act(prepared2)
        const okText = await ok.text()
        if (c.signIn) {
          // the assertion consumer's documented success: 302 to the UI (not its error page) with one session cookie
          expect(ok.status, `${c.name}: ${okText.slice(0, 300)}`).toBe(302)
          expect(ok.headers.get('location')).not.toMatch(/error=/)
          expect(ok.headers.getSetCookie().filter((v) => v.startsWith('token='))).toHaveLength(1)
        } else expect(ok.status, `${c.name}: ${okText.slice(0, 300)}`).toBeLessThan(300)
        const rows = await rowsOf(ok.headers.get('requestid')!)
        expect(rows.map((r) => [r.action, r.status])).toEqual(c.rows)
        expect(new Set(rows.map((r) => r.commit_id)).size).toBe(1)
        await quiesce()
        const changed2 = changedTables(before2, await dbDigest()).map((t) => t.split(' ')[0])
        for (const t of c.changes) expect(changed2, `${c.name}: ${t} unchanged`).toContain(t)
        c.fields?.(
          rows.filter((r) => r.status === 'success').map((r) => JSON.parse(r.fields) as Record<string, unknown>),
          prepared2,
        )
        expect(logged.filter((l) => l.includes(AUDIT_OUTSIDE_BATCH))).toEqual([])
      } finally {
        err.mockRestore()
        warn.mockRestore()
      }
    })
  }

  it('a request that changes nothing (an SSO provider PATCH naming no change) records success with changed: false', async () => {
    const sso = ssoId((await createSamlProvider(admin, { name: `audit-${uniq()}`, metadata: OKTA })).data.sso_provider_id)
    const err = vi.spyOn(console, 'error')
    try {
      const res = await form('PATCH', `/api/v2/sso-providers/${sso}`, new FormData())
      expect(res.status).toBe(200)
      const rows = await rowsOf(res.headers.get('requestid')!)
      expect(rows.map((r) => [r.action, r.status])).toEqual(intentAnd('UpdateSSOIdentityProvider'))
      expect(JSON.parse(rows[1].fields)).toMatchObject({ changed: false })
      expect(err.mock.calls.flat().join('\n')).not.toContain(AUDIT_OUTSIDE_BATCH)
    } finally {
      err.mockRestore()
    }
  })
})
