// Shared harness of the browser suites (explorer.mjs, console*.mjs): the check counter and its final
// "N passed, N failed" line, a local worker on a throw-away D1 directory (wrangler's unstable_startWorker, every
// migration applied in one Miniflare, no internet needed), and Debian's Chromium through playwright-core with every
// request to another origin refused and recorded, and every page/script error collected.
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { applyMigrations } from '../local-d1.mjs'

export { applyMigrations }
export const root = path.resolve(import.meta.dirname, '../..')
export const artifacts = path.join(root, 'test', 'artifacts')
mkdirSync(artifacts, { recursive: true })

// What a suite must close when it ends early (watchdog, a hung check, SIGTERM): the browsers and workers started
// through openBrowser and startLocalWorker register their close/stop here while they run.
const live = new Set()

/**
 * Counts checks; `finish()` prints the totals line CI reads and exits (non-zero on any failure or no check).
 *
 * A suite never hangs: a hung browser or worker must not eat CI's time. Playwright's own timeouts do not bound
 * everything: after `page.goto` times out the navigation stays pending, and `page.evaluate`/`evaluateHandle` (no
 * timeout) then wait for the new document forever (the CI failure of console-admin: its first sign-in page load
 * timed out and the next check's evaluateHandle hung). So:
 * - each check is bounded (`checkTimeoutMs`); a check that overruns ends the suite, since its page is stuck;
 * - a failed FIRST check ends the suite: the later checks build on the page it opened, and each would wait out its
 *   own timeouts on a page that never loaded;
 * - the watchdog (`timeoutMs`, the whole suite, worker start included) ends it too, as do SIGTERM/SIGINT (CI's
 *   `timeout`) and an event loop that drains while a promise never settles. Its default, 280 s, is just under
 *   .ci/run's limit for one suite (300 s), so a suite names its own cause first; the suites take 15-60 s on a
 *   quiet machine and up to ~240 s at a load average of 19 (measured).
 * Ending early: one FAIL line naming why, the browsers and workers closed (at most 10 s), the totals line, exit 1;
 * process.exit then runs playwright's and Miniflare's exit hooks, which SIGKILL Chromium's process group and
 * workerd, so nothing is left running even if closing hung.
 */
export function suite(label, { timeoutMs = 280_000, checkTimeoutMs = 90_000 } = {}) {
  let passed = 0
  let failed = 0
  let checks = 0
  let ended = false
  const finish = (code) => {
    ended = true
    clearTimeout(watchdog)
    console.log(`${passed} passed, ${failed} failed`)
    process.exit(code ?? (failed > 0 || passed === 0 ? 1 : 0))
  }
  const record = (message) => {
    failed++
    console.log(`FAIL ${message}`)
  }
  // once the suite is ending, what fails afterwards failed because its browser or worker was closed: not counted
  const fail = (message) => {
    if (!ended) record(message)
  }
  const end = async (message) => {
    if (ended) return
    ended = true
    record(message)
    const closing = Promise.allSettled([...live].map((close) => close()))
    await Promise.race([closing, new Promise((r) => setTimeout(r, 10_000).unref())])
    finish(1)
  }
  const seconds = (ms) => `${Math.round(ms / 1000)} s`
  const watchdog = setTimeout(() => end(`${label} did not finish within ${seconds(timeoutMs)} (watchdog)`), timeoutMs)
  watchdog.unref()
  // synchronous: Miniflare's own SIGTERM handler exits right after this one
  for (const signal of ['SIGTERM', 'SIGINT']) {
    process.once(signal, () => {
      if (ended) return
      record(`${label} was stopped by ${signal} (CI's time limit for one browser suite?)`)
      finish(1)
    })
  }
  process.once('beforeExit', () => {
    if (!ended) end(`${label} stopped: the event loop drained before the suite finished (an awaited promise never settled)`)
  })
  // each check's line says how long it took, e.g. "(2.4 s)", so a slow check shows in the CI log
  async function check(name, fn) {
    const first = ++checks === 1
    const t0 = performance.now()
    const took = () => `(${((performance.now() - t0) / 1000).toFixed(1)} s)`
    let timer
    const overrun = new Promise((resolve) => {
      timer = setTimeout(() => resolve('overrun'), checkTimeoutMs)
    })
    try {
      if ((await Promise.race([fn(), overrun])) === 'overrun') {
        await end(`${name} ${took()}: did not finish within ${seconds(checkTimeoutMs)}; the suite ends here (its page is stuck)`)
        return await new Promise(() => {}) // end() exits; nothing after this check runs
      }
      if (ended) return await new Promise(() => {})
      passed++
      console.log(`ok   ${name} ${took()}`)
    } catch (e) {
      if (ended) return await new Promise(() => {})
      fail(`${name} ${took()}: ${e?.message ?? e}`)
      if (first) {
        await end(`the remaining checks of ${label} were not run: its first check failed and they build on it`)
        return await new Promise(() => {})
      }
    } finally {
      clearTimeout(timer)
    }
  }
  return { check, fail, finish }
}

