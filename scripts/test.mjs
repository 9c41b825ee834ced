#!/usr/bin/env node
// `npm test`: runs every suite (workerd integration + unit, and the Node-side CLI suite when present),
// then prints the totals alone on a line as `N passed, N failed` (what CI reads).
// Extra arguments go to vitest, e.g. `npm test -- test/unit/signature.test.ts`.
import { execFileSync, spawn } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { patchTestPool } from './patch-test-pool.mjs'

const root = path.resolve(import.meta.dirname, '..')
const out = path.join(root, 'test', 'artifacts')
mkdirSync(out, { recursive: true })
const args = process.argv.slice(2)
// a test-harness bug fix in node_modules (see the script); silent unless it changed something
if (patchTestPool() === 'patched') console.log('vitest-pool-workers: nested-proxy fix applied (scripts/patch-test-pool.mjs)')
// the console's static files: wrangler.toml's [assets] folder must exist before the worker starts
execFileSync(process.execPath, [path.join(root, 'scripts', 'build-ui.mjs')], { cwd: root, stdio: 'inherit' })
const suites = [
  { name: 'workers', config: 'test/vitest.config.ts' },
  { name: 'cli', config: 'test/vitest.cli.config.ts' },
].filter((s) => existsSync(path.join(root, s.config)))

// workerd prints this line on stdout each time the pool closes a test runner's connection at the end of a
// file: harmless, and not ours. It is counted and hidden so that a real error stands out; nothing else is.
const SHUTDOWN_NOISE = /^exception = workerd\/api\/web-socket\.c\+\+:\d+: disconnected: WebSocket peer disconnected$/
let hidden = 0
// Uncaught-exception reports of faults that tests inject on purpose. workerd prints each as one header line
// `uncaught exception; source = …; stack = Error: …` followed by its stack frames. Each fault is recognised
// precisely (its message, and where that needs it the test file that throws it), so that a real error with a
// similar text is still printed; the matched report (header and stack) is hidden and counted per fault.
//  - findings-analyzer.test.ts renames finding_sparklines so that an analysis attempt fails: the Analyzer's
//    alarm then throws (the runtime retries it, which the test asserts). The table name is the test's own.
//  - auth-tokens.test.ts replaces a rate-limiter object's DB by one whose read throws `D1 unavailable`
//    (fail closed: the request gets 503); the object's read rejects after the worker has answered, and workerd
//    reports that rejection. The message alone is too plain, so the report is hidden only when its first frame
//    is the test's fake `first` in auth-tokens.test.ts: a real D1 failure has frames in src/ or workerd.
const INJECTED_FAULTS = [
  { name: 'the analyzer fault findings-analyzer.test.ts injects', header: /^uncaught exception;.*no such table: finding_sparklines\b/ },
  {
    name: 'the D1 fault auth-tokens.test.ts injects',
    header: /^uncaught exception; source = Uncaught \(in promise\); stack = Error: D1 unavailable$/,
    firstFrame: /^\s+at Object\.first \(\S*\/test\/integration\/auth-tokens\.test\.ts:\d+:\d+\)$/,
  },
]
const STACK_LINE = /^(\s+at |stack: )/
const hiddenFaults = new Map() // fault name -> reports hidden
let inInjected = false
/** a header line that matched a fault needing its first frame, held back until that frame is seen */
let held = null

/** Decides what of one line of output is printed: the raw lines to write (a held header is written late, or never). */
function filter(l) {
  if (held) {
    const h = held
    held = null
    if (h.fault.firstFrame.test(l.plain)) return (count(h.fault), (inInjected = true), [])
    return [h.raw, ...filter(l)]
  }
  if (SHUTDOWN_NOISE.test(l.plain)) return (hidden++, [])
  if (inInjected && STACK_LINE.test(l.plain)) return []
  inInjected = false
  const fault = INJECTED_FAULTS.find((f) => f.header.test(l.plain))
  if (!fault) return [l.raw]
  if (fault.firstFrame) return ((held = { fault, raw: l.raw }), [])
  return (count(fault), (inInjected = true), [])
}
function count(fault) {
  hiddenFaults.set(fault.name, (hiddenFaults.get(fault.name) ?? 0) + 1)
}

