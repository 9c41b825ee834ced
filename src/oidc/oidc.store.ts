/**
 * SQL for OIDC providers and sign-ins in progress (migrations/0045_oidc.sql). A provider is written in one
 * batch with its sso_providers row and its audit entry; a login state is consumed by one DELETE … RETURNING,
 * so two callbacks racing for the same state cannot both get it.
 */
import { auditedBatch } from '../audit/audit.store'
import type { AuditWrite } from '../audit/audit'
import type { AutoProvision } from '../saml/provisioning'

export const SSO_TYPE_OIDC = 2

export interface OidcProviderRecord {
  id: number
  sso_provider_id: number
  name: string
  slug: string
  client_id: string
  issuer: string
  client_secret_sealed: string | null
  auto_provision: AutoProvision
  created_at: string
  updated_at: string
}

const SELECT = `
  SELECT o.id, o.sso_provider_id, s.name, s.slug, o.client_id, o.issuer, o.client_secret_sealed, s.config, o.created_at, o.updated_at
    FROM oidc_providers o JOIN sso_providers s ON s.id = o.sso_provider_id`

type Row = Omit<OidcProviderRecord, 'auto_provision'> & { config: string }
const toRecord = (r: Row): OidcProviderRecord => {
  const { config, ...rest } = r
  return { ...rest, auto_provision: (JSON.parse(config) as { auto_provision: AutoProvision }).auto_provision }
}
const configJson = (a: AutoProvision) => JSON.stringify({ auto_provision: { enabled: a.enabled, default_role_id: a.default_role_id, role_provision: a.role_provision } })

export interface NewOidcProvider {
  name: string
  slug: string
  client_id: string
  issuer: string
  client_secret_sealed: string | null
  auto_provision: AutoProvision
  now: string
}

export async function createOidcProvider(db: D1Database, p: NewOidcProvider, audit: AuditWrite): Promise<OidcProviderRecord> {
  const results = await auditedBatch(
    db,
    [
      db
        .prepare(`INSERT INTO sso_providers (name, slug, type, config, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)`)
        .bind(p.name, p.slug, SSO_TYPE_OIDC, configJson(p.auto_provision), p.now, p.now),
      db
        .prepare(
          `INSERT INTO oidc_providers (sso_provider_id, client_id, issuer, client_secret_sealed, created_at, updated_at)
           VALUES ((SELECT id FROM sso_providers WHERE slug = ?), ?, ?, ?, ?, ?)`,
        )
        .bind(p.slug, p.client_id, p.issuer, p.client_secret_sealed, p.now, p.now),
      db.prepare(`${SELECT} WHERE s.slug = ?`).bind(p.slug),
    ],
    audit,
  )
  const row = results[2].results[0] as Row | undefined
  if (!row) throw new Error('OIDC provider not found after insert')
  return toRecord(row)
}

/** A provider's new settings: `client_secret_sealed` sealed for the new issuer and client id, or null for none. */
export type OidcProviderUpdate = NewOidcProvider & { ssoProviderId: number }

/**
 * Replaces an OIDC provider's settings in one batch with its audit entry (both rows and the read-back). Null
 * when the provider no longer exists (deleted meanwhile): nothing was written.
 */
export async function updateOidcProvider(db: D1Database, p: OidcProviderUpdate, audit: AuditWrite): Promise<OidcProviderRecord | null> {
  const results = await auditedBatch(
    db,
    [
      db
        .prepare(`UPDATE sso_providers SET name = ?, slug = ?, config = ?, updated_at = ? WHERE id = ? AND type = ?`)
        .bind(p.name, p.slug, configJson(p.auto_provision), p.now, p.ssoProviderId, SSO_TYPE_OIDC),
      db
        .prepare(`UPDATE oidc_providers SET client_id = ?, issuer = ?, client_secret_sealed = ?, updated_at = ? WHERE sso_provider_id = ?`)
        .bind(p.client_id, p.issuer, p.client_secret_sealed, p.now, p.ssoProviderId),
      db.prepare(`${SELECT} WHERE o.sso_provider_id = ?`).bind(p.ssoProviderId),
    ],
    audit,
    // the audit entry only when the provider row was there to change
    { ifChanged: 0 },
  )
  const row = results[2].results[0] as Row | undefined
  return row ? toRecord(row) : null
}

export async function getOidcProviderBySlug(db: D1Database, slug: string): Promise<OidcProviderRecord | null> {
  const r = await db.prepare(`${SELECT} WHERE s.slug = ?`).bind(slug).first<Row>()
  return r ? toRecord(r) : null
}

/** Every OIDC provider, in the SSO provider list's order (created_at, then id). */
export async function listOidcProviders(db: D1Database): Promise<OidcProviderRecord[]> {
  const { results } = await db.prepare(`${SELECT} ORDER BY s.created_at, s.id`).all<Row>()
  return results.map(toRecord)
}

/** The type of the SSO provider with this slug (1 SAML, 2 OIDC), or null: which callback method applies. */
export async function ssoProviderTypeBySlug(db: D1Database, slug: string): Promise<number | null> {
  const r = await db.prepare('SELECT type FROM sso_providers WHERE slug = ?').bind(slug).first<{ type: number }>()
  return r ? r.type : null
}

export async function getOidcProviderBySsoId(db: D1Database, id: number): Promise<OidcProviderRecord | null> {
  const r = await db.prepare(`${SELECT} WHERE o.sso_provider_id = ?`).bind(id).first<Row>()
  return r ? toRecord(r) : null
}

export interface LoginState {
  ref: string
  sso_provider_id: number
  state: string
  nonce: string
  code_verifier: string
  relay: string | null
  expires_at: string
}

/** Records a sign-in in progress; expired rows of any provider are purged in the same batch. */
export async function recordLoginState(db: D1Database, s: LoginState, now: string): Promise<void> {
  await db.batch([
    db.prepare(`DELETE FROM oidc_login_states WHERE expires_at <= ?`).bind(now),
    db
      .prepare(`INSERT INTO oidc_login_states (ref, sso_provider_id, state, nonce, code_verifier, relay, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?)`)
      .bind(s.ref, s.sso_provider_id, s.state, s.nonce, s.code_verifier, s.relay, s.expires_at),
  ])
}

/** Takes (deletes and returns) the unexpired sign-in `ref` of this provider: one use, whatever happens next. */
export async function consumeLoginState(db: D1Database, ref: string, ssoProviderId: number, now: string): Promise<LoginState | null> {
  const r = await db
    .prepare(`DELETE FROM oidc_login_states WHERE ref = ? AND sso_provider_id = ? AND expires_at > ? RETURNING *`)
    .bind(ref, ssoProviderId, now)
    .first<LoginState>()
  return r ?? null
}
