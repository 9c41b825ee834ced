/// <reference types="node" />
/**
 * `edgehound ingest` splitting files larger than one upload (issue 13): SharpHound / AzureHound files by
 * their `data`, OpenGraph files by `graph.nodes` then `graph.edges`, zips member by member, read as
 * streams; a part the server refuses as over a per-upload budget is halved. The fake server checks every
 * upload the way the worker would: a valid JSON document of the same format, within the size limit.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import { zipSync, strToU8 } from 'fflate'
import { run } from '../../src/cli/main'
import { envelope, FakeServer, testIO, type Recorded, startFakeServer } from './fake-server'

const TOKEN_ID = '3f1c2d4e-5a6b-4c7d-8e9f-0a1b2c3d4e5f'
const TOKEN_KEY = 'another-test-key'

let srv: FakeServer
beforeEach(async () => {
  srv = await startFakeServer(TOKEN_ID, TOKEN_KEY)
})
afterEach(() => srv.close())
const env = () => ({ EDGEHOUND_URL: srv.url, EDGEHOUND_TOKEN_ID: TOKEN_ID, EDGEHOUND_TOKEN_KEY: TOKEN_KEY })

interface Upload {
  name: string
  bytes: number
  doc: { meta?: { type: string; count: number; version?: number }; data?: unknown[]; metadata?: unknown; graph?: { nodes?: unknown[]; edges?: unknown[] } }
}

/** A job server that parses every upload, refuses (413) bodies over `limit` or with more than `maxElements` elements. */
function jobServer(limit: number, maxElements = Infinity) {
  const uploads: Upload[] = []
  let ended = 0
  srv.on('POST', '/api/v2/file-upload/start', () => ({ status: 201, json: { data: { id: 7, status: 1 } } }))
  srv.on('POST', '/api/v2/file-upload/:id', (r: Recorded) => {
    if (r.body.length > limit) return { status: 413, json: envelope(413, `request body exceeds the limit of ${limit} bytes for this route`, 'body') }
    if (r.body[0] === 0x50 && r.body[1] === 0x4b) {
      // an archive: the real server inflates and counts it; here, a finite element budget refuses it
      if (maxElements !== Infinity) return { status: 413, json: envelope(413, `the zip archive's nodes and edges exceed the nodes and edges per upload budget of ${maxElements}`, 'body') }
      uploads.push({ name: String(r.headers['x-file-upload-name']), bytes: r.body.length, doc: {} })
      return { status: 202, json: { data: { job_id: 7, files: 1, nodes: 0, edges: 0, unmatched_edges: 0, errors: [] } } }
    }
    const doc = JSON.parse(r.body.toString('utf8')) as Upload['doc']
    const n = (doc.data?.length ?? 0) + (doc.graph?.nodes?.length ?? 0) + (doc.graph?.edges?.length ?? 0)
    if (n > maxElements)
      return { status: 413, json: envelope(413, `the upload's nodes and edges (${n}) exceeds the nodes and edges per upload budget of ${maxElements}: split the file`, 'body') }
    if (doc.meta) expect(doc.meta.count).toBe(doc.data!.length) // each part counts its own data (else the server would warn)
    uploads.push({ name: String(r.headers['x-file-upload-name']), bytes: r.body.length, doc })
    return { status: 202, json: { data: { job_id: 7, file_name: 'x', files: 1, nodes: doc.graph?.nodes?.length ?? doc.data?.length ?? 0, edges: doc.graph?.edges?.length ?? 0, unmatched_edges: 0, errors: [] } } }
  })
  srv.on('POST', '/api/v2/file-upload/:id/end', () => (ended++, { status: 200 }))
  return { uploads, ended: () => ended }
}

/** SharpHound writes `data` first and `meta` last: the splitter must read the header from the end. */
function sharpHoundUsers(n: number, pad = 300): string {
  const users = Array.from({ length: n }, (_, i) => ({
    ObjectIdentifier: `S-1-5-21-1-${1000 + i}`,
    Properties: { name: `USER${i}@CORP.LOCAL`, domainsid: 'S-1-5-21-1', enabled: true, description: `d${'x'.repeat(pad)} "quoted" ]},[ braces` },
    Aces: [{ PrincipalSID: 'S-1-5-21-1-512', PrincipalType: 'Group', RightName: 'GenericAll', IsInherited: false }],
  }))
  return `{"data": [\n${users.map((u) => JSON.stringify(u)).join(',\n')}\n], "meta": {"methods": 46067, "type": "users", "count": ${n}, "version": 6}}`
}

