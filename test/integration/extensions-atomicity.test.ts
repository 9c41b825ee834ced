import { beforeAll, describe, expect, it } from 'vitest'
import { adminToken, env, expectEnvelope } from '../helpers'
import type { EdgeHoundClient } from '../../src/client'
import { deleteExtension, extensionIdByName, getExtension, upsertExtension } from '../../src/client/extensions'
import { loadKindCatalog } from '../../src/extensions/catalog'
import { ExtensionWriteConflict, upsertExtension as storeUpsert, deleteExtension as storeDelete } from '../../src/extensions/extensions.store'
import { testAudit } from '../fixtures/audit'
import type { ExtensionDocument } from '../../src/extensions/schema'
import { clone, GITHUB, REMEDIATION, smallDoc } from '../fixtures/extensions/docs'

let admin: EdgeHoundClient

beforeAll(async () => {
  admin = await adminToken()
})

/** Everything stored about one extension name, from the tables (not through the API). */
async function tablesOf(name: string) {
  const db = env.DB
  const ext = await db.prepare('SELECT id, display_name, version FROM extensions WHERE name = ?').bind(name).first<{ id: number; display_name: string; version: string }>()
  if (!ext) return null
  const q = async (sql: string) => (await db.prepare(sql).bind(ext.id).all()).results
  return {
    schema: { display_name: ext.display_name, version: ext.version },
    kinds: await q('SELECT name, class, is_traversable, color FROM extension_kinds WHERE extension_id = ? ORDER BY class, position'),
    environments: await q('SELECT environment_kind, source_kind FROM extension_environments WHERE extension_id = ? ORDER BY position'),
    principals: await q(
      `SELECT p.environment_kind, p.principal_kind FROM extension_environment_principals p
       JOIN extension_environments e ON e.environment_kind = p.environment_kind WHERE e.extension_id = ? ORDER BY e.position, p.position`,
    ),
    findings: await q('SELECT name, relationship_kind, environment_kind, short_remediation FROM extension_findings WHERE extension_id = ? ORDER BY position'),
  }
}

async function catalogVersion(): Promise<string> {
  return (await env.DB.prepare('SELECT version FROM extension_catalog_version WHERE id = 1').first<{ version: string }>())!.version
}

/** A D1Database whose batch() runs the real statements followed by one that always fails. */
function failingAtTheEnd(db: D1Database): D1Database {
  return new Proxy(db, {
    get(target, prop, receiver) {
      if (prop === 'batch')
        return (stmts: D1PreparedStatement[]) => target.batch([...stmts, target.prepare('INSERT INTO extension_catalog_version (id, version, updated_at) VALUES (1, NULL, NULL)')])
      const v = Reflect.get(target, prop, receiver)
      return typeof v === 'function' ? v.bind(target) : v
    },
  })
}

/** Two versions of one extension that differ in every child set. */
function variants(name: string): [ExtensionDocument, ExtensionDocument] {
  const a = smallDoc(name, 'CC', '1.0.0')
  a.node_kinds.push({ name: 'CC_OnlyA', color: '#aaa' }, { name: 'CC_AlsoA' })
  a.relationship_kinds.push({ name: 'CC_EdgeA', is_traversable: false })
  a.environments[0].principal_kinds = ['CC_User', 'CC_OnlyA']
  a.relationship_findings.push({ name: 'CC_FindingA', relationship_kind: 'CC_EdgeA', environment_kind: 'CC_Tenant', remediation: { ...REMEDIATION, short_remediation: 'A' } })

  const b = smallDoc(name, 'CC', '2.0.0')
  b.schema.display_name = 'B display'
  b.node_kinds[1].color = '#bbb'
  b.node_kinds.push({ name: 'CC_OnlyB' }, { name: 'CC_Org' })
  b.relationship_kinds[0].is_traversable = false
  b.relationship_kinds.push({ name: 'CC_EdgeB', is_traversable: true }, { name: 'CC_EdgeB2', is_traversable: true })
  b.environments[0].principal_kinds = ['CC_OnlyB']
  b.environments.push({ environment_kind: 'CC_Org', source_kind: 'CCSource', principal_kinds: ['CC_User', 'CC_OnlyB'] })
  b.relationship_findings[0].remediation.short_remediation = 'B'
  b.relationship_findings.push({ name: 'CC_FindingB', relationship_kind: 'CC_EdgeB', environment_kind: 'CC_Org', remediation: { ...REMEDIATION, short_remediation: 'B2' } })
  return [a, b]
}

