// Posture: per environment, the posture history (findings, exposure, assets, attack paths) as SVG charts with
// their tables, and the current statistics (the newest posture record and the open findings).
import { useEffect, useState } from 'preact/hooks'
import { findingTrends, postureHistory, postureStats, type PostureHistoryType, type PostureStatJson } from '../../../src/client/posture'
import { client } from '../api'
import { EnvironmentPicker } from '../components/environment-picker'
import { LineChart } from '../components/line-chart'
import { attempt } from '../lib/attempt'
import type { Point } from '../lib/chart'

const DAY = 86_400_000
const SERIES: [PostureHistoryType, string, string][] = [
  ['findings', 'Findings', ''],
  ['exposure', 'Exposure', '%'],
  ['assets', 'Tier Zero assets', ''],
  ['attack-paths', 'Attack paths', ''],
]

/** exposure is a share (0..1): shown in percent, one decimal */
const pct = (share: number) => Math.round(share * 1000) / 10
const percent = (p: Point): Point => ({ date: p.date, value: pct(p.value) })

export default function Posture() {
  const [env, setEnv] = useState('')
  const [days, setDays] = useState(30)
  const [history, setHistory] = useState<Partial<Record<PostureHistoryType, Point[]>>>({})
  const [stat, setStat] = useState<PostureStatJson | null | undefined>(undefined)
  const [open, setOpen] = useState<number | null>(null)
  const [error, setError] = useState('')
  useEffect(() => {
    if (!env) return
    setHistory({})
    const start = new Date(Date.now() - days * DAY)
    const end = new Date(Date.now() + 60_000)
    for (const [type] of SERIES)
      attempt(() => postureHistory(client, type, [env], { start, end }), setError).then((r) => r && setHistory((h) => ({ ...h, [type]: type === 'exposure' ? r.data.map(percent) : r.data })))
    attempt(() => postureStats(client, { domain_sid: `eq:${env}`, sort_by: '-created_at', limit: 1 }), setError).then((r) => r && setStat(r.data[0] ?? null))
    attempt(() => findingTrends(client, [env], { start, end }), setError).then((r) => r && setOpen(r.data.total_finding_count_end))
  }, [env, days])
  return (
    <main class="page">
      <h1>Posture</h1>
      <div class="page-toolbar">
        <EnvironmentPicker value={env} onChange={setEnv} />
        <label class="field">
          Range
          <select value={String(days)} onChange={(e) => setDays(Number((e.target as HTMLSelectElement).value))}>
            <option value="7">last 7 days</option>
            <option value="30">last 30 days</option>
            <option value="90">last 90 days</option>
            <option value="365">last year</option>
          </select>
        </label>
      </div>
      {error && <p role="alert" class="error">{error}</p>}
      <section aria-label="Current statistics" class="stats">
        <h2>Current statistics</h2>
        {stat === null && <p class="muted">No analysis has run for this environment yet.</p>}
        <dl>
          <div><dt>Open findings</dt><dd>{open ?? '…'}</dd></div>
          <div><dt>Exposure</dt><dd>{stat ? `${pct(stat.exposure_index)}%` : '…'}</dd></div>
          <div><dt>Tier Zero objects</dt><dd>{stat ? stat.tier_zero_count : '…'}</dd></div>
          <div><dt>Critical attack paths</dt><dd>{stat ? stat.critical_risk_count : '…'}</dd></div>
          {stat && <div><dt>As of</dt><dd>{stat.created_at.slice(0, 16).replace('T', ' ')} UTC</dd></div>}
        </dl>
      </section>
      <div class="charts">
        {SERIES.map(([type, title, unit]) => (history[type] ? <LineChart key={type} title={title} points={history[type]!} unit={unit} /> : <p key={type} class="muted">Loading {title}…</p>))}
      </div>
    </main>
  )
}
