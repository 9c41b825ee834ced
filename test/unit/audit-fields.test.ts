/**
 * src/audit/fields.ts: an audit entry's fields are stored whole up to 1 MiB of UTF-8; above it, the largest values are
 * replaced by an explicit marker with the SHA-256 of their JSON (never a shortened copy); secrets are dropped at any
 * depth and nothing else is. And the route table keeps every audited change under the bound.
 */
import { describe, expect, it } from 'vitest'
import { AUDIT_FIELDS_MAX_BYTES, AUDIT_PAGE_FIELDS_CHARS, boundFields, inlineFieldsMax, scrubFields, tooLargeForPage } from '../../src/audit/fields'
import { ROUTES } from '../../src/app'

async function sha256(text: string): Promise<string> {
  const d = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text))
  return [...new Uint8Array(d)].map((b) => b.toString(16).padStart(2, '0')).join('')
}

describe('boundFields', () => {
  it('keeps fields under 1 MiB whole: long lists and long strings included', () => {
    const fields = { id: 7, remove: Array.from({ length: 5000 }, (_, i) => `S-1-5-21-1-${i}`), rule: 'x'.repeat(200_000) + ' SELECTING PART' }
    const json = boundFields(fields)
    expect(json.length).toBeLessThan(AUDIT_FIELDS_MAX_BYTES)
    expect(JSON.parse(json)).toEqual(fields)
  })

  it('at exactly the bound the fields stay whole; one byte more and the large value becomes a digest marker', async () => {
    const base = JSON.stringify({ id: 1, big: '' }).length
    const exact = { id: 1, big: 'a'.repeat(AUDIT_FIELDS_MAX_BYTES - base) }
    expect(boundFields(exact)).toBe(JSON.stringify(exact))
    const over = { id: 1, big: 'a'.repeat(AUDIT_FIELDS_MAX_BYTES - base + 1) }
    const stored = JSON.parse(boundFields(over))
    expect(stored.id).toBe(1)
    expect(stored.big).toEqual({ omitted: true, sha256: await sha256(JSON.stringify(over.big)), chars: over.big.length })
  })

  it('measures UTF-8 bytes, not characters (a D1 row holds 2,000,000 bytes)', () => {
    // 400,000 characters of three bytes each: 1.2 MB of UTF-8, under 1 MiB of characters
    const fields = { name: '\u20ac'.repeat(400_000) }
    const stored = JSON.parse(boundFields(fields))
    expect(stored.name).toMatchObject({ omitted: true, chars: 400_000 })
  })

  it('replaces the largest values first and keeps the small ones; the digest is stable and names a list\'s length', async () => {
    const seeds = Array.from({ length: 40_000 }, (_, i) => ({ type: 1, value: `S-1-5-21-42-${i}` }))
    const fields = { asset_group_tag_id: 1, seeds, seeds_removed: [{ type: 1, value: 'S-1-5-21-42-120' }], rule: 'r'.repeat(600_000) }
    const a = JSON.parse(boundFields(fields))
    const b = JSON.parse(boundFields(structuredClone(fields)))
    expect(a).toEqual(b)
    expect(a.asset_group_tag_id).toBe(1)
    expect(a.seeds_removed).toEqual(fields.seeds_removed)
    expect(a.seeds).toEqual({ omitted: true, sha256: await sha256(JSON.stringify(seeds)), items: 40_000 })
    // the rule alone fits once the seeds are a marker: it stays whole
    expect(a.rule).toBe(fields.rule)
    expect(new TextEncoder().encode(JSON.stringify(a)).length).toBeLessThanOrEqual(AUDIT_FIELDS_MAX_BYTES)
  })
})

describe('scrubFields', () => {
  it('drops keys that name a secret at any depth, and cuts nothing else', () => {
    const list = Array.from({ length: 150 }, (_, i) => ({ sid: `S-${i}`, token_key: 'k' }))
    const out = scrubFields({ secret: 's', nested: { password: 'p', keep: 'y'.repeat(5000) }, list }) as Record<string, unknown>
    expect(out).toEqual({ nested: { keep: 'y'.repeat(5000) }, list: list.map((x) => ({ sid: x.sid })) })
  })
})

describe('serving large entries', () => {
  it('a page serves at most its budget inline, 1 KiB per entry at least, and a page of up to 8 entries whole', () => {
    expect(inlineFieldsMax(1)).toBe(AUDIT_FIELDS_MAX_BYTES)
    expect(inlineFieldsMax(8)).toBe(AUDIT_FIELDS_MAX_BYTES)
    expect(inlineFieldsMax(1000)).toBe(Math.floor(AUDIT_PAGE_FIELDS_CHARS / 1000))
    expect(inlineFieldsMax(10_000)).toBe(1024)
    expect(tooLargeForPage(12, 70_000)).toMatchObject({ omitted: true, chars: 70_000, reason: expect.stringContaining('id=eq:12&limit=1') })
  })
})

describe('every audited route keeps its whole change under the bound', () => {
  type Decl = { fields?: (i: { params: unknown; query: unknown; body: unknown }) => Record<string, unknown> }
  const audited = ROUTES.map((r) => r.def).filter((d) => d.audit && !('exempt' in d.audit) && d.body)
  // a body larger than 256 KiB may be audited only by what names it (a name, a slug, a version), never copied
  const blob = 'B'.repeat(2_000_000)
  const largeBody = { name: 'n', slug: 's', schema: { name: 'n', version: '1', nodes: blob }, metadata: blob, metadata_xml: blob, config: { blob } }

  it('a JSON or form body that is copied into the entry is at most 256 KiB (body, ids, added and removed seeds: under 1 MiB)', () => {
    expect(audited.length).toBeGreaterThan(10)
    for (const d of audited) {
      const max = d.body!.maxBytes ?? 0
      if (d.body!.kind !== 'raw' && max * 3 + 64 * 1024 <= 1024 * 1024) continue
      const fields = (d.audit as Decl).fields?.({ params: { id: '1' }, query: {}, body: d.body!.kind === 'raw' ? blob : largeBody }) ?? {}
      expect(JSON.stringify(fields).length, `${d.method} ${d.path} (body up to ${max} bytes)`).toBeLessThan(1000)
    }
  })
})
