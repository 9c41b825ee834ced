#!/usr/bin/env node
// The API explorer in a real browser: starts the worker locally (wrangler's unstable_startWorker, local D1
// with the migrations applied, no internet needed), drives Debian's Chromium through playwright-core
// (--headless --no-sandbox --disable-gpu), and checks that /api/v2/docs lists every operation of
// /api/v2/spec, that requests work with no credentials, a session and a browser-signed token, and that
// nothing is fetched from anywhere but the worker. Keeps a screenshot in test/artifacts/explorer.png.
// Prints one line "N passed, N failed" at the end; exits non-zero on any failure.
//
//   node test/browser/explorer.mjs            (CHROMIUM_PATH=/path/to/chromium to use another binary)
import { statSync } from 'node:fs'
import path from 'node:path'
import { artifacts, assert, openBrowser, startLocalWorker, suite } from './lib.mjs'

const screenshot = path.join(artifacts, 'explorer.png')
// Local-only values for this run (never used anywhere else).
const SECRETS = {
  ENVIRONMENT: 'development',
  JWT_SIGNING_KEY: 'browser-test-jwt-signing-key-0123456789abcdef0123',
  TOKEN_ENCRYPTION_KEY: 'YnJvd3Nlci10ZXN0LXRva2VuLWVuY3J5cHRpb24ta2U=',
  BOOTSTRAP_ADMIN_USERNAME: 'admin',
  BOOTSTRAP_ADMIN_PASSWORD: 'browser-test-admin-password',
}
const { check, fail, finish } = suite('the browser test')

