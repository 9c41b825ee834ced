-- SAML SP-initiated login: the IdP's SSO endpoint for each binding. See docs/saml.md ("SSO endpoints").
-- 0002 keeps only the endpoint chosen at upload (HTTP-POST preferred, else HTTP-Redirect), but login prefers
-- the HTTP-Redirect binding whenever the metadata lists it, and its Location may differ from the POST one
-- (Shibboleth: .../SAML2/Redirect/SSO vs .../SAML2/POST/SSO). Both are derived from metadata_xml the first time
-- a login needs them (providers stored before this migration included) and cached here.
-- sso_services_derived = 0 means "not derived yet": the two URI columns are then meaningless.
ALTER TABLE saml_providers ADD COLUMN sso_post_uri TEXT;                             -- first HTTP-POST SingleSignOnService Location, or NULL
ALTER TABLE saml_providers ADD COLUMN sso_redirect_uri TEXT;                         -- first HTTP-Redirect SingleSignOnService Location, or NULL
ALTER TABLE saml_providers ADD COLUMN sso_services_derived INTEGER NOT NULL DEFAULT 0; -- 1 once the two above were read from metadata_xml

-- New metadata makes the cache stale, whoever writes it: the reset happens inside the statement (and so inside
-- the batch) that replaces metadata_xml, so no login can see new metadata with old endpoints.
CREATE TRIGGER saml_providers_sso_services_stale
AFTER UPDATE OF metadata_xml ON saml_providers
BEGIN
  UPDATE saml_providers SET sso_post_uri = NULL, sso_redirect_uri = NULL, sso_services_derived = 0 WHERE id = NEW.id;
END;
