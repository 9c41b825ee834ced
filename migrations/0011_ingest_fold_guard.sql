-- Issue 18: ingest commit details. See src/graph/ingest.store.ts and docs/graph.md.

-- Elements that appear more than once in one upload (same node id; same edge start, end and kind as
-- written) are folded here, inside the commit batch, into one row per key before the upsert, so that
-- uploading such a file again changes nothing. Filled and emptied by the same batch; empty otherwise.
CREATE TABLE ingest_fold (
  upload_id  TEXT NOT NULL,
  part       TEXT NOT NULL CHECK (part IN ('n', 'e')),
  key        TEXT NOT NULL,                     -- node: object id; edge: [start, end, kind, match/kind of the ends]
  file       TEXT NOT NULL,                     -- of the first occurrence (error reports)
  seq        INTEGER NOT NULL,                  -- staging chunk of the first occurrence
  ord        INTEGER NOT NULL,                  -- position in that chunk
  row        TEXT NOT NULL,                     -- the folded row, in the staging layout
  PRIMARY KEY (upload_id, part, key)
) WITHOUT ROWID;

-- The commit batch's first statement inserts the upload's job id here. The trigger aborts the batch (D1
-- rolls all of it back) when the job is no longer running, e.g. ended or timed out while the file was
-- being staged; otherwise it drops the row, so the table stays empty.
CREATE TABLE ingest_commit_guard (job_id INTEGER NOT NULL);
CREATE TRIGGER ingest_commit_guard_running BEFORE INSERT ON ingest_commit_guard BEGIN
  SELECT CASE
    WHEN NOT EXISTS (SELECT 1 FROM ingest_jobs WHERE id = NEW.job_id AND status = 1) THEN RAISE(ABORT, 'edgehound: ingest job is not running')
    ELSE RAISE(IGNORE)
  END;
END;

-- Running jobs, for the sweep that times out jobs without activity (src/graph/jobs.store.ts).
CREATE INDEX ingest_jobs_running ON ingest_jobs (status) WHERE status = 1;
