/**
 * Upload budgets (docs/budgets.md): each is decided before the work it bounds, is answered with the
 * over-budget envelope naming it, and leaves nothing written.
 *  - zip: files per upload, inflated bytes per file and per upload, all from the central directory before
 *    any byte is inflated; a member inflating past its declared size (zip bomb) is stopped at that size;
 *  - nodes and edges per upload (pass 1, before anything is written);
 *  - staging statements per upload (the D1 statement budget), checked before each statement is sent.
 */
import { env } from 'cloudflare:test'
import { describe, expect, it } from 'vitest'
import { deflateSync, zipSync, strToU8 } from 'fflate'
import { uploadParts, MAX_INFLATED_BYTES, MAX_MEMBER_BYTES, MAX_MEMBERS } from '../../src/graph/upload'
import { inflateMember, listZip, STEP } from '../../src/graph/zip'
import { validateUpload, writeUpload, MAX_ELEMENTS } from '../../src/graph/ingest'
import { ApiError } from '../../src/http/errors'
import { testAudit } from '../fixtures/audit'

const real = (env as unknown as { DB: D1Database }).DB
const ctx = { environmentTypes: new Map<string, string>() }

function thrown(f: () => unknown): ApiError {
  try {
    f()
  } catch (e) {
    expect(e).toBeInstanceOf(ApiError)
    return e as ApiError
  }
  throw new Error('expected an ApiError')
}

/** Rewrites the uncompressed size the central directory declares for every member (or only the first). */
function declareSize(zip: Uint8Array, size: number, all = false): Uint8Array {
  const z = zip.slice()
  const view = new DataView(z.buffer)
  let done = 0
  for (let i = 0; i + 4 <= z.length; i++)
    if (view.getUint32(i, true) === 0x02014b50) {
      view.setUint32(i + 24, size, true)
      done++
      if (!all) return z
    }
  if (!done) throw new Error('no central directory')
  return z
}

/** A one-member zip whose member is `raw` deflate data declaring `size` (crafted: zipSync cannot lie). */
function zipOf(name: string, deflated: Uint8Array, size: number): Uint8Array {
  const n = strToU8(name)
  const local = new Uint8Array(30 + n.length)
  const lv = new DataView(local.buffer)
  lv.setUint32(0, 0x04034b50, true)
  lv.setUint16(4, 20, true)
  lv.setUint16(8, 8, true)
  lv.setUint32(18, deflated.length, true)
  lv.setUint32(22, size, true)
  lv.setUint16(26, n.length, true)
  local.set(n, 30)
  const central = new Uint8Array(46 + n.length)
  const cv = new DataView(central.buffer)
  cv.setUint32(0, 0x02014b50, true)
  cv.setUint16(4, 20, true)
  cv.setUint16(6, 20, true)
  cv.setUint16(10, 8, true)
  cv.setUint32(20, deflated.length, true)
  cv.setUint32(24, size, true)
  cv.setUint16(28, n.length, true)
  cv.setUint32(42, 0, true)
  central.set(n, 46)
  const eocd = new Uint8Array(22)
  const ev = new DataView(eocd.buffer)
  ev.setUint32(0, 0x06054b50, true)
  ev.setUint16(8, 1, true)
  ev.setUint16(10, 1, true)
  ev.setUint32(12, central.length, true)
  ev.setUint32(16, local.length + deflated.length, true)
  const out = new Uint8Array(local.length + deflated.length + central.length + eocd.length)
  out.set(local, 0)
  out.set(deflated, local.length)
  out.set(central, local.length + deflated.length)
  out.set(eocd, local.length + deflated.length + central.length)
  return out
}

