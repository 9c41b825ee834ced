/// <reference types="node" />
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { run } from '../../src/cli/main'

const run_ = run
import { envelope, FakeServer, formOf, testIO, type Recorded, startFakeServer } from './fake-server'

const TOKEN_ID = '3f1c2d4e-5a6b-4c7d-8e9f-0a1b2c3d4e5f'
const TOKEN_KEY = 'another-test-key'

let srv: FakeServer
beforeEach(async () => {
  srv = await startFakeServer(TOKEN_ID, TOKEN_KEY)
})
afterEach(() => srv.close())
const env = () => ({ EDGEHOUND_URL: srv.url, EDGEHOUND_TOKEN_ID: TOKEN_ID, EDGEHOUND_TOKEN_KEY: TOKEN_KEY })

describe('ingest FILE|DIR', () => {
  /** A job server: json files with `"bad"` in them are rejected with a schema error. */
  function jobServer(opts: { uploadStatus?: (r: Recorded, attempt: number) => number } = {}) {
    let ended = 0
    const attempts = new Map<string, number>()
    srv.on('POST', '/api/v2/file-upload/start', () => ({ status: 201, json: { data: { id: 42, status: 1 } } }))
    srv.on('POST', '/api/v2/file-upload/:id', (r, p) => {
      if (p.id !== '42') return { status: 404, json: envelope(404, 'job not found') }
      const name = String(r.headers['x-file-upload-name'])
      const n = (attempts.get(name) ?? 0) + 1
      attempts.set(name, n)
      const forced = opts.uploadStatus?.(r, n)
      if (forced === 429) return { status: 429, headers: { 'Retry-After': '2' }, json: envelope(429, 'Too many requests. Please try again later.', 'middleware') }
      if (forced === 401) return { status: 401, json: envelope(401, 'unknown or revoked token', 'auth') }
      if (r.body.toString().includes('"bad"'))
        return { status: 400, json: { ...envelope(400, 'Error saving ingest file. File failed schema validation.'), request_id: '11111111-2222-4333-8444-555555555555' } }
      return { status: 202, json: { data: { job_id: 42, file_name: name, files: 1, nodes: 12, edges: 30, nodes_changed: 12, edges_changed: 30, unmatched_edges: 0, errors: [] } } }
    })
    srv.on('POST', '/api/v2/file-upload/:id/end', () => (ended++, { status: 200 }))
    return { ended: () => ended }
  }

  async function dataDir(cwd: string) {
    const d = path.join(cwd, 'collect')
    await mkdir(path.join(d, 'sub'), { recursive: true })
    await writeFile(path.join(d, 'a-users.json'), JSON.stringify({ graph: { nodes: [{ id: 'n', kinds: ['User'] }], edges: [] }, pad: 'x'.repeat(200_000) }))
    await writeFile(path.join(d, 'b-bundle.zip'), Buffer.from([0x50, 0x4b, 0x03, 0x04, 1, 2, 3]))
    await writeFile(path.join(d, 'sub', 'c-groups.json'), '{"graph":{"nodes":[],"edges":[]}}')
    await writeFile(path.join(d, 'notes.txt'), 'ignored')
    await writeFile(path.join(d, '.hidden.json'), '{}')
    return d
  }

  it('uploads every .json/.zip of a directory as one signed job, ends it and prints a summary', async () => {
    const job = jobServer()
    const io = await testIO(env())
    await dataDir(io.cwd)
    expect(await run(['ingest', 'collect'], io)).toBe(0)
    const uploads = srv.requests.filter((r) => /^\/api\/v2\/file-upload\/42$/.test(r.path))
    expect(uploads.map((u) => u.headers['x-file-upload-name'])).toEqual(['a-users.json', 'b-bundle.zip', 'c-groups.json'])
    expect(uploads.map((u) => u.headers['content-type'])).toEqual(['application/json', 'application/zip', 'application/json'])
    // streamed bodies arrive whole, with their length, and verify against the signature
    expect(uploads.every((u) => u.principal === TOKEN_ID)).toBe(true)
    expect(uploads[0].body.length).toBeGreaterThan(200_000)
    expect(uploads[0].headers['content-length']).toBe(String(uploads[0].body.length))
    expect(job.ended()).toBe(1)
    expect(srv.requests.map((r) => r.path)).toEqual([
      '/api/v2/file-upload/start',
      '/api/v2/file-upload/42',
      '/api/v2/file-upload/42',
      '/api/v2/file-upload/42',
      '/api/v2/file-upload/42/end',
    ])
    expect(io.err()).toContain('Ingest job 42: 3 file(s)')
    expect(io.err()).toMatch(/ok\s+1\/3 a-users\.json\s+\d+ KiB\s+HTTP 202, 12 nodes, 30 edges, \d+/)
    expect(io.out()).toMatch(/^Job 42: 3 of 3 file\(s\) accepted \(.+; 36 nodes, 90 edges\); job ended, analysis follows\.\n$/)
  })

  it('a rejected file does not stop the others; exit 1 with the envelope message per file (--json summary)', async () => {
    jobServer()
    const io = await testIO(env())
    const d = await dataDir(io.cwd)
    await writeFile(path.join(d, 'sub', 'c-groups.json'), '{"bad":true}')
    expect(await run(['ingest', 'collect', '--json'], io)).toBe(1)
    const s = JSON.parse(io.out())
    expect(s).toMatchObject({ job_id: 42, accepted: 2, rejected: 1, skipped: 0, ended: true, nodes: 24, edges: 60 })
    expect(s.files[0].result).toMatchObject({ nodes: 12, edges: 30, unmatched_edges: 0 })
    expect(s.files[2]).toMatchObject({
      file: path.join('collect', 'sub', 'c-groups.json'),
      status: 400,
      accepted: false,
      error: 'Error saving ingest file. File failed schema validation.',
      request_id: '11111111-2222-4333-8444-555555555555',
    })
    expect(io.err()).toBe('') // no progress noise in --json mode without a terminal
  })

  it('retries a file answered 429 after Retry-After', async () => {
    jobServer({ uploadStatus: (r, n) => (r.headers['x-file-upload-name'] === 'one.json' && n === 1 ? 429 : 202) })
    const io = await testIO(env())
    await writeFile(path.join(io.cwd, 'one.json'), '{"graph":{"nodes":[],"edges":[]}}')
    expect(await run(['ingest', 'one.json'], io)).toBe(0)
    expect(io.sleeps).toEqual([2000])
    expect(srv.to('POST', '/api/v2/file-upload/42').filter((r) => r.path === '/api/v2/file-upload/42')).toHaveLength(2)
  })

  it('a 401 on upload stops at once, does not end the job, and exits 1 with the message', async () => {
    const job = jobServer({ uploadStatus: () => 401 })
    const io = await testIO(env())
    await dataDir(io.cwd)
    expect(await run(['ingest', 'collect'], io)).toBe(1)
    expect(srv.requests.filter((r) => r.path === '/api/v2/file-upload/42')).toHaveLength(1)
    expect(job.ended()).toBe(0)
    expect(io.out()).toContain('Job 42: 0 of 3 file(s) accepted')
    expect(io.out()).toContain('2 not sent')
    expect(io.err()).toContain('error: unknown or revoked token [auth]')
  })

  it('shows a progress bar on a terminal', async () => {
    jobServer()
    const io = await testIO(env())
    io.stderr.isTTY = true
    io.stderr.columns = 120
    await dataDir(io.cwd)
    expect(await run(['ingest', 'collect/a-users.json'], io)).toBe(0)
    expect(io.err()).toMatch(/\r\x1b\[K1\/1 a-users\.json \[-+\]\s+0%/)
    expect(io.err()).toMatch(/\[#{24}\] 100%/)
  })

  it('nothing to upload, a missing path, or a failed start: exit non-zero with a message', async () => {
    srv.on('POST', '/api/v2/file-upload/start', () => ({ status: 403, json: envelope(403, 'missing permission graph/Ingest', 'auth') }))
    const io = await testIO(env())
    await mkdir(path.join(io.cwd, 'empty'))
    expect(await run(['ingest', 'empty'], io)).toBe(1)
    expect(io.err()).toContain('no .json or .zip files found in empty')
    const io2 = await testIO(env())
    expect(await run(['ingest', 'nope.json'], io2)).toBe(1)
    expect(io2.err()).toContain('no such file or directory: nope.json')
    const io3 = await testIO(env())
    await writeFile(path.join(io3.cwd, 'x.json'), '{}')
    expect(await run(['ingest', 'x.json'], io3)).toBe(1)
    expect(io3.err()).toContain('error: missing permission graph/Ingest [auth]')
  })
})

describe('saml create, extensions put|list|delete', () => {
  it('saml create posts name and metadata as multipart and prints the SP URLs', async () => {
    srv.on('POST', '/api/v2/sso-providers/saml', async (r) => {
      const f = await formOf(r)
      const meta = f.get('metadata') as File
      return {
        json: {
          data: {
            id: 3,
            name: f.get('name'),
            idp_issuer_uri: (await meta.text()).includes('okta') ? 'http://www.okta.com/x' : '?',
            sp_acs_uri: 'https://eh.example/api/v2/sso/okta/acs',
            sp_metadata_uri: 'https://eh.example/api/v2/sso/okta/metadata',
            file: meta.name,
          },
        },
      }
    })
    const io = await testIO(env())
    await writeFile(path.join(io.cwd, 'okta.xml'), '<md:EntityDescriptor entityID="http://www.okta.com/x" okta="1"/>')
    expect(await run(['saml', 'create', 'okta', 'okta.xml'], io)).toBe(0)
    expect(srv.requests[0].principal).toBe(TOKEN_ID)
    expect(String(srv.requests[0].headers['content-type'])).toMatch(/^multipart\/form-data; boundary=/)
    expect(io.out()).toMatch(/sp_acs_uri:\s+https:\/\/eh\.example\/api\/v2\/sso\/okta\/acs/)
    expect(io.out()).toMatch(/idp_issuer_uri:\s+http:\/\/www\.okta\.com\/x/)
    const io2 = await testIO(env())
    await writeFile(path.join(io2.cwd, 'okta.xml'), '<x okta="1"/>')
    expect(await run(['saml', 'create', 'okta2', 'okta.xml', '--json'], io2)).toBe(0)
    expect(JSON.parse(io2.out())).toMatchObject({ id: 3, name: 'okta2', file: 'okta.xml' })
  })

  it('saml create: a 409 prints the message; a missing file is reported before any request', async () => {
    srv.on('POST', '/api/v2/sso-providers/saml', () => ({ status: 409, json: envelope(409, 'a SAML provider named "okta" already exists', 'name') }))
    const io = await testIO(env())
    await writeFile(path.join(io.cwd, 'm.xml'), '<x/>')
    expect(await run(['saml', 'create', 'okta', 'm.xml'], io)).toBe(1)
    expect(io.err()).toContain('error: a SAML provider named "okta" already exists [name]')
    const io2 = await testIO(env())
    expect(await run(['saml', 'create', 'okta', 'missing.xml'], io2)).toBe(1)
    expect(io2.err()).toContain('cannot read missing.xml')
    expect(srv.requests).toHaveLength(1)
  })

  it('extensions put sends the JSON file (201 created / 200 updated), list shows a table, delete by id', async () => {
    let exists = false
    srv.on('PUT', '/api/v2/extensions', (r) => {
      const created = !exists
      exists = true
      const doc = JSON.parse(r.body.toString())
      return { status: 200, json: { data: { id: 5, name: doc.schema.name, display_name: 'Acme', version: doc.schema.version ?? '1.0.0', namespace: 'ACME', is_builtin: false, created } } }
    })
    srv.on('GET', '/api/v2/extensions', () => ({
      json: { data: { extensions: [{ id: 5, name: 'acme', display_name: 'Acme', version: '1.0.0', namespace: 'ACME', is_builtin: false }, { id: 1, name: 'ad', display_name: 'Active Directory', version: '1', namespace: 'AD', is_builtin: true }] } },
    }))
    srv.on('DELETE', '/api/v2/extensions/:id', (_r, p) => (p.id === '5' ? { json: { data: { id: 5, name: 'acme', deleted: true } } } : { status: 404, json: envelope(404, 'no extension found matching extension id: 6', 'id') }))
    const io = await testIO(env())
    await writeFile(path.join(io.cwd, 'acme.json'), JSON.stringify({ schema: { name: 'acme', display_name: 'Acme', version: '1.0.0', namespace: 'ACME' }, node_kinds: [] }))
    expect(await run(['extensions', 'put', 'acme.json'], io)).toBe(0)
    expect(io.out()).toBe('Extension "acme" created (id 5, version 1.0.0).\n')
    expect(srv.requests[0]).toMatchObject({ principal: TOKEN_ID, headers: expect.objectContaining({ 'content-type': 'application/json' }) })
    const io2 = await testIO(env())
    await writeFile(path.join(io2.cwd, 'acme.json'), JSON.stringify({ schema: { name: 'acme', version: '1.1.0' } }))
    expect(await run(['extensions', 'put', 'acme.json', '--json'], io2)).toBe(0)
    expect(JSON.parse(io2.out())).toMatchObject({ status: 200, name: 'acme', created: false, body: { data: { id: 5, version: '1.1.0' } } })
    const io3 = await testIO(env())
    await writeFile(path.join(io3.cwd, 'acme.json'), JSON.stringify({ schema: { name: 'acme', version: '1.2.0' } }))
    expect(await run(['extensions', 'put', 'acme.json'], io3)).toBe(0)
    expect(io3.out()).toBe('Extension "acme" updated (id 5, version 1.2.0).\n')

    const list = await testIO(env())
    expect(await run(['extensions', 'list'], list)).toBe(0)
    expect(list.out().split('\n')[0]).toMatch(/^ID\s+NAME\s+DISPLAY_NAME\s+VERSION\s+NAMESPACE\s+BUILTIN$/)
    expect(list.out()).toMatch(/5\s+acme\s+Acme\s+1\.0\.0\s+ACME\s+no\n/)
    expect(list.out()).toMatch(/1\s+ad\s+Active Directory\s+1\s+AD\s+yes\n/)

    const del = await testIO(env())
    expect(await run(['extensions', 'delete', '5'], del)).toBe(0)
    expect(del.out()).toBe('Extension 5 deleted.\n')
    const del2 = await testIO(env())
    expect(await run(['extensions', 'delete', '6'], del2)).toBe(1)
    expect(del2.err()).toContain('error: no extension found matching extension id: 6 [id]')
  })

  it('extensions put: a 400 lists every envelope detail', async () => {
    srv.on('PUT', '/api/v2/extensions', () => ({
      status: 400,
      json: { ...envelope(400, 'node kind "X" must start with the namespace', 'node_kinds[0].name'), errors: [
        { context: 'node_kinds[0].name', message: 'node kind "X" must start with the namespace' },
        { context: 'node_kinds[1].color', message: 'color must look like #RRGGBB' },
      ] },
    }))
    const io = await testIO(env())
    await writeFile(path.join(io.cwd, 'e.json'), '{}')
    expect(await run(['extensions', 'put', 'e.json'], io)).toBe(1)
    expect(io.err()).toContain('error: node kind "X" must start with the namespace [node_kinds[0].name]')
    expect(io.err()).toContain('error: color must look like #RRGGBB [node_kinds[1].color]')
  })
})

describe('analysis run|status', () => {
  const run = (id: number, status: string, extra: Record<string, unknown> = {}) => ({
    id,
    status,
    reasons: ['requested by admin'],
    requested_at: '2026-11-25T10:00:00.000Z',
    started_at: null,
    completed_at: null,
    attempts: 0,
    error: null,
    finding_count: null,
    new_count: null,
    changed_count: null,
    closed_count: null,
    duration_ms: null,
    ...extra,
  })
  /** POST answers run 2 (pending); GET /api/v2/analysis/2 walks through `states`; the list shows the latest */
  function analysisServer(states: unknown[], list: unknown[] = [run(1, 'complete')]) {
    let i = 0
    srv.on('POST', '/api/v2/analysis', () => ({ status: 202, json: { data: run(2, 'pending') } }))
    srv.on('GET', '/api/v2/analysis/:id', (_r, p) => (p.id === '2' ? { json: { data: states[Math.min(i++, states.length - 1)] } } : { status: 404, json: envelope(404, 'analysis run not found', 'run_id') }))
    srv.on('GET', '/api/v2/analysis', () => ({ json: { count: list.length, skip: 0, limit: 1, data: list.slice(0, 1) } }))
  }

  it('run requests, then follows that run by id until it completes, with its counts', async () => {
    analysisServer([run(2, 'pending'), run(2, 'running'), run(2, 'complete', { finding_count: 240, new_count: 3, changed_count: 1, closed_count: 0, duration_ms: 1234 })])
    const io = await testIO(env())
    expect(await run_(['analysis', 'run', '--interval', '0.5'], io)).toBe(0)
    expect(io.sleeps).toEqual([500, 500, 500])
    expect(srv.to('GET', '/api/v2/analysis').map((r) => r.target)).toEqual(['/api/v2/analysis/2', '/api/v2/analysis/2', '/api/v2/analysis/2'])
    expect(srv.requests.every((r) => r.principal === TOKEN_ID)).toBe(true)
    expect(io.out()).toBe('Analysis run 2 complete: 240 finding(s) (3 new, 1 changed, 0 closed) in 1.2 s.\n')
    // without a terminal: one line per change of state, on stderr
    expect(io.err()).toBe('analysis pending\nanalysis running\n')
  })

  it('a failed run exits 1 with its error; --json gives the state and the run', async () => {
    analysisServer([run(2, 'failed', { error: 'graph too large' })])
    const io = await testIO(env())
    expect(await run_(['analysis', 'run', '--json'], io)).toBe(1)
    expect(JSON.parse(io.out())).toMatchObject({ phase: 'failed', status: 'failed', run_id: '2', message: 'graph too large', run: { id: 2, error: 'graph too large' } })
    const text = await testIO(env())
    expect(await run_(['analysis', 'run'], text)).toBe(1)
    expect(text.out()).toBe('Analysis run 2 FAILED: graph too large.\n')
  })

  it('gives up after --timeout with exit 1 (the run continues on the server)', async () => {
    analysisServer([run(2, 'running')])
    const io = await testIO(env())
    let t = Date.parse('2026-11-25T10:00:00Z')
    io.now = () => new Date(t)
    io.sleep = async (ms) => {
      io.sleeps.push(ms)
      t += ms
    }
    expect(await run_(['analysis', 'run', '--timeout', '10', '--interval', '3'], io)).toBe(1)
    expect(io.sleeps).toEqual([3000, 3000, 3000, 3000])
    expect(io.err()).toContain('error: analysis still running after 12.0 s (gave up waiting; it continues on the server)')
  })

  it('--no-wait returns after the request; status shows the latest run; status --wait follows it', async () => {
    analysisServer([run(2, 'running'), run(2, 'complete', { finding_count: 7, duration_ms: 80 })], [run(2, 'running'), run(1, 'complete')])
    const io = await testIO(env())
    expect(await run_(['analysis', 'run', '--no-wait'], io)).toBe(0)
    expect(io.out()).toContain('Analysis requested (run 2, pending)')
    expect(srv.to('GET', '/api/v2/analysis')).toHaveLength(0)
    const st = await testIO(env())
    expect(await run_(['analysis', 'status'], st)).toBe(0)
    expect(st.out()).toBe('Analysis run 2 running.\n')
    expect(srv.to('GET', '/api/v2/analysis').map((r) => r.target)).toEqual(['/api/v2/analysis?limit=1'])
    const w = await testIO(env())
    expect(await run_(['analysis', 'status', '--wait'], w)).toBe(0)
    expect(w.out()).toBe('Analysis run 2 complete: 7 finding(s) in 80 ms.\n')
  })

  it('status with no run yet says so (and --wait does not wait)', async () => {
    analysisServer([], [])
    for (const argv of [['analysis', 'status'], ['analysis', 'status', '--wait']]) {
      const io = await testIO(env())
      expect(await run_(argv, io)).toBe(0)
      expect(io.out()).toBe('No analysis has run yet.\n')
      expect(io.sleeps).toEqual([])
    }
  })

  it('a 403 on run is reported with its message', async () => {
    srv.on('POST', '/api/v2/analysis', () => ({ status: 403, json: envelope(403, 'missing permission analysis/Run', 'auth') }))
    const io = await testIO(env())
    expect(await run_(['analysis', 'run'], io)).toBe(1)
    expect(io.err()).toContain('error: missing permission analysis/Run [auth]')
  })
})

describe('findings ENVIRONMENT', () => {
  const items = (n: number, type: string) =>
    Array.from({ length: n }, (_, i) => ({
      id: i + 1,
      Finding: type,
      DomainSID: 'S-1-5-21-1',
      FromPrincipalName: `USER${i}@CORP.LOCAL`,
      ToPrincipalName: 'DOMAIN ADMINS@CORP.LOCAL',
      Severity: i === 0 ? 'critical' : 'high',
      ImpactPercentage: 0.1 * (i + 1),
      created_at: `2026-11-25T10:00:0${i}.000Z`,
    }))
  function findingServer(perType: Record<string, unknown[]>) {
    srv.on('GET', '/api/v2/available-domains', () => ({
      json: { data: [{ id: 'S-1-5-21-1', name: 'CORP.LOCAL', type: 'active-directory', collected: true }, { id: 'T-1', name: 'Tenant', type: 'azure', collected: true }] },
    }))
    srv.on('GET', '/api/v2/domains/:id/available-types', () => ({ json: { data: Object.keys(perType) } }))
    srv.on('GET', '/api/v2/domains/:id/details', (r) => {
      const all = perType[r.query.get('finding') ?? ''] ?? []
      const skip = Number(r.query.get('skip') ?? 0)
      const limit = Number(r.query.get('limit') ?? 10)
      return { json: { count: all.length, skip, limit, data: all.slice(skip, skip + limit) } }
    })
  }

  it('by name: every type, paged with skip until the count, as a table', async () => {
    findingServer({ T0GenericAll: items(3, 'T0GenericAll'), Kerberoasting: [{ id: 9, Principal: 'S-1-5-21-1-1105', PrincipalName: 'SVC_SQL@CORP.LOCAL', Severity: 'moderate', ImpactPercentage: 0.05, created_at: '2026-11-25T09:00:00.000Z' }] })
    const io = await testIO(env())
    expect(await run(['findings', 'corp.local', '--limit', '2'], io)).toBe(0)
    const details = srv.requests.filter((r) => r.path.endsWith('/details'))
    expect(details.map((r) => r.target)).toEqual([
      '/api/v2/domains/S-1-5-21-1/details?finding=T0GenericAll&skip=0&limit=2',
      '/api/v2/domains/S-1-5-21-1/details?finding=Kerberoasting&skip=0&limit=2',
    ])
    const out = io.out()
    expect(out).toContain('Environment CORP.LOCAL (S-1-5-21-1): 2 finding type(s)')
    expect(out).toContain('T0GenericAll: 3 finding(s), showing 2')
    expect(out).toMatch(/critical\s+10%\s+USER0@CORP\.LOCAL -> DOMAIN ADMINS@CORP\.LOCAL\s+2026-11-25T10:00:00\.000Z/)
    expect(out).not.toContain('USER2@')
    expect(out).toMatch(/Kerberoasting: 1 finding\(s\)\n/)
    expect(out).toMatch(/moderate\s+5%\s+SVC_SQL@CORP\.LOCAL/)
  })

  it('--all pages to the end; --type filters (comma lists too); --json has every record', async () => {
    findingServer({ T0GenericAll: items(250, 'T0GenericAll'), Kerberoasting: items(1, 'Kerberoasting'), ADCSESC1: [] })
    const io = await testIO(env())
    expect(await run(['findings', 'S-1-5-21-1', '--all', '--type', 'T0GenericAll,ADCSESC1', '--json'], io)).toBe(0)
    const j = JSON.parse(io.out())
    expect(j.environment.name).toBe('CORP.LOCAL')
    expect(j.findings.map((f: { type: string; count: number; items: unknown[] }) => [f.type, f.count, f.items.length])).toEqual([
      ['T0GenericAll', 250, 250],
      ['ADCSESC1', 0, 0],
    ])
    const skips = srv.requests.filter((r) => r.query.get('finding') === 'T0GenericAll').map((r) => r.query.get('skip'))
    expect(skips).toEqual(['0', '100', '200'])
  })

  it('an unknown environment names the available ones and exits 1', async () => {
    findingServer({})
    const io = await testIO(env())
    expect(await run(['findings', 'OTHER.LOCAL'], io)).toBe(1)
    expect(io.err()).toContain('error: environment "OTHER.LOCAL" is not available to this caller (available: CORP.LOCAL (S-1-5-21-1), Tenant (T-1))')
  })

  it('a server error on details is reported with its request id', async () => {
    srv.on('GET', '/api/v2/available-domains', () => ({ json: { data: [{ id: 'S-1', name: 'A', collected: true }] } }))
    srv.on('GET', '/api/v2/domains/:id/available-types', () => ({ json: { data: ['T0GenericAll'] } }))
    srv.on('GET', '/api/v2/domains/:id/details', () => ({ status: 500, json: envelope(500, 'an internal error has occurred') }))
    const io = await testIO(env())
    expect(await run(['findings', 'A'], io)).toBe(1)
    expect(io.err()).toContain('error: an internal error has occurred')
    expect(io.err()).toContain('(HTTP 500, request id 00000000-0000-4000-8000-000000000000)')
  })
})
