/**
 * Saved queries as files, in BloodHound's transfer format: GET /api/v2/saved-queries/{id}/export (one JSON file),
 * GET /api/v2/saved-queries/export?scope= (a zip of JSON files) and POST /api/v2/saved-queries/import (a JSON file or
 * a zip of them; all or nothing). The round trip goes through BloodHound's shapes only.
 */
import { beforeAll, describe, expect, it } from 'vitest'
import { strFromU8, strToU8, unzipSync, zipSync } from 'fflate'
import type { EdgeHoundClient } from '../../src/client'
import { env, expectEnvelope, userWithRole } from '../helpers'

const db = () => (env as unknown as { DB: D1Database }).DB
let alice: EdgeHoundClient
let bob: EdgeHoundClient
let aliceId: string

async function save(c: EdgeHoundClient, name: string, query = 'MATCH (n:User) RETURN n LIMIT 5', description = '') {
  const res = await c.raw('POST', '/api/v2/saved-queries', { name, query, description })
  expect(res.status).toBe(201)
  return ((await res.json()) as { data: { id: number } }).data.id
}
async function names(c: EdgeHoundClient): Promise<string[]> {
  const res = await c.raw('GET', '/api/v2/saved-queries?scope=owned&limit=1000')
  return ((await res.json()) as { data: { name: string }[] }).data.map((q) => q.name).sort()
}
const json = { contentType: 'application/json' }
const zip = { contentType: 'application/zip' }

beforeAll(async () => {
  const a = await userWithRole('User')
  alice = a.client
  aliceId = a.userId
  bob = (await userWithRole('User')).client
})

