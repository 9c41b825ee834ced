/// <reference types="node" />
/**
 * The CLI and the example connector against the real worker (wrangler's unstable_startWorker, local D1 with
 * every migration, in a throw-away directory): the fake-server tests pin each command's behaviour, this file
 * proves the commands agree with the endpoints as they are implemented.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { run } from '../../src/cli/main'
import { EdgeHoundClient } from '../../src/client'
import { pollFindings } from '../../examples/poll-findings'
import { EDGES, NODES, D } from '../fixtures/findings/known-graph'
import { testIO } from './fake-server'
import { applyMigrations } from '../local-d1.mjs'

const root = path.resolve(import.meta.dirname, '../..')
const SECRETS = {
  ENVIRONMENT: 'development',
  JWT_SIGNING_KEY: 'cli-e2e-jwt-signing-key-0123456789abcdef012345678',
  TOKEN_ENCRYPTION_KEY: 'Y2xpLWUyZS10b2tlbi1lbmNyeXB0aW9uLWtleS0zMiE=',
  BOOTSTRAP_ADMIN_PASSWORD: 'cli-e2e-admin-password',
}

let worker: { url: Promise<URL>; dispose(): Promise<void> } | undefined
let persist = ''
let url = ''
let config = ''

beforeAll(async () => {
  persist = await mkdtemp(path.join(os.tmpdir(), 'edgehound-cli-e2e-'))
  // every migration in one Miniflare (as the browser suites do), not `wrangler d1 migrations apply`, which starts
  // a workerd per migration file
  await applyMigrations(persist)
  const { unstable_startWorker } = await import('wrangler')
  const w = await unstable_startWorker({
    config: path.join(root, 'wrangler.toml'),
    // `wrangler dev` derives the bundler's Node.js compatibility mode from compatibility_flags; the
    // programmatic API does not (it stays null), so node built-ins imported by dependencies (xml-crypto's
    // require("crypto")) fail the build and the worker never answers. Same rule as wrangler dev: nodejs_compat
    // with a compatibility date after 2024-09-23 is "v2".
    build: { nodejsCompatMode: (cfg) => (cfg.compatibility_flags.includes('nodejs_compat') ? 'v2' : null) },
    bindings: Object.fromEntries(Object.entries(SECRETS).map(([k, v]) => [k, { type: 'secret_text' as const, value: v }])),
    dev: { server: { hostname: '127.0.0.1', port: 0 }, inspector: false, persist, watch: false, logLevel: 'none' },
  })
  await w.ready
  worker = w
  url = (await w.url).origin
  config = path.join(persist, 'cli-config.json')
  // applying every migration and bundling the worker: about 40 s on an idle 2-core machine with wrangler's
  // migrations command, past 180 s at a load average of 17 (a fresh-clone CI run beside other work timed out here)
}, 420_000)

afterAll(async () => {
  await worker?.dispose()
  if (persist) await rm(persist, { recursive: true, force: true })
}, 60_000)

/** runs one CLI command against the worker with the shared profile file */
async function cli(argv: string[], opts: { stdin?: string; env?: Record<string, string> } = {}) {
  // real waits: against the real worker, `analysis run --interval 0.2` must poll every 0.2 s, not in a tight loop
  const io = await testIO({ EDGEHOUND_CONFIG: config, ...(opts.env ?? {}) }, { stdin: opts.stdin, realSleep: true })
  const code = await run(argv, io)
  return { code, out: io.out(), err: io.err(), io }
}

/** the known-answer AD domain of the findings tests, as an OpenGraph file */
function knownDomainFile(): string {
  const nodes = NODES.filter((n) => n.environment_id === D).map((n) => ({
    id: n.objectid,
    kinds: n.kinds.slice(0, 3),
    properties: Object.fromEntries(Object.entries(n.properties).filter(([, v]) => v !== null && typeof v !== 'object')),
  }))
  const ids = new Set(nodes.map((n) => n.id))
  const edges = EDGES.filter((e) => ids.has(e.start) && ids.has(e.end)).map((e) => ({ start: { value: e.start }, end: { value: e.end }, kind: e.kind }))
  return JSON.stringify({ graph: { nodes, edges } })
}

