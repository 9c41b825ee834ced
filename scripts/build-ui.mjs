#!/usr/bin/env node
// Builds the console (ui/, Vite) into ui/dist, the folder wrangler.toml's [assets] serves. Skipped when
// ui/dist is newer than every input (the console's sources, its config and the typed client it imports), so
// `npm test`, `npm run dev` and wrangler's [build] step pay for it only after a change. `--force` rebuilds.
import { execFileSync } from 'node:child_process'
import { existsSync, readdirSync, statSync } from 'node:fs'
import path from 'node:path'

const root = path.resolve(import.meta.dirname, '..')
const out = path.join(root, 'ui', 'dist', 'index.html')
const inputs = ['ui/src', 'ui/public', 'ui/index.html', 'ui/vite.config.ts', 'ui/tsconfig.json', 'src/client', 'src/auth/signature.ts', 'src/auth/encoding.ts', 'package-lock.json']

function newest(p) {
  if (!existsSync(p)) return 0
  const s = statSync(p)
  if (!s.isDirectory()) return s.mtimeMs
  return Math.max(s.mtimeMs, ...readdirSync(p).map((n) => newest(path.join(p, n))))
}

const force = process.argv.includes('--force')
const built = existsSync(out) ? statSync(out).mtimeMs : 0
const changed = Math.max(...inputs.map((p) => newest(path.join(root, p))))
if (force || built === 0 || changed > built) {
  execFileSync(process.execPath, [path.join(root, 'node_modules', 'vite', 'bin', 'vite.js'), 'build', '--config', 'ui/vite.config.ts', '--logLevel', 'warn'], {
    cwd: root,
    stdio: 'inherit',
  })
  console.log('console built into ui/dist')
}