describe('zip reading (src/graph/zip.ts)', () => {
  it('lists members from the central directory and inflates stored and deflated members exactly', () => {
    const a = strToU8('{"graph":{"nodes":[]}}')
    const b = strToU8('x'.repeat(10_000))
    const zip = zipSync({ 'a.json': [a, { level: 0 }], 'dir/b.json': [b, { level: 9 }] })
    const entries = listZip(zip)
    expect(entries.map((e) => [e.name, e.method, e.size])).toEqual([
      ['a.json', 0, a.length],
      ['dir/b.json', 8, b.length],
    ])
    expect(inflateMember(zip, entries[0], 1 << 20)).toEqual({ ok: true, data: a })
    expect(inflateMember(zip, entries[1], 1 << 20)).toEqual({ ok: true, data: b })
  })

  it('stops a member at its declared size however far it would inflate (zip bomb), and at the caller’s limit', () => {
    // 16 MiB of zeros deflate to ~16 KB: several input steps, each able to inflate to MiBs.
    const deflated = deflateSync(new Uint8Array(16 * 1024 * 1024), { level: 9 })
    expect(deflated.length).toBeGreaterThan(STEP)
    const bomb = zipOf('bomb.json', deflated, 1024)
    const [entry] = listZip(bomb)
    expect(inflateMember(bomb, entry, 1 << 30)).toEqual({ ok: false, reason: 'over' })
    const honest = zipOf('big.json', deflated, 16 * 1024 * 1024)
    const [e2] = listZip(honest)
    expect(inflateMember(honest, e2, 1024 * 1024)).toEqual({ ok: false, reason: 'over' })
    expect(inflateMember(honest, e2, 16 * 1024 * 1024).ok).toBe(true)
  })

  it('a member inflating to less than it declares, or not inflating, is refused', () => {
    const short = zipOf('short.json', deflateSync(strToU8('{}')), 100)
    expect(inflateMember(short, listZip(short)[0], 1 << 20)).toEqual({ ok: false, reason: 'size' })
    const junk = zipOf('junk.json', new Uint8Array([0xff, 0xff, 0xff, 0xff]), 100)
    expect(inflateMember(junk, listZip(junk)[0], 1 << 20)).toEqual({ ok: false, reason: 'corrupt' })
  })

  it('malformed archives are refused as invalid zip (400)', () => {
    const zip = zipSync({ 'a.json': strToU8('{}') })
    for (const bad of [zip.subarray(0, zip.length - 5), new Uint8Array(10), strToU8('PK not a zip at all, honestly')]) {
      const e = thrown(() => uploadParts(bad, 'application/zip', 'x.zip'))
      expect([e.status, e.message]).toEqual([400, 'the upload is not a valid zip archive'])
    }
  })
})

