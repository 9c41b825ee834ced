-- Data quality statistics (issue 27): one row per AD domain and one per Azure tenant per complete analysis run,
-- computed from the graph in the run's commit batch (src/findings/dataquality.store.ts dataQualityStatements),
-- read by GET /api/v2/ad-domains/{id}/data-quality-stats, /azure-tenants/{id}/data-quality-stats,
-- /platform/{ad|azure}/data-quality-stats and /completeness. Definitions: docs/findings.md "Data quality".
-- Ids are random (src/graph/ids.ts NEW_ID_SQL; triggers below), as posture rows' are: a sequential id would
-- tell a reader of one environment how many rows (environments) the others have.
CREATE TABLE ad_data_quality_stats (
  id                       INTEGER PRIMARY KEY,
  run_id                   INTEGER NOT NULL,          -- analysis_runs.id
  domain_sid               TEXT NOT NULL,             -- the Domain node's object id
  users                    INTEGER NOT NULL DEFAULT 0,
  groups                   INTEGER NOT NULL DEFAULT 0,
  computers                INTEGER NOT NULL DEFAULT 0,
  ous                      INTEGER NOT NULL DEFAULT 0,
  containers               INTEGER NOT NULL DEFAULT 0,
  gpos                     INTEGER NOT NULL DEFAULT 0,
  aiacas                   INTEGER NOT NULL DEFAULT 0,
  rootcas                  INTEGER NOT NULL DEFAULT 0,
  enterprisecas            INTEGER NOT NULL DEFAULT 0,
  ntauthstores             INTEGER NOT NULL DEFAULT 0,
  certtemplates            INTEGER NOT NULL DEFAULT 0,
  issuancepolicies         INTEGER NOT NULL DEFAULT 0,
  acls                     INTEGER NOT NULL DEFAULT 0,
  sessions                 INTEGER NOT NULL DEFAULT 0,
  relationships            INTEGER NOT NULL DEFAULT 0,
  session_completeness     REAL NOT NULL DEFAULT 0,   -- users_with_sessions / active_users (0 when none active)
  local_group_completeness REAL NOT NULL DEFAULT 0,   -- computers_with_admins / active_computers (0 when none)
  -- the fractions' parts, so that aggregates over environments are exact (sum of parts, not mean of fractions)
  active_users             INTEGER NOT NULL DEFAULT 0,
  users_with_sessions      INTEGER NOT NULL DEFAULT 0,
  active_computers         INTEGER NOT NULL DEFAULT 0,
  computers_with_admins    INTEGER NOT NULL DEFAULT 0,
  created_at               TEXT NOT NULL,             -- the run's commit time
  updated_at               TEXT NOT NULL,
  deleted_at               TEXT
);
CREATE INDEX ad_data_quality_stats_domain ON ad_data_quality_stats (domain_sid, created_at);
CREATE INDEX ad_data_quality_stats_created ON ad_data_quality_stats (created_at, run_id);

CREATE TABLE azure_data_quality_stats (
  id                   INTEGER PRIMARY KEY,
  run_id               INTEGER NOT NULL,
  tenant_id            TEXT NOT NULL,                 -- the AZTenant node's object id
  users                INTEGER NOT NULL DEFAULT 0,
  groups               INTEGER NOT NULL DEFAULT 0,
  apps                 INTEGER NOT NULL DEFAULT 0,
  service_principals   INTEGER NOT NULL DEFAULT 0,
  devices              INTEGER NOT NULL DEFAULT 0,
  management_groups    INTEGER NOT NULL DEFAULT 0,
  subscriptions        INTEGER NOT NULL DEFAULT 0,
  resource_groups      INTEGER NOT NULL DEFAULT 0,
  vms                  INTEGER NOT NULL DEFAULT 0,
  key_vaults           INTEGER NOT NULL DEFAULT 0,
  automation_accounts  INTEGER NOT NULL DEFAULT 0,
  container_registries INTEGER NOT NULL DEFAULT 0,
  function_apps        INTEGER NOT NULL DEFAULT 0,
  logic_apps           INTEGER NOT NULL DEFAULT 0,
  managed_clusters     INTEGER NOT NULL DEFAULT 0,
  vm_scale_sets        INTEGER NOT NULL DEFAULT 0,
  web_apps             INTEGER NOT NULL DEFAULT 0,
  relationships        INTEGER NOT NULL DEFAULT 0,
  created_at           TEXT NOT NULL,
  updated_at           TEXT NOT NULL,
  deleted_at           TEXT
);
CREATE INDEX azure_data_quality_stats_tenant ON azure_data_quality_stats (tenant_id, created_at);
CREATE INDEX azure_data_quality_stats_created ON azure_data_quality_stats (created_at, run_id);

CREATE TRIGGER ad_data_quality_stats_random_id BEFORE INSERT ON ad_data_quality_stats WHEN NEW.id IS NULL OR NEW.id < 1099511627776 OR NEW.id > 4504699138998271
BEGIN SELECT RAISE(ABORT, 'edgehound: ad_data_quality_stats.id must be a random id (src/graph/ids.ts)'); END;
CREATE TRIGGER azure_data_quality_stats_random_id BEFORE INSERT ON azure_data_quality_stats WHEN NEW.id IS NULL OR NEW.id < 1099511627776 OR NEW.id > 4504699138998271
BEGIN SELECT RAISE(ABORT, 'edgehound: azure_data_quality_stats.id must be a random id (src/graph/ids.ts)'); END;
