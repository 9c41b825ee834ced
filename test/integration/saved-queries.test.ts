/**
 * /api/v2/saved-queries: BloodHound's statuses and messages, ownership, sharing and scopes.
 */
import { beforeAll, describe, expect, it } from 'vitest'
import { adminToken, env, expectEnvelope, userWithRole } from '../helpers'
import type { EdgeHoundClient } from '../../src/client'
import { createSavedQuery, deleteSavedQuery, getSavedQuery, listSavedQueries, shareSavedQuery, updateSavedQuery } from '../../src/client/cypher'

let admin: EdgeHoundClient
let alice: { client: EdgeHoundClient; userId: string }
let bob: { client: EdgeHoundClient; userId: string }

beforeAll(async () => {
  admin = await adminToken()
  alice = await userWithRole('Read-Only')
  bob = await userWithRole('User')
})

describe('create, read, update, delete', () => {
  it('creates with 201, refuses empty fields and duplicate names with 400', async () => {
    const r = await createSavedQuery(alice.client, { name: 'kerberoastable', query: 'MATCH (u:User) WHERE u.hasspn = true RETURN u', description: 'SPNs' })
    expect(r.data).toMatchObject({ name: 'kerberoastable', user_id: alice.userId, description: 'SPNs', deleted_at: { valid: false } })
    expect(r.data.id).toBeGreaterThan(0)
    expect(r.data.created_at).toMatch(/Z$/)
    const post = (body: unknown) => alice.client.raw('POST', '/api/v2/saved-queries', body as Record<string, unknown>)
    await expectEnvelope(await post({ name: '', query: 'RETURN 1' }), 400, 'the name and/or query field is empty')
    await expectEnvelope(await post({ name: 'x' }), 400, 'the name and/or query field is empty')
    await expectEnvelope(await post({ name: 'kerberoastable', query: 'RETURN 2' }), 400, 'duplicate name for saved query: please choose a different name')
    // another user may use the same name
    expect((await createSavedQuery(bob.client, { name: 'kerberoastable', query: 'RETURN 1' })).data.user_id).toBe(bob.userId)
  })

  it('reads, updates (non-empty fields only) and deletes with 204; unknown 404, malformed id 400', async () => {
    const q = (await createSavedQuery(alice.client, { name: 'to change', query: 'RETURN 1', description: 'd' })).data
    expect((await getSavedQuery(alice.client, q.id)).data).toEqual(q)
    const u = await updateSavedQuery(alice.client, q.id, { query: 'RETURN 2' })
    expect(u.data).toMatchObject({ id: q.id, name: 'to change', query: 'RETURN 2', description: 'd' })
    await expectEnvelope(await alice.client.raw('PUT', `/api/v2/saved-queries/${q.id}`, { name: 'kerberoastable' }), 400, 'duplicate name')
    expect((await deleteSavedQuery(alice.client, q.id)).status).toBe(204)
    await expectEnvelope(await alice.client.raw('GET', `/api/v2/saved-queries/${q.id}`), 404, 'query does not exist')
    await expectEnvelope(await deleteSavedQuery(alice.client, q.id), 404, 'query does not exist')
    await expectEnvelope(await alice.client.raw('PUT', '/api/v2/saved-queries/999999', { name: 'x' }), 404, 'query does not exist')
    await expectEnvelope(await alice.client.raw('DELETE', '/api/v2/saved-queries/abc'), 400, 'id is malformed')
  })

  it("another user's query: 404 to read or change, 403 to delete, and it stays", async () => {
    const q = (await createSavedQuery(alice.client, { name: 'private', query: 'RETURN 1' })).data
    await expectEnvelope(await bob.client.raw('GET', `/api/v2/saved-queries/${q.id}`), 404, 'query does not exist')
    await expectEnvelope(await bob.client.raw('PUT', `/api/v2/saved-queries/${q.id}`, { query: 'RETURN 666' }), 404, 'query does not exist')
    await expectEnvelope(await deleteSavedQuery(bob.client, q.id), 403, 'User does not have permission to delete this query')
    await expectEnvelope(await deleteSavedQuery(admin, q.id), 403) // not public: not even an administrator
    expect((await getSavedQuery(alice.client, q.id)).data.query).toBe('RETURN 1')
    const row = await env.DB.prepare('SELECT query FROM saved_queries WHERE id = ?').bind(q.id).first<{ query: string }>()
    expect(row?.query).toBe('RETURN 1')
  })
})

