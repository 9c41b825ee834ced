-- Issue 27: GET /api/v2/file-upload/{id}/completed-tasks (BloodHound's completed tasks of an ingest job).
-- One row per file uploaded into a job, accepted or refused, written in the same batch that records the file in
-- its job (the upload's commit batch, or the batch that counts a refused file). `errors` and `warnings` are JSON
-- arrays of strings, the file's own (first 100 each); `parent_file_name` is '' (an upload is one file, a zip
-- included: EdgeHound does not record its members apart).
CREATE TABLE ingest_job_tasks (
  id                INTEGER PRIMARY KEY AUTOINCREMENT,
  job_id            INTEGER NOT NULL,
  file_name         TEXT NOT NULL,
  parent_file_name  TEXT NOT NULL DEFAULT '',
  errors            TEXT NOT NULL DEFAULT '[]',
  warnings          TEXT NOT NULL DEFAULT '[]',
  created_at        TEXT NOT NULL
);
CREATE INDEX ingest_job_tasks_job ON ingest_job_tasks (job_id, id);