describe('concurrent PUTs of one extension', () => {
  it('end with the database equal to one of the two payloads, never a mixture', async () => {
    const [a, b] = variants('Concurrent')
    await upsertExtension(admin, a)
    const expectA = await tablesOf('Concurrent')
    await upsertExtension(admin, b)
    const expectB = await tablesOf('Concurrent')
    expect(expectA).not.toEqual(expectB)
    const id = (await extensionIdByName(admin, 'Concurrent'))!

    // which payload wins a round is up to the scheduler; either is fine, a mixture is not
    for (let round = 0; round < 8; round++) {
      const pair = round % 2 === 0 ? [a, b] : [b, a]
      const results = await Promise.all(pair.map((d) => upsertExtension(admin, d)))
      for (const r of results) expect(r.data).toMatchObject({ id, created: false })
      const doc = (await getExtension(admin, id)).data
      const tables = await tablesOf('Concurrent')
      if (doc.schema.version === '1.0.0') {
        expect(doc).toEqual(a)
        expect(tables).toEqual(expectA)
      } else {
        expect(doc).toEqual(b)
        expect(tables).toEqual(expectB)
      }
      const cat = await loadKindCatalog(env.DB)
      const kinds = [...cat.nodeKinds, ...cat.relationshipKinds.keys()].filter((k) => k.startsWith('CC_')).sort()
      expect(kinds).toEqual([...doc.node_kinds, ...doc.relationship_kinds].map((k) => k.name).sort())
    }
    await deleteExtension(admin, id)
  })

  it('two concurrent creates of a new extension: one is created=true, the other an update of it', async () => {
    const [a, b] = variants('Racing Create')
    const results = await Promise.all([upsertExtension(admin, a), upsertExtension(admin, b)])
    expect(results.map((r) => r.data.created).sort()).toEqual([false, true])
    expect(results[0].data.id).toBe(results[1].data.id)
    const doc = (await getExtension(admin, results[0].data.id)).data
    expect([a, b]).toContainEqual(doc)
    await deleteExtension(admin, results[0].data.id)
  })

  it('two different extensions racing for one kind: exactly one wins, the other gets a 400 naming the winner', async () => {
    const one = smallDoc('Racer One', 'RACE')
    const two = smallDoc('Racer Two', 'RACE')
    const res = await Promise.all([one, two].map((d) => admin.raw('PUT', '/api/v2/extensions', d)))
    const statuses = res.map((r) => r.status).sort()
    expect(statuses).toEqual([200, 400])
    const winnerIndex = res.findIndex((r) => r.status === 200)
    const winner = [one, two][winnerIndex].schema.name
    const loser = [one, two][1 - winnerIndex].schema.name
    const body = await expectEnvelope(res[1 - winnerIndex], 400, `already belongs to the installed extension "${winner}"`)
    expect(body.errors.map((e) => e.context)).toContain('node_kinds[0].name')
    expect(await extensionIdByName(admin, loser)).toBeUndefined()
    const w = await tablesOf(winner)
    expect(w!.kinds.map((k) => k.name)).toEqual(['RACE_Tenant', 'RACE_User', 'RACE_AdminOf'])
    await deleteExtension(admin, (await extensionIdByName(admin, winner))!)
  })
})

