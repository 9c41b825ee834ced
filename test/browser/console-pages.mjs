#!/usr/bin/env node
// The console's analysis pages and SAML sign-in in a real browser (shared harness: test/browser/lib.mjs).
// Ingests a small Active Directory graph through the API (three users with GenericAll on Domain Admins: three
// T0GenericAll findings), requests an analysis and waits for it, then drives Debian's Chromium: the attack-paths
// page lists the finding type and opens it (details, accept / unaccept risk); posture draws its charts with their
// tables; privilege zones lists Tier Zero and Owned, Tier Zero's members, and creates / deletes a selector (a duplicate
// name shows the envelope's message in the form) and a Cypher-seeded one; and a SAML sign-in through a test identity
// provider: the provider is created on Administration › SSO providers with the test metadata file, the sign-in page shows its button, the IdP (a page this test
// serves for the IdP's URL) answers the AuthnRequest with a response signed by xmldsigjs, and the form posts it
// to the callback, after which the user is in the console.
// Prints one line "N passed, N failed" at the end; exits non-zero on any failure.
//
//   node --import tsx test/browser/console-pages.mjs [--screenshots]   (docs/console-attack-paths.png, docs/console-posture.png)
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { createServer } from 'node:http'
import { inflateRawSync } from 'node:zlib'
import { EdgeHoundClient } from '../../src/client/index.ts'
import { ingest } from '../../src/client/graph.ts'
import { findingDetails, getAnalysisRun, requestAnalysis } from '../../src/client/findings.ts'
import { createOidcProvider, listSamlProviders } from '../../src/client/saml.ts'
import { adDataQuality } from '../../src/client/dataquality.ts'
import { allTagSelectors } from '../../src/client/assetgroups.ts'
import { b64, buildResponse, idpMetadata, sign, testKey } from '../fixtures/saml/idp-response.ts'
import { artifacts, assert, openBrowser, root, startLocalWorker, suite, unnamedElements, credentialsInUrls } from './lib.mjs'

const shotsToDocs = process.argv.includes('--screenshots')
// Local-only values for this run (never used anywhere else).
const SECRETS = {
  ENVIRONMENT: 'development',
  JWT_SIGNING_KEY: 'console-pages-jwt-signing-key-0123456789abcdef012',
  TOKEN_ENCRYPTION_KEY: 'Y29uc29sZS1wYWdlcy10b2tlbi1lbmNyeXB0aW9uLWs=',
  BOOTSTRAP_ADMIN_USERNAME: 'admin',
  BOOTSTRAP_ADMIN_PASSWORD: 'console-pages-admin-password',
}
const { check, fail, finish } = suite('the console pages test')

const D = 'S-1-5-21-7000'
const USERS = ['AMY', 'BEN', 'CAL'].map((n, i) => ({ id: `${D}-${1100 + i}`, name: `${n}@PAGES.TEST` }))
const FIXTURE = {
  metadata: { source_kind: 'ConsolePagesTest' },
  graph: {
    nodes: [
      { id: D, kinds: ['Domain'], properties: { name: 'PAGES.TEST', domainsid: D, collected: true } },
      { id: `${D}-512`, kinds: ['Group'], properties: { name: 'DOMAIN ADMINS@PAGES.TEST', domainsid: D } },
      ...USERS.map((u) => ({ id: u.id, kinds: ['User'], properties: { name: u.name, domainsid: D, enabled: true } })),
    ],
    edges: USERS.map((u) => ({ start: { value: u.id }, end: { value: `${D}-512` }, kind: 'GenericAll' })),
  },
}
const FINDING_TITLE = 'Non Tier Zero Principals with Generic All Privileges on Tier Zero Objects'

const until = async (what, fn, ms = 60_000) => {
  const end = Date.now() + ms
  for (;;) {
    const v = await fn()
    if (v) return v
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 300))
  }
}

