// A line chart in plain SVG with its text alternative: the same points as a table (role table, labelled
// "<title> data"). The SVG itself is an image named by its title and a one-line summary.
import { scale, type Point } from '../lib/chart'

const W = 520
const H = 160
const PAD = { left: 44, right: 12, top: 10, bottom: 26 }

const day = (iso: string) => iso.slice(0, 10)

export function LineChart({ title, points, unit = '' }: { title: string; points: Point[]; unit?: string }) {
  const s = scale(points, W - PAD.left - PAD.right, H - PAD.top - PAD.bottom)
  const last = s.xy.at(-1)?.point
  const summary = last ? `${points.length} point(s); latest ${last.value}${unit} on ${day(last.date)}` : 'no data in this range'
  return (
    <figure class="chart">
      <figcaption>{title}</figcaption>
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-label={`${title}: ${summary}`} width="100%">
        <g transform={`translate(${PAD.left},${PAD.top})`}>
          {s.ticks.map((t) => {
            const y = (H - PAD.top - PAD.bottom) * (1 - t / s.max)
            return (
              <g key={t}>
                <line x1={0} x2={W - PAD.left - PAD.right} y1={y} y2={y} class="grid" />
                <text x={-6} y={y + 4} text-anchor="end" class="tick">{t}</text>
              </g>
            )
          })}
          {s.path && <path d={s.path} class="line" fill="none" />}
          {s.xy.map((p) => <circle key={p.point.date} cx={p.x} cy={p.y} r={3} class="point" />)}
          {s.xy.length > 0 && (
            <>
              <text x={s.xy[0].x} y={H - PAD.top - PAD.bottom + 18} text-anchor="start" class="tick">{day(s.xy[0].point.date)}</text>
              {s.xy.length > 1 && <text x={s.xy.at(-1)!.x} y={H - PAD.top - PAD.bottom + 18} text-anchor="end" class="tick">{day(s.xy.at(-1)!.point.date)}</text>}
            </>
          )}
        </g>
      </svg>
      {points.length === 0 ? (
        <p class="muted">No analysis in this range.</p>
      ) : (
        <details>
          <summary>{title} as a table</summary>
          <table aria-label={`${title} data`} class="list">
            <thead><tr><th scope="col">Date</th><th scope="col">{title}</th></tr></thead>
            <tbody>{s.xy.map((p) => <tr key={p.point.date}><td>{day(p.point.date)}</td><td>{p.point.value}{unit}</td></tr>)}</tbody>
          </table>
        </details>
      )}
    </figure>
  )
}