describe('export', () => {
  it('one query: {query, name, description} as an attachment named after the query; others see it only when shared or public', async () => {
    const id = await save(alice, 'reports/Kerberoastable users', "MATCH (u:User {hasspn: true}) RETURN u", 'users with an SPN')
    const res = await alice.raw('GET', `/api/v2/saved-queries/${id}/export`)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename="Kerberoastable users.json"; filename*=UTF-8''Kerberoastable%20users.json`)
    expect(await res.json()).toEqual({ query: 'MATCH (u:User {hasspn: true}) RETURN u', name: 'reports/Kerberoastable users', description: 'users with an SPN' })
    await expectEnvelope(await bob.raw('GET', `/api/v2/saved-queries/${id}/export`), 404, 'query does not exist')
    await expectEnvelope(await alice.raw('GET', '/api/v2/saved-queries/99999999/export'), 404, 'query does not exist')
    expect((await alice.raw('PUT', `/api/v2/saved-queries/${id}/permissions`, { public: true })).status).toBe(201)
    expect((await bob.raw('GET', `/api/v2/saved-queries/${id}/export`)).status).toBe(200)
  })

  it('a scope as a zip of <name>.json files: owned, shared, public, all; a missing or unknown scope is 400', async () => {
    await save(alice, 'owned one')
    const shared = await save(bob, 'bob shares this')
    expect((await bob.raw('PUT', `/api/v2/saved-queries/${shared}/permissions`, { user_ids: [aliceId] })).status).toBe(201)
    const files = async (scope: string) => {
      const res = await alice.raw('GET', `/api/v2/saved-queries/export?scope=${scope}`)
      expect(res.status).toBe(200)
      expect(res.headers.get('content-type')).toBe('application/zip')
      expect(res.headers.get('content-disposition')).toContain('filename="exported_queries.zip"')
      const unzipped = unzipSync(new Uint8Array(await res.arrayBuffer()))
      return Object.fromEntries(Object.entries(unzipped).map(([k, v]) => [k, JSON.parse(strFromU8(v)) as { name: string }]))
    }
    const owned = await files('owned')
    expect(Object.keys(owned).sort()).toEqual(['Kerberoastable users.json', 'owned one.json'])
    expect(owned['owned one.json']).toEqual({ query: 'MATCH (n:User) RETURN n LIMIT 5', name: 'owned one', description: '' })
    expect(Object.keys(await files('shared'))).toEqual(['bob shares this.json'])
    expect(Object.keys(await files('public'))).toContain('Kerberoastable users.json')
    expect(Object.keys(await files('ALL')).sort()).toEqual(expect.arrayContaining(['Kerberoastable users.json', 'owned one.json', 'bob shares this.json']))
    await expectEnvelope(await alice.raw('GET', '/api/v2/saved-queries/export'), 400, 'scope query parameter cannot be empty')
    await expectEnvelope(await alice.raw('GET', '/api/v2/saved-queries/export?scope=mine'), 400, 'invalid scope param: mine')
  })
})

describe('import', () => {
  it('one JSON file: 201 "imported 1 queries"; the query is the caller\'s own; audited with its name', async () => {
    const res = await bob.raw('POST', '/api/v2/saved-queries/import', JSON.stringify({ query: 'MATCH (c:Computer) RETURN c', name: 'imported computers', description: 'd' }), json)
    expect(res.status).toBe(201)
    expect(await res.json()).toEqual({ data: 'imported 1 queries' })
    expect(await names(bob)).toContain('imported computers')
    const audit = await db().prepare(`SELECT fields FROM audit_logs WHERE action = 'ImportSavedQuery' AND status = 'success' ORDER BY id DESC LIMIT 1`).first<{ fields: string }>()
    expect(JSON.parse(audit!.fields)).toMatchObject({ count: 1, names: ['imported computers'] })
  })

  it('an export imported by another user round-trips every query (hidden files and __MACOSX skipped)', async () => {
    const res = await alice.raw('GET', '/api/v2/saved-queries/export?scope=owned')
    const archive = unzipSync(new Uint8Array(await res.arrayBuffer()))
    archive['__MACOSX/._owned one.json'] = strToU8('garbage')
    archive['.DS_Store'] = strToU8('garbage')
    const carol = (await userWithRole('User')).client
    const imported = await carol.raw('POST', '/api/v2/saved-queries/import', zipSync(archive), zip)
    expect(imported.status).toBe(201)
    expect(await imported.json()).toEqual({ data: 'imported 2 queries' })
    expect(await names(carol)).toEqual(['owned one', 'reports/Kerberoastable users'])
  })

  it('all or nothing: a duplicate name (already owned, or twice in the archive), a bad file or an empty query imports nothing', async () => {
    const dave = (await userWithRole('User')).client
    await save(dave, 'taken')
    const file = (name: string, query = 'MATCH (n) RETURN n') => strToU8(JSON.stringify({ name, query, description: '' }))
    const cases: [Uint8Array, number, string | RegExp][] = [
      [zipSync({ 'a.json': file('fresh 1'), 'b.json': file('taken') }), 400, 'duplicate name for saved query: please choose a different name'],
      [zipSync({ 'a.json': file('fresh 1'), 'b.json': file('fresh 1') }), 400, 'duplicate name for saved query: please choose a different name'],
      [zipSync({ 'a.json': file('fresh 1'), 'b.json': strToU8('{"name": ') }), 400, /^failed to unmarshal json file: b\.json/],
      [zipSync({ 'a.json': file('fresh 1'), 'b.json': strToU8('[1, 2]') }), 400, /^failed to unmarshal json file: b\.json is not a JSON object/],
      [zipSync({ 'a.json': file('fresh 1'), 'b.json': file('fresh 2', '') }), 400, 'b.json: the name and/or query field is empty'],
      [strToU8('not a zip at all'), 400, /^not a valid zip file/],
      [zipSync({}), 400, /^not a valid zip file|the archive holds no query file/],
    ]
    for (const [body, status, message] of cases) await expectEnvelope(await dave.raw('POST', '/api/v2/saved-queries/import', body, zip), status, message)
    expect(await names(dave)).toEqual(['taken'])
  })

  it('wrong content type 415; a member inflating past 128 KiB is refused before it is read whole', async () => {
    await expectEnvelope(await bob.raw('POST', '/api/v2/saved-queries/import', 'name: x', { contentType: 'text/plain' }), 415)
    const big = zipSync({ 'big.json': new Uint8Array(4 * 1024 * 1024).fill(0x20) })
    expect(big.length).toBeLessThan(64 * 1024)
    await expectEnvelope(await bob.raw('POST', '/api/v2/saved-queries/import', big, zip), 400, 'big.json: a query file is at most 128 KiB')
  })
})
