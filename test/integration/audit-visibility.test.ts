/**
 * The audit log and environment access (issue 24, item 3; docs/audit.md "Who sees what"): a restricted Auditor is
 * served every entry, but never a hidden environment's object ids, rule texts or another user's hidden environment
 * assignments; an unrestricted Auditor is served the same entries whole. And an entry always identifies its whole
 * change: nothing past 100 list items or 1,024 characters is cut.
 */
import { env } from 'cloudflare:workers'
import { beforeAll, describe, expect, it } from 'vitest'
import { adminToken, userWithRole } from '../helpers'
import type { EdgeHoundClient } from '../../src/client'
import { createTagSelector, getTagSelector, updateAssetGroupSelectors, updateTagSelector } from '../../src/client/assetgroups'
import { listAuditLogs, type AuditLogJson } from '../../src/client/audit'
import { insertGraph, openFindingRows, runAnalysisDirect } from '../fixtures/findings/helpers'
import { D, ID, T } from '../fixtures/findings/known-graph'

const db = env.DB
let admin: EdgeHoundClient & { tokenId: string; tokenKey: string }

/** the rows of one request, as `reader` is served them */
async function rowsOf(reader: EdgeHoundClient, requestId: string): Promise<AuditLogJson[]> {
  // a page of 8 entries at most serves every entry whole (docs/audit.md)
  return (await listAuditLogs(reader, { filters: { request_id: `eq:${requestId}` }, sort_by: 'id', limit: 8 })).data.logs
}

async function send(method: string, path: string, body?: unknown): Promise<string> {
  const res = await admin.raw(method, path, body as Record<string, unknown>)
  expect(res.status, `${method} ${path}: ${await res.clone().text()}`).toBeLessThan(300)
  return res.headers.get('requestid')!
}

beforeAll(async () => {
  admin = await adminToken({ paced: true })
  await insertGraph(db)
  await runAnalysisDirect(db)
})

