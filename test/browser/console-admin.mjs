#!/usr/bin/env node
// The console's Administration and Profile pages in a real browser (shared harness: test/browser/lib.mjs).
// An administrator drops a small SharpHound-shaped zip (built here with fflate) on the ingest page, watches the
// upload reach 100 %, sees the job complete and the analysis finish, and the findings appear (attack-paths
// route), and a file the API refuses shows the envelope's message on its row; the audit log page shows those
// actions; creates a user and a token (key shown once), and a Read-Only user limited to one environment through the
// form; Graph extensions: a schema uploaded, a refused one, delete; every section and Profile have their controls named. An Upload-Only
// user sees the ingest page only (and the API refuses the rest); a user restricted to one environment sees only
// it; a user whose password an administrator set must change it at first sign-in; that user turns on two-step
// sign-in from Profile (QR code, first code) and the next sign-in asks for a code. Database management: nothing
// chosen is refused on the page, the typed confirmation gates the request, a request the API refuses (a source
// kind whose extension was removed meanwhile) shows the envelope's message, a confirmed one is recorded
// (DeleteBloodhoundData with its options); a user without db/Wipe is not offered the page and the API refuses.
// Collector clients: an administrator creates a SharpHound client (its token shown once, copied), runs a job now;
// the test then acts as the collector with that token (check-in, poll, start, ingest, end) and the page shows the
// check-in and the job complete with its log; a schedule is created, edited (read back through the list and the
// API; a change the API refuses shows the envelope's message) and deleted, a waiting job canceled, the client
// deleted; an Upload-Only user is not offered the section and the API refuses it.
// Prints "N passed, N failed"; exits non-zero on any failure.
//
//   node --import tsx test/browser/console-admin.mjs [--screenshots]   (docs/console-admin.png and docs/console-clients.png)
import path from 'node:path'
import { strToU8, zipSync } from 'fflate'
import { EdgeHoundClient } from '../../src/client/index.ts'
import { availableFindingTypes } from '../../src/client/findings.ts'
import { base32Decode, totpAt } from '../../src/auth/totp.ts'
import { deleteExtension, listExtensions, upsertExtension } from '../../src/client/extensions.ts'
import { availableJobs, clientCheckin, createSchedule, deleteSchedule, endJob, ingest, listClients, listSchedules, startJob } from '../../src/client/clients.ts'
import { artifacts, assert, openBrowser, root, startLocalWorker, suite, unnamedElements } from './lib.mjs'

const shotsToDocs = process.argv.includes('--screenshots')
// Local-only values for this run (never used anywhere else).
const SECRETS = {
  ENVIRONMENT: 'development',
  JWT_SIGNING_KEY: 'console-admin-test-jwt-signing-key-0123456789abcdef',
  TOKEN_ENCRYPTION_KEY: 'Y29uc29sZS1hZG1pbi10ZXN0LXRva2VuLWtleS0wMTI=',
  BOOTSTRAP_ADMIN_USERNAME: 'admin',
  BOOTSTRAP_ADMIN_PASSWORD: 'console-admin-test-password',
}
const { check, fail, finish } = suite('the console administration test')

// Two made-up domains in SharpHound v6's shape: in LAB.ONE, MALLORY holds GenericAll on the domain (a
// Tier Zero object: the finding T0GenericAll); LAB.TWO has one user, to show a restricted user only LAB.ONE.
const ONE = 'S-1-5-21-4101-4102-4103'
const TWO = 'S-1-5-21-4201-4202-4203'
// the domain a collector client delivers (Collector clients checks)
const THREE = 'S-1-5-21-4301-4302-4303'
const meta = (type, n) => ({ methods: 46067, type, count: n, version: 6 })
const obj = (id, props, extra = {}) => ({ ObjectIdentifier: id, Properties: props, Aces: [], IsDeleted: false, IsACLProtected: false, ContainedBy: null, ...extra })
const user = (sid, name, domain, dsid) =>
  obj(sid, { name, domain, domainsid: dsid, enabled: true }, { PrimaryGroupSID: `${dsid}-513`, AllowedToDelegate: [], SPNTargets: [], HasSIDHistory: [], DomainSID: dsid, UnconstrainedDelegation: false })
const domain = (sid, name, aces = []) =>
  obj(sid, { name, domain: name, domainsid: sid, functionallevel: '2016', collected: true }, { Aces: aces, ChildObjects: [], Links: [], Trusts: [], GPOChanges: { AffectedComputers: [], LocalAdmins: [], RemoteDesktopUsers: [], DcomUsers: [], PSRemoteUsers: [] } })
const users = [user(`${ONE}-1201`, 'MALLORY@LAB.ONE', 'LAB.ONE', ONE), user(`${TWO}-1301`, 'TRENT@LAB.TWO', 'LAB.TWO', TWO)]
const domains = [
  domain(ONE, 'LAB.ONE', [{ PrincipalSID: `${ONE}-1201`, PrincipalType: 'User', RightName: 'GenericAll', IsInherited: false }]),
  domain(TWO, 'LAB.TWO'),
]
const ZIP = zipSync({
  '20261129_users.json': strToU8(JSON.stringify({ data: users, meta: meta('users', users.length) })),
  '20261129_domains.json': strToU8(JSON.stringify({ data: domains, meta: meta('domains', domains.length) })),
})

// An extension declaring one source kind (CWSource: id 3 in GET /api/v2/graphs/source-kinds while installed)
const WIPE_EXTENSION = {
  schema: { name: 'ConsoleWipe', display_name: 'Console wipe test', version: '1.0.0', namespace: 'CW' },
  node_kinds: [{ name: 'CW_Tenant', display_name: 'Tenant' }],
  environments: [{ environment_kind: 'CW_Tenant', source_kind: 'CWSource', principal_kinds: [] }],
}

