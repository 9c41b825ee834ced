#!/usr/bin/env node
// Data survives a restart of the local server (issue 8).
//
//   node test/hardening/restart.mjs
//
// Starts `wrangler dev` with --persist-to a fresh temporary directory (migrations applied there first),
// writes through the API — users, tokens (one then revoked), sessions (one then logged out), a SAML
// provider, a graph extension, an ingest job with a small AD + Azure graph, the analysis it triggers —
// reads everything back, stops the server, starts it again on the same directory and reads everything
// again. Every check is printed; the last line is `N passed, N failed` (what .ci/run reads); the exit code
// is 0 only when nothing failed. Only the processes this script started are stopped (by process group),
// and the temporary directory is removed.
import { spawn, execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { isDeepStrictEqual } from 'node:util'
import { tsImport } from 'tsx/esm/api'

const root = path.resolve(import.meta.dirname, '../..')
const imp = (p) => tsImport(path.join(root, p), import.meta.url)
const { EdgeHoundClient, EdgeHoundError } = await imp('src/client/index.ts')
const saml = await imp('src/client/saml.ts')
const ext = await imp('src/client/extensions.ts')
const graph = await imp('src/client/graph.ts')
const findings = await imp('src/client/findings.ts')
const { adPayload, azurePayload, ID, CORP } = await imp('test/fixtures/graph/corp.ts')
const { smallDoc } = await imp('test/fixtures/extensions/docs.ts')
const OKTA = readFileSync(path.join(root, 'test/fixtures/saml/idp/okta.xml'), 'utf8')

// Local-only secrets, passed as --var so that no .dev.vars is needed (or read: --var wins).
const SECRETS = {
  ENVIRONMENT: 'development',
  JWT_SIGNING_KEY: 'restart-test-jwt-signing-key-0123456789abcdef',
  TOKEN_ENCRYPTION_KEY: 'cmVzdGFydC10ZXN0LXRva2VuLWVuY3J5cHRpb24ta2U=',
  BOOTSTRAP_ADMIN_PASSWORD: 'restart-admin-password',
}
const ADMIN = { username: 'admin', password: SECRETS.BOOTSTRAP_ADMIN_PASSWORD }

let passed = 0
let failed = 0
function check(name, ok, detail = '') {
  if (ok) passed++
  else failed++
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${name}${!ok && detail ? `\n       ${String(detail).slice(0, 600)}` : ''}`)
}
async function attempt(name, fn) {
  try {
    const v = await fn()
    check(name, true)
    return v
  } catch (e) {
    check(name, false, e instanceof EdgeHoundError ? `${e.status} ${e.message}` : (e?.stack ?? e))
    return undefined
  }
}

function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer()
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address()
      s.close(() => resolve(port))
    })
    s.on('error', reject)
  })
}

const persist = mkdtempSync(path.join(tmpdir(), 'edgehound-restart-'))
const env = { ...process.env, CI: 'true', WRANGLER_SEND_METRICS: 'false', NO_COLOR: '1' }
let server = null

let ports = null
/** Starts wrangler dev; the second life uses the same port (answers such as SP URLs contain the origin). */
async function start() {
  ports ??= { port: await freePort(), inspector: await freePort() }
  const { port, inspector } = ports
  const args = ['wrangler', 'dev', '--ip', '127.0.0.1', '--port', String(port), '--inspector-port', String(inspector), '--persist-to', persist, '--show-interactive-dev-session=false']
  for (const [k, v] of Object.entries(SECRETS)) args.push('--var', `${k}:${v}`)
  const child = spawn('npx', args, { cwd: root, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] })
  let log = ''
  child.stdout.on('data', (d) => (log += d))
  child.stderr.on('data', (d) => (log += d))
  const base = `http://127.0.0.1:${port}`
  const deadline = Date.now() + 90_000
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`wrangler dev exited with ${child.exitCode}:\n${log.slice(-2000)}`)
    try {
      const r = await fetch(`${base}/health`)
      if (r.status === 200) {
        server = { child, base, log: () => log }
        return base
      }
    } catch {
      /* not up yet */
    }
    await new Promise((r) => setTimeout(r, 500))
  }
  stop()
  throw new Error(`wrangler dev did not answer /health within 90 s:\n${log.slice(-2000)}`)
}

/** Stops the server this script started: its whole process group (npx → wrangler → workerd). */
async function stop() {
  if (!server) return
  const { child } = server
  server = null
  const gone = new Promise((r) => child.once('exit', r))
  try {
    process.kill(-child.pid, 'SIGTERM')
  } catch {
    /* already gone */
  }
  const timer = setTimeout(() => {
    try {
      process.kill(-child.pid, 'SIGKILL')
    } catch {
      /* already gone */
    }
  }, 10_000)
  await gone
  clearTimeout(timer)
  // workerd may outlive npx for a moment; wait until its group is empty
  for (let i = 0; i < 50; i++) {
    try {
      process.kill(-child.pid, 0)
      await new Promise((r) => setTimeout(r, 200))
    } catch {
      return
    }
  }
}

process.on('SIGINT', async () => {
  await stop()
  process.exit(130)
})

const drop = (o, keys) => JSON.parse(JSON.stringify(o, (k, v) => (keys.includes(k) ? undefined : v)))

