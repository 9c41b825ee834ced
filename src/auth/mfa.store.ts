/**
 * A user's TOTP enrolment in D1 (migration 0041): the sealed secret, whether it is activated, and the step of
 * the last code accepted. SQL only; the rules are in src/auth/mfa.ts, the code check in src/auth/totp.ts.
 */
import { auditedBatch } from '../audit/audit.store'
import type { AuditWrite } from '../audit/audit'

export interface MfaState {
  /** the sealed TOTP secret, or null when not enrolled */
  sealed: string | null
  activated: boolean
  lastStep: number | null
}

export type MfaStatus = 'activated' | 'pending' | 'deactivated'

/** BloodHound's three states: a secret that is activated, a secret not yet activated, or none. */
export function mfaStatus(m: MfaState | null): MfaStatus {
  if (!m || m.sealed === null) return 'deactivated'
  return m.activated ? 'activated' : 'pending'
}

export async function getMfa(db: D1Database, userId: string): Promise<MfaState | null> {
  const r = await db
    .prepare('SELECT totp_secret, totp_activated, totp_last_step FROM users WHERE id = ?')
    .bind(userId)
    .first<{ totp_secret: string | null; totp_activated: number; totp_last_step: number | null }>()
  return r ? { sealed: r.totp_secret, activated: r.totp_activated === 1, lastStep: r.totp_last_step } : null
}

/** Enrolment: a new pending secret replaces any earlier pending one (never an activated one). */
export async function enrolMfa(db: D1Database, userId: string, sealed: string, now: string, audit: AuditWrite): Promise<boolean> {
  const [r] = await auditedBatch(
    db,
    [
      db
        .prepare('UPDATE users SET totp_secret = ?, totp_activated = 0, totp_last_step = NULL, updated_at = ? WHERE id = ? AND totp_activated = 0')
        .bind(sealed, now, userId),
    ],
    audit,
    { ifChanged: 0 },
  )
  return r.meta.changes === 1
}

/**
 * Activation with the code of `step`: only for the secret that was checked (`sealed`, so an enrolment in
 * between is not activated by a code of the old secret) and only for a step later than the last used.
 */
export async function activateMfa(db: D1Database, userId: string, sealed: string, step: number, now: string, audit: AuditWrite): Promise<boolean> {
  const [r] = await auditedBatch(
    db,
    [
      db
        .prepare(
          `UPDATE users SET totp_activated = 1, totp_last_step = ?, updated_at = ?
           WHERE id = ? AND totp_secret = ? AND (totp_last_step IS NULL OR totp_last_step < ?)`,
        )
        .bind(step, now, userId, sealed, step),
    ],
    audit,
    { ifChanged: 0 },
  )
  return r.meta.changes === 1
}

/**
 * A sign-in's code: claims its step, once. The statement changes the row only when the step is later than
 * the last used one, so of two sign-ins racing with the same code exactly one claims it. Not audited on its
 * own: the sign-in's LoginAttempt entry records the outcome.
 */
export async function claimMfaStep(db: D1Database, userId: string, sealed: string, step: number): Promise<boolean> {
  const r = await db
    .prepare('UPDATE users SET totp_last_step = ? WHERE id = ? AND totp_activated = 1 AND totp_secret = ? AND (totp_last_step IS NULL OR totp_last_step < ?)')
    .bind(step, userId, sealed, step)
    .run()
  return r.meta.changes === 1
}

/** Disenrolment (or an administrator's reset): the secret goes, activated or pending. */
export async function clearMfa(db: D1Database, userId: string, now: string, audit: AuditWrite): Promise<boolean> {
  const [r] = await auditedBatch(
    db,
    [db.prepare('UPDATE users SET totp_secret = NULL, totp_activated = 0, totp_last_step = NULL, updated_at = ? WHERE id = ?').bind(now, userId)],
    audit,
    { ifChanged: 0 },
  )
  return r.meta.changes === 1
}
