import { beforeAll, describe, expect, it } from 'vitest'
import { adminToken, client, env, expectEnvelope, userWithRole } from '../helpers'
import type { EdgeHoundClient } from '../../src/client'
import { deleteExtension, extensionIdByName, getExtension, listExtensions, upsertExtension } from '../../src/client/extensions'
import { loadKindCatalog } from '../../src/extensions/catalog'
import type { ExtensionDocument } from '../../src/extensions/schema'
import { clone, GITHUB, smallDoc } from '../fixtures/extensions/docs'

let admin: EdgeHoundClient

beforeAll(async () => {
  admin = await adminToken()
})

/** Everything the tables hold for one extension, in a comparable form. */
async function stored(extensionId: number) {
  const db = env.DB
  const q = async (sql: string) => (await db.prepare(sql).bind(extensionId).all()).results
  return {
    kinds: await q('SELECT name, class, position FROM extension_kinds WHERE extension_id = ? ORDER BY class, position'),
    environments: await q('SELECT environment_kind, source_kind, position FROM extension_environments WHERE extension_id = ? ORDER BY position'),
    principals: await q(
      `SELECT p.environment_kind, p.principal_kind FROM extension_environment_principals p
       JOIN extension_environments e ON e.environment_kind = p.environment_kind WHERE e.extension_id = ? ORDER BY e.position, p.position`,
    ),
    findings: await q('SELECT name, relationship_kind, environment_kind, long_remediation FROM extension_findings WHERE extension_id = ? ORDER BY position'),
  }
}

/** What the tables must hold for a document. */
function expected(doc: ExtensionDocument) {
  return {
    kinds: [
      ...doc.node_kinds.map((k, i) => ({ name: k.name, class: 'node', position: i })),
      ...doc.relationship_kinds.map((k, i) => ({ name: k.name, class: 'relationship', position: i })),
    ],
    environments: doc.environments.map((e, i) => ({ environment_kind: e.environment_kind, source_kind: e.source_kind, position: i })),
    principals: doc.environments.flatMap((e) => e.principal_kinds.map((p) => ({ environment_kind: e.environment_kind, principal_kind: p }))),
    findings: doc.relationship_findings.map((f) => ({
      name: f.name,
      relationship_kind: f.relationship_kind,
      environment_kind: f.environment_kind,
      long_remediation: f.remediation.long_remediation,
    })),
  }
}

async function rowid(name: string): Promise<number> {
  const r = await env.DB.prepare('SELECT rowid AS r FROM extension_kinds WHERE name = ?').bind(name).first<{ r: number }>()
  return r!.r
}

/** GitHub v2: every child set changes (members removed, changed and added), and the schema too. */
function githubV2(): ExtensionDocument {
  const d = clone(GITHUB)
  d.schema.version = 'v1.4.0'
  d.schema.display_name = 'GitHub (v2)'
  // node kinds: one removed, one changed (and an optional member dropped), one added
  d.node_kinds = d.node_kinds.filter((k) => k.name !== 'GH_SecretScanningAlert')
  const user = d.node_kinds.find((k) => k.name === 'GH_User')!
  user.color = '#000'
  user.icon = 'user-secret'
  delete user.description
  d.node_kinds.push({ name: 'GH_Enterprise', display_name: 'Enterprise', is_display_kind: true, icon: 'city', color: '#123456' })
  // relationship kinds: one removed, one changed, one added
  d.relationship_kinds = d.relationship_kinds.filter((k) => k.name !== 'GH_ManageWebhooks' && k.name !== 'GH_Exposes')
  d.relationship_kinds.find((k) => k.name === 'GH_ReadRepoContent')!.is_traversable = true
  d.relationship_kinds.push({ name: 'GH_EnterpriseAdmin', description: 'Enterprise owner', is_traversable: true })
  // environments: one changed (source and principals), one added
  d.environments[0].source_kind = 'GitHubHound'
  d.environments[0].principal_kinds = ['GH_Team', 'GH_User', 'GH_PersonalAccessToken']
  d.environments.push({ environment_kind: 'GH_Enterprise', source_kind: 'GitHubHound', principal_kinds: ['GH_User'] })
  // findings: one removed, one changed, one added
  d.relationship_findings = d.relationship_findings.filter((f) => f.name !== 'GH_ProtectedBranchPushers')
  const secrets = d.relationship_findings.find((f) => f.name === 'GH_SecretReaders')!
  secrets.display_name = 'Principals that can read secrets'
  secrets.remediation.long_remediation = 'Use **OIDC** federation instead of long-lived secrets.'
  d.relationship_findings.push({
    name: 'GH_EnterpriseAdmins',
    display_name: 'Enterprise admins',
    relationship_kind: 'GH_EnterpriseAdmin',
    environment_kind: 'GH_Enterprise',
    remediation: { short_description: 'Enterprise owners.', long_description: 'They control every organization.', short_remediation: 'Review them.', long_remediation: 'Remove owners who do not need the role.' },
  })
  return d
}

