/** Small statistics helpers (pure). */

/** Nearest-rank percentile of an ascending array; NaN when empty. */
export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))
  return sorted[i]
}

export interface Summary {
  n: number
  p50: number
  p90: number
  p99: number
  max: number
  mean: number
}

export function summarize(values: number[]): Summary {
  const s = [...values].sort((a, b) => a - b)
  const mean = s.length ? s.reduce((a, b) => a + b, 0) / s.length : NaN
  return { n: s.length, p50: percentile(s, 50), p90: percentile(s, 90), p99: percentile(s, 99), max: s.length ? s[s.length - 1] : NaN, mean }
}

export function fmt(n: number | undefined | null, digits = 1): string {
  if (n === undefined || n === null || Number.isNaN(n)) return '–'
  if (Math.abs(n) >= 1000) return Math.round(n).toLocaleString('en-US')
  return n.toFixed(digits)
}
