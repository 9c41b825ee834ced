// Posture: per environment, the posture history (findings, exposure, assets, attack paths) as SVG charts with
// their tables, the current statistics (the newest posture record and the open findings), and the data quality
// (the newest counts by kind, beside the platform's, and the completeness shares; ui/src/lib/data-quality.ts).
import { useEffect, useState } from 'preact/hooks'
import { findingTrends, postureHistory, postureStats, type PostureHistoryType, type PostureStatJson } from '../../../src/client/posture'
import { client } from '../api'
import { EnvironmentPicker } from '../components/environment-picker'
import { LineChart } from '../components/line-chart'
import { attempt } from '../lib/attempt'
import type { Point } from '../lib/chart'
import { adDataQuality, azureDataQuality, databaseCompleteness, platformDataQuality, type DataQualityRowJson } from '../../../src/client/dataquality'
import { barWidths, newest, platformOf, qualityLines, shareText, type Platform } from '../lib/data-quality'

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

interface Quality {
  platform: Platform
  env: DataQualityRowJson | null
  all: DataQualityRowJson | null
  completeness: { session: number; localGroup: number } | null
}

/** The data-quality section: a table of the newest counts by kind (with a bar each), and the completeness. */
function DataQuality({ q }: { q: Quality | null | undefined }) {
  if (q === undefined) return <p class="muted">Loading data quality…</p>
  if (q === null) return <p class="muted">No data-quality figures for this kind of environment.</p>
  const lines = qualityLines(q.platform, q.env, q.all)
  const widths = barWidths(lines)
  const allLabel = q.platform === 'ad' ? 'All AD domains' : 'All Azure tenants'
  return (
    <>
      {!q.env && <p class="muted">No analysis has counted this environment yet.</p>}
      {q.env && <p class="muted">As of {String(q.env.created_at).slice(0, 16).replace('T', ' ')} UTC (analysis run {String(q.env.run_id)}).</p>}
      <table class="list" aria-label="Data quality by kind">
        <thead><tr><th scope="col">Kind</th><th scope="col">This environment</th><th scope="col"><span class="sr">Share of the largest count</span></th><th scope="col">{allLabel}</th></tr></thead>
        <tbody>
          {lines.map((l, i) => (
            <tr key={l.label}>
              <th scope="row">{l.label}</th>
              <td class="num">{l.environment ?? '—'}</td>
              <td aria-hidden="true"><span class="bar" style={{ width: `${widths[i]}%` }} /></td>
              <td class="num">{l.all ?? '—'}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {q.platform === 'ad' && (
        <dl aria-label="Completeness">
          <div><dt>Session completeness (this domain)</dt><dd>{shareText(q.env?.session_completeness as number | undefined)}</dd></div>
          <div><dt>Local group completeness (this domain)</dt><dd>{shareText(q.env?.local_group_completeness as number | undefined)}</dd></div>
          <div><dt>Session completeness (all domains)</dt><dd>{shareText(q.completeness?.session)}</dd></div>
          <div><dt>Local group completeness (all domains)</dt><dd>{shareText(q.completeness?.localGroup)}</dd></div>
        </dl>
      )}
    </>
  )
}

export default function Posture() {
  const [env, setEnv] = useState('')
  const [envType, setEnvType] = useState<string | undefined>(undefined)
  const [quality, setQuality] = useState<Quality | null | undefined>(undefined)
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
  useEffect(() => {
    if (!env) return
    const platform = platformOf(envType)
    if (!platform) return setQuality(null)
    setQuality(undefined)
    // the newest row of each: environment and platform (any age: `start` far back), and the database completeness
    const span = { start: new Date(0), end: new Date(Date.now() + 60_000), sort_by: '-created_at', limit: 1 }
    Promise.all([
      attempt(() => (platform === 'ad' ? adDataQuality(client, env, span) : azureDataQuality(client, env, span)), setError),
      attempt(() => platformDataQuality(client, platform, span), setError),
      platform === 'ad' ? attempt(() => databaseCompleteness(client), setError) : Promise.resolve(undefined),
    ]).then(([mine, all, c]) =>
      setQuality({
        platform,
        env: newest(mine?.data),
        all: newest(all?.data),
        completeness: c ? { session: c.data.SessionCompleteness, localGroup: c.data.LocalGroupCompleteness } : null,
      }),
    )
  }, [env, envType])
  return (
    <main class="page">
      <h1>Posture</h1>
      <div class="page-toolbar">
        <EnvironmentPicker value={env} onChange={(id, e) => (setEnvType(e?.type), setEnv(id))} />
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
      <section aria-label="Data quality" class="stats">
        <h2>Data quality</h2>
        <DataQuality q={quality} />
      </section>
    </main>
  )
}