let server
let browser
/** the test IdP's origin (allowed in the browser besides the service's), and what to close at the end */
const idpOrigin = []
const closers = []
try {
  server = await startLocalWorker({ secrets: SECRETS, tmpPrefix: 'edgehound-console-pages-', buildUi: true })
  const { origin } = server

  // the fixture, through the API (typed client, bearer session), then one analysis run
  const anon = new EdgeHoundClient({ baseUrl: origin })
  const login = await anon.login(SECRETS.BOOTSTRAP_ADMIN_USERNAME, SECRETS.BOOTSTRAP_ADMIN_PASSWORD)
  const api = anon.withCredentials({ kind: 'bearer', jwt: login.data.session_token })
  await ingest(api, FIXTURE)
  await until('the ingested graph', async () => (await api.call('GET', '/api/v2/search?q=AMY%40PAGES')).data.length > 0)
  const run = (await requestAnalysis(api)).data
  await until('the analysis run', async () => {
    const r = (await getAnalysisRun(api, run.id)).data
    if (r.status === 'failed') throw new Error(`analysis failed: ${JSON.stringify(r)}`)
    return r.status === 'complete'
  })
  const details = await findingDetails(api, D, { finding: 'T0GenericAll' })
  if (details.count !== USERS.length) throw new Error(`expected ${USERS.length} T0GenericAll findings, got ${details.count}`)

  browser = await openBrowser(origin, { allowOrigins: idpOrigin })
  const { context, page, external, problems, requested } = browser
  /** page → its unnamed elements (asserted empty by a check near the end) */
  const unnamed = {}
  const lookAt = async (where) => (unnamed[where] = await unnamedElements(page))
  const shot = async (name) => {
    await page.screenshot({ path: path.join(artifacts, `${name}.png`), fullPage: false }).catch(() => {})
    if (shotsToDocs) await page.screenshot({ path: path.join(root, 'docs', `${name}.png`) })
  }

  await page.goto(`${origin}/ui/attack-paths`)
  await page.getByLabel('Username').fill(SECRETS.BOOTSTRAP_ADMIN_USERNAME)
  await page.getByLabel('Password').fill(SECRETS.BOOTSTRAP_ADMIN_PASSWORD)
  await page.getByRole('button', { name: 'Sign in' }).click()

  await check('Attack paths: the environment picker chooses the test domain; the finding type is listed with severity, counts and trend', async () => {
    await page.getByRole('link', { name: 'Attack paths', exact: true }).waitFor()
    const types = page.getByRole('table', { name: 'Finding types' })
    const row = types.getByRole('row').filter({ has: page.getByRole('button', { name: `Open ${FINDING_TITLE}` }) })
    await row.waitFor()
    const picker = page.getByRole('combobox', { name: 'Environment' })
    assert((await picker.inputValue()) === D, `environment ${await picker.inputValue()}`)
    const cells = await row.getByRole('cell').allInnerTexts()
    // Finding, Severity, Findings, Exposure, Impact, Trend
    assert(cells[2] === String(USERS.length), `findings cell ${cells[2]}`)
    assert(/^(critical|high|moderate|low)$/.test(cells[1].trim().toLowerCase()), `severity cell ${cells[1]}`)
    assert(cells[5] === `+${USERS.length}`, `trend cell ${cells[5]}`)
  })

  await check('Attack paths › a finding: its principals and asset (paged) and its trend chart', async () => {
    await page.getByRole('button', { name: `Open ${FINDING_TITLE}` }).click()
    const table = page.getByRole('table', { name: `${FINDING_TITLE} findings` })
    for (const u of USERS) await table.getByRole('cell', { name: u.name, exact: true }).waitFor()
    assert((await table.getByRole('cell', { name: 'DOMAIN ADMINS@PAGES.TEST', exact: true }).count()) === USERS.length, 'the asset of every row')
    assert((await page.getByRole('navigation', { name: 'findings pages' }).getByRole('status').innerText()) === `1–${USERS.length} of ${USERS.length}`, 'pager')
    await page.getByRole('img', { name: new RegExp(`^Findings over 30 days: \\d+ point\\(s\\); latest ${USERS.length} on `) }).waitFor()
    await lookAt('Attack paths, a finding open')
  })
  await shot('console-attack-paths')

  await check('Attack paths › accept and unaccept the risk of one finding (stored through the API)', async () => {
    const amy = USERS[0].name
    await page.getByRole('button', { name: `Accept risk of ${amy} to DOMAIN ADMINS@PAGES.TEST` }).click()
    await page.getByRole('button', { name: `Unaccept risk of ${amy} to DOMAIN ADMINS@PAGES.TEST` }).waitFor()
    const stored = (await findingDetails(api, D, { finding: 'T0GenericAll', FromPrincipal: `eq:${USERS[0].id}` })).data[0]
    assert(stored.Accepted === true, 'accepted in the API')
    await page.getByRole('button', { name: `Unaccept risk of ${amy} to DOMAIN ADMINS@PAGES.TEST` }).click()
    await page.getByRole('button', { name: `Accept risk of ${amy} to DOMAIN ADMINS@PAGES.TEST` }).waitFor()
    // Read back until stored, at most 5 s: one run of 2026-11-29 (load average 20) read Accepted true once right
    // after the page had re-read it as false; not understood yet, so a late read is reported, never hidden.
    let after
    for (let reads = 1, until = Date.now() + 5000; ; reads++) {
      const rows = (await findingDetails(api, D, { finding: 'T0GenericAll', FromPrincipal: `eq:${USERS[0].id}` })).data
      after = rows[0]
      if (after.Accepted === false || Date.now() > until) {
        if (reads > 1) console.log(`note: the unaccepted finding read back as stored only at read ${reads}: ${JSON.stringify(rows.map((r) => [r.id, r.Accepted]))}`)
        break
      }
      await new Promise((r) => setTimeout(r, 250))
    }
    assert(after.Accepted === false, `unaccepted in the API (row ${after.id}, stored row the page acted on: ${stored.id})`)
  })

  await check('Posture: charts of the history (findings, exposure, assets, attack paths), each with its table; current statistics', async () => {
    await page.getByRole('link', { name: 'Posture' }).click()
    for (const title of ['Findings', 'Exposure', 'Tier Zero assets', 'Attack paths'])
      await page.getByRole('main').getByRole('img', { name: new RegExp(`^${title}: 1 point\\(s\\); latest `) }).waitFor({ timeout: 60_000 })
    await page.getByText('Findings as a table').click()
    const table = page.getByRole('table', { name: 'Findings data' })
    const today = new Date().toISOString().slice(0, 10)
    await table.getByRole('row', { name: `${today} ${USERS.length}` }).waitFor()
    const stats = page.getByRole('region', { name: 'Current statistics' })
    await stats.getByText('Open findings').waitFor()
    await until('the statistics', async () => !(await stats.innerText()).includes('…'), 20_000)
    assert(/Open findings\s*3/.test(await stats.innerText()), await stats.innerText())
  })
  await shot('console-posture')

  await check("Posture › data quality: the test domain's newest counts by kind beside all AD domains, and its completeness", async () => {
    const quality = page.getByRole('table', { name: 'Data quality by kind' })
    // the fixture's 3 users in PAGES.TEST, the only domain (so both columns agree); the other kinds as the API counts them
    await quality.getByRole('row', { name: `Users ${USERS.length} ${USERS.length}` }).waitFor({ timeout: 30_000 })
    const row = (await adDataQuality(api, D, { sort_by: '-created_at', limit: 1 })).data[0]
    for (const [label, key] of [['Groups', 'groups'], ['Relationships', 'relationships']])
      await quality.getByRole('row', { name: `${label} ${row[key]} ${row[key]}`, exact: true }).waitFor()
    const completeness = page.getByRole('region', { name: 'Data quality' }).getByLabel('Completeness')
    assert(/Session completeness \(this domain\)\s*0%/.test(await completeness.innerText()), await completeness.innerText())
  })

  await check('Privilege zones: the tags (Tier Zero, Owned) are listed; Tier Zero lists its members', async () => {
    await lookAt('Posture')
    await page.getByRole('link', { name: 'Privilege zones' }).click()
    const zones = page.getByRole('table', { name: 'Privilege zones' })
    await zones.getByRole('button', { name: 'Open Owned' }).waitFor()
    const names = await zones.locator('tbody tr td:first-child').allInnerTexts()
    assert(['Tier Zero', 'Owned'].every((n) => names.includes(n)), `tags: ${names}`)
    await page.getByRole('button', { name: 'Open Tier Zero' }).click()
    const members = page.getByRole('table', { name: 'Tier Zero members' })
    await members.getByRole('cell', { name: 'DOMAIN ADMINS@PAGES.TEST', exact: true }).waitFor()
    await members.getByRole('cell', { name: `${D}-512`, exact: true }).waitFor()
  })

  await check('Privilege zones: create a selector (object ids), a duplicate name shows the envelope message in the form, delete it; a Cypher-seeded one too', async () => {
    page.on('dialog', (d) => d.accept())
    const create = async () => {
      await page.getByRole('button', { name: 'New selector' }).click()
      const form = page.getByRole('form', { name: 'New selector of Tier Zero' })
      await form.getByLabel('Name').fill('Console pages test selector')
      await form.getByLabel('Seeds').fill(`${USERS[1].id}\n`)
      await form.getByRole('button', { name: 'Create selector' }).click()
      return form
    }
    await create()
    const selectors = page.getByRole('table', { name: 'Tier Zero selectors' })
    await selectors.getByText(USERS[1].id).waitFor()
    const form = await create()
    const alert = form.getByRole('alert')
    await alert.waitFor()
    await lookAt('Privilege zones, the selector form open')
    const text = await alert.innerText()
    assert(text.length > 0 && !/HTTP \d+/.test(text), `envelope message: ${text}`)
    await form.getByRole('button', { name: 'Cancel' }).click()
    await page.getByRole('button', { name: 'Delete Console pages test selector' }).click()
    await until('the selector deleted', async () => (await selectors.getByText(USERS[1].id).count()) === 0, 20_000)
    // a Cypher seed
    const cypher = `MATCH (n:User) WHERE n.name = '${USERS[2].name}' RETURN n`
    await page.getByRole('button', { name: 'New selector' }).click()
    const form2 = page.getByRole('form', { name: 'New selector of Tier Zero' })
    await form2.getByLabel('Name').fill('Console pages Cypher selector')
    await form2.getByLabel('Seed type').selectOption({ label: 'Cypher query' })
    await form2.getByLabel('Seeds').fill(cypher)
    await form2.getByRole('button', { name: 'Create selector' }).click()
    const row = selectors.getByRole('row').filter({ hasText: 'Console pages Cypher selector' })
    await row.getByText(cypher).waitFor()
    assert((await row.innerText()).includes('Cypher'), `row: ${await row.innerText()}`)
    const made = (await allTagSelectors(api, 1)).find((x) => x.name === 'Console pages Cypher selector')
    assert(made && made.seeds.length === 1 && made.seeds[0].type === 2 && made.seeds[0].value === cypher, JSON.stringify(made))
    await page.getByRole('button', { name: 'Delete Console pages Cypher selector' }).click()
    await row.waitFor({ state: 'detached', timeout: 20_000 })
  })

  await check('SAML: a provider created on the SSO providers page (metadata file); the sign-in page shows it; its button, the test IdP and the signed response sign the user in, back on the page they came from', async () => {
    const pem = (f) => readFileSync(path.join(root, 'test/fixtures/saml/signing', f), 'utf8')
    const key = testKey('idp-a', pem('idp-a.cert.pem'), pem('idp-a.key.pem'))
    const idp = 'https://idp.console-pages.test/metadata'
    const seen = []
    let provider
    // the test IdP, on its own origin (this test's HTTP server): reads the AuthnRequest (Redirect binding:
    // deflated, base64) and answers with a page whose form posts the signed response to the service's ACS
    const idpServer = createServer(async (req, res) => {
      try {
        const u = new URL(req.url, 'http://idp')
        const request = inflateRawSync(Buffer.from(u.searchParams.get('SAMLRequest') ?? '', 'base64')).toString('utf8')
        const id = /\bID="([^"]+)"/.exec(request)[1]
        seen.push(id)
        const xml = await sign(
          buildResponse({ idpEntityId: idp, acsUrl: provider.sp_acs_uri, spEntityId: provider.sp_issuer_uri, inResponseTo: id, email: 'dana@pages.test' }),
          'assertion',
          key,
        )
        const relay = u.searchParams.get('RelayState')
        const esc = (v) => v.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;')
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
        res.end(`<!doctype html><title>Test IdP</title><form method="post" action="${esc(provider.sp_acs_uri)}">
<input type="hidden" name="SAMLResponse" value="${esc(b64(xml))}">${relay ? `<input type="hidden" name="RelayState" value="${esc(relay)}">` : ''}
<button type="submit">Continue to EdgeHound</button></form>`)
      } catch (e) {
        res.writeHead(400).end(String(e))
      }
    })
    await new Promise((r) => idpServer.listen(0, '127.0.0.1', r))
    idpOrigin.push(`http://127.0.0.1:${idpServer.address().port}`)
    closers.push(() => idpServer.close())
    // the provider created through Administration › SSO providers (the IdP's metadata file, provisioning on)
    await page.getByRole('link', { name: 'Administration' }).click()
    await page.getByRole('navigation', { name: 'Administration' }).getByRole('link', { name: 'SSO providers' }).click()
    const create = page.getByRole('form', { name: 'Create SAML provider' })
    await create.getByLabel('Name', { exact: true }).fill('TestIdP')
    await create.getByLabel('Identity provider metadata (XML file)').setInputFiles({ name: 'idp-metadata.xml', mimeType: 'application/xml', buffer: Buffer.from(idpMetadata(idp, key, `${idpOrigin[0]}/sso`)) })
    await create.getByLabel('Create users on first sign-in').check()
    await create.getByLabel('Default role').selectOption({ label: 'Read-Only' })
    await create.getByRole('button', { name: 'Create provider' }).click()
    await page.getByRole('table', { name: 'SSO providers list' }).locator('tr', { hasText: 'TestIdP' }).waitFor()
    provider = (await listSamlProviders(api)).data.saml_providers.find((p) => p.name === 'TestIdP')
    assert(provider?.config?.auto_provision?.enabled && provider.config.auto_provision.default_role_id === 3, `stored: ${JSON.stringify(provider)}`)
    await page.goto('about:blank')
    await context.clearCookies()
    // signed out, a console page leads to sign-in; the SSO button carries the page (RelayState) through the IdP
    await page.goto(`${origin}/ui/posture`)
    const button = page.getByRole('button', { name: 'Sign in with TestIdP' })
    await button.waitFor()
    assert(new URL(await button.getAttribute('href')).searchParams.get('RelayState') === '/ui/posture', `button href ${await button.getAttribute('href')}`)
    await button.click()
    await page.getByRole('button', { name: 'Continue to EdgeHound' }).click()
    await page.getByRole('link', { name: 'Explore' }).waitFor()
    assert(seen.length === 1, `AuthnRequests seen by the IdP: ${seen.length}`)
    assert(new URL(page.url()).pathname === '/ui/posture', `landed at ${page.url()}, not back at /ui/posture`)
    await page.getByRole('heading', { name: 'Posture' }).waitFor()
    await page.getByText('dana@pages.test', { exact: true }).waitFor()
    const cookie = (await context.cookies()).find((c) => c.name === 'token')
    assert(cookie?.httpOnly, 'an HttpOnly session cookie')
    const me = await new EdgeHoundClient({ baseUrl: origin, credentials: { kind: 'bearer', jwt: cookie.value } }).self()
    assert(me.data.principal_name === 'dana@pages.test' && me.data.sso_provider_id === provider.sso_provider_id.int32, JSON.stringify(me.data))
  })

  await check('OIDC: a provider created through the API gets its own button on the sign-in page, linking to its login URL', async () => {
    // The full OIDC sign-in is covered in workerd (test/integration/oidc-signin.test.ts): an issuer must be an
    // https URL whose discovery the local worker can fetch, which this test's plain-http server is not.
    const created = (await createOidcProvider(api, { name: 'TestOP', client_id: 'console-pages', issuer: 'https://op.console-pages.test' })).data
    // leave the console first: the Posture page the SAML check ended on would see the cleared session's 401 and go
    // to sign-in itself, aborting this navigation (net::ERR_ABORTED)
    await page.goto('about:blank')
    await context.clearCookies()
    await page.goto(`${origin}/ui/login`)
    const oidc = page.getByRole('button', { name: 'Sign in with TestOP' })
    await oidc.waitFor()
    const href = await oidc.getAttribute('href')
    assert(href === created.login_uri && href === `${origin}/api/v2/sso/${created.slug}/login`, `OIDC button href ${href}, login_uri ${created.login_uri}`)
    const saml = await page.getByRole('button', { name: 'Sign in with TestIdP' }).getAttribute('href')
    assert(saml === `${origin}/api/v2/sso/testidp/login`, `SAML button href ${saml}`)
    assert(![href, saml].some((u) => new URL(u).search), 'no query (and so no token) in a sign-in link')
  })

  await check('every control, landmark, form and table on the pages visited has an accessible name', async () => {
    const missing = Object.entries(unnamed).filter(([, list]) => list.length).map(([where, list]) => `${where}: ${list.join(', ')}`)
    assert(Object.keys(unnamed).length === 3, `pages looked at: ${Object.keys(unnamed)}`)
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
} catch (e) {
  fail(`setup: ${e?.stack ?? e}`)
} finally {
  await browser?.close()
  for (const close of closers) close()
  await server?.stop()
}
finish()
