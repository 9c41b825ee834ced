/**
 * SQL for SSO / SAML providers (tables in migrations/0002_saml.sql). Every write that touches more than
 * one row is one db.batch(): D1 runs a batch as one transaction, so a failed create or update (for
 * example a UNIQUE violation on a name taken a moment ago by a concurrent request) leaves nothing behind.
 * Certificate sets are passed as one JSON parameter and expanded with json_each(?).
 */
import type { AutoProvision } from './provisioning'
import { auditedBatch } from '../audit/audit.store'
import type { AuditWrite } from '../audit/audit'
import { toUser, type User } from '../auth/users.store'

/**
 * Per-provider sign-in switches (issue 16), stored next to auto_provision in sso_providers.config:
 * both off by default and for every provider stored before they existed.
 */
export interface SignInOptions {
  /** accept responses that answer no AuthnRequest of this service (IdP-initiated sign-in) */
  allow_idp_initiated: boolean
  /** accept RSA-SHA1 signatures and SHA-1 digests */
  allow_sha1: boolean
}
export const SIGN_IN_DEFAULTS: SignInOptions = Object.freeze({ allow_idp_initiated: false, allow_sha1: false })

export const SSO_TYPE_SAML = 1

export interface StoredCertificate {
  der_base64: string
  sha256_fingerprint: string
  not_before: string
  not_after: string
}

export interface SamlProviderRecord {
  id: number
  sso_provider_id: number
  name: string
  display_name: string
  slug: string
  type: number
  config: AutoProvision
  sign_in: SignInOptions
  issuer_uri: string
  single_sign_on_uri: string
  sso_binding: 'HTTP-POST' | 'HTTP-Redirect'
  metadata_valid_until: string | null
  principal_attribute_mappings: string[]
  root_uri_version: number
  certificates: StoredCertificate[]
  created_at: string
  updated_at: string
}

/** What a parsed metadata file contributes to a provider. */
export interface MetadataColumns {
  issuer_uri: string
  single_sign_on_uri: string
  sso_binding: 'HTTP-POST' | 'HTTP-Redirect'
  metadata_valid_until: string | null
  metadata_xml: string
  certificates: StoredCertificate[]
}

interface Row {
  id: number
  sso_provider_id: number
  name: string
  display_name: string
  slug: string
  type: number
  config: string
  issuer_uri: string
  single_sign_on_uri: string
  sso_binding: 'HTTP-POST' | 'HTTP-Redirect'
  metadata_valid_until: string | null
  principal_attribute_mappings: string
  root_uri_version: number
  created_at: string
  updated_at: string
  certificates: string
}

/**
 * One provider per row, its certificates folded in as a JSON array (ordered by position) so that a list
 * is one query. metadata_xml is deliberately not selected: it is large and never shown.
 */
const SELECT = `
  SELECT p.id, p.sso_provider_id, p.name, p.display_name, s.slug, s.type, s.config, p.issuer_uri,
         p.single_sign_on_uri, p.sso_binding, p.metadata_valid_until, p.principal_attribute_mappings,
         p.root_uri_version, p.created_at, p.updated_at,
         (SELECT json_group_array(json_object('der_base64', c.der_base64, 'sha256_fingerprint', c.sha256_fingerprint,
                                              'not_before', c.not_before, 'not_after', c.not_after))
            FROM (SELECT * FROM saml_provider_certificates WHERE saml_provider_id = p.id ORDER BY position) c) AS certificates
    FROM saml_providers p JOIN sso_providers s ON s.id = p.sso_provider_id`

export function parseConfig(json: string): { auto_provision: AutoProvision; sign_in: SignInOptions } {
  const c = JSON.parse(json) as { auto_provision: AutoProvision; allow_idp_initiated?: boolean; allow_sha1?: boolean }
  return {
    auto_provision: c.auto_provision,
    sign_in: { allow_idp_initiated: c.allow_idp_initiated === true, allow_sha1: c.allow_sha1 === true },
  }
}

function toRecord(r: Row): SamlProviderRecord {
  const cfg = parseConfig(r.config)
  return {
    id: r.id,
    sso_provider_id: r.sso_provider_id,
    name: r.name,
    display_name: r.display_name,
    slug: r.slug,
    type: r.type,
    config: cfg.auto_provision,
    sign_in: cfg.sign_in,
    issuer_uri: r.issuer_uri,
    single_sign_on_uri: r.single_sign_on_uri,
    sso_binding: r.sso_binding,
    metadata_valid_until: r.metadata_valid_until,
    principal_attribute_mappings: JSON.parse(r.principal_attribute_mappings) as string[],
    root_uri_version: r.root_uri_version,
    certificates: JSON.parse(r.certificates) as StoredCertificate[],
    created_at: r.created_at,
    updated_at: r.updated_at,
  }
}

const configJson = (c: AutoProvision, o: SignInOptions) =>
  JSON.stringify({
    auto_provision: { enabled: c.enabled, default_role_id: c.default_role_id, role_provision: c.role_provision },
    allow_idp_initiated: o.allow_idp_initiated,
    allow_sha1: o.allow_sha1,
  })

