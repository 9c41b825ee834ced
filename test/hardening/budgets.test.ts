/**
 * Hostile uploads against the real app (every middleware, the route as deployed): archives built to
 * cost as much CPU, memory and D1 statements as possible within the 20 MiB body limit. Each must be
 * refused quickly with the over-budget envelope, write nothing to the graph, and record the failed
 * file in the job. The budgets themselves are unit-tested in test/unit/graph-upload-budgets.test.ts.
 */
import { beforeAll, describe, expect, it } from 'vitest'
import { Deflate, strToU8, zipSync } from 'fflate'
import { env, envelopeProblem, hAdminSession, internalLeaks } from './lib'
import type { EdgeHoundClient } from '../../src/client'
import { MAX_INFLATED_BYTES, MAX_MEMBER_BYTES } from '../../src/graph/upload'

let admin: EdgeHoundClient
const db = () => (env as unknown as { DB: D1Database }).DB

beforeAll(async () => {
  admin = (await hAdminSession()).client
})

async function graphState() {
  const n = async (sql: string) => (await db().prepare(sql).first<{ n: number }>())!.n
  return {
    nodes: await n('SELECT count(*) AS n FROM nodes'),
    edges: await n('SELECT count(*) AS n FROM edges'),
    staging: await n('SELECT count(*) AS n FROM ingest_staging'),
  }
}

/**
 * A raw DEFLATE stream of `mib` MiB of one whitespace-padded JSON node: ~1 KB per MiB compressed.
 * Built in 1 MiB steps so the test itself never holds the inflated text.
 */
function deflatedPadding(mib: number): Uint8Array {
  const parts: Uint8Array[] = []
  const d = new Deflate({ level: 9 }, (chunk) => parts.push(chunk))
  d.push(strToU8('{"graph":{"nodes":[{"id":"BOMB","kinds":["A"]}]}'))
  const spaces = new Uint8Array(1024 * 1024).fill(0x20)
  for (let i = 0; i < mib; i++) d.push(spaces)
  d.push(strToU8('}'), true)
  const out = new Uint8Array(parts.reduce((s, p) => s + p.length, 0))
  let o = 0
  for (const p of parts) out.set(p, (o += p.length) - p.length)
  return out
}

/** A zip whose members are the given raw DEFLATE streams, each declaring `declared` bytes. */
function craftedZip(members: { name: string; data: Uint8Array; declared: number }[]): Uint8Array {
  const locals: Uint8Array[] = []
  const centrals: Uint8Array[] = []
  let offset = 0
  for (const m of members) {
    const name = strToU8(m.name)
    const local = new Uint8Array(30 + name.length)
    const lv = new DataView(local.buffer)
    lv.setUint32(0, 0x04034b50, true)
    lv.setUint16(4, 20, true)
    lv.setUint16(8, 8, true)
    lv.setUint32(18, m.data.length, true)
    lv.setUint32(22, m.declared, true)
    lv.setUint16(26, name.length, true)
    local.set(name, 30)
    const central = new Uint8Array(46 + name.length)
    const cv = new DataView(central.buffer)
    cv.setUint32(0, 0x02014b50, true)
    cv.setUint16(4, 20, true)
    cv.setUint16(6, 20, true)
    cv.setUint16(10, 8, true)
    cv.setUint32(20, m.data.length, true)
    cv.setUint32(24, m.declared, true)
    cv.setUint16(28, name.length, true)
    cv.setUint32(42, offset, true)
    central.set(name, 46)
    locals.push(local, m.data)
    centrals.push(central)
    offset += local.length + m.data.length
  }
  const cdSize = centrals.reduce((s, c) => s + c.length, 0)
  const eocd = new Uint8Array(22)
  const ev = new DataView(eocd.buffer)
  ev.setUint32(0, 0x06054b50, true)
  ev.setUint16(8, members.length, true)
  ev.setUint16(10, members.length, true)
  ev.setUint32(12, cdSize, true)
  ev.setUint32(16, offset, true)
  const all = [...locals, ...centrals, eocd]
  const out = new Uint8Array(all.reduce((s, p) => s + p.length, 0))
  let o = 0
  for (const p of all) out.set(p, (o += p.length) - p.length)
  return out
}

async function refused(body: Uint8Array, status: number, message: string | RegExp) {
  const jobId = (await admin.call<{ data: { id: number } }>('POST', '/api/v2/file-upload/start')).data.id
  const before = await graphState()
  const t0 = Date.now()
  const res = await admin.raw('POST', `/api/v2/file-upload/${jobId}`, body, { contentType: 'application/zip', headers: { 'X-File-Upload-Name': 'hostile.zip' } })
  const ms = Date.now() - t0
  const text = await res.text()
  expect(res.status, text).toBe(status)
  expect(envelopeProblem(res, text)).toBeNull()
  expect(internalLeaks(text)).toEqual([])
  const errors = (JSON.parse(text) as { errors: { message: string }[] }).errors
  expect(errors.map((e) => e.message).join('\n')).toMatch(message)
  expect(await graphState()).toEqual(before)
  const rec = await db().prepare('SELECT failed_files, total_files FROM ingest_jobs WHERE id = ?1').bind(jobId).first()
  expect(rec).toEqual({ failed_files: 1, total_files: 1 })
  return ms
}

describe('hostile zip uploads', () => {
  it('the issue’s archive: 100 members × 20 MiB declared (2 GiB) is refused on its declared sizes, inflating nothing', async () => {
    const one = deflatedPadding(20)
    const members = Array.from({ length: 100 }, (_, i) => ({ name: `m${i}.json`, data: one, declared: MAX_MEMBER_BYTES }))
    const zip = craftedZip(members)
    expect(zip.length).toBeLessThan(5 * 1024 * 1024)
    const ms = await refused(zip, 413, `exceeds the inflated bytes per upload budget of ${MAX_INFLATED_BYTES}`)
    expect(ms).toBeLessThan(2_000)
  })

  it('a zip bomb (one member declaring 1 KiB that inflates to 128 MiB) is stopped at 1 KiB', async () => {
    const zip = craftedZip([{ name: 'bomb.json', data: deflatedPadding(128), declared: 1024 }])
    expect(zip.length).toBeLessThan(1024 * 1024)
    const ms = await refused(zip, 400, 'inflates to more than the 1024 bytes it declares')
    // inflating all of it takes about a second of CPU; stopping at the declared size takes almost none
    expect(ms).toBeLessThan(2_000)
  }, 60_000)

  it('bombs that stay within every declared budget: 40 members each declaring 256 KiB, each inflating to 64 MiB (2.5 GiB)', async () => {
    const one = deflatedPadding(64)
    const zip = craftedZip(Array.from({ length: 40 }, (_, i) => ({ name: `b${i}.json`, data: one, declared: 256 * 1024 })))
    expect(zip.length).toBeLessThan(20 * 1024 * 1024)
    const ms = await refused(zip, 400, 'inflates to more than the 262144 bytes it declares')
    expect(ms).toBeLessThan(2_000)
  }, 60_000)

  it('an honest archive over the inflated budget (two 12 MiB members) is refused before inflating', async () => {
    const pad = (n: number) => strToU8(`{"graph":{"nodes":[{"id":"OK${n}","kinds":["A"]}]}${' '.repeat(12 * 1024 * 1024)}}`)
    const zip = zipSync({ 'a.json': pad(1), 'b.json': pad(2) }, { level: 1 })
    await refused(zip, 413, /the zip archive inflates to \d+ bytes, which exceeds the inflated bytes per upload budget/)
  }, 60_000)
})