describe('a concurrent writer landing between validation and the write', () => {
  /**
   * The worker under test shares this D1 binding object, so a test can run a competing write exactly
   * between the route's validation (its first batch: the catalogue) and its write (the next batch).
   */
  async function withWriterBeforeNextWrite<T>(competing: () => Promise<unknown>, run: () => Promise<T>): Promise<T> {
    // The route runs its statements in the request's D1 session (http/d1-session.ts: `DB.withSession`),
    // so the batches counted are those of the binding and of any session made from it, in order.
    const db = env.DB as D1Database & { batch: D1Database['batch']; withSession: D1Database['withSession'] }
    const original = db.batch
    const originalWithSession = db.withSession
    let calls = 0
    let fired = false
    const counted = (batch: (stmts: D1PreparedStatement[]) => Promise<D1Result[]>) =>
      async (stmts: D1PreparedStatement[]) => {
        calls++
        if (calls === 2 && !fired) {
          fired = true
          db.batch = original
          db.withSession = originalWithSession
          await competing()
        }
        return batch(stmts)
      }
    db.batch = counted((stmts) => original.call(db, stmts)) as D1Database['batch']
    db.withSession = function (this: D1Database, arg?: string) {
      const session = originalWithSession.call(db, arg)
      const sessionBatch = session.batch.bind(session)
      return new Proxy(session, {
        get(t, p) {
          if (p === 'batch') return counted(sessionBatch)
          const v = Reflect.get(t, p, t)
          return typeof v === 'function' ? v.bind(t) : v
        },
      })
    } as D1Database['withSession']
    try {
      return await run()
    } finally {
      db.batch = original
      db.withSession = originalWithSession
    }
  }

  it('PUT: the database refuses, nothing is written, and the answer is a 400 naming the winner', async () => {
    const winner = smallDoc('Early Bird', 'BIRD')
    const loser = smallDoc('Late Bird', 'BIRD')
    const res = await withWriterBeforeNextWrite(
      () => storeUpsert(env.DB, winner, new Date().toISOString(), testAudit()),
      () => admin.raw('PUT', '/api/v2/extensions', loser),
    )
    const body = await expectEnvelope(res, 400, 'kind "BIRD_Tenant" already belongs to the installed extension "Early Bird"')
    expect(body.errors.map((e) => e.context)).toEqual(['node_kinds[0].name', 'node_kinds[1].name', 'relationship_kinds[0].name', 'relationship_findings[0].name'])
    expect(await tablesOf('Late Bird')).toBeNull()
    expect((await getExtension(admin, (await extensionIdByName(admin, 'Early Bird'))!)).data).toEqual(winner)
    await deleteExtension(admin, (await extensionIdByName(admin, 'Early Bird'))!)
  })

  it('DELETE: a finding that starts using the environment meanwhile makes it a 400, nothing deleted', async () => {
    const owner = (await upsertExtension(admin, smallDoc('Env Host', 'HOST'))).data
    const user = smallDoc('Env Guest', 'GUEST')
    user.relationship_findings[0].environment_kind = 'HOST_Tenant'
    // the DELETE route reads twice before it writes: the extension row, then the catalogue (a batch)
    const res = await withWriterBeforeNextWrite(
      () => storeUpsert(env.DB, user, new Date().toISOString(), testAudit()),
      () => admin.raw('DELETE', `/api/v2/extensions/${owner.id}`),
    )
    await expectEnvelope(res, 400, 'environment "HOST_Tenant" is used by relationship finding "GUEST_Admins" of the installed extension "Env Guest"')
    expect((await getExtension(admin, owner.id)).data).toEqual(smallDoc('Env Host', 'HOST'))
    await deleteExtension(admin, (await extensionIdByName(admin, 'Env Guest'))!)
    await deleteExtension(admin, owner.id)
  })
})

