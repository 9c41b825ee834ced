/// <reference types="node" />
/**
 * `edgehound extensions put DIR`: an extension folder as OpenGraph collectors ship it (schema.json,
 * privilege_zone_rules/*.json, saved_searches/*.json). Every file is checked before anything is sent; rules and
 * saved searches are upserted by name, so a second run changes nothing. The folder checks are also tested pure.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { cp, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { run } from '../../src/cli/main'
import { FolderProblems, planFolder } from '../../src/cli/extension-folder'
import { envelope, FakeServer, testIO, startFakeServer } from './fake-server'

const TOKEN_ID = '6a1c2d4e-5a6b-4c7d-8e9f-0a1b2c3d4e70'
const TOKEN_KEY = 'folder-test-key'
const FIXTURE = path.resolve(import.meta.dirname, '../fixtures/extensions/folder-acme')

interface Sel {
  id: number
  asset_group_tag_id: number
  name: string
  description: string
  disabled_at: { time: string; valid: boolean }
  seeds: { type: number; value: string }[]
}

/** A stateful stand-in for the endpoints the installer uses. */
function folderServer(srv: FakeServer) {
  const state = { selectors: [] as Sel[], queries: [] as { id: number; name: string; query: string; description: string }[], extensions: 0, nextId: 10 }
  srv.on('GET', '/api/v2/asset-group-tags', () => ({ json: { data: { tags: [{ id: 1, name: 'Tier Zero', type: 1 }, { id: 2, name: 'Owned', type: 3 }] } } }))
  srv.on('PUT', '/api/v2/extensions', (r) => {
    const doc = JSON.parse(r.body.toString())
    const created = state.extensions === 0
    state.extensions++
    return { json: { data: { id: 7, name: doc.schema.name, version: doc.schema.version, created } } }
  })
  srv.on('GET', '/api/v2/asset-group-tags/:tag/selectors', (r, p) => {
    const all = state.selectors.filter((s) => s.asset_group_tag_id === Number(p.tag))
    const skip = Number(r.query.get('skip') ?? 0)
    const limit = Number(r.query.get('limit') ?? 50)
    return { json: { count: all.length, skip, limit, data: { selectors: all.slice(skip, skip + limit) } } }
  })
  srv.on('POST', '/api/v2/asset-group-tags/:tag/selectors', (r, p) => {
    const b = JSON.parse(r.body.toString())
    if (state.selectors.some((s) => s.asset_group_tag_id === Number(p.tag) && s.name === b.name))
      return { status: 409, json: envelope(409, 'asset group tag selector name must be unique', 'name') }
    const s: Sel = {
      id: state.nextId++,
      asset_group_tag_id: Number(p.tag),
      name: b.name,
      description: b.description ?? '',
      disabled_at: b.disabled ? { time: '2026-01-01T00:00:00.000Z', valid: true } : { time: '0001-01-01T00:00:00Z', valid: false },
      seeds: b.seeds,
    }
    state.selectors.push(s)
    return { status: 201, json: { data: s } }
  })
  srv.on('PATCH', '/api/v2/asset-group-tags/:tag/selectors/:id', (r, p) => {
    const b = JSON.parse(r.body.toString())
    const s = state.selectors.find((x) => x.id === Number(p.id))!
    if (b.description !== undefined) s.description = b.description
    if (b.seeds) s.seeds = b.seeds
    if (b.disabled !== undefined) s.disabled_at = b.disabled ? { time: '2026-01-02T00:00:00.000Z', valid: true } : { time: '0001-01-01T00:00:00Z', valid: false }
    return { json: { data: s } }
  })
  srv.on('GET', '/api/v2/saved-queries', () => ({ json: { count: state.queries.length, skip: 0, limit: 10000, data: state.queries } }))
  srv.on('POST', '/api/v2/saved-queries', (r) => {
    const b = JSON.parse(r.body.toString())
    const q = { id: state.nextId++, name: b.name, query: b.query, description: b.description ?? '' }
    state.queries.push(q)
    return { status: 201, json: { data: q } }
  })
  srv.on('PUT', '/api/v2/saved-queries/:id', (r, p) => {
    const b = JSON.parse(r.body.toString())
    const q = state.queries.find((x) => x.id === Number(p.id))!
    Object.assign(q, b)
    return { json: { data: q } }
  })
  return state
}

let srv: FakeServer
beforeEach(async () => {
  srv = await startFakeServer(TOKEN_ID, TOKEN_KEY)
})
afterEach(() => srv.close())
const env = () => ({ EDGEHOUND_URL: srv.url, EDGEHOUND_TOKEN_ID: TOKEN_ID, EDGEHOUND_TOKEN_KEY: TOKEN_KEY })

async function folderIO() {
  const io = await testIO(env())
  await cp(FIXTURE, path.join(io.cwd, 'ext'), { recursive: true })
  return io
}

