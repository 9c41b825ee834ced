/**
 * /api/v2/custom-nodes (BloodHound's custom node kinds): shapes, BloodHound's messages for every refused body,
 * 409 on a duplicate (nothing created), 404 for an unknown kind, permissions (reads: any caller; writes:
 * graph/Ingest), the stored rows and the audit rows.
 */
import { describe, expect, it } from 'vitest'
import { adminSession, client, env, expectEnvelope, userWithRole } from '../helpers'

const db = () => env.DB
const rows = async () => (await db().prepare('SELECT kind_name, icon_name, icon_color FROM custom_node_kinds ORDER BY kind_name').all()).results
const icon = (name: string, color?: string) => ({ icon: { type: 'font-awesome', name, ...(color === undefined ? {} : { color }) } })

describe('/api/v2/custom-nodes', () => {
  it('creates kinds in one request (201, BloodHound shape, #FFFFFF by default), lists and reads them; a duplicate is a 409 that creates nothing', async () => {
    const admin = await adminSession()
    const res = await admin.raw('POST', '/api/v2/custom-nodes', { custom_types: { CN_Person: icon('user', '#12ab34'), CN_Box: icon('box') } })
    expect(res.status).toBe(201)
    const created = ((await res.json()) as { data: { id: number; kindName: string; config: { icon: { type: string; name: string; color: string } } }[] }).data
    expect(created.map((k) => k.kindName).sort()).toEqual(['CN_Box', 'CN_Person'])
    expect(created.find((k) => k.kindName === 'CN_Box')!.config.icon).toEqual({ type: 'font-awesome', name: 'box', color: '#FFFFFF' })
    expect(await rows()).toEqual([
      { kind_name: 'CN_Box', icon_name: 'box', icon_color: '#FFFFFF' },
      { kind_name: 'CN_Person', icon_name: 'user', icon_color: '#12ab34' },
    ])
    const list = ((await (await admin.raw('GET', '/api/v2/custom-nodes')).json()) as { data: { kindName: string }[] }).data
    expect(list.map((k) => k.kindName)).toEqual(['CN_Person', 'CN_Box'].filter((n) => created.some((c) => c.kindName === n)).sort((a, b) => created.find((c) => c.kindName === a)!.id - created.find((c) => c.kindName === b)!.id))
    const one = ((await (await admin.raw('GET', '/api/v2/custom-nodes/CN_Person')).json()) as { data: unknown }).data
    expect(one).toEqual(created.find((k) => k.kindName === 'CN_Person'))
    // a duplicate among new ones: 409, and the new one is not created either
    await expectEnvelope(await admin.raw('POST', '/api/v2/custom-nodes', { custom_types: { CN_New: icon('star'), CN_Box: icon('box') } }), 409, 'Conflict: duplicate kind name')
    expect((await rows()).map((r) => (r as { kind_name: string }).kind_name)).toEqual(['CN_Box', 'CN_Person'])
  })

  it('updates (200) and deletes (200, empty) a kind; unknown kinds are 404 resource not found', async () => {
    const admin = await adminSession()
    expect((await admin.raw('POST', '/api/v2/custom-nodes', { custom_types: { CN_Upd: icon('user') } })).status).toBe(201)
    const put = await admin.raw('PUT', '/api/v2/custom-nodes/CN_Upd', { config: icon('server', '#abc') })
    expect(put.status).toBe(200)
    expect(((await put.json()) as { data: { config: unknown } }).data.config).toEqual({ icon: { type: 'font-awesome', name: 'server', color: '#abc' } })
    const del = await admin.raw('DELETE', '/api/v2/custom-nodes/CN_Upd')
    expect(del.status).toBe(200)
    expect(await del.text()).toBe('')
    expect(await db().prepare(`SELECT count(*) AS n FROM custom_node_kinds WHERE kind_name = 'CN_Upd'`).first('n')).toBe(0)
    await expectEnvelope(await admin.raw('GET', '/api/v2/custom-nodes/CN_Upd'), 404, 'resource not found')
    await expectEnvelope(await admin.raw('PUT', '/api/v2/custom-nodes/CN_Upd', { config: icon('user') }), 404, 'resource not found')
    await expectEnvelope(await admin.raw('DELETE', '/api/v2/custom-nodes/CN_Upd'), 404, 'resource not found')
  })

  const refused: [string, unknown, string | RegExp][] = [
    ['an icon type other than font-awesome', { custom_types: { CN_Bad: { icon: { type: 'svg', name: 'x' } } } }, 'BadRequest: invalid icon type. only Font Awesome icons are supported'],
    ['no icon', { custom_types: { CN_Bad: {} } }, 'BadRequest: invalid icon type. only Font Awesome icons are supported'],
    ['a colour that is not hex', { custom_types: { CN_Bad: icon('user', 'red') } }, "BadRequest: icon color must be a valid hexadecimal color string starting with '#' followed by 3 or 6 hex digits"],
    ['an empty kind name', { custom_types: { '': icon('user') } }, 'BadRequest: custom_types contains an entry with an empty string as a key. please remove or replace the empty key'],
    ['a kind name with punctuation', { custom_types: { 'CN Bad<script>': icon('user') } }, /may contain only letters, digits and underscores/],
    ['an icon name with markup', { custom_types: { CN_Bad: icon('<svg onload=x>') } }, /Font Awesome icon name/],
    ['custom_types not an object', { custom_types: ['CN_Bad'] }, /custom_types/],
  ]
  for (const [name, body, message] of refused)
    it(`POST refuses ${name} (400) and creates nothing`, async () => {
      const admin = await adminSession()
      const before = await rows()
      const r = await expectEnvelope(await admin.raw('POST', '/api/v2/custom-nodes', body as Record<string, unknown>), 400)
      const all = r.errors.map((e) => e.message).join('\n')
      if (typeof message === 'string') expect(all).toContain(message)
      else expect(all + r.errors.map((e) => e.context).join('\n')).toMatch(message)
      expect(await rows()).toEqual(before)
    })

  it('PUT refuses a bad config with the same messages', async () => {
    const admin = await adminSession()
    expect((await admin.raw('POST', '/api/v2/custom-nodes', { custom_types: { CN_Put: icon('user') } })).status).toBe(201)
    await expectEnvelope(await admin.raw('PUT', '/api/v2/custom-nodes/CN_Put', { config: { icon: { type: 'material', name: 'x' } } }), 400, 'BadRequest: invalid icon type')
    await expectEnvelope(await admin.raw('PUT', '/api/v2/custom-nodes/CN_Put', { config: icon('user', '#12345') }), 400, 'BadRequest: icon color must be')
  })

  it('reads need only authentication; writes need graph/Ingest (Read-Only and Auditor get 403, anonymous 401); each write is audited', async () => {
    const admin = await adminSession()
    expect((await admin.raw('POST', '/api/v2/custom-nodes', { custom_types: { CN_Perm: icon('user') } })).status).toBe(201)
    await expectEnvelope(await client().raw('GET', '/api/v2/custom-nodes'), 401)
    for (const role of ['Read-Only', 'Auditor']) {
      const { client: u } = await userWithRole(role)
      expect((await u.raw('GET', '/api/v2/custom-nodes')).status).toBe(200)
      expect((await u.raw('GET', '/api/v2/custom-nodes/CN_Perm')).status).toBe(200)
      await expectEnvelope(await u.raw('POST', '/api/v2/custom-nodes', { custom_types: { CN_Ro: icon('user') } }), 403)
      await expectEnvelope(await u.raw('PUT', '/api/v2/custom-nodes/CN_Perm', { config: icon('box') }), 403)
      await expectEnvelope(await u.raw('DELETE', '/api/v2/custom-nodes/CN_Perm'), 403)
    }
    const { client: uploader } = await userWithRole('Upload-Only')
    const res = await uploader.raw('POST', '/api/v2/custom-nodes', { custom_types: { CN_Up: icon('cloud') } })
    expect(res.status).toBe(201)
    const audit = (await db().prepare('SELECT action, status, fields FROM audit_logs WHERE request_id = ?1 ORDER BY id').bind(res.headers.get('requestid')).all<{ action: string; status: string; fields: string }>()).results
    expect(audit.map((a) => [a.action, a.status])).toEqual([
      ['CreateCustomNodeKind', 'intent'],
      ['CreateCustomNodeKind', 'success'],
    ])
    expect(JSON.parse(audit[1].fields).kinds).toEqual(['CN_Up'])
  })
})