describe('a failure midway leaves the previous version intact', () => {
  it('a batch whose last statement fails rolls back every statement before it', async () => {
    const v1 = (await upsertExtension(admin, GITHUB)).data
    const before = await tablesOf('GitHound')
    const version = await catalogVersion()
    const catalog = await loadKindCatalog(env.DB)

    const v2 = clone(GITHUB)
    v2.schema.version = 'v9.9.9'
    v2.node_kinds = v2.node_kinds.slice(0, 5)
    v2.relationship_kinds = v2.relationship_kinds.filter((k) => ['GH_Owns', 'GH_BypassProtections', 'GH_CanReadSecret', 'GH_PushProtectedBranch'].includes(k.name))
    v2.environments[0].principal_kinds = ['GH_User']
    await expect(storeUpsert(failingAtTheEnd(env.DB), v2, new Date().toISOString(), testAudit())).rejects.toThrow()

    expect(await tablesOf('GitHound')).toEqual(before)
    expect((await getExtension(admin, v1.id)).data).toEqual(GITHUB)
    expect(await catalogVersion()).toBe(version)
    expect(await loadKindCatalog(env.DB)).toBe(catalog)

    // the same payload without the failing statement goes through: the failure was the only obstacle
    await storeUpsert(env.DB, v2, new Date().toISOString(), testAudit())
    expect((await getExtension(admin, v1.id)).data).toEqual(v2)
    await upsertExtension(admin, GITHUB)
  })

  it('a delete whose batch fails deletes nothing', async () => {
    const id = (await extensionIdByName(admin, 'GitHound'))!
    await expect(storeDelete(failingAtTheEnd(env.DB), id, new Date().toISOString(), testAudit('DeleteGraphSchemaExtension'))).rejects.toThrow()
    expect((await getExtension(admin, id)).data).toEqual(GITHUB)
  })

  it('an ownership conflict in the middle of the batch (a kind of another extension) aborts it all', async () => {
    // Straight to the store, past validation, as a concurrent writer would arrive.
    const before = await tablesOf('GitHound')
    const prior = smallDoc('Intruder', 'IN')
    const intruderV1 = (await upsertExtension(admin, prior)).data
    const intruderBefore = await tablesOf('Intruder')
    const version = await catalogVersion()

    const bad = smallDoc('Intruder', 'IN', '2.0.0')
    bad.node_kinds.push({ name: 'IN_New' }, { name: 'GH_Repository' }) // the second is GitHound's
    await expect(storeUpsert(env.DB, bad, new Date().toISOString(), testAudit())).rejects.toBeInstanceOf(ExtensionWriteConflict)
    expect(await tablesOf('Intruder')).toEqual(intruderBefore)
    expect((await getExtension(admin, intruderV1.id)).data).toEqual(prior)
    expect(await tablesOf('GitHound')).toEqual(before)
    expect(await catalogVersion()).toBe(version)

    // a new extension is not created either
    const fresh = smallDoc('Newcomer', 'NC')
    fresh.relationship_kinds.push({ name: 'GH_Owns', is_traversable: false })
    await expect(storeUpsert(env.DB, fresh, new Date().toISOString(), testAudit())).rejects.toBeInstanceOf(ExtensionWriteConflict)
    expect(await tablesOf('Newcomer')).toBeNull()
    expect((await loadKindCatalog(env.DB)).relationshipKinds.get('GH_Owns')).toEqual({ traversable: true, extensionName: 'GitHound' })
    await deleteExtension(admin, intruderV1.id)
  })

  it('the database itself refuses to modify or delete a built-in extension', async () => {
    const before = await tablesOf('AD')
    await expect(storeUpsert(env.DB, smallDoc('AD', 'AD'), new Date().toISOString(), testAudit())).rejects.toBeInstanceOf(ExtensionWriteConflict)
    await expect(storeDelete(env.DB, 1, new Date().toISOString(), testAudit('DeleteGraphSchemaExtension'))).resolves.toBeNull()
    await expect(env.DB.prepare('DELETE FROM extensions WHERE id = 1').run()).rejects.toThrow(/built-in extension is read-only/)
    expect(await tablesOf('AD')).toEqual(before)
  })

  it('an environment used by another extension’s finding cannot be deleted underneath it', async () => {
    const base = (await upsertExtension(admin, smallDoc('Env Owner', 'EO'))).data
    const user = smallDoc('Env User', 'EU')
    user.relationship_findings[0].environment_kind = 'EO_Tenant'
    const u = (await upsertExtension(admin, user)).data
    const before = await tablesOf('Env Owner')
    await expect(storeDelete(env.DB, base.id, new Date().toISOString(), testAudit('DeleteGraphSchemaExtension'))).rejects.toBeInstanceOf(ExtensionWriteConflict)
    const noEnv = smallDoc('Env Owner', 'EO')
    noEnv.environments = []
    noEnv.relationship_findings = []
    await expect(storeUpsert(env.DB, noEnv, new Date().toISOString(), testAudit())).rejects.toBeInstanceOf(ExtensionWriteConflict)
    expect(await tablesOf('Env Owner')).toEqual(before)
    await deleteExtension(admin, u.id)
    await deleteExtension(admin, base.id)
  })
})