describe('upload budgets, decided before inflating', () => {
  it(`a member declaring more than ${MAX_MEMBER_BYTES} bytes: 413 naming the budget`, () => {
    const zip = declareSize(zipSync({ 'a.json': strToU8('{}') }), MAX_MEMBER_BYTES + 1)
    const e = thrown(() => uploadParts(zip, 'application/zip', 'x.zip'))
    expect(e.status).toBe(413)
    expect(e.details).toEqual([
      {
        context: 'a.json',
        message: `"a.json" inflates to ${MAX_MEMBER_BYTES + 1} bytes, which exceeds the inflated bytes per file budget of ${MAX_MEMBER_BYTES}: split the file into several files`,
      },
    ])
  })

  it(`members declaring more than ${MAX_INFLATED_BYTES} bytes in total: 413 before any is inflated`, () => {
    // 100 members each declaring 20 MiB (the 2 GiB archive): every member is under the per-file
    // budget, the sum is not. The data is not what is declared, so inflating anything would fail otherwise.
    const files = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`m${i}.json`, strToU8('{}')]))
    const zip = declareSize(zipSync(files), MAX_MEMBER_BYTES, true)
    const e = thrown(() => uploadParts(zip, 'application/zip', 'x.zip'))
    expect(e.status).toBe(413)
    expect(e.details).toEqual([
      {
        context: 'body',
        message: `the zip archive inflates to ${100 * MAX_MEMBER_BYTES} bytes, which exceeds the inflated bytes per upload budget of ${MAX_INFLATED_BYTES}: split the archive into several uploads to the same job`,
      },
    ])
  })

  it(`more than ${MAX_MEMBERS} files: 413`, () => {
    const files = Object.fromEntries(Array.from({ length: MAX_MEMBERS + 1 }, (_, i) => [`m${i}.json`, strToU8('{}')]))
    const e = thrown(() => uploadParts(zipSync(files), 'application/zip', 'x.zip'))
    expect(e.status).toBe(413)
    expect(e.message).toBe(
      `the zip archive's file count (${MAX_MEMBERS + 1}) exceeds the files per upload budget of ${MAX_MEMBERS}: split the archive into several uploads to the same job`,
    )
  })

  it('a member inflating past its declared size is refused when loaded (400), never cut and parsed', () => {
    const big = '{"graph":{"nodes":[' + '{"id":"x","kinds":["A"]},'.repeat(50_000) + '{"id":"y","kinds":["A"]}]}}'
    const zip = declareSize(zipSync({ 'bomb.json': strToU8(big) }, { level: 9 }), 64)
    const [part] = uploadParts(zip, 'application/zip', 'x.zip')
    const e = thrown(() => part.load())
    expect([e.status, e.details[0].context]).toEqual([400, 'bomb.json'])
    expect(e.message).toContain('inflates to more than the 64 bytes it declares')
    // and pass 1 reports it as the upload's error (nothing is written: pass 2 never starts)
    const v = thrown(() => validateUpload([part], ctx))
    expect(v.details.map((d) => d.message).join('\n')).toContain('inflates to more than the 64 bytes it declares')
  })
})

describe('an accepted archive is inflated once', () => {
  it('every pass gets the same inflated member: the archive holds at most its inflated budget, never a copy per pass', () => {
    const doc = (i: number) => strToU8(`{"graph":{"nodes":[{"id":"M${i}","kinds":["A"]}]}}`)
    const parts = uploadParts(zipSync({ 'a.json': doc(1), 'b.json': doc(2) }, { level: 9 }), 'application/zip', 'x.zip')
    const first = parts.map((p) => p.load())
    expect(parts.map((p) => p.load())).toEqual(first)
    parts.forEach((p, i) => expect(p.load()).toBe(first[i])) // the same bytes, not a second inflation
    expect(new TextDecoder().decode(first[1])).toContain('"M2"')
  })

  it('a member that cannot be inflated is refused on every load (nothing kept)', () => {
    const big = '{"graph":{"nodes":[' + '{"id":"x","kinds":["A"]},'.repeat(10_000) + '{"id":"y","kinds":["A"]}]}}'
    const [part] = uploadParts(declareSize(zipSync({ 'bomb.json': strToU8(big) }, { level: 9 }), 64), 'application/zip', 'x.zip')
    expect(thrown(() => part.load()).status).toBe(400)
    expect(thrown(() => part.load()).status).toBe(400)
  })
})

describe('nodes and edges per upload', () => {
  const payload = (n: number) => strToU8(`{"graph":{"nodes":[${Array.from({ length: n }, (_, i) => `{"id":"E${i}","kinds":["A"]}`).join(',')}]}}`)

  it(`${MAX_ELEMENTS} are accepted, one more is refused with 413 in pass 1`, () => {
    expect(validateUpload(uploadParts(payload(MAX_ELEMENTS), 'application/json', 'ok.json'), ctx).nodes).toBe(MAX_ELEMENTS)
    const e = thrown(() => validateUpload(uploadParts(payload(MAX_ELEMENTS + 1), 'application/json', 'big.json'), ctx))
    expect(e.status).toBe(413)
    expect(e.details).toEqual([
      {
        context: 'body',
        message: `the upload's ${MAX_ELEMENTS + 1} (or more) nodes and edges exceeds the nodes and edges per upload budget of ${MAX_ELEMENTS}: split the data into several uploads to the same job`,
      },
    ])
  }, 60_000)

  it('counted across the members of a zip', () => {
    const half = payload(MAX_ELEMENTS / 2 + 1)
    const zip = zipSync({ 'a.json': half, 'b.json': half })
    expect(() => validateUpload(uploadParts(zip, 'application/zip', 'x.zip'), ctx)).toThrow(/nodes and edges per upload budget/)
  }, 60_000)
})