let server
let browser
try {
  server = await startLocalWorker({ secrets: SECRETS, tmpPrefix: 'edgehound-explorer-' })
  const { origin } = server
  const spec = await (await fetch(`${origin}/api/v2/spec`)).json()
  const operations = Object.values(spec.paths).flatMap((item) => Object.keys(item).filter((m) => ['get', 'put', 'post', 'patch', 'delete'].includes(m)))

  browser = await openBrowser(origin, { viewport: { width: 1280, height: 900 } })
  const { page, external, problems: consoleErrors } = browser

  /** opens an operation, sends it, and returns the result panel's text once a status line shows */
  async function send(operationId) {
    const op = page.locator(`#op-${operationId}`)
    if (!(await op.evaluate((d) => d.open))) await op.locator('summary').click()
    await op.locator('.result').evaluate((r) => (r.textContent = ''))
    await op.locator('button.send').click()
    await op.locator('.result .status, .result .notice').first().waitFor()
    return op.locator('.result').innerText()
  }

  await check('GET /api/v2/docs answers 200 with a self-only Content-Security-Policy', async () => {
    const res = await page.goto(`${origin}/api/v2/docs`)
    assert(res.status() === 200, `status ${res.status()}`)
    const csp = (await res.allHeaders())['content-security-policy'] ?? ''
    assert(csp.includes("default-src 'self'") && csp.includes("script-src 'self'"), `CSP is "${csp}"`)
  })

  await check(`the endpoint list shows all ${operations.length} operations of /api/v2/spec, grouped by tag`, async () => {
    await page.locator('main#operations[aria-busy="false"]').waitFor()
    const n = await page.locator('details.op').count()
    assert(n === operations.length, `${n} operations listed, the spec has ${operations.length}`)
    const tags = new Set(Object.values(spec.paths).flatMap((item) => Object.values(item).map((o) => o.tags?.[0] ?? 'Other')))
    const groups = await page.locator('section.tag-group').count()
    assert(groups === tags.size, `${groups} groups for ${tags.size} tags`)
    assert((await page.locator('#op-GetApiExplorer .path').innerText()) === '/api/v2/docs', 'the explorer itself is listed')
    assert((await page.locator('#op-count').innerText()).startsWith(`${operations.length} operations`), 'operation count shown')
  })

  await check('the filter narrows the list', async () => {
    try {
      await page.fill('#filter', 'tokens')
      const visible = await page.locator('details.op:not(.hidden)').count()
      assert(visible > 0 && visible < operations.length, `${visible} visible`)
      const texts = await page.locator('details.op:not(.hidden)').evaluateAll((ds) => ds.map((d) => d.getAttribute('data-search')))
      assert(texts.every((t) => t.includes('tokens')), `unexpected: ${texts.join(' | ')}`)
      assert(await page.locator('#op-CreateToken').isVisible(), 'CreateToken shown')
      assert(!(await page.locator('#op-Health').isVisible()), '/health hidden')
      assert((await page.locator('#op-count').innerText()) === `${visible} of ${operations.length} operations`, 'count of matches shown')
    } finally {
      await page.fill('#filter', '')
    }
    assert((await page.locator('details.op:not(.hidden)').count()) === operations.length, 'filter cleared')
  })

  await check('without credentials a protected operation shows the 401 envelope message', async () => {
    const text = await send('GetApiVersion')
    assert(text.includes('HTTP 401'), text)
    assert(text.includes('no Authorization header'), text)
    assert(/requestid: [0-9a-f-]{36}/i.test(text), 'RequestID header shown')
  })

  await check('log in from the explorer and call with the session (Bearer)', async () => {
    await page.selectOption('#auth-mode', 'bearer')
    await page.fill('#login-user', 'admin')
    await page.fill('#login-password', SECRETS.BOOTSTRAP_ADMIN_PASSWORD)
    await page.click('#login-button')
    await page.locator('#login-message', { hasText: 'logged in' }).waitFor()
    const text = await send('GetApiVersion')
    assert(text.includes('HTTP 200') && text.includes('"current_version": "v2"'), text)
  })

  let token
  await check('create an API token with a JSON request body', async () => {
    const op = page.locator('#op-CreateToken')
    await op.locator('summary').click()
    await page.fill('#op-CreateToken-body', JSON.stringify({ token_name: 'explorer-test' }))
    const text = await send('CreateToken')
    assert(text.includes('HTTP 200'), text)
    token = JSON.parse(await op.locator('.result pre.body').innerText()).data
    assert(token.id && token.key && token.name === 'explorer-test', 'id and key returned')
  })

  await check('requests signed in the browser (SubtleCrypto) verify, with and without a query string', async () => {
    assert(token, 'needs the token from the previous step')
    await page.selectOption('#auth-mode', 'token')
    await page.fill('#auth-token-id', token.id)
    await page.fill('#auth-token-key', token.key)
    const text = await send('GetApiVersion')
    assert(text.includes('HTTP 200') && text.includes('"current_version": "v2"'), text)
    const list = page.locator('#op-ListTokens')
    await list.locator('summary').click()
    await page.fill('#op-ListTokens-query-user_id', token.user_id)
    const listed = await send('ListTokens')
    assert(listed.includes('HTTP 200') && listed.includes('explorer-test'), listed)
    await page.fill('#auth-token-key', 'not-the-key')
    const bad = await send('GetApiVersion')
    assert(bad.includes('HTTP 401') && bad.includes('signature digest mismatch'), bad)
  })

  await check('nothing was loaded from outside the worker, and no script or CSP errors', async () => {
    assert(external.length === 0, `external requests: ${external.join(', ')}`)
    assert(consoleErrors.length === 0, `console errors: ${consoleErrors.join(' | ')}`)
  })

  await check('screenshot kept in test/artifacts/explorer.png', async () => {
    // the state worth looking at: a token filled in and a signed request answered 200
    if (token) {
      await page.fill('#auth-token-key', token.key)
      await send('GetApiVersion')
    }
    await page.setViewportSize({ width: 1280, height: 1500 })
    await page.evaluate(() => window.scrollTo(0, 0))
    await page.screenshot({ path: screenshot, fullPage: false })
    assert(statSync(screenshot).size > 10_000, 'screenshot is not empty')
  })
} catch (e) {
  fail(`setup: ${e?.stack ?? e}`)
} finally {
  await browser?.close()
  await server?.stop()
}
finish()