/** Everything a client can read back; volatile fields (a token's last_access, written by its limiter) left out. */
async function snapshot(c, ids) {
  return {
    self: (await c.self()).data,
    users: (await c.listUsers()).data.users,
    tokens: drop((await c.listTokens()).data.tokens, ['last_access']),
    samlProviders: (await saml.listSamlProviders(c)).data,
    ssoProviders: (await saml.listSsoProviders(c)).data,
    extensions: (await ext.listExtensions(c)).data,
    extension: (await ext.getExtension(c, ids.extensionId)).data,
    domains: (await graph.availableDomains(c)).data,
    search: (await graph.search(c, { q: 'alice' })).data,
    entity: (await graph.adEntity(c, 'users', ID.alice)).data,
    path: (await graph.shortestPath(c, ID.alice, ID.corp)).data,
    jobs: (await graph.listUploadJobs(c)).data,
    runs: (await findings.listAnalysisRuns(c)).data,
    findingTypes: (await findings.availableFindingTypes(c, CORP)).data,
  }
}

const clientFor = (base, credentials) => new EdgeHoundClient({ baseUrl: base, credentials })

async function main() {
  console.log(`persisting to ${persist}`)
  execFileSync('npx', ['wrangler', 'd1', 'migrations', 'apply', 'DB', '--local', '--persist-to', persist], { cwd: root, env, stdio: ['ignore', 'ignore', 'inherit'] })
  check('migrations applied to the temporary directory', true)

  // ---- first life ------------------------------------------------------------------------------
  let base = await start()
  check('first start answers /health', true)
  const anon = clientFor(base, { kind: 'none' })
  const login = await attempt('bootstrap administrator logs in', () => anon.login(ADMIN.username, ADMIN.password))
  if (!login) throw new Error('cannot continue without a session')
  const session = clientFor(base, { kind: 'bearer', jwt: login.data.session_token })
  const t = (await session.createToken('restart-admin')).data
  const admin = clientFor(base, { kind: 'token', tokenId: t.id, tokenKey: t.key })
  const ids = {}
  await attempt('create a Read-Only user with a password', async () => {
    ids.user = (await admin.createUser({ principal_name: 'restart-reader', roles: ['Read-Only'], secret: 'restart-reader-secret', email_address: 'reader@example.com' })).data.id
  })
  const revoked = (await admin.createToken('restart-revoked')).data
  await attempt('revoke a token', () => admin.revokeToken(revoked.id))
  const ended = (await anon.login(ADMIN.username, ADMIN.password)).data.session_token
  await attempt('log a session out', () => clientFor(base, { kind: 'bearer', jwt: ended }).logout())
  await attempt('create a SAML provider', async () => {
    ids.saml = (await saml.createSamlProvider(admin, { name: 'restart-okta', metadata: OKTA })).data.id
  })
  await attempt('upsert a graph extension', async () => {
    ids.extensionId = (await ext.upsertExtension(admin, smallDoc('RestartExt', 'RX'))).data.id
  })
  await attempt('ingest an AD and an Azure graph (one job)', () => graph.ingest(admin, adPayload, azurePayload))
  await attempt('the analysis requested by the ingest completes', async () => {
    for (let i = 0; i < 120; i++) {
      const runs = (await findings.listAnalysisRuns(admin)).data
      const list = Array.isArray(runs) ? runs : (runs.data ?? runs.runs ?? [])
      if (list.some((r) => r.status === 'complete') && !list.some((r) => r.status === 'pending' || r.status === 'running')) return
      await new Promise((r) => setTimeout(r, 500))
    }
    throw new Error('no completed analysis run within 60 s')
  })
  const before = await attempt('read everything back (first life)', () => snapshot(admin, ids))
  await stop()
  check('server stopped', true)

  // ---- second life -----------------------------------------------------------------------------
  base = await start()
  check('second start on the same directory answers /health', true)
  const admin2 = clientFor(base, { kind: 'token', tokenId: t.id, tokenKey: t.key })
  const after = await attempt('the token created before the restart still signs requests', () => snapshot(admin2, ids))
  if (before && after) {
    for (const k of Object.keys(before)) check(`unchanged after restart: ${k}`, isDeepStrictEqual(before[k], after[k]), `before ${JSON.stringify(before[k]).slice(0, 300)}\n       after  ${JSON.stringify(after[k]).slice(0, 300)}`)
  }
  await attempt('the session JWT issued before the restart is still valid', () => clientFor(base, { kind: 'bearer', jwt: login.data.session_token }).self())
  await attempt('the Read-Only user logs in with the password set before the restart', () => clientFor(base, { kind: 'none' }).login('restart-reader', 'restart-reader-secret'))
  await attempt('the bootstrap administrator was not created again', async () => {
    const users = (await admin2.listUsers()).data.users
    if (users.filter((u) => u.principal_name === 'admin').length !== 1 || users.length !== 2) throw new Error(`users: ${users.map((u) => u.principal_name).join(', ')}`)
  })
  const revokedNow = await clientFor(base, { kind: 'token', tokenId: revoked.id, tokenKey: revoked.key }).raw('GET', '/api/version')
  check('the token revoked before the restart is still refused (401)', revokedNow.status === 401, `${revokedNow.status}`)
  const endedNow = await clientFor(base, { kind: 'bearer', jwt: ended }).raw('GET', '/api/version')
  check('the session logged out before the restart is still refused (401)', endedNow.status === 401, `${endedNow.status}`)
  await attempt('writes work after the restart (a second extension version)', () => ext.upsertExtension(admin2, smallDoc('RestartExt', 'RX', '2.0.0')))
  await stop()
}

try {
  await main()
} catch (e) {
  check('restart test ran to the end', false, e?.stack ?? e)
} finally {
  await stop()
  rmSync(persist, { recursive: true, force: true })
}
console.log(`${passed} passed, ${failed} failed`)
process.exit(failed === 0 && passed > 0 ? 0 : 1)
