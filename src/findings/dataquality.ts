/**
 * Data quality of one analysis run (issue 27; docs/findings.md "Data quality"): per AD domain and Azure tenant,
 * the counts and completeness BloodHound's Data Quality page shows, read from the graph in keyset pages of
 * DATA_QUALITY_PAGE nodes (one bounded statement each, dataquality.store.ts) and summed here. The rows are written
 * by the run's commit batch (run.ts).
 *
 * Completeness (BloodHound's FetchUserSessionCompleteness / FetchLocalGroupCompleteness, per domain): a page hands
 * over each candidate's logon time and whether it is covered; only once every page is read is the domain's newest
 * logon known, and with it the 14-day activity window. `Logons` keeps, per domain, the candidates that can still
 * be active — the window only moves forward as newer logons arrive, so a logon before it never counts again and is
 * dropped — and counts them at the end. Pure apart from `collectDataQuality`, which reads the pages.
 */
import {
  ACTIVITY_WINDOW_SECONDS,
  AD_COUNT_COLUMNS,
  adDataQualityPage,
  AZURE_COUNT_COLUMNS,
  azureDataQualityPage,
  dataQualityEnvironments,
  type AdDataQualityRow,
  type AzureDataQualityRow,
  type DataQualityPage,
} from './dataquality.store'

/** Nodes per page: a page joins its nodes' outbound edges (5 per node on average: ~25 000 index entries). */
export const DATA_QUALITY_PAGE = 5_000

/** Candidates of one completeness fraction: logon times (seconds) and whether each is covered. */
export class Logons {
  private newest = Number.NEGATIVE_INFINITY
  private logons: number[] = []
  private covered: boolean[] = []
  /** kept length after the last drop: dropping again is worth it only once the arrays have doubled */
  private kept = 0

  add(logon: number, covered: boolean): void {
    if (!Number.isFinite(logon)) return
    if (logon > this.newest) this.newest = logon
    if (logon < this.newest - ACTIVITY_WINDOW_SECONDS) return
    this.logons.push(logon)
    this.covered.push(covered)
    if (this.logons.length > 2 * Math.max(this.kept, 1024)) this.drop()
  }

  /** JSON `[[logon, 0|1], …]` of a page (null: none). */
  addJson(json: string | null | undefined): void {
    if (!json) return
    for (const [logon, covered] of JSON.parse(json) as [unknown, unknown][]) if (typeof logon === 'number') this.add(logon, covered === 1)
  }

  private drop(): void {
    const since = this.newest - ACTIVITY_WINDOW_SECONDS
    const logons: number[] = []
    const covered: boolean[] = []
    for (let i = 0; i < this.logons.length; i++)
      if (this.logons[i] >= since) {
        logons.push(this.logons[i])
        covered.push(this.covered[i])
      }
    this.logons = logons
    this.covered = covered
    this.kept = logons.length
  }

  /** Active candidates (logon at most 14 days before the newest) and how many of them are covered. */
  result(): { active: number; covered: number } {
    const since = this.newest - ACTIVITY_WINDOW_SECONDS
    let active = 0
    let covered = 0
    for (let i = 0; i < this.logons.length; i++)
      if (this.logons[i] >= since) {
        active++
        if (this.covered[i]) covered++
      }
    return { active, covered }
  }
}

function sumInto(total: Record<string, number>, counts: Record<string, number>): void {
  for (const [k, v] of Object.entries(counts)) total[k] = (total[k] ?? 0) + v
}

/** Sums an AD domain's pages into its row. */
export class AdDomainTally {
  readonly counts: Record<string, number> = Object.fromEntries(AD_COUNT_COLUMNS.map((c) => [c, 0]))
  readonly users = new Logons()
  readonly computers = new Logons()

  constructor(readonly domainSid: string) {}

  add(page: DataQualityPage): void {
    sumInto(this.counts, page.counts)
    this.users.addJson(page.userLogons)
    this.computers.addJson(page.computerLogons)
  }

  row(): AdDataQualityRow {
    const u = this.users.result()
    const c = this.computers.result()
    return {
      domainSid: this.domainSid,
      ...(this.counts as Record<(typeof AD_COUNT_COLUMNS)[number], number>),
      activeUsers: u.active,
      usersWithSessions: u.covered,
      activeComputers: c.active,
      computersWithAdmins: c.covered,
    }
  }
}

/**
 * Every AD domain's and Azure tenant's row, read page by page: 1 statement for the environment list, then per
 * environment ⌈nodes / pageSize⌉ statements (one more when the count is an exact multiple).
 */
export async function collectDataQuality(
  db: D1Database,
  pageSize = DATA_QUALITY_PAGE,
): Promise<{ ad: AdDataQualityRow[]; azure: AzureDataQualityRow[] }> {
  const ad: AdDataQualityRow[] = []
  const azure: AzureDataQualityRow[] = []
  for (const env of await dataQualityEnvironments(db)) {
    if (env.platform === 'ad') {
      const tally = new AdDomainTally(env.id)
      for (let after = Number.MIN_SAFE_INTEGER; ; ) {
        const page = await adDataQualityPage(db, env.id, after, pageSize)
        tally.add(page)
        if (page.count < pageSize) break
        after = page.lastId
      }
      ad.push(tally.row())
    } else {
      const counts: Record<string, number> = Object.fromEntries(AZURE_COUNT_COLUMNS.map((c) => [c, 0]))
      for (let after = Number.MIN_SAFE_INTEGER; ; ) {
        const page = await azureDataQualityPage(db, env.id, after, pageSize)
        sumInto(counts, page.counts)
        if (page.count < pageSize) break
        after = page.lastId
      }
      azure.push({ tenantId: env.id, ...(counts as Record<(typeof AZURE_COUNT_COLUMNS)[number], number>) })
    }
  }
  return { ad, azure }
}