describe('built-in extensions', () => {
  it('Active Directory and Azure are installed, listed and read-only', async () => {
    const list = (await listExtensions(admin)).data.extensions
    expect(list).toContainEqual({ id: 1, name: 'AD', display_name: 'Active Directory', namespace: 'AD', version: 'v1.0.0', is_builtin: true })
    expect(list).toContainEqual({ id: 2, name: 'AZ', display_name: 'Azure', namespace: 'AZ', version: 'v1.0.0', is_builtin: true })

    const ad = (await getExtension(admin, 1)).data
    expect(ad.schema).toEqual({ name: 'AD', display_name: 'Active Directory', version: 'v1.0.0', namespace: 'AD' })
    const nodeNames = ad.node_kinds.map((k) => k.name)
    for (const k of ['Base', 'User', 'Computer', 'Group', 'Domain', 'GPO', 'OU', 'Container', 'CertTemplate', 'EnterpriseCA', 'RootCA', 'AIACA', 'NTAuthStore', 'IssuancePolicy'])
      expect(nodeNames).toContain(k)
    expect(ad.environments).toEqual([{ environment_kind: 'Domain', source_kind: 'Base', principal_kinds: ['User', 'Computer', 'Group'] }])
    expect(ad.relationship_findings).toEqual([])
    const trav = new Map(ad.relationship_kinds.map((k) => [k.name, k.is_traversable]))
    for (const k of ['MemberOf', 'HasSession', 'AdminTo', 'GenericAll', 'WriteDacl', 'Owns', 'DCSync', 'Contains', 'GPLink', 'SyncLAPSPassword', 'CanPSRemote'])
      expect(trav.get(k), k).toBe(true)
    for (const k of ['GetChanges', 'GetChangesAll', 'TrustedBy']) expect(trav.get(k), k).toBe(false)

    const az = (await getExtension(admin, 2)).data
    expect(az.environments).toEqual([{ environment_kind: 'AZTenant', source_kind: 'AZBase', principal_kinds: ['AZUser', 'AZGroup', 'AZServicePrincipal', 'AZDevice'] }])
    const aztrav = new Map(az.relationship_kinds.map((k) => [k.name, k.is_traversable]))
    for (const k of ['AZMemberOf', 'AZOwns', 'AZAddSecret', 'AZGlobalAdmin', 'AZContains', 'AZNodeResourceGroup', 'AZAutomationContributor'])
      expect(aztrav.get(k), k).toBe(true)
    expect(aztrav.get('AZScopedTo')).toBe(false)
  })

  it('PUT of a built-in name is a 400 and changes nothing', async () => {
    const before = (await getExtension(admin, 1)).data
    const res = await admin.raw('PUT', '/api/v2/extensions', smallDoc('AD', 'ADX'))
    const body = await expectEnvelope(res, 400, '"AD" is a built-in extension and cannot be modified')
    expect(body.errors.map((e) => e.context)).toEqual(['schema.name'])
    expect((await getExtension(admin, 1)).data).toEqual(before)
  })

  it('DELETE of a built-in is a 400 and changes nothing', async () => {
    const res = await admin.raw('DELETE', '/api/v2/extensions/2')
    const body = await expectEnvelope(res, 400, 'built-in extensions cannot be deleted')
    expect(body.errors[0].context).toBe('id')
    expect((await getExtension(admin, 2)).data.schema.name).toBe('AZ')
  })
})

