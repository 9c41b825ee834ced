/// <reference types="node" />
/** What the numbers were measured on: CPU, memory, load, and the exact runtime versions. */
import { readFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { ROOT } from './worker-host'

function pkgVersion(name: string): string {
  try {
    return (JSON.parse(readFileSync(path.join(ROOT, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version
  } catch {
    return 'unknown'
  }
}

export interface Machine {
  cpu: string
  cores: number
  memoryGiB: number
  os: string
  node: string
  workerd: string
  miniflare: string
  wrangler: string
  autocannon: string
  loadAverageStart: number[]
  loadAverageEnd?: number[]
}

export function describeMachine(): Machine {
  const cpus = os.cpus()
  return {
    cpu: cpus[0]?.model.trim() ?? 'unknown',
    cores: cpus.length,
    memoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    node: process.version,
    workerd: pkgVersion('workerd'),
    miniflare: pkgVersion('miniflare'),
    wrangler: pkgVersion('wrangler'),
    autocannon: pkgVersion('autocannon'),
    loadAverageStart: os.loadavg().map((l) => Math.round(l * 100) / 100),
  }
}
