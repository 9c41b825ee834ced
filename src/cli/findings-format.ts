import type { FindingItem } from '../client/cli-endpoints'

/** One line's worth of a finding record, for both relationship findings (From → To) and list findings. */
export function findingSummary(item: FindingItem & Record<string, unknown>): { severity: string; impact: string; subject: string; created_at: string } {
  const props = (k: string) => (item[k] && typeof item[k] === 'object' ? (item[k] as Record<string, unknown>) : {})
  const name = (n: unknown, id: unknown, p: Record<string, unknown>) => String(n ?? p.name ?? id ?? p.objectid ?? '?')
  const subject =
    item.FromPrincipal !== undefined || item.FromPrincipalName !== undefined || item.FromPrincipalProps !== undefined
      ? `${name(item.FromPrincipalName, item.FromPrincipal, props('FromPrincipalProps'))} -> ${name(item.ToPrincipalName, item.ToPrincipal, props('ToPrincipalProps'))}`
      : name(item.PrincipalName, item.Principal, props('Props'))
  const pct = typeof item.ImpactPercentage === 'number' ? item.ImpactPercentage : typeof item.ExposurePercentage === 'number' ? item.ExposurePercentage : null
  return {
    severity: item.Severity || '-',
    impact: pct === null ? '-' : `${Math.round(pct * 100)}%`,
    subject,
    created_at: item.created_at ?? '',
  }
}