const certsJson = (certs: StoredCertificate[]) => JSON.stringify(certs)

/** Inserts the certificate rows of the SAML provider selected by `providerSql` (one bound parameter). */
function insertCertificates(db: D1Database, providerSql: string, providerArg: unknown, certs: StoredCertificate[]) {
  return db
    .prepare(
      `INSERT INTO saml_provider_certificates (saml_provider_id, position, der_base64, sha256_fingerprint, not_before, not_after)
       SELECT (${providerSql}), CAST(j.key AS INTEGER), json_extract(j.value, '$.der_base64'), json_extract(j.value, '$.sha256_fingerprint'),
              json_extract(j.value, '$.not_before'), json_extract(j.value, '$.not_after')
         FROM json_each(?) j`,
    )
    .bind(providerArg, certsJson(certs))
}

export interface NewProvider extends MetadataColumns {
  name: string
  slug: string
  config: AutoProvision
  signIn: SignInOptions
  now: string
}

/**
 * Creates the sso_providers row, the saml_providers row and the certificate rows in one batch, and reads
 * the result back in the same batch. A UNIQUE violation rejects the whole batch (see uniqueViolation).
 */
export async function createProvider(db: D1Database, p: NewProvider, audit: AuditWrite): Promise<SamlProviderRecord> {
  const results = await auditedBatch(db, [
    db
      .prepare(`INSERT INTO sso_providers (name, slug, type, config, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)`)
      .bind(p.name, p.slug, SSO_TYPE_SAML, configJson(p.config, p.signIn), p.now, p.now),
    db
      .prepare(
        `INSERT INTO saml_providers (sso_provider_id, name, display_name, issuer_uri, single_sign_on_uri, sso_binding,
                                     metadata_valid_until, metadata_xml, principal_attribute_mappings, root_uri_version, created_at, updated_at)
         VALUES ((SELECT id FROM sso_providers WHERE slug = ?), ?, ?, ?, ?, ?, ?, ?, '[]', 2, ?, ?)`,
      )
      .bind(p.slug, p.name, p.name, p.issuer_uri, p.single_sign_on_uri, p.sso_binding, p.metadata_valid_until, p.metadata_xml, p.now, p.now),
    insertCertificates(db, 'SELECT id FROM saml_providers WHERE name = ?', p.name, p.certificates),
    db.prepare(`${SELECT} WHERE s.slug = ?`).bind(p.slug),
  ], audit)
  const row = results[3].results[0] as Row | undefined
  if (!row) throw new Error('provider not found after insert')
  return toRecord(row)
}

export interface ProviderUpdate {
  ssoProviderId: number
  name?: string
  slug?: string
  /** the whole config (both parts) when either changed */
  config?: { auto_provision: AutoProvision; sign_in: SignInOptions }
  metadata?: MetadataColumns
  now: string
}

/**
 * Applies an update in one batch: renames (sso_providers + saml_providers), config, and — when a new
 * metadata file was sent — the metadata columns and the whole certificate set. Returns null when the
 * provider does not exist (any more).
 */
export async function updateProvider(db: D1Database, u: ProviderUpdate, audit: AuditWrite): Promise<SamlProviderRecord | null> {
  const stmts: D1PreparedStatement[] = [
    db
      .prepare(
        `UPDATE sso_providers SET name = COALESCE(?1, name), slug = COALESCE(?2, slug), config = COALESCE(?3, config), updated_at = ?4
          WHERE id = ?5`,
      )
      .bind(u.name ?? null, u.slug ?? null, u.config ? configJson(u.config.auto_provision, u.config.sign_in) : null, u.now, u.ssoProviderId),
    db
      .prepare(
        `UPDATE saml_providers SET name = COALESCE(?1, name), display_name = COALESCE(?1, display_name), updated_at = ?2
          WHERE sso_provider_id = ?3`,
      )
      .bind(u.name ?? null, u.now, u.ssoProviderId),
  ]
  if (u.metadata) {
    const m = u.metadata
    stmts.push(
      db
        .prepare(
          `UPDATE saml_providers SET issuer_uri = ?, single_sign_on_uri = ?, sso_binding = ?, metadata_valid_until = ?, metadata_xml = ?
            WHERE sso_provider_id = ?`,
        )
        .bind(m.issuer_uri, m.single_sign_on_uri, m.sso_binding, m.metadata_valid_until, m.metadata_xml, u.ssoProviderId),
      db
        .prepare(`DELETE FROM saml_provider_certificates WHERE saml_provider_id = (SELECT id FROM saml_providers WHERE sso_provider_id = ?)`)
        .bind(u.ssoProviderId),
      insertCertificates(db, 'SELECT id FROM saml_providers WHERE sso_provider_id = ?', u.ssoProviderId, m.certificates),
    )
  }
  stmts.push(db.prepare(`${SELECT} WHERE s.id = ?`).bind(u.ssoProviderId))
  const results = await auditedBatch(db, stmts, audit, { ifChanged: 0 })
  const row = results[results.length - 1].results[0] as Row | undefined
  return row ? toRecord(row) : null
}

