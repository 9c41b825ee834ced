/// <reference types="node" />
/**
 * Parent side of the load generator: one long-lived child process (bench/lib/load-child.ts) that runs
 * autocannon, so the load never shares an event loop with the harness, and the server's CPU time can be
 * read exactly around each measured window.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import path from 'node:path'
import type { LoadResult, LoadSpec } from './load-child'
import { cpuSeconds } from './proc'

export type { LoadRequest, LoadResult, LoadSpec } from './load-child'

const CHILD = path.join(import.meta.dirname, 'load-child.ts')

export interface CpuUse {
  /** CPU seconds of the server processes (workerd) during the measured window */
  serverSeconds: number
  /** CPU seconds of the load generator during the same window */
  loadSeconds: number
  wallSeconds: number
}

export type MeasuredLoad = LoadResult & { cpu?: CpuUse }

interface Waiter {
  serverPids: () => number[]
  resolve: (r: MeasuredLoad) => void
  reject: (e: Error) => void
  mark: { server: number; load: number; t: number } | null
  cpu?: CpuUse
}

export class LoadGenerator {
  private child: ChildProcessWithoutNullStreams | null = null
  private queue: Waiter[] = []
  private buf = ''
  private stderr = ''

  private start(): ChildProcessWithoutNullStreams {
    if (this.child && this.child.exitCode === null) return this.child
    const child = spawn(process.execPath, ['--import', 'tsx', CHILD], { stdio: ['pipe', 'pipe', 'pipe'] })
    this.child = child
    child.stderr.on('data', (d) => (this.stderr = (this.stderr + d).slice(-4000)))
    child.stdout.on('data', (d) => this.onData(String(d)))
    child.on('exit', (code) => {
      const err = new Error(`load generator exited with ${code}: ${this.stderr.trim()}`)
      for (const w of this.queue.splice(0)) w.reject(err)
      this.child = null
    })
    return child
  }

  private sample(w: Waiter) {
    return { server: cpuSeconds(w.serverPids()), load: cpuSeconds(this.child?.pid ? [this.child.pid] : []), t: performance.now() }
  }

  private onData(text: string) {
    this.buf += text
    let nl: number
    while ((nl = this.buf.indexOf('\n')) !== -1) {
      const line = this.buf.slice(0, nl)
      this.buf = this.buf.slice(nl + 1)
      const w = this.queue[0]
      if (!w) continue
      if (line === '@measure-start') w.mark = this.sample(w)
      else if (line === '@measure-end' && w.mark) {
        const now = this.sample(w)
        w.cpu = { serverSeconds: now.server - w.mark.server, loadSeconds: now.load - w.mark.load, wallSeconds: (now.t - w.mark.t) / 1000 }
      } else if (line.startsWith('@result ')) {
        this.queue.shift()
        const r = JSON.parse(line.slice(8)) as LoadResult
        w.resolve(w.cpu ? { ...r, cpu: w.cpu } : r)
      } else if (line.startsWith('@error ')) {
        this.queue.shift()
        w.reject(new Error(`load generator: ${JSON.parse(line.slice(7))}`))
      }
    }
  }

  /** Runs one measurement; `serverPids` are read at the start and end of the measured window. */
  run(spec: LoadSpec, serverPids: () => number[] = () => []): Promise<MeasuredLoad> {
    const child = this.start()
    return new Promise((resolve, reject) => {
      this.queue.push({ serverPids, resolve, reject, mark: null })
      child.stdin.write(JSON.stringify(spec) + '\n')
    })
  }

  async close(): Promise<void> {
    const c = this.child
    if (!c || c.exitCode !== null) return
    const gone = new Promise<void>((r) => c.once('exit', () => r()))
    c.stdin.end()
    await gone
  }
}