describe('a real extension: install, read back, change, remove', () => {
  let id: number

  it('create: 200 with created=true and the counts; stored exactly', async () => {
    const r = await upsertExtension(admin, GITHUB)
    expect(r.data).toEqual({
      id: expect.any(Number),
      name: 'GitHound',
      display_name: 'GitHub',
      version: 'v1.3.0',
      namespace: 'GH',
      is_builtin: false,
      created: true,
      node_kinds: 20,
      relationship_kinds: 28,
      environments: 1,
      relationship_findings: 4,
    })
    id = r.data.id
    expect(id).toBeGreaterThan(2)
    expect(await stored(id)).toEqual(expected(GITHUB))
  })

  it('read-back: GET returns the document equal to what was PUT', async () => {
    expect((await getExtension(admin, id)).data).toEqual(GITHUB)
  })

  it('list: shows it with the summary fields, sorted by display name', async () => {
    const list = (await listExtensions(admin)).data.extensions
    expect(list.find((e) => e.id === id)).toEqual({ id, name: 'GitHound', display_name: 'GitHub', namespace: 'GH', version: 'v1.3.0', is_builtin: false })
    expect(list.map((e) => e.display_name)).toEqual(['Active Directory', 'Azure', 'GitHub'])
  })

  it('the kind catalogue has its kinds, environment and findings', async () => {
    const cat = await loadKindCatalog(env.DB)
    expect(cat.nodeKinds.has('GH_Repository')).toBe(true)
    expect(cat.relationshipKinds.get('GH_AdminTo')).toEqual({ traversable: true, extensionName: 'GitHound' })
    expect(cat.relationshipKinds.get('GH_ReadRepoContent')).toEqual({ traversable: false, extensionName: 'GitHound' })
    expect(cat.environments.find((e) => e.environmentKind === 'GH_Organization')).toEqual({
      environmentKind: 'GH_Organization',
      sourceKind: 'GitHub',
      principalKinds: ['GH_User', 'GH_Team', 'GH_App', 'GH_ExternalIdentity'],
      extensionName: 'GitHound',
      extensionDisplayName: 'GitHub',
      isBuiltin: false,
    })
    expect(cat.relationshipFindings.map((f) => f.name)).toEqual(['GH_OrgOwnerPrivilege', 'GH_BranchProtectionBypass', 'GH_SecretReaders', 'GH_ProtectedBranchPushers'])
    expect(cat.relationshipFindings[0].remediation).toEqual(GITHUB.relationship_findings[0].remediation)
  })

  it('the same PUT again: created=false, same id, nothing changes', async () => {
    const r = await upsertExtension(admin, GITHUB)
    expect(r.data).toMatchObject({ id, created: false })
    expect((await getExtension(admin, id)).data).toEqual(GITHUB)
  })

  it('update: every child set changes; missing removed, matching updated in place, new added', async () => {
    const keptRowid = await rowid('GH_User')
    const v2 = githubV2()
    const r = await upsertExtension(admin, v2)
    expect(r.data).toMatchObject({
      id,
      created: false,
      display_name: 'GitHub (v2)',
      version: 'v1.4.0',
      node_kinds: 20,
      relationship_kinds: 27,
      environments: 2,
      relationship_findings: 4,
    })
    expect((await getExtension(admin, id)).data).toEqual(v2)
    expect(await stored(id)).toEqual(expected(v2))
    // updated in place, not deleted and re-inserted
    expect(await rowid('GH_User')).toBe(keptRowid)
    const gone = await env.DB.prepare("SELECT count(*) AS n FROM extension_kinds WHERE name IN ('GH_SecretScanningAlert', 'GH_ManageWebhooks', 'GH_Exposes')").first<{ n: number }>()
    expect(gone!.n).toBe(0)

    const cat = await loadKindCatalog(env.DB)
    expect(cat.nodeKinds.has('GH_SecretScanningAlert')).toBe(false)
    expect(cat.nodeKinds.has('GH_Enterprise')).toBe(true)
    expect(cat.relationshipKinds.get('GH_ReadRepoContent')?.traversable).toBe(true)
    expect(cat.relationshipKinds.has('GH_ManageWebhooks')).toBe(false)
    expect(cat.environments.filter((e) => e.extensionName === 'GitHound').map((e) => [e.environmentKind, e.sourceKind, e.principalKinds])).toEqual([
      ['GH_Organization', 'GitHubHound', ['GH_Team', 'GH_User', 'GH_PersonalAccessToken']],
      ['GH_Enterprise', 'GitHubHound', ['GH_User']],
    ])
    const secrets = cat.relationshipFindings.find((f) => f.name === 'GH_SecretReaders')!
    expect(secrets.displayName).toBe('Principals that can read secrets')
    expect(secrets.remediation.long_remediation).toBe('Use **OIDC** federation instead of long-lived secrets.')
    expect(cat.relationshipFindings.some((f) => f.name === 'GH_ProtectedBranchPushers')).toBe(false)
    expect(cat.nodeKindInfo.get('GH_User')).toEqual({ extensionName: 'GitHound', displayName: 'User', isDisplayKind: true, icon: 'user-secret', color: '#000' })
  })

  it('update back to v1 restores exactly v1', async () => {
    await upsertExtension(admin, GITHUB)
    expect((await getExtension(admin, id)).data).toEqual(GITHUB)
    expect(await stored(id)).toEqual(expected(GITHUB))
  })

  it('delete: 200, then gone everywhere (404, list, tables, catalogue)', async () => {
    const r = await deleteExtension(admin, id)
    expect(r.data).toEqual({ id, name: 'GitHound', deleted: true })
    await expectEnvelope(await admin.raw('GET', `/api/v2/extensions/${id}`), 404, `no extension found matching extension id: ${id}`)
    expect(await extensionIdByName(admin, 'GitHound')).toBeUndefined()
    expect(await stored(id)).toEqual({ kinds: [], environments: [], principals: [], findings: [] })
    const cat = await loadKindCatalog(env.DB)
    expect([...cat.nodeKinds].some((k) => k.startsWith('GH_'))).toBe(false)
    expect(cat.relationshipFindings.some((f) => f.name.startsWith('GH_'))).toBe(false)
    await expectEnvelope(await admin.raw('DELETE', `/api/v2/extensions/${id}`), 404, `no extension found matching extension id: ${id}`)
  })

  it('re-create after delete: created=true with a new id (ids are never reused)', async () => {
    const r = await upsertExtension(admin, GITHUB)
    expect(r.data.created).toBe(true)
    expect(r.data.id).toBeGreaterThan(id)
    expect((await getExtension(admin, r.data.id)).data).toEqual(GITHUB)
    await deleteExtension(admin, r.data.id)
  })
})