describe('a restricted Auditor and the audit log', () => {
  // D (the AD domain) is hidden from the restricted auditor; T (the Azure tenant) is its environment
  const RULE = `MATCH (n:User) WHERE n.name = 'RULE-TEXT-MARKER' RETURN n`
  const req: Record<string, string> = {}
  let restricted: EdgeHoundClient
  let unrestricted: EdgeHoundClient

  beforeAll(async () => {
    // object ids of the hidden environment, then of the visible one (the older API and the newer one)
    req.oldHidden = await send('PUT', '/api/v2/asset-groups/1/selectors', [{ sid: ID.HELPDESK, action: 'add', selector_name: 'helpdesk' }])
    req.oldVisible = await send('PUT', '/api/v2/asset-groups/1/selectors', [{ sid: ID.AZ_U4, action: 'add', selector_name: 'az user' }])
    req.newHidden = await send('POST', '/api/v2/asset-group-tags/1/selectors', { name: 'hidden ids', seeds: [{ type: 1, value: ID.IT }] })
    req.rule = await send('POST', '/api/v2/asset-group-tags/1/selectors', { name: 'a rule', seeds: [{ type: 2, value: RULE }] })
    // users' environment access: one in the hidden environment, one in the visible one, then widened to both
    const other = await admin.raw('POST', '/api/v2/bloodhound-users', {
      principal_name: `hidden-env-user-${Date.now()}`, roles: ['Read-Only'], all_environments: false, environment_access: [D],
    })
    expect(other.status).toBe(200)
    req.userHidden = other.headers.get('requestid')!
    const visible = await admin.raw('POST', '/api/v2/bloodhound-users', {
      principal_name: `visible-env-user-${Date.now()}`, roles: ['Read-Only'], all_environments: false, environment_access: [T],
    })
    expect(visible.status).toBe(200)
    req.userVisible = visible.headers.get('requestid')!
    const visibleId = ((await visible.json()) as { data: { id: string } }).data.id
    req.userWidened = await send('PATCH', `/api/v2/bloodhound-users/${visibleId}`, { environment_access: [T, D] })
    // a finding of the hidden environment accepted
    const finding = (await openFindingRows(db)).find((f) => f.environment_id === D && f.deleted_at === null)!
    req.acceptHidden = await send('PUT', `/api/v2/attack-paths/${finding.id}/acceptance`, { accepted: true })

    restricted = (await userWithRole('Auditor', { all_environments: false, environment_access: [T] })).client
    unrestricted = (await userWithRole('Auditor')).client
  })

  it('an unrestricted Auditor reads every entry whole', async () => {
    const text = JSON.stringify(await Promise.all(Object.values(req).map((r) => rowsOf(unrestricted, r))))
    for (const needle of [ID.HELPDESK, ID.IT, ID.AZ_U4, 'RULE-TEXT-MARKER', D, T]) expect(text).toContain(needle)
    expect((await rowsOf(unrestricted, req.userHidden)).at(-1)!.fields).toMatchObject({ environment_access: [D] })
  })

  it('a restricted Auditor is served every entry, with hidden environments redacted in intent and success rows', async () => {
    for (const [name, r] of Object.entries(req)) {
      const mine = await rowsOf(restricted, r)
      const all = await rowsOf(unrestricted, r)
      // redacted, not hidden: the same rows (intent and success) with the same ids, actions and statuses
      expect(mine.map((x) => [x.id, x.action, x.status]), name).toEqual(all.map((x) => [x.id, x.action, x.status]))
      expect(mine.map((x) => x.status), name).toEqual(['intent', 'success'])
      const hidden = !['oldVisible', 'userVisible'].includes(name)
      for (const row of mine) {
        if (hidden) expect(row.fields, name).toEqual({ redacted: expect.stringContaining('environment') })
        else expect(row.fields, name).toEqual(all.find((x) => x.id === row.id)!.fields)
      }
    }
    // what stays readable is the visible environment's data
    expect(JSON.stringify(await rowsOf(restricted, req.oldVisible))).toContain(ID.AZ_U4)
    expect((await rowsOf(restricted, req.userVisible)).at(-1)!.fields).toMatchObject({ environment_access: [T] })
  })

  it('no page of the log, whatever its filters, shows the hidden environment to a restricted Auditor', async () => {
    const pages = [
      await listAuditLogs(restricted, { limit: 10000 }),
      await listAuditLogs(restricted, { filters: { action: 'eq:CreateAssetGroupTagSelector' } }),
      await listAuditLogs(restricted, { filters: { action: 'eq:UpdateUser' }, sort_by: '-id' }),
      await listAuditLogs(restricted, { filters: { status: 'eq:intent' }, limit: 3, skip: 1 }),
    ]
    const text = JSON.stringify(pages)
    for (const needle of [D, ID.HELPDESK, ID.IT, 'RULE-TEXT-MARKER']) expect(text).not.toContain(needle)
    // the same count as an unrestricted reader: paging is unchanged
    const everything = await listAuditLogs(unrestricted, { limit: 10000 })
    expect(pages[0].count).toBe(everything.count)
    expect(pages[0].data.logs.map((l) => l.id)).toEqual(everything.data.logs.map((l) => l.id))
  })
})

