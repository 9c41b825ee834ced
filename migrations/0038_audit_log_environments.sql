-- Audit entries about environment-scoped data (issue 24; docs/audit.md "Who sees which entry"): the environments
-- an entry concerns, as a JSON array of environment object ids (`[]`: none), or '*' when they are not known
-- (a Cypher rule, an upload, an object id that is no node). NULL on rows written before this column: the
-- reader then decides by the entry's action (src/audit/visibility.ts). A reader restricted to some environments
-- sees an entry's `fields` only when every environment it names is one of theirs; otherwise the entry is
-- served with its fields replaced by a redaction marker.
ALTER TABLE audit_logs ADD COLUMN environments TEXT;
