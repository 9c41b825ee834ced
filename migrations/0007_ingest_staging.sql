-- Atomic ingest (issue 5): an uploaded file is first copied into `ingest_staging` in chunks (several round
-- trips, invisible to readers), then applied to `nodes`/`edges` and recorded in its job by ONE db.batch,
-- which D1 runs as one transaction: a file is written completely or not at all. See docs/graph.md.

CREATE TABLE ingest_staging (
  id          INTEGER PRIMARY KEY,
  upload_id   TEXT NOT NULL,                     -- random id of one upload request
  part        TEXT NOT NULL CHECK (part IN ('n', 'e')),  -- node rows or edge rows
  seq         INTEGER NOT NULL,                  -- chunk order within the upload (file order, then element order)
  file        TEXT NOT NULL,                     -- the file (or zip member) the chunk comes from, for error reports
  created_at  TEXT NOT NULL,                     -- stale chunks of an interrupted upload are purged after an hour
  rows        TEXT NOT NULL                      -- JSON array of rows (≤ 80 KB; see src/graph/ingest.store.ts)
);
CREATE UNIQUE INDEX ingest_staging_upload ON ingest_staging (upload_id, part, seq);
CREATE INDEX ingest_staging_created ON ingest_staging (created_at);

-- Edges of an upload whose ends matched no single node; filled and emptied inside the commit batch.
CREATE TABLE ingest_unmatched (
  id          INTEGER PRIMARY KEY,
  upload_id   TEXT NOT NULL,
  file        TEXT NOT NULL,
  context     TEXT NOT NULL,
  message     TEXT NOT NULL
);
CREATE INDEX ingest_unmatched_upload ON ingest_unmatched (upload_id, id);