describe('an audit entry identifies its whole change', () => {
  it('older API: a removal after 149 no-op items is in the intent and the success entry', async () => {
    const target = 'S-1-5-21-9999-7120'
    await updateAssetGroupSelectors(admin, 1, [{ sid: target, action: 'add', selector_name: 'target' }])
    // 150 items: every one removes an absent selector (changes nothing) but item 120, which removes `target`
    const items = Array.from({ length: 150 }, (_, i) => ({ sid: i === 119 ? target : `S-1-5-21-9999-${i}`, action: 'remove' as const }))
    const res = await admin.raw('PUT', '/api/v2/asset-groups/1/selectors', items as unknown as Record<string, unknown>)
    expect(res.status).toBe(201)
    expect(((await res.json()) as { data: { removed_selectors: { selector: string }[] } }).data.removed_selectors.map((s) => s.selector)).toEqual([target])
    const rows = await rowsOf(admin, res.headers.get('requestid')!)
    expect(rows.map((r) => [r.action, r.status])).toEqual([
      ['DeleteAssetGroupSelector', 'intent'],
      ['DeleteAssetGroupSelector', 'success'],
    ])
    for (const r of rows) {
      expect(r.fields.remove).toHaveLength(150)
      expect(r.fields.remove).toContain(target)
    }
  })

  it('newer API: replacing 150 seeds by the same without item 120 records that removal', async () => {
    const seeds = Array.from({ length: 150 }, (_, i) => ({ type: 1 as const, value: `S-1-5-21-8888-${i + 1}` }))
    const s = await createTagSelector(admin, 1, { name: 'many seeds', seeds })
    const kept = seeds.filter((_, i) => i !== 119)
    const res = await admin.raw('PATCH', `/api/v2/asset-group-tags/1/selectors/${s.data.id}`, { seeds: kept })
    expect(res.status).toBe(200)
    expect((await getTagSelector(admin, 1, s.data.id)).data.selector.seeds).toHaveLength(149)
    const [intent, success] = await rowsOf(admin, res.headers.get('requestid')!)
    expect(intent.status).toBe('intent')
    expect(intent.fields.seeds).toEqual(kept)
    expect(success.status).toBe('success')
    expect(success.fields).toMatchObject({ seeds: kept, seeds_added: [], seeds_removed: [seeds[119]] })
  })

  it('a rule padded past 1,024 characters keeps its selecting part in both entries', async () => {
    const rule = `MATCH (n:User) WHERE n.name <> '${'x'.repeat(1500)}' AND n.objectid = 'SELECTING-PART-7' RETURN n`
    const res = await admin.raw('POST', '/api/v2/asset-group-tags/1/selectors', { name: 'padded rule', seeds: [{ type: 2, value: rule }] })
    expect(res.status).toBe(201)
    const rows = await rowsOf(admin, res.headers.get('requestid')!)
    expect(rows.map((r) => r.status)).toEqual(['intent', 'success'])
    for (const r of rows) expect(r.fields.seeds).toEqual([{ type: 2, value: rule }])
    // and a later change of the same rule likewise
    const id = ((await res.json()) as { data: { id: number } }).data.id
    const changed = rule.replace('SELECTING-PART-7', 'SELECTING-PART-8')
    await updateTagSelector(admin, 1, id, { seeds: [{ type: 2, value: changed }] })
    const log = (await listAuditLogs(admin, { filters: { action: 'eq:UpdateAssetGroupTagSelector', status: 'eq:success' }, sort_by: '-id', limit: 1 })).data.logs[0]
    expect(log.fields).toMatchObject({ seeds_added: [{ type: 2, value: changed }], seeds_removed: [{ type: 2, value: rule }] })
  })

  it('a page serves large entries by reference, and a page of one serves them whole', async () => {
    const seeds = Array.from({ length: 1000 }, (_, i) => ({ type: 1, value: `S-1-5-21-7777-${'0'.repeat(40)}-${i}` }))
    const res = await admin.raw('POST', '/api/v2/asset-group-tags/1/selectors', { name: 'a thousand seeds', seeds })
    expect(res.status).toBe(201)
    const rid = res.headers.get('requestid')!
    const [intent] = await rowsOf(admin, rid)
    // a page of 10,000 entries serves 1,024 characters inline per entry; this one holds about 60,000
    const page = await listAuditLogs(admin, { filters: { request_id: `eq:${rid}` }, limit: 10000 })
    expect(page.data.logs[0].fields).toMatchObject({ omitted: true, chars: expect.any(Number) })
    expect(String(page.data.logs[0].fields.reason)).toContain(`id=eq:${intent.id}&limit=1`)
    const one = await listAuditLogs(admin, { filters: { id: `eq:${intent.id}` }, limit: 1 })
    expect(one.data.logs[0].fields.seeds).toEqual(seeds)
  })
})
