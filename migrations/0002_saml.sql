-- SAML / SSO providers. See docs/saml.md.
-- Tables as in BloodHound: `sso_providers` is the provider as the login page and the SSO routes see it
-- (name, slug, type, auto-provisioning config), `saml_providers` holds the SAML-specific part and the raw
-- IdP metadata. A create or update writes all rows in one db.batch(), so there is never one without the other.
-- The IdP signing certificates get a table of their own (one row each) rather than a JSON column: a row
-- then never holds more than one certificate, and together with metadata_xml (<= 1 MiB) no row can come
-- near D1's 2 MB row limit, whatever the metadata holds.
-- AUTOINCREMENT: ids of deleted providers are never handed out again (stale links cannot hit a new provider).
CREATE TABLE sso_providers (
  id          INTEGER PRIMARY KEY AUTOINCREMENT,
  name        TEXT NOT NULL,                          -- trimmed, 1–100 characters
  slug        TEXT NOT NULL,                          -- [a-z0-9-]+, derived from name; used in /api/v2/sso/<slug>/…
  type        INTEGER NOT NULL DEFAULT 1,             -- 1 = SAML (BloodHound's numbering; 2 would be OIDC)
  config      TEXT NOT NULL,                          -- JSON {"auto_provision":{"enabled","default_role_id","role_provision"}}
  created_at  TEXT NOT NULL,
  updated_at  TEXT NOT NULL,
  CONSTRAINT sso_providers_name_key UNIQUE (name),
  CONSTRAINT sso_providers_slug_key UNIQUE (slug)
);

CREATE TABLE saml_providers (
  id                            INTEGER PRIMARY KEY AUTOINCREMENT,
  sso_provider_id               INTEGER NOT NULL UNIQUE REFERENCES sso_providers (id) ON DELETE CASCADE,
  name                          TEXT NOT NULL UNIQUE, -- same as sso_providers.name
  display_name                  TEXT NOT NULL,
  issuer_uri                    TEXT NOT NULL,        -- IdP entityID
  single_sign_on_uri            TEXT NOT NULL,        -- IdP SingleSignOnService Location
  sso_binding                   TEXT NOT NULL,        -- 'HTTP-POST' | 'HTTP-Redirect'
  metadata_valid_until          TEXT,                 -- earliest validUntil in the metadata, RFC 3339
  metadata_xml                  TEXT NOT NULL,        -- the uploaded file, verbatim (UTF-8)
  principal_attribute_mappings  TEXT NOT NULL DEFAULT '[]',
  root_uri_version              INTEGER NOT NULL DEFAULT 2,
  created_at                    TEXT NOT NULL,
  updated_at                    TEXT NOT NULL
);

CREATE TABLE saml_provider_certificates (
  saml_provider_id    INTEGER NOT NULL REFERENCES saml_providers (id) ON DELETE CASCADE,
  position            INTEGER NOT NULL,               -- document order in the metadata, from 0
  der_base64          TEXT NOT NULL,                  -- whitespace-free base64 of the DER
  sha256_fingerprint  TEXT NOT NULL,                  -- AB:CD:… upper-case hex
  not_before          TEXT NOT NULL,                  -- RFC 3339
  not_after           TEXT NOT NULL,                  -- RFC 3339
  PRIMARY KEY (saml_provider_id, position)
);