const changes = () => srv.requests.filter((r) => r.method !== 'GET')

describe('extensions put DIR', () => {
  it('installs schema, rules and saved searches; a second run changes nothing; an edited rule is updated', async () => {
    const state = folderServer(srv)
    const io = await folderIO()
    expect(await run(['extensions', 'put', 'ext'], io)).toBe(0)
    expect(io.out()).toContain('schema.json: extension "AcmeVault" created (id 7)')
    expect(io.out()).toContain('privilege_zone_rules/t0-vaults.json: rule "Acme Vault: Tier Zero vaults" (Tier Zero) created')
    expect(io.out()).toContain('privilege_zone_rules/t0-vault-operators.json: rule "Acme Vault: operators of a vault" (Tier Zero, disabled) created')
    expect(io.out()).toContain('saved_searches/all-vaults.json: saved search "Acme Vault: all vaults" created')
    expect(io.out()).toContain('rules 2 (2 created, 0 updated, 0 unchanged), saved searches 2 (2 created, 0 updated, 0 unchanged)')
    expect(io.out()).toContain('Rules take effect at the next analysis run')
    // every change is signed by the token; the schema goes first, then the rules (Tier Zero = tag 1), then the searches
    expect(changes().map((r) => `${r.method} ${r.path}`)).toEqual([
      'PUT /api/v2/extensions',
      'POST /api/v2/asset-group-tags/1/selectors',
      'POST /api/v2/asset-group-tags/1/selectors',
      'POST /api/v2/saved-queries',
      'POST /api/v2/saved-queries',
    ])
    expect(changes().every((r) => r.principal === TOKEN_ID)).toBe(true)
    expect(state.selectors.map((s) => [s.name, s.seeds, s.disabled_at.valid])).toEqual([
      ['Acme Vault: operators of a vault', [{ type: 2, value: 'MATCH (o:AV_Operator)-[:AV_Administers]->(:AV_Vault) RETURN o' }], true],
      ['Acme Vault: Tier Zero vaults', [{ type: 2, value: 'MATCH (v:AV_Vault)\nRETURN v' }], false],
    ])
    expect(state.queries.map((q) => q.name).sort()).toEqual(['Acme Vault: all vaults', 'Acme Vault: who operates which vault'])

    // again: the schema is re-sent (an upsert), nothing else changes
    srv.requests.length = 0
    const again = await folderIO()
    expect(await run(['extensions', 'put', 'ext', '--json'], again)).toBe(0)
    const report = JSON.parse(again.out()) as { schema: { action: string }; rules: { action: string }[]; saved_searches: { action: string }[] }
    expect(report.schema.action).toBe('updated')
    expect(report.rules.map((r) => r.action)).toEqual(['unchanged', 'unchanged'])
    expect(report.saved_searches.map((r) => r.action)).toEqual(['unchanged', 'unchanged'])
    expect(changes().map((r) => `${r.method} ${r.path}`)).toEqual(['PUT /api/v2/extensions'])

    // an edited rule (enabled now, other Cypher) and an edited search are updated in place
    srv.requests.length = 0
    const edited = await folderIO()
    const rule = path.join(edited.cwd, 'ext/privilege_zone_rules/t0-vault-operators.json')
    await writeFile(rule, JSON.stringify({ name: 'Acme Vault: operators of a vault', description: 'reviewed', cypher: 'MATCH (o:AV_Operator) RETURN o', enabled: true }))
    await writeFile(path.join(edited.cwd, 'ext/saved_searches/all-vaults.json'), JSON.stringify({ name: 'Acme Vault: all vaults', query: 'MATCH (v:AV_Vault) RETURN v' }))
    expect(await run(['extensions', 'put', 'ext'], edited)).toBe(0)
    expect(edited.out()).toContain('rule "Acme Vault: operators of a vault" (Tier Zero) updated')
    expect(changes().map((r) => `${r.method} ${r.path}`)).toEqual([
      'PUT /api/v2/extensions',
      `PATCH /api/v2/asset-group-tags/1/selectors/${state.selectors[0].id}`,
      `PUT /api/v2/saved-queries/${state.queries.find((q) => q.name === 'Acme Vault: all vaults')!.id}`,
    ])
    expect(JSON.parse(changes()[1].body.toString())).toEqual({ description: 'reviewed', seeds: [{ type: 2, value: 'MATCH (o:AV_Operator) RETURN o' }], disabled: false })
    expect(state.selectors[0].disabled_at.valid).toBe(false)
  })

  it('a bad file is named and nothing is sent', async () => {
    folderServer(srv)
    const io = await folderIO()
    await writeFile(path.join(io.cwd, 'ext/privilege_zone_rules/broken.json'), '{"name": "x", "cypher": "MATCH (n) SET n.tier = 0 RETURN n"}')
    await writeFile(path.join(io.cwd, 'ext/saved_searches/no-query.json'), '{"name": "no query"}')
    await writeFile(path.join(io.cwd, 'ext/saved_searches/not-json.json'), '{"name": ')
    expect(await run(['extensions', 'put', 'ext'], io)).toBe(1)
    expect(io.err()).toContain('error: privilege_zone_rules/broken.json: "cypher" is refused: updating clauses are not supported')
    expect(io.err()).toContain('error: saved_searches/no-query.json: "query" is required')
    expect(io.err()).toMatch(/error: saved_searches\/not-json\.json: not valid JSON/)
    expect(io.err()).toContain('ext: 3 problem(s) found; nothing was installed')
    expect(srv.requests).toHaveLength(0)
  })

  it('an unknown zone stops before any change', async () => {
    folderServer(srv)
    const io = await folderIO()
    await writeFile(path.join(io.cwd, 'ext/privilege_zone_rules/t1.json'), JSON.stringify({ name: 'tier one', cypher: 'MATCH (n:AV_Vault) RETURN n', zone: 'Tier One' }))
    expect(await run(['extensions', 'put', 'ext'], io)).toBe(1)
    expect(io.err()).toContain('error: privilege_zone_rules/t1.json: zone "Tier One" does not exist on the server')
    expect(changes()).toHaveLength(0)
  })

  it('a refusal by the server stops there with the envelope\'s message (the schema first, so nothing else is sent)', async () => {
    folderServer(srv)
    srv.on('PUT', '/api/v2/extensions', () => ({ status: 400, json: envelope(400, 'node kind "AV_Vault" is already defined by another extension', 'node_kinds[0].name') }))
    // the route registered first answers: put the refusal in front
    ;(srv as unknown as { routes: unknown[] }).routes.unshift((srv as unknown as { routes: unknown[] }).routes.pop())
    const io = await folderIO()
    expect(await run(['extensions', 'put', 'ext'], io)).toBe(1)
    expect(io.err()).toContain('node kind "AV_Vault" is already defined by another extension')
    expect(changes().map((r) => `${r.method} ${r.path}`)).toEqual(['PUT /api/v2/extensions'])
  })
})

