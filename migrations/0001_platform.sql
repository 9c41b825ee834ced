-- Platform: users, login sessions, API tokens. See docs/storage.md.
CREATE TABLE users (
  id                TEXT PRIMARY KEY,                 -- UUID
  principal_name    TEXT NOT NULL,
  email             TEXT,
  password_hash     TEXT,                             -- pbkdf2-sha256$iter$salt$hash; NULL = cannot log in with a secret
  roles             TEXT NOT NULL DEFAULT '[]',       -- JSON array of role names
  is_disabled       INTEGER NOT NULL DEFAULT 0,
  all_environments  INTEGER NOT NULL DEFAULT 1,       -- 1 = every environment
  environment_ids   TEXT NOT NULL DEFAULT '[]',       -- JSON array used when all_environments = 0
  created_at        TEXT NOT NULL,
  updated_at        TEXT NOT NULL
);
CREATE UNIQUE INDEX users_principal_name ON users (principal_name COLLATE NOCASE);
CREATE UNIQUE INDEX users_email ON users (email COLLATE NOCASE) WHERE email IS NOT NULL;

CREATE TABLE sessions (
  id          TEXT PRIMARY KEY,                       -- UUID, the JWT's jti
  user_id     TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  created_at  TEXT NOT NULL,
  expires_at  TEXT NOT NULL,
  ended_at    TEXT                                    -- set by logout, or when the user is disabled
);
CREATE INDEX sessions_user ON sessions (user_id);

CREATE TABLE api_tokens (
  id             TEXT PRIMARY KEY,                    -- UUID, the public token id
  user_id        TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  name           TEXT NOT NULL,
  key_sealed     TEXT NOT NULL,                       -- AES-256-GCM sealed key, see src/auth/token-crypto.ts
  hmac_method    TEXT NOT NULL DEFAULT 'hmac-sha2-256',
  created_at     TEXT NOT NULL,
  updated_at     TEXT NOT NULL,
  last_access    TEXT
);
CREATE INDEX api_tokens_user ON api_tokens (user_id);