export async function listProviders(db: D1Database): Promise<SamlProviderRecord[]> {
  const { results } = await db.prepare(`${SELECT} ORDER BY s.created_at, s.id`).all<Row>()
  return results.map(toRecord)
}

export async function getProviderById(db: D1Database, samlProviderId: number): Promise<SamlProviderRecord | null> {
  const r = await db.prepare(`${SELECT} WHERE p.id = ?`).bind(samlProviderId).first<Row>()
  return r ? toRecord(r) : null
}

export async function getProviderBySsoId(db: D1Database, ssoProviderId: number): Promise<SamlProviderRecord | null> {
  const r = await db.prepare(`${SELECT} WHERE s.id = ?`).bind(ssoProviderId).first<Row>()
  return r ? toRecord(r) : null
}

export async function getProviderBySlug(db: D1Database, slug: string): Promise<SamlProviderRecord | null> {
  const r = await db.prepare(`${SELECT} WHERE s.slug = ?`).bind(slug).first<Row>()
  return r ? toRecord(r) : null
}

/**
 * Deletes an SSO provider with its SAML part and certificates, in one batch (explicitly, not relying on
 * ON DELETE CASCADE being enabled): its users are unlinked (returned, as BloodHound's `affected_users`),
 * its outstanding AuthnRequests and replay-cache rows go. Returns null when there was nothing to delete.
 */
export async function deleteProvider(
  db: D1Database,
  ssoProviderId: number,
  now: string,
  audit: AuditWrite,
): Promise<{ users: User[]; endedSessions: string[] } | null> {
  const results = await auditedBatch(db, [
    // Its users' sessions end with it (they were opened through this provider), in the same transaction.
    db
      .prepare(
        `UPDATE sessions SET ended_at = ? WHERE ended_at IS NULL AND user_id IN (SELECT id FROM users WHERE sso_provider_id = ?) RETURNING id`,
      )
      .bind(now, ssoProviderId),
    db
      .prepare(
        `UPDATE users SET sso_provider_id = NULL, updated_at = ? WHERE sso_provider_id = ?
         RETURNING id, principal_name, email, password_hash, roles, is_disabled, all_environments, environment_ids, created_at, updated_at`,
      )
      .bind(now, ssoProviderId),
    db.prepare(`DELETE FROM saml_authn_requests WHERE sso_provider_id = ?`).bind(ssoProviderId),
    db.prepare(`DELETE FROM saml_assertions_used WHERE sso_provider_id = ?`).bind(ssoProviderId),
    db
      .prepare(`DELETE FROM saml_provider_certificates WHERE saml_provider_id IN (SELECT id FROM saml_providers WHERE sso_provider_id = ?)`)
      .bind(ssoProviderId),
    db.prepare(`DELETE FROM saml_providers WHERE sso_provider_id = ?`).bind(ssoProviderId),
    db.prepare(`DELETE FROM sso_providers WHERE id = ? RETURNING id`).bind(ssoProviderId),
  ], audit, { ifChanged: 6 })
  if (results[6].results.length === 0) return null
  return {
    users: (results[1].results as unknown as Parameters<typeof toUser>[0][]).map(toUser),
    endedSessions: (results[0].results as { id: string }[]).map((r) => r.id),
  }
}

/**
 * After a UNIQUE violation: which key is taken by another provider, for the message. SQLite reports only
 * one violated index (not necessarily the name's when both are), so look: an equal name wins over an
 * equal slug. `exceptSsoId` leaves the provider being updated out.
 */
export async function takenKey(db: D1Database, name: string, slug: string, exceptSsoId = 0): Promise<'name' | 'slug' | null> {
  const r = await db
    .prepare(`SELECT max(name = ?1) AS by_name, max(slug = ?2) AS by_slug FROM sso_providers WHERE (name = ?1 OR slug = ?2) AND id <> ?3`)
    .bind(name, slug, exceptSsoId)
    .first<{ by_name: number | null; by_slug: number | null }>()
  if (r?.by_name) return 'name'
  if (r?.by_slug) return 'slug'
  return null
}

/**
 * Which unique key a D1 error violated, if any: 'name' or 'slug'. D1 reports
 * `UNIQUE constraint failed: sso_providers.slug` (SQLite's text); nothing of it reaches the client.
 */
export function uniqueViolation(err: unknown): 'name' | 'slug' | null {
  const m = /UNIQUE constraint failed: (\w+)\.(\w+)/.exec(String((err as Error)?.message ?? err))
  if (!m) return null
  if (m[2] === 'slug') return 'slug'
  if (m[2] === 'name') return 'name'
  return null
}

/** Whether an SSO provider with this id exists (linking a user to it). */
export async function ssoProviderExists(db: D1Database, ssoProviderId: number): Promise<boolean> {
  return (await db.prepare('SELECT 1 AS found FROM sso_providers WHERE id = ?').bind(ssoProviderId).first()) !== null
}
