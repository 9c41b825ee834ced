import { beforeAll, describe, expect, it } from 'vitest'
import { adminToken, env, expectEnvelope } from '../helpers'
import type { EdgeHoundClient } from '../../src/client'
import { deleteExtension, getExtension, listExtensions, upsertExtension } from '../../src/client/extensions'
import { loadKindCatalog } from '../../src/extensions/catalog'
import { clone, GITHUB, smallDoc } from '../fixtures/extensions/docs'

let admin: EdgeHoundClient

beforeAll(async () => {
  admin = await adminToken()
})

const put = (body: string | Uint8Array | Record<string, unknown>, contentType?: string) =>
  admin.raw('PUT', '/api/v2/extensions', body, contentType ? { contentType, headers: { 'Content-Type': contentType } } : undefined)

/** The installed state, to prove that a refused payload changed nothing. */
async function snapshot() {
  const version = await env.DB.prepare('SELECT version FROM extension_catalog_version').first<{ version: string }>()
  const counts = await env.DB.prepare(
    `SELECT (SELECT count(*) FROM extensions) AS e, (SELECT count(*) FROM extension_kinds) AS k, (SELECT count(*) FROM extension_environments) AS v,
            (SELECT count(*) FROM extension_environment_principals) AS p, (SELECT count(*) FROM extension_findings) AS f`,
  ).first()
  return { version: version!.version, counts, list: (await listExtensions(admin)).data.extensions }
}

describe('transport errors', () => {
  it('a content type other than JSON is a 415', async () => {
    const before = await snapshot()
    for (const ct of ['text/plain', 'application/x-www-form-urlencoded', 'application/zip']) {
      const res = await put(JSON.stringify(smallDoc('Ct', 'CT')), ct)
      await expectEnvelope(res, 415, `unsupported content type "${ct}": expected application/json`)
    }
    const noType = await admin.raw('PUT', '/api/v2/extensions', new TextEncoder().encode(JSON.stringify(smallDoc('Ct', 'CT'))))
    await expectEnvelope(noType, 415, 'unsupported content type "(none)"')
    expect(await snapshot()).toEqual(before)
  })

  it('application/json with a charset parameter is accepted', async () => {
    const res = await put(JSON.stringify(smallDoc('Charset', 'CHS')), 'application/json; charset=utf-8')
    expect(res.status).toBe(200)
    const body = (await res.json()) as { data: { id: number } }
    await deleteExtension(admin, body.data.id)
  })

  it('a body over 10 MiB is a 413', async () => {
    const before = await snapshot()
    const big = new Uint8Array(10 * 1024 * 1024 + 1).fill(0x20)
    const res = await put(big, 'application/json')
    await expectEnvelope(res, 413, 'request body exceeds the limit of 10485760 bytes')
    expect(await snapshot()).toEqual(before)
  })

  it.each([
    ['{"schema": ', 'the request body is not valid JSON'],
    ['{"schema": {}}}', 'the request body is not valid JSON'],
    ['not json at all', 'the request body is not valid JSON'],
  ])('garbage %j is a 400', async (text, message) => {
    const res = await put(text, 'application/json')
    const body = await expectEnvelope(res, 400, message)
    expect(body.errors[0].context).toBe('body')
  })

  it('an empty body is a 400', async () => {
    await expectEnvelope(await admin.raw('PUT', '/api/v2/extensions', '', { contentType: 'application/json' }), 400, 'a JSON request body is required')
  })

  it.each([
    ['[]', 'not an array'],
    ['null', 'not null'],
    ['"extension"', 'not a string'],
    ['42', 'not a number'],
  ])('valid JSON that is not an object (%s) is a 400', async (text, what) => {
    const res = await put(text, 'application/json')
    const body = await expectEnvelope(res, 400)
    expect(body.errors).toEqual([{ context: 'body', message: `the request body must be a JSON object (a graph extension document), ${what}` }])
  })
})

