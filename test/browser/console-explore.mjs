#!/usr/bin/env node
// The console's Explore page in a real browser (headless Chromium through playwright-core, the worker local on a
// throw-away D1; the shared harness test/browser/lib.mjs). A small graph and a graph extension (a node kind with
// its own colour and icon) are loaded through the API with the typed client, plus a 5,000-node, 10,000-edge
// graph for the drawing measurement. Checks: a pre-built query runs and draws; a saved query's round trip (save,
// listed, run, rename, share publicly and back, delete; another user's public and shared queries listed); a node panel's section expands into the graph (asserted through the table view
// "Graph as table"); a relationship's help; right-click › Set as starting / ending node (pathfinding runs);
// Add to Tier Zero, Mark as owned, Remove from Tier Zero (the selectors stored); the JSON export downloads the drawn
// nodes; an answer over 5,000 nodes is listed in the table with a warning, not drawn, and the table is used with the
// keyboard; an extension kind is
// drawn in its own colour, and a custom node kind (/api/v2/custom-nodes) in its own over its extension's; the
// 5,000-node answer is laid out off the page's thread (the page keeps painting) and pans at ≥ 30 frames per second
// (requestAnimationFrame count while the mouse drags the canvas; when the same drag over a blank tab is itself under
// 30 frames/s, the machine is overloaded and ≥ 0.8× that baseline is asserted instead), the graph following the
// pointer. Its figures are recorded in BENCHMARKS.md. Prints "N passed, N failed".
//
//   node --import tsx test/browser/console-explore.mjs           (CHROMIUM_PATH=/path/to/chromium for another binary)
//   EXPLORE_CPU_PROFILE=/tmp/x.cpuprofile or EXPLORE_TRACE=/tmp/x.json: also a CPU profile (CDP) or a Chromium trace
//   (toplevel, devtools.timeline, cc, gpu: the renderer's tasks, compositor commits and read-backs) of the page from
//   the click on Run until the 5,000-node answer is drawn; the check prints every task over 50 ms either way
import { readFileSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { EdgeHoundClient } from '../../src/client/index.ts'
import { createCustomNodeKinds, ingest } from '../../src/client/graph.ts'
import { upsertExtension } from '../../src/client/extensions.ts'
import { createSavedQuery, listSavedQueries, shareSavedQuery } from '../../src/client/cypher.ts'
import { listAssetGroups } from '../../src/client/assetgroups.ts'
import { artifacts, assert, openBrowser, startLocalWorker, suite } from './lib.mjs'

// Local-only values for this run (never used anywhere else).
const SECRETS = {
  ENVIRONMENT: 'development',
  JWT_SIGNING_KEY: 'console-explore-jwt-signing-key-0123456789abcdef',
  TOKEN_ENCRYPTION_KEY: 'Y29uc29sZS10ZXN0LXRva2VuLWVuY3J5cHRpb24ta2U=',
  BOOTSTRAP_ADMIN_USERNAME: 'admin',
  BOOTSTRAP_ADMIN_PASSWORD: 'console-explore-admin-password',
}
const { check, fail, finish } = suite('the console Explore test')

const D = 'S-1-5-21-5150'
const ad = (id, kind, name, props = {}) => ({ id, kinds: [kind], properties: { name, domainsid: D, ...props } })
// ALICE -MemberOf-> HELPDESK -MemberOf-> DOMAIN ADMINS; HELPDESK -AdminTo-> SRV01; SRV01 -HasSession-> BOB
const SMALL = {
  metadata: { source_kind: 'ExploreTest' },
  graph: {
    nodes: [
      ad(D, 'Domain', 'EXPLORE.TEST'),
      ad(`${D}-512`, 'Group', 'DOMAIN ADMINS@EXPLORE.TEST'),
      ad(`${D}-1100`, 'Group', 'HELPDESK@EXPLORE.TEST'),
      ad(`${D}-1101`, 'User', 'ALICE@EXPLORE.TEST', { enabled: true, hasspn: true }),
      ad(`${D}-1102`, 'User', 'BOB@EXPLORE.TEST', { enabled: true }),
      ad(`${D}-2001`, 'Computer', 'SRV01.EXPLORE.TEST'),
      { id: 'CX-ROBOT-1', kinds: ['CX_Robot'], properties: { name: 'ROBBIE' } },
      { id: 'CX-GADGET-1', kinds: ['CX_Gadget'], properties: { name: 'GIZMO' } },
    ],
    edges: [
      [`${D}-1101`, 'MemberOf', `${D}-1100`],
      [`${D}-1100`, 'MemberOf', `${D}-512`],
      [`${D}-1100`, 'AdminTo', `${D}-2001`],
      [`${D}-2001`, 'HasSession', `${D}-1102`],
    ].map(([a, kind, b]) => ({ start: { value: a }, end: { value: b }, kind })),
  },
}
const EXTENSION = {
  schema: { name: 'ConsoleExplore', display_name: 'Console explore test', version: '1.0.0', namespace: 'CX' },
  node_kinds: [
    { name: 'CX_Robot', display_name: 'Robot', icon: 'robot', color: '#123456' },
    // also registered as a custom node kind (POST /api/v2/custom-nodes) with another colour, which wins
    { name: 'CX_Gadget', display_name: 'Gadget', icon: 'box', color: '#111111' },
  ],
  relationship_kinds: [{ name: 'CX_Link', is_traversable: false }, { name: 'CX_Jump', is_traversable: false }],
}
// 5,000 nodes, 10,000 relationships (two families so no two share ends and kind)
const BIG_N = 5000
const BIG = {
  metadata: { source_kind: 'ExploreBig' },
  graph: {
    nodes: Array.from({ length: BIG_N }, (_, i) => ({ id: `FPS-${i}`, kinds: ['CX_Bulk'], properties: { name: `BULK-${i}` } })),
    edges: Array.from({ length: BIG_N }, (_, i) => [
      { start: { value: `FPS-${i}` }, end: { value: `FPS-${(i + 1) % BIG_N}` }, kind: 'CX_Link' },
      { start: { value: `FPS-${i}` }, end: { value: `FPS-${(i * 7 + 13) % BIG_N}` }, kind: 'CX_Jump' },
    ]).flat(),
  },
}

const tableText = (page) => page.getByRole('table', { name: 'Graph as table' }).innerText()
/**
 * The mouse along a fixed path for 3 s from `from` (button held when `press`), counting animation frames in the
 * page. Returns frames/s, mouse moves delivered per second, the longest frame (ms) and the net drag (px).
 */
async function scriptedPan(page, from, { press }) {
  await page.mouse.move(from.x, from.y)
  // let a hover (a node under the pointer greys the others) finish drawing before the drag
  const renders = () => page.evaluate(() => document.querySelector('[data-testid="graph-canvas"]')?.renders ?? 0)
  for (let i = 0, last = -1, same = 0; i < 40 && same < 2; i++) {
    await page.waitForTimeout(250)
    const now = await renders()
    same = now === last ? same + 1 : 0
    last = now
  }
  const rendersAtPress = await renders()
  await page.evaluate(() => {
    const w = window
    w.__pan = { n: 0, longest: 0, last: performance.now(), on: true }
    const tick = (t) => {
      w.__pan.n++
      w.__pan.longest = Math.max(w.__pan.longest, t - w.__pan.last)
      w.__pan.last = t
      if (w.__pan.on) requestAnimationFrame(tick)
    }
    requestAnimationFrame(tick)
  })
  if (press) await page.mouse.down()
  const start = Date.now()
  let step = 0
  let at = from
  while (Date.now() - start < 3000) {
    step++
    at = { x: Math.round(from.x + 150 * Math.sin(step / 10)), y: Math.round(from.y + 100 * Math.sin(step / 13)) }
    await page.mouse.move(at.x, at.y, { steps: 1 })
    await page.waitForTimeout(8)
  }
  const seconds = (Date.now() - start) / 1000
  const r = await page.evaluate(() => ((window.__pan.on = false), { n: window.__pan.n, longest: Math.round(window.__pan.longest), renders: document.querySelector('[data-testid="graph-canvas"]')?.renders }))
  if (press) await page.mouse.up()
  return { rendersAtRelease: r.renders, rendersDuring: (r.renders ?? 0) - rendersAtPress, fps: Math.round((r.n / seconds) * 10) / 10, moves: Math.round((step / seconds) * 10) / 10, longest: r.longest, dx: at.x - from.x, dy: at.y - from.y }
}

/**
 * While `done()` is false, and for a second after: opens the Search tab and types an "x" into its search box every
 * 150 ms. Returns the keystrokes sent, the search box's value, whether the tab was open before `done()`, and the
 * longest keystroke's round trip (Playwright's key press returns once the page has handled the key, so a page busy
 * with a long task answers late), then empties the box.
 */
async function keepTyping(page, done) {
  await page.getByRole('tab', { name: 'Search' }).click()
  const tabBeforeDone = !(await done())
  const box = page.getByRole('searchbox', { name: 'Search' })
  await box.fill('')
  await box.focus()
  let keys = 0
  let longestWait = 0
  const giveUp = Date.now() + 150_000
  for (let until = Infinity; Date.now() < until; ) {
    assert(Date.now() < giveUp, 'the answer was not drawn within 150 s')
    const t = Date.now()
    await page.keyboard.press('x')
    longestWait = Math.max(longestWait, Date.now() - t)
    keys++
    await new Promise((r) => setTimeout(r, 150))
    if (until === Infinity && (await done())) until = Date.now() + 1000
  }
  const value = await box.inputValue()
  await box.fill('')
  return { keys, value, tabBeforeDone, longestWait }
}

async function typeQuery(page, q) {
  const editor = page.getByRole('textbox', { name: 'Cypher query' })
  await editor.click()
  await page.keyboard.press('Control+A')
  await page.keyboard.press('Delete')
  await page.keyboard.insertText(q)
}

let server
let browser
const figures = {}
try {
  server = await startLocalWorker({ secrets: SECRETS, tmpPrefix: 'edgehound-explore-', buildUi: true })
  const { origin } = server
  const anon = new EdgeHoundClient({ baseUrl: origin })
  const login = await anon.login(SECRETS.BOOTSTRAP_ADMIN_USERNAME, SECRETS.BOOTSTRAP_ADMIN_PASSWORD)
  const api = anon.withCredentials({ kind: 'bearer', jwt: login.data.session_token })
  await upsertExtension(api, EXTENSION)
  await createCustomNodeKinds(api, { CX_Gadget: { icon: { type: 'font-awesome', name: 'robot', color: '#654321' } } })
  await ingest(api, SMALL)
  await ingest(api, BIG)
  // another user's queries: one public, one shared with the administrator (the Cypher mode lists both)
  const adminId = (await api.self()).data.id
  await api.createUser({ principal_name: 'colleague', roles: ['User'], secret: 'colleague-password-1' })
  const colleague = anon.withCredentials({ kind: 'bearer', jwt: (await anon.login('colleague', 'colleague-password-1')).data.session_token })
  const pub = (await createSavedQuery(colleague, { name: 'Colleague public query', query: 'MATCH (n:User) RETURN n' })).data
  await shareSavedQuery(colleague, pub.id, { public: true })
  const shared = (await createSavedQuery(colleague, { name: 'Colleague shared query', query: 'MATCH (n:Group) RETURN n' })).data
  await shareSavedQuery(colleague, shared.id, { user_ids: [adminId] })
  for (let i = 0; i < 100; i++) {
    const r = await api.call('GET', '/api/v2/search?q=ALICE%40EXPLORE')
    if (r.data.length) break
    await new Promise((r) => setTimeout(r, 200))
  }

  browser = await openBrowser(origin)
  const { page, external, problems } = browser
  await page.goto(`${origin}/ui/login`)
  await page.getByLabel('Username').fill('admin')
  await page.getByLabel('Password').fill(SECRETS.BOOTSTRAP_ADMIN_PASSWORD)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.getByRole('link', { name: 'Explore' }).waitFor()
  await page.getByRole('tab', { name: 'Search' }).waitFor()

  await check('an extension kind is shown with its own colour (search result icon)', async () => {
    await page.getByRole('searchbox', { name: 'Search' }).fill('ROBBIE')
    const item = page.getByRole('list', { name: 'Search results' }).getByRole('button', { name: /ROBBIE/ })
    await item.waitFor()
    await page.waitForFunction(() => document.querySelector('ul[aria-label="Search results"] .kind-icon circle')?.getAttribute('fill') === '#123456', null, { timeout: 5000 })
  })

  await check('a custom node kind (GET /api/v2/custom-nodes) is drawn in its colour, over its extension kind', async () => {
    await page.getByRole('searchbox', { name: 'Search' }).fill('GIZMO')
    await page.getByRole('list', { name: 'Search results' }).getByRole('button', { name: /GIZMO/ }).waitFor()
    await page.waitForFunction(() => document.querySelector('ul[aria-label="Search results"] .kind-icon circle')?.getAttribute('fill') === '#654321', null, { timeout: 5000 })
  })

  await check('Cypher › a pre-built query (Members of Domain Admins) runs and draws', async () => {
    await page.getByRole('tab', { name: 'Cypher' }).click()
    const pre = page.getByRole('region', { name: 'Pre-built queries' })
    await pre.getByText('Domain information').click()
    await pre.getByRole('button', { name: 'Members of Domain Admins' }).click()
    await page.waitForFunction(() => (document.querySelector('table[aria-label="Graph as table"]')?.textContent ?? '').includes('ALICE@EXPLORE.TEST'))
    const t = await tableText(page)
    for (const want of ['ALICE@EXPLORE.TEST', 'HELPDESK@EXPLORE.TEST', 'DOMAIN ADMINS@EXPLORE.TEST', 'MemberOf']) assert(t.includes(want), `table lacks ${want}`)
    await page.getByTestId('graph-canvas').waitFor()
    assert(await page.getByRole('radio', { name: 'Sequential' }).isChecked(), 'a path answer is laid out sequentially')
  })

  await check("Cypher › saved query round trip: save, listed, run, rename, share publicly and back, delete; another user's public and shared queries listed", async () => {
    await typeQuery(page, "MATCH (n:Computer) WHERE n.name STARTS WITH 'SRV' RETURN n")
    const saved = page.getByRole('region', { name: 'Saved queries' })
    await saved.getByRole('button', { name: 'Save query' }).click()
    await saved.getByLabel('Query name').fill('My servers')
    await saved.getByLabel('Description').fill('servers of the test domain')
    await saved.getByRole('button', { name: 'Save', exact: true }).click()
    const list = saved.getByRole('list', { name: 'Saved query list' })
    await list.getByRole('button', { name: 'My servers', exact: true }).waitFor()
    const stored = (await listSavedQueries(api)).data.find((q) => q.name === 'My servers')
    assert(stored && stored.query.includes('n:Computer'), `stored: ${JSON.stringify(stored)}`)
    // run it from the list (after drawing something else)
    await typeQuery(page, 'MATCH (n:Domain) RETURN n')
    await page.getByRole('button', { name: 'Run', exact: true }).click()
    await page.waitForFunction(() => (document.querySelector('table[aria-label="Graph as table"]')?.textContent ?? '').includes('EXPLORE.TEST') && !(document.querySelector('table[aria-label="Graph as table"]')?.textContent ?? '').includes('SRV01'))
    await list.getByRole('button', { name: 'My servers', exact: true }).click()
    await page.waitForFunction(() => (document.querySelector('table[aria-label="Graph as table"]')?.textContent ?? '').includes('SRV01.EXPLORE.TEST'))
    // rename
    await saved.getByRole('button', { name: 'Rename My servers' }).click()
    await saved.getByLabel('New name for My servers').fill('Servers (renamed)')
    await saved.getByRole('button', { name: 'Rename', exact: true }).click()
    await list.getByRole('button', { name: 'Servers (renamed)', exact: true }).waitFor()
    assert((await listSavedQueries(api)).data.some((q) => q.id === stored.id && q.name === 'Servers (renamed)'), 'renamed in storage')
    // share publicly and back; another user's public and shared queries are listed as such
    const scopeOf = (name) => list.getByRole('listitem').filter({ has: page.getByRole('button', { name, exact: true }) }).locator('.kind').innerText()
    assert((await scopeOf('Colleague public query')) === 'public', `colleague's public query: ${await scopeOf('Colleague public query')}`)
    assert((await scopeOf('Colleague shared query')) === 'shared', `colleague's shared query: ${await scopeOf('Colleague shared query')}`)
    const publicIds = async () => (await api.call('GET', '/api/v2/saved-queries?scope=public&limit=100')).data.map((q) => q.id)
    await saved.getByRole('button', { name: 'Share Servers (renamed) publicly' }).click()
    await saved.getByText('"Servers (renamed)" is public').waitFor()
    assert((await scopeOf('Servers (renamed)')) === 'mine, public', `label ${await scopeOf('Servers (renamed)')}`)
    assert((await publicIds()).includes(stored.id), 'not public in the API')
    await saved.getByRole('button', { name: 'Make Servers (renamed) private' }).click()
    await saved.getByText('"Servers (renamed)" is private').waitFor()
    assert(!(await publicIds()).includes(stored.id), 'still public in the API')
    // delete (with confirmation)
    await saved.getByRole('button', { name: 'Delete Servers (renamed)' }).click()
    await saved.getByRole('button', { name: 'Confirm: delete Servers (renamed)' }).click()
    await saved.getByText('Deleted "Servers (renamed)"').waitFor()
    assert((await list.getByRole('button', { name: 'Servers (renamed)', exact: true }).count()) === 0, 'still listed')
    assert(!(await listSavedQueries(api)).data.some((q) => q.id === stored.id), 'still stored')
  })

  await check('node panel: a section (Members) expands into the graph (asserted through the table view)', async () => {
    await page.getByRole('tab', { name: 'Search' }).click()
    await page.getByRole('searchbox', { name: 'Search' }).fill('HELPDESK@')
    await page.getByRole('list', { name: 'Search results' }).getByRole('button', { name: /HELPDESK/ }).click()
    const panel = page.getByRole('complementary', { name: 'HELPDESK@EXPLORE.TEST properties' })
    await panel.waitFor()
    let t = await tableText(page)
    assert(!t.includes('ALICE'), 'ALICE drawn before the section opened')
    const members = panel.getByRole('button', { name: 'Members (1)' })
    await members.waitFor()
    for (const want of ['Member of (1)', 'Local admin rights (1)']) await panel.getByRole('button', { name: want }).waitFor()
    await members.click()
    assert((await members.getAttribute('aria-expanded')) === 'true', 'section not expanded')
    await panel.getByRole('list', { name: 'Members of HELPDESK@EXPLORE.TEST' }).getByText('ALICE@EXPLORE.TEST').waitFor()
    await page.waitForFunction(() => (document.querySelector('table[aria-label="Graph as table"]')?.textContent ?? '').includes('ALICE@EXPLORE.TEST'))
    // a second section adds to what is drawn (HELPDESK's admin rights: SRV01), keeping ALICE
    await panel.getByRole('button', { name: 'Local admin rights (1)' }).click()
    await page.waitForFunction(() => (document.querySelector('table[aria-label="Graph as table"]')?.textContent ?? '').includes('SRV01.EXPLORE.TEST'))
    t = await tableText(page)
    for (const want of ['ALICE@EXPLORE.TEST', 'HELPDESK@EXPLORE.TEST', 'SRV01.EXPLORE.TEST', 'MemberOf', 'AdminTo']) assert(t.includes(want), `table lacks ${want}`)
  })

  await check("a relationship's panel shows its help text", async () => {
    await page.getByRole('table', { name: 'Graph as table' }).getByRole('button', { name: 'AdminTo from HELPDESK@EXPLORE.TEST to SRV01.EXPLORE.TEST' }).click()
    const panel = page.getByRole('complementary', { name: 'Relationship AdminTo' })
    await panel.waitFor()
    const help = panel.getByRole('region', { name: 'About AdminTo' })
    await help.waitFor()
    await page.waitForFunction(() => !(document.querySelector('section[aria-label="About AdminTo"]')?.textContent ?? '').includes('Loading'))
    const text = await help.innerText()
    for (const want of ['What it means', 'Abuse', 'OPSEC', 'References']) assert(text.includes(want), `help lacks ${want}: ${text}`)
    assert(!text.includes('no specific text'), `AdminTo has its own help: ${text}`)
  })

  await check('right-click a node on the graph › Set as starting node / ending node: pathfinding draws the path', async () => {
    await page.waitForFunction(() => document.querySelector('[data-testid="graph-canvas"]')?.dataset.layout === 'done')
    const at = async (id) => page.getByTestId('graph-canvas').evaluate((el, id) => el.nodePosition(id), id)
    // hovering highlights the node (and its neighbours). The position is read again before each try: the camera
    // may still be settling after the layout (a CI run timed out here once, with one reading taken before a move)
    // The relationship panel the check before opened narrowed the canvas box: every node must still be inside the
    // box's visible part (sigma draws again at the box's size; when it did not, a node laid out on the right was cut
    // off and could not be hovered: a CI run failed here on 2026-11-29)
    const visible = async (p) => page.getByTestId('graph-canvas').evaluate((el, p) => el.contains(document.elementFromPoint(p.x, p.y)), p)
    let alice
    for (let attempt = 1; ; attempt++) {
      alice = await at(`${D}-1101`)
      assert(alice, 'ALICE is not drawn')
      const inBox = await visible(alice)
      assert(inBox || attempt < 5, `ALICE is drawn outside the canvas's visible box (${alice.x}, ${alice.y})`)
      await page.mouse.move(alice.x, alice.y)
      const hovered = await page
        .waitForFunction((id) => document.querySelector('[data-testid="graph-canvas"]')?.dataset.hovered === id, `${D}-1101`, { timeout: 4000 })
        .then(() => true, () => false)
      if (hovered) break
      assert(attempt < 5, 'hovering ALICE never highlighted her (5 tries)')
      await page.mouse.move(0, 0)
    }
    await page.mouse.click(alice.x, alice.y, { button: 'right' })
    const menu = page.getByRole('menu', { name: 'Actions for ALICE@EXPLORE.TEST' })
    await menu.waitFor()
    for (const item of ['Set as ending node', 'Mark as owned', 'Add to Tier Zero']) await menu.getByRole('menuitem', { name: item }).waitFor()
    await menu.getByRole('menuitem', { name: 'Set as starting node' }).click()
    assert((await page.getByRole('tab', { name: 'Pathfinding' }).getAttribute('aria-selected')) === 'true', 'Pathfinding tab not selected')
    assert((await page.getByRole('searchbox', { name: 'Start node' }).inputValue()) === 'ALICE@EXPLORE.TEST', 'start node not set')
    const srv = await at(`${D}-2001`)
    await page.mouse.click(srv.x, srv.y, { button: 'right' })
    await page.getByRole('menu', { name: 'Actions for SRV01.EXPLORE.TEST' }).getByRole('menuitem', { name: 'Set as ending node' }).click()
    await page.waitForFunction(
      () => {
        const rows = [...document.querySelectorAll('table[aria-label="Graph as table"] tr.edge-row')].map((r) => r.textContent)
        return rows.length === 2 && rows.some((r) => r.includes('AdminTo'))
      },
      null,
      { timeout: 45_000 },
    )
  })

  await check('right-click › Add to Tier Zero, Mark as owned, Remove from Tier Zero change the stored selectors (offered to an administrator)', async () => {
    const row = page.getByRole('table', { name: 'Graph as table' }).locator('tbody tr:not(.edge-row)').filter({ hasText: 'SRV01.EXPLORE.TEST' })
    await row.click({ button: 'right' })
    await page.getByRole('menu', { name: 'Actions for SRV01.EXPLORE.TEST' }).getByRole('menuitem', { name: 'Add to Tier Zero' }).click()
    await page.getByRole('status').filter({ hasText: 'SRV01.EXPLORE.TEST added to' }).waitFor()
    const groups = (await listAssetGroups(api)).data.asset_groups
    const t0 = groups.find((g) => g.tag === 'admin_tier_0')
    assert(t0.selectors.some((s) => s.selector === `${D}-2001`), `selectors: ${JSON.stringify(t0.selectors)}`)
    const selectorsOf = async (tag) => (await listAssetGroups(api)).data.asset_groups.find((g) => g.tag === tag).selectors.map((s) => s.selector)
    const menu = page.getByRole('menu', { name: 'Actions for SRV01.EXPLORE.TEST' })
    await row.click({ button: 'right' })
    await menu.getByRole('menuitem', { name: 'Mark as owned' }).click()
    await page.getByRole('status').filter({ hasText: /SRV01\.EXPLORE\.TEST added to Owned/ }).waitFor()
    assert((await selectorsOf('owned')).includes(`${D}-2001`), 'not in Owned')
    await row.click({ button: 'right' })
    await menu.getByRole('menuitem', { name: 'Remove from Owned' }).waitFor()
    await menu.getByRole('menuitem', { name: 'Remove from Tier Zero' }).click()
    await page.getByRole('status').filter({ hasText: /SRV01\.EXPLORE\.TEST removed from/ }).waitFor()
    assert(!(await selectorsOf('admin_tier_0')).includes(`${D}-2001`), 'still in Tier Zero')
  })

  await check('Export graph as JSON downloads the drawn nodes and relationships', async () => {
    const [dl] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export graph as JSON' }).click()])
    assert(dl.suggestedFilename() === 'edgehound-graph.json', dl.suggestedFilename())
    const doc = JSON.parse(readFileSync(await dl.path(), 'utf8'))
    const ids = doc.nodes.map((n) => n.object_id).sort()
    const rows = await page.getByRole('table', { name: 'Graph as table' }).locator('tbody tr:not(.edge-row) td:nth-child(3)').allInnerTexts()
    assert(JSON.stringify(ids) === JSON.stringify(rows.filter(Boolean).sort()), `exported ${ids} vs table ${rows}`)
    assert(doc.edges.length === 2 && doc.edges.some((e) => e.kind === 'AdminTo' && e.target === `${D}-2001`), JSON.stringify(doc.edges))
  })

  await check('the graph box hidden (0 px) and shown again: no page error, the graph drawn again at its size', async () => {
    const before = problems.length
    const box = page.getByTestId('graph-canvas')
    // sigma sizes its layers from its container's offsetWidth / offsetHeight
    const size = async () => box.evaluate((el) => `${el.offsetWidth}x${el.offsetHeight}`)
    const was = await size()
    // a box of 0 px for a few frames (hidden, as while the page changes): sigma refreshes (ResizeObserver, window resize)
    await box.evaluate(async (el) => {
      el.style.display = 'none'
      window.dispatchEvent(new Event('resize'))
      for (let i = 0; i < 5; i++) await new Promise((r) => requestAnimationFrame(r))
      el.style.display = ''
      window.dispatchEvent(new Event('resize'))
      for (let i = 0; i < 5; i++) await new Promise((r) => requestAnimationFrame(r))
    })
    const fresh = problems.slice(before)
    assert(fresh.length === 0, `page errors: ${fresh.join(' | ')}`)
    assert((await size()) === was, `box ${await size()} after, ${was} before`)
    const canvas = box.locator('canvas').first()
    const drawnWidth = await canvas.evaluate((c) => parseFloat(c.style.width))
    assert(Math.abs(drawnWidth - parseFloat(was)) <= 1, `sigma's layer is ${drawnWidth} px wide in a ${was} box`)
  })

  await check('an answer over 5,000 nodes is listed in the table with a warning, not drawn; the table is reached and used with the keyboard', async () => {
    await page.getByRole('tab', { name: 'Cypher' }).click()
    await typeQuery(page, 'MATCH (n) RETURN n')
    await page.getByRole('button', { name: 'Run', exact: true }).click()
    const warning = page.getByRole('status').filter({ hasText: 'are listed in the table only, not drawn' })
    await warning.waitFor({ timeout: 60_000 })
    assert(/^5,0\d\d nodes: more than 5,000/.test(await warning.innerText()), `warning: ${await warning.innerText()}`)
    assert((await page.getByTestId('graph-canvas').count()) === 0, 'a canvas is drawn')
    const table = page.getByRole('table', { name: 'Graph as table' })
    await table.getByText(/^Nodes 1–100 of 5,0\d\d$/).waitFor()
    // keyboard only: from the export button, Tab reaches the table; Enter on a name opens its panel; the next page
    await page.getByRole('button', { name: 'Export graph as JSON' }).focus()
    let inTable = false
    for (let i = 0; i < 10 && !inTable; i++) {
      await page.keyboard.press('Tab')
      inTable = await page.evaluate(() => !!document.activeElement?.closest('table[aria-label="Graph as table"]'))
    }
    assert(inTable, 'Tab did not reach the table view')
    const name = await page.evaluate(() => document.activeElement.textContent)
    await page.keyboard.press('Enter')
    await page.getByRole('complementary', { name: `${name} properties` }).waitFor()
    await page.getByRole('button', { name: 'Close panel' }).click()
    await table.getByRole('button', { name: 'Next page of nodes' }).focus()
    await page.keyboard.press('Enter')
    await table.getByText(/^Nodes 101–200 of 5,0\d\d$/).waitFor()
  })

  await check('a 5,000-node, 10,000-edge answer is laid out in the worker and drawn without blocking the page; panning ≥ 30 frames/s', async () => {
    const load = () => os.loadavg()[0].toFixed(1)
    // the machine's ceiling in this run: the same drag over a blank page (another tab, nothing drawn)
    const blank = await browser.context.newPage()
    await blank.setContent('<!doctype html><title>baseline</title><body style="margin:0;height:100vh"></body>')
    const baseline = await scriptedPan(blank, { x: 683, y: 430 }, { press: true })
    await blank.close()
    await page.bringToFront()

    await page.getByRole('tab', { name: 'Cypher' }).click()
    await typeQuery(page, 'MATCH p = (:CX_Bulk)-[]->(:CX_Bulk) RETURN p')
    // from the click: animation frames, long tasks (with their start), and when the layout state changes
    await page.evaluate(() => {
      const w = window
      w.__draw = { gaps: [], tasks: [], marks: {}, last: performance.now(), on: true }
      const tick = (t) => {
        w.__draw.gaps.push([w.__draw.last, t - w.__draw.last])
        w.__draw.last = t
        if (w.__draw.on) requestAnimationFrame(tick)
      }
      requestAnimationFrame(tick)
      w.__draw.observer = new PerformanceObserver((l) => l.getEntries().forEach((e) => w.__draw.tasks.push([e.startTime, e.duration])))
      w.__draw.observer.observe({ type: 'longtask' })
      w.__draw.mutations = new MutationObserver(() => {
        const state = document.querySelector('[data-testid="graph-canvas"]')?.dataset.layout
        if (state && !(state in w.__draw.marks)) w.__draw.marks[state] = performance.now()
      })
      w.__draw.mutations.observe(document.body, { subtree: true, attributes: true, attributeFilter: ['data-layout'] })
    })
    // EXPLORE_CPU_PROFILE=file.cpuprofile: a CDP CPU profile of the page from the click until the answer is drawn
    const profiling = process.env.EXPLORE_CPU_PROFILE ? await page.context().newCDPSession(page) : null
    if (profiling) {
      await profiling.send('Profiler.enable')
      await profiling.send('Profiler.setSamplingInterval', { interval: 200 })
      await profiling.send('Profiler.start')
    }
    // EXPLORE_TRACE=file.json: a Chromium trace (the renderer's tasks and what ran in them) over the same period
    if (process.env.EXPLORE_TRACE) await page.context().browser().startTracing(page, { path: process.env.EXPLORE_TRACE, categories: ['toplevel', 'devtools.timeline', 'disabled-by-default-devtools.timeline', 'blink', 'cc', 'gpu', 'viz', 'v8', 'disabled-by-default-devtools.timeline.frame'] })
    await page.evaluate(() => (window.__draw.click = performance.now()))
    const t0 = Date.now()
    await page.getByRole('button', { name: 'Run', exact: true }).click()
    await page.getByRole('status').filter({ hasText: '5000 nodes, 10000 relationships' }).waitFor({ timeout: 60_000 })
    const answered = Date.now() - t0
    // the page takes input while the answer is laid out and drawn: another tab is opened and the search box typed
    // into, a key every 150 ms until a second after the drawing, each keystroke's wait for the page's thread measured
    const typing = await keepTyping(page, () => page.evaluate(() => document.querySelector('[data-testid="graph-canvas"]')?.dataset.layout === 'done'))
    const laidOut = Date.now() - t0
    const loadAtDraw = os.loadavg()[0]
    if (process.env.EXPLORE_TRACE) await page.context().browser().stopTracing()
    if (profiling) writeFileSync(process.env.EXPLORE_CPU_PROFILE, JSON.stringify((await profiling.send('Profiler.stop')).profile))
    const drawing = await page.evaluate(() => {
      const d = window.__draw
      d.on = false
      d.observer.disconnect()
      d.mutations.disconnect()
      const { running, drawing: drawn, done } = d.marks
      // a task or frame counts for a period when it overlaps it
      const longest = (from, to) => Math.round(Math.max(0, ...d.tasks.filter(([s, t]) => s + t > from && s < to).map(([, t]) => t)))
      const gap = (from, to) => Math.round(Math.max(0, ...d.gaps.filter(([s, g]) => s + g > from && s < to).map(([, g]) => g)))
      return {
        layoutMs: Math.round(drawn - running),
        longestTaskWhileLayingOut: longest(running, drawn),
        longestFrameWhileLayingOut: gap(running, drawn),
        framesWhileLayingOut: d.gaps.filter(([s]) => s >= running && s < drawn).length,
        drawTask: longest(drawn, done + 1),
        longestTask: longest(0, Infinity),
        longTasks: d.tasks.length,
        // every task over 50 ms: its start after the click and its duration (ms), and when the layout's state changed
        taskList: d.tasks.map(([s, t]) => `${Math.round(s - d.click)}+${Math.round(t)}`).join(' '),
        marks: Object.entries(d.marks).map(([k, t]) => `${k} ${Math.round(t - d.click)}`).join(', '),
      }
    })
    // pan: drag the canvas along the same mouse path; the graph must have moved with the pointer
    const box = await page.getByTestId('graph-canvas').boundingBox()
    const from = { x: box.x + box.width / 2 - 40, y: box.y + box.height / 2 - 30 }
    const where = () => page.getByTestId('graph-canvas').evaluate((el) => ({ p: el.nodePosition('FPS-0'), renders: el.renders }))
    const before = await where()
    const pan = await scriptedPan(page, from, { press: true })
    // released: sigma draws once at the new camera position
    const released = Date.now()
    await page.waitForFunction((n) => document.querySelector('[data-testid="graph-canvas"]').renders > n, pan.rendersAtRelease)
    pan.redrawMs = Date.now() - released
    const after = await where()
    const moved = { dx: after.p.x - before.p.x, dy: after.p.y - before.p.y }
    const loadNow = load()
    const ratio = pan.fps / baseline.fps
    const overloaded = baseline.fps < 30
    Object.assign(figures, { answered, laidOut, ...drawing, keystrokes: typing.keys, longestInputWait: typing.longestWait, loadAtDraw: loadAtDraw.toFixed(1), panFps: pan.fps, panMovesPerS: pan.moves, panLongestFrame: pan.longest, redrawAfterReleaseMs: pan.redrawMs, baselineFps: baseline.fps, baselineMovesPerS: baseline.moves, ratio: Math.round(ratio * 100) / 100, load: loadNow })
    console.log(`     5,000 nodes / 10,000 edges: answer shown after ${answered} ms; ForceAtlas2 in the worker ${drawing.layoutMs} ms (longest main-thread task meanwhile ${drawing.longestTaskWhileLayingOut} ms, longest frame ${drawing.longestFrameWhileLayingOut} ms, ${drawing.framesWhileLayingOut} frames); drawn once after ${laidOut} ms (that task ${drawing.drawTask} ms; longest task of the whole answer ${drawing.longestTask} ms)`)
    console.log(`     panning: ${pan.fps} frames/s (${pan.moves} mouse moves/s, longest frame ${pan.longest} ms, sigma drew 0 times during the drag and once ${pan.redrawMs} ms after the release, graph moved ${Math.round(moved.dx)},${Math.round(moved.dy)} px for a drag of ${pan.dx},${pan.dy} px); baseline (nothing drawn, same run) ${baseline.fps} frames/s (${baseline.moves} moves/s); ratio ${ratio.toFixed(2)}; load average ${loadNow}`)
    console.log(`     tasks over 50 ms (start after the click + duration, ms): ${drawing.taskList}; layout states (ms after the click): ${drawing.marks}`)
    console.log(`     input while laid out and drawn: ${typing.keys} keystrokes in the search box (after opening the Search tab), the longest round trip of a keystroke ${typing.longestWait} ms; ${drawing.longTasks} tasks over 50 ms from the click to the drawing, the longest ${drawing.longestTask} ms`)
    // every keystroke reached the search box, in order (none lost or delayed past the next)
    assert(typing.value === 'x'.repeat(typing.keys), `the search box holds ${JSON.stringify(typing.value)} after ${typing.keys} keystrokes`)
    assert(pan.rendersDuring === 0, `sigma drew ${pan.rendersDuring} times during the drag`)
    assert(Math.abs(moved.dx - pan.dx) <= 2 && Math.abs(moved.dy - pan.dy) <= 2, `the graph moved ${JSON.stringify(moved)} for a drag of ${pan.dx},${pan.dy}`)
    // the page keeps painting while the worker lays the answer out (a page blocked by the layout paints nothing)
    assert(drawing.framesWhileLayingOut >= (drawing.layoutMs / 1000) * 10, `${drawing.framesWhileLayingOut} frames in the ${drawing.layoutMs} ms of the layout`)
    if (overloaded) {
      console.log(`     the baseline itself is under 30 frames/s (machine overloaded): asserting panning ≥ 0.8× the baseline`)
      assert(ratio >= 0.8, `${pan.fps} frames/s while panning, ${ratio.toFixed(2)}× the baseline's ${baseline.fps}`)
    } else {
      console.log('     asserting panning ≥ 30 frames/s')
      assert(pan.fps >= 30, `${pan.fps} frames/s while panning (baseline ${baseline.fps})`)
    }
    await page.screenshot({ path: path.join(artifacts, 'console-explore-5k.png') }).catch(() => {})

    // the table view shows a page of each list, paged with the keyboard (after the pan: focusing a button below the
    // canvas scrolls the page)
    const table = page.getByRole('table', { name: 'Graph as table' })
    await table.getByText('Nodes 1–100 of 5,000').waitFor()
    await table.getByText('Relationships 1–100 of 10,000').waitFor()
    assert((await table.locator('tbody tr:not(.edge-row):not(.more)').count()) === 101, 'a page of 100 nodes (and the Relationships heading row)')
    assert((await table.locator('tbody tr.edge-row').count()) === 100, 'a page of 100 relationships')
    assert(await table.getByRole('button', { name: 'Previous page of nodes' }).isDisabled(), 'no page before the first')
    await table.getByRole('button', { name: 'Next page of nodes' }).focus()
    await page.keyboard.press('Enter')
    await table.getByText('Nodes 101–200 of 5,000').waitFor()
    const firstOfPage2 = await table.locator('tbody tr:not(.edge-row)').first().innerText()
    assert(firstOfPage2.includes('BULK-'), `page 2 starts with ${firstOfPage2}`)
    await table.getByRole('button', { name: 'Previous page of nodes' }).click()
    await table.getByText('Nodes 1–100 of 5,000').waitFor()

    // The goal: no task of the page's thread over 200 ms (so no keystroke waiting longer) while the answer is received,
    // laid out and drawn. It is a benchmark figure, printed here and recorded in BENCHMARKS.md: on this shared machine
    // (load average 13-20 per 2 cores while it was measured) every task, the software renderer's above all, takes
    // several times as long, and a wall-clock assertion at the goal would fail for reasons that are not the console's.
    // Asserted: the page took the tab and every keystroke while the answer was laid out and drawn (above), and no
    // keystroke waited 5 s (a gross regression: the page blocked for the whole drawing).
    assert(typing.tabBeforeDone, 'the Search tab opened only once the answer was drawn')
    assert(typing.longestWait < 5000, `a keystroke waited ${typing.longestWait} ms for the page`)
  })

  await check('nothing was fetched from another origin; no script or CSP error', async () => {
    assert(external.length === 0, `external requests: ${external.join(', ')}`)
    assert(problems.length === 0, `page errors: ${problems.join(' | ')}`)
  })
  await page.screenshot({ path: path.join(artifacts, 'console-explore.png') }).catch(() => {})
  console.log(`console explore figures: ${JSON.stringify(figures)}`)
} catch (e) {
  fail(`setup: ${e?.stack ?? e}`)
} finally {
  await browser?.close()
  await server?.stop()
}
finish()
