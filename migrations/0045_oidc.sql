-- OIDC single sign-on (issue 27). See docs/sso.md.
-- An OIDC provider is an sso_providers row of type 2 (BloodHound's numbering) with its OIDC part here.
-- client_secret_sealed: AES-256-GCM under TOKEN_ENCRYPTION_KEY (src/auth/token-crypto.ts, the same sealing as
-- API token keys; additional data "oidc-client-secret:<issuer>|<client_id>"); NULL for a public client (PKCE only,
-- as BloodHound).
CREATE TABLE oidc_providers (
  id                    INTEGER PRIMARY KEY AUTOINCREMENT,
  sso_provider_id       INTEGER NOT NULL UNIQUE REFERENCES sso_providers (id) ON DELETE CASCADE,
  client_id             TEXT NOT NULL,
  issuer                TEXT NOT NULL,
  client_secret_sealed  TEXT,
  created_at            TEXT NOT NULL,
  updated_at            TEXT NOT NULL
);

-- Sign-ins in progress (GET /api/v2/sso/<slug>/login → callback), one row per attempt, kept ten minutes and
-- deleted by the callback that uses it (one use): the browser holds only a MAC'd reference to its row (cookie
-- edgehound_oidc), the state, nonce and PKCE verifier never leave the server except in the authorization request.
CREATE TABLE oidc_login_states (
  ref              TEXT PRIMARY KEY,
  sso_provider_id  INTEGER NOT NULL REFERENCES sso_providers (id) ON DELETE CASCADE,
  state            TEXT NOT NULL,
  nonce            TEXT NOT NULL,
  code_verifier    TEXT NOT NULL,
  relay            TEXT,
  expires_at       TEXT NOT NULL
);
CREATE INDEX oidc_login_states_expiry ON oidc_login_states (expires_at);
