/**
 * /api/v2/saved-queries: BloodHound's statuses and messages, ownership, sharing and scopes.
 */
import { beforeAll, describe, expect, it } from 'vitest'
import { adminToken, env, expectEnvelope, userWithRole } from '../helpers'
import type { EdgeHoundClient } from '../../src/client'
import {
  createSavedQuery,
  deleteSavedQuery,
  getSavedQuery,
  getSavedQueryPermissions,
  listSavedQueries,
  shareSavedQuery,
  unshareSavedQuery,
  updateSavedQuery,
  type SavedQueryPermissionJson,
} from '../../src/client/cypher'
import { makePublic } from '../../src/cypher/saved-queries.store'
import { testAudit } from '../fixtures/audit'

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
    expect((await listSavedQueries(carol.client, 'description=~eq:')).count).toBe(2)
    expect((await listSavedQueries(carol.client, `query=${encodeURIComponent('eq:MATCH (n:User) RETURN n')}`)).data.map((q) => q.name)).toEqual(['a-query'])
    expect((await listSavedQueries(carol.client, 'name=eq:b-query')).data.map((q) => q.name)).toEqual(['b-query'])
    expect((await listSavedQueries(carol.client, 'name=neq:b-query')).data.map((q) => q.name)).toEqual(['a-query'])
    expect((await listSavedQueries(carol.client, 'name=~eq:QUERY&sort_by=name')).data.map((q) => q.name)).toEqual(['a-query', 'b-query'])
    expect((await listSavedQueries(carol.client, `user_id=eq:${carol.userId}`)).count).toBe(2)
    expect((await listSavedQueries(carol.client, `user_id=neq:${carol.userId}`)).count).toBe(0)
    // BloodHound's predicates per column: no ~eq on query or user_id, nothing but eq/neq/~eq
    await expectEnvelope(await carol.client.raw('GET', '/api/v2/saved-queries?query=~eq:User'), 400, 'the specified filter predicate is not supported for this column: query ~eq')
    await expectEnvelope(await carol.client.raw('GET', '/api/v2/saved-queries?name=gt:a'), 400, 'the specified filter predicate is not supported for this column: name gt')
    await expectEnvelope(await carol.client.raw('GET', '/api/v2/saved-queries?sort_by=password'), 400, 'the specified column cannot be sorted')
    expect((await listSavedQueries(carol.client, 'sort_by=-deleted_at')).data.map((q) => q.id)).toEqual([a.id, b.id])
    await expectEnvelope(await carol.client.raw('GET', '/api/v2/saved-queries?scope=mine'), 400, 'invalid scope param')

    // share a with dave; b stays private
    const dave = await userWithRole('Read-Only')
    expect((await shareSavedQuery(carol.client, a.id, { user_ids: [dave.userId] })).status).toBe(201)
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

  it("sharing as BloodHound's /saved-queries/{id}/permissions: 201 with the rows, 204, its 400/403/404 and stored state", async () => {
    const owner = await userWithRole('Read-Only')
    const [u1, u2] = [await userWithRole('Read-Only'), await userWithRole('Read-Only')]
    const q = (await createSavedQuery(owner.client, { name: 'shared one', query: 'RETURN 1' })).data
    const path = `/api/v2/saved-queries/${q.id}/permissions`
    const stored = async () =>
      (await env.DB.prepare('SELECT shared_to_user_id AS u, public AS p FROM saved_queries_permissions WHERE query_id = ? ORDER BY u').bind(q.id).all()).results

    // nothing shared yet: 404 for everyone
    await expectEnvelope(await owner.client.raw('GET', path), 404, 'no query permissions exist for saved query')
    // share with two users: 201 with BloodHound's permission rows
    const shared = await shareSavedQuery(owner.client, q.id, { user_ids: [u1.userId, u2.userId, u1.userId] })
    expect(shared.status).toBe(201)
    const rows = ((await shared.json()) as { data: SavedQueryPermissionJson[] }).data
    expect(rows.map((r) => r.shared_to_user_id).sort()).toEqual([u1.userId, u2.userId].sort())
    for (const r of rows) {
      expect(r).toMatchObject({ query_id: q.id, public: false, deleted_at: { valid: false } })
      expect(r.id).toBeGreaterThan(0)
      expect(r.created_at).toMatch(/Z$/)
    }
    expect((await getSavedQueryPermissions(owner.client, q.id)).data).toEqual({ query_id: q.id, public: false, shared_to_user_ids: expect.arrayContaining([u1.userId, u2.userId]) })
    // a receiver reads the query but not its sharing; an administrator may read the sharing
    expect((await getSavedQuery(u1.client, q.id)).data.id).toBe(q.id)
    await expectEnvelope(await u1.client.raw('GET', path), 404, 'no query permissions exist for saved query')
    expect((await getSavedQueryPermissions(admin, q.id)).data.shared_to_user_ids).toHaveLength(2)
    // a new list replaces the old one
    expect((await shareSavedQuery(owner.client, q.id, { user_ids: [u2.userId] })).status).toBe(201)
    expect(await stored()).toEqual([{ u: u2.userId, p: 0 }])
    await expectEnvelope(await u1.client.raw('GET', `/api/v2/saved-queries/${q.id}`), 404, 'query does not exist')

    // refusals, the stored sharing unchanged
    await expectEnvelope(await shareSavedQuery(owner.client, q.id, { user_ids: [u1.userId], public: true }), 400, 'Public cannot be true while user_ids is populated')
    await expectEnvelope(await shareSavedQuery(owner.client, q.id, { user_ids: [owner.userId] }), 400, 'Cannot share query to self')
    await expectEnvelope(await shareSavedQuery(u2.client, q.id, { user_ids: [u1.userId] }), 403, 'Forbidden')
    await expectEnvelope(await shareSavedQuery(admin, q.id, { user_ids: [u1.userId] }), 403, 'Forbidden')
    await expectEnvelope(await shareSavedQuery(owner.client, 999_999, { user_ids: [u1.userId] }), 404, 'Query does not exist')
    await expectEnvelope(await owner.client.raw('PUT', '/api/v2/saved-queries/x/permissions', {}), 400, 'id is malformed')
    await expectEnvelope(await shareSavedQuery(owner.client, q.id, { user_ids: ['not-a-uuid'] }), 400)
    expect(await stored()).toEqual([{ u: u2.userId, p: 0 }])

    // public (the owner may, as in BloodHound): replaces the user rows; again → 204; anyone reads the sharing
    const pub = await shareSavedQuery(owner.client, q.id, { public: true })
    expect(pub.status).toBe(201)
    expect(((await pub.json()) as { data: SavedQueryPermissionJson[] }).data).toEqual([expect.objectContaining({ query_id: q.id, public: true, shared_to_user_id: null })])
    expect(await stored()).toEqual([{ u: null, p: 1 }])
    // already public: 204 for an administrator; its non-administrator owner may no longer change its sharing
    expect((await shareSavedQuery(admin, q.id, { public: true })).status).toBe(204)
    await expectEnvelope(await shareSavedQuery(owner.client, q.id, { public: true }), 403, 'Forbidden')
    expect((await getSavedQueryPermissions(u1.client, q.id)).data).toEqual({ query_id: q.id, public: true, shared_to_user_ids: [] })
    // a public query is not shared with users, and its owner (not an administrator) cannot make it private
    await expectEnvelope(await shareSavedQuery(admin, q.id, { user_ids: [u1.userId] }), 400, 'Public query cannot be shared to users. You must set your query to private first')
    await expectEnvelope(await shareSavedQuery(owner.client, q.id, {}), 403, 'Forbidden')
    // an administrator makes it private: 204, no rows left
    expect((await shareSavedQuery(admin, q.id, { public: false, user_ids: [] })).status).toBe(204)
    expect(await stored()).toEqual([])
  })

  it('making a query public that a concurrent request has just made public answers 204, never a 500', async () => {
    // Two PUTs can both pass the route's "not yet public" check before either batch runs; the second batch's
    // insert then does nothing. The store says so (null) and the route answers BloodHound's "already public" 204.
    const owner = await userWithRole('Read-Only')
    const q = (await createSavedQuery(owner.client, { name: 'raced public', query: 'RETURN 1' })).data
    const now = new Date().toISOString()
    const first = await makePublic(env.DB, q.id, now, testAudit('UpdateSavedQueryPermissions'))
    expect(first).toMatchObject({ query_id: q.id, public: true, shared_to_user_id: null })
    expect(await makePublic(env.DB, q.id, now, testAudit('UpdateSavedQueryPermissions'))).toBeNull()
    const rows = (await env.DB.prepare('SELECT public FROM saved_queries_permissions WHERE query_id = ?').bind(q.id).all()).results
    expect(rows).toEqual([{ public: 1 }])
    // through the API, two requests at once by an administrator who owns the query (who may make it public
    // again, unlike a non-administrator owner: 403): one 201 and one 204 whichever way they interleave
    const q2 = (await createSavedQuery(admin, { name: 'raced public 2', query: 'RETURN 1' })).data
    const answers = await Promise.all([shareSavedQuery(admin, q2.id, { public: true }), shareSavedQuery(admin, q2.id, { public: true })])
    expect(answers.map((r) => r.status).sort()).toEqual([201, 204])
  })

  it('unsharing: the owner or an administrator removes users; a receiver only themselves', async () => {
    const owner = await userWithRole('Read-Only')
    const [u1, u2] = [await userWithRole('Read-Only'), await userWithRole('Read-Only')]
    const q = (await createSavedQuery(owner.client, { name: 'to unshare', query: 'RETURN 1' })).data
    const stored = async () =>
      (await env.DB.prepare('SELECT shared_to_user_id AS u FROM saved_queries_permissions WHERE query_id = ? ORDER BY u').bind(q.id).all()).results.map((r) => r.u)
    await shareSavedQuery(owner.client, q.id, { user_ids: [u1.userId, u2.userId] })
    // a receiver may not remove someone else, nor themselves together with someone else
    await expectEnvelope(await unshareSavedQuery(u1.client, q.id, [u2.userId]), 403, 'Query does not belong to the user')
    await expectEnvelope(await unshareSavedQuery(u1.client, q.id, [u1.userId, u2.userId]), 403, 'Query does not belong to the user')
    expect(await stored()).toEqual([u1.userId, u2.userId].sort())
    // but themselves: 204, and the query is gone for them
    expect((await unshareSavedQuery(u1.client, q.id, [u1.userId])).status).toBe(204)
    expect(await stored()).toEqual([u2.userId])
    await expectEnvelope(await u1.client.raw('GET', `/api/v2/saved-queries/${q.id}`), 404)
    await expectEnvelope(await unshareSavedQuery(u1.client, q.id, [u1.userId]), 400, 'User cannot unshare a query from themselves that is not shared to them')
    // the owner removes a user; an administrator everyone (no users listed)
    await shareSavedQuery(owner.client, q.id, { user_ids: [u1.userId, u2.userId] })
    expect((await unshareSavedQuery(owner.client, q.id, [u2.userId])).status).toBe(204)
    expect(await stored()).toEqual([u1.userId])
    expect((await unshareSavedQuery(admin, q.id, [])).status).toBe(204)
    expect(await stored()).toEqual([])
    await expectEnvelope(await unshareSavedQuery(owner.client, 999_999, [u1.userId]), 404, 'Query does not exist')
    await expectEnvelope(await owner.client.raw('DELETE', `/api/v2/saved-queries/${q.id}/permissions`), 400)
  })

  it('needs graph read permission', async () => {
    const up = await userWithRole('Upload-Only')
    await expectEnvelope(await up.client.raw('GET', '/api/v2/saved-queries'), 403)
  })
})

