/**
 * Scaling for the console's SVG charts (pure: unit-tested in test/unit/console-chart.test.ts). A series of
 * (date, value) points is drawn in a box of width × height: x spreads the points evenly by time (a single
 * point sits in the middle), y goes from 0 at the bottom to a "nice" maximum at the top (1, 2, 2.5 or 5 times a
 * power of ten, at least the largest value), with ticks at even steps.
 */
export interface Point {
  date: string
  value: number
}

export interface Scaled {
  /** the y axis' top value */
  max: number
  /** tick values from 0 to max */
  ticks: number[]
  /** the points' positions in the box */
  xy: { x: number; y: number; point: Point }[]
  /** the SVG path of the line through them ('' when there are no points) */
  path: string
}

/** The smallest of 1, 2, 2.5, 5 × 10^k that is ≥ v (1 for v ≤ 0 or not finite). */
export function niceMax(v: number): number {
  if (!Number.isFinite(v) || v <= 0) return 1
  const p = 10 ** Math.floor(Math.log10(v))
  for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= v - 1e-9 * p) return m * p
  return 10 * p
}

/** Values 0, step, …, max in `count` steps (count ≥ 1). */
export function ticks(max: number, count = 4): number[] {
  const n = Math.max(1, Math.floor(count))
  return Array.from({ length: n + 1 }, (_, i) => Number(((max * i) / n).toPrecision(12)))
}

export function scale(points: Point[], width: number, height: number): Scaled {
  const sorted = [...points].filter((p) => Number.isFinite(p.value)).sort((a, b) => Date.parse(a.date) - Date.parse(b.date))
  const max = niceMax(Math.max(0, ...sorted.map((p) => p.value)))
  const t0 = sorted.length ? Date.parse(sorted[0].date) : 0
  const t1 = sorted.length ? Date.parse(sorted[sorted.length - 1].date) : 0
  const xy = sorted.map((point) => {
    const x = t1 > t0 ? ((Date.parse(point.date) - t0) / (t1 - t0)) * width : width / 2
    const y = height - (Math.max(0, point.value) / max) * height
    return { x: round(x), y: round(y), point }
  })
  const path = xy.map((p, i) => `${i ? 'L' : 'M'}${p.x},${p.y}`).join(' ')
  return { max, ticks: ticks(max), xy, path }
}

const round = (n: number) => Math.round(n * 100) / 100
