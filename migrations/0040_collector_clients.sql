-- Issue 26: enterprise collection. Collectors (SharpHound, AzureHound, OpenHound) registered as clients poll
-- for jobs, start them, post their data to /api/v2/ingest and end them. See src/clients/ and docs/collectors.md.

-- A client is a collector service. Its credential is an ordinary API token of a service user (users row,
-- role "Collector", no password, environment access = the client's environment), so signatures, revocation
-- and rate limits are exactly those of every token; that user is not listed or managed as a person
-- (src/auth/users.store.ts). Deleting the client deletes its user, hence its tokens (ON DELETE CASCADE).
CREATE TABLE clients (
  id                 TEXT PRIMARY KEY,                 -- UUID
  user_id            TEXT NOT NULL UNIQUE REFERENCES users (id),
  name               TEXT NOT NULL,
  type               TEXT NOT NULL CHECK (type IN ('sharphound', 'azurehound', 'openhound')),
  domain_controller  TEXT,
  environment_id     TEXT NOT NULL,                    -- the one environment its data may write (domain SID, tenant id, ...)
  token_id           TEXT,                             -- its current token (the only one)
  ip_address         TEXT,                             -- check-in metadata (PUT /api/v2/clients/update)
  hostname           TEXT,
  version            TEXT,
  last_checkin       TEXT,
  created_at         TEXT NOT NULL,
  updated_at         TEXT NOT NULL
);
CREATE UNIQUE INDEX clients_name ON clients (name COLLATE NOCASE);

-- Jobs of clients, with BloodHound's statuses: 0 ready, 1 running, 2 complete, 3 canceled, 4 timed out,
-- 5 failed, 8 partially complete.
CREATE TABLE client_jobs (
  id                        INTEGER PRIMARY KEY,
  client_id                 TEXT NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
  event_id                  INTEGER,                   -- the schedule that created it (NULL: run now)
  status                    INTEGER NOT NULL,
  status_message            TEXT NOT NULL,
  execution_time            TEXT NOT NULL,             -- when it becomes available to its client
  start_time                TEXT,
  end_time                  TEXT,
  last_ingest               TEXT,
  session_collection        INTEGER NOT NULL DEFAULT 0,
  local_group_collection    INTEGER NOT NULL DEFAULT 0,
  ad_structure_collection   INTEGER NOT NULL DEFAULT 0,
  cert_services_collection  INTEGER NOT NULL DEFAULT 0,
  ca_registry_collection    INTEGER NOT NULL DEFAULT 0,
  dc_registry_collection    INTEGER NOT NULL DEFAULT 0,
  all_trusted_domains       INTEGER NOT NULL DEFAULT 0,
  domain_controller         TEXT,
  ingest_job_id             INTEGER,                   -- the ingest job that commits its data (set at start)
  posts                     INTEGER NOT NULL DEFAULT 0,  -- ingest posts received (numbering of their staging rows)
  elements                  INTEGER NOT NULL DEFAULT 0,  -- nodes and edges accepted so far (budget of the job)
  log                       TEXT NOT NULL DEFAULT '[]',  -- JSON array of {time, message}
  created_at                TEXT NOT NULL,
  updated_at                TEXT NOT NULL
);
CREATE INDEX client_jobs_client ON client_jobs (client_id, status, execution_time);
CREATE INDEX client_jobs_status ON client_jobs (status);
CREATE INDEX client_jobs_ingest ON client_jobs (ingest_job_id) WHERE ingest_job_id IS NOT NULL;
-- A client runs one job at a time: a second start fails on this index.
CREATE UNIQUE INDEX client_jobs_one_running ON client_jobs (client_id) WHERE status = 1;
-- A schedule yields one job per occurrence, however many cron runs see it due (src/clients/schedules.ts).
CREATE UNIQUE INDEX client_jobs_occurrence ON client_jobs (event_id, execution_time) WHERE event_id IS NOT NULL;

-- The accepted ingest posts of running jobs: each post's rows wait in ingest_staging under its own upload id
-- until the job ends; ending the job commits all of them in one batch, failing or cancelling it deletes them.
CREATE TABLE client_job_posts (
  upload_id     TEXT PRIMARY KEY,
  job_id        INTEGER NOT NULL,
  nodes         INTEGER NOT NULL,
  edges         INTEGER NOT NULL,
  placeholders  INTEGER NOT NULL,
  environments  TEXT NOT NULL,                          -- JSON array
  warnings      TEXT NOT NULL,                          -- JSON array of job error entries
  created_at    TEXT NOT NULL
);
CREATE INDEX client_job_posts_job ON client_job_posts (job_id);

-- Recurring collections (BloodHound's "events"): the Cron Trigger turns each due occurrence into a job.
CREATE TABLE client_schedules (
  id                        INTEGER PRIMARY KEY,
  client_id                 TEXT NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
  rrule                     TEXT NOT NULL,
  next_run                  TEXT NOT NULL,
  session_collection        INTEGER NOT NULL DEFAULT 0,
  local_group_collection    INTEGER NOT NULL DEFAULT 0,
  ad_structure_collection   INTEGER NOT NULL DEFAULT 0,
  cert_services_collection  INTEGER NOT NULL DEFAULT 0,
  ca_registry_collection    INTEGER NOT NULL DEFAULT 0,
  dc_registry_collection    INTEGER NOT NULL DEFAULT 0,
  all_trusted_domains       INTEGER NOT NULL DEFAULT 0,
  created_at                TEXT NOT NULL,
  updated_at                TEXT NOT NULL
);
CREATE INDEX client_schedules_due ON client_schedules (next_run);
