/// <reference types="node" />
/**
 * The worst requests and fairness (issue 19), as regression cases with budgets:
 *
 *   npm run bench:cost -- [--edges 20000] [--fair-seconds 10]
 *
 * One worker (Miniflare, shipped limits, cost-aware admission on), the generated AD + Azure graph at
 * `--edges`, then each of the issue's requests once, measured from the client (wall time, answer bytes)
 * and through the bench worker's D1 census (statements), judged against the issue's budgets:
 *   every request < 500 D1 statements, every read ≤ 1 s (wall time here: it bounds CPU + D1 time),
 *   answers ≤ 10 MB, a zip bomb refused in ≤ 1 s;
 * and the fairness case: a Read-Only user sending the most expensive read (a domain's controllers as a
 * graph) at its full allowed rate and concurrency, while another user's cheap read (available-domains)
 * is timed; its p50 must stay within 3× of its p50 without the abuser (same run).
 * Not measured here: the isolate's committed heap (the full bench's inspector does that).
 *
 * Prints a Markdown table and the JSON; writes bench/results/cost-latest.json. Exit status 1 only when
 * the harness fails (as bench/run.ts); a missed budget is reported, not fatal.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { strToU8, zipSync, Deflate } from 'fflate'
import { EdgeHoundClient } from '../src/client'
import { BenchApi, d1Statements } from './lib/api'
import { benchIp, createTokens, login } from './lib/credentials'
import { generateGraph, largeFilePayload, openGraphPayloads } from './lib/generate'
import { adminCredentials, buildBundle, ROOT, startMiniflare } from './lib/worker-host'

interface Worst {
  id: string
  request: string
  status: number
  ms: number
  bytes: number
  statements: number
  /** budgets this request must meet */
  budgets: string[]
  met: boolean
  note?: string
}

/** The census, read again once when the first read fails (a 413 answered before the body was read can
 * leave the client's kept-alive connection reset). */
async function statementsSoFar(url: string): Promise<number> {
  const n = await d1Statements(url)
  return Number.isFinite(n) ? n : d1Statements(url)
}

const p50 = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length ? s[Math.floor((s.length - 1) / 2)] : NaN
}

/** A raw DEFLATE stream of `mib` MiB: one node, then spaces (~1 KB compressed per MiB). */
function deflatedPadding(mib: number): Uint8Array {
  const parts: Uint8Array[] = []
  const d = new Deflate({ level: 9 }, (c) => parts.push(c))
  d.push(strToU8('{"graph":{"nodes":[{"id":"BOMB","kinds":["A"]}]}'))
  const spaces = new Uint8Array(1024 * 1024).fill(0x20)
  for (let i = 0; i < mib; i++) d.push(spaces)
  d.push(strToU8('}'), true)
  return Buffer.concat(parts)
}

/** A zip whose members are raw DEFLATE streams, each declaring `declared` bytes (zipSync cannot lie). */
function craftedZip(members: { name: string; data: Uint8Array; declared: number }[]): Uint8Array {
  const out: Buffer[] = []
  const central: Buffer[] = []
  let offset = 0
  for (const m of members) {
    const name = Buffer.from(m.name)
    const local = Buffer.alloc(30)
    local.writeUInt32LE(0x04034b50, 0), local.writeUInt16LE(20, 4), local.writeUInt16LE(8, 8)
    local.writeUInt32LE(m.data.length, 18), local.writeUInt32LE(m.declared, 22), local.writeUInt16LE(name.length, 26)
    const cd = Buffer.alloc(46)
    cd.writeUInt32LE(0x02014b50, 0), cd.writeUInt16LE(20, 4), cd.writeUInt16LE(20, 6), cd.writeUInt16LE(8, 10)
    cd.writeUInt32LE(m.data.length, 20), cd.writeUInt32LE(m.declared, 24), cd.writeUInt16LE(name.length, 28), cd.writeUInt32LE(offset, 42)
    out.push(local, name, Buffer.from(m.data))
    central.push(cd, name)
    offset += 30 + name.length + m.data.length
  }
  const cdBytes = Buffer.concat(central)
  const eocd = Buffer.alloc(22)
  eocd.writeUInt32LE(0x06054b50, 0), eocd.writeUInt16LE(members.length, 8), eocd.writeUInt16LE(members.length, 10)
  eocd.writeUInt32LE(cdBytes.length, 12), eocd.writeUInt32LE(offset, 16)
  return Buffer.concat([...out, cdBytes, eocd])
}

