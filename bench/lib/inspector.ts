/// <reference types="node" />
/**
 * A minimal Chrome DevTools Protocol client for workerd's inspector (Miniflare `inspectorPort`): heap
 * usage sampling (peak memory of the worker's isolate during analysis) and CPU profiles (where the time of
 * a case goes, summarised by self time per function and saved as .cpuprofile for DevTools).
 *
 * Targets: `core:user:edgehound` is the worker's isolate (the Worker and its Durable Objects share it);
 * `d1:db` is Miniflare's D1 implementation (SQLite runs under it, so its profile shows query time).
 *
 * Uses the global WebSocket (Node ≥ 22, or Node 20 with --experimental-websocket, which the npm scripts
 * pass). Without it, memory and profiles are reported as not measured; nothing else depends on it.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'

type Pending = { resolve: (v: unknown) => void; reject: (e: Error) => void }

interface WsLike {
  send(data: string): void
  close(): void
  addEventListener(type: string, fn: (ev: { data?: unknown }) => void): void
  readyState: number
}

export function inspectorAvailable(): boolean {
  return typeof (globalThis as { WebSocket?: unknown }).WebSocket === 'function'
}

export class Inspector {
  private nextId = 1
  private pending = new Map<number, Pending>()
  private constructor(private ws: WsLike) {
    ws.addEventListener('message', (ev) => {
      const msg = JSON.parse(String(ev.data)) as { id?: number; result?: unknown; error?: { message: string } }
      if (msg.id === undefined) return
      const p = this.pending.get(msg.id)
      if (!p) return
      this.pending.delete(msg.id)
      if (msg.error) p.reject(new Error(msg.error.message))
      else p.resolve(msg.result)
    })
    ws.addEventListener('close', () => {
      for (const p of this.pending.values()) p.reject(new Error('inspector connection closed'))
      this.pending.clear()
    })
  }

  static async connect(port: number, target: string): Promise<Inspector> {
    if (!inspectorAvailable()) throw new Error('no global WebSocket: run Node with --experimental-websocket')
    const list = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as { id: string; webSocketDebuggerUrl: string }[]
    const t = list.find((x) => x.id === target)
    if (!t) throw new Error(`inspector target ${target} not found (have ${list.map((x) => x.id).join(', ')})`)
    const WS = (globalThis as unknown as { WebSocket: new (url: string) => WsLike }).WebSocket
    const ws = new WS(t.webSocketDebuggerUrl)
    await new Promise<void>((resolve, reject) => {
      ws.addEventListener('open', () => resolve())
      ws.addEventListener('error', () => reject(new Error(`cannot open ${t.webSocketDebuggerUrl}`)))
    })
    return new Inspector(ws)
  }

  /** One command; rejects after `timeoutMs` (workerd leaves some commands, e.g. HeapProfiler.collectGarbage, unanswered). */
  send<T = unknown>(method: string, params: Record<string, unknown> = {}, timeoutMs = 30_000): Promise<T> {
    const id = this.nextId++
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id)
        reject(new Error(`inspector: ${method} unanswered after ${timeoutMs} ms`))
      }, timeoutMs)
      this.pending.set(id, {
        resolve: (v) => {
          clearTimeout(timer)
          resolve(v as T)
        },
        reject: (e) => {
          clearTimeout(timer)
          reject(e)
        },
      })
      this.ws.send(JSON.stringify({ id, method, params }))
    })
  }

  /**
   * Heap figures of the isolate: `used` = live JS heap + ArrayBuffer backing stores (typed arrays live
   * outside the JS heap); `committed` = the JS heap V8 has reserved + backing stores. V8 gives committed
   * memory back lazily, so its maximum is a conservative measure of a peak the sampler may not have seen:
   * the inspector is served on the isolate's own thread, so no sample is taken while a long synchronous
   * computation runs.
   */
  async heapBytes(): Promise<{ used: number; committed: number }> {
    const r = await this.send<{ usedSize: number; totalSize: number; backingStorageSize?: number; embedderHeapUsedSize?: number }>('Runtime.getHeapUsage')
    const extra = (r.backingStorageSize ?? 0) + (r.embedderHeapUsedSize ?? 0)
    return { used: r.usedSize + extra, committed: r.totalSize + extra }
  }

  /**
   * The heap after a full garbage collection: what the isolate retains. workerd never answers
   * HeapProfiler.collectGarbage, but it does take heap snapshots, and V8 collects all garbage before one
   * (the snapshot's chunks are discarded unread). Costs about a second per 50 MiB of live heap; call it
   * only after a measurement, never during one.
   */
  async heapBytesAfterGc(timeoutMs = 180_000): Promise<{ used: number; committed: number }> {
    await this.send('HeapProfiler.enable')
    try {
      await this.send('HeapProfiler.takeHeapSnapshot', { reportProgress: false, captureNumericValue: false }, timeoutMs)
    } finally {
      await this.send('HeapProfiler.disable').catch(() => undefined)
    }
    return this.heapBytes()
  }

  async startProfile(intervalUs = 200): Promise<void> {
    await this.send('Profiler.enable')
    await this.send('Profiler.setSamplingInterval', { interval: intervalUs })
    await this.send('Profiler.start')
  }

  async stopProfile(): Promise<CpuProfile> {
    const r = await this.send<{ profile: CpuProfile }>('Profiler.stop')
    await this.send('Profiler.disable').catch(() => undefined)
    return r.profile
  }

  close(): void {
    try {
      this.ws.close()
    } catch {
      /* closed */
    }
  }
}

export interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number }; hitCount?: number; children?: number[] }[]
  startTime: number
  endTime: number
  samples?: number[]
  timeDeltas?: number[]
}

export interface HotFunction {
  fn: string
  where: string
  selfMs: number
  selfPct: number
}

/** Self time per function (summed over every node with the same name and location), largest first. */
export function hotFunctions(p: CpuProfile, top = 12, sourceMap?: SourceMapLookup): HotFunction[] {
  const byNode = new Map<number, number>()
  const samples = p.samples ?? []
  const deltas = p.timeDeltas ?? []
  for (let i = 0; i < samples.length; i++) byNode.set(samples[i], (byNode.get(samples[i]) ?? 0) + (deltas[i] ?? 0))
  const total = (p.endTime - p.startTime) || 1
  const byFn = new Map<string, { fn: string; where: string; us: number }>()
  for (const n of p.nodes) {
    const us = byNode.get(n.id) ?? 0
    if (!us) continue
    const cf = n.callFrame
    const fn = cf.functionName || (cf.url ? '(anonymous)' : '(runtime, unnamed)')
    let where = cf.url ? `${cf.url.split('/').pop()}:${cf.lineNumber + 1}` : ''
    // Only the bundle has a source map; runtime modules (cloudflare-internal:…, node-internal:…) keep their names.
    if (sourceMap && /(^|\/)worker\.js$/.test(cf.url) && cf.lineNumber >= 0) {
      const orig = sourceMap(cf.lineNumber, cf.columnNumber)
      if (orig) where = orig
    }
    const key = `${fn}@${where}`
    const e = byFn.get(key) ?? { fn, where, us: 0 }
    e.us += us
    byFn.set(key, e)
  }
  return [...byFn.values()]
    .sort((a, b) => b.us - a.us)
    .slice(0, top)
    .map((e) => ({ fn: e.fn, where: e.where, selfMs: Math.round(e.us / 100) / 10, selfPct: Math.round((e.us / total) * 1000) / 10 }))
}

export type SourceMapLookup = (line0: number, col0: number) => string | null

/**
 * Maps bundle positions back to src/… files with the bundle's source map (VLQ decoding, no dependency),
 * so that profile summaries name our files rather than worker.js line numbers.
 */
