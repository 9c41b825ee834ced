-- Post-processing of collector data (issue 13, src/collectors/postprocess.ts): relationships BloodHound derives
-- after ingest (DCSync, SyncLAPSPassword, AdminTo / CanRDP / CanPSRemote / ExecuteDCOM from local groups,
-- Owns / WriteOwner from OwnsRaw / WriteOwnerRaw) are written as ordinary edges marked `derived = 1`, and
-- replaced as a whole (delete every derived edge, insert the new set) in one batch at each analysis run.
-- An edge that was ingested is never marked derived and never deleted by post-processing.

ALTER TABLE edges ADD COLUMN derived INTEGER NOT NULL DEFAULT 0;

-- The derived edges, for the delete at each run (partial: costs nothing for ingested edges).
CREATE INDEX edges_derived ON edges (id) WHERE derived = 1;

-- OwnsRaw / WriteOwnerRaw edges, the input of Owns / WriteOwner resolution. One partial index per kind: SQLite
-- uses a partial index only when the query repeats its WHERE term exactly, and every other relationship
-- kind is ingested without paying for them. (The other inputs are reached from indexed nodes: local groups
-- by kind, domains by kind, then edges by their (start|end, kind) indexes.)
CREATE INDEX edges_ownsraw ON edges (end_id) WHERE kind = 'OwnsRaw';
CREATE INDEX edges_writeownerraw ON edges (end_id) WHERE kind = 'WriteOwnerRaw';