describe('D1 statements per upload', () => {
  const NOW = '2026-03-02T00:00:00.000Z'
  function upload(prefix: string) {
    const pad = 'x'.repeat(300)
    const nodes = Array.from({ length: 2_000 }, (_, i) => ({ id: `${prefix}-${i}`, kinds: ['User'], properties: { pad } }))
    const edges = Array.from({ length: 2_000 }, (_, i) => ({ start: { value: `${prefix}-${i}` }, end: { value: `${prefix}-${(i + 1) % 2_000}` }, kind: 'MemberOf' }))
    const parts = uploadParts(strToU8(JSON.stringify({ graph: { nodes, edges } })), 'application/json', 'a.json')
    return { parts, checked: validateUpload(parts, ctx) }
  }
  function counting() {
    let statements = 0
    let last = 0
    const db = {
      prepare: (sql: string) => real.prepare(sql),
      batch: (s: D1PreparedStatement[]) => {
        statements += s.length
        last = s.length
        return real.batch(s)
      },
    } as unknown as D1Database
    return { db, statements: () => statements, lastBatch: () => last }
  }
  /** A running job (the commit refuses one that is not running). */
  const runningJob = async () =>
    (await real
      .prepare(`INSERT INTO ingest_jobs (user_id, status, start_time, created_at, updated_at) VALUES ('u', 1, ?1, ?1, ?1) RETURNING id`)
      .bind(NOW)
      .first<{ id: number }>())!.id
  const count = async (sql: string) => (await real.prepare(sql).first<{ n: number }>())!.n

  it('an upload needing more staging statements than its budget is refused before the next one: 413, nothing written', async () => {
    const { parts, checked } = upload('STMT')
    // how many staging statements it needs: write it once under another prefix's database state
    const probe = counting()
    const jobId = await runningJob()
    const ok = await writeUpload(probe.db, { jobId, parts, ctx, now: NOW, environments: checked.environments, audit: testAudit('AppendFileUploadJob') })
    expect(ok.nodes).toBe(2_000)
    const needed = probe.statements() - probe.lastBatch() // the last batch is the commit
    expect(needed).toBeGreaterThan(4)
    await real.prepare(`DELETE FROM edges`).run()
    await real.prepare(`DELETE FROM nodes WHERE objectid LIKE 'STMT-%'`).run()

    const rec = counting()
    const attempt = writeUpload(rec.db, { jobId, parts, ctx, now: NOW, environments: checked.environments, maxStagingStatements: needed - 1, audit: testAudit('AppendFileUploadJob') })
    const e = await attempt.then(
      () => null,
      (err: unknown) => err,
    )
    expect(e).toBeInstanceOf(ApiError)
    expect((e as ApiError).status).toBe(413)
    expect((e as ApiError).message).toBe(
      `staging the upload's rows exceeds the staging statements per upload budget of ${needed - 1}: split the data into several uploads to the same job (fewer, larger files in a zip also need fewer statements)`,
    )
    // never more statements than the budget (plus the 2 of the clean-up), and nothing left anywhere
    expect(rec.statements()).toBeLessThanOrEqual(needed - 1 + 2)
    expect(await count(`SELECT count(*) AS n FROM nodes WHERE objectid LIKE 'STMT-%'`)).toBe(0)
    expect(await count(`SELECT count(*) AS n FROM ingest_staging`)).toBe(0)

    // exactly at the budget: written
    const done = await writeUpload(real, { jobId, parts, ctx, now: NOW, environments: checked.environments, maxStagingStatements: needed, audit: testAudit('AppendFileUploadJob') })
    expect(done.nodes).toBe(2_000)
  })
})
