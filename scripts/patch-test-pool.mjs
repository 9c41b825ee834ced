// Works around a bug of @cloudflare/vitest-pool-workers 0.15.1 (pinned: the last line for Node 20) that makes
// the test suites slower with every Durable Object instance and every `exports.default` call they make, until
// property lookups overflow the stack ("RangeError: Maximum call stack size exceeded" from test-internal.mjs).
//
// Its `createProxyPrototypeClass` wraps `Class.prototype` in a new Proxy on *every* construction, so the N-th
// instance of a Durable Object (one limiter object per token, session, user and client IP here) resolves each
// method through N nested proxies. The Proxy only forwards unknown keys to the same function with the instance
// as receiver, so wrapping once is equivalent. This script makes that change in node_modules, idempotently,
// and says nothing when the file is already patched or no longer has the buggy line (a fixed release).
// Related upstream report: cloudflare/workers-sdk#15446. Test-only: the worker itself never loads this file.
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'

const root = path.resolve(import.meta.dirname, '..')
const file = path.join(root, 'node_modules/@cloudflare/vitest-pool-workers/dist/worker/lib/cloudflare/test-internal.mjs')
const buggy = '\t\tClass.prototype = new Proxy(Class.prototype, { get(target, key, receiver) {'
const fixed = '\t\tif (!Class.__edgehoundProxied) Class.__edgehoundProxied = true, Class.prototype = new Proxy(Class.prototype, { get(target, key, receiver) {'

export function patchTestPool() {
  if (!existsSync(file)) return 'absent'
  const text = readFileSync(file, 'utf8')
  if (text.includes(fixed)) return 'patched already'
  if (!text.includes(buggy)) return 'not needed'
  writeFileSync(file, text.replace(buggy, fixed))
  return 'patched'
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(`vitest-pool-workers proxy patch: ${patchTestPool()}`)