describe('listing, scopes and sharing', () => {
  it('lists own queries with count/skip/limit, sort_by and filters; scope adds shared and public ones', async () => {
    const carol = await userWithRole('Read-Only')
    const a = (await createSavedQuery(carol.client, { name: 'b-query', query: 'MATCH (n:Group) RETURN n' })).data
    const b = (await createSavedQuery(carol.client, { name: 'a-query', query: 'MATCH (n:User) RETURN n' })).data
    const own = await listSavedQueries(carol.client)
    expect(own).toMatchObject({ count: 2, skip: 0, limit: 10000 })
    expect(own.data.map((q) => q.id)).toEqual([a.id, b.id])
    expect((await listSavedQueries(carol.client, 'sort_by=name')).data.map((q) => q.name)).toEqual(['a-query', 'b-query'])
    expect((await listSavedQueries(carol.client, 'sort_by=-name&limit=1')).data.map((q) => q.name)).toEqual(['b-query'])
    expect((await listSavedQueries(carol.client, 'query=~eq:n:user')).data.map((q) => q.name)).toEqual(['a-query'])
    expect((await listSavedQueries(carol.client, 'name=eq:b-query')).data.map((q) => q.name)).toEqual(['b-query'])
    await expectEnvelope(await carol.client.raw('GET', '/api/v2/saved-queries?sort_by=password'), 400, 'the specified column cannot be sorted')
    await expectEnvelope(await carol.client.raw('GET', '/api/v2/saved-queries?scope=mine'), 400, 'invalid scope param')

    // share a with dave, make b public (administrator only)
    const dave = await userWithRole('Read-Only')
    await shareSavedQuery(carol.client, a.id, { user_ids: [dave.userId] })
    await expectEnvelope(await carol.client.raw('PUT', `/api/v2/saved-queries/${b.id}/permissions`, { public: true }), 403)
    const adminQuery = (await createSavedQuery(admin, { name: `public ${Date.now()}`, query: 'RETURN 1' })).data
    await shareSavedQuery(admin, adminQuery.id, { public: true })
    expect((await getSavedQuery(dave.client, a.id)).data.name).toBe('b-query')
    expect((await getSavedQuery(dave.client, adminQuery.id)).data.id).toBe(adminQuery.id)
    await expectEnvelope(await dave.client.raw('GET', `/api/v2/saved-queries/${b.id}`), 404)
    const scoped = await listSavedQueries(dave.client, 'scope=shared,public')
    expect(scoped.data.filter((q) => q.scope === 'shared').map((q) => q.id)).toEqual([a.id])
    expect(scoped.data.filter((q) => q.scope === 'public').map((q) => q.id)).toContain(adminQuery.id)
    const all = await listSavedQueries(dave.client, 'scope=all')
    expect(all.count).toBe(scoped.count)
    // shared is read-only for the receiver
    await expectEnvelope(await dave.client.raw('PUT', `/api/v2/saved-queries/${a.id}`, { query: 'RETURN 2' }), 404)
    await expectEnvelope(await deleteSavedQuery(dave.client, a.id), 403)
    // an administrator may delete a public query of another user
    const pub = (await createSavedQuery(admin, { name: `public2 ${Date.now()}`, query: 'RETURN 1' })).data
    await shareSavedQuery(admin, pub.id, { public: true })
    expect((await deleteSavedQuery(admin, pub.id)).status).toBe(204)
    const left = await env.DB.prepare('SELECT count(*) AS n FROM saved_queries_permissions WHERE query_id = ?').bind(pub.id).first<{ n: number }>()
    expect(left?.n).toBe(0)
  })

  it('needs graph read permission', async () => {
    const up = await userWithRole('Upload-Only')
    await expectEnvelope(await up.client.raw('GET', '/api/v2/saved-queries'), 403)
  })
})
