#!/usr/bin/env node
// The console (ui/) in a real browser: starts the worker locally (wrangler's unstable_startWorker, local D1 with
// the migrations applied, the console's static files from ui/dist, no internet needed), ingests a small graph
// through the API with the typed client, and drives Debian's Chromium through playwright-core: a wrong
// password shows the envelope's message; sign in with a password (HttpOnly cookie); search an object and open
// its panel; pathfinding draws the path (asserted through the table view "Graph as table"), its relationship-kind
// filter is sent and a path it rules out shows the envelope's message; Zoom out / Reset view move the drawing; a
// Cypher query draws its nodes; an ended session leads to sign-in at the next action and back to the page after
// signing in; every control, landmark, form and table of the pages visited has an accessible name (Chromium's
// accessibility tree, lib.mjs unnamedElements). Measures the first-load compressed JavaScript (gzip of the entry chunks) and the sign-in
// page's time to interactive, and keeps screenshots in test/artifacts/ (docs/console-*.png with --screenshots).
// Prints one line "N passed, N failed" at the end; exits non-zero on any failure.
//
//   node --import tsx test/browser/console.mjs [--screenshots]     (CHROMIUM_PATH=/path/to/chromium for another binary)
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { gzipSync } from 'node:zlib'
import { EdgeHoundClient } from '../../src/client/index.ts'
import { ingest } from '../../src/client/graph.ts'
import { artifacts, assert, openBrowser, root, startLocalWorker, suite, unnamedElements, credentialsInUrls } from './lib.mjs'

const shotsToDocs = process.argv.includes('--screenshots')
// Local-only values for this run (never used anywhere else).
const SECRETS = {
  ENVIRONMENT: 'development',
  JWT_SIGNING_KEY: 'console-test-jwt-signing-key-0123456789abcdef0123',
  TOKEN_ENCRYPTION_KEY: 'Y29uc29sZS10ZXN0LXRva2VuLWVuY3J5cHRpb24ta2U=',
  BOOTSTRAP_ADMIN_USERNAME: 'admin',
  BOOTSTRAP_ADMIN_PASSWORD: 'console-test-admin-password',
}
const { check, fail, finish } = suite('the console test')

// A small graph: ALICE -MemberOf-> HELPDESK -AdminTo-> SRV01
const FIXTURE = {
  metadata: { source_kind: 'ConsoleTest' },
  graph: {
    nodes: [
      { id: 'CT-USER-ALICE', kinds: ['User'], properties: { name: 'ALICE@CONSOLE.TEST', title: 'Analyst' } },
      { id: 'CT-GROUP-HELPDESK', kinds: ['Group'], properties: { name: 'HELPDESK@CONSOLE.TEST' } },
      { id: 'CT-COMPUTER-SRV01', kinds: ['Computer'], properties: { name: 'SRV01.CONSOLE.TEST' } },
    ],
    edges: [
      { start: { value: 'CT-USER-ALICE' }, end: { value: 'CT-GROUP-HELPDESK' }, kind: 'MemberOf' },
      { start: { value: 'CT-GROUP-HELPDESK' }, end: { value: 'CT-COMPUTER-SRV01' }, kind: 'AdminTo' },
    ],
  },
}

