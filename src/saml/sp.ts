/**
 * This service as a SAML service provider: its URLs for a provider and its SP metadata document. Pure.
 *
 * URLs are built from the provider's slug, not its name (BloodHound builds them from the name, which
 * gives URLs that do not resolve when the name has capitals or spaces). The slug is `[a-z0-9-]+`
 * (src/saml/names.ts), so it needs no escaping in a path.
 */
import { BINDING_POST, MD_NS, SAML2_PROTOCOL } from './metadata'

export interface SpUrls {
  sp_issuer_uri: string
  sp_sso_uri: string
  sp_metadata_uri: string
  sp_acs_uri: string
}

/** `base` is PUBLIC_BASE_URL (no trailing slash) or the request origin. */
export function spUrls(base: string, slug: string): SpUrls {
  const root = `${base.replace(/\/+$/, '')}/api/v2/sso/${encodeURIComponent(slug)}`
  return { sp_issuer_uri: root, sp_sso_uri: `${root}/login`, sp_metadata_uri: `${root}/metadata`, sp_acs_uri: `${root}/callback` }
}

/**
 * BloodHound's legacy SP URLs (its root_uri_version 1 providers were configured at the IdP with these):
 * entity id and login `/api/{version}/login/saml/{slug}`, metadata `…/metadata`, ACS `…/acs`. A browser or
 * IdP that comes through this URL family stays in it: the AuthnRequest names the legacy ACS and issuer, and a
 * response posted to the legacy ACS must be addressed to it (Destination, Audience). `version` is `v1` or `v2`.
 */
export function legacySpUrls(base: string, version: string, slug: string): SpUrls {
  const root = `${base.replace(/\/+$/, '')}/api/${version}/login/saml/${encodeURIComponent(slug)}`
  return { sp_issuer_uri: root, sp_sso_uri: root, sp_metadata_uri: `${root}/metadata`, sp_acs_uri: `${root}/acs` }
}

/** NameID formats this SP accepts, most specific first (the ones BloodHound's user matching can use). */
export const SP_NAMEID_FORMATS = [
  'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress',
  'urn:oasis:names:tc:SAML:2.0:nameid-format:persistent',
  'urn:oasis:names:tc:SAML:2.0:nameid-format:transient',
  'urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified',
]

export function xmlEscape(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c]!)
}

/**
 * SP metadata for one provider: entity id = sp_issuer_uri, one AssertionConsumerService with the
 * HTTP-POST binding at sp_acs_uri, the NameID formats above. `validUntil` tells IdPs that fetch it
 * to refresh it (48 h, as crewjam/saml does). No KeyDescriptor: this service has no SP signing key, so
 * AuthnRequestsSigned is false; assertions must be signed by the IdP (WantAssertionsSigned).
 */
export function spMetadataXml(urls: SpUrls, now: Date): string {
  const validUntil = new Date(now.getTime() + 48 * 3600 * 1000).toISOString()
  const formats = SP_NAMEID_FORMATS.map((f) => `    <md:NameIDFormat>${xmlEscape(f)}</md:NameIDFormat>\n`).join('')
  return (
    `<?xml version="1.0" encoding="UTF-8"?>\n` +
    `<md:EntityDescriptor xmlns:md="${MD_NS}" entityID="${xmlEscape(urls.sp_issuer_uri)}" validUntil="${validUntil}">\n` +
    `  <md:SPSSODescriptor AuthnRequestsSigned="false" WantAssertionsSigned="true" protocolSupportEnumeration="${SAML2_PROTOCOL}">\n` +
    formats +
    `    <md:AssertionConsumerService Binding="${BINDING_POST}" Location="${xmlEscape(urls.sp_acs_uri)}" index="1" isDefault="true"/>\n` +
    `  </md:SPSSODescriptor>\n` +
    `</md:EntityDescriptor>\n`
  )
}