describe('normalisations of the read-back document', () => {
  it('null optional members read back absent; missing arrays read back as []', async () => {
    const r = await upsertExtension(admin, {
      schema: { name: 'Minimal', display_name: null, version: '0.1.0', namespace: 'MIN' },
      node_kinds: [{ name: 'MIN_Thing', description: null, icon: '', color: '' }],
    })
    expect(r.data).toMatchObject({ display_name: 'Minimal', relationship_kinds: 0, environments: 0, relationship_findings: 0 })
    expect((await getExtension(admin, r.data.id)).data).toEqual({
      schema: { name: 'Minimal', version: '0.1.0', namespace: 'MIN' },
      node_kinds: [{ name: 'MIN_Thing', icon: '', color: '' }],
      relationship_kinds: [],
      environments: [],
      relationship_findings: [],
    })
    await deleteExtension(admin, r.data.id)
  })
})

describe('findings that use another extension’s environment', () => {
  it('allowed; that environment cannot then be removed or its extension deleted until the user is gone', async () => {
    const base = (await upsertExtension(admin, smallDoc('Base Ext', 'BASE'))).data
    const user = smallDoc('User Ext', 'USR')
    user.relationship_findings[0].environment_kind = 'BASE_Tenant'
    const u = (await upsertExtension(admin, user)).data
    // and a built-in environment works too
    const adUser = smallDoc('AD User Ext', 'ADU')
    adUser.relationship_findings[0].environment_kind = 'Domain'
    const a = (await upsertExtension(admin, adUser)).data

    const without = smallDoc('Base Ext', 'BASE')
    without.environments = []
    without.relationship_findings = []
    const res = await admin.raw('PUT', '/api/v2/extensions', without)
    const body = await expectEnvelope(res, 400)
    expect(body.errors).toEqual([
      { context: 'environments', message: 'environment "BASE_Tenant" cannot be removed: relationship finding "USR_Admins" of the installed extension "User Ext" (User Ext display) uses it' },
    ])
    const del = await admin.raw('DELETE', `/api/v2/extensions/${base.id}`)
    await expectEnvelope(del, 400, 'environment "BASE_Tenant" is used by relationship finding "USR_Admins" of the installed extension "User Ext"')
    expect((await getExtension(admin, base.id)).data).toEqual(smallDoc('Base Ext', 'BASE'))

    await deleteExtension(admin, u.id)
    await deleteExtension(admin, base.id)
    await deleteExtension(admin, a.id)
  })
})

