import { auditedBatch } from '../audit/audit.store'
import type { AuditWrite } from '../audit/audit'
import { CITRIX_RDP_SUPPORT, isParameterKey, PASSWORD_EXPIRATION_WINDOW, type ParameterKey } from './parameters'
import { FLAGS, NTLM_POST_PROCESSING, type FlagDefinition } from './flags'

/** SQL of application configuration: parameters and feature flags an administrator set (migrations/0046). */

/** The parameters an administrator set, by key (keys EdgeHound no longer knows are left out). */
export async function storedParameters(db: D1Database): Promise<Map<ParameterKey, Record<string, unknown>>> {
  const { results } = await db.prepare(`SELECT key, value FROM app_config_parameters`).all<{ key: string; value: string }>()
  const out = new Map<ParameterKey, Record<string, unknown>>()
  for (const r of results) if (isParameterKey(r.key)) out.set(r.key, JSON.parse(r.value) as Record<string, unknown>)
  return out
}

/** Stores a parameter's value, with its audit success row (UpdateParameter) in the same batch. */
export async function setParameter(db: D1Database, key: ParameterKey, value: Record<string, unknown>, userId: string, now: string, audit: AuditWrite): Promise<void> {
  await auditedBatch(
    db,
    [
      db
        .prepare(
          `INSERT INTO app_config_parameters (key, value, updated_at, updated_by) VALUES (?1, ?2, ?3, ?4)
           ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at, updated_by = excluded.updated_by`,
        )
        .bind(key, JSON.stringify(value), now, userId),
    ],
    audit,
  )
}

/** The state of every flag: an administrator's toggle where there is one, else the definition's default. */
export async function flagStates(db: D1Database): Promise<Map<string, boolean>> {
  const { results } = await db.prepare(`SELECT key, enabled FROM feature_flags`).all<{ key: string; enabled: number }>()
  const stored = new Map(results.map((r) => [r.key, r.enabled === 1]))
  return new Map(FLAGS.map((f) => [f.key, f.user_updatable ? (stored.get(f.key) ?? f.enabled) : f.enabled]))
}

/**
 * Toggles a user-updatable flag in one statement (a concurrent toggle cannot be lost: each flips what the row
 * holds when it runs), with its audit success row (ToggleEarlyAccessFeatureFlag, naming the new state, read in
 * the batch) in the same batch. Returns the new state.
 */
export async function toggleFlag(db: D1Database, flag: FlagDefinition, userId: string, now: string, audit: AuditWrite): Promise<boolean> {
  if (!/^[a-z_]+$/.test(flag.key)) throw new Error(`flag key ${flag.key} is not a plain name`)
  const [r] = await auditedBatch(
    db,
    [
      db
        .prepare(
          `INSERT INTO feature_flags (key, enabled, updated_at, updated_by) VALUES (?1, ?2, ?3, ?4)
           ON CONFLICT (key) DO UPDATE SET enabled = 1 - feature_flags.enabled, updated_at = excluded.updated_at, updated_by = excluded.updated_by
           RETURNING enabled`,
        )
        .bind(flag.key, flag.enabled ? 0 : 1, now, userId),
    ],
    audit,
    // the key is a definition's (checked above), never input
    { computed: { enabled: `SELECT json(CASE enabled WHEN 1 THEN 'true' ELSE 'false' END) FROM feature_flags WHERE key = '${flag.key}'` } },
  )
  return (r.results[0] as { enabled: number }).enabled === 1
}

/** What analysis reads of the configuration (src/collectors/postprocess.ts), in one round trip. */
export interface AnalysisSettings {
  citrixRdp: boolean
  ntlm: boolean
}

export async function analysisSettings(db: D1Database): Promise<AnalysisSettings> {
  const [p, f] = await db.batch([
    db.prepare(`SELECT value FROM app_config_parameters WHERE key = ?1`).bind(CITRIX_RDP_SUPPORT),
    db.prepare(`SELECT enabled FROM feature_flags WHERE key = ?1`).bind(NTLM_POST_PROCESSING),
  ])
  const citrix = p.results[0] as { value: string } | undefined
  const ntlm = f.results[0] as { enabled: number } | undefined
  return {
    citrixRdp: citrix ? (JSON.parse(citrix.value) as { enabled?: unknown }).enabled !== false : true,
    ntlm: ntlm ? ntlm.enabled === 1 : true,
  }
}

/** The password expiration window's stored duration text, or null (its default applies). */
export async function storedPasswordExpiration(db: D1Database): Promise<string | null> {
  const r = await db.prepare(`SELECT value FROM app_config_parameters WHERE key = ?1`).bind(PASSWORD_EXPIRATION_WINDOW).first<{ value: string }>()
  if (!r) return null
  const d = (JSON.parse(r.value) as { duration?: unknown }).duration
  return typeof d === 'string' ? d : null
}