// The Attack paths page's Environment picker: its options' names ("LAB.ONE (active-directory)" → "LAB.ONE").
const environmentNames = async (picker) => (await picker.locator('option').allInnerTexts()).map((t) => t.replace(/ \(.*\)$/, ''))
const T0_GENERIC_ALL_TITLE = 'Non Tier Zero Principals with Generic All Privileges on Tier Zero Objects'
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
try {
  server = await startLocalWorker({ secrets: SECRETS, tmpPrefix: 'edgehound-console-admin-', buildUi: true })
  const { origin } = server
  const anon = new EdgeHoundClient({ baseUrl: origin })
  const login = await anon.login(SECRETS.BOOTSTRAP_ADMIN_USERNAME, SECRETS.BOOTSTRAP_ADMIN_PASSWORD)
  const api = anon.withCredentials({ kind: 'bearer', jwt: login.data.session_token })

  browser = await openBrowser(origin)
  const { context, page, external, problems } = browser
  const signIn = async (name, password) => {
    // leave the console first: a page still polling (Data pipeline) would see the cleared session's 401 and
    // go to sign-in itself, aborting this navigation (net::ERR_ABORTED)
    await page.goto('about:blank')
    await context.clearCookies()
    await page.goto(`${origin}/ui/login`)
    await page.getByLabel('Username').fill(name)
    await page.getByLabel('Password').fill(password)
    await page.getByRole('button', { name: 'Sign in', exact: true }).click()
  }
  const main = () => page.getByRole('navigation', { name: 'Main' })
  const sub = () => page.getByRole('navigation', { name: 'Administration' })

  await check('the administrator sees every Administration section', async () => {
    await signIn('admin', SECRETS.BOOTSTRAP_ADMIN_PASSWORD)
    await main().getByRole('link', { name: 'Administration' }).click()
    const sections = ['File ingest', 'Data pipeline', 'Database management', 'Collector clients', 'Users', 'SSO providers', 'Graph extensions', 'Configuration', 'Audit log']
    for (const name of sections) await sub().getByRole('link', { name }).waitFor()
    assert(new URL(page.url()).pathname === '/ui/administration/file-ingest', `at ${page.url()}`)
  })

  await check('every control, landmark, form and table of each Administration section and of Profile has an accessible name', async () => {
    const missing = []
    const look = async (where) => {
      const list = await unnamedElements(page)
      if (list.length) missing.push(`${where}: ${list.join(', ')}`)
    }
    for (const name of ['Data pipeline', 'Database management', 'Collector clients', 'Users', 'SSO providers', 'Graph extensions', 'Configuration', 'Audit log', 'File ingest']) {
      await sub().getByRole('link', { name }).click()
      await page.getByRole('region', { name }).waitFor()
      await page.waitForLoadState('networkidle')
      await look(name)
    }
    await page.getByRole('link', { name: 'admin', exact: true }).click()
    await page.getByRole('region', { name: 'Your API tokens' }).waitFor()
    await page.waitForLoadState('networkidle')
    await look('Profile')
    assert(missing.length === 0, missing.join(' | '))
    await main().getByRole('link', { name: 'Administration' }).click()
    await page.getByRole('region', { name: 'File ingest' }).waitFor()
  })

  await check('File ingest: a dropped collector zip and a refused text file; upload progress reaches 100 %', async () => {
    // a real drop event carrying the zip (DataTransfer), and the file picker for a file that is not accepted
    const handle = await page.evaluateHandle((bytes) => {
      const dt = new DataTransfer()
      dt.items.add(new File([new Uint8Array(bytes)], 'lab-collection.zip', { type: 'application/zip' }))
      return dt
    }, [...ZIP])
    await page.locator('.dropzone').dispatchEvent('drop', { dataTransfer: handle })
    await page.getByLabel('Files to upload').setInputFiles({ name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('not collector data') })
    const files = page.getByRole('list', { name: 'Files' })
    await files.getByText('lab-collection.zip').waitFor()
    assert((await files.innerText()).includes('not a zip or JSON file'), `files: ${await files.innerText()}`)
    await page.getByRole('button', { name: 'Upload', exact: true }).click()
    const bar = page.getByRole('progressbar', { name: 'Upload progress for lab-collection.zip' })
    await until('the upload to finish', async () => (await files.innerText()).includes('done:'))
    assert((await bar.getAttribute('value')) === '100', `progress ${await bar.getAttribute('value')}`)
    assert(/2 nodes|[3-9] nodes|\d\d+ nodes/.test(await files.innerText()), `result: ${await files.innerText()}`)
    await page.getByRole('status').filter({ hasText: '1 of 1 file uploaded' }).waitFor()
  })

  await check('the job history shows the job Complete; the pipeline returns to idle after analysis', async () => {
    const history = page.getByRole('table', { name: 'File ingest history' })
    await until('the job to complete', async () => (await history.locator('tbody tr').first().innerText()).includes('Complete'), 60_000)
    await until('the pipeline to be idle', async () => (await page.getByRole('status', { name: 'Data pipeline status' }).innerText()).includes('idle'), 90_000)
  })

  await check('the analysis finished: the finding appears (attack-paths route) and the Attack paths page lists it for LAB.ONE', async () => {
    const types = await until('T0GenericAll', async () => {
      const r = await availableFindingTypes(api, ONE).catch(() => null)
      return r?.data.includes('T0GenericAll') ? r.data : null
    }, 90_000)
    assert(types.includes('T0GenericAll'), `types ${types}`)
    await sub().getByRole('link', { name: 'Data pipeline' }).click()
    await page.getByRole('table', { name: 'Analysis runs' }).getByRole('cell', { name: 'complete', exact: true }).first().waitFor()
    await main().getByRole('link', { name: 'Attack paths' }).click()
    const picker = page.getByRole('combobox', { name: 'Environment' })
    await until('the environments', async () => (await environmentNames(picker)).includes('LAB.ONE'), 20_000)
    await picker.selectOption(ONE)
    await page.getByRole('table', { name: 'Finding types' }).getByRole('button', { name: `Open ${T0_GENERIC_ALL_TITLE}` }).waitFor()
  })

  await check('File ingest: a file the API refuses shows the envelope message on its row', async () => {
    await main().getByRole('link', { name: 'Administration' }).click()
    await page.getByLabel('Files to upload').setInputFiles({ name: 'broken.json', mimeType: 'application/json', buffer: Buffer.from('{"data": [') })
    await page.getByRole('button', { name: 'Upload', exact: true }).click()
    const row = page.getByRole('list', { name: 'Files' }).getByRole('listitem').filter({ hasText: 'broken.json' })
    await until('the refusal', async () => (await row.innerText()).includes('failed: '), 30_000)
    const text = await row.innerText()
    // the API's 400 envelope: 'file failed validation with 1 violation(s); … file is not valid JSON: …'
    assert(text.includes('file failed validation') && text.includes('not valid JSON'), `row: ${text}`)
    await page.getByRole('status').filter({ hasText: '0 of 1 file uploaded' }).waitFor()
  })

  let tokenKey = ''
  await check('Users: create a user (must change the password) and give them a token; the key is shown once', async () => {
    await main().getByRole('link', { name: 'Administration' }).click()
    await sub().getByRole('link', { name: 'Users' }).click()
    const form = page.getByRole('form', { name: 'Create user' })
    await form.getByLabel('Username').fill('analyst')
    await form.getByLabel('Initial password').fill('initial-password-42')
    await form.getByLabel('Role').selectOption('User')
    await form.getByRole('button', { name: 'Create user' }).click()
    const row = page.getByRole('table', { name: 'Users list' }).getByRole('row').filter({ hasText: 'analyst' })
    await row.getByText('password (must change)').waitFor()
    await row.getByRole('button', { name: 'Tokens of analyst' }).click()
    const tokens = page.getByRole('region', { name: 'API tokens of analyst' })
    await tokens.getByLabel('Token name').fill('analyst-laptop')
    await tokens.getByRole('button', { name: 'Create token' }).click()
    const key = page.getByLabel('Token key', { exact: true })
    await key.waitFor()
    tokenKey = (await key.innerText()).trim()
    assert(tokenKey.length >= 32, `key ${tokenKey}`)
    if (shotsToDocs) {
      await page.getByRole('status', { name: 'New token key' }).scrollIntoViewIfNeeded() // the key in the picture
      await page.screenshot({ path: path.join(root, 'docs', 'console-admin.png'), fullPage: false })
    }
    await page.getByRole('button', { name: 'I have copied the key' }).click()
    await tokens.getByRole('table').getByRole('cell', { name: 'analyst-laptop', exact: true }).waitFor()
    assert(!(await page.content()).includes(tokenKey), 'the key is still in the page')
    const listed = await api.call('GET', '/api/v2/tokens')
    assert(!JSON.stringify(listed).includes(tokenKey), 'the API lists the key')
  })

  await check('Users: a Read-Only user limited to one environment, created through the form; a taken name shows the envelope message', async () => {
    const form = page.getByRole('form', { name: 'Create user' })
    const fill = async (name) => {
      await form.getByLabel('Username').fill(name)
      await form.getByLabel('Initial password').fill('restricted-password-1')
      await form.getByLabel('Must change the password at first sign-in').uncheck()
      await form.getByLabel('Role').selectOption('Read-Only')
      await form.getByRole('checkbox', { name: 'All environments' }).uncheck()
      await form.getByRole('group', { name: 'Environments the new user may see' }).getByRole('checkbox', { name: /^LAB\.ONE\b/ }).check()
      await form.getByRole('button', { name: 'Create user' }).click()
    }
    await fill('restricted')
    const row = page.getByRole('table', { name: 'Users list' }).getByRole('row').filter({ has: page.getByRole('cell', { name: 'restricted', exact: true }) })
    await row.getByRole('cell', { name: 'LAB.ONE', exact: true }).waitFor()
    const made = (await api.listUsers()).data.users.find((u) => u.principal_name === 'restricted')
    assert(made && !made.all_environments && made.environment_access.join() === ONE && made.roles.join() === 'Read-Only' && !made.needs_password_reset, JSON.stringify(made))
    await fill('restricted')
    const alert = form.getByRole('alert')
    await alert.waitFor()
    assert(!/HTTP \d+/.test(await alert.innerText()) && (await alert.innerText()).length > 0, `alert: ${await alert.innerText()}`)
  })

  await check('the audit log page shows those actions, filtered by action and actor', async () => {
    await sub().getByRole('link', { name: 'Audit log' }).click()
    const filters = page.getByRole('form', { name: 'Audit log filters' })
    const entries = page.getByRole('table', { name: 'Audit log entries' })
    for (const action of ['EndFileUploadJob', 'CreateUser', 'CreateAuthToken']) {
      await filters.getByLabel('Action').selectOption(action)
      await filters.getByLabel('Actor').fill('admin')
      await filters.getByRole('button', { name: 'Apply filters' }).click()
      await until(`${action} rows`, async () => {
        const rows = await entries.locator('tbody tr').allInnerTexts()
        return rows.length > 0 && rows.every((r) => r.includes(action) && r.includes('admin')) && rows.some((r) => r.includes('success'))
      }, 20_000)
    }
    const today = new Date().toISOString().slice(0, 10)
    await filters.getByLabel('Action').selectOption('CreateUser')
    await filters.getByLabel('From', { exact: true }).fill('2001-01-01')
    await filters.getByLabel('To', { exact: true }).fill('2001-01-02')
    await filters.getByRole('button', { name: 'Apply filters' }).click()
    await entries.getByText('No entries match.').waitFor()
    await filters.getByLabel('To', { exact: true }).fill(today)
    await filters.getByRole('button', { name: 'Apply filters' }).click()
    await entries.getByRole('cell', { name: 'CreateUser', exact: true }).first().waitFor()
  })

  await check('SSO providers: create an OIDC provider (provisioning on), a duplicate name shows the envelope message, edit it (rename, remove the secret), delete it', async () => {
    await main().getByRole('link', { name: 'Administration' }).click()
    await sub().getByRole('link', { name: 'SSO providers' }).click()
    const create = page.getByRole('form', { name: 'Create OIDC provider' })
    const fill = async (name) => {
      await create.getByLabel('Name', { exact: true }).fill(name)
      await create.getByLabel('Issuer URL').fill('https://op.console-admin.test')
      await create.getByLabel('Client ID').fill('console-admin')
      await create.getByLabel('Client secret (optional)').fill('console-admin-secret')
    }
    await fill('Corp OP')
    await create.getByLabel('Create users on first sign-in').check()
    await create.getByLabel('Default role').selectOption({ label: 'Read-Only' })
    await create.getByRole('button', { name: 'Create provider' }).click()
    const list = page.getByRole('table', { name: 'SSO providers list' })
    const row = () => list.locator('tr', { hasText: 'Corp OP' })
    await row().getByText('client secret stored').waitFor()
    assert((await row().innerText()).includes('On: new users get Read-Only'), `row: ${await row().innerText()}`)
    const stored = () => api.call('GET', '/api/v2/sso-providers').then((r) => r.data.find((p) => p.name.startsWith('Corp OP')))
    const made = await stored()
    assert(made?.type === 'OIDC' && made.details.issuer === 'https://op.console-admin.test' && made.details.client_id === 'console-admin', JSON.stringify(made))
    assert(made.config.auto_provision.enabled && made.config.auto_provision.default_role_id === 3, JSON.stringify(made.config))
    // the same name again: the API's 409 envelope message, where the user acted
    await fill('Corp OP')
    await create.getByRole('button', { name: 'Create provider' }).click()
    await page.getByRole('alert').filter({ hasText: 'must be unique' }).waitFor()

    await list.getByRole('button', { name: 'Edit Corp OP' }).click()
    const edit = page.getByRole('form', { name: 'Edit Corp OP' })
    await edit.getByLabel('Name', { exact: true }).fill('Corp OP EU')
    await edit.getByLabel('Remove the client secret (a public client)').check()
    await edit.getByRole('button', { name: 'Save' }).click()
    await list.locator('tr', { hasText: 'Corp OP EU' }).getByText('no client secret (public client)').waitFor()
    const edited = await stored()
    assert(edited.id === made.id && edited.name === 'Corp OP EU' && edited.details.has_client_secret === false, JSON.stringify(edited))

    await list.getByRole('button', { name: 'Delete Corp OP EU' }).click()
    await page.getByRole('alertdialog', { name: 'Delete SSO provider' }).getByRole('button', { name: 'Confirm' }).click()
    await page.getByRole('status').filter({ hasText: 'Provider Corp OP EU deleted' }).waitFor()
    assert((await list.locator('tr', { hasText: 'Corp OP' }).count()) === 0, 'the row is still listed')
    assert((await stored()) === undefined, 'the API still lists it')
  })

  await check('Configuration: toggle the user-updatable feature flag, set the password expiration window (a bad one shows the API message); the session lifetime is read-only', async () => {
    await sub().getByRole('link', { name: 'Configuration' }).click()
    const flags = page.getByRole('table', { name: 'Feature flags' })
    const before = (await api.call('GET', '/api/v2/features')).data
    const ntlm = before.find((f) => f.user_updatable)
    await flags.getByRole('switch', { name: ntlm.name }).click()
    await page.getByRole('status').filter({ hasText: `${ntlm.name}: ${ntlm.enabled ? 'off' : 'on'}` }).waitFor()
    const after = (await api.call('GET', '/api/v2/features')).data.find((f) => f.id === ntlm.id)
    assert(after.enabled === !ntlm.enabled, `flag ${JSON.stringify(after)}`)
    const fixed = before.find((f) => !f.user_updatable)
    assert((await flags.getByRole('switch', { name: fixed.name }).count()) === 0, 'a fixed flag is offered a toggle')

    const expiry = page.getByRole('form', { name: 'Password expiration window' })
    await expiry.getByLabel(/^Duration/).fill('P1000Y')
    await expiry.getByRole('button', { name: 'Save' }).click()
    await page.getByRole('alert').filter({ hasText: 'duration must be an ISO 8601 duration' }).waitFor()
    await expiry.getByLabel(/^Duration/).fill('P30D')
    await expiry.getByRole('button', { name: 'Save' }).click()
    await page.getByRole('status').filter({ hasText: 'Password expiration window saved.' }).waitFor()
    const stored = (await api.call('GET', '/api/v2/config?parameter=auth.password_expiration_window')).data[0]
    assert(stored.value.duration === 'P30D', JSON.stringify(stored))
    await page.getByLabel('Session lifetime (hours)').getByText('(read-only)').waitFor()
    // put the flag back as it was (what later checks expect of analysis)
    await page.getByRole('table', { name: 'Feature flags' }).getByRole('switch', { name: ntlm.name }).click()
    await until('the flag restored', async () => (await api.call('GET', '/api/v2/features')).data.find((f) => f.id === ntlm.id).enabled === ntlm.enabled, 20_000)
  })

  await check('Graph extensions: a schema file uploaded is listed, a refused one shows the envelope message; delete (confirmed)', async () => {
    await sub().getByRole('link', { name: 'Graph extensions' }).click()
    const region = page.getByRole('region', { name: 'Graph extensions' })
    const upload = region.getByRole('form', { name: 'Upload extension schema' })
    const schema = { schema: { name: 'ConsoleUpload', display_name: 'Console upload test', version: '1.0.0', namespace: 'CU' }, node_kinds: [{ name: 'CU_Thing', display_name: 'Thing' }] }
    await upload.getByLabel('Schema (JSON file)').setInputFiles({ name: 'schema.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(schema)) })
    await upload.getByRole('button', { name: 'Upload schema' }).click()
    await region.getByRole('status').filter({ hasText: 'Extension ConsoleUpload installed (1 node kinds' }).waitFor()
    const list = region.getByRole('table', { name: 'Installed extensions' })
    await list.getByRole('cell', { name: 'Console upload test', exact: true }).waitFor()
    assert((await listExtensions(api)).data.extensions.some((x) => x.name === 'ConsoleUpload'), 'not installed in the API')
    await upload.getByLabel('Schema (JSON file)').setInputFiles({ name: 'bad.json', mimeType: 'application/json', buffer: Buffer.from('{"schema": {"name": ""}}') })
    await upload.getByRole('button', { name: 'Upload schema' }).click()
    const alert = region.getByRole('alert')
    await alert.waitFor()
    assert((await alert.innerText()).length > 0 && !/HTTP \d+/.test(await alert.innerText()), `alert: ${await alert.innerText()}`)
    await list.getByRole('button', { name: 'Delete ConsoleUpload' }).click()
    await region.getByRole('alertdialog', { name: 'Delete extension' }).getByRole('button', { name: 'Confirm' }).click()
    await region.getByRole('status').filter({ hasText: 'Extension ConsoleUpload deleted.' }).waitFor()
    await list.getByRole('cell', { name: 'Console upload test', exact: true }).waitFor({ state: 'detached' })
    assert(!(await listExtensions(api)).data.extensions.some((x) => x.name === 'ConsoleUpload'), 'still installed in the API')
  })

  await check('Database management: nothing chosen is refused; the typed phrase gates the request; the API refusal is shown', async () => {
    const ext = await upsertExtension(api, WIPE_EXTENSION)
    await sub().getByRole('link', { name: 'Database management' }).click()
    const region = page.getByRole('region', { name: 'Database management' })
    const choices = region.getByRole('form', { name: 'Data to delete' })
    await choices.getByRole('checkbox', { name: 'CWSource data' }).waitFor()
    await choices.getByRole('button', { name: 'Delete' }).click()
    assert((await region.getByRole('alert').innerText()).includes('Select something to delete.'), 'nothing chosen is not refused')
    assert((await page.getByRole('alertdialog').count()) === 0, 'confirmation opened with nothing chosen')
    // the extension (and so source kind id 3) goes away while the page still lists it
    await deleteExtension(api, ext.data.id)
    await choices.getByRole('checkbox', { name: 'CWSource data' }).check()
    await choices.getByRole('button', { name: 'Delete' }).click()
    const dialog = page.getByRole('alertdialog', { name: 'Confirm deletion' })
    const confirm = dialog.getByRole('button', { name: 'Confirm deletion' })
    assert(await confirm.isDisabled(), 'Confirm is enabled before the phrase is typed')
    await dialog.getByLabel(/to confirm/).fill('delete')
    assert(await confirm.isDisabled(), 'Confirm is enabled by a wrong phrase')
    await dialog.getByLabel(/to confirm/).fill('delete this data')
    await confirm.click()
    await region.getByRole('alert').filter({ hasText: 'requested source kind id 3 not found' }).waitFor()
    const wipes = await api.call('GET', '/api/v2/audit?action=eq:DeleteBloodhoundData&limit=10')
    assert(!wipes.data.logs.some((l) => l.status === 'success'), `a refused request recorded a success: ${JSON.stringify(wipes.data.logs)}`)
  })

  await check('Database management: a confirmed request is recorded (DeleteBloodhoundData with the chosen options)', async () => {
    const region = page.getByRole('region', { name: 'Database management' })
    const choices = region.getByRole('form', { name: 'Data to delete' })
    await page.reload()
    await choices.getByRole('checkbox', { name: 'Data quality history' }).check()
    assert(!(await choices.getByRole('checkbox', { name: 'CWSource data' }).count()), 'the removed source kind is still listed')
    await choices.getByRole('button', { name: 'Delete' }).click()
    const dialog = page.getByRole('alertdialog', { name: 'Confirm deletion' })
    await dialog.getByLabel(/to confirm/).fill('Delete this data')
    await dialog.getByRole('button', { name: 'Confirm deletion' }).click()
    await region.getByRole('status').filter({ hasText: 'Deletion requested' }).waitFor()
    const wipes = await api.call('GET', '/api/v2/audit?action=eq:DeleteBloodhoundData&limit=10')
    const ok = wipes.data.logs.filter((l) => l.status === 'success')
    // the entry records the options as the API read them (every option, the ones not chosen false or empty)
    const o = ok[0]?.fields.options
    const only = o && o.deleteDataQualityHistory === true && !o.deleteCollectedGraphData && !o.deleteFileIngestHistory && [o.deleteSourceKinds, o.deleteRelationships, o.deleteAssetGroupSelectors].every((l) => !l?.length)
    assert(ok.length === 1 && only, `entries: ${JSON.stringify(wipes.data.logs)}`)
  })

  let collector // the collector client, signed with the token the page showed once
  await check('Collector clients: create (token shown once), run a job now; the collector checks in, ingests and ends it; the page follows', async () => {
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin })
    await sub().getByRole('link', { name: 'Collector clients' }).click()
    const region = page.getByRole('region', { name: 'Collector clients' })
    const form = region.getByRole('form', { name: 'Create client' })
    await form.getByLabel('Type').selectOption('sharphound')
    await form.getByLabel('Name').fill('lab-three-collector')
    await form.getByLabel(/^Domain SID/).fill(THREE)
    await form.getByLabel(/^Domain controller/).fill('dc01.lab.three')
    await form.getByRole('button', { name: 'Create client' }).click()
    const once = region.getByRole('status', { name: 'New client token' })
    const tokenId = (await once.getByLabel('Client token ID').innerText()).trim()
    const tokenKey = (await once.getByLabel('Client token key').innerText()).trim()
    assert(tokenKey.length >= 32 && /^[0-9a-f-]{36}$/.test(tokenId), `token ${tokenId} ${tokenKey}`)
    await once.getByRole('button', { name: 'Copy key' }).click()
    await once.getByText('Key copied to the clipboard.').waitFor()
    assert((await page.evaluate(() => navigator.clipboard.readText())) === tokenKey, 'the clipboard does not hold the key')
    await once.getByRole('button', { name: 'I have copied the key' }).click()
    assert(!(await page.content()).includes(tokenKey), 'the key is still in the page')
    // a refused change shows the envelope's message in the form where it was made
    await form.getByLabel('Name').fill('lab-three-collector')
    await form.getByLabel(/^Domain SID/).fill(THREE)
    await form.getByRole('button', { name: 'Create client' }).click()
    await form.getByRole('alert').filter({ hasText: 'a client with this name exists already' }).waitFor()

    const panel = region.getByRole('region', { name: 'Client lab-three-collector' })
    const run = panel.getByRole('form', { name: 'Run a job now for lab-three-collector' })
    await run.getByRole('checkbox', { name: 'Local groups' }).uncheck()
    await run.getByRole('button', { name: 'Run job now' }).click()
    const ready = await run.getByRole('status').filter({ hasText: /Job \d+ is ready/ }).innerText()
    const jobId = Number(/Job (\d+)/.exec(ready)[1])
    const jobs = panel.getByRole('table', { name: 'Jobs of lab-three-collector' })
    await jobs.getByRole('row').filter({ hasText: 'Ready' }).waitFor()

    // the collector, with the key the page showed once
    collector = anon.withCredentials({ kind: 'token', tokenId, tokenKey, scheme: 'bhesignature' })
    await clientCheckin(collector, { address: '10.0.3.7', hostname: 'collector-lab-three', version: 'v2.6.0' })
    const available = await availableJobs(collector)
    const job = available.data.find((j) => j.id === jobId)
    assert(job && job.session_collection && !job.local_group_collection && job.domain_controller === 'dc01.lab.three', `available: ${JSON.stringify(available.data)}`)
    await startJob(collector, jobId)
    await jobs.getByRole('row').filter({ hasText: 'Running' }).waitFor()
    const posted = await ingest(collector, { data: [user(`${THREE}-1401`, 'PEGGY@LAB.THREE', 'LAB.THREE', THREE)], meta: meta('users', 1) })
    assert(posted.data.nodes >= 1, `ingest: ${JSON.stringify(posted.data)}`)
    await endJob(collector, 'complete', 'Collection completed successfully')

    const done = jobs.getByRole('row').filter({ hasText: String(jobId) }).filter({ hasText: 'Complete' })
    await done.filter({ hasText: 'Collection completed successfully' }).waitFor()
    const row = region.getByRole('table', { name: 'Clients list' }).getByRole('row').filter({ hasText: 'lab-three-collector' })
    await row.getByText('collector-lab-three · 10.0.3.7 · v2.6.0').waitFor()
    assert(!(await row.innerText()).includes('never'), `check-in: ${await row.innerText()}`)
    await done.getByLabel(`Log of job ${jobId}`).click()
    await done.getByText(/started by the client/).waitFor()
    if (shotsToDocs) {
      await region.getByRole('table', { name: 'Clients list' }).evaluate((e) => e.scrollIntoView({ block: 'start' }))
      await page.evaluate(() => window.scrollBy(0, -70))
      await page.screenshot({ path: path.join(root, 'docs', 'console-clients.png'), fullPage: false })
    }
  })

  await check('Collector clients: a schedule is created, edited and deleted; a waiting job is canceled; deleting the client revokes its token', async () => {
    const region = page.getByRole('region', { name: 'Collector clients' })
    const panel = region.getByRole('region', { name: 'Client lab-three-collector' })
    const sched = panel.getByRole('form', { name: 'Schedule a collection for lab-three-collector' })
    await sched.getByLabel('Frequency').selectOption('WEEKLY')
    await sched.getByLabel('First run (UTC)').fill('2031-01-06T03:00')
    await sched.getByRole('button', { name: 'Create schedule' }).click()
    const list = panel.getByRole('table', { name: 'Schedules of lab-three-collector list' })
    const clientId = (await listClients(api)).data.find((c) => c.name === 'lab-three-collector').id
    const created = list.getByRole('row').filter({ hasText: 'Every week from 2031-01-06 03:00 UTC' })
    await created.waitFor()
    assert((await created.innerText()).includes('Sessions'), `created: ${await created.innerText()}`)

    // Edit: the form starts from the stored schedule; the change is read back through the list and the API
    const editButton = created.getByRole('button', { name: /^Edit schedule \d+$/ })
    const scheduleId = Number(/(\d+)$/.exec(await editButton.getAttribute('aria-label'))[1])
    await editButton.click()
    const edit = panel.getByRole('form', { name: `Edit schedule ${scheduleId}` })
    assert((await edit.getByLabel('Frequency').inputValue()) === 'WEEKLY', 'the edit form does not start from the stored frequency')
    assert((await edit.getByLabel('First run (UTC)').inputValue()) === '2031-01-06T03:00', 'the edit form does not start from the stored first run')
    await edit.getByLabel('Frequency').selectOption('DAILY')
    await edit.getByLabel('Repeat every').fill('2')
    await edit.getByLabel('First run (UTC)').fill('2031-02-01T04:30')
    await edit.getByRole('checkbox', { name: 'Sessions' }).uncheck()
    await edit.getByRole('button', { name: 'Save schedule' }).click()
    await panel.getByRole('status').filter({ hasText: `Schedule ${scheduleId} updated.` }).waitFor()
    await edit.waitFor({ state: 'detached' })
    const edited = list.getByRole('row').filter({ hasText: 'Every 2 days from 2031-02-01 04:30 UTC' })
    await edited.waitFor()
    assert(!(await edited.innerText()).includes('Sessions') && (await list.getByRole('row').count()) === 2, `list after the edit: ${await list.innerText()}`)
    const stored = (await listSchedules(api, clientId)).data
    assert(
      stored.length === 1 && stored[0].id === scheduleId && stored[0].rrule === 'DTSTART:20310201T043000Z RRULE:FREQ=DAILY;INTERVAL=2' && !stored[0].session_collection && stored[0].ad_structure_collection,
      `stored: ${JSON.stringify(stored)}`,
    )
    // a change the API refuses (the schedule deleted meanwhile) shows the envelope's message in the form
    const other = (await createSchedule(api, { client_id: clientId, rrule: 'DTSTART:20310301T000000Z RRULE:FREQ=HOURLY;INTERVAL=6' })).data
    await region.getByRole('button', { name: 'Jobs and schedules of lab-three-collector' }).click()
    await region.getByRole('button', { name: 'Jobs and schedules of lab-three-collector' }).click()
    await list.getByRole('button', { name: `Edit schedule ${other.id}` }).click()
    await deleteSchedule(api, other.id)
    const refusedForm = panel.getByRole('form', { name: `Edit schedule ${other.id}` })
    await refusedForm.getByRole('button', { name: 'Save schedule' }).click()
    await refusedForm.getByRole('alert').filter({ hasText: 'no schedule with this id' }).waitFor()
    await refusedForm.getByRole('button', { name: 'Cancel' }).click()
    await refusedForm.waitFor({ state: 'detached' })

    await list.getByRole('button', { name: `Delete schedule ${scheduleId}` }).click()
    await panel.getByRole('alertdialog', { name: 'Delete schedule' }).getByRole('button', { name: 'Confirm' }).click()
    await list.getByText('No schedule.').waitFor()

    await panel.getByRole('form', { name: 'Run a job now for lab-three-collector' }).getByRole('button', { name: 'Run job now' }).click()
    const jobs = panel.getByRole('table', { name: 'Jobs of lab-three-collector' })
    const cancel = jobs.getByRole('button', { name: /^Cancel job \d+$/ })
    await cancel.click()
    await jobs.getByRole('row').filter({ hasText: 'canceled by an administrator' }).waitFor()
    assert((await cancel.count()) === 0, 'a canceled job still offers Cancel')

    const row = region.getByRole('table', { name: 'Clients list' }).getByRole('row').filter({ hasText: 'lab-three-collector' })
    await row.getByRole('button', { name: 'Delete lab-three-collector' }).click()
    const confirm = region.getByRole('alertdialog', { name: 'Delete client' })
    assert((await confirm.innerText()).includes('token stops working'), `confirmation: ${await confirm.innerText()}`)
    await confirm.getByRole('button', { name: 'Confirm' }).click()
    await region.getByRole('status').filter({ hasText: 'lab-three-collector deleted' }).waitFor()
    await row.waitFor({ state: 'detached' })
    const refused = await availableJobs(collector).catch((e) => e)
    assert(refused?.status === 401, `the deleted client's token: ${refused?.status ?? JSON.stringify(refused)}`)
  })

  await check('an Upload-Only user sees the ingest page only; the API refuses the rest', async () => {
    await api.createUser({ principal_name: 'uploader', roles: ['Upload-Only'], secret: 'uploader-password-1' })
    await signIn('uploader', 'uploader-password-1')
    await page.getByRole('region', { name: 'File ingest' }).waitFor()
    assert(new URL(page.url()).pathname === '/ui/administration/file-ingest', `at ${page.url()}`)
    const links = await main().getByRole('link').allInnerTexts()
    assert(links.join(',') === 'Administration', `main navigation: ${links}`)
    const sections = await sub().getByRole('link').allInnerTexts()
    assert(sections.join(',') === 'File ingest', `sections: ${sections}`)
    await page.goto(`${origin}/ui/administration/users`)
    await page.getByRole('region', { name: 'File ingest' }).waitFor()
    await page.goto(`${origin}/ui/explore`)
    await page.getByRole('region', { name: 'File ingest' }).waitFor()
    const status = await page.evaluate(async () => (await fetch('/api/v2/bloodhound-users')).status)
    assert(status === 403, `GET /api/v2/bloodhound-users answered ${status}`)
    await page.goto(`${origin}/ui/administration/database-management`)
    await page.getByRole('region', { name: 'File ingest' }).waitFor()
    await page.goto(`${origin}/ui/administration/clients`)
    await page.getByRole('region', { name: 'File ingest' }).waitFor()
    const clients = await page.evaluate(async () => (await fetch('/api/v2/clients')).status)
    assert(clients === 403, `GET /api/v2/clients answered ${clients}`)
    // with the session's CSRF proof, as the console sends it: the refusal is the permission's, not the proof's
    const wipe = await page.evaluate(async () => {
      const csrf = /(?:^|;\s*)csrf_token=([^;]+)/.exec(document.cookie)?.[1] ?? ''
      const r = await fetch('/api/v2/clear-database', { method: 'POST', headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': csrf }, body: '{"deleteDataQualityHistory":true}' })
      return { status: r.status, body: await r.text() }
    })
    assert(wipe.status === 403 && !wipe.body.includes('"csrf"'), `POST /api/v2/clear-database answered ${wipe.status} ${wipe.body}`)
  })

  await check('a user restricted to one environment sees only it', async () => {
    // created through the Users form above
    await signIn('restricted', 'restricted-password-1')
    await main().getByRole('link', { name: 'Attack paths' }).click()
    const picker = page.getByRole('combobox', { name: 'Environment' })
    const names = await until('the environments', async () => {
      const n = await environmentNames(picker)
      return n.length ? n : null
    }, 20_000)
    assert(names.join(',') === 'LAB.ONE', `environments: ${names}`)
    await main().getByRole('link', { name: 'Administration' }).click()
    await sub().getByRole('link', { name: 'Data pipeline' }).waitFor()
    const sections = await sub().getByRole('link').allInnerTexts()
    // Read-Only: the pipeline status, and the configuration to read (app/ReadAppConfig)
    assert(sections.join(',') === 'Data pipeline,Configuration', `sections: ${sections}`)
  })

  await check('first sign-in with a password an administrator set: the forced change, then the console', async () => {
    await signIn('analyst', 'initial-password-42')
    const form = page.getByRole('form', { name: 'Change password' })
    await form.waitFor()
    assert((await main().count()) === 0, 'the navigation is shown before the change')
    await form.getByLabel('Current password').fill('initial-password-42')
    await form.getByLabel('New password', { exact: true }).fill('initial-password-42')
    await form.getByLabel('Repeat the new password').fill('initial-password-42')
    await form.getByRole('button', { name: 'Change password' }).click()
    assert((await form.getByRole('alert').innerText()).includes('must differ'), 'reusing the password is refused')
    await form.getByLabel('New password', { exact: true }).fill('analyst-own-password-7')
    await form.getByLabel('Repeat the new password').fill('analyst-own-password-7')
    await form.getByRole('button', { name: 'Change password' }).click()
    await main().getByRole('link', { name: 'Explore' }).waitFor()
    const again = await anon.login('analyst', 'analyst-own-password-7')
    assert(again.data.auth_expired === false, 'still expired after the change')
  })

  await check('Profile: own tokens, password form, sign out', async () => {
    await page.getByRole('link', { name: 'analyst' }).click()
    await page.getByRole('region', { name: 'Your API tokens' }).getByRole('cell', { name: 'analyst-laptop', exact: true }).waitFor()
    await page.getByRole('form', { name: 'Change password' }).waitFor()
    await page.getByRole('main').getByRole('button', { name: 'Sign out' }).click()
    await page.getByRole('button', { name: 'Sign in', exact: true }).waitFor()
  })

  await check('Profile: two-step sign-in set up with its QR code and a first code; the next sign-in asks for a code', async () => {
    await signIn('analyst', 'analyst-own-password-7')
    await main().getByRole('link', { name: 'Explore' }).waitFor()
    await page.getByRole('link', { name: 'analyst' }).click()
    const section = page.getByRole('region', { name: 'Two-step sign-in' })
    const setup = section.getByRole('form', { name: 'Set up two-step sign-in' })
    await setup.getByLabel('Password').fill('not-the-password-1')
    await setup.getByRole('button', { name: 'Set up two-step sign-in' }).click()
    const refused = await section.getByRole('alert').innerText()
    assert(refused.includes('unable to verify current password'), `a wrong password: ${refused}`)
    await setup.getByLabel('Password').fill('analyst-own-password-7')
    await setup.getByRole('button', { name: 'Set up two-step sign-in' }).click()
    await section.getByRole('img', { name: 'QR code for your authenticator app' }).waitFor()
    const key = base32Decode((await section.getByLabel('Key for your authenticator app').innerText()).trim())
    assert(key, 'the key shown is not base32')
    const activate = section.getByRole('form', { name: 'Activate two-step sign-in' })
    await activate.getByLabel('Code from your app').fill(await totpAt(key, Date.now()))
    await activate.getByRole('button', { name: 'Activate' }).click()
    assert((await section.getByRole('status').innerText()).includes('Two-step sign-in is on'), 'no confirmation')
    await section.getByRole('form', { name: 'Turn off two-step sign-in' }).waitFor()
    const analyst = (await api.listUsers()).data.users.find((u) => u.principal_name === 'analyst')
    assert((await api.mfaStatus(analyst.id)).data.status === 'activated', 'the API does not say activated')

    // the next sign-in: the password alone brings the code field, not an error; a wrong code is refused
    await signIn('analyst', 'analyst-own-password-7')
    const otp = page.getByLabel('One-time password')
    await otp.waitFor()
    assert((await page.getByRole('alert').count()) === 0, 'an error shown before any code was typed')
    await otp.fill('abcdef')
    await page.getByRole('button', { name: 'Sign in', exact: true }).click()
    assert((await page.getByRole('alert').innerText()).includes('one time password is invalid'), 'a wrong code is not refused')
    // the code of the next step (the one used to activate may not be used twice)
    await otp.fill(await totpAt(key, Date.now() + 30_000))
    await page.getByRole('button', { name: 'Sign in', exact: true }).click()
    await main().getByRole('link', { name: 'Explore' }).waitFor()
  })

  await check('nothing was fetched from another origin; no script or CSP error', async () => {
    assert(external.length === 0, `external requests: ${external.join(', ')}`)
    assert(problems.length === 0, `page errors: ${problems.join(' | ')}`)
  })
  await page.screenshot({ path: path.join(artifacts, 'console-admin.png') }).catch(() => {})
} catch (e) {
  fail(`setup: ${e?.stack ?? e}`)
} finally {
  await browser?.close()
  await server?.stop()
}
finish()
