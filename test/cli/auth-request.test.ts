/// <reference types="node" />
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { chmod, mkdir, readFile, stat, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { run, COMMANDS } from '../../src/cli/main'
import { envelope, FakeServer, formOf, testIO, startFakeServer } from './fake-server'

const TOKEN_ID = '3f1c2d4e-5a6b-4c7d-8e9f-0a1b2c3d4e5f'
const TOKEN_KEY = 'c2VjcmV0LXRva2VuLWtleS1mb3ItdGhlLWNsaS10ZXN0cw=='
const USER_ID = 'aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee'

let srv: FakeServer
beforeEach(async () => {
  srv = await startFakeServer(TOKEN_ID, TOKEN_KEY)
})
afterEach(() => srv.close())

function tokenJson(id: string, name: string) {
  return { id, name, user_id: USER_ID, hmac_method: 'hmac-sha2-256', created_at: '2026-11-25T10:00:00.000Z', updated_at: '2026-11-25T10:00:00.000Z', last_access: null, deleted_at: { time: '0001-01-01T00:00:00.000Z', valid: false } }
}

function withLogin() {
  srv.on('POST', '/api/v2/login', (r) => {
    const b = JSON.parse(r.body.toString())
    if (b.username !== 'admin' || b.secret !== 'pw-123') return { status: 401, json: envelope(401, 'invalid username or password', 'auth') }
    const payload = Buffer.from(JSON.stringify({ exp: 1_900_000_000 })).toString('base64url')
    const jwt = `eyJhbGciOiJIUzI1NiJ9.${payload}.sig`
    srv.sessions.add(jwt)
    return { json: { data: { user_id: USER_ID, auth_expired: false, session_token: jwt } } }
  })
  srv.on('POST', '/api/v2/tokens', (r) => {
    if (!r.principal) return { status: 401, json: envelope(401, 'authentication required: no Authorization header', 'auth') }
    const b = JSON.parse(r.body.toString())
    const id = '99999999-9999-4999-8999-999999999999'
    srv.tokens.set(id, 'new-token-key')
    return { json: { data: { ...tokenJson(id, b.token_name), key: 'new-token-key' } } }
  })
  srv.on('GET', '/api/v2/tokens', (r) => (r.principal ? { json: { data: { tokens: [tokenJson(TOKEN_ID, 'ci')] } } } : { status: 401, json: envelope(401, 'no auth') }))
}

describe('help and usage', () => {
  it('--help lists every command; every command has its own --help', async () => {
    const io = await testIO()
    expect(await run(['--help'], io)).toBe(0)
    for (const c of COMMANDS) expect(io.out()).toContain(c.name)
    for (const c of COMMANDS) {
      const each = await testIO()
      expect(await run([...c.name.split(' '), '--help'], each)).toBe(0)
      expect(each.out()).toMatch(new RegExp(`^Usage: edgehound ${c.name}`))
      expect(each.out()).toContain('Global options:')
    }
    const viaHelp = await testIO()
    expect(await run(['help', 'ingest'], viaHelp)).toBe(0)
    expect(viaHelp.out()).toContain('Usage: edgehound ingest FILE|DIR...')
  })

  it('no command, a group alone or an unknown command: usage on stderr, exit 2', async () => {
    for (const argv of [[], ['token'], ['token', 'frobnicate'], ['frobnicate']]) {
      const io = await testIO()
      expect(await run(argv, io)).toBe(2)
      expect(io.err()).toContain('Usage: edgehound')
      expect(io.out()).toBe('')
    }
  })

  it('unknown options and wrong argument counts are usage errors', async () => {
    const io = await testIO()
    expect(await run(['token', 'list', '--frob'], io)).toBe(2)
    expect(io.err()).toContain("Unknown option '--frob'")
    const io2 = await testIO()
    expect(await run(['token', 'create'], io2)).toBe(2)
    expect(io2.err()).toContain('usage: edgehound token create NAME')
  })

  it('never takes a key or password as an argument', async () => {
    for (const flag of ['--token-key', '--token-key=abc', '--password', '--key']) {
      const io = await testIO()
      expect(await run(['request', 'GET', '/api/version', flag, 'x', '--url', srv.url], io)).toBe(2)
      expect(io.err()).toMatch(/is not accepted: secrets on the command line/)
    }
    expect(srv.requests).toHaveLength(0)
  })

  it('no URL or no credentials: a clear message, nothing sent', async () => {
    const io = await testIO()
    expect(await run(['token', 'list'], io)).toBe(2)
    expect(io.err()).toContain('no server URL')
    const io2 = await testIO({ EDGEHOUND_URL: srv.url })
    expect(await run(['token', 'list'], io2)).toBe(2)
    expect(io2.err()).toContain('no credentials')
    expect(srv.requests).toHaveLength(0)
  })
})

describe('login, profiles, tokens', () => {
  it('login stores URL and session in a 0600 profile file; later commands use it', async () => {
    withLogin()
    const io = await testIO({}, { stdin: 'pw-123\n' })
    expect(await run(['login', '--url', srv.url, '--password-stdin'], io)).toBe(0)
    expect(io.out()).toContain(`Logged in to ${srv.url} as admin`)
    expect(io.out()).toContain('expires at 2030-03-17T17:46:40.000Z')
    const file = io.env.EDGEHOUND_CONFIG!
    expect((await stat(file)).mode & 0o777).toBe(0o600)
    expect((await stat(path.dirname(file))).mode & 0o777).toBe(0o700)
    const cfg = JSON.parse(await readFile(file, 'utf8'))
    expect(cfg.profiles.default).toMatchObject({ url: srv.url, username: 'admin' })
    expect(cfg.profiles.default.session_token).toMatch(/^eyJ/)

    // next command: URL and session from the profile
    const io2 = await testIO({ EDGEHOUND_CONFIG: file })
    expect(await run(['token', 'list'], io2)).toBe(0)
    expect(io2.out()).toContain(TOKEN_ID)
    expect(srv.to('GET', '/api/v2/tokens')[0].principal).toBe(`bearer:${cfg.profiles.default.session_token}`)
  })

  it('login --create-token stores a token, and later requests are signed with it', async () => {
    withLogin()
    const io = await testIO({ EDGEHOUND_PASSWORD: 'pw-123' })
    expect(await run(['login', '--url', srv.url, '--create-token', 'laptop', '--profile', 'work'], io)).toBe(0)
    expect(io.out()).toContain('API token "laptop" (99999999-9999-4999-8999-999999999999) created and stored')
    const cfg = JSON.parse(await readFile(io.env.EDGEHOUND_CONFIG!, 'utf8'))
    expect(cfg.profiles.work).toMatchObject({ token_id: '99999999-9999-4999-8999-999999999999', token_key: 'new-token-key' })
    const io2 = await testIO({ EDGEHOUND_CONFIG: io.env.EDGEHOUND_CONFIG, EDGEHOUND_PROFILE: 'work' })
    expect(await run(['token', 'list', '--json'], io2)).toBe(0)
    expect(JSON.parse(io2.out())[0].id).toBe(TOKEN_ID)
    expect(srv.to('GET', '/api/v2/tokens')[0].principal).toBe('99999999-9999-4999-8999-999999999999')
  })

  it('a wrong password prints the envelope message and exits 1; the prompt is used on a terminal', async () => {
    withLogin()
    const io = await testIO({}, { prompt: 'wrong' })
    expect(await run(['login', '--url', srv.url], io)).toBe(1)
    expect(io.err()).toContain('error: invalid username or password [auth]')
    expect(io.err()).toContain('HTTP 401, request id 00000000-0000-4000-8000-000000000000')
    // the hint is about the user name and password that were sent, not about a token that was not
    expect(io.err()).toContain('hint: the server refused this user name and password')
    expect(io.err()).not.toContain('token id')
    await expect(stat(io.env.EDGEHOUND_CONFIG!)).rejects.toThrow() // nothing stored
    const noTty = await testIO()
    expect(await run(['login', '--url', srv.url], noTty)).toBe(2)
    expect(noTty.err()).toContain('--password-stdin')
  })

  it('a 401 to a signed request points at the token id and key; to a session, at logging in again', async () => {
    const signed = await testIO({ EDGEHOUND_URL: srv.url, EDGEHOUND_TOKEN_ID: TOKEN_ID, EDGEHOUND_TOKEN_KEY: 'not-the-key' })
    expect(await run(['token', 'list'], signed)).toBe(1)
    expect(signed.err()).toContain('error: signature digest mismatch [auth]')
    expect(signed.err()).toContain('hint: the signed request was refused: check the token id and key')
    expect(signed.err()).not.toContain('user name and password')
    const raw = await testIO({ EDGEHOUND_URL: srv.url, EDGEHOUND_TOKEN_ID: TOKEN_ID, EDGEHOUND_TOKEN_KEY: 'not-the-key' })
    expect(await run(['request', 'GET', '/api/v2/tokens'], raw)).toBe(1)
    expect(raw.err()).toContain('hint: the signed request was refused')
    const session = await testIO()
    const file = session.env.EDGEHOUND_CONFIG!
    await mkdir(path.dirname(file), { recursive: true })
    await writeFile(file, JSON.stringify({ profiles: { default: { url: srv.url, session_token: 'ended-session' } } }), { mode: 0o600 })
    expect(await run(['token', 'list'], session)).toBe(1)
    expect(session.err()).toContain('hint: the session was refused (expired, or ended by a log-out): run `edgehound login` again')
  })

  it('warns when the profile file is readable by others', async () => {
    withLogin()
    const io = await testIO({ EDGEHOUND_URL: srv.url, EDGEHOUND_TOKEN_ID: TOKEN_ID, EDGEHOUND_TOKEN_KEY: TOKEN_KEY })
    const file = io.env.EDGEHOUND_CONFIG!
    await mkdir(path.dirname(file), { recursive: true })
    await writeFile(file, JSON.stringify({ profiles: {} }))
    await chmod(file, 0o644)
    expect(await run(['token', 'list'], io)).toBe(0)
    expect(io.err()).toContain(`warning: ${file} is accessible by other users; run: chmod 600`)
  })

  it('token create prints the key once; --save stores it; revoke removes it from the profile', async () => {
    withLogin()
    srv.on('DELETE', '/api/v2/tokens/:id', (r, p) => (r.principal ? { json: { data: { id: p.id, revoked: true } } } : { status: 401, json: envelope(401, 'x') }))
    const env = { EDGEHOUND_URL: srv.url, EDGEHOUND_TOKEN_ID: TOKEN_ID, EDGEHOUND_TOKEN_KEY: TOKEN_KEY }
    const io = await testIO(env)
    expect(await run(['token', 'create', 'ci-bot', '--save'], io)).toBe(0)
    expect(io.out()).toMatch(/key:\s+new-token-key/)
    expect(JSON.parse(srv.to('POST', '/api/v2/tokens')[0].body.toString())).toEqual({ token_name: 'ci-bot' })
    expect(srv.to('POST', '/api/v2/tokens')[0].principal).toBe(TOKEN_ID)
    const file = io.env.EDGEHOUND_CONFIG!
    expect(JSON.parse(await readFile(file, 'utf8')).profiles.default).toMatchObject({ token_id: '99999999-9999-4999-8999-999999999999', token_key: 'new-token-key' })

    const io2 = await testIO({ ...env, EDGEHOUND_CONFIG: file })
    expect(await run(['token', 'revoke', '99999999-9999-4999-8999-999999999999'], io2)).toBe(0)
    expect(io2.out()).toContain('revoked. It was removed from the profile too.')
    const prof = JSON.parse(await readFile(file, 'utf8')).profiles.default
    expect(prof.token_id).toBeUndefined()
    expect(prof.token_key).toBeUndefined()
  })

  it('token list --user sends the filter; a 403 is reported with its message', async () => {
    srv.on('GET', '/api/v2/tokens', () => ({ status: 403, json: envelope(403, 'only administrators may list other users’ tokens', 'user_id') }))
    const io = await testIO({ EDGEHOUND_URL: srv.url, EDGEHOUND_TOKEN_ID: TOKEN_ID, EDGEHOUND_TOKEN_KEY: TOKEN_KEY })
    expect(await run(['token', 'list', '--user', USER_ID], io)).toBe(1)
    expect(srv.requests[0].target).toBe(`/api/v2/tokens?user_id=${USER_ID}`)
    expect(io.err()).toContain('error: only administrators may list other users’ tokens [user_id]')
  })

  it('--json errors print the envelope itself on stderr', async () => {
    srv.on('GET', '/api/v2/tokens', () => ({ status: 429, json: envelope(429, 'Too many requests. Please try again later.', 'middleware') }))
    const io = await testIO({ EDGEHOUND_URL: srv.url, EDGEHOUND_TOKEN_ID: TOKEN_ID, EDGEHOUND_TOKEN_KEY: TOKEN_KEY })
    expect(await run(['token', 'list', '--json'], io)).toBe(1)
    expect(io.sleeps).toEqual([1000, 1000, 1000]) // waited out three times, silently: stderr is the envelope alone
    expect(JSON.parse(io.err())).toMatchObject({ http_status: 429, errors: [{ context: 'middleware', message: 'Too many requests. Please try again later.' }] })
    expect(io.out()).toBe('')
  })

  it('--token-key-file reads the key (and - reads stdin)', async () => {
    srv.on('GET', '/api/version', (r) => ({ json: { data: { who: r.principal } } }))
    const io = await testIO({ EDGEHOUND_URL: srv.url })
    await writeFile(path.join(io.cwd, 'key.txt'), TOKEN_KEY + '\n')
    expect(await run(['request', 'GET', '/api/version', '--token-id', TOKEN_ID, '--token-key-file', 'key.txt'], io)).toBe(0)
    expect(JSON.parse(io.out())).toEqual({ data: { who: TOKEN_ID } })
    const io2 = await testIO({ EDGEHOUND_URL: srv.url }, { stdin: TOKEN_KEY })
    expect(await run(['request', 'GET', '/api/version', '--token-id', TOKEN_ID, '--token-key-file', '-'], io2)).toBe(0)
    const bad = await testIO({ EDGEHOUND_URL: srv.url, EDGEHOUND_TOKEN_ID: TOKEN_ID, EDGEHOUND_TOKEN_KEY: 'wrong-key' })
    expect(await run(['request', 'GET', '/api/version'], bad)).toBe(1)
    expect(bad.err()).toContain('error: signature digest mismatch [auth]')
    expect(bad.err()).toContain('hint: the signed request was refused: check the token id and key')
  })

  it('logout ends the session on the server and forgets it', async () => {
    withLogin()
    let ended = 0
    srv.on('POST', '/api/v2/logout', (r) => (r.principal?.startsWith('bearer:') ? (ended++, { json: { data: { sessions_ended: 1 } } }) : { status: 401, json: envelope(401, 'x') }))
    const io = await testIO({ EDGEHOUND_PASSWORD: 'pw-123' })
    expect(await run(['login', '--url', srv.url], io)).toBe(0)
    const io2 = await testIO({ EDGEHOUND_CONFIG: io.env.EDGEHOUND_CONFIG })
    expect(await run(['logout'], io2)).toBe(0)
    expect(ended).toBe(1)
    expect(JSON.parse(await readFile(io.env.EDGEHOUND_CONFIG!, 'utf8')).profiles.default.session_token).toBeUndefined()
  })
})

describe('request METHOD PATH', () => {
  const env = () => ({ EDGEHOUND_URL: srv.url, EDGEHOUND_TOKEN_ID: TOKEN_ID, EDGEHOUND_TOKEN_KEY: TOKEN_KEY })

  it('signs the path and query exactly as written and prints the body', async () => {
    srv.on('GET', '/api/v2/domains/:id/details', () => ({ json: { count: 0, skip: 0, limit: 10, data: [] } }))
    const io = await testIO(env())
    const target = '/api/v2/domains/S-1-5-21-1/details?finding=T0GenericAll&skip=0&Accepted=eq%3AFalse'
    expect(await run(['request', 'get', target], io)).toBe(0)
    expect(srv.requests[0].target).toBe(target)
    expect(srv.requests[0].principal).toBe(TOKEN_ID) // the fake verified the signature over this exact target
    expect(JSON.parse(io.out())).toEqual({ count: 0, skip: 0, limit: 10, data: [] })
  })

  it('--data @file with its content type, extra headers, --include', async () => {
    srv.on('PUT', '/api/v2/extensions', (r) => ({ status: 201, json: { data: { got: r.headers['content-type'], x: r.headers['x-extra'] } } }))
    const io = await testIO(env())
    await writeFile(path.join(io.cwd, 'ext.json'), '{"schema":{"name":"X"}}')
    expect(await run(['request', 'PUT', '/api/v2/extensions', '--data', '@ext.json', '-H', 'X-Extra: 1', '-i'], io)).toBe(0)
    expect(srv.requests[0].body.toString()).toBe('{"schema":{"name":"X"}}')
    expect(srv.requests[0].principal).toBe(TOKEN_ID)
    expect(io.out()).toMatch(/^HTTP 201 Created\n/)
    expect(io.out()).toContain('requestid: 00000000-0000-4000-8000-000000000000')
    expect(io.out()).toContain('{"data":{"got":"application/json","x":"1"}}')
  })

  it('--data @- reads stdin; --form builds a signed multipart body with files', async () => {
    srv.on('POST', '/api/v2/echo', (r) => ({ json: { n: r.body.length } }))
    const io = await testIO(env(), { stdin: '{"a":1}' })
    expect(await run(['request', 'POST', '/api/v2/echo', '-d', '@-'], io)).toBe(0)
    expect(srv.requests[0].body.toString()).toBe('{"a":1}')
    const io2 = await testIO(env())
    await writeFile(path.join(io2.cwd, 'idp.xml'), '<EntityDescriptor/>')
    expect(await run(['request', 'POST', '/api/v2/echo', '-F', 'name=okta', '-F', 'metadata=@idp.xml'], io2)).toBe(0)
    const rec = srv.requests[1]
    expect(rec.principal).toBe(TOKEN_ID)
    const form = await formOf(rec)
    expect(form.get('name')).toBe('okta')
    const file = form.get('metadata') as File
    expect(file.name).toBe('idp.xml')
    expect(file.type).toBe('application/xml')
    expect(await file.text()).toBe('<EntityDescriptor/>')
  })

  it('a non-2xx answer prints the envelope message on stderr and exits 1; --json shows status and body', async () => {
    const io = await testIO(env())
    expect(await run(['request', 'GET', '/api/v2/missing'], io)).toBe(1)
    expect(io.out()).toBe('')
    expect(io.err()).toContain('error: no such endpoint [route]')
    const io2 = await testIO(env())
    expect(await run(['request', 'GET', '/api/v2/missing', '--json'], io2)).toBe(1)
    expect(JSON.parse(io2.out())).toMatchObject({ status: 404, body: { http_status: 404 } })
  })

  it('a 429 is waited out after Retry-After and sent again, signed afresh, at most 3 times; a 503 only for a read', async () => {
    let left = 2
    srv.on('GET', '/api/v2/busy', () =>
      left-- > 0 ? { status: 429, headers: { 'Retry-After': '2' }, json: envelope(429, 'rate limit exceeded', 'ratelimit') } : { json: { data: 'ok' } },
    )
    const io = await testIO(env())
    expect(await run(['request', 'GET', '/api/v2/busy'], io)).toBe(0)
    expect(JSON.parse(io.out())).toEqual({ data: 'ok' })
    expect(srv.requests.map((r) => r.principal)).toEqual([TOKEN_ID, TOKEN_ID, TOKEN_ID]) // each retry verified
    expect(io.sleeps).toEqual([2000, 2000])
    expect(io.err()).toContain('server busy (HTTP 429); retrying in 2 s')

    // always busy: three retries, the wait capped at 60 s, then the refusal as any API error
    srv.on('POST', '/api/v2/always-busy', () => ({ status: 429, headers: { 'Retry-After': '3600' }, json: envelope(429, 'rate limit exceeded', 'ratelimit') }))
    const io2 = await testIO(env())
    expect(await run(['request', 'POST', '/api/v2/always-busy', '-d', '{}'], io2)).toBe(1)
    expect(io2.sleeps).toEqual([60_000, 60_000, 60_000])
    expect(srv.requests.filter((r) => r.path === '/api/v2/always-busy')).toHaveLength(4)
    expect(io2.err()).toContain('error: rate limit exceeded [ratelimit]')

    // a 503 to a mutation is not sent again (it may have been answered after the route ran); to a read it is
    srv.on('POST', '/api/v2/unavailable', () => ({ status: 503, headers: { 'Retry-After': '1' }, json: envelope(503, 'unavailable', 'db') }))
    const io3 = await testIO(env())
    expect(await run(['request', 'POST', '/api/v2/unavailable', '-d', '{}'], io3)).toBe(1)
    expect(srv.requests.filter((r) => r.path === '/api/v2/unavailable')).toHaveLength(1)
    expect(io3.sleeps).toEqual([])
    let down = 1
    srv.on('GET', '/api/v2/unavailable', () => (down-- > 0 ? { status: 503, json: envelope(503, 'unavailable', 'db') } : { json: { data: 1 } }))
    const io4 = await testIO(env())
    expect(await run(['request', 'GET', '/api/v2/unavailable'], io4)).toBe(0)
    expect(io4.sleeps).toEqual([1000]) // no Retry-After: 1 s
  })

  it('usage errors: bad method, relative path, signing headers, --data with --form', async () => {
    for (const argv of [
      ['request', 'FETCH', '/x'],
      ['request', 'GET', 'api/version'],
      ['request', 'GET', '/x', '-H', 'Signature: forged'],
      ['request', 'POST', '/x', '-d', '{}', '-F', 'a=b'],
    ]) {
      const io = await testIO(env())
      expect(await run(argv, io)).toBe(2)
    }
    expect(srv.requests).toHaveLength(0)
  })

  it('an unreachable server is one clear line and exit 1', async () => {
    const io = await testIO({ ...env(), EDGEHOUND_URL: 'http://127.0.0.1:9' })
    expect(await run(['request', 'GET', '/api/version'], io)).toBe(1)
    expect(io.err()).toMatch(/^error: cannot reach the server: /)
  })
})