describe('issue 24: making a public query private, and what an update audits', () => {
  it('DELETE …/permissions on a public query: a non-administrator owner gets 403 like PUT; an administrator makes it private', async () => {
    const q = (await createSavedQuery(alice.client, { name: `public-${Date.now()}`, query: 'MATCH (n) RETURN n LIMIT 1' })).data
    expect((await shareSavedQuery(alice.client, q.id, { public: true })).status).toBe(201)
    // PUT refuses the owner's "make private" (BloodHound's CanUpdateSavedQueriesPermission) ...
    await expectEnvelope(await shareSavedQuery(alice.client, q.id, {}), 403, 'Forbidden')
    // ... and so does DELETE with no users (every row, the public one included)
    await expectEnvelope(await unshareSavedQuery(alice.client, q.id, []), 403, 'Forbidden')
    await expectEnvelope(await alice.client.raw('DELETE', `/api/v2/saved-queries/${q.id}/permissions`, {}), 403, 'Forbidden')
    expect((await getSavedQueryPermissions(bob.client, q.id)).data.public).toBe(true)
    const refused = await env.DB.prepare(
      "SELECT status FROM audit_logs WHERE action = 'DeleteSavedQueryPermissions' AND json_extract(fields, '$.id') = ?1 ORDER BY id",
    )
      .bind(q.id)
      .all<{ status: string }>()
    expect(refused.results.map((r) => r.status)).toEqual(['intent', 'failure', 'intent', 'failure'])
    // an administrator may make any public query private, through either route
    expect((await unshareSavedQuery(admin, q.id, [])).status).toBe(204)
    await expectEnvelope(await bob.client.raw('GET', `/api/v2/saved-queries/${q.id}/permissions`), 404, 'no query permissions exist for saved query')
    // a private query of one's own: the owner still removes every sharing row
    await shareSavedQuery(alice.client, q.id, { user_ids: [bob.userId] })
    expect((await unshareSavedQuery(alice.client, q.id, [])).status).toBe(204)
    expect((await getSavedQuery(bob.client, q.id).catch(() => null))).toBeNull()
  })

  it('an update is audited with what changed: fields, old and new name and description, digests of the query text', async () => {
    const q = (await createSavedQuery(alice.client, { name: `audited-${Date.now()}`, query: 'MATCH (u:User) RETURN u', description: 'before' })).data
    const successRow = async () => {
      const r = await env.DB.prepare(
        "SELECT fields FROM audit_logs WHERE action = 'UpdateSavedQuery' AND status = 'success' AND json_extract(fields, '$.id') = ?1 ORDER BY id DESC LIMIT 1",
      )
        .bind(q.id)
        .first<{ fields: string }>()
      return JSON.parse(r!.fields) as Record<string, unknown>
    }
    const sha = async (t: string) =>
      [...new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(t)))].map((b) => b.toString(16).padStart(2, '0')).join('')

    await updateSavedQuery(alice.client, q.id, { name: `${q.name}-2`, query: 'MATCH (c:Computer) RETURN c' })
    const f = await successRow()
    expect(f).toMatchObject({
      id: q.id,
      sent: ['name', 'query'],
      changed: ['name', 'query'],
      old_name: q.name,
      new_name: `${q.name}-2`,
      old_query_sha256: await sha('MATCH (u:User) RETURN u'),
      new_query_sha256: await sha('MATCH (c:Computer) RETURN c'),
    })
    expect(f).not.toHaveProperty('old_description')
    expect(JSON.stringify(f)).not.toContain('MATCH')

    await updateSavedQuery(alice.client, q.id, { description: 'after', name: `${q.name}-2` })
    expect(await successRow()).toEqual({ id: q.id, sent: ['name', 'description'], changed: ['description'], old_description: 'before', new_description: 'after' })
  })
})