export function assert(cond, msg) {
  if (!cond) throw new Error(msg)
}

export function chromiumPath() {
  const candidates = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/lib/chromium/chromium', '/usr/bin/chromium-browser'].filter(Boolean)
  return candidates.find((p) => existsSync(p))
}

/**
 * The worker on 127.0.0.1 (random port) with `secrets` as its secret bindings and a fresh local D1 directory.
 * `buildUi` builds the console into ui/dist first (skipped when ui/dist is newer than its sources, e.g. when
 * `npm test` or .ci/run built it already). Prints one line with the time each part took. Returns { origin, stop }.
 */
export async function startLocalWorker({ secrets, tmpPrefix = 'edgehound-browser-', buildUi = false }) {
  const persist = mkdtempSync(path.join(os.tmpdir(), tmpPrefix))
  let worker
  const stop = async () => {
    live.delete(stop)
    await worker?.dispose().catch(() => {})
    rmSync(persist, { recursive: true, force: true })
  }
  live.add(stop)
  const times = []
  let t = performance.now()
  const lap = (what) => {
    const now = performance.now()
    times.push(`${what} ${((now - t) / 1000).toFixed(1)} s`)
    t = now
  }
  try {
    if (buildUi) {
      execFileSync(process.execPath, [path.join(root, 'scripts', 'build-ui.mjs')], { cwd: root, stdio: 'inherit' })
      lap('console build (or up-to-date check)')
    }
    await applyMigrations(persist)
    lap('migrations')
    // Offline: Miniflare would fetch the `Request.cf` placeholder from workers.cloudflare.com and print a DNS error
    // when it cannot; the built-in placeholder serves these tests as well.
    process.env.CLOUDFLARE_CF_FETCH_ENABLED ??= 'false'
    const { unstable_startWorker } = await import('wrangler')
    worker = await unstable_startWorker({
      config: path.join(root, 'wrangler.toml'),
      // as in test/cli/e2e-worker.test.ts: the programmatic API does not derive the bundler's Node.js compatibility
      // mode from compatibility_flags as `wrangler dev` does, so xml-crypto's require("crypto") would fail the build
      build: { nodejsCompatMode: (cfg) => (cfg.compatibility_flags.includes('nodejs_compat') ? 'v2' : null) },
      bindings: Object.fromEntries(Object.entries(secrets).map(([k, v]) => [k, { type: 'secret_text', value: v }])),
      dev: { server: { hostname: '127.0.0.1', port: 0 }, inspector: false, persist, watch: false, logLevel: 'error' },
    })
    await worker.ready
    lap('worker start (bundle and workerd)')
    console.log(`     local worker ready: ${times.join(', ')}`)
    return { origin: (await worker.url).origin, stop }
  } catch (e) {
    await stop()
    throw e
  }
}

const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync']

