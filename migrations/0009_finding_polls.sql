-- Paging findings while an analysis commits (issue 18, item 4; docs/findings.md, "Polls that span an analysis").
-- A connector pages /details with `skip` only; a run that closes a finding between two pages would shift every
-- later row one place forward and the row at the page boundary would never be served. The first page of a poll
-- (skip = 0) records which analysis state it read (`anchor`: the latest deleted_at among the pair's closed rows); its later
-- pages (same credential, environment, type and query) keep the findings closed since then in their place,
-- served with deleted_at set. Rows expire after a few hours and are pruned when polls start.
CREATE TABLE finding_polls (
  subject         TEXT NOT NULL,                  -- 'token:<id>' or 'session:<id>': the credential that polls
  environment_id  TEXT NOT NULL,
  finding         TEXT NOT NULL,
  shape           TEXT NOT NULL,                  -- the filters and sort of the poll (normalised JSON)
  anchor          TEXT NOT NULL,                  -- latest deleted_at of the pair's closed rows at the first page ('' if none)
  started_at      TEXT NOT NULL,                  -- when the first page was served
  PRIMARY KEY (subject, environment_id, finding, shape)
);
CREATE INDEX finding_polls_started ON finding_polls (started_at);

-- Closed findings of an (environment, type) by close time: the rows a continuing poll keeps in place.
CREATE INDEX findings_closed_env ON findings (environment_id, finding, deleted_at) WHERE deleted_at IS NOT NULL;
