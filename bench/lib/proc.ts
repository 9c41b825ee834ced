/// <reference types="node" />
/**
 * CPU time of processes from /proc (Linux): used to tell whether a case is CPU-bound in workerd (its CPU
 * time per request explains the throughput) or waiting (low CPU, low throughput: I/O, storage commits,
 * queueing behind a single Durable Object). Elsewhere the figures are simply reported as not measured.
 */
import { readFileSync, readdirSync, writeFileSync } from 'node:fs'

const TICKS = 100 // USER_HZ on Linux

interface Stat {
  pid: number
  ppid: number
  comm: string
  cpuTicks: number
}

function readStat(pid: number): Stat | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const close = text.lastIndexOf(')')
    const comm = text.slice(text.indexOf('(') + 1, close)
    const f = text.slice(close + 2).split(' ')
    // fields after comm: state(0) ppid(1) … utime(11) stime(12)
    return { pid, ppid: Number(f[1]), comm, cpuTicks: Number(f[11]) + Number(f[12]) }
  } catch {
    return null
  }
}

/** Every descendant of `root` whose command name is `comm` (e.g. workerd); any name when `comm` is null. */
export function descendantsNamed(root: number, comm: string | null): number[] {
  let all: Stat[]
  try {
    all = readdirSync('/proc')
      .filter((d) => /^\d+$/.test(d))
      .map((d) => readStat(Number(d)))
      .filter((s): s is Stat => s !== null)
  } catch {
    return []
  }
  const children = new Map<number, Stat[]>()
  for (const s of all) children.set(s.ppid, [...(children.get(s.ppid) ?? []), s])
  const out: number[] = []
  const stack = [root]
  while (stack.length) {
    const p = stack.pop()!
    for (const c of children.get(p) ?? []) {
      if (comm === null || c.comm === comm) out.push(c.pid)
      stack.push(c.pid)
    }
  }
  return out
}

/** Total CPU seconds (user + system) of the given processes; NaN when /proc is unreadable. */
export function cpuSeconds(pids: number[]): number {
  if (pids.length === 0) return NaN
  let ticks = 0
  for (const p of pids) {
    const s = readStat(p)
    if (!s) return NaN
    ticks += s.cpuTicks
  }
  return ticks / TICKS
}

/** Resident set size of the given processes, in bytes (VmRSS); NaN when unreadable. */
export function rssBytes(pids: number[]): number {
  if (pids.length === 0) return NaN
  let kb = 0
  for (const p of pids) {
    try {
      const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${p}/status`, 'utf8'))
      if (!m) return NaN
      kb += Number(m[1])
    } catch {
      return NaN
    }
  }
  return kb * 1024
}

/**
 * Resets the peak resident set size (VmHWM) of the given processes to their current RSS (Linux
 * `/proc/PID/clear_refs` value 5); false when the kernel or permissions do not allow it.
 */
export function resetPeakRss(pids: number[]): boolean {
  if (pids.length === 0) return false
  try {
    for (const p of pids) writeFileSync(`/proc/${p}/clear_refs`, '5')
    return true
  } catch {
    return false
  }
}

/** Peak resident set size (VmHWM) of the given processes since their start or the last reset, in bytes; NaN when unreadable. */
export function peakRssBytes(pids: number[]): number {
  if (pids.length === 0) return NaN
  let kb = 0
  for (const p of pids) {
    try {
      const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${p}/status`, 'utf8'))
      if (!m) return NaN
      kb += Number(m[1])
    } catch {
      return NaN
    }
  }
  return kb * 1024
}
