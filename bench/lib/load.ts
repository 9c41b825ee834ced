/// <reference types="node" />
/** Parent side of the load generator: spawns bench/lib/load-child.ts in a separate Node process. */
import { spawn } from 'node:child_process'
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

/**
 * Runs one load in a child process. `serverPids` are the processes whose CPU time is read at the start and
 * end of the measured window (workerd); the result then carries `cpu`.
 */
export function runLoad(spec: LoadSpec, serverPids: () => number[] = () => []): Promise<LoadResult & { cpu?: CpuUse }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', CHILD], { stdio: ['pipe', 'pipe', 'pipe'] })
    let out = ''
    let err = ''
    let mark: { server: number; load: number; t: number } | null = null
    let cpu: CpuUse | undefined
    const sample = () => ({ server: cpuSeconds(serverPids()), load: cpuSeconds(child.pid ? [child.pid] : []), t: performance.now() })
    child.stdout.on('data', (d) => {
      const text = String(d)
      if (text.includes('@measure-start')) mark = sample()
      if (text.includes('@measure-end') && mark) {
        const now = sample()
        cpu = { serverSeconds: now.server - mark.server, loadSeconds: now.load - mark.load, wallSeconds: (now.t - mark.t) / 1000 }
      }
      out += text
    })
    child.stderr.on('data', (d) => (err += d))
    child.on('error', reject)
    child.on('exit', (code) => {
      if (code !== 0) return reject(new Error(`load generator exited with ${code}: ${err.trim().slice(-2000)}`))
      try {
        const result = JSON.parse(out.trim().split('\n').pop() ?? '') as LoadResult
        resolve(cpu ? { ...result, cpu } : result)
      } catch (e) {
        reject(new Error(`load generator printed no result: ${(e as Error).message}; stderr: ${err.slice(-2000)}`))
      }
    })
    child.stdin.end(JSON.stringify(spec))
  })
}
