/// <reference types="node" />
/**
 * What a Cypher answer holds in memory while it is written (issue 28: streamed answers), in node with
 * `--expose-gc`: the heap (JS heap + ArrayBuffers) after a forced collection, above what the query holds anyway (the rows and the graph
 * data they refer to, which the query's memory budget counts).
 *
 *   node --expose-gc --import tsx bench/cypher-answer-memory.ts [--users N] [--props]
 *
 * `whole`: the former way, presentResult's objects and then `JSON.stringify({ data })` and its UTF-8 bytes
 * (what `c.json` sent), all alive at once at the end. `streamed`: measureAnswer, then the route's
 * answerStream read chunk by chunk; the heap is collected and read after every chunk (its peak is reported).
 * Users are BloodHound-like: SharpHound's user properties (about 1.2 KB of JSON each).
 */
import { parseArgs } from 'node:util'
import { AnswerBudget } from '../src/cypher/answer'
import { answerPieces, answerStream, measureAnswer, presentResult } from '../src/cypher/present'
import { NodeRef, type Value } from '../src/cypher/values'
import type { GraphCache } from '../src/cypher/eval'
import type { NodeRecord } from '../src/cypher/source'

const { values } = parseArgs({ options: { users: { type: 'string', default: '50000' }, props: { type: 'boolean', default: false } } })
const users = Number(values.users)
const includeProperties = values.props
const gc = (globalThis as { gc?: () => void }).gc
if (!gc) throw new Error('run with node --expose-gc')
const heap = () => {
  gc()
  const m = process.memoryUsage()
  return m.heapUsed + m.arrayBuffers
}
const MiB = (n: number) => (n / 1024 / 1024).toFixed(1)

const DOMAIN = 'S-1-5-21-1004336348-1177238915-682003330'
const nodes = new Map<number, NodeRecord>()
for (let i = 0; i < users; i++) {
  const id = 2 ** 40 + i * 7919
  const name = `SVC${String(i).padStart(6, '0')}@BIGCORP.LOCAL`
  nodes.set(id, {
    id,
    objectid: `${DOMAIN}-${100000 + i}`,
    kind: 'User',
    kinds: ['User', 'Base'],
    name,
    environment_id: DOMAIN,
    properties: {
      name, domain: 'BIGCORP.LOCAL', domainsid: DOMAIN, distinguishedname: `CN=SVC${i},OU=SERVICE ACCOUNTS,DC=BIGCORP,DC=LOCAL`,
      samaccountname: `svc${i}`, description: 'service account for the line-of-business application', enabled: true, hasspn: true,
      serviceprincipalnames: [`MSSQLSvc/sql${i}.bigcorp.local:1433`, `HTTP/app${i}.bigcorp.local`], admincount: false, dontreqpreauth: false,
      pwdneverexpires: true, sensitive: false, unconstraineddelegation: false, trustedtoauth: false, passwordnotreqd: false,
      pwdlastset: 1_700_000_000 + i, lastlogon: 1_760_000_000 + i, lastlogontimestamp: 1_760_000_000 + i, whencreated: 1_600_000_000 + i,
      email: `svc${i}@bigcorp.local`, title: null, homedirectory: null, userpassword: null, unixpassword: null, sidhistory: [],
      hasspnlastmodified: 1_700_000_000, isaclprotected: false, lastseen: '2026-11-26T12:00:00.000Z',
    },
    updated_at: '2026-11-26T12:00:00.000Z',
  } as NodeRecord)
}
const graph: GraphCache = { node: (id) => nodes.get(id)!, rel: () => { throw new Error('no relationships') } }
const rows: Value[][] = [...nodes.keys()].map((id) => [new NodeRef(id)])
const limits = { maxBytes: 1e12, maxEntries: 1e9, maxDepth: 64 }

const base = heap()
console.log(`${users} users, include_properties ${includeProperties}: graph data and rows ${MiB(base)} MiB of heap (all of it)`)

async function streamed(sample: boolean): Promise<void> {
  const cpu = process.cpuUsage()
  const measured = measureAnswer(['u'], rows, graph, includeProperties, new AnswerBudget(limits))
  const reader = answerStream(answerPieces(['u'], rows, graph, includeProperties, measured), () => {}).getReader()
  let peak = 0
  let bytes = 0
  let chunks = 0
  for (;;) {
    const r = await reader.read()
    if (r.done) break
    bytes += r.value.length
    if (chunks++ % 8 === 0 && sample) peak = Math.max(peak, heap() - base)
  }
  const c = process.cpuUsage(cpu)
  const spent = (c.user + c.system) / 1000
  if (sample) console.log(`streamed: answer ${MiB(bytes)} MiB (measured ${MiB(measured.bytes)}), ${chunks} chunks; heap above the query's own: peak ${MiB(peak)} MiB`)
  else console.log(`streamed: CPU of both passes (measuring, writing and encoding) ${spent.toFixed(0)} ms`)
}

function whole(): void {
  const data = presentResult(['u'], rows, graph, includeProperties, new AnswerBudget(limits))
  const objects = heap() - base
  const text = JSON.stringify({ data })
  const bytes = new TextEncoder().encode(text)
  const all = heap() - base
  console.log(`whole: answer ${MiB(bytes.length)} MiB; heap above the query's own: presented objects ${MiB(objects)} MiB, with the text and its bytes ${MiB(all)} MiB`)
}

await streamed(false)
await streamed(true)
const cpu = process.cpuUsage()
JSON.stringify({ data: presentResult(['u'], rows, graph, includeProperties, new AnswerBudget(limits)) })
const c = process.cpuUsage(cpu)
console.log(`whole: CPU of presenting and serialising ${((c.user + c.system) / 1000).toFixed(0)} ms`)
whole()
