-- Audit log (issue 15; docs/audit.md). One row per audit entry, as BloodHound records them: an `intent` row
-- before a change, then `success` (written in the same D1 batch as the change) or `failure`; both rows of one
-- request share `commit_id`. `fields` is a JSON object of what changed, never a secret.
CREATE TABLE audit_logs (
  id                 INTEGER PRIMARY KEY AUTOINCREMENT,
  created_at         TEXT NOT NULL,                 -- RFC 3339 UTC, millisecond precision, `Z`
  actor_id           TEXT NOT NULL DEFAULT '',      -- user id ('' when nobody is known, e.g. a failed login)
  actor_name         TEXT NOT NULL DEFAULT '',
  actor_email        TEXT NOT NULL DEFAULT '',
  action             TEXT NOT NULL,
  fields             TEXT NOT NULL DEFAULT '{}',
  request_id         TEXT NOT NULL,
  source_ip_address  TEXT NOT NULL DEFAULT '',
  status             TEXT NOT NULL CHECK (status IN ('intent', 'success', 'failure')),
  commit_id          TEXT NOT NULL
);
CREATE INDEX audit_logs_created ON audit_logs (created_at, id);
CREATE INDEX audit_logs_action ON audit_logs (action, created_at);
CREATE INDEX audit_logs_actor ON audit_logs (actor_id, created_at);
CREATE INDEX audit_logs_request ON audit_logs (request_id);