describe('the kind catalogue', () => {
  /** Counts D1 calls made through a database object. */
  function counting(db: D1Database) {
    const calls: string[] = []
    const wrapStmt = (s: D1PreparedStatement): D1PreparedStatement =>
      new Proxy(s, {
        get(t, p) {
          const v = Reflect.get(t, p, t)
          if (typeof v !== 'function') return v
          if (p === 'bind') return (...args: unknown[]) => wrapStmt(v.apply(t, args))
          if (['first', 'all', 'run', 'raw'].includes(String(p))) return (...args: unknown[]) => (calls.push(String(p)), v.apply(t, args))
          return v.bind(t)
        },
      })
    const proxy = new Proxy(db, {
      get(t, p) {
        const v = Reflect.get(t, p, t)
        if (p === 'prepare') return (sql: string) => wrapStmt(t.prepare(sql))
        if (p === 'batch') return (stmts: D1PreparedStatement[]) => (calls.push('batch'), t.batch(stmts))
        if (p === 'exec' || p === 'dump') return (...a: unknown[]) => (calls.push(String(p)), (v as (...x: unknown[]) => unknown).apply(t, a))
        return typeof v === 'function' ? v.bind(t) : v
      },
    })
    return { db: proxy, calls }
  }

  it('is one tiny statement while the cache is current, and one batch more when it is stale', async () => {
    await upsertExtension(admin, smallDoc('Counted', 'CNT')) // makes the cache stale
    const stale = counting(env.DB)
    const c1 = await loadKindCatalog(stale.db)
    expect(stale.calls).toEqual(['first', 'batch']) // the version, then the version with the catalogue rows
    expect(c1.nodeKinds.has('CNT_User')).toBe(true)
    const fresh = counting(env.DB)
    const c2 = await loadKindCatalog(fresh.db)
    expect(fresh.calls).toEqual(['first']) // the version alone
    expect(c2).toBe(c1) // served from the isolate cache
  })

  it('changes version on every create, update and delete, and only then', async () => {
    const v0 = (await loadKindCatalog(env.DB)).version
    expect((await loadKindCatalog(env.DB)).version).toBe(v0)
    const created = (await upsertExtension(admin, smallDoc('Versioned', 'VER'))).data
    const v1 = (await loadKindCatalog(env.DB)).version
    expect(v1).not.toBe(v0)
    const changed = smallDoc('Versioned', 'VER', '1.1.0')
    changed.relationship_kinds[0].is_traversable = false
    await upsertExtension(admin, changed)
    const c2 = await loadKindCatalog(env.DB)
    expect(c2.version).not.toBe(v1)
    expect(c2.relationshipKinds.get('VER_AdminOf')).toEqual({ traversable: false, extensionName: 'Versioned' })
    // a refused payload does not change it
    await admin.raw('PUT', '/api/v2/extensions', { schema: { name: 'Versioned' } })
    expect((await loadKindCatalog(env.DB)).version).toBe(c2.version)
    await deleteExtension(admin, created.id)
    const c3 = await loadKindCatalog(env.DB)
    expect(c3.version).not.toBe(c2.version)
    expect(c3.relationshipKinds.has('VER_AdminOf')).toBe(false)
  })

  it('holds the built-ins: kinds, traversability, environments with principals, extensions', async () => {
    const cat = await loadKindCatalog(env.DB)
    for (const k of ['Base', 'User', 'Computer', 'Group', 'Domain', 'GPO', 'OU', 'Container', 'CertTemplate', 'EnterpriseCA', 'RootCA', 'AIACA', 'NTAuthStore', 'IssuancePolicy'])
      expect(cat.nodeKindInfo.get(k)?.extensionName, k).toBe('AD')
    for (const k of ['AZBase', 'AZTenant', 'AZUser', 'AZGroup', 'AZServicePrincipal', 'AZApp', 'AZDevice', 'AZRole', 'AZSubscription', 'AZResourceGroup', 'AZVM', 'AZKeyVault', 'AZManagementGroup', 'AZAutomationAccount', 'AZContainerRegistry', 'AZFunctionApp', 'AZLogicApp', 'AZManagedCluster', 'AZVMScaleSet', 'AZWebApp'])
      expect(cat.nodeKindInfo.get(k)?.extensionName, k).toBe('AZ')
    const adTraversable = ['MemberOf', 'HasSession', 'AdminTo', 'AllExtendedRights', 'AddMember', 'ForceChangePassword', 'GenericAll', 'GenericWrite', 'Owns', 'WriteDacl', 'WriteOwner', 'CanRDP', 'ExecuteDCOM', 'AllowedToDelegate', 'ReadLAPSPassword', 'Contains', 'GPLink', 'AllowedToAct', 'AddAllowedToAct', 'WriteSPN', 'AddSelf', 'AddKeyCredentialLink', 'SQLAdmin', 'ReadGMSAPassword', 'HasSIDHistory', 'CanPSRemote', 'SyncLAPSPassword', 'DCSync']
    for (const k of adTraversable) expect(cat.relationshipKinds.get(k), k).toEqual({ traversable: true, extensionName: 'AD' })
    for (const k of ['GetChanges', 'GetChangesAll', 'TrustedBy']) expect(cat.relationshipKinds.get(k), k).toEqual({ traversable: false, extensionName: 'AD' })
    const azTraversable = ['AZMemberOf', 'AZOwns', 'AZAddSecret', 'AZAddOwner', 'AZResetPassword', 'AZAddMembers', 'AZGlobalAdmin', 'AZPrivilegedRoleAdmin', 'AZContains', 'AZHasRole', 'AZExecuteCommand', 'AZUserAccessAdministrator', 'AZContributor', 'AZOwner', 'AZRunsAs', 'AZManagedIdentity', 'AZGetKeys', 'AZGetSecrets', 'AZGetCertificates', 'AZKeyVaultContributor', 'AZVMAdminLogin', 'AZVMContributor', 'AZAvereContributor', 'AZAKSContributor', 'AZAppAdmin', 'AZCloudAppAdmin', 'AZGrant', 'AZGrantSelf', 'AZWebsiteContributor', 'AZLogicAppContributor', 'AZAutomationContributor', 'AZNodeResourceGroup']
    for (const k of azTraversable) expect(cat.relationshipKinds.get(k), k).toEqual({ traversable: true, extensionName: 'AZ' })
    expect(cat.environments.filter((e) => e.isBuiltin)).toEqual([
      { environmentKind: 'Domain', sourceKind: 'Base', principalKinds: ['User', 'Computer', 'Group'], extensionName: 'AD', extensionDisplayName: 'Active Directory', isBuiltin: true },
      { environmentKind: 'AZTenant', sourceKind: 'AZBase', principalKinds: ['AZUser', 'AZGroup', 'AZServicePrincipal', 'AZDevice'], extensionName: 'AZ', extensionDisplayName: 'Azure', isBuiltin: true },
    ])
    expect(cat.relationshipFindings.filter((f) => f.extensionName === 'AD' || f.extensionName === 'AZ')).toEqual([])
    expect(cat.extensions.slice(0, 2)).toEqual([
      { id: 1, name: 'AD', displayName: 'Active Directory', namespace: 'AD', version: 'v1.0.0', isBuiltin: true },
      { id: 2, name: 'AZ', displayName: 'Azure', namespace: 'AZ', version: 'v1.0.0', isBuiltin: true },
    ])
  })

  it('is shared read-only: its arrays and entries are frozen', async () => {
    const cat = await loadKindCatalog(env.DB)
    expect(Object.isFrozen(cat.environments)).toBe(true)
    expect(Object.isFrozen(cat.environments[0])).toBe(true)
    expect(Object.isFrozen(cat.relationshipFindings)).toBe(true)
    expect(() => (cat.environments as unknown as unknown[]).push({})).toThrow(TypeError)
  })
})
