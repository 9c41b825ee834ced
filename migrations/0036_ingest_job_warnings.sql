-- What an accepted file had that looked wrong without being a reason to refuse it (a collector's meta.count that
-- disagrees with its data: BloodHound ignores the count), kept apart from `errors` so that it never counts as one.
-- JSON array of {file, context, message}, first 100 only (as `errors`).
ALTER TABLE ingest_jobs ADD COLUMN warnings TEXT NOT NULL DEFAULT '[]';
