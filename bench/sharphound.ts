/// <reference types="node" />
/**
 * SharpHound ingest benchmark (issue 13): SharpHound CE v6 data for a generated domain
 * (bench/lib/sharphound-gen.ts) through the public file-upload API, as a ratio to raw D1 inserts of the
 * same rows in the same run (bench/lib/floors.ts), plus the post-processing time.
 *
 *   npm run bench:sharphound -- [--users 10000] [--objects-per-file 2000] [--adcs] [--ntlm]
 *
 * `--adcs` adds an ADCS environment (bench/lib/sharphound-gen.ts) so that post-processing derives the ADCS
 * relationships too; `--ntlm` the NTLM relay facts on every computer (SMB signing, outbound NTLM, WebClient,
 * LDAP signing on the DC; with `--adcs` a vulnerable web enrollment endpoint), for the CoerceAndRelayNTLMTo*
 * relationships.
 *
 * Elements = nodes + relationships the job received (placeholders excluded, as the job counts them).
 * The floor inserts the rows the conversion produces (nodes including placeholders, relationships by
 * internal id): the same data, without parsing, conversion, staging, object-id resolution or upserts.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { openGraphPayload } from '../src/collectors/detect'
import { BenchApi } from './lib/api'
import { createTokens, login, benchIp } from './lib/credentials'
import { d1InsertFloor } from './lib/floors'
import type { GenGraph, GenNode } from './lib/generate'
import { generateSharpHound, sharpHoundFiles } from './lib/sharphound-gen'
import { adminCredentials, buildBundle, startMiniflare } from './lib/worker-host'

const enc = new TextEncoder()

/** The converted rows of every file as a GenGraph (the floor's input). */
function convertedGraph(files: [string, string][]): GenGraph {
  const ctx = { environmentTypes: new Map([['Domain', 'active-directory']]) }
  const index = new Map<string, number>()
  const nodes: GenNode[] = []
  const node = (id: string, kinds: string[], properties: Record<string, unknown>, real: boolean) => {
    const i = index.get(id)
    if (i === undefined) {
      index.set(id, nodes.length)
      nodes.push({ objectid: id, kinds, properties: properties as GenNode['properties'] })
    } else if (real) nodes[i] = { objectid: id, kinds, properties: properties as GenNode['properties'] }
  }
  const starts: string[] = []
  const ends: string[] = []
  const kinds: number[] = []
  const kindIndex = new Map<string, number>()
  const seenEdges = new Set<string>()
  for (const [, text] of files) {
    const p = openGraphPayload(enc.encode(text), ctx)
    for (const r of p.nodeRows()) node(r.o, r.ks, r.p, !r.ph)
    for (const e of p.edgeRows()) {
      const key = `${e.s}\u0000${e.k}\u0000${e.t}`
      if (seenEdges.has(key)) continue // the store upserts repeats into one row; the floor inserts each once
      seenEdges.add(key)
      if (!kindIndex.has(e.k)) kindIndex.set(e.k, kindIndex.size)
      starts.push(e.s)
      ends.push(e.t)
      kinds.push(kindIndex.get(e.k)!)
    }
  }
  const edgeStart = Int32Array.from(starts.map((s) => index.get(s)!))
  const edgeEnd = Int32Array.from(ends.map((t) => index.get(t)!))
  return {
    seed: 0,
    nodes,
    edgeCount: edgeStart.length,
    edgeStart,
    edgeEnd,
    edgeKind: Uint8Array.from(kinds),
    edgeKinds: [...kindIndex.keys()],
    domains: [],
    tenant: { name: '', id: '', index: -1 },
    tierZero: [],
    tierZeroPaths: [],
  }
}