describe('validation through the API', () => {
  it('reports every violation at once, each with its JSON path, and stores nothing', async () => {
    const before = await snapshot()
    const d = clone(smallDoc('Many', 'tag_many')) as Record<string, any>
    d.schema.version = '1'
    d.node_kinds.push({ name: 'tag_many_X', color: '#12345', colour: 'red' })
    d.relationship_kinds[0].is_traversable = 'true'
    d.environments[0].source_kind = ''
    d.relationship_findings[0].remediation.short_remediation = '<a href="javascript:void(0)">fix</a>'
    delete d.relationship_findings[0].remediation.long_description
    const res = await put(d)
    const body = await expectEnvelope(res, 400)
    expect(body.errors).toEqual([
      { context: 'schema.version', message: expect.stringContaining('"1" is not a semantic version') },
      { context: 'schema.namespace', message: 'namespace "tag_many" uses the reserved namespace "tag"' },
      { context: 'node_kinds[2].color', message: 'must be a hex colour of the form #RGB or #RRGGBB' },
      { context: 'node_kinds[2].colour', message: 'unknown member "colour"' },
      { context: 'relationship_kinds[0].is_traversable', message: 'must be a boolean, not string' },
      { context: 'environments[0].source_kind', message: 'must not be blank' },
      { context: 'relationship_findings[0].remediation.long_description', message: 'is required' },
      { context: 'relationship_findings[0].remediation.short_remediation', message: 'unsafe Markdown: contains a javascript: link' },
    ])
    expect(await snapshot()).toEqual(before)
  })

  it.each(['tag', 'TAG', 'Tag_Mine'])('reserved namespace %s is a 400', async (ns) => {
    const res = await put(smallDoc('Reserved', ns))
    const body = await expectEnvelope(res, 400, `namespace "${ns}" uses the reserved namespace "tag"`)
    expect(body.errors).toHaveLength(1)
    expect(body.errors[0].context).toBe('schema.namespace')
  })

  it('a kind or finding of another installed extension is a 400 naming it; nothing changes on either side', async () => {
    const okta = (await upsertExtension(admin, smallDoc('Okta', 'OKTA'))).data
    const before = await snapshot()
    const thief = smallDoc('Thief', 'TH')
    thief.node_kinds.push({ name: 'OKTA_User' } as never)
    // a namespace may be shared; kinds may not
    const sameNs = smallDoc('Okta Two', 'OKTA')
    sameNs.node_kinds[1].name = 'OKTA_Group'
    sameNs.environments[0].principal_kinds = ['OKTA_Group']
    for (const [doc, context, name] of [
      [thief, 'node_kinds[2].name', 'OKTA_User'],
      [sameNs, 'node_kinds[0].name', 'OKTA_Tenant'],
    ] as const) {
      const res = await put(doc)
      const body = await expectEnvelope(res, 400)
      expect(body.errors).toContainEqual({ context, message: `kind "${name}" already belongs to the installed extension "Okta" (Okta display)` })
    }
    expect(await snapshot()).toEqual(before)
    expect((await getExtension(admin, okta.id)).data).toEqual(smallDoc('Okta', 'OKTA'))
    await deleteExtension(admin, okta.id)
  })

  it('a kind of a built-in extension is a 400 naming the built-in', async () => {
    // Azure's MS Graph permission edges contain underscores, so a namespace can reach them.
    const d = smallDoc('Graph Perms', 'AZMGApplication')
    d.relationship_kinds.push({ name: 'AZMGApplication_ReadWrite_All', is_traversable: true })
    const res = await put(d)
    const body = await expectEnvelope(res, 400)
    expect(body.errors).toEqual([
      { context: 'relationship_kinds[1].name', message: 'kind "AZMGApplication_ReadWrite_All" already belongs to the built-in extension "AZ" (Azure)' },
    ])
    const cat = await loadKindCatalog(env.DB)
    expect(cat.relationshipKinds.get('AZMGApplication_ReadWrite_All')).toEqual({ traversable: false, extensionName: 'AZ' })
  })
})

describe('large documents', () => {
  it('a document of several MB is stored through chunked statements and reads back equal', async () => {
    const d = clone(GITHUB)
    d.schema.name = 'Huge'
    d.schema.namespace = 'HG'
    const rename = (s: string) => s.replace(/^GH_/, 'HG_')
    d.node_kinds = Array.from({ length: 1000 }, (_, i) => ({
      name: `HG_Kind${i}`,
      display_name: `Kind ${i}`,
      description: `é${i} `.repeat(800).slice(0, 4000),
      is_display_kind: i % 2 === 0,
      icon: 'cube',
      color: '#abcdef',
    }))
    d.node_kinds[0].name = 'HG_Organization'
    d.relationship_kinds = d.relationship_kinds.map((k) => ({ ...k, name: rename(k.name) }))
    d.environments = [{ environment_kind: 'HG_Organization', source_kind: 'Huge', principal_kinds: d.node_kinds.slice(1, 900).map((k) => k.name) }]
    d.relationship_findings = d.relationship_findings.map((f) => ({
      ...f,
      name: rename(f.name),
      relationship_kind: rename(f.relationship_kind),
      environment_kind: 'HG_Organization',
      remediation: { ...f.remediation, long_remediation: 'Long **text** ü. '.repeat(1900) },
    }))
    const text = JSON.stringify(d)
    expect(new TextEncoder().encode(text).length).toBeGreaterThan(4_000_000)
    const r = await upsertExtension(admin, text)
    expect(r.data).toMatchObject({ created: true, node_kinds: 1000, environments: 1 })
    expect((await getExtension(admin, r.data.id)).data).toEqual(d)
    const cat = await loadKindCatalog(env.DB)
    expect(cat.environments.find((e) => e.environmentKind === 'HG_Organization')?.principalKinds).toHaveLength(899)
    await deleteExtension(admin, r.data.id)
  })
})