describe('edgehound against the real worker', () => {
  let tokenId = ''

  it('login --create-token stores a token; token list and a signed request work with it', async () => {
    const login = await cli(['login', '--url', url, '--password-stdin', '--create-token', 'e2e'], { stdin: SECRETS.BOOTSTRAP_ADMIN_PASSWORD })
    expect(login.err).toBe('')
    expect(login.code).toBe(0)
    const profile = JSON.parse(await readFile(config, 'utf8')).profiles.default
    tokenId = profile.token_id
    expect(profile).toMatchObject({ url, username: 'admin' })
    expect(profile.token_key).toBeTruthy()
    const list = await cli(['token', 'list', '--json'])
    expect(list.code).toBe(0)
    expect(JSON.parse(list.out).map((t: { id: string }) => t.id)).toContain(tokenId)
    const version = await cli(['request', 'GET', '/api/version'])
    expect(version.code).toBe(0)
    expect(JSON.parse(version.out).data.API.current_version).toBe('v2')
  })

  it('ingest: one accepted file, one rejected with the server’s message; then analysis and findings', async () => {
    const dir = path.join(persist, 'upload')
    await mkdir(dir, { recursive: true })
    await writeFile(path.join(dir, 'a-domain.json'), knownDomainFile())
    await writeFile(path.join(dir, 'b-broken.json'), JSON.stringify({ graph: { nodes: [{ id: 1 }], edges: [] } }))
    // JSON that is neither format: the message names both shapes, not just OpenGraph's `graph`
    await writeFile(path.join(dir, 'c-export.json'), JSON.stringify({ rows: [{ name: 'alice' }] }))
    const ing = await cli(['ingest', dir, '--json'])
    expect(ing.code).toBe(1)
    const summary = JSON.parse(ing.out)
    expect(summary).toMatchObject({ accepted: 1, rejected: 2, ended: true })
    expect(summary.files[0].result.nodes).toBeGreaterThan(10)
    expect(summary.files[1]).toMatchObject({ status: 400, accepted: false })
    expect(summary.files[1].error).toMatch(/id is required/)
    expect(summary.files[2]).toMatchObject({ status: 400, accepted: false })
    expect(summary.files[2].error).toContain('SharpHound / AzureHound output ({"meta": {"type"')
    expect(summary.files[2].error).toContain('OpenGraph ({"graph": {"nodes": [...], "edges": [...]}})')

    const status = await cli(['analysis', 'status', '--wait', '--interval', '0.2', '--timeout', '60'])
    expect(status.code).toBe(0)
    expect(status.out).toMatch(/^Analysis run \d+ complete: \d+ finding\(s\)/)

    const f = await cli(['findings', D, '--all', '--json'])
    expect(f.code).toBe(0)
    const j = JSON.parse(f.out)
    expect(j.environment).toMatchObject({ id: D, name: 'CORP.LOCAL' })
    expect(j.findings.length).toBeGreaterThan(0)
    for (const t of j.findings) expect(t.items).toHaveLength(t.count)

    const again = await cli(['analysis', 'run', '--interval', '0.2', '--timeout', '60'])
    expect(again.code).toBe(0)
    expect(again.out).toMatch(/^Analysis run \d+ complete/)
  }, 120_000)

  it('search, path (names resolved) and cypher with --save / --saved against the ingested graph', async () => {
    const s = await cli(['search', 'alice'])
    expect(s.code).toBe(0)
    expect(s.out).toMatch(/^ALICE@CORP\.LOCAL\s+User\s+S-1-5-21-1000-1001$/m)
    const p = await cli(['path', 'alice@corp.local', 'DOMAIN ADMINS@CORP.LOCAL', '--json'])
    expect(p.err).toBe('')
    expect(p.code).toBe(0)
    const j = JSON.parse(p.out)
    expect([j.start.objectid, j.end.objectid]).toEqual(['S-1-5-21-1000-1001', 'S-1-5-21-1000-512'])
    expect(j.edges.map((e: { kind: string }) => e.kind).sort()).toEqual(['AddMember', 'MemberOf'])
    const q = await cli(['cypher', '--save', 'e2e alice', "MATCH (u:User) WHERE u.name = 'ALICE@CORP.LOCAL' RETURN u"])
    expect(q.code).toBe(0)
    expect(q.out).toMatch(/^ALICE@CORP\.LOCAL\s+User\s+S-1-5-21-1000-1001/m)
    expect(q.err).toContain('saved as "e2e alice"')
    const again = await cli(['cypher', '--saved', 'e2e alice', '--json'])
    expect(again.code).toBe(0)
    expect(Object.values(JSON.parse(again.out).nodes).map((n) => (n as { objectId: string }).objectId)).toEqual(['S-1-5-21-1000-1001'])
    const bad = await cli(['cypher', 'MATCH RETURN'])
    expect(bad.code).toBe(1)
    expect(bad.err).toMatch(/^error: .+ \[query\]\n/)
    // the extension test below counts the saved queries: leave none behind
    const id = /\(id (\d+)\)/.exec(q.err)![1]
    expect((await cli(['request', 'DELETE', `/api/v2/saved-queries/${id}`])).code).toBe(0)
  })

  it('the example connector: alerts on the first run, nothing on the second', async () => {
    const profile = JSON.parse(await readFile(config, 'utf8')).profiles.default
    const client = new EdgeHoundClient({ baseUrl: url, credentials: { kind: 'token', tokenId: profile.token_id, tokenKey: profile.token_key } })
    const state = path.join(persist, 'poll-state.json')
    const first: string[] = []
    const r1 = await pollFindings({ client, stateFile: state, print: (l) => first.push(l), warn: (l) => first.push(`warn ${l}`) })
    expect(r1.failed).toEqual([])
    expect(r1.alerts.length).toBeGreaterThan(0)
    expect(first[0]).toMatch(new RegExp(`^== CORP\\.LOCAL \\(${D}\\): \\d+ new finding\\(s\\)$`))
    const second: string[] = []
    const r2 = await pollFindings({ client, stateFile: state, print: (l) => second.push(l), warn: (l) => second.push(`warn ${l}`) })
    expect(r2.alerts).toEqual([])
    expect(second).toEqual([])
  })

  it('extensions put (created, then updated), list, delete', async () => {
    const file = path.join(root, 'test/fixtures/extensions/github.json')
    const put = await cli(['extensions', 'put', file])
    expect(put.code).toBe(0)
    expect(put.out).toMatch(/^Extension "GitHound" created \(id (\d+), version .+\)\.\n$/)
    const id = /id (\d+)/.exec(put.out)![1]
    expect((await cli(['extensions', 'put', file])).out).toMatch(/^Extension "GitHound" updated/)
    expect((await cli(['extensions', 'list'])).out).toMatch(new RegExp(`\\n${id}\\s+GitHound\\s+`))
    const del = await cli(['extensions', 'delete', id])
    expect(del.code).toBe(0)
    const gone = await cli(['extensions', 'delete', id])
    expect(gone.code).toBe(1)
    expect(gone.err).toContain(`error: no extension found matching extension id: ${id}`)
  })

  it('extensions put DIR installs an extension folder; again changes nothing; its Tier Zero rule applies at the next run', async () => {
    const dir = path.join(root, 'test/fixtures/extensions/folder-acme')
    const put = await cli(['extensions', 'put', dir])
    expect(put.err).toBe('')
    expect(put.code).toBe(0)
    expect(put.out).toMatch(/schema\.json: extension "AcmeVault" created \(id \d+\)/)
    expect(put.out).toContain('rules 2 (2 created, 0 updated, 0 unchanged), saved searches 2 (2 created, 0 updated, 0 unchanged)')
    const again = await cli(['extensions', 'put', dir, '--json'])
    expect(again.code).toBe(0)
    const report = JSON.parse(again.out)
    expect([...report.rules, ...report.saved_searches].map((r: { action: string }) => r.action)).toEqual(['unchanged', 'unchanged', 'unchanged', 'unchanged'])

    const sel = JSON.parse((await cli(['request', 'GET', '/api/v2/asset-group-tags/1/selectors?type=eq:2'])).out)
    expect(sel.data.selectors.map((s: { name: string; disabled_at: { valid: boolean } }) => [s.name, s.disabled_at.valid])).toEqual([
      ['Acme Vault: operators of a vault', true],
      ['Acme Vault: Tier Zero vaults', false],
    ])
    const saved = JSON.parse((await cli(['request', 'GET', '/api/v2/saved-queries'])).out)
    expect(saved.data.map((q: { name: string }) => q.name).sort()).toEqual(['Acme Vault: all vaults', 'Acme Vault: who operates which vault'])

  }, 120_000)

  // Was skipped (2026-11-29) after failing in whole-suite CI runs only. Cause found (a CI run printed it): the
  // Cypher request got 429 "Too many requests" — the test IO's sleep did not wait, so `analysis run --interval
  // 0.2` polled the real worker in a tight loop for as long as the run took (longer on a loaded machine) and ran
  // the token into its rate limit. cli() now sleeps for real, and the CLI waits out a 429 (docs/cli.md).
  it('extensions put DIR: its Tier Zero rule applies to a vault ingested afterwards at the next run', async () => {
    // a vault ingested afterwards is Tier Zero once a run has evaluated the rule
    const file = path.join(persist, 'vaults.json')
    await writeFile(
      file,
      JSON.stringify({
        graph: {
          nodes: [
            { id: 'AV-VAULT-1', kinds: ['AV_Vault'], properties: { name: 'PAYROLL VAULT' } },
            { id: 'AV-OPERATOR-1', kinds: ['AV_Operator'], properties: { name: 'VAULT OPERATOR' } },
          ],
          edges: [{ start: { value: 'AV-OPERATOR-1' }, end: { value: 'AV-VAULT-1' }, kind: 'AV_Administers' }],
        },
      }),
    )
    expect((await cli(['ingest', file])).code).toBe(0)
    const ran = await cli(['analysis', 'run', '--interval', '0.2', '--timeout', '60'])
    expect(ran.code, ran.out + ran.err).toBe(0)
    const t0 = await cli(['request', 'POST', '/api/v2/graphs/cypher', '-d', JSON.stringify({ query: "MATCH (n:Tag_Tier_Zero) WHERE n.objectid STARTS WITH 'AV-' RETURN n" })])
    // failed once in a fresh-clone CI (2026-11-29 06:0x, code 1) and passes alone: the answer is printed when it fails,
    // with the runs the server lists, to tell an empty answer (404) from a refusal and a run that read too early
    if (t0.code !== 0)
      console.error(
        'cypher answer:', t0.out, t0.err,
        'ran:', ran.out, ran.err,
        'runs:', (await cli(['request', 'GET', '/api/v2/analysis'])).out,
        'selectors:', (await cli(['request', 'GET', '/api/v2/asset-group-tags/1/selectors?type=eq:2'])).out,
      )
    expect(t0.code, t0.out + t0.err).toBe(0)
    const nodes = Object.values(JSON.parse(t0.out).data.nodes) as { objectId: string; isTierZero: boolean }[]
    expect(nodes.map((n) => [n.objectId, n.isTierZero])).toEqual([['AV-VAULT-1', true]])
  }, 120_000)

  it('saml create prints the SP URLs; the same name again is a 409 message', async () => {
    const meta = path.join(root, 'test/fixtures/saml/idp/okta.xml')
    const ok = await cli(['saml', 'create', 'okta', meta])
    expect(ok.code).toBe(0)
    expect(ok.out).toContain(`sp_metadata_uri: ${url}/api/v2/sso/okta/metadata`)
    const dup = await cli(['saml', 'create', 'okta', meta])
    expect(dup.code).toBe(1)
    expect(dup.err).toMatch(/HTTP 409, request id [0-9a-f-]{36}/)
  })

  it('audit --since 1d shows what the steps above changed; --actor, --action and --status filter it', async () => {
    const all = await cli(['audit', '--since', '1d'])
    expect(all.code).toBe(0)
    expect(all.out).toMatch(/^ID\s+CREATED_AT\s+ACTOR\s+ACTION\s+STATUS/)
    for (const action of ['LoginAttempt', 'CreateAuthToken', 'CreateFileUploadJob', 'EndFileUploadJob', 'CreateGraphSchemaExtension', 'CreateSAMLIdentityProvider']) expect(all.out).toContain(action)
    type Entry = { action: string; status: string; actor_name: string; created_at: string; fields: Record<string, unknown> }
    const ext = JSON.parse((await cli(['audit', '--since', '1d', '--actor', 'admin', '--action', 'CreateGraphSchemaExtension', '--status', 'success', '--json'])).out) as Entry[]
    expect(ext.map((e) => [e.action, e.status, e.actor_name, e.fields.name])).toEqual([
      ['CreateGraphSchemaExtension', 'success', 'admin', 'GitHound'],
      ['CreateGraphSchemaExtension', 'success', 'admin', 'GitHound'],
      // the extension folder installed twice (extensions put DIR)
      ['CreateGraphSchemaExtension', 'success', 'admin', 'AcmeVault'],
      ['CreateGraphSchemaExtension', 'success', 'admin', 'AcmeVault'],
    ])
    expect(ext[0].created_at <= ext[1].created_at).toBe(true)
    const rules = JSON.parse((await cli(['audit', '--since', '1d', '--action', 'CreateAssetGroupTagSelector', '--status', 'success', '--json'])).out) as Entry[]
    expect(rules.map((e) => e.fields.name)).toEqual(['Acme Vault: operators of a vault', 'Acme Vault: Tier Zero vaults'])
    const refused = JSON.parse((await cli(['audit', '--action', 'CreateSAMLIdentityProvider', '--status', 'failure', '--json'])).out) as Entry[]
    expect(refused).toHaveLength(1)
    expect(JSON.stringify(refused)).not.toContain('BEGIN CERTIFICATE')
    expect(JSON.parse((await cli(['audit', '--actor', 'nobody', '--json'])).out)).toEqual([])
  })

  it('token revoke: the stored token is removed from the profile and stops working', async () => {
    const profile = JSON.parse(await readFile(config, 'utf8')).profiles.default
    const rev = await cli(['token', 'revoke', tokenId])
    expect(rev.code).toBe(0)
    expect(JSON.parse(await readFile(config, 'utf8')).profiles.default.token_id).toBeUndefined()
    const after = await cli(['request', 'GET', '/api/version', '--token-id', tokenId], { env: { EDGEHOUND_TOKEN_KEY: profile.token_key } })
    expect(after.code).toBe(1)
    expect(after.err).toContain('error: unknown or revoked token [auth]')
  })
})
