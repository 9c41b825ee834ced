-- Attack-path analysis: runs, findings, sparkline (risk) records, and the staging tables that make a run's
-- results appear atomically. See docs/findings.md.

-- One row per analysis run. Requests that arrive while a run is pending are coalesced into it (reasons).
CREATE TABLE analysis_runs (
  id                      INTEGER PRIMARY KEY AUTOINCREMENT,
  status                  TEXT NOT NULL CHECK (status IN ('pending', 'running', 'complete', 'failed')),
  reasons                 TEXT NOT NULL DEFAULT '[]',   -- JSON array of the reasons it was requested for
  requested_at            TEXT NOT NULL,
  started_at              TEXT,                         -- first attempt
  attempt_started_at      TEXT,                         -- latest attempt (a live attempt is younger than 2 min)
  completed_at            TEXT,                         -- the commit time of a complete run (or when it failed)
  attempts                INTEGER NOT NULL DEFAULT 0,
  error                   TEXT,                         -- last attempt's error, for operators
  node_count              INTEGER,
  edge_count              INTEGER,
  traversable_edge_count  INTEGER,
  environment_count       INTEGER,
  principal_count         INTEGER,
  finding_count           INTEGER,                      -- open findings after the run
  new_count               INTEGER,
  changed_count           INTEGER,
  closed_count            INTEGER,
  unchanged_count         INTEGER,
  duration_ms             INTEGER                       -- of the successful attempt
);
CREATE INDEX analysis_runs_status ON analysis_runs (status, completed_at);
-- At most one run waits and at most one runs: requests coalesce into the pending run (one atomic batch by
-- the caller), and the Analyzer object claims it.
CREATE UNIQUE INDEX analysis_runs_one_pending ON analysis_runs (status) WHERE status = 'pending';
CREATE UNIQUE INDEX analysis_runs_one_running ON analysis_runs (status) WHERE status = 'running';

-- Findings. A row lives from the run that first finds it until the run that no longer does (deleted_at).
-- Identity: (finding, environment_id, from_objectid, to_objectid) among OPEN rows; list findings keep the
-- principal in from_objectid and '' in to_objectid. A finding that comes back gets a new row (AUTOINCREMENT:
-- ids are never reused).
CREATE TABLE findings (
  id                   INTEGER PRIMARY KEY AUTOINCREMENT,
  finding              TEXT NOT NULL,                   -- finding type, e.g. T0GenericAll
  shape                TEXT NOT NULL CHECK (shape IN ('relationship', 'list')),
  environment_id       TEXT NOT NULL,                   -- DomainSID / tenant id / extension environment id
  from_objectid        TEXT NOT NULL,                   -- relationship: source; list: the principal
  to_objectid          TEXT NOT NULL DEFAULT '',        -- relationship: target; list: ''
  rel_kind             TEXT,                            -- relationship: the edge kind
  from_kind            TEXT,                            -- first-seen snapshots, used when the node is gone
  from_name            TEXT,
  to_kind              TEXT,
  to_name              TEXT,
  impact_count         INTEGER NOT NULL,
  exposure_count       INTEGER NOT NULL,
  principal_count      INTEGER NOT NULL,                -- principals of the environment (the denominator)
  impact_percentage    REAL NOT NULL,
  exposure_percentage  REAL NOT NULL,
  severity             TEXT NOT NULL,
  accepted             INTEGER NOT NULL DEFAULT 0,
  accepted_until       TEXT,                            -- NULL: accepted without end (or not accepted)
  created_at           TEXT NOT NULL,
  updated_at           TEXT NOT NULL,                   -- changes only when the metrics change
  deleted_at           TEXT,                            -- set when a run no longer finds it
  created_run_id       INTEGER NOT NULL,
  updated_run_id       INTEGER NOT NULL,
  closed_run_id        INTEGER
);
CREATE UNIQUE INDEX findings_open_key ON findings (finding, environment_id, from_objectid, to_objectid) WHERE deleted_at IS NULL;
CREATE INDEX findings_open_env ON findings (environment_id, finding, created_at, id) WHERE deleted_at IS NULL;
CREATE INDEX findings_pairs ON findings (environment_id, finding);

-- Sparkline / risk records: one row per run per (environment, finding type) that has or had findings.
CREATE TABLE finding_sparklines (
  id                    INTEGER PRIMARY KEY AUTOINCREMENT,
  run_id                INTEGER NOT NULL,
  environment_id        TEXT NOT NULL,
  finding               TEXT NOT NULL,
  finding_count         INTEGER NOT NULL,
  impacted_asset_count  INTEGER NOT NULL,
  impact_count          INTEGER NOT NULL,
  exposure_count        INTEGER NOT NULL,
  principal_count       INTEGER NOT NULL,
  composite_risk        REAL NOT NULL,                  -- 100 × impacted_asset_count ÷ principal_count
  created_at            TEXT NOT NULL,
  updated_at            TEXT NOT NULL
);
CREATE INDEX finding_sparklines_env ON finding_sparklines (environment_id, finding, created_at);
CREATE INDEX finding_sparklines_run ON finding_sparklines (run_id, environment_id);

-- Staging: a run writes its reconciliation plan here in many small batches, then one final batch applies
-- it to findings / finding_sparklines, marks the run complete and deletes the staging rows. Readers never
-- read these tables, so they never see a half-written run.
CREATE TABLE analysis_staged_findings (
  run_id               INTEGER NOT NULL,
  op                   TEXT NOT NULL CHECK (op IN ('insert', 'update', 'close')),
  finding_id           INTEGER,                         -- update / close: the open row
  finding              TEXT,
  shape                TEXT,
  environment_id       TEXT,
  from_objectid        TEXT,
  to_objectid          TEXT,
  rel_kind             TEXT,
  impact_count         INTEGER,
  exposure_count       INTEGER,
  principal_count      INTEGER,
  impact_percentage    REAL,
  exposure_percentage  REAL,
  severity             TEXT
);
CREATE INDEX analysis_staged_findings_run ON analysis_staged_findings (run_id, op);

CREATE TABLE analysis_staged_sparklines (
  run_id                INTEGER NOT NULL,
  environment_id        TEXT NOT NULL,
  finding               TEXT NOT NULL,
  finding_count         INTEGER NOT NULL,
  impacted_asset_count  INTEGER NOT NULL,
  impact_count          INTEGER NOT NULL,
  exposure_count        INTEGER NOT NULL,
  principal_count       INTEGER NOT NULL,
  composite_risk        REAL NOT NULL
);
CREATE INDEX analysis_staged_sparklines_run ON analysis_staged_sparklines (run_id);