export function loadSourceMap(mapFile: string): SourceMapLookup | undefined {
  let map: { sources: string[]; mappings: string }
  try {
    map = JSON.parse(readFileSync(mapFile, 'utf8'))
  } catch {
    return undefined
  }
  const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'
  const val = new Map([...B64].map((c, i) => [c, i]))
  // per generated line: sorted [genCol, srcIndex, srcLine]
  const lines: number[][][] = []
  let src = 0, srcLine = 0, srcCol = 0
  for (const lineText of map.mappings.split(';')) {
    const segs: number[][] = []
    let genCol = 0
    if (lineText) {
      for (const seg of lineText.split(',')) {
        const nums: number[] = []
        let shift = 0, value = 0
        for (const ch of seg) {
          const d = val.get(ch) ?? 0
          value += (d & 31) << shift
          if (d & 32) shift += 5
          else {
            nums.push(value & 1 ? -(value >>> 1) : value >>> 1)
            value = 0
            shift = 0
          }
        }
        genCol += nums[0] ?? 0
        if (nums.length >= 4) {
          src += nums[1]
          srcLine += nums[2]
          srcCol += nums[3]
          segs.push([genCol, src, srcLine])
        }
      }
    }
    lines.push(segs)
  }
  return (line0, col0) => {
    const segs = lines[line0]
    if (!segs || segs.length === 0) return null
    let best = segs[0]
    for (const s of segs) {
      if (s[0] <= col0) best = s
      else break
    }
    const file = map.sources[best[1]] ?? '?'
    const short = file.includes('node_modules/') ? file.replace(/^.*node_modules\//, 'node_modules/') : file.replace(/^.*?\b(src|bench)\//, '$1/')
    return `${short}:${best[2] + 1}`
  }
}

/** Share of the profile's time (percent) spent in the given pseudo-function, e.g. `(idle)`, `(garbage collector)`. */
export function sharePct(p: CpuProfile, fn: string): number {
  const ids = new Set(p.nodes.filter((n) => n.callFrame.functionName === fn).map((n) => n.id))
  const samples = p.samples ?? []
  const deltas = p.timeDeltas ?? []
  let hit = 0, all = 0
  for (let i = 0; i < samples.length; i++) {
    all += deltas[i] ?? 0
    if (ids.has(samples[i])) hit += deltas[i] ?? 0
  }
  return all ? Math.round((hit / all) * 1000) / 10 : 0
}

export interface AllocationSite {
  fn: string
  where: string
  mib: number
}

export interface ProfileSummary {
  /** sampled allocations (bytes allocated during the work, by allocating function), worker isolate only */
  allocations?: AllocationSite[]
  target: string
  /** path of the saved .cpuprofile (open it in Chrome DevTools → Performance) */
  file: string
  durationMs: number
  idlePct: number
  gcPct: number
  top: HotFunction[]
}

/**
 * CPU profiles of the worker isolate and of Miniflare's D1 service while `work` runs, saved under
 * `outDir/profiles/` and summarised. `worker` and `opts.d1` may be already-open sessions to those targets, and
 * must be passed when the caller holds one: workerd serves one inspector session per target, and a second one
 * is left unanswered ("Profiler.enable unanswered" in bench:cypher --profile, which kept a D1 session open).
 */
export async function captureProfiles(
  port: number,
  name: string,
  work: () => Promise<unknown>,
  outDir: string,
  sourceMap?: SourceMapLookup,
  worker?: Inspector,
  opts: { heap?: boolean; d1?: Inspector } = {},
): Promise<ProfileSummary[]> {
  const own: Inspector[] = []
  const targets: [string, Inspector][] = []
  const open = async (target: string) => {
    const i = await Inspector.connect(port, target)
    own.push(i)
    return i
  }
  targets.push(['core:user:edgehound', worker ?? (await open('core:user:edgehound'))])
  try {
    targets.push(['d1:db', opts.d1 ?? (await open('d1:db'))])
  } catch {
    /* no D1 target: worker profile only */
  }
  const out: ProfileSummary[] = []
  try {
    for (const [, i] of targets) await i.startProfile(250)
    const heap = opts.heap ? targets[0][1] : null
    if (heap) {
      await heap.send('HeapProfiler.enable')
      await heap.send('HeapProfiler.startSampling', { samplingInterval: 32768, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true })
    }
    const t = performance.now()
    try {
      await work()
    } finally {
      const durationMs = Math.round(performance.now() - t)
      mkdirSync(path.join(outDir, 'profiles'), { recursive: true })
      let allocations: AllocationSite[] | undefined
      if (heap) {
        const r = await heap.send<{ profile: SamplingHeapProfile }>('HeapProfiler.stopSampling')
        await heap.send('HeapProfiler.disable').catch(() => undefined)
        writeFileSync(path.join(outDir, 'profiles', `${name}-allocations.heapprofile`), JSON.stringify(r.profile))
        allocations = topAllocations(r.profile, 8, sourceMap)
      }
      for (const [target, i] of targets) {
        const prof = await i.stopProfile()
        const file = path.join(outDir, 'profiles', `${name}-${target.replace(/[^a-z0-9]+/gi, '_')}.cpuprofile`)
        writeFileSync(file, JSON.stringify(prof))
        out.push({
          target,
          file: path.relative(process.cwd(), file),
          durationMs,
          idlePct: sharePct(prof, '(idle)'),
          gcPct: sharePct(prof, '(garbage collector)'),
          top: hotFunctions(prof, 10, target === 'core:user:edgehound' ? sourceMap : undefined),
          ...(target === 'core:user:edgehound' && allocations ? { allocations } : {}),
        })
      }
    }
  } finally {
    for (const i of own) i.close()
  }
  return out
}

interface SamplingHeapNode {
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number }
  selfSize: number
  children: SamplingHeapNode[]
}
interface SamplingHeapProfile {
  head: SamplingHeapNode
}

/** Bytes allocated per function (sampled, so estimates), largest first. */
function topAllocations(p: SamplingHeapProfile, top: number, sourceMap?: SourceMapLookup): AllocationSite[] {
  const by = new Map<string, AllocationSite & { bytes: number }>()
  const walk = (n: SamplingHeapNode) => {
    const cf = n.callFrame
    let where = cf.url ? `${cf.url.split('/').pop()}:${cf.lineNumber + 1}` : ''
    if (sourceMap && /(^|\/)worker\.js$/.test(cf.url) && cf.lineNumber >= 0) where = sourceMap(cf.lineNumber, cf.columnNumber) ?? where
    const fn = cf.functionName || (cf.url ? '(anonymous)' : '(runtime)')
    const key = `${fn}@${where}`
    const e = by.get(key) ?? { fn, where, mib: 0, bytes: 0 }
    e.bytes += n.selfSize
    by.set(key, e)
    for (const c of n.children) walk(c)
  }
  walk(p.head)
  return [...by.values()]
    .filter((e) => e.bytes > 0)
    .sort((a, b) => b.bytes - a.bytes)
    .slice(0, top)
    .map((e) => ({ fn: e.fn, where: e.where, mib: Math.round((e.bytes / 2 ** 20) * 10) / 10 }))
}
