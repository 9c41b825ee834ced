/**
 * The Posture page's data-quality table: the newest counts by kind of the chosen environment beside the same
 * counts over every environment of its platform the user may see, and the completeness shares. Pure; tested in
 * test/unit/console-pages-logic.test.ts. Field names are BloodHound's (src/findings/dataquality.store.ts).
 */
import type { DataQualityRowJson } from '../../../src/client/dataquality'

export type Platform = 'ad' | 'azure'

/** [field, label] in BloodHound's order; relationships last. */
const KINDS: Record<Platform, [string, string][]> = {
  ad: [
    ['users', 'Users'],
    ['groups', 'Groups'],
    ['computers', 'Computers'],
    ['ous', 'OUs'],
    ['containers', 'Containers'],
    ['gpos', 'GPOs'],
    ['aiacas', 'AIA CAs'],
    ['rootcas', 'Root CAs'],
    ['enterprisecas', 'Enterprise CAs'],
    ['ntauthstores', 'NTAuth stores'],
    ['certtemplates', 'Certificate templates'],
    ['issuancepolicies', 'Issuance policies'],
    ['acls', 'ACEs'],
    ['sessions', 'Sessions'],
    ['relationships', 'Relationships'],
  ],
  azure: [
    ['users', 'Users'],
    ['groups', 'Groups'],
    ['apps', 'Apps'],
    ['service_principals', 'Service principals'],
    ['devices', 'Devices'],
    ['management_groups', 'Management groups'],
    ['subscriptions', 'Subscriptions'],
    ['resource_groups', 'Resource groups'],
    ['vms', 'VMs'],
    ['key_vaults', 'Key vaults'],
    ['automation_accounts', 'Automation accounts'],
    ['container_registries', 'Container registries'],
    ['function_apps', 'Function apps'],
    ['logic_apps', 'Logic apps'],
    ['managed_clusters', 'Managed clusters'],
    ['vm_scale_sets', 'VM scale sets'],
    ['web_apps', 'Web apps'],
    ['relationships', 'Relationships'],
  ],
}

/** The platform of an environment type of GET /api/v2/available-domains (null: one without data-quality rows). */
export function platformOf(type: string | undefined): Platform | null {
  return type === 'active-directory' ? 'ad' : type === 'azure' ? 'azure' : null
}

/** The newest row of a page, whatever its order (null: none yet). */
export function newest(rows: readonly DataQualityRowJson[] | undefined): DataQualityRowJson | null {
  let best: DataQualityRowJson | null = null
  for (const r of rows ?? []) if (!best || r.created_at > best.created_at || (r.created_at === best.created_at && r.id > best.id)) best = r
  return best
}

export interface QualityLine {
  label: string
  environment: number | null
  all: number | null
}

const num = (row: DataQualityRowJson | null, k: string) => (row && typeof row[k] === 'number' ? (row[k] as number) : null)

/** One line per kind: the environment's count and the platform's (null where there is no row yet). */
export function qualityLines(platform: Platform, env: DataQualityRowJson | null, all: DataQualityRowJson | null): QualityLine[] {
  return KINDS[platform].map(([k, label]) => ({ label, environment: num(env, k), all: num(all, k) }))
}

/** A share (0..1) as a percentage with one decimal ("—" when unknown). */
export function shareText(share: number | null | undefined): string {
  return typeof share === 'number' && Number.isFinite(share) ? `${Math.round(share * 1000) / 10}%` : '—'
}

/** The bar widths (0..100, of the largest environment count) for the small chart beside the table. */
export function barWidths(lines: readonly QualityLine[]): number[] {
  const max = Math.max(0, ...lines.map((l) => l.environment ?? 0))
  return lines.map((l) => (max > 0 && l.environment ? Math.max(1, Math.round(((l.environment ?? 0) / max) * 100)) : 0))
}
