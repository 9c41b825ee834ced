import type { OutStream } from './io'

/** Human-readable byte counts (binary units, as file managers show them). */
export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`
  const units = ['KiB', 'MiB', 'GiB', 'TiB']
  let v = n / 1024
  let i = 0
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024
    i++
  }
  return `${v.toFixed(v < 10 ? 1 : 0)} ${units[i]}`
}

export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`
  const s = ms / 1000
  if (s < 60) return `${s.toFixed(1)} s`
  return `${Math.floor(s / 60)} min ${Math.round(s % 60)} s`
}

/** `[########------------]  40%` — pure, for tests and for both progress kinds. */
export function renderBar(done: number, total: number, width = 24): string {
  const frac = total > 0 ? Math.min(1, Math.max(0, done / total)) : done > 0 ? 1 : 0
  const full = Math.round(frac * width)
  return `[${'#'.repeat(full)}${'-'.repeat(width - full)}] ${String(Math.floor(frac * 100)).padStart(3)}%`
}

/**
 * One live status line on a terminal (redrawn in place), nothing at all otherwise: progress is for
 * people, so scripts and pipes only get the final lines the commands print themselves.
 */
export class LiveLine {
  private active = false
  private last = 0
  constructor(
    private readonly out: OutStream,
    private readonly enabled = !!out.isTTY,
    private readonly clock: () => number = () => Date.now(),
  ) {}

  update(text: string, force = false) {
    if (!this.enabled) return
    const now = this.clock()
    if (!force && this.active && now - this.last < 80) return // at most ~12 redraws a second
    this.last = now
    const width = (this.out.columns ?? 100) - 1
    this.out.write(`\r\x1b[K${text.length > width ? text.slice(0, width) : text}`)
    this.active = true
  }

  /** Clears the live line; the caller then prints the permanent line. */
  clear() {
    if (this.enabled && this.active) this.out.write('\r\x1b[K')
    this.active = false
  }
}
