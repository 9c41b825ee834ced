-- Issue 27: BloodHound's application configuration routes (src/appcfg/, docs/configuration.md).

-- Configuration parameters an administrator set through PUT /api/v2/config. Only parameters EdgeHound honours
-- exist (src/appcfg/parameters.ts); a parameter without a row has its default. `value` is the parameter's JSON
-- object in BloodHound's shape (e.g. {"duration":"P90D"}).
CREATE TABLE app_config_parameters (
  key         TEXT PRIMARY KEY,
  value       TEXT NOT NULL,
  updated_at  TEXT NOT NULL,
  updated_by  TEXT NOT NULL                -- users.id
) WITHOUT ROWID;

-- Feature flags an administrator toggled (PUT /api/v2/features/{id}/toggle). Definitions (id, key, name,
-- default) are in src/appcfg/flags.ts; a flag without a row has its default.
CREATE TABLE feature_flags (
  key         TEXT PRIMARY KEY,
  enabled     INTEGER NOT NULL CHECK (enabled IN (0, 1)),
  updated_at  TEXT NOT NULL,
  updated_by  TEXT NOT NULL                -- users.id
) WITHOUT ROWID;
