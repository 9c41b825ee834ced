/**
 * SQL of SAML sign-in (migrations/0016_saml_sign_in.sql): what the assertion consumer needs to know about
 * a provider, the record of AuthnRequests this service issued, the replay cache of accepted assertion
 * IDs, and the user lookup of a sign-in. Provider management SQL stays in saml.store.ts.
 */
import type { AutoProvision } from './provisioning'
import { parseConfig, type SignInOptions } from './saml.store'
import { toUser, type User } from '../auth/users.store'

export interface AcsProvider {
  sso_provider_id: number
  slug: string
  issuer_uri: string
  principal_attribute_mappings: string[]
  auto_provision: AutoProvision
  sign_in: SignInOptions
  /** DER base64 of each signing certificate of the metadata */
  certificates: string[]
  /** the metadata's validUntil (RFC 3339), or null: past it, the metadata (and its certificates) is trusted nowhere */
  metadata_valid_until: string | null
}

export async function getAcsProvider(db: D1Database, slug: string): Promise<AcsProvider | null> {
  const r = await db
    .prepare(
      `SELECT s.id AS sso_provider_id, s.slug, s.config, p.issuer_uri, p.principal_attribute_mappings, p.metadata_valid_until,
              (SELECT json_group_array(c.der_base64) FROM (SELECT der_base64 FROM saml_provider_certificates WHERE saml_provider_id = p.id ORDER BY position) c) AS certificates
         FROM sso_providers s JOIN saml_providers p ON p.sso_provider_id = s.id
        WHERE s.slug = ?`,
    )
    .bind(slug)
    .first<{ sso_provider_id: number; slug: string; config: string; issuer_uri: string; principal_attribute_mappings: string; certificates: string; metadata_valid_until: string | null }>()
  if (!r) return null
  const cfg = parseConfig(r.config)
  return {
    sso_provider_id: r.sso_provider_id,
    slug: r.slug,
    issuer_uri: r.issuer_uri,
    principal_attribute_mappings: JSON.parse(r.principal_attribute_mappings) as string[],
    auto_provision: cfg.auto_provision,
    sign_in: cfg.sign_in,
    certificates: JSON.parse(r.certificates) as string[],
    metadata_valid_until: r.metadata_valid_until,
  }
}

/** Remembers an issued AuthnRequest until `expiresAt`; purges expired ones in the same batch (keeps the table small). */
export async function recordAuthnRequest(db: D1Database, id: string, slug: string, now: string, expiresAt: string): Promise<boolean> {
  const [, ins] = await db.batch([
    db.prepare('DELETE FROM saml_authn_requests WHERE expires_at <= ?').bind(now),
    db
      .prepare(`INSERT INTO saml_authn_requests (id, sso_provider_id, created_at, expires_at) SELECT ?, id, ?, ? FROM sso_providers WHERE slug = ?`)
      .bind(id, now, expiresAt, slug),
  ])
  return ins.meta.changes === 1
}

/**
 * One batch (one transaction) for a verified response: consumes the AuthnRequest it answers (only if it
 * was issued for this provider and has not expired; deleting it means a second answer finds nothing)
 * and records the assertion ID until it could no longer be accepted anyway. `request` is null for an
 * IdP-initiated response. A conflict on the assertion ID means it was accepted before: a replay.
 */
export async function claimResponse(
  db: D1Database,
  a: { ssoProviderId: number; inResponseTo: string | null; assertionId: string; until: string; now: string },
): Promise<{ request: boolean | null; fresh: boolean }> {
  const stmts: D1PreparedStatement[] = [
    db.prepare('DELETE FROM saml_assertions_used WHERE expires_at <= ?').bind(a.now),
    db
      .prepare(
        `INSERT INTO saml_assertions_used (sso_provider_id, assertion_id, expires_at) VALUES (?, ?, ?)
         ON CONFLICT (sso_provider_id, assertion_id) DO NOTHING RETURNING assertion_id`,
      )
      .bind(a.ssoProviderId, a.assertionId, a.until),
  ]
  if (a.inResponseTo !== null)
    stmts.push(
      db
        .prepare('DELETE FROM saml_authn_requests WHERE id = ? AND sso_provider_id = ? AND expires_at > ? RETURNING id')
        .bind(a.inResponseTo, a.ssoProviderId, a.now),
    )
  const results = await db.batch(stmts)
  return { fresh: results[1].results.length === 1, request: a.inResponseTo === null ? null : results[2].results.length === 1 }
}

const USER_COLUMNS = 'id, principal_name, email, password_hash, roles, is_disabled, all_environments, environment_ids, sso_provider_id, created_at, updated_at'

/**
 * The users a principal names: principal name or email, case-insensitively (as password login and
 * BloodHound's LookupUser). Two different users can match (one by name, another by email): the caller
 * then refuses rather than guess.
 */
export async function usersForPrincipal(db: D1Database, principal: string): Promise<User[]> {
  const { results } = await db
    .prepare(`SELECT ${USER_COLUMNS} FROM users WHERE principal_name = ?1 COLLATE NOCASE OR email = ?1 COLLATE NOCASE LIMIT 2`)
    .bind(principal)
    .all<Parameters<typeof toUser>[0]>()
  return results.map(toUser)
}
