/**
 * SQL for the SSO flow endpoints (src/saml/sso.routes.ts): what a login needs to know about a provider,
 * the per-binding IdP endpoints cached from the stored metadata (migrations/0006_saml_bindings.sql), and
 * the public list of sign-on endpoints. Provider management SQL stays in saml.store.ts.
 */
import type { IdpSsoServices } from './metadata'

export interface LoginTarget {
  saml_provider_id: number
  name: string
  slug: string
  /** endpoint and binding chosen at upload (saml_providers.single_sign_on_uri, sso_binding) */
  single_sign_on_uri: string
  sso_binding: 'HTTP-POST' | 'HTTP-Redirect'
  metadata_valid_until: string | null
  updated_at: string
  /** per-binding endpoints, or null when not derived from the metadata yet */
  services: IdpSsoServices | null
  /** the stored metadata, only when `services` is null (it is what they are derived from) */
  metadata_xml: string | null
}

interface LoginRow {
  saml_provider_id: number
  name: string
  slug: string
  single_sign_on_uri: string
  sso_binding: 'HTTP-POST' | 'HTTP-Redirect'
  metadata_valid_until: string | null
  updated_at: string
  sso_post_uri: string | null
  sso_redirect_uri: string | null
  sso_services_derived: number
  metadata_xml: string | null
}

/** One query; the metadata XML (up to 1 MiB) is read only when the endpoints have not been derived yet. */
export async function getLoginTarget(db: D1Database, slug: string): Promise<LoginTarget | null> {
  const r = await db
    .prepare(
      `SELECT p.id AS saml_provider_id, s.name, s.slug, p.single_sign_on_uri, p.sso_binding, p.metadata_valid_until, p.updated_at,
              p.sso_post_uri, p.sso_redirect_uri, p.sso_services_derived,
              CASE WHEN p.sso_services_derived = 0 THEN p.metadata_xml END AS metadata_xml
         FROM saml_providers p JOIN sso_providers s ON s.id = p.sso_provider_id
        WHERE s.slug = ?`,
    )
    .bind(slug)
    .first<LoginRow>()
  if (!r) return null
  return {
    saml_provider_id: r.saml_provider_id,
    name: r.name,
    slug: r.slug,
    single_sign_on_uri: r.single_sign_on_uri,
    sso_binding: r.sso_binding,
    metadata_valid_until: r.metadata_valid_until,
    updated_at: r.updated_at,
    services: r.sso_services_derived ? { post: r.sso_post_uri, redirect: r.sso_redirect_uri } : null,
    metadata_xml: r.sso_services_derived ? null : r.metadata_xml,
  }
}

/**
 * Caches the endpoints derived from the metadata read with `getLoginTarget`. Written only if the row is
 * still the one that was read (same updated_at, not derived since): every update of a provider moves
 * updated_at, and new metadata also resets the cache through the 0006 trigger, so endpoints derived from
 * old metadata are never stored over new metadata. Losing the race just means the next login derives again.
 */
export async function saveSsoServices(db: D1Database, samlProviderId: number, readAt: string, s: IdpSsoServices): Promise<void> {
  await db
    .prepare(
      `UPDATE saml_providers SET sso_post_uri = ?, sso_redirect_uri = ?, sso_services_derived = 1
        WHERE id = ? AND updated_at = ? AND sso_services_derived = 0`,
    )
    .bind(s.post, s.redirect, samlProviderId, readAt)
    .run()
}

/** Whether a SAML provider has this slug (the callback and the SP metadata at the issuer URL need no more). */
export async function slugExists(db: D1Database, slug: string): Promise<boolean> {
  const r = await db
    .prepare(`SELECT 1 AS found FROM sso_providers s JOIN saml_providers p ON p.sso_provider_id = s.id WHERE s.slug = ?`)
    .bind(slug)
    .first<{ found: number }>()
  return r !== null
}

/** Name and slug of every SAML provider, oldest first (the order of the management lists). */
export async function listSignOnProviders(db: D1Database): Promise<{ name: string; slug: string }[]> {
  const { results } = await db
    .prepare(`SELECT s.name, s.slug FROM sso_providers s JOIN saml_providers p ON p.sso_provider_id = s.id ORDER BY s.created_at, s.id`)
    .all<{ name: string; slug: string }>()
  return results
}

/**
 * Every SSO provider, SAML (type 1) and OIDC (type 2), as the sign-in page needs it: id, name, slug and type,
 * by creation time (the order of the managers' list). Only providers whose SAML or OIDC row exists: the
 * two rows are written in one batch, so this is a guard, not a case that occurs.
 */
export async function listSignInProviders(db: D1Database): Promise<{ id: number; name: string; slug: string; type: 'SAML' | 'OIDC' }[]> {
  const { results } = await db
    .prepare(
      `SELECT s.id, s.name, s.slug, CASE s.type WHEN 1 THEN 'SAML' ELSE 'OIDC' END AS type FROM sso_providers s
        WHERE (s.type = 1 AND EXISTS (SELECT 1 FROM saml_providers p WHERE p.sso_provider_id = s.id))
           OR (s.type = 2 AND EXISTS (SELECT 1 FROM oidc_providers o WHERE o.sso_provider_id = s.id))
        ORDER BY s.created_at, s.id`,
    )
    .all<{ id: number; name: string; slug: string; type: 'SAML' | 'OIDC' }>()
  return results
}
