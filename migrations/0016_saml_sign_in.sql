-- SAML sign-in (the assertion consumer, issue 16). See docs/saml.md, "Assertion consumer", and docs/storage.md.
--
-- Users may belong to one SSO provider: BloodHound signs a user in through a provider only when the user's
-- sso_provider_id is that provider, so a local password account or another provider's user can never be
-- taken over by whoever controls some IdP. Deleting the provider unlinks its users (they then cannot sign in
-- through any provider until an administrator links them again).
ALTER TABLE users ADD COLUMN sso_provider_id INTEGER REFERENCES sso_providers (id) ON DELETE SET NULL;
CREATE INDEX users_sso_provider ON users (sso_provider_id) WHERE sso_provider_id IS NOT NULL;

-- AuthnRequests this service issued (GET /api/v2/sso/<slug>/login), kept for a few minutes: a response
-- whose signed InResponseTo is not here (unknown, expired, for another provider, or already answered) is
-- refused, and the row is deleted when answered, so each request is answered at most once.
CREATE TABLE saml_authn_requests (
  id               TEXT PRIMARY KEY,                 -- the AuthnRequest ID (_ + 40 hex digits)
  sso_provider_id  INTEGER NOT NULL REFERENCES sso_providers (id) ON DELETE CASCADE,
  created_at       TEXT NOT NULL,
  expires_at       TEXT NOT NULL                     -- RFC 3339; rows past it are purged on later writes
);
CREATE INDEX saml_authn_requests_expiry ON saml_authn_requests (expires_at);

-- Assertion IDs already accepted, per provider, until the assertion could no longer be accepted anyway
-- (its NotOnOrAfter plus the clock skew): a captured response cannot be posted a second time.
CREATE TABLE saml_assertions_used (
  sso_provider_id  INTEGER NOT NULL REFERENCES sso_providers (id) ON DELETE CASCADE,
  assertion_id     TEXT NOT NULL,
  expires_at       TEXT NOT NULL,
  PRIMARY KEY (sso_provider_id, assertion_id)
);
CREATE INDEX saml_assertions_used_expiry ON saml_assertions_used (expires_at);