/** Runs vitest with stdout streamed line by line (minus the shutdown noise); resolves with its exit status. */
function runVitest(argv) {
  return new Promise((resolve) => {
    const child = spawn('npx', argv, { cwd: root, stdio: ['inherit', 'pipe', 'inherit'] })
    let rest = ''
    child.stdout.setEncoding('utf8')
    child.stdout.on('data', (chunk) => {
      const lines = (rest + chunk).split('\n')
      rest = lines.pop() ?? ''
      for (const line of lines) {
        for (const raw of filter({ raw: line + '\n', plain: line.replace(/\x1b\[[0-9;]*m/g, '').trimEnd() })) process.stdout.write(raw)
      }
    })
    child.on('close', (status) => {
      if (held) process.stdout.write(held.raw)
      held = null
      if (rest) process.stdout.write(rest)
      resolve({ status })
    })
  })
}

let passed = 0
let failed = 0
let crashed = false
const failures = [] // "file › test: first line of the message", repeated at the end so a long log's tail names them
for (const s of suites) {
  const json = path.join(out, `vitest-${s.name}.json`)
  rmSync(json, { force: true })
  const filters = args.filter((a) => !a.startsWith('-'))
  // When files are named, run only the suite(s) they belong to.
  if (filters.length && !filters.some((f) => (s.name === 'cli' ? f.includes('test/cli/') : !f.includes('test/cli/')))) continue
  const r = await runVitest(['vitest', 'run', '--config', s.config, '--reporter=default', '--reporter=json', `--outputFile.json=${json}`, ...args])
  if (!existsSync(json)) {
    console.error(`suite ${s.name}: vitest exited with ${r.status} and wrote no results`)
    crashed = true
    continue
  }
  const res = JSON.parse(readFileSync(json, 'utf8'))
  passed += res.numPassedTests
  failed += res.numFailedTests
  // A file that failed without a failed test counts as one failure: it failed to load, or a hook failed (a
  // beforeAll that throws or times out leaves its tests skipped, and vitest counts no failed test for them).
  const fileFailed = (f) => f.status === 'failed' && !f.assertionResults.some((t) => t.status === 'failed')
  failed += res.testResults.filter(fileFailed).length
  for (const f of res.testResults) {
    const file = path.relative(process.cwd(), f.name)
    if (fileFailed(f)) failures.push(`${file}: ${firstLine(f.message)}`)
    for (const t of f.assertionResults) if (t.status === 'failed') failures.push(`${file} › ${t.fullName}: ${firstLine(t.failureMessages?.[0])}`)
  }
  console.log(`suite ${s.name}: ${res.numPassedTests} passed, ${res.numFailedTests + res.testResults.filter(fileFailed).length} failed`)
}
function firstLine(text) {
  return String(text ?? '').split('\n').find((l) => l.trim()) ?? ''
}
// CI prints this file again at the very end of .ci/run, after the benchmark and browser suites' output.
const failuresFile = path.join(out, 'failed-tests.txt')
writeFileSync(failuresFile, failures.map((f) => `FAIL ${f}\n`).join(''))
if (failures.length) {
  console.log(`\n${failures.length} failed test(s):`)
  for (const f of failures) console.log(`FAIL ${f}`)
}
if (hidden) console.log(`(${hidden} workerd "WebSocket peer disconnected" lines at test-runner shutdown hidden)`)
for (const [name, n] of hiddenFaults) console.log(`(${n} uncaught-exception report(s) of ${name} hidden)`)
console.log(`${passed} passed, ${failed} failed`)
process.exit(failed > 0 || crashed || passed === 0 ? 1 : 0)
