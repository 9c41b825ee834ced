// Attack paths: per environment, the finding types (severity, findings, exposure, impact, trend over 30 days);
// a finding type's details (principals and assets, paged), its count over time, accept / unaccept risk.
import { useEffect, useState } from 'preact/hooks'
import { findingDetails, findingSparkline, isListFinding, setFindingAcceptance, type DetailsPage, type FindingJson } from '../../../src/client/findings'
import { findingTrends, type FindingTrendJson } from '../../../src/client/posture'
import { client } from '../api'
import { EnvironmentPicker } from '../components/environment-picker'
import { LineChart } from '../components/line-chart'
import { Pager } from '../components/pager'
import { attempt } from '../lib/attempt'
import { byImportance, severityOfRisk, trendText } from '../lib/findings'
import { can, useMe } from '../lib/session'

const DAY = 86_400_000
const PAGE = 10

export default function AttackPaths() {
  const [env, setEnv] = useState('')
  const [types, setTypes] = useState<FindingTrendJson[] | null>(null)
  const [selected, setSelected] = useState<FindingTrendJson | null>(null)
  const [error, setError] = useState('')
  useEffect(() => {
    setTypes(null)
    setSelected(null)
    if (!env) return
    attempt(() => findingTrends(client, [env], { start: new Date(Date.now() - 30 * DAY) }), setError).then((r) => r && setTypes(byImportance(r.data.findings)))
  }, [env])
  return (
    <main class="page">
      <h1>Attack paths</h1>
      <EnvironmentPicker value={env} onChange={setEnv} />
      {error && <p role="alert" class="error">{error}</p>}
      {types && types.length === 0 && <p class="muted">No findings in this environment (or no analysis has run yet).</p>}
      {types && types.length > 0 && (
        <table aria-label="Finding types" class="list findings">
          <thead>
            <tr><th scope="col">Finding</th><th scope="col">Severity</th><th scope="col">Findings</th><th scope="col">Exposure</th><th scope="col">Impact</th><th scope="col">Trend (30 days)</th></tr>
          </thead>
          <tbody>
            {types.map((t) => {
              const sev = severityOfRisk(t.composite_risk)
              return (
                <tr key={t.finding} aria-selected={selected?.finding === t.finding}>
                  <td><button class="link" onClick={() => setSelected(t)} aria-label={`Open ${t.display_title}`}>{t.display_title}</button></td>
                  <td><span class={`severity ${sev}`}>{sev}</span></td>
                  <td>{t.finding_count_end}</td>
                  <td>{t.exposure_count}</td>
                  <td>{t.impact_count}</td>
                  <td>{trendText(t.finding_count_increase, t.finding_count_decrease)}</td>
                </tr>
              )
            })}
          </tbody>
        </table>
      )}
      {selected && <FindingDetails env={env} type={selected} key={`${env}/${selected.finding}`} />}
    </main>
  )
}

function who(f: FindingJson): { principal: string; kind: string; asset: string } {
  if (isListFinding(f)) return { principal: f.PrincipalName || f.Principal, kind: f.PrincipalKind, asset: '' }
  return { principal: f.FromPrincipalName || f.FromPrincipal, kind: f.FromPrincipalKind, asset: f.ToPrincipalName || f.ToPrincipal }
}

function FindingDetails({ env, type }: { env: string; type: FindingTrendJson }) {
  const me = useMe()
  const mayAccept = can(me, 'risks/ManageRisks')
  const [skip, setSkip] = useState(0)
  const [page, setPage] = useState<DetailsPage | null>(null)
  const [trend, setTrend] = useState<{ date: string; value: number }[] | null>(null)
  const [error, setError] = useState('')
  const [rowError, setRowError] = useState<{ id: number; message: string } | null>(null)
  const load = () => attempt(() => findingDetails(client, env, { finding: type.finding, skip, limit: PAGE }), setError).then((r) => r && setPage(r))
  useEffect(() => {
    load()
  }, [skip])
  useEffect(() => {
    attempt(() => findingSparkline(client, env, { finding: type.finding, from: new Date(Date.now() - 30 * DAY).toISOString() }), setError).then(
      (r) => r && setTrend(r.data.map((p) => ({ date: p.created_at, value: p.FindingCount }))),
    )
  }, [])
  async function toggle(f: FindingJson) {
    const r = await attempt(() => setFindingAcceptance(client, f.id, { accepted: !f.Accepted }), (m) => setRowError(m ? { id: f.id, message: m } : null))
    if (r) load()
  }
  const relationship = page?.data.some((f) => !isListFinding(f)) ?? type.display_type !== 'list'
  return (
    <section class="finding" aria-label={`${type.display_title} details`}>
      <h2>{type.display_title}</h2>
      {error && <p role="alert" class="error">{error}</p>}
      {trend && <LineChart title="Findings over 30 days" points={trend} />}
      {page && (
        <>
          <table aria-label={`${type.display_title} findings`} class="list">
            <thead>
              <tr>
                <th scope="col">{relationship ? 'Principal' : 'Principal'}</th>
                <th scope="col">Kind</th>
                {relationship && <th scope="col">Asset</th>}
                <th scope="col">Severity</th>
                <th scope="col">Exposure</th>
                <th scope="col">Risk</th>
              </tr>
            </thead>
            <tbody>
              {page.data.map((f) => {
                const w = who(f)
                return (
                  <tr key={f.id}>
                    <td>{w.principal}</td>
                    <td>{w.kind}</td>
                    {relationship && <td>{w.asset}</td>}
                    <td><span class={`severity ${f.Severity}`}>{f.Severity}</span></td>
                    <td>{Math.round(f.ExposurePercentage * 100)}%</td>
                    <td>
                      {f.Accepted ? 'accepted' : 'open'}
                      {mayAccept && (
                        <button class="secondary small" onClick={() => toggle(f)} aria-label={`${f.Accepted ? 'Unaccept' : 'Accept'} risk of ${w.principal}${w.asset ? ` to ${w.asset}` : ''}`}>
                          {f.Accepted ? 'Unaccept risk' : 'Accept risk'}
                        </button>
                      )}
                      {rowError?.id === f.id && <p role="alert" class="error">{rowError.message}</p>}
                    </td>
                  </tr>
                )
              })}
            </tbody>
          </table>
          <Pager skip={skip} limit={PAGE} length={page.data.length} count={page.count} label="findings" onSkip={setSkip} />
        </>
      )}
    </section>
  )
}
