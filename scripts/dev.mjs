#!/usr/bin/env node
// `npm run dev`: local defaults for secrets, local D1 migrations, the first administrator, then
// `wrangler dev` on http://127.0.0.1:8787. Safe to run again: every step is idempotent.
import { execFileSync, spawn } from 'node:child_process'
import { copyFileSync, existsSync, readFileSync } from 'node:fs'
import { pbkdf2Sync, randomBytes, randomUUID } from 'node:crypto'
import path from 'node:path'

const root = path.resolve(import.meta.dirname, '..')
process.chdir(root)
const wrangler = (args, opts = {}) => execFileSync('npx', ['wrangler', ...args], { stdio: ['ignore', 'pipe', 'inherit'], ...opts })

if (!existsSync('.dev.vars')) {
  copyFileSync('.dev.vars.example', '.dev.vars')
  console.log('created .dev.vars from .dev.vars.example (local-only secrets)')
}
const vars = Object.fromEntries(
  readFileSync('.dev.vars', 'utf8')
    .split('\n')
    .map((l) => l.match(/^\s*([A-Z0-9_]+)\s*=\s*"?(.*?)"?\s*$/))
    .filter(Boolean)
    .map((m) => [m[1], m[2]]),
)
const toml = readFileSync('wrangler.toml', 'utf8')
const username = vars.BOOTSTRAP_ADMIN_USERNAME ?? toml.match(/BOOTSTRAP_ADMIN_USERNAME\s*=\s*"([^"]*)"/)?.[1] ?? 'admin'
const password = vars.BOOTSTRAP_ADMIN_PASSWORD

console.log('applying local D1 migrations ...')
wrangler(['d1', 'migrations', 'apply', 'DB', '--local'], { env: { ...process.env, CI: 'true' } })

if (password) {
  // Same format as src/auth/password.ts: pbkdf2-sha256$iterations$salt$hash
  const salt = randomBytes(16)
  const hash = pbkdf2Sync(password, salt, 100_000, 32, 'sha256')
  const stored = `pbkdf2-sha256$100000$${salt.toString('base64')}$${hash.toString('base64')}`
  const now = new Date().toISOString()
  const q = (s) => `'${String(s).replace(/'/g, "''")}'`
  const sql =
    `INSERT INTO users (id, principal_name, email, password_hash, roles, is_disabled, all_environments, environment_ids, created_at, updated_at) ` +
    `SELECT ${q(randomUUID())}, ${q(username)}, NULL, ${q(stored)}, '["Administrator"]', 0, 1, '[]', ${q(now)}, ${q(now)} ` +
    `WHERE NOT EXISTS (SELECT 1 FROM users)`
  wrangler(['d1', 'execute', 'DB', '--local', '--command', sql])
}

console.log(`
EdgeHound is starting on http://127.0.0.1:8787

  Log in (first administrator, created only while the database has no user):
    curl -s http://127.0.0.1:8787/api/v2/login -H 'Content-Type: application/json' \\
      -d '{"login_method":"secret","username":"${username}","secret":"${password ?? '<BOOTSTRAP_ADMIN_PASSWORD>'}"}'
  then create an API token with the session token:
    curl -s http://127.0.0.1:8787/api/v2/tokens -H "Authorization: Bearer <session_token>" \\
      -H 'Content-Type: application/json' -d '{"token_name":"my-token"}'
  Console (sign in with the same user name and password): http://127.0.0.1:8787/ui/
  API explorer: http://127.0.0.1:8787/api/v2/docs    OpenAPI: http://127.0.0.1:8787/api/v2/spec
`)
// Optional demo data (bench/demo.ts, the benchmark's generated AD + Azure graph, ingested through the API
// once the server answers): `npm run dev -- --demo` or EDGEHOUND_DEMO=1. Not forwarded to wrangler.
const demo = process.argv.includes('--demo') || process.env.EDGEHOUND_DEMO === '1'
// Miniflare fetches the `Request.cf` placeholder from workers.cloudflare.com at start; offline that printed two
// 'getaddrinfo ENOTFOUND' stack traces (the explorer check disables it the same way, test/browser/explorer.mjs).
// EdgeHound reads nothing from `request.cf`, so the built-in placeholder is enough; set the variable to `true` to
// have the fetched one.
const devEnv = { ...process.env, CLOUDFLARE_CF_FETCH_ENABLED: process.env.CLOUDFLARE_CF_FETCH_ENABLED ?? 'false' }
const child = spawn('npx', ['wrangler', 'dev', '--ip', '127.0.0.1', '--port', '8787', ...process.argv.slice(2).filter((a) => a !== '--demo')], {
  stdio: 'inherit',
  env: devEnv,
})
child.on('exit', (code) => process.exit(code ?? 0))
if (demo) spawn('npx', ['tsx', 'bench/demo.ts', '--base', 'http://127.0.0.1:8787', '--username', username, ...(password ? ['--password', password] : [])], { stdio: 'inherit' })
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => child.kill(sig))