/**
 * Chromium with one context (a fresh profile) and one page. Every request's URL is listed in `requested` (see
 * credentialsInUrls). Requests to any origin but `origin` (and the test's
 * own servers in `allowOrigins`, such as a test identity provider) are refused and listed in `external`; console errors (but the browser's own "Failed to load resource … 4xx" lines, which the
 * tests provoke on purpose) and page errors are listed in `problems`.
 */
export async function openBrowser(origin, { viewport = { width: 1366, height: 860 }, allowOrigins = [] } = {}) {
  const exe = chromiumPath()
  if (!exe) throw new Error('chromium not found (apt-get install -y chromium, or set CHROMIUM_PATH)')
  const { chromium } = await import('playwright-core')
  const browser = await chromium.launch({ executablePath: exe, headless: true, args: FLAGS })
  const close = () => {
    live.delete(close)
    return browser.close().catch(() => {})
  }
  live.add(close)
  const context = await browser.newContext({ viewport })
  const external = []
  const problems = []
  const requested = []
  await context.route('**/*', (route) => {
    const u = new URL(route.request().url())
    if (u.origin !== origin && !allowOrigins.includes(u.origin)) {
      external.push(u.href)
      return route.abort()
    }
    return route.continue()
  })
  // every request, redirects included (a route sees only the first URL of a redirect chain)
  context.on('request', (r) => requested.push(r.url()))
  const watch = (page) => {
    page.on('console', (m) => {
      if (m.type() === 'error' && !/Failed to load resource: the server responded with a status of 4\d\d/.test(m.text())) problems.push(m.text())
    })
    page.on('pageerror', (e) => problems.push(String(e)))
    page.setDefaultTimeout(20_000)
    return page
  }
  context.on('page', watch)
  const page = await context.newPage()
  return { browser, context, page, external, problems, requested, close }
}

// Roles that must carry an accessible name (issue 25: "every control has an accessible name"): the controls, and
// the landmarks, forms, tables and pictures the tests and assistive technology find by name.
const NAMED_ROLES = new Set([
  'button', 'link', 'textbox', 'searchbox', 'combobox', 'listbox', 'option', 'checkbox', 'radio', 'switch', 'tab', 'menuitem', 'slider', 'spinbutton', 'progressbar',
  'complementary', 'navigation', 'form', 'dialog', 'alertdialog', 'table', 'img',
])

/**
 * The elements of the page whose role needs a name and that have none, as Chromium's accessibility tree computes
 * names (labels, aria-label, content, title), each as "role: <tag class…>". An empty list when all are named.
 */
export async function unnamedElements(page) {
  const cdp = await page.context().newCDPSession(page)
  try {
    const { nodes } = await cdp.send('Accessibility.getFullAXTree')
    const out = []
    for (const n of nodes) {
      if (n.ignored || !NAMED_ROLES.has(n.role?.value) || (n.name?.value ?? '').trim()) continue
      const d = n.backendDOMNodeId ? (await cdp.send('DOM.describeNode', { backendNodeId: n.backendDOMNodeId }).catch(() => null))?.node : null
      const attrs = d?.attributes ?? []
      const cls = attrs[attrs.indexOf('class') + 1]
      out.push(`${n.role.value}: <${(d?.localName ?? '?')}${attrs.includes('class') && cls ? ` class="${cls}"` : ''}>`)
    }
    return out
  } finally {
    await cdp.detach().catch(() => {})
  }
}

/**
 * The URLs among `urls` that carry a credential (issue 25: "no token in a URL"): a JWT (three base64url parts,
 * the first "eyJ…"), or a query parameter named like one (token, jwt, session, access_token, id_token, key).
 * The SAML and OIDC protocol parameters (SAMLRequest, code, state) are not credentials of this service.
 */
export function credentialsInUrls(urls) {
  return urls.filter((u) => /eyJ[\w-]{8,}\.[\w-]{8,}\.[\w-]+/.test(u) || /[?&](token|jwt|session|session_token|access_token|id_token|key|token_key)=/i.test(u))
}