describe('planFolder (pure)', () => {
  const rule = (o: Record<string, unknown>) => ({ path: 'privilege_zone_rules/r.json', text: JSON.stringify(o) })
  const problems = (files: { path: string; text: string }[]) => {
    try {
      planFolder(files)
    } catch (e) {
      if (e instanceof FolderProblems) return e.problems
      throw e
    }
    return []
  }

  it('defaults: enabled, zone Tier Zero, empty description; names are trimmed', () => {
    const plan = planFolder([rule({ name: ' r ', cypher: 'MATCH (n) RETURN n' })])
    expect(plan.rules).toEqual([{ file: 'privilege_zone_rules/r.json', name: 'r', description: '', cypher: 'MATCH (n) RETURN n', enabled: true, zone: 'Tier Zero' }])
    expect(plan.schema).toBeNull()
  })

  it('reports every problem with its file', () => {
    expect(problems([rule({ cypher: 'MATCH (n) RETURN n' })])).toEqual(['privilege_zone_rules/r.json: "name" is required'])
    expect(problems([rule({ name: 'r', cypher: 'MATCH (n) RETURN n', enabled: 'yes' })])).toEqual(['privilege_zone_rules/r.json: "enabled" must be true or false'])
    expect(problems([rule({ name: 'r', cypher: '' })])).toEqual(['privilege_zone_rules/r.json: "cypher" must not be empty'])
    expect(problems([rule({ name: 'r', cypher: 'MATCH (n RETURN n' })])[0]).toMatch(/^privilege_zone_rules\/r\.json: "cypher" is refused: line 1:/)
    expect(problems([{ path: 'privilege_zone_rules/a.json', text: '[]' }])).toEqual(['privilege_zone_rules/a.json: must be a JSON object'])
    expect(
      problems([
        { path: 'privilege_zone_rules/a.json', text: JSON.stringify({ name: 'same', cypher: 'MATCH (n) RETURN n' }) },
        { path: 'privilege_zone_rules/b.json', text: JSON.stringify({ name: 'same', cypher: 'MATCH (n) RETURN n' }) },
      ]),
    ).toEqual(['privilege_zone_rules/b.json: rule name "same" is also used by privilege_zone_rules/a.json (names are unique per zone)'])
    expect(problems([{ path: 'schema.json', text: '{}' }])).toEqual(['schema.json: "schema" (name, display_name, version, namespace) is required'])
    expect(problems([])).toEqual(['nothing to install: no schema.json, privilege_zone_rules/*.json or saved_searches/*.json'])
  })
})