describe('identifiers', () => {
  it.each(['abc', '0', '-1', '1.5', '99999999999', '2147483648'])('id %s is malformed: 400', async (bad) => {
    const res = await admin.raw('GET', `/api/v2/extensions/${bad}`)
    const body = await expectEnvelope(res, 400, 'id is malformed')
    expect(body.errors[0].context).toBe('path.id')
    await expectEnvelope(await admin.raw('DELETE', `/api/v2/extensions/${bad}`), 400, 'id is malformed')
  })

  it('an unknown id is a 404', async () => {
    await expectEnvelope(await admin.raw('GET', '/api/v2/extensions/2147483647'), 404, 'no extension found matching extension id: 2147483647')
  })
})

describe('permissions', () => {
  it('Read-Only and User may read but not write (403, nothing stored)', async () => {
    const installed = (await upsertExtension(admin, smallDoc('Perm Ext', 'PRM'))).data
    for (const role of ['Read-Only', 'User']) {
      const { client: c } = await userWithRole(role)
      expect((await listExtensions(c)).data.extensions.some((e) => e.id === installed.id)).toBe(true)
      expect((await getExtension(c, installed.id)).data).toEqual(smallDoc('Perm Ext', 'PRM'))
      await expectEnvelope(await c.raw('PUT', '/api/v2/extensions', smallDoc(`By ${role}`, 'NOPE')), 403)
      await expectEnvelope(await c.raw('DELETE', `/api/v2/extensions/${installed.id}`), 403)
    }
    expect(await extensionIdByName(admin, 'By Read-Only')).toBeUndefined()
    expect(await extensionIdByName(admin, 'By User')).toBeUndefined()
    expect((await getExtension(admin, installed.id)).data.schema.name).toBe('Perm Ext')
    await deleteExtension(admin, installed.id)
  })

  it('Upload-Only may not even read (403); no credentials is a 401', async () => {
    const { client: c } = await userWithRole('Upload-Only')
    await expectEnvelope(await c.raw('GET', '/api/v2/extensions'), 403)
    await expectEnvelope(await c.raw('GET', '/api/v2/extensions/1'), 403)
    await expectEnvelope(await c.raw('PUT', '/api/v2/extensions', smallDoc('Upload', 'UPL')), 403)
    await expectEnvelope(await client().raw('GET', '/api/v2/extensions'), 401)
    await expectEnvelope(await client().raw('PUT', '/api/v2/extensions', smallDoc('Anon', 'ANO')), 401)
    expect(await extensionIdByName(admin, 'Upload')).toBeUndefined()
  })

  it('an Administrator session (JWT) may write too', async () => {
    const { client: c, admin: session } = await userWithRole('Administrator')
    const r = await upsertExtension(c, smallDoc('By Admin', 'BYA'))
    expect(r.data.created).toBe(true)
    expect((await deleteExtension(session, r.data.id)).data.deleted).toBe(true)
  })
})