async function main() {
  const { values } = parseArgs({ options: { edges: { type: 'string', default: '20000' }, 'fair-seconds': { type: 'string', default: '10' } } })
  const edges = Number(values.edges)
  const fairSeconds = Number(values['fair-seconds'])
  const log = (m: string) => console.error(`[cost ${edges}] ${m}`)
  const g = generateGraph({ edges })
  const dir = mkdtempSync(path.join(os.tmpdir(), 'edgehound-cost-'))
  const bundle = await buildBundle(path.join(dir, 'bundle'))
  // Admission as shipped (the bench turns it off for its latency cases, bench/lib/worker-host.ts).
  const w = await startMiniflare({ bundle, persistDir: path.join(dir, 'state'), migrate: true, vars: { RATE_LIMIT_COST: 'on' } })
  const worst: Worst[] = []
  try {
    const { username, password } = adminCredentials()
    const jwt = await login(w.url, username, password, benchIp(9, 173))
    const api = new BenchApi(w.url, await createTokens(w.url, jwt, 4, 'cost'))
    const admin = new EdgeHoundClient({ baseUrl: w.url, credentials: { kind: 'bearer', jwt } })

    log(`ingest: ${g.nodes.length} nodes, ${g.edgeCount} edges`)
    const job = (await api.ok<{ data: { id: number } }>('POST', '/api/v2/file-upload/start')).body!.data.id
    for (const p of openGraphPayloads(g)) await api.ok('POST', `/api/v2/file-upload/${job}`, p.text, 'application/json')
    await api.ok('POST', `/api/v2/file-upload/${job}/end`)

    /** one request of a Read-Only user, measured */
    const reader = async (name: string) => {
      const u = await admin.createUser({ principal_name: `${name}-${Date.now()}`, roles: ['Read-Only'], secret: 'correct-horse-battery' })
      const t = await admin.createToken(name, u.data.id)
      return new EdgeHoundClient({ baseUrl: w.url, credentials: { kind: 'token', tokenId: t.data.id, tokenKey: t.data.key } })
    }
    const measure = async (c: EdgeHoundClient, id: string, request: string, method: string, target: string, budgets: string[], body?: Uint8Array, ct?: string) => {
      const s0 = await statementsSoFar(w.url)
      const t0 = performance.now()
      const res = await c.raw(method, target, body, ct ? { contentType: ct } : {})
      const bytes = (await res.arrayBuffer()).byteLength
      const ms = performance.now() - t0
      const statements = (await statementsSoFar(w.url)) - s0
      const read = method === 'GET'
      const met = statements < 500 && bytes <= 10 * 1024 * 1024 && (!read || ms <= 1000) && (!id.startsWith('bomb') || ms <= 1000)
      const r: Worst = { id, request, status: res.status, ms: Math.round(ms), bytes, statements, budgets, met }
      worst.push(r)
      log(`${id}: ${res.status} in ${r.ms} ms, ${bytes} bytes, ${statements} statements${met ? '' : '  BUDGET MISSED'}`)
      return r
    }
    const writer = api.admin
    const sid = g.domains[0].sid

    // uploads
    const upJob = (await api.ok<{ data: { id: number } }>('POST', '/api/v2/file-upload/start')).body!.data.id
    const bomb = craftedZip(Array.from({ length: 100 }, (_, i) => ({ name: `m${i}.json`, data: deflatedPadding(20), declared: 20 * 1024 * 1024 })))
    await measure(writer, 'bomb-declared', 'zip of 100 members × 20 MiB declared (2 GiB)', 'POST', `/api/v2/file-upload/${upJob}`, ['refused ≤ 1 s', '< 500 statements'], bomb, 'application/zip')
    const liar = craftedZip([{ name: 'bomb.json', data: deflatedPadding(1024), declared: 1024 }])
    await measure(writer, 'bomb-lying', 'zip member declaring 1 KiB, inflating to 1 GiB', 'POST', `/api/v2/file-upload/${upJob}`, ['refused ≤ 1 s', '< 500 statements'], liar, 'application/zip')
    const four = largeFilePayload({ maxBytes: 4 * 1024 * 1024 })
    const copies = (n: number) => zipSync(Object.fromEntries(Array.from({ length: n }, (_, i) => [`copy${i}.json`, strToU8(four.text)])), { level: 6 })
    await measure(writer, 'zip-over', '6 copies of a realistic 4 MiB OpenGraph file (24 MiB inflated)', 'POST', `/api/v2/file-upload/${upJob}`, ['< 500 statements'], copies(6), 'application/zip')
    await measure(writer, 'zip-at', '4 copies of the same file (16 MiB inflated, accepted)', 'POST', `/api/v2/file-upload/${upJob}`, ['< 500 statements'], copies(4), 'application/zip')

    // reads (a fresh Read-Only user for each, so no bucket carries over)
    await measure(await reader('controllers'), 'controllers-graph', `GET /api/v2/domains/{domain}/controllers?type=graph`, 'GET', `/api/v2/domains/${sid}/controllers?type=graph`, ['≤ 1 s', '≤ 10 MB', '< 500 statements'])
    await measure(await reader('members'), 'members-graph', `GET /api/v2/groups/{Domain Users}/members?type=graph`, 'GET', `/api/v2/groups/${sid}-513/members?type=graph`, ['≤ 1 s', '≤ 10 MB', '< 500 statements'])
    // related lists (type=list) and entity counts: the same walks, bounded per step (docs/budgets.md)
    await measure(await reader('controllers-list'), 'controllers-list', `GET /api/v2/domains/{domain}/controllers`, 'GET', `/api/v2/domains/${sid}/controllers?limit=100`, ['≤ 1 s', '≤ 10 MB', '< 500 statements'])
    await measure(await reader('members-list'), 'members-list', `GET /api/v2/groups/{Domain Users}/members`, 'GET', `/api/v2/groups/${sid}-513/members?limit=100`, ['≤ 1 s', '≤ 10 MB', '< 500 statements'])
    await measure(await reader('domain-counts'), 'domain-counts', 'GET /api/v2/domains/{domain} (counts)', 'GET', `/api/v2/domains/${sid}`, ['≤ 1 s', '≤ 10 MB', '< 500 statements'])
    await measure(await reader('group-counts'), 'group-counts', 'GET /api/v2/groups/{Domain Users} (counts)', 'GET', `/api/v2/groups/${sid}-513`, ['≤ 1 s', '≤ 10 MB', '< 500 statements'])
    await measure(await reader('path'), 'path-domain-users', 'GET /api/v2/graphs/shortest-path domain → Domain Users', 'GET', `/api/v2/graphs/shortest-path?start_node=${sid}&end_node=${sid}-513`, ['≤ 1 s', '≤ 10 MB', '< 500 statements'])
    await measure(await reader('path2'), 'path-users-domain', 'GET /api/v2/graphs/shortest-path Domain Users → domain', 'GET', `/api/v2/graphs/shortest-path?start_node=${sid}-513&end_node=${sid}`, ['≤ 1 s', '≤ 10 MB', '< 500 statements'])
    await measure(await reader('details'), 'details-all', 'GET /api/v2/domains/{domain}/details?limit=0', 'GET', `/api/v2/domains/${sid}/details?finding=T0GenericAll&limit=0`, ['≤ 1 s', '≤ 10 MB', '< 500 statements'])

    // fairness
    const normal = await reader('normal')
    const cheap = async (n: number) => {
      const ms: number[] = []
      for (let i = 0; i < n; i++) {
        const t0 = performance.now()
        const r = await normal.raw('GET', '/api/v2/available-domains')
        await r.arrayBuffer()
        if (r.status !== 200) throw new Error(`normal caller answered ${r.status}`)
        ms.push(performance.now() - t0)
        await new Promise((res) => setTimeout(res, 20))
      }
      return ms
    }
    const base = p50(await cheap(60))
    const abuser = await reader('abuser')
    let stop = false
    const sent = { ok: 0, refused: 0 }
    const lane = async () => {
      while (!stop) {
        const r = await abuser.raw('GET', `/api/v2/domains/${sid}/controllers?type=graph`)
        await r.arrayBuffer()
        if (r.status === 429) {
          sent.refused++
          await new Promise((res) => setTimeout(res, 1000 * Number(r.headers.get('retry-after') ?? '1')))
        } else sent.ok++
      }
    }
    const lanes = Array.from({ length: 4 }, lane) // RATE_LIMIT_IN_FLIGHT_PER_TOKEN: its full concurrency
    await new Promise((res) => setTimeout(res, 1000))
    const t0 = performance.now()
    const under: number[] = []
    while (performance.now() - t0 < fairSeconds * 1000) under.push(...(await cheap(10)))
    stop = true
    await Promise.all(lanes)
    const abused = p50(under)
    const fairness = {
      cheapRead: 'GET /api/v2/available-domains',
      abuse: `GET /api/v2/domains/{domain}/controllers?type=graph, 4 at a time (${sent.ok} answered, ${sent.refused} refused with 429)`,
      p50WithoutMs: +base.toFixed(2),
      p50WithMs: +abused.toFixed(2),
      ratio: +(abused / base).toFixed(2),
      met: abused / base <= 3,
    }
    log(`fairness: p50 ${fairness.p50WithoutMs} ms → ${fairness.p50WithMs} ms (${fairness.ratio}×)${fairness.met ? '' : '  BUDGET MISSED'}`)

    const result = { edges: g.edgeCount, nodes: g.nodes.length, worst, fairness }
    const md = [
      `| request | status | wall ms | answer bytes | D1 statements | budgets | met |`,
      `|---|---:|---:|---:|---:|---|---|`,
      ...worst.map((r) => `| ${r.request} | ${r.status} | ${r.ms} | ${r.bytes} | ${r.statements} | ${r.budgets.join(', ')} | ${r.met ? 'yes' : '**no**'} |`),
      `| fairness: ${fairness.abuse}; normal caller's ${fairness.cheapRead} p50 | | ${fairness.p50WithoutMs} → ${fairness.p50WithMs} | | | ratio ≤ 3× | ${fairness.met ? `yes (${fairness.ratio}×)` : `**no** (${fairness.ratio}×)`} |`,
    ].join('\n')
    console.log(md)
    console.log(JSON.stringify(result, null, 2))
    mkdirSync(path.join(ROOT, 'bench', 'results'), { recursive: true })
    writeFileSync(path.join(ROOT, 'bench', 'results', 'cost-latest.json'), JSON.stringify({ at: new Date().toISOString(), ...result, markdown: md }, null, 2))
  } finally {
    await w.dispose()
    rmSync(dir, { recursive: true, force: true })
  }
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})