let server
let browser
try {
  server = await startLocalWorker({ secrets: SECRETS, tmpPrefix: 'edgehound-console-', buildUi: true })
  const { origin } = server

  // the fixture, through the API (typed client, bearer session)
  const anon = new EdgeHoundClient({ baseUrl: origin })
  const login = await anon.login(SECRETS.BOOTSTRAP_ADMIN_USERNAME, SECRETS.BOOTSTRAP_ADMIN_PASSWORD)
  const api = anon.withCredentials({ kind: 'bearer', jwt: login.data.session_token })
  await ingest(api, FIXTURE)
  for (let i = 0; i < 100; i++) {
    const r = await api.call('GET', '/api/v2/search?q=ALICE%40CONSOLE')
    if (r.data.length) break
    await new Promise((r) => setTimeout(r, 200))
  }

  browser = await openBrowser(origin)
  const { context, page, external, problems, requested } = browser
  /** page → its unnamed elements (asserted empty by a check near the end) */
  const unnamed = {}
  const lookAt = async (where) => (unnamed[where] = await unnamedElements(page))

  await check('/ redirects to the console; its page carries a strict CSP (no inline script)', async () => {
    const res = await page.goto(`${origin}/`)
    assert(new URL(page.url()).pathname.startsWith('/ui/'), `landed on ${page.url()}`)
    const csp = (await res.allHeaders())['content-security-policy'] ?? ''
    const script = /script-src ([^;]*)/.exec(csp)?.[1] ?? ''
    assert(script.trim() === "'self'" && csp.includes("default-src 'none'") && csp.includes("frame-ancestors 'none'"), `CSP is "${csp}"`)
  })

  await check('signed out, the console goes to sign-in (Username, Password, "Sign in")', async () => {
    await page.getByRole('button', { name: 'Sign in' }).waitFor()
    assert(new URL(page.url()).pathname === '/ui/login', `at ${page.url()}`)
  })

  let tti = 0
  await check('sign-in page time to interactive (fresh load)', async () => {
    const t0 = Date.now()
    await page.goto(`${origin}/ui/login`)
    await page.getByRole('button', { name: 'Sign in' }).waitFor()
    await page.getByLabel('Username').focus()
    tti = Date.now() - t0
    const nav = await page.evaluate(() => performance.getEntriesByType('navigation')[0]?.domInteractive ?? 0)
    console.log(`     sign-in page interactive in ${tti} ms (navigation domInteractive ${Math.round(nav)} ms)`)
    // The goal (1.5 s on an idle machine) is a benchmark figure, printed here and recorded in BENCHMARKS.md; on a shared,
    // loaded CI machine a wall-clock assertion at the goal fails for reasons that are not the console's. Only a gross
    // regression (5 s) fails this check.
    assert(tti < 5000, `${tti} ms: far above the 1.5 s goal`)
  })

  let firstLoad = 0
  await check('first-load JavaScript (gzip of the entry chunks) ≤ 400 KB', async () => {
    const html = readFileSync(path.join(root, 'ui', 'dist', 'index.html'), 'utf8')
    const entries = [...html.matchAll(/(?:src|href)="(\/ui\/assets\/[^"]+\.js)"/g)].map((m) => m[1])
    assert(entries.length > 0, 'no entry script in index.html')
    firstLoad = entries.reduce((s, e) => s + gzipSync(readFileSync(path.join(root, 'ui', 'dist', e))).length, 0)
    console.log(`     first-load JS: ${entries.length} chunk(s), ${(firstLoad / 1024).toFixed(1)} KB gzip`)
    assert(firstLoad <= 400 * 1024, `${firstLoad} bytes`)
  })

  await check('a wrong password shows the envelope message next to the form', async () => {
    await page.getByLabel('Username').fill('admin')
    await page.getByLabel('Password').fill('not-the-password')
    await page.getByRole('button', { name: 'Sign in' }).click()
    const alert = page.getByRole('alert')
    await alert.waitFor()
    assert((await alert.innerText()).includes('authentication is invalid'), `alert: ${await alert.innerText()}`)
    await lookAt('sign-in')
    if (shotsToDocs) await page.screenshot({ path: path.join(root, 'docs', 'console-sign-in.png') })
  })

  await check('sign in with a password: the session is an HttpOnly cookie; the shell shows the navigation', async () => {
    await page.getByLabel('Password').fill(SECRETS.BOOTSTRAP_ADMIN_PASSWORD)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.getByRole('link', { name: 'Explore' }).waitFor()
    for (const name of ['Attack paths', 'Posture', 'Privilege zones', 'Administration']) await page.getByRole('link', { name }).waitFor()
    const cookies = await context.cookies()
    const token = cookies.find((c) => c.name === 'token')
    assert(token && token.httpOnly && token.sameSite === 'Lax', `token cookie ${JSON.stringify(token)}`)
    const visible = await page.evaluate(() => document.cookie)
    assert(!/(^|;\s*)token=/.test(visible), 'the session cookie is readable by script')
    const stored = await page.evaluate(() => JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage }))
    assert(stored === '{}{}', `storage holds ${stored}`)
  })

  await check('Explore › Search: an object by name, its kind shown; selecting it draws it and opens its panel', async () => {
    await page.getByRole('tab', { name: 'Search' }).click()
    await page.getByRole('searchbox', { name: 'Search' }).fill('alice@console')
    const item = page.getByRole('list', { name: 'Search results' }).getByRole('button', { name: /ALICE@CONSOLE\.TEST/ })
    await item.waitFor()
    assert((await item.innerText()).includes('User'), `result shows ${await item.innerText()}`)
    await item.click()
    const panel = page.getByRole('complementary', { name: 'ALICE@CONSOLE.TEST properties' })
    await panel.waitFor()
    await panel.getByText('Analyst').waitFor()
    const table = page.getByRole('table', { name: 'Graph as table' })
    assert((await table.innerText()).includes('CT-USER-ALICE'), 'the table lists the object')
    await page.getByTestId('graph-canvas').waitFor()
    await page.getByRole('searchbox', { name: 'Search' }).fill('CT-COMPUTER-SRV01')
    await page.getByRole('list', { name: 'Search results' }).getByRole('button', { name: /SRV01/ }).waitFor()
    await lookAt('Explore › Search, a node panel open')
  })

  await check('Explore › Pathfinding: start and end draw the path (asserted through the table view)', async () => {
    await page.getByRole('tab', { name: 'Pathfinding' }).click()
    await page.getByRole('searchbox', { name: 'Start node' }).fill('ALICE@')
    await page.getByRole('list', { name: 'Start node results' }).getByRole('button', { name: /ALICE/ }).click()
    await page.getByRole('searchbox', { name: 'End node' }).fill('SRV01')
    await page.getByRole('list', { name: 'End node results' }).getByRole('button', { name: /SRV01/ }).click()
    await page.getByRole('button', { name: 'Find path' }).click()
    const table = page.getByRole('table', { name: 'Graph as table' })
    await table.getByText('AdminTo').waitFor()
    const text = await table.innerText()
    for (const want of ['ALICE@CONSOLE.TEST', 'HELPDESK@CONSOLE.TEST', 'SRV01.CONSOLE.TEST', 'MemberOf', 'AdminTo']) assert(text.includes(want), `table lacks ${want}: ${text}`)
    assert((await table.locator('tr.edge-row').count()) === 2, 'two relationships')
    await page.getByTestId('graph-canvas').waitFor()
    await page.waitForFunction(() => document.querySelector('[data-testid="graph-canvas"]')?.dataset.layout === 'done')
    if (shotsToDocs) await page.screenshot({ path: path.join(root, 'docs', 'console-explore.png') })
    await lookAt('Explore › Pathfinding, a path drawn')
  })

  await check('Explore › the graph: Zoom out brings the drawn nodes closer on screen, Reset view restores them', async () => {
    // the on-screen distance between the path's two ends (the canvas element's nodePosition, in page pixels)
    const spread = () =>
      page.getByTestId('graph-canvas').evaluate((el) => {
        const a = el.nodePosition('CT-USER-ALICE')
        const b = el.nodePosition('CT-COMPUTER-SRV01')
        return a && b ? Math.hypot(a.x - b.x, a.y - b.y) : 0
      })
    // polls until `ok(distance)` (the camera animates for 200 ms), at most 10 s; returns the last distance
    const until = async (ok) => {
      let d = await spread()
      for (let end = Date.now() + 10_000; !ok(d) && Date.now() < end; d = await spread()) await page.waitForTimeout(100)
      return d
    }
    const before = await spread()
    assert(before > 50, `drawn ${before} px apart`)
    const zoom = page.getByRole('toolbar', { name: 'Zoom' })
    await zoom.getByRole('button', { name: 'Zoom out' }).click()
    const out = await until((d) => d < before * 0.8)
    assert(out < before * 0.8, `zoom out: ${before} -> ${out} px`)
    await zoom.getByRole('button', { name: 'Reset view' }).click()
    const reset = await until((d) => Math.abs(d - before) < before * 0.05)
    assert(Math.abs(reset - before) < before * 0.05, `reset: ${before} -> ${reset} px`)
  })

  await check('Explore › Pathfinding: the relationship-kind filter is sent (in:MemberOf); no path then shows the envelope message', async () => {
    const kinds = page.getByLabel('Relationship kinds (optional, comma-separated)')
    await kinds.fill('MemberOf')
    const [req] = await Promise.all([page.waitForRequest((r) => r.url().includes('/api/v2/graphs/shortest-path')), page.getByRole('button', { name: 'Find path' }).click()])
    assert(new URL(req.url()).searchParams.get('relationship_kinds') === 'in:MemberOf', `request ${req.url()}`)
    const alert = page.getByRole('tabpanel', { name: 'Pathfinding' }).getByRole('alert')
    await alert.waitFor()
    assert((await alert.innerText()).includes('Path not found'), `alert: ${await alert.innerText()}`)
    await kinds.fill('MemberOf,AdminTo')
    await page.getByRole('button', { name: 'Find path' }).click()
    await alert.waitFor({ state: 'detached' })
    await page.getByRole('table', { name: 'Graph as table' }).getByText('AdminTo').waitFor()
  })

  await check('Explore › Cypher: the editor (CodeMirror, "Cypher query", keywords highlighted) and Run draw the answer', async () => {
    await page.getByRole('tab', { name: 'Cypher' }).click()
    const editor = page.getByRole('textbox', { name: 'Cypher query' })
    await editor.waitFor()
    await editor.click()
    await page.keyboard.press('Control+A')
    await page.keyboard.type("MATCH (n) WHERE n.objectid STARTS WITH 'CT-' RETURN n")
    await page.getByRole('button', { name: 'Run' }).click()
    const table = page.getByRole('table', { name: 'Graph as table' })
    await page.waitForFunction(() => {
      const t = document.querySelector('table[aria-label="Graph as table"]')?.textContent ?? ''
      return t.includes('CT-USER-ALICE') && t.includes('CT-GROUP-HELPDESK') && t.includes('CT-COMPUTER-SRV01') && !t.includes('Relationships')
    })
    assert((await table.locator('tbody tr').count()) === 3, 'three nodes')
    // syntax highlighting: the keyword is its own token, drawn in another colour than the line's plain text
    const highlighted = await page.evaluate(() =>
      [...document.querySelectorAll('.cm-content .cm-line span')].some((s) => s.textContent === 'MATCH' && getComputedStyle(s).color !== getComputedStyle(s.closest('.cm-line')).color),
    )
    assert(highlighted, 'MATCH is not highlighted')
    await lookAt('Explore › Cypher')
  })

  await check('a failed Cypher query shows the envelope message where the user acted', async () => {
    const editor = page.getByRole('textbox', { name: 'Cypher query' })
    await editor.click()
    await page.keyboard.press('Control+A')
    await page.keyboard.type('MATCH (n RETURN n')
    await page.getByRole('button', { name: 'Run' }).click()
    const alert = page.getByRole('tabpanel').getByRole('alert')
    await alert.waitFor()
    assert((await alert.innerText()).length > 5, 'an error message')
  })

  await check('Privilege zones lists the tags (Tier Zero); Administration lists the users', async () => {
    await page.getByRole('link', { name: 'Privilege zones' }).click()
    await page.getByRole('table', { name: 'Privilege zones' }).getByRole('cell', { name: 'Tier Zero', exact: true }).waitFor()
    await lookAt('Privilege zones')
    await page.getByRole('link', { name: 'Administration' }).click()
    await page.getByRole('navigation', { name: 'Administration' }).getByRole('link', { name: 'Users' }).click()
    const users = page.getByRole('table', { name: 'Users list' })
    await users.getByRole('cell', { name: 'Administrator', exact: true }).waitFor()
    assert((await users.innerText()).includes('admin'), 'the administrator is listed')
  })

  await check('an ended session: the next action returns to sign-in, and signing in returns to where the user was', async () => {
    // the user is on Administration › Users; the session ends (signed out elsewhere) while the page stays open
    await api.call('POST', '/api/v2/logout') // ends the bearer session only; end the browser's too
    const jwt = (await context.cookies()).find((c) => c.name === 'token').value
    await new EdgeHoundClient({ baseUrl: origin, credentials: { kind: 'bearer', jwt } }).logout()
    // the next action (no reload: the page's own call is refused 401) leads to sign-in, remembering the page
    await page.getByRole('link', { name: 'Privilege zones' }).click()
    await page.getByRole('button', { name: 'Sign in' }).waitFor()
    assert(new URL(page.url()).searchParams.get('next') === '/ui/privilege-zones', `at ${page.url()}`)
    await page.getByLabel('Username').fill('admin')
    await page.getByLabel('Password').fill(SECRETS.BOOTSTRAP_ADMIN_PASSWORD)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.getByRole('table', { name: 'Privilege zones' }).getByRole('cell', { name: 'Tier Zero', exact: true }).waitFor()
    assert(new URL(page.url()).pathname === '/ui/privilege-zones', `back at ${page.url()}`)
    // a page opened by its address with no session also comes back to it after signing in. The console is left
    // first (about:blank): with the cookies cleared under it, the open page's next call is refused 401 and sends it
    // to sign-in itself, which aborted this navigation (net::ERR_ABORTED, seen once in CI)
    await page.goto('about:blank')
    await context.clearCookies()
    await page.goto(`${origin}/ui/posture`)
    await page.getByRole('button', { name: 'Sign in' }).waitFor()
    assert(new URL(page.url()).searchParams.get('next') === '/ui/posture', `at ${page.url()}`)
  })

  await check('every control, landmark, form and table on the pages visited has an accessible name', async () => {
    const missing = Object.entries(unnamed).filter(([, list]) => list.length).map(([where, list]) => `${where}: ${list.join(', ')}`)
    assert(Object.keys(unnamed).length >= 5, `pages looked at: ${Object.keys(unnamed)}`)
    assert(missing.length === 0, missing.join(' | '))
  })

  await check('no URL the browser requested carries a token (a JWT or a token-like query parameter)', async () => {
    assert(requested.length > 20, `${requested.length} requests seen`)
    const leaks = credentialsInUrls(requested)
    assert(leaks.length === 0, `credentials in URLs: ${leaks.join(' ')}`)
  })

  await check('nothing was fetched from another origin; no script or CSP error', async () => {
    assert(external.length === 0, `external requests: ${external.join(', ')}`)
    assert(problems.length === 0, `page errors: ${problems.join(' | ')}`)
  })
  await page.screenshot({ path: path.join(artifacts, 'console.png') }).catch(() => {})
  console.log(`console figures: first-load JS ${(firstLoad / 1024).toFixed(1)} KB gzip; sign-in interactive ${tti} ms`)
} catch (e) {
  fail(`setup: ${e?.stack ?? e}`)
} finally {
  await browser?.close()
  await server?.stop()
}
finish()