async function main() {
  const { values } = parseArgs({ options: { users: { type: 'string', default: '10000' }, 'objects-per-file': { type: 'string', default: '2000' }, adcs: { type: 'boolean', default: false }, ntlm: { type: 'boolean', default: false } } })
  const users = Number(values.users)
  const perFile = Number(values['objects-per-file'])
  const log = (m: string) => console.error(`[sharphound ${users}] ${m}`)

  let t = performance.now()
  const data = generateSharpHound(users, 13, { adcs: values.adcs, ntlm: values.ntlm })
  const files = [...sharpHoundFiles(data, perFile)]
  const bytes = files.reduce((n, [, s]) => n + s.length, 0)
  log(`generated ${files.length} files, ${(bytes / 1048576).toFixed(1)} MiB in ${(performance.now() - t).toFixed(0)} ms`)
  t = performance.now()
  const g = convertedGraph(files)
  log(`converted locally: ${g.nodes.length} nodes (placeholders included), ${g.edgeCount} relationships in ${(performance.now() - t).toFixed(0)} ms`)

  const dir = mkdtempSync(path.join(os.tmpdir(), 'edgehound-sharphound-'))
  const bundle = await buildBundle(path.join(dir, 'bundle'))
  const w = await startMiniflare({ bundle, persistDir: path.join(dir, 'state'), migrate: true })
  try {
    const { username, password } = adminCredentials()
    const jwt = await login(w.url, username, password, benchIp(9, 172))
    const api = new BenchApi(w.url, await createTokens(w.url, jwt, 2, 'sharphound'))

    log('floor: raw D1 inserts of the same rows')
    const floor = await d1InsertFloor(w.url, g)
    log(floor.available ? `floor: ${Math.round(floor.elementsPerSecond!)} elements/s (${floor.seconds!.toFixed(1)} s)` : `floor: not available: ${floor.error}`)

    const job = (await api.ok<{ data: { id: number } }>('POST', '/api/v2/file-upload/start')).body!.data.id
    t = performance.now()
    for (const [name, text] of files) {
      const r = await api.timed('POST', `/api/v2/file-upload/${job}`, text, 'application/json')
      if (r.status !== 202) throw new Error(`${name}: ${r.status} ${r.text.slice(0, 300)}`)
    }
    const ended = (await api.ok<{ data: { nodes_received: number; edges_received: number; unmatched_edges: number } }>('POST', `/api/v2/file-upload/${job}/end`)).body!.data
    const seconds = (performance.now() - t) / 1000
    const elements = ended.nodes_received + ended.edges_received
    const rate = elements / seconds
    log(`ingest: ${elements} elements (${ended.nodes_received} nodes, ${ended.edges_received} relationships, ${ended.unmatched_edges} unmatched) in ${seconds.toFixed(1)} s = ${Math.round(rate)} elements/s`)

    // Wait for the analysis the job's end requested (it post-processes too), then time post-processing alone.
    for (const until = Date.now() + 10 * 60_000; Date.now() < until; ) {
      const runs = await api.ok<{ data: { status: string }[] }>('GET', '/api/v2/analysis')
      if (!runs.body!.data.some((r) => r.status === 'pending' || r.status === 'running')) break
      await new Promise((r) => setTimeout(r, 250))
    }
    const pp = await fetch(`${w.url}/__bench/postprocess`, { method: 'POST' })
    const post = (await pp.json()) as { derivedEdges: number; durationMs: number; adcs: { readMs: number; deriveMs: number; nodes: number; edges: number } }
    log(`post-processing: ${post.derivedEdges} derived relationships in ${post.durationMs} ms (ADCS: read ${post.adcs.readMs} ms, derive ${post.adcs.deriveMs} ms, ${post.adcs.nodes} nodes, ${post.adcs.edges} relationships read)`)

    const result = {
      users,
      files: files.length,
      mib: +(bytes / 1048576).toFixed(1),
      elements,
      seconds: +seconds.toFixed(2),
      elementsPerSecond: Math.round(rate),
      floorD1ElementsPerSecond: Math.round(floor.elementsPerSecond ?? 0),
      ratioToD1: floor.elementsPerSecond ? +(rate / floor.elementsPerSecond).toFixed(2) : null,
      postProcessing: post,
    }
    console.log(JSON.stringify(result, null, 2))
  } finally {
    await w.dispose()
    rmSync(dir, { recursive: true, force: true })
  }
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})