describe('ingest: files larger than one upload are split', () => {
  it('splits a SharpHound file by data into ≤ limit uploads of the same job, every item once, in order', async () => {
    const job = jobServer(8192)
    const io = await testIO(env())
    await writeFile(path.join(io.cwd, '20260101_users.json'), sharpHoundUsers(60))
    expect(await run(['ingest', '20260101_users.json', '--max-upload-bytes', '8192'], io)).toBe(0)
    expect(job.uploads.length).toBeGreaterThan(3)
    expect(job.uploads.every((u) => u.bytes <= 8192 && u.name === '20260101_users.json')).toBe(true)
    expect(job.uploads.every((u) => u.doc.meta?.type === 'users' && u.doc.meta.version === 6)).toBe(true)
    const ids = job.uploads.flatMap((u) => u.doc.data!.map((d) => (d as { ObjectIdentifier: string }).ObjectIdentifier))
    expect(ids).toEqual(Array.from({ length: 60 }, (_, i) => `S-1-5-21-1-${1000 + i}`))
    expect(job.ended()).toBe(1)
    expect(io.err()).toMatch(/ok\s+1\/1 20260101_users\.json\s+part 1 data\[0\.\.\d+\] \(/)
    expect(io.out()).toMatch(new RegExp(`^Job 7: 1 of 1 file\\(s\\) accepted in ${job.uploads.length} uploads .*; 60 nodes`))
  })

  it('splits an OpenGraph file: every node part before the first edge part, metadata in each', async () => {
    const job = jobServer(4096)
    const io = await testIO(env())
    const nodes = Array.from({ length: 80 }, (_, i) => ({ id: `N-${i}`, kinds: ['XH_User'], properties: { name: `user ${i}` } }))
    const edges = Array.from({ length: 79 }, (_, i) => ({ start: { value: `N-${i}` }, end: { value: `N-${i + 1}` }, kind: 'XH_Knows' }))
    // edges first in the file: the splitter still sends nodes first
    await writeFile(path.join(io.cwd, 'og.json'), JSON.stringify({ $schema: 'https://example.invalid/s.json', graph: { edges, nodes }, metadata: { source_kind: 'XH' } }, null, 1))
    expect(await run(['ingest', 'og.json', '--max-upload-bytes', '4096', '--json'], io)).toBe(0)
    const kinds = job.uploads.map((u) => (u.doc.graph!.nodes ? 'n' : 'e')).join('')
    expect(kinds).toMatch(/^n+e+$/)
    expect(job.uploads.every((u) => JSON.stringify(u.doc.metadata) === '{"source_kind":"XH"}')).toBe(true)
    expect(job.uploads.flatMap((u) => u.doc.graph!.nodes ?? [])).toEqual(nodes)
    expect(job.uploads.flatMap((u) => u.doc.graph!.edges ?? [])).toEqual(edges)
    const s = JSON.parse(io.out())
    expect(s.files[0].part).toEqual({ index: 1, array: 'nodes', first: 0, count: job.uploads[0].doc.graph!.nodes!.length })
    expect(s).toMatchObject({ accepted: job.uploads.length, rejected: 0, nodes: 80, edges: 79 })
  })

  it('sends a large zip member by member: small members whole, large ones split', async () => {
    const job = jobServer(16384)
    const io = await testIO(env())
    const computers = '{"data":[{"ObjectIdentifier":"S-1-5-21-1-3001"}],"meta":{"type":"computers","count":1,"version":6}}'
    const zip = zipSync({ '20260101_users.json': strToU8(sharpHoundUsers(150)), '20260101_computers.json': strToU8(computers), 'docs/': new Uint8Array(0) }, { level: 6 })
    await writeFile(path.join(io.cwd, 'BloodHound.zip'), zip)
    expect(zip.length).toBeLessThan(16384) // small compressed, but inflates past one upload: the server would refuse it whole
    expect(await run(['ingest', 'BloodHound.zip', '--max-upload-bytes', '16384'], io)).toBe(0)
    const names = [...new Set(job.uploads.map((u) => u.name))]
    expect(names).toEqual(['BloodHound.zip/20260101_users.json', 'BloodHound.zip/20260101_computers.json'])
    expect(job.uploads.filter((u) => u.name.endsWith('users.json')).length).toBeGreaterThan(2)
    expect(job.uploads.flatMap((u) => u.doc.data ?? []).length).toBe(151)
    expect(job.uploads.find((u) => u.name.endsWith('computers.json'))!.doc).toEqual(JSON.parse(computers))
  })

  it('halves a part the server refuses as over its per-upload element budget', async () => {
    const job = jobServer(1 << 20, 700)
    const io = await testIO(env())
    const nodes = Array.from({ length: 3000 }, (_, i) => ({ id: `H-${i}`, kinds: ['XH_User'] }))
    await writeFile(path.join(io.cwd, 'big.json'), JSON.stringify({ graph: { nodes } }))
    // parts of ~2 000 nodes by size; the server takes at most 700 elements: each part is halved until it fits
    expect(await run(['ingest', 'big.json', '--max-upload-bytes', '65536'], io)).toBe(0)
    expect(io.err()).toContain('refused as over a per-upload budget')
    expect(io.err()).toContain('sending it in two halves')
    expect(job.uploads.flatMap((u) => u.doc.graph!.nodes!)).toEqual(nodes)
    expect(job.uploads.every((u) => u.doc.graph!.nodes!.length <= 700)).toBe(true)
  })

  it('a file within the byte limit that the server refuses as over another budget is sent again split; a zip file by file', async () => {
    const job = jobServer(1 << 20, 500)
    const io = await testIO(env())
    // 1 200 SharpHound items: far below 20 MiB, but (with the server's 500-element budget standing in for its
    // 200 000 rows) too many for one upload
    await writeFile(path.join(io.cwd, 'a-users.json'), sharpHoundUsers(1200, 10))
    await writeFile(path.join(io.cwd, 'b-bundle.zip'), zipSync({ 'groups.json': strToU8(sharpHoundUsers(900, 10)), 'small.json': strToU8('{"graph":{"nodes":[]}}') }))
    expect(await run(['ingest', '.'], io)).toBe(0)
    expect(io.err()).toContain('a-users.json')
    expect(io.err()).toMatch(/refused as over a per-upload budget .*; splitting it/)
    expect(io.err()).toMatch(/refused as over a per-upload budget .*; sending its files one by one/)
    const users = job.uploads.filter((u) => u.name === 'a-users.json')
    expect(users.flatMap((u) => u.doc.data!).length).toBe(1200)
    expect(users.every((u) => u.doc.data!.length <= 500)).toBe(true)
    expect(job.uploads.filter((u) => u.name === 'b-bundle.zip/groups.json').flatMap((u) => u.doc.data!).length).toBe(900)
    expect(job.uploads.some((u) => u.name === 'b-bundle.zip/small.json')).toBe(true)
    expect(io.out()).toMatch(/^Job 7: 2 of 2 file\(s\) accepted in \d+ uploads/)
  })

  it('refuses what cannot be split, uploading nothing of it: another format, a truncated file, an element larger than an upload', async () => {
    const job = jobServer(4096)
    const io = await testIO(env())
    await writeFile(path.join(io.cwd, 'a-other.json'), JSON.stringify({ rows: Array.from({ length: 500 }, (_, i) => ({ i })) }))
    await writeFile(path.join(io.cwd, 'b-truncated.json'), sharpHoundUsers(40).slice(0, 6000))
    await writeFile(path.join(io.cwd, 'c-huge.json'), JSON.stringify({ graph: { nodes: [{ id: 'x', kinds: ['K'], properties: { blob: 'y'.repeat(5000) } }] } }))
    await writeFile(path.join(io.cwd, 'd-ok.json'), '{"graph":{"nodes":[]}}')
    expect(await run(['ingest', '.', '--max-upload-bytes', '4096', '--json'], io)).toBe(1)
    const s = JSON.parse(io.out())
    expect(job.uploads.map((u) => u.name)).toEqual(['d-ok.json'])
    const err = (f: string) => s.files.find((x: { file: string }) => x.file === f).error as string
    expect(err('a-other.json')).toContain('not a SharpHound/AzureHound file')
    expect(err('b-truncated.json')).toContain('the document ends early (truncated?)')
    expect(err('c-huge.json')).toMatch(/graph\.nodes\[0\] is \d+ bytes: larger than one upload/)
    expect(s).toMatchObject({ accepted: 1, rejected: 3, ended: true })
  })

  it('a SharpHound zip of a 100 000-user domain goes through in one command', async () => {
    const job = jobServer(20 * 1024 * 1024)
    const io = await testIO(env())
    const n = 100_000
    const zip = zipSync({ '20260101_users.json': strToU8(sharpHoundUsers(n, 120)) }, { level: 1 })
    await writeFile(path.join(io.cwd, 'domain.zip'), zip)
    const before = process.memoryUsage().rss
    expect(await run(['ingest', 'domain.zip', '--json'], io)).toBe(0)
    const s = JSON.parse(io.out())
    expect(s).toMatchObject({ rejected: 0, nodes: n, ended: true })
    expect(job.uploads.reduce((c, u) => c + u.doc.data!.length, 0)).toBe(n)
    expect(job.uploads.every((u) => u.bytes <= 20 * 1024 * 1024)).toBe(true)
    expect(job.uploads.length).toBe(n / 2000)
    // the inflated member (~40 MiB) is never held whole by the CLI: growth stays around a few parts
    expect(process.memoryUsage().rss - before).toBeLessThan(400 * 1024 * 1024)
  }, 120_000)
})
